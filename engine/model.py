"""engine.Model: the static description of a robot, compiled from MJCF.

`load_mjcf` lets MuJoCo's own compiler do what it does best (defaults, includes,
`fromto`, inertia from geoms, keyframes) and copies the arrays our kernels need into a
flat, numba-friendly NamedTuple. Array names and meanings follow `mjmodel.h`; shapes are in
the comments. Anything the engine does not simulate is refused here, by name, so that no
model ever runs with a feature silently ignored.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from typing import NamedTuple

import mujoco
import numpy as np

from engine import types as T
from engine.collision_driver import GEOM_TYPE_NAMES, candidate_pairs

FLOAT = np.float64
INT = np.int32

_SUPPORTED_SENSORS = {
    T.SENS_ACCELEROMETER: "accelerometer",
    T.SENS_VELOCIMETER: "velocimeter",
    T.SENS_GYRO: "gyro",
    T.SENS_JOINTPOS: "jointpos",
    T.SENS_JOINTVEL: "jointvel",
    T.SENS_ACTUATORFRC: "actuatorfrc",
    T.SENS_FRAMEPOS: "framepos",
    T.SENS_FRAMEQUAT: "framequat",
    T.SENS_FRAMELINVEL: "framelinvel",
    T.SENS_FRAMEANGVEL: "frameangvel",
    T.SENS_SUBTREECOM: "subtreecom",
    T.SENS_SUBTREELINVEL: "subtreelinvel",
}
_INTEGRATOR_NAMES = {0: "Euler", 1: "RK4", 2: "implicit", 3: "implicitfast"}


class UnsupportedModelError(ValueError):
    """Raised at load when an MJCF model uses a feature the engine does not simulate."""


class Model(NamedTuple):
    """Static model arrays (MuJoCo's names and meanings). Passed whole to every kernel."""

    # sizes
    nq: int  # number of generalized coordinates
    nv: int  # number of degrees of freedom
    nu: int  # number of actuators / controls
    na: int  # number of activation states (always 0: no actuator dynamics yet)
    nbody: int  # number of bodies, world included
    njnt: int  # number of joints
    ngeom: int  # number of geoms
    nsite: int  # number of sites
    ntendon: int  # number of (fixed) tendons
    nwrap: int  # number of tendon wrap objects
    nsensor: int  # number of sensors
    nsensordata: int  # length of sensordata
    nM: int  # non-zeros in the lower triangle of M (= MuJoCo's nC)

    # options
    opt_timestep: float  # simulation timestep (s)
    opt_gravity: np.ndarray  # (3,) gravitational acceleration (m/s^2)
    opt_wind: np.ndarray  # (3,) wind velocity for fluid forces (m/s)
    opt_density: float  # fluid density (kg/m^3)
    opt_viscosity: float  # fluid viscosity (Pa s)
    opt_integrator: int  # INT_EULER, INT_RK4, INT_IMPLICIT, INT_IMPLICITFAST
    opt_disableflags: int  # mjtDisableBit bits
    opt_enableflags: int  # mjtEnableBit bits

    # bodies
    body_parentid: np.ndarray  # (nbody,) parent body, parent-first ordering
    body_rootid: np.ndarray  # (nbody,) top-level ancestor (child of the world)
    body_weldid: np.ndarray  # (nbody,) outermost ancestor welded to this body
    body_jntnum: np.ndarray  # (nbody,) number of joints on the body
    body_jntadr: np.ndarray  # (nbody,) first joint, -1 if none
    body_dofnum: np.ndarray  # (nbody,) number of dofs
    body_dofadr: np.ndarray  # (nbody,) first dof, -1 if none
    body_geomnum: np.ndarray  # (nbody,) number of geoms
    body_geomadr: np.ndarray  # (nbody,) first geom, -1 if none
    body_pos: np.ndarray  # (nbody, 3) position offset rel. to parent body
    body_quat: np.ndarray  # (nbody, 4) orientation offset rel. to parent body
    body_ipos: np.ndarray  # (nbody, 3) centre of mass in the body frame
    body_iquat: np.ndarray  # (nbody, 4) principal axes of inertia in the body frame
    body_mass: np.ndarray  # (nbody,) mass (kg)
    body_subtreemass: np.ndarray  # (nbody,) mass of the subtree starting at the body
    body_inertia: np.ndarray  # (nbody, 3) principal moments of inertia about the com

    # joints
    jnt_type: np.ndarray  # (njnt,) JNT_FREE, JNT_BALL, JNT_SLIDE, JNT_HINGE
    jnt_qposadr: np.ndarray  # (njnt,) start address in qpos
    jnt_dofadr: np.ndarray  # (njnt,) start address in qvel
    jnt_bodyid: np.ndarray  # (njnt,) body the joint belongs to
    jnt_pos: np.ndarray  # (njnt, 3) anchor position in the body frame
    jnt_axis: np.ndarray  # (njnt, 3) axis in the body frame (unit)
    jnt_stiffness: np.ndarray  # (njnt,) spring stiffness
    qpos0: np.ndarray  # (nq,) qpos at which the model was built (joint reference)
    qpos_spring: np.ndarray  # (nq,) spring rest position (springref)

    # dofs and the sparsity of M
    dof_bodyid: np.ndarray  # (nv,) body the dof moves
    dof_jntid: np.ndarray  # (nv,) joint the dof belongs to
    dof_parentid: np.ndarray  # (nv,) parent dof in the tree, -1 at a root
    dof_armature: np.ndarray  # (nv,) rotor inertia added to M's diagonal
    dof_damping: np.ndarray  # (nv,) viscous damping
    M_rownnz: np.ndarray  # (nv,) non-zeros in row i of lower-triangular M (ancestors + self)
    M_rowadr: np.ndarray  # (nv,) start of row i in qM / qLD
    M_colind: np.ndarray  # (nM,) column of each stored element, ascending; diagonal last
    D_mask: np.ndarray  # (nv, nv) 1 where dof j is an ancestor or descendant of dof i (or i itself)
    dof_treedofnum: np.ndarray  # (nv,) number of dofs in the kinematic tree of the dof

    # geoms and sites
    geom_bodyid: np.ndarray  # (ngeom,) body the geom is attached to
    geom_pos: np.ndarray  # (ngeom, 3) position in the body frame
    geom_quat: np.ndarray  # (ngeom, 4) orientation in the body frame
    geom_type: np.ndarray  # (ngeom,) mjtGeom code (plane 0, sphere 2, capsule 3, cylinder 5, box 6, ...)
    geom_size: np.ndarray  # (ngeom, 3) geom-type-specific sizes
    geom_contype: np.ndarray  # (ngeom,) contact type bitmask
    geom_conaffinity: np.ndarray  # (ngeom,) contact affinity bitmask
    geom_condim: np.ndarray  # (ngeom,) contact dimensionality (1, 3, 4, 6)
    geom_priority: np.ndarray  # (ngeom,) contact parameters of the higher priority win
    geom_solmix: np.ndarray  # (ngeom,) weight of the geom's solref/solimp in a mix
    geom_friction: np.ndarray  # (ngeom, 3) sliding, torsional, rolling friction
    geom_solref: np.ndarray  # (ngeom, 2) constraint solver reference: contact
    geom_solimp: np.ndarray  # (ngeom, 5) constraint solver impedance: contact
    geom_margin: np.ndarray  # (ngeom,) geometric inflation for contact
    geom_gap: np.ndarray  # (ngeom,) additional contact detection buffer
    geom_rbound: np.ndarray  # (ngeom,) radius of the bounding sphere about geom_xpos (0: plane)
    site_bodyid: np.ndarray  # (nsite,) body the site is attached to
    site_pos: np.ndarray  # (nsite, 3) position in the body frame
    site_quat: np.ndarray  # (nsite, 4) orientation in the body frame

    # fixed tendons: length = sum_k coef_k * qpos[joint_k]
    tendon_adr: np.ndarray  # (ntendon,) first wrap object
    tendon_num: np.ndarray  # (ntendon,) number of wrap objects
    tendon_stiffness: np.ndarray  # (ntendon,) spring stiffness
    tendon_damping: np.ndarray  # (ntendon,) damping
    tendon_lengthspring: np.ndarray  # (ntendon, 2) spring dead-band [lower, upper]
    wrap_objid: np.ndarray  # (nwrap,) joint of each term
    wrap_prm: np.ndarray  # (nwrap,) coefficient of each term

    # actuators
    actuator_trntype: np.ndarray  # (nu,) TRN_JOINT or TRN_TENDON
    actuator_trnid: np.ndarray  # (nu,) joint or tendon id
    actuator_gear: np.ndarray  # (nu,) gear ratio (first component of MuJoCo's gear)
    actuator_gaintype: np.ndarray  # (nu,) GAIN_FIXED or GAIN_AFFINE
    actuator_gainprm: np.ndarray  # (nu, 3) gain parameters
    actuator_biastype: np.ndarray  # (nu,) BIAS_NONE or BIAS_AFFINE
    actuator_biasprm: np.ndarray  # (nu, 3) bias parameters
    actuator_ctrllimited: np.ndarray  # (nu,) clamp ctrl to ctrlrange
    actuator_ctrlrange: np.ndarray  # (nu, 2) control range
    actuator_forcelimited: np.ndarray  # (nu,) clamp force to forcerange
    actuator_forcerange: np.ndarray  # (nu, 2) force range

    # sensors
    sensor_type: np.ndarray  # (nsensor,) SENS_* code
    sensor_objtype: np.ndarray  # (nsensor,) type of the sensed object
    sensor_objid: np.ndarray  # (nsensor,) id of the sensed object
    sensor_reftype: np.ndarray  # (nsensor,) type of the reference frame object, 0 if none
    sensor_refid: np.ndarray  # (nsensor,) id of the reference frame object, -1 if none
    sensor_adr: np.ndarray  # (nsensor,) address in sensordata
    sensor_dim: np.ndarray  # (nsensor,) number of values
    sensor_cutoff: np.ndarray  # (nsensor,) clamp |value| to cutoff when > 0
    sensor_datatype: np.ndarray  # (nsensor,) 0 real, 1 positive, 2 axis, 3 quaternion

    # explicit contact pairs (<contact><pair>) and excluded body pairs (<contact><exclude>)
    npair: int  # number of explicit pairs
    pair_geom1: np.ndarray  # (npair,) first geom
    pair_geom2: np.ndarray  # (npair,) second geom
    pair_dim: np.ndarray  # (npair,) contact dimensionality
    pair_friction: np.ndarray  # (npair, 5) tangent1, tangent2, spin, roll1, roll2
    pair_solref: np.ndarray  # (npair, 2) solver reference: contact normal
    pair_solreffriction: np.ndarray  # (npair, 2) solver reference: contact friction (0 0: none)
    pair_solimp: np.ndarray  # (npair, 5) solver impedance
    pair_margin: np.ndarray  # (npair,) geometric inflation for contact
    pair_gap: np.ndarray  # (npair,) additional contact detection buffer
    exclude_signature: np.ndarray  # (nexclude,) (body1 << 16) + body2 of excluded body pairs

    # collision: candidate geom pairs in MuJoCo's contact order (engine.collision_driver)
    nconmax: int  # capacity of the contact buffer of each row
    cpair_geom: np.ndarray  # (ncpair, 2) geom1, geom2 with geom_type[geom1] <= geom_type[geom2]
    cpair_ipair: np.ndarray  # (ncpair,) explicit pair id, -1 for a pair found by the filters
    cpair_maxcon: np.ndarray  # (ncpair,) most contacts the pair's collider returns
    cpair_margin: np.ndarray  # (ncpair,) margin (contact includemargin)
    cpair_gap: np.ndarray  # (ncpair,) gap (detection uses margin + gap)
    cpair_dim: np.ndarray  # (ncpair,) contact dimensionality after mixing
    cpair_friction: np.ndarray  # (ncpair, 5) friction after mixing, >= mjMINMU
    cpair_solref: np.ndarray  # (ncpair, 2) solref after mixing
    cpair_solreffriction: np.ndarray  # (ncpair, 2) solreffriction (explicit pairs; else 0 0)
    cpair_solimp: np.ndarray  # (ncpair, 5) solimp after mixing
    cpair_refused: np.ndarray  # (k, 2) geom pairs that can collide but have no collider here


def load_mjcf(source: str | os.PathLike, nconmax: int | None = None) -> Model:
    """Compile an MJCF file (a path) or an MJCF document (a string starting with '<').

    Returns an engine Model. Raises UnsupportedModelError naming the element for any
    feature the engine does not simulate. `nconmax` sets the capacity of each row's
    contact buffer; by default it is the most contacts the candidate geom pairs can
    produce together, so it never overflows.
    """
    mj = compile_mjcf(source)
    check_supported(mj)
    return model_from_mujoco(mj, nconmax)


def without_contacts(source: str | os.PathLike) -> str:
    """The MJCF text of `source` (a path, or an MJCF document as a string starting with
    '<') with <option><flag contact="disable" constraint="disable"/> set: how a model with
    contacts (gymnasium's, say) loads until the engine simulates them. The file itself is
    not changed; relative includes and assets are not resolved, so use it for
    self-contained files."""
    text = os.fspath(source)
    root = ET.fromstring(text) if text.lstrip().startswith("<") else ET.parse(text).getroot()
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
    """Run MuJoCo's MJCF compiler on a path or an XML string."""
    text = os.fspath(source)
    if text.lstrip().startswith("<"):
        return mujoco.MjModel.from_xml_string(text)
    if not os.path.exists(text):
        raise FileNotFoundError(f"no MJCF file at {text!r} (pass a path or an XML string)")
    return mujoco.MjModel.from_xml_path(text)


def _name(mj: mujoco.MjModel, objtype: mujoco.mjtObj, i: int) -> str:
    name = mujoco.mj_id2name(mj, objtype, i)
    return f"'{name}'" if name else f"#{i}"


def _refuse(what: str, why: str) -> None:
    raise UnsupportedModelError(f"{what}: {why}")


def check_supported(mj: mujoco.MjModel) -> None:
    """Raise UnsupportedModelError for the first feature of `mj` the engine cannot simulate."""
    OBJ = mujoco.mjtObj
    flags = mj.opt.disableflags
    _check_collision(mj)
    if not (flags & T.DSBL_CONTACT and flags & T.DSBL_CONSTRAINT):
        _refuse(
            "<option><flag contact=... constraint=...>",
            "contacts and constraints are not simulated yet; load this model with "
            '<option><flag contact="disable" constraint="disable"/></option>',
        )
    if mj.opt.integrator not in _INTEGRATOR_NAMES:
        name = mujoco.mjtIntegrator(mj.opt.integrator).name
        _refuse(f'<option integrator="{name}">', "only Euler, RK4, implicit and implicitfast")
    allowed_enable = T.ENBL_ENERGY
    if mj.opt.enableflags & ~allowed_enable:
        bits = [e.name for e in mujoco.mjtEnableBit if e.name != "mjNENABLE" and mj.opt.enableflags & int(e)]
        _refuse(f"<option><flag> enable {bits}", "only the energy flag may be enabled")
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
        ("<skin>", mj.nskin),
    ]:
        if count:
            _refuse(name, "not supported by the engine")
    for b in range(mj.nbody):
        if mj.body_mocapid[b] >= 0:
            _refuse(f"<body mocap='true'> {_name(mj, OBJ.mjOBJ_BODY, b)}", "mocap bodies")
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
        if np.any(mj.wrap_type[adr : adr + num] != mujoco.mjtWrap.mjWRAP_JOINT):
            _refuse(f"<spatial> tendon {_name(mj, OBJ.mjOBJ_TENDON, t)}", "only fixed tendons")
        if mj.tendon_armature[t] != 0:
            _refuse(what, "tendon armature")
        if np.any(mj.tendon_stiffnesspoly[t]) or np.any(mj.tendon_dampingpoly[t]):
            _refuse(what, "polynomial stiffness or damping")
        if np.any(mj.tendon_springyield[t]):
            _refuse(what, "spring yield (plasticity)")
        if mj.tendon_actfrclimited[t]:
            _refuse(what, "actuatorfrcrange")
        for w in range(adr, adr + num):
            jtype = mj.jnt_type[mj.wrap_objid[w]]
            if jtype not in (T.JNT_SLIDE, T.JNT_HINGE):
                _refuse(what, "fixed tendons must couple hinge or slide joints")
    _check_actuators(mj)
    _check_sensors(mj)


