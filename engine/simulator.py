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
from engine.data import STATE_FIELDS, Data, make_data
from engine.model import Model
from engine.step import step_rows


class NonFiniteError(FloatingPointError):
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


class Simulator:
    """A batch of B environments of one Model; `data` holds every row's state.

    Rows never interact: stepping row i reads and writes only row i of every array.
    """

    def __init__(self, model: Model, batch: int = 1, nthread: int | None = None):
        if not isinstance(model, Model):
            got = type(model).__name__
            raise TypeError(f"Simulator needs an engine.Model (from engine.load_mjcf), got {got}")
        self.model = model
        self.batch = int(batch)
        self.nthread = api.default_threads(self.batch) if nthread is None else int(nthread)
        self.data: Data = make_data(model, self.batch)
        self.nstep = 0  # steps taken by the whole batch since creation

    # --- dynamics ------------------------------------------------------------------------
    def forward(self) -> None:
        """Every derived quantity at the current state, for every row (like mj_forward)."""
        api.forward(self.model, self.data, self.nthread)
        self._check("forward", self.nstep)

    def step(self, nstep: int = 1) -> None:
        """Advance every row by nstep timesteps (each like mj_step) in one compiled call.

        As in MuJoCo, derived quantities (sensordata, qacc, ...) afterwards belong to the
        state at the start of the last step. Raises NonFiniteError if an acceleration
        becomes NaN or inf: that row stays at the state before the failing step.
        """
        if nstep < 1:
            raise ValueError(f"nstep must be >= 1, got {nstep}")
        self.run_rows("step", step_rows, int(nstep))

    def run_rows(self, what: str, kernel, nstep: int, *args) -> None:
        """Run a compiled row kernel `kernel(m, d, lo, hi, nstep, *args)` over the batch on
        this simulator's threads, count its nstep steps, and raise NonFiniteError for rows
        it flagged in data.status (used by step and by engine.control's drives)."""
        api.check(self.model, self.data)
        api.run_rows(kernel, self.model, self.data, self.nthread, nstep, *args)
        start = self.nstep
        self.nstep += nstep
        self._check(what, start)

    def collision(self) -> None:
        """Contacts of every row at the geom poses of the last forward() (like mj_collision):
        data.ncon and data.contact_*. Raises ContactOverflowError if a row finds more than
        model.nconmax contacts. Not yet part of forward() or step()."""
        api.collision(self.model, self.data, self.nthread)

    def inverse(self) -> np.ndarray:
        """qfrc_inverse = M qacc + c - qfrc_passive for every row (like mj_inverse), using
        the current qpos, qvel and qacc. Returns data.qfrc_inverse."""
        api.inverse(self.model, self.data)
        return self.data.qfrc_inverse

    def full_mass_matrix(self) -> np.ndarray:
        """(B, nv, nv) dense M from the last forward() (like mj_fullM)."""
        return api.full_mass_matrix(self.model, self.data)

    def jacobian(self, body: int, point=None, row: int | None = None):
        """(jacp, jacr), each (B, 3, nv): how `point` (world, default the body origin) on
        `body` translates and rotates per unit qvel. Uses the last forward()."""
        return api.jacobian(self.model, self.data, body, point, row)

    def apply_force(self, body: int, force, torque=None, point=None) -> np.ndarray:
        """(B, nv) joint forces J^T (force, torque) of a world force (and torque) at `point`
        (world, default the body's centre of mass) on `body`. Uses the last forward()."""
        return api.apply_force(self.model, self.data, body, force, torque, point)

    def energy(self) -> np.ndarray:
        """(B, 2) potential and kinetic energy at the last forward() (like mjData.energy)."""
        return api.energy(self.model, self.data)

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

    def _check(self, what: str, start: int) -> None:
        bad = np.flatnonzero(self.data.status)
        if len(bad) == 0:
            return
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
