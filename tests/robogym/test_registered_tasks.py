"""The checks every registered task gets: each test runs once per id of `robogym.TASKS`, plus
the test task `RoboDynTest/FloatingArm-v0` (tests/robogym/floating_arm_task.py, a floating
base under pd_target actuation), so a new task is covered by registering it.

Single env: registration, Gymnasium's and stable-baselines3's `check_env`, the passive env
checker, determinism and randomized starts, reward = sum of the `reward_*` terms in info,
bad actions refused without a change, clipping, snapshot replay, pickling, rgb_array frames.
Vector env: make_vec gives the native env, row i equals a single env seeded with seed + i,
seeding, determinism across autoresets, bad actions, pickling, one frame per row.
Task-specific checks (the crane's numbers, its parameters) stay in test_env.py and
test_vector_env.py. Every check takes a few steps, so the whole file stays fast.
"""

from __future__ import annotations

import pickle
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import robogym
from tests.robogym import floating_arm_task

ENTRIES = {t.id: t for t in robogym.TASKS}
IDS = [*ENTRIES, floating_arm_task.TASK_ID]
N = 4  # rows of the vector envs

pytestmark = pytest.mark.parametrize("env_id", IDS)


def _actions(env, steps: int, seed: int) -> np.ndarray:
    """(steps, *action shape) actions drawn uniformly from the env's action box."""
    space = env.action_space
    return np.random.default_rng(seed).uniform(space.low, space.high, (steps, *space.shape))


def _rollout(env, actions) -> list[tuple]:
    """(obs, reward, terminated, truncated) of each step under `actions`."""
    out = []
    for a in actions:
        obs, r, term, trunc, _ = env.step(a)
        out.append((np.array(obs), r, term, trunc))
    return out


def _assert_same(first, second) -> None:
    for (x, r, *ends), (y, s, *ends2) in zip(first, second, strict=True):
        np.testing.assert_array_equal(x, y)
        assert r == s and ends == ends2


# --- registration --------------------------------------------------------------------------------
def test_registered_with_string_entry_points(env_id):
    spec = gym.spec(env_id)
    assert isinstance(spec.entry_point, str) and isinstance(spec.vector_entry_point, str)
    entry = ENTRIES.get(env_id)
    if entry is not None:  # a task of robogym.TASKS: the registry holds its entry as it is
        assert (spec.entry_point, spec.vector_entry_point) == (entry.entry_point, entry.vector_entry_point)
        assert spec.max_episode_steps == entry.max_episode_steps
        assert isinstance(gym.make("robogym:" + env_id), robogym.RoboDynEnv)
    # the spec states the episode length (None for a task without a time limit, dm_control's
    # lqr) and the env owns it, with its order checks: gym.make adds no wrapper, so the env it
    # returns has snapshot() and restore()
    env = gym.make(env_id)
    assert isinstance(env, robogym.RoboDynEnv)
    assert spec.max_episode_steps is None or isinstance(spec.max_episode_steps, int)
    assert env.max_episode_steps == spec.max_episode_steps == env.spec.max_episode_steps
    assert "max_episode_steps" not in spec.kwargs
    venv = gym.make_vec(env_id, num_envs=2)
    assert isinstance(venv, robogym.RoboDynVectorEnv)
    assert venv.max_episode_steps == spec.max_episode_steps == venv.spec.max_episode_steps


# --- the task's declarations and its documentation -------------------------------------------------
def test_documented_parameters_are_the_declared_ones(env_id):
    """The env's documentation shows the table made from the task's declarations (every
    parameter with its declared default and range, and a line of its own), and a task built
    without keywords holds exactly the declared defaults: the defaults are written once."""
    env = gym.make(env_id)
    task_class = type(env.unwrapped.task)
    params = task_class.params
    assert params and all(p.doc for p in params.values())
    for cls in (type(env.unwrapped), type(gym.make_vec(env_id, num_envs=1))):
        assert cls.__doc__ and task_class.parameter_table() in cls.__doc__, cls
    task = task_class()
    for name, p in params.items():
        assert getattr(task, name) == p.check(name, p.default), name


