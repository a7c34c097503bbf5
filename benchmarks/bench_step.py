"""Throughput of RoboDyn's batched step against MuJoCo, and the engine's compile times.

    python -m benchmarks.bench_step                 # full run (~2 min with a warm cache)
    python -m benchmarks.bench_step --quick         # short run, noisier numbers
    python -m benchmarks.bench_step --cold          # also time a compile from an empty cache (minutes)
    python -m benchmarks.bench_step --json out.json # also write every number as JSON

For each model (assets/double_pendulum.xml; gymnasium's humanoid.xml with contacts and
constraints disabled; gymnasium's humanoid.xml and ant.xml as they ship, so on the floor with
contacts, joint limits and MuJoCo's Newton solver) and each (batch B, threads T) it reports
env-steps per second (B * nstep / seconds) for:

  ours       engine.Simulator(model, batch=B, nthread=T).step(nstep), one call
  ours 1/call  the same, but sim.step(1) called nstep times (the per-env-step RL pattern)
  mj loop    Python loop: for each step, mujoco.mj_step(m, d) on each of the B MjData
  rollout    mujoco.rollout.Rollout(nthread=T).rollout(...) over B rows (T=1: calling thread)

All engines run episodes of EPISODE steps, each restarting from the same random state
(qpos, qvel) with the same random constant controls. Each number is the best of `repeats`
runs of at least `target` seconds, with compilation excluded (a warm-up call runs first).
See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import mujoco
import mujoco.rollout
import numpy as np

REPO = Path(__file__).resolve().parents[1]

# targets the lead set: ours / rollout at batch 64, and the first step() from a warm cache
TARGET_RATIO = {"double_pendulum": 1.0, "humanoid": 0.5, "humanoid_floor": 0.5, "ant_floor": 0.5}
TARGET_CACHED_FIRST_STEP_S = 3.0

EPISODE = 1000  # steps between resets to the initial state (a gym episode); keeps every row finite
CTRL_SCALE = 0.3  # controls are uniform in CTRL_SCALE x ctrlrange (full range spins the pendulum up)


# --- models -----------------------------------------------------------------------------------
def gym_assets() -> Path:
    """gymnasium's MuJoCo asset folder, found without importing gymnasium."""
    spec = importlib.util.find_spec("gymnasium")
    if spec is None or spec.origin is None:
        raise SystemExit("gymnasium is not installed: cannot find humanoid.xml")
    return Path(spec.origin).parent / "envs" / "mujoco" / "assets"


def model_sources() -> dict[str, str]:
    """name -> MJCF text of every benchmarked model."""
    from engine.model import without_contacts  # the engine's own edit; imports numba lazily

    return {
        "double_pendulum": (REPO / "assets" / "double_pendulum.xml").read_text(),
        "humanoid": without_contacts(gym_assets() / "humanoid.xml"),
        "humanoid_floor": (gym_assets() / "humanoid.xml").read_text(),
        "ant_floor": (gym_assets() / "ant.xml").read_text(),
    }


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
    lo = np.where(mj.actuator_ctrllimited, mj.actuator_ctrlrange[:, 0], -1.0)
    hi = np.where(mj.actuator_ctrllimited, mj.actuator_ctrlrange[:, 1], 1.0)
    mid, half = 0.5 * (lo + hi), 0.5 * CTRL_SCALE * (hi - lo)
    ctrl = rng.uniform(mid - half, mid + half, (batch, mj.nu))
    return qpos, qvel, ctrl


# --- runners: factory(nstep) -> (nstep actually run, run) --------------------------------------
def episodes(n: int) -> tuple[int, int]:
    """(episode length, number of episodes) covering at least n steps."""
    if n <= EPISODE:
        return n, 1
    return EPISODE, math.ceil(n / EPISODE)


def ours_factory(sim, state, per_call: bool):
    qpos, qvel, ctrl = state
    d = sim.data

    def reset():
        d.qpos[:] = qpos
        d.qvel[:] = qvel
        d.ctrl[:] = ctrl
        d.time[:] = 0.0
        d.qfrc_applied[:] = 0.0
        d.xfrc_applied[:] = 0.0

    def factory(n):
        length, count = episodes(n)
        step = sim.step
        if per_call:

            def run():
                for _ in range(count):
                    reset()
                    for _ in range(length):
                        step(1)
        else:

            def run():
                for _ in range(count):
                    reset()
                    step(length)

        return length * count, run

    return factory


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
def measure(factory, batch: int, target: float, repeats: int, n0: int = 4) -> dict:
    """Best-of-`repeats` env-steps/s, with nstep grown until one run takes >= target s."""
    n = n0
    while True:
        n, run = factory(n)
        t0 = time.perf_counter()
        run()
        dt = time.perf_counter() - t0
        if dt >= 0.2 * target:
            break
        n = int(n * min(100.0, max(2.0, 0.3 * target / max(dt, 1e-7))))
    n = max(n, math.ceil(n * 1.05 * target / dt))
    n, run = factory(n)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    best = min(times)
    return {"steps_per_s": batch * n / best, "nstep": n, "best_s": best, "times_s": times}


