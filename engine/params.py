"""Physical parameters that each row of a batch may have of its own (domain randomization).

One Model is shared by every row. A row given its own parameters (`Simulator.set_param`)
runs with a Model of its own: the shared Model's arrays, except that the parameters below
and the constants MuJoCo derives from them (engine.setconst; the contact pairs' mixed
friction; which geom, site and inertial frames coincide with their body's frame or inertial
frame, `*_sameframe`, which mj_setConst recomputes from the centres of mass) are the
row's. Each row's Model record is reached through the binding's model table
(engine.binding), so the kernels read `m.body_mass[i]` as always, and rows without
parameters of their own share the one record and cost nothing extra.

The fields, with MuJoCo's names and the engine's shapes:

    body_mass (nbody,)           body_inertia (nbody, 3)       body_ipos (nbody, 3)
    geom_friction (ngeom, 3)     dof_damping (nv,)             dof_armature (nv,)
    dof_frictionloss (nv,)       jnt_stiffness (njnt,)         actuator_forcerange (nu, 2)
    actuator_gainprm (nu, 3)     actuator_biasprm (nu, 3)      opt_gravity (3,)
    hfield_data (nhfielddata,)

(gainprm and biasprm: the first three of MuJoCo's ten numbers, all the engine's gain and
bias types read; hfield_data: the elevations of every height field, grid row by grid row,
as fractions of the field's height (MuJoCo's compiler scales a file's into [0, 1]), kept as
MuJoCo keeps them, rounded to float32, so that a terrain written into a row equals the same
terrain written into an MjModel). Values are checked before anything changes (`check`): finite; masses,
inertias, friction, damping, armature, friction loss and stiffness non-negative; a mass or
principal inertia either 0 or between mjMINVAL (1e-15, MuJoCo's compiler refuses less for a
moving body) and mjMAXVAL (1e10); the world body's mass and inertia zero; principal
inertias that satisfy the triangle inequality (as MuJoCo's compiler demands); forcerange
low <= high; no friction loss where the model has none (the model allocates friction-loss
rows only for dofs that have it); the centre of mass of a body MuJoCo compiled as simple
left at its frame (MuJoCo refuses to move it: mj_setConst's sameframe check); and M(qpos0)
positive definite with the new values, with finite inverse weights.
"""

from __future__ import annotations

import numpy as np

from robodyn.engine import types as T
from robodyn.engine.errors import RoboDynError
from robodyn.engine.types import MAXVAL, MINMU, MINVAL

# name -> what its values must satisfy (besides being finite)
PARAMS = {
    "body_mass": "0 or in [1e-15, 1e10], zero for the world body (body 0)",
    "body_inertia": "0 or in [1e-15, 1e10], zero for the world body, each at most the sum of the other two",
    "body_ipos": "finite; zero for a body MuJoCo compiled as simple",
    "geom_friction": "non-negative",
    "dof_damping": "non-negative",
    "dof_armature": "non-negative",
    "dof_frictionloss": "non-negative, zero where the model has none",
    "jnt_stiffness": "non-negative",
    "actuator_gainprm": "finite",
    "actuator_biasprm": "finite",
    "actuator_forcerange": "low <= high",
    "opt_gravity": "finite",
    "hfield_data": "finite as float32 (MuJoCo's type for elevations, which they are rounded to)",
}

# constants derived from the parameters, recomputed for a row that has its own
DERIVED = (
    "body_subtreemass",
    "body_invweight0",
    "dof_invweight0",
    "tendon_invweight0",
    "cpair_friction",
    "body_sameframe",
    "geom_sameframe",
    "site_sameframe",
)
# which parameters each derived constant depends on (the rest need no recomputation)
_SETCONST_INPUTS = ("body_mass", "body_inertia", "body_ipos", "dof_armature")
# what engine.setconst derives from them
_SETCONST_OUTPUTS = ("body_subtreemass", "body_invweight0", "dof_invweight0", "tendon_invweight0")
# which frames coincide (engine.kinematics copies one frame's pose to the other): they depend
# on the centres of mass, and mj_setConst recomputes them before the constants
_SAMEFRAME_OUTPUTS = ("body_sameframe", "geom_sameframe", "site_sameframe")
SAMEFRAME_EPS = 1e-6  # MuJoCo's kSameFrameEps (engine_setconst.c): closer than this is the same


class ParamError(RoboDynError, ValueError):
    """A physical parameter refused by Simulator.set_param (names the field and the row)."""


