"""training.experiments: the bracketing sweep on functions whose optimum is known, the
scenario runner on a registered task, and `robodyn tune` writing a record that the crane's
PD reads back."""

from __future__ import annotations

import json

import numpy as np
import pytest

from robodyn.envs.tuning import Tuning
from robodyn.training.cli import main
from robodyn.training.experiments import bracket_sweep, run_scenario, tune


def _tuning(**kw) -> Tuning:
    base = dict(
        parameter="w",
        start=1.0,
        stop=4.0,
        points=5,
        scenario="none",
        minimize="cost",
        require="error",
        require_below=1.0,
        refine=9,
        max_extensions=4,
    )
    base.update(kw)
    return Tuning(**base)


def _bowl(w_star: float, fail_below: float = 0.0):
    """run(settings): cost = (log w - log w*)^2, error = 2 below fail_below (does not count)."""
    calls = []

    def run(settings):
        calls.append(len(settings))
        rows = []
        for s in settings:
            w = s["w"]
            rows.append(dict(s, cost=(np.log(w) - np.log(w_star)) ** 2, error=2.0 if w < fail_below else 0.0))
        return rows

    return run, calls


def test_sweep_extends_until_the_optimum_is_bracketed_then_refines():
    run, calls = _bowl(w_star=20.0)  # far above the first grid's top (4)
    res = bracket_sweep(_tuning(), run)
    assert res.bracketed and res.grid[0] < 20.0 < res.grid[-1]
    assert len(calls) > 2, "the grid had to be extended"
    ratio = res.grid[1] / res.grid[0]
    assert abs(np.log(res.best["w"] / 20.0)) < np.log(ratio) / 4, "refined between the best's neighbours"


def test_sweep_skips_settings_that_do_not_count_and_reports_an_unbracketed_end():
    run, _ = _bowl(w_star=0.5, fail_below=0.9)  # the optimum lies where nothing counts
    res = bracket_sweep(_tuning(max_extensions=1), run)
    assert res.best["w"] >= 0.9 and res.best["counts"]
    run, _ = _bowl(w_star=1e6)
    res = bracket_sweep(_tuning(max_extensions=1), run)
    assert not res.bracketed
    run, _ = _bowl(w_star=2.0, fail_below=100.0)
    with pytest.raises(ValueError, match="no setting of the sweep meets error < 1.0"):
        bracket_sweep(_tuning(), run)


def test_sweep_crosses_the_other_parameters():
    def run(settings):
        return [dict(s, cost=(np.log(s["w"]) - np.log(2.0)) ** 2 + s["z"], error=0.0) for s in settings]

    res = bracket_sweep(_tuning(cross=(("z", (0.5, 0.0)),)), run)
    assert res.best["z"] == 0.0
    assert {r["z"] for r in res.rows} == {0.5, 0.0}


def test_scenario_runs_one_recorded_episode_per_row():
    res = run_scenario("RoboDyn/Crane-v0", "fixed", "pd", 3)
    assert len(res.episodes) == 3 and len(res.trajectories) == 3
    finals = [e["final"]["position_error"] for e in res.episodes]
    assert finals[0] == finals[1] == finals[2], "the fixed scenario starts every episode alike"
    with pytest.raises(ValueError, match="has no scenario 'windy'"):
        run_scenario("RoboDyn/Crane-v0", "windy", "pd", 1)


def test_tune_command_writes_the_record_the_baseline_reads(tmp_path, capsys):
    out = tmp_path / "pd.json"
    assert main(["tune", "RoboDyn/Crane-v0", "pd", "--out", str(out)]) == 0
    record = json.loads(out.read_text())
    assert record["command"] == "robodyn tune RoboDyn/Crane-v0 pd"
    assert record["bracketed"] and set(record["parameters"]) == {"omega", "zeta"}
    assert record["parameters"] == tune("RoboDyn/Crane-v0", "pd")["parameters"]
    assert "best: omega = " in capsys.readouterr().out
    assert main(["tune", "RoboDyn/Crane-v0", "mpc"]) == 2
    assert "declares no tuning for 'mpc'" in capsys.readouterr().err
