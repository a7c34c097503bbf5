"""The batched machinery shared by RoboDynEnv (one environment) and RoboDynVectorEnv.

EnvCore owns a task, its Physics with B rows, one random generator per row and the
per-row step counters. It checks actions, steps every row in one engine call, and takes
and restores snapshots of everything a rollout depends on. EnvFace is what the two env
classes show of it alike: `physics`, `dt`, and a `spec` that states their episode length.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from gymnasium import spaces
from gymnasium.envs.registration import EnvSpec

from robodyn.engine.errors import ModelError
from robodyn.engine.simulator import Snapshot
from robogym.checks import check_count, check_dtype
from robogym.errors import (
    ActionTypeError,
    ArgumentTypeError,
    IndexOutOfRangeError,
    InvalidActionError,
    InvalidArgumentError,
    SnapshotError,
)
from robogym.gymshim import with_length
from robogym.physics import Physics, asset_path
from robogym.task import Task

__all__ = ["EnvCore", "EnvFace", "EnvSnapshot", "InvalidActionError"]


@dataclass(frozen=True)
class EnvSnapshot:
    """Everything a rollout of some rows depends on: physics state (qpos, qvel, act, ctrl,
    time, applied forces, mocap poses), each row's random generator, step counters and task state, the
    env face's own per-row state (`extra`), and for a snapshot taken through the wrappers of
    gym.make, theirs (`wrappers`: TimeLimit's step count, OrderEnforcing's reset flag)."""

    kind: str  # "env" (RoboDynEnv) or "vector" (RoboDynVectorEnv): who may restore it
    signature: tuple  # (task class, model file, task parameters, model digest)
    physics: object  # engine.Snapshot
    rng_states: tuple  # bit_generator.state of each row
    elapsed: np.ndarray  # (k,) int64 env steps since each row's reset
    task_state: dict
    extra: dict  # the env face's own per-row state (autoreset flags, last observation)
    wrappers: tuple = ()  # ((wrapper name, settings dict, state dict), ...), outermost first


KINDS = {"env": "a single env (RoboDynEnv)", "vector": "a vector env (RoboDynVectorEnv)"}


class EnvCore:
    """B environments of one task, stepped together."""

    def __init__(self, task: Task, num_envs: int, nthread: int | None = None, dtype=np.float64):
        self.num_envs = check_count("num_envs", num_envs)
        # the spaces' dtype: what observations are handed out as and actions are expected in
        # (the physics, the task and the snapshots stay float64)
        self.dtype = check_dtype("dtype", dtype)
        self.task = task
        self.physics = _load(task.model_file, self.num_envs, nthread, task.capacity)
        self.elapsed = np.zeros(self.num_envs, dtype=np.int64)
        task.elapsed = self.elapsed  # (B,) env steps since each row's reset, counted here
        task.bind(self.physics)
        task.allocate_state()
        action_dtype = self.dtype if task.action_dtype is None else np.dtype(task.action_dtype)
        self.action_space = _with_dtype(task.action_space(), action_dtype)
        self.observation_space = _with_dtype(task.observation_space(), self.dtype)
        self.rngs = [np.random.default_rng() for _ in range(self.num_envs)]
        self.dt = self.physics.timestep * task.frame_skip

    # --- seeding and reset ------------------------------------------------------------------
    def seed_rows(self, rows: np.ndarray, seeds: list) -> None:
        for r, s in zip(rows, seeds, strict=True):
            self.rngs[r] = np.random.default_rng(s)

    def reset_rows(self, rows: np.ndarray) -> None:
        """Fresh episodes for `rows` (others untouched); derived quantities recomputed. Every
        row starts as MuJoCo's mj_resetData leaves it (qpos0, or the task's reset_keyframe;
        no velocity, applied forces, activations or controls, no solver warm start, time 0,
        mocap bodies at their declared pose), then the task draws its episode from there, so
        nothing of the last episode leaks into the next (a joint the task does not set, a
        warm start that would make two resets with one seed converge to slightly different
        first steps). Only the reset rows are recomputed: a step
        leaves every row's derived quantities current, so an autoreset of a few rows costs
        a forward pass of those rows, not of the batch. A reset that raises (the task's own
        reset, a robot the physics refuses, an initial state that is not finite) is undone
        first: the rows are as before it, their generators included."""
        rows = np.asarray(rows, dtype=np.int64)
        if len(rows) == 0:
            return
        with self.all_or_nothing(rows, "reset"):
            self._reset_rows(rows)

    def _reset_rows(self, rows: np.ndarray) -> None:
        self.physics.reset_data(rows, self.task.reset_keyframe)
        self.task.start_episodes(rows, [self.rngs[r] for r in rows])
        if self.task.randomizer is not None:  # last: the episode's other draws are unchanged
            self.task.randomizer.apply(self.physics.sim, rows, [self.rngs[r] for r in rows])
        self.elapsed[rows] = 0
        # the other rows' derived quantities are current already
        self.physics.sim.forward(rows, disable=self.task.reset_disable)

    @contextmanager
    def all_or_nothing(self, rows: np.ndarray, what: str):
        """A block after which `rows` are either as the block left them or, if it raised, as
        they were before it (their physics state and parameters, random generators, step
        counters and task state); the error propagates with a note saying so."""
        undo = self.undo_point(rows)
        try:
            yield
        except BaseException as e:
            self.roll_back(undo)
            e.add_note(f"the {what} of environments {rows.tolist()[:8]} was undone: they are as before it")
            raise

    def undo_point(self, rows: np.ndarray) -> tuple:
        """What roll_back needs to put `rows` back as they are now."""
        task_state = {k: np.array(v[rows]) for k, v in self.task.get_state().items()}
        rngs = [(self.rngs[r], self.rngs[r].bit_generator.state) for r in rows]
        return rows, self.physics.sim.snapshot(rows), rngs, self.elapsed[rows].copy(), task_state

    def roll_back(self, undo: tuple) -> None:
        """Put the rows of an undo_point back as they were when it was taken (the same
        generator objects, in the same states)."""
        rows, physics, rngs, elapsed, task_state = undo
        self.physics.sim.restore(physics, rows)
        for r, (rng, state) in zip(rows, rngs, strict=True):
            rng.bit_generator.state = state
            self.rngs[r] = rng
        self.elapsed[rows] = elapsed
        self.task.set_state(task_state, rows)

    # --- actions -------------------------------------------------------------------------------
    def check_actions(self, actions, batched: bool) -> np.ndarray:
        """(B, k) float64 actions clipped into the action space; raises InvalidActionError
        (and changes nothing) on a wrong shape, NaN or inf, and ActionTypeError (an
        InvalidActionError and a TypeError) on what is not made of real numbers: strings,
        complex numbers, bools, None, objects."""
        shape = self.action_space.shape
        want = (self.num_envs, *shape) if batched else shape
        try:
            a = np.asarray(actions)
        except ValueError as e:  # a ragged nesting of lists
            raise InvalidActionError(f"action must be an array of numbers with shape {want}: {e}") from None
        if a.dtype.kind not in "iuf":
            raise ActionTypeError(
                f"action must hold real numbers (ints or floats) with shape {want}, got dtype {a.dtype}"
            )
        if a.shape != want:
            raise InvalidActionError(f"action must have shape {want}, got {a.shape}")
        a = a.astype(np.float64, copy=False)
        finite = np.isfinite(a)
        if np.count_nonzero(finite) != finite.size:
            bad = np.argwhere(~finite.reshape(-1, *shape))[0]
            where = (
                f"environment {bad[0]}, component {bad[1:].tolist()}"
                if batched
                else f"component {bad[1:].tolist()}"
            )
            raise InvalidActionError(f"action contains NaN or inf ({where}); nothing was stepped")
        # np.clip's result for finite input, as two ufunc calls (np.clip's wrapper costs more)
        clipped = np.maximum(a.reshape(self.num_envs, *shape), self.action_space.low)
        return np.minimum(clipped, self.action_space.high, out=clipped)

    def step(self, actions: np.ndarray):
        """Step every row; returns (obs, reward, terminated, info dict of (B,) arrays), every
        array new (see Task.evaluate)."""
        self.task.act(actions)
        self.elapsed += 1
        obs = self.task.observe()
        reward, terminated, info = self.task.evaluate(actions)
        return obs, reward, terminated, info

    # --- snapshot / restore ---------------------------------------------------------------------
    def signature(self) -> tuple:
        """(task class, model file, task parameters, model digest): two envs with the same
        signature run the same task on the same model, so their snapshots fit each other."""
        params = tuple((k, _stable_repr(v)) for k, v in self.task.parameter_values().items())
        return (type(self.task).__qualname__, self.task.model_file, params, self.physics.sim.model_digest())

    def check_rows(self, rows, what: str = "rows") -> np.ndarray:
        """Row indices (ints in [0, num_envs), each once) as an int64 array."""
        idx = np.atleast_1d(np.asarray(rows))
        if idx.ndim != 1 or not (idx.dtype.kind in "iu" or (idx.size == 0 and idx.dtype.kind == "f")):
            raise ArgumentTypeError(f"{what} must be a list of environment indices (ints), got {rows!r}")
        idx = idx.astype(np.int64)
        if len(idx) == 0:
            raise InvalidArgumentError(f"{what} must name at least one environment")
        bad = idx[(idx < 0) | (idx >= self.num_envs)]
        if len(bad):
            raise IndexOutOfRangeError(
                f"{what}: environment {int(bad[0])} out of range; indices run from 0 to {self.num_envs - 1}"
            )
        if len(np.unique(idx)) != len(idx):
            raise InvalidArgumentError(f"{what} {idx.tolist()} name an environment twice")
        return idx

    def snapshot(self, rows: np.ndarray, kind: str, extra: dict) -> EnvSnapshot:
        """A snapshot of `rows` (checked indices) by an env face of `kind`, with its `extra`
        per-row arrays (copied)."""
        task_state = {k: np.array(v[rows]) for k, v in self.task.get_state().items()}
        return EnvSnapshot(
            kind=kind,
            signature=self.signature(),
            physics=self.physics.sim.snapshot(rows),
            rng_states=tuple(self.rngs[r].bit_generator.state for r in rows),
            elapsed=self.elapsed[rows].copy(),
            task_state=task_state,
            extra={k: np.array(v) for k, v in extra.items()},
        )

    def restore(self, snap: EnvSnapshot, rows, kind: str, extra: dict) -> np.ndarray:
        """Write a snapshot back into `rows` (default: the rows it was taken from); returns the
        rows. `extra` maps each key the env face keeps per row to (dtype, shape of one row):
        the snapshot's extra must hold exactly those. Everything is checked first (kind,
        task, parameters, model digest, number of rows, every array's dtype and shape, the
        random generators' states, the target rows); a snapshot that fails any check raises
        (SnapshotError, or TypeError for what is no snapshot) and nothing changes. The env
        face writes the extra arrays afterwards (they were checked here)."""
        self._check_snapshot(snap, kind, extra)
        k = len(snap.elapsed)
        idx = self.check_rows(snap.physics.rows if rows is None else rows, "restore rows")
        if len(idx) != k:
            raise SnapshotError(f"snapshot holds {k} environments, cannot restore into {len(idx)} rows")
        rngs = []
        for i, state in enumerate(snap.rng_states):
            g = np.random.default_rng()
            try:
                g.bit_generator.state = state
            except (TypeError, ValueError, KeyError) as e:
                raise SnapshotError(
                    f"snapshot row {i}: its random generator state is not a PCG64 state: {e}"
                ) from None
            rngs.append(g)
        # the engine checks its part whole before it writes; everything after it cannot fail
        try:
            self.physics.sim.restore(snap.physics, idx)
        except (TypeError, ValueError, IndexError) as e:
            raise SnapshotError(f"snapshot's physics refused: {e}") from None
        for r, g in zip(idx, rngs, strict=True):
            self.rngs[r] = g
        self.elapsed[idx] = snap.elapsed
        self.task.set_state(snap.task_state, idx)
        return idx

    def _check_snapshot(self, snap, kind: str, extra: dict) -> None:
        """Refuse a snapshot that does not fit this env (see restore); changes nothing."""
        if not isinstance(snap, EnvSnapshot):
            raise ArgumentTypeError(
                f"restore needs a snapshot taken by a RoboDyn env's snapshot(), got {type(snap).__name__}"
            )
        if snap.kind != kind:
            raise SnapshotError(
                f"snapshot was taken from {KINDS.get(snap.kind, repr(snap.kind))}; this is {KINDS[kind]}, "
                "which restores only its own kind of snapshot"
            )
        if kind == "vector" and (names := held_wrappers(snap)) is not None:
            raise SnapshotError(f"snapshot holds the state of wrappers ({names}); a vector env has none")
        ours = self.signature()
        if snap.signature != ours:
            raise SnapshotError(f"{_signature_difference(snap.signature, ours)}: refusing to restore it")
        if not isinstance(snap.physics, Snapshot):
            raise SnapshotError(
                f"snapshot's physics must be an engine Snapshot, got {type(snap.physics).__name__}"
            )
        rows = snap.physics.rows
        if not (isinstance(rows, np.ndarray) and rows.ndim == 1 and rows.dtype.kind in "iu"):
            raise SnapshotError(f"snapshot's physics rows must be a 1-d array of row indices, got {rows!r}")
        k = len(rows)
        if not (
            isinstance(snap.elapsed, np.ndarray)
            and snap.elapsed.dtype == np.int64
            and snap.elapsed.shape == (k,)
        ):
            raise SnapshotError(
                f"snapshot's step counters must be int64 of shape ({k},), got {snap.elapsed!r}"
            )
        if np.any(snap.elapsed < 0):
            raise SnapshotError(f"snapshot's step counters must be >= 0, got {snap.elapsed.tolist()}")
        if not isinstance(snap.rng_states, tuple) or len(snap.rng_states) != k:
            raise SnapshotError(
                f"snapshot must hold {k} random generator states (a tuple), got {snap.rng_states!r}"
            )
        ours_state = self.task.get_state()
        want = {name: (v.dtype, v.shape[1:]) for name, v in ours_state.items()}
        _check_arrays("task state", snap.task_state, want, k)
        _check_arrays("extra state", snap.extra, extra, k)


class EnvFace:
    """What RoboDynEnv and RoboDynVectorEnv show of their EnvCore (`self.core`) alike, and
    their spec: whatever spec Gymnasium gives the env (gym.make, gym.make_vec, unpickling),
    the env keeps it as a robogym.gymshim.EpisodeSpec whose `max_episode_steps` is the env's
    own episode length (`self.max_episode_steps`, None: never truncates), so `env.spec`
    states the limit the env applies."""

    core: EnvCore
    max_episode_steps: int | None = None

    @property
    def physics(self) -> Physics:
        """The task's Physics: the engine's state of every environment, read by name."""
        return self.core.physics

    @property
    def dt(self) -> float:
        """Seconds of simulated time per env step."""
        return self.core.dt

    @property
    def spec(self):
        return self.__dict__.get("_spec")

    @spec.setter
    def spec(self, value) -> None:
        if isinstance(value, EnvSpec):
            value = with_length(value, self.max_episode_steps)
        self.__dict__["_spec"] = value


def _load(model_file: str, batch: int, nthread: int | None, capacity: dict | None = None) -> Physics:
    """The Physics of a task's model: a file among the project's assets by name, or any MJCF
    file by its absolute path, with the task's contact and constraint-row capacities
    (load_mjcf's nconmax and nefcmax; None: the model's own). An MJCF the engine refuses
    raises its error with the file's path in the message."""
    path = Path(model_file)
    path = path if path.is_absolute() else asset_path(model_file)
    try:
        return Physics(path, batch, nthread, **(capacity or {}))
    except ModelError as e:
        if str(path) in str(e):
            raise
        raise type(e)(f"{path}: {e}") from e


