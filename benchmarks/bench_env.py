"""Env-steps per second of RoboDyn's native vector env against Gymnasium's MuJoCo envs.

    python -m benchmarks.bench_env                  # 64 envs, 2,000 vector steps each
    python -m benchmarks.bench_env --num-envs 16 --steps 500 --json out.json

In one run, with the same number of environments and the same random-action loop:

  ours   gym.make_vec("RoboDyn/Crane-v0", num_envs=N): one engine call steps all N
         (5 physics steps of 0.01 s per env step, acceleration drive, sensors, reward)
  gym    gym.make_vec("InvertedDoublePendulum-v5", num_envs=N, vectorization_mode="sync"):
         N MuJoCo envs stepped one after another (5 mj_steps of 0.01 s per env step)

Both loops sample actions with `env.action_space.sample()` and autoreset (NEXT_STEP) as
episodes end. Each number is the best of three timed runs; the ratio is ours / gym.
The target the project set is ratio >= 10.
"""

from __future__ import annotations

import argparse
import json
import time

import gymnasium as gym
import numpy as np

import robogym  # noqa: F401  (registers RoboDyn/*)

TARGET_RATIO = 10.0


def env_steps_per_second(env, steps: int, repeats: int = 3, seed: int = 0) -> float:
    """Best of `repeats` runs of `steps` vector steps with random actions: N * steps / s."""
    env.reset(seed=seed)
    env.action_space.seed(seed)
    for _ in range(20):  # warm-up (compilation, caches)
        env.step(env.action_space.sample())
    best = 0.0
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(steps):
            env.step(env.action_space.sample())
        best = max(best, env.num_envs * steps / (time.perf_counter() - t0))
    return best


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--num-envs", type=int, default=64)
    p.add_argument("--steps", type=int, default=2000, help="vector steps per timed run (ours)")
    p.add_argument("--json", help="also write the numbers to this file")
    args = p.parse_args(argv)
    n = args.num_envs
    ours = gym.make_vec("RoboDyn/Crane-v0", num_envs=n)
    theirs = gym.make_vec("InvertedDoublePendulum-v5", num_envs=n, vectorization_mode="sync")
    gym_steps = max(20, args.steps // 10)  # the sync loop is ~10x slower; keep its run short
    r_ours = env_steps_per_second(ours, args.steps)
    r_gym = env_steps_per_second(theirs, gym_steps)
    ratio = r_ours / r_gym
    print(f"{'env':<52} {'num_envs':>8} {'env-steps/s':>12}")
    print(f"{'RoboDyn/Crane-v0 (native RoboDynVectorEnv)':<52} {n:>8} {r_ours:>12,.0f}")
    print(f"{'InvertedDoublePendulum-v5 (SyncVectorEnv)':<52} {n:>8} {r_gym:>12,.0f}")
    verdict = "meets" if ratio >= TARGET_RATIO else "MISSES"
    print(f"ratio ours/gym: {ratio:.1f}x ({verdict} the >= {TARGET_RATIO:.0f}x target)")
    out = {"num_envs": n, "ours": r_ours, "gym_sync": r_gym, "ratio": ratio, "target": TARGET_RATIO}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)
    ours.close()
    theirs.close()
    return out


if __name__ == "__main__":
    np.set_printoptions(precision=3)
    main()
