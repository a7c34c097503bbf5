"""Wall time of an evaluation in one process against the same evaluation on Ray workers.

    python -m benchmarks.bench_ray                      # Crane-v0, 64 episodes of 16 envs, 2 workers
    python -m benchmarks.bench_ray --env RoboDyn/Rocket-v0 --episodes 32 --num-envs 8 --policy pd

For each policy: training.evaluate.evaluate (one vector env, the engine on its default
threads: one per core from 8 rows) against training.distributed.RayEvaluator (its blocks of
--num-envs episodes on --workers actors, each one vector env on one thread) on a new local
Ray instance of --workers CPUs, started once and warm before the clock starts (its start and
warm-up are printed apart). Each evaluation is timed --repeat times, the best kept; both run
the same episodes, and the script checks that their results are identical, episode by episode.
"""

from __future__ import annotations

import argparse
import time

from robodyn.training.cli import SAVED_POLICIES, format_table
from robodyn.training.distributed import RayEvaluator
from robodyn.training.evaluate import episode_blocks, evaluate


def best_of(repeat: int, run) -> tuple[float, object]:
    """(the shortest wall time of `repeat` calls of run(), the last call's result)."""
    best, result = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = run()
        best = min(best, time.perf_counter() - t0)
    return best, result


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--env", default="RoboDyn/Crane-v0")
    p.add_argument("--policy", action="append", help="default: pd, mpc and the shipped crane PPO")
    p.add_argument("--episodes", type=int, default=64)
    p.add_argument("--num-envs", type=int, default=16)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--repeat", type=int, default=2)
    args = p.parse_args(argv)
    policies = args.policy or ["pd", "mpc", str(SAVED_POLICIES / "crane_ppo.zip")]
    blocks = len(episode_blocks(args.episodes, args.num_envs))

    import ray

    t0 = time.perf_counter()
    ray.init(address="local", num_cpus=args.workers, include_dashboard=False, logging_level="WARNING")
    started = time.perf_counter() - t0
    rows = []
    try:
        with RayEvaluator(args.env, args.num_envs, workers=args.workers) as pool:
            t0 = time.perf_counter()
            each = ", ".join(f"{w['warm_seconds']:.1f} s" for w in pool.describe())
            print(
                f"Ray started in {started:.1f} s; {args.workers} workers warm in "
                f"{time.perf_counter() - t0:.1f} s (each: {each})"
            )
            for spec in policies:
                run_here = lambda spec=spec: evaluate(  # noqa: E731
                    args.env, spec, args.episodes, args.num_envs, seed=0, record=0
                )
                run_ray = lambda spec=spec: pool.evaluate(spec, args.episodes, seed=0, record=0)  # noqa: E731
                here_s, here = best_of(args.repeat, run_here)
                ray_s, there = best_of(args.repeat, run_ray)
                if there.episodes != here.episodes:
                    raise AssertionError(f"{spec}: the Ray run's episodes differ from the local run's")
                rows.append([here.policy, f"{here_s:.2f}", f"{ray_s:.2f}", f"{here_s / ray_s:.2f}x"])
                print(f"{here.policy}: here {here_s:.2f} s, on Ray {ray_s:.2f} s; episodes identical")
    finally:
        ray.shutdown()
    print(
        f"\n{args.env}: {args.episodes} episodes, {blocks} blocks of {min(args.num_envs, args.episodes)} "
        f"envs; best of {args.repeat}"
    )
    header = ["policy", "one process (s)", f"Ray, {args.workers} workers (s)", "speed-up"]
    print(format_table(header, rows))


if __name__ == "__main__":
    main()
