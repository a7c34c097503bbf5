"""robogym/gymshim.py, the one place RoboDyn touches Gymnasium's internals, pinned to the
installed Gymnasium's behaviour: each internal it reads or writes is checked against the
public API that exposes it, so a Gymnasium that renames one fails here first."""

from __future__ import annotations

import gymnasium as gym
import numpy as np

import robogym  # noqa: F401  (registers the tasks)
from robogym import gymshim

ID = "RoboDyn/Crane-v0"


def test_seeding_is_what_the_public_getters_read():
    for env in (gym.make(ID), gym.make_vec(ID, num_envs=2)):
        env.reset(seed=3)
        rng, seed = gymshim.seeding(env)
        assert rng is env.np_random and seed == env.np_random_seed == 3
        other = np.random.default_rng(9)
        gymshim.set_seeding(env, (other, 11))
        assert env.np_random is other and env.np_random_seed == 11
        gymshim.set_seeding(env, gym.utils.seeding.np_random(5))
        assert env.np_random_seed == 5


def test_make_max_episode_steps_reads_gym_makes_argument():
    assert gymshim.make_max_episode_steps() is None  # no gym.make on the stack
    assert gym.make(ID).unwrapped.max_episode_steps == 400  # the registered length
    assert gym.make(ID, max_episode_steps=7).unwrapped.max_episode_steps == 7
    assert gym.make(ID, max_episode_steps=-1).unwrapped.max_episode_steps is None  # never truncates


def test_the_wrapper_attributes_a_snapshot_holds_exist():
    env = gym.make(ID)
    limited = gym.wrappers.TimeLimit(env, max_episode_steps=5)
    ordered = gym.wrappers.OrderEnforcing(limited)
    checked = gym.wrappers.PassiveEnvChecker(gym.make(ID))
    for wrapper in (limited, ordered, checked):
        settings, state = gymshim.WRAPPER_STATE[type(wrapper).__name__]
        for name in (*settings, *state):
            assert hasattr(wrapper, name), (type(wrapper).__name__, name)
    assert limited._max_episode_steps == 5 == limited.spec.max_episode_steps
    ordered.reset(seed=0)
    assert ordered._has_reset and ordered.has_reset  # the private flag is what the public one reads
    limited.step(np.zeros(1))
    assert limited._elapsed_steps == 1
    assert checked.checked_step is False and checked._previous_data is None
    gymshim.prime_checker(checked, np.zeros(7))
    assert checked._previous_data[0].shape == (7,)
