"""Thin typed wrappers: check arguments in Python, then call one compiled batch entry.

These are what `Simulator` calls. Each takes a `Bound` (engine.binding: a Model and a Data
checked to belong together) and works on every row; the entries receive the address of
each row's Model record (`Bound.model_table`: rows with their own physical parameters have
their own, engine.params) and of the Data record.
"""

from __future__ import annotations

import os
import threading
import warnings

import numba
import numpy as np

from robodyn.engine import integrate
from robodyn.engine import types as T
from robodyn.engine.binding import Bound, collision_unit, ensure_compiled
from robodyn.engine.collision_driver import GEOM_TYPE_NAMES
from robodyn.engine.constraint import contact_force as contact_force_row
from robodyn.engine.errors import (
    ArgumentTypeError,
    IndexOutOfRangeError,
    InvalidArgumentError,
    RoboDynError,
    UnsupportedModelError,
)
from robodyn.engine.factor import mul_m
from robodyn.engine.forward import fwd_position, fwd_velocity
from robodyn.engine.jacobian import apply_ft, jac
from robodyn.engine.jit import entry
from robodyn.engine.passive import spring_energy
from robodyn.engine.ptr import UNIT_SIGNATURE, call_unit, data_at, model_at
from robodyn.engine.rne import rne
from robodyn.engine.solver import constraint_update, mul_jar


def default_threads(batch: int) -> int:
    """Threads used for a batch by default: one per core, none for small batches."""
    return 1 if batch < 8 else max(1, min(os.cpu_count() or 1, batch))


class _Threads:
    """When a batch may run on several of numba's threads.

    - GNU OpenMP (numba's "omp" layer) cannot start threads in a process forked from one
      that already used them (numba terminates the process): a forked child runs serially.
    - numba's fallback "workqueue" layer must not be entered by two Python threads at once:
      calls through it are serialized.
    """

    def __init__(self):
        self.used = False  # a parallel call ran in this process
        self.forked = False  # this process was forked after one did
        self.serialize = True  # until the first call tells which layer numba picked
        self.warned = False  # the user was told this forked child runs serially
        self.lock = threading.Lock()
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=self._after_fork)

    def _after_fork(self):
        self.forked = self.used
        self.lock = threading.Lock()


THREADS = _Threads()


def call(entry_fn, bound: Bound, nthread: int, *args) -> int:
    """entry_fn(model table, data address, *args, nthread) on the allowed threads (the
    model table: each row's Model record); returns the entry's count of failed rows."""
    if nthread > 1 and THREADS.forked and not THREADS.warned:
        THREADS.warned = True
        warnings.warn(
            "this process was forked from one that used numba's OpenMP threads, which cannot start "
            "threads again here: RoboDyn steps every batch serially in this process",
            RuntimeWarning,
            stacklevel=3,
        )
    if nthread > 1 and not THREADS.forked:
        if THREADS.serialize:
            with THREADS.lock:
                nbad = entry_fn(bound.model_table, bound.data_address, *args, nthread)
                THREADS.used = True
                THREADS.serialize = numba.threading_layer() == "workqueue"
            return nbad
        return entry_fn(bound.model_table, bound.data_address, *args, nthread)
    return entry_fn(bound.model_table, bound.data_address, *args, 1)


class ContactOverflowError(RoboDynError, RuntimeError):
    """More contacts than a row's contact buffer holds (Model.nconmax)."""


@entry
def _unit_rows(mtab, dp, unit_address):
    """The unit compiled at `unit_address` for every row, each with its Model record."""
    d = data_at(dp)
    for b in range(d.status.shape[0]):
        m = model_at(mtab[b])
        call_unit(unit_address, m, d, b)


