"""Train PPO or SAC (stable-baselines3) on a RoboDyn task, on the native vector env.

    from robodyn.training.train import train
    result = train("RoboDyn/Crane-v0", algo="ppo", total_timesteps=1_000_000, out_dir="runs/crane")

or `robodyn train RoboDyn/Crane-v0 --algo ppo --timesteps 1000000 --num-envs 64 --out runs/crane`.

The environment is `robogym.sb3.make_sb3_env`: one RoboDynVectorEnv (SAME_STEP autoreset)
behind the SB3 adapter and VecMonitor, optionally VecNormalize. The output directory gets:

    <algo>.zip                the final model (default MLP policy)
    <algo>.json               sidecar: the command line, algorithm and every keyword its
                              constructor got (ours, SB3's defaults, the user's), env id and
                              kwargs, seed, num_envs, VecNormalize file and settings, the
                              requested and trained timesteps, timing, library versions
    <algo>_vecnormalize.pkl   VecNormalize statistics (with --vecnormalize)
    checkpoints/              CheckpointCallback snapshots (and their VecNormalize statistics),
                              and <algo>.json, the run's sidecar, which evaluation reads for them
    tb/                       TensorBoard logs, with rollout/final_<metric> per task metric

While it trains it prints a line every `log_every` steps (default a tenth of the run):
steps done, steps/s, episodes finished, the mean return and the task's success rate over the
most recent episodes (SB3's statistics window, 100), from VecMonitor's `episode` info.
"""

from __future__ import annotations

import collections
import collections.abc
import contextlib
import copy
import functools
import inspect
import math
import platform
import shlex
import time
import types
import typing
from dataclasses import dataclass
from pathlib import Path

import gymnasium
import numpy as np
import stable_baselines3
import torch
from stable_baselines3.common.callbacks import BaseCallback, CheckpointCallback
from stable_baselines3.common.vec_env import VecNormalize

from robodyn.engine.errors import RoboDynError
from robodyn.training import jsonio, plots
from robodyn.training.evaluate import (
    PolicyError,
    SB3Policy,
    acting_policy,
    evaluate_on,
    load_sb3_model,
    load_vecnormalize,
    make_eval_env,
    read_model_meta,
)
from robodyn.training.residual import ResidualError, ResidualVectorEnv, check_scale
from robodyn.training.zoo import zoo_settings
from robogym.registration import training_settings
from robogym.sb3 import make_sb3_env, task_metric_names

ALGOS = ("ppo", "sac")
# keywords of the algorithm's constructor that train() sets itself (its own arguments)
SET_BY_TRAIN = ("policy", "env", "seed", "device", "verbose", "tensorboard_log", "_init_setup_model")


class TrainError(RoboDynError, ValueError):
    """Arguments train() refuses before it writes anything: counts, algorithm keywords, a
    model to continue that cannot be loaded onto the task."""


