"""PNG plots of evaluation results (matplotlib's Agg canvas, no display needed).

- `plot_trajectories`: observation components, task metrics and action components against
  time, one line per policy (its first recorded episode), panels titled with the task's
  observation names and the joints the action drives. Components constant in every policy's
  run (e.g. the payload's y) are left out, and at most MAX_PANELS are drawn: all of them when
  they fit (the crane, the rocket), else the task's declared `key_signals` (a class attribute
  of its Task: names of observation components, metrics or actions, in the order to draw), else
  its metrics, then the first observation and the first action components in turn (the
  humanoid's 77 signals would be 26 rows of panels; every one stays in trajectories.npz).
- `plot_metrics`: every task metric against time, one line per policy (its first recorded
  episode), on a log axis when the policies' typical (median) values lie decades apart: how
  each controller's error evolves (for the tracking task, rms_error is the score so far and
  tracking_error the error now).
- `plot_final_metrics`: per task metric, a bar per policy with the mean value at the end of
  the episodes (whiskers: min and max), on a log axis when the bars span decades; for the
  crane, swing_amplitude is the residual swing and position_error the final position error.
- `learning_curve`: a training run's curve (training.train's `curve.json`): the mean return,
  and the success rate where the task reports one, against training seconds (left) and
  environment steps (right); the training episodes' statistics (the progress lines: the last
  100 episodes, stochastic actions) and, where the run evaluated, the deterministic
  evaluations'.
"""

from __future__ import annotations

import importlib
import math
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from robodyn.training.evaluate import EvalResults
from robogym.errors import InvalidArgumentError

COLUMNS = 3
MAX_PANELS = 12  # panels of plot_trajectories: four rows
ACTION = "action: "  # the title prefix of an action component's panel


