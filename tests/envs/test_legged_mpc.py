"""The legged tasks' `mpc` baselines (sampling MPC, envs/baselines/sampling.py) against their
`pd` (hold the home pose) on the same episodes: the humanoid stays standing through pushes that
fell the pd, and the quadruped walks at its command where the pd stands still.

The bars are the tasks' own over short runs (CI time): the full 16-episode numbers are
`robodyn eval`'s, in envs/README.md. Each episode here is one the pd fails, so a planner no
better than holding home fails the test.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import robogym  # noqa: F401  (registers RoboDyn/ ids)
from robodyn.envs.baselines import make_baseline
from robodyn.envs.baselines.quadruped import Trot
from robogym.errors import InvalidArgumentError


def run(task_id: str, policy_name: str, seeds: list[int], steps: int, **kwargs):
    """Step `policy_name` on rows seeded `seeds` for `steps` control steps: the step each row
    first terminated at (-1: never; a fallen row restarts, and only rows that never fell are
    read after) and the task's metrics at the end."""
    env = gym.make_vec(task_id, num_envs=len(seeds), autoreset_mode=AutoresetMode.NEXT_STEP, **kwargs)
    obs, _ = env.reset(seed=seeds)
    policy = make_baseline(policy_name, env.unwrapped)
    policy.reset(env.unwrapped, np.arange(len(seeds)))
    fell = np.full(len(seeds), -1)
    for t in range(steps):
        obs, _, terminated, _, _ = env.step(policy.act(env.unwrapped, obs))
        fell[terminated & (fell < 0)] = t
        if np.all(fell >= 0):
            break
    metrics = env.unwrapped.task.metrics()
    if hasattr(env.unwrapped.task, "commands"):
        metrics["command"] = env.unwrapped.task.commands[:, [0, 2]].round(3)
    env.close()
    return fell, metrics


def test_humanoid_mpc_stands_through_pushes_that_fell_the_pd():
    """Seeds 5 and 21: holding home falls after a push within 300 steps (6 s); the mpc,
    whose copies never see a push coming, stands through the same pushes."""
    seeds, steps = [5, 21], 300
    pd_fell, _ = run("RoboDyn/HumanoidPush-v0", "pd", seeds, steps)
    mpc_fell, metrics = run("RoboDyn/HumanoidPush-v0", "mpc", seeds, steps)
    print(
        f"[mpc] HumanoidPush-v0 seeds {seeds}, {steps} steps: pd fell at {pd_fell.tolist()}; "
        f"mpc fell at {mpc_fell.tolist()}, pushes {metrics['pushes'].tolist()}, "
        f"head height {metrics['head_height'].round(3).tolist()} m"
    )
    assert np.all(pd_fell >= 0)
    assert np.all(mpc_fell < 0)
    assert np.all(metrics["pushes"] >= 1)  # it was pushed, and stood
    assert np.all(metrics["head_height"] > 1.4)


def test_quadruped_mpc_walks_at_its_command():
    """The fixed scenario (0.5 m/s straight ahead) and a turning command drawn at reset
    (seed 1: 0.51 m/s, 0.45 rad/s): the pd stands, so its error is the command's speed; the
    mpc walks with no fall at under half that RMS velocity error over 300 steps (6 s, the
    start from rest included; the task's 0.2 m/s bar is for whole episodes)."""
    steps = 300
    for kwargs, seeds in (({"reset_noise_scale": 0.0, "command": (0.5, 0.0)}, [0]), ({}, [1])):
        pd_fell, pd = run("RoboDyn/Quadruped-v0", "pd", seeds, steps, **kwargs)
        mpc_fell, mpc = run("RoboDyn/Quadruped-v0", "mpc", seeds, steps, **kwargs)
        print(
            f"[mpc] Quadruped-v0 {kwargs or f'seed {seeds}'}, command {mpc['command'].tolist()}, "
            f"{steps} steps: pd velocity_error {pd['velocity_error'].round(4).tolist()}; mpc "
            f"{mpc['velocity_error'].round(4).tolist()}, fell at {mpc_fell.tolist()}"
        )
        assert np.all(pd_fell < 0) and np.all(pd["velocity_error"] > 0.45)
        assert np.all(mpc_fell < 0)
        assert np.all(mpc["velocity_error"] < 0.5 * pd["velocity_error"])


