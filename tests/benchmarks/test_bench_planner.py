"""benchmarks/bench_planner.py: a tiny run measures the planner each task would use (the
crane's `mpc` is iLQR, so the generic `sampling`; HumanoidPush-v0's `mpc` is a sampling
planner), counts the env steps it rolls out per control step, and states the real-time
factor as the control step over the measured time. No timing is asserted."""

from __future__ import annotations

import json

import pytest

from benchmarks import bench_planner


def test_rows_name_the_planner_and_its_cost(tmp_path, capsys):
    path = tmp_path / "planner.json"
    argv = ["--env", "RoboDyn/Crane-v0", "--env", "RoboDyn/HumanoidPush-v0", "--samples", "2,3"]
    assert bench_planner.main([*argv, "--warmup", "1", "--ticks", "2", "--json", str(path)]) == 0
    rows = json.loads(path.read_text())
    assert [(r["env"], r["baseline"], r["samples"]) for r in rows] == [
        ("RoboDyn/Crane-v0", "sampling", 2),
        ("RoboDyn/Crane-v0", "sampling", 3),
        ("RoboDyn/HumanoidPush-v0", "mpc", 2),
        ("RoboDyn/HumanoidPush-v0", "mpc", 3),
    ]
    dt = {"RoboDyn/Crane-v0": 0.05, "RoboDyn/HumanoidPush-v0": 0.02}
    for r in rows:
        assert r["env_steps_per_control_step"] == r["samples"] * r["horizon"] * r["iterations"]
        assert r["seconds_per_control_step"] > 0
        assert r["real_time_factor"] == pytest.approx(dt[r["env"]] / r["seconds_per_control_step"])
    printed = capsys.readouterr().out
    assert printed.count("\n") == 2 + len(rows)  # the header, its rule, a line per row
