"""The `robodyn` command (the `robodyn` console script, or `python -m training.cli`).

    robodyn list
    robodyn eval RoboDyn/Crane-v0 --policy pd --policy runs/crane/ppo.zip --episodes 20 --fixed
    robodyn eval RoboDyn/Crane-v0 --fixed --video
    robodyn train RoboDyn/Crane-v0 --algo ppo --timesteps 1000000 --num-envs 64 --out runs/crane
    robodyn tune RoboDyn/Crane-v0 pd
    robodyn eval RoboDyn/Crane-v0 --episodes 1024 --num-envs 64 --ray auto
    robodyn sweep RoboDyn/Crane-v0 --algo ppo --seeds 0..4 --set learning_rate=1e-4,3e-4 --ray
    robodyn export training/policies/crane_ppo.zip --onnx --out crane_ppo.onnx
    robodyn play RoboDyn/Crane-v0 --policy mpc

`eval` prints a table (mean return, final metrics, success rate where the task defines
success) and writes results.json, trajectories.npz, trajectories.png, metrics.png and
final_metrics.png into --out (default runs/eval-<env>); `--scenario NAME` runs one of the task's fixed
scenarios (`--fixed` is `--scenario fixed`). `tune` sweeps a baseline's gain on the fixed
scenario its task declares (training.experiments) and stores the best where the baseline
reads its defaults. `sweep` trains one run per seed and setting and evaluates each
(training.sweep). `export` writes an SB3 model as ONNX (training.export). `play` shows a
policy acting in MuJoCo's interactive viewer. With `--ray [ADDRESS]`, `eval` runs its blocks
of episodes on Ray workers (training.distributed: the same results, bit for bit) and `sweep`
runs each training as a Ray task. stable-baselines3 and torch (the `train` extra) are
imported only by `train`, `sweep`, `export` and by `eval` or `play` of a .zip policy; Ray
(the `ray` extra) only with `--ray`.

A user error (a bad number, JSON that is not a JSON object of the env's keywords, a policy
file that does not load, an output path that cannot be written) is reported as one line,
`robodyn: error: ...`, on stderr with exit code 2, before any work starts: every argument,
every policy file and the output location are checked first, and the env is built once
from the user's keywords to let the task refuse them. Only then does the evaluation or the
training run, and only after it are the output files written. A bug still raises.

It lives in training/, the top layer, because it drives training.evaluate, training.plots,
training.train and the baselines of envs/.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from robodyn.engine.errors import DataSizeError
from robodyn.training import jsonio
from robodyn.training.cli_error import CLIError

# env keywords each command sets itself (its own options say how), never --env-kwargs
RESERVED_ENV_KWARGS = ("num_envs", "autoreset_mode", "render_mode")


# the trained models shipped inside the training package (package data of the wheel)
SAVED_POLICIES = Path(__file__).resolve().parent / "policies"


def main(argv: list[str] | None = None) -> int:
    """Run the command line `argv` (default sys.argv[1:]); returns the exit code, 2 after a
    usage error reported on stderr."""
    parser = _parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    args.argv = argv  # the command line, which `train` records in its sidecar
    try:
        return args.func(args)
    except (CLIError, DataSizeError) as e:  # DataSizeError: --num-envs more than memory holds
        print(f"robodyn: error: {_one_line(str(e))}", file=sys.stderr)
        return 2


def _one_line(message: str) -> str:
    """`message` on one line: line breaks (of messages from SB3, torch, ...) become spaces."""
    return " ".join(line.strip() for line in message.splitlines() if line.strip())


class _Help(argparse.HelpFormatter):
    """Every option's help ends with its default, unless the help already says it or there is
    none to say (a flag, None)."""

    def _get_help_string(self, action) -> str:
        text = action.help or ""
        default = action.default
        nothing = default is None or default is False or default is argparse.SUPPRESS or default in ({}, [])
        if "default" in text or nothing:
            return text
        shown = f"{default:,}".replace(",", "_") if isinstance(default, int) else default
        return f"{text} (default {shown})" if text else f"(default {shown})"


class _Parser(argparse.ArgumentParser):
    """argparse's parser, reporting a usage error as one line, `robodyn: error: ...`, with
    exit code 2 (argparse prints the whole usage first)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", _Help)
        super().__init__(*args, **kwargs)

    def error(self, message: str):
        self.exit(2, f"robodyn: error: {_one_line(message)} (see `{self.prog} --help`)\n")


def _count(least: int):
    """An argparse type: an integer >= least."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer >= {least}, got {text!r}") from None
        if value < least:
            raise argparse.ArgumentTypeError(f"must be an integer >= {least}, got {value}")
        return value

    return parse


def _positive(text: str) -> float:
    """An argparse type: a finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number > 0, got {text!r}") from None
    if not (np.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text!r}")
    return value