def _check_collision(mj: mujoco.MjModel) -> None:
    """Refuse contact features the collision stage does not reproduce.

    A geom pair that can collide (a candidate pair of engine.collision_driver) but whose
    types have no closed-form collider here (meshes, height fields, SDFs, ellipsoids, and
    cylinder against capsule, cylinder or box, which MuJoCo hands to its general convex
    solver) is refused when contacts are enabled. With contacts disabled the model loads
    (nothing collides), and engine.api.collision refuses to run on it.
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
    refused = candidate_pairs(mj)["refused"]
    if len(refused):
        g1, g2 = (int(g) for g in refused[0])
        t1, t2 = (GEOM_TYPE_NAMES[int(mj.geom_type[g])] for g in (g1, g2))
        name1, name2 = _name(mj, OBJ.mjOBJ_GEOM, g1), _name(mj, OBJ.mjOBJ_GEOM, g2)
        _refuse(
            f"<geom> {name1} ({t1}) and <geom> {name2} ({t2})",
            f"can collide, but {t1}-{t2} collision is not implemented (MuJoCo uses its general "
            "convex solver there); keep them apart with contype/conaffinity or <exclude>",
        )


def _check_actuators(mj: mujoco.MjModel) -> None:
    OBJ = mujoco.mjtObj
    for i in range(mj.nu):
        what = f"<actuator> {_name(mj, OBJ.mjOBJ_ACTUATOR, i)}"
        if mj.actuator_dyntype[i] != 0:
            dyn = mujoco.mjtDyn(mj.actuator_dyntype[i]).name
            _refuse(what, f"activation dynamics {dyn} (only dyntype none)")
        if mj.actuator_gaintype[i] not in (T.GAIN_FIXED, T.GAIN_AFFINE):
            gain = mujoco.mjtGain(mj.actuator_gaintype[i]).name
            _refuse(what, f"gain type {gain} (only fixed and affine)")
        if mj.actuator_biastype[i] not in (T.BIAS_NONE, T.BIAS_AFFINE):
            bias = mujoco.mjtBias(mj.actuator_biastype[i]).name
            _refuse(what, f"bias type {bias} (only none and affine)")
        trn = mj.actuator_trntype[i]
        if trn == T.TRN_JOINT:
            if mj.jnt_type[mj.actuator_trnid[i, 0]] not in (T.JNT_SLIDE, T.JNT_HINGE):
                _refuse(what, "joint transmission on a ball or free joint")
            if np.any(mj.actuator_gear[i, 1:]):
                _refuse(what, "gear with more than one component on a hinge/slide joint")
        elif trn == T.TRN_TENDON:
            if np.any(mj.actuator_gear[i, 1:]):
                _refuse(what, "gear with more than one component on a tendon")
        else:
            _refuse(what, f"transmission {mujoco.mjtTrn(trn).name} (only joint and tendon)")
        if mj.actuator_ctrlnum[i] != 1 or mj.actuator_outnum[i] != 1:
            _refuse(what, "multi-input or multi-output actuators")
        if mj.actuator_damping[i] != 0 or mj.actuator_armature[i] != 0:
            _refuse(what, "actuator damping or armature")
        if mj.actuator_delay[i] != 0 or np.any(mj.actuator_history[i]):
            _refuse(what, "delayed controls")
        if mj.actuator_plugin[i] >= 0:
            _refuse(what, "actuator plugins")


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
    return _i(counts[root])


def _f(a, shape=None) -> np.ndarray:
    out = np.ascontiguousarray(np.array(a, dtype=FLOAT))
    return out.reshape(shape) if shape is not None else out


def _i(a) -> np.ndarray:
    return np.ascontiguousarray(np.array(a, dtype=INT))


def model_from_mujoco(mj: mujoco.MjModel, nconmax: int | None = None) -> Model:
    """Copy the static arrays of a compiled MjModel into an engine Model."""
    rownnz, rowadr, colind = _m_sparsity(np.asarray(mj.dof_parentid))
    cpair = candidate_pairs(mj)
    if nconmax is None:
        nconmax = int(cpair["cpair_maxcon"].sum())
    elif nconmax < 0:
        raise ValueError(f"nconmax must be >= 0, got {nconmax}")
    return Model(
        nq=int(mj.nq),
        nv=int(mj.nv),
        nu=int(mj.nu),
        na=0,
        nbody=int(mj.nbody),
        njnt=int(mj.njnt),
        ngeom=int(mj.ngeom),
        nsite=int(mj.nsite),
        ntendon=int(mj.ntendon),
        nwrap=int(mj.nwrap),
        nsensor=int(mj.nsensor),
        nsensordata=int(mj.nsensordata),
        nM=int(rownnz.sum()),
        opt_timestep=float(mj.opt.timestep),
        opt_gravity=_f(mj.opt.gravity),
        opt_wind=_f(mj.opt.wind),
        opt_density=float(mj.opt.density),
        opt_viscosity=float(mj.opt.viscosity),
        opt_integrator=int(mj.opt.integrator),
        opt_disableflags=int(mj.opt.disableflags),
        opt_enableflags=int(mj.opt.enableflags),
        body_parentid=_i(mj.body_parentid),
        body_rootid=_i(mj.body_rootid),
        body_weldid=_i(mj.body_weldid),
        body_jntnum=_i(mj.body_jntnum),
        body_jntadr=_i(mj.body_jntadr),
        body_dofnum=_i(mj.body_dofnum),
        body_dofadr=_i(mj.body_dofadr),
        body_geomnum=_i(mj.body_geomnum),
        body_geomadr=_i(mj.body_geomadr),
        body_pos=_f(mj.body_pos, (-1, 3)),
        body_quat=_f(mj.body_quat, (-1, 4)),
        body_ipos=_f(mj.body_ipos, (-1, 3)),
        body_iquat=_f(mj.body_iquat, (-1, 4)),
        body_mass=_f(mj.body_mass),
        body_subtreemass=_f(mj.body_subtreemass),
        body_inertia=_f(mj.body_inertia, (-1, 3)),
        jnt_type=_i(mj.jnt_type),
        jnt_qposadr=_i(mj.jnt_qposadr),
        jnt_dofadr=_i(mj.jnt_dofadr),
        jnt_bodyid=_i(mj.jnt_bodyid),
        jnt_pos=_f(mj.jnt_pos, (-1, 3)),
        jnt_axis=_f(mj.jnt_axis, (-1, 3)),
        jnt_stiffness=_f(mj.jnt_stiffness),
        qpos0=_f(mj.qpos0),
        qpos_spring=_f(mj.qpos_spring),
        dof_bodyid=_i(mj.dof_bodyid),
        dof_jntid=_i(mj.dof_jntid),
        dof_parentid=_i(mj.dof_parentid),
        dof_armature=_f(mj.dof_armature),
        dof_damping=_f(mj.dof_damping),
        M_rownnz=rownnz,
        M_rowadr=rowadr,
        M_colind=colind,
        D_mask=_d_mask(np.asarray(mj.dof_parentid)),
        dof_treedofnum=_tree_dofnum(np.asarray(mj.dof_parentid)),
        geom_bodyid=_i(mj.geom_bodyid),
        geom_pos=_f(mj.geom_pos, (-1, 3)),
        geom_quat=_f(mj.geom_quat, (-1, 4)),
        geom_type=_i(mj.geom_type),
        geom_size=_f(mj.geom_size, (-1, 3)),
        geom_contype=_i(mj.geom_contype),
        geom_conaffinity=_i(mj.geom_conaffinity),
        geom_condim=_i(mj.geom_condim),
        geom_priority=_i(mj.geom_priority),
        geom_solmix=_f(mj.geom_solmix),
        geom_friction=_f(mj.geom_friction, (-1, 3)),
        geom_solref=_f(mj.geom_solref, (-1, 2)),
        geom_solimp=_f(mj.geom_solimp, (-1, 5)),
        geom_margin=_f(mj.geom_margin),
        geom_gap=_f(mj.geom_gap),
        geom_rbound=_f(mj.geom_rbound),
        site_bodyid=_i(mj.site_bodyid),
        site_pos=_f(mj.site_pos, (-1, 3)),
        site_quat=_f(mj.site_quat, (-1, 4)),
        tendon_adr=_i(mj.tendon_adr),
        tendon_num=_i(mj.tendon_num),
        tendon_stiffness=_f(mj.tendon_stiffness),
        tendon_damping=_f(mj.tendon_damping),
        tendon_lengthspring=_f(mj.tendon_lengthspring, (-1, 2)),
        wrap_objid=_i(mj.wrap_objid),
        wrap_prm=_f(mj.wrap_prm),
        actuator_trntype=_i(mj.actuator_trntype),
        actuator_trnid=_i(np.asarray(mj.actuator_trnid).reshape(-1, 2)[:, 0]),
        actuator_gear=_f(np.asarray(mj.actuator_gear).reshape(-1, 6)[:, 0]),
        actuator_gaintype=_i(mj.actuator_gaintype),
        actuator_gainprm=_f(np.asarray(mj.actuator_gainprm).reshape(-1, 10)[:, :3], (-1, 3)),
        actuator_biastype=_i(mj.actuator_biastype),
        actuator_biasprm=_f(np.asarray(mj.actuator_biasprm).reshape(-1, 10)[:, :3], (-1, 3)),
        actuator_ctrllimited=_i(mj.actuator_ctrllimited),
        actuator_ctrlrange=_f(mj.actuator_ctrlrange, (-1, 2)),
        actuator_forcelimited=_i(mj.actuator_forcelimited),
        actuator_forcerange=_f(mj.actuator_forcerange, (-1, 2)),
        sensor_type=_i(mj.sensor_type),
        sensor_objtype=_i(mj.sensor_objtype),
        sensor_objid=_i(mj.sensor_objid),
        sensor_reftype=_i(mj.sensor_reftype),
        sensor_refid=_i(mj.sensor_refid),
        sensor_adr=_i(mj.sensor_adr),
        sensor_dim=_i(mj.sensor_dim),
        sensor_cutoff=_f(mj.sensor_cutoff),
        sensor_datatype=_i(mj.sensor_datatype),
        npair=int(mj.npair),
        pair_geom1=_i(mj.pair_geom1),
        pair_geom2=_i(mj.pair_geom2),
        pair_dim=_i(mj.pair_dim),
        pair_friction=_f(mj.pair_friction, (-1, 5)),
        pair_solref=_f(mj.pair_solref, (-1, 2)),
        pair_solreffriction=_f(mj.pair_solreffriction, (-1, 2)),
        pair_solimp=_f(mj.pair_solimp, (-1, 5)),
        pair_margin=_f(mj.pair_margin),
        pair_gap=_f(mj.pair_gap),
        exclude_signature=_i(mj.exclude_signature),
        nconmax=int(nconmax),
        cpair_geom=_i(cpair["cpair_geom"]).reshape(-1, 2),
        cpair_ipair=_i(cpair["cpair_ipair"]),
        cpair_maxcon=_i(cpair["cpair_maxcon"]),
        cpair_margin=_f(cpair["cpair_margin"]),
        cpair_gap=_f(cpair["cpair_gap"]),
        cpair_dim=_i(cpair["cpair_dim"]),
        cpair_friction=_f(cpair["cpair_friction"], (-1, 5)),
        cpair_solref=_f(cpair["cpair_solref"], (-1, 2)),
        cpair_solreffriction=_f(cpair["cpair_solreffriction"], (-1, 2)),
        cpair_solimp=_f(cpair["cpair_solimp"], (-1, 5)),
        cpair_refused=_i(cpair["refused"]).reshape(-1, 2),
    )
