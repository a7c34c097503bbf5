"""Training sweeps: one training per combination of seeds and algorithm settings, each trained
and evaluated as `robodyn train` and `robodyn eval` do, one after another here or as Ray tasks.

    robodyn sweep RoboDyn/Crane-v0 --algo ppo --seeds 0..4 --set learning_rate=1e-4,3e-4 --ray

The results directory (--out) holds one run directory per combination and the summary:

    sweep.json                 settings, every run's final evaluation, and per setting the mean
                               and spread (sample standard deviation, min, max) across seeds
    <run>/                     what training.train writes: <algo>.zip, <algo>.json (sidecar),
                               <algo>_vecnormalize.pkl, checkpoints/, tb/ (TensorBoard)
    <run>/eval/results.json    the final model evaluated, as `robodyn eval` writes results.json

A run is named after its settings and seed (`seed3`, `learning_rate=0.0001-seed3`).

A run trains and evaluates inside a temporary directory of whatever machine runs it and
returns its files' bytes; the driver writes them under --out once the run has finished. So a
cluster needs no shared file system, and a run whose worker dies (its process killed, its
node lost) leaves nothing behind: it is started again from the beginning, elsewhere if Ray
finds room elsewhere, and its directory holds only the run that finished.
"""

from __future__ import annotations

import itertools
import json
import math
import re
import socket
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from robodyn.engine.errors import InvalidArgumentError, RoboDynError
from robodyn.training import jsonio
from robodyn.training.cluster import WorkerLostError, connected, lost_worker_errors


class SweepError(RoboDynError, ValueError):
    """A sweep's seeds or settings that cannot be read."""


@dataclass(frozen=True)
class SweepConfig:
    """What every run of a sweep shares: the training (training.train's arguments) and its
    final evaluation (training.evaluate's)."""

    env_id: str
    algo: str = "ppo"
    timesteps: int = 1_000_000
    num_envs: int = 64
    vecnormalize: bool = False
    env_kwargs: dict = field(default_factory=dict)
    algo_kwargs: dict = field(default_factory=dict)
    checkpoint_every: int = 200_000
    eval_episodes: int = 16
    eval_num_envs: int = 16
    eval_seed: int = 1000


@dataclass(frozen=True)
class Run:
    """One training of a sweep: its directory name, seed and algorithm settings."""

    name: str
    seed: int
    settings: dict


# --- reading seeds and settings ----------------------------------------------------------------
MAX_SEEDS = 1000  # seeds in one sweep: each is a whole training run


def parse_seeds(text: str) -> list[int]:
    """Seeds from "0..4" (0 to 4 inclusive), "0,3,7", or a mix ("0..2,10"); each >= 0, once."""
    seeds: list[int] = []
    for item in text.split(","):
        m = re.fullmatch(r"\s*(\d+)\s*(?:\.\.\s*(\d+)\s*)?", item)
        if not m:
            raise SweepError(f"--seeds: {item.strip()!r} is not a seed (>= 0) or a range A..B, in {text!r}")
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        if hi < lo:
            raise SweepError(f"--seeds: the range {lo}..{hi} is empty (A..B runs from A up to B)")
        if hi >= 2**32:
            raise SweepError(
                f"--seeds: seed {hi} is too large: seeds run from 0 to 2**32 - 1 (numpy's and SB3's)"
            )
        if len(seeds) + hi - lo + 1 > MAX_SEEDS:
            raise SweepError(f"--seeds: {text!r} names more than {MAX_SEEDS} seeds (one training run each)")
        seeds += range(lo, hi + 1)
    repeated = sorted({s for s in seeds if seeds.count(s) > 1})
    if repeated:
        raise SweepError(f"--seeds: seed {repeated[0]} appears twice in {text!r}")
    return seeds


def parse_setting(text: str) -> tuple[str, list]:
    """(keyword, values) from "KEY=V1,V2,...": each value JSON (1e-4, 64, true, "tanh",
    {"net_arch": [64, 64]}); the values are read as the JSON list [V1,V2,...]."""
    key, sep, values = text.partition("=")
    key = key.strip()
    if not sep or not re.fullmatch(r"[A-Za-z_]\w*", key):
        raise SweepError(f"--set: {text!r} is not KEY=V1,V2,... (an algorithm keyword and its values)")
    try:
        parsed = jsonio.loads(f"[{values}]", f"--set {key}")
    except jsonio.JSONInputError as e:
        raise SweepError(f"{e} (string values are JSON strings: --set {key}='\"text\"')") from None
    if not parsed:
        raise SweepError(f"--set {key}: give at least one value, e.g. --set {key}=1,2")
    return key, parsed


