"""Where the wall time of a training run goes: env stepping, policy inference, buffers, updates.

    python -m benchmarks.bench_train                       # PPO on RoboDyn/Quadruped-v0, 64, 256, 1,024 envs
    python -m benchmarks.bench_train --algo sac --num-envs 64,256
    python -m benchmarks.bench_train --env RoboDyn/Crane-v0 --timesteps 100000 --json out.json
    python -m benchmarks.bench_train --num-envs 64 --task-settings   # the task's own PPO settings

Each row builds the env and the model exactly as `robodyn train` does (training.train's own
builders: the native vector env behind the SB3 adapter and VecMonitor, VecNormalize with
--vecnormalize, the MLP policy with PPO_DEFAULTS or SAC_DEFAULTS and their per-num_envs
adjustments, on the CPU; with --task-settings, under the algorithm keywords and VecNormalize
the task declares, as `robodyn train ENV` uses them), with train()'s FinalMetricsCallback
and TrainingLog (its lines discarded), and times one `model.learn(--timesteps)` with
time.perf_counter. No checkpoints, TensorBoard or progress bar. SB3's loop runs unchanged;
the methods it calls are wrapped on the instances (restored afterwards), and each wrapper
adds its call's time to one part:

  env        model.env.step_async, step_wait and reset: the vector env, the SB3 adapter
             (robogym.sb3.SB3VecEnv), VecMonitor and VecNormalize
  inference  picking actions. PPO: policy.forward (actions, values, log-probs),
             policy.predict_values (the last values of a rollout; the values that bootstrap
             truncated episodes), policy.obs_to_tensor, policy.reset_noise (gSDE) and
             on_policy_algorithm.obs_as_tensor. SAC: model._sample_action (random actions
             before learning_starts, then policy.predict) and actor.reset_noise
  buffer     PPO: rollout_buffer.reset, add and compute_returns_and_advantage (GAE).
             SAC: model._store_transition (replay_buffer.add and the copies of terminal
             observations) and replay_buffer.sample (inside SAC's train, taken out of update)
  update     model.train: PPO's epochs over the rollout (rollout_buffer.get included),
             SAC's gradient steps (less the samples)
  other      learn()'s wall time minus the four parts: callbacks, SB3's info buffer and
             logging, PPO's per-env loop over dones (the values it bootstraps are inference),
             action clipping and the tensor-to-array copies

A call made inside another timed call counts for the outer one (SAC's train resamples gSDE
noise with actor.reset_noise: update; SAC's predict calls obs_to_tensor: inference), except
replay_buffer.sample, whose time moves from SAC's update to buffer.

Before the rows, one warm-up run on 8 envs (one PPO rollout and its update; SAC up to
learning_starts and a few gradient steps) loads the engine's kernels and makes torch's
first calls; it is timed on its own line and never counted. Every row trains the same
number of steps (default: 3 PPO rollouts at the largest num_envs; SAC: learning_starts and
64 vector steps at the largest), so from 8 envs on (PPO's batch of 1,024 fits a rollout)
every row makes the same number of PPO gradient steps (SAC: about the same).
The header states torch's threads (torch.get_num_threads(), --torch-threads) and each row
the engine's (the Simulator's nthread; --engine-threads, default one per core from 8 envs).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import time
from pathlib import Path

import gymnasium as gym
import stable_baselines3.common.on_policy_algorithm as on_policy
import torch

import robogym  # noqa: F401  (registers RoboDyn/*)
from benchmarks.args import counts
from robodyn.training.cli import _count
from robodyn.training.train import (
    ALGOS,
    FinalMetricsCallback,
    TrainingLog,
    _make_env,
    _model,
    _new_model_kwargs,
    _stats_window,
    used_algo_kwargs,
)
from robogym.registration import training_settings
from robogym.sb3 import task_metric_names

PARTS = ("env", "inference", "buffer", "update", "other")
NUM_ENVS = (64, 256, 1024)
PPO_ROLLOUTS = 3  # default --timesteps for PPO: this many rollouts at the largest num_envs
SAC_VECTOR_STEPS = 64  # default --timesteps for SAC: learning_starts + this many vector steps at the largest
WARMUP_ENVS = 8  # the engine's default threads (one per core) start at 8 rows


class PartClock:
    """Seconds (and calls) per part of the methods wrapped by `wrap`. A call made while
    another timed call runs counts for the outer one, unless it was wrapped with own=True:
    then its time counts for its own part and is taken out of the outer call's."""

    def __init__(self):
        self.seconds = dict.fromkeys(PARTS, 0.0)
        self.calls = dict.fromkeys(PARTS, 0)
        self._inner: list[float] = []  # per open timed call: the time of the own=True calls inside it

    def wrap(self, stack: contextlib.ExitStack, obj, name: str, part: str, own: bool = False) -> None:
        """Replace obj.name (a method of an instance, or a module's function) by a timed call
        of it, until `stack` closes."""
        fn = getattr(obj, name)
        had, before = name in vars(obj), vars(obj).get(name)

        def timed(*args, **kwargs):
            if self._inner and not own:
                return fn(*args, **kwargs)
            self._inner.append(0.0)
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                dt = time.perf_counter() - t0
                self.seconds[part] += dt - self._inner.pop()
                self.calls[part] += 1
                if self._inner:
                    self._inner[-1] += dt

        setattr(obj, name, timed)
        if had:  # a module's function
            stack.callback(setattr, obj, name, before)
        else:  # an instance's method: its class's comes back
            stack.callback(delattr, obj, name)

    def instrument(self, stack: contextlib.ExitStack, algo: str, model) -> None:
        """Wrap what SB3's learn() calls on `model` (see the module's docstring)."""
        for name in ("step_async", "step_wait", "reset"):
            self.wrap(stack, model.env, name, "env")
        if algo == "ppo":
            for name in ("forward", "predict_values", "obs_to_tensor", "reset_noise"):
                self.wrap(stack, model.policy, name, "inference")
            self.wrap(stack, on_policy, "obs_as_tensor", "inference")
            for name in ("reset", "add", "compute_returns_and_advantage"):
                self.wrap(stack, model.rollout_buffer, name, "buffer")
        else:
            self.wrap(stack, model, "_sample_action", "inference")
            self.wrap(stack, model.actor, "reset_noise", "inference")
            self.wrap(stack, model, "_store_transition", "buffer")
            self.wrap(stack, model.replay_buffer, "sample", "buffer", own=True)
        self.wrap(stack, model, "train", "update")