def _stable_repr(value) -> str:
    """A parameter's value as a snapshot's signature compares it: repr, but a function by its
    module and qualified name (its repr holds its address, which differs between processes,
    so a pickled env could not restore its own snapshot)."""
    if callable(value) and hasattr(value, "__qualname__"):
        return f"{getattr(value, '__module__', '?')}.{value.__qualname__}"
    return repr(value)


def _with_dtype(space: spaces.Box, dtype: np.dtype) -> spaces.Box:
    """A Box space with its bounds in `dtype`."""
    if space.dtype == dtype:
        return space
    return spaces.Box(low=space.low.astype(dtype), high=space.high.astype(dtype), dtype=dtype)


def held_wrappers(snap: EnvSnapshot) -> str | None:
    """The names of the wrappers whose state a snapshot holds ("?" if its wrapper field is no
    tuple), or None when it holds none: a snapshot an env's own snapshot() took."""
    if isinstance(snap.wrappers, tuple) and not snap.wrappers:
        return None
    if not isinstance(snap.wrappers, tuple):
        return "?"
    return ", ".join(_wrapper_name(w) for w in snap.wrappers)


def _wrapper_name(w) -> str:
    """The name in a snapshot's wrapper entry (name, settings, state), or the entry itself."""
    return str(w[0]) if isinstance(w, tuple) and w else repr(w)