def test_documented_spaces_are_the_envs(env_id):
    """The spaces the env's documentation states (its first Box under "Action Space" and
    under "Observation Space", which `robodyn list` shows) are the env's own."""
    from robodyn.training.cli import documented_spaces

    env = gym.make(env_id)
    action, observation = documented_spaces(env_id)
    for said, space in ((action, env.action_space), (observation, env.observation_space)):
        assert said == f"{space.shape[0]} {space.dtype}", (env_id, said, space)


# --- single env ----------------------------------------------------------------------------------
# Gymnasium's own MuJoCo tasks act in their actuators' ctrlranges ([-3, 3], [-0.4, 0.4], ...),
# for which Gymnasium's and SB3's checkers recommend a symmetric, normalized box; the ports
# (envs/*_v5.py) keep Gymnasium's spaces, and so get the same recommendation, as do the ports
# of dm_control's tasks (envs/dmc_*_v0.py), which keep dm_control's action_spec (quadruped's
# ctrlranges: [-1, 1.1], [-0.8, 0.8])
NOT_NORMALIZED = ("symmetric and normalized",)


def _warnings_from(check, env, expected):
    """The messages of the warnings check(env) emits, less those containing `expected`, and,
    for a port of a Gymnasium task, less the recommendation of a normalized action box."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check(env)
    port = env.spec is not None and (env.spec.id.endswith("-v5") or env.spec.id.startswith("RoboDyn/dmc-"))
    messages = [str(w.message) for w in caught if expected not in str(w.message)]
    return [m for m in messages if not (port and any(n in m for n in NOT_NORMALIZED))]


def test_gymnasium_check_env_passes(env_id):
    env = gym.make(env_id, render_mode="rgb_array")
    # Gymnasium's own MuJoCo envs get the same notes: the sensor vector is unbounded
    assert _warnings_from(check_env, env.unwrapped, "infinity") == []


def test_sb3_check_env_passes(env_id):
    env = gym.make(env_id)
    # float64 actions are a choice (the engine computes in float64); SB3 only recommends float32
    assert _warnings_from(sb3_check_env, env.unwrapped, "dtype float64") == []


def test_float32_spaces_for_rl_libraries(env_id):
    """dtype=float32: SB3's check_env has nothing to say, the observations are the float64
    env's cast to float32 (the physics stays float64), a float32 action acts as its float64
    value, and the vector env and a pickled copy keep the dtype."""
    env, ref = gym.make(env_id, dtype="float32"), gym.make(env_id)
    assert env.observation_space.dtype == env.action_space.dtype == np.float32
    assert _warnings_from(sb3_check_env, env.unwrapped, "never") == []
    a, _ = env.reset(seed=2)
    b, _ = ref.reset(seed=2)
    np.testing.assert_array_equal(a, b.astype(np.float32))
    for action in _actions(env, 3, seed=1).astype(np.float32):
        a = env.step(action)[0]
        b = ref.step(action.astype(np.float64))[0]
        assert a.dtype == np.float32
        np.testing.assert_array_equal(a, b.astype(np.float32))
    vec = gym.make_vec(env_id, num_envs=2, dtype=np.float32)
    assert vec.reset(seed=0)[0].dtype == np.float32
    assert pickle.loads(pickle.dumps(vec)).observation_space.dtype == np.float32


def test_passive_checker_raises_no_warning(env_id):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # registered without it (the env would be out of reach of snapshot()); asked for here
        env = gym.make(env_id, disable_env_checker=False, render_mode="rgb_array", width=160, height=120)
        env.reset(seed=0)
        for _ in range(5):
            env.step(env.action_space.sample())
        env.render()
    assert [str(w.message) for w in caught] == []


def test_same_seed_same_rollout_and_initial_states_randomized(env_id):
    a, b = gym.make(env_id), gym.make(env_id)
    actions = _actions(a, 15, 0)
    oa, _ = a.reset(seed=7)
    ob, _ = b.reset(seed=7)
    np.testing.assert_array_equal(oa, ob)
    _assert_same(_rollout(a, actions), _rollout(b, actions))
    starts = np.array([a.reset(seed=s)[0] for s in range(8)])
    assert len({tuple(s) for s in starts}) == 8, "initial states should be randomized"


def test_reward_is_the_sum_of_its_terms_and_observations_change(env_id):
    env = gym.make(env_id)
    obs, _ = env.reset(seed=1)
    seen = [obs]
    for a in _actions(env, 10, 1):
        obs, r, term, trunc, info = env.step(a)
        terms = [v for k, v in info.items() if k.startswith("reward_")]
        assert terms, "every reward term is reported in info as reward_<name>"
        assert r == sum(terms)  # exactly, in the order the task adds them
        seen.append(obs)
    assert len({tuple(o) for o in seen}) == len(seen), "observations should change along a rollout"


def test_bad_actions_raise_and_change_nothing(env_id):
    env = gym.make(env_id)
    env.reset(seed=2)
    env.step(env.action_space.sample())
    core = env.unwrapped.core
    d = env.unwrapped.physics.data
    before = (d.qpos.copy(), d.qvel.copy(), d.time.copy(), core.elapsed.copy())
    k = env.action_space.shape[0]
    nan, inf = np.zeros(k), np.zeros(k)
    nan[-1], inf[0] = np.nan, np.inf
    for bad in (nan, inf, np.zeros(k + 1), np.zeros((1, k)), "fast", [None] * k):
        with pytest.raises(robogym.InvalidActionError):
            env.step(bad)
        after = (d.qpos, d.qvel, d.time, core.elapsed)
        for x, y in zip(before, after, strict=True):
            np.testing.assert_array_equal(x, y)


def test_out_of_space_actions_are_clipped(env_id):
    a, b = gym.make(env_id), gym.make(env_id)
    space = a.action_space
    width = space.high - space.low
    for outside, edge in ((space.high + 3.0 * width, space.high), (space.low - 3.0 * width, space.low)):
        a.reset(seed=4)
        b.reset(seed=4)
        _assert_same(_rollout(a, [outside]), _rollout(b, [edge]))


def test_snapshot_restore_replays_bit_exactly(env_id):
    env = gym.make(env_id).unwrapped
    env.reset(seed=5)
    _rollout(env, _actions(env, 5, 5))
    snap = env.snapshot()
    actions = _actions(env, 10, 6)
    first = _rollout(env, actions)
    draw = env.np_random.random()
    env.restore(snap)
    _assert_same(first, _rollout(env, actions))
    assert env.np_random.random() == draw  # the RNG came back too
    with pytest.raises(TypeError):
        env.restore(env.physics.sim.snapshot())


def test_pickled_env_continues_identically(env_id):
    env = gym.make(env_id).unwrapped
    env.reset(seed=6)
    env.step(env.action_space.sample())
    clone = pickle.loads(pickle.dumps(env))
    actions = _actions(env, 10, 6)
    _assert_same(_rollout(env, actions), _rollout(clone, actions))


def test_rgb_frames(env_id):
    env = gym.make(env_id, render_mode="rgb_array", width=320, height=240)
    env.reset(seed=0)
    frame = env.render()
    assert frame.shape == (240, 320, 3) and frame.dtype == np.uint8
    assert frame.std() > 5, "the frame should not be blank"
    with pytest.raises(ValueError, match="offscreen buffer"):
        gym.make(env_id, render_mode="rgb_array", width=4000)


# --- vector env ----------------------------------------------------------------------------------
def test_make_vec_returns_the_native_batched_env(env_id):
    env = gym.make_vec(env_id, num_envs=N)
    single = gym.make(env_id)
    assert isinstance(env, robogym.RoboDynVectorEnv)
    assert env.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    assert env.num_envs == N
    assert env.single_action_space == single.action_space
    assert env.single_observation_space == single.observation_space
    assert env.action_space.shape == (N, *single.action_space.shape)
    assert env.observation_space.shape == (N, *single.observation_space.shape)
    obs, info = env.reset(seed=0)
    assert obs.shape == env.observation_space.shape and obs in env.observation_space
    obs, rew, term, trunc, info = env.step(env.action_space.sample())
    assert rew.shape == term.shape == trunc.shape == (N,)
    assert term.dtype == trunc.dtype == np.bool_
    names = [k for k in info if k.startswith("reward_")]
    assert names and all(info[k].shape == (N,) and info[f"_{k}"].all() for k in names)
    np.testing.assert_array_equal(rew, sum(info[k] for k in names))
    env.close()


def test_row_i_equals_a_single_env_seeded_with_seed_plus_i(env_id):
    venv = gym.make_vec(env_id, num_envs=N)
    obs, _ = venv.reset(seed=10)
    actions = np.random.default_rng(0).uniform(
        venv.single_action_space.low, venv.single_action_space.high, (10, *venv.action_space.shape)
    )
    vout = [venv.step(a) for a in actions]
    for i in range(N):
        env = gym.make(env_id)
        o, _ = env.reset(seed=10 + i)
        np.testing.assert_array_equal(o, obs[i])
        for t in range(len(actions)):
            o, r, term, trunc, _ = env.step(actions[t, i])
            np.testing.assert_array_equal(o, vout[t][0][i])
            assert r == vout[t][1][i] and (term, trunc) == (vout[t][2][i], vout[t][3][i])
            if term or trunc:  # the vector env restarts row i from here (autoreset)
                break


def test_vector_seeds_list_none_and_distinct_rows(env_id):
    env = gym.make_vec(env_id, num_envs=N)
    a, _ = env.reset(seed=list(range(100, 100 + N)))
    b, _ = env.reset(seed=100)
    np.testing.assert_array_equal(a, b)
    assert len({tuple(r) for r in a}) == N, "every env should start differently"
    c, _ = env.reset()
    d, _ = env.reset()
    assert not np.array_equal(c, d)
    with pytest.raises(ValueError, match="num_envs"):
        env.reset(seed=list(range(N - 1)))


def test_two_vector_envs_with_the_same_seed_are_identical_across_autoresets(env_id):
    a, b = (gym.make_vec(env_id, num_envs=N, max_episode_steps=6) for _ in range(2))
    a.reset(seed=3)
    b.reset(seed=3)
    space = a.single_action_space
    rng = np.random.default_rng(3)
    for _ in range(15):  # two autoresets on the way
        act = rng.uniform(space.low, space.high, a.action_space.shape)
        for x, y in zip(a.step(act)[:4], b.step(act)[:4], strict=True):
            np.testing.assert_array_equal(x, y)


def test_vector_bad_actions_raise_and_change_nothing(env_id):
    env = gym.make_vec(env_id, num_envs=N)
    env.reset(seed=5)
    d = env.physics.data
    q, v = d.qpos.copy(), d.qvel.copy()
    k = env.single_action_space.shape[0]
    bad_nan = np.zeros((N, k))
    bad_nan[2, 0] = np.nan
    for bad in (np.zeros((N,)), np.zeros((N + 1, k)), bad_nan, np.full((N, k), -np.inf)):
        with pytest.raises(robogym.InvalidActionError):
            env.step(bad)
    with pytest.raises(robogym.InvalidActionError, match="environment 2"):
        env.step(bad_nan)
    np.testing.assert_array_equal(d.qpos, q)
    np.testing.assert_array_equal(d.qvel, v)
    np.testing.assert_array_equal(env.core.elapsed, 0)


def test_pickled_vector_env_continues_identically(env_id):
    env = gym.make_vec(env_id, num_envs=N, max_episode_steps=8)
    env.reset(seed=8)
    env.step(env.action_space.sample())
    clone = pickle.loads(pickle.dumps(env))
    space = env.single_action_space
    rng = np.random.default_rng(8)
    for _ in range(12):  # across an autoreset
        act = rng.uniform(space.low, space.high, env.action_space.shape)
        for x, y in zip(env.step(act)[:4], clone.step(act)[:4], strict=True):
            np.testing.assert_array_equal(x, y)


def test_vector_render_returns_one_frame_per_env(env_id):
    env = gym.make_vec(env_id, num_envs=2, render_mode="rgb_array", width=160, height=120)
    env.reset(seed=0)
    frames = env.render()
    assert len(frames) == 2 and frames[0].shape == (120, 160, 3)
    assert not np.array_equal(frames[0], frames[1])  # different random starts
    env.close()
