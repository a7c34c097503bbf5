"""The lanes study: the engine eight rows a vector (engine.lanes) against the per-row engine and
MuJoCo, on the same states.

    python -m benchmarks.bench_lanes                          # humanoid (no contacts), B = 64
    python -m benchmarks.bench_lanes --models humanoid,dmc_humanoid,ant_floor

Stages. For each model, `--batch` states (bench_step's random starts, settled by `--settle`
mj_steps as bench_stages takes them) are loaded into one engine.Simulator, forward() runs,
and the batch is copied into lanes (engine.lanes.from_simulator). Each stage then runs again
and again over the whole batch, one thread, and is timed per row:

  stage        per-row kernel (engine)    lanes (engine.lanes)     MuJoCo (one call a row)
  kinematics   kinematics.kinematics      kinematics_lanes         mj_kinematics
  com_pos      com_pos.com_pos            com_pos_lanes            mj_comPos
  crb          crb.crb                    crb_lanes                mj_crb
  factor       factor.factor_m            factor_lanes             mj_factorM
  com_vel      com_vel.com_vel            com_vel_lanes            mj_comVel
  bias         rne.bias                   bias_lanes               mj_rne (flg_acc 0)
  all six      the six in turn, each row  the six, each block      the six calls, each row
  forward      the forward unit           forward_lanes            mj_forward

(`forward` only for a model whose whole step the lanes run: engine.lanes.unsupported.)
`all six` is also timed on `--threads` threads (rows, or blocks, split over numba's threads).
MuJoCo's Python call cost (timed on an empty model) is subtracted from its numbers. Before
timing, the lanes' results are checked bit-equal to the per-row kernels'. The working set of
one block (every field the lanes hold, eight rows of each) is printed against the host's L1
and L2 data caches.

Steps (models the lanes run whole): env-steps/s at B = `--batch` on 1 and `--threads`
threads, as bench_step times them (whole episodes of bench_step.EPISODE steps from its
random starts, best of `--repeats`): `ours` = Simulator.step, `lanes` = engine.lanes.step
(step_parallel on threads), `rollout` = mujoco.rollout. Before timing, one episode of each
engine path is checked bit-equal. Run it on an idle machine.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import mujoco
import numba
import numpy as np
from numba import njit, prange

from benchmarks.bench_stages import best_time, call_cost, settled_states, simulator_at
from benchmarks.bench_step import (
    EPISODE,
    initial_states,
    measure,
    model_sources,
    ours_factory,
    ours_reset,
    rollout_factory,
)
from robodyn import engine
from robodyn.engine import lanes
from robodyn.engine.com_pos import com_pos
from robodyn.engine.com_vel import com_vel
from robodyn.engine.crb import crb
from robodyn.engine.factor import factor_m
from robodyn.engine.jit import JIT_OPTIONS
from robodyn.engine.kinematics import kinematics
from robodyn.engine.ptr import call_unit, data_at, model_at
from robodyn.engine.rne import bias

ALL = 6  # the six stages kinematics ... bias; `all six` times them together
FORWARD = lanes.STAGES.index("forward")
DEFAULT_MODELS = ("humanoid",)


# not cached: these drivers hold inlined copies of the engine's kernels (bench_stages.py)
@njit(**JIT_OPTIONS)
def _row_stages(m, d, b, first, last):
    for stage in range(first, last + 1):
        if stage == 0:
            kinematics(m, d, b)
        elif stage == 1:
            com_pos(m, d, b)
        elif stage == 2:
            crb(m, d, b)
        elif stage == 3:
            factor_m(m, d, b)
        elif stage == 4:
            com_vel(m, d, b)
        elif stage == 5:
            bias(m, d, b)
        elif stage == 6:
            call_unit(m.unit_forward, m, d, b)


@njit(**JIT_OPTIONS)
def _row_at(table, data_address, b, first, last):
    # model_at / data_at outside the prange body: numba's parfor alias pass cannot take them
    _row_stages(model_at(table[b]), data_at(data_address), b, first, last)


@njit(**JIT_OPTIONS)
def _block_at(model_address, A, k, first, last):
    m = model_at(model_address)
    L = lanes.block(A, k)
    for stage in range(first, last + 1):
        lanes._stage(m, L, stage)


@njit(**JIT_OPTIONS)
def _rows(table, data_address, first, last, reps):
    d = data_at(data_address)
    for _ in range(reps):
        for b in range(table.shape[0]):
            _row_stages(model_at(table[b]), d, b, first, last)


@njit(parallel=True, **JIT_OPTIONS)
def _rows_parallel(table, data_address, reps):
    for _ in range(reps):
        for b in prange(table.shape[0]):
            _row_at(table, data_address, b, 0, ALL - 1)


@njit(**JIT_OPTIONS)
def _blocks(model_address, A, first, last, reps):
    for _ in range(reps):
        for k in range(A.qpos.shape[0]):
            _block_at(model_address, A, k, first, last)


@njit(parallel=True, **JIT_OPTIONS)
def _blocks_parallel(model_address, A, reps):
    for _ in range(reps):
        for k in prange(A.qpos.shape[0]):
            _block_at(model_address, A, k, 0, ALL - 1)


def _mujoco_stage(name: str):
    """MuJoCo's call(s) of stage `name`, as f(m, d)."""

    def bias_force(m, d):
        mujoco.mj_rne(m, d, 0, d.qfrc_bias)

    calls = {
        "kinematics": (mujoco.mj_kinematics,),
        "com_pos": (mujoco.mj_comPos,),
        "crb": (mujoco.mj_crb,),
        "factor": (mujoco.mj_factorM,),
        "com_vel": (mujoco.mj_comVel,),
        "bias": (bias_force,),
        "forward": (mujoco.mj_forward,),
    }
    fs = calls[name] if name in calls else tuple(calls[s][0] for s in lanes.STAGES[:ALL])

    def run(m, d):
        for f in fs:
            f(m, d)

    return run, len(fs)


