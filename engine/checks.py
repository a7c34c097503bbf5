"""What the engine refuses at load: MJCF values it cannot simulate, and features it does
not simulate.

`check_options` and `check_values` raise ModelError for a number MuJoCo compiles but the
engine cannot simulate (NaN or inf, a timestep <= 0, negative armature, ...), naming the
element and attribute; `check_supported` raises UnsupportedModelError naming the first
feature the engine does not simulate (a sensor type, a solver, a transmission, ...), so
that no model ever runs with a feature silently ignored. engine/loader.py runs them on
every model it loads.
"""

from __future__ import annotations

import mujoco
import numpy as np

from robodyn.engine import types as T
from robodyn.engine.collision_driver import GEOM_TYPE_NAMES, candidate_pairs, mesh_too_large
from robodyn.engine.errors import ModelError, UnsupportedModelError
from robodyn.engine.model import MODEL_SPECS, Model
from robodyn.engine.sizes import CONVEX_PAIRS

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


def check_trees(mj: mujoco.MjModel) -> None:
    """The solver relies on each kinematic tree's dofs being the contiguous range
    tree_dofadr .. tree_dofadr + tree_dofnum - 1 (MuJoCo's depth-first dof order)."""
    expect = np.full(mj.nv, -1)
    for t in range(mj.ntree):
        expect[mj.tree_dofadr[t] : mj.tree_dofadr[t] + mj.tree_dofnum[t]] = t
    if not np.array_equal(expect, mj.dof_treeid):
        raise ModelError("the model's kinematic trees do not own contiguous dof ranges (dof_treeid)")
