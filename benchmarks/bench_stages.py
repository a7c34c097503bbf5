"""Where a step's time goes, stage by stage, in our engine and in MuJoCo, on the same states.

    python -m benchmarks.bench_stages                          # humanoid_floor, ant_floor, dmc_humanoid
    python -m benchmarks.bench_stages --models humanoid_floor --batch 64

For each model, `--batch` states are taken from MuJoCo rollouts (bench_step's random starts,
`--settle` steps of mj_step with its constant controls, so the floor models lie in contact),
copied into one engine.Simulator and into one MjData per row, and forward() / mj_forward run
once. Then each stage of the forward pass runs again and again on those states, every row in
turn, one thread, and is timed per row:

  stage          ours (engine kernel or unit)            MuJoCo
  kinematics     engine.kinematics.kinematics            mj_kinematics
  com_pos        engine.com_pos.com_pos                  mj_comPos
  tendon         engine.tendon.tendon                    mj_tendon
  crb            engine.crb.crb                          mj_crb
  factor         engine.factor.factor_m                  mj_factorM
  collision      the collision unit                      mj_collision
  constraint     the make_constraint unit                mj_makeConstraint + mj_island +
                                                         mj_projectConstraint (timed after
                                                         mj_collision, whose time is taken
                                                         out: the rows live in the arena
                                                         mj_collision clears)
  transmission   engine.actuation.transmission           mj_transmission
  velocity       engine.forward.fwd_velocity             mj_fwdVelocity
  actuation      engine.actuation.actuation              mj_fwdActuation
  acc_smooth     engine.forward.smooth_acceleration      mj_fwdAcceleration
  solver         the solver unit                         mj_fwdConstraint
  islands+solver the solver unit (it finds the islands)  mj_island + mj_fwdConstraint
  islands        engine.island.island                    mj_island (islands+solver less
                                                         solver)
  solver, no     the solver unit and mj_fwdConstraint on the same states of the model with
  islands        <flag island="disable"/>: all rows one problem (against `solver`, what the
                 islands cost)
  sensors        the sensors unit                        mj_sensorPos + mj_sensorVel + mj_sensorAcc,
                                                         its flg_subtreevel and flg_rnepost
                                                         cleared first (else a repeated call
                                                         skips mj_subtreeVel and
                                                         mj_rnePostConstraint)
  forward        the forward unit (all of the above      mj_forward
                 but the sensors)
  step           one sim.step() of the whole batch       mj_step on each MjData

Each stage reads what forward() left and writes only what it computes, so running it again
recomputes the same values (the solver warm-starts from the same qacc_warmstart each time).
MuJoCo's stages are called from Python, one call a row: the cost of such a call (timed on
mj_kinematics of an empty model) is subtracted and printed. Each number is the best of
`--repeats` timings of at least `--target` seconds, in microseconds per row. The ratio column
is ours / MuJoCo's time (below 1: ours is faster). Run it on an idle machine.
"""

from __future__ import annotations

import argparse
import re
import time

import mujoco
import numpy as np
from numba import njit

from benchmarks.bench_step import initial_states, model_sources
from robodyn import engine
from robodyn.engine.actuation import actuation, transmission
from robodyn.engine.com_pos import com_pos
from robodyn.engine.crb import crb
from robodyn.engine.factor import factor_m
from robodyn.engine.forward import fwd_velocity, smooth_acceleration
from robodyn.engine.island import island
from robodyn.engine.kinematics import kinematics
from robodyn.engine.ptr import call_unit, data_at, model_at
from robodyn.engine.tendon import tendon

STAGES = (
    "kinematics",
    "com_pos",
    "tendon",
    "crb",
    "factor",
    "collision",
    "constraint",
    "transmission",
    "velocity",
    "actuation",
    "acc_smooth",
    "solver",
    "sensors",
    "forward",
)
DEFAULT_MODELS = ("humanoid_floor", "ant_floor", "dmc_humanoid")


