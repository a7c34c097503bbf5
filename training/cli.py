"""The `robodyn` command (the `robodyn` console script, or `python -m training.cli`).

    robodyn list
    robodyn eval RoboDyn/Crane-v0 --policy pd --policy runs/crane/ppo.zip --episodes 20 --fixed
    robodyn eval RoboDyn/Crane-v0 --fixed --video
    robodyn train RoboDyn/Crane-v0 --algo ppo --timesteps 1000000 --num-envs 64 --out runs/crane
    robodyn tune RoboDyn/Crane-v0 pd

`eval` prints a table (mean return, final metrics, success rate where the task defines
success) and writes results.json, trajectories.npz, trajectories.png and final_metrics.png
into --out (default runs/eval-<env>); `--scenario NAME` runs one of the task's fixed
scenarios (`--fixed` is `--scenario fixed`). `tune` sweeps a baseline's gain on the fixed
scenario its task declares (training.experiments) and stores the best where the baseline
reads its defaults. An unknown env id or policy is reported on stderr
with exit code 2. stable-baselines3 and torch (the `train` extra) are imported only by
`train` and by `eval` of a .zip policy.

It lives in training/, the top layer, because it drives training.evaluate, training.plots,
training.train and the baselines of envs/.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from engine.errors import RoboDynError


class CLIError(RoboDynError):
    """A usage error reported as `robodyn: error: ...` with exit code 2."""


# the trained models shipped inside the training package (package data of the wheel)
SAVED_POLICIES = Path(__file__).resolve().parent / "policies"


def main(argv: list[str] | None = None) -> int:
    """Run the command line `argv` (default sys.argv[1:]); returns the exit code, 2 after a
    usage error reported on stderr."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except CLIError as e:
        print(f"robodyn: error: {e}", file=sys.stderr)
        return 2


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="robodyn", description="RoboDyn environments: list, evaluate, train, tune baselines."
    )
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("list", help="list the registered environment ids")
    s.set_defaults(func=cmd_list)

    s = sub.add_parser("eval", help="evaluate policies on the native vector env")
    s.add_argument("env", help="environment id, e.g. RoboDyn/Crane-v0")
    s.add_argument(
        "--policy",
        action="append",
        help="random, a baseline (pd, mpc) or an SB3 model .zip; repeat to compare. Default: every "
        "baseline of the task and every policy saved for it in training/policies/",
    )
    s.add_argument("--episodes", type=int, default=10)
    s.add_argument("--num-envs", type=int, default=8)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--scenario", help="one of the task's fixed scenarios (its env keywords)")
    s.add_argument("--fixed", action="store_true", help="the task's 'fixed' scenario (--scenario fixed)")
    s.add_argument(
        "--env-kwargs", type=json.loads, default={}, help="task keywords as JSON, e.g. '{\"max_accel\": 2}'"
    )
    s.add_argument("--record", type=int, default=3, help="episodes whose trajectories are saved and plotted")
    s.add_argument(
        "--video",
        action="store_true",
        help="also write episodes.mp4 (a GIF where no MP4 encoder is installed): the recorded episodes of "
        "every policy side by side, from the task's camera",
    )
    s.add_argument("--out", type=Path, default=None, help="output directory (default runs/eval-<env>)")
    s.set_defaults(func=cmd_eval)

    s = sub.add_parser("train", help="train PPO or SAC (stable-baselines3) on the native vector env")
    s.add_argument("env", help="environment id, e.g. RoboDyn/Crane-v0")
    s.add_argument("--algo", choices=("ppo", "sac"), default="ppo")
    s.add_argument("--timesteps", type=int, default=1_000_000)
    s.add_argument("--num-envs", type=int, default=64)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument(
        "--out", type=Path, default=None, help="output directory (default runs/train-<env>-<algo>)"
    )
    s.add_argument("--vecnormalize", action="store_true", help="normalize observations and rewards")
    s.add_argument("--env-kwargs", type=json.loads, default={}, help="task keywords as JSON")
    s.add_argument("--algo-kwargs", type=json.loads, default={}, help="algorithm keywords as JSON")
    s.add_argument(
        "--checkpoint-every", type=int, default=200_000, help="environment steps between checkpoints"
    )
    s.add_argument("--no-progress", action="store_true", help="no progress bar")
    s.add_argument("--init", type=Path, default=None, help="continue training this model .zip")
    s.set_defaults(func=cmd_train)

    s = sub.add_parser("tune", help="sweep a baseline's gain and store the best as its default")
    s.add_argument("env", help="environment id, e.g. RoboDyn/Crane-v0")
    s.add_argument("baseline", help="a baseline the task declares a tuning for, e.g. pd")
    s.add_argument(
        "--out", type=Path, default=None, help="where to write (default: where the baseline reads it)"
    )
    s.set_defaults(func=cmd_tune)
    return p


