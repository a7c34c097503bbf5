"""benchmarks/bench_lanes.py: a tiny run times every stage three ways and whole steps of the
smooth humanoid (after checking the lanes bit-equal to the per-row engine, which the
benchmark asserts itself), and says why a model's whole step is not run in lanes. No
timing is asserted."""

from __future__ import annotations

from benchmarks import bench_lanes, bench_step
from robodyn import engine


def test_stages_and_steps_timed_three_ways(capsys):
    xml = bench_step.model_sources()["humanoid"]
    rows, threaded, wset = bench_lanes.profile("humanoid", xml, 8, 0, 0.001, 1, 0.0, 2)
    assert list(rows) == [*bench_lanes.lanes.STAGES[:6], "all six", "forward"]
    for stage, times in rows.items():
        assert times[0] > 0 and times[1] > 0 and times[2] >= 0, stage
    assert min(threaded) > 0
    # eight rows of every field, from the Simulator's own (B, ...) arrays and the work arrays
    sim = engine.Simulator(engine.load_mjcf(xml), batch=1, nthread=1)
    m = sim.model
    work = {"cacc": 6 * m.nbody, "cfrc": 6 * m.nbody, "dx": m.nv, "dv": m.nv}
    floats = sum(work.get(f) or getattr(sim.data, f)[0].size for f in bench_lanes.lanes.FIELDS)
    assert wset == 8 * 8 * floats
    bench_lanes.print_table("humanoid", rows, threaded, 2, wset, {"L1d": 49152})
    rates = bench_lanes.steps(xml, 8, 2, 0.001, 1)
    assert list(rates) == [1, 2] and all(min(r) > 0 for r in rates.values())
    bench_lanes.print_steps("humanoid", 8, rates)
    out = capsys.readouterr().out
    assert "working set of one block" in out and "lanes/rollout" in out


def test_a_model_the_lanes_cannot_step_gets_its_stages_and_the_reasons(capsys):
    assert (
        bench_lanes.main(["--models", "ant_floor", "--batch", "8", "--target", "0.001", "--repeats", "1"])
        == 0
    )
    out = capsys.readouterr().out
    assert "ant_floor: ns per row" in out
    assert "ant_floor: no whole steps in lanes (contacts" in out
    assert "forward" not in out.split("ant_floor: ns per row")[1].split("no whole steps")[0]