def _json_object(text: str) -> dict:
    """An argparse type: strict JSON (training.jsonio) that is an object of keywords."""
    try:
        return jsonio.loads_object(text)
    except jsonio.JSONInputError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _training_size_arguments(s, steps: str, envs: str) -> None:
    """--timesteps, --num-envs and --[no-]vecnormalize of `train` and `sweep`: None where not
    given, so that the task's own settings (robogym.registration.training_settings) apply."""
    task = "(default: the task's own setting, else {})"
    s.add_argument(
        "--timesteps",
        type=_count(1),
        default=None,
        help=f"environment steps {steps} {task.format('1,000,000')}",
    )
    s.add_argument("--num-envs", type=_count(1), default=None, help=f"environments {envs} {task.format(64)}")
    s.add_argument(
        "--vecnormalize",
        action=argparse.BooleanOptionalAction,
        default=None,
        help=f"normalize observations and rewards {task.format('not')}",
    )


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="robodyn", description="RoboDyn environments: list, evaluate, train, tune baselines.")
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
    s.add_argument("--episodes", type=_count(1), default=10, help="episodes of each policy")
    s.add_argument(
        "--num-envs",
        type=_count(1),
        default=8,
        help="environments stepped together: episodes run in blocks of it",
    )
    s.add_argument("--seed", type=_count(0), default=0, help="episode k starts from seed + k")
    which = s.add_mutually_exclusive_group()
    which.add_argument("--scenario", help="one of the task's fixed scenarios (its env keywords)")
    which.add_argument("--fixed", action="store_true", help="the task's 'fixed' scenario (--scenario fixed)")
    s.add_argument(
        "--env-kwargs",
        type=_json_object,
        default={},
        help="task keywords as a JSON object, e.g. '{\"max_accel\": 2}'",
    )
    s.add_argument(
        "--record", type=_count(0), default=3, help="episodes whose trajectories are saved and plotted"
    )
    s.add_argument(
        "--planner-samples",
        type=_count(2),
        default=None,
        help="candidate plans per control step of a sampling planner (the `sampling` baseline every "
        "task has): more plan better and cost more time",
    )
    s.add_argument(
        "--video",
        action="store_true",
        help="also write episodes.mp4 (a GIF where no MP4 encoder is installed): the recorded episodes of "
        "every policy side by side, from the task's camera",
    )
    s.add_argument("--out", type=Path, default=None, help="output directory (default runs/eval-<env>)")
    s.add_argument(
        "--gymnasium",
        action="store_true",
        help="for a port of a Gymnasium task (RoboDyn/Hopper-v5, ...): also run each .zip policy on "
        "Gymnasium's own env (MuJoCo's physics), the same episodes, and compare the mean returns",
    )
    _ray_option(s)
    s.add_argument(
        "--workers",
        type=_count(1),
        default=None,
        help="with --ray: Ray workers, each one vector env of --num-envs rows (default one per CPU of the "
        "cluster, at most one per block of --num-envs episodes)",
    )
    s.set_defaults(func=cmd_eval)

    s = sub.add_parser("train", help="train PPO or SAC (stable-baselines3) on the native vector env")
    s.add_argument("env", help="environment id, e.g. RoboDyn/Crane-v0")
    s.add_argument(
        "--algo", choices=("ppo", "sac"), default=None, help="default ppo, or the algorithm of --init"
    )
    _training_size_arguments(s, "to train for", "of the training vector env")
    s.add_argument("--seed", type=_count(0), default=0, help="seed of the run (envs, policy, sampling)")
    s.add_argument(
        "--out", type=Path, default=None, help="output directory (default runs/train-<env>-<algo>)"
    )
    s.add_argument("--env-kwargs", type=_json_object, default={}, help="task keywords as a JSON object")
    s.add_argument(
        "--algo-kwargs",
        type=_json_object,
        default={},
        help="algorithm keywords as a JSON object, over the task's own and RoboDyn's defaults",
    )
    s.add_argument(
        "--wall-time",
        type=_positive,
        default=None,
        metavar="SECONDS",
        help="also stop after this many seconds of training (evaluations left out) and save the policy "
        "as at the end of --timesteps",
    )
    s.add_argument(
        "--eval-every",
        type=_count(0),
        default=0,
        help="evaluate the policy deterministically at the start, every this many steps and at the end "
        "(curve.json, learning_curve.png); 0: never (default)",
    )
    s.add_argument("--eval-episodes", type=_count(1), default=64, help="episodes of each evaluation")
    s.add_argument("--eval-seed", type=_count(0), default=1000, help="episode k of each evaluation: seed + k")
    s.add_argument(
        "--checkpoint-every", type=_count(1), default=200_000, help="environment steps between checkpoints"
    )
    s.add_argument(
        "--hyperparams",
        choices=("robodyn", "zoo"),
        default="robodyn",
        help="robodyn: RoboDyn's defaults for many environments; zoo: the RL Baselines3 Zoo's tuned PPO "
        "settings for the task (training/zoo.py), whose n_envs and VecNormalize replace --num-envs and "
        "--vecnormalize",
    )
    s.add_argument("--no-progress", action="store_true", help="no progress bar")
    s.add_argument(
        "--log-every",
        type=_count(0),
        default=None,
        help="print a line every this many environment steps: steps done, steps/s, and the mean return "
        "and success rate of the last 100 episodes; 0: none (default: every tenth of --timesteps)",
    )
    s.add_argument("--init", type=Path, default=None, help="continue training this model .zip")
    s.add_argument(
        "--residual",
        default=None,
        metavar="BASELINE",
        help="learn a correction added to this baseline's command (e.g. pd) instead of a whole policy",
    )
    s.add_argument(
        "--residual-scale",
        type=float,
        default=None,
        help="with --residual: the correction's range; the env gets clip(baseline + scale * action) "
        "(default 1)",
    )
    s.set_defaults(func=cmd_train)

    s = sub.add_parser(
        "sweep", help="train one run per seed and setting (on Ray with --ray), evaluate each, and tabulate"
    )
    s.add_argument("env", help="environment id, e.g. RoboDyn/Crane-v0")
    s.add_argument("--algo", choices=("ppo", "sac"), default="ppo", help="the algorithm of every run")
    s.add_argument("--seeds", default="0..4", help="A..B (inclusive), a list 0,3,7, or both (default 0..4)")
    s.add_argument(
        "--set",
        action="append",
        default=[],
        dest="settings",
        metavar="KEY=V1,V2",
        help="an algorithm keyword and the values to sweep, each JSON (e.g. learning_rate=1e-4,3e-4); "
        "repeat to cross several",
    )
    _training_size_arguments(s, "of each run", "of each run's vector env")
    s.add_argument("--env-kwargs", type=_json_object, default={}, help="task keywords as a JSON object")
    s.add_argument(
        "--algo-kwargs", type=_json_object, default={}, help="algorithm keywords every run shares (JSON)"
    )
    s.add_argument(
        "--checkpoint-every", type=_count(1), default=200_000, help="environment steps between checkpoints"
    )
    s.add_argument("--eval-episodes", type=_count(1), default=16, help="episodes of each run's evaluation")
    s.add_argument(
        "--eval-num-envs", type=_count(1), default=16, help="environments of each run's evaluation"
    )
    s.add_argument(
        "--eval-seed", type=_count(0), default=1000, help="the evaluation's episode k starts from this + k"
    )
    s.add_argument(
        "--out", type=Path, default=None, help="results directory (default runs/sweep-<env>-<algo>)"
    )
    _ray_option(s)
    s.add_argument(
        "--cpus-per-run",
        type=_count(1),
        default=None,
        help="with --ray: the CPUs Ray reserves for each run, and the engine's threads in it (default 1)",
    )
    s.set_defaults(func=cmd_sweep)

    s = sub.add_parser(
        "export", help="write a trained SB3 policy as ONNX: raw observation in, deterministic action out"
    )
    s.add_argument(
        "policy", type=Path, help="a stable-baselines3 model .zip (e.g. one of training/policies/)"
    )
    s.add_argument(
        "--onnx",
        action="store_true",
        help="write ONNX (the one format), VecNormalize's observation normalization and the action "
        "clipping or rescaling of SB3's predict folded in",
    )
    s.add_argument("--out", type=Path, default=None, help="the file to write (default POLICY with .onnx)")
    s.set_defaults(func=cmd_export)

    s = sub.add_parser("play", help="show a policy acting in MuJoCo's interactive viewer (needs a display)")
    s.add_argument("env", help="environment id, e.g. RoboDyn/Crane-v0")
    s.add_argument("--policy", default="random", help="random, a baseline (pd, mpc) or an SB3 model .zip")
    s.add_argument("--seed", type=_count(0), default=0, help="episode k starts from seed + k")
    which = s.add_mutually_exclusive_group()
    which.add_argument("--scenario", help="one of the task's fixed scenarios (its env keywords)")
    which.add_argument("--fixed", action="store_true", help="the task's 'fixed' scenario (--scenario fixed)")
    s.add_argument("--env-kwargs", type=_json_object, default={}, help="task keywords as a JSON object")
    s.add_argument(
        "--episodes",
        type=_count(1),
        default=None,
        help="episodes to play (default: one after another until the viewer is closed)",
    )
    s.add_argument(
        "--speed", type=_positive, default=1.0, help="playback speed: 1 is real time, 2 twice as fast"
    )
    s.set_defaults(func=cmd_play)

    s = sub.add_parser("tune", help="sweep a baseline's gain and store the best as its default")
    s.add_argument("env", help="environment id, e.g. RoboDyn/Crane-v0")
    s.add_argument("baseline", help="a baseline the task declares a tuning for, e.g. pd")
    s.add_argument(
        "--out", type=Path, default=None, help="where to write (default: where the baseline reads it)"
    )
    s.set_defaults(func=cmd_tune)

    from robodyn.training import retarget_cli

    retarget_cli.add_parsers(sub, _positive)
    return p


