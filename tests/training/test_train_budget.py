"""Training to a budget and watching it learn: `--wall-time` ends a run at a wall-clock budget
and saves it as a step budget would; `--eval-every` evaluates the policy being trained
(deterministic, the run's VecNormalize statistics) without changing what the run trains, and
its points are `evaluate`'s numbers for the same policy; `curve.json` and
`learning_curve.png` hold the curve; a task's own training settings (its registration's
`training`) come between train()'s defaults and the user's."""

from __future__ import annotations

import dataclasses
import json
import time

import numpy as np
import pytest
import torch

import robogym.registration as registration
from robodyn.training.cli import main
from robodyn.training.evaluate import evaluate, load_sb3_policy
from robodyn.training.train import PPO_DEFAULTS, RunClock, TrainError, train
from robogym.errors import InvalidArgumentError
from robogym.registration import check_training

ENV_ID = "RoboDyn/Crane-v0"
SHORT = {"max_episode_steps": 24}  # 24-step episodes: a run of a few hundred steps ends many
TINY = {"n_steps": 32, "batch_size": 64, "n_epochs": 2}


def _params(path) -> list[torch.Tensor]:
    return [p.detach().clone() for p in load_sb3_policy(path).model.policy.parameters()]


def test_wall_time_ends_the_run_and_saves_it_as_the_step_budget_would(tmp_path):
    out = tmp_path / "run"
    argv = ["train", ENV_ID, "--timesteps", "10000000", "--num-envs", "4", "--vecnormalize"]
    argv += ["--algo-kwargs", json.dumps(TINY), "--env-kwargs", json.dumps(SHORT)]
    assert main([*argv, "--wall-time", "2", "--no-progress", "--out", str(out)]) == 0
    meta = json.loads((out / "ppo.json").read_text())
    print(f"stopped after {meta['seconds']} s at {meta['timesteps']:,} of 10,000,000 steps")
    assert meta["stopped"] == "wall_time" and meta["wall_time"] == 2.0
    assert 2.0 <= meta["seconds"] < 60 and 0 < meta["timesteps"] < 10_000_000
    # the saved run is whole: the model, its statistics and the sidecar load and evaluate
    r = evaluate(ENV_ID, out / "ppo.zip", episodes=4, num_envs=4, env_kwargs=SHORT, record=0)
    assert len(r.episodes) == 4 and np.isfinite(r.summary()["mean_return"])
    assert json.loads((out / "curve.json").read_text())["stopped"] == "wall_time"
    assert (out / "learning_curve.png").stat().st_size > 0


def test_a_run_within_its_wall_time_ends_by_its_steps(tmp_path):
    result = train(
        ENV_ID, total_timesteps=256, num_envs=4, out_dir=tmp_path, env_kwargs=SHORT, algo_kwargs=TINY,
        wall_time=3600, progress_bar=False, tensorboard=False,
    )  # fmt: skip
    meta = json.loads(result.model_path.with_suffix(".json").read_text())
    assert meta["stopped"] == "timesteps" and meta["timesteps"] == 256


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf")])
def test_a_wall_time_that_is_not_a_positive_number_is_refused(tmp_path, bad):
    with pytest.raises(TrainError, match="wall_time must be a positive number"):
        train(ENV_ID, total_timesteps=64, num_envs=2, out_dir=tmp_path / "x", wall_time=bad)
    assert not (tmp_path / "x").exists()


def test_cli_refuses_a_wall_time_that_is_not_positive(capsys):
    with pytest.raises(SystemExit) as e:
        main(["train", ENV_ID, "--wall-time", "0"])
    assert e.value.code == 2
    assert "argument --wall-time: must be a finite number > 0, got '0'" in capsys.readouterr().err


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    """The same 768-step run twice, with and without evaluations every 256 steps."""
    runs = {}
    for name, every in (("plain", 0), ("evaluated", 256)):
        out = tmp_path_factory.mktemp(name)
        train(
            ENV_ID, total_timesteps=768, num_envs=4, seed=5, out_dir=out, vecnormalize=True,
            env_kwargs=SHORT, algo_kwargs=TINY, eval_every=every, eval_episodes=6, eval_seed=40,
            progress_bar=False, tensorboard=False, log_every=256,
        )  # fmt: skip
        runs[name] = out
    return runs