def agreement(engine, src: str, mj, state, nstep: int = 20) -> float:
    """max |qpos_ours - qpos_mujoco| after nstep steps from the benchmark's initial state."""
    qpos, qvel, ctrl = state
    sim = engine.Simulator(engine.load_mjcf(src), batch=len(qpos), nthread=1)
    ours_factory(sim, state, per_call=False)(nstep)[1]()
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
_CHILD = r"""
import json, sys, time
w_start = float(sys.argv[1])
batch, nthread = int(sys.argv[2]), int(sys.argv[3])
sources = json.loads(sys.stdin.read())
out = {"interpreter_start_s": time.time() - w_start}
t = time.perf_counter()
import engine
out["import_engine_s"] = time.perf_counter() - t
out["models"] = {}
for name, src in sources.items():
    r = {}
    t = time.perf_counter(); model = engine.load_mjcf(src); r["load_mjcf_s"] = time.perf_counter() - t
    t = time.perf_counter(); sim = engine.Simulator(model, batch=batch, nthread=nthread)
    r["simulator_s"] = time.perf_counter() - t
    t = time.perf_counter(); sim.step(); r["first_step_s"] = time.perf_counter() - t
    r["since_process_start_s"] = time.time() - w_start
    out["models"][name] = r
out["total_s"] = time.time() - w_start
print("RESULT " + json.dumps(out))
"""


def compile_run(sources: dict, cache_dir: str | None, batch: int, nthread: int, timeout: float) -> dict:
    """One fresh interpreter: import engine, then per model load_mjcf + Simulator + first step()."""
    env = dict(os.environ)
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = cache_dir
    w0 = time.time()
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, repr(w0), str(batch), str(nthread)],
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
            f"first step() {r['first_step_s']:.3f} s  "
            f"(process start -> end of step {r['since_process_start_s']:.2f} s)"
        )


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


def _f(x: float | None, spec: str, width: int) -> str:
    return f"{'-':>{width}s}" if x is None else f"{x:{width}{spec}}"


