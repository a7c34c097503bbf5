"""engine.Model: the static description of a robot (MuJoCo's mjModel), declared once.

Every array the kernels read, with its dtype and shape (`engine.fields`); names and
meanings follow `mjmodel.h`, and the comment beside each field says what it holds.
engine/loader.py fills a Model from MJCF (`load_mjcf`), refusing what engine/checks.py
refuses and sizing the buffers as engine/capacity.py says. This module imports no stage.
"""

from __future__ import annotations

import hashlib
from typing import NamedTuple

import numpy as np

from robodyn.engine import fields
from robodyn.engine.fields import (  # noqa: F401 (the names the declarations use)
    f64,
    i32,
    nbody,
    nbvh,
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
    nnodetest,
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
    body_sameframe: i32[nbody]  # mjtSameFrame: the inertial frame is the body's (or its rotation)

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
    geom_sameframe: i32[ngeom]  # mjtSameFrame: the geom's frame is the body's or its inertial frame
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
    geom_aabb: f64[ngeom, 6]  # bounding box in the geom frame: centre, half-sizes (planes: MAXVAL)
    bvh_aabb: f64[nbvh, 6]  # a BVH node's box in its body's inertial frame: centre, half-sizes
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
    site_sameframe: i32[nsite]  # mjtSameFrame, as geom_sameframe
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
    cpair_obb: i32[ncpair]  # 1: MuJoCo's mid phase tests bounding boxes first (mj_collideTree)
    cpair_testadr: i32[ncpair]  # first of its inner node pairs' box tests in cpair_test
    cpair_testnum: i32[ncpair]  # number of them (the tree's path to the pair's leaves)
    cpair_test: i32[nnodetest, 4]  # an inner node pair's test: BVH node 1, node 2, body 1, body 2
    cpair_testmargin: f64[nnodetest]  # its margin: body_margin1 + body_margin2
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