def _ray_option(s) -> None:
    """--ray [ADDRESS]: run on Ray (training.cluster.connected says how ADDRESS is read)."""
    s.add_argument(
        "--ray",
        nargs="?",
        const="",
        default=None,
        metavar="ADDRESS",
        help="run on Ray (the `ray` extra): at ADDRESS (auto, HOST:PORT of a head node, ray://HOST:10001, "
        "local), or without one where Ray looks by default (RAY_ADDRESS, the cluster `ray start` started on "
        "this machine, else a new local instance)",
    )


def _env_id(name: str) -> str:
    """The registered id `name` names (with or without the RoboDyn/ namespace). As in
    gymnasium.make, `module:id` imports `module` first, whose import registers its tasks
    (robogym.task_envs); a package that declares the `robodyn.tasks` entry point is imported
    by robogym itself, in every process (Ray's workers too)."""
    import importlib

    from robogym import TASKS

    if ":" in name:
        module, _, name = name.partition(":")
        if os.getcwd() not in sys.path:  # the module is found where the command runs, as with python -m
            sys.path.insert(0, os.getcwd())
        try:
            importlib.import_module(module)
        except ImportError as e:
            raise CLIError(f"cannot import {module!r}, which should register {name!r}: {e}") from None
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
_DOC_BOX = re.compile(r"`Box\([^`]*\((\d+),\), (\w+)\)`")


def documented_spaces(env_id: str) -> tuple[str, str]:
    """(action, observation) sizes and dtypes as the env's documentation states them (the
    first `Box(...)` under its "Action Space" and "Observation Space" headings), e.g.
    ("3 float32", "11 float64"), without making the env (no compile); "?" where the
    documentation states none. tests/robogym/test_registered_tasks.py checks them against
    every env's spaces."""
    from robogym.registration import TASKS, load

    (task,) = [t for t in TASKS if t.id == env_id]
    doc = load(task.entry_point).__doc__ or ""
    sizes = []
    for heading in ("Action Space", "Observation Space"):
        section = doc.split(f"## {heading}", 1)[1].split("\n## ", 1)[0] if f"## {heading}" in doc else ""
        m = _DOC_BOX.search(section)
        sizes.append(f"{m[1]} {m[2]}" if m else "?")
    return sizes[0], sizes[1]


def cmd_list(args) -> int:
    """Print every registered environment id with its observation and action sizes (from its
    documentation) and its one-line summary."""
    from robogym import TASKS

    rows = [(t.id, *reversed(documented_spaces(t.id)), t.summary) for t in TASKS]
    header = ("id", "observation", "action", "what")
    widths = [max(len(r[k]) for r in [header, *rows]) for k in range(3)]
    for r in [header, *rows]:
        print("  ".join(f"{r[k]:<{widths[k]}}" for k in range(3)) + "  " + r[3])
    return 0


# --- eval --------------------------------------------------------------------------------------
def cmd_eval(args) -> int:
    """Check the arguments, the policies and the output directory; evaluate each policy (here,
    or on Ray with --ray), print the comparison table and write the JSON, NPZ and PNG files
    (and the video)."""
    from robodyn.training.evaluate import results_document
    from robodyn.training.plots import plot_final_metrics, plot_metrics, plot_trajectories

    _check_ray(args)
    env_id = _env_id(args.env)
    if args.video and args.record < 1:
        raise CLIError("--video shows the recorded episodes: --record must be >= 1")
    specs = args.policy or default_policies(env_id)
    _check_policy_names(env_id, specs)
    scenario = "fixed" if args.fixed else args.scenario
    env_kwargs = _env_kwargs(env_id, args.env_kwargs, scenario)
    out = args.out or Path("runs") / f"eval-{_slug(env_id)}"
    files = ["results.json", "trajectories.npz", "final_metrics.png"]
    files += ["trajectories.png", "metrics.png"] if args.record > 0 else []
    files += ["episodes.mp4", "episodes.gif"] if args.video else []
    check_out_dir(out, "--out", files)
    policies = _load_policies(env_id, specs, env_kwargs, args.env_kwargs)
    if args.planner_samples is not None:
        if args.ray is not None:
            raise CLIError("--planner-samples runs here only: leave out --ray")
        policies = _with_planner_samples(env_id, specs, policies, args.planner_samples)

    if args.ray is None:
        results, on_ray = _evaluate_here(args, env_id, policies, specs, env_kwargs), None
    else:
        results, on_ray = _evaluate_on_ray(args, env_id, specs, env_kwargs)
    _unique_labels(results, specs)

    print()
    print(results_table(results))
    crosscheck = _on_gymnasium(args, env_id, policies, specs, env_kwargs, results) if args.gymnasium else None
    out.mkdir(parents=True, exist_ok=True)
    doc = results_document(env_id, env_kwargs, args.episodes, args.num_envs, args.seed, results, specs)
    if on_ray is not None:
        doc["ray"] = on_ray
    if crosscheck is not None:
        doc["gymnasium"] = crosscheck
    (out / "results.json").write_text(jsonio.dumps(doc))  # strict JSON: a NaN is written as null
    _save_trajectories(results, out / "trajectories.npz")
    written = [out / "results.json", out / "trajectories.npz"]
    has_metrics = bool(results[0].metric_names)  # a task that declares none has nothing to plot
    if args.record > 0:
        written.append(plot_trajectories(results, out / "trajectories.png"))
        if has_metrics:
            written.append(plot_metrics(results, out / "metrics.png"))
    if has_metrics:
        written.append(plot_final_metrics(results, out / "final_metrics.png"))
    if args.video:
        from robodyn.training.video import write_eval_video

        print("rendering the recorded episodes ...", flush=True)
        try:
            written.append(write_eval_video(out / "episodes", results))
        except (ValueError, RuntimeError) as e:
            raise CLIError(f"--video: {e}") from None
    print("\nwrote " + ", ".join(str(p) for p in written))
    return 0