def build(env_id: str, algo: str, num_envs: int, seed: int, vecnormalize: bool, nthread, task_kwargs=None):
    """(env, model, metrics): what `robodyn train` builds for these settings (train()'s own
    builders; task_kwargs: the task's declared algorithm keywords over train()'s defaults),
    and the task metrics its callbacks read."""
    env = _make_env(env_id, num_envs, seed, None, {}, nthread)
    try:
        metrics = task_metric_names(env.unwrapped.vec_env)
        env, model = _model(
            env_id, algo, env, num_envs, seed, vecnormalize, {}, None, {}, "robodyn", task_kwargs
        )
    except BaseException:
        env.close()
        raise
    return env, model, metrics


def learn(model, timesteps: int, metrics: tuple[str, ...], algo: str) -> None:
    """model.learn as train() calls it, with its callbacks (TrainingLog's lines discarded)."""
    log = TrainingLog(timesteps, max(1, timesteps // 10), metrics, window=_stats_window(model), out=_discard)
    callbacks = [FinalMetricsCallback(metrics), log]
    model.learn(timesteps, callback=callbacks, progress_bar=False, tb_log_name=algo)


def _discard(*args, **kwargs) -> None:
    pass


def engine_threads(env) -> int:
    """The threads the engine steps the batch on (the Simulator's nthread)."""
    return int(env.unwrapped.vec_env.unwrapped.core.physics.sim.nthread)


def warm_up(env_id: str, algo: str, seed: int, vecnormalize: bool, nthread, task_kwargs=None) -> float:
    """Seconds of an untimed training on WARMUP_ENVS envs: one PPO rollout and its update, or
    SAC to learning_starts and a few gradient steps (engine kernels, torch's first calls).
    A task's PPO batch is capped at the warm-up's smaller rollout, as train() caps its own."""
    t0 = time.perf_counter()
    if algo == "ppo" and "batch_size" in (task_kwargs or {}):
        rollout = _new_model_kwargs(algo, WARMUP_ENVS, task_kwargs)["n_steps"] * WARMUP_ENVS
        task_kwargs = {**task_kwargs, "batch_size": min(task_kwargs["batch_size"], rollout)}
    env, model, metrics = build(env_id, algo, WARMUP_ENVS, seed, vecnormalize, nthread, task_kwargs)
    try:
        steps = model.n_steps * WARMUP_ENVS if algo == "ppo" else model.learning_starts + 4 * WARMUP_ENVS
        learn(model, steps, metrics, algo)
    finally:
        env.close()
    return time.perf_counter() - t0


def measure(env_id, algo, num_envs, timesteps, seed, vecnormalize, nthread, task_kwargs=None) -> dict:
    """One row: the parts of one model.learn(timesteps) on num_envs envs."""
    env, model, metrics = build(env_id, algo, num_envs, seed, vecnormalize, nthread, task_kwargs)
    clock = PartClock()
    try:
        with contextlib.ExitStack() as stack:
            clock.instrument(stack, algo, model)
            t0 = time.perf_counter()
            learn(model, timesteps, metrics, algo)
            seconds = time.perf_counter() - t0
        threads = engine_threads(env)
        kwargs = used_algo_kwargs(algo, model, task_kwargs or {}, None)
    finally:
        env.close()
    parts = dict(clock.seconds)
    parts["other"] = seconds - sum(parts[p] for p in PARTS if p != "other")
    steps = int(model.num_timesteps)
    return {
        "num_envs": num_envs,
        "engine_threads": threads,
        "timesteps": steps,
        "seconds": seconds,
        "steps_per_second": steps / seconds,
        "parts": parts,
        "shares": {p: parts[p] / seconds for p in PARTS},
        "calls": {p: clock.calls[p] for p in PARTS if p != "other"},
        "algo_kwargs": kwargs,
    }


def default_timesteps(algo: str, num_envs: list[int], task_kwargs=None) -> int:
    """PPO: PPO_ROLLOUTS rollouts at the largest num_envs; SAC: learning_starts and
    SAC_VECTOR_STEPS vector steps at the largest (train()'s settings for that num_envs)."""
    n = max(num_envs)
    kwargs = _new_model_kwargs(algo, n, task_kwargs or {})
    if algo == "ppo":
        return PPO_ROLLOUTS * kwargs["n_steps"] * n
    return kwargs["learning_starts"] + SAC_VECTOR_STEPS * n


def apply_common_args(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse (exit 2, before any work) an --env that is not registered or a --json whose
    directory does not exist; then apply --torch-threads."""
    if args.env not in gym.registry:
        p.error(f"--env: no registered task {args.env!r}")
    if args.json and not Path(args.json).resolve().parent.is_dir():
        p.error(f"--json: no directory {str(Path(args.json).parent)!r}")
    if args.torch_threads is not None:
        torch.set_num_threads(args.torch_threads)


def _row(r: dict) -> str:
    cells = "".join(f"{r['parts'][p]:>12.2f} {100 * r['shares'][p]:>3.0f}%" for p in PARTS)
    return (
        f"{r['num_envs']:>8,} {r['engine_threads']:>4} {r['timesteps']:>10,} {r['steps_per_second']:>9,.0f}"
        f" {r['seconds']:>8.2f}" + cells
    )


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--env", default="RoboDyn/Quadruped-v0", help="a registered task id")
    p.add_argument("--algo", default="ppo", choices=ALGOS)
    p.add_argument("--num-envs", type=counts, default=list(NUM_ENVS), help="comma-separated, e.g. 64,256")
    p.add_argument("--timesteps", type=_count(1), help="steps a row trains (default: see the docstring)")
    p.add_argument("--torch-threads", type=_count(1), help="torch.set_num_threads (default: torch's own)")
    p.add_argument("--engine-threads", type=_count(1), help="the engine's nthread (default: one per core)")
    p.add_argument("--vecnormalize", action="store_true", help="normalize observations and rewards")
    p.add_argument(
        "--task-settings",
        action="store_true",
        help="the algorithm keywords and VecNormalize the task declares for robodyn train",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", help="also write every number to this file")
    args = p.parse_args(argv)
    apply_common_args(p, args)
    task = training_settings(args.env, args.algo) if args.task_settings else {}
    task_kwargs = task.get("algo_kwargs", {})
    vecnormalize = args.vecnormalize or bool(task.get("vecnormalize"))
    timesteps = args.timesteps or default_timesteps(args.algo, args.num_envs, task_kwargs)
    settings = (args.env, args.algo)
    options = (args.seed, vecnormalize, args.engine_threads, task_kwargs)

    defaults = "PPO_DEFAULTS" if args.algo == "ppo" else "SAC_DEFAULTS"
    if args.task_settings:
        defaults += f" under the task's {task_kwargs}" if task else ", the task declares none"
    print(
        f"{args.algo.upper()} on {args.env} ({defaults} of training.train), {timesteps:,} steps a row, "
        f"VecNormalize {'on' if vecnormalize else 'off'}, seed {args.seed}; "
        f"torch threads {torch.get_num_threads()}, engine threads "
        + (f"{args.engine_threads} (--engine-threads)" if args.engine_threads else "the engine's default"),
        flush=True,
    )
    warmup = warm_up(*settings, *options)
    print(f"warm-up ({WARMUP_ENVS} envs, not counted): {warmup:.1f} s", flush=True)
    print(
        f"{'num_envs':>8} {'thr':>4} {'steps':>10} {'steps/s':>9} {'total s':>8}"
        + "".join(f"{p + ' s':>12} {'%':>4}" for p in PARTS),
        flush=True,
    )
    rows = []
    for n in args.num_envs:
        r = measure(*settings, n, timesteps, *options)
        rows.append(r)
        print(_row(r), flush=True)
    print(
        "thr: the engine's threads. other = learn()'s wall time minus the four timed parts "
        f"(largest: {max(100 * r['shares']['other'] for r in rows):.1f}% of a row)"
    )
    out = {
        "env_id": args.env,
        "algo": args.algo,
        "timesteps": timesteps,
        "seed": args.seed,
        "vecnormalize": vecnormalize,
        "task_algo_kwargs": task_kwargs,
        "torch_threads": torch.get_num_threads(),
        "engine_threads": args.engine_threads,
        "warmup_seconds": warmup,
        "parts": list(PARTS),
        "rows": rows,
    }
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return out


if __name__ == "__main__":
    main()
