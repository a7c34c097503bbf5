"""engine.Model: the static description of a robot, compiled from MJCF.

`load_mjcf` lets MuJoCo's own compiler do what it does best (defaults, includes,
`fromto`, inertia from geoms, keyframes) and copies the arrays our kernels need into a
flat, numba-friendly NamedTuple. Array names and meanings follow `mjmodel.h`; shapes are in
the comments. Anything the engine does not simulate is refused here, by name, so that no
model ever runs with a feature silently ignored.
"""

from __future__ import annotations

import hashlib
import os
import xml.etree.ElementTree as ET
from typing import NamedTuple

import mujoco
import numpy as np

from engine import fields
from engine import types as T
from engine.collision_driver import GEOM_TYPE_NAMES, candidate_pairs, mesh_too_large
from engine.errors import ModelArgumentError, ModelError, ModelFileError
from engine.fields import (  # noqa: F401 (the names the declarations use)
    f64,
    i32,
    nbody,
    ncpair,
    neq,
    neqdata,
    nexclude,
    ngeom,
    nhfield,
    nhfielddata,
    njnt,
    nJten,
    nM,
    nmat,
    nmesh,
    nmeshgraph,
    nmeshpoly,
    nmeshpolymap,
    nmeshpolyvert,
    nmeshvert,
    npair,
    nq,
    nrefused,
    nsensor,
    nsite,
    ntendon,
    ntree,
    nu,
    nv,
    nwrap,
)
from engine.sizes import CONVEX_PAIRS

FLOAT = np.float64
INT = np.int32

_SUPPORTED_SENSORS = {
    T.SENS_ACCELEROMETER: "accelerometer",
    T.SENS_VELOCIMETER: "velocimeter",
    T.SENS_GYRO: "gyro",
    T.SENS_FORCE: "force",
    T.SENS_TORQUE: "torque",
    T.SENS_JOINTPOS: "jointpos",
    T.SENS_JOINTVEL: "jointvel",
    T.SENS_ACTUATORFRC: "actuatorfrc",
    T.SENS_TENDONPOS: "tendonpos",
    T.SENS_TENDONVEL: "tendonvel",
    T.SENS_ACTUATORPOS: "actuatorpos",
    T.SENS_ACTUATORVEL: "actuatorvel",
    T.SENS_JOINTACTFRC: "jointactuatorfrc",
    T.SENS_TENDONACTFRC: "tendonactuatorfrc",
    T.SENS_FRAMELINACC: "framelinacc",
    T.SENS_FRAMEANGACC: "frameangacc",
    T.SENS_CLOCK: "clock",
    T.SENS_FRAMEPOS: "framepos",
    T.SENS_FRAMEQUAT: "framequat",
    T.SENS_FRAMEXAXIS: "framexaxis",
    T.SENS_FRAMEYAXIS: "frameyaxis",
    T.SENS_FRAMEZAXIS: "framezaxis",
    T.SENS_FRAMELINVEL: "framelinvel",
    T.SENS_FRAMEANGVEL: "frameangvel",
    T.SENS_SUBTREECOM: "subtreecom",
    T.SENS_SUBTREELINVEL: "subtreelinvel",
    T.SENS_SUBTREEANGMOM: "subtreeangmom",
    T.SENS_TOUCH: "touch",
    T.SENS_RANGEFINDER: "rangefinder",
}
_INTEGRATOR_NAMES = {0: "Euler", 1: "RK4", 2: "implicit", 3: "implicitfast"}


DEFAULT_NCONMAX = 256
"""Contacts per row when neither the MJCF (`<size nconmax njmax memory>`) nor load_mjcf
sets a capacity: the most the model's candidate geom pairs can produce, but at most this.
MuJoCo's default arena holds 100 contacts; 256 keeps every gymnasium model at its worst
case (humanoid: 190 possible, 8 to 10 seen in random rollouts), while a 200-link
self-colliding chain (39,802 possible) reserves 256 instead of 39,802."""

_INT32_MAX = 2**31 - 1  # contact and row indices are int32


class UnsupportedModelError(ModelError):
    """Raised at load when an MJCF model uses a feature the engine does not simulate."""