def _on_gymnasium(args, env_id: str, policies: list, specs: list[str], env_kwargs: dict, results) -> dict:
    """--gymnasium: each .zip policy over the same episodes on Gymnasium's own env; prints
    both mean returns with their standard errors and how many standard errors apart they
    are; returns {label: {"env", "mean_return", "stderr", "robodyn_mean_return",
    "robodyn_stderr"}} for results.json."""
    from robodyn.training.evaluate import (
        EvaluationError,
        PolicyError,
        SB3Policy,
        evaluate_gymnasium,
        gymnasium_original,
    )

    original = gymnasium_original(env_id)
    if original is None:
        raise CLIError(f"--gymnasium: {env_id} is not a port of a Gymnasium task (RoboDyn/Hopper-v5, ...)")
    if args.ray is not None:
        raise CLIError("--gymnasium runs Gymnasium's env in this process: leave out --ray")
    out = {}
    for spec, policy, ours in zip(specs, policies, results, strict=True):
        if not isinstance(policy, SB3Policy):
            continue
        print(f"evaluating {spec} on Gymnasium's {original}: {args.episodes} episodes ...", flush=True)
        try:
            theirs = evaluate_gymnasium(env_id, policy, args.episodes, args.seed, env_kwargs)
        except (PolicyError, EvaluationError) as e:
            raise CLIError(f"--gymnasium: {e}") from None
        r = np.array([e["return"] for e in ours.episodes])
        se = float(r.std(ddof=1) / np.sqrt(len(r))) if len(r) > 1 else float("nan")
        apart = abs(r.mean() - theirs["mean_return"]) / np.hypot(se, theirs["stderr"])
        print(
            f"  {ours.policy}: RoboDyn {r.mean():.1f} +- {se:.1f}, Gymnasium (MuJoCo) "
            f"{theirs['mean_return']:.1f} +- {theirs['stderr']:.1f} (mean return +- standard error): "
            f"{apart:.2f} standard errors apart"
        )
        out[ours.policy] = {
            "env": original,
            "mean_return": theirs["mean_return"],
            "stderr": theirs["stderr"],
            "returns": theirs["returns"].tolist(),
            "robodyn_mean_return": float(r.mean()),
            "robodyn_stderr": se,
        }
    if not out:
        raise CLIError("--gymnasium compares trained policies: give one with --policy MODEL.zip")
    return out


def _evaluate_here(args, env_id: str, policies: list, specs: list[str], env_kwargs: dict) -> list:
    """Each policy's EvalResults, evaluated in this process (training.evaluate)."""
    from robodyn.training.evaluate import EvaluationError, PolicyError, evaluate

    results = []
    for spec, policy in zip(specs, policies, strict=True):
        print(f"evaluating {spec}: {args.episodes} episodes on {min(args.num_envs, args.episodes)} envs ...")
        t0 = time.perf_counter()
        bar = StepProgress(args.episodes)
        try:
            r = evaluate(
                env_id,
                policy,
                episodes=args.episodes,
                num_envs=args.num_envs,
                seed=args.seed,
                env_kwargs=env_kwargs,
                record=args.record,
                progress=bar.episode,
                step_progress=bar.step,
            )
        except (PolicyError, EvaluationError) as e:
            raise CLIError(str(e)) from None
        finally:
            bar.close()
        print(f"  done in {time.perf_counter() - t0:.1f} s")
        results.append(r)
    return results


def _evaluate_on_ray(args, env_id: str, specs: list[str], env_kwargs: dict) -> tuple[list, dict]:
    """(each policy's EvalResults, what ran where): the blocks of every policy's evaluation on
    one pool of Ray workers (training.distributed), each worker warm before the first."""
    from robodyn.training.cluster import ClusterError, cluster_cpus, connected
    from robodyn.training.distributed import RayEvaluator
    from robodyn.training.evaluate import EvaluationError, PolicyError, episode_blocks

    blocks = len(episode_blocks(args.episodes, args.num_envs))
    n = min(args.num_envs, args.episodes)
    results = []
    try:
        with connected(args.ray or None) as ray:
            if args.workers is not None and args.workers > cluster_cpus(ray):
                raise CLIError(
                    f"--workers {args.workers}: the Ray cluster has {cluster_cpus(ray)} CPUs, one per worker"
                )
            workers = min(args.workers or cluster_cpus(ray), blocks)
            print(f"starting {workers} Ray workers, {n} envs each ...", flush=True)
            with RayEvaluator(env_id, args.num_envs, env_kwargs, workers=workers) as pool:
                t0 = time.perf_counter()
                pool.describe()  # returns once every worker has built and stepped its env
                print(f"  warm in {time.perf_counter() - t0:.1f} s")
                for spec in specs:
                    print(f"evaluating {spec}: {args.episodes} episodes, {blocks} blocks of {n} envs ...")
                    t0, reruns = time.perf_counter(), pool.reruns
                    results.append(pool.evaluate(spec, args.episodes, args.seed, args.record, _progress))
                    print(f"\r  done in {time.perf_counter() - t0:.1f} s" + " " * 20)
                    if pool.reruns > reruns:
                        print(f"  {pool.reruns - reruns} blocks run again after their worker died")
                on_ray = {"address": args.ray or None, "workers": workers, "reruns": pool.reruns}
    except (ClusterError, PolicyError, EvaluationError) as e:
        raise CLIError(str(e)) from None
    return results, on_ray


def _check_ray(args) -> None:
    """With --ray, Ray must be installed (a CLIError says how to install it); --workers and
    the like only go with --ray."""
    from robodyn.training.cluster import RayMissingError, import_ray

    if args.ray is None:
        for flag in ("workers", "cpus_per_run"):
            if getattr(args, flag, None) is not None:
                raise CLIError(f"--{flag.replace('_', '-')} only applies with --ray")
        return
    if ":" in args.env:
        raise CLIError(
            f"{args.env}: Ray's workers cannot import a module named on the command line; declare "
            "the package that registers the task under the `robodyn.tasks` entry point (as RoboDyn's "
            "own envs are: pyproject.toml) so that every process registers it, and name the id alone"
        )
    try:
        import_ray()
    except RayMissingError as e:
        raise CLIError(str(e)) from None


def _check_policy_names(env_id: str, specs: list[str]) -> None:
    """Every policy is "random", a baseline of the task (its own or a generic one), or a .zip
    file that exists."""
    from robodyn.envs.baselines import task_baselines
    from robogym import registration

    baselines = task_baselines(registration.entry(env_id))
    for spec in specs:
        if spec.endswith(".zip"):
            if Path(spec).is_dir():
                raise CLIError(f"policy {spec!r} is a directory, not a model .zip")
            if not Path(spec).is_file():
                raise CLIError(f"policy file {spec!r} does not exist")
        elif spec != "random" and spec not in baselines:
            known = ", ".join(["random", *baselines, "FILE.zip"])
            raise CLIError(f"unknown policy {spec!r} for {env_id}; choose one of {known}")


def _with_planner_samples(env_id: str, specs: list[str], policies: list, samples: int) -> list:
    """--planner-samples: each baseline whose factory takes `samples` is made with it (and
    keeps its name); a CLIError when no policy named takes it."""
    import functools

    from robodyn.envs.baselines import takes_samples
    from robogym import registration

    entry = registration.entry(env_id)
    out = []
    for spec, policy in zip(specs, policies, strict=True):
        baseline = isinstance(policy, str) and spec != "random" and not spec.endswith(".zip")
        if baseline and takes_samples(entry, spec):
            policy = functools.partial(_named_baseline, spec, {"samples": samples})
        out.append(policy)
    if all(o is p for o, p in zip(out, policies, strict=True)):
        raise CLIError(
            f"--planner-samples: none of {', '.join(specs)} is a sampling planner "
            f"(every task has one: --policy sampling)"
        )
    return out