def test_evaluating_during_training_changes_nothing_it_trains(evaluated):
    plain, watched = (_params(evaluated[k] / "ppo.zip") for k in ("plain", "evaluated"))
    assert len(plain) == len(watched)
    for a, b in zip(plain, watched, strict=True):
        assert torch.equal(a, b)


def test_the_evaluation_points_are_evaluates_numbers_for_the_policy(evaluated):
    curve = json.loads((evaluated["evaluated"] / "curve.json").read_text())
    points = curve["eval"]["points"]
    assert curve["eval"]["episodes"] == 6 and curve["eval"]["seed"] == 40
    # at the start, at the first rollout start past every 256 steps, at the end
    assert [p["steps"] for p in points] == [0, 256, 512, 768]
    seconds = [p["seconds"] for p in points]
    assert (
        seconds == sorted(seconds)
        and seconds[-1] <= json.loads((evaluated["evaluated"] / "ppo.json").read_text())["seconds"] + 0.1
    )
    # the last point is the saved model, evaluated as `robodyn eval` does (its statistics too)
    final = evaluate(ENV_ID, evaluated["evaluated"] / "ppo.zip", episodes=6, num_envs=6, seed=40,
                     env_kwargs=SHORT, record=0).summary()  # fmt: skip
    print(f"last point {points[-1]['mean_return']!r}, evaluate {final['mean_return']!r}")
    assert points[-1]["mean_return"] == final["mean_return"]
    assert points[-1]["final_position_error_mean"] == final["final_position_error_mean"]
    assert points[-1]["success_rate"] == final["success_rate"]
    # the progress lines' numbers are the training curve, training seconds rising
    train_points = curve["train"]
    assert [p["steps"] for p in train_points] == [256, 512, 768]
    assert all(p["window"] > 0 and p["mean_return"] is not None for p in train_points)
    assert (evaluated["evaluated"] / "learning_curve.png").stat().st_size > 0
    meta = json.loads((evaluated["evaluated"] / "ppo.json").read_text())
    assert meta["eval"] == {"every": 256, "episodes": 6, "seed": 40} and meta["eval_seconds"] > 0
    assert "--eval-every 256 --eval-episodes 6 --eval-seed 40" in meta["command"]


