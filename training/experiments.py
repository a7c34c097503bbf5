"""Experiments on any registered task, through the one rollout loop of training.evaluate.

- `run_scenario(task_id, scenario, policy, rows)`: a policy on one of the task's fixed
  scenarios (robogym.registration.TaskEntry.scenarios), one episode per row, every episode
  recorded step by step.
- `bracket_sweep(tuning, run)`: the gain sweep that brackets an optimum. The parameter runs
  over a geometric grid (crossed with the other parameters' values); while the best setting
  sits at an end of the grid, the grid is extended past that end, so that at the end a
  worse (or failing) setting lies on each side of the best: the trend reversed. Then the
  neighbourhood of the best is refined. A sweep stopped earlier would understate a baseline
  that is still improving at the edge of its grid.
- `tune(task_id, baseline)`: the task's declared Tuning of that baseline (envs.tuning.Tuning)
  run on its scenario, every setting a row of one batch, and the result
  stored with the command that made it (`robodyn tune`; envs/baselines/tuned/), where the
  baseline's factory reads its default gains.
"""

from __future__ import annotations

import datetime
import itertools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from robodyn.envs.baselines.tuned import tuned_path
from robodyn.training import jsonio
from robodyn.training.evaluate import EvalResults, evaluate
from robogym import registration
from robogym.errors import InvalidArgumentError


def run_scenario(task_id: str, scenario: str, policy, rows: int, seed: int = 0) -> EvalResults:
    """`rows` episodes of `policy` (anything training.evaluate.make_policy takes, or a
    callable env -> Policy) on the task's fixed scenario, all at once and all recorded."""
    entry = registration.entry(task_id)
    if scenario not in entry.scenarios:
        known = ", ".join(entry.scenarios) or "none"
        raise InvalidArgumentError(f"{task_id} has no scenario {scenario!r} (its scenarios: {known})")
    kwargs = dict(entry.scenarios[scenario])
    return evaluate(task_id, policy, episodes=rows, num_envs=rows, seed=seed, env_kwargs=kwargs, record=rows)


@dataclass
class SweepResult:
    """Every setting tried (rows: its parameters, final metrics and `counts`), the best, the
    final coarse grid, and whether the best is interior to it (the trend reversed)."""

    rows: list[dict]
    best: dict
    grid: np.ndarray
    bracketed: bool


def _settings(tuning, values: np.ndarray) -> list[dict]:
    """Every combination of the swept values with the crossed parameters' values."""
    names = [name for name, _ in tuning.cross]
    out = []
    for combo in itertools.product(*(v for _, v in tuning.cross)):
        for value in values:
            out.append({tuning.parameter: float(value), **dict(zip(names, combo, strict=True))})
    return out


def _best(rows: list[dict], tuning) -> dict:
    counted = [r for r in rows if r["counts"]]
    if not counted:
        raise InvalidArgumentError(
            f"no setting of the sweep meets {tuning.require} < {tuning.require_below}: widen the "
            f"{tuning.parameter} grid"
        )
    return min(counted, key=lambda r: r[tuning.minimize])


def bracket_sweep(tuning, run: Callable[[list[dict]], list[dict]]) -> SweepResult:
    """The sweep of the module docstring. run(settings) -> one row per setting with (at
    least) the final `minimize` and `require` metrics."""

    def rows_of(settings):
        rows = run(settings)
        for r in rows:
            r["counts"] = bool(r[tuning.require] < tuning.require_below)
        return rows

    grid = np.geomspace(tuning.start, tuning.stop, tuning.points)
    ratio = grid[1] / grid[0]
    extra = math.ceil(math.log(2.0) / math.log(ratio))  # an extension doubles the range
    bracketed = False
    for _ in range(tuning.max_extensions + 1):
        rows = rows_of(_settings(tuning, grid))
        best = _best(rows, tuning)
        at_low, at_high = best[tuning.parameter] == grid[0], best[tuning.parameter] == grid[-1]
        bracketed = not (at_low or at_high)
        if bracketed:
            break
        if at_high:
            grid = np.concatenate([grid, grid[-1] * ratio ** np.arange(1, extra + 1)])
        else:
            grid = np.concatenate([grid[0] * ratio ** np.arange(-extra, 0), grid])
    # refine between the best's neighbours, the crossed parameters held at the best's values
    centre = best[tuning.parameter]
    fine_values = np.geomspace(centre / ratio, centre * ratio, tuning.refine)
    held = replace(tuning, cross=tuple((name, (best[name],)) for name, _ in tuning.cross))
    rows = rows + rows_of(_settings(held, fine_values))
    return SweepResult(rows=rows, best=_best(rows, tuning), grid=grid, bracketed=bracketed)


def _sweep_runner(task_id: str, baseline: str, tuning) -> Callable[[list[dict]], list[dict]]:
    """run(settings): one batch on the tuning's scenario, `tuning.episodes` rows per setting
    running the baseline with it (its factory takes each parameter as a (B, 1) array), and
    the mean over those rows of every task metric's final value."""
    factory = registration.load(registration.entry(task_id).baselines[baseline])

    n = tuning.episodes

    def run(settings: list[dict]) -> list[dict]:
        # setting i runs as rows i n .. i n + n - 1 (seeds 0 .. n - 1 past its first row's)
        params = {k: np.repeat([s[k] for s in settings], n)[:, None] for k in settings[0]}
        results = run_scenario(
            task_id, tuning.scenario, lambda env: factory(env, **params), n * len(settings)
        )
        finals = [e["final"] for e in results.episodes]
        rows = []
        for i, s in enumerate(settings):
            block = finals[i * n : (i + 1) * n]
            rows.append(dict(s, **{k: float(np.mean([f[k] for f in block])) for k in block[0]}))
        return rows

    return run


def tune(task_id: str, baseline: str) -> dict:
    """Run the task's declared Tuning of `baseline` and return the record `robodyn tune`
    stores: the best parameters (to the tuning's significant figures), the command, the
    sweep's rows, grid and whether it bracketed the best."""
    entry = registration.entry(task_id)
    if baseline not in entry.tuning:
        known = ", ".join(entry.tuning) or "none"
        raise InvalidArgumentError(
            f"{task_id} declares no tuning for {baseline!r} (tuned baselines: {known})"
        )
    tuning = entry.tuning[baseline]
    t0 = time.perf_counter()
    result = bracket_sweep(tuning, _sweep_runner(task_id, baseline, tuning))
    names = [tuning.parameter, *(name for name, _ in tuning.cross)]
    return {
        "task": task_id,
        "baseline": baseline,
        "command": f"robodyn tune {task_id} {baseline}",
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "seconds": round(time.perf_counter() - t0, 1),
        "parameters": {k: _significant(result.best[k], tuning.digits) for k in names},
        "minimize": tuning.minimize,
        "require": f"{tuning.require} < {tuning.require_below}",
        "scenario": tuning.scenario,
        "bracketed": result.bracketed,
        "grid": [float(v) for v in result.grid],
        "best": _plain(result.best),
        "rows": [_plain(r) for r in result.rows],
    }


def _significant(x: float, digits: int) -> float:
    return float(f"{x:.{digits}g}")


def _plain(row: dict) -> dict:
    return {k: (bool(v) if isinstance(v, bool | np.bool_) else float(v)) for k, v in row.items()}


def write_tuning(record: dict, path: Path | None = None) -> Path:
    """Store a tune() record (by default where the baseline reads it)."""
    path = Path(path) if path is not None else tuned_path(record["task"], record["baseline"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(jsonio.dumps(record, indent=1))  # strict JSON: a NaN metric is written as null
    return path