def _named_baseline(name: str, kwargs: dict, env):
    """The baseline `name` of env's task made with kwargs, labelled with its name."""
    from robodyn.envs.baselines import make_baseline

    policy = make_baseline(name, env, **kwargs)
    policy.name = name
    return policy


def _load_policies(env_id: str, specs: list[str], env_kwargs: dict, user_kwargs: dict) -> list:
    """What evaluate() is given for each spec: the name itself for "random" and a baseline,
    the loaded SB3Policy for a .zip (its sidecar, statistics and spaces checked against the
    env). The env is built once, one row, from env_kwargs, so that the task refuses bad
    keywords here, before any evaluation; skipped when there is nothing to check."""
    from robodyn.training.evaluate import PolicyError, make_policy

    zips = [spec for spec in specs if spec.endswith(".zip")]
    if not zips and not user_kwargs:
        return list(specs)
    env = _probe_env(env_id, env_kwargs, user_kwargs)
    try:
        loaded = {}
        for spec in zips:
            try:
                loaded[spec] = make_policy(spec, env)[1]
            except PolicyError as e:
                raise CLIError(str(e)) from None
            except ImportError as e:
                raise CLIError(
                    f"a .zip policy needs the `train` extra (pip install -e '.[train]'): {e}"
                ) from None
    finally:
        env.close()
    return [loaded.get(spec, spec) for spec in specs]


def _probe_env(env_id: str, env_kwargs: dict, user_kwargs: dict):
    """A one-row vector env of the task built from env_kwargs; a CLIError quoting the user's
    --env-kwargs if the env refuses them (the ValueError or TypeError its constructor raises:
    a bad value, an unknown keyword)."""
    import gymnasium as gym
    from gymnasium.vector import AutoresetMode

    try:
        return gym.make_vec(env_id, num_envs=1, autoreset_mode=AutoresetMode.DISABLED, **env_kwargs)
    except (ValueError, TypeError) as e:
        if not user_kwargs:
            raise  # only the registry's keywords: a bug
        given = jsonio.dumps(user_kwargs, indent=None).strip()
        raise CLIError(f"--env-kwargs {given}: {env_id} refuses them: {e}") from None


def env_keywords(env_id: str) -> set[str]:
    """The keywords the task's vector env takes: its own (robogym's VECTOR_KEYWORDS) and its
    task class's parameters, the set the env's own check (Task.check_parameters) accepts."""
    from robogym import registration
    from robogym.vector_env import VECTOR_KEYWORDS

    cls = registration.load(registration.entry(env_id).vector_entry_point)
    return {*VECTOR_KEYWORDS, *cls.task_class.parameter_names()}


def _env_kwargs(env_id: str, user: dict, scenario: str | None) -> dict:
    """The env keywords of a run: the user's --env-kwargs (each one the task's env takes, and
    not one the command sets itself), plus those of the named scenario, which the user's may
    repeat but not contradict."""
    known = env_keywords(env_id)
    for key in user:
        if key in RESERVED_ENV_KWARGS:
            raise CLIError(
                f"--env-kwargs: {key} is set by robodyn itself (see its options), not by --env-kwargs"
            )
        if key not in known:
            takes = ", ".join(sorted(known - set(RESERVED_ENV_KWARGS)))
            raise CLIError(f"--env-kwargs: {env_id} takes no keyword {key!r}; it takes: {takes}")
    kwargs = dict(user)
    if scenario is not None:
        for key, value in _scenario(env_id, scenario).items():
            if key in user and user[key] != value:
                raise CLIError(
                    f"--env-kwargs sets {key}={user[key]!r}, which the scenario {scenario!r} "
                    f"fixes at {value!r}"
                )
            kwargs[key] = value
    return kwargs


# --- output locations --------------------------------------------------------------------------
def check_out_dir(out: Path, flag: str, files=(), dirs=()) -> None:
    """A CLIError unless the output directory `out` can be written: it is a directory or does
    not exist yet, none of `files` in it is a directory and none of `dirs` a file, and the
    nearest existing directory on its path takes new files. Creates nothing (see
    _check_writable)."""
    out = Path(out)
    if (out.exists() or out.is_symlink()) and not out.is_dir():
        raise CLIError(f"{flag} {str(out)!r} is a file, not a directory: name the directory for the outputs")
    for name in files:
        if (out / name).is_dir():
            raise CLIError(f"{flag} {str(out)!r} holds a directory {name!r} where the run writes that file")
    for name in dirs:
        p = out / name
        if (p.exists() or p.is_symlink()) and not p.is_dir():
            raise CLIError(f"{flag} {str(out)!r} holds a file {name!r} where the run writes that directory")
    _check_writable(out, out, flag)


def check_out_file(path: Path, flag: str) -> None:
    """A CLIError unless the file `path` can be written: not a directory, and the nearest
    existing directory on its path takes new files. Creates nothing."""
    path = Path(path)
    if path.is_dir():
        raise CLIError(f"{flag} {str(path)!r} is a directory: name the file to write")
    _check_writable(path, path.parent, flag)


def _check_writable(path: Path, start: Path, flag: str) -> None:
    """`path` (reported) can be created at `start`: the nearest existing ancestor of start (start
    itself if it exists) is a directory in which a file can be created. That is tested by
    creating an empty temporary file there and removing it at once, the only test that knows
    permissions, read-only mounts and pseudo file systems (/proc) alike; the directory's
    contents are the same afterwards."""
    base = Path(start)
    while not (base.exists() or base.is_symlink()) and base != base.parent:
        base = base.parent
    if not base.is_dir():
        raise CLIError(
            f"{flag} {str(path)!r} cannot be created: {str(base)!r} on its path is not a directory"
        )
    if not os.access(base, os.W_OK | os.X_OK):
        raise CLIError(f"{flag} {str(path)!r} cannot be written: no permission to write in {str(base)!r}")
    try:
        fd, probe = tempfile.mkstemp(prefix=".robodyn-write-test-", dir=base)
    except OSError as e:
        raise CLIError(
            f"{flag} {str(path)!r} cannot be written: creating a file in {str(base)!r} failed "
            f"({e.strerror or e})"
        ) from None
    os.close(fd)
    os.unlink(probe)


def _scenario(env_id: str, name: str) -> dict:
    """The env keywords of one of the task's fixed scenarios."""
    from robogym import registration

    scenarios = registration.entry(env_id).scenarios
    if name not in scenarios:
        raise CLIError(f"{env_id} has no scenario {name!r}; its scenarios: {', '.join(scenarios) or 'none'}")
    return dict(scenarios[name])


