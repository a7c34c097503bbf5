"""Long runs that must end clean: no error, no warning, memory flat after warm-up.

    python -m benchmarks.soak            # 10^6 humanoid row-steps, crane and HumanoidPush-v0 env-steps
    python -m benchmarks.soak --row-steps 64000 --env-steps 64000 --task-steps 64000   # a quick check
    python -m benchmarks.soak --json soak.json

Three loads, each in the way RL drives the engine:

  humanoid  gymnasium's humanoid.xml as it ships (floor, contacts, joint limits, PGS, RK4),
            engine.Simulator at batch 64: every step writes new random controls and calls
            sim.step(1); every 1,000 steps (an episode) each row is restored to its own
            start state from a snapshot taken at the beginning.
  vector    gym.make_vec("RoboDyn/Crane-v0", num_envs=64) with random actions and
            Gymnasium's autoreset; every 1,000 vector steps a snapshot of all envs is
            taken and restored, as a search or a rollout would.
  HumanoidPush-v0  gym.make_vec("RoboDyn/HumanoidPush-v0", num_envs=64) with random actions (it
            falls within about a second and resets) under its pushes; every observation
            must be finite. A contact-buffer overflow or a non-finite state would raise.

Memory is the process's resident set size (VmRSS), read after the first 10 % of the run
(warm-up: compilation, caches, first allocations) and then at each further 10 %. The run
fails (exit status 1) on any exception, on any warning, or if the resident set grows by more
than GROWTH_LIMIT_MIB after warm-up.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

GROWTH_LIMIT_MIB = 16.0  # RSS growth after warm-up that counts as a leak
EPISODE = 1000  # steps between restores to the start state
BATCH = 64
CTRL_SCALE = 0.3  # random controls in the middle 30 % of ctrlrange (as benchmarks/bench_step.py)


def rss_mib() -> float:
    """The resident set size of this process in MiB (Linux /proc; ru_maxrss elsewhere)."""
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def soak(name: str, total: int, per_call: int, make: Callable[[], Callable[[int], None]]) -> dict:
    """Run `make()`'s step function `total // per_call` times (argument: the call's index),
    recording RSS at each tenth; warnings are errors. The result: counts, wall time, memory."""
    calls = max(10, total // per_call)
    marks = {calls * k // 10 for k in range(1, 11)}
    step = make()
    samples = []
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for i in range(calls):
            step(i)
            if i + 1 in marks:
                samples.append(rss_mib())
    wall = time.perf_counter() - t0
    growth = max(samples[1:]) - samples[0]
    result = {
        "load": name,
        "steps": calls * per_call,
        "wall_s": wall,
        "steps_per_s": calls * per_call / wall,
        "rss_warm_mib": samples[0],
        "rss_end_mib": samples[-1],
        "rss_growth_mib": growth,
        "flat": growth <= GROWTH_LIMIT_MIB,
    }
    print(
        f"{name:<9} {result['steps']:>10,} steps in {wall:7.1f} s ({result['steps_per_s']:>9,.0f}/s); "
        f"RSS {samples[0]:.0f} MiB after warm-up, {samples[-1]:.0f} MiB at the end, "
        f"growth {growth:+.1f} MiB ({'flat' if result['flat'] else 'GROWS'})"
    )
    return result


def humanoid_load() -> Callable[[int], None]:
    """sim.step(1) with new random controls on gymnasium's humanoid at batch 64; a restore
    of each row's start state every EPISODE steps."""
    import mujoco

    from benchmarks.bench_step import ctrl_range, gym_assets, initial_states
    from robodyn import engine

    path = gym_assets() / "humanoid.xml"
    sim = engine.Simulator(engine.load_mjcf(path), batch=BATCH)
    mj = mujoco.MjModel.from_xml_path(str(path))
    sim.data.qpos[:], sim.data.qvel[:], _ = initial_states(mj, BATCH)
    sim.forward()
    start = sim.snapshot()
    lo, hi = ctrl_range(mj)
    mid, half = 0.5 * (lo + hi), 0.5 * CTRL_SCALE * (hi - lo)
    rng = np.random.default_rng(0)
    ctrl = np.empty((BATCH, mj.nu))

    def step(i: int) -> None:
        if i % EPISODE == 0:
            sim.restore(start)
        ctrl[:] = rng.uniform(-1.0, 1.0, ctrl.shape)
        sim.data.ctrl[:] = mid + half * ctrl
        sim.step(1)

    return step


def vector_load() -> Callable[[int], None]:
    """Random actions on 64 crane envs with autoreset; snapshot and restore every EPISODE steps."""
    import gymnasium as gym

    import robogym  # noqa: F401  (registers RoboDyn/*)

    env = gym.make_vec("RoboDyn/Crane-v0", num_envs=BATCH)
    env.reset(seed=0)
    env.action_space.seed(0)

    def step(i: int) -> None:
        if i % EPISODE == EPISODE - 1:
            env.restore(env.snapshot())
        env.step(env.action_space.sample())

    return step


def humanoid_task_load() -> Callable[[int], None]:
    """Random actions on 64 RoboDyn/HumanoidPush-v0 envs (floor contacts, pushes, falls) with
    autoreset; every observation must be finite."""
    import gymnasium as gym

    import robogym  # noqa: F401  (registers RoboDyn/*)

    env = gym.make_vec("RoboDyn/HumanoidPush-v0", num_envs=BATCH)
    env.reset(seed=0)
    env.action_space.seed(0)

    def step(i: int) -> None:
        obs, *_ = env.step(env.action_space.sample())
        if not np.all(np.isfinite(obs)):
            raise FloatingPointError(f"HumanoidPush-v0: a non-finite observation at vector step {i}")

    return step


def main(argv=None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--row-steps", type=int, default=1_000_000, help="humanoid row-steps (batch x steps)")
    p.add_argument("--env-steps", type=int, default=1_000_000, help="vector env-steps (num_envs x steps)")
    p.add_argument("--task-steps", type=int, default=1_000_000, help="HumanoidPush-v0 env-steps")
    p.add_argument("--json", help="also write the results to this file")
    args = p.parse_args(argv)
    results = [
        soak("humanoid", args.row_steps, BATCH, humanoid_load),
        soak("vector", args.env_steps, BATCH, vector_load),
        soak("HumanoidPush-v0", args.task_steps, BATCH, humanoid_task_load),
    ]
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    if not all(r["flat"] for r in results):
        raise SystemExit(f"memory grew by more than {GROWTH_LIMIT_MIB:g} MiB after warm-up")
    return results


if __name__ == "__main__":
    main()