def collision(bound: Bound) -> None:
    """mj_collision for every row, at the geom poses of the last forward() (kinematics).

    Fills d.ncon and d.contact_*. Runs whether or not the model disables contacts (it
    reads geometry only). Raises UnsupportedModelError if the model has geom pairs that
    can collide but no collider here, and ContactOverflowError naming the row if a row
    found more contacts than nconmax (the first nconmax are kept).
    """
    m, d = bound.model, bound.data
    if len(m.cpair_refused):
        names = [[GEOM_TYPE_NAMES[int(m.geom_type[g])] for g in pair] for pair in m.cpair_refused[:4]]
        pairs = ", ".join(
            f"geoms {g1} and {g2} ({t1}-{t2})"
            for (g1, g2), (t1, t2) in zip(m.cpair_refused, names, strict=False)
        )
        raise UnsupportedModelError(f"collision: {pairs} can collide, but that type pair is not implemented")
    unit = collision_unit(m)
    ensure_compiled((unit,))
    bound.add_pair_units()
    _unit_rows(bound.model_table, bound.data_address, unit.address(UNIT_SIGNATURE))
    lost = np.flatnonzero(d.contact_lost)
    if len(lost):
        raise overflow_error(m, d, lost)


def rne_post(bound: Bound) -> None:
    """mj_rnePostConstraint for every row: cacc, cfrc_ext and cfrc_int from the state, qacc
    and the constraint forces of the last forward pass (engine.rne_post). After a step
    those belong to the start of its last physics step, as after MuJoCo's mj_step, which is
    where Gymnasium's MuJoCo envs read cfrc_ext."""
    from robodyn.engine.sensors import rne_post as unit

    ensure_compiled((unit,))
    _unit_rows(bound.model_table, bound.data_address, unit.address(UNIT_SIGNATURE))


@entry
def _contact_force_rows(mtab, dp, out):
    d = data_at(dp)
    for b in range(d.status.shape[0]):
        m = model_at(mtab[b])
        for c in range(d.ncon[b]):
            contact_force_row(m, d, b, c, out[b, c])


def contact_force(bound: Bound) -> np.ndarray:
    """(B, nconmax, 6): force and torque of each contact in its frame (normal first), from
    the last forward(); zero past ncon and for excluded contacts (mj_contactForce)."""
    out = np.zeros((bound.batch, bound.model.nconmax, 6))
    _contact_force_rows(bound.model_table, bound.data_address, out)
    return out


def overflow_error(m, d, rows: np.ndarray) -> ContactOverflowError:
    """The error for rows that found more contacts than nconmax (contact_lost > 0)."""
    row = int(rows[0])
    found = int(d.ncon[row] + d.contact_lost[row])
    return ContactOverflowError(
        f"row {row} has {found} contacts but the contact buffer holds nconmax={m.nconmax}; "
        f"{len(rows)} row(s) overflowed and kept only the first nconmax contacts. "
        "Load the model with a larger capacity: engine.load_mjcf(..., nconmax=...) or "
        "<size nconmax=... /> (or a larger <size memory=...>) in the MJCF"
    )


@entry
def _inverse_rows(mtab, dp):
    d = data_at(dp)
    for b in range(d.status.shape[0]):
        m = model_at(mtab[b])
        fwd_position(m, d, b)
        fwd_velocity(m, d, b)
        # constraint forces of the given qacc: efc_force = -D (J qacc - aref) on active rows
        Jaref = d.scratch_efc[b, 0]
        mul_jar(m, d, b, Jaref, d.qacc[b])
        constraint_update(m, d, b, Jaref)
        work = d.scratch_body[b]
        out = d.qfrc_inverse[b]
        rne(m, d, b, False, d.qacc[b], out, work[0], work[1])
        ma = d.scratch_v[b, 0]
        mul_m(ma, d.qM[b], d.qacc[b], m)
        for i in range(m.nv):
            out[i] += ma[i] - d.qfrc_passive[b, i] - d.qfrc_constraint[b, i]


def inverse(bound: Bound) -> None:
    """mj_inverse for every row: qfrc_inverse = M qacc + c(q, v) - qfrc_passive - qfrc_constraint,
    with the constraint forces (efc_force, qfrc_constraint) those the soft constraints exert
    at the given qacc (mj_invConstraint)."""
    _inverse_rows(bound.model_table, bound.data_address)