def _env_id(name: str) -> str:
    """The registered id `name` names (with or without the RoboDyn/ namespace)."""
    from robogym import TASKS

    ids = [t.id for t in TASKS]
    if name in ids:
        return name
    if f"RoboDyn/{name}" in ids:
        return f"RoboDyn/{name}"
    raise CLIError(f"unknown environment id {name!r}; known ids: {', '.join(ids)} (see `robodyn list`)")


def _slug(env_id: str) -> str:
    """The id without its namespace, for default output directory names."""
    return env_id.split("/")[-1]


# --- list --------------------------------------------------------------------------------------
def cmd_list(args) -> int:
    """Print every registered environment id with its one-line summary."""
    from robogym import TASKS

    width = max(len(t.id) for t in TASKS)
    for t in TASKS:
        print(f"{t.id:<{width}}  {t.summary}")
    return 0


# --- eval --------------------------------------------------------------------------------------
def cmd_eval(args) -> int:
    """Evaluate each policy, print the comparison table and write the JSON, NPZ and PNG files."""
    from training.evaluate import PolicyError, evaluate
    from training.plots import plot_final_metrics, plot_trajectories

    env_id = _env_id(args.env)
    if args.episodes < 1 or args.num_envs < 1:
        raise CLIError("--episodes and --num-envs must be >= 1")
    if args.video and args.record < 1:
        raise CLIError("--video shows the recorded episodes: --record must be >= 1")
    if not args.policy:
        args.policy = default_policies(env_id)
    for spec in args.policy:
        if spec.endswith(".zip") and not Path(spec).is_file():
            raise CLIError(f"policy file {spec!r} does not exist")
    env_kwargs = dict(args.env_kwargs)
    scenario = "fixed" if args.fixed else args.scenario
    if scenario is not None:
        env_kwargs.update(_scenario(env_id, scenario))
    out = args.out or Path("runs") / f"eval-{_slug(env_id)}"

    results = []
    for spec in args.policy:
        print(f"evaluating {spec}: {args.episodes} episodes on {min(args.num_envs, args.episodes)} envs ...")
        t0 = time.perf_counter()
        try:
            r = evaluate(
                env_id,
                spec,
                episodes=args.episodes,
                num_envs=args.num_envs,
                seed=args.seed,
                env_kwargs=env_kwargs,
                record=args.record,
                progress=_progress,
            )
        except PolicyError as e:
            raise CLIError(str(e)) from None
        print(f"\r  done in {time.perf_counter() - t0:.1f} s" + " " * 20)
        results.append(r)
    _unique_labels(results, args.policy)

    print()
    print(results_table(results))
    out.mkdir(parents=True, exist_ok=True)
    doc = {
        "env_id": env_id,
        "env_kwargs": env_kwargs,
        "episodes": args.episodes,
        "num_envs": args.num_envs,
        "seed": args.seed,
        "policies": {
            r.policy: dict(r.to_json(), spec=spec) for r, spec in zip(results, args.policy, strict=True)
        },
    }
    (out / "results.json").write_text(json.dumps(doc, indent=2) + "\n")
    _save_trajectories(results, out / "trajectories.npz")
    written = [out / "results.json", out / "trajectories.npz"]
    if args.record > 0:
        written.append(plot_trajectories(results, out / "trajectories.png"))
    written.append(plot_final_metrics(results, out / "final_metrics.png"))
    if args.video:
        from training.video import write_eval_video

        print("rendering the recorded episodes ...", flush=True)
        try:
            written.append(write_eval_video(out / "episodes", results))
        except (ValueError, RuntimeError) as e:
            raise CLIError(f"--video: {e}") from None
    print("\nwrote " + ", ".join(str(p) for p in written))
    return 0


def _scenario(env_id: str, name: str) -> dict:
    """The env keywords of one of the task's fixed scenarios."""
    from robogym import registration

    scenarios = registration.entry(env_id).scenarios
    if name not in scenarios:
        raise CLIError(f"{env_id} has no scenario {name!r}; its scenarios: {', '.join(scenarios) or 'none'}")
    return dict(scenarios[name])


def default_policies(env_id: str) -> list[str]:
    """The task's baselines, then every SB3 model in training/policies/ trained on env_id
    (its sidecar JSON names the env)."""
    from robogym import registration

    specs = list(registration.entry(env_id).baselines)
    for sidecar in sorted(SAVED_POLICIES.glob("*.json")):
        model = sidecar.with_suffix(".zip")
        if model.is_file() and json.loads(sidecar.read_text()).get("env_id") == env_id:
            specs.append(str(model))
    return specs


def _progress(done: int, total: int) -> None:
    """Show how many episodes have finished, on one rewritten line."""
    print(f"\r  {done}/{total} episodes", end="", flush=True)


def _unique_labels(results, specs) -> None:
    """Model files with the same name (runs/a/ppo.zip, runs/b/ppo.zip) are labelled with their
    directory too; any label still repeated gets #2, #3, ..."""
    labels = [r.policy for r in results]
    for i, spec in enumerate(specs):
        if spec.endswith(".zip") and labels.count(labels[i]) > 1:
            results[i].policy = f"{Path(spec).parent.name}/{labels[i]}"
    seen: dict[str, int] = {}
    for r in results:
        n = seen.get(r.policy, 0)
        seen[r.policy] = n + 1
        if n:
            r.policy = f"{r.policy}#{n + 1}"