def default_policies(env_id: str) -> list[str]:
    """The task's baselines, then every SB3 model in training/policies/ trained on env_id
    (its sidecar JSON names the env); `random` for a task that has neither."""
    from robodyn.training.evaluate import PolicyError, read_model_meta
    from robogym import registration

    specs = list(registration.entry(env_id).baselines)
    for sidecar in sorted(SAVED_POLICIES.glob("*.json")):
        model = sidecar.with_suffix(".zip")
        if not model.is_file():
            continue
        try:
            meta = read_model_meta(model)
        except PolicyError as e:  # a damaged installation
            raise CLIError(f"a policy saved in {str(SAVED_POLICIES)!r}: {e}") from None
        if meta.get("env_id") == env_id:
            specs.append(str(model))
    return specs or ["random"]


class StepProgress:
    """The progress of one evaluation in environment steps: a tqdm bar on stderr over every
    block's steps (blocks x the episode step limit; a block whose episodes all end early
    jumps to its end), labelled with the block running and the episodes finished. Without
    tqdm, or for a task without a step limit, a line rewritten in place instead."""

    def __init__(self, episodes: int, file=None):
        self.episodes = episodes
        self.file = file if file is not None else sys.stderr
        self.bar = None
        self.finished = 0
        self.block = 0
        self.blocks = 1

    def step(self, block: int, blocks: int, step: int, max_steps: int | None) -> None:
        """After env step `step` of block `block` (of `blocks`), whose episodes last at most
        `max_steps` steps (None: unlimited)."""
        self.block, self.blocks = block, blocks
        try:
            from tqdm import tqdm
        except ImportError:
            tqdm = None
        if tqdm is None or max_steps is None:
            print(
                f"\r  block {block + 1}/{blocks}: step {step:,}, {self.finished}/{self.episodes} episodes",
                end="",
                file=self.file,
                flush=True,
            )
            return
        if self.bar is None:
            self.bar = tqdm(
                total=blocks * max_steps,
                desc=f"  block {block + 1}/{blocks}",
                unit="step",
                file=self.file,
                dynamic_ncols=True,
            )
        self.bar.set_description(f"  block {block + 1}/{blocks}", refresh=False)
        self.bar.set_postfix_str(f"{self.finished}/{self.episodes} episodes", refresh=False)
        self.bar.update(block * max_steps + step - self.bar.n)

    def episode(self, done: int, total: int) -> None:
        """`done` of the `total` episodes have finished."""
        self.finished = done

    def close(self) -> None:
        """End the bar (or the line): at its end if every episode finished."""
        if self.bar is not None:
            if self.finished == self.episodes:
                self.bar.set_description(f"  block {self.blocks}/{self.blocks}", refresh=False)
                self.bar.set_postfix_str(f"{self.finished}/{self.episodes} episodes", refresh=False)
                self.bar.update(self.bar.total - self.bar.n)
            self.bar.close()
            self.bar = None
        else:
            print(file=self.file, flush=True)


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


def sweep_table(summary: dict) -> str:
    """The table `robodyn sweep` prints: every run's final mean return and success, then per
    setting the mean ± sample standard deviation across seeds, [min, max]."""
    keys = list(summary["runs"][0]["settings"]) if summary["runs"] else []
    header = ["run", "seed", *keys, "mean return", "success"]
    rows = [
        [
            r["name"],
            str(r["seed"]),
            *(_json_text(r["settings"][k]) for k in keys),
            f"{r['mean_return']:.2f} ± {r['std_return']:.2f}",
            _percent(r["success_rate"]),
        ]
        for r in summary["runs"]
    ]
    lines = [format_table(header, rows), "", "across seeds (mean ± sample std [min, max]):"]
    header = [*keys, "seeds", "mean return", "success"] if keys else ["seeds", "mean return", "success"]
    rows = [
        [
            *(_json_text(g["settings"][k]) for k in keys),
            str(len(g["seeds"])),
            _spread_text(g["mean_return"], "{:.2f}"),
            _spread_text(g["success_rate"], "{:.0%}"),
        ]
        for g in summary["across_seeds"]
    ]
    lines.append(format_table(header, rows))
    return "\n".join(lines)


def _json_text(value) -> str:
    """A setting's value as compact JSON."""
    from robodyn.training.sweep import compact_json

    return compact_json(value)


def _percent(rate) -> str:
    """A success rate in percent, or - for a task without success."""
    return "-" if rate is None else f"{100 * rate:.0f}%"


def _spread_text(s: dict | None, fmt: str) -> str:
    """mean ± std [min, max] of a sweep.spread, each number in `fmt`."""
    if s is None:
        return "-"
    std = "-" if s["std"] is None else fmt.format(s["std"])
    return f"{fmt.format(s['mean'])} ± {std} [{fmt.format(s['min'])}, {fmt.format(s['max'])}]"


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
    """Check the arguments (the --init model's sidecar, the algorithm's keywords, the env's
    keywords, the output directory) and the `train` extra, then train with training.train."""
    env_id = _env_id(args.env)
    try:
        from robodyn.training.evaluate import PolicyError, load_sb3_model, load_vecnormalize, read_model_meta
        from robodyn.training.train import TrainError, check_algo_kwargs, train
    except ImportError as e:
        raise CLIError(f"training needs the `train` extra (pip install -e '.[train]'): {e}") from None
    algo = args.algo or "ppo"
    if args.init is not None:
        if args.init.is_dir():
            raise CLIError(f"--init {str(args.init)!r} is a directory, not a model .zip")
        if not args.init.is_file():
            raise CLIError(f"--init model {str(args.init)!r} does not exist")
        try:
            meta = read_model_meta(args.init)
            if meta.get("algo") is not None:
                if args.algo is not None and args.algo != meta["algo"].lower():
                    saved = meta["algo"].upper()
                    raise CLIError(f"--algo {args.algo}: the --init model is {saved} (its sidecar)")
                algo = meta["algo"].lower()
            if meta.get("vecnormalize"):
                load_vecnormalize(args.init, meta["vecnormalize"])
            load_sb3_model(args.init, [algo.upper()])  # training loads it again, onto the env
        except PolicyError as e:
            raise CLIError(f"--init: {e}") from None
    try:
        algo_kwargs = check_algo_kwargs(algo, args.algo_kwargs)
    except TrainError as e:
        raise CLIError(f"--algo-kwargs: {e}") from None
    if args.residual_scale is not None and args.residual is None:
        raise CLIError("--residual-scale only applies with --residual BASELINE")
    env_kwargs = _env_kwargs(env_id, args.env_kwargs, None)
    out = args.out or Path("runs") / f"train-{_slug(env_id)}-{algo}"
    files = [f"{algo}.zip", f"{algo}.json", f"{algo}_vecnormalize.pkl", "curve.json", "learning_curve.png"]
    check_out_dir(out, "--out", files, dirs=["checkpoints", "tb"])
    try:
        train(
            env_id,
            algo=algo,
            total_timesteps=args.timesteps,
            num_envs=args.num_envs,
            seed=args.seed,
            out_dir=out,
            vecnormalize=args.vecnormalize,
            env_kwargs=env_kwargs,
            algo_kwargs=algo_kwargs,
            checkpoint_every=args.checkpoint_every,
            progress_bar=not args.no_progress,
            init_model=args.init,
            residual=args.residual,
            residual_scale=1.0 if args.residual_scale is None else args.residual_scale,
            log_every=args.log_every,
            command=shlex.join(["robodyn", *args.argv]),
            hyperparams=args.hyperparams,
            wall_time=args.wall_time,
            eval_every=args.eval_every,
            eval_episodes=args.eval_episodes,
            eval_seed=args.eval_seed,
        )
    except TrainError as e:  # refused before anything was written
        raise CLIError(str(e)) from None
    return 0


