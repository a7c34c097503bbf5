"""The one place RoboDyn touches Gymnasium's internals, with what each is for.

Gymnasium's public API lacks four things a RoboDyn env needs, so they are done here, and
tests/robogym/test_gymshim.py pins each to the installed Gymnasium's behaviour (an upgrade
that renames an internal fails those tests, not a user's run):

- An env's seeding state: `Env.np_random` has a public setter, but it forgets the seed
  (`np_random_seed` becomes -1), while a reset that fails and is undone must put back both
  the generator and the seed it came from (`seeding` / `set_seeding`, for Env and
  VectorEnv alike).
- `gym.make(id, max_episode_steps=N)` keeps N for the TimeLimit it wraps around the env and
  never hands it to the env's constructor; a RoboDyn env owns its episode length (so that
  `gym.make` can return the env itself, whose snapshot covers everything), so it reads N
  from the `make` call that is building it (`make_max_episode_steps`, from the call stack),
  and the spec that call is making (`make_spec`).
- A spec that states the episode length without gym.make acting on it: `gym.make(id)`
  wraps a TimeLimit around the env whenever the spec's `max_episode_steps` is set, and
  `gym.make_vec` refuses a vector entry point when the spec has `additional_wrappers`, so a
  RoboDyn task's length could only ride in the spec's kwargs, where libraries reading
  `spec.max_episode_steps` do not look. `EpisodeSpec` is an EnvSpec whose
  `max_episode_steps` is the length for every reader except the one line of gym.make that
  decides on its TimeLimit (found by its code object, as `make_max_episode_steps` finds the
  call): `gym.spec(id).max_episode_steps` and `env.spec.max_episode_steps` say the length,
  `gym.make_vec` hands it to the vector env, and `gym.make(id)` still returns the env itself,
  which truncates its own episodes (one counter, the env's, which its snapshot holds).
  `register_with_length` puts one in Gymnasium's registry; `with_length` makes one from any
  EnvSpec.
- A snapshot through Gymnasium's wrappers holds TimeLimit's step count and OrderEnforcing's
  reset flag (`WRAPPER_STATE`), and a restored env hands PassiveEnvChecker the restored
  observation as its first data (`prime_checker`).
"""

from __future__ import annotations

import dataclasses
import sys

import gymnasium as gym
import numpy as np
from gymnasium.envs.registration import EnvSpec

# the Gymnasium wrappers a snapshot can be taken through, and what of each it holds:
# name -> (settings that must agree on restore, state attributes saved and written back)
WRAPPER_STATE = {
    "TimeLimit": (("_max_episode_steps",), ("_elapsed_steps",)),
    "OrderEnforcing": ((), ("_has_reset",)),
    "PassiveEnvChecker": ((), ()),  # its flags only say whether it checked yet; no rollout state
}


def seeding(env) -> tuple:
    """(generator, seed) of a Gymnasium Env or VectorEnv, as set_seeding takes them back."""
    return env._np_random, env._np_random_seed


def set_seeding(env, state: tuple) -> None:
    """Give an env a generator and the seed it came from (`seeding`'s result, or what
    gymnasium.utils.seeding.np_random returns)."""
    env._np_random, env._np_random_seed = state


def make_max_episode_steps() -> int | None:
    """The `max_episode_steps` argument of the gymnasium.make call that is building an env
    right now; None when no gym.make call is on the stack or it was not given (-1: make adds
    no TimeLimit and the episodes never truncate)."""
    frame = _make_frame(sys._getframe(1))
    return None if frame is None else frame.f_locals.get("max_episode_steps")


def make_spec() -> EnvSpec | None:
    """The EnvSpec that the gymnasium.make call building an env right now is making (the
    registry's, or the one passed to make); None when no gym.make call is on the stack."""
    frame = _make_frame(sys._getframe(1))
    spec = None if frame is None else frame.f_locals.get("env_spec")
    return spec if isinstance(spec, EnvSpec) else None


def _make_frame(frame):
    """The frame of the gymnasium.make call among the few innermost callers, or None."""
    make_code = gym.envs.registration.make.__code__
    for _ in range(8):  # make -> the entry point -> (subclass __init__ chain) -> here
        if frame is None:
            return None
        if frame.f_code is make_code:
            return frame
        frame = frame.f_back
    return None


class EpisodeSpec(EnvSpec):
    """An EnvSpec whose `max_episode_steps` is the env's own episode length: every reader
    sees it (gym.spec(id), env.spec, gym.make_vec, libraries), except gymnasium.make itself,
    which reads it only to decide whether to wrap a TimeLimit around the env and sees None,
    so the env it returns is the env, truncating its own episodes. Everything else is
    Gymnasium's EnvSpec (a dataclass: equality, copies, pickling and dataclasses.replace keep
    this class and the length)."""

    @property
    def max_episode_steps(self) -> int | None:
        if sys._getframe(1).f_code is gym.envs.registration.make.__code__:
            return None  # gym.make's TimeLimit decision: the env truncates itself
        return self.__dict__.get("_episode_length")

    @max_episode_steps.setter
    def max_episode_steps(self, value: int | None) -> None:
        self.__dict__["_episode_length"] = value


def with_length(spec: EnvSpec, max_episode_steps: int | None) -> EpisodeSpec:
    """An EpisodeSpec holding what `spec` holds, with `max_episode_steps` as its length."""
    values = {f.name: getattr(spec, f.name) for f in dataclasses.fields(EnvSpec) if f.init}
    values["kwargs"] = dict(values["kwargs"])
    values["max_episode_steps"] = max_episode_steps
    return EpisodeSpec(**values)


def register_with_length(env_id: str, max_episode_steps: int | None) -> None:
    """Replace the registered spec of `env_id` (gym.register's, with its max_episode_steps
    None so that the registration itself adds no wrapper) by an EpisodeSpec of that length."""
    gym.registry[env_id] = with_length(gym.registry[env_id], max_episode_steps)


def prime_checker(wrapper, obs: np.ndarray) -> None:
    """Gymnasium's PassiveEnvChecker compares its first step's data with the reset's, which a
    restored env never returned: hand it the restored observation instead."""
    if not wrapper.checked_step and wrapper._previous_data is None:
        wrapper._previous_data = (obs.copy(), {})
