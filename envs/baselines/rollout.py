"""Rollouts: where the planners run control sequences forward and learn what they are worth.

Both planners of envs/baselines roll their plans out here:

* `rollout(dynamics, x0, u)` runs a planning model x' = f(x, u) (an ilqr.Dynamics: the
  engine's own control step, EngineDynamics, or its linearization, LinearizedDynamics) over a
  batch of open-loop control sequences. iLQR rolls its initial plan out with it; the sampling
  planner, through ModelRollouts, rolls its candidates out with it.
* Scoring a batch of candidates: the sampling planner hands (B, S, T, m) controls, S candidate
  sequences of T steps for each of the env's B rows, and gets (B, S) returns (higher is
  better) from one of two sources:

  TaskRollouts   the task itself: each row's whole env state (physics, task state, random
                 generators: `env.snapshot`) copied into S rows of a private vector env of the
                 same task, stepped through the task's own actuation, observation and reward;
                 the return is sum_t gamma^t r_t, with r the task's planning reward
                 (Task.planning_reward) counted until the copy's episode terminates;
  ModelRollouts  a planning model and a cost: x from `rollout` from each row's state, and the
                 return -cost(x, u) (for an iLQR MPC: its own model, reference and tracking
                 cost, mpc.model_rollouts, so that the two planners optimize the same problem).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from robogym.core import EnvSnapshot
from robogym.errors import InvalidArgumentError


def rollout(dynamics, x0: np.ndarray, u: np.ndarray) -> np.ndarray:
    """(B, T+1, n) states x_{t+1} = f(x_t, u_t) from x0 (B, n) under u (B, T, m), f =
    dynamics.step (an ilqr.Dynamics)."""
    B, T, _ = u.shape
    x = np.empty((B, T + 1, x0.shape[-1]))
    x[:, 0] = x0
    for t in range(T):
        x[:, t + 1] = dynamics.step(x[:, t], u[:, t])
    return x


def repeat_snapshot(snap: EnvSnapshot, n: int) -> EnvSnapshot:
    """The snapshot of k rows with every row repeated n times in place (row i becomes rows
    i n ... i n + n - 1): the state to restore into k n planning rows."""
    p = snap.physics
    own = None if p.params is None else {k: np.repeat(v, n, axis=0) for k, v in p.params.items()}
    physics = p._replace(
        rows=np.arange(len(p.rows) * n),
        fields={k: np.repeat(v, n, axis=0) for k, v in p.fields.items()},
        params=own,
    )
    return EnvSnapshot(
        kind=snap.kind,
        signature=snap.signature,
        physics=physics,
        rng_states=tuple(s for s in snap.rng_states for _ in range(n)),
        elapsed=np.repeat(snap.elapsed, n),
        task_state={k: np.repeat(v, n, axis=0) for k, v in snap.task_state.items()},
        extra={k: np.repeat(v, n, axis=0) for k, v in snap.extra.items()},
    )


class TaskRollouts:
    """Candidates scored by the task itself, on a private vector env of env's task with
    env.num_envs x `samples` rows (never reset: every `begin` restores all of them).

    begin(env) copies each row's state into its `samples` planning rows (and the task hides
    from them what the agent cannot know ahead: Task.hide_future, e.g. scheduled pushes);
    returns(env, u) runs u (B, samples, T, m) from there, every call from the same state.
    gamma: the return's discount. Planning never writes env: it reads one snapshot per begin.
    """

    horizon = None  # any horizon

    def __init__(self, env, samples: int, gamma: float = 1.0):
        if not (np.isfinite(gamma) and 0 < gamma <= 1):
            raise InvalidArgumentError(f"gamma must be in (0, 1], got {gamma!r}")
        self.samples, self.gamma = int(samples), float(gamma)
        self.env = _planning_env(env, env.num_envs * self.samples)
        self._snap: EnvSnapshot | None = None

    def begin(self, env) -> None:
        self._snap = repeat_snapshot(env.snapshot(), self.samples)

    def returns(self, env, u: np.ndarray) -> np.ndarray:
        """(B, S) sum_t gamma^t r_t of each candidate over its T steps, until it terminates."""
        if self._snap is None:
            raise RuntimeError("TaskRollouts.returns before begin(env): no state to plan from")
        penv = self.env
        rows = np.arange(penv.num_envs)
        penv.restore(self._snap, rows)
        penv.task.hide_future(rows)
        B, S, T, m = u.shape
        u = u.reshape(B * S, T, m)
        total = np.zeros(B * S)
        alive = np.ones(B * S, dtype=bool)
        for t in range(T):
            _, reward, terminated, _ = penv.core.step(np.ascontiguousarray(u[:, t]))
            reward = penv.task.planning_reward(reward)
            total += np.where(alive, self.gamma**t * reward, 0.0)
            alive &= ~terminated
            if not alive.any():
                break
        _check_finite(total, S)
        return total.reshape(B, S)


class ModelRollouts:
    """Candidates scored on a planning model: x = rollout(dynamics, x0, u) from every row's
    state x0 = state(env) (B, n), and the return -cost(env, x, u) with x (B, S, T+1, n), u
    (B, S, T, m) -> (B, S). horizon: the T the cost is written for (None: any).

    dynamics: an ilqr.Dynamics (only its step is used); its controls are the env's actions."""

    def __init__(self, dynamics, state: Callable, cost: Callable, horizon: int | None = None):
        self.dynamics, self.state, self.cost = dynamics, state, cost
        self.horizon = None if horizon is None else int(horizon)
        self._x0: np.ndarray | None = None

    def begin(self, env) -> None:
        self._x0 = np.asarray(self.state(env), dtype=np.float64)

    def returns(self, env, u: np.ndarray) -> np.ndarray:
        if self._x0 is None:
            raise RuntimeError("ModelRollouts.returns before begin(env): no state to plan from")
        B, S, T, m = u.shape
        x0 = np.repeat(self._x0, S, axis=0)
        x = rollout(self.dynamics, x0, u.reshape(B * S, T, m)).reshape(B, S, T + 1, -1)
        total = -np.asarray(self.cost(env, x, u), dtype=np.float64).reshape(B * S)
        _check_finite(total, S)
        return total.reshape(B, S)


def _check_finite(total: np.ndarray, S: int) -> None:
    if not np.all(np.isfinite(total)):
        bad = np.flatnonzero(~np.isfinite(total))[0]
        raise FloatingPointError(
            f"planning rollout of env {bad // S}, candidate {bad % S} returned {total[bad]}"
        )


def _planning_env(env, rows: int):
    """A private vector env of env's task and parameters with `rows` rows (never reset: each
    plan restores into all of its rows), on env's thread count."""
    task_kwargs = getattr(env, "_task_kwargs", None)
    if task_kwargs is None or not hasattr(env, "snapshot"):
        raise InvalidArgumentError(
            "the sampling planner needs a RoboDyn vector env (it plans on a copy of its task), "
            f"got {type(env).__name__}"
        )
    return type(env)(
        num_envs=rows, autoreset_mode="disabled", max_episode_steps=None, nthread=env._nthread, **task_kwargs
    )
