"""engine.Simulator: B independent copies of one model, stepped together.

sim = Simulator(model, batch=64)
sim.data.qpos[3] = ...          # (B, nq) arrays with MuJoCo's names
sim.forward()                   # like mj_forward, for every row
sim.step()                      # like mj_step, for every row
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from engine import api
from engine import types as T
from engine.binding import bind, check_model
from engine.data import STATE_FIELDS, Data, make_data
from engine.errors import RoboDynError
from engine.model import Model
from engine.step import JOB_FORWARD, JOB_ROLLOUT, JOB_STEP, run_rows


class NonFiniteError(RoboDynError, FloatingPointError):
    """A NaN or inf appeared in the physics; the message names row, step and quantity."""


class Snapshot(NamedTuple):
    """A bit-exact copy of the state of some rows (see Simulator.snapshot)."""

    model_signature: tuple
    rows: np.ndarray  # (k,) row indices the snapshot was taken from
    fields: dict  # STATE_FIELDS name -> (k, ...) array
    nstep: int


_DIAGNOSE = (
    "qpos",
    "qvel",
    "ctrl",
    "qfrc_applied",
    "xfrc_applied",
    "qM",
    "qfrc_passive",
    "qfrc_actuator",
    "qfrc_bias",
    "qfrc_smooth",
    "qacc",
)


class Rollout(NamedTuple):
    """States along a Simulator.rollout: row b, step t is the state after step t."""

    qpos: np.ndarray  # (B, T, nq)
    qvel: np.ndarray  # (B, T, nv)
    sensordata: np.ndarray  # (B, T, nsensordata) sensors of the state step t started from


class Simulator:
    """A batch of B environments of one Model; `data` holds every row's state.

    Rows never interact: stepping row i reads and writes only row i of every array. The
    Model and the Data are bound together when the Simulator is made (engine.binding checks
    that they match and lays them out for the compiled kernels) and stay fixed: a Simulator
    for another model is a new Simulator.
    """

    def __init__(self, model: Model, batch: int = 1, nthread: int | None = None):
        if not isinstance(model, Model):
            got = type(model).__name__
            raise TypeError(f"Simulator needs an engine.Model (from engine.load_mjcf), got {got}")
        if isinstance(batch, bool) or not isinstance(batch, int | np.integer):
            raise TypeError(f"batch must be an int, got {type(batch).__name__}")
        sizes = check_model(model)  # before make_data sizes arrays from its counts
        self._bound = bind(model, make_data(model, int(batch)), sizes)
        self.nthread = api.default_threads(self.batch) if nthread is None else nthread
        self.nstep = 0  # steps taken by the whole batch since creation
        # run_rows' arguments a job does not use: zero-sized, made once
        self._no_drive = (np.zeros((0, 2), dtype=np.int32), np.zeros((0, 2)), np.zeros((self.batch, 0)))
        self._no_rollout = np.zeros((self.batch, 0, 0))

    @property
    def model(self) -> Model:
        return self._bound.model

    @model.setter
    def model(self, value):
        raise AttributeError("Simulator.model is fixed when the Simulator is made; make a new Simulator")

    @property
    def data(self) -> Data:
        return self._bound.data

    @data.setter
    def data(self, value):
        raise AttributeError(
            "Simulator.data is fixed when the Simulator is made; write into its arrays "
            "(sim.data.qpos[...] = ...) instead of replacing them"
        )

    @property
    def batch(self) -> int:
        return self._bound.batch

    @property
    def nthread(self) -> int:
        """Threads a call splits the batch over (numba's thread pool; 1: serial)."""
        return self._nthread

    @nthread.setter
    def nthread(self, value) -> None:
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
            raise ValueError(f"nthread must be an int >= 1, got {value!r}")
        self._nthread = int(min(value, self._bound.batch))

    # --- dynamics ------------------------------------------------------------------------
    def forward(self) -> None:
        """Every derived quantity at the current state, for every row (like mj_forward)."""
        none = self._no_rollout
        job = (JOB_FORWARD, 0, T.DRIVE_NONE, 0, *self._no_drive, none, none, none, none)
        if api.call(run_rows, self._bound, self._nthread, *job):
            self._raise("forward", self.nstep)

    def step(self, nstep: int = 1) -> None:
        """Advance every row by nstep timesteps (each like mj_step) in one compiled call.

        As in MuJoCo, derived quantities (sensordata, qacc, ...) afterwards belong to the
        state at the start of the last step. Raises NonFiniteError if an acceleration
        becomes NaN or inf, and ContactOverflowError if a row finds more contacts than
        model.nconmax: that row stays at the state before the failing step.
        """
        if isinstance(nstep, bool) or not isinstance(nstep, int | np.integer) or nstep < 1:
            raise ValueError(f"nstep must be an int >= 1, got {nstep!r}")
        self.drive(T.DRIVE_NONE, 0, *self._no_drive, int(nstep))

    def rollout(self, ctrl) -> Rollout:
        """Step every row through a control sequence in one call (like mujoco.rollout).

        ctrl: (B, T, nu), or (T, nu) for every row alike; step t applies ctrl[:, t]. Returns
        the state after each step (qpos, qvel) and the sensors of the state each step
        started from, each (B, T, ...). data.ctrl ends at the last control; raises like
        step() if a row fails (that row stops at the state before its failed step).
        """
        m = self.model
        c = np.asarray(ctrl, dtype=np.float64)
        if c.ndim == 2:
            c = np.broadcast_to(c, (self.batch, *c.shape))
        if c.ndim != 3 or c.shape[0] != self.batch or c.shape[2] != m.nu or c.shape[1] < 1:
            raise ValueError(
                f"ctrl must have shape ({self.batch}, T, {m.nu}) or (T, {m.nu}), got {np.shape(ctrl)}"
            )
        if not np.all(np.isfinite(c)):
            raise ValueError("ctrl contains NaN or inf; nothing was stepped")
        c = np.ascontiguousarray(c)
        steps = c.shape[1]
        out = Rollout(
            np.zeros((self.batch, steps, m.nq)),
            np.zeros((self.batch, steps, m.nv)),
            np.zeros((self.batch, steps, m.nsensordata)),
        )
        start = self.nstep
        self.nstep += steps
        job = (JOB_ROLLOUT, steps, T.DRIVE_NONE, 0, *self._no_drive, c, out.qpos, out.qvel, out.sensordata)
        if api.call(run_rows, self._bound, self._nthread, *job):
            self._raise("step", start)
        return out

    def drive(self, kind: int, flags: int, index, gain, target, nstep: int) -> None:
        """nstep steps of every row with a drive between the velocity and the acceleration
        stage of each (engine.step.step_row; engine.control's drives check the arguments and
        call this): kind, flags, index (k, 2) int32, gain (k, 2), target (B, k), all
        C-contiguous. Counts the steps and raises for failed rows as step() does."""
        if kind == T.DRIVE_PD:
            self._bound.add_split_forward()
        start = self.nstep
        self.nstep += nstep
        none = self._no_rollout
        job = (JOB_STEP, nstep, kind, flags, index, gain, target, none, none, none, none)
        if api.call(run_rows, self._bound, self._nthread, *job):
            self._raise("step", start)

    def collision(self) -> None:
        """Contacts of every row at the geom poses of the last forward() (like mj_collision):
        data.ncon and data.contact_*, whatever the model's contact flags (forward() and
        step() collide by themselves when contacts are enabled). Raises
        ContactOverflowError if a row finds more than model.nconmax contacts."""
        api.collision(self._bound)

    def contact_force(self) -> np.ndarray:
        """(B, nconmax, 6): force:torque of each contact of the last forward() in its contact
        frame (normal first; like mj_contactForce), zero past data.ncon."""
        return api.contact_force(self._bound)

    def inverse(self) -> np.ndarray:
        """qfrc_inverse = M qacc + c - qfrc_passive - qfrc_constraint for every row (like
        mj_inverse), using the current qpos, qvel and qacc; the constraint forces are those
        of the soft constraints at that qacc. Returns data.qfrc_inverse."""
        api.inverse(self._bound)
        return self.data.qfrc_inverse

    def full_mass_matrix(self) -> np.ndarray:
        """(B, nv, nv) dense M from the last forward() (like mj_fullM)."""
        return api.full_mass_matrix(self._bound)

    def jacobian(self, body: int, point=None, row: int | None = None):
        """(jacp, jacr), each (B, 3, nv): how `point` (world, default the body origin) on
        `body` translates and rotates per unit qvel. Uses the last forward()."""
        return api.jacobian(self._bound, body, point, row)

    def apply_force(self, body: int, force, torque=None, point=None) -> np.ndarray:
        """(B, nv) joint forces J^T (force, torque) of a world force (and torque) at `point`
        (world, default the body's centre of mass) on `body`. Uses the last forward()."""
        return api.apply_force(self._bound, body, force, torque, point)

    def integrate_pos(self, qpos, qvel, dt: float) -> np.ndarray:
        """(N, nq): qpos (+) dt qvel on the joint manifold for N rows of positions (N, nq) or
        (nq,) and velocities (N, nv) (like mj_integratePos, into a new array). The state of
        the simulator is not touched."""
        return api.integrate_pos(self._bound, qpos, qvel, dt)

    def differentiate_pos(self, qpos1, qpos2, dt: float) -> np.ndarray:
        """(N, nv): the velocities that integrate_pos turns qpos1 into qpos2 in dt (like
        mj_differentiatePos; quaternions differ by a rotation vector in qpos1's frame)."""
        return api.differentiate_pos(self._bound, qpos1, qpos2, dt)

    def energy(self) -> np.ndarray:
        """(B, 2) potential and kinetic energy at the last forward() (like mjData.energy)."""
        return api.energy(self._bound)

    # --- snapshot / restore ----------------------------------------------------------------
    def snapshot(self, rows=None) -> Snapshot:
        """Copy the state (time, qpos, qvel, act, ctrl, applied forces) of `rows` (all by
        default). Restoring it reproduces the following steps bit for bit."""
        idx = self._rows(rows)
        fields = {name: getattr(self.data, name)[idx].copy() for name in STATE_FIELDS}
        return Snapshot(_signature(self.model), idx, fields, self.nstep)

    def restore(self, snap: Snapshot, rows=None) -> None:
        """Write a snapshot's state back into `rows` (default: the rows it was taken from)."""
        if not isinstance(snap, Snapshot):
            raise TypeError(f"restore needs a Snapshot from Simulator.snapshot, got {type(snap).__name__}")
        if snap.model_signature != _signature(self.model):
            raise ValueError("snapshot was taken from a different model; refusing to restore it")
        idx = snap.rows if rows is None else self._rows(rows)
        if len(idx) != len(snap.rows):
            raise ValueError(f"snapshot holds {len(snap.rows)} rows, cannot restore into {len(idx)}")
        for name in STATE_FIELDS:
            getattr(self.data, name)[idx] = snap.fields[name]
        if len(idx) == self.batch:
            self.nstep = snap.nstep

    # --- helpers -----------------------------------------------------------------------------
    def _rows(self, rows) -> np.ndarray:
        if rows is None:
            return np.arange(self.batch)
        idx = np.atleast_1d(np.asarray(rows))
        if idx.dtype == bool:
            if idx.shape != (self.batch,):
                raise ValueError(f"a boolean row mask must have shape ({self.batch},), got {idx.shape}")
            return np.flatnonzero(idx)
        idx = idx.astype(np.int64)
        if np.any(idx < 0) or np.any(idx >= self.batch):
            raise IndexError(f"rows {idx.tolist()} out of range for batch {self.batch}")
        return idx

    def _raise(self, what: str, start: int) -> None:
        """Raise the error for the rows the last call flagged in data.status."""
        bad = np.flatnonzero(self.data.status)
        lost = bad[self.data.contact_lost[bad] > 0]
        if len(lost):
            raise api.overflow_error(self.model, self.data, lost)
        row = int(bad[0])
        step = start + int(self.data.status[row]) if what == "step" else start
        quantity = "qacc"
        for name in _DIAGNOSE:
            if not np.all(np.isfinite(getattr(self.data, name)[row])):
                quantity = name
                break
        arr = getattr(self.data, quantity)[row].reshape(-1)
        where = int(np.flatnonzero(~np.isfinite(arr))[0])
        rows = ", ".join(str(int(r)) for r in bad[:8])
        raise NonFiniteError(
            f"non-finite {quantity}[{where}] in row {row} at step {step} ({what}); "
            f"rows with non-finite qacc: {rows}{' ...' if len(bad) > 8 else ''}. "
            "Those rows were not advanced."
        )


def _signature(m: Model) -> tuple:
    return (m.nq, m.nv, m.nu, m.nbody, m.njnt, m.opt_timestep, m.body_mass.tobytes(), m.qpos0.tobytes())
