"""Env-steps per second of RoboDyn's envs against Gymnasium's MuJoCo envs, in one run.

    python -m benchmarks.bench_env                  # 64 envs, 2,000 vector steps each
    python -m benchmarks.bench_env --num-envs 16 --steps 500 --json out.json

Vector envs, with the same number of environments and the same random-action loop:

  ours   gym.make_vec("RoboDyn/Crane-v0", num_envs=N): one engine call steps all N
         (5 physics steps of 0.01 s per env step, acceleration drive, sensors, reward)
  gym    gym.make_vec("InvertedDoublePendulum-v5", num_envs=N, vectorization_mode="sync"):
         N MuJoCo envs stepped one after another (5 mj_steps of 0.01 s per env step)

Both loops sample actions with `env.action_space.sample()` and autoreset (NEXT_STEP) as
episodes end. The line after the ratio splits our vector step into the sampling, the
physics (the task's `apply_action`: the engine's acceleration drive over every env) and the
rest, the env layer (action checks, reward, metrics, info, autoreset); each part is timed
on its own, so the split is approximate.

Single envs: `gym.make("RoboDyn/Crane-v0")` against `gym.make("InvertedDoublePendulum-v5")`,
both with Gymnasium's default wrappers; only `env.step` is on the clock (sampling, and the
resets when an episode ends, are not).

Every other registered task: env-steps per second of its native vector env with the same
number of environments and the same random-action loop (its own physics: a lander with
contacts, an arm, ...). The legged tasks are also compared with gymnasium's env of the same
kind (COUNTERPARTS: the quadruped with Ant-v5, the humanoid with Humanoid-v5) under
make_vec(..., vectorization_mode="sync") with our task's physics steps per env step
(frame_skip); target: ours >= 10x. For these the physics alone is also timed against
MuJoCo's own batched C loop on the same model: from the states the random-action run left
in the batch, one env step's physics (frame_skip steps of every row, the controls held) by
our engine (`sim.step(frame_skip)`) and by `mujoco.rollout` with as many threads. MuJoCo's
number is the ceiling of any env built on an engine of MuJoCo's speed, with an env layer
that cost nothing; its ratio to the gymnasium env says how much of the target the physics
of our model allows.

Every number is the best of three timed runs; a ratio is ours / gym. The project's
targets: vector ratio >= 20, single-env ratio >= 1.
"""

from __future__ import annotations

import argparse
import itertools
import json
import time

import gymnasium as gym
import mujoco
import mujoco.rollout
import numpy as np

import robogym  # noqa: F401  (registers RoboDyn/*)
from robogym import registration

TARGET_RATIO = 20.0
SINGLE_TARGET_RATIO = 1.0
REPEATS = 3
CEILING_TARGET = 0.9  # ours / MuJoCo's ceiling (ceiling_table): the env layer costs at most a tenth
# our legged tasks against gymnasium's MuJoCo envs of the same kind, stepped with as many
# physics steps per env step as ours (frame_skip); target: ours / gym >= the number
COUNTERPARTS = {"RoboDyn/Quadruped-v0": ("Ant-v5", 10.0), "RoboDyn/HumanoidPush-v0": ("Humanoid-v5", 10.0)}


def env_steps_per_second(env, steps: int, repeats: int = REPEATS, seed: int = 0) -> float:
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