def field_shape(model, name: str) -> tuple:
    """The shape of one row's `name` (the Model field's shape)."""
    if name not in PARAMS:
        raise ParamError(f"unknown parameter {name!r}: set_param supports {', '.join(PARAMS)}")
    return np.shape(getattr(model, name))


def check(model, name: str, rows: np.ndarray, values) -> np.ndarray:
    """`values` for `rows` as a float64 array of shape (len(rows),) + field shape, or
    ParamError naming the field and the first row whose value breaks a rule."""
    shape = (len(rows), *field_shape(model, name))
    try:
        a = np.asarray(values)
    except ValueError as e:
        raise ParamError(f"{name}: values must be an array of numbers ({e})") from None
    if a.dtype.kind not in "iuf":
        raise ParamError(f"{name}: values must hold real numbers, got dtype {a.dtype}")
    if a.shape != shape:
        raise ParamError(f"{name}: values must have shape {shape} (rows, *field), got {a.shape}")
    a = np.array(a, dtype=np.float64)
    if name == "hfield_data":  # as MuJoCo holds them (a too large value becomes inf: refused)
        with np.errstate(over="ignore"):
            a = a.astype(np.float32).astype(np.float64)
    flat = a.reshape(len(rows), int(np.prod(shape[1:])))  # a field may be empty (no height field)
    for k, row in enumerate(rows):
        reason = _rule_broken(model, name, a[k]) if np.all(np.isfinite(flat[k])) else "it is not finite"
        if reason:
            raise ParamError(
                f"{name} for row {int(row)}: {reason} (needs: {PARAMS[name]}); nothing was changed"
            )
    return a


def _rule_broken(model, name: str, v: np.ndarray) -> str:
    """Why one row's value `v` of `name` is refused, or ''."""
    if name in ("body_mass", "body_inertia"):
        if np.any(v < 0):
            return f"body {_first(v < 0)} has a negative value"
        if np.any(v[0] != 0):
            return "the world body (body 0) must have none"
        tiny = (v > 0) & (v < MINVAL)
        if np.any(tiny):
            i = _first(tiny)
            return f"body {i} has {v[i].tolist()}: above 0 it must be at least {MINVAL:g} (mjMINVAL)"
        huge = v > MAXVAL
        if np.any(huge):
            i = _first(huge)
            return f"body {i} has {v[i].tolist()}: at most {MAXVAL:g} (MuJoCo's mjMAXVAL)"
        if name == "body_inertia":
            a, b, c = v[:, 0], v[:, 1], v[:, 2]
            bad = (a + b < c) | (a + c < b) | (b + c < a)
            if np.any(bad):
                i = _first(bad)
                return f"body {i}'s principal inertias {v[i].tolist()} break the triangle inequality"
    elif name == "body_ipos":
        moved = (np.asarray(model.body_simple) > 0) & np.any(v != model.body_ipos, axis=1)
        if np.any(moved):
            return f"body {_first(moved)} was compiled as simple, so its centre of mass stays at its frame"
    elif name in ("geom_friction", "dof_damping", "dof_armature", "dof_frictionloss", "jnt_stiffness"):
        if np.any(v < 0):
            return f"entry {_first(v < 0)} is negative"
        if name == "dof_frictionloss":
            new = (v > 0) & (np.asarray(model.dof_frictionloss) <= 0)
            if np.any(new):
                return f"dof {_first(new)} has no friction loss in the model, so it has no friction-loss row"
    elif name == "actuator_forcerange":
        bad = v[:, 0] > v[:, 1]
        if np.any(bad):
            return f"actuator {_first(bad)} has low > high"
    return ""


def _first(mask: np.ndarray):
    """Index of the first True of a 1-d mask (the leading index of an n-d one)."""
    return int(np.argwhere(mask)[0][0])


def needs_setconst(names) -> bool:
    """True if changing these parameters changes the constants of engine.setconst."""
    return bool(set(_SETCONST_INPUTS).intersection(names))


def _null_vec(v: np.ndarray) -> np.ndarray:
    return np.all(np.abs(v) < SAMEFRAME_EPS, axis=-1)


def _same_quat(q1: np.ndarray, q2: np.ndarray) -> np.ndarray:
    """q1 and q2 the same rotation within SAMEFRAME_EPS (either sign: the double cover)."""
    return np.all(np.abs(q1 - q2) < SAMEFRAME_EPS, axis=-1) | np.all(np.abs(q1 + q2) < SAMEFRAME_EPS, axis=-1)