def test_the_progress_line_and_the_evaluation_line(tmp_path, capsys):
    args = ["train", ENV_ID, "--timesteps", "256", "--num-envs", "4", "--no-progress", "--log-every", "128"]
    args += ["--env-kwargs", json.dumps(SHORT), "--algo-kwargs", json.dumps(TINY)]
    assert main([*args, "--eval-every", "128", "--eval-episodes", "4", "--out", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    evals = [line for line in lines if line.startswith("  eval at ")]
    progress = [line for line in lines if " steps (" in line and line not in evals]
    assert len(progress) == 2 and "256/256 steps (100%), " in progress[-1]
    seconds = float(progress[-1].split("(100%), ")[1].split(" s, ")[0])
    assert seconds > 0 and " steps/s, " in progress[-1]
    assert len(evals) == 3 and evals[0].startswith("  eval at 0 steps (")
    assert all("success " in e and e.endswith("(4 episodes, deterministic)") for e in evals)


def test_evaluating_a_task_without_a_time_limit_is_refused_before_training(tmp_path):
    with pytest.raises(TrainError, match="no time limit"):
        train(
            "RoboDyn/dmc-lqr-lqr_2_1-v0",
            total_timesteps=64,
            num_envs=2,
            out_dir=tmp_path / "x",
            eval_every=32,
        )
    assert not (tmp_path / "x").exists()


def test_run_clock_leaves_out_the_paused_time():
    clock = RunClock()
    clock.start()
    with clock.pause():
        t = clock.seconds()
        time.sleep(0.3)
    # the 0.3 s inside the pause are not training time; what remains is the calls' own time
    assert clock.paused >= 0.3 and clock.seconds() - t < 0.2


# --- a task's own training settings ----------------------------------------------------------
@pytest.fixture
def declared():
    """Crane-v0 registered with its own PPO settings (the registry's entry replaced)."""
    settings = {"num_envs": 3, "timesteps": 96, "vecnormalize": True,
                "algo_kwargs": {"n_steps": 16, "batch_size": 48, "gamma": 0.9, "n_epochs": 1}}  # fmt: skip
    k = next(i for i, t in enumerate(registration.TASKS) if t.id == ENV_ID)
    entry = registration.TASKS[k]
    registration.TASKS[k] = dataclasses.replace(entry, training={"ppo": settings})
    try:
        yield settings
    finally:
        registration.TASKS[k] = entry


def test_a_tasks_own_settings_are_the_defaults(tmp_path, declared):
    assert main(["train", ENV_ID, "--no-progress", "--out", str(tmp_path)]) == 0
    meta = json.loads((tmp_path / "ppo.json").read_text())
    assert meta["num_envs"] == 3 and meta["total_timesteps"] == 96 and meta["vecnormalize"]
    assert meta["task_settings"] == declared and meta["algo_kwargs_given"] == {}
    used = meta["algo_kwargs"]
    assert (used["n_steps"], used["batch_size"], used["gamma"], used["n_epochs"]) == (16, 48, 0.9, 1)
    assert used["use_sde"] is PPO_DEFAULTS["use_sde"]  # train()'s default where the task sets none
    assert meta["vecnormalize_kwargs"]["gamma"] == 0.9  # the task's discount reaches VecNormalize


def test_the_users_settings_override_the_tasks(tmp_path, declared):
    args = ["train", ENV_ID, "--no-progress", "--num-envs", "6", "--timesteps", "192", "--no-vecnormalize"]
    assert main([*args, "--algo-kwargs", '{"gamma": 0.95}', "--out", str(tmp_path)]) == 0
    meta = json.loads((tmp_path / "ppo.json").read_text())
    assert meta["num_envs"] == 6 and meta["total_timesteps"] == 192 and meta["vecnormalize"] is None
    used = meta["algo_kwargs"]
    assert used["gamma"] == 0.95 and used["n_steps"] == 16  # the user's over the task's
    assert "--no-vecnormalize" in meta["command"]


@pytest.mark.parametrize(
    "training, message",
    [
        ({"dqn": {}}, "the algorithm must be one of"),
        ({"ppo": {"batch": 4}}, "unknown key 'batch'"),
        ({"ppo": {"num_envs": 0}}, r"\['num_envs'\]: invalid value 0"),
        ({"ppo": {"timesteps": True}}, r"\['timesteps'\]: invalid value True"),
        ({"ppo": {"vecnormalize": 1}}, r"\['vecnormalize'\]: invalid value 1"),
        ({"sac": []}, "must be a dict"),
    ],
)
def test_a_bad_training_declaration_is_refused_at_registration(training, message):
    with pytest.raises(InvalidArgumentError, match=message):
        check_training("Me/Task-v0", training)


def test_a_sweep_takes_the_tasks_settings_as_train_does(tmp_path, declared):
    args = ["sweep", ENV_ID, "--seeds", "0", "--eval-episodes", "2", "--eval-num-envs", "2"]
    assert main([*args, "--out", str(tmp_path)]) == 0
    (sidecar,) = tmp_path.glob("*/ppo.json")
    meta = json.loads(sidecar.read_text())
    assert meta["num_envs"] == 3 and meta["total_timesteps"] == 96 and meta["vecnormalize"] is not None
    assert meta["task_settings"] == declared and meta["algo_kwargs"]["gamma"] == 0.9


def test_a_residual_runs_evaluations_act_as_the_saved_residual_does(tmp_path):
    """The evaluations of a residual learner act with its baseline added (the sum it trains
    on): the last point equals `evaluate()` of the saved residual model."""
    train(
        ENV_ID, total_timesteps=256, num_envs=4, out_dir=tmp_path, env_kwargs=SHORT, algo_kwargs=TINY,
        residual="pd", residual_scale=0.3, eval_every=128, eval_episodes=4,
        progress_bar=False, tensorboard=False,
    )  # fmt: skip
    points = json.loads((tmp_path / "curve.json").read_text())["eval"]["points"]
    final = evaluate(
        ENV_ID, tmp_path / "ppo.zip", episodes=4, num_envs=4, seed=1000, env_kwargs=SHORT, record=0
    )
    print(f"last point {points[-1]['mean_return']!r}, evaluate {final.summary()['mean_return']!r}")
    assert final.policy == "ppo" and [p["steps"] for p in points] == [0, 128, 256]
    assert points[-1]["mean_return"] == final.summary()["mean_return"]
    assert points[-1]["final_position_error_mean"] == final.summary()["final_position_error_mean"]