def cache_sizes() -> dict[str, int]:
    """{'L1d': bytes, 'L2': bytes, ...} of cpu0, read from sysfs (empty where it is not)."""
    sizes = {}
    for index in sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*")):
        try:
            level = (index / "level").read_text().strip()
            kind = (index / "type").read_text().strip()
            size = (index / "size").read_text().strip()
        except OSError:
            continue
        if kind == "Instruction":
            continue
        scale = {"K": 1024, "M": 1024**2}.get(size[-1], 1)
        sizes[f"L{level}{'d' if kind == 'Data' else ''}"] = int(size.rstrip("KM")) * scale
    return sizes


def working_set(A: lanes.Lanes) -> int:
    """Bytes of one block: every field the lanes hold, eight rows of each."""
    return sum(getattr(A, f)[0].nbytes for f in lanes.FIELDS)


def check_equal(sim: engine.Simulator, A: lanes.Lanes, last: int) -> None:
    """Run stages 0..last both ways once and assert the lanes' fields bit-equal (what is
    timed is what is right)."""
    bound = sim._bound
    _rows(bound.model_table, bound.data_address, 0, last, 1)
    _blocks(bound.model_address, A, 0, last, 1)
    for f in lanes.FIELDS:
        if f not in lanes.WORK:
            got = lanes.from_lanes(getattr(A, f)).view(np.int64)
            want = np.ascontiguousarray(getattr(sim.data, f)).view(np.int64)
            assert np.array_equal(got, want), f"lanes differ from the per-row kernels in {f}"


def profile(name, xml, batch, settle, target, repeats, overhead, threads):
    """{stage: (per-row ns, lanes ns, MuJoCo ns)} per row, the threaded `all six` pair, and
    the working set of a block."""
    mj = mujoco.MjModel.from_xml_string(xml)
    datas = settled_states(mj, batch, settle)
    model = engine.load_mjcf(xml)
    whole = not lanes.unsupported(model)
    sim = simulator_at(model, datas)
    A = lanes.from_simulator(sim, whole_step=whole)
    check_equal(sim, A, FORWARD if whole else ALL - 1)
    bound = sim._bound
    table, address, maddr = bound.model_table, bound.data_address, bound.model_address
    rows = {}
    stages = [(k, k, s) for k, s in enumerate(lanes.STAGES[:ALL])] + [(0, ALL - 1, "all six")]
    if whole:
        stages.append((FORWARD, FORWARD, "forward"))
    for first, last, stage in stages:
        f, ncalls = _mujoco_stage(stage)

        def theirs(n, f=f):
            for _ in range(n):
                for d in datas:
                    f(mj, d)

        t_rows = best_time(lambda n, a=first, b=last: _rows(table, address, a, b, n), target, repeats)[0]
        t_lanes = best_time(lambda n, a=first, b=last: _blocks(maddr, A, a, b, n), target, repeats)[0]
        t_mj = max(best_time(theirs, target, repeats)[0] / batch - ncalls * overhead, 0.0)
        rows[stage] = (t_rows / batch * 1e9, t_lanes / batch * 1e9, t_mj * 1e9)
    numba.set_num_threads(threads)
    _rows_parallel(table, address, 1)  # compile before timing
    _blocks_parallel(maddr, A, 1)
    t_rows = best_time(lambda n: _rows_parallel(table, address, n), target, repeats)[0]
    t_lanes = best_time(lambda n: _blocks_parallel(maddr, A, n), target, repeats)[0]
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    threaded = (t_rows / batch * 1e9, t_lanes / batch * 1e9)
    return rows, threaded, working_set(A)


