"""Throughput of RoboDyn's batched step against MuJoCo, and the engine's compile times.

    python -m benchmarks.bench_step                 # full run (a few minutes with a warm cache)
    python -m benchmarks.bench_step --quick         # short run, noisier numbers
    python -m benchmarks.bench_step --cold          # also time a compile from an empty cache, unit by unit
    python -m benchmarks.bench_step --json out.json # also write every number as JSON
    python -m benchmarks.bench_step --models dmc_humanoid --batches 4,16  # rows at B = 4, 16 too (T = 1)

For each model (assets/double_pendulum.xml; gymnasium's humanoid.xml with contacts and
constraints disabled; gymnasium's humanoid.xml and ant.xml as they ship, so on the floor with
contacts, joint limits and the models' own solvers; dm_control's humanoid.xml as it ships,
Newton with touch sensors, no target) and each (batch B, threads T) it reports
env-steps per second (B * nstep / seconds) for:

  ours           engine.Simulator(model, batch=B, nthread=T): one sim.step(length) per episode
  ours rollout   the same Simulator: one sim.rollout(ctrl) per episode, ctrl (B, length, nu) built beforehand
  ours per-step  the RL pattern: each step writes new controls into sim.data.ctrl, then sim.step(1)
  mj loop        Python loop: for each step, mujoco.mj_step(m, d) on each of the B MjData
  rollout        mujoco.rollout.Rollout(nthread=T).rollout(...) over B rows (T=1: calling thread)

and the fixed cost of one sim.step(1) call (from one more run that calls only sim.step(1)),
and the gain from threads (rate at T over rate at T = 1). All engines run episodes of
EPISODE steps, each restarting from the same random state (qpos, qvel) with the same random
controls (constant, except in `ours per-step`, where they move by a negligible CTRL_JITTER
every step). A row's columns are timed interleaved: `--rounds` rounds (5; --quick: 1), each
one run of every column in turn, a run being whole episodes lasting at least `target` seconds;
each rate is the median of its rounds and each ratio the median of the rounds' ratios (a slow
minute of a shared machine then falls on both sides of a ratio). Compilation is excluded
(warm-up calls run first). See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import platform
import re
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import mujoco
import mujoco.rollout
import numpy as np

from benchmarks.args import count, counts

REPO = Path(__file__).resolve().parents[1]

# targets the lead set (target_checks applies them), on every model:
# at B = 1 and B = 64, every T: ours / rollout (parity with MuJoCo)
TARGET_RATIO = 1.0
# at B = 64, every T: ours per-step / rollout
TARGET_PER_STEP_RATIO = 0.95
# at B = 64: rate of ours at T = 2 over its rate at T = 1
TARGET_THREAD_GAIN = {"double_pendulum": 1.7, "humanoid_floor": 1.7, "ant_floor": 1.7}
# (B, T) -> the most microseconds one sim.step(1) call may add (the issue measured it on a small
# model). Checked on the double pendulum, whose step is cheap enough for the difference of two
# rates to show the call's own cost; on the floor models at B = 64 a step takes milliseconds,
# so that difference is within the runs' noise, and with T = 2 it also holds the imbalance of
# the two halves of the batch in each single step (a sim.step(1000) call balances over the
# whole episode): printed, not checked.
TARGET_CALL_OVERHEAD_US = {(1, 1): 5.0, (64, 2): 25.0}
CALL_OVERHEAD_MODELS = ("double_pendulum",)
TARGET_CACHED_FIRST_STEP_S = 3.0

EPISODE = 1000  # steps between resets to the initial state (a gym episode); keeps every row finite
CTRL_SCALE = 0.3  # controls are uniform in CTRL_SCALE x ctrlrange (full range spins the pendulum up)
CTRL_JITTER = 1e-9  # ours per-step: each step's controls move by up to this share of half the ctrlrange
BUSY_MACHINE_GAIN = 1.3  # mujoco.rollout gaining less than this from T > 1 threads: the cores are not free


# --- models -----------------------------------------------------------------------------------
def gym_assets() -> Path:
    """gymnasium's MuJoCo asset folder, found without importing gymnasium."""
    spec = importlib.util.find_spec("gymnasium")
    if spec is None or spec.origin is None:
        raise SystemExit("gymnasium is not installed: cannot find humanoid.xml")
    return Path(spec.origin).parent / "envs" / "mujoco" / "assets"


def dm_control_suite() -> Path:
    """The dm_control suite's model folder, found without importing dm_control."""
    spec = importlib.util.find_spec("dm_control")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("dm_control is not installed: cannot find its suite (pip install -e '.[dev]')")
    return Path(spec.submodule_search_locations[0]) / "suite"


def inline_includes(path: Path) -> str:
    """The MJCF text of `path` with each <include file="..."/> replaced by the included
    file's body (what MuJoCo's compiler does), so the model can be compiled from a string."""

    def body(match: re.Match) -> str:
        text = (path.parent / match.group(1)).read_text()
        return re.search(r"<mujoco[^>]*>(.*)</mujoco>", text, re.S).group(1)

    return re.sub(r'<include\s+file="([^"]+)"\s*/>', body, path.read_text())