def plot_trajectories(results: list[EvalResults], path: str | Path, episode: int = 0) -> Path:
    """Trajectory panels comparing the policies on recorded episode `episode`."""
    runs = [(r, _trajectory(r, episode)) for r in results]
    runs = [(r, t) for r, t in runs if t is not None]
    if not runs:
        raise InvalidArgumentError(f"no policy recorded episode {episode}; evaluate with record > {episode}")
    first = runs[0][0]
    panels = []  # (kind, title, [(policy, t, y)])
    for i, name in enumerate(first.obs_names):
        panels.append(("obs", name, [(r.policy, t.time, t.obs[:, i]) for r, t in runs]))
    for m in first.metric_names:
        panels.append(("metric", m, [(r.policy, t.time, t.metrics[m]) for r, t in runs]))
    for i, name in enumerate(first.action_names):
        panels.append(
            ("action", f"{ACTION}{name}", [(r.policy, t.time[:-1], t.actions[:, i]) for r, t in runs])
        )
    panels = [p for p in panels if any(np.ptp(y) > 1e-9 for _, _, y in p[2])]
    total = len(panels)
    panels = select_panels(panels, key_signals(first.env_id))

    rows = math.ceil(len(panels) / COLUMNS)
    fig = Figure(figsize=(5.0 * COLUMNS, 2.8 * rows), layout="constrained")
    axes = fig.subplots(rows, COLUMNS, squeeze=False).ravel()
    for ax, (_, title, lines) in zip(axes, panels, strict=False):
        for policy, x, y in lines:
            ax.plot(x, y, label=policy, lw=1.2)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("time (s)", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
    for ax in axes[len(panels) :]:
        ax.set_axis_off()
    axes[0].legend(fontsize=8)
    shown = "" if len(panels) == total else f"; {len(panels)} of its {total} changing signals"
    fig.suptitle(f"{first.env_id}: episode {episode} ({_kwargs_text(first.env_kwargs)}{shown})", fontsize=10)
    return _save(fig, path)


def key_signals(env_id: str) -> tuple[str, ...] | None:
    """The `key_signals` the task of `env_id` declares (a class attribute of its Task: names of
    observation components, metrics, or actions with or without the "action: " prefix), or
    None: an unknown task or one that declares none."""
    from robogym.registration import TASKS

    entry = next((t for t in TASKS if t.id == env_id), None)
    if entry is None:
        return None
    module, _, name = entry.entry_point.partition(":")
    try:
        task_class = getattr(importlib.import_module(module), name).task_class
    except (ImportError, AttributeError):
        return None
    signals = getattr(task_class, "key_signals", None)
    return tuple(signals) if signals else None


def select_panels(panels: list, declared: tuple[str, ...] | None = None) -> list:
    """At most MAX_PANELS of `panels` ((kind, title, lines), kind "obs", "metric" or "action",
    an action's title "action: NAME"): all when they fit; else the `declared` ones, in their
    order (a name that is both an observation component and a metric, as the humanoid's
    head_height, is the observation's); else the metrics, then the first observation and
    action components in turn."""
    if len(panels) <= MAX_PANELS:
        return panels
    if declared:
        by_title: dict = {}
        for p in panels:
            by_title.setdefault(p[1], p)
        chosen = []
        for name in declared:
            p = by_title.get(name) or by_title.get(f"{ACTION}{name}")
            if p is not None and p not in chosen:
                chosen.append(p)
        if chosen:
            return chosen[:MAX_PANELS]
    chosen = [p for p in panels if p[0] == "metric"][:MAX_PANELS]
    obs = [p for p in panels if p[0] == "obs"]
    actions = [p for p in panels if p[0] == "action"]
    for k in range(max(len(obs), len(actions))):
        for group in (obs, actions):
            if k < len(group) and len(chosen) < MAX_PANELS:
                chosen.append(group[k])
    return chosen


def plot_metrics(results: list[EvalResults], path: str | Path, episode: int = 0) -> Path:
    """One panel per task metric against time, a line per policy, on recorded episode `episode`."""
    runs = [(r, _trajectory(r, episode)) for r in results]
    runs = [(r, t) for r, t in runs if t is not None]
    if not runs:
        raise InvalidArgumentError(f"no policy recorded episode {episode}; evaluate with record > {episode}")
    first = runs[0][0]
    metrics = first.metric_names
    rows = math.ceil(len(metrics) / COLUMNS)
    cols = min(COLUMNS, len(metrics))
    fig = Figure(figsize=(5.0 * cols, 3.2 * rows), layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False).ravel()
    for ax, m in zip(axes, metrics, strict=False):
        medians, lows = [], []
        for r, t in runs:
            y = t.metrics[m]
            ax.plot(t.time, y, label=r.policy, lw=1.2)
            medians.append(np.median(y))
            lows.append(np.percentile(y[y > 0], 1) if np.any(y > 0) else np.inf)
        medians = np.array(medians)
        if np.all(medians > 0) and medians.max() / medians.min() > 10:
            # a value <= 0 (an exact start) is left out of the line; an exact start's tiny value
            # (a rounding error) below the axis
            ax.set_yscale("log")
            ax.set_ylim(bottom=0.5 * min(lows))
        ax.set_title(m, fontsize=9)
        ax.set_xlabel("time (s)", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3, which="both")
    for ax in axes[len(metrics) :]:
        ax.set_axis_off()
    axes[0].legend(fontsize=8)
    fig.suptitle(
        f"{first.env_id}: task metrics, episode {episode} ({_kwargs_text(first.env_kwargs)})", fontsize=10
    )
    return _save(fig, path)


def plot_final_metrics(results: list[EvalResults], path: str | Path) -> Path:
    """Bar chart per task metric: mean final value per policy, whiskers from min to max."""
    if not results:
        raise InvalidArgumentError("no results to plot")
    metrics = results[0].metric_names
    fig = Figure(figsize=(4.2 * len(metrics), 3.6), layout="constrained")
    axes = fig.subplots(1, len(metrics), squeeze=False).ravel()
    x = np.arange(len(results))
    labels = []
    for r in results:
        s = r.summary()["success_rate"]
        labels.append(r.policy if s is None else f"{r.policy}\n(success {100 * s:.0f}%)")
    for ax, m in zip(axes, metrics, strict=True):
        raw = [np.array([e["final"][m] for e in r.episodes], dtype=float) for r in results]
        values = [v[np.isfinite(v)] for v in raw]  # a NaN or inf episode is counted, not drawn
        mean = np.array([v.mean() if v.size else 0.0 for v in values])
        # whiskers >= 0: the mean of equal values can round below or above them
        lo = np.maximum(mean - np.array([v.min() if v.size else 0.0 for v in values]), 0.0)
        hi = np.maximum(np.array([v.max() if v.size else 0.0 for v in values]) - mean, 0.0)
        ax.bar(x, mean, yerr=[lo, hi], capsize=4, color=[f"C{i}" for i in range(len(results))])
        for xi, yi, v, w in zip(x, mean, values, raw, strict=True):
            bad = f" ({len(w) - len(v)} not finite)" if len(v) < len(w) else ""
            ax.annotate(f" {yi:.3g}{bad}", (xi, yi), ha="left", va="bottom", fontsize=8)
        positive = mean[mean > 0]
        if len(positive) > 1 and positive.max() / positive.min() > 100:
            ax.set_yscale("log")
        ax.set_xticks(x, labels, fontsize=8)
        ax.set_title(f"final {m}", fontsize=9)
        ax.grid(axis="y", alpha=0.3)
    first = results[0]
    n = len(first.episodes)
    fig.suptitle(
        f"{first.env_id}: end of episode, {n} episodes ({_kwargs_text(first.env_kwargs)})", fontsize=10
    )
    return _save(fig, path)


def learning_curve(curve: dict, path: str | Path) -> Path:
    """The run's learning curve (module docstring): rows return and success (where any point
    has a success rate), columns against training seconds and against steps."""
    series = [("training episodes (last 100)", "C0", "o", curve.get("train") or [])]
    if curve.get("eval"):
        n = curve["eval"]["episodes"]
        series.append((f"evaluation ({n} episodes, deterministic)", "C1", "s", curve["eval"]["points"]))
    rows = [("mean_return", "mean return", 1.0)]
    if any(p.get("success_rate") is not None for _, _, _, points in series for p in points):
        rows.append(("success_rate", "success (%)", 100.0))
    fig = Figure(figsize=(10, 3.2 * len(rows)), layout="constrained")
    axes = fig.subplots(len(rows), 2, squeeze=False)
    for (key, label, scale), row in zip(rows, axes, strict=True):
        axes_x = zip(row, ("seconds", "steps"), ("training seconds", "environment steps"), strict=True)
        for ax, x_key, x_label in axes_x:
            for name, color, marker, points in series:
                kept = [p for p in points if p.get(key) is not None]
                x = [p[x_key] for p in kept]
                ax.plot(x, [scale * p[key] for p in kept], color=color, marker=marker, ms=3, label=name)
            ax.set_xlabel(x_label, fontsize=9)
            ax.set_ylabel(label, fontsize=9)
            if key == "success_rate":
                ax.set_ylim(-5, 105)
            ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=8)
    stopped = " (stopped by its wall-time budget)" if curve.get("stopped") == "wall_time" else ""
    fig.suptitle(f"{curve['env_id']}: {curve['algo'].upper()}, seed {curve['seed']}{stopped}", fontsize=10)
    return _save(fig, path)


def _trajectory(r: EvalResults, episode: int):
    return next((t for t in r.trajectories if t.episode == episode), None)


def _kwargs_text(kwargs: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in kwargs.items()) or "default task"


def _save(fig: Figure, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    return path
