"""engine.Simulator: B independent copies of one model, stepped together.

sim = Simulator(model, batch=64)
sim.data.qpos[3] = ...          # (B, nq) arrays with MuJoCo's names
sim.forward()                   # like mj_forward, for every row
sim.step()                      # like mj_step, for every row
"""

from __future__ import annotations

import functools
import sys
import threading
import warnings
from pathlib import Path
from typing import NamedTuple

import numpy as np

from robodyn.engine import api, params
from robodyn.engine import types as T
from robodyn.engine.binding import JobRecord, bind, check_model
from robodyn.engine.data import DATA_SPECS, STATE_FIELDS, Data, make_data
from robodyn.engine.errors import (
    ArgumentTypeError,
    IndexOutOfRangeError,
    InvalidArgumentError,
    PhysicsWarning,
    RoboDynError,
)
from robodyn.engine.job import JOB_FORWARD, JOB_ROLLOUT, JOB_STEP
from robodyn.engine.model import Model, model_digest
from robodyn.engine.step import run_rows


class NonFiniteError(RoboDynError, FloatingPointError):
    """The physics met a NaN, an inf or a value beyond MuJoCo's 1e10 (mjMAXVAL) in qpos,
    qvel, mocap_pos, mocap_quat or qacc; the message names row, step and quantity (the
    first bad input, act included, that can explain a bad qacc)."""


class FixedAttributeError(RoboDynError, AttributeError):
    """An attribute of a Simulator that is fixed when it is made (its model and data)."""


class Snapshot(NamedTuple):
    """A bit-exact copy of the state of some rows (see Simulator.snapshot)."""

    model_digest: str  # model_digest() of the model it was taken from
    rows: np.ndarray  # (k,) row indices the snapshot was taken from
    fields: dict  # STATE_FIELDS name -> (k, ...) array
    nstep: int
    params: dict | None = None  # engine.params name -> (k, ...) array; None: the model's own


ON_BAD = ("raise", "reset")

# inputs of the kinematics a step checks but never writes (engine.step.mocap_ok)
_MOCAP = ("mocap_pos", "mocap_quat")

# what each counted warning is about, and MuJoCo's name for it
_WARNINGS = {
    T.WARN_BADQPOS: ("qpos", "mjWARN_BADQPOS"),
    T.WARN_BADQVEL: ("qvel", "mjWARN_BADQVEL"),
    T.WARN_BADQACC: ("qacc", "mjWARN_BADQACC"),
    T.WARN_BADCTRL: ("ctrl", "mjWARN_BADCTRL"),
}

