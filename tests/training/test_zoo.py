"""Train here, run there. `robodyn train ... --hyperparams zoo`: the RL Baselines3 Zoo's tuned
PPO settings for a port of a Gymnasium task (training/zoo.py) build the model, replace
train()'s defaults, and are recorded in the sidecar; a task or algorithm the Zoo has no
settings for is refused. `robodyn eval ... --gymnasium`: the policy trained on RoboDyn runs
unchanged on Gymnasium's own env (MuJoCo's physics), episode for episode as on RoboDyn."""

from __future__ import annotations

import json

import pytest
import torch

from robodyn.training.cli import main
from robodyn.training.evaluate import evaluate, evaluate_gymnasium, load_sb3_model, load_sb3_policy
from robodyn.training.train import TrainError, train
from robodyn.training.zoo import PPO_ZOO, zoo_settings


def test_a_zoo_run_uses_the_zoos_settings_and_records_them(tmp_path):
    out = tmp_path / "hopper"
    rc = main(["train", "RoboDyn/Hopper-v5", "--hyperparams", "zoo", "--timesteps", "512", "--out", str(out),
               "--no-progress", "--log-every", "0"])  # fmt: skip
    assert rc == 0
    meta = json.loads((out / "ppo.json").read_text())
    zoo = zoo_settings("RoboDyn/Hopper-v5", "ppo")
    assert meta["hyperparams"] == "zoo" and "--hyperparams zoo" in meta["command"]
    assert meta["num_envs"] == zoo["n_envs"] == 1 and meta["vecnormalize_kwargs"] is not None
    used = meta["algo_kwargs"]
    for key, value in zoo["algo_kwargs"].items():
        if key != "policy_kwargs":
            assert used[key] == value, key
    assert used["use_sde"] is False  # train()'s own defaults (gSDE) are not mixed in
    model = load_sb3_model(out / "ppo.zip", ["PPO"])
    assert model.n_steps == 512 and model.batch_size == 32 and model.n_epochs == 5
    assert model.policy.activation_fn is torch.nn.ReLU and model.policy.ortho_init is False
    layers = [m.out_features for m in model.policy.mlp_extractor.policy_net if hasattr(m, "out_features")]
    assert layers == [256, 256]


def test_the_zoo_settings_cite_their_entries():
    assert PPO_ZOO["RoboDyn/Hopper-v5"][0] == "Hopper-v3"
    assert zoo_settings("RoboDyn/Hopper-v5", "ppo")["algo_kwargs"]["learning_rate"] == 9.80828e-05


@pytest.mark.parametrize(
    ("env_id", "algo", "match"),
    [("RoboDyn/Crane-v0", "ppo", "not ppo on RoboDyn/Crane-v0"), ("RoboDyn/Hopper-v5", "sac", "not sac")],
)
def test_no_zoo_settings_is_refused(tmp_path, env_id, algo, match):
    with pytest.raises(TrainError, match=match):
        train(env_id, algo=algo, total_timesteps=64, out_dir=tmp_path / "x", hyperparams="zoo")
    assert not (tmp_path / "x").exists()


def test_unknown_hyperparams_are_refused(tmp_path):
    with pytest.raises(TrainError, match="hyperparams must be one of"):
        train("RoboDyn/Hopper-v5", total_timesteps=64, out_dir=tmp_path / "x", hyperparams="tuned")


def test_a_policy_trained_here_runs_on_gymnasium_with_the_same_returns(tmp_path, capsys):
    out = tmp_path / "hopper"
    argv = ["train", "RoboDyn/Hopper-v5", "--hyperparams", "zoo", "--timesteps", "512"]
    assert main([*argv, "--out", str(out), "--no-progress", "--log-every", "0"]) == 0
    policy = load_sb3_policy(out / "ppo.zip")
    ours = evaluate("RoboDyn/Hopper-v5", policy, episodes=6, num_envs=3, seed=5)
    theirs = evaluate_gymnasium("RoboDyn/Hopper-v5", policy, episodes=6, seed=5)
    assert theirs["env"] == "Hopper-v5"
    # the same physics (tests/envs/test_gymnasium_v5.py): every episode's length and return agree
    assert [e["length"] for e in ours.episodes] == theirs["lengths"].tolist()
    worst = max(abs(e["return"] - r) for e, r in zip(ours.episodes, theirs["returns"], strict=True))
    print(f"\nworst return difference over 6 episodes: {worst:.1e}")
    assert worst < 1e-6
    capsys.readouterr()
    argv = ["eval", "RoboDyn/Hopper-v5", "--policy", str(out / "ppo.zip"), "--episodes", "4", "--gymnasium"]
    rc = main([*argv, "--record", "0", "--out", str(tmp_path / "eval")])
    said = capsys.readouterr().out
    assert rc == 0 and "Gymnasium (MuJoCo)" in said and "0.00 standard errors apart" in said
    doc = json.loads((tmp_path / "eval" / "results.json").read_text())
    assert doc["gymnasium"]["ppo"]["env"] == "Hopper-v5" and len(doc["gymnasium"]["ppo"]["returns"]) == 4


def test_gymnasium_crosscheck_needs_a_port_and_a_trained_policy(tmp_path, capsys):
    assert main(["eval", "RoboDyn/Crane-v0", "--policy", "pd", "--episodes", "1", "--gymnasium",
                 "--out", str(tmp_path / "a")]) == 2  # fmt: skip
    assert "not a port of a Gymnasium task" in capsys.readouterr().err
    assert main(["eval", "RoboDyn/Hopper-v5", "--policy", "random", "--episodes", "1", "--gymnasium",
                 "--record", "0", "--out", str(tmp_path / "b")]) == 2  # fmt: skip
    assert "give one with --policy MODEL.zip" in capsys.readouterr().err
