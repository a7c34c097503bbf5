"""The native vector env on the crane: its spaces, Gymnasium 1.x autoreset semantics in all
three modes, step outputs the user can keep, the crane's one-pass evaluate, snapshot/restore
of a subset. The checks every task gets (make_vec gives the native env, row i equals a
single env seeded with seed + i, seeding, determinism across autoresets, bad input,
pickling, one frame per row) run over every registered id in test_registered_tasks.py."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import robogym
from robodyn.envs.crane_v0 import CraneVectorEnv

ID = "RoboDyn/Crane-v0"
N = 6


def _make(**kw):
    return gym.make_vec(ID, num_envs=N, **kw)


def test_make_vec_returns_the_crane_vector_env():
    env = _make()
    assert isinstance(env, CraneVectorEnv)
    assert env.action_space.shape == (N, 1) and env.observation_space.shape == (N, 7)
    assert env.single_action_space.shape == (1,) and env.single_observation_space.shape == (7,)
    env.reset(seed=0)
    _, _, _, _, info = env.step(env.action_space.sample())
    assert info["reward_position"].shape == (N,) and info["_reward_position"].all()
    env.close()


def test_next_step_autoreset():
    env = _make(max_episode_steps=5)
    env.reset(seed=1)
    act = np.full((N, 1), 0.5)
    for _ in range(4):
        _, _, term, trunc, _ = env.step(act)
        assert not trunc.any()
    obs, rew, term, trunc, info = env.step(act)
    assert trunc.all() and not term.any()
    obs, rew, term, trunc, info = env.step(np.full((N, 1), -1.0))  # ignored: resets instead
    assert not trunc.any() and not term.any()
    np.testing.assert_array_equal(rew, 0.0)
    assert np.all(np.abs(obs[:, 0] + 10.0) <= 2.0) and np.all(np.abs(obs[:, 2]) <= 0.05)
    np.testing.assert_array_equal(env.core.elapsed, 0)
    np.testing.assert_array_equal(obs, env.physics.data.sensordata)


def test_same_step_autoreset_reports_final_observation():
    same = _make(max_episode_steps=5, autoreset_mode=AutoresetMode.SAME_STEP)
    ref = _make(max_episode_steps=5)
    assert same.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    same.reset(seed=2)
    ref.reset(seed=2)
    act = np.full((N, 1), 0.7)
    for _ in range(4):
        same.step(act)
        ref.step(act)
    obs, rew, term, trunc, info = same.step(act)
    robs, rrew, *_, rinfo = ref.step(act)
    assert trunc.all()
    np.testing.assert_array_equal(rew, rrew)
    assert info["_final_obs"].all()
    np.testing.assert_array_equal(np.stack(info["final_obs"]), robs)
    np.testing.assert_array_equal(info["final_info"]["swing_amplitude"], rinfo["swing_amplitude"])
    # the returned observation is already the next episode's first
    nobs, *_ = ref.step(act)
    np.testing.assert_array_equal(obs, nobs)
    obs2, _, _, trunc2, info2 = same.step(act)
    assert not trunc2.any() and "final_obs" not in info2


def _arrays(tree) -> list[np.ndarray]:
    """Every numpy array in a step's outputs (nested tuples, dicts and object arrays)."""
    if isinstance(tree, dict):
        return [a for v in tree.values() for a in _arrays(v)]
    if isinstance(tree, tuple | list) or (isinstance(tree, np.ndarray) and tree.dtype == object):
        return [a for v in tree if v is not None for a in _arrays(v)]
    return [tree] if isinstance(tree, np.ndarray) else []


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_step_outputs_are_new_arrays_the_user_can_keep(mode):
    env = _make(max_episode_steps=4, autoreset_mode=mode)
    env.reset(seed=8)
    act = np.random.default_rng(8).uniform(-1, 1, (9, N, 1))
    kept = []
    for a in act:  # two autoresets on the way
        out = env.step(a)
        arrays = _arrays(out)
        internal = [env.physics.data.sensordata, env._obs, env._done, env.task.action, env.core.elapsed]
        for i, x in enumerate(arrays):
            assert not any(np.shares_memory(x, y) for y in arrays[i + 1 :] + internal)
        kept.append((out, [x.copy() for x in arrays]))
    for out, copies in kept:  # later steps changed none of them
        for x, y in zip(_arrays(out), copies, strict=True):
            np.testing.assert_array_equal(x, y)


