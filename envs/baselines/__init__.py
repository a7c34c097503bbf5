"""Baseline controllers for RoboDyn tasks: a PD (PoseHold), an iLQR MPC, and a sampling MPC.

Every baseline follows the Policy protocol used by the evaluation CLI:

    policy.reset(env, rows)   # env: a RoboDynVectorEnv; rows: envs whose episodes just (re)started
    policy.act(env, obs)      # -> (num_envs, action_dim) actions for the current state of every env

Policies read the task's named readouts (privileged state), never raw observation indices.
A task declares its baselines where it registers itself (robogym.registration.TaskEntry):

    policy = make_baseline("mpc", env)          # the factory the env's task registered as "mpc"

Every task also has the baselines of GENERIC, which need nothing of the task but its env:
"sampling" is sampling-based MPC on the task's own reward (envs/baselines/sampling.py). They
are evaluated when named, never by default.
"""

from __future__ import annotations

import inspect
from typing import Protocol

import numpy as np

from robogym import registration
from robogym.errors import InvalidArgumentError

# baselines every task has: name -> "module:factory"
GENERIC = {"sampling": "robodyn.envs.baselines.sampling:sampling_planner"}


def __getattr__(name: str):
    """BASELINES: every baseline name some registered task declares, and the generic ones,
    read when asked (tasks register as their modules are imported)."""
    if name == "BASELINES":
        return tuple(sorted({b for t in registration.TASKS for b in t.baselines} | set(GENERIC)))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Policy(Protocol):
    def reset(self, env, rows: np.ndarray) -> None: ...

    def act(self, env, obs: np.ndarray) -> np.ndarray: ...


def task_baselines(entry) -> tuple[str, ...]:
    """The baseline names a task entry can make: its own, then the generic ones."""
    return (*entry.baselines, *(g for g in GENERIC if g not in entry.baselines))


def baseline_factory(entry, name: str):
    """The factory of task entry's baseline `name`: the one the task registered, else the
    generic one (a name in task_baselines(entry))."""
    return registration.load(entry.baselines.get(name) or GENERIC[name])


def takes_samples(entry, name: str) -> bool:
    """Whether entry's baseline `name` is a sampling planner made with a number of candidate
    plans: its factory takes `samples`."""
    return "samples" in inspect.signature(baseline_factory(entry, name)).parameters


def make_baseline(name: str, env, **kwargs) -> Policy:
    """The baseline `name` of env's task (its registered factory, or a generic one, called
    with env and kwargs). Raises InvalidArgumentError naming the task's baselines for a name
    it does not have."""
    task = getattr(env, "task", None)
    if task is None:
        raise InvalidArgumentError(
            f"make_baseline needs a RoboDyn env with a .task, got {type(env).__name__}"
        )
    entry = registration.entry_of(env)
    if entry is None or name not in task_baselines(entry):
        declared = "none" if entry is None else ", ".join(task_baselines(entry))
        task_name = type(task).__name__ if entry is None else entry.id
        raise InvalidArgumentError(f"{task_name} has no baseline {name!r} (its baselines: {declared})")
    return baseline_factory(entry, name)(env, **kwargs)


__all__ = [
    "BASELINES",
    "GENERIC",
    "Policy",
    "baseline_factory",
    "make_baseline",
    "takes_samples",
    "task_baselines",
]