def model_sources() -> dict[str, str]:
    """name -> MJCF text of every benchmarked model."""
    from robodyn.engine.loader import without_contacts  # the engine's own edit; imports numba lazily

    return {
        "double_pendulum": (REPO / "assets" / "double_pendulum.xml").read_text(),
        "humanoid": without_contacts(gym_assets() / "humanoid.xml"),
        "humanoid_floor": (gym_assets() / "humanoid.xml").read_text(),
        "ant_floor": (gym_assets() / "ant.xml").read_text(),
        "dmc_humanoid": inline_includes(dm_control_suite() / "humanoid.xml"),
        "dmc_quadruped": inline_includes(dm_control_suite() / "quadruped.xml"),
    }


def ctrl_range(mj: mujoco.MjModel) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) of each actuator's control: its ctrlrange, or [-1, 1] if unlimited."""
    lo = np.where(mj.actuator_ctrllimited, mj.actuator_ctrlrange[:, 0], -1.0)
    hi = np.where(mj.actuator_ctrllimited, mj.actuator_ctrlrange[:, 1], 1.0)
    return lo, hi


def initial_states(mj: mujoco.MjModel, batch: int, seed: int = 0):
    """(qpos, qvel, ctrl) for `batch` rows: qpos0 moved by a random velocity (quaternions stay
    unit), small random velocities, random constant controls in the middle CTRL_SCALE of ctrlrange."""
    rng = np.random.default_rng(seed)
    qpos = np.empty((batch, mj.nq))
    for b in range(batch):
        q = mj.qpos0.copy()
        mujoco.mj_integratePos(mj, q, rng.uniform(-0.3, 0.3, mj.nv), 1.0)
        qpos[b] = q
    qvel = rng.uniform(-0.5, 0.5, (batch, mj.nv))
    lo, hi = ctrl_range(mj)
    mid, half = 0.5 * (lo + hi), 0.5 * CTRL_SCALE * (hi - lo)
    ctrl = rng.uniform(mid - half, mid + half, (batch, mj.nu))
    return qpos, qvel, ctrl


def per_step_controls(mj: mujoco.MjModel, ctrl: np.ndarray, length: int, seed: int = 1) -> np.ndarray:
    """(length, B, nu) controls for `ours per-step`: every row's constant control moved by up to
    CTRL_JITTER of half its ctrlrange, anew at every step. The values change every step, as an RL
    policy's actions do, but by so little that the motion and the contacts stay those of the
    constant controls the other columns use for a whole episode (a 1 % jitter would not: the
    humanoid falls differently, with other contacts: its B = 1 row cost 15 % more in one run), so
    the column does the same physics as the others plus a control write and a call per step."""
    lo, hi = ctrl_range(mj)
    rng = np.random.default_rng(seed)
    jitter = rng.uniform(-1.0, 1.0, (length, *ctrl.shape)) * (CTRL_JITTER * 0.5 * (hi - lo))
    return np.ascontiguousarray(ctrl[None] + jitter)


# --- runners: factory(nstep) -> (nstep actually run, run) --------------------------------------
def episodes(n: int) -> tuple[int, int]:
    """(episode length, number of episodes): whole episodes, at least one, covering n steps.
    Every timed run is whole episodes, so every column times the same mix of a floor model's
    fall and its contact-rich rest, however many rows share a step."""
    return EPISODE, max(1, math.ceil(n / EPISODE))


def ours_reset(sim, state):
    """A function that puts every row of `sim` back at the benchmark's initial state."""
    qpos, qvel, ctrl = state
    d = sim.data

    def reset():
        d.qpos[:] = qpos
        d.qvel[:] = qvel
        d.ctrl[:] = ctrl
        d.time[:] = 0.0
        d.qfrc_applied[:] = 0.0
        d.xfrc_applied[:] = 0.0

    return reset


def ours_episodes(sim, state, episode):
    """factory(n) -> (steps, run): run() plays whole episodes, each a reset to the benchmark
    state and then `episode(length)()`, which must take `length` steps of every row."""
    reset = ours_reset(sim, state)

    def factory(n):
        length, count = episodes(n)
        body = episode(length)

        def run():
            for _ in range(count):
                reset()
                body()

        return length * count, run

    return factory


def ours_factory(sim, state):
    """`ours`: one sim.step(length) per episode."""
    step = sim.step
    return ours_episodes(sim, state, lambda length: lambda: step(length))


def ours_rollout_factory(sim, state):
    """`ours rollout`: one sim.rollout(ctrl) per episode; the (B, length, nu) controls are
    built outside the timed region, as for mujoco.rollout."""
    _, _, ctrl = state

    def episode(length):
        control = np.ascontiguousarray(np.repeat(ctrl[:, None, :], length, axis=1))
        return lambda: sim.rollout(control)

    return ours_episodes(sim, state, episode)


def ours_per_step_factory(sim, state, mj):
    """`ours per-step`: every step writes that step's controls (from a precomputed
    (length, B, nu) array) into sim.data.ctrl and calls sim.step(1)."""
    _, _, ctrl = state
    d = sim.data
    step = sim.step

    def episode(length):
        controls = per_step_controls(mj, ctrl, length)

        def run():
            for t in range(length):
                d.ctrl[:] = controls[t]
                step(1)

        return run

    return ours_episodes(sim, state, episode)