def _check_arrays(what: str, arrays, want: dict, k: int) -> None:
    """`arrays` is a dict holding exactly the keys of `want` (name -> (dtype, row shape)), each
    an array of that dtype and shape (k, *row shape), finite where it is float."""
    if not isinstance(arrays, dict) or set(arrays) != set(want):
        got = sorted(arrays) if isinstance(arrays, dict) else type(arrays).__name__
        raise SnapshotError(f"snapshot's {what} must hold exactly {sorted(want)}, got {got}")
    for name, (dtype, row) in want.items():
        a = arrays[name]
        shape = (k, *row)
        if not isinstance(a, np.ndarray) or a.dtype != dtype or a.shape != shape:
            got = f"{a.dtype} of shape {a.shape}" if isinstance(a, np.ndarray) else type(a).__name__
            raise SnapshotError(
                f"snapshot's {what} {name!r} must be {np.dtype(dtype)} of shape {shape}, got {got}"
            )
        if a.dtype.kind == "f" and not np.all(np.isfinite(a)):
            raise SnapshotError(f"snapshot's {what} {name!r} holds NaN or inf")


def _signature_difference(theirs, ours) -> str:
    """What differs between a snapshot's signature and this env's, in words."""
    if not (isinstance(theirs, tuple) and len(theirs) == 4):
        return f"snapshot's signature {theirs!r} is not a RoboDyn env's"
    if theirs[:2] != ours[:2]:
        return f"snapshot was taken from {theirs[0]} on {theirs[1]}; this env runs {ours[0]} on {ours[1]}"
    if theirs[2] != ours[2]:
        a, b = dict(theirs[2]), dict(ours[2])
        diff = [
            f"{n}={a.get(n, '(none)')} (here {b.get(n, '(none)')})"
            for n in sorted(a.keys() | b.keys())
            if a.get(n) != b.get(n)
        ]
        return f"snapshot was taken with other task parameters: {', '.join(diff)}"
    return "snapshot was taken from a different model (its digest differs: another geometry, mass or option)"
