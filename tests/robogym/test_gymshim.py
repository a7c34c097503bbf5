"""robogym/gymshim.py, the one place RoboDyn touches Gymnasium's internals, pinned to the
installed Gymnasium's behaviour: each internal it reads or writes is checked against the
public API that exposes it, so a Gymnasium that renames one fails here first."""

from __future__ import annotations

import copy
import dataclasses
import json
import pickle

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


def test_make_spec_is_the_spec_gym_make_is_making():
    assert gymshim.make_spec() is None  # no gym.make on the stack
    seen = []

    class Probe(gym.Env):
        observation_space = action_space = gym.spaces.Discrete(2)

        def __init__(self):
            seen.append(gymshim.make_spec())

    spec = gym.envs.registration.EnvSpec("RoboDynTest/Probe-v0", entry_point=Probe, max_episode_steps=3)
    gym.make(spec)
    assert seen == [spec]


def test_episode_spec_states_the_length_to_everyone_but_gym_makes_time_limit():
    """gym.make reads spec.max_episode_steps in its own frame to decide on its TimeLimit:
    an EpisodeSpec answers None there only, so the env is returned unwrapped while
    gym.spec, env.spec, copies, pickles, dataclasses.replace and make_vec see the length."""
    plain = gym.envs.registration.EnvSpec(
        "RoboDynTest/Plain-v0",
        entry_point="robodyn.envs.crane_v0:CraneEnv",
        order_enforce=False,
        disable_env_checker=True,
    )
    spec = gymshim.with_length(plain, 9)
    assert type(spec) is gymshim.EpisodeSpec and spec.max_episode_steps == 9
    assert plain.max_episode_steps is None  # with_length copies
    for same in (copy.deepcopy(spec), pickle.loads(pickle.dumps(spec)), dataclasses.replace(spec)):
        assert type(same) is gymshim.EpisodeSpec and same == spec and same.max_episode_steps == 9
    assert json.loads(spec.to_json())["max_episode_steps"] == 9
    env = gym.make(spec)
    assert type(env).__name__ == "CraneEnv" and env.max_episode_steps == 9  # no TimeLimit
    # a plain EnvSpec of the same length gets Gymnasium's TimeLimit, as gym.make documents
    wrapped = gym.make(dataclasses.replace(plain, max_episode_steps=9))
    assert isinstance(wrapped, gym.wrappers.TimeLimit) and wrapped.unwrapped.max_episode_steps == 9
    assert type(gym.spec(ID)) is gymshim.EpisodeSpec and gym.spec(ID).max_episode_steps == 400