def _frame_kind(pos, quat, ipos, iquat) -> np.ndarray:
    """mjtSameFrame of geoms or sites at (pos, quat) in their bodies, whose inertial frames
    are (ipos, iquat): the body's frame (BODY, or BODYROT for its rotation alone) before the
    inertial frame (INERTIA, INERTIAROT), as MuJoCo's setSameframe orders them."""
    identity = np.array([1.0, 0.0, 0.0, 0.0])
    body_rot = _same_quat(quat, identity)
    inertia_rot = _same_quat(quat, iquat)
    kind = np.full(len(pos), T.SAMEFRAME_NONE, dtype=np.int32)
    kind[inertia_rot] = T.SAMEFRAME_INERTIAROT
    kind[inertia_rot & _null_vec(pos - ipos)] = T.SAMEFRAME_INERTIA
    kind[body_rot] = T.SAMEFRAME_BODYROT
    kind[body_rot & _null_vec(pos)] = T.SAMEFRAME_BODY
    return kind


def sameframe(model, body_ipos: np.ndarray) -> dict:
    """{body_sameframe, geom_sameframe, site_sameframe} of the model with centres of mass
    `body_ipos` (nbody, 3), as mj_setConst recomputes them (MuJoCo's setSameframe): a body's
    inertial frame is its frame (BODY) or has its rotation (BODYROT); a geom's or site's frame
    is its body's, or its body's inertial frame, or has the rotation of one of them. The world
    body keeps its compiled value."""
    iquat = np.asarray(model.body_iquat)
    body = np.asarray(model.body_sameframe).copy()
    rot = _same_quat(iquat[1:], np.array([1.0, 0.0, 0.0, 0.0]))
    body[1:] = np.where(rot, T.SAMEFRAME_BODYROT, T.SAMEFRAME_NONE)
    body[1:][rot & _null_vec(body_ipos[1:])] = T.SAMEFRAME_BODY
    out = {"body_sameframe": body}
    for kind in ("geom", "site"):
        b = np.asarray(getattr(model, f"{kind}_bodyid"))
        out[f"{kind}_sameframe"] = _frame_kind(
            np.asarray(getattr(model, f"{kind}_pos")),
            np.asarray(getattr(model, f"{kind}_quat")),
            body_ipos[b],
            iquat[b],
        )
    return out


def mixed_friction(model, geom_friction: np.ndarray) -> np.ndarray:
    """(ncpair, 5) contact friction of the candidate pairs for one row's geom_friction
    (MuJoCo's mj_contactParam, as engine.collision_driver mixes it at load): the geom of
    higher priority wins, equal priorities take the larger of each coefficient; explicit
    <pair>s keep their own; each at least mjMINMU. Order: tangent1, tangent2 (sliding),
    spin (torsional), roll1, roll2 (rolling)."""
    out = np.array(model.cpair_friction)
    g1, g2 = model.cpair_geom[:, 0], model.cpair_geom[:, 1]
    p1, p2 = model.geom_priority[g1], model.geom_priority[g2]
    f = np.where((p1 > p2)[:, None], geom_friction[g1], geom_friction[g2])
    f = np.where((p1 == p2)[:, None], np.maximum(geom_friction[g1], geom_friction[g2]), f)
    mixed = np.maximum(MINMU, f[:, [0, 0, 1, 2, 2]])
    explicit = model.cpair_ipair >= 0
    out[~explicit] = mixed[~explicit]
    return out


