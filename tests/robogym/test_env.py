"""The single-environment face: registration, Gymnasium's checkers, determinism, pickling,
bad input, snapshot/restore, rendering, and the crane's reward bookkeeping."""

from __future__ import annotations

import pickle
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import robogym
from envs.crane_v0 import CraneEnv, CraneTask

ID = "RoboDyn/Crane-v0"


def _rollout(env, actions):
    out = []
    for a in actions:
        obs, r, term, trunc, info = env.step(a)
        out.append((obs.copy(), r, term, trunc))
    return out


def test_registered_under_namespace_with_string_entry_points():
    spec = gym.spec(ID)
    assert spec.entry_point == "envs.crane_v0:CraneEnv"
    assert spec.vector_entry_point == "envs.crane_v0:CraneVectorEnv"
    assert spec.max_episode_steps == 400
    assert isinstance(gym.make(ID).unwrapped, CraneEnv)
    assert isinstance(gym.make("robogym:" + ID).unwrapped, CraneEnv)
    assert [t.id for t in robogym.TASKS] == [ID]


def test_gymnasium_check_env_passes():
    env = gym.make(ID, render_mode="rgb_array")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped)
    # Gymnasium's own MuJoCo envs get the same two notes: the sensor vector is unbounded
    others = [str(w.message) for w in caught if "infinity" not in str(w.message)]
    assert others == []


def test_passive_checker_raises_no_warning():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env = gym.make(ID, render_mode="rgb_array")  # wrapped in PassiveEnvChecker
        env.reset(seed=0)
        for _ in range(5):
            env.step(env.action_space.sample())
        env.render()
    assert [str(w.message) for w in caught] == []


def test_same_seed_same_rollout_and_initial_states_randomized():
    actions = np.random.default_rng(0).uniform(-1, 1, (60, 1))
    a, b = gym.make(ID), gym.make(ID)
    oa, _ = a.reset(seed=7)
    ob, _ = b.reset(seed=7)
    np.testing.assert_array_equal(oa, ob)
    ra, rb = _rollout(a, actions), _rollout(b, actions)
    for (x, r, *_), (y, s, *_) in zip(ra, rb, strict=True):
        np.testing.assert_array_equal(x, y)
        assert r == s
    starts = np.array([a.reset(seed=s)[0] for s in range(20)])
    assert np.all(np.std(starts[:, :4], axis=0) > 1e-3), "initial states should be randomized"
    assert np.all(np.abs(starts[:, 0] + 10.0) <= 2.0)
    assert len({tuple(s) for s in starts}) == 20


def test_observation_is_the_sensor_vector_and_reward_is_the_sum_of_its_terms():
    env = gym.make(ID)
    obs, _ = env.reset(seed=1)
    np.testing.assert_array_equal(obs, env.unwrapped.physics.data.sensordata[0])
    rng = np.random.default_rng(1)
    seen = set()
    for _ in range(50):
        obs, r, term, trunc, info = env.step(rng.uniform(-1, 1, 1))
        terms = [v for k, v in info.items() if k.startswith("reward_")]
        assert len(terms) == 5
        assert r == sum(terms)  # exactly, in the order the task adds them
        np.testing.assert_array_equal(obs, env.unwrapped.physics.data.sensordata[0])
        seen.add(round(r, 12))
        assert {"position_error", "payload_error", "swing_amplitude", "success"} <= set(info)
    assert len(seen) > 40, "observations/rewards should change along a rollout"


def test_reward_weights_are_keyword_arguments():
    base = gym.make(ID)
    heavy = gym.make(ID, control_weight=1.0, jerk_weight=2.0, arrive_weight=0.0)
    for e in (base, heavy):
        e.reset(seed=3)
    _, r0, *_, i0 = base.step(np.array([1.0]))
    _, r1, *_, i1 = heavy.step(np.array([1.0]))
    assert i0["reward_control"] == -0.05 and i1["reward_control"] == -1.0
    assert i0["reward_jerk"] == -0.05 and i1["reward_jerk"] == -2.0  # from a_prev = 0 after reset
    assert i1["reward_arrive"] == 0.0
    assert r1 == pytest.approx(i1["reward_position"] - 3.0)
    _, _, *_, i2 = heavy.step(np.array([0.5]))
    assert i2["reward_jerk"] == -2.0 * 0.25