def ours_one_per_call_factory(sim, state):
    """sim.step(1) once per step and nothing else: with `ours`, gives the cost of a call."""
    step = sim.step

    def episode(length):
        def run():
            for _ in range(length):
                step(1)

        return run

    return ours_episodes(sim, state, episode)


def mj_loop_factory(mj, datas, state):
    qpos, qvel, ctrl = state

    def reset():
        for b, d in enumerate(datas):
            d.qpos[:] = qpos[b]
            d.qvel[:] = qvel[b]
            d.ctrl[:] = ctrl[b]
            d.time = 0.0
            d.qfrc_applied[:] = 0.0
            d.xfrc_applied[:] = 0.0

    def factory(n):
        length, count = episodes(n)
        step = mujoco.mj_step

        def run():
            for _ in range(count):
                reset()
                for _ in range(length):
                    for d in datas:
                        step(mj, d)

        return length * count, run

    return factory


def full_state(mj: mujoco.MjModel, state) -> np.ndarray:
    """(B, nstate) mjSTATE_FULLPHYSICS vectors of the benchmark's initial states."""
    qpos, qvel, _ = state
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    d = mujoco.MjData(mj)
    out = np.empty((len(qpos), mujoco.mj_stateSize(mj, spec)))
    for b in range(len(qpos)):
        mujoco.mj_resetData(mj, d)
        d.qpos[:] = qpos[b]
        d.qvel[:] = qvel[b]
        mujoco.mj_getState(mj, d, out[b], spec)
    return out


def rollout_factory(mj, roller, datas, state):
    """One rollout call per episode, each from the initial states; the (B, nstep, nstate)
    output buffers rollout fills are allocated outside the timed region."""
    _, _, ctrl = state
    B = len(ctrl)
    init = full_state(mj, state)
    models = [mj] * B

    def factory(n):
        length, count = episodes(n)
        control = np.ascontiguousarray(np.repeat(ctrl[:, None, :], length, axis=1))
        out = np.empty((B, length, init.shape[1]))
        sens = np.empty((B, length, mj.nsensordata))

        def run():
            for _ in range(count):
                roller.rollout(
                    models, datas, init, control, nstep=length, skip_checks=True, state=out, sensordata=sens
                )

        return length * count, run

    return factory


# --- timing ------------------------------------------------------------------------------------
def _timed(run) -> float:
    t0 = time.perf_counter()
    run()
    return time.perf_counter() - t0


def calibrate(factory, target: float):
    """(nstep, run, times): a run of whole episodes grown until it takes >= target s, with the
    time of that run when it was the one that reached the target (else no time yet)."""
    n, run = factory(EPISODE)
    while True:
        dt = _timed(run)
        if dt >= target:
            return n, run, [dt]
        if dt >= 0.2 * target:
            n, run = factory(math.ceil(n * 1.05 * target / dt))
            return n, run, []
        n, run = factory(int(n * min(100.0, max(2.0, 0.3 * target / max(dt, 1e-7)))))


def measure(factory, batch: int, target: float, repeats: int) -> dict:
    """Best-of-`repeats` env-steps/s over runs of whole episodes, as many as make one run take
    >= target s (a first run that does already counts as one of the repeats)."""
    n, run, times = calibrate(factory, target)
    while len(times) < repeats:
        times.append(_timed(run))
    best = min(times)
    return {"steps_per_s": batch * n / best, "nstep": n, "best_s": best, "times_s": times}


def interleaved(factories: dict, batch: int, target: float, rounds: int, errors=()) -> dict:
    """Every column of `factories` (name -> factory) calibrated as `measure` does, then timed in
    `rounds` rounds, each one run of every column in turn, so that a slow minute of a shared
    machine falls on all columns alike. Per column: the median env-steps/s of its rounds
    (steps_per_s), the best (best_steps_per_s), and each round's time; a column whose run
    raises one of `errors` gets {"error": message} instead. paired_ratio(result, a, b) takes
    the median of the rounds' ratios."""
    runs, out = {}, {}
    for key, factory in factories.items():
        try:
            n, run, _ = calibrate(factory, target)
            runs[key] = (n, run)
        except errors as exc:  # an engine bug: report it, keep benchmarking
            out[key] = {"error": str(exc)}
    times = {key: [] for key in runs}
    for _ in range(rounds):
        for key, (_, run) in list(runs.items()):
            try:
                times[key].append(_timed(run))
            except errors as exc:
                out[key] = {"error": str(exc)}
                del runs[key]
    for key, (n, _) in runs.items():
        t = times[key]
        out[key] = {
            "steps_per_s": batch * n / float(np.median(t)),
            "best_steps_per_s": batch * n / min(t),
            "nstep": n,
            "times_s": t,
        }
    return out


def paired_ratio(r: dict, a: str, b: str) -> float | None:
    """The median over interleaved rounds of rate(a) / rate(b) in the same round (None if
    either column failed)."""
    if not r.get(a) or not r.get(b) or "times_s" not in r[a] or "times_s" not in r[b]:
        return None
    ta, tb = np.asarray(r[a]["times_s"]), np.asarray(r[b]["times_s"])
    return float(np.median((r[a]["nstep"] / ta) / (r[b]["nstep"] / tb)))