class RowParams:
    """Every row's parameters and derived constants, (B, ...) arrays, for a bound Model and
    Data (engine.binding.Bound): made when a row first gets parameters of its own. A row
    with its own parameters runs with a Model record whose parameter and derived fields
    point at its rows of these arrays (Bound.set_row_model); the others keep the shared
    record."""

    def __init__(self, bound):
        self.bound = bound
        m, B = bound.model, bound.batch
        names = (*PARAMS, *DERIVED)
        self.arrays = {
            n: np.ascontiguousarray(np.repeat(np.asarray(getattr(m, n))[None], B, axis=0)) for n in names
        }
        self.own = np.zeros(B, dtype=bool)  # rows running with a record of their own
        self._scratch = None  # a one-row Data for engine.setconst

    def row_model(self, arrays: dict, k: int):
        """The shared Model with the parameter and derived fields of row k of `arrays`."""
        return self.bound.model._replace(**{n: arrays[n][k] for n in (*PARAMS, *DERIVED)})

    def store(self, idx: np.ndarray, new: dict) -> None:
        """Rows idx get the values `new` ({name: (k, ...)}, checked by `check`) and what is
        derived from them; raises ParamError, changing nothing, if M(qpos0) of a row is not
        positive definite.

        Only what changed is recomputed, so a row's constants are the same bits whichever way
        it got its values (set_param, a restored snapshot, a randomization at scale 0): a row
        whose masses, inertias, centres of mass and armature are the model's keeps the model's
        compiled constants, one whose geom friction is the model's keeps its mixed friction,
        and a row whose every parameter is the model's runs on the shared record again."""
        m = self.bound.model
        staged = {n: a[idx].copy() for n, a in self.arrays.items()}
        staged.update((n, np.array(v, dtype=np.float64)) for n, v in new.items())
        nominal = [self._is_nominal(staged, k, PARAMS) for k in range(len(idx))]
        if "geom_friction" in new:
            for k in range(len(idx)):
                if self._is_nominal(staged, k, ("geom_friction",)):
                    staged["cpair_friction"][k] = m.cpair_friction
                else:
                    staged["cpair_friction"][k] = mixed_friction(m, staged["geom_friction"][k])
        if needs_setconst(new):
            changed = [k for k in range(len(idx)) if not self._is_nominal(staged, k, _SETCONST_INPUTS)]
            for k in set(range(len(idx))) - set(changed):
                for n in (*_SETCONST_OUTPUTS, *_SAMEFRAME_OUTPUTS):
                    staged[n][k] = getattr(m, n)
            for k in changed:  # before the constants, whose kinematics reads them
                for n, v in sameframe(m, staged["body_ipos"][k]).items():
                    staged[n][k] = v
            if changed:
                sub = {n: staged[n][changed] for n in staged}
                self._set_const(idx[changed], sub)
                for n in _SETCONST_OUTPUTS:
                    staged[n][changed] = sub[n]
        for n in staged:
            self.arrays[n][idx] = staged[n]
        for k, b in enumerate(idx):
            b = int(b)
            if nominal[k]:
                if self.own[b]:
                    self.bound.clear_row_model(b)
                    self.own[b] = False
            elif not self.own[b]:  # an own row's record already points at its rows of the arrays
                self.bound.set_row_model(b, self.row_model(self.arrays, b))
                self.own[b] = True

    def _is_nominal(self, staged: dict, k: int, names) -> bool:
        """Row k of `staged` holds the model's own values of `names`, bit for bit."""
        m = self.bound.model
        return all(
            staged[n][k].tobytes() == np.asarray(getattr(m, n), dtype=np.float64).tobytes() for n in names
        )

    def clear(self, idx: np.ndarray) -> None:
        """Rows idx back to the model's own parameters and the shared record."""
        m = self.bound.model
        for n, a in self.arrays.items():
            a[idx] = np.asarray(getattr(m, n))
        for b in idx:
            self.bound.clear_row_model(int(b))
            self.own[int(b)] = False

    def _set_const(self, idx: np.ndarray, staged: dict) -> None:
        """engine.setconst for the staged values of rows idx, written into `staged`. Runs on
        temporary records and a scratch Data, so nothing the batch uses is touched until every
        row has passed."""
        from robodyn.engine.binding import Bound, ensure_compiled
        from robodyn.engine.data import make_data
        from robodyn.engine.setconst import SET_CONST_ARGTYPES, set_const_rows

        ensure_compiled((), [(set_const_rows, SET_CONST_ARGTYPES)])  # with a notice if it compiles

        m = self.bound.model
        if self._scratch is None:
            self._scratch = Bound(m, make_data(m, 1))
        k = len(idx)
        records = [self.bound.record_for(self.row_model(staged, j)) for j in range(k)]
        tables = np.array([r.ctypes.data for r in records], dtype=np.int64)
        pivot = np.zeros(k)
        nv = m.nv
        set_const_rows(
            tables,
            self._scratch.data_address,
            np.arange(k, dtype=np.int64),
            staged["body_subtreemass"],
            staged["body_invweight0"],
            staged["dof_invweight0"],
            staged["tendon_invweight0"],
            pivot,
            np.zeros((6, nv)),
            np.zeros((2, nv)),
        )
        finite = [np.all(np.isfinite(staged[n][j])) for j in range(k) for n in _SETCONST_OUTPUTS]
        bad = np.flatnonzero(~(pivot > 0) | ~np.array(finite).reshape(k, -1).all(axis=1))
        if len(bad):
            row = int(idx[bad[0]])
            raise ParamError(
                f"row {row}: with these masses, inertias and armature the mass matrix at qpos0 is not "
                "positive definite, or its inverse weights overflow (a moving body without mass or inertia); "
                "nothing was changed"
            )
