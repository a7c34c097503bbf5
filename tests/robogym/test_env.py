"""The crane as a single environment: its registration, start distribution, observation,
reward terms and weights, parameters, termination, a snapshot refused across parameters and
frames that follow its state. The checks every task gets (Gymnasium's and SB3's checkers,
determinism, pickling, bad input, snapshot replay, rendering, reward = sum of its terms) run
over every registered id in test_registered_tasks.py."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import robogym
from robodyn.envs.crane_v0 import CraneEnv, CraneTask

ID = "RoboDyn/Crane-v0"


def test_registered_under_namespace_with_string_entry_points():
    spec = gym.spec(ID)
    assert spec.entry_point == "robodyn.envs.crane_v0:CraneEnv"
    assert spec.vector_entry_point == "robodyn.envs.crane_v0:CraneVectorEnv"
    assert spec.max_episode_steps == 400 and spec.kwargs == {}  # the length where libraries read it
    assert isinstance(gym.make(ID), CraneEnv)
    assert isinstance(gym.make("robogym:" + ID), CraneEnv)
    assert ID in [t.id for t in robogym.TASKS]


def test_initial_states_spread_around_the_10_m_move():
    a = gym.make(ID)
    starts = np.array([a.reset(seed=s)[0] for s in range(20)])
    assert np.all(np.std(starts[:, :4], axis=0) > 1e-3), "initial states should be randomized"
    assert np.all(np.abs(starts[:, 0] + 10.0) <= 2.0)
    assert len({tuple(s) for s in starts}) == 20


def test_observation_is_the_sensor_vector_and_reward_has_five_terms():
    env = gym.make(ID)
    obs, _ = env.reset(seed=1)
    np.testing.assert_array_equal(obs, env.unwrapped.physics.data.sensordata[0])
    rng = np.random.default_rng(1)
    seen = set()
    for _ in range(50):
        obs, r, term, trunc, info = env.step(rng.uniform(-1, 1, 1))
        terms = [v for k, v in info.items() if k.startswith("reward_")]
        assert len(terms) == 5
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


def test_snapshot_with_other_parameters_is_refused():
    env = gym.make(ID).unwrapped
    env.reset(seed=5)
    snap = env.snapshot()
    other = gym.make(ID, move_distance=5.0).unwrapped
    other.reset(seed=0)
    with pytest.raises(ValueError, match="refusing to restore"):
        other.restore(snap)


def test_rgb_frames_show_the_engine_state():
    env = gym.make(ID, render_mode="rgb_array", width=320, height=240)
    env.reset(seed=0)
    f0 = env.render()
    env.unwrapped.physics.data.qpos[0] = (-4.0, 0.6)  # trolley moved, cable swung
    f1 = env.render()
    changed = np.any(f0 != f1, axis=2)
    assert changed.mean() > 0.002
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


@pytest.mark.parametrize(("limit", "ends_at"), [(None, 400), (10, 10), (1000, 1000), (-1, None)])
def test_gym_make_max_episode_steps_sets_the_episode_length(limit, ends_at):
    """gym.make(id, max_episode_steps=N) keeps N for its TimeLimit; the env reads it too, so
    episodes end at N (not at the registered 400), and -1 (no TimeLimit) means no limit."""
    kwargs = {} if limit is None else {"max_episode_steps": limit}
    env = gym.make("RoboDyn/Crane-v0", **kwargs)
    env.reset(seed=0)
    steps, truncated = 0, False
    while steps < 1100 and not truncated:  # zero acceleration: the trolley stays on the rail
        _, _, terminated, truncated, _ = env.step(np.zeros(1))
        steps += 1
        assert not terminated
    assert steps == (ends_at or 1100) and truncated == (ends_at is not None)
    assert env.unwrapped.max_episode_steps == (None if limit == -1 else ends_at)