def lanes_factory(sim, state, nthread):
    """bench_step's `ours` episodes, each a reset then engine.lanes.step (step_parallel on
    threads) of the whole batch: the reset writes the lanes' qpos, qvel, ctrl, time and
    applied forces as ours_reset writes the Simulator's."""
    reset_rows = ours_reset(sim, state)
    reset_rows()
    sim.forward()
    A = lanes.from_simulator(sim)
    start = {f: getattr(A, f).copy() for f in ("qpos", "qvel", "ctrl", "time", "qfrc_applied")}
    address = sim._bound.model_address
    status = np.zeros(A.qpos.shape[0], dtype=np.int64)
    step = lanes.step if nthread == 1 else lanes.step_parallel

    def factory(n):
        count = max(1, -(-n // EPISODE))

        def run(sim=sim):  # sim holds the Model record at `address`: keep it alive
            for _ in range(count):
                for f, x in start.items():
                    getattr(A, f)[:] = x
                step(address, A, EPISODE, status)

        return EPISODE * count, run

    return factory, A


def check_episode(xml, state) -> None:
    """One episode both ways, one thread: the lanes' final state bit-equal to Simulator.step's."""
    sim = engine.Simulator(engine.load_mjcf(xml), batch=len(state[0]), nthread=1)
    factory, A = lanes_factory(sim, state, 1)
    factory(EPISODE)[1]()
    ours_reset(sim, state)()
    sim.step(EPISODE)
    for f in ("qpos", "qvel", "qacc"):
        got = lanes.from_lanes(getattr(A, f)).view(np.int64)
        assert np.array_equal(got, getattr(sim.data, f).view(np.int64)), (
            f"lanes differ from Simulator.step in {f}"
        )


def steps(xml, batch, threads, target, repeats) -> dict:
    """{T: (ours, lanes, rollout) env-steps/s} at B = batch for T = 1 and threads."""
    mj = mujoco.MjModel.from_xml_string(xml)
    model = engine.load_mjcf(xml)
    state = initial_states(mj, batch)
    check_episode(xml, state)
    out = {}
    for T in sorted({1, threads}):
        numba.set_num_threads(T)
        sim = engine.Simulator(model, batch=batch, nthread=T)
        lanes_run, _ = lanes_factory(engine.Simulator(model, batch=batch, nthread=T), state, T)
        with mujoco.rollout.Rollout(nthread=0 if T == 1 else T) as roller:
            datas = [mujoco.MjData(mj) for _ in range(T)]
            rates = [
                measure(f, batch, target, repeats)["steps_per_s"]
                for f in (ours_factory(sim, state), lanes_run, rollout_factory(mj, roller, datas, state))
            ]
        out[T] = tuple(rates)
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    return out


def print_table(name, rows, threaded, threads, wset, caches) -> None:
    print(f"{name}: ns per row")
    head = f"{'per-row':>8} {'lanes':>8} {'MuJoCo':>8} {'lanes gain':>11} {'MuJoCo/lanes':>13}"
    print(f"  {'stage':<11} {head}")
    for stage, (r, v, mj) in rows.items():
        print(f"  {stage:<11} {r:>8.1f} {v:>8.1f} {mj:>8.1f} {r / v:>10.2f}x {mj / v:>12.2f}x")
    r, v = threaded
    print(f"  all six on {threads} threads: per-row {r:.1f}, lanes {v:.1f} ns a row ({r / v:.2f}x)")
    cache = ", ".join(f"{k} {s // 1024} KiB" for k, s in caches.items())
    print(f"  working set of one block: {wset / 1024:.1f} KiB ({cache})\n")


def print_steps(name, batch, rates) -> None:
    print(f"{name}: whole steps, B = {batch}, env-steps/s")
    ratios = f"{'lanes/ours':>11} {'lanes/rollout':>14} {'ours/rollout':>13}"
    print(f"  {'T':>2} {'ours':>9} {'lanes':>9} {'rollout':>9} {ratios}")
    for T, (ours, ln, mj) in rates.items():
        rate = f"{ours:>9,.0f} {ln:>9,.0f} {mj:>9,.0f}"
        print(f"  {T:>2} {rate} {ln / ours:>10.2f}x {ln / mj:>13.2f}x {ours / mj:>12.2f}x")
    print()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default=",".join(DEFAULT_MODELS), help="comma-separated bench_step models")
    ap.add_argument("--batch", type=int, default=64, help="rows, a multiple of 8")
    ap.add_argument("--settle", type=int, default=0, help="mj_steps before the states are taken")
    ap.add_argument("--threads", type=int, default=2, help="threads of the threaded `all six` timing")
    ap.add_argument("--target", type=float, default=0.5, help="seconds a timing lasts at least")
    ap.add_argument("--repeats", type=int, default=3, help="timings per number; the best is kept")
    args = ap.parse_args(argv)
    sources = model_sources()
    overhead = call_cost(args.target, args.repeats)
    print(f"one Python call of a MuJoCo function: {overhead * 1e9:.0f} ns (subtracted from MuJoCo's)\n")
    caches = cache_sizes()
    for name in args.models.split(","):
        rows, threaded, wset = profile(
            name, sources[name], args.batch, args.settle, args.target, args.repeats, overhead, args.threads
        )
        print_table(name, rows, threaded, args.threads, wset, caches)
        if not lanes.unsupported(engine.load_mjcf(sources[name])):
            print_steps(
                name, args.batch, steps(sources[name], args.batch, args.threads, args.target, args.repeats)
            )
        else:
            why = "; ".join(lanes.unsupported(engine.load_mjcf(sources[name])))
            print(f"{name}: no whole steps in lanes ({why})\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