def agreement(engine, src: str, mj, state, nstep: int = 20) -> float:
    """max |qpos_ours - qpos_mujoco| after nstep steps from the benchmark's initial state."""
    qpos, qvel, ctrl = state
    sim = engine.Simulator(engine.load_mjcf(src), batch=len(qpos), nthread=1)
    ours_reset(sim, state)()
    sim.step(nstep)
    d = mujoco.MjData(mj)
    worst = 0.0
    for b in range(len(qpos)):
        mujoco.mj_resetData(mj, d)
        d.qpos[:], d.qvel[:], d.ctrl[:] = qpos[b], qvel[b], ctrl[b]
        mujoco.mj_step(mj, d, nstep)
        worst = max(worst, float(np.max(np.abs(sim.data.qpos[b] - d.qpos))))
    return worst


def contact_stats(mj, state) -> dict:
    """MuJoCo's contact load over the benchmark's episodes (mj_step from each row's start,
    EPISODE steps): share of steps with a contact, mean ncon and nefc, and the 10/50/90th
    percentiles of ncon over each episode's second half."""
    qpos, qvel, ctrl = state
    d = mujoco.MjData(mj)
    ncon = np.empty((len(qpos), EPISODE))
    nefc = np.empty((len(qpos), EPISODE))
    for b in range(len(qpos)):
        mujoco.mj_resetData(mj, d)
        d.qpos[:], d.qvel[:], d.ctrl[:] = qpos[b], qvel[b], ctrl[b]
        for k in range(EPISODE):
            mujoco.mj_step(mj, d)
            ncon[b, k], nefc[b, k] = d.ncon, d.nefc
    return {
        "steps_in_contact": float(np.mean(ncon > 0)),
        "mean_ncon": float(ncon.mean()),
        "mean_nefc": float(nefc.mean()),
        "ncon_second_half_p10_p50_p90": np.percentile(ncon[:, EPISODE // 2 :], [10, 50, 90]).tolist(),
    }


# --- compile times (fresh subprocesses) ----------------------------------------------------------
# With detail (the cold run), each unit and driver entry is compiled on its own before the
# Simulator is made, so each gets its own time: unit.address(its signature) for every unit
# engine.binding.units_for(model) lists, dispatcher.compile(argtypes) for every entry
# engine.binding._driver_entries() lists. Each also counts the numba functions compiled
# while it ran (numba's "numba:compile" events): a kernel several units call is compiled
# with the first of them. Without detail (the cached runs), the Simulator loads them all.
_CHILD = r"""
import json, sys, time
w_start = float(sys.argv[1])
batch, nthread, detail = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
sources = json.loads(sys.stdin.read())
out = {"interpreter_start_s": time.time() - w_start}
t = time.perf_counter()
from robodyn import engine
out["import_engine_s"] = time.perf_counter() - t
import numpy as np
from numba.core import event
from robodyn.engine import binding


class Compiled(event.Listener):
    def __init__(self):
        self.names = []

    def on_start(self, ev):
        pass

    def on_end(self, ev):
        fn = getattr(ev.data.get("dispatcher"), "py_func", None)
        self.names.append(f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', '?')}")


def timed(compile_it, label, first, model_name):
    compiled = Compiled()
    with event.install_listener("numba:compile", compiled):
        t = time.perf_counter()
        compile_it()
        seconds = time.perf_counter() - t
    first.setdefault(label, model_name)
    return {"label": label, "s": seconds, "compiled": compiled.names, "first_model": first[label]}


out["models"] = {}
first = {}  # unit or entry label -> the model it was first compiled for
for name, src in sources.items():
    r = {}
    t = time.perf_counter(); model = engine.load_mjcf(src); r["load_mjcf_s"] = time.perf_counter() - t
    if detail:
        r["units"] = {}
        for slot, u in binding.units_for(model).items():
            r["units"][slot] = timed(lambda: u.address(binding.signature(u)), u.label, first, name)
        r["entries"] = []
        for e, argtypes in binding._driver_entries():
            label = e.__module__.removeprefix("engine.") + "." + e.__name__
            r["entries"].append(timed(lambda: e.compile(argtypes), label, first, name))
        timings = list(r["units"].values()) + r["entries"]
        r["units_and_entries_s"] = sum(it["s"] for it in timings)
    t = time.perf_counter(); sim = engine.Simulator(model, batch=batch, nthread=nthread)
    r["simulator_s"] = time.perf_counter() - t
    t = time.perf_counter(); sim.step(); r["first_step_s"] = time.perf_counter() - t
    t = time.perf_counter(); sim.rollout(np.zeros((1, model.nu)))
    r["first_rollout_s"] = time.perf_counter() - t
    r["since_process_start_s"] = time.time() - w_start
    out["models"][name] = r
out["total_s"] = time.time() - w_start
print("RESULT " + json.dumps(out))
"""


def compile_run(
    sources: dict, cache_dir: str | None, batch: int, nthread: int, timeout: float, detail: bool = False
) -> dict:
    """One fresh interpreter: import engine, then per model load_mjcf, (with `detail`) each unit
    and driver entry compiled on its own, Simulator, first step() and first rollout()."""
    env = dict(os.environ)
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = cache_dir
    w0 = time.time()
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, repr(w0), str(batch), str(nthread), "1" if detail else "0"],
        input=json.dumps(sources),
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=timeout,
    )
    wall = time.time() - w0
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"compile-time subprocess failed (rc {proc.returncode}):\n{proc.stderr[-3000:]}")
    res = json.loads(lines[-1][len("RESULT ") :])
    res["process_wall_s"] = wall
    res["cache_dir"] = cache_dir or os.environ.get("NUMBA_CACHE_DIR") or "(numba default: engine/__pycache__)"
    return res