def print_table(rows: list[dict]) -> None:
    hdr = (
        f"{'model':16s} {'B':>3s} {'T':>2s} {'ours':>8s} {'mj loop':>8s} {'rollout':>8s} "
        f"{'ours/rollout':>12s} {'ours/mj loop':>12s} {'ours 1/call':>11s} {'call ovh':>9s} "
        f"{'us/row-step':>14s}  target"
    )
    print("\nenv-steps per second (B * nstep / s); ratios > 1 mean ours is faster:")
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        tgt = ""
        if r["batch"] == 64 and r["model"] in TARGET_RATIO:
            need = TARGET_RATIO[r["model"]]
            ok = r["ratio_rollout"] is not None and r["ratio_rollout"] >= need
            tgt = f">= {need:.1f}x rollout: {'PASS' if ok else 'FAIL'}"
        us = f"{_f(r['us_per_row_step_ours'], '.1f', 0)}|{r['us_per_row_step_rollout']:.1f}"
        ovh = _f(r["call_overhead_us"], ".1f", 7)
        print(
            f"{r['model']:16s} {r['batch']:3d} {r['threads']:2d} {fmt_rate(_rate(r, 'ours')):>8s} "
            f"{fmt_rate(_rate(r, 'mj_loop')):>8s} {fmt_rate(_rate(r, 'rollout')):>8s} "
            f"{_f(r['ratio_rollout'], '.3f', 11)}x {_f(r['ratio_mj_loop'], '.3f', 11)}x "
            f"{fmt_rate(_rate(r, 'ours_per_call')):>11s} {ovh}us {us:>14s}  {tgt}"
        )
        for key in ("ours", "ours_per_call"):
            if r[key].get("error"):
                print(f"    {key} FAILED: {r[key]['error'][:300]}")
    print(
        "ours = one sim.step(nstep) call; ours 1/call = sim.step(1) per env step; call ovh = extra time "
        "per sim.step(1) call\nover the in-kernel cost; us/row-step = T / rate (time one thread spends "
        "on one row-step): ours|rollout"
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
        f"Simulator(batch={B}, nthread={T}), first step()):"
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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="short runs (0.1 s x 2); noisier")
    ap.add_argument(
        "--cold",
        action="store_true",
        help="also time a compile from an empty numba cache (minutes); the run then uses it",
    )
    ap.add_argument("--json", metavar="PATH", help="write all results as JSON to PATH")
    ap.add_argument("--no-compile", action="store_true", help="skip the compile-time subprocesses")
    ap.add_argument(
        "--models",
        default="all",
        help="comma-separated subset of double_pendulum,humanoid,humanoid_floor,ant_floor (default all)",
    )
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="T for the threaded rows")
    args = ap.parse_args(argv)

    target, repeats = (0.1, 2) if args.quick else (0.5, 3)
    tmax = max(1, args.threads)
    configs = [(1, 1), (64, 1)] + ([(64, tmax)] if tmax > 1 else [])
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
        comp["cold"] = compile_run(sources, cold_dir, 64, tmax, timeout=3600)
        print_compile("cold", comp["cold"])
        os.environ["NUMBA_CACHE_DIR"] = cold_dir

    print(
        f"RoboDyn step benchmark: python {platform.python_version()}, mujoco {mujoco.__version__}, "
        f"cpu_count {os.cpu_count()}, NUMBA_CACHE_DIR={os.environ.get('NUMBA_CACHE_DIR', '(default)')}"
    )
    print(
        f"timing: best of {repeats} runs of >= {target} s each (episodes of {EPISODE} steps from the "
        f"same state); compile excluded",
        flush=True,
    )

    t = time.perf_counter()
    import engine

    import_s = time.perf_counter() - t
    results = {
        "meta": {
            "python": platform.python_version(),
            "mujoco": mujoco.__version__,
            "numpy": np.__version__,
            "cpu_count": os.cpu_count(),
            "target_s": target,
            "repeats": repeats,
            "episode": EPISODE,
            "ctrl_scale": CTRL_SCALE,
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
            state = initial_states(mj, B)
            sim = engine.Simulator(model, batch=B, nthread=T)
            t = time.perf_counter()
            ours_factory(sim, state, False)(1)[1]()  # warm-up: compiles or loads the cache
            warm_s = time.perf_counter() - t
            if warm_s > 1.0:
                print(f"  (warm-up step for {name} took {warm_s:.1f} s: compile or cache load)", flush=True)
            r = {"model": name, "nv": mj.nv, "batch": B, "threads": T, "warmup_s": warm_s}
            for key, per_call in (("ours", False), ("ours_per_call", True)):
                try:
                    r[key] = measure(ours_factory(sim, state, per_call), B, target, repeats)
                except engine.NonFiniteError as exc:  # an engine bug: report it, keep benchmarking
                    r[key] = {"error": str(exc)}
            if B not in mj_loop_cache:  # single-threaded by nature: shared by every T
                datas = [mujoco.MjData(mj) for _ in range(B)]
                mj_loop_cache[B] = measure(mj_loop_factory(mj, datas, state), B, target, repeats)
            r["mj_loop"] = mj_loop_cache[B]
            with mujoco.rollout.Rollout(nthread=0 if T == 1 else T) as roller:
                datas = [mujoco.MjData(mj) for _ in range(T)]
                r["rollout"] = measure(rollout_factory(mj, roller, datas, state), B, target, repeats)
            ours, per_call = _rate(r, "ours"), _rate(r, "ours_per_call")
            r["ratio_rollout"] = _div(ours, _rate(r, "rollout"))
            r["ratio_mj_loop"] = _div(ours, _rate(r, "mj_loop"))
            r["call_overhead_us"] = None if None in (ours, per_call) else 1e6 * B * (1 / per_call - 1 / ours)
            r["us_per_row_step_ours"] = _div(1e6 * T, ours)
            r["us_per_row_step_rollout"] = 1e6 * T / _rate(r, "rollout")
            rows.append(r)
            print(
                f"  {name} B={B} T={T}: ours {fmt_rate(ours)}/s, "
                f"rollout {fmt_rate(r['rollout']['steps_per_s'])}/s",
                flush=True,
            )
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
    results["rows"] = rows

    print_table(rows)
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
