"""benchmarks/bench_stages.py: a tiny run on the ant on the floor times every stage on both
sides from states that are MuJoCo's (the contact counts agree), and the stages it reruns
leave those states' results as forward() left them; the islands-disabled model it compares
with has MuJoCo's island flag set, whatever form the <option> takes. No timing is asserted."""

from __future__ import annotations

import mujoco
import numpy as np

from benchmarks import bench_stages, bench_step
from robodyn import engine


def test_every_stage_timed_on_both_sides(capsys):
    xml = bench_step.model_sources()["ant_floor"]
    rows, state = bench_stages.profile("ant_floor", xml, 2, 40, 0.001, 1, 0.0, 0.0)
    assert list(rows) == [*bench_stages.STAGES, "islands+solver", "islands", "solver, no islands", "step"]
    assert rows["islands+solver"][0] == rows["solver"][0]
    for stage, (ours, theirs) in rows.items():
        assert ours > 0 and theirs >= 0, stage
    assert state.startswith("ant_floor: nv 14, NEWTON, RK4, B 2, after 40 steps:")
    bench_stages.print_table(rows, state)
    assert capsys.readouterr().out.count("\n") == 2 + len(rows) + 1  # state, header, rows, blank


def test_rerun_stages_recompute_the_same_state():
    """Each stage reads what forward() left and rewrites only what it computes: after every
    stage has run again, qacc, the contacts and the constraint forces are forward()'s, which
    equal MuJoCo's mj_forward on the same states."""
    xml = bench_step.model_sources()["ant_floor"]
    mj = mujoco.MjModel.from_xml_string(xml)
    datas = bench_stages.settled_states(mj, 3, 40)
    sim = bench_stages.simulator_at(engine.load_mjcf(xml), datas)
    before = {k: np.copy(getattr(sim.data, k)) for k in ("qacc", "ncon", "nefc", "efc_force")}
    for k in range(len(bench_stages.STAGES)):
        bench_stages._run_stage(sim._bound.model_table, sim._bound.data_address, k, 2)
    for name, value in before.items():
        np.testing.assert_allclose(getattr(sim.data, name), value, rtol=0, atol=1e-12, err_msg=name)
    worst = max(float(np.max(np.abs(sim.data.qacc[i] - d.qacc))) for i, d in enumerate(datas))
    print(f"qacc after the stages rerun vs mj_forward: {worst:.1e}")
    assert worst < 1e-9


def test_islands_disabled_sets_the_flag_in_every_form_of_option():
    bare = '<mujoco><worldbody><body><freejoint/><geom size="0.1"/></body></worldbody></mujoco>'
    forms = {
        "none": bare,
        "closed": bare.replace("<worldbody>", '<option timestep="0.002"/><worldbody>'),
        "open": bare.replace(
            "<worldbody>", '<option timestep="0.002"><flag gravity="enable"/></option><worldbody>'
        ),
        "gym humanoid": bench_step.model_sources()["humanoid_floor"],
        "dm_control humanoid": bench_step.model_sources()["dmc_humanoid"],
    }
    for form, xml in forms.items():
        mj = mujoco.MjModel.from_xml_string(bench_stages.islands_disabled(xml))
        assert mj.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_ISLAND, form
        assert not mujoco.MjModel.from_xml_string(xml).opt.disableflags & mujoco.mjtDisableBit.mjDSBL_ISLAND
        if form != "none":
            assert mj.opt.timestep == mujoco.MjModel.from_xml_string(xml).opt.timestep, form


def test_mujocos_sensors_stage_recomputes_what_its_sensors_read():
    """MuJoCo flags subtree_linvel and cacc/cfrc_int as computed once per pass; the timed
    sensors stage clears those flags, so each call redoes mj_subtreeVel and
    mj_rnePostConstraint as ours does (without that, a repeated call skips them)."""
    xml = bench_step.model_sources()["dmc_humanoid"]  # subtreelinvel, accelerometer, force, torque
    mj = mujoco.MjModel.from_xml_string(xml)
    d = bench_stages.settled_states(mj, 1, 40)[0]
    want = {k: np.copy(getattr(d, k)) for k in ("subtree_linvel", "cacc", "cfrc_int", "sensordata")}
    for k in want:
        getattr(d, k)[:] = 0.0
    bench_stages._mujoco_stage("sensors")(mj, d)
    for k, value in want.items():
        np.testing.assert_array_equal(getattr(d, k), value, err_msg=k)
    assert np.any(want["cacc"] != 0) and np.any(want["subtree_linvel"] != 0)