@entry
def _full_m_rows(mtab, dp, out):
    d = data_at(dp)
    for b in range(d.status.shape[0]):
        m = model_at(mtab[b])
        for i in range(m.nv):
            start = m.M_rowadr[i]
            for t in range(m.M_rownnz[i]):
                j = m.M_colind[start + t]
                out[b, i, j] = d.qM[b, start + t]
                out[b, j, i] = d.qM[b, start + t]


def full_mass_matrix(bound: Bound) -> np.ndarray:
    """(B, nv, nv) dense M from the packed lower triangle (mj_fullM)."""
    out = np.zeros((bound.batch, bound.model.nv, bound.model.nv))
    _full_m_rows(bound.model_table, bound.data_address, out)
    return out


@entry
def _jac_rows(mtab, dp, body, points, jacp, jacr):
    d = data_at(dp)
    for b in range(d.status.shape[0]):
        m = model_at(mtab[b])
        jac(m, d, b, points[b], body, jacp[b], jacr[b])


def real_array(name: str, value) -> np.ndarray:
    """value as a float64 array: TypeError naming `name` unless it holds real numbers (bools,
    strings, complex numbers and objects are refused), ValueError if any is NaN or inf."""
    try:
        a = np.asarray(value)
    except ValueError as e:  # ragged nesting
        raise InvalidArgumentError(f"{name} must be an array of numbers: {e}") from None
    if a.dtype.kind not in "iuf":
        raise ArgumentTypeError(f"{name} must hold real numbers, got dtype {a.dtype}")
    a = a.astype(np.float64)
    if not np.all(np.isfinite(a)):
        raise InvalidArgumentError(f"{name} contains NaN or inf")
    return a


def _rows3(bound: Bound, name: str, value) -> np.ndarray:
    """A (B, 3) C-contiguous float64 array from one 3-vector for every row or one per row."""
    B = bound.batch
    a = real_array(name, value)
    if a.shape == (3,):
        a = np.broadcast_to(a, (B, 3))
    if a.shape != (B, 3):
        raise InvalidArgumentError(f"{name} must have shape (3,) or ({B}, 3), got {np.shape(value)}")
    return np.ascontiguousarray(a)


def _points(bound: Bound, body, point, default: np.ndarray) -> np.ndarray:
    m = bound.model
    if isinstance(body, bool) or not isinstance(body, int | np.integer):
        raise ArgumentTypeError(f"body must be an int body id, got {type(body).__name__}")
    if not 0 <= body < m.nbody:
        raise IndexOutOfRangeError(f"body {body!r} out of range (model has {m.nbody} bodies)")
    if point is None:
        return np.ascontiguousarray(default[:, body])
    return _rows3(bound, "point", point)


def jacobian(bound: Bound, body: int, point=None, row=None):
    """(jacp, jacr), each (B, 3, nv) (or (3, nv) for one `row`): point and rotation Jacobians
    of `point` (world; default the body frame origin xpos) on `body` (mj_jac)."""
    points = _points(bound, body, point, bound.data.xpos)
    if row is not None and (
        isinstance(row, bool)
        or not isinstance(row, int | np.integer)
        or not -bound.batch <= row < bound.batch
    ):
        raise IndexOutOfRangeError(f"row {row!r} out of range for batch {bound.batch}")
    nv = bound.model.nv
    jacp = np.zeros((bound.batch, 3, nv))
    jacr = np.zeros((bound.batch, 3, nv))
    _jac_rows(bound.model_table, bound.data_address, int(body), points, jacp, jacr)
    if row is not None:
        return jacp[row], jacr[row]
    return jacp, jacr


@entry
def _apply_ft_rows(mtab, dp, body, force, torque, points, out):
    d = data_at(dp)
    for b in range(d.status.shape[0]):
        m = model_at(mtab[b])
        apply_ft(m, d, b, force[b], torque[b], points[b], body, out[b])


def apply_force(bound: Bound, body: int, force, torque=None, point=None) -> np.ndarray:
    """(B, nv) = J^T (force, torque) for a world force/torque at `point` on `body` (mj_applyFT)."""
    B = bound.batch
    points = _points(bound, body, point, bound.data.xipos)
    f = _rows3(bound, "force", force)
    t = np.zeros((B, 3)) if torque is None else _rows3(bound, "torque", torque)
    out = np.zeros((B, bound.model.nv))
    _apply_ft_rows(bound.model_table, bound.data_address, int(body), f, t, points, out)
    return out