def format_table(header: list[str], rows: list[list[str]]) -> str:
    """A plain-text table: every column padded to its widest cell, the header underlined with
    dashes."""
    widths = [max(len(x) for x in col) for col in zip(header, *rows, strict=True)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)) for line in [header, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def results_table(results) -> str:
    """The table `eval` prints: policy, episodes, mean return, then the mean (max) final value
    of every task metric, and the success rate when the task defines success."""
    metrics = [m for m in results[0].metric_names if m != "success"]  # shown as the success rate
    header = ["policy", "episodes", "mean return", *(f"final {m}" for m in metrics)]
    has_success = any(r.summary()["success_rate"] is not None for r in results)
    if has_success:
        header.append("success")
    rows = []
    for r in results:
        s = r.summary()
        row = [r.policy, str(s["episodes"]), f"{s['mean_return']:.2f} ± {s['std_return']:.2f}"]
        row += [f"{s[f'final_{m}_mean']:.4g} ({s[f'final_{m}_max']:.4g})" for m in metrics]
        if has_success:
            row.append("-" if s["success_rate"] is None else f"{100 * s['success_rate']:.0f}%")
        rows.append(row)
    return format_table(header, rows) + "\n(final metrics: mean over episodes, max in brackets)"


def _save_trajectories(results, path: Path) -> None:
    """Write every recorded episode's arrays to one .npz, keyed <policy>/episode<k>/<array>."""
    arrays = {}
    for r in results:
        for t in r.trajectories:
            key = f"{r.policy}/episode{t.episode}"
            arrays[f"{key}/time"] = t.time
            arrays[f"{key}/obs"] = t.obs
            arrays[f"{key}/actions"] = t.actions
            arrays[f"{key}/rewards"] = t.rewards
            for m, v in t.metrics.items():
                arrays[f"{key}/{m}"] = v
    np.savez_compressed(path, **arrays)


# --- train -------------------------------------------------------------------------------------
def cmd_train(args) -> int:
    """Train a model with training.train after checking the arguments and the `train` extra."""
    env_id = _env_id(args.env)
    if args.timesteps < 1 or args.num_envs < 1:
        raise CLIError("--timesteps and --num-envs must be >= 1")
    try:
        from training.train import train
    except ImportError as e:
        raise CLIError(f"training needs the `train` extra (pip install -e '.[train]'): {e}") from None
    if args.init is not None and not args.init.is_file():
        raise CLIError(f"--init model {str(args.init)!r} does not exist")
    out = args.out or Path("runs") / f"train-{_slug(env_id)}-{args.algo}"
    train(
        env_id,
        algo=args.algo,
        total_timesteps=args.timesteps,
        num_envs=args.num_envs,
        seed=args.seed,
        out_dir=out,
        vecnormalize=args.vecnormalize,
        env_kwargs=args.env_kwargs,
        algo_kwargs=args.algo_kwargs,
        checkpoint_every=args.checkpoint_every,
        progress_bar=not args.no_progress,
        init_model=args.init,
    )
    return 0


# --- tune --------------------------------------------------------------------------------------
def cmd_tune(args) -> int:
    """Run the task's tuning of a baseline, print the best settings and the sweep's extent,
    and store the record (with the command) where the baseline reads its default gains.
    Exit code 1 if the best sits at an end of the (extended) grid: the optimum was not
    bracketed, and the record says so."""
    from robogym import registration
    from training.experiments import tune, write_tuning

    env_id = _env_id(args.env)
    tuned = registration.entry(env_id).tuning
    if args.baseline not in tuned:
        known = ", ".join(tuned) or "none"
        raise CLIError(f"{env_id} declares no tuning for {args.baseline!r}; tuned baselines: {known}")
    t = tuned[args.baseline]
    print(
        f"tuning {args.baseline} on {env_id}: {t.parameter} on a geometric grid, {t.scenario!r} scenario ..."
    )
    record = tune(env_id, args.baseline)
    best, grid = record["best"], record["grid"]
    where = (
        "inside the grid (the trend reversed on both sides)"
        if record["bracketed"]
        else "AT AN END of the grid"
    )
    print(
        f"  {len(record['rows'])} settings in {record['seconds']:.1f} s; "
        f"grid {grid[0]:.3g} .. {grid[-1]:.3g} ({len(grid)} points); best {where}"
    )
    params = ", ".join(f"{k} = {v:g}" for k, v in record["parameters"].items())
    print(f"  best: {params}  (final {t.minimize} {best[t.minimize]:.4g}, {t.require} {best[t.require]:.3g})")
    path = write_tuning(record, args.out)
    print(f"wrote {path}")
    return 0 if record["bracketed"] else 1


if __name__ == "__main__":
    sys.exit(main())
