"""`robodyn export POLICY.zip --onnx`: the ONNX file, run with onnxruntime, gives the action
evaluation takes (VecNormalize's normalize_obs, then SB3's predict(deterministic=True)) for
raw observations, for the shipped crane PPO and for squashed (SAC) and clipped (PPO) policies
on an action box other than [-1, 1]; bad input is refused with exit code 2 and no file."""

from __future__ import annotations

import json
import zipfile

import gymnasium as gym
import numpy as np
import onnx
import onnxruntime
import pytest
from gymnasium.vector import AutoresetMode

from robodyn.training.cli import SAVED_POLICIES, main
from robodyn.training.evaluate import load_sb3_policy
from robodyn.training.export import export_onnx, predict_actions

CRANE = SAVED_POLICIES / "crane_ppo.zip"


def run_onnx(path, obs: np.ndarray) -> np.ndarray:
    """The file's action for a batch of observations, by onnxruntime on the CPU."""
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, {"obs": obs})[0]


def crane_observations(n_rollout: int = 800, n_far: int = 200) -> np.ndarray:
    """n_rollout observations of the crane, every 4th step of 8 episodes (seeds 0..7) driven by
    the shipped policy with uniform noise of +-0.3 on its actions (the move, the arrival and
    the hold, saturated and interior actions both), then n_far drawn 15 standard deviations
    wide about the policy's normalization mean, beyond its clip_obs = 10."""
    policy = load_sb3_policy(CRANE)
    env = gym.make_vec("RoboDyn/Crane-v0", num_envs=8, autoreset_mode=AutoresetMode.DISABLED)
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=list(range(8)))
    rows = []
    for step in range(4 * n_rollout // 8):
        if step % 4 == 0:
            rows.append(obs)
        action = predict_actions(policy, obs) + rng.uniform(-0.3, 0.3, (8, 1))
        obs, *_ = env.step(np.clip(action, -1, 1))
    env.close()
    norm = policy.obs_normalizer
    far = norm.obs_rms.mean + np.sqrt(norm.obs_rms.var) * rng.normal(size=(n_far, 7)) * 15
    return np.concatenate([*rows, far])


def test_crane_ppo_onnx_equals_predict_on_1000_observations(tmp_path, capsys):
    out = tmp_path / "crane.onnx"
    assert main(["export", str(CRANE), "--onnx", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"wrote {out}" in printed and "VecNormalize folded in" in printed
    obs = crane_observations()
    assert obs.shape == (1000, 7) and obs.dtype == np.float64
    policy = load_sb3_policy(CRANE)
    want = predict_actions(policy, obs)
    got = run_onnx(out, obs)
    assert got.shape == (1000, 1) and got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)
    # the set exercises what was folded in: observations clipped by the normalization, actions
    # clipped to the box and actions inside it
    normalized = policy.obs_normalizer.normalize_obs(obs)
    assert np.sum(np.abs(normalized) == policy.obs_normalizer.clip_obs) > 50
    assert np.sum(np.abs(want) == 1.0) > 50 and np.sum(np.abs(want) < 0.9) > 50
    # without the statistics the actions would be others: the normalization is in the graph
    raw, _ = policy.model.predict(obs, deterministic=True)
    assert np.max(np.abs(raw - want)) > 0.1
    # one row at a time gives the same as the batch
    np.testing.assert_allclose(run_onnx(out, obs[:1]), got[:1], rtol=0, atol=1e-6)
    meta = {p.key: p.value for p in onnx.load(str(out)).metadata_props}
    assert meta["env_id"] == "RoboDyn/Crane-v0" and meta["algo"] == "PPO" and meta["source"] == CRANE.name
    assert json.loads(meta["action_low"]) == [-1.0] and json.loads(meta["action_high"]) == [1.0]


@pytest.mark.parametrize("algo", ["SAC", "PPO"])
def test_squashed_and_clipped_policies_on_a_wider_action_box(tmp_path, algo):
    """Pendulum's torque is in [-2, 2]: SAC's tanh action is rescaled to it, PPO's Gaussian mean
    clipped to it, as predict does (a model without a sidecar: its algorithm found by loading)."""
    import stable_baselines3

    cls = getattr(stable_baselines3, algo)
    kwargs = {"policy_kwargs": {"log_std_init": 1.0}} if algo == "PPO" else {}
    model = cls("MlpPolicy", "Pendulum-v1", seed=0, device="cpu", **kwargs)
    if algo == "PPO":  # mean actions well beyond the box for some observations, inside for others
        import torch

        torch.manual_seed(0)
        model.policy.action_net.weight.data = torch.randn_like(model.policy.action_net.weight) * 3.0
    model.save(tmp_path / "pendulum.zip")
    result = export_onnx(tmp_path / "pendulum.zip", tmp_path / "pendulum.onnx")
    assert result.algo == algo and not result.normalized and result.max_error <= 1e-5
    obs = np.random.default_rng(1).normal(size=(1000, 3)).astype(np.float32) * 3
    want, _ = model.predict(obs, deterministic=True)
    got = run_onnx(result.path, obs)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)
    assert np.max(np.abs(want)) > 1.0  # beyond [-1, 1]: the rescaling or the clip mattered
    if algo == "PPO":
        assert np.sum(np.abs(want) == 2.0) > 10  # clipped to the box


def refused(argv, capsys) -> str:
    """The one-line error of a refused `robodyn` command (exit code 2)."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("robodyn: error: ") and err.count("\n") == 1 and "Traceback" not in err
    return err


def test_bad_input_is_refused_and_writes_nothing(tmp_path, capsys):
    import stable_baselines3

    out = tmp_path / "out.onnx"
    assert "does not exist" in refused(
        ["export", str(tmp_path / "no.zip"), "--onnx", "--out", str(out)], capsys
    )
    text = tmp_path / "notes.zip"
    text.write_text("not a zip")
    assert "not a stable-baselines3 model zip" in refused(["export", str(text), "--onnx"], capsys)
    other = tmp_path / "other.zip"
    with zipfile.ZipFile(other, "w") as z:
        z.writestr("hello.txt", "a zip, but not a model")
    assert "not a stable-baselines3 model zip" in refused(["export", str(other), "--onnx"], capsys)
    dqn = tmp_path / "dqn.zip"
    stable_baselines3.DQN("MlpPolicy", "CartPole-v1", device="cpu", learning_starts=0).save(dqn)
    err = refused(["export", str(dqn), "--onnx", "--out", str(out)], capsys)
    assert "stable_baselines3.dqn.policies" in err and "does not support" in err and "PPO, A2C, SAC" in err
    err = refused(["export", str(SAVED_POLICIES / "tracking_ppo.zip"), "--onnx", "--out", str(out)], capsys)
    assert "residual policy on the baseline 'pd'" in err
    assert "--onnx" in refused(["export", str(CRANE), "--out", str(out)], capsys)
    assert "the model itself" in refused(["export", str(CRANE), "--onnx", "--out", str(CRANE)], capsys)
    assert "is a directory" in refused(["export", str(CRANE), "--onnx", "--out", str(tmp_path)], capsys)
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == [
        "dqn.zip",
        "notes.zip",
        "other.zip",
    ]
