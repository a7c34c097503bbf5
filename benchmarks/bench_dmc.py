"""dm_control's suite, the same task on both sides: RoboDyn's dmc-* env against dm_control's own
envs and against MuJoCo's ceiling, in one run.

    python -m benchmarks.bench_dmc                                  # one task per domain, 64 envs
    python -m benchmarks.bench_dmc --tasks walker-walk humanoid-run --json out.json

For one task of every domain of dm_control's benchmark (DOMAINS; --tasks picks any of the
registered `<domain>-<task>`), with N environments (default 64) and random actions (uniform
in the action box), episodes restarting as they end:

  ours       gym.make_vec("RoboDyn/dmc-<domain>-<task>-v0", num_envs=N): the native vector
             env, one engine call per control step for all N
  dm_control N envs of dm_control.suite.load(domain, task) stepped one after another in a
             Python loop (`env.step(action)`, `env.reset()` after the last step), as users
             run it (through the test-side shim that lets dm_control build on this MuJoCo:
             tests/envs/dmc_oracle.py)
  ceiling    mujoco.rollout of the same model from the states the random run left, the
             task's physics steps per control step for every row, controls held, as many
             threads as our vector env: MuJoCo's physics alone, what an env layer that cost
             nothing would reach (benchmarks.bench_env.physics_per_second)

The verdict: ours / ceiling >= 0.9 (the env layer costs at most a tenth). Every number is the
best of three timed runs, env-steps (control steps) per second. Run on an idle machine.
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym
import numpy as np

import robogym  # noqa: F401  (registers RoboDyn/*)
from benchmarks.bench_env import REPEATS, ceiling_table, env_steps_per_second, physics_per_second
from tests.envs import dmc_oracle

# one task per model of dm_control's benchmark (a domain's tasks share its model; the swimmer
# has two sizes)
DOMAINS = (
    "acrobot-swingup",
    "ball_in_cup-catch",
    "cartpole-swingup",
    "cheetah-run",
    "finger-spin",
    "fish-swim",
    "hopper-hop",
    "humanoid-run",
    "manipulator-bring_ball",
    "pendulum-swingup",
    "point_mass-easy",
    "reacher-easy",
    "swimmer-swimmer6",
    "swimmer-swimmer15",
    "walker-walk",
)


def dm_control_steps_per_second(
    task: str, n: int, steps: int, repeats: int = REPEATS, seed: int = 0
) -> float:
    """Best of `repeats` runs of `steps` rounds, each stepping N dm_control envs one after
    another under random actions (an env whose episode ended is reset first): N * steps / s."""
    domain, name = task.split("-")
    envs = [dmc_oracle.load(domain, name, seed + i) for i in range(n)]
    spec = envs[0].action_spec()
    rng = np.random.default_rng(seed)
    last = [env.reset().last() for env in envs]

    def rounds(count: int) -> None:
        for _ in range(count):
            for i, env in enumerate(envs):
                last[i] = (
                    env.reset().last()
                    if last[i]
                    else env.step(rng.uniform(spec.minimum, spec.maximum)).last()
                )

    rounds(5)  # warm-up
    best = 0.0
    for _ in range(repeats):
        t0 = time.perf_counter()
        rounds(steps)
        best = max(best, n * steps / (time.perf_counter() - t0))
    return best


def measure(task: str, n: int, steps: int) -> dict:
    """The three rates of one task (module docstring)."""
    ours = gym.make_vec(f"RoboDyn/dmc-{task}-v0", num_envs=n)
    r_ours = env_steps_per_second(ours, steps)
    _, ceiling = physics_per_second(ours)
    substeps = ours.unwrapped.task.frame_skip
    ours.close()
    r_dmc = dm_control_steps_per_second(task, n, max(5, steps // 20))
    return {"ours": r_ours, "dm_control": r_dmc, "ceiling": ceiling, "substeps": substeps}


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tasks", nargs="*", default=None, help="<domain>-<task> (default: DOMAINS)")
    p.add_argument("--num-envs", type=int, default=64)
    p.add_argument("--steps", type=int, default=300, help="vector steps per timed run (ours)")
    p.add_argument("--json", help="also write the numbers to this file")
    args = p.parse_args(argv)
    print(f"env-steps/s, {args.num_envs} envs; best of {REPEATS}")
    return ceiling_table(
        args.tasks or list(DOMAINS),
        lambda task: measure(task, args.num_envs, args.steps),
        columns=(
            ("substeps", 9, ""),
            ("ours", 10, ",.0f"),
            ("dm_control", 12, ",.0f"),
            ("ceiling", 10, ",.0f"),
        ),
        rival="dm_control",
        rival_label="ours/dmc",
        task_width=26,
        json_path=args.json,
    )


if __name__ == "__main__":
    main()
