"""benchmarks/bench_step.py's --batches: a quick run of the double pendulum gains a T = 1 row
at each extra batch size, between B = 1 and B = 64, with every column measured and no target
applied to it (the targets are set at B = 1 and 64); bad sizes are refused. No timing is
asserted."""

from __future__ import annotations

import json

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


@pytest.mark.parametrize("bad", ["0", "4,x", "-2"])
def test_bad_batch_sizes_are_refused(bad, capsys):
    with pytest.raises(SystemExit) as e:
        bench_step.main(["--batches", bad])
    assert e.value.code == 2
    assert "--batches" in capsys.readouterr().err
