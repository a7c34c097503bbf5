"""benchmarks/bench_policy.py: on the crane (VecNormalize, as `robodyn train` builds it) the
observations reach SB3 as float32 and obs_as_tensor shares their memory, which is what
benchmarks/README states about copies and float32; every part is measured and written to the
JSON it returns. No timing is asserted."""

from __future__ import annotations

import json
import math

import pytest
import torch

from benchmarks import bench_policy

ENV = "RoboDyn/Crane-v0"


def test_rows_measure_every_part_of_a_float32_zero_copy_pick(tmp_path, capsys):
    path = tmp_path / "policy.json"
    argv = ["--env", ENV, "--num-envs", "4,8", "--calls", "3", "--repeats", "2", "--json", str(path)]
    out = bench_policy.main(argv)
    assert json.loads(path.read_text()) == json.loads(json.dumps(out))
    assert out["env_id"] == ENV and out["torch_threads"] == torch.get_num_threads()
    assert [r["num_envs"] for r in out["rows"]] == [4, 8]
    for r in out["rows"]:
        assert r["obs_dtype"] == "float32" and r["shares_memory"] is True
        assert r["obs_shape"][0] == r["num_envs"]
        assert set(r["us"]) == set(bench_policy.PARTS)
        assert all(math.isfinite(v) for v in r["us"].values())
        assert all(r["us"][p] > 0 for p in bench_policy.PARTS if p != "f64 cast")  # a difference
    lines = capsys.readouterr().out.splitlines()
    assert sum(line.split()[0] in ("4", "8") for line in lines) == 2  # a table line per row


@pytest.mark.parametrize(
    "argv",
    [["--num-envs", "0"], ["--calls", "0"], ["--env", "RoboDyn/NoSuchTask-v0"],
     ["--json", "/no/such/directory/out.json"]],
)  # fmt: skip
def test_bad_arguments_are_refused_before_any_work(argv, capsys):
    with pytest.raises(SystemExit) as e:
        bench_policy.main(argv)
    assert e.value.code == 2
    assert "num_envs" not in capsys.readouterr().out
