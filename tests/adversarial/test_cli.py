"""Bad input to the `robodyn` command: every user error ends the command with one line on
stderr, `robodyn: error: ...` naming the problem, exit code 2 and no traceback, before any
work starts, and leaves the file system as it was: no output directory created, no file in
the workspace changed (every file compared byte for byte, every directory listed).

The inputs that once crashed the command (a negative --seed; --env-kwargs with a bad value,
an unknown key or a JSON list; an unreadable sidecar; a .zip without its VecNormalize file;
`train --init` of a corrupt file; unknown --algo-kwargs; --out naming a file or a place
that cannot be written; a sweep over more seeds than it takes; a residual scale without a
residual) run the real command in a subprocess, as do those refused by the env a command
builds (a randomization scale or an observation delay out of range, a baseline the task
lacks) and an address no Ray cluster listens at. Most such runs import the package (a second
or two) and are refused before a numba kernel is compiled or loaded. The
rest call `main(argv)` in this process (argparse's refusals raise SystemExit(2)), and the
library functions behind the command are checked with tests/adversarial/refuse.py:
their own error type, a message naming the argument, and the state they were given
bit-identical afterwards.

Env keywords with a bad value are chosen among those the task's constructor refuses today
(ValueError or TypeError); the command turns whatever the constructor raises into its
one-line form.
"""

from __future__ import annotations

import json
import pickle
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from robodyn.training import jsonio
from robodyn.training.cli import CLIError, check_out_dir, check_out_file, main
from robodyn.training.evaluate import EvaluationError, PolicyError, evaluate, load_sb3_policy, read_model_meta
from tests.adversarial.refuse import Files, assert_refused
from tests.helpers import REPO

ENV_ID = "RoboDyn/Crane-v0"
UNWRITABLE = "/proc/robodyn-cli-test-out"  # a pseudo file system: no file can be created there


# --- the workspace ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def ws(tmp_path_factory) -> Path:
    """A directory of the files a user might pass by mistake: a plain file, a corrupt model,
    real SB3 models (of Pendulum-v1, shape (3,) -> (1,)) with damaged or lying sidecars and
    VecNormalize files, a directory named like a model, previous outputs."""
    import gymnasium as gym
    from stable_baselines3 import PPO

    root = tmp_path_factory.mktemp("cli")
    (root / "taken.txt").write_text("a file, not a directory\n")
    (root / "corrupt.zip").write_bytes(np.random.default_rng(0).bytes(512))
    PPO("MlpPolicy", gym.make("Pendulum-v1"), n_steps=64, batch_size=64, device="cpu").save(
        root / "other.zip"
    )
    sidecars = {
        "badside": "{not json",
        "listside": "[1, 2]",
        "nanside": '{"algo": "ppo", "env_id": NaN}',
        "dqn": '{"algo": "dqn"}',
        "escape": '{"algo": "ppo", "vecnormalize": "../stats.pkl"}',
        "novn": '{"algo": "ppo", "vecnormalize": "novn_vecnormalize.pkl"}',
        "badvn": '{"algo": "ppo", "vecnormalize": "badvn_vecnormalize.pkl"}',
        "dictvn": '{"algo": "ppo", "vecnormalize": "dictvn_vecnormalize.pkl"}',
        "sac": '{"algo": "sac"}',
    }
    for name, text in sidecars.items():
        shutil.copy(root / "other.zip", root / f"{name}.zip")
        (root / f"{name}.json").write_text(text)
    (root / "badvn_vecnormalize.pkl").write_bytes(b"not a pickle at all")
    (root / "dictvn_vecnormalize.pkl").write_bytes(pickle.dumps({"obs_rms": None}))
    (root / "adir.zip").mkdir()
    (root / "prev").mkdir()  # the outputs of an earlier run, which a refused run leaves alone
    (root / "prev" / "results.json").write_text('{"previous": true}\n')
    (root / "blocked" / "results.json").mkdir(parents=True)  # a directory where a file goes
    (root / "blocked_train").mkdir()
    (root / "blocked_train" / "tb").write_text("a file where the TensorBoard directory goes\n")
    return root


