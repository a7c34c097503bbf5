"""What `robodyn train` records and prints, and what `robodyn eval` shows while it runs: the
sidecar of a tiny run (the command line, every algorithm keyword the model was built with,
the env keywords, seed, num_envs, VecNormalize, timesteps), the progress lines (steps, mean
return and success rate of the recent episodes, checked against SB3's own episode buffer),
and eval's bar over the environment steps of each block."""

from __future__ import annotations

import contextlib
import inspect
import io
import json
import shlex
from types import SimpleNamespace

import numpy as np
import pytest
import stable_baselines3

import robodyn.training.train
from robodyn.training.cli import main
from robodyn.training.evaluate import evaluate, load_sb3_policy, read_model_meta
from robodyn.training.train import SET_BY_TRAIN, TrainingLog

ENV_ID = "RoboDyn/Crane-v0"
ARGV = [
    "train", ENV_ID, "--timesteps", "512", "--num-envs", "4", "--seed", "3", "--no-progress",
    "--vecnormalize", "--env-kwargs", '{"max_episode_steps": 16, "max_accel": 0.8}',
    "--algo-kwargs", '{"n_steps": 32, "batch_size": 64, "n_epochs": 1, "ent_coef": 0.01}',
    "--log-every", "128", "--checkpoint-every", "256",
]  # fmt: skip


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A 512-step PPO run through `robodyn train` (16-step episodes: 32 end), its printed
    output, and the episode buffer SB3 held at the end of training."""
    out = tmp_path_factory.mktemp("train")
    seen = {}

    class Recording(TrainingLog):  # keeps SB3's own episode statistics for the comparison
        def _on_training_end(self):
            super()._on_training_end()
            seen["ep_info_buffer"] = list(self.model.ep_info_buffer)

    mp = pytest.MonkeyPatch()
    mp.setattr(robodyn.training.train, "TrainingLog", Recording)
    buf = io.StringIO()  # capsys is function-scoped: the module's run is captured here
    try:
        with contextlib.redirect_stdout(buf):
            assert main([*ARGV, "--out", str(out)]) == 0
    finally:
        mp.undo()
    return SimpleNamespace(out=out, stdout=buf.getvalue(), buffer=seen["ep_info_buffer"])


def test_sidecar_has_the_command_line_and_every_setting(run):
    meta = json.loads((run.out / "ppo.json").read_text())
    argv = [*ARGV, "--out", str(run.out)]
    assert meta["command"] == shlex.join(["robodyn", *argv])
    assert shlex.split(meta["command"])[1:] == argv  # it runs again as it was
    assert meta["env_id"] == ENV_ID and meta["algo"] == "ppo"
    assert meta["env_kwargs"] == {"max_episode_steps": 16, "max_accel": 0.8}
    assert meta["seed"] == 3 and meta["num_envs"] == 4
    assert meta["total_timesteps"] == 512 and meta["timesteps"] == 512
    assert meta["vecnormalize"] == "ppo_vecnormalize.pkl" and (run.out / meta["vecnormalize"]).is_file()
    assert meta["vecnormalize_kwargs"] == {
        "norm_obs": True,
        "norm_reward": True,
        "clip_obs": 10.0,
        "clip_reward": 10.0,
        "gamma": 0.995,  # train's PPO discount
        "epsilon": 1e-8,
    }
    assert meta["algo_kwargs_given"] == {"n_steps": 32, "batch_size": 64, "n_epochs": 1, "ent_coef": 0.01}
    used = meta["algo_kwargs"]
    # every keyword of PPO's constructor but those train sets itself
    params = inspect.signature(stable_baselines3.PPO.__init__).parameters
    assert set(used) == {k for k in params if k not in SET_BY_TRAIN and k != "self"}
    assert used["n_steps"] == 32 and used["batch_size"] == 64 and used["ent_coef"] == 0.01  # the user's
    assert used["use_sde"] is True and used["sde_sample_freq"] == 8 and used["gamma"] == 0.995  # train's
    assert used["policy_kwargs"] == {"log_std_init": -1.0}
    assert used["clip_range"] == 0.2 and used["vf_coef"] == 0.5 and used["max_grad_norm"] == 0.5  # SB3's
    # and they are what the saved model holds
    model = load_sb3_policy(run.out / "ppo.zip").model
    for key in ("n_steps", "batch_size", "n_epochs", "gamma", "gae_lambda", "ent_coef", "vf_coef", "use_sde"):
        assert getattr(model, key) == used[key], key
    assert model.clip_range(1.0) == used["clip_range"] and model.learning_rate == used["learning_rate"]
    # the checkpoints' sidecar records the same run, and evaluation still reads both
    ckpt = json.loads((run.out / "checkpoints" / "ppo.json").read_text())
    assert ckpt["command"] == meta["command"] and ckpt["algo_kwargs"] == used
    assert read_model_meta(run.out / "checkpoints" / "ppo_256_steps.zip")["vecnormalize"] is not None
    assert set(meta["versions"]) >= {"python", "stable_baselines3", "torch", "gymnasium", "numpy"}


def test_progress_lines_every_log_every_steps(run):
    lines = [line for line in run.stdout.splitlines() if " steps (" in line]
    assert [line.split("/")[0].strip() for line in lines] == ["128", "256", "384", "512"]
    assert "512/512 steps (100%)" in lines[-1]
    # 4 envs x 16-step episodes: 8 end every 128 steps
    for k, line in enumerate(lines, 1):
        assert f", {8 * k} episodes; last {8 * k}: mean return " in line, line
        assert line.endswith("success 0%"), line  # 16 steps never bring the load 10 m
    # the last line's statistics are SB3's own (rollout/ep_rew_mean's buffer, 100 episodes)
    assert len(run.buffer) == 32
    mean_return = np.mean([ep["r"] for ep in run.buffer])
    assert f"mean return {mean_return:.2f}," in lines[-1]
    assert all("success" in ep for ep in run.buffer)


def test_training_log_statistics_on_given_episodes():
    """The line's numbers on episodes of known returns and successes: the window keeps the last
    `window`; a task without a success metric prints none."""
    printed = []
    log = TrainingLog(
        total=1000, every=100, metrics=("error", "success"), window=3, out=lambda t, **k: printed.append(t)
    )
    model = SimpleNamespace(num_timesteps=0)
    log.model = model
    log.on_training_start({}, {})
    episodes = [(10.0, 1.0), (20.0, 0.0), (30.0, 1.0), (60.0, 1.0)]
    for i, (r, s) in enumerate(episodes):
        model.num_timesteps = 50 * (i + 1)
        log.update_locals({"infos": [{"episode": {"r": r, "l": 5, "error": 0.1, "success": s}}, {}]})
        log.on_step()
    log.on_training_end()
    # lines at 100 and 200 steps, and at the end (200 again: not repeated)
    assert len(printed) == 2
    assert (
        "100/1,000 steps (10%)" in printed[0]
        and "2 episodes; last 2: mean return 15.00, success 50%" in printed[0]
    )
    assert "200/1,000 steps (20%)" in printed[1]
    assert "4 episodes; last 3: mean return 36.67, success 67%" in printed[1]
    assert log.summary() == {
        "episodes": 4,
        "window": 3,
        "mean_return": pytest.approx(110 / 3),
        "success_rate": pytest.approx(2 / 3),
    }

    printed.clear()
    log = TrainingLog(total=100, every=100, metrics=("error",), out=lambda t, **k: printed.append(t))
    log.model = SimpleNamespace(num_timesteps=0)
    log.on_training_start({}, {})
    log.model.num_timesteps = 60
    log.update_locals({"infos": [{}]})
    log.on_step()
    log.on_training_end()
    assert printed == [printed[0]] and "60/100 steps (60%)" in printed[0]
    assert printed[0].endswith("no episode has ended yet") and "success" not in printed[0]


def test_eval_shows_its_progress_in_steps_within_blocks(tmp_path, capsys):
    assert (
        main(
            ["eval", ENV_ID, "--policy", "pd", "--episodes", "3", "--num-envs", "2"]
            + ["--record", "0", "--out", str(tmp_path)]
        )
        == 0
    )
    err = capsys.readouterr().err
    # two blocks of at most 400 steps each (Crane-v0's step limit), 3 episodes
    assert "block 1/2" in err and "block 2/2" in err
    assert "800/800" in err and "3/3 episodes" in err
    assert "Traceback" not in err


def test_evaluate_reports_every_env_step_of_every_block():
    calls = []
    r = evaluate(
        ENV_ID,
        "pd",
        episodes=3,
        num_envs=2,
        seed=0,
        record=0,
        step_progress=lambda *a, **k: calls.append((*a, k)),
    )
    blocks = sorted({c[0] for c in calls})
    assert blocks == [0, 1] and all(c[1] == 2 and c[3] == {"max_steps": 400} for c in calls)
    for b, episodes in ((0, r.episodes[:2]), (1, r.episodes[2:])):
        steps = [c[2] for c in calls if c[0] == b]
        # the block runs until its longest episode ends (a spare row pads the last block)
        assert steps == list(range(1, len(steps) + 1)) and len(steps) >= max(e["length"] for e in episodes)
        assert len(steps) == 400


def test_a_run_past_its_total_prints_the_rest_once_at_its_end():
    """SB3 finishes its rollout past total_timesteps: no line per interval beyond the total."""
    printed = []
    log = TrainingLog(total=100, every=10, metrics=(), out=lambda t, **k: printed.append(t))
    log.model = SimpleNamespace(num_timesteps=0)
    log.on_training_start({}, {})
    for steps in range(4, 257, 4):
        log.model.num_timesteps = steps
        log.update_locals({"infos": [{}]})
        log.on_step()
    log.on_training_end()
    done = [int(line.split("/")[0]) for line in printed]
    assert done == [12, 20, 32, 40, 52, 60, 72, 80, 92, 100, 256]
    assert "256/100 steps (256%)" in printed[-1]
