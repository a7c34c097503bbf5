"""The one place RoboDyn touches Gymnasium's internals, with what each is for.

Gymnasium's public API lacks three things a RoboDyn env needs, so they are done here, and
tests/robogym/test_gymshim.py pins each to the installed Gymnasium's behaviour (an upgrade
that renames an internal fails those tests, not a user's run):

- An env's seeding state: `Env.np_random` has a public setter, but it forgets the seed
  (`np_random_seed` becomes -1), while a reset that fails and is undone must put back both
  the generator and the seed it came from (`seeding` / `set_seeding`, for Env and
  VectorEnv alike).
- `gym.make(id, max_episode_steps=N)` keeps N for the TimeLimit it wraps around the env and
  never hands it to the env's constructor; a RoboDyn env owns its episode length (so that
  `gym.make` can return the env itself, whose snapshot covers everything), so it reads N
  from the `make` call that is building it (`make_max_episode_steps`, from the call stack).
- A snapshot through Gymnasium's wrappers holds TimeLimit's step count and OrderEnforcing's
  reset flag (`WRAPPER_STATE`), and a restored env hands PassiveEnvChecker the restored
  observation as its first data (`prime_checker`).
"""

from __future__ import annotations

import sys

import gymnasium as gym
import numpy as np

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
    make_code = gym.envs.registration.make.__code__
    frame = sys._getframe(1)
    for _ in range(8):  # make -> the entry point -> (subclass __init__ chain) -> here
        if frame is None:
            return None
        if frame.f_code is make_code:
            return frame.f_locals.get("max_episode_steps")
        frame = frame.f_back
    return None


def prime_checker(wrapper, obs: np.ndarray) -> None:
    """Gymnasium's PassiveEnvChecker compares its first step's data with the reset's, which a
    restored env never returned: hand it the restored observation instead."""
    if not wrapper.checked_step and wrapper._previous_data is None:
        wrapper._previous_data = (obs.copy(), {})
