"""The Gym layer with actuators that have activation dynamics (assets/tests/integ_activation.xml):
act is part of what an env's episode reset clears and of what its snapshot restores.

The task (tests/robogym/activation_task.py) drives four of the model's stateful actuators
through "ctrl" actuation and observes (qpos, qvel, act).
"""

from __future__ import annotations

import numpy as np

from tests.robogym.activation_task import ActivationVectorEnv

N = 3


def _actions(steps: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1.0, 1.0, (steps, N, 4))


def test_reset_clears_the_activations():
    env = ActivationVectorEnv(num_envs=N, max_episode_steps=1000)
    obs, _ = env.reset(seed=1)
    na = env.physics.model.na
    assert na == 8 and np.all(obs[:, -na:] == 0.0)
    for a in _actions(20, 2):
        obs, *_ = env.step(a)
    assert np.abs(env.physics.data.act).max() > 0.05  # the activations moved
    np.testing.assert_array_equal(obs[:, -na:], env.physics.data.act)
    obs, _ = env.reset(seed=1)
    assert np.all(env.physics.data.act == 0.0) and np.all(obs[:, -na:] == 0.0)


def test_snapshot_restores_the_activations_bit_for_bit():
    env = ActivationVectorEnv(num_envs=N, max_episode_steps=1000)
    env.reset(seed=3)
    for a in _actions(10, 4):
        env.step(a)
    snap = env.snapshot()
    np.testing.assert_array_equal(snap.physics.fields["act"], env.physics.data.act)
    actions = _actions(30, 5)
    first = [env.step(a)[0] for a in actions]
    assert not np.array_equal(env.physics.data.act, snap.physics.fields["act"])
    env.restore(snap)
    np.testing.assert_array_equal(env.physics.data.act, snap.physics.fields["act"])
    second = [env.step(a)[0] for a in actions]
    for x, y in zip(first, second, strict=True):
        np.testing.assert_array_equal(x, y)  # qpos, qvel and act after every step