def make_runs(seeds: list[int], grid: dict[str, list]) -> list[Run]:
    """A Run for every combination of the grid's values (keys in order) and every seed."""
    runs = []
    names: set[str] = set()
    for values in itertools.product(*grid.values()):
        settings = dict(zip(grid, values, strict=True))
        for seed in seeds:
            name = _unique(_run_name(settings, seed), names)
            names.add(name)
            runs.append(Run(name, seed, settings))
    return runs


def _run_name(settings: dict, seed: int) -> str:
    """KEY=VALUE-...-seedS, with characters a file name should not hold made `_`."""
    parts = [f"{k}={compact_json(v)}" for k, v in settings.items()]
    return re.sub(r"[^\w.=+-]", "_", "-".join([*parts, f"seed{seed}"]))


def compact_json(value) -> str:
    """A setting's value as JSON without spaces: 0.0001, true, {"net_arch":[64,64]}."""
    return json.dumps(jsonio.plain(value), separators=(",", ":"), allow_nan=False)


def _unique(name: str, taken: set[str]) -> str:
    """`name`, or name~2, name~3, ... if another run has it (values that differ only in
    characters a name drops)."""
    candidate, i = name, 1
    while candidate in taken:
        i += 1
        candidate = f"{name}~{i}"
    return candidate