def test_bad_actions_raise_and_change_nothing():
    env = gym.make(ID)
    env.reset(seed=2)
    env.step(np.array([0.3]))
    d = env.unwrapped.physics.data
    before = (d.qpos.copy(), d.qvel.copy(), d.time.copy(), env.unwrapped.core.elapsed.copy())
    for bad in (np.array([np.nan]), np.array([np.inf]), np.zeros(2), np.zeros((1, 1)), "fast", [None]):
        with pytest.raises(robogym.InvalidActionError):
            env.step(bad)
        after = (d.qpos, d.qvel, d.time, env.unwrapped.core.elapsed)
        for x, y in zip(before, after, strict=True):
            np.testing.assert_array_equal(x, y)


def test_out_of_space_actions_are_clipped():
    a, b = gym.make(ID), gym.make(ID)
    a.reset(seed=4)
    b.reset(seed=4)
    oa, ra, *_ = a.step(np.array([7.5]))
    ob, rb, *_ = b.step(np.array([1.0]))
    np.testing.assert_array_equal(oa, ob)
    assert ra == rb


def test_snapshot_restore_replays_bit_exactly_and_refuses_other_tasks():
    env = gym.make(ID).unwrapped
    env.reset(seed=5)
    rng = np.random.default_rng(5)
    _rollout(env, rng.uniform(-1, 1, (20, 1)))
    snap = env.snapshot()
    actions = rng.uniform(-1, 1, (30, 1))
    first = _rollout(env, actions)
    draw = env.np_random.random()
    env.restore(snap)
    second = _rollout(env, actions)
    for (x, r, *_), (y, s, *_) in zip(first, second, strict=True):
        np.testing.assert_array_equal(x, y)
        assert r == s
    assert env.np_random.random() == draw  # the RNG came back too
    other = gym.make(ID, move_distance=5.0).unwrapped
    other.reset(seed=0)
    with pytest.raises(ValueError, match="refusing to restore"):
        other.restore(snap)
    with pytest.raises(TypeError):
        env.restore(env.physics.sim.snapshot())


def test_pickled_env_continues_identically():
    env = gym.make(ID).unwrapped
    env.reset(seed=6)
    env.step(np.array([0.5]))
    clone = pickle.loads(pickle.dumps(env))
    actions = np.random.default_rng(6).uniform(-1, 1, (25, 1))
    for (x, r, *_), (y, s, *_) in zip(_rollout(env, actions), _rollout(clone, actions), strict=True):
        np.testing.assert_array_equal(x, y)
        assert r == s


def test_rgb_frames_show_the_engine_state():
    env = gym.make(ID, render_mode="rgb_array", width=320, height=240)
    env.reset(seed=0)
    f0 = env.render()
    assert f0.shape == (240, 320, 3) and f0.dtype == np.uint8
    assert f0.std() > 5, "frame should not be blank"
    env.unwrapped.physics.data.qpos[0] = (-4.0, 0.6)  # trolley moved, cable swung
    f1 = env.render()
    changed = np.any(f0 != f1, axis=2)
    assert changed.mean() > 0.002
    with pytest.raises(ValueError, match="offscreen buffer"):
        gym.make(ID, render_mode="rgb_array", width=4000)
    with pytest.raises(ValueError, match="render_mode"):
        CraneEnv(render_mode="depth")


def test_crane_rejects_bad_parameters():
    with pytest.raises(ValueError, match="max_accel"):
        CraneTask(max_accel=0.0)
    with pytest.raises(ValueError, match="move_distance"):
        CraneTask(move_distance=20.0)


def test_running_off_the_rail_terminates():
    env = gym.make(ID, reset_noise_scale=0.0)
    env.reset(seed=0)
    term = False
    for _ in range(200):
        _, r, term, trunc, info = env.step(np.array([-1.0]))  # away from the target
        if term:
            break
        assert info["reward_rail"] == 0.0
    assert term and info["position_error"] > 15.0
    assert info["reward_rail"] == -50.0 and r < -49.0