def print_compile(label: str, res: dict) -> None:
    print(
        f"  {label}: process total {res['process_wall_s']:.2f} s "
        f"(interpreter start {res['interpreter_start_s']:.2f} s, "
        f"import engine {res['import_engine_s']:.2f} s)"
    )
    for name, r in res["models"].items():
        print(
            f"    {name:16s} load_mjcf {r['load_mjcf_s']:.3f} s  Simulator {r['simulator_s']:.3f} s  "
            f"first step() {r['first_step_s']:.3f} s  first rollout() {r['first_rollout_s']:.3f} s  "
            f"(process start -> end of rollout {r['since_process_start_s']:.2f} s)"
        )
        if "units" in r:
            print_compile_detail(name, r)
    if any("units" in r for r in res["models"].values()):
        total = sum(r["units_and_entries_s"] for r in res["models"].values())
        print(f"    all units and entries: {total:.1f} s")
        print(
            "    (each unit and entry compiled on its own, in this order; a kernel several of them\n"
            "    call is compiled, and timed, with the first that needs it, so a later one that shares\n"
            "    it shows less)"
        )


def print_compile_detail(name: str, r: dict) -> None:
    """The cold run's line for each unit and driver entry first compiled for this model, and
    one line naming those an earlier model compiled already."""
    items = [(f"unit {slot}", u) for slot, u in r["units"].items()] + [("entry", e) for e in r["entries"]]
    for kind, it in items:
        if it["first_model"] == name:
            n = len(it["compiled"])
            print(
                f"      {kind:26s} {it['label']:32s} {it['s']:7.2f} s  "
                f"({n} numba function{'s' if n != 1 else ''} compiled)"
            )
    reused = [it["label"] for _, it in items if it["first_model"] != name]
    if reused:
        text = f"already compiled above: {', '.join(reused)}"
        print(textwrap.fill(text, 100, initial_indent=" " * 6, subsequent_indent=" " * 8))
    print(f"      {'units + entries':26s} {'':32s} {r['units_and_entries_s']:7.2f} s")


# --- main -------------------------------------------------------------------------------------------
def fmt_rate(x: float | None) -> str:
    if x is None:
        return "-"
    if x >= 1e6:
        return f"{x / 1e6:.2f}M"
    if x >= 1e3:
        return f"{x / 1e3:.1f}k"
    return f"{x:.0f}"


def _rate(r: dict, key: str) -> float | None:
    return r[key].get("steps_per_s") if r.get(key) else None