# --- sweep -------------------------------------------------------------------------------------
def cmd_sweep(args) -> int:
    """Check Ray (with --ray), the train extra, the seeds, the settings (every combination's
    model built once) and the results directory; run the sweep (training.sweep), print its
    table and write sweep.json."""
    from robodyn.training.cluster import ClusterError
    from robodyn.training.sweep import SweepConfig, SweepError, make_runs, run_sweep

    _check_ray(args)
    env_id = _env_id(args.env)
    try:
        import robodyn.training.train  # noqa: F401  (stable-baselines3 and torch)
    except ImportError as e:
        raise CLIError(f"training needs the `train` extra (pip install -e '.[train]'): {e}") from None
    try:
        seeds, grid = _sweep_grid(args)
    except SweepError as e:
        raise CLIError(str(e)) from None
    runs = make_runs(seeds, grid)
    from robodyn.training.train import run_size
    from robogym.registration import training_settings

    size = run_size(training_settings(env_id, args.algo), args.timesteps, args.num_envs, args.vecnormalize)
    args.timesteps, args.num_envs, args.vecnormalize = size  # as `robodyn train` sizes a run
    env_kwargs = _env_kwargs(env_id, args.env_kwargs, None)
    out = args.out or Path("runs") / f"sweep-{_slug(env_id)}-{args.algo}"
    _check_sweep_out(out, runs)
    _check_sweep_settings(env_id, args, env_kwargs, [settings for settings, _ in _combinations(runs)])
    config = SweepConfig(
        env_id=env_id,
        algo=args.algo,
        timesteps=args.timesteps,
        num_envs=args.num_envs,
        vecnormalize=args.vecnormalize,
        env_kwargs=env_kwargs,
        algo_kwargs=dict(args.algo_kwargs),
        checkpoint_every=args.checkpoint_every,
        eval_episodes=args.eval_episodes,
        eval_num_envs=args.eval_num_envs,
        eval_seed=args.eval_seed,
    )
    where = "on Ray" if args.ray is not None else "one after another here"
    print(
        f"sweep of {args.algo.upper()} on {env_id}: {len(runs)} runs ({len(seeds)} seeds x "
        f"{len(runs) // len(seeds)} settings), {args.timesteps:,} steps each, {where} -> {out}"
    )
    try:
        summary = run_sweep(
            config,
            runs,
            out,
            ray_address=args.ray or None,
            use_ray=args.ray is not None,
            cpus_per_run=args.cpus_per_run or 1,
        )
    except ClusterError as e:
        raise CLIError(str(e)) from None
    print()
    print(sweep_table(summary))
    print(f"\nwrote {out / 'sweep.json'} and {len(runs)} run directories in {summary['seconds']:.1f} s")
    return 0


def _check_sweep_out(out: Path, runs) -> None:
    """The results directory takes sweep.json and a directory per run, and holds no run of
    that name already (a run is never written over another, nor mixed with its files)."""
    check_out_dir(out, "--out", ["sweep.json"], dirs=[run.name for run in runs])
    for run in runs:
        if (out / run.name).is_dir() and any((out / run.name).iterdir()):
            raise CLIError(
                f"--out {str(out)!r} already holds a run {run.name!r}: name another results directory"
            )


def _sweep_grid(args) -> tuple[list[int], dict[str, list]]:
    """(seeds, {keyword: values}) of a sweep from --seeds and --set; a SweepError for text that
    does not parse, a CLIError for a keyword set twice."""
    from robodyn.training.sweep import parse_seeds, parse_setting

    seeds = parse_seeds(args.seeds)
    grid: dict[str, list] = {}
    for text in args.settings:
        key, values = parse_setting(text)
        if key in grid:
            raise CLIError(f"--set {key} appears twice: give its values once, separated by commas")
        if key in args.algo_kwargs:
            raise CLIError(f"--set {key}: --algo-kwargs sets it too, and a run takes one value")
        grid[key] = values
    return seeds, grid


def _combinations(runs) -> list[tuple[dict, list]]:
    """The distinct settings of `runs`, each with its runs, in order."""
    out: list[tuple[dict, list]] = []
    for run in runs:
        for settings, members in out:
            if settings == run.settings:
                members.append(run)
                break
        else:
            out.append((run.settings, [run]))
    return out


def _check_sweep_settings(env_id: str, args, env_kwargs: dict, combinations: list[dict]) -> None:
    """Every combination's algorithm keywords checked (names and types), then its env and
    model built once and closed (training.train.check_settings), so that a value the task or
    the algorithm refuses is a CLIError before any run starts."""
    from robodyn.training.train import TrainError, check_algo_kwargs, check_settings

    for settings in combinations:
        kwargs = {**args.algo_kwargs, **settings}
        what = "--algo-kwargs" if not settings else f"--set {_json_text(settings)}"
        try:
            check_algo_kwargs(args.algo, kwargs)
            check_settings(env_id, args.algo, args.num_envs, env_kwargs, kwargs, args.vecnormalize)
        except TrainError as e:
            raise CLIError(f"{what}: {e}") from None


# --- export ------------------------------------------------------------------------------------
def cmd_export(args) -> int:
    """Check the format flag, the `train` extra, the model file and the output file; write the
    ONNX file (training.export.export_onnx, which checks it against SB3's predict) and say
    how to run it."""
    if not args.onnx:
        raise CLIError("name the format to write: --onnx (the one export writes)")
    try:
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
        import stable_baselines3  # noqa: F401

        from robodyn.training.export import ExportError, check_exportable, export_onnx
    except ImportError as e:
        raise CLIError(f"export needs the `train` extra (pip install -e '.[train]'): {e}") from None
    try:
        model = check_exportable(args.policy)
    except ExportError as e:
        raise CLIError(str(e)) from None
    out = args.out or model.with_suffix(".onnx")
    if out.resolve() == model.resolve():
        raise CLIError(f"--out {str(out)!r} is the model itself: name another file")
    check_out_file(out, "--out")
    try:
        result = export_onnx(model, out)
    except ExportError as e:
        raise CLIError(str(e)) from None
    folded = ", VecNormalize folded in" if result.normalized else ""
    print(
        f"wrote {result.path}: obs (batch, {result.obs_dim}) {result.obs_dtype} -> action "
        f"(batch, {result.action_dim}) float32 ({result.algo}{folded}); on {result.checked} observations "
        f"it equals SB3's predict to {result.max_error:.1e}"
    )
    print(f"  run it: onnxruntime.InferenceSession({str(result.path)!r}).run(None, {{'obs': obs}})[0]")
    return 0