def tree(root: Path) -> dict:
    """Every file (its bytes) and directory (None) under root, by relative path."""
    return {
        str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None) for p in sorted(root.rglob("*"))
    }


def fill(argv: list[str], ws: Path) -> list[str]:
    """argv with {ws} replaced by the workspace path."""
    return [a.replace("{ws}", str(ws)) for a in argv]


def assert_one_line_error(code, err: str, out: str, match: str) -> None:
    """Exit code 2, one line on stderr that reads `robodyn: error: ...` and matches `match`
    (case-insensitive), no traceback anywhere. The engine's compile notice (a cold numba
    cache: `robodyn: compiling ...`, `robodyn: compiled in ...`) is progress, not an error,
    and may precede it for a case that builds the env before it refuses."""
    assert code == 2, f"exit code {code}; stderr: {err}"
    assert "Traceback" not in err + out, err
    lines = [ln for ln in err.splitlines() if not re.match(r"robodyn: compil(ing|ed) ", ln)]
    assert len(lines) == 1, f"{len(lines)} lines on stderr:\n{err}"
    assert lines[0].startswith("robodyn: error: "), lines[0]
    assert re.search(match, lines[0], re.IGNORECASE), f"{lines[0]!r} does not match {match!r}"


# --- the real command, in a subprocess ------------------------------------------------------------
def _free_port() -> int:
    """A local TCP port nothing listens at (free when asked)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


EVAL = ["eval", "Crane-v0", "--policy", "random", "--episodes", "2", "--num-envs", "2"]
HUMANOID_EVAL = ["eval", "HumanoidPush-v0", "--policy", "random", "--episodes", "1", "--num-envs", "1"]
QUADRUPED_EVAL = ["eval", "Quadruped-v0", "--policy", "random", "--episodes", "1", "--num-envs", "1"]
TRAIN = ["train", "Crane-v0", "--timesteps", "64", "--num-envs", "2", "--no-progress"]
OUT = ["--out", "{ws}/out"]

SUBPROCESS_CASES = [
    ("seed -1", [*EVAL, *OUT, "--seed", "-1"], r"argument --seed: must be an integer >= 0, got -1"),
    ("episodes 0", [*EVAL, *OUT, "--episodes", "0"], r"argument --episodes: must be an integer >= 1, got 0"),
    (
        "env-kwargs negative value",
        [*EVAL, *OUT, "--env-kwargs", '{"max_accel": -1}'],
        r"--env-kwargs \{\"max_accel\": -1\}: RoboDyn/Crane-v0 refuses them: .*max_accel",
    ),
    (
        "env-kwargs unknown key",
        [*EVAL, *OUT, "--env-kwargs", '{"max_acel": 2}'],
        r"takes no keyword 'max_acel'; it takes: .*max_accel",
    ),
    (
        "env-kwargs JSON list",
        [*EVAL, *OUT, "--env-kwargs", "[1, 2]"],
        r"argument --env-kwargs: must be a JSON object of keywords.*got a list",
    ),
    (
        "env-kwargs NaN",
        [*EVAL, *OUT, "--env-kwargs", '{"position_weight": NaN}'],
        r"argument --env-kwargs: NaN is not a JSON number",
    ),
    (
        "sidecar not JSON",
        [*EVAL, *OUT, "--policy", "{ws}/badside.zip"],
        r"cannot read the sidecar '.*badside\.json' of badside\.zip: not valid JSON",
    ),
    (
        "VecNormalize file missing",
        [*EVAL, *OUT, "--policy", "{ws}/novn.zip"],
        r"trained with VecNormalize, and its statistics '.*novn_vecnormalize\.pkl'.* are missing",
    ),
    (
        "corrupt model",
        [*EVAL, *OUT, "--policy", "{ws}/corrupt.zip"],
        r"'.*corrupt\.zip' is not a stable-baselines3 model zip \(PPO: ",
    ),
    (
        "train --init corrupt",
        [*TRAIN, *OUT, "--init", "{ws}/corrupt.zip"],
        r"--init: '.*corrupt\.zip' is not a stable-baselines3 model zip",
    ),
    (
        "unknown algo-kwargs",
        [*TRAIN, *OUT, "--algo-kwargs", '{"learning_rat": 0.001}'],
        r"--algo-kwargs: PPO takes no keyword 'learning_rat'; it takes: .*learning_rate",
    ),
    (
        "eval --out a file",
        [*EVAL, "--out", "{ws}/taken.txt"],
        r"--out '.*taken\.txt' is a file, not a directory",
    ),
    (
        "eval --out under a file",
        [*EVAL, "--out", "{ws}/taken.txt/results"],
        r"--out '.*taken\.txt/results' cannot be created: '.*taken\.txt' on its path is not a directory",
    ),
    (
        "eval --out unwritable",
        [*EVAL, "--out", UNWRITABLE],
        r"--out '/proc/robodyn-cli-test-out' cannot be written",
    ),
    (
        "train --out a file",
        [*TRAIN, "--out", "{ws}/taken.txt"],
        r"--out '.*taken\.txt' is a file, not a directory",
    ),
    (
        "train --out unwritable",
        [*TRAIN, "--out", UNWRITABLE],
        r"cannot be written: creating a file in '/proc'",
    ),
    ("train --seed -1", [*TRAIN, *OUT, "--seed", "-1"], r"argument --seed: must be an integer >= 0, got -1"),
    (
        "train --num-envs beyond memory",
        ["train", "Crane-v0", "--timesteps", "64", "--num-envs", "1000000000000", "--no-progress", *OUT],
        r"Data for batch=1000000000000 needs .* GiB .* but this machine has .* GiB of memory",
    ),
    (
        "env-kwargs against the scenario",
        [*EVAL, *OUT, "--fixed", "--env-kwargs", '{"reset_noise_scale": 0.5}'],
        r"--env-kwargs sets reset_noise_scale=0.5, which the scenario 'fixed' fixes at 0.0",
    ),
    (
        "randomize_scale beyond what draws valid robots",
        [*HUMANOID_EVAL, *OUT, "--env-kwargs", '{"randomize": true, "randomize_scale": 2.0}'],
        r"RoboDyn/HumanoidPush-v0 refuses them: randomize_scale must be finite and in \[0, 1.6\], got 2.0",
    ),
    (
        "observation delay of a billion steps",
        [*QUADRUPED_EVAL, *OUT, "--env-kwargs", '{"observation_delay": 1000000000}'],
        r"observation_delay must be an int in \[0, 1000\], got 1000000000",
    ),
    (
        "sweep over a trillion seeds",
        ["sweep", "Crane-v0", "--algo", "ppo", "--seeds", "0..1000000000000", *OUT],
        r"--seeds: seed 1000000000000 is too large: seeds run from 0 to 2\*\*32 - 1",
    ),
    (
        "sweep over a million seeds",
        ["sweep", "Crane-v0", "--algo", "ppo", "--seeds", "0..999999", *OUT],
        r"--seeds: '0\.\.999999' names more than 1000 seeds",
    ),
    (
        "residual scale without a residual",
        [*TRAIN, *OUT, "--residual-scale", "-1"],
        r"--residual-scale only applies with --residual BASELINE",
    ),
    (
        "residual on a baseline the task lacks",
        [
            "train",
            "Quadruped-v0",
            "--timesteps",
            "64",
            "--num-envs",
            "2",
            "--no-progress",
            *OUT,
            "--residual",
            "mpc_nopreview",
        ],
        r"RoboDyn/Quadruped-v0 has no baseline 'mpc_nopreview' \(its baselines: pd, mpc, sampling\)",
    ),
    (
        "ray address nobody listens at",
        [*EVAL, *OUT, "--ray", f"127.0.0.1:{_free_port()}"],
        r"cannot connect to the Ray cluster at '127\.0\.0\.1:\d+': nothing accepted a connection",
    ),
]


@pytest.mark.parametrize(
    ("argv", "match"), [c[1:] for c in SUBPROCESS_CASES], ids=[c[0] for c in SUBPROCESS_CASES]
)
def test_command_refuses(ws, argv, match):
    before = tree(ws)
    cmd = [sys.executable, "-m", "robodyn.training.cli", *fill(argv, ws)]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert_one_line_error(proc.returncode, proc.stderr, proc.stdout, match)
    assert tree(ws) == before
    assert not (ws / "out").exists() and not Path(UNWRITABLE).exists()


# --- main(argv) in this process ----------------------------------------------------------------
def refused(argv, ws: Path, match: str, capsys) -> None:
    """main(argv) ends with exit code 2 and one line on stderr matching `match`, and every
    file and directory in the workspace is as it was."""
    before = tree(ws)
    try:
        code = main(fill(argv, ws))
    except SystemExit as e:  # argparse's refusals
        code = e.code
    captured = capsys.readouterr()
    assert_one_line_error(code, captured.err, captured.out, match)
    assert tree(ws) == before
    assert not (ws / "out").exists()


ARGUMENT_CASES = [
    # the command line itself
    ([], r"the following arguments are required: command"),
    (["eval", *OUT], r"the following arguments are required: env"),
    ([*EVAL, *OUT, "--episdoes", "3"], r"unrecognized arguments: --episdoes 3"),
    # counts
    ([*EVAL, *OUT, "--num-envs", "0"], r"argument --num-envs: must be an integer >= 1, got 0"),
    ([*EVAL, *OUT, "--num-envs", "four"], r"argument --num-envs: must be an integer >= 1, got 'four'"),
    ([*EVAL, *OUT, "--episodes", "1.5"], r"argument --episodes: must be an integer >= 1, got '1.5'"),
    ([*EVAL, *OUT, "--record", "-1"], r"argument --record: must be an integer >= 0, got -1"),
    ([*EVAL, *OUT, "--seed", "1e3"], r"argument --seed: must be an integer >= 0, got '1e3'"),
    ([*TRAIN, *OUT, "--timesteps", "0"], r"argument --timesteps: must be an integer >= 1, got 0"),
    ([*TRAIN, *OUT, "--checkpoint-every", "-5"], r"argument --checkpoint-every: must be an integer >= 1"),
    ([*TRAIN, *OUT, "--algo", "td3"], r"argument --algo: invalid choice: 'td3'"),
    # JSON that is not a JSON object of finite numbers
    ([*EVAL, *OUT, "--env-kwargs", '{"max_accel": Infinity}'], r"Infinity is not a JSON number"),
    ([*EVAL, *OUT, "--env-kwargs", '{"max_accel": -Infinity}'], r"-Infinity is not a JSON number"),
    ([*EVAL, *OUT, "--env-kwargs", '{"max_accel": 1e400}'], r"the number 1e400 overflows a float64"),
    ([*EVAL, *OUT, "--env-kwargs", '{"max_accel": 1, "max_accel": 2}'], r"the key 'max_accel' appears twice"),
    ([*EVAL, *OUT, "--env-kwargs", "{max_accel: 1}"], r"argument --env-kwargs: not valid JSON"),
    ([*EVAL, *OUT, "--env-kwargs", ""], r"argument --env-kwargs: not valid JSON"),
    ([*EVAL, *OUT, "--env-kwargs", "null"], r"must be a JSON object of keywords.*got a null"),
    ([*EVAL, *OUT, "--env-kwargs", '"fast"'], r"must be a JSON object of keywords.*got a string"),
    ([*EVAL, *OUT, "--env-kwargs", "2"], r"must be a JSON object of keywords.*got a number"),
    ([*TRAIN, *OUT, "--algo-kwargs", "[]"], r"argument --algo-kwargs: must be a JSON object.*got a list"),
    # env keywords the task does not take, or the command sets itself
    ([*EVAL, *OUT, "--env-kwargs", '{"num_envs": 64}'], r"num_envs is set by robodyn itself"),
    (
        [*EVAL, *OUT, "--env-kwargs", '{"autoreset_mode": "NextStep"}'],
        r"autoreset_mode is set by robodyn itself",
    ),
    ([*TRAIN, *OUT, "--env-kwargs", '{"render_mode": "rgb_array"}'], r"render_mode is set by robodyn itself"),
    ([*TRAIN, *OUT, "--env-kwargs", '{"gravity": 1.6}'], r"RoboDyn/Crane-v0 takes no keyword 'gravity'"),
    # env keywords the task's constructor refuses (a ValueError or TypeError from it)
    (
        [*EVAL, *OUT, "--env-kwargs", '{"max_accel": "fast"}'],
        r"--env-kwargs \{\"max_accel\": \"fast\"\}: .*refuses",
    ),
    ([*EVAL, *OUT, "--env-kwargs", '{"move_distance": 20}'], r"refuses them: .*move_distance"),
    ([*EVAL, *OUT, "--env-kwargs", '{"arrive_scale": 0}'], r"refuses them: .*arrive_scale"),
    # scenarios, ids, policies
    ([*EVAL, *OUT, "--scenario", "windy"], r"RoboDyn/Crane-v0 has no scenario 'windy'; its scenarios: fixed"),
    (
        [*EVAL, *OUT, "--fixed", "--scenario", "fixed"],
        r"argument --scenario: not allowed with argument --fixed",
    ),
    (
        ["eval", "Crane-v9", "--policy", "random", *OUT],
        r"unknown environment id 'Crane-v9'; known ids: .*RoboDyn/Crane-v0",
    ),
    (
        [*EVAL, *OUT, "--policy", "lqr"],
        r"unknown policy 'lqr' for RoboDyn/Crane-v0; choose one of random, pd, mpc, mpc_sampling, sampling",
    ),
    ([*EVAL, *OUT, "--policy", "{ws}/missing.zip"], r"policy file '.*missing\.zip' does not exist"),
    ([*EVAL, *OUT, "--policy", "{ws}/adir.zip"], r"policy '.*adir\.zip' is a directory, not a model \.zip"),
    (
        [*EVAL, *OUT, "--record", "0", "--video"],
        r"--video shows the recorded episodes: --record must be >= 1",
    ),
    # policy files: sidecars, statistics, models of another task
    (
        [*EVAL, *OUT, "--policy", "{ws}/listside.zip"],
        r"sidecar '.*listside\.json' holds a list, not a JSON object",
    ),
    ([*EVAL, *OUT, "--policy", "{ws}/nanside.zip"], r"cannot read the sidecar .*NaN is not a JSON number"),
    (
        [*EVAL, *OUT, "--policy", "{ws}/dqn.zip"],
        r"sidecar '.*dqn\.json' names the algorithm 'dqn'; known: PPO",
    ),
    ([*EVAL, *OUT, "--policy", "{ws}/escape.zip"], r"vecnormalize must be a file name beside the model"),
    (
        [*EVAL, *OUT, "--policy", "{ws}/badvn.zip"],
        r"cannot read the VecNormalize statistics '.*badvn_vecnormalize",
    ),
    (
        [*EVAL, *OUT, "--policy", "{ws}/dictvn.zip"],
        r"'.*dictvn_vecnormalize\.pkl' holds a dict, not VecNormalize",
    ),
    (
        [*EVAL, *OUT, "--policy", "{ws}/other.zip"],
        r"other\.zip' was trained on observations of shape \(3,\); this env's are \(7,\)",
    ),
    # outputs
    (
        [*EVAL, "--out", "{ws}/blocked"],
        r"--out '.*blocked' holds a directory 'results\.json' where the run writes",
    ),
    ([*EVAL, "--out", "{ws}/prev", "--seed", "-2"], r"argument --seed: must be an integer >= 0, got -2"),
    ([*TRAIN, "--out", "{ws}/blocked_train"], r"holds a file 'tb' where the run writes that directory"),
    ([*TRAIN, "--out", "{ws}/taken.txt/run"], r"'.*taken\.txt' on its path is not a directory"),
    # train's own arguments
    ([*TRAIN, *OUT, "--algo-kwargs", '{"seed": 3}'], r"seed is set by train itself"),
    ([*TRAIN, *OUT, "--algo-kwargs", '{"n_steps": "64"}'], r"PPO's n_steps is int, got '64'"),
    (
        [*TRAIN, *OUT, "--algo-kwargs", '{"learning_rate": "fast"}'],
        r"PPO's learning_rate is float \| Callable",
    ),
    ([*TRAIN, *OUT, "--algo-kwargs", '{"policy_kwargs": 3}'], r"PPO's policy_kwargs is .*dict.*got 3"),
    (
        [*TRAIN, *OUT, "--algo", "sac", "--algo-kwargs", '{"clip_range": 0.2}'],
        r"SAC takes no keyword 'clip_range'",
    ),
    ([*TRAIN, *OUT, "--init", "{ws}/missing.zip"], r"--init model '.*missing\.zip' does not exist"),
    ([*TRAIN, *OUT, "--init", "{ws}/adir.zip"], r"--init '.*adir\.zip' is a directory, not a model \.zip"),
    ([*TRAIN, *OUT, "--init", "{ws}/badside.zip"], r"--init: cannot read the sidecar '.*badside\.json'"),
    (
        [*TRAIN, *OUT, "--init", "{ws}/novn.zip"],
        r"--init: .*statistics '.*novn_vecnormalize\.pkl'.* are missing",
    ),
    ([*TRAIN, *OUT, "--init", "{ws}/sac.zip", "--algo", "ppo"], r"--algo ppo: the --init model is SAC"),
    # eval --planner-samples
    ([*EVAL, *OUT, "--planner-samples", "1"], r"argument --planner-samples: must be an integer >= 2, got 1"),
    (
        [*EVAL, *OUT, "--policy", "pd", "--planner-samples", "8"],
        r"--planner-samples: none of random, pd is a sampling planner \(every task has one: "
        r"--policy sampling\)",
    ),
    (
        [*EVAL, *OUT, "--policy", "sampling", "--planner-samples", "8", "--ray"],
        r"--planner-samples runs here only: leave out --ray",
    ),
    # tune
    (
        ["tune", "Crane-v0", "mpc", "--out", "{ws}/out/t.json"],
        r"declares no tuning for 'mpc'; tuned baselines: pd",
    ),
    (
        ["tune", "Crane-v0", "pd", "--out", "{ws}/prev"],
        r"--out '.*prev' is a directory: name the file to write",
    ),
    (
        ["tune", "Crane-v0", "pd", "--out", "{ws}/taken.txt/pd.json"],
        r"'.*taken\.txt' on its path is not a directory",
    ),
    (
        ["tune", "Crane-v0", "pd", "--out", f"{UNWRITABLE}/pd.json"],
        r"cannot be written: creating a file in '/proc'",
    ),
]


@pytest.mark.parametrize(
    ("argv", "match"), ARGUMENT_CASES, ids=[" ".join(c[0][:1] + c[0][-2:]) for c in ARGUMENT_CASES]
)
def test_main_refuses(ws, argv, match, capsys):
    refused(argv, ws, match, capsys)


def test_algorithm_refusing_its_settings_writes_nothing(ws, capsys):
    """Keywords of the right type that the algorithm itself refuses when it is built (after
    the env is): still one line naming the user's keywords and the task's own ones beneath
    them (the crane declares n_epochs), and the output directory is not created."""
    task = r" \(over the task's own \{'n_epochs': 5\}\): "
    argv = [*TRAIN, *OUT, "--algo-kwargs", '{"batch_size": 1}']
    refused(argv, ws, r"PPO refused its settings \{'batch_size': 1\}" + task + ".*batch_size", capsys)
    argv = [*TRAIN, *OUT, "--algo-kwargs", '{"policy_kwargs": {"net_arch": [-4]}}']
    refused(argv, ws, r"PPO refused its settings \{'policy_kwargs': \{'net_arch': \[-4\]\}\}" + task, capsys)
    argv = [*TRAIN, *OUT, "--algo-kwargs", '{"policy_kwargs": {"activation": "relu"}}']
    refused(argv, ws, r"PPO refused its settings .*activation", capsys)


def test_results_json_is_strict_json(ws, tmp_path, monkeypatch, capsys):
    """A NaN in the results (e.g. a reward weight of NaN given through the Python API) is
    written as null: results.json parses with a reader that refuses NaN and Infinity."""
    import robodyn.training.evaluate

    real = robodyn.training.evaluate.evaluate

    def with_nan(*args, **kwargs):
        r = real(*args, **kwargs)
        r.episodes[0]["return"] = float("nan")
        r.episodes[0]["final"]["swing_amplitude"] = float("inf")
        return r

    monkeypatch.setattr(robodyn.training.evaluate, "evaluate", with_nan)
    out = tmp_path / "eval"
    argv = ["eval", ENV_ID, "--policy", "random", "--episodes", "1", "--num-envs", "1", "--record", "0"]
    assert main([*argv, "--env-kwargs", '{"max_episode_steps": 5}', "--out", str(out)]) == 0
    capsys.readouterr()

    def refuse(word):
        raise AssertionError(f"{word} in results.json")

    doc = json.loads((out / "results.json").read_text(), parse_constant=refuse)
    episode = doc["policies"]["random"]["episodes"][0]
    assert episode["return"] is None and episode["final"]["swing_amplitude"] is None
    assert doc["policies"]["random"]["summary"]["mean_return"] is None
    assert episode["length"] == 5 and doc["env_kwargs"] == {"max_episode_steps": 5}


# --- the functions behind the command ------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("NaN", r"--x: NaN is not a JSON number"),
        ('{"a": [1, Infinity]}', r"--x: Infinity is not a JSON number"),
        ("-Infinity", r"--x: -Infinity is not a JSON number"),
        ("1e999", r"--x: the number 1e999 overflows a float64"),
        ('{"a": 1, "a": 1}', r"--x: the key 'a' appears twice"),
        ("{'a': 1}", r"--x: not valid JSON \(Expecting property name"),
        ("1" * 5000, r"--x: not valid JSON \(Exceeds the limit"),
        ("[" * 100_000 + "]" * 100_000, r"--x: JSON nested too deeply"),
    ],
)
def test_jsonio_loads_refuses(text, match):
    assert_refused(lambda: jsonio.loads(text, "--x"), jsonio.JSONInputError, match, text)


def test_jsonio_dumps_writes_non_finite_numbers_as_null():
    doc = {"a": float("nan"), "b": [np.float32("inf"), -np.inf, np.int64(3)], "c": np.array([0.5, np.nan])}
    text = jsonio.dumps(doc)
    assert json.loads(text) == {"a": None, "b": [None, None, 3], "c": [0.5, None]}
    assert "NaN" not in text and "Infinity" not in text
    assert_refused(lambda: jsonio.dumps({1: "a"}), TypeError, r"JSON object keys are strings, got 1", doc)
    assert_refused(
        lambda: jsonio.dumps({"a": object()}), TypeError, r"object .* is not JSON serializable", doc
    )


@pytest.mark.parametrize(
    ("algo", "kwargs", "match"),
    [
        ("ppo", {"learning_rat": 1e-3}, r"PPO takes no keyword 'learning_rat'"),
        ("ppo", {"env": "Crane"}, r"env is set by train itself"),
        ("sac", {"device": "cuda"}, r"device is set by train itself"),
        ("ppo", {"n_epochs": 2.5}, r"PPO's n_epochs is int, got 2.5"),
        ("ppo", {"use_sde": 1}, r"PPO's use_sde is bool, got 1"),
        ("sac", {"gamma": "0.99"}, r"SAC's gamma is float, got '0.99'"),
        ("ppo", [("n_steps", 8)], r"algo_kwargs must be a dict of keywords, got list"),
    ],
)
def test_check_algo_kwargs_refuses(algo, kwargs, match):
    from robodyn.training.train import TrainError, check_algo_kwargs

    assert_refused(lambda: check_algo_kwargs(algo, kwargs), TrainError, match, kwargs)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"seed": -1}, r"seed must be >= 0, got -1"),
        ({"total_timesteps": 0}, r"total_timesteps must be >= 1, got 0"),
        ({"checkpoint_every": 0}, r"checkpoint_every must be >= 1, got 0"),
        ({"algo": "dqn"}, r"algo must be one of \('ppo', 'sac'\), got 'dqn'"),
        (
            {"env_kwargs": {"max_accel": -1.0}},
            r"RoboDyn/Crane-v0 refused env_kwargs \{'max_accel': -1.0\}: .*max_accel",
        ),
        (
            {"init_model": "{ws}/corrupt.zip"},
            r"init_model: '.*corrupt\.zip' is not a stable-baselines3 model",
        ),
        ({"init_model": "{ws}/listside.zip"}, r"init_model: the sidecar .* holds a list"),
    ],
)
def test_train_refuses_before_writing(ws, kwargs, match):
    from robodyn.training.train import TrainError, train

    kwargs = {k: (v.replace("{ws}", str(ws)) if isinstance(v, str) else v) for k, v in kwargs.items()}
    out = ws / "out"
    before = tree(ws)
    call = lambda: train(ENV_ID, **{"total_timesteps": 64, "num_envs": 2, "out_dir": out, **kwargs})  # noqa: E731
    assert_refused(call, TrainError, match, kwargs)
    assert tree(ws) == before and not out.exists()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"seed": -1}, r"seed must be >= 0 \(or None\), got -1"),
        ({"episodes": 0}, r"episodes and num_envs must be >= 1, got 0 and 8"),
        ({"num_envs": -2}, r"episodes and num_envs must be >= 1, got 10 and -2"),
    ],
)
def test_evaluate_refuses(kwargs, match):
    env_kwargs = {"max_episode_steps": 5}
    call = lambda: evaluate(ENV_ID, "random", env_kwargs=env_kwargs, **kwargs)  # noqa: E731
    assert_refused(call, EvaluationError, match, env_kwargs)


@pytest.mark.parametrize(
    ("name", "call", "match"),
    [
        ("badside", read_model_meta, r"cannot read the sidecar '.*badside\.json' of badside\.zip"),
        ("listside", read_model_meta, r"holds a list, not a JSON object"),
        ("novn", load_sb3_policy, r"statistics '.*novn_vecnormalize\.pkl'.* are missing"),
        ("corrupt", load_sb3_policy, r"is not a stable-baselines3 model zip \(PPO: .*; DDPG: "),
        ("adir", load_sb3_policy, r"is a directory, not a model \.zip"),
    ],
)
def test_policy_files_refused(ws, name, call, match):
    assert_refused(lambda: call(ws / f"{name}.zip"), PolicyError, match, Files(ws))


@pytest.mark.parametrize(
    ("check", "path", "match"),
    [
        (check_out_dir, "taken.txt", r"is a file, not a directory"),
        (check_out_dir, "taken.txt/a/b", r"'.*taken\.txt' on its path is not a directory"),
        (check_out_dir, UNWRITABLE, r"cannot be written: creating a file in '/proc' failed"),
        (check_out_file, "prev", r"is a directory: name the file to write"),
        (check_out_file, "taken.txt/x.json", r"on its path is not a directory"),
    ],
)
def test_output_checks_refuse_and_create_nothing(ws, check, path, match):
    assert_refused(lambda: check(ws / path, "--out"), CLIError, match, Files(ws))
    assert not Path(UNWRITABLE).exists()


def test_output_checks_accept_new_and_existing_directories(ws):
    before = tree(ws)
    check_out_dir(ws / "new" / "deeper", "--out", ["results.json"])
    check_out_dir(ws / "prev", "--out", ["results.json"])  # an earlier run's outputs are overwritten
    check_out_file(ws / "new" / "pd.json", "--out")
    assert tree(ws) == before  # nothing created, the probe file removed


def test_a_bug_still_raises_with_its_traceback(ws, monkeypatch):
    """Only user errors become the one-line exit 2: an error of the code itself propagates."""
    import robodyn.training.evaluate

    def broken(*args, **kwargs):
        raise ZeroDivisionError("a bug in evaluate")

    monkeypatch.setattr(robodyn.training.evaluate, "evaluate", broken)
    before = tree(ws)
    with pytest.raises(ZeroDivisionError, match="a bug in evaluate"):
        main([*fill(EVAL, ws), *fill(OUT, ws)])
    assert tree(ws) == before and not (ws / "out").exists()
