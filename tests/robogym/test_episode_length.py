"""The episode length where libraries read it: `gym.spec(id).max_episode_steps` and
`env.spec.max_episode_steps` hold a task's length (robogym/gymshim.py's EpisodeSpec,
registered by robogym/registration.py), while the env keeps owning it: `gym.make(id)` adds no
TimeLimit (one step counter, the env's, which its snapshot holds), `gym.make(id,
max_episode_steps=N)` still sets both Gymnasium's TimeLimit and the env to N, and the native
vector env gets the length from `gym.make_vec`."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import robogym
from robogym.gymshim import EpisodeSpec

ID = "RoboDyn/Crane-v0"  # 400 steps; zero acceleration keeps the trolley on its rail
ZERO = np.zeros(1)


def _steps_to_truncation(env, limit: int = 1200) -> int:
    """Steps from a reset until the env reports truncated (never terminated on the way)."""
    env.reset(seed=0)
    for n in range(1, limit + 1):
        _, _, terminated, truncated, _ = env.step(ZERO)
        assert not terminated
        if truncated:
            return n
    return -1


def test_every_registered_task_states_its_length_in_its_spec():
    for entry in robogym.TASKS:
        spec = gym.spec(entry.id)
        assert type(spec) is EpisodeSpec
        assert spec.max_episode_steps == entry.max_episode_steps
        assert entry.max_episode_steps is None or entry.max_episode_steps > 0  # None: no time limit
        assert "max_episode_steps" not in spec.kwargs  # one source: the spec's own field


def test_a_task_without_a_time_limit_never_truncates_unless_made_with_one():
    """A task registered without a length (dm_control's lqr, time_limit=inf): gym.make gives
    the env itself, which never truncates, as does the vector env; gym.make's own
    max_episode_steps still sets one."""
    unlimited = "RoboDyn/dmc-lqr-lqr_2_1-v0"
    assert gym.spec(unlimited).max_episode_steps is None
    env = gym.make(unlimited)
    assert type(env).__name__ == "DmcLqrLqr21Env" and env.max_episode_steps is None
    env.reset(seed=0)
    assert not any(env.step(ZERO)[3] for _ in range(450))
    assert gym.make_vec(unlimited, num_envs=2).max_episode_steps is None
    short = gym.make(unlimited, max_episode_steps=7)
    short.reset(seed=0)
    assert [short.step(ZERO)[3] for _ in range(7)] == [False] * 6 + [True]


def test_gym_make_returns_the_env_itself_which_truncates_at_exactly_the_spec_length():
    env = gym.make(ID)
    assert type(env).__name__ == "CraneEnv"  # no TimeLimit: the env's is the only counter
    assert env.spec.max_episode_steps == env.max_episode_steps == 400
    assert _steps_to_truncation(env) == 400
    assert _steps_to_truncation(env) == 400  # and again after a reset


@pytest.mark.parametrize("n", [1, 7, 450])
def test_gym_make_max_episode_steps_override_truncates_both_counters_at_n(n):
    env = gym.make(ID, max_episode_steps=n)
    assert isinstance(env, gym.wrappers.TimeLimit)  # gym.make's own argument adds its TimeLimit
    assert env.spec.max_episode_steps == env.unwrapped.max_episode_steps == n
    assert env.unwrapped.spec.max_episode_steps == n
    env.reset(seed=0)
    for k in range(1, n + 1):
        _, _, _, truncated, _ = env.step(ZERO)
        assert env.unwrapped.core.elapsed[0] == env._elapsed_steps == k  # the two counters agree
        assert truncated == (k == n)


def test_no_limit_through_gym_make_minus_one():
    env = gym.make(ID, max_episode_steps=-1)
    assert type(env).__name__ == "CraneEnv" and env.spec.max_episode_steps is None
    assert _steps_to_truncation(env, limit=450) == -1


def test_a_spec_with_another_length_makes_an_env_of_that_length():
    # gym.make(spec): the length of the spec being made, not the registry's, and no TimeLimit
    for spec in (dataclasses.replace(gym.spec(ID), max_episode_steps=12), copy.deepcopy(gym.spec(ID))):
        env = gym.make(spec)
        assert type(env).__name__ == "CraneEnv"
        assert env.max_episode_steps == env.spec.max_episode_steps == spec.max_episode_steps
    short = gym.make(dataclasses.replace(gym.spec(ID), max_episode_steps=12))
    assert _steps_to_truncation(short) == 12
    again = gym.make(short.spec)  # an env's spec makes the same env back
    assert type(again).__name__ == "CraneEnv" and again.max_episode_steps == 12


def test_snapshots_restore_the_step_count_and_so_the_truncation():
    env = gym.make(ID)
    env.reset(seed=3)
    for _ in range(395):
        env.step(ZERO)
    snap = env.snapshot()
    first = [env.step(ZERO)[3] for _ in range(5)]
    assert first == [False] * 4 + [True]
    env.restore(snap)
    assert [env.step(ZERO)[3] for _ in range(5)] == first


def test_snapshots_through_the_override_restore_both_counters():
    env = gym.make(ID, max_episode_steps=10)
    env.reset(seed=3)
    for _ in range(7):
        env.step(ZERO)
    snap = robogym.snapshot(env)
    assert [env.step(ZERO)[3] for _ in range(3)] == [False, False, True]
    env.reset(seed=4)  # both counters back to 0
    robogym.restore(env, snap)
    assert env._elapsed_steps == env.unwrapped.core.elapsed[0] == 7
    assert [env.step(ZERO)[3] for _ in range(3)] == [False, False, True]


def test_pickled_env_keeps_its_spec_and_length():
    env = gym.make(ID)
    env.reset(seed=0)
    back = pickle.loads(pickle.dumps(env))
    assert type(back.spec) is EpisodeSpec and back.spec == env.spec
    assert back.spec.max_episode_steps == back.max_episode_steps == 400


@pytest.mark.parametrize("n", [None, 5])
def test_make_vec_truncates_every_row_at_the_length(n):
    kwargs = {} if n is None else {"max_episode_steps": n}
    vec = gym.make_vec(ID, num_envs=3, autoreset_mode=AutoresetMode.NEXT_STEP, **kwargs)
    want = 400 if n is None else n
    assert isinstance(vec, robogym.RoboDynVectorEnv)
    assert vec.max_episode_steps == vec.spec.max_episode_steps == want
    vec.reset(seed=0)
    for k in range(1, want + 1):
        _, _, terminated, truncated, _ = vec.step(np.zeros((3, 1)))
        assert not terminated.any()
        assert truncated.tolist() == [k == want] * 3
    vec.step(np.zeros((3, 1)))  # NEXT_STEP: the rows start again, from step 0
    assert vec.core.elapsed.tolist() == [0, 0, 0]


def test_sync_make_vec_builds_single_envs_of_the_spec_length():
    vec = gym.make_vec(ID, num_envs=2, vectorization_mode="sync")
    assert [type(e).__name__ for e in vec.envs] == ["CraneEnv", "CraneEnv"]  # no TimeLimit inside
    assert [e.max_episode_steps for e in vec.envs] == [400, 400]
