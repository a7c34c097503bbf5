"""Train PPO or SAC (stable-baselines3) on a RoboDyn task, on the native vector env.

    from training.train import train
    result = train("RoboDyn/Crane-v0", algo="ppo", total_timesteps=1_000_000, out_dir="runs/crane")

or `robodyn train RoboDyn/Crane-v0 --algo ppo --timesteps 1000000 --num-envs 64 --out runs/crane`.

The environment is `robogym.sb3.make_sb3_env`: one RoboDynVectorEnv (SAME_STEP autoreset)
behind the SB3 adapter and VecMonitor, optionally VecNormalize. The output directory gets:

    <algo>.zip                the final model (default MLP policy)
    <algo>.json               sidecar: algorithm, env id and kwargs, VecNormalize file, timing
    <algo>_vecnormalize.pkl   VecNormalize statistics (with --vecnormalize)
    checkpoints/              CheckpointCallback snapshots (and their VecNormalize statistics)
    tb/                       TensorBoard logs, with rollout/final_<metric> per task metric
"""

from __future__ import annotations

import copy
import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback, CheckpointCallback
from stable_baselines3.common.vec_env import VecNormalize

from robogym.sb3 import make_sb3_env, task_metric_names
from training.evaluate import read_model_meta

ALGOS = ("ppo", "sac")

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


def train(
    env_id: str,
    algo: str = "ppo",
    total_timesteps: int = 1_000_000,
    num_envs: int = 64,
    seed: int = 0,
    out_dir: str | Path = "runs/train",
    vecnormalize: bool = False,
    env_kwargs: dict | None = None,
    algo_kwargs: dict | None = None,
    checkpoint_every: int = 200_000,
    progress_bar: bool = True,
    tensorboard: bool = True,
    verbose: int = 0,
    init_model: str | Path | None = None,
) -> TrainResult:
    """Train `algo` ("ppo" or "sac", default MLP policy) for `total_timesteps` environment
    steps on `num_envs` rows of one RoboDyn vector env; save the model, the sidecar JSON, the
    VecNormalize statistics (if used), checkpoints every `checkpoint_every` steps and
    TensorBoard logs under `out_dir`. Prints and returns the training time.

    init_model: continue training a saved model (its algorithm and VecNormalize statistics
    come from its sidecar) for `total_timesteps` more steps; algo_kwargs then override saved
    hyperparameters (e.g. learning_rate)."""
    import stable_baselines3

    init_meta: dict = {}
    if init_model is not None:
        init_meta = read_model_meta(Path(init_model))
        algo = init_meta.get("algo", algo)
        vecnormalize = vecnormalize or bool(init_meta.get("vecnormalize"))
    algo = algo.lower()
    if algo not in ALGOS:
        raise ValueError(f"algo must be one of {ALGOS}, got {algo!r}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    env_kwargs = dict(env_kwargs or {})
    env = make_sb3_env(env_id, num_envs, seed=seed, **env_kwargs)
    metrics = task_metric_names(env.unwrapped.vec_env)
    if init_meta.get("vecnormalize"):
        env = VecNormalize.load(str(Path(init_model).parent / init_meta["vecnormalize"]), env)
        env.training = True
    elif vecnormalize:
        env = VecNormalize(env, norm_obs=True, norm_reward=True, gamma=_gamma(algo, algo_kwargs))

    kwargs = copy.deepcopy(PPO_DEFAULTS if algo == "ppo" else SAC_DEFAULTS)
    if algo == "ppo":
        kwargs["batch_size"] = min(kwargs["batch_size"], kwargs["n_steps"] * num_envs)
    else:
        kwargs["gradient_steps"] = max(1, num_envs // 8)
    kwargs.update(algo_kwargs or {})
    cls = getattr(stable_baselines3, algo.upper())
    tb_log = str(out / "tb") if tensorboard else None
    if init_model is not None:
        model = cls.load(
            init_model, env=env, device="cpu", custom_objects=algo_kwargs or None, verbose=verbose
        )
        model.tensorboard_log = tb_log
        model.set_random_seed(seed)
    else:
        model = cls(
            "MlpPolicy", env, seed=seed, device="cpu", verbose=verbose, tensorboard_log=tb_log, **kwargs
        )
    callbacks = [
        CheckpointCallback(
            save_freq=max(1, checkpoint_every // num_envs),
            save_path=str(out / "checkpoints"),
            name_prefix=algo,
            save_vecnormalize=vecnormalize,
        ),
        FinalMetricsCallback(metrics),
    ]
    print(
        f"training {algo.upper()} on {env_id}: {total_timesteps:,} steps, {num_envs} envs, "
        f"seed {seed} -> {out}"
    )
    start = model.num_timesteps
    t0 = time.perf_counter()
    model.learn(
        total_timesteps=total_timesteps,
        callback=callbacks,
        progress_bar=progress_bar,
        tb_log_name=algo,
        reset_num_timesteps=init_model is None,
    )
    seconds = time.perf_counter() - t0

    model_path = out / f"{algo}.zip"
    model.save(model_path)
    vn_path = None
    if vecnormalize:
        vn_path = out / f"{algo}_vecnormalize.pkl"
        env.save(str(vn_path))
    meta = {
        "algo": algo,
        "env_id": env_id,
        "env_kwargs": env_kwargs,
        "num_envs": num_envs,
        "seed": seed,
        "timesteps": int(model.num_timesteps),
        "seconds": round(seconds, 1),
        "vecnormalize": vn_path.name if vn_path else None,
        "init_model": str(init_model) if init_model is not None else None,
    }
    model_path.with_suffix(".json").write_text(json.dumps(meta, indent=2) + "\n")
    env.close()
    steps = model.num_timesteps - start
    rate = steps / seconds
    print(
        f"trained {steps:,} steps in {seconds:.1f} s ({rate:,.0f} steps/s, {model.num_timesteps:,} in all); "
        f"saved {model_path}"
    )
    return TrainResult(model_path, vn_path, seconds, int(model.num_timesteps))


def _gamma(algo: str, algo_kwargs: dict | None) -> float:
    """The discount VecNormalize uses for returns: the algorithm's, as algo_kwargs set it."""
    defaults = PPO_DEFAULTS if algo == "ppo" else SAC_DEFAULTS
    return float((algo_kwargs or {}).get("gamma", defaults["gamma"]))