def test_crane_evaluate_equals_reward_terminated_and_metrics():
    # the crane computes them in one pass; Task.evaluate assembles them from the task's
    # reward, terminated and metrics: the two agree bit for bit, on and off the rail
    env = _make(rail_limit=11.0)
    env.reset(seed=9)
    task = env.task
    left_rail = False
    for a in np.random.default_rng(9).uniform(-3, 3, (120, N, 1)):
        env.step(a)
        r1, t1, i1 = task.evaluate(a)
        r2, t2, i2 = robogym.Task.evaluate(task, a)
        np.testing.assert_array_equal(r1, r2)
        np.testing.assert_array_equal(t1, t2)
        assert list(i1) == list(i2)
        for k in i1:
            np.testing.assert_array_equal(i1[k], i2[k])
        left_rail |= bool(t1.any())
    assert left_rail, "some trolleys should have left the rail"


def test_disabled_autoreset_needs_a_masked_reset():
    env = _make(max_episode_steps=3, autoreset_mode=AutoresetMode.DISABLED)
    env.reset(seed=4)
    act = np.zeros((N, 1))
    for _ in range(3):
        obs, *_, trunc, _ = env.step(act)
    assert trunc.all()
    snap_q = env.physics.data.qpos.copy()
    with pytest.raises(gym.error.ResetNeeded, match="reset_mask"):
        env.step(act)
    np.testing.assert_array_equal(env.physics.data.qpos, snap_q)
    mask = np.zeros(N, dtype=bool)
    mask[[1, 4]] = True
    new, info = env.reset(options={"reset_mask": mask})
    np.testing.assert_array_equal(new[~mask], obs[~mask])  # others untouched
    assert not np.array_equal(new[mask], obs[mask])
    assert info["_position_error"].tolist() == mask.tolist()
    with pytest.raises(gym.error.ResetNeeded):
        env.step(act)  # rows 0, 2, 3, 5 still ended
    env.reset(options={"reset_mask": ~mask})
    env.step(act)
    for bad in (np.ones(N, dtype=bool)[:2], np.zeros(N, dtype=bool)):
        with pytest.raises(ValueError, match="reset_mask"):
            env.reset(options={"reset_mask": bad})
    with pytest.raises(TypeError, match="reset_mask"):
        env.reset(options={"reset_mask": mask.astype(int)})


def test_snapshot_of_a_subset_restores_bit_exactly():
    env = _make(max_episode_steps=30)
    env.reset(seed=6)
    rng = np.random.default_rng(6)
    for _ in range(10):
        env.step(rng.uniform(-1, 1, (N, 1)))
    snap = env.snapshot()
    part = env.snapshot(rows=[1, 4])
    actions = rng.uniform(-1, 1, (40, N, 1))  # crosses the autoreset at 30 steps (uses each env's RNG)
    first = [env.step(a) for a in actions]
    env.restore(snap)
    second = [env.step(a) for a in actions]
    for x, y in zip(first, second, strict=True):
        for u, w in zip(x[:4], y[:4], strict=True):
            np.testing.assert_array_equal(u, w)
    # restore only rows 1 and 4 into rows 0 and 2, others keep going
    env.restore(part, rows=[0, 2])
    np.testing.assert_array_equal(env.core.elapsed[[0, 2]], 10)
    with pytest.raises(ValueError, match="2 environments"):
        env.restore(part, rows=[0, 1, 2])
    other = _make(move_distance=8.0)
    other.reset(seed=0)
    with pytest.raises(ValueError, match="refusing to restore"):
        other.restore(snap)


def test_autoreset_mode_by_enum_value_or_name():
    for mode in (AutoresetMode.SAME_STEP, "SameStep", "SAME_STEP", "same_step"):
        assert _make(autoreset_mode=mode).metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    with pytest.raises(ValueError, match="NEXT_STEP, SAME_STEP, DISABLED"):
        _make(autoreset_mode="sometimes")


def test_step_before_reset_is_refused():
    with pytest.raises(gym.error.ResetNeeded):
        _make().step(np.zeros((N, 1)))


def test_reset_clears_the_solver_warm_start_as_mj_resetData():
    """A reset row starts without the last episode's solver warm start (MuJoCo's
    mj_resetData zeroes qacc_warmstart), so two resets with one seed give the same episode
    bit for bit on a model in contact from its first step; other rows keep theirs."""
    env = gym.make_vec("RoboDyn/HumanoidPush-v0", num_envs=3, autoreset_mode=AutoresetMode.DISABLED)
    env.reset(seed=4)
    rng = np.random.default_rng(0)
    actions = rng.uniform(-0.2, 0.2, size=(30, *env.action_space.shape))
    first = [env.step(a)[1] for a in actions]
    d = env.unwrapped.physics.data
    assert np.all(d.qacc_warmstart != 0.0)
    kept = d.qacc_warmstart[1:].copy()
    env.reset(seed=[4, 5, 6], options={"reset_mask": np.array([True, False, False])})
    assert np.all(d.qacc_warmstart[0] == 0.0) and np.array_equal(d.qacc_warmstart[1:], kept)
    env.reset(seed=4)
    again = [env.step(a)[1] for a in actions]
    assert np.array_equal(np.array(first), np.array(again))