# not cached: numba keys a cache on this file alone, and this function holds copies of the
# engine's kernels (inlined), which an edit to the engine would leave stale
@njit
def _run_stage(table, data_address, stage, reps):
    """Run stage `stage` (an index of STAGES) `reps` times on every row, row b with the Model
    record at table[b]."""
    d = data_at(data_address)
    for _ in range(reps):
        for b in range(table.shape[0]):
            m = model_at(table[b])
            if stage == 0:
                kinematics(m, d, b)
            elif stage == 1:
                com_pos(m, d, b)
            elif stage == 2:
                tendon(m, d, b)
            elif stage == 3:
                crb(m, d, b)
            elif stage == 4:
                factor_m(m, d, b)
            elif stage == 5:
                if m.unit_collision != 0:
                    call_unit(m.unit_collision, m, d, b)
            elif stage == 6:
                if m.unit_make_constraint != 0:
                    call_unit(m.unit_make_constraint, m, d, b)
            elif stage == 7:
                transmission(m, d, b)
            elif stage == 8:
                fwd_velocity(m, d, b)
            elif stage == 9:
                actuation(m, d, b)
            elif stage == 10:
                smooth_acceleration(m, d, b)
            elif stage == 11:
                if d.nefc[b] > 0:
                    call_unit(m.unit_solver, m, d, b)
            elif stage == 12:
                if m.unit_sensors != 0:
                    call_unit(m.unit_sensors, m, d, b)
            else:
                call_unit(m.unit_forward, m, d, b)


def _mujoco_stage(name: str):
    """The MuJoCo call(s) of stage `name`, as f(m, d)."""

    def constraint(m, d):  # the rows live in the arena mj_collision clears: timed with it
        mujoco.mj_collision(m, d)
        mujoco.mj_makeConstraint(m, d)
        mujoco.mj_island(m, d)
        mujoco.mj_projectConstraint(m, d)

    def sensors(m, d):
        # MuJoCo computes subtree_linvel/angmom and cacc/cfrc once per pass and flags them
        # done; cleared, each call recomputes them for the sensors that read them, as ours do
        _clear_lazy_flags(d)
        mujoco.mj_sensorPos(m, d)
        mujoco.mj_sensorVel(m, d)
        mujoco.mj_sensorAcc(m, d)

    return {
        "kinematics": mujoco.mj_kinematics,
        "com_pos": mujoco.mj_comPos,
        "tendon": mujoco.mj_tendon,
        "crb": mujoco.mj_crb,
        "factor": mujoco.mj_factorM,
        "collision": mujoco.mj_collision,
        "constraint": constraint,
        "transmission": mujoco.mj_transmission,
        "velocity": mujoco.mj_fwdVelocity,
        "actuation": mujoco.mj_fwdActuation,
        "acc_smooth": mujoco.mj_fwdAcceleration,
        "solver": mujoco.mj_fwdConstraint,
        "sensors": sensors,
        "forward": mujoco.mj_forward,
        "step": mujoco.mj_step,
    }[name]


@njit
def _run_islands(table, data_address, reps):
    """engine.island.island `reps` times on every row (not cached, as _run_stage)."""
    d = data_at(data_address)
    for _ in range(reps):
        for b in range(table.shape[0]):
            island(model_at(table[b]), d, b)


def islands_disabled(xml: str) -> str:
    """The MJCF text (its comments dropped) with island="disable" on its <flag>, in a <flag>
    added to its <option> if it has none, or in an <option> added if it has none either."""
    xml = re.sub(r"<!--.*?-->", "", xml, flags=re.S)
    if re.search(r"<flag\b", xml):
        xml = re.sub(r'\sisland\s*=\s*"[^"]*"', "", xml)
        return re.sub(r"<flag\b", '<flag island="disable"', xml, count=1)
    flag = '<flag island="disable"/>'
    if re.search(r"<option\b[^>]*/>", xml):
        return re.sub(r"<option\b([^>]*)/>", rf"<option\1>{flag}</option>", xml, count=1)
    if re.search(r"<option\b", xml):
        return re.sub(r"<option\b([^>]*)>", rf"<option\1>{flag}", xml, count=1)
    return re.sub(r"(<mujoco\b[^>]*>)", rf"\1<option>{flag}</option>", xml, count=1)


def best_time(run, target: float, repeats: int) -> tuple[float, int]:
    """(best seconds per call of run(n), n): n doubled until one call lasts `target` s."""
    n = 1
    while True:
        t0 = time.perf_counter()
        run(n)
        dt = time.perf_counter() - t0
        if dt >= target:
            break
        n *= 2 if dt < target / 4 else max(2, int(np.ceil(target / max(dt, 1e-9))))
    best = dt
    for _ in range(repeats - 1):
        t0 = time.perf_counter()
        run(n)
        best = min(best, time.perf_counter() - t0)
    return best / n, n