@entry
def _integrate_pos_rows(mp, qpos, qvel, dt):
    m = model_at(mp)
    for i in range(qpos.shape[0]):
        integrate.integrate_pos(m, qpos[i], qvel[i], dt)


@entry
def _differentiate_pos_rows(mp, out, dt, qpos1, qpos2):
    m = model_at(mp)
    for i in range(out.shape[0]):
        integrate.differentiate_pos(m, out[i], dt, qpos1[i], qpos2[i])


def _positions(bound: Bound, name: str, value, rows: int | None = None) -> np.ndarray:
    """A C-contiguous float64 copy of (N, n) positions or velocities (n = nq for a name
    starting with qpos, else nv), finite; ValueError naming the argument otherwise."""
    m = bound.model
    n = m.nq if name.startswith("qpos") else m.nv
    a = np.array(real_array(name, value), ndmin=2, order="C")
    if a.ndim != 2 or a.shape[1] != n or (rows is not None and a.shape[0] != rows):
        want = f"({rows if rows is not None else 'N'}, {n})"
        raise InvalidArgumentError(f"{name} must have shape {want} (or ({n},)), got {np.shape(value)}")
    return a


def _timestep(dt, positive: bool) -> float:
    """dt as a float: a finite real number (and > 0 if `positive`), else an error naming it."""
    if isinstance(dt, bool) or not isinstance(dt, int | float | np.integer | np.floating):
        raise ArgumentTypeError(f"dt must be a real number, got {type(dt).__name__}")
    if not np.isfinite(dt) or (positive and not dt > 0):
        raise InvalidArgumentError(f"dt must be finite{' and > 0' if positive else ''}, got {dt}")
    return float(dt)


def integrate_pos(bound: Bound, qpos, qvel, dt: float) -> np.ndarray:
    """(N, nq) qpos (+) dt qvel on the joint manifold (mj_integratePos), for N rows of
    positions (N, nq) and velocities (N, nv); quaternions come out normalized."""
    h = _timestep(dt, positive=False)
    q = _positions(bound, "qpos", qpos)
    v = _positions(bound, "qvel", qvel, rows=q.shape[0])
    _integrate_pos_rows(bound.model_address, q, v, h)
    return q


def differentiate_pos(bound: Bound, qpos1, qpos2, dt: float) -> np.ndarray:
    """(N, nv) velocities that take qpos1 to qpos2 in dt (mj_differentiatePos)."""
    h = _timestep(dt, positive=True)
    q1 = _positions(bound, "qpos1", qpos1)
    q2 = _positions(bound, "qpos2", qpos2, rows=q1.shape[0])
    out = np.zeros((q1.shape[0], bound.model.nv))
    _differentiate_pos_rows(bound.model_address, out, h, q1, q2)
    return out


@entry
def _energy_rows(mtab, dp, out):
    d = data_at(dp)
    for b in range(d.status.shape[0]):
        m = model_at(mtab[b])
        pot = 0.0
        if not (m.opt_disableflags & T.DSBL_GRAVITY):
            for i in range(1, m.nbody):
                for k in range(3):
                    pot -= m.body_mass[i] * m.opt_gravity[k] * d.xipos[b, i, k]
        pot = spring_energy(m, d, b, pot)
        mv = d.scratch_v[b, 0]
        mul_m(mv, d.qM[b], d.qvel[b], m)
        kin = 0.0
        for i in range(m.nv):
            kin += 0.5 * d.qvel[b, i] * mv[i]
        out[b, 0] = pot
        out[b, 1] = kin


def energy(bound: Bound) -> np.ndarray:
    """(B, 2): potential (gravity and springs) and kinetic energy 0.5 v^T M v (mj_energyPos/Vel)."""
    out = np.zeros((bound.batch, 2))
    _energy_rows(bound.model_table, bound.data_address, out)
    return out