# --- one run -----------------------------------------------------------------------------------
def train_and_evaluate(config: SweepConfig, run: Run, nthread: int | None = None) -> dict:
    """Train `run` (training.train) and evaluate its final model (training.evaluate) in a
    temporary directory; return its files' bytes by relative path, and its numbers. nthread:
    the engine's threads for the training (default one per core)."""
    from robodyn.training.evaluate import evaluate, results_document
    from robodyn.training.train import train

    if nthread is not None:  # torch too keeps to the run's CPUs (see training.distributed)
        import torch

        torch.set_num_threads(nthread)
    with tempfile.TemporaryDirectory(prefix="robodyn-sweep-") as tmp:
        out = Path(tmp) / run.name
        trained = train(
            config.env_id,
            algo=config.algo,
            total_timesteps=config.timesteps,
            num_envs=config.num_envs,
            seed=run.seed,
            out_dir=out,
            vecnormalize=config.vecnormalize,
            env_kwargs=config.env_kwargs,
            algo_kwargs={**config.algo_kwargs, **run.settings},
            checkpoint_every=config.checkpoint_every,
            progress_bar=False,
            nthread=nthread,
        )
        spec = str(trained.model_path)
        result = evaluate(
            config.env_id,
            spec,
            episodes=config.eval_episodes,
            num_envs=config.eval_num_envs,
            seed=config.eval_seed,
            env_kwargs=config.env_kwargs,
            record=0,
        )
        doc = results_document(
            config.env_id,
            config.env_kwargs,
            config.eval_episodes,
            config.eval_num_envs,
            config.eval_seed,
            [result],
            [Path(spec).name],
        )
        (out / "eval").mkdir()
        (out / "eval" / "results.json").write_text(jsonio.dumps(doc))
        files = {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    return {
        "name": run.name,
        "files": files,
        "timesteps": trained.timesteps,
        "train_seconds": round(trained.seconds, 1),
        "host": socket.gethostname(),
        "summary": result.summary(),
    }


def write_run(out: Path, outcome: dict) -> Path:
    """Write a finished run's files under out/<name>/; returns that directory."""
    folder = Path(out) / outcome["name"]
    for rel, data in outcome["files"].items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return folder


# --- the sweep ---------------------------------------------------------------------------------
def run_sweep(
    config: SweepConfig,
    runs: list[Run],
    out: str | Path,
    ray_address: str | None = None,
    use_ray: bool = False,
    cpus_per_run: int = 1,
    max_attempts: int = 3,
    log=print,
) -> dict:
    """Every run, trained, evaluated and written under `out` as it finishes, then the summary
    (sweep.json, returned). use_ray: each run a Ray task of `cpus_per_run` CPUs (the engine
    steps on as many threads) on the cluster at `ray_address` (training.cluster.connected),
    a run whose worker died started again, at most `max_attempts` times in all (then a
    WorkerLostError); else one run after another in this process."""
    out = Path(out)
    t0 = time.perf_counter()
    if use_ray:
        outcomes, reruns = _run_on_ray(config, runs, out, ray_address, cpus_per_run, max_attempts, log)
        on_ray = {"address": ray_address, "cpus_per_run": cpus_per_run, "reruns": reruns}
    else:
        outcomes, on_ray = [], None
        for run in runs:
            log(f"run {run.name}: training {config.algo.upper()} for {config.timesteps:,} steps ...")
            outcomes.append(train_and_evaluate(config, run))
            _report(out, outcomes[-1], log)
    summary = summarize(config, runs, outcomes, time.perf_counter() - t0, on_ray)
    out.mkdir(parents=True, exist_ok=True)
    (out / "sweep.json").write_text(jsonio.dumps(summary))
    return summary


def _run_on_ray(config, runs, out, address, cpus_per_run, max_attempts, log) -> tuple[list[dict], int]:
    """(each run's outcome in run order, the number of runs started again): every run a Ray
    task, written as it finishes; a run whose worker died is submitted again."""
    if cpus_per_run < 1 or max_attempts < 1:
        raise InvalidArgumentError(
            f"cpus_per_run and max_attempts must be >= 1, got {cpus_per_run}, {max_attempts}"
        )
    with connected(address) as ray:
        task = ray.remote(num_cpus=cpus_per_run, max_retries=0)(train_and_evaluate)
        lost = lost_worker_errors(ray)
        config_ref = ray.put(config)
        pending = {task.remote(config_ref, run, cpus_per_run): i for i, run in enumerate(runs)}
        log(f"{len(runs)} runs submitted to Ray, {cpus_per_run} CPU each ...")
        attempts = [1] * len(runs)
        outcomes: dict[int, dict] = {}
        reruns = 0
        while pending:
            [ref], _ = ray.wait(list(pending), num_returns=1)
            i = pending.pop(ref)
            try:
                outcome = ray.get(ref)
            except lost as e:
                if attempts[i] >= max_attempts:
                    raise WorkerLostError(
                        f"run {runs[i].name} lost its worker {attempts[i]} times (last: {type(e).__name__})"
                    ) from None
                attempts[i] += 1
                reruns += 1
                log(f"run {runs[i].name}: its worker died ({type(e).__name__}); starting it again")
                pending[task.remote(config_ref, runs[i], cpus_per_run)] = i
                continue
            outcomes[i] = outcome
            _report(out, outcome, log)
    return [outcomes[i] for i in range(len(runs))], reruns


def _report(out: Path, outcome: dict, log) -> None:
    """Write a finished run and say so, with its evaluation's headline numbers."""
    folder = write_run(out, outcome)
    s = outcome["summary"]
    success = "" if s["success_rate"] is None else f", success {100 * s['success_rate']:.0f}%"
    log(
        f"run {outcome['name']} done: trained in {outcome['train_seconds']:.1f} s on {outcome['host']}, "
        f"mean return {s['mean_return']:.2f}{success} -> {folder}"
    )


# --- the summary -------------------------------------------------------------------------------
def summarize(config: SweepConfig, runs: list[Run], outcomes: list[dict], seconds: float, on_ray) -> dict:
    """sweep.json: the configuration, each run's evaluation, and per setting (the grid's
    combinations, in run order) the mean and spread across its seeds."""
    rows = []
    for run, outcome in zip(runs, outcomes, strict=True):
        s = outcome["summary"]
        rows.append(
            {
                "name": run.name,
                "seed": run.seed,
                "settings": run.settings,
                "timesteps": outcome["timesteps"],
                "train_seconds": outcome["train_seconds"],
                "host": outcome["host"],
                "mean_return": s["mean_return"],
                "std_return": s["std_return"],
                "success_rate": s["success_rate"],
                "evaluation": s,
            }
        )
    groups = []
    for settings, members in _by_settings(rows):
        groups.append(
            {
                "settings": settings,
                "runs": [r["name"] for r in members],
                "seeds": [r["seed"] for r in members],
                "mean_return": spread([r["mean_return"] for r in members]),
                "success_rate": spread([r["success_rate"] for r in members]),
            }
        )
    grid: dict[str, list] = {}
    for run in runs:
        for k, v in run.settings.items():
            if v not in grid.setdefault(k, []):
                grid[k].append(v)
    return {
        "config": asdict(config),
        "seeds": list(dict.fromkeys(run.seed for run in runs)),
        "grid": grid,
        "seconds": round(seconds, 1),
        "ray": on_ray,
        "runs": rows,
        "across_seeds": groups,
    }


def _by_settings(rows: list[dict]) -> list[tuple[dict, list[dict]]]:
    """The rows grouped by their settings, groups and members in first-seen order."""
    groups: list[tuple[dict, list[dict]]] = []
    for row in rows:
        for settings, members in groups:
            if settings == row["settings"]:
                members.append(row)
                break
        else:
            groups.append((row["settings"], [row]))
    return groups


def spread(values: list) -> dict | None:
    """mean, sample standard deviation (None for one value), min and max of `values`;
    None if any is None (a task without success) or not finite."""
    if any(v is None or not math.isfinite(v) for v in values):
        return None
    x = np.asarray(values, dtype=np.float64)
    std = float(x.std(ddof=1)) if len(x) > 1 else None
    return {"mean": float(x.mean()), "std": std, "min": float(x.min()), "max": float(x.max())}