def test_the_trot_is_the_formula_its_docstring_states():
    """Trot's prior at two rows' step counts against its closed form, leg by leg: diagonal
    pairs half a period apart, the calf folded only in swing, the stride from the command."""
    env = gym.make_vec("RoboDyn/Quadruped-v0", num_envs=2)
    env.reset(seed=[3, 4])
    task = env.unwrapped.task
    task.commands[:] = [[0.8, 0.0, 0.4], [0.2, 0.0, -0.5]]
    trot = Trot(period=0.4, calf=-0.8, kv=1.5, kw=1.0)
    steps = np.array([[0, 5, 10], [3, 7, 19]])
    got = trot(env.unwrapped, steps)
    assert got.shape == (2, 3, 12)
    t = steps * 0.02
    for leg, (pair, side) in enumerate(zip((0, 1, 1, 0), (-1, 1, -1, 1), strict=True)):
        phase = 2 * np.pi * t / 0.4 + np.pi * pair
        stride = 1.5 * task.commands[:, :1] - side * 1.0 * task.commands[:, 2:]
        np.testing.assert_allclose(got[..., 3 * leg], 0.0)
        np.testing.assert_allclose(got[..., 3 * leg + 1], stride * np.cos(phase), atol=1e-12)
        np.testing.assert_allclose(got[..., 3 * leg + 2], -0.8 * np.maximum(np.sin(phase), 0), atol=1e-12)
    # a quarter period in (step 5): FR/RL at the top of their swing, FL/RR standing
    np.testing.assert_allclose(got[0, 1, [2, 11]], -0.8)
    np.testing.assert_allclose(got[0, 1, [5, 8]], 0.0, atol=1e-12)
    env.close()


def test_the_trot_refuses_settings_it_cannot_run():
    for kwargs in ({"period": 0.0}, {"period": np.nan}, {"calf": np.inf}, {"kv": np.nan}, {"kw": -np.inf}):
        with pytest.raises(InvalidArgumentError, match=next(iter(kwargs))):
            Trot(**kwargs)


def test_the_quadrupeds_planning_reward_is_its_reward_less_the_stated_costs():
    """planning_reward against the costs recomputed from qpos: the trunk's height (qpos z) off
    its height at a noiseless reset (home), its tilt (the up axis in the trunk frame, the third
    row of R(q) from the trunk's quaternion) and the hips' angles (qpos 7, 10, 13, 16; 0 at
    home), on rows tipped and splayed by random actions, and the fall cost (100) on a row
    marked fallen."""
    home = gym.make_vec("RoboDyn/Quadruped-v0", num_envs=1, reset_noise_scale=0.0)
    home.reset(seed=0)
    home_z = home.unwrapped.physics.data.qpos[0, 2]
    np.testing.assert_array_equal(home.unwrapped.physics.data.qpos[0, [7, 10, 13, 16]], 0.0)
    home.close()
    env = gym.make_vec("RoboDyn/Quadruped-v0", num_envs=4, autoreset_mode=AutoresetMode.DISABLED)
    env.reset(seed=[0, 1, 2, 3])
    rng = np.random.default_rng(1)
    for _ in range(15):
        _, reward, _, _, _ = env.step(rng.uniform(-1, 1, (4, 12)))
    task = env.unwrapped.task
    qpos = env.unwrapped.physics.data.qpos  # (B, 19): trunk position, quaternion (w, x, y, z), joints
    w, x, y, z = qpos[:, 3:7].T
    tilt = (2 * (x * z - w * y)) ** 2 + (2 * (y * z + w * x)) ** 2
    hips = qpos[:, [7, 10, 13, 16]]
    want = reward - 50.0 * (qpos[:, 2] - home_z) ** 2 - 50.0 * tilt - 5.0 * np.sum(hips**2, axis=1)
    assert np.all(tilt > 1e-4) and np.all(np.abs(hips).max(axis=1) > 1e-2)  # every term active
    assert not task.fallen.any()
    task.fallen[2] = True
    want[2] -= 100.0
    np.testing.assert_allclose(task.planning_reward(reward), want, rtol=0, atol=1e-12)
    env.close()