def settled_states(mj: mujoco.MjModel, batch: int, settle: int) -> list[mujoco.MjData]:
    """One MjData per row: bench_step's random start, then `settle` mj_steps with its
    constant controls, then mj_forward."""
    qpos, qvel, ctrl = initial_states(mj, batch)
    datas = []
    for b in range(batch):
        d = mujoco.MjData(mj)
        d.qpos[:], d.qvel[:], d.ctrl[:] = qpos[b], qvel[b], ctrl[b]
        for _ in range(settle):
            mujoco.mj_step(mj, d)
        mujoco.mj_forward(mj, d)
        datas.append(d)
    return datas


# what a stage's inputs start from: the state copied from MuJoCo's MjData
STATE = ("qpos", "qvel", "ctrl", "act", "qacc_warmstart", "time")


def simulator_at(model, datas: list[mujoco.MjData]) -> engine.Simulator:
    """An engine.Simulator whose rows hold the MjData states, forward() run."""
    sim = engine.Simulator(model, batch=len(datas), nthread=1)
    for name in STATE:
        getattr(sim.data, name)[:] = np.array([np.atleast_1d(getattr(d, name)) for d in datas]).reshape(
            getattr(sim.data, name).shape
        )
    sim.forward()
    return sim


def _clear_lazy_flags(d: mujoco.MjData) -> None:
    """Mark mj_subtreeVel's and mj_rnePostConstraint's results stale (MuJoCo recomputes them
    when a sensor next needs them)."""
    d.flg_subtreevel = 0
    d.flg_rnepost = 0


def flag_cost(target: float, repeats: int) -> float:
    """Seconds of one _clear_lazy_flags from Python (subtracted from the sensors stage)."""
    d = mujoco.MjData(mujoco.MjModel.from_xml_string("<mujoco/>"))

    def run(n):
        for _ in range(n):
            _clear_lazy_flags(d)

    return best_time(run, target, repeats)[0]


def call_cost(target: float, repeats: int) -> float:
    """Seconds of one Python call of a MuJoCo function that does (almost) nothing."""
    m = mujoco.MjModel.from_xml_string("<mujoco/>")
    d = mujoco.MjData(m)
    f = mujoco.mj_kinematics

    def run(n):
        for _ in range(n):
            f(m, d)

    return best_time(run, target, repeats)[0]


def profile(
    name: str, xml: str, batch: int, settle: int, target: float, repeats: int, overhead: float, flags: float
):
    """{stage: (ours us/row, MuJoCo us/row)} for one model, and a summary line of its state."""
    mj = mujoco.MjModel.from_xml_string(xml)
    model = engine.load_mjcf(xml)
    datas = settled_states(mj, batch, settle)
    sim = simulator_at(model, datas)
    ncon = np.array([d.ncon for d in datas])
    nefc = np.array([d.nefc for d in datas])
    assert np.array_equal(sim.data.ncon, ncon), f"{name}: contact counts differ from MuJoCo's"
    table = sim._bound.model_table
    address = sim._bound.data_address
    rows = {}
    _run_stage(table, address, 0, 1)  # compile the driver once
    for k, stage in enumerate(STAGES):

        def ours(n, k=k):
            _run_stage(table, address, k, n)

        f = _mujoco_stage(stage)

        def theirs(n, f=f):
            for _ in range(n):
                for d in datas:
                    f(mj, d)

        t_ours = best_time(ours, target, repeats)[0] / batch
        calls = {"constraint": 4, "sensors": 3}.get(stage, 1)
        extra = flags if stage == "sensors" else 0.0
        t_mj = max(best_time(theirs, target, repeats)[0] / batch - calls * overhead - extra, 0.0)
        rows[stage] = (t_ours * 1e6, t_mj * 1e6)
    # MuJoCo's constraint stage ran after a collision pass of its own: take it out
    rows["constraint"] = (rows["constraint"][0], max(rows["constraint"][1] - rows["collision"][1], 0.0))

    # the solver against the solver: ours finds the islands inside its unit, MuJoCo's in
    # mj_island (part of its constraint stage above); each found again on the same rows
    def theirs_solve(n):
        for _ in range(n):
            for d in datas:
                mujoco.mj_island(mj, d)
                mujoco.mj_fwdConstraint(mj, d)

    t_mj = max(best_time(theirs_solve, target, repeats)[0] / batch - 2 * overhead, 0.0)
    rows["islands+solver"] = (rows["solver"][0], t_mj * 1e6)
    _run_islands(table, address, 1)
    t_ours = best_time(lambda n: _run_islands(table, address, n), target, repeats)[0] / batch
    rows["islands"] = (t_ours * 1e6, max(rows["islands+solver"][1] - rows["solver"][1], 0.0))
    rows["solver, no islands"] = _solver_without_islands(xml, datas, target, repeats, overhead)
    # a whole step: ours batched (forward, sensors, integrator), MuJoCo's mj_step per row
    snap = sim.snapshot()
    saved = [(d.qpos.copy(), d.qvel.copy(), d.act.copy(), d.qacc_warmstart.copy(), d.time) for d in datas]

    def ours_step(n):
        sim.restore(snap)
        sim.step(n)

    def theirs_step(n, f=mujoco.mj_step):
        for d, s in zip(datas, saved, strict=True):
            d.qpos[:], d.qvel[:], d.act[:], d.qacc_warmstart[:], d.time = s
            for _ in range(n):
                f(mj, d)

    steps = 50
    t_ours = best_time(lambda n: [ours_step(steps) for _ in range(n)], target, repeats)[0] / (batch * steps)
    t_mj = best_time(lambda n: [theirs_step(steps) for _ in range(n)], target, repeats)[0] / (batch * steps)
    rows["step"] = (t_ours * 1e6, max(t_mj - overhead, 0.0) * 1e6)
    state = (
        f"{name}: nv {mj.nv}, {mujoco.mjtSolver(mj.opt.solver).name[6:]}, "
        f"{mujoco.mjtIntegrator(mj.opt.integrator).name[6:]}, B {batch}, after {settle} steps: "
        f"{ncon.mean():.1f} contacts and {nefc.mean():.1f} constraint rows a row on average"
    )
    return rows, state