class Model(NamedTuple):
    """Static model arrays (MuJoCo's names and meanings). Passed whole to every kernel."""

    # sizes
    nq: int  # number of generalized coordinates
    nv: int  # number of degrees of freedom
    nu: int  # number of actuators / controls
    na: int  # number of activation states (one per actuator with activation dynamics)
    nbody: int  # number of bodies, world included
    nmocap: int  # number of mocap bodies
    njnt: int  # number of joints
    ngeom: int  # number of geoms
    nsite: int  # number of sites
    nmat: int  # number of materials
    ntendon: int  # number of (fixed) tendons
    nwrap: int  # number of tendon wrap objects
    nsensor: int  # number of sensors
    nsensordata: int  # length of sensordata
    nM: int  # non-zeros in the lower triangle of M (= MuJoCo's nC)
    ntree: int  # number of kinematic trees (bodies joined to the world by a joint)
    nJten: int  # non-zeros of the tendon Jacobians (sum of ten_J_rownnz)

    # options
    opt_timestep: float  # simulation timestep (s)
    opt_gravity: f64[3]  # gravitational acceleration (m/s^2)
    opt_wind: f64[3]  # wind velocity for fluid forces (m/s)
    opt_density: float  # fluid density (kg/m^3)
    opt_viscosity: float  # fluid viscosity (Pa s)
    opt_integrator: int  # INT_EULER, INT_RK4, INT_IMPLICIT, INT_IMPLICITFAST
    opt_disableflags: int  # mjtDisableBit bits
    opt_enableflags: int  # mjtEnableBit bits
    opt_impratio: float  # ratio of friction-to-normal contact impedance
    opt_cone: int  # CONE_PYRAMIDAL or CONE_ELLIPTIC
    opt_solver: int  # SOL_PGS or SOL_NEWTON
    opt_iterations: int  # maximum number of constraint solver iterations
    opt_tolerance: float  # solver stops when the scaled improvement (or gradient) is below it
    opt_ls_iterations: int  # maximum line search evaluations per Newton iteration
    opt_ls_tolerance: float  # line search tolerance, relative to opt_tolerance
    opt_noslip_iterations: int  # most sweeps of the noslip pass after the solver (0: none; engine.noslip)
    opt_noslip_tolerance: float  # the noslip pass stops when its scaled improvement is below it
    opt_jacobian: int  # JAC_DENSE, JAC_SPARSE or JAC_AUTO: how efc_J is stored (dense_jacobian)
    opt_ccd_iterations: int  # convex collider: most GJK and EPA iterations (collision_convex)
    opt_ccd_tolerance: float  # convex collider: GJK and EPA convergence tolerance (m)
    stat_meaninertia: float  # mean diagonal of M at qpos0 (solvers scale by the current M: solver_scale)

    # bodies
    body_parentid: i32[nbody]  # parent body, parent-first ordering
    body_rootid: i32[nbody]  # top-level ancestor (child of the world)
    body_mocapid: i32[nbody]  # row of mocap_pos/mocap_quat that poses the body, -1 if not mocap
    body_weldid: i32[nbody]  # outermost ancestor welded to this body
    body_jntnum: i32[nbody]  # number of joints on the body
    body_jntadr: i32[nbody]  # first joint, -1 if none
    body_dofnum: i32[nbody]  # number of dofs
    body_dofadr: i32[nbody]  # first dof, -1 if none
    body_geomnum: i32[nbody]  # number of geoms
    body_geomadr: i32[nbody]  # first geom, -1 if none
    body_pos: f64[nbody, 3]  # position offset rel. to parent body
    body_quat: f64[nbody, 4]  # orientation offset rel. to parent body
    body_ipos: f64[nbody, 3]  # centre of mass in the body frame
    body_iquat: f64[nbody, 4]  # principal axes of inertia in the body frame
    body_mass: f64[nbody]  # mass (kg)
    body_subtreemass: f64[nbody]  # mass of the subtree starting at the body
    body_inertia: f64[nbody, 3]  # principal moments of inertia about the com
    body_invweight0: f64[nbody, 2]  # mean inverse inertia at qpos0: translation, rotation
    body_simple: i32[nbody]  # MuJoCo's body_simple (2: no rotational dofs, invweight0 = 1/mass)
    body_treeid: i32[nbody]  # kinematic tree of the body, -1 for static bodies (the world's)

    # joints
    jnt_type: i32[njnt]  # JNT_FREE, JNT_BALL, JNT_SLIDE, JNT_HINGE
    jnt_qposadr: i32[njnt]  # start address in qpos
    jnt_dofadr: i32[njnt]  # start address in qvel
    jnt_bodyid: i32[njnt]  # body the joint belongs to
    jnt_pos: f64[njnt, 3]  # anchor position in the body frame
    jnt_axis: f64[njnt, 3]  # axis in the body frame (unit)
    jnt_stiffness: f64[njnt]  # spring stiffness
    jnt_limited: i32[njnt]  # 1 if the joint has a range constraint
    jnt_range: f64[njnt, 2]  # joint limits (rad or m)
    jnt_margin: f64[njnt]  # a limit row exists while dist < margin
    jnt_solref: f64[njnt, 2]  # solver reference: limit
    jnt_solimp: f64[njnt, 5]  # solver impedance: limit
    qpos0: f64[nq]  # qpos at which the model was built (joint reference)
    qpos_spring: f64[nq]  # spring rest position (springref)

    # dofs and the sparsity of M
    dof_bodyid: i32[nv]  # body the dof moves
    dof_jntid: i32[nv]  # joint the dof belongs to
    dof_parentid: i32[nv]  # parent dof in the tree, -1 at a root
    dof_armature: f64[nv]  # rotor inertia added to M's diagonal
    dof_damping: f64[nv]  # viscous damping
    dof_invweight0: f64[nv]  # diagonal of M^-1 at qpos0
    dof_frictionloss: f64[nv]  # dry friction: a friction row bounds its force to +-frictionloss
    dof_solref: f64[nv, 2]  # solver reference: friction loss (solreffriction)
    dof_solimp: f64[nv, 5]  # solver impedance: friction loss (solimpfriction)
    M_rownnz: i32[nv]  # non-zeros in row i of lower-triangular M (ancestors + self)
    M_rowadr: i32[nv]  # start of row i in qM / qLD
    M_colind: i32[nM]  # column of each stored element, ascending; diagonal last
    D_mask: i32[nv, nv]  # 1 where dof j is an ancestor or descendant of dof i (or i itself)
    dof_treedofnum: i32[nv]  # number of dofs in the kinematic tree of the dof
    dof_treeid: i32[nv]  # kinematic tree of the dof (0..ntree-1, ntree <= nv)
    tree_dofadr: i32[ntree]  # first dof of the tree (a tree's dofs are contiguous)
    tree_dofnum: i32[ntree]  # number of dofs of the tree

    # geoms and sites
    geom_bodyid: i32[ngeom]  # body the geom is attached to
    geom_pos: f64[ngeom, 3]  # position in the body frame
    geom_quat: f64[ngeom, 4]  # orientation in the body frame
    geom_type: i32[ngeom]  # mjtGeom code (plane 0, sphere 2, capsule 3, cylinder 5, box 6, ...)
    geom_size: f64[ngeom, 3]  # geom-type-specific sizes
    geom_contype: i32[ngeom]  # contact type bitmask
    geom_conaffinity: i32[ngeom]  # contact affinity bitmask
    geom_condim: i32[ngeom]  # contact dimensionality (1, 3, 4, 6)
    geom_priority: i32[ngeom]  # contact parameters of the higher priority win
    geom_solmix: f64[ngeom]  # weight of the geom's solref/solimp in a mix
    geom_friction: f64[ngeom, 3]  # sliding, torsional, rolling friction
    geom_solref: f64[ngeom, 2]  # constraint solver reference: contact
    geom_solimp: f64[ngeom, 5]  # constraint solver impedance: contact
    geom_margin: f64[ngeom]  # geometric inflation for contact
    geom_gap: f64[ngeom]  # additional contact detection buffer
    geom_rbound: f64[ngeom]  # radius of the bounding sphere about geom_xpos (0: plane)
    geom_matid: i32[ngeom]  # material, -1 if none
    geom_rgba: f64[ngeom, 4]  # colour; its alpha 0 (no material) hides the geom from rays
    geom_dataid: i32[ngeom]  # height field of an hfield geom (its mesh, ...: -1 if none)
    hfield_size: f64[nhfield, 4]  # half-sizes x, y; height z; depth of the base below z = 0
    hfield_nrow: i32[nhfield]  # grid rows (along y)
    hfield_ncol: i32[nhfield]  # grid columns (along x)
    hfield_adr: i32[nhfield]  # first elevation in hfield_data
    hfield_data: f64[nhfielddata]  # elevations in [0, 1], row-major (MuJoCo's float32, exactly)
    mat_rgba: f64[nmat, 4]  # material colour; its alpha 0 hides the material's geoms from rays
    geom_dataid: i32[ngeom]  # mesh of a mesh geom, -1 for other types
    site_bodyid: i32[nsite]  # body the site is attached to
    site_pos: f64[nsite, 3]  # position in the body frame
    site_quat: f64[nsite, 4]  # orientation in the body frame
    site_type: i32[nsite]  # mjtGeom code of the site's volume (sphere, capsule, ellipsoid, cylinder, box)
    site_size: f64[nsite, 3]  # geom-type-specific sizes of the volume

    # meshes: the convex hull MuJoCo's compiler builds, in the mesh frame (= the geom frame)
    mesh_vertadr: i32[nmesh]  # first vertex in mesh_vert
    mesh_vertnum: i32[nmesh]  # number of vertices
    mesh_vert: f64[nmeshvert, 3]  # vertex positions (MuJoCo's float32 values, exactly)
    mesh_graphadr: i32[nmesh]  # start of the hull graph in mesh_graph; -1: no hull
    mesh_graph: i32[
        nmeshgraph
    ]  # hull graph: numvert, numface, vert_edgeadr, vert_globalid, edge_localid, faces
    mesh_extrema: i32[nmesh, 27]  # hull vertex (local id) extreme along each of the 3x3x3 grid directions
    mesh_polynum: i32[nmesh]  # number of polygons (hull faces merged by normal)
    mesh_polyadr: i32[nmesh]  # first polygon
    mesh_polynormal: f64[nmeshpoly, 3]  # polygon outward normals, mesh frame
    mesh_polyvertadr: i32[nmeshpoly]  # first vertex of the polygon in mesh_polyvert
    mesh_polyvertnum: i32[nmeshpoly]  # number of vertices of the polygon
    mesh_polyvert: i32[nmeshpolyvert]  # polygon vertices (mesh-local vertex ids)
    mesh_polymapadr: i32[nmeshvert]  # first polygon of each vertex in mesh_polymap
    mesh_polymapnum: i32[nmeshvert]  # number of polygons of each vertex
    mesh_polymap: i32[nmeshpolymap]  # polygons of each vertex (mesh-local polygon ids)

    # fixed tendons: length = sum_k coef_k * qpos[joint_k]
    tendon_adr: i32[ntendon]  # first wrap object
    tendon_num: i32[ntendon]  # number of wrap objects
    tendon_stiffness: f64[ntendon]  # spring stiffness
    tendon_damping: f64[ntendon]  # damping
    tendon_lengthspring: f64[ntendon, 2]  # spring dead-band [lower, upper]
    tendon_limited: i32[ntendon]  # 1 if the tendon has a length range constraint
    tendon_range: f64[ntendon, 2]  # length limits
    tendon_margin: f64[ntendon]  # a limit row exists while dist < margin
    tendon_solref_lim: f64[ntendon, 2]  # solver reference: limit
    tendon_solimp_lim: f64[ntendon, 5]  # solver impedance: limit
    tendon_invweight0: f64[ntendon]  # inverse weight of the tendon at qpos0
    tendon_length0: f64[ntendon]  # the tendon's length at qpos0 (a tendon equality's reference)
    tendon_frictionloss: f64[ntendon]  # dry friction of the tendon's length
    tendon_solref_fri: f64[ntendon, 2]  # solver reference: friction loss
    tendon_solimp_fri: f64[ntendon, 5]  # solver impedance: friction loss
    wrap_type: i32[nwrap]  # WRAP_JOINT (a fixed tendon's term), WRAP_SITE or WRAP_PULLEY (spatial)
    wrap_objid: i32[nwrap]  # joint of each term, or site of each point
    wrap_prm: f64[nwrap]  # coefficient of each term (fixed tendons), a pulley's divisor
    ten_J_rownnz: i32[ntendon]  # dofs of each tendon's Jacobian row (its joints' dofs)
    ten_J_rowadr: i32[ntendon]  # start of the tendon's row in ten_J_colind
    ten_J_colind: i32[nJten]  # the dofs of each row, ascending

    # actuators
    actuator_trntype: i32[nu]  # TRN_JOINT, TRN_TENDON or TRN_SITE
    actuator_trnid: i32[nu, 2]  # joint, tendon or site id; refsite id (-1: none)
    actuator_gear: f64[nu, 6]  # gear: [0] for joints and tendons; force:torque for sites
    actuator_gaintype: i32[nu]  # GAIN_FIXED or GAIN_AFFINE
    actuator_gainprm: f64[nu, 3]  # gain parameters
    actuator_biastype: i32[nu]  # BIAS_NONE or BIAS_AFFINE
    actuator_biasprm: f64[nu, 3]  # bias parameters
    actuator_ctrllimited: i32[nu]  # clamp ctrl to ctrlrange
    actuator_ctrlrange: f64[nu, 2]  # control range
    actuator_forcelimited: i32[nu]  # clamp force to forcerange
    actuator_forcerange: f64[nu, 2]  # force range
    actuator_dyntype: i32[nu]  # DYN_NONE, DYN_INTEGRATOR, DYN_FILTER or DYN_FILTEREXACT
    actuator_dynprm: f64[nu, 1]  # dynamics parameters: [0] = tau of the filters
    actuator_actadr: i32[nu]  # the actuator's activation in act, -1 if none
    actuator_actnum: i32[nu]  # number of activations (0 or 1)
    actuator_actlimited: i32[nu]  # clamp act to actrange after each step
    actuator_actrange: f64[nu, 2]  # activation range
    actuator_actearly: i32[nu]  # the force uses the next step's act instead of the current

    # sensors
    sensor_type: i32[nsensor]  # SENS_* code
    sensor_objtype: i32[nsensor]  # type of the sensed object
    sensor_objid: i32[nsensor]  # id of the sensed object
    sensor_reftype: i32[nsensor]  # type of the reference frame object, 0 if none
    sensor_refid: i32[nsensor]  # id of the reference frame object, -1 if none
    sensor_adr: i32[nsensor]  # address in sensordata
    sensor_dim: i32[nsensor]  # number of values
    sensor_cutoff: f64[nsensor]  # clamp |value| to cutoff when > 0
    sensor_datatype: i32[nsensor]  # 0 real, 1 positive, 2 axis, 3 quaternion
    sensor_intprm: i32[nsensor, 3]  # type-specific integers: [0] a rangefinder's data spec

    # explicit contact pairs (<contact><pair>) and excluded body pairs (<contact><exclude>)
    npair: int  # number of explicit pairs
    pair_geom1: i32[npair]  # first geom
    pair_geom2: i32[npair]  # second geom
    pair_dim: i32[npair]  # contact dimensionality
    pair_friction: f64[npair, 5]  # tangent1, tangent2, spin, roll1, roll2
    pair_solref: f64[npair, 2]  # solver reference: contact normal
    pair_solreffriction: f64[npair, 2]  # solver reference: contact friction (0 0: none)
    pair_solimp: f64[npair, 5]  # solver impedance
    pair_margin: f64[npair]  # geometric inflation for contact
    pair_gap: f64[npair]  # additional contact detection buffer
    exclude_signature: i32[nexclude]  # (body1 << 16) + body2 of excluded body pairs

    # equality constraints (connect, weld, joint)
    neq: int  # number of equality constraints
    eq_type: i32[neq]  # EQ_CONNECT, EQ_WELD, EQ_JOINT or EQ_TENDON
    eq_obj1id: i32[neq]  # first body, site or joint
    eq_obj2id: i32[neq]  # second body, site or joint (-1: none, for a joint)
    eq_objtype: i32[neq]  # OBJ_BODY, OBJ_SITE or OBJ_JOINT
    eq_active0: i32[neq]  # initial value of Data.eq_active
    eq_solref: f64[neq, 2]  # solver reference
    eq_solimp: f64[neq, 5]  # solver impedance
    eq_data: f64[neq, neqdata]  # anchors, relative pose, polynomial; [10] torquescale

    # collision: candidate geom pairs in MuJoCo's contact order (engine.collision_driver)
    nconmax: int  # capacity of the contact buffer of each row
    cpair_geom: i32[ncpair, 2]  # geom1, geom2 with geom_type[geom1] <= geom_type[geom2]
    cpair_ipair: i32[ncpair]  # explicit pair id, -1 for a pair found by the filters
    cpair_maxcon: i32[ncpair]  # most contacts the pair's collider returns
    cpair_margin: f64[ncpair]  # margin (contact includemargin)
    cpair_gap: f64[ncpair]  # gap (detection uses margin + gap)
    cpair_dim: i32[ncpair]  # contact dimensionality after mixing
    cpair_friction: f64[ncpair, 5]  # friction after mixing, >= mjMINMU
    cpair_solref: f64[ncpair, 2]  # solref after mixing
    cpair_solreffriction: f64[ncpair, 2]  # solreffriction (explicit pairs; else 0 0)
    cpair_solimp: f64[ncpair, 5]  # solimp after mixing
    cpair_refused: i32[nrefused, 2]  # geom pairs that can collide but have no collider here

    # constraint rows: capacity of each row's efc_* arrays (engine.constraint)
    nefcmax: int  # equality rows + 2 per limited joint/tendon + nconmax * rows of a contact
    efc_dense: int  # 1: every efc_J row stores all nv dofs (dense_jacobian), 0: its chain's only
    nefcdof: int  # most dofs one constraint row stores: the width of an efc_J row
    nefctreedof: int  # most dofs of the trees one row touches: the width of a row of M^-1 J^T


