"""robogym.sb3: the stable-baselines3 VecEnv adapter over the native vector env.

The adapter's same-step autoreset is checked against a reference RoboDynVectorEnv with
autoreset DISABLED, stepped with the same actions and reset by hand: terminal observations,
the observation after the reset, rewards, TimeLimit.truncated and the per-row info must all
match exactly, across episodes that end by termination and by truncation at different
steps in different rows.
"""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from stable_baselines3 import PPO
from stable_baselines3.common.env_checker import check_env

import robogym
from robogym.sb3 import SB3VecEnv, make_sb3_env

ENV_ID = "RoboDyn/Crane-v0"
# A short rail and time limit: rows starting beyond x = -11 end by termination on the
# first step, the others are driven towards -11 and end either way within 20 steps.
SHORT = dict(rail_limit=11.0, max_episode_steps=20)


def test_check_env_passes_on_the_single_env():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(gym.make(ENV_ID))
    other = [str(w.message) for w in caught if "dtype float64" not in str(w.message)]
    assert other == []  # the float64 action dtype is the project's choice; nothing else is flagged


def test_adapter_refuses_other_autoreset_modes():
    vec = gym.make_vec(ENV_ID, num_envs=2)  # NEXT_STEP
    with pytest.raises(ValueError, match="SAME_STEP"):
        SB3VecEnv(vec)


def test_same_step_autoreset_matches_manual_resets():
    n, seed = 8, 3
    env = make_sb3_env(ENV_ID, n, seed=seed, monitor=False, **SHORT)
    ref = gym.make_vec(ENV_ID, num_envs=n, autoreset_mode="Disabled", **SHORT)
    obs = env.reset()
    ref_obs, _ = ref.reset(seed=seed)
    np.testing.assert_array_equal(obs, ref_obs)

    rng = np.random.default_rng(0)
    ends = {"terminated": 0, "truncated": 0}
    mixed_steps = 0
    for _ in range(60):
        action = np.clip(-0.8 + 0.4 * rng.standard_normal((n, 1)), -1, 1)
        obs, reward, dones, infos = env.step(action)
        ref_obs, ref_reward, term, trunc, ref_info = ref.step(action)
        np.testing.assert_array_equal(dones, term | trunc)
        np.testing.assert_array_equal(reward, ref_reward.astype(np.float32))
        assert reward.dtype == np.float32 and len(infos) == n
        for i in range(n):
            assert infos[i]["TimeLimit.truncated"] == bool(trunc[i] and not term[i])
            for key in (
                "reward_position",
                "reward_arrive",
                "reward_jerk",
                "reward_rail",
                "success",
                "reward_control",
                "position_error",
                "swing_amplitude",
            ):
                assert infos[i][key] == ref_info[key][i], (i, key)
            if dones[i]:
                np.testing.assert_array_equal(infos[i]["terminal_observation"], ref_obs[i])
            else:
                assert "terminal_observation" not in infos[i]
                np.testing.assert_array_equal(obs[i], ref_obs[i])
        if dones.any():
            ends["terminated"] += int(term.sum())
            ends["truncated"] += int(trunc.sum())
            mixed_steps += int(not dones.all())
            ref_obs, _ = ref.reset(options={"reset_mask": dones.copy()})
            np.testing.assert_array_equal(obs, ref_obs)  # the new episodes' first observations
    assert ends["terminated"] >= 3 and ends["truncated"] >= 3 and mixed_steps >= 2, ends


def test_seed_attributes_and_methods():
    env = make_sb3_env(ENV_ID, 3, monitor=False)
    assert env.seed(7) == [7, 8, 9]
    obs = env.reset()
    ref_obs, _ = gym.make_vec(ENV_ID, num_envs=3).reset(seed=7)
    np.testing.assert_array_equal(obs, ref_obs)
    assert env.get_attr("dt") == [0.05] * 3
    assert env.get_attr("max_episode_steps", indices=[1]) == [400]
    assert env.env_is_wrapped(gym.Wrapper) == [False] * 3
    env.set_attr("custom", 1.5)
    assert env.get_attr("custom") == [1.5] * 3
    with pytest.raises(ValueError, match="all environments"):
        env.set_attr("custom", 2.0, indices=[0])
    snaps = env.env_method("snapshot")
    assert len(snaps) == 3 and isinstance(snaps[0], robogym.EnvSnapshot)
    env.close()


def test_ppo_trains_through_the_adapter_with_vecmonitor():
    env = make_sb3_env(ENV_ID, 4, seed=0, max_episode_steps=50)
    model = PPO("MlpPolicy", env, n_steps=64, batch_size=128, n_epochs=2, seed=0, device="cpu")
    model.learn(total_timesteps=512)
    assert model.num_timesteps == 512
    # 4 envs x 128 steps of 50-step episodes: 8 finished episodes, logged by VecMonitor with the metrics
    episodes = list(model.ep_info_buffer)
    assert len(episodes) == 8
    for ep in episodes:
        assert ep["l"] == 50
        assert 0.0 <= ep["swing_amplitude"] < 1.0 and ep["position_error"] > 0.0
        assert np.isfinite(ep["r"])
    action, _ = model.predict(env.reset(), deterministic=True)
    assert action.shape == (4, 1)


def test_render_tiles_every_row():
    env = make_sb3_env(ENV_ID, 2, monitor=False, render_mode="rgb_array", width=64, height=48)
    env.seed(0)
    env.reset()
    frames = env.get_images()
    assert len(frames) == 2 and frames[0].shape == (48, 64, 3)
    assert env.render().shape == (2 * 48, 64, 3)  # SB3 tiles the frames (2 rows of 1)
    assert frames[0].std() > 0  # not a blank frame
    env.close()