def _solver_without_islands(xml: str, datas, target: float, repeats: int, overhead: float):
    """(ours, MuJoCo's) us per row of the solver on the states `datas` with the model's islands
    disabled."""
    text = islands_disabled(xml)
    mj = mujoco.MjModel.from_xml_string(text)
    copies = []
    for src in datas:
        d = mujoco.MjData(mj)
        for name in STATE:
            setattr(d, name, getattr(src, name))
        mujoco.mj_forward(mj, d)
        copies.append(d)
    sim = simulator_at(engine.load_mjcf(text), copies)
    table, address = sim._bound.model_table, sim._bound.data_address
    solver = STAGES.index("solver")
    _run_stage(table, address, solver, 1)
    t_ours = best_time(lambda n: _run_stage(table, address, solver, n), target, repeats)[0] / len(datas)

    def theirs(n):
        for _ in range(n):
            for d in copies:
                mujoco.mj_fwdConstraint(mj, d)

    t_mj = max(best_time(theirs, target, repeats)[0] / len(datas) - overhead, 0.0)
    return t_ours * 1e6, t_mj * 1e6


def print_table(rows: dict, state: str) -> None:
    print(state)
    print(f"  {'stage':<18} {'ours us':>9} {'MuJoCo us':>10} {'ours/MuJoCo':>12}")
    for stage, (ours, theirs) in rows.items():
        ratio = f"{ours / theirs:.2f}" if theirs > 0 else "-"
        print(f"  {stage:<18} {ours:>9.3f} {theirs:>10.3f} {ratio:>12}")
    print()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default=",".join(DEFAULT_MODELS), help="comma-separated bench_step models")
    ap.add_argument("--batch", type=int, default=64, help="rows (states) a stage runs over")
    ap.add_argument("--settle", type=int, default=300, help="mj_steps before the states are taken")
    ap.add_argument("--target", type=float, default=0.2, help="seconds a timing lasts at least")
    ap.add_argument("--repeats", type=int, default=3, help="timings per number; the best is kept")
    args = ap.parse_args(argv)
    sources = model_sources()
    overhead = call_cost(args.target, args.repeats)
    flags = flag_cost(args.target, args.repeats)
    print(f"one Python call of a MuJoCo function: {overhead * 1e6:.3f} us (subtracted from MuJoCo's)")
    print(f"clearing MuJoCo's two lazy-stage flags: {flags * 1e6:.3f} us (subtracted from its sensors)\n")
    for name in args.models.split(","):
        rows, state = profile(
            name, sources[name], args.batch, args.settle, args.target, args.repeats, overhead, flags
        )
        print_table(rows, state)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
