"""robogym.sensor_model: observation noise and delay, on the floating-arm test task (its
keywords sensor_noise, sensor_noise_kind, observation_delay).

Checked: off by default (the observation is the sensor vector and no generator is drawn
from); uniform noise bounded by its scale with the variance of a uniform law, Gaussian
noise with mean 0 and standard deviation the scale (statistics over 64 envs x 200 steps x 14
components, tolerances of several standard errors); a delay of k shows the observation of k
steps before (the first one until k steps have passed); seeded per env (row i of a vector
env equals a single env seeded seed + i); carried by snapshots; a partial reset leaves the
other rows' delay lines alone; bad settings refused.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import robogym  # noqa: F401  (registers RoboDyn/* and the test tasks)
from robogym import ArgumentTypeError, InvalidArgumentError
from robogym.sensor_model import SensorModel
from tests.robogym.floating_arm_task import TASK_ID

N = 64
STEPS = 200


def _run(env, steps: int, seed: int = 0):
    """(observations (steps + 1, B, n), raw sensordata (steps + 1, B, n)) under fixed random
    actions (the same for every run: rng seeded 99)."""
    obs, _ = env.reset(seed=seed)
    data = env.unwrapped.physics.data
    rng = np.random.default_rng(99)
    out, raw = [obs.copy()], [data.sensordata.copy()]
    for _ in range(steps):
        obs, *_ = env.step(rng.uniform(-1.0, 1.0, size=env.action_space.shape))
        out.append(obs.copy())
        raw.append(data.sensordata.copy())
    return np.array(out), np.array(raw)


def test_off_by_default_the_observation_is_the_sensor_vector():
    env = gym.make_vec(TASK_ID, num_envs=4)
    obs, raw = _run(env, 20)
    assert np.array_equal(obs, raw)
    plain = gym.make_vec(TASK_ID, num_envs=4, sensor_noise=0.0, observation_delay=0)
    assert np.array_equal(_run(plain, 20)[0], obs)


@pytest.mark.parametrize("kind", ["uniform", "gaussian"])
def test_noise_has_the_law_it_names(kind):
    scale = 0.05
    env = gym.make_vec(TASK_ID, num_envs=N, sensor_noise=scale, sensor_noise_kind=kind)
    obs, raw = _run(env, STEPS)
    noise = (obs - raw).reshape(-1)
    std = noise.std()
    expect = scale / np.sqrt(3.0) if kind == "uniform" else scale
    n = noise.size
    print(f"[noise] {kind}: {n} samples, mean {noise.mean():.2e}, std {std:.5f} (law: {expect:.5f})")
    assert abs(noise.mean()) < 4 * expect / np.sqrt(n)
    assert abs(std / expect - 1.0) < 0.01  # the std's standard error is about 1/sqrt(2 n) = 0.06 %
    if kind == "uniform":
        assert np.all(np.abs(noise) <= scale) and np.abs(noise).max() > 0.999 * scale
    else:
        assert abs(np.mean(np.abs(noise) > 2 * scale) - 0.0455) < 0.002  # the normal law's tail
    # every row and step draws anew: no two rows, no two steps share their noise
    per = obs - raw
    assert not np.any(np.all(per[:, 0] == per[:, 1], axis=-1))
    assert not np.any(np.all(per[0] == per[1], axis=-1))


def test_noise_scale_per_component():
    env = gym.make_vec(TASK_ID, num_envs=8)
    n = env.single_observation_space.shape[0]
    scale = np.zeros(n)
    scale[3] = 0.2
    task = env.unwrapped.task
    task.sensors = SensorModel(8, n, scale, "uniform", 0)
    task.hold_state("sensor_", task.sensors)
    obs, raw = _run(env, 30)
    diff = obs - raw
    assert np.all(diff[..., np.arange(n) != 3] == 0) and np.all(np.abs(diff[..., 3]) > 0)


@pytest.mark.parametrize("delay", [1, 3])
def test_delay_shows_the_observation_k_steps_before(delay):
    env = gym.make_vec(TASK_ID, num_envs=4, observation_delay=delay)
    obs, raw = _run(env, 40)
    for t in range(41):
        assert np.array_equal(obs[t], raw[max(t - delay, 0)]), t
    noisy = gym.make_vec(TASK_ID, num_envs=4, observation_delay=delay, sensor_noise=0.1)
    obs_n, _ = _run(noisy, 40)
    undelayed = gym.make_vec(TASK_ID, num_envs=4, sensor_noise=0.1)
    obs_u, _ = _run(undelayed, 40)
    for t in range(41):  # the delayed noisy observation is the noisy one of k steps before
        assert np.array_equal(obs_n[t], obs_u[max(t - delay, 0)]), t


def test_seeded_per_env_row_i_equals_a_single_env_seeded_seed_plus_i():
    kw = dict(sensor_noise=0.05, sensor_noise_kind="gaussian", observation_delay=2)
    vec = gym.make_vec(TASK_ID, num_envs=3, **kw)
    obs, _ = vec.reset(seed=[10, 11, 12])
    for i in range(3):
        single = gym.make(TASK_ID, **kw)
        o, _ = single.reset(seed=10 + i)
        assert np.array_equal(o, obs[i])
    a, _ = _run(gym.make_vec(TASK_ID, num_envs=3, **kw), 30, seed=5)
    b, _ = _run(gym.make_vec(TASK_ID, num_envs=3, **kw), 30, seed=5)
    c, _ = _run(gym.make_vec(TASK_ID, num_envs=3, **kw), 30, seed=6)
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_snapshot_carries_the_noise_and_the_delay_line():
    env = gym.make_vec(TASK_ID, num_envs=4, sensor_noise=0.05, observation_delay=3)
    _run(env, 7)
    snap = env.unwrapped.snapshot()
    rng = np.random.default_rng(1)
    actions = rng.uniform(-1.0, 1.0, size=(10, *env.action_space.shape))
    first = [env.step(a)[0].copy() for a in actions]
    env.unwrapped.restore(snap)
    again = [env.step(a)[0].copy() for a in actions]
    assert np.array_equal(np.array(first), np.array(again))


def test_partial_reset_leaves_the_other_rows_delay_lines_alone():
    kw = dict(sensor_noise=0.05, observation_delay=3)
    ref = gym.make_vec(TASK_ID, num_envs=4, **kw, autoreset_mode=gym.vector.AutoresetMode.DISABLED)
    env = gym.make_vec(TASK_ID, num_envs=4, **kw, autoreset_mode=gym.vector.AutoresetMode.DISABLED)
    ref.reset(seed=3)
    env.reset(seed=3)
    rng = np.random.default_rng(2)
    for t in range(12):
        a = rng.uniform(-1.0, 1.0, size=env.action_space.shape)
        o_ref = ref.step(a)[0]
        o = env.step(a)[0]
        assert np.array_equal(o[1:], o_ref[1:])
        if t == 5:
            o, _ = env.reset(options={"reset_mask": np.array([True, False, False, False])})
            assert np.array_equal(o[1:], o_ref[1:])


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"sensor_noise_kind": "pink"}, InvalidArgumentError, r"sensor_noise_kind must be one of"),
        ({"observation_delay": -1}, InvalidArgumentError, r"observation_delay"),
        ({"observation_delay": 1.5}, ArgumentTypeError, r"observation_delay must be an int in \[0, 1000\]"),
        ({"sensor_noise": -0.1}, InvalidArgumentError, r"sensor_noise"),
    ],
)
def test_bad_settings_are_refused(kwargs, error, match):
    with pytest.raises(error, match=match):
        gym.make_vec(TASK_ID, num_envs=2, **kwargs)


def test_the_humanoid_takes_one_noise_scale_per_component():
    """HumanoidPush-v0's docs: sensor_noise is one number or 52; components given 0 are exact."""
    scale = np.zeros(52)
    scale[10:31] = 0.05  # the joint angles only
    noisy = gym.make("RoboDyn/HumanoidPush-v0", sensor_noise=list(scale))
    plain = gym.make("RoboDyn/HumanoidPush-v0")
    a, _ = noisy.reset(seed=2)
    b, _ = plain.reset(seed=2)
    for _ in range(5):
        diff = a - b
        assert np.all(diff[scale == 0] == 0) and np.all(np.abs(diff[scale > 0]) <= 0.05)
        assert np.count_nonzero(diff[scale > 0]) == 21
        action = np.zeros(noisy.action_space.shape)
        a, b = noisy.step(action)[0], plain.step(action)[0]


def test_the_largest_gaussian_noise_keeps_observations_finite():
    """At the largest scale allowed (1e10), a Gaussian draw (at most 8.6 deviations from a
    53-bit uniform) stays far below float64's overflow."""
    model = SensorModel(4, 3, 1e10, "gaussian", 0)
    model.reset(np.arange(4), [np.random.default_rng(i) for i in range(4)])
    raw = np.full((4, 3), 1e10)
    for _ in range(100):
        seen = model.observe(raw)
        model.record(raw)
        assert np.all(np.isfinite(seen))