MODEL_SPECS = fields.field_specs(Model)


def load_mjcf(source: str | os.PathLike, nconmax: int | None = None, nefcmax: int | None = None) -> Model:
    """Compile an MJCF file (a str or os.PathLike path) or an MJCF document (a str whose
    first character, after an optional byte-order mark and white space, is '<').

    Returns an engine Model. Raises ModelArgumentError (a TypeError) for a source or a
    capacity of the wrong kind (bytes are refused: decode a document, or pass a path as
    str or pathlib.Path), ModelFileError (a FileNotFoundError) for a path that names no
    file, ModelError (a ValueError) with MuJoCo's message when MuJoCo's compiler refuses
    the model or for a value the engine cannot simulate (NaN or inf, a timestep <= 0,
    negative armature or damping, ...), and UnsupportedModelError (a ModelError) naming
    the element for a feature the engine does not simulate.

    `nconmax` (contacts per row) and `nefcmax` (constraint rows per row, MuJoCo's njmax)
    size each row's contact and constraint buffers; None or -1 leaves them to the MJCF's
    `<size nconmax njmax memory>` and then to the default (`capacities`).
    """
    return load_with_mujoco(source, nconmax, nefcmax)[0]


def load_with_mujoco(
    source: str | os.PathLike, nconmax: int | None = None, nefcmax: int | None = None
) -> tuple[Model, mujoco.MjModel]:
    """load_mjcf's Model together with the MuJoCo model it was compiled from (its names, for
    reading the engine's arrays by name, and what a renderer draws): one compilation of the
    MJCF serves both. Arguments and errors as load_mjcf's."""
    nconmax = _capacity_argument("nconmax", nconmax)
    nefcmax = _capacity_argument("nefcmax", nefcmax)
    mj, memory = _compile(source)
    check_options(mj)
    check_supported(mj)
    return model_from_mujoco(mj, nconmax, nefcmax, memory), mj


def without_contacts(source: str | os.PathLike) -> str:
    """The MJCF text of `source` (a path, or an MJCF document as a string starting with
    '<') with <option><flag contact="disable" constraint="disable"/> set: the model's
    smooth dynamics alone (how the smooth-dynamics tests load gymnasium's models). The
    file itself is not changed; relative includes and assets are not resolved, so use it
    for self-contained files."""
    is_document, text = _source(source)
    if not is_document:
        _check_path(text)
    try:
        root = ET.fromstring(text) if is_document else ET.parse(text).getroot()
    except ET.ParseError as e:
        raise ModelError(f"the MJCF {'document' if is_document else 'file'} is not valid XML: {e}") from e
    option = root.find("option")
    if option is None:
        option = ET.Element("option")
        root.insert(0, option)
    flag = option.find("flag")
    if flag is None:
        flag = ET.SubElement(option, "flag")
    flag.set("contact", "disable")
    flag.set("constraint", "disable")
    return ET.tostring(root, encoding="unicode")


def compile_mjcf(source: str | os.PathLike) -> mujoco.MjModel:
    """Run MuJoCo's MJCF compiler on a path or an XML string (errors as load_mjcf's)."""
    return _compile(source)[0]


