"""Gymnasium's tasks, the same task on both sides: RoboDyn's port against Gymnasium's env and
against MuJoCo's own ceiling, in one run.

    python -m benchmarks.bench_gymnasium                        # every port, 64 envs
    python -m benchmarks.bench_gymnasium --tasks Hopper-v5 Ant-v5 --json out.json

For every port of a Gymnasium MuJoCo task (envs/*_v5.py), with N environments (default 64)
and the same random-action loop (actions from the action space, autoreset as episodes end):

  ours     gym.make_vec("RoboDyn/<task>", num_envs=N): the native vector env, one engine
           call per step for all N
  sync     gym.make_vec("<task>", num_envs=N, vectorization_mode="sync"): Gymnasium's N
           MuJoCo envs stepped one after another
  async    gym.make_vec("<task>", num_envs=N, vectorization_mode="async",
           vector_kwargs={"shared_memory": True}): one worker process per env
           (--async-envs sets its N; default 2: one process per core of this machine)
  ceiling  mujoco.rollout of the same model from the states the random run left, frame_skip
           physics steps of every row per env step, controls held, as many threads as our
           vector env: MuJoCo's physics alone, what an env layer that cost nothing would reach
           (benchmarks.bench_env.physics_per_second)

The verdict: ours / ceiling >= 0.9 (the env layer costs at most a tenth). Every number is the
best of three timed runs, env-steps per second. Run on an idle machine.
"""

from __future__ import annotations

import argparse

import gymnasium as gym

import robogym  # noqa: F401  (registers RoboDyn/*)
from benchmarks.bench_env import ceiling_table, env_steps_per_second, physics_per_second
from robogym.registration import TASKS


def ports() -> list[str]:
    """Gymnasium's ids of the tasks RoboDyn ports (envs/*_v5.py)."""
    return sorted(
        t.id.removeprefix("RoboDyn/")
        for t in TASKS
        if t.entry_point.startswith("robodyn.envs.") and t.id.endswith("-v5")
    )


def measure(task: str, n: int, steps: int, async_envs: int) -> dict:
    """The four rates of one task (module docstring)."""
    ours = gym.make_vec(f"RoboDyn/{task}", num_envs=n)
    r_ours = env_steps_per_second(ours, steps)
    _, ceiling = physics_per_second(ours)
    ours.close()
    sync = gym.make_vec(task, num_envs=n, vectorization_mode="sync")
    r_sync = env_steps_per_second(sync, max(20, steps // 10))
    sync.close()
    asyn = gym.make_vec(task, num_envs=async_envs, vectorization_mode="async")
    r_async = env_steps_per_second(asyn, max(20, steps // 2))
    asyn.close()
    return {"ours": r_ours, "sync": r_sync, "async": r_async, "ceiling": ceiling}


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tasks", nargs="*", default=None, help="Gymnasium ids (default: every port)")
    p.add_argument("--num-envs", type=int, default=64)
    p.add_argument("--steps", type=int, default=300, help="vector steps per timed run (ours)")
    p.add_argument("--async-envs", type=int, default=2, help="environments (processes) of the async env")
    p.add_argument("--json", help="also write the numbers to this file")
    args = p.parse_args(argv)
    print(f"env-steps/s, {args.num_envs} envs (async: {args.async_envs} processes); best of 3")
    return ceiling_table(
        args.tasks or ports(),
        lambda task: measure(task, args.num_envs, args.steps, args.async_envs),
        columns=(("ours", 10, ",.0f"), ("sync", 10, ",.0f"), ("async", 10, ",.0f"), ("ceiling", 10, ",.0f")),
        rival="sync",
        rival_label="ours/sync",
        task_width=28,
        json_path=args.json,
    )


if __name__ == "__main__":
    main()