# where a bad qacc can come from, inputs first (bad controls are zeroed, never the cause)
_DIAGNOSE = (
    "qpos",
    "qvel",
    "act",
    "mocap_pos",
    "mocap_quat",
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
    act: np.ndarray  # (B, T, na)
    sensordata: np.ndarray  # (B, T, nsensordata) sensors of the state step t started from


def _serialized(method):
    """Run a Simulator method holding the Simulator's lock: the compiled kernels write the
    Data's work arrays without checks, so two threads inside one Simulator at once would
    corrupt them (and the process's memory). Calls from several threads into one Simulator
    therefore run one after the other; Simulators of their own run in parallel."""

    @functools.wraps(method)
    def locked(self, *args, **kwargs):
        with self._lock:
            return method(self, *args, **kwargs)

    return locked


class Simulator:
    """A batch of B environments of one Model; `data` holds every row's state.

    Rows never interact: stepping row i reads and writes only row i of every array. One
    Simulator may be shared by threads: its calls hold a lock, so they run one at a time
    (threads that each own a Simulator run in parallel). The
    Model and the Data are bound together when the Simulator is made (engine.binding checks
    that they match and lays them out for the compiled kernels) and stay fixed: a Simulator
    for another model is a new Simulator.

    on_bad: what a step does with a row whose qpos or qvel (before the step) or qacc (after
    its forward pass) is NaN, inf or beyond 1e10 (MuJoCo's mjMAXVAL). "raise" (default):
    the row is not advanced and NonFiniteError names row, step and quantity. "reset": the
    row goes back to the model's initial state and steps on, with a PhysicsWarning, as
    MuJoCo's mj_step does. Either way data.warning counts it per row; a bad control is
    counted and warned about, and every control of its row is taken as 0 (as in MuJoCo).
    A bad mocap_pos or mocap_quat (written by the caller; MuJoCo does not check them) fails
    its row with NonFiniteError whatever on_bad says, in step() and forward() alike.
    """

    def __init__(self, model: Model, batch: int = 1, nthread: int | None = None, on_bad: str = "raise"):
        if not isinstance(model, Model):
            got = type(model).__name__
            raise ArgumentTypeError(f"Simulator needs an engine.Model (from engine.load_mjcf), got {got}")
        sizes = check_model(model)  # before make_data sizes arrays from its counts
        self._lock = threading.RLock()  # held by every call that runs compiled code (_serialized)
        self._bound = bind(model, make_data(model, batch), sizes)  # make_data checks batch
        self.nthread = api.default_threads(self.batch) if nthread is None else nthread
        self.on_bad = on_bad
        self.nstep = 0  # steps taken by the whole batch since creation
        self._warnings_reported = np.zeros_like(self.data.warning)
        self._digest = model_digest(model)  # what snapshots and drives are checked against
        self._job = JobRecord(self.batch)  # what the next run_rows call does (engine.job)
        self._all_rows = np.ones(self.batch, dtype=np.uint8)  # the job's rows: every row
        self._params = None  # engine.params: per-row parameters once a row has its own

    @property
    def model(self) -> Model:
        return self._bound.model

    @model.setter
    def model(self, value):
        raise FixedAttributeError("Simulator.model is fixed when the Simulator is made; make a new Simulator")

    @property
    def data(self) -> Data:
        return self._bound.data

    @data.setter
    def data(self, value):
        raise FixedAttributeError(
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
            raise InvalidArgumentError(f"nthread must be an int >= 1, got {value!r}")
        self._nthread = int(min(value, self._bound.batch))

    @property
    def on_bad(self) -> str:
        """ "raise" or "reset": what a step does with a row whose state or acceleration is bad."""
        return self._on_bad

    @on_bad.setter
    def on_bad(self, value) -> None:
        if value not in ON_BAD:
            raise InvalidArgumentError(f"on_bad must be one of {ON_BAD}, got {value!r}")
        self._on_bad = value
        self._reset_flag = T.STEP_RESET_BAD if value == "reset" else 0

    # --- dynamics ------------------------------------------------------------------------
    @_serialized
    def forward(self, rows=None, disable: tuple[str, ...] = ()) -> None:
        """Every derived quantity at the current state, for every row or the rows given
        (like mj_forward). Raises NonFiniteError if a qacc, mocap_pos or mocap_quat is bad,
        whatever on_bad says (a row with a bad mocap pose is not computed).

        disable: names of MuJoCo's disable flags (mjtDisableBit, lower case: "actuation",
        "gravity", "spring", "damper", "clampctrl") turned on for this pass alone, on top of
        the model's own; as dm_control's `with physics.model.disable("actuation"):
        physics.forward()`, which its reset runs. The other flags choose which stages the
        model compiles and cannot change per pass."""
        bits = _disable_bits(disable)
        mask = self._all_rows
        if rows is not None:
            mask = np.zeros(self.batch, dtype=np.uint8)
            mask[self._rows(rows)] = 1
        self._job.set(JOB_FORWARD, 0, 0)
        if not bits:
            self._run("forward", self.nstep, mask)
            return
        which = np.flatnonzero(mask)
        saved = self._bound.with_disabled(which, bits)
        try:
            self._run("forward", self.nstep, mask)
        finally:
            self._bound.restore_models(which, saved)

    @_serialized
    def step(self, nstep: int = 1, observe_end: bool | str = False) -> None:
        """Advance every row by nstep timesteps (each like mj_step) in one compiled call.

        As in MuJoCo, derived quantities (sensordata, qacc, ...) afterwards belong to the
        state at the start of the last step; with observe_end=True one more forward pass
        makes them the final state's (what an env's observation needs); with
        observe_end="posvel" only the position and velocity stages and their sensors run
        after the last step (MuJoCo's mj_step1, as dm_control ends a control step): those
        belong to the final state, the actuation, the constraint forces, qacc and the
        acceleration stage's sensors (touch, force, ...) to the last step's start. The next
        observe_end="posvel" call then starts as dm_control's next control step does, with
        the acceleration stage alone (mj_step2), in each row whose position and velocity stages
        are still those of its state: no forward(), restore(), set_param(s), collision(),
        inverse() or other step came between, and qpos, qvel, mocap_pos, mocap_quat and
        eq_active hold the same bits (write them and the stages are recomputed). Not with
        the RK4 integrator, which dm_control steps with a whole mj_step. The results are the
        same bits as with the stages recomputed; data.posvel_reused counts such steps. Other
        Data fields the stages compute (xpos, contacts, qM, ...) are taken as they are: write
        them and the first step uses what was written. Raises
        NonFiniteError if an acceleration becomes NaN or inf, and ContactOverflowError if a
        row finds more contacts than model.nconmax: that row stays at the state before the
        failing step.
        """
        if isinstance(nstep, bool) or not isinstance(nstep, int | np.integer) or nstep < 1:
            raise InvalidArgumentError(f"nstep must be an int >= 1, got {nstep!r}")
        if isinstance(observe_end, str) and observe_end == "posvel":
            self._bound.add_posvel_end()
            end = T.STEP_OBSERVE_POSVEL
        elif isinstance(observe_end, bool | np.bool_):
            end = T.STEP_OBSERVE_END if observe_end else 0
        else:
            raise ArgumentTypeError(f"observe_end must be True, False or 'posvel', got {observe_end!r}")
        start = self.nstep
        self.nstep += nstep
        self._job.set(JOB_STEP, nstep, end | self._reset_flag)
        self._run("step", start)

    @_serialized
    def rollout(self, ctrl) -> Rollout:
        """Step every row through a control sequence in one call (like mujoco.rollout).

        ctrl: (B, T, nu), or (T, nu) for every row alike; step t applies ctrl[:, t]. Returns
        the state after each step (qpos, qvel, act) and the sensors of the state each step
        started from, each (B, T, ...). data.ctrl ends at the last control; raises like
        step() if a row fails (that row stops at the state before its failed step).
        """
        m = self.model
        c = api.real_array("ctrl", ctrl)
        if c.ndim == 2:
            c = np.broadcast_to(c, (self.batch, *c.shape))
        if c.ndim != 3 or c.shape[0] != self.batch or c.shape[2] != m.nu or c.shape[1] < 1:
            raise InvalidArgumentError(
                f"ctrl must have shape ({self.batch}, T, {m.nu}) or (T, {m.nu}), got {np.shape(ctrl)}"
            )
        c = np.ascontiguousarray(c)
        steps = c.shape[1]
        out = Rollout(
            np.zeros((self.batch, steps, m.nq)),
            np.zeros((self.batch, steps, m.nv)),
            np.zeros((self.batch, steps, m.na)),
            np.zeros((self.batch, steps, m.nsensordata)),
        )
        start = self.nstep
        self.nstep += steps
        job = self._job
        job.set(JOB_ROLLOUT, steps, self._reset_flag)
        for name, array in zip(("ctrl", *Rollout._fields), (c, *out), strict=True):
            job.point(name, array)
        self._run("step", start)
        return out

    @_serialized
    def drive(self, kind: int, flags: int, index, gain, target, nstep: int) -> None:
        """nstep steps of every row with a drive between the velocity and the acceleration
        stage of each (engine.step.step_row; engine.control's drives check the arguments and
        call this): kind (DRIVE_ACCELERATION or DRIVE_PD), flags, index (k, 2) int32, gain
        (k, 2), target (B, k), all C-contiguous. Counts the steps and raises for failed rows
        as step() does."""
        self._bound.add_drive(kind)
        if flags & T.STEP_OBSERVE_POSVEL:
            self._bound.add_posvel_end()
        start = self.nstep
        self.nstep += nstep
        job = self._job
        job.set(JOB_STEP, nstep, flags | self._reset_flag, kind)
        job.point("index", index)
        job.point("gain", gain)
        job.point("target", target)
        self._run("step", start)

    @_serialized
    def collision(self) -> None:
        """Contacts of every row at the geom poses of the last forward() (like mj_collision):
        data.ncon and data.contact_*, whatever the model's contact flags (forward() and
        step() collide by themselves when contacts are enabled). Raises
        ContactOverflowError if a row finds more than model.nconmax contacts."""
        self._posvel_stale()  # it rewrites the contacts the position stage found
        api.collision(self._bound)

    @_serialized
    def rne_post(self) -> None:
        """data.cacc, cfrc_ext and cfrc_int of every row (like mj_rnePostConstraint), from the
        last forward pass: after step(), the state at the start of the last physics step."""
        api.rne_post(self._bound)

    @_serialized
    def contact_force(self) -> np.ndarray:
        """(B, nconmax, 6): force:torque of each contact of the last forward() in its contact
        frame (normal first; like mj_contactForce), zero past data.ncon."""
        return api.contact_force(self._bound)

    @_serialized
    def inverse(self) -> np.ndarray:
        """qfrc_inverse = M qacc + c - qfrc_passive - qfrc_constraint for every row (like
        mj_inverse), using the current qpos, qvel and qacc; the constraint forces are those
        of the soft constraints at that qacc. Returns data.qfrc_inverse."""
        self._posvel_stale()  # it reruns the position and velocity stages and writes constraint forces
        api.inverse(self._bound)
        return self.data.qfrc_inverse

    @_serialized
    def full_mass_matrix(self) -> np.ndarray:
        """(B, nv, nv) dense M from the last forward() (like mj_fullM)."""
        return api.full_mass_matrix(self._bound)

    @_serialized
    def jacobian(self, body: int, point=None, row: int | None = None):
        """(jacp, jacr), each (B, 3, nv): how `point` (world, default the body origin) on
        `body` translates and rotates per unit qvel. Uses the last forward()."""
        return api.jacobian(self._bound, body, point, row)

    @_serialized
    def apply_force(self, body: int, force, torque=None, point=None) -> np.ndarray:
        """(B, nv) joint forces J^T (force, torque) of a world force (and torque) at `point`
        (world, default the body's centre of mass) on `body`. Uses the last forward()."""
        return api.apply_force(self._bound, body, force, torque, point)

    @_serialized
    def integrate_pos(self, qpos, qvel, dt: float) -> np.ndarray:
        """(N, nq): qpos (+) dt qvel on the joint manifold for N rows of positions (N, nq) or
        (nq,) and velocities (N, nv) (like mj_integratePos, into a new array). The state of
        the simulator is not touched."""
        return api.integrate_pos(self._bound, qpos, qvel, dt)

    @_serialized
    def differentiate_pos(self, qpos1, qpos2, dt: float) -> np.ndarray:
        """(N, nv): the velocities that integrate_pos turns qpos1 into qpos2 in dt (like
        mj_differentiatePos; quaternions differ by a rotation vector in qpos1's frame)."""
        return api.differentiate_pos(self._bound, qpos1, qpos2, dt)

    @_serialized
    def energy(self) -> np.ndarray:
        """(B, 2) potential and kinetic energy at the last forward() (like mjData.energy)."""
        return api.energy(self._bound)

    # --- per-row physical parameters ------------------------------------------------------
    @_serialized
    def set_param(self, name: str, rows, values) -> None:
        """Give `rows` their own value of the physical parameter `name` (MuJoCo's field name,
        one of engine.params.PARAMS: body_mass, body_inertia, body_ipos, geom_friction,
        dof_damping, dof_armature, dof_frictionloss, jnt_stiffness, actuator_gainprm,
        actuator_biasprm, actuator_forcerange, opt_gravity, hfield_data). values: (len(rows),)
        + the field's shape. The constants MuJoCo derives from masses and armature at qpos0
        (mj_setConst: body_subtreemass and the inverse weights) and the contact pairs' mixed
        friction are recomputed for those rows. Bad values (not finite, negative
        mass, inertia breaking the triangle inequality, ...: engine.params) raise ParamError
        naming the field and row, and nothing changes. The rows' state is not touched: call
        forward() (or step) to see the new parameters in derived quantities."""
        idx = self._unique_rows(rows, "set_param")
        value = params.check(self.model, name, idx, values)
        self._store_params(idx, {name: value})

    @_serialized
    def set_params(self, rows, values: dict) -> None:
        """set_param for several parameters at once ({name: values}): every value is checked
        before anything changes, and the derived constants are computed once."""
        idx = self._unique_rows(rows, "set_params")
        if not isinstance(values, dict):
            raise ArgumentTypeError(f"set_params needs a dict {{name: values}}, got {type(values).__name__}")
        checked = {name: params.check(self.model, name, idx, v) for name, v in values.items()}
        self._store_params(idx, checked)

    @_serialized
    def get_param(self, name: str, rows=None) -> np.ndarray:
        """(len(rows),) + field shape: the value of a parameter of engine.params.PARAMS (or of
        a constant derived from them: engine.params.DERIVED) in `rows` (all by default), a
        copy."""
        if name not in params.DERIVED:
            params.field_shape(self.model, name)  # refuses an unknown name
        idx = self._rows(rows)
        if self._params is None:
            base = np.asarray(getattr(self.model, name))
            return np.repeat(base[None], len(idx), axis=0)
        return self._params.arrays[name][idx]

    def _store_params(self, idx: np.ndarray, new: dict) -> None:
        """Write checked parameter values ({name: (k, ...)}) into rows idx, with their derived
        constants, or raise ParamError (M(qpos0) not positive definite) changing nothing."""
        if self._params is None:
            self._params = params.RowParams(self._bound)
        self._params.store(idx, new)
        self._posvel_stale(idx)  # the rows' stages read their parameters

    def _unique_rows(self, rows, what: str) -> np.ndarray:
        idx = self._rows(rows)
        if len(idx) == 0:
            raise InvalidArgumentError(f"{what}: rows must name at least one row, got {rows!r}")
        if len(np.unique(idx)) != len(idx):
            raise InvalidArgumentError(f"{what}: rows {idx.tolist()} name a row twice")
        return idx

    # --- snapshot / restore ----------------------------------------------------------------
    def model_digest(self) -> str:
        """A hash of every physical quantity of the model (buffer capacities excepted): two
        models with the same digest simulate alike."""
        return self._digest

    @_serialized
    def snapshot(self, rows=None) -> Snapshot:
        """Copy the state (time, qpos, qvel, act, ctrl, applied forces, equality switches,
        mocap poses, solver warm start) of `rows` (all by default), and their physical
        parameters if any row has its own (set_param). Restoring it reproduces the following
        steps bit for bit."""
        idx = self._rows(rows)
        fields = {name: getattr(self.data, name)[idx].copy() for name in STATE_FIELDS}
        own = None
        if self._params is not None:
            own = {name: self._params.arrays[name][idx].copy() for name in params.PARAMS}
        return Snapshot(self.model_digest(), idx, fields, self.nstep, own)

    @_serialized
    def restore(self, snap: Snapshot, rows=None) -> None:
        """Write a snapshot's state back into `rows` (default: the rows it was taken from) and
        recompute their derived quantities (xpos, sensordata, ...: like mj_forward). The
        snapshot is checked whole before anything is written: a snapshot of another model,
        of another number of rows or holding a bad value is refused and nothing changes."""
        if not isinstance(snap, Snapshot):
            raise ArgumentTypeError(
                f"restore needs a Snapshot from Simulator.snapshot, got {type(snap).__name__}"
            )
        if snap.model_digest != self.model_digest():
            raise InvalidArgumentError(
                "snapshot was taken from a different model (its digest differs: another geometry, "
                "mass, option or size); refusing to restore it"
            )
        taken = np.asarray(snap.rows)
        if taken.ndim != 1 or taken.dtype.kind not in "iu":
            raise InvalidArgumentError(
                f"snapshot rows must be a 1-d array of row indices, got {snap.rows!r}; refusing to restore it"
            )
        idx = self._rows(taken if rows is None else rows)
        if len(idx) != len(taken):
            raise InvalidArgumentError(
                f"snapshot holds {len(snap.rows)} rows, cannot restore into {len(idx)}"
            )
        if len(np.unique(idx)) != len(idx):
            raise InvalidArgumentError(
                f"rows {idx.tolist()} name a row twice; each snapshot row needs its own row"
            )
        _check_snapshot_fields(snap, self.data, len(idx))
        own = snap.params
        if own is not None:
            if not isinstance(own, dict) or set(own) != set(params.PARAMS):
                raise InvalidArgumentError(f"snapshot params must be exactly {tuple(params.PARAMS)}")
            own = {name: params.check(self.model, name, idx, own[name]) for name in params.PARAMS}
        if own is not None:
            self._store_params(idx, own)
        elif self._params is not None:
            self._params.clear(idx)
        self._posvel_stale(idx)
        for name in STATE_FIELDS:
            getattr(self.data, name)[idx] = snap.fields[name]
        if len(idx) == self.batch:
            self.nstep = snap.nstep
        self.forward(idx)

    # --- helpers -----------------------------------------------------------------------------
    def _posvel_stale(self, rows=None) -> None:
        """The position and velocity stages of `rows` (all by default) are no longer taken
        as current: the next step recomputes them (engine.step.step_row)."""
        self.data.posvel_current[slice(None) if rows is None else rows] = 0

    def _rows(self, rows) -> np.ndarray:
        if rows is None:
            return np.arange(self.batch)
        idx = np.atleast_1d(np.asarray(rows))
        if idx.dtype == bool:
            if idx.shape != (self.batch,):
                raise InvalidArgumentError(
                    f"a boolean row mask must have shape ({self.batch},), got {idx.shape}"
                )
            return np.flatnonzero(idx)
        if idx.size == 0 and idx.ndim == 1:
            return np.zeros(0, dtype=np.int64)  # [] (numpy makes it float64): no row
        if idx.dtype.kind not in "iu" or idx.ndim != 1:
            raise ArgumentTypeError(
                f"rows must be row indices (ints) or a boolean mask, got {np.asarray(rows)!r}"
            )
        bad = (idx < 0) | (idx >= self.batch)  # before the cast: a uint64 beyond int64 stays itself
        if np.any(bad):
            raise IndexOutOfRangeError(
                f"rows {idx[bad].tolist()[:8]} out of range for batch {self.batch} "
                f"(rows 0 to {self.batch - 1})"
            )
        return idx.astype(np.int64)

    def _run(self, what: str, start: int, rows=None) -> None:
        """run_rows with the job set (every row, or the uint8 mask `rows`); then warn about
        new warnings and raise for failed rows."""
        self._job.point("rows", self._all_rows if rows is None else rows)
        result = api.call(run_rows, self._bound, self._nthread, self._job.address)
        if result:
            failed = np.flatnonzero(self.data.status)
            if result >> 32:
                self._warn(failed)
            if len(failed):
                self._raise(what, start, failed)

    def _warn(self, failed: np.ndarray) -> None:
        """A PhysicsWarning for each kind of warning counted since the last report, naming
        the rows (those that failed are reported by the error instead)."""
        w = self.data.warning
        new = w - self._warnings_reported
        self._warnings_reported[:] = w
        new[failed] = 0
        for kind, (name, mujoco_name) in _WARNINGS.items():
            rows = np.flatnonzero(new[:, kind] > 0)
            if len(rows) == 0:
                continue
            info = self.data.warning_info[:, kind]
            where = ", ".join(f"{r} ({name}[{info[r]}])" for r in rows[:8]) + (
                " ..." if len(rows) > 8 else ""
            )
            if kind == T.WARN_BADCTRL:
                done = "every control of the row was taken as 0"
            else:
                done = "the row was reset to the model's initial state and stepped on (on_bad='reset')"
            warnings.warn(
                f"{name} was NaN, inf or beyond 1e10 in row {where}: {done}, as MuJoCo does "
                f"({mujoco_name}); Simulator.data.warning counts these per row",
                PhysicsWarning,
                stacklevel=_caller_level(),
            )

    def _raise(self, what: str, start: int, bad: np.ndarray) -> None:
        """Raise the error for the rows the last call flagged in data.status."""
        lost = bad[self.data.contact_lost[bad] > 0]
        if len(lost):
            raise api.overflow_error(self.model, self.data, lost)
        row = int(bad[0])
        step = start + int(self.data.status[row]) if what == "step" else start
        quantity = "qacc"
        for name in _DIAGNOSE:
            if _first_bad(getattr(self.data, name)[row]) >= 0:
                quantity = name
                break
        arr = getattr(self.data, quantity)[row]
        flat = max(_first_bad(arr), 0)
        where = ", ".join(str(int(i)) for i in np.unravel_index(flat, arr.shape))
        value = arr.reshape(-1)[flat]
        rows = ", ".join(str(int(r)) for r in bad[:8])
        if quantity in _MOCAP:
            done = (
                "; mocap_pos and mocap_quat are inputs the physics never writes, so a bad one is "
                "refused whatever on_bad says (MuJoCo does not check them)"
            )
        else:
            done = " (with Simulator(..., on_bad='reset') they are reset instead, as MuJoCo does)"
        raise NonFiniteError(
            f"{quantity}[{where}] = {value:.6g} in row {row} at step {step} ({what}) is NaN, inf or "
            f"beyond 1e10 (MuJoCo's mjMAXVAL); rows that failed: {rows}{' ...' if len(bad) > 8 else ''}. "
            f"Those rows were not advanced{done}."
        )


_ENGINE_DIR = str(Path(__file__).parent)


def _caller_level() -> int:
    """warnings.warn's stacklevel that points at the first caller outside the engine."""
    frame, level = sys._getframe(2), 2
    while frame is not None and frame.f_code.co_filename.startswith(_ENGINE_DIR):
        frame, level = frame.f_back, level + 1
    return level


def _first_bad(a: np.ndarray) -> int:
    """Index of the first NaN, inf or |x| > 1e10 in a (flattened), or -1."""
    bad = np.flatnonzero(~(np.abs(a.reshape(-1)) <= T.MAXVAL))
    return int(bad[0]) if len(bad) else -1


def _check_snapshot_fields(snap: Snapshot, data: Data, k: int) -> None:
    """Refuse a snapshot whose fields are missing, mis-shaped or hold a bad value."""
    if not isinstance(snap.fields, dict) or set(snap.fields) != set(STATE_FIELDS):
        raise InvalidArgumentError(f"snapshot fields must be exactly {STATE_FIELDS}")
    for name in STATE_FIELDS:
        a = snap.fields[name]
        want = (k, *getattr(data, name).shape[1:])
        if not isinstance(a, np.ndarray) or a.shape != want or a.dtype != DATA_SPECS[name].dtype:
            want_dtype = np.dtype(DATA_SPECS[name].dtype).name
            got = (
                f"{a.dtype.name} of shape {a.shape}" if isinstance(a, np.ndarray) else f"a {type(a).__name__}"
            )
            raise InvalidArgumentError(
                f"snapshot field {name} must be {want_dtype} of shape {want}, got {got}"
            )
        if a.dtype.kind == "f" and _first_bad(a) >= 0:
            raise InvalidArgumentError(
                f"snapshot field {name} holds NaN, inf or a value beyond 1e10; refusing to restore it"
            )


# the disable flags a single forward pass may add (Simulator.forward): those the kernels read
# as they run, not those that choose the compiled stages or size the constraint buffers
PASS_DISABLE = {
    "actuation": T.DSBL_ACTUATION,
    "gravity": T.DSBL_GRAVITY,
    "spring": T.DSBL_SPRING,
    "damper": T.DSBL_DAMPER,
    "clampctrl": T.DSBL_CLAMPCTRL,
}


def _disable_bits(names) -> int:
    """The mjtDisableBit bits of the flag names `names` (PASS_DISABLE's keys)."""
    if isinstance(names, str):
        names = (names,)
    bits = 0
    for name in names:
        if name not in PASS_DISABLE:
            raise InvalidArgumentError(
                f"forward(disable=...): {name!r} is not a flag one pass can disable; "
                f"one of {sorted(PASS_DISABLE)}"
            )
        bits |= PASS_DISABLE[name]
    return bits