# --- play --------------------------------------------------------------------------------------
def display_problem() -> str | None:
    """Why no window can open here (Linux without DISPLAY or WAYLAND_DISPLAY), else None."""
    if sys.platform.startswith("linux") and not (
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    ):
        return "there is no display (neither DISPLAY nor WAYLAND_DISPLAY is set)"
    return None


def video_instead(args, env_id: str) -> str:
    """The `robodyn eval ... --video` command that records what `play` would show."""
    argv = ["robodyn", "eval", env_id, "--policy", args.policy, "--episodes", "1", "--record", "1"]
    argv += ["--seed", str(args.seed)]
    if args.fixed:
        argv += ["--fixed"]
    elif args.scenario is not None:
        argv += ["--scenario", args.scenario]
    if args.env_kwargs:
        argv += ["--env-kwargs", jsonio.dumps(args.env_kwargs, indent=None).strip()]
    return shlex.join([*argv, "--video"])


def _no_viewer(args, env_id: str, why: str) -> CLIError:
    """The error `play` reports where MuJoCo's viewer cannot run, naming the video command."""
    return CLIError(
        f"robodyn play needs a display for MuJoCo's viewer: {why}. Record a video instead: "
        f"`{video_instead(args, env_id)}` writes runs/eval-{_slug(env_id)}/episodes.mp4"
    )


def push_state(env, data, row: int = 0) -> None:
    """Copy row `row` of a RoboDyn env's engine state into the MjData `data` of its MuJoCo model
    (env.unwrapped.physics.mj_model): the state robogym.render's Renderer draws rgb_array
    frames from (qpos, qvel, the mocap bodies' poses, after the task's drawing-only changes to
    the model, Task.decorate_frame), plus ctrl and act; then mj_forward, so that body poses,
    contacts and sensors in `data` are MuJoCo's for that state."""
    import mujoco

    u = env.unwrapped
    model = u.physics.mj_model
    u.task.decorate_frame(model, row)
    d = u.physics.data
    data.qpos[:] = d.qpos[row]
    data.qvel[:] = d.qvel[row]
    if model.nu:
        data.ctrl[:] = d.ctrl[row]
    if model.na:
        data.act[:] = d.act[row]
    if model.nmocap:
        data.mocap_pos[:] = np.reshape(d.mocap_pos[row], (-1, 3))
        data.mocap_quat[:] = np.reshape(d.mocap_quat[row], (-1, 4))
    mujoco.mj_forward(model, data)


def play(env, policy, viewer, data, seed: int, episodes: int | None, speed: float, out=print) -> int:
    """Run `policy` on `env` (one row, autoreset DISABLED), episode k from seed + k, pushing
    every state into `data` (push_state, under the viewer's lock) and showing it
    (viewer.sync()), paced at `speed` times real time, until `episodes` episodes ended (None:
    no limit) or the viewer was closed. Prints each episode's return, length, final metrics
    and success. Returns the number of episodes that ended."""
    dt = float(env.unwrapped.dt)
    rows = np.arange(1)
    metrics = list(env.unwrapped.task.metrics().keys())

    def start(k: int):
        obs, _ = env.reset(seed=[seed + k])
        seed_rows = getattr(policy, "seed_rows", None)
        if seed_rows is not None:
            seed_rows(rows, [seed + k])
        policy.reset(env, rows)
        return obs

    def show() -> None:
        with viewer.lock():
            push_state(env, data)
        viewer.sync()

    k, ret, steps = 0, 0.0, 0
    obs = start(0)
    show()
    due = time.perf_counter()
    while viewer.is_running():
        action = np.asarray(policy.act(env, obs), dtype=np.float64)
        obs, reward, terminated, truncated, info = env.step(action)
        ret += float(reward[0])
        steps += 1
        show()
        if terminated[0] or truncated[0]:
            text = f"episode {k + 1} (seed {seed + k}): return {ret:.2f}, {steps} steps"
            final = ", ".join(f"{m} {float(info[m][0]):.4g}" for m in metrics if m != "success")
            text += f", final {final}" if final else ""
            if "success" in metrics:
                text += ", success" if float(info["success"][0]) > 0.5 else ", no success"
            out(text, flush=True)
            k, ret, steps = k + 1, 0.0, 0
            if episodes is not None and k >= episodes:
                break
            obs = start(k)
            show()
        due += dt / speed
        time.sleep(max(0.0, due - time.perf_counter()))
    return k


def cmd_play(args) -> int:
    """Check the task, the policy and the env keywords, then the display (exit 2, naming the
    `robodyn eval ... --video` command, where there is none or the viewer does not start);
    show the policy acting in MuJoCo's passive viewer, the engine's state pushed into an
    MjData every control step."""
    import gymnasium as gym
    import mujoco
    from gymnasium.vector import AutoresetMode

    from robodyn.training.evaluate import PolicyError, make_policy

    env_id = _env_id(args.env)
    _check_policy_names(env_id, [args.policy])
    scenario = "fixed" if args.fixed else args.scenario
    env_kwargs = _env_kwargs(env_id, args.env_kwargs, scenario)
    why = display_problem()
    if why is not None:
        raise _no_viewer(args, env_id, why)
    (spec,) = _load_policies(env_id, [args.policy], env_kwargs, args.env_kwargs)
    env = gym.make_vec(env_id, num_envs=1, autoreset_mode=AutoresetMode.DISABLED, **env_kwargs)
    try:
        try:
            label, policy = make_policy(spec, env, args.seed)
        except PolicyError as e:
            raise CLIError(str(e)) from None
        model = env.unwrapped.physics.mj_model
        data = mujoco.MjData(model)
        try:
            import mujoco.viewer

            viewer = mujoco.viewer.launch_passive(model, data)
        except Exception as e:  # GLFW's or OpenGL's failure to open a window, whatever its type
            raise _no_viewer(args, env_id, f"the viewer did not start ({type(e).__name__}: {e})") from None
        print(f"playing {label} on {env_id} in MuJoCo's viewer (close the window to stop) ...", flush=True)
        with viewer:
            n = play(env, policy, viewer, data, args.seed, args.episodes, args.speed)
        print(f"{n} episodes played")
    finally:
        env.close()
    return 0


# --- tune --------------------------------------------------------------------------------------
def cmd_tune(args) -> int:
    """Run the task's tuning of a baseline, print the best settings and the sweep's extent,
    and store the record (with the command) where the baseline reads its default gains.
    Exit code 1 if the best sits at an end of the (extended) grid: the optimum was not
    bracketed, and the record says so."""
    from robodyn.envs.baselines.tuned import tuned_path
    from robodyn.training.experiments import tune, write_tuning
    from robogym import registration

    env_id = _env_id(args.env)
    tuned = registration.entry(env_id).tuning
    if args.baseline not in tuned:
        known = ", ".join(tuned) or "none"
        raise CLIError(f"{env_id} declares no tuning for {args.baseline!r}; tuned baselines: {known}")
    t = tuned[args.baseline]
    check_out_file(args.out or tuned_path(env_id, args.baseline), "--out")
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