def _div(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a / b


def _f(x: float | None, spec: str, width: int, unit: str = "") -> str:
    """x formatted by `spec` in `width` characters, then `unit`; "-" (same width) for None."""
    return f"{'-':>{width + len(unit)}s}" if x is None else f"{x:{width}{spec}}{unit}"


def target_checks(r: dict) -> list[dict]:
    """The targets that apply to row r, each {table, what, value, bound, text, ok} (table 1:
    the throughput table, 2: the per-step / overhead / threads table)."""
    name, B, T = r["model"], r["batch"], r["threads"]
    checks = []

    def add(table: int, what: str, value: float | None, op: str, bound: float, text: str) -> None:
        ok = value is not None and (value >= bound if op == ">=" else value <= bound)
        checks.append(
            {"table": table, "what": what, "value": value, "bound": f"{op} {bound:g}", "text": text, "ok": ok}
        )

    if B in (1, 64):
        need = TARGET_RATIO
        add(1, "ours/rollout", r["ratio_rollout"], ">=", need, f">= {need:.2f}x rollout")
    if B == 64:
        need = TARGET_PER_STEP_RATIO
        text = f"per-step >= {need:.2f}x rollout"
        add(2, "per-step/rollout", r["ratio_rollout_per_step"], ">=", need, text)
    if (B, T) in TARGET_CALL_OVERHEAD_US and name in CALL_OVERHEAD_MODELS:
        most = TARGET_CALL_OVERHEAD_US[(B, T)]
        add(2, "step(1) overhead us", r["call_overhead_us"], "<=", most, f"step(1) ovh <= {most:g} us")
    if B == 64 and T == 2 and name in TARGET_THREAD_GAIN:
        need = TARGET_THREAD_GAIN[name]
        add(2, "thread gain ours", r["thread_gain_ours"], ">=", need, f"gain >= {need:.1f}x")
    return checks


def _targets_text(r: dict, table: int) -> str:
    checks = [c for c in r["targets"] if c["table"] == table]
    return ", ".join(f"{c['text']}: {'PASS' if c['ok'] else 'FAIL'}" for c in checks)


def print_errors(r: dict) -> None:
    for key in ("ours", "ours_rollout", "ours_per_step", "ours_one_per_call"):
        if r[key].get("error"):
            print(f"    {key} FAILED: {r[key]['error'][:300]}")


def print_throughput(rows: list[dict]) -> None:
    hdr = (
        f"{'model':16s} {'B':>3s} {'T':>2s} {'ours':>8s} {'ours rollout':>12s} {'mj loop':>8s} "
        f"{'rollout':>8s} {'ours/rollout':>12s} {'ours rollout/rollout':>20s} {'ours/mj loop':>12s} "
        f"{'us/row-step':>12s}  target"
    )
    print("\nthroughput, env-steps per second (B * nstep / s); ratios > 1 mean ours is faster:")
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        us = f"{_f(r['us_per_row_step_ours'], '.1f', 0)}|{r['us_per_row_step_rollout']:.1f}"
        print(
            f"{r['model']:16s} {r['batch']:3d} {r['threads']:2d} {fmt_rate(_rate(r, 'ours')):>8s} "
            f"{fmt_rate(_rate(r, 'ours_rollout')):>12s} {fmt_rate(_rate(r, 'mj_loop')):>8s} "
            f"{fmt_rate(_rate(r, 'rollout')):>8s} {_f(r['ratio_rollout'], '.3f', 11, 'x')} "
            f"{_f(r['ratio_rollout_ours_rollout'], '.3f', 19, 'x')} {_f(r['ratio_mj_loop'], '.3f', 11, 'x')} "
            f"{us:>12s}  {_targets_text(r, 1)}"
        )
        print_errors(r)
    print(
        "ours = one sim.step(nstep) call per episode; ours rollout = one sim.rollout(ctrl) per episode; "
        "us/row-step = T / rate\n(time one thread spends on one row-step): ours|rollout"
    )


def print_per_step(rows: list[dict]) -> None:
    hdr = (
        f"{'model':16s} {'B':>3s} {'T':>2s} {'ours per-step':>13s} {'rollout':>8s} "
        f"{'per-step/rollout':>16s} {'step(1) ovh':>11s} {'per-step ovh':>12s} {'gain ours':>9s} "
        f"{'gain rollout':>12s}  targets"
    )
    print("\nper-step pattern, call overhead and threads (rates in env-steps per second):")
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        print(
            f"{r['model']:16s} {r['batch']:3d} {r['threads']:2d} {fmt_rate(_rate(r, 'ours_per_step')):>13s} "
            f"{fmt_rate(_rate(r, 'rollout')):>8s} {_f(r['ratio_rollout_per_step'], '.3f', 15, 'x')} "
            f"{_f(r['call_overhead_us'], '.1f', 8, ' us')} {_f(r['per_step_overhead_us'], '.1f', 9, ' us')} "
            f"{_f(r['thread_gain_ours'], '.2f', 8, 'x')} {_f(r['thread_gain_rollout'], '.2f', 11, 'x')}  "
            f"{_targets_text(r, 2)}"
        )
    print(
        "ours per-step = d.ctrl[:] = new controls, then sim.step(1), every step; step(1) ovh = B / rate of "
        "sim.step(1) alone\n- B / rate of ours: the extra time of one sim.step(1) call; per-step ovh = the "
        "same with the control write;\ngain = rate at T / rate at T = 1 (same B), for ours and for rollout"
    )


def print_targets(rows: list[dict]) -> None:
    checks = [(r, c) for r in rows for c in r["targets"]]
    failed = [(r, c) for r, c in checks if not c["ok"]]
    print(f"\ntargets: {len(checks) - len(failed)} PASS, {len(failed)} FAIL")
    if not any(r["threads"] == 2 for r in rows):
        print("  (no T = 2 rows in this run: the thread-gain and T = 2 overhead targets were not checked)")
    for r, c in failed:
        value = "-" if c["value"] is None else f"{c['value']:.2f}"
        where = f"{r['model']} B={r['batch']} T={r['threads']}"
        print(f"  FAIL {where}: {c['what']} = {value}, needs {c['bound']}")
    busy = [r for r in rows if r["threads"] > 1 and (r["thread_gain_rollout"] or 0.0) < BUSY_MACHINE_GAIN]
    if busy:
        worst = min(r["thread_gain_rollout"] or 0.0 for r in busy)
        print(
            f"  note: mujoco.rollout itself gains as little as {worst:.2f}x from its threads in this run: "
            "the cores were not free\n  (see the load average above), so the threaded rows (thread gain, "
            "step(1) overhead with T > 1)\n  measure the machine more than the engine"
        )


def run_compile(sources: dict, cache: str | None, label_cache: str, args, comp: dict) -> None:
    B, T = 64, max(1, args.threads)
    comp["cached"] = []
    for _ in range(1 if args.quick else 2):
        res = compile_run(sources, cache, B, T, timeout=1800)
        comp["cached"].append(res)
    comp["cached_label"] = label_cache


def print_compile_all(comp: dict, args) -> None:
    B, T = 64, max(1, args.threads)
    print(
        f"\ncompile / load times (fresh subprocesses: import engine, then per model load_mjcf, "
        f"Simulator(batch={B}, nthread={T}), first step(), first rollout()):"
    )
    if "cold" in comp:
        print_compile(f"cold, empty NUMBA_CACHE_DIR={comp['cold']['cache_dir']}", comp["cold"])
    for i, res in enumerate(comp.get("cached", [])):
        print_compile(f"cached run {i + 1} ({comp['cached_label']})", res)
    if comp.get("cached"):
        first_model = next(iter(comp["cached"][0]["models"]))
        first = min(res["models"][first_model]["first_step_s"] for res in comp["cached"])
        total = min(res["process_wall_s"] for res in comp["cached"])
        ok = "PASS" if first < TARGET_CACHED_FIRST_STEP_S else "FAIL"
        print(
            f"  cached first step() (best): {first:.3f} s   "
            f"target < {TARGET_CACHED_FIRST_STEP_S:.0f} s: {ok}   "
            f"(whole process incl. imports: {total:.2f} s)"
        )
        if first > 30:
            print(
                "  (a cached first step this slow means the cache was invalid: an engine source changed "
                "since the warm-up, so the subprocess recompiled)"
            )


def measure_row(engine, name: str, mj, model, B: int, T: int, target: float, rounds: int, mj_loop_cache):
    """Every column of one (model, B, T) row: ours, ours rollout, ours per-step, ours one
    sim.step(1) per step and mujoco.rollout interleaved over `rounds` rounds; the ratios are
    the medians of the rounds' ratios."""
    state = initial_states(mj, B)
    sim = engine.Simulator(model, batch=B, nthread=T)
    t = time.perf_counter()
    ours_reset(sim, state)()
    sim.step(1)  # warm-up: compiles or loads the cache
    sim.rollout(state[2][:, None, :])  # sim.rollout's entry is compiled on its first call
    warm_s = time.perf_counter() - t
    if warm_s > 1.0:
        print(f"  (warm-up for {name} took {warm_s:.1f} s: compile or cache load)", flush=True)
    r = {"model": name, "nv": mj.nv, "batch": B, "threads": T, "warmup_s": warm_s}
    factories = {
        "ours": ours_factory(sim, state),
        "ours_rollout": ours_rollout_factory(sim, state),
        "ours_per_step": ours_per_step_factory(sim, state, mj),
        "ours_one_per_call": ours_one_per_call_factory(sim, state),
    }
    with mujoco.rollout.Rollout(nthread=0 if T == 1 else T) as roller:
        factories["rollout"] = rollout_factory(mj, roller, [mujoco.MjData(mj) for _ in range(T)], state)
        r.update(interleaved(factories, B, target, rounds, (engine.NonFiniteError,)))
    if B not in mj_loop_cache:  # single-threaded by nature: shared by every T
        datas = [mujoco.MjData(mj) for _ in range(B)]
        mj_loop_cache[B] = interleaved({"mj_loop": mj_loop_factory(mj, datas, state)}, B, target, rounds)
    r["mj_loop"] = mj_loop_cache[B]["mj_loop"]
    ours, rollout = _rate(r, "ours"), _rate(r, "rollout")
    per_step, one_per_call = _rate(r, "ours_per_step"), _rate(r, "ours_one_per_call")
    r["ratio_rollout"] = paired_ratio(r, "ours", "rollout")
    r["ratio_rollout_ours_rollout"] = paired_ratio(r, "ours_rollout", "rollout")
    r["ratio_rollout_per_step"] = paired_ratio(r, "ours_per_step", "rollout")
    r["ratio_mj_loop"] = _div(ours, _rate(r, "mj_loop"))
    r["call_overhead_us"] = None if None in (ours, one_per_call) else 1e6 * B * (1 / one_per_call - 1 / ours)
    r["per_step_overhead_us"] = None if None in (ours, per_step) else 1e6 * B * (1 / per_step - 1 / ours)
    r["us_per_row_step_ours"] = _div(1e6 * T, ours)
    r["us_per_row_step_rollout"] = 1e6 * T / rollout
    print(
        f"  {name} B={B} T={T}: ours {fmt_rate(ours)}/s, "
        f"ours rollout {fmt_rate(_rate(r, 'ours_rollout'))}/s, ours per-step {fmt_rate(per_step)}/s, "
        f"rollout {fmt_rate(rollout)}/s",
        flush=True,
    )
    return r


def add_thread_gains(rows: list[dict]) -> None:
    """thread_gain_{ours,rollout}: rate at T over rate at T = 1 with the same model and B
    (None for T = 1 rows and where either rate is missing)."""
    serial = {(r["model"], r["batch"]): r for r in rows if r["threads"] == 1}
    for r in rows:
        base = serial.get((r["model"], r["batch"])) if r["threads"] > 1 else None
        for key in ("ours", "rollout"):
            r[f"thread_gain_{key}"] = None if base is None else _div(_rate(r, key), _rate(base, key))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="one run of >= 0.1 s per number; noisier")
    ap.add_argument(
        "--cold",
        action="store_true",
        help="also time a compile from an empty numba cache, unit by unit (minutes); the run then uses it",
    )
    ap.add_argument("--json", metavar="PATH", help="write all results as JSON to PATH")
    ap.add_argument("--no-compile", action="store_true", help="skip the compile-time subprocesses")
    ap.add_argument(
        "--models",
        default="all",
        help="comma-separated subset of double_pendulum,humanoid,humanoid_floor,ant_floor,dmc_humanoid,"
        "dmc_quadruped (default all)",
    )
    ap.add_argument(
        "--batches",
        type=counts,
        default=[],
        help="more batch sizes, each a row at T = 1, e.g. 4,16: how a row-step's cost, and a "
        "sim.step(1) call's, grow with B",
    )
    ap.add_argument(
        "--threads",
        type=int,
        default=os.cpu_count() or 1,
        help="T of the widest threaded row; rows run at T = 2 and at this T (1: no threaded rows)",
    )
    ap.add_argument(
        "--rounds",
        type=count,
        default=None,
        help="interleaved rounds per row (each times every column once, in turn); every rate is "
        "the median of its rounds, every ratio the median of the rounds' ratios (default 5, "
        "--quick 1)",
    )
    args = ap.parse_args(argv)

    target = 0.1 if args.quick else 0.5
    if args.rounds is None:
        args.rounds = 1 if args.quick else 5
    tmax = max(1, args.threads)
    extra = [(b, 1) for b in sorted(set(args.batches) - {1, 64})]
    configs = [(1, 1), *extra, (64, 1)] + [(64, t) for t in sorted({2, tmax}) if tmax > 1]
    sources = model_sources()
    if args.models != "all":
        wanted = args.models.split(",")
        unknown = sorted(set(wanted) - set(sources))
        if unknown:
            ap.error(f"unknown model(s) {unknown}; choose from {sorted(sources)}")
        sources = {name: sources[name] for name in wanted}
    comp: dict = {}

    if args.cold and not args.no_compile:
        # before numba is imported here: this process then reads the cache the cold run wrote
        cold_dir = tempfile.mkdtemp(prefix="robodyn_numba_cold_")
        print(f"cold compile: fresh interpreter, empty NUMBA_CACHE_DIR={cold_dir} (minutes) ...", flush=True)
        comp["cold"] = compile_run(sources, cold_dir, 64, tmax, timeout=3600, detail=True)
        total = sum(r["units_and_entries_s"] for r in comp["cold"]["models"].values())
        print(
            f"cold compile: process total {comp['cold']['process_wall_s']:.1f} s, units and entries "
            f"{total:.1f} s (each unit and entry at the end)",
            flush=True,
        )
        os.environ["NUMBA_CACHE_DIR"] = cold_dir

    print(
        f"RoboDyn step benchmark: python {platform.python_version()}, mujoco {mujoco.__version__}, "
        f"cpu_count {os.cpu_count()}, load average {os.getloadavg()[0]:.1f}, "
        f"NUMBA_CACHE_DIR={os.environ.get('NUMBA_CACHE_DIR', '(default)')}"
    )
    print(
        f"timing: {args.rounds} interleaved round(s) per row, each one run of every column of >= {target} s, "
        f"whole episodes of {EPISODE} steps from the same state; rates are medians of the rounds, ratios "
        "medians of the rounds' ratios; compile excluded",
        flush=True,
    )

    t = time.perf_counter()
    from robodyn import engine

    import_s = time.perf_counter() - t
    results = {
        "meta": {
            "python": platform.python_version(),
            "mujoco": mujoco.__version__,
            "numpy": np.__version__,
            "cpu_count": os.cpu_count(),
            "load_average_1min_at_start": os.getloadavg()[0],
            "target_s": target,
            "rounds": args.rounds,
            "episode": EPISODE,
            "ctrl_scale": CTRL_SCALE,
            "ctrl_jitter": CTRL_JITTER,
            "import_engine_s": import_s,
            "numba_cache_dir": os.environ.get("NUMBA_CACHE_DIR"),
            "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        },
        "rows": [],
        "compile": comp,
    }

    rows = []
    for name, src in sources.items():
        mj = mujoco.MjModel.from_xml_string(src)
        model = engine.load_mjcf(src)
        mj_loop_cache: dict[int, dict] = {}
        for B, T in configs:
            rows.append(measure_row(engine, name, mj, model, B, T, target, args.rounds, mj_loop_cache))
        try:
            err = agreement(engine, src, mj, initial_states(mj, 8))
        except engine.NonFiniteError:
            err = float("nan")
        contacts_on = not mj.opt.disableflags & (
            mujoco.mjtDisableBit.mjDSBL_CONTACT | mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
        )
        stats = contact_stats(mj, initial_states(mj, 64)) if contacts_on else None
        for r in rows:
            if r["model"] == name:
                r["max_abs_qpos_diff_20_steps"] = err
                r["mujoco_contacts"] = stats
    add_thread_gains(rows)
    for r in rows:
        r["targets"] = target_checks(r)
    results["rows"] = rows

    print_throughput(rows)
    print_per_step(rows)
    print_targets(rows)
    for name in sources:
        r = next(r for r in rows if r["model"] == name)
        print(
            f"agreement {name}: max |qpos ours - mj_step| after 20 steps (8 rows) = "
            f"{r['max_abs_qpos_diff_20_steps']:.1e}"
        )
        c = r["mujoco_contacts"]
        if c:
            p10, p50, p90 = c["ncon_second_half_p10_p50_p90"]
            print(
                f"contacts {name} (MuJoCo, 64 rows x {EPISODE} steps): "
                f"in contact {100 * c['steps_in_contact']:.0f}% of steps, "
                f"mean ncon {c['mean_ncon']:.1f}, mean nefc {c['mean_nefc']:.1f}, "
                f"ncon in each episode's second half p10/p50/p90 {p10:.0f}/{p50:.0f}/{p90:.0f}"
            )

    if not args.no_compile:
        if args.cold:
            run_compile(sources, os.environ["NUMBA_CACHE_DIR"], "the cold run's cache", args, comp)
        else:
            run_compile(sources, None, "this process's cache, warmed above", args, comp)
        print_compile_all(comp, args)

    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
