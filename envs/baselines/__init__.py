"""Baseline controllers for RoboDyn tasks: a PD (PoseHold) and an iLQR MPC.

Every baseline follows the Policy protocol used by the evaluation CLI:

    policy.reset(env, rows)   # env: a RoboDynVectorEnv; rows: envs whose episodes just (re)started
    policy.act(env, obs)      # -> (num_envs, action_dim) actions for the current state of every env

Policies read the task's named readouts (privileged state), never raw observation indices.

    policy = make_baseline("mpc", env)          # name in BASELINES; dispatches on env.task's class
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

BASELINES = ("pd", "mpc")

# best PD of the crane sweep (crane_table(); tests/envs/test_baselines.py re-derives it)
CRANE_PD_OMEGA = 1.24
CRANE_PD_ZETA = 1.0


class Policy(Protocol):
    def reset(self, env, rows: np.ndarray) -> None: ...

    def act(self, env, obs: np.ndarray) -> np.ndarray: ...


def _crane_pd(env, omega: float = CRANE_PD_OMEGA, zeta: float = CRANE_PD_ZETA):
    from envs.baselines.crane import crane_pd

    return crane_pd(env, omega=omega, zeta=zeta)


def _crane_mpc(env, **kwargs):
    from envs.baselines.crane import crane_mpc

    return crane_mpc(env, **kwargs)


def _factories() -> dict:
    from envs.crane_v0 import CraneTask

    return {CraneTask: {"pd": _crane_pd, "mpc": _crane_mpc}}


def make_baseline(name: str, env, **kwargs) -> Policy:
    """The baseline `name` ("pd" or "mpc") for env's task; kwargs go to the task's constructor
    (crane: crane_pd(omega, zeta), defaults the sweep's best PD; crane_mpc(horizon, Q, R, ...)).
    Raises ValueError for an unknown name or a task without that baseline."""
    if name not in BASELINES:
        raise ValueError(f"unknown baseline {name!r}; choose one of {BASELINES}")
    task = getattr(env, "task", None)
    if task is None:
        raise ValueError(f"make_baseline needs a RoboDyn env with a .task, got {type(env).__name__}")
    for task_class, makers in _factories().items():
        if isinstance(task, task_class) and name in makers:
            return makers[name](env, **kwargs)
    raise ValueError(f"no {name!r} baseline for task {type(task).__name__}; baselines exist for: CraneTask")


__all__ = ["BASELINES", "Policy", "make_baseline"]