def seconds_per_call(fn, calls: int, repeats: int = REPEATS) -> float:
    """Best of `repeats` runs of `calls` calls of fn(): seconds per call."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - t0) / calls)
    return best


def physics_seconds_per_step(env, steps: int) -> float:
    """Seconds per vector step of the physics alone: our vector env's task.apply_action
    (the engine call that advances every env by one env step) under random actions."""
    env.action_space.seed(1)
    actions = itertools.cycle([env.action_space.sample() for _ in range(steps)])
    return seconds_per_call(lambda: env.task.apply_action(next(actions)), steps)


def single_env_steps_per_second(env, steps: int, repeats: int = REPEATS, seed: int = 0) -> float:
    """Best of `repeats` runs of `steps` single-env steps with random actions: steps / s of
    the time spent inside env.step (sampling and resets are off the clock)."""
    env.reset(seed=seed)
    env.action_space.seed(seed)
    best = 0.0
    for run in range(repeats + 1):  # run 0 warms up
        clock = 0.0
        for _ in range(steps):
            action = env.action_space.sample()
            t0 = time.perf_counter()
            _, _, terminated, truncated, _ = env.step(action)
            clock += time.perf_counter() - t0
            if terminated or truncated:
                env.reset()
        if run > 0:
            best = max(best, steps / clock)
    return best


def physics_per_second(env, calls: int = 200, repeats: int = REPEATS) -> tuple[float, float]:
    """(ours, MuJoCo) env-steps/s of the physics alone: from the batch's current states
    (qpos, qvel, ctrl and warm start of every row), frame_skip steps of every row with the
    controls held, by our Simulator and by mujoco.rollout (same model, same threads), each
    call restarting from those states; best of `repeats` runs of `calls` calls."""
    core = env.unwrapped.core
    sim, mj, skip = core.physics.sim, core.physics.mj_model, core.task.frame_skip
    d, n = sim.data, sim.batch
    start = {k: getattr(d, k).copy() for k in ("qpos", "qvel", "ctrl", "qacc_warmstart")}
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    state0 = np.empty((n, mujoco.mj_stateSize(mj, spec)))
    scratch = mujoco.MjData(mj)
    for i in range(n):
        for k, v in start.items():
            getattr(scratch, k)[:] = v[i]
        mujoco.mj_getState(mj, scratch, state0[i], spec)
    control = np.ascontiguousarray(np.repeat(start["ctrl"][:, None, :], skip, axis=1))
    states = np.empty((n, skip, state0.shape[1]))
    sensors = np.empty((n, skip, mj.nsensordata))

    def ours():
        for k, v in start.items():
            getattr(d, k)[:] = v
        sim.forward()
        sim.step(skip)

    threads = sim.nthread
    with mujoco.rollout.Rollout(nthread=0 if threads == 1 else threads) as roller:
        datas = [mujoco.MjData(mj) for _ in range(threads)]

        def theirs():
            roller.rollout([mj] * n, datas, state0, control, nstep=skip, skip_checks=True,
                           state=states, sensordata=sensors)  # fmt: skip

        rates = []
        for fn in (ours, theirs):
            fn()  # warm-up
            best = 0.0
            for _ in range(repeats):
                t0 = time.perf_counter()
                for _ in range(calls):
                    fn()
                best = max(best, n * calls / (time.perf_counter() - t0))
            rates.append(best)
    for k, v in start.items():
        getattr(d, k)[:] = v
    sim.forward()
    return rates[0], rates[1]


def ceiling_table(
    tasks, measure, columns, rival: str, rival_label: str, task_width: int, json_path: str | None = None
) -> dict:
    """{task: rates} of a side-by-side run (bench_dmc, bench_gymnasium), printed as a table
    while it runs: `measure(task)` gives a task's env-steps/s, "ours", `rival` and "ceiling"
    among them; each rates dict gains ours_over_<rival> = ours / rival and ours_over_ceiling
    = ours / ceiling. A row is the task (task_width wide), `columns` ((key, width, format) of
    the measured numbers, each headed by its key), ours / rival (headed rival_label) and ours
    / ceiling, each ratio followed by "x" in a column two wider than its header, then the
    verdict: "ok" where ours / ceiling >= CEILING_TARGET. With json_path, the dict is also
    written there as JSON."""
    ratios = ((f"ours_over_{rival}", rival_label, ".1f"), ("ours_over_ceiling", "ours/ceil", ".2f"))
    print(
        f"{'task':<{task_width}}"
        + "".join(f"{key:>{width}}" for key, width, _ in columns)
        + "".join(f"{label:>{len(label) + 2}}" for _, label, _ in ratios)
    )
    out = {}
    for task in tasks:
        r = measure(task)
        r[f"ours_over_{rival}"] = r["ours"] / r[rival]
        r["ours_over_ceiling"] = r["ours"] / r["ceiling"]
        verdict = "ok" if r["ours_over_ceiling"] >= CEILING_TARGET else f"below {CEILING_TARGET}"
        print(
            f"{task:<{task_width}}"
            + "".join(f"{r[key]:>{width}{fmt}}" for key, width, fmt in columns)
            + "".join(f"{r[key]:>{len(label) + 1}{fmt}}x" for key, label, fmt in ratios)
            + f"  {verdict}",
            flush=True,
        )
        out[task] = r
    if json_path:
        with open(json_path, "w") as f:
            json.dump(out, f, indent=1)
    return out


def _verdict(ratio: float, target: float) -> str:
    return f"{'meets' if ratio >= target else 'MISSES'} the >= {target:g}x target"


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--num-envs", type=int, default=64)
    p.add_argument("--steps", type=int, default=2000, help="vector steps per timed run (ours)")
    p.add_argument("--single-steps", type=int, default=5000, help="single-env steps per timed run")
    p.add_argument("--json", help="also write the numbers to this file")
    args = p.parse_args(argv)
    n = args.num_envs
    ours = gym.make_vec("RoboDyn/Crane-v0", num_envs=n)
    theirs = gym.make_vec("InvertedDoublePendulum-v5", num_envs=n, vectorization_mode="sync")
    gym_steps = max(20, args.steps // 10)  # the sync loop is ~10x slower; keep its run short
    r_ours = env_steps_per_second(ours, args.steps)
    r_gym = env_steps_per_second(theirs, gym_steps)
    ratio = r_ours / r_gym
    t_sample = seconds_per_call(ours.action_space.sample, args.steps)
    t_physics = physics_seconds_per_step(ours, args.steps)
    t_step = n / r_ours
    t_layer = t_step - t_sample - t_physics
    ours.close()
    theirs.close()

    single_ours = gym.make("RoboDyn/Crane-v0")
    single_gym = gym.make("InvertedDoublePendulum-v5")
    s_ours = single_env_steps_per_second(single_ours, args.single_steps)
    s_gym = single_env_steps_per_second(single_gym, args.single_steps)
    single_ratio = s_ours / s_gym
    single_ours.close()
    single_gym.close()

    others, counterparts = {}, {}
    for task in registration.TASKS:
        if task.id == "RoboDyn/Crane-v0":
            continue
        env = gym.make_vec(task.id, num_envs=n)
        others[task.id] = env_steps_per_second(env, max(50, args.steps // 4))
        frame_skip = env.unwrapped.task.frame_skip
        physics = physics_per_second(env) if task.id in COUNTERPARTS else None
        env.close()
        if task.id in COUNTERPARTS:
            gym_id, target = COUNTERPARTS[task.id]
            env = gym.make_vec(gym_id, num_envs=n, vectorization_mode="sync", frame_skip=frame_skip)
            rate = env_steps_per_second(env, max(20, args.steps // 40))
            env.close()
            counterparts[task.id] = {"gym_id": gym_id, "gym_sync": rate, "ratio": others[task.id] / rate,
                                     "target": target, "frame_skip": frame_skip,
                                     "physics_ours": physics[0], "physics_mujoco": physics[1],
                                     "ceiling_ratio": physics[1] / rate}  # fmt: skip

    us = 1e6
    print(f"{'env':<52} {'num_envs':>8} {'env-steps/s':>12}")
    print(f"{'RoboDyn/Crane-v0 (native RoboDynVectorEnv)':<52} {n:>8} {r_ours:>12,.0f}")
    print(f"{'InvertedDoublePendulum-v5 (SyncVectorEnv)':<52} {n:>8} {r_gym:>12,.0f}")
    print(f"ratio ours/gym: {ratio:.1f}x ({_verdict(ratio, TARGET_RATIO)})")
    print(
        f"our vector step: {t_step * us:.0f} us = sampling {t_sample * us:.0f} us + physics "
        f"{t_physics * us:.0f} us + env layer {t_layer * us:.0f} us (approximate)"
    )
    print(f"{'RoboDyn/Crane-v0 (gym.make)':<52} {1:>8} {s_ours:>12,.0f}")
    print(f"{'InvertedDoublePendulum-v5 (gym.make)':<52} {1:>8} {s_gym:>12,.0f}")
    print(f"ratio ours/gym, single env: {single_ratio:.2f}x ({_verdict(single_ratio, SINGLE_TARGET_RATIO)})")
    for task_id, rate in others.items():
        print(f"{task_id + ' (native RoboDynVectorEnv)':<52} {n:>8} {rate:>12,.0f}")
        c = counterparts.get(task_id)
        if c:
            label = f"{c['gym_id']} (SyncVectorEnv, frame_skip {c['frame_skip']})"
            print(f"{label:<52} {n:>8} {c['gym_sync']:>12,.0f}")
            print(f"ratio {task_id}/{c['gym_id']}: {c['ratio']:.1f}x ({_verdict(c['ratio'], c['target'])})")
            print(
                f"  physics alone, same model and states: ours {c['physics_ours']:,.0f}, mujoco.rollout "
                f"{c['physics_mujoco']:,.0f} env-steps/s ({c['physics_ours'] / c['physics_mujoco']:.2f}x); "
                f"MuJoCo's ceiling against {c['gym_id']}: {c['ceiling_ratio']:.1f}x"
            )
    out = {
        "num_envs": n,
        "ours": r_ours,
        "gym_sync": r_gym,
        "ratio": ratio,
        "target": TARGET_RATIO,
        "us_per_vector_step": {
            "total": t_step * us,
            "sampling": t_sample * us,
            "physics": t_physics * us,
            "env_layer": t_layer * us,
        },
        "single_ours": s_ours,
        "single_gym": s_gym,
        "single_ratio": single_ratio,
        "single_target": SINGLE_TARGET_RATIO,
        "other_tasks": others,
        "counterparts": counterparts,
    }
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)
    return out


if __name__ == "__main__":
    np.set_printoptions(precision=3)
    main()
