"""benchmarks/bench_step.py's --batches: a quick run of the double pendulum gains a T = 1 row
at each extra batch size, between B = 1 and B = 64, with every column measured and no target
applied to it (the targets are set at B = 1 and 64); bad sizes are refused. Its interleaved
timing (--rounds): the columns run in turn, rates are medians, ratios medians of the rounds'
ratios. No timing is asserted."""

from __future__ import annotations

import json

import numpy as np
import pytest

from benchmarks import bench_step


def test_extra_batches_add_measured_rows_without_targets(tmp_path, capsys):
    path = tmp_path / "step.json"
    argv = ["--quick", "--no-compile", "--models", "double_pendulum", "--threads", "2"]
    bench_step.main([*argv, "--batches", "16,4,64", "--json", str(path)])
    rows = json.loads(path.read_text())["rows"]
    assert [(r["batch"], r["threads"]) for r in rows] == [(1, 1), (4, 1), (16, 1), (64, 1), (64, 2)]
    for r in rows:
        for key in ("ours", "ours_rollout", "ours_per_step", "ours_one_per_call", "rollout", "mj_loop"):
            assert r[key]["steps_per_s"] > 0, (r["batch"], key)
        assert r["call_overhead_us"] is not None
    extra = [r for r in rows if r["batch"] in (4, 16)]
    assert all(r["targets"] == [] and r["thread_gain_ours"] is None for r in extra)
    assert all(r["targets"] for r in rows if r["batch"] == 64)
    lines = capsys.readouterr().out.splitlines()
    assert sum(line.startswith("double_pendulum") and line.split()[1] == "16" for line in lines) == 2


@pytest.mark.parametrize(
    ("option", "bad"),
    [
        ("--batches", "0"),
        ("--batches", "4,x"),
        ("--batches", "-2"),
        ("--rounds", "0"),
        ("--rounds", "2,3"),
        ("--rounds", "x"),
    ],
)
def test_bad_batch_sizes_and_rounds_are_refused(option, bad, capsys):
    with pytest.raises(SystemExit) as e:
        bench_step.main([option, bad])
    assert e.value.code == 2
    assert option in capsys.readouterr().err


def test_columns_are_timed_in_turn_and_reported_as_medians():
    """interleaved(): after calibration every round runs each column once, in turn; a rate is
    the median of its rounds; a failing column is reported, the others still timed."""
    log = []

    def factory(key, fail=False):
        def make(n):
            def run():
                log.append(key)
                if fail and log.count(key) > 1:  # calibrates, then fails in its first round
                    raise FloatingPointError(f"{key} failed")

            return n, run

        return make

    out = bench_step.interleaved(
        {"a": factory("a"), "b": factory("b"), "bad": factory("bad", fail=True)},
        batch=4,
        target=0.0,
        rounds=3,
        errors=(FloatingPointError,),
    )
    # calibration: one run each (target 0 is reached at once); round 1: a, b, bad (fails,
    # dropped); rounds 2 and 3: a, b
    assert log == ["a", "b", "bad", "a", "b", "bad", "a", "b", "a", "b"]
    assert out["bad"] == {"error": "bad failed"}
    for key in ("a", "b"):
        t = out[key]["times_s"]
        assert len(t) == 3 and out[key]["nstep"] == bench_step.EPISODE
        assert out[key]["steps_per_s"] == pytest.approx(4 * bench_step.EPISODE / np.median(t))
        assert out[key]["best_steps_per_s"] >= out[key]["steps_per_s"]
    r = {"x": {"nstep": 10, "times_s": [1.0, 2.0, 4.0]}, "y": {"nstep": 10, "times_s": [2.0, 2.0, 2.0]}}
    assert bench_step.paired_ratio(r, "x", "y") == 1.0  # round ratios 2, 1, 0.5
    assert bench_step.paired_ratio({"x": r["x"], "y": {"error": "e"}}, "x", "y") is None


def test_rounds_and_parity_targets(tmp_path):
    """--rounds 2: every column of every row has two interleaved times; ours/rollout is checked
    at B = 1 and 64 against parity (1.0x), per-step at B = 64 against 0.95x."""
    path = tmp_path / "step.json"
    argv = ["--quick", "--no-compile", "--models", "double_pendulum", "--threads", "1", "--rounds", "2"]
    bench_step.main([*argv, "--json", str(path)])
    data = json.loads(path.read_text())
    assert data["meta"]["rounds"] == 2
    for r in data["rows"]:
        for key in ("ours", "ours_rollout", "ours_per_step", "ours_one_per_call", "rollout", "mj_loop"):
            assert len(r[key]["times_s"]) == 2, (r["batch"], key)
        checks = {c["what"]: c["bound"] for c in r["targets"]}
        assert checks["ours/rollout"] == ">= 1"
        assert ("per-step/rollout" in checks) == (r["batch"] == 64)