# Defaults for a batch of many environments (num_envs ~ 64); any of them can be overridden
# through train(algo_kwargs=...). PPO explores with gSDE (state-dependent noise, resampled
# every 8 steps): with per-step Gaussian noise on an acceleration command the exploration
# averages out, and on the crane PPO settles on driving through the target and off the rail.
PPO_DEFAULTS = dict(
    n_steps=128,
    batch_size=1024,
    n_epochs=10,
    gamma=0.995,
    gae_lambda=0.95,
    learning_rate=3e-4,
    use_sde=True,
    sde_sample_freq=8,
    policy_kwargs=dict(log_std_init=-1.0),
)
SAC_DEFAULTS = dict(learning_starts=1000, batch_size=256, gamma=0.99, buffer_size=300_000)
# a run's size where neither the caller nor the task's own training settings give it
RUN_SIZE = {"timesteps": 1_000_000, "num_envs": 64, "vecnormalize": False}
# "robodyn": the defaults above; "zoo": the RL Baselines3 Zoo's tuned settings (training.zoo)
HYPERPARAMS = ("robodyn", "zoo")
# policy activations a JSON keyword can name
ACTIVATIONS = {"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh}


@dataclass
class TrainResult:
    model_path: Path
    vecnormalize_path: Path | None
    seconds: float
    timesteps: int


class FinalMetricsCallback(BaseCallback):
    """Logs the mean of every task metric at the end of the episodes that finished during a
    rollout (rollout/final_<metric>), from VecMonitor's "episode" info."""

    def __init__(self, metrics: tuple[str, ...]):
        super().__init__()
        self.metrics = metrics
        self._values: dict[str, list[float]] = {m: [] for m in metrics}

    def _on_step(self) -> bool:
        for info in self.locals.get("infos", []):
            ep = info.get("episode")
            if ep is not None:
                for m in self.metrics:
                    if m in ep:
                        self._values[m].append(float(ep[m]))
        return True

    def _on_rollout_end(self) -> None:
        for m, v in self._values.items():
            if v:
                self.logger.record(f"rollout/final_{m}", float(np.mean(v)))
                v.clear()


def next_multiple(done: int, every: int) -> int:
    """The first multiple of `every` after `done` steps: when a callback that acts every
    `every` steps acts next."""
    return (done // every + 1) * every


class RunClock:
    """A run's training time: wall time since training started, less the time its evaluations
    took (TrainingEval), so that the progress lines, the learning curve and the wall-time
    budget read what the same run takes without them."""

    def __init__(self):
        self._t0: float | None = None
        self.paused = 0.0  # seconds spent inside pause()

    def start(self) -> None:
        self._t0, self.paused = time.perf_counter(), 0.0

    @property
    def started(self) -> bool:
        return self._t0 is not None

    def seconds(self) -> float:
        return time.perf_counter() - self._t0 - self.paused

    @contextlib.contextmanager
    def pause(self):
        t = time.perf_counter()
        try:
            yield
        finally:
            self.paused += time.perf_counter() - t


class WallTimeStop(BaseCallback):
    """Ends training once the run's training time (RunClock) reaches `budget` seconds: the
    step that crosses it returns False, SB3 leaves its loop (PPO drops the unfinished
    rollout), and train() saves the model as at the end of its step budget."""

    def __init__(self, budget: float, clock: RunClock):
        super().__init__()
        self.budget, self.clock = float(budget), clock
        self.stopped = False

    def _on_step(self) -> bool:
        if self.clock.seconds() >= self.budget:
            self.stopped = True
        return not self.stopped


class TrainingEval(BaseCallback):
    """Evaluates the policy being trained, deterministically, on `episodes` episodes from
    `seed` (training.evaluate's episodes: episode k from seed + k, on one vector env of its
    own, with the run's VecNormalize statistics as they stand), when training starts, at the
    first rollout start after every `every` steps (the policy after its latest update) and
    when training ends. Each evaluation is a point of the learning curve: steps, training
    seconds (RunClock, the evaluations left out), mean return and success rate, the final
    task metrics. The evaluation uses no random stream of the run: a run trains the same
    model with or without it."""

    def __init__(self, env_id, env_kwargs, every, episodes, seed, clock, residual=None, out=print):
        super().__init__()
        self.env_id, self.env_kwargs = env_id, dict(env_kwargs)
        self.every, self.episodes, self.seed = int(every), int(episodes), int(seed)
        self.clock, self.residual, self.out = clock, residual, out
        self.points: list[dict] = []
        self._env = None

    def _on_training_start(self) -> None:
        self._start = self.num_timesteps
        self._next = self.every
        with self.clock.pause():
            self._env = make_eval_env(self.env_id, min(64, self.episodes), self.env_kwargs)
        self._evaluate()

    def _on_rollout_start(self) -> None:
        if self.num_timesteps - self._start >= self._next:
            self._evaluate()
            self._next = next_multiple(self.num_timesteps - self._start, self.every)

    def _on_step(self) -> bool:
        return True

    def _on_training_end(self) -> None:
        if not self.points or self.points[-1]["steps"] != self.num_timesteps - self._start:
            self._evaluate()
        self._env.close()

    def _evaluate(self) -> None:
        seconds = self.clock.seconds()
        with self.clock.pause():
            vn = self.model.get_vec_normalize_env()
            policy = acting_policy(SB3Policy(self.model, vn, name="training", residual=self.residual))
            r = evaluate_on(
                self._env, self.env_id, policy, self.episodes, self.seed, self.env_kwargs, record=0
            ).summary()
        steps = self.num_timesteps - self._start
        point = {"steps": steps, "seconds": round(seconds, 3), "eval_seconds": round(r["seconds"], 3)}
        point.update({k: v for k, v in r.items() if k not in ("policy", "seconds")})
        self.points.append(point)
        text = f"  eval at {steps:,} steps ({seconds:,.1f} s): mean return {r['mean_return']:.2f}"
        if r["success_rate"] is not None:
            text += f", success {100 * r['success_rate']:.0f}%"
        self.out(f"{text} ({r['episodes']} episodes, deterministic)", flush=True)


class TrainingLog(BaseCallback):
    """Prints a line every `every` environment steps of the run (up to `total`; a run that goes
    past it to finish a rollout prints the rest at its end) and once at its end: steps
    done of `total`, training seconds (`clock`), steps/s, episodes finished, and over the
    last `window` episodes (those in VecMonitor's "episode" info, as FinalMetricsCallback
    reads them) the mean return and, for a task with a `success` metric, the fraction of
    episodes whose final success was 1. `points` keeps every line's numbers."""

    def __init__(
        self,
        total: int,
        every: int,
        metrics: tuple[str, ...],
        window: int = 100,
        out=print,
        clock: RunClock | None = None,
    ):
        super().__init__()
        self.total, self.every = int(total), int(every)
        self.clock = clock if clock is not None else RunClock()  # a clock of its own starts with training
        self.points: list[dict] = []  # the numbers of every line: the training curve
        self.has_success = "success" in metrics
        self.recent: collections.deque[dict] = collections.deque(maxlen=window)
        self.episodes = 0
        self.out = out
        self.lines: list[str] = []  # every line printed, in order

    def _on_training_start(self) -> None:
        self._start = self.num_timesteps
        self._next = self.every
        if not self.clock.started:
            self.clock.start()
        self._last = -1

    def _on_step(self) -> bool:
        for info in self.locals.get("infos", []):
            ep = info.get("episode")
            if ep is not None:
                self.recent.append(ep)
                self.episodes += 1
        done = self.num_timesteps - self._start
        if done >= self._next and self._next <= self.total:  # past the total (a rollout's end): at the end
            self._print(done)
            self._next = next_multiple(done, self.every)
        return True

    def _on_training_end(self) -> None:
        done = self.num_timesteps - self._start
        if done != self._last:
            self._print(done)

    def summary(self) -> dict:
        """{"episodes": finished in the run, "window": episodes averaged, "mean_return",
        "success_rate"}: the statistics of the last line (None where there is none)."""
        returns = [float(ep["r"]) for ep in self.recent]
        success = [float(ep["success"]) > 0.5 for ep in self.recent if "success" in ep]
        return {
            "episodes": self.episodes,
            "window": len(returns),
            "mean_return": float(np.mean(returns)) if returns else None,
            "success_rate": float(np.mean(success)) if self.has_success and success else None,
        }

    def _print(self, done: int) -> None:
        self._last = done
        seconds = self.clock.seconds()
        s = self.summary()
        self.points.append({"steps": done, "seconds": round(seconds, 3), **s})
        text = (
            f"  {done:,}/{self.total:,} steps ({100 * done / self.total:.0f}%), {seconds:,.1f} s, "
            f"{done / max(seconds, 1e-9):,.0f} steps/s, {s['episodes']:,} episodes"
        )
        if s["mean_return"] is None:
            text += "; no episode has ended yet"
        else:
            text += f"; last {s['window']}: mean return {s['mean_return']:.2f}"
            if self.has_success:
                text += f", success {100 * s['success_rate']:.0f}%"
        self.lines.append(text)
        self.out(text, flush=True)


def train(
    env_id: str,
    algo: str = "ppo",
    total_timesteps: int | None = None,
    num_envs: int | None = None,
    seed: int = 0,
    out_dir: str | Path = "runs/train",
    vecnormalize: bool | None = None,
    env_kwargs: dict | None = None,
    algo_kwargs: dict | None = None,
    checkpoint_every: int = 200_000,
    progress_bar: bool = True,
    tensorboard: bool = True,
    verbose: int = 0,
    init_model: str | Path | None = None,
    residual: str | None = None,
    residual_scale: float = 1.0,
    nthread: int | None = None,
    log_every: int | None = None,
    command: str | None = None,
    hyperparams: str = "robodyn",
    wall_time: float | None = None,
    eval_every: int = 0,
    eval_episodes: int = 64,
    eval_seed: int = 1000,
) -> TrainResult:
    """Train `algo` ("ppo" or "sac", default MLP policy) for `total_timesteps` environment
    steps on `num_envs` rows of one RoboDyn vector env; save the model, the sidecar JSON, the
    VecNormalize statistics (if used), checkpoints every `checkpoint_every` steps and
    TensorBoard logs under `out_dir`. Prints and returns the training time.

    total_timesteps, num_envs, vecnormalize: None takes the task's own setting where its
    registration declares one for `algo` (robogym.registration.training_settings), else
    1,000,000 steps, 64 envs, no VecNormalize. The algorithm keywords the task declares come
    between train()'s defaults and `algo_kwargs` (not for a continued model, nor with the
    Zoo's settings, which replace the task's too).

    wall_time: a second budget, in seconds of training (evaluations left out): training
    ends at whichever of it and total_timesteps comes first, and the model is saved as at
    the end of the step budget (the sidecar's `stopped` says which ended it).

    eval_every: evaluate the policy deterministically on `eval_episodes` episodes from
    `eval_seed` (training.evaluate's episodes) at the start, every this many steps and at
    the end (TrainingEval); 0: never. The points, with the progress lines' (steps, training
    seconds, mean return, success), go to `curve.json` and `learning_curve.png`.

    init_model: continue training a saved model (its algorithm, VecNormalize statistics and
    residual baseline come from its sidecar) for `total_timesteps` more steps; algo_kwargs
    then override saved hyperparameters (e.g. learning_rate).

    residual: train a correction to the task's baseline of that name instead of a whole
    policy (training.residual: the env applies clip(base + residual_scale * action)); the
    sidecar records both, and evaluation rebuilds the sum.

    nthread: the threads the engine steps the batch on (default one per core); not an env
    keyword of the run (not in the sidecar): a sweep running several trainings on one machine
    gives each its share.

    log_every: print a line of progress (TrainingLog: steps, mean return and success rate of
    the recent episodes) every this many steps; default a tenth of total_timesteps; 0: none.

    command: the command line recorded in the sidecar (`robodyn train` passes its own);
    default the `robodyn train` command line equivalent to this call.

    hyperparams: "robodyn" (train()'s defaults for many environments, PPO_DEFAULTS and
    SAC_DEFAULTS, under algo_kwargs) or "zoo" (the RL Baselines3 Zoo's tuned settings for the
    task, training.zoo: its n_envs, VecNormalize and PPO keywords replace num_envs,
    vecnormalize and train()'s defaults; algo_kwargs still override them).

    A TrainError, raised before anything is written, refuses an unknown algorithm, a count
    below 1, a negative seed, algo_kwargs the algorithm does not take or refuses, env_kwargs
    the task refuses, and an init_model (or its sidecar or statistics) that does not load
    onto the task."""
    init_meta: dict = {}
    if init_model is not None:
        try:
            init_meta = read_model_meta(Path(init_model))
        except PolicyError as e:
            raise TrainError(f"init_model: {e}") from None
        algo = init_meta.get("algo", algo)
        vecnormalize = vecnormalize or bool(init_meta.get("vecnormalize"))
        saved = init_meta.get("residual")
        if residual is not None and (saved or {}).get("base") != residual:
            raise TrainError(f"residual {residual!r}: the init_model was trained with residual {saved!r}")
        if saved:
            residual, residual_scale = saved["base"], saved["scale"]
    algo = algo.lower()
    if algo not in ALGOS:
        raise TrainError(f"algo must be one of {ALGOS}, got {algo!r}")
    task = {} if hyperparams == "zoo" else training_settings(env_id, algo)
    total_timesteps, num_envs, vecnormalize = run_size(task, total_timesteps, num_envs, vecnormalize)
    task_kwargs = task.get("algo_kwargs", {}) if init_model is None else {}
    for name, value, least in (
        ("total_timesteps", total_timesteps, 1),
        ("num_envs", num_envs, 1),
        ("checkpoint_every", checkpoint_every, 1),
        ("eval_every", eval_every, 0),
        ("eval_episodes", eval_episodes, 1),
        ("eval_seed", eval_seed, 0),
        ("seed", seed, 0),
        ("log_every", 1 if log_every is None else log_every, 0),
    ):
        if value < least:
            raise TrainError(f"{name} must be >= {least}, got {value}")
    if seed >= 2**32:  # SB3 seeds numpy's legacy generator too, which takes 0 to 2**32 - 1
        raise TrainError(f"seed must be below 2**32 (stable-baselines3 seeds numpy with it), got {seed}")
    if wall_time is not None and not (isinstance(wall_time, int | float) and 0 < wall_time < math.inf):
        raise TrainError(f"wall_time must be a positive number of seconds, got {wall_time!r}")
    if hyperparams not in HYPERPARAMS:
        raise TrainError(f"hyperparams must be one of {HYPERPARAMS}, got {hyperparams!r}")
    if hyperparams == "zoo":
        if init_model is not None:
            raise TrainError("hyperparams='zoo' builds a new model; init_model continues a saved one")
        try:
            zoo = zoo_settings(env_id, algo)
        except ValueError as e:
            raise TrainError(str(e)) from None
        num_envs, vecnormalize = zoo["n_envs"], zoo["normalize"]
        algo_kwargs = {**zoo["algo_kwargs"], **(algo_kwargs or {})}
    algo_kwargs = check_algo_kwargs(algo, algo_kwargs)
    task_kwargs = check_algo_kwargs(algo, task_kwargs)
    build_kwargs = {**task_kwargs, **algo_kwargs}
    if eval_every and max_episode_steps(env_id, env_kwargs or {}) is None:
        raise TrainError(
            f"eval_every: {env_id} has no time limit, so an evaluation would never end; give one in "
            "env_kwargs (max_episode_steps)"
        )
    out = Path(out_dir)
    env_kwargs = dict(env_kwargs or {})
    wrap = None
    if residual is None and residual_scale != 1.0:
        raise TrainError(f"residual_scale={residual_scale!r} only applies with a residual baseline")
    if residual is not None:
        try:
            residual_scale = check_scale(residual_scale)
        except ResidualError as e:
            raise TrainError(str(e)) from None
        wrap = functools.partial(ResidualVectorEnv, base=residual, scale=residual_scale)
    env = _make_env(env_id, num_envs, seed, wrap, env_kwargs, nthread)
    try:
        metrics = task_metric_names(env.unwrapped.vec_env)
        env, model = _model(
            env_id,
            algo,
            env,
            num_envs,
            seed,
            vecnormalize,
            algo_kwargs,
            init_model,
            init_meta,
            hyperparams,
            task_kwargs,
        )
    except BaseException:
        env.close()
        raise
    out.mkdir(parents=True, exist_ok=True)  # only now: a refused run writes nothing
    if log_every is None:
        log_every = max(1, total_timesteps // 10)
    if command is None:
        command = train_command(
            env_id,
            algo,
            total_timesteps,
            num_envs,
            seed,
            out,
            vecnormalize,
            env_kwargs,
            algo_kwargs,
            checkpoint_every,
            init_model,
            residual,
            residual_scale,
            log_every,
            hyperparams,
            wall_time,
            (eval_every, eval_episodes, eval_seed),
        )
    run_meta = {
        "command": command,
        "algo": algo,
        "env_id": env_id,
        "env_kwargs": env_kwargs,
        "seed": seed,
        "num_envs": num_envs,
        "total_timesteps": total_timesteps,
        "hyperparams": hyperparams,
        "algo_kwargs": used_algo_kwargs(
            algo, model, build_kwargs, init_meta if init_model else None, hyperparams
        ),
        "algo_kwargs_given": algo_kwargs,
        "task_settings": task or None,
        "wall_time": wall_time,
        "eval": {"every": eval_every, "episodes": eval_episodes, "seed": eval_seed} if eval_every else None,
        "vecnormalize_kwargs": _vecnormalize_kwargs(env) if isinstance(env, VecNormalize) else None,
        "checkpoint_every": checkpoint_every,
        "log_every": log_every,
        "residual": {"base": residual, "scale": residual_scale} if residual is not None else None,
        "init_model": str(init_model) if init_model is not None else None,
        "versions": _versions(),
    }
    (out / "checkpoints").mkdir(exist_ok=True)  # the checkpoints' sidecar (read_model_meta)
    (out / "checkpoints" / f"{algo}.json").write_text(jsonio.dumps(run_meta))
    model.verbose = verbose
    tb_log = str(out / "tb") if tensorboard else None
    model.tensorboard_log = tb_log
    callbacks = [
        CheckpointCallback(
            save_freq=max(1, checkpoint_every // num_envs),
            save_path=str(out / "checkpoints"),
            name_prefix=algo,
            save_vecnormalize=vecnormalize,
        ),
        FinalMetricsCallback(metrics),
    ]
    clock = RunClock()
    log = TrainingLog(total_timesteps, log_every, metrics, window=_stats_window(model), clock=clock)
    if log_every > 0:
        callbacks.append(log)
    stop = tracker = None
    if wall_time is not None:
        stop = WallTimeStop(wall_time, clock)
        callbacks.append(stop)
    if eval_every:
        residual_meta = run_meta["residual"]
        tracker = TrainingEval(env_id, env_kwargs, eval_every, eval_episodes, eval_seed, clock, residual_meta)
        callbacks.append(tracker)
    budget = f", at most {wall_time:g} s" if wall_time is not None else ""
    print(
        f"training {algo.upper()} on {env_id}: {total_timesteps:,} steps{budget}, {num_envs} envs, "
        f"seed {seed} -> {out}"
    )
    start = model.num_timesteps
    clock.start()
    model.learn(
        total_timesteps=total_timesteps,
        callback=callbacks,
        progress_bar=progress_bar,
        tb_log_name=algo,
        reset_num_timesteps=init_model is None,
    )
    seconds = clock.seconds()

    model_path = out / f"{algo}.zip"
    model.save(model_path)
    vn_path = None
    if vecnormalize:
        vn_path = out / f"{algo}_vecnormalize.pkl"
        env.save(str(vn_path))
    stopped = "wall_time" if stop is not None and stop.stopped else "timesteps"
    meta = {
        **run_meta,
        "timesteps": int(model.num_timesteps),
        "seconds": round(seconds, 1),
        "eval_seconds": round(clock.paused, 1),
        "stopped": stopped,
        "vecnormalize": vn_path.name if vn_path else None,
    }
    model_path.with_suffix(".json").write_text(jsonio.dumps(meta))
    env.close()
    curve = {
        "env_id": env_id,
        "algo": algo,
        "seed": seed,
        "command": command,
        "stopped": stopped,
        "train": log.points,
        "eval": {**run_meta["eval"], "points": tracker.points} if tracker is not None else None,
    }
    (out / "curve.json").write_text(jsonio.dumps(curve))
    if log.points or tracker is not None:
        plots.learning_curve(curve, out / "learning_curve.png")
    steps = model.num_timesteps - start
    rate = steps / seconds
    why = f" (the wall-time budget of {wall_time:g} s)" if stopped == "wall_time" else ""
    print(
        f"trained {steps:,} steps in {seconds:.1f} s{why} ({rate:,.0f} steps/s, {model.num_timesteps:,} in "
        f"all); saved {model_path}"
    )
    return TrainResult(model_path, vn_path, seconds, int(model.num_timesteps))


def run_size(task: dict, timesteps: int | None, num_envs: int | None, vecnormalize: bool | None):
    """(timesteps, num_envs, vecnormalize) of a run: the caller's where given, else the task's
    own (`task`: its registration's training settings for the algorithm), else 1,000,000
    steps, 64 envs, no VecNormalize. `robodyn sweep` sizes its runs with it too."""
    given = {"timesteps": timesteps, "num_envs": num_envs, "vecnormalize": vecnormalize}
    return tuple(task.get(k, RUN_SIZE[k]) if v is None else v for k, v in given.items())


def train_command(
    env_id,
    algo,
    total_timesteps,
    num_envs,
    seed,
    out,
    vecnormalize,
    env_kwargs,
    algo_kwargs,
    checkpoint_every,
    init_model,
    residual,
    residual_scale,
    log_every,
    hyperparams="robodyn",
    wall_time=None,
    evaluation=(0, 64, 1000),
) -> str:
    """The `robodyn train` command line that runs train() with these arguments (`evaluation`:
    eval_every, eval_episodes, eval_seed)."""
    argv = ["robodyn", "train", env_id, "--algo", algo, "--timesteps", str(total_timesteps)]
    if hyperparams == "zoo":  # the Zoo's settings set num_envs and vecnormalize
        argv += ["--hyperparams", "zoo", "--seed", str(seed), "--out", str(out)]
    else:
        argv += ["--num-envs", str(num_envs), "--seed", str(seed), "--out", str(out)]
        argv += ["--vecnormalize"] if vecnormalize else ["--no-vecnormalize"]
    argv += ["--env-kwargs", jsonio.dumps(env_kwargs, indent=None).strip()] if env_kwargs else []
    argv += ["--algo-kwargs", jsonio.dumps(algo_kwargs, indent=None).strip()] if algo_kwargs else []
    argv += ["--checkpoint-every", str(checkpoint_every), "--log-every", str(log_every)]
    argv += ["--init", str(init_model)] if init_model is not None else []
    if residual is not None:
        argv += ["--residual", residual, "--residual-scale", repr(residual_scale)]
    argv += ["--wall-time", f"{wall_time:g}"] if wall_time is not None else []
    every, episodes, eval_seed = evaluation
    if every:
        argv += ["--eval-every", str(every), "--eval-episodes", str(episodes), "--eval-seed", str(eval_seed)]
    return shlex.join(argv)


def used_algo_kwargs(
    algo: str, model, given: dict, init_meta: dict | None, hyperparams: str = "robodyn"
) -> dict:
    """Every keyword of the algorithm's constructor (but those train() sets itself: policy,
    env, seed, device, verbose, tensorboard_log) with the value the run used. A new model: the
    constructor's default, overridden by train()'s defaults (PPO_DEFAULTS, SAC_DEFAULTS and
    their batch adjustments), overridden by `given`. A continued model (`init_meta`, its
    sidecar): the values its sidecar records, else those the loaded model holds, overridden by
    `given`. Values JSON cannot hold are written as text (a class by its dotted name)."""
    params = inspect.signature(type(model).__init__).parameters
    names = [k for k in params if k not in SET_BY_TRAIN and k != "self"]
    if init_meta is None:
        used = {k: params[k].default for k in names if params[k].default is not inspect.Parameter.empty}
        used.update(_new_model_kwargs(algo, model.n_envs, given, hyperparams))
    else:
        saved = init_meta.get("algo_kwargs")
        if isinstance(saved, dict):
            used = dict(saved)
        else:
            used = {k: _held_value(getattr(model, k)) for k in names if hasattr(model, k)}
        used.update(given)
    return {k: _jsonable(v) for k, v in used.items()}


def _held_value(value):
    """A hyperparameter as a loaded model holds it: a constant schedule (SB3 wraps numbers in
    schedules) as its number, anything else as it is."""
    if callable(value) and not isinstance(value, type):
        try:
            start, end = value(1.0), value(0.0)
        except Exception:  # not a schedule of the progress
            return value
        if isinstance(start, int | float) and start == end:
            return float(start)
    return value


def _jsonable(value):
    """`value` as JSON: containers element by element, numpy numbers as numbers, a class or a
    function by its dotted name, anything else by its repr."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, type) or inspect.isfunction(value):
        return f"{value.__module__}.{value.__qualname__}"
    return repr(value)


def _vecnormalize_kwargs(env: VecNormalize) -> dict:
    """The settings of a VecNormalize wrapper (what its constructor took)."""
    return {
        "norm_obs": bool(env.norm_obs),
        "norm_reward": bool(env.norm_reward),
        "clip_obs": float(env.clip_obs),
        "clip_reward": float(env.clip_reward),
        "gamma": float(env.gamma),
        "epsilon": float(env.epsilon),
    }


def _versions() -> dict:
    """The versions of Python and the libraries a run's result depends on."""
    return {
        "python": platform.python_version(),
        "stable_baselines3": stable_baselines3.__version__,
        "torch": torch.__version__,
        "gymnasium": gymnasium.__version__,
        "numpy": np.__version__,
    }


def max_episode_steps(env_id: str, env_kwargs: dict) -> int | None:
    """The episode length of the task's envs made with env_kwargs (None: no time limit)."""
    if env_kwargs.get("max_episode_steps") is not None:
        return env_kwargs["max_episode_steps"]
    return gymnasium.spec(env_id).max_episode_steps


def _stats_window(model) -> int:
    """The number of recent episodes SB3 averages its rollout statistics over (100 by default)."""
    return int(getattr(model, "_stats_window_size", 100))


def check_settings(
    env_id: str,
    algo: str,
    num_envs: int,
    env_kwargs: dict | None = None,
    algo_kwargs: dict | None = None,
    vecnormalize: bool = False,
) -> None:
    """Build the env and the new model train() would build from these settings, and close
    them: a TrainError for keywords the task or the algorithm refuses (a value out of range,
    a batch size that does not fit the rollout), found before any training runs."""
    algo = algo.lower()
    if algo not in ALGOS:
        raise TrainError(f"algo must be one of {ALGOS}, got {algo!r}")
    algo_kwargs = check_algo_kwargs(algo, algo_kwargs)
    task_kwargs = check_algo_kwargs(algo, training_settings(env_id, algo).get("algo_kwargs", {}))
    env = _make_env(env_id, num_envs, 0, None, dict(env_kwargs or {}), None)
    try:
        env, _ = _model(
            env_id, algo, env, num_envs, 0, vecnormalize, algo_kwargs, None, {}, "robodyn", task_kwargs
        )
    finally:
        env.close()


def _make_env(env_id, num_envs, seed, wrap, env_kwargs, nthread):
    """robogym.sb3.make_sb3_env of the run; a TrainError for env keywords the task refuses or
    a residual baseline it lacks."""
    kwargs = dict(env_kwargs)
    if nthread is not None:
        kwargs.setdefault("nthread", nthread)  # an nthread among the run's env keywords stands
    try:
        return make_sb3_env(env_id, num_envs, seed=seed, wrap=wrap, **kwargs)
    except ResidualError as e:
        raise TrainError(str(e)) from None
    except (ValueError, TypeError) as e:  # what the task's constructor raises for its keywords
        if not env_kwargs:
            raise  # no keyword of the caller's: a bug
        raise TrainError(f"{env_id} refused env_kwargs {env_kwargs}: {e}") from None


def _model(
    env_id,
    algo,
    env,
    num_envs,
    seed,
    vecnormalize,
    algo_kwargs,
    init_model,
    init_meta,
    hyperparams,
    task_kwargs=None,
):
    """(env, model): a new model of `algo` on env, or the saved `init_model` (with its
    VecNormalize statistics) onto it; env wrapped in VecNormalize if used. A TrainError for a
    model or statistics that do not load onto this task, or keywords the algorithm refuses.
    task_kwargs: the task's own algorithm keywords, under algo_kwargs (a new model only)."""
    task_kwargs = task_kwargs or {}
    merged = {**task_kwargs, **algo_kwargs}
    if init_meta.get("vecnormalize"):
        try:
            stats = load_vecnormalize(Path(init_model), init_meta["vecnormalize"])
            stats.set_venv(env)  # SB3 compares the observation shapes here
        except PolicyError as e:
            raise TrainError(f"init_model: {e}") from None
        except (ValueError, AssertionError) as e:
            raise TrainError(
                f"init_model {str(init_model)!r}: its VecNormalize statistics do not fit {env_id}: {e}"
            ) from None
        env = stats
        env.training = True
    elif vecnormalize:
        env = VecNormalize(env, norm_obs=True, norm_reward=True, gamma=_gamma(algo, merged))
    if init_model is not None:
        model = _load_init(Path(init_model), algo, env, algo_kwargs)
        model.set_random_seed(seed)
        return env, model
    kwargs = _new_model_kwargs(algo, num_envs, merged, hyperparams)
    cls = getattr(stable_baselines3, algo.upper())
    try:
        return env, cls("MlpPolicy", env, seed=seed, device="cpu", **kwargs)
    except (ValueError, TypeError, AssertionError, RuntimeError) as e:  # SB3's and torch's checks
        if not algo_kwargs and not task_kwargs:
            raise  # our own defaults: a bug, not a user error
        task = f" (over the task's own {task_kwargs})" if task_kwargs else ""
        raise TrainError(f"{algo.upper()} refused its settings {algo_kwargs}{task}: {e}") from None


def _new_model_kwargs(algo: str, num_envs: int, algo_kwargs: dict, hyperparams: str = "robodyn") -> dict:
    """The keywords a new model of `algo` is built with on `num_envs` envs: train()'s defaults
    (PPO's batch no larger than a rollout, SAC's gradient steps by the batch; none with the
    Zoo's settings, which algo_kwargs holds whole), then algo_kwargs; a policy activation
    named as text ("relu", "tanh") becomes torch's class."""
    kwargs = {}
    if hyperparams == "robodyn":
        kwargs = copy.deepcopy(PPO_DEFAULTS if algo == "ppo" else SAC_DEFAULTS)
        if algo == "ppo":
            kwargs["batch_size"] = min(kwargs["batch_size"], kwargs["n_steps"] * num_envs)
        else:
            kwargs["gradient_steps"] = max(1, num_envs // 8)
    kwargs.update(copy.deepcopy(algo_kwargs))
    policy = kwargs.get("policy_kwargs")
    if isinstance(policy, dict) and isinstance(policy.get("activation_fn"), str):
        name = policy["activation_fn"]
        if name not in ACTIVATIONS:
            names = sorted(ACTIVATIONS)
            raise TrainError(f"policy_kwargs' activation_fn must be one of {names}, got {name!r}")
        policy["activation_fn"] = ACTIVATIONS[name]
    return kwargs


def _load_init(path: Path, algo: str, env, algo_kwargs: dict):
    """The model to continue training, loaded onto env; a TrainError if it does not fit."""
    try:
        return load_sb3_model(path, [algo.upper()], env=env, custom_objects=algo_kwargs or None)
    except PolicyError as e:
        raise TrainError(f"init_model: {e}") from None


def check_algo_kwargs(algo: str, algo_kwargs) -> dict:
    """`algo_kwargs` (a dict of JSON values) checked against the algorithm's constructor: every
    key a keyword it takes (and not one train() sets itself), every value of the annotated
    type where a JSON value can be checked against it (numbers, booleans, strings, lists,
    objects, null). Ranges are left to the algorithm, which refuses them when it is built."""
    if algo_kwargs is None:
        return {}
    if not isinstance(algo_kwargs, dict):
        raise TrainError(f"algo_kwargs must be a dict of keywords, got {type(algo_kwargs).__name__}")
    cls = getattr(stable_baselines3, algo.upper())
    params = inspect.signature(cls.__init__).parameters
    takes = sorted(k for k in params if k not in SET_BY_TRAIN and k != "self")
    for key, value in algo_kwargs.items():
        if key in SET_BY_TRAIN:
            raise TrainError(f"{key} is set by train itself (its own argument), not through algo_kwargs")
        if key not in takes:
            raise TrainError(f"{algo.upper()} takes no keyword {key!r}; it takes: {', '.join(takes)}")
        annotation = params[key].annotation
        if not _json_fits(value, annotation):
            raise TrainError(f"{algo.upper()}'s {key} is {_type_name(annotation)}, got {value!r}")
    return dict(algo_kwargs)


def _json_fits(value, annotation) -> bool:
    """Whether a JSON value (None, bool, int, float, str, list, dict) can be of the annotated
    type; True for an annotation it cannot judge (unannotated, a forward reference, Any)."""
    if annotation is inspect.Parameter.empty or annotation is typing.Any or isinstance(annotation, str):
        return True
    origin = typing.get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        return any(_json_fits(value, a) for a in typing.get_args(annotation))
    if annotation is type(None):
        return value is None
    if annotation is bool:
        return isinstance(value, bool)
    if annotation is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if annotation is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if annotation is str:
        return isinstance(value, str)
    if annotation is dict or origin is dict:
        return isinstance(value, dict)
    if annotation in (list, tuple) or origin in (list, tuple):
        return isinstance(value, list)
    if origin is type or origin is collections.abc.Callable or isinstance(annotation, type):
        return False  # a class, a callable or an instance of a class: no JSON value is one
    return True


def _type_name(annotation) -> str:
    """An annotation in words, without the module paths: float | Callable[[float], float]."""
    union = typing.get_origin(annotation) in (typing.Union, types.UnionType)
    parts = typing.get_args(annotation) if union else (annotation,)
    return " | ".join(
        getattr(a, "__name__", None) or str(a).replace("collections.abc.", "").replace("typing.", "")
        for a in parts
    )


def _gamma(algo: str, algo_kwargs: dict | None) -> float:
    """The discount VecNormalize uses for returns: the algorithm's, as algo_kwargs set it."""
    defaults = PPO_DEFAULTS if algo == "ppo" else SAC_DEFAULTS
    return float((algo_kwargs or {}).get("gamma", defaults["gamma"]))
