"""What sampling MPC costs per control step, against the number of candidate plans.

    python -m benchmarks.bench_planner                     # HumanoidPush-v0 and Quadruped-v0, 4-32 samples
    python -m benchmarks.bench_planner --env RoboDyn/HumanoidPush-v0 --samples 8,16 --json out.json

Each row builds the task's `mpc` baseline where it takes `samples` (a SamplingPlanner), else
the generic `sampling` one (envs/baselines), on a vector env of --num-envs rows (default 1:
one robot, planned alone) with `samples` candidates, steps the env with the planner for
--warmup control steps (untimed: the kernels load, the plans settle), then times --ticks
control steps with time.perf_counter: the planner's act() (snapshot, candidates, the batched
rollouts, the update) and the env's step. Reported per control step: the median wall time of
act(), the env steps it rolled out, and the real-time factor, the control step's simulated
time (env.dt) over that wall time (1: planning keeps up with the robot; below 1: slower than
real time, by that factor).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode

import robogym  # noqa: F401  (registers RoboDyn/*)
from robodyn.envs.baselines import make_baseline, takes_samples
from robodyn.envs.baselines.sampling import SamplingPlanner
from robodyn.training.cli import _count
from robogym import registration

TASKS = ("RoboDyn/HumanoidPush-v0", "RoboDyn/Quadruped-v0")


def _counts(text: str) -> list[int]:
    return [_count(2)(t) for t in text.split(",")]


def measure(env_id: str, samples: int, num_envs: int, warmup: int, ticks: int) -> dict:
    """One row: the mpc baseline of env_id with `samples` candidates (see the module docstring)."""
    env = gym.make_vec(env_id, num_envs=num_envs, autoreset_mode=AutoresetMode.NEXT_STEP)
    obs, _ = env.reset(seed=list(range(num_envs)))
    entry = registration.entry(env_id)
    name = "mpc" if "mpc" in entry.baselines and takes_samples(entry, "mpc") else "sampling"
    planner = make_baseline(name, env.unwrapped, samples=samples)
    if not isinstance(planner, SamplingPlanner):
        raise TypeError(f"{env_id}'s {name!r} is no SamplingPlanner")
    planner.reset(env.unwrapped, np.arange(num_envs))
    times = []
    for i in range(warmup + ticks):
        t0 = time.perf_counter()
        action = planner.act(env.unwrapped, obs)
        if i >= warmup:
            times.append(time.perf_counter() - t0)
        obs, *_ = env.step(action)
    env.close()
    per_step = float(np.median(times))
    dt = float(env.unwrapped.dt)
    return {
        "env": env_id,
        "baseline": name,
        "samples": samples,
        "num_envs": num_envs,
        "horizon": planner.horizon,
        "iterations": planner.iterations,
        "env_steps_per_control_step": num_envs * samples * planner.horizon * planner.iterations,
        "seconds_per_control_step": per_step,
        "real_time_factor": dt / per_step,
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.bench_planner", description=__doc__.split("\n")[0])
    p.add_argument("--env", action="append", help="task id (repeat; default: the two legged tasks)")
    p.add_argument("--samples", type=_counts, default=[4, 8, 16, 32], help="comma-separated candidate counts")
    p.add_argument("--num-envs", type=_count(1), default=1)
    p.add_argument("--warmup", type=_count(1), default=5)
    p.add_argument("--ticks", type=_count(1), default=20)
    p.add_argument("--json", type=Path, default=None, help="also write the rows here")
    args = p.parse_args(argv)
    rows = []
    header = f"{'env':<26} {'baseline':<9} {'samples':>7} {'env steps/step':>14} "
    header += f"{'s/control step':>14} {'real time':>9}"
    print(header)
    print("-" * len(header))
    for env_id in args.env or TASKS:
        for samples in args.samples:
            r = measure(env_id, samples, args.num_envs, args.warmup, args.ticks)
            rows.append(r)
            print(
                f"{env_id:<26} {r['baseline']:<9} {samples:>7} {r['env_steps_per_control_step']:>14} "
                f"{r['seconds_per_control_step']:>14.4f} {r['real_time_factor']:>8.3f}x",
                flush=True,
            )
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
