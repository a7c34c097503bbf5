"""training.sweep without Ray: reading --seeds and --set, the runs and their names, the spread
across seeds, a one-run sweep in this process, and what `robodyn sweep` refuses before any
run starts (tests/training/test_ray.py runs a sweep on Ray)."""

from __future__ import annotations

import json
import re

import pytest

from robodyn.training.cli import main
from robodyn.training.sweep import SweepError, make_runs, parse_seeds, parse_setting, spread

ENV_ID = "RoboDyn/Crane-v0"
TINY = ["--timesteps", "256", "--num-envs", "4", "--checkpoint-every", "128"]
TINY += ["--algo-kwargs", '{"n_steps": 64, "batch_size": 64, "n_epochs": 1}']
TINY += ["--eval-episodes", "2", "--eval-num-envs", "2"]


def test_seeds():
    assert parse_seeds("0..4") == [0, 1, 2, 3, 4]
    assert parse_seeds("3") == [3]
    assert parse_seeds("0..2, 10,7") == [0, 1, 2, 10, 7]
    for text, match in (
        ("4..2", r"the range 4\.\.2 is empty"),
        ("0..2,1", "seed 1 appears twice"),
        ("-1", "'-1' is not a seed"),
        ("a..b", "'a..b' is not a seed"),
        ("", "'' is not a seed"),
    ):
        with pytest.raises(SweepError, match=match):
            parse_seeds(text)


def test_settings_are_json_values():
    assert parse_setting("learning_rate=1e-4,3e-4") == ("learning_rate", [1e-4, 3e-4])
    kwargs = parse_setting('policy_kwargs={"net_arch": [64, 64]}')
    assert kwargs == ("policy_kwargs", [{"net_arch": [64, 64]}])
    assert parse_setting("use_sde=true,false") == ("use_sde", [True, False])
    for text, match in (
        ("learning_rate", "is not KEY=V1,V2"),
        ("2x=1", "is not KEY=V1,V2"),
        ("gamma=", "give at least one value"),
        ("activation=tanh", r"--set activation: not valid JSON .*string values are JSON strings"),
        ("gamma=NaN", "NaN is not a JSON number"),
    ):
        with pytest.raises(SweepError, match=match):
            parse_setting(text)


def test_runs_cross_settings_and_seeds():
    runs = make_runs([0, 1], {"learning_rate": [1e-4, 3e-4], "policy_kwargs": [{"net_arch": [8]}]})
    combos = [(r.seed, r.settings["learning_rate"]) for r in runs]
    assert combos == [(0, 1e-4), (1, 1e-4), (0, 3e-4), (1, 3e-4)]
    assert runs[0].name == "learning_rate=0.0001-policy_kwargs=__net_arch___8__-seed0"
    assert len({r.name for r in runs}) == 4
    assert [r.name for r in make_runs([5], {})] == ["seed5"]
    # values a file name cannot tell apart still get distinct directories
    names = [r.name for r in make_runs([0], {"x": ["a/b", "a?b"]})]
    assert names == ["x=_a_b_-seed0", "x=_a_b_-seed0~2"]


def test_spread_across_seeds():
    assert spread([1.0, 3.0]) == {"mean": 2.0, "std": pytest.approx(2**0.5), "min": 1.0, "max": 3.0}
    assert spread([2.0]) == {"mean": 2.0, "std": None, "min": 2.0, "max": 2.0}  # one seed: no spread
    assert spread([None, 1.0]) is None and spread([float("nan"), 1.0]) is None


def test_a_sweep_here_writes_runs_and_summary(tmp_path, capsys):
    """Without --ray the runs train one after another in this process, into the same layout."""
    out = tmp_path / "sweep"
    assert main(["sweep", ENV_ID, "--seeds", "3", *TINY, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    summary = json.loads((out / "sweep.json").read_text())
    assert summary["ray"] is None and summary["seeds"] == [3] and summary["grid"] == {}
    [run] = summary["runs"]
    assert run["name"] == "seed3" and run["timesteps"] == 256
    assert (out / "seed3" / "ppo.zip").is_file() and (out / "seed3" / "eval" / "results.json").is_file()
    assert summary["across_seeds"][0]["mean_return"]["std"] is None
    assert f"{run['mean_return']:.2f} ± - [" in printed  # one seed: no spread to show


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["--seeds", "2..1"], r"--seeds: the range 2\.\.1 is empty"),
        (["--set", "gamma=0.9", "--set", "gamma=0.99"], "--set gamma appears twice"),
        (["--set", "n_steps=32,64"], "--set n_steps: --algo-kwargs sets it too"),
        (["--set", "learning_rat=1"], r"PPO takes no keyword 'learning_rat'"),
        (["--set", 'gamma="high"'], "PPO's gamma is float, got 'high'"),
        (  # the last --algo-kwargs counts: it leaves batch_size to --set
            ["--algo-kwargs", '{"n_steps": 64}', "--set", "batch_size=64,1"],
            r'--set \{"batch_size":1\}: PPO refused its settings',
        ),
        (["--env-kwargs", '{"max_accel": -1}'], "refused env_kwargs"),
        (["--cpus-per-run", "2"], "--cpus-per-run only applies with --ray"),
    ],
)
def test_sweep_refuses_before_any_run(argv, match, tmp_path, capsys):
    out = tmp_path / "sweep"
    assert main(["sweep", ENV_ID, *TINY, *argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("robodyn: error: ") and err.count("\n") == 1
    assert re.search(match, err), err
    assert not out.exists()


def test_sweep_never_writes_over_a_run(tmp_path, capsys):
    out = tmp_path / "sweep"
    (out / "seed0").mkdir(parents=True)
    (out / "seed0" / "ppo.zip").write_bytes(b"an earlier run")
    assert main(["sweep", ENV_ID, "--seeds", "0", *TINY, "--out", str(out)]) == 2
    assert "already holds a run 'seed0'" in capsys.readouterr().err
    assert (out / "seed0" / "ppo.zip").read_bytes() == b"an earlier run"
