"""The batched machinery shared by RoboDynEnv (one environment) and RoboDynVectorEnv.

EnvCore owns a task, its Physics with B rows, one random generator per row and the
per-row step counters. It checks actions, steps every row in one engine call, and takes
and restores snapshots of everything a rollout depends on.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.errors import RoboDynError
from robogym.physics import Physics, asset_path
from robogym.task import Task


class InvalidActionError(RoboDynError, ValueError):
    """An action of the wrong shape, type or with NaN/inf; nothing was changed."""


@dataclass(frozen=True)
class EnvSnapshot:
    """Everything a rollout of some rows depends on: physics state (qpos, qvel, act, ctrl,
    time, applied forces), each row's random generator, step counters and task state."""

    signature: tuple  # (task class, model file, task parameters, model signature)
    physics: object  # engine.Snapshot
    rng_states: tuple  # bit_generator.state of each row
    elapsed: np.ndarray  # (k,) env steps since each row's reset
    task_state: dict
    extra: dict  # the env face's own per-row state (autoreset flags, last observation)


class EnvCore:
    """B environments of one task, stepped together."""

    def __init__(self, task: Task, num_envs: int, nthread: int | None = None):
        if num_envs < 1:
            raise ValueError(f"num_envs must be >= 1, got {num_envs}")
        self.task = task
        self.num_envs = int(num_envs)
        self.physics = Physics(asset_path(task.model_file), self.num_envs, nthread)
        task.bind(self.physics)
        self.action_space = task.action_space()
        self.observation_space = task.observation_space()
        self.rngs = [np.random.default_rng() for _ in range(self.num_envs)]
        self.elapsed = np.zeros(self.num_envs, dtype=np.int64)
        self.dt = self.physics.timestep * task.frame_skip

    # --- seeding and reset ------------------------------------------------------------------
    def seed_rows(self, rows: np.ndarray, seeds: list) -> None:
        for r, s in zip(rows, seeds, strict=True):
            self.rngs[r] = np.random.default_rng(s)

    def reset_rows(self, rows: np.ndarray) -> None:
        """Fresh episodes for `rows` (others untouched); derived quantities recomputed."""
        rows = np.asarray(rows, dtype=np.int64)
        if len(rows) == 0:
            return
        d = self.physics.data
        for name in ("qfrc_applied", "xfrc_applied", "act", "ctrl"):
            getattr(d, name)[rows] = 0.0
        d.time[rows] = 0.0
        self.task.reset_rows(rows, [self.rngs[r] for r in rows])
        self.elapsed[rows] = 0
        self.physics.sim.forward()

    # --- actions -------------------------------------------------------------------------------
    def check_actions(self, actions, batched: bool) -> np.ndarray:
        """(B, k) float64 actions clipped into the action space; raises InvalidActionError
        (and changes nothing) on a wrong shape, a non-numeric type, NaN or inf."""
        shape = self.action_space.shape
        want = (self.num_envs, *shape) if batched else shape
        try:
            a = np.asarray(actions, dtype=np.float64)
        except (TypeError, ValueError) as e:
            raise InvalidActionError(f"action must be numeric with shape {want}: {e}") from None
        if a.shape != want:
            raise InvalidActionError(f"action must have shape {want}, got {a.shape}")
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
        self.task.apply_action(actions)
        self.elapsed += 1
        obs = self.task.observe()
        reward, terminated, info = self.task.evaluate(actions)
        return obs, reward, terminated, info

    # --- snapshot / restore ---------------------------------------------------------------------
    def signature(self) -> tuple:
        # the task's parameters: its public attributes, less the physics and the task state
        skip = {"physics", *self.task.get_state()}
        public = {k: v for k, v in vars(self.task).items() if k not in skip and k[0] != "_"}
        params = tuple(sorted((k, repr(v)) for k, v in public.items()))
        sim = self.physics.sim
        model_sig = (sim.model.nq, sim.model.nv, sim.model.nu, sim.model.body_mass.tobytes())
        return (type(self.task).__qualname__, self.task.model_file, params, model_sig)

    def snapshot(self, rows: np.ndarray, extra: dict) -> EnvSnapshot:
        rows = np.asarray(rows, dtype=np.int64)
        task_state = {k: np.array(v[rows]) for k, v in self.task.get_state().items()}
        return EnvSnapshot(
            signature=self.signature(),
            physics=self.physics.sim.snapshot(rows),
            rng_states=tuple(self.rngs[r].bit_generator.state for r in rows),
            elapsed=self.elapsed[rows].copy(),
            task_state=task_state,
            extra={k: np.array(v) for k, v in extra.items()},
        )

    def restore(self, snap: EnvSnapshot, rows: np.ndarray | None = None) -> np.ndarray:
        """Write a snapshot back (into the rows it came from by default); returns the rows."""
        if not isinstance(snap, EnvSnapshot):
            raise TypeError(f"restore needs a snapshot taken by a RoboDyn env, got {type(snap).__name__}")
        if snap.signature != self.signature():
            theirs = f"{snap.signature[0]} on {snap.signature[1]}"
            ours = f"{type(self.task).__qualname__} on {self.task.model_file}"
            raise ValueError(
                f"snapshot was taken from {theirs} (with its own parameters); this env runs {ours}: "
                "refusing to restore it"
            )
        rows = snap.physics.rows if rows is None else np.asarray(rows, dtype=np.int64)
        if len(rows) != len(snap.physics.rows):
            raise ValueError(
                f"snapshot holds {len(snap.physics.rows)} environments, cannot restore into {len(rows)}"
            )
        self.physics.sim.restore(snap.physics, rows)
        for r, state in zip(rows, snap.rng_states, strict=True):
            g = np.random.default_rng()
            g.bit_generator.state = state
            self.rngs[r] = g
        self.elapsed[rows] = snap.elapsed
        self.task.set_state(snap.task_state, rows)
        self.physics.sim.forward()
        return rows
