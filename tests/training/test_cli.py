"""The `robodyn` command and the training/evaluation functions behind it, on tiny runs:
a 256-step PPO training, evaluations of a few episodes, the files they write, and the
errors (exit code 2) for an unknown env id or policy."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from robodyn.training.cli import main
from robodyn.training.evaluate import evaluate
from robodyn.training.plots import plot_final_metrics
from tests.helpers import REPO

ENV_ID = "RoboDyn/Crane-v0"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


class DampedPD:
    """A tiny deterministic policy (trolley PD) that counts the rows it is told restarted."""

    name = "dummy-pd"

    def __init__(self):
        self.restarts = []

    def reset(self, env, rows):
        self.restarts.append(np.array(rows))

    def act(self, env, obs):
        return np.clip(-0.5 * obs[:, :1] - 1.2 * obs[:, 2:3], -1.0, 1.0)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    out = tmp_path_factory.mktemp("train")
    argv = ["train", ENV_ID, "--algo", "ppo", "--timesteps", "256", "--num-envs", "4", "--seed", "1"]
    argv += ["--out", str(out), "--checkpoint-every", "128", "--no-progress", "--vecnormalize"]
    argv += ["--algo-kwargs", '{"n_steps": 32, "batch_size": 64, "n_epochs": 1}']
    assert main(argv) == 0
    return out


def test_list(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "RoboDyn/Crane-v0" in out and "move 10 m" in out


def test_train_writes_model_sidecar_checkpoints_and_tensorboard(trained):
    meta = json.loads((trained / "ppo.json").read_text())
    assert meta["algo"] == "ppo" and meta["env_id"] == ENV_ID and meta["timesteps"] == 256
    assert (trained / "ppo.zip").stat().st_size > 1000
    assert (trained / meta["vecnormalize"]).is_file()
    assert sorted(p.name for p in (trained / "checkpoints").glob("*.zip")) == [
        "ppo_128_steps.zip",
        "ppo_256_steps.zip",
    ]
    assert list((trained / "tb").rglob("events.out.tfevents.*"))


def test_eval_compares_policies_and_writes_json_and_plots(trained, tmp_path, capsys):
    out = tmp_path / "eval"
    argv = ["eval", "Crane-v0", "--policy", "random", "--policy", str(trained / "ppo.zip")]
    argv += [
        "--episodes",
        "3",
        "--num-envs",
        "2",
        "--seed",
        "5",
        "--fixed",
        "--record",
        "2",
        "--out",
        str(out),
    ]
    assert main(argv) == 0
    table = capsys.readouterr().out
    assert "mean return" in table and "final swing_amplitude" in table and "ppo" in table

    doc = json.loads((out / "results.json").read_text())
    assert doc["env_id"] == ENV_ID and doc["env_kwargs"] == {"reset_noise_scale": 0.0}
    assert list(doc["policies"]) == ["random", "ppo"]
    for res in doc["policies"].values():
        assert len(res["episodes"]) == 3 and res["summary"]["episodes"] == 3
        for ep in res["episodes"]:
            if ep["terminated"]:  # off the 15 m rail (a random policy can get there)
                assert ep["length"] < 400 and ep["final"]["position_error"] > 15.0
            else:
                assert ep["length"] == 400 and 0.0 <= ep["final"]["position_error"] <= 15.0
            assert 0.0 <= ep["final"]["swing_amplitude"] < np.pi
            # each step pays at most position + arrive = 2 and costs at most control 0.05 + jerk 0.2,
            # plus 50 once for leaving the rail
            assert -(0.25 * 400 + 50.0) < ep["return"] < 2.0 * 400
        assert 0.0 <= res["summary"]["success_rate"] <= 1.0
    # --fixed: every episode starts from the same state, so the deterministic PPO policy repeats itself
    # (up to float32 rounding in torch, which may differ with the other rows of the batch)
    ppo_returns = [ep["return"] for ep in doc["policies"]["ppo"]["episodes"]]
    assert ppo_returns == pytest.approx([ppo_returns[0]] * 3, rel=1e-6)
    random_returns = [ep["return"] for ep in doc["policies"]["random"]["episodes"]]
    assert len(set(random_returns)) == 3

    for name in ("trajectories.png", "metrics.png", "final_metrics.png"):
        data = (out / name).read_bytes()
        assert data.startswith(PNG_MAGIC) and len(data) > 20_000
    traj = np.load(out / "trajectories.npz")
    steps = doc["policies"]["random"]["episodes"][1]["length"]
    assert traj["ppo/episode0/obs"].shape == (401, 7) and traj["random/episode1/actions"].shape == (steps, 1)
    assert "ppo/episode2/obs" not in traj  # --record 2


def test_evaluate_episodes_do_not_depend_on_num_envs():
    runs = {n: evaluate(ENV_ID, DampedPD(), episodes=5, num_envs=n, seed=11, record=5) for n in (1, 3)}
    a, b = runs[1], runs[3]
    assert [e["seed"] for e in b.episodes] == [11, 12, 13, 14, 15]
    assert [e["return"] for e in a.episodes] == [e["return"] for e in b.episodes]
    assert len({e["return"] for e in b.episodes}) == 5  # the starts really differ
    for t in b.trajectories:  # the final metrics are the last recorded step's
        final = b.episodes[t.episode]["final"]
        assert t.obs.shape == (401, 7) and t.actions.shape == (400, 1)
        assert final["position_error"] == abs(t.obs[-1, 0]) == t.metrics["position_error"][-1]
        assert final["swing_amplitude"] == t.metrics["swing_amplitude"][-1]


def test_evaluate_resets_the_policy_on_restarted_rows():
    pol = DampedPD()
    res = evaluate(ENV_ID, pol, episodes=5, num_envs=3, seed=0, env_kwargs={"max_episode_steps": 30})
    assert [e["length"] for e in res.episodes] == [30] * 5
    # all 3 rows start; after 30 steps all 3 restart (2 new episodes + 1 idle row); after 60 the run ends
    assert [r.tolist() for r in pol.restarts] == [[0, 1, 2], [0, 1, 2]]
    assert res.obs_names[:4] == ["trolley_pos", "swing_angle", "trolley_vel", "swing_rate"]
    assert res.obs_names[4:] == ["payload_pos[0]", "payload_pos[1]", "payload_pos[2]"]
    assert res.action_names == ["trolley"]  # the joint the acceleration drives
    assert res.summary()["success_rate"] == 0.0  # 30 steps (1.5 s) cannot carry the load 10 m


def test_unknown_env_and_policy_exit_2(capsys):
    assert main(["eval", "RoboDyn/Nope-v9", "--policy", "random"]) == 2
    assert "unknown environment id 'RoboDyn/Nope-v9'" in capsys.readouterr().err
    assert main(["eval", ENV_ID, "--policy", "no-such-policy", "--episodes", "1"]) == 2
    assert "unknown policy 'no-such-policy'" in capsys.readouterr().err
    assert main(["eval", ENV_ID, "--policy", "missing.zip"]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["train", "Nope-v0", "--timesteps", "10"]) == 2


def test_command_line_exit_code_and_message():
    cmd = [sys.executable, "-m", "robodyn.training.cli", "eval", "Nope-v0", "--policy", "random"]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "robodyn: error: unknown environment id" in proc.stderr and "RoboDyn/Crane-v0" in proc.stderr


def test_baselines_through_evaluate():
    fixed = {"reset_noise_scale": 0.0}
    pd, mpc = (
        evaluate(ENV_ID, name, episodes=1, num_envs=1, seed=0, env_kwargs=fixed) for name in ("pd", "mpc")
    )
    for r in (pd, mpc):  # both arrive ...
        assert r.episodes[0]["length"] == 400 and r.summary()["final_position_error_mean"] < 0.05
    # ... and the PD leaves the load swinging: the bar this project set, MPC residual swing < best PD's / 10
    assert mpc.summary()["final_swing_amplitude_mean"] < 0.1 * pd.summary()["final_swing_amplitude_mean"]
    assert (pd.summary()["success_rate"], mpc.summary()["success_rate"]) == (0.0, 1.0)


def test_eval_runs_the_sampling_planner_with_the_samples_asked(tmp_path, monkeypatch, capsys):
    """`--policy sampling --planner-samples 3`: the generic planner, made with 3 candidates,
    evaluated under its own name beside the PD."""
    import robodyn.envs.baselines.sampling as sampling

    made = []
    real = sampling.SamplingPlanner.__init__

    def record(self, env, **kwargs):
        made.append(kwargs["samples"])
        real(self, env, **kwargs)

    monkeypatch.setattr(sampling.SamplingPlanner, "__init__", record)
    argv = ["eval", ENV_ID, "--policy", "pd", "--policy", "sampling", "--planner-samples", "3"]
    assert main([*argv, "--episodes", "1", "--num-envs", "1", "--record", "0", "--out", str(tmp_path)]) == 0
    assert made == [3]
    doc = json.loads((tmp_path / "results.json").read_text())
    assert list(doc["policies"]) == ["pd", "sampling"]


def test_train_continues_from_a_saved_model(trained, tmp_path):
    out = tmp_path / "more"
    argv = ["train", ENV_ID, "--init", str(trained / "ppo.zip"), "--timesteps", "128", "--num-envs", "4"]
    assert main([*argv, "--out", str(out), "--no-progress"]) == 0
    meta = json.loads((out / "ppo.json").read_text())
    assert meta["init_model"] == str(trained / "ppo.zip") and meta["timesteps"] == 256 + 128
    # the VecNormalize statistics carried on from the first run's: + 4 reset and 128 step observations
    import pickle

    counts = [pickle.loads((d / "ppo_vecnormalize.pkl").read_bytes()).obs_rms.count for d in (trained, out)]
    assert counts[1] == pytest.approx(counts[0] + 4 + 128)


def test_final_metrics_plot_of_identical_episodes(tmp_path):
    # 10 identical episodes (a deterministic policy on the fixed task): the mean rounds off the
    # value, which must not make a negative whisker
    res = evaluate(
        ENV_ID, DampedPD(), episodes=1, num_envs=1, env_kwargs={"reset_noise_scale": 0.0}, record=0
    )
    res.episodes = res.episodes * 10
    for ep in res.episodes:
        ep["final"]["swing_amplitude"] = 3.430504927999197e-07  # (MPC's residual swing)
    assert np.mean([3.430504927999197e-07] * 10) > 3.430504927999197e-07
    path = plot_final_metrics([res], tmp_path / "final.png")
    assert path.read_bytes().startswith(PNG_MAGIC)


def test_eval_without_policy_compares_baselines_and_saved_policies():
    from robodyn.training.cli import SAVED_POLICIES, default_policies

    specs = default_policies(ENV_ID)
    assert specs[:3] == ["pd", "mpc", "mpc_sampling"]
    saved = specs[3:]
    assert saved, f"a trained crane policy should be saved in {SAVED_POLICIES}"
    for spec in saved:
        sidecar = json.loads(Path(spec).with_suffix(".json").read_text())
        assert sidecar["env_id"] == ENV_ID and Path(spec).is_file()


def test_video_needs_recorded_episodes(capsys):
    """--video shows the recorded episodes: with --record 0 it is refused before any work."""
    assert main(["eval", "RoboDyn/Crane-v0", "--policy", "random", "--record", "0", "--video"]) == 2
    err = capsys.readouterr().err
    assert "--video shows the recorded episodes" in err and "Traceback" not in err


USER_TASK = '''
"""A user's own task on RoboDyn's cart-pole, registered when imported."""
import numpy as np

from robogym.actuation import Actuation
from robogym.declare import Param
from robogym.task import Task
from robogym.task_envs import task_envs


class BalanceTask(Task):
    model_file = "cartpole.xml"
    frame_skip = 2
    weight = Param(1.0, "weight of reward_up")

    def bind(self, physics):
        super().bind(physics)
        self._actuation = Actuation.ctrl(physics, ["push"])

    def actuation(self):
        return self._actuation

    def reset_rows(self, rows, rngs):
        for r, rng in zip(rows, rngs, strict=True):
            self.physics.set_qpos("hinge", rng.uniform(-0.1, 0.1), [r])

    def reward(self, action):
        up = self.weight * np.cos(self.physics.qpos("hinge"))
        return up, {"reward_up": up}


def hold(env, **kwargs):
    return HoldStill()


class HoldStill:
    def reset(self, env, rows):
        pass

    def act(self, env, obs):
        return np.zeros((env.num_envs, 1))


BalanceEnv, BalanceVectorEnv = task_envs(
    BalanceTask, "Me/Balance-v0", "Balance a pole.\\n\\n{arguments}", module=__name__,
    max_episode_steps=50, summary="balance the cart-pole upright", baselines={"hold": f"{__name__}:hold"},
)
'''


def test_the_commands_serve_a_users_own_task(tmp_path, monkeypatch, capsys):
    """`robodyn ... module:Id` imports the user's module (from the directory the command runs
    in), whose import registers the task; its declared baselines are the command's too."""
    (tmp_path / "user_balance_tasks.py").write_text(USER_TASK)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))  # the command adds the directory: undo it
    assert main(["eval", "user_balance_tasks:Me/Balance-v0", "--episodes", "2", "--num-envs", "2"]) == 0
    out = capsys.readouterr().out
    assert "hold" in out and "mean return" in out  # the task's own baseline, run by default
    doc = json.loads((tmp_path / "runs" / "eval-Balance-v0" / "results.json").read_text())
    assert doc["env_id"] == "Me/Balance-v0" and set(doc["policies"]) == {"hold"}
    assert main(["list"]) == 0 and "Me/Balance-v0" in capsys.readouterr().out
    args = ["train", "Me/Balance-v0", "--timesteps", "64", "--num-envs", "2", "--no-progress"]
    assert main(args) == 0  # registered now: the id alone
    assert (tmp_path / "runs" / "train-Balance-v0-ppo" / "ppo.zip").is_file()
    assert main(["eval", "no_such_module:Me/X-v0"]) == 2
    assert "cannot import 'no_such_module'" in capsys.readouterr().err


def test_every_option_says_what_it_is_and_its_default():
    """`robodyn CMD --help` gives every option a line of help, and the default of every
    option that has one."""
    from robodyn.training.cli import _parser

    commands = _parser()._subparsers._group_actions[0].choices
    checked = 0
    for name, command in commands.items():
        options = " ".join(command.format_help().split()).split("options:", 1)[1]
        for action in command._actions:
            if not action.option_strings or action.dest == "help":
                continue
            assert action.help, f"robodyn {name} {action.option_strings[0]} has no help"
            if action.default not in (None, False) and action.default != {} and action.default != []:
                entry = options.split(f" {action.option_strings[0]} ", 1)[1].split(" --", 1)[0]
                assert "default" in entry, (name, action.option_strings[0], entry)
            checked += 1
    assert checked > 40
