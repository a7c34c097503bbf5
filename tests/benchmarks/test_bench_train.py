"""benchmarks/bench_train.py: a tiny run on the crane splits each row's learn() time into
parts that are non-negative and add up to it, counts the calls SB3's loop makes (so a change
in what SB3 calls cannot silently move time into "other"), writes the JSON it returns, and
leaves SB3 unpatched. No timing is asserted."""

from __future__ import annotations

import json

import pytest
import stable_baselines3.common.on_policy_algorithm as on_policy
import torch

from benchmarks import bench_train
from robogym.registration import training_settings

ENV = "RoboDyn/Crane-v0"
ROW_KEYS = {"num_envs", "engine_threads", "timesteps", "seconds", "steps_per_second", "parts", "shares",
            "calls", "algo_kwargs"}  # fmt: skip


def run(tmp_path, algo: str, timesteps: int) -> tuple[dict, dict]:
    path = tmp_path / "train.json"
    argv = ["--env", ENV, "--algo", algo, "--num-envs", "4,8", "--timesteps", str(timesteps)]
    return bench_train.main([*argv, "--json", str(path)]), json.loads(path.read_text())


@pytest.mark.parametrize("algo, timesteps", [("ppo", 512), ("sac", 1100)])
def test_the_parts_add_up_to_each_rows_learn_time(tmp_path, capsys, algo, timesteps):
    original = on_policy.obs_as_tensor
    out, written = run(tmp_path, algo, timesteps)
    assert written == json.loads(json.dumps(out))
    assert on_policy.obs_as_tensor is original  # the module's function is restored
    assert out["env_id"] == ENV and out["algo"] == algo and out["timesteps"] == timesteps
    assert out["torch_threads"] == torch.get_num_threads() and out["warmup_seconds"] > 0
    assert out["parts"] == list(bench_train.PARTS)
    assert [r["num_envs"] for r in out["rows"]] == [4, 8]
    for r in out["rows"]:
        assert set(r) == ROW_KEYS
        n, steps, parts = r["num_envs"], r["timesteps"], r["parts"]
        assert set(parts) == set(bench_train.PARTS) and r["engine_threads"] >= 1
        assert steps >= timesteps and steps % n == 0 and r["seconds"] > 0
        assert r["steps_per_second"] == pytest.approx(steps / r["seconds"])
        assert all(v >= 0 for v in parts.values()), parts
        assert sum(parts.values()) == pytest.approx(r["seconds"], rel=1e-9)
        assert sum(r["shares"].values()) == pytest.approx(1.0)
        vector_steps, calls = steps // n, r["calls"]
        assert calls["env"] == 2 * vector_steps + 1  # step_async and step_wait per step, one reset
        if algo == "ppo":
            rollouts = steps // (128 * n)  # PPO_DEFAULTS' n_steps
            assert calls["update"] == rollouts
            assert calls["buffer"] == rollouts * (128 + 2)  # reset, 128 adds, GAE
            assert calls["inference"] >= 2 * vector_steps  # obs_as_tensor and forward
        else:
            gradient_steps = r["algo_kwargs"]["gradient_steps"]
            assert gradient_steps == max(1, n // 8) and calls["update"] >= 1
            assert calls["inference"] == vector_steps  # _sample_action
            assert calls["buffer"] == vector_steps + calls["update"] * gradient_steps  # adds, samples
    lines = capsys.readouterr().out.splitlines()
    assert f"torch threads {torch.get_num_threads()}" in lines[0]
    assert sum(line.split()[0] in ("4", "8") for line in lines) == 2  # a table line per row


@pytest.mark.parametrize(
    "argv",
    [["--num-envs", "0"], ["--num-envs", "4,x"], ["--timesteps", "0"], ["--env", "RoboDyn/NoSuchTask-v0"],
     ["--json", "/no/such/directory/out.json"]],
)  # fmt: skip
def test_bad_arguments_are_refused_before_any_work(argv, capsys):
    with pytest.raises(SystemExit) as e:
        bench_train.main(argv)
    assert e.value.code == 2
    assert "warm-up" not in capsys.readouterr().out


def test_task_settings_build_the_model_robodyn_train_builds(tmp_path):
    """--task-settings: the row's model has the algorithm keywords the task declares (the
    crane: 5 epochs) and VecNormalize; without it, train()'s defaults (10 epochs)."""
    task = training_settings(ENV, "ppo")
    assert task["algo_kwargs"] == {"n_epochs": 5} and task["vecnormalize"]
    argv = ["--env", ENV, "--num-envs", "8", "--timesteps", "1024"]
    out = bench_train.main([*argv, "--task-settings"])
    assert out["vecnormalize"] and out["task_algo_kwargs"] == {"n_epochs": 5}
    assert out["rows"][0]["algo_kwargs"]["n_epochs"] == 5
    plain = bench_train.main(argv)
    assert not plain["vecnormalize"] and plain["task_algo_kwargs"] == {}
    assert plain["rows"][0]["algo_kwargs"]["n_epochs"] == 10
