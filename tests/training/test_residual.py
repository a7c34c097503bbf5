"""Residual policies (training.residual): the env a residual learner trains on sends
clip(baseline + scale * action), a zero residual is the baseline exactly, bad residual actions
change nothing, and a trained residual is saved and evaluated as the same sum."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest

import robogym  # noqa: F401  (registers RoboDyn/*)
from robodyn.envs.baselines import make_baseline
from robodyn.training.evaluate import PolicyError, _check_meta, make_policy
from robodyn.training.residual import ResidualError, ResidualPolicy, ResidualVectorEnv
from robodyn.training.train import TrainError, train

ENV_ID = "RoboDyn/Crane-v0"
TINY_PPO = {"n_steps": 32, "batch_size": 64, "n_epochs": 1}


def _pair(num_envs: int = 3, scale: float = 0.5):
    """(plain vector env, the same wrapped as a residual on its pd baseline)."""
    plain = gym.make_vec(ENV_ID, num_envs=num_envs)
    residual = ResidualVectorEnv(gym.make_vec(ENV_ID, num_envs=num_envs), "pd", scale)
    return plain, residual


def test_zero_residual_is_the_baseline_and_a_residual_adds_to_it():
    """Stepping the wrapper with a = 0 gives bit for bit the trajectory of the baseline run
    on the plain env; with random a it gives that of clip(baseline + 0.5 a), through an
    episode end and its autoreset."""
    plain, residual = _pair()
    base = make_baseline("pd", plain)
    rng = np.random.default_rng(3)
    for zero in (True, False):
        obs, _ = plain.reset(seed=7)
        obs_r, _ = residual.reset(seed=7)
        ends = 0
        for _ in range(450):  # past the crane's 400-step episodes
            a = np.zeros((3, 1)) if zero else rng.uniform(-1.0, 1.0, size=(3, 1))
            total = np.clip(base.act(plain, obs) + 0.5 * a, -1.0, 1.0)
            obs, rew, term, trunc, _ = plain.step(total)
            obs_r, rew_r, term_r, trunc_r, _ = residual.step(a)
            assert np.array_equal(obs, obs_r) and np.array_equal(rew, rew_r)
            assert np.array_equal(term, term_r) and np.array_equal(trunc, trunc_r)
            ends += int(np.sum(term | trunc))
        assert ends >= 3
    assert residual.single_action_space.shape == plain.single_action_space.shape
    assert np.all(residual.single_action_space.low == -1.0) and np.all(
        residual.single_action_space.high == 1.0
    )


@pytest.mark.parametrize(
    ("action", "match"),
    [
        (np.full((3, 1), np.nan), r"residual actions must be finite, of shape \(3, 1\); got shape \(3, 1\)"),
        (np.zeros((2, 1)), r"residual actions must be finite, of shape \(3, 1\); got shape \(2, 1\)"),
    ],
)
def test_bad_residual_actions_are_refused_and_change_nothing(action, match):
    _, residual = _pair()
    residual.reset(seed=1)
    residual.step(np.zeros((3, 1)))
    qpos = residual.unwrapped.physics.data.qpos.copy()
    with pytest.raises(ResidualError, match=match):
        residual.step(action)
    assert np.array_equal(residual.unwrapped.physics.data.qpos, qpos)


@pytest.mark.parametrize(
    ("base", "scale", "match"),
    [
        (
            "nope",
            1.0,
            r"residual baseline: RoboDyn/Crane-v0 has no baseline 'nope' "
            r"\(its baselines: pd, mpc, mpc_sampling, sampling\)",
        ),
        ("mpc_nopreview", 1.0, r"residual baseline: RoboDyn/Crane-v0 has no baseline 'mpc_nopreview'"),
        ("pd", 0.0, r"residual scale must be positive and finite, got 0.0"),
        ("pd", float("nan"), r"residual scale must be positive and finite, got nan"),
        ("pd", "big", r"residual scale must be a number, got 'big'"),
    ],
)
def test_residual_settings_are_refused(base, scale, match):
    with pytest.raises(ResidualError, match=match):
        ResidualVectorEnv(gym.make_vec(ENV_ID, num_envs=2), base, scale)


def test_residual_step_before_reset_is_refused():
    _, residual = _pair()
    with pytest.raises(ResidualError, match=r"step\(\) before reset\(\)"):
        residual.step(np.zeros((3, 1)))


def test_trained_residual_is_saved_and_evaluated_as_the_sum(tmp_path):
    """A tiny residual training records the baseline and scale in the sidecar; make_policy
    rebuilds clip(pd + 0.3 learner), for the final model and for a checkpoint (through the
    run's sidecar beside the checkpoints); continuing it under another baseline is refused."""
    out = tmp_path / "run"
    run = dict(num_envs=2, algo_kwargs=TINY_PPO, progress_bar=False, tensorboard=False, checkpoint_every=64)
    train(ENV_ID, total_timesteps=128, out_dir=out, residual="pd", residual_scale=0.3, **run)
    meta = json.loads((out / "ppo.json").read_text())
    assert meta["residual"] == {"base": "pd", "scale": 0.3}
    env = gym.make_vec(ENV_ID, num_envs=4)
    obs, _ = env.reset(seed=2)
    name, policy = make_policy(str(out / "ppo.zip"), env)
    assert name == "ppo" and isinstance(policy, ResidualPolicy)
    policy.reset(env, np.arange(4))
    learner = policy.learner.act(env, obs)
    expect = np.clip(make_baseline("pd", env).act(env, obs) + 0.3 * learner, -1.0, 1.0)
    assert np.array_equal(policy.act(env, obs), expect)
    assert np.any(learner != 0.0)
    _, snapshot = make_policy(str(out / "checkpoints" / "ppo_64_steps.zip"), env)  # the run's sidecar
    assert isinstance(snapshot, ResidualPolicy) and snapshot.scale == 0.3 and snapshot.base_name == "pd"
    with pytest.raises(TrainError, match=r"residual 'mpc': the init_model was trained with residual"):
        train(
            ENV_ID,
            total_timesteps=64,
            out_dir=tmp_path / "again",
            init_model=out / "ppo.zip",
            residual="mpc",
            **run,
        )
    assert not (tmp_path / "again").exists()


@pytest.mark.parametrize(
    "residual",
    [
        {"base": "pd"},
        {"base": 3, "scale": 1.0},
        {"base": "pd", "scale": -1.0},
        {"base": "pd", "scale": True},
        "pd",
    ],
)
def test_sidecar_with_a_bad_residual_entry_is_refused(tmp_path, residual):
    with pytest.raises(PolicyError, match=r"residual must be null or"):
        _check_meta({"algo": "ppo", "residual": residual}, tmp_path / "ppo.json")