def _capacity_argument(name: str, value) -> int | None:
    """A load_mjcf capacity: an int in [0, 2**31 - 1], or None for -1 and None (the default)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ModelArgumentError(
            f"{name} must be an int >= 0 (or -1 or None for the default), "
            f"got {type(value).__name__} {value!r}"
        )
    value = int(value)
    if value == -1:
        return None
    if not 0 <= value <= _INT32_MAX:
        raise ModelError(
            f"{name} must be an int in [0, 2**31 - 1] (or -1 or None for the default), got {value}"
        )
    return value


def _source(source) -> tuple[bool, str]:
    """(True, document) for an MJCF document, (False, path) for a path; refuses the rest.

    A str is a document when its first character after a byte-order mark and white space
    is '<' (MuJoCo's parser does not skip the mark itself in every case); an os.PathLike is
    always a path."""
    if isinstance(source, bytes | bytearray | memoryview):
        raise ModelArgumentError(
            f"source must be a str or os.PathLike, got {type(source).__name__}: decode an MJCF "
            "document first (source.decode()), or pass a path as a str or pathlib.Path"
        )
    if isinstance(source, os.PathLike):
        try:
            path = os.fspath(source)
        except TypeError as e:
            raise ModelArgumentError(f"source {type(source).__name__} is not a valid os.PathLike: {e}") from e
        return False, os.fsdecode(path)
    if not isinstance(source, str):
        raise ModelArgumentError(
            "source must be a path (str or os.PathLike) or an MJCF document (a str starting "
            f"with '<'), got {type(source).__name__}"
        )
    text = source.removeprefix("\ufeff")
    if text.lstrip().startswith("<"):
        return True, text.lstrip()
    if not text.strip():
        raise ModelError(
            "source is an empty string: pass a path or an MJCF document (a str starting with '<')"
        )
    return False, source


def _shown(path: str) -> str:
    return repr(path if len(path) <= 200 else path[:200] + "...")


def _check_path(path: str) -> None:
    """Raise ModelFileError unless `path` names an existing file."""
    if "\x00" in path:
        problem = f"no MJCF file at {_shown(path)}: a path cannot contain a NUL character"
    elif os.path.isdir(path):
        problem = f"{_shown(path)} is a directory, not an MJCF file"
    elif not os.path.isfile(path):
        problem = (
            f"no MJCF file at {_shown(path)} (pass the path of an existing file, or an MJCF document "
            "starting with '<')"
        )
    else:
        return
    raise ModelFileError(problem)


def _compile(source) -> tuple[mujoco.MjModel, int]:
    """(MuJoCo's compiled model, the `<size memory>` it asks for in bytes, -1 if none)."""
    is_document, value = _source(source)
    if not is_document:
        _check_path(value)
    try:
        if is_document:
            mj = mujoco.MjModel.from_xml_string(value)
            memory = mujoco.MjSpec.from_string(value).memory
        else:
            mj = mujoco.MjModel.from_xml_path(value)
            memory = mujoco.MjSpec.from_file(value).memory
    except (ValueError, RuntimeError) as e:
        what = "the MJCF document" if is_document else f"the MJCF file {_shown(value)}"
        message = " ".join(str(e).split())
        raise ModelError(f"MuJoCo could not compile {what}: {message}") from e
    return mj, int(memory)


# ---- values the engine cannot simulate ------------------------------------------------------------

# options MuJoCo compiles whatever their value, and the range the engine needs
_OPTION_RANGES = {
    "timestep": ("> 0", lambda v: v > 0),
    "density": (">= 0", lambda v: v >= 0),
    "viscosity": (">= 0", lambda v: v >= 0),
    "impratio": ("> 0", lambda v: v > 0),
    "tolerance": (">= 0", lambda v: v >= 0),
    "ls_tolerance": (">= 0", lambda v: v >= 0),
    "iterations": (">= 0", lambda v: v >= 0),
    "ls_iterations": (">= 0", lambda v: v >= 0),
    "noslip_iterations": (">= 0", lambda v: v >= 0),
    "noslip_tolerance": (">= 0", lambda v: v >= 0),
}
_FLOAT_OPTIONS = (
    "timestep",
    "gravity",
    "wind",
    "magnetic",
    "density",
    "viscosity",
    "impratio",
    "tolerance",
    "ls_tolerance",
    "noslip_tolerance",
    "ccd_tolerance",
    "o_margin",
    "o_solref",
    "o_solimp",
    "o_friction",
)


def _fmt(value) -> str:
    a = np.atleast_1d(np.asarray(value, dtype=float))
    return " ".join(repr(float(x)) if not np.isfinite(x) else f"{float(x):g}" for x in a.reshape(-1))


def check_options(mj: mujoco.MjModel) -> None:
    """Raise ModelError for an <option> value MuJoCo compiles but the engine cannot
    simulate: NaN or inf in any numeric option, a timestep <= 0 (time would stand still or
    run backwards), negative density, viscosity, tolerances or iteration counts, and an
    impratio <= 0."""
    opt = mj.opt
    for name in _FLOAT_OPTIONS:
        if not hasattr(opt, name):
            continue
        value = np.asarray(getattr(opt, name), dtype=float)
        if not np.all(np.isfinite(value)):
            raise ModelError(f'<option {name}="{_fmt(value)}">: {name} must be finite (no NaN or inf)')
    for name, (rule, ok) in _OPTION_RANGES.items():
        value = getattr(opt, name)
        if not ok(value):
            raise ModelError(f'<option {name}="{_fmt(value)}">: {name} must be {rule}')


# fields whose +-inf means "no bound" (NaN is still refused)
_INF_ALLOWED = {"jnt_range", "tendon_range", "actuator_ctrlrange", "actuator_forcerange", "actuator_actrange"}
# fields that must be >= 0 for M (armature) or the implicit damping factor to stay positive
_NONNEGATIVE = ("dof_armature", "dof_damping", "tendon_damping", "dof_frictionloss", "tendon_frictionloss")
_OWNER = {  # field prefix -> (element, object type)
    "body_": ("body", mujoco.mjtObj.mjOBJ_BODY),
    "jnt_": ("joint", mujoco.mjtObj.mjOBJ_JOINT),
    "geom_": ("geom", mujoco.mjtObj.mjOBJ_GEOM),
    "site_": ("site", mujoco.mjtObj.mjOBJ_SITE),
    "tendon_": ("tendon", mujoco.mjtObj.mjOBJ_TENDON),
    "actuator_": ("actuator", mujoco.mjtObj.mjOBJ_ACTUATOR),
    "sensor_": ("sensor", mujoco.mjtObj.mjOBJ_SENSOR),
    "pair_": ("pair", mujoco.mjtObj.mjOBJ_PAIR),
    "eq_": ("equality", mujoco.mjtObj.mjOBJ_EQUALITY),
    "hfield_": ("hfield", mujoco.mjtObj.mjOBJ_HFIELD),
    "mesh_": ("mesh", mujoco.mjtObj.mjOBJ_MESH),
    "mat_": ("material", mujoco.mjtObj.mjOBJ_MATERIAL),
}


def _owner(mj: mujoco.MjModel, field: str, i: int) -> str:
    """'<element attribute> name' of entry i of a Model field, for messages."""
    OBJ = mujoco.mjtObj
    if field in ("qpos0", "qpos_spring"):
        j = int(np.searchsorted(mj.jnt_qposadr, i, side="right")) - 1
        attr = "ref" if field == "qpos0" else "springref"
        return f"<joint {attr}> {_name(mj, OBJ.mjOBJ_JOINT, j)}"
    if field.startswith("dof_"):
        return f"<joint {field[4:]}> {_name(mj, OBJ.mjOBJ_JOINT, int(mj.dof_jntid[i]))}"
    if field == "hfield_data":
        h = int(np.searchsorted(mj.hfield_adr, i, side="right")) - 1
        row, col = divmod(i - int(mj.hfield_adr[h]), int(mj.hfield_ncol[h]))
        return (
            f"<hfield elevation> {_name(mj, OBJ.mjOBJ_HFIELD, h)} (hfield_data row {row}, column {col}; "
            "MuJoCo scales elevations into [0, 1], so an inf elevation reads nan)"
        )
    if field == "mesh_vert":
        k = int(np.searchsorted(mj.mesh_vertadr, i, side="right")) - 1
        return f"<mesh vertex> {_name(mj, OBJ.mjOBJ_MESH, k)} vertex {i - int(mj.mesh_vertadr[k])}"
    if field.startswith("wrap_"):
        t = int(np.searchsorted(mj.tendon_adr, i, side="right")) - 1
        return f"<tendon> {_name(mj, OBJ.mjOBJ_TENDON, t)} coef"
    for prefix, (element, objtype) in _OWNER.items():
        if field.startswith(prefix):
            return f"<{element} {field.removeprefix(prefix)}> {_name(mj, objtype, i)}"
    return f"the model's {field}"


def check_values(m: Model, mj: mujoco.MjModel) -> None:
    """Raise ModelError naming the element and attribute for a number of `m` the engine
    cannot simulate: NaN or inf in any float field (+-inf is allowed in the ranges
    jnt_range, tendon_range, ctrlrange, forcerange and actrange, where it means no bound), and
    negative armature or damping."""
    # fields copied from the MJCF first, so the message names the attribute a user typed;
    # then those computed from them (mean inertia, inverse weights, mixed pair parameters)
    derived = [
        n
        for n in MODEL_SPECS
        if n.startswith(("stat_", "cpair_"))
        or n.endswith("invweight0")
        or n in ("tendon_lengthspring", "tendon_length0")
    ]
    order = [n for n in MODEL_SPECS if n not in derived] + derived
    for name in order:
        spec = MODEL_SPECS[name]
        if spec is float:
            value = np.array([getattr(m, name)])
        elif spec is not int and spec.dtype is np.float64:
            value = getattr(m, name)
        else:
            continue
        bad = np.isnan(value) if name in _INF_ALLOWED else ~np.isfinite(value)
        if bad.any():
            i = int(np.argwhere(bad)[0][0])
            entry = value[i] if spec is not float else value[0]
            where = _owner(mj, name, i) if spec is not float else f"the model's {name}"
            if name.startswith("cpair_"):
                g1, g2 = (int(g) for g in m.cpair_geom[i])
                OBJ = mujoco.mjtObj
                where = f"<geom> {_name(mj, OBJ.mjOBJ_GEOM, g1)} and {_name(mj, OBJ.mjOBJ_GEOM, g2)}"
            raise ModelError(
                f"{where}: {name} = {_fmt(entry)} is not finite (NaN or inf); "
                "every number the engine uses must be finite"
            )
    for name in _NONNEGATIVE:
        value = getattr(m, name)
        if np.any(value < 0):
            i = int(np.flatnonzero(value < 0)[0])
            raise ModelError(f"{_owner(mj, name, i)}: {name} must be >= 0, got {_fmt(value[i])}")


def _name(mj: mujoco.MjModel, objtype: mujoco.mjtObj, i: int) -> str:
    name = mujoco.mj_id2name(mj, objtype, i)
    return f"'{name}'" if name else f"#{i}"


def _refuse(what: str, why: str) -> None:
    raise UnsupportedModelError(f"{what}: {why}")


def check_supported(mj: mujoco.MjModel) -> None:
    """Raise UnsupportedModelError for the first feature of `mj` the engine cannot simulate."""
    OBJ = mujoco.mjtObj
    _check_collision(mj)
    _check_constraints(mj)
    if mj.opt.integrator not in _INTEGRATOR_NAMES:
        name = mujoco.mjtIntegrator(mj.opt.integrator).name
        _refuse(f'<option integrator="{name}">', "only Euler, RK4, implicit and implicitfast")
    allowed_enable = T.ENBL_ENERGY
    if mj.opt.enableflags & ~allowed_enable:
        # mjtEnableBit is a pybind11 enum: not iterable, its members are in __members__
        names = [
            name.removeprefix("mjENBL_").lower()
            for name, bit in mujoco.mjtEnableBit.__members__.items()
            if name != "mjNENABLE" and mj.opt.enableflags & ~allowed_enable & int(bit)
        ]
        flags = " ".join(f'{name}="enable"' for name in names) or f"enableflags={mj.opt.enableflags}"
        _refuse(f"<option><flag {flags}>", "only the energy flag may be enabled")
    if mj.opt.disableactuator:
        _refuse("<option actuatorgroupdisable>", "actuator groups cannot be disabled")
    fluid = mj.opt.density > 0 or mj.opt.viscosity > 0
    if fluid and mj.opt.integrator in (T.INT_IMPLICIT, T.INT_IMPLICITFAST):
        _refuse(
            '<option density/viscosity> with integrator="implicit(fast)"',
            "fluid-force velocity derivatives are not implemented; use Euler or RK4",
        )
    for name, count in [
        ("<flex>", mj.nflex),
        ("<plugin>", mj.nplugin),
    ]:
        if count:
            _refuse(name, "not supported by the engine")
    for b in range(mj.nbody):
        if mj.body_gravcomp[b] != 0:
            _refuse(f"<body gravcomp> {_name(mj, OBJ.mjOBJ_BODY, b)}", "gravity compensation")
    for g in range(mj.ngeom):
        if fluid and mj.geom_fluid[g, 0] > 0:
            _refuse(f"<geom fluidshape> {_name(mj, OBJ.mjOBJ_GEOM, g)}", "ellipsoid fluid model")
    for j in range(mj.njnt):
        what = f"<joint> {_name(mj, OBJ.mjOBJ_JOINT, j)}"
        if np.any(mj.jnt_stiffnesspoly[j]):
            _refuse(what, "polynomial stiffness")
        if np.any(mj.jnt_springyield[j]):
            _refuse(what, "spring yield (plasticity)")
        if mj.jnt_actfrclimited[j]:
            _refuse(what, "actuatorfrcrange")
    for v in range(mj.nv):
        if np.any(mj.dof_dampingpoly[v]):
            _refuse(f"<joint> {_name(mj, OBJ.mjOBJ_JOINT, mj.dof_jntid[v])}", "polynomial damping")
    for t in range(mj.ntendon):
        what = f"<tendon> {_name(mj, OBJ.mjOBJ_TENDON, t)}"
        adr, num = mj.tendon_adr[t], mj.tendon_num[t]
        kinds = mj.wrap_type[adr : adr + num]
        W = mujoco.mjtWrap
        spatial = np.isin(
            kinds, [int(k) for k in (W.mjWRAP_SITE, W.mjWRAP_PULLEY, W.mjWRAP_SPHERE, W.mjWRAP_CYLINDER)]
        )
        if np.any(kinds != W.mjWRAP_JOINT) and not np.all(spatial):
            bad = int(kinds[~spatial][0])
            _refuse(
                f"<spatial> tendon {_name(mj, OBJ.mjOBJ_TENDON, t)}",
                f"wrap object type {bad}: spatial tendons go through sites and pulleys and wrap "
                "spheres and cylinders only",
            )
        if mj.tendon_armature[t] != 0:
            _refuse(what, "tendon armature")
        if np.any(mj.tendon_stiffnesspoly[t]) or np.any(mj.tendon_dampingpoly[t]):
            _refuse(what, "polynomial stiffness or damping")
        if np.any(mj.tendon_springyield[t]):
            _refuse(what, "spring yield (plasticity)")
        if mj.tendon_actfrclimited[t]:
            _refuse(what, "actuatorfrcrange")
        for w in range(adr, adr + num):
            if mj.wrap_type[w] != mujoco.mjtWrap.mjWRAP_JOINT:
                continue
            jtype = mj.jnt_type[mj.wrap_objid[w]]
            if jtype not in (T.JNT_SLIDE, T.JNT_HINGE):
                _refuse(what, "fixed tendons must couple hinge or slide joints")
    _check_actuators(mj)
    _check_sensors(mj)


def _check_collision(mj: mujoco.MjModel) -> None:
    """Refuse contact features the collision stage does not reproduce.

    A geom pair that can collide (a candidate pair of engine.collision_driver) but has no
    collider here (meshes, SDFs) is refused when contacts are enabled, and
    so are pairs for MuJoCo's convex collider (engine.collision_convex) when the model
    selects its libccd path (`<flag nativeccd="disable">`). With contacts disabled the
    model loads (nothing collides), and engine.api.collision refuses to run on it.
    """
    OBJ = mujoco.mjtObj
    for g in range(mj.ngeom):
        if mj.geom_adhesion[g] != 0:
            _refuse(f"<geom adhesion> {_name(mj, OBJ.mjOBJ_GEOM, g)}", "adhesion")
        if np.any(mj.geom_surfacevel[g]):
            _refuse(f"<geom surfacevel> {_name(mj, OBJ.mjOBJ_GEOM, g)}", "surface velocity")
    for p in range(mj.npair):
        if mj.pair_adhesion[p] != 0:
            _refuse(f"<pair adhesion> {_name(mj, OBJ.mjOBJ_PAIR, p)}", "adhesion")
    flags = mj.opt.disableflags
    if flags & T.DSBL_CONTACT or flags & T.DSBL_CONSTRAINT:
        return
    cpair = candidate_pairs(mj)
    refused = cpair["refused"]
    if len(refused):
        g1, g2 = (int(g) for g in refused[0])
        t1, t2 = (GEOM_TYPE_NAMES[int(mj.geom_type[g])] for g in (g1, g2))
        name1, name2 = _name(mj, OBJ.mjOBJ_GEOM, g1), _name(mj, OBJ.mjOBJ_GEOM, g2)
        large = [
            mesh_too_large(mj, g) for g in (g1, g2) if int(mj.geom_type[g]) == mujoco.mjtGeom.mjGEOM_MESH
        ]
        large = [why for why in large if why]
        if (int(mj.geom_type[g1]), int(mj.geom_type[g2])) in CONVEX_PAIRS and large:
            _refuse(
                f"<geom> {name1} ({t1}) and <geom> {name2} ({t2})",
                f"can collide, but the mesh has {large[0]}; keep them apart with "
                "contype/conaffinity or <exclude>, or simplify the mesh",
            )
        how = "its general convex solver"
        _refuse(
            f"<geom> {name1} ({t1}) and <geom> {name2} ({t2})",
            f"can collide, but {t1}-{t2} collision is not implemented (MuJoCo uses {how} "
            "there); keep them apart with contype/conaffinity or <exclude>",
        )
    if flags & T.DSBL_NATIVECCD:
        for g1, g2 in cpair["cpair_geom"]:
            t1, t2 = int(mj.geom_type[g1]), int(mj.geom_type[g2])
            if (t1, t2) in CONVEX_PAIRS:
                name1, name2 = _name(mj, OBJ.mjOBJ_GEOM, int(g1)), _name(mj, OBJ.mjOBJ_GEOM, int(g2))
                n1, n2 = GEOM_TYPE_NAMES[t1], GEOM_TYPE_NAMES[t2]
                _refuse(
                    f'<flag nativeccd="disable"> with <geom> {name1} ({n1}) and <geom> {name2} ({n2})',
                    f"MuJoCo's libccd (MPR) path for {n1}-{n2} collision is not implemented; "
                    "only its native CCD (the default)",
                )


_EQ_NAMES = {int(v): k.removeprefix("mjEQ_").lower() for k, v in mujoco.mjtEq.__members__.items()}


def _check_solref(what: str, solref) -> None:
    """MuJoCo replaces a solref with mixed signs by its default (with a warning): refuse it."""
    if not np.all(np.isfinite(solref)):
        return  # check_values names the non-finite number
    if (solref[0] > 0) != (solref[1] > 0):
        _refuse(what, f"solref {list(map(float, solref))} mixes the standard (> 0) and direct (<= 0) forms")


def _check_constraints(mj: mujoco.MjModel) -> None:
    """Refuse constraint features the constraint stage and the solvers do not reproduce.

    Supported: joint limits on hinge, slide and ball joints, fixed-tendon limits, joint and
    tendon friction loss, contacts with condim 1, 3, 4 or 6 in MuJoCo's pyramidal or elliptic
    friction cone, equality connect, weld and joint, solvers PGS and Newton, each with or without
    the noslip pass (engine.noslip). Nothing is checked when
    constraints are disabled.
    """
    OBJ = mujoco.mjtObj
    flags = mj.opt.disableflags
    if flags & T.DSBL_CONSTRAINT:
        return
    opt = mj.opt
    if opt.solver == mujoco.mjtSolver.mjSOL_CG:
        _refuse('<option solver="CG">', "the CG solver is not implemented; use PGS or Newton")
    if not flags & T.DSBL_FRICTIONLOSS:
        for j in range(mj.njnt):
            adr, num = mj.jnt_dofadr[j], {0: 6, 1: 3}.get(int(mj.jnt_type[j]), 1)
            for k in range(adr, adr + num):
                if mj.dof_frictionloss[k] > 0:
                    _check_solref(f"<joint frictionloss> {_name(mj, OBJ.mjOBJ_JOINT, j)}", mj.dof_solref[k])
        for t in range(mj.ntendon):
            if mj.tendon_frictionloss[t] > 0:
                _check_solref(
                    f"<tendon frictionloss> {_name(mj, OBJ.mjOBJ_TENDON, t)}", mj.tendon_solref_fri[t]
                )
    if not flags & T.DSBL_LIMIT:
        for j in range(mj.njnt):
            if mj.jnt_limited[j]:
                what = f"<joint limited> {_name(mj, OBJ.mjOBJ_JOINT, j)}"
                if mj.jnt_type[j] not in (T.JNT_SLIDE, T.JNT_HINGE, T.JNT_BALL):
                    _refuse(what, "limits on free joints are not implemented")
                _check_solref(what, mj.jnt_solref[j])
        for t in range(mj.ntendon):
            if mj.tendon_limited[t]:
                _check_solref(f"<tendon limited> {_name(mj, OBJ.mjOBJ_TENDON, t)}", mj.tendon_solref_lim[t])
    if not flags & T.DSBL_EQUALITY:
        for i in range(mj.neq):
            kind = _EQ_NAMES.get(int(mj.eq_type[i]), str(mj.eq_type[i]))
            what = f"<equality> <{kind}> {_name(mj, OBJ.mjOBJ_EQUALITY, i)}"
            if mj.eq_type[i] not in (T.EQ_CONNECT, T.EQ_WELD, T.EQ_JOINT, T.EQ_TENDON):
                _refuse(what, "only connect, weld and joint equalities are implemented")
            _check_solref(what, mj.eq_solref[i])
    if not flags & T.DSBL_CONTACT:
        for g in range(mj.ngeom):
            _check_solref(f"<geom> {_name(mj, OBJ.mjOBJ_GEOM, g)}", mj.geom_solref[g])
        for p in range(mj.npair):
            _check_solref(f"<pair> {_name(mj, OBJ.mjOBJ_PAIR, p)}", mj.pair_solref[p])
        cpair = candidate_pairs(mj)
        for (g1, g2), dim in zip(cpair["cpair_geom"], cpair["cpair_dim"], strict=True):
            if dim not in (1, 3, 4, 6):
                name1, name2 = _name(mj, OBJ.mjOBJ_GEOM, int(g1)), _name(mj, OBJ.mjOBJ_GEOM, int(g2))
                _refuse(
                    f"<geom condim> of {name1} and {name2}",
                    f"their contact has condim {dim}; MuJoCo's condims are 1, 3, 4 and 6",
                )


def _check_actuators(mj: mujoco.MjModel) -> None:
    OBJ = mujoco.mjtObj
    for i in range(mj.nu):
        what = f"<actuator> {_name(mj, OBJ.mjOBJ_ACTUATOR, i)}"
        dyntype = mj.actuator_dyntype[i]
        if dyntype not in _SUPPORTED_DYN:
            dyn = mujoco.mjtDyn(dyntype).name.removeprefix("mjDYN_").lower()
            _refuse(what, f"activation dynamics {dyn} (only none, integrator, filter and filterexact)")
        if dyntype != T.DYN_NONE and mj.actuator_actnum[i] != 1:
            _refuse(what, f"{mj.actuator_actnum[i]} activation states (only one)")
        if dyntype == T.DYN_NONE and mj.actuator_actnum[i] != 0:
            _refuse(what, "activation states without activation dynamics")
        if dyntype != T.DYN_NONE and _rotation_servo(mj, i):
            # MuJoCo wraps such a servo's activation on the circle (its setpoint is periodic),
            # in a way its 4.0.0 binary does not document; we do not reproduce it
            _refuse(what, "activation dynamics on a rotation servo (site with refsite, rotational gear)")
        if mj.actuator_gaintype[i] not in (T.GAIN_FIXED, T.GAIN_AFFINE):
            gain = mujoco.mjtGain(mj.actuator_gaintype[i]).name
            _refuse(what, f"gain type {gain} (only fixed and affine)")
        if mj.actuator_biastype[i] not in (T.BIAS_NONE, T.BIAS_AFFINE):
            bias = mujoco.mjtBias(mj.actuator_biastype[i]).name
            _refuse(what, f"bias type {bias} (only none and affine)")
        # a hinge, slide or tendon reads gear[0] only (as MuJoCo, which ignores the rest); a
        # site, with or without refsite, reads all six
        trn = mj.actuator_trntype[i]
        if trn == T.TRN_JOINT:
            if mj.jnt_type[mj.actuator_trnid[i, 0]] not in (T.JNT_SLIDE, T.JNT_HINGE):
                _refuse(what, "joint transmission on a ball or free joint")
        elif trn not in (T.TRN_TENDON, T.TRN_SITE):
            kind = mujoco.mjtTrn(trn).name.removeprefix("mjTRN_").lower()
            _refuse(what, f"{kind} transmission (only joint, tendon and site)")
        if mj.actuator_ctrlnum[i] != 1 or mj.actuator_outnum[i] != 1:
            _refuse(what, "multi-input or multi-output actuators")
        if mj.actuator_damping[i] != 0 or mj.actuator_armature[i] != 0:
            _refuse(what, "actuator damping or armature")
        if mj.actuator_delay[i] != 0 or np.any(mj.actuator_history[i]):
            _refuse(what, "delayed controls")
        if mj.actuator_plugin[i] >= 0:
            _refuse(what, "actuator plugins")


_SUPPORTED_DYN = (T.DYN_NONE, T.DYN_INTEGRATOR, T.DYN_FILTER, T.DYN_FILTEREXACT)


def _rotation_servo(mj: mujoco.MjModel, i: int) -> bool:
    """Actuator i has a periodic setpoint (engine.actuation.wrap_period's test): a servo
    (fixed gain, affine bias with biasprm[1] = -gainprm[0]) on a site with a refsite and a
    purely rotational gear."""
    gear = mj.actuator_gear[i]
    return bool(
        mj.actuator_trntype[i] == T.TRN_SITE
        and mj.actuator_trnid[i, 1] >= 0
        and not np.any(gear[:3])
        and np.any(gear[3:])
        and mj.actuator_gaintype[i] == T.GAIN_FIXED
        and mj.actuator_biastype[i] == T.BIAS_AFFINE
        and mj.actuator_gainprm[i, 0] == -mj.actuator_biasprm[i, 1]
    )


def _check_sensors(mj: mujoco.MjModel) -> None:
    OBJ = mujoco.mjtObj
    for i in range(mj.nsensor):
        stype = int(mj.sensor_type[i])
        if stype not in _SUPPORTED_SENSORS:
            name = mujoco.mjtSensor(stype).name.removeprefix("mjSENS_").lower()
            _refuse(f"<sensor> <{name}> {_name(mj, OBJ.mjOBJ_SENSOR, i)}", "sensor type")
        if mj.sensor_delay[i] != 0 or np.any(mj.sensor_interval[i]) or np.any(mj.sensor_history[i]):
            _refuse(f"<sensor> {_name(mj, OBJ.mjOBJ_SENSOR, i)}", "delay, interval or history")
        if mj.sensor_objtype[i] == OBJ.mjOBJ_CAMERA or mj.sensor_reftype[i] == OBJ.mjOBJ_CAMERA:
            _refuse(f"<sensor> {_name(mj, OBJ.mjOBJ_SENSOR, i)}", "camera frames")
        if stype == T.SENS_RANGEFINDER:
            _check_rangefinder(mj, i)


_NO_RAY = {int(mujoco.mjtGeom.mjGEOM_MESH), int(mujoco.mjtGeom.mjGEOM_SDF)}


def _check_rangefinder(mj: mujoco.MjModel, i: int) -> None:
    """Refuse rangefinder i if its ray could meet a mesh or SDF geom (engine.ray has no code
    for them): one not on the site's body and visible to mj_ray (alpha > 0)."""
    OBJ = mujoco.mjtObj
    body = mj.site_bodyid[mj.sensor_objid[i]]
    for g in range(mj.ngeom):
        if int(mj.geom_type[g]) not in _NO_RAY or mj.geom_bodyid[g] == body:
            continue
        mat = mj.geom_matid[g]
        alpha = mj.geom_rgba[g, 3] if mat < 0 else mj.mat_rgba[mat, 3]
        if alpha == 0:
            continue
        kind = GEOM_TYPE_NAMES[int(mj.geom_type[g])]
        _refuse(
            f"<sensor> <rangefinder> {_name(mj, OBJ.mjOBJ_SENSOR, i)}",
            f"its ray can meet <geom> {_name(mj, OBJ.mjOBJ_GEOM, g)} ({kind}), and rays against "
            "mesh and sdf geoms are not implemented (primitive geoms and height fields only)",
        )


def _m_sparsity(dof_parentid: np.ndarray):
    """Row structure of lower-triangular M: row i holds i's dof ancestors (ascending), then i.

    On a kinematic tree this pattern is closed under L^T D L factorization (no fill-in),
    so M, its factor and every solve share it.
    """
    nv = len(dof_parentid)
    rows = []
    for i in range(nv):
        chain = []
        j = i
        while j >= 0:
            chain.append(j)
            j = dof_parentid[j]
        rows.append(chain[::-1])
    rownnz = np.array([len(r) for r in rows], dtype=INT)
    rowadr = np.zeros(nv, dtype=INT)
    if nv:
        rowadr[1:] = np.cumsum(rownnz)[:-1]
    colind = np.array([c for r in rows for c in r], dtype=INT)
    return rownnz, rowadr, colind


def _d_mask(dof_parentid: np.ndarray) -> np.ndarray:
    """Dense pattern of d(force)/d(qvel): dof pairs on one ancestor chain (MuJoCo's D pattern).

    Velocity derivatives of joint-space forces are kept only between a dof and its
    ancestors or descendants, as MuJoCo stores them (two dofs in different branches, or in
    different trees, get no entry even if a tendon couples them).
    """
    nv = len(dof_parentid)
    mask = np.zeros((nv, nv), dtype=INT)
    for i in range(nv):
        j = i
        while j >= 0:
            mask[i, j] = mask[j, i] = 1
            j = dof_parentid[j]
    return mask


def _tree_dofnum(dof_parentid: np.ndarray) -> np.ndarray:
    """Number of dofs in the kinematic tree of each dof (its root dof's descendants)."""
    nv = len(dof_parentid)
    root = np.arange(nv)
    for i in range(nv):
        if dof_parentid[i] >= 0:
            root[i] = root[dof_parentid[i]]
    counts = np.bincount(root, minlength=nv)
    return counts[root]


def _check_trees(mj: mujoco.MjModel) -> None:
    """The solver relies on each kinematic tree's dofs being the contiguous range
    tree_dofadr .. tree_dofadr + tree_dofnum - 1 (MuJoCo's depth-first dof order)."""
    expect = np.full(mj.nv, -1)
    for t in range(mj.ntree):
        expect[mj.tree_dofadr[t] : mj.tree_dofadr[t] + mj.tree_dofnum[t]] = t
    if not np.array_equal(expect, mj.dof_treeid):
        raise ModelError("the model's kinematic trees do not own contiguous dof ranges (dof_treeid)")


def _chain_masks(m) -> np.ndarray:
    """(nbody, nv) bool: dof k is on body b's chain, the dofs of b and its ancestors (the
    dofs that can move b; MuJoCo's mj_bodyChain). `m`: an MjModel or a Model."""
    chain = np.zeros((m.nbody, m.nv), dtype=bool)
    chain[m.dof_bodyid, np.arange(m.nv)] = True
    for b in range(1, m.nbody):  # parent-first: the parent's row is complete
        chain[b] |= chain[m.body_parentid[b]]
    return chain


def dense_jacobian(jacobian: int, nv: int, solver: int) -> bool:
    """Whether constraint rows are stored dense: with <option jacobian="dense">, never with
    "sparse", and with "auto" (the default) below SPARSE_NV dofs (MuJoCo's mj_isSparse
    threshold) under PGS only. PGS updates M^-1 J^T f with each row's M^-1 J_i^T, a plain
    vector loop when dense; Newton sums J^T D J, whose cost grows with the square of a row's
    stored entries. Measured on gymnasium's humanoid and ant on the floor (env-steps/s, B =
    64, one thread): under PGS dense rows are 12 % (humanoid) and 4 % (ant) faster than
    compact ones, under Newton compact rows are 7 % faster for both."""
    if jacobian == T.JAC_AUTO:
        return nv < T.SPARSE_NV and solver == T.SOL_PGS
    return jacobian == T.JAC_DENSE


def efc_widths(m, cpair_geom: np.ndarray, ten_J: tuple, dense: bool = False) -> tuple[int, int]:
    """(nefcdof, nefctreedof): the most dofs one constraint row can touch, and the most
    dofs of the kinematic trees one row touches, over every row the model can make; both
    nv when the rows are `dense` (and the model can make any row).

    A row stores the dofs of its chain as MuJoCo's sparse Jacobian does (mj_mergeChain):
    - connect and weld between bodies b1, b2 (or the sites' bodies): the union of the two
      chains, |c1| + |c2| - |c1 & c2|;
    - a contact between the bodies of a candidate pair: the union less the common
      ancestors' dofs, whose columns cancel (J_p(b2, p) - J_p(b1, p) = 0 there):
      |c1| + |c2| - 2 |c1 & c2|;
    - joint equality: its one or two dofs; joint limit: one dof (a ball joint: its three);
      tendon limit: the tendon's dofs.
    The chain overlaps |c1 & c2| of all body pairs come from one product of the (nbody, nv)
    chain masks. The second width bounds a row of M^-1 J^T: M is block diagonal over the
    trees, so that row is zero outside the trees of the row's dofs (for a body pair, the
    dofs of the one or two trees the bodies belong to).

    `m` is an MjModel or a Model (the same fields), `cpair_geom` the candidate contact
    pairs and `ten_J` the tendon rows' (rownnz, rowadr, colind) (`_tendon_sparsity`)."""
    if m.nv == 0:
        return 0, 0
    chain = _chain_masks(m)
    count = chain.sum(axis=1)
    as_float = chain.astype(np.float64)
    common = np.rint(as_float @ as_float.T).astype(np.int64)  # |c1 & c2| for every body pair
    # a body's tree: that of any dof on its chain (-1: welded to the world)
    tree = np.where(count > 0, np.asarray(m.dof_treeid)[np.argmax(chain, axis=1)], -1)
    tree_dofs = np.where(tree >= 0, np.asarray(m.tree_dofnum)[np.maximum(tree, 0)], 0)

    def tree_width(b1, b2):
        return np.where(tree[b1] == tree[b2], tree_dofs[b1], tree_dofs[b1] + tree_dofs[b2])

    widths, tree_widths = [0], [0]
    geom_body = np.asarray(m.geom_bodyid)
    if len(cpair_geom):
        b1, b2 = geom_body[cpair_geom[:, 0]], geom_body[cpair_geom[:, 1]]
        widths.append(int(np.max(count[b1] + count[b2] - 2 * common[b1, b2])))
        tree_widths.append(int(np.max(tree_width(b1, b2))))
    eq = np.isin(m.eq_type, (T.EQ_CONNECT, T.EQ_WELD))
    if eq.any():
        b1, b2 = m.eq_obj1id[eq], m.eq_obj2id[eq]
        site = m.eq_objtype[eq] == T.OBJ_SITE
        b1, b2 = b1.copy(), b2.copy()
        b1[site], b2[site] = m.site_bodyid[b1[site]], m.site_bodyid[b2[site]]
        widths.append(int(np.max(count[b1] + count[b2] - common[b1, b2])))
        tree_widths.append(int(np.max(tree_width(b1, b2))))
    dof_tree_dofs = np.asarray(m.tree_dofnum)[m.dof_treeid]
    rownnz, rowadr, colind = ten_J
    for i in np.flatnonzero(m.eq_type == T.EQ_TENDON):
        tendons = [t for t in (m.eq_obj1id[i], m.eq_obj2id[i]) if t >= 0]
        dofs = set().union(*({int(k) for k in colind[rowadr[t] : rowadr[t] + rownnz[t]]} for t in tendons))
        widths.append(len(dofs))
        tree_widths.append(int(sum(m.tree_dofnum[k] for k in {int(m.dof_treeid[v]) for v in dofs})))
    for i in np.flatnonzero(m.eq_type == T.EQ_JOINT):
        dofs = {int(m.jnt_dofadr[j]) for j in (m.eq_obj1id[i], m.eq_obj2id[i]) if j >= 0}
        trees = {int(m.dof_treeid[k]) for k in dofs}
        widths.append(len(dofs))
        tree_widths.append(int(sum(m.tree_dofnum[t] for t in trees)))
    limited = np.asarray(m.jnt_limited).astype(bool)
    if limited.any():
        ball = limited & (np.asarray(m.jnt_type) == T.JNT_BALL)
        widths.append(3 if ball.any() else 1)  # a ball limit's row is on its three dofs
        tree_widths.append(int(np.max(dof_tree_dofs[m.jnt_dofadr[limited]])))
    friction = np.asarray(m.dof_frictionloss) > 0
    if friction.any():
        widths.append(1)
        tree_widths.append(int(np.max(dof_tree_dofs[friction])))
    rownnz, rowadr, colind = ten_J
    tendon_rows = np.asarray(m.tendon_limited).astype(bool) | (np.asarray(m.tendon_frictionloss) > 0)
    for t in np.flatnonzero(tendon_rows):
        dofs = colind[rowadr[t] : rowadr[t] + rownnz[t]]
        widths.append(len(dofs))
        tree_widths.append(int(sum(m.tree_dofnum[k] for k in np.unique(m.dof_treeid[dofs]))))
    if dense and max(widths) > 0:
        return m.nv, m.nv
    return max(widths), max(tree_widths)


def _body_dofs(mj: mujoco.MjModel, body: int) -> set[int]:
    """The dofs that move `body`: those of the bodies on its path to the world."""
    dofs = set()
    while body > 0:
        dofs.update(range(mj.body_dofadr[body], mj.body_dofadr[body] + mj.body_dofnum[body]))
        body = mj.body_parentid[body]
    return dofs


def _tendon_sparsity(mj: mujoco.MjModel):
    """(ten_J_rownnz, ten_J_rowadr, ten_J_colind) of the tendons: each row the dofs that can
    move the tendon, ascending, each once (MuJoCo's model arrays of the same names): a fixed
    tendon's joints' dofs; a spatial tendon's, the dofs moving the sites' bodies of each
    segment between two bodies, and for a site-geom-site triple the dofs of the two sites'
    and the geom's bodies unless all three are one body."""
    rows = []
    for t in range(mj.ntendon):
        adr, num = mj.tendon_adr[t], mj.tendon_num[t]
        objs = mj.wrap_objid[adr : adr + num]
        if mj.wrap_type[adr] == mujoco.mjtWrap.mjWRAP_JOINT:
            rows.append(np.unique(mj.jnt_dofadr[objs]))
            continue
        dofs: set[int] = set()
        kinds = mj.wrap_type[adr : adr + num]
        W = mujoco.mjtWrap
        for k in range(num - 1):
            if kinds[k] != W.mjWRAP_SITE:
                continue  # a pulley starts a new branch; a geom is handled with its first site
            if kinds[k + 1] == W.mjWRAP_SITE:
                bodies = {mj.site_bodyid[objs[k]], mj.site_bodyid[objs[k + 1]]}
            elif kinds[k + 1] == W.mjWRAP_SPHERE or kinds[k + 1] == W.mjWRAP_CYLINDER:
                # site-geom-site: the straight segment, or the pieces to and from the geom
                g, s1 = objs[k + 1], objs[k + 2]
                bodies = {mj.site_bodyid[objs[k]], mj.geom_bodyid[g], mj.site_bodyid[s1]}
            else:
                continue
            if len(bodies) > 1:
                for body in bodies:
                    dofs |= _body_dofs(mj, body)
        rows.append(np.array(sorted(dofs), dtype=INT))
    rownnz = np.array([len(r) for r in rows], dtype=INT)
    rowadr = np.zeros(len(rows), dtype=INT)
    if len(rows):
        rowadr[1:] = np.cumsum(rownnz)[:-1]
    colind = np.concatenate(rows).astype(INT) if rows else np.zeros(0, dtype=INT)
    return rownnz, rowadr, colind


def _disableflags(m) -> int:
    """The disable flags of an MjModel (m.opt.disableflags) or a Model (m.opt_disableflags)."""
    return int(m.opt_disableflags) if hasattr(m, "opt_disableflags") else int(m.opt.disableflags)


def _efc_rows(m, cpair_dim) -> tuple[int, int]:
    """(rows that do not depend on contacts, rows of one contact) of one environment of
    `m` (an MjModel or a Model) at most: every equality (connect 3, weld 6, joint 1 rows),
    one friction row per dof and tendon with frictionloss > 0 and both sides of every
    limit, then per contact the largest condim among the candidate pairs gives (1 row for
    condim 1, 2 (condim - 1) for a pyramid). The flags remove what they disable."""
    flags = _disableflags(m)
    eq_type, jnt_limited, tendon_limited = m.eq_type, m.jnt_limited, m.tendon_limited
    if flags & T.DSBL_CONSTRAINT:
        return 0, 0
    fixed = 0
    if not flags & T.DSBL_EQUALITY:
        sizes = {T.EQ_CONNECT: 3, T.EQ_WELD: 6, T.EQ_JOINT: 1, T.EQ_TENDON: 1}
        fixed += sum(sizes.get(int(t), 0) for t in eq_type)
    if not flags & T.DSBL_FRICTIONLOSS:
        fixed += int(
            np.sum(np.asarray(m.dof_frictionloss) > 0) + np.sum(np.asarray(m.tendon_frictionloss) > 0)
        )
    if not flags & T.DSBL_LIMIT:
        fixed += 2 * int(np.sum(jnt_limited)) + 2 * int(np.sum(tendon_limited))
    per_contact = 0
    if not flags & T.DSBL_CONTACT and len(cpair_dim):
        per_contact = max(1 if dim == 1 else 2 * (int(dim) - 1) for dim in cpair_dim)
    return fixed, per_contact


def efc_rows_needed(m: Model) -> int:
    """Most constraint rows one environment of `m` can have with m.nconmax contacts; the
    constraint stage writes rows without bounds checks, so m.nefcmax must be at least this
    (engine.data.make_data checks it)."""
    fixed, per_contact = _efc_rows(m, m.cpair_dim)
    return fixed + int(m.nconmax) * per_contact


def _bytes_per(mj: mujoco.MjModel, dims: tuple[str, ...], widths: dict[str, int]) -> int:
    """Bytes of one entry along any of the Data dimensions `dims` ("nconmax": one contact,
    "nefcmax", "npgs": one constraint row) in one environment, from Data's declarations;
    `widths` gives the compact row widths (nefcdof, nefctreedof)."""
    # Data's declarations, recorded by engine.fields when engine.data (which imports this
    # module, so it cannot be imported here) was loaded with the engine package
    counts = {"nv": mj.nv, "nq": mj.nq, "nu": mj.nu, "nbody": mj.nbody, **widths}
    total = 0
    for spec in fields.DECLARED["Data"].values():
        names = [getattr(dim, "name", None) for dim in spec.dims]
        if not any(name in dims for name in names):
            continue
        n = np.dtype(spec.dtype).itemsize
        for dim, name in zip(spec.dims, names, strict=True):
            if name == "B" or name in dims:
                continue
            n *= dim if isinstance(dim, int) else counts[name]
        total += n
    return total


def capacities(
    mj: mujoco.MjModel,
    cpair: dict,
    nconmax: int | None,
    nefcmax: int | None,
    widths: dict[str, int],
    memory: int = -1,
):
    """(nconmax, nefcmax): each row's contact and constraint-row capacity.

    In order of precedence: load_mjcf's `nconmax`/`nefcmax`, the MJCF's `<size nconmax>`
    and `<size njmax>`, the MJCF's `<size memory>` (bytes per environment for the contact
    and constraint arrays: the most contacts whose arrays and rows fit, and the rest as
    rows), then the defaults: nconmax the most contacts the candidate pairs can produce,
    at most DEFAULT_NCONMAX; nefcmax every row those contacts, the equalities and the
    limits can need. nefcmax is never more than that (more rows could never be filled);
    with a smaller nefcmax, nconmax shrinks to the contacts whose rows fit, so a row that
    finds more contacts raises ContactOverflowError instead of overrunning the rows.
    `widths` ({"nefcdof": ..., "nefctreedof": ...}, from efc_widths) size a row's bytes.
    Raises ModelError when nefcmax cannot hold the equality and limit rows."""
    flags = mj.opt.disableflags
    fixed, per_contact = _efc_rows(mj, cpair["cpair_dim"])
    worst = int(cpair["cpair_maxcon"].sum())
    origin = f"nefcmax={nefcmax}"
    if nconmax is None and mj.nconmax >= 0:
        nconmax = int(mj.nconmax)
    if nefcmax is None and mj.njmax >= 0:
        nefcmax, origin = int(mj.njmax), f'<size njmax="{mj.njmax}">'
    if nefcmax is None and memory >= 0:
        origin = f'<size memory="{memory}"> ({memory} bytes per environment)'
        dual = mj.opt.solver == T.SOL_PGS or mj.opt.noslip_iterations > 0
        row_dims = ("nefcmax", "npgs") if dual else ("nefcmax",)
        con_bytes, row_bytes = _bytes_per(mj, ("nconmax",), widths), _bytes_per(mj, row_dims, widths)
        if flags & T.DSBL_CONSTRAINT:
            row_bytes = 0
        if nconmax is None:
            free = memory - fixed * row_bytes
            nconmax = max(0, min(worst, free // (con_bytes + per_contact * row_bytes)))
        left = memory - nconmax * con_bytes
        nefcmax = left // row_bytes if row_bytes else 0
        if left < 0 or nefcmax < fixed:
            need = fixed * row_bytes + nconmax * con_bytes
            raise ModelError(
                f"{origin} cannot hold the model's {fixed} equality and limit rows and "
                f"{nconmax} contacts: it needs at least {need} bytes; raise memory or remove it"
            )
    if nconmax is None:
        nconmax = min(worst, DEFAULT_NCONMAX)
    full = fixed + nconmax * per_contact
    if nefcmax is None:
        return nconmax, full
    if nefcmax < fixed:
        raise ModelError(
            f"{origin} cannot hold the model's {fixed} equality and limit rows: nefcmax must be >= {fixed}"
        )
    if per_contact:
        nconmax = min(nconmax, (nefcmax - fixed) // per_contact)
    return nconmax, min(nefcmax, fixed + nconmax * per_contact)


def model_from_mujoco(
    mj: mujoco.MjModel, nconmax: int | None = None, nefcmax: int | None = None, memory: int = -1
) -> Model:
    """Copy the static arrays of a compiled MjModel into an engine Model.

    Every field is converted to its declaration (dtype, and the fixed trailing dimensions:
    MuJoCo keeps some arrays flat). A field with a counterpart of the same name in the MjModel
    (`opt_*` in mj.opt, `stat_*` in mj.stat) is copied from it; the few the engine derives
    or narrows are computed here (`_derived`), the capacities by `capacities`. Raises
    ModelError for a number the engine cannot simulate (`check_values`)."""
    nconmax = _capacity_argument("nconmax", nconmax)
    nefcmax = _capacity_argument("nefcmax", nefcmax)
    derived = _derived(mj, nconmax, nefcmax, memory)
    values = {}
    for name, spec in MODEL_SPECS.items():
        value = derived[name] if name in derived else _mujoco_field(mj, name)
        values[name] = _as_declared(value, spec)
    model = Model(**values)
    check_values(model, mj)
    return model


def _mujoco_field(mj: mujoco.MjModel, name: str):
    """The MjModel value a field of the same name copies (`opt_x` is mj.opt.x, `stat_x` is
    mj.stat.x)."""
    if name.startswith("opt_"):
        return getattr(mj.opt, name[4:])
    if name.startswith("stat_"):
        return getattr(mj.stat, name[5:])
    return getattr(mj, name)


def _as_declared(value, spec):
    """`value` as its declaration says: a Python int or float, or a C-contiguous array of the
    declared dtype reshaped to the declared number of dimensions (fixed trailing sizes)."""
    if spec is int:
        return int(value)
    if spec is float:
        return float(value)
    a = np.ascontiguousarray(np.asarray(value, dtype=spec.dtype))
    trailing = spec.dims[1:]
    if spec.ndim > 1 and all(isinstance(dim, int) for dim in trailing):
        a = a.reshape(-1, *trailing)
    elif spec.ndim == 1:
        a = a.reshape(-1)
    return a


def _derived(mj: mujoco.MjModel, nconmax: int | None, nefcmax: int | None, memory: int) -> dict:
    """The fields the engine derives (M's sparsity, candidate contact pairs, capacities) or
    narrows from MuJoCo's wider arrays (the three gain and bias parameters and the filters'
    time constant, which are all the engine's actuators use)."""
    parent = np.asarray(mj.dof_parentid)
    rownnz, rowadr, colind = _m_sparsity(parent)
    _check_trees(mj)
    ten_J = _tendon_sparsity(mj)
    cpair = candidate_pairs(mj)
    dense = dense_jacobian(mj.opt.jacobian, mj.nv, mj.opt.solver)
    nefcdof, nefctreedof = efc_widths(mj, cpair["cpair_geom"], ten_J, dense)
    widths = {"nefcdof": nefcdof, "nefctreedof": nefctreedof}
    nconmax, nefcmax = capacities(mj, cpair, nconmax, nefcmax, widths, memory)
    out = {
        "na": int(mj.na),
        "nM": int(rownnz.sum()),
        "M_rownnz": rownnz,
        "M_rowadr": rowadr,
        "M_colind": colind,
        "D_mask": _d_mask(parent),
        "dof_treedofnum": _tree_dofnum(parent),
        "actuator_gainprm": np.asarray(mj.actuator_gainprm).reshape(-1, 10)[:, :3],
        "actuator_biasprm": np.asarray(mj.actuator_biasprm).reshape(-1, 10)[:, :3],
        "actuator_dynprm": np.asarray(mj.actuator_dynprm).reshape(-1, 10)[:, :1],
        "nJten": int(ten_J[0].sum()),
        "ten_J_rownnz": ten_J[0],
        "ten_J_rowadr": ten_J[1],
        "ten_J_colind": ten_J[2],
        "nconmax": int(nconmax),
        "nefcmax": int(nefcmax),
        "efc_dense": int(dense),
        **widths,
        "cpair_refused": cpair["refused"],
    }
    out.update((k, v) for k, v in cpair.items() if k.startswith("cpair_"))
    return out


def model_digest(m: Model) -> str:
    """Hex digest of every field of m but the buffer capacities (nconmax, nefcmax and the
    sizes they set do not change the physics)."""
    h = hashlib.blake2b(digest_size=16)
    for name, value in m._asdict().items():
        if name in ("nconmax", "nefcmax"):
            continue
        h.update(name.encode())
        if isinstance(value, np.ndarray):
            h.update(f"{value.dtype}{value.shape}".encode())
            h.update(np.ascontiguousarray(value).tobytes())
        else:
            h.update(repr(value).encode())
    return h.hexdigest()
