"""Time the README's first command as a new user meets it: clean clone, install, main job.

    python -m benchmarks.first_run                 # clone this checkout's HEAD into a temp dir
    python -m benchmarks.first_run --no-pip-cache  # also download every package afresh

The README's first line is three commands joined by `&&`:

    python3 -m venv .venv
    .venv/bin/pip install -e ".[train]"
    .venv/bin/robodyn eval RoboDyn/Crane-v0 --fixed

This script runs exactly those in a fresh `git clone` of the repository
(so no compiled kernels exist) and reports how long each phase took: creating the virtual
environment, installing, and, inside `robodyn eval`, the time to the compile notice, the
compilation itself, and the time until the results table is printed. Numbers depend on the
machine and, for the install, on the network and pip's download cache (`--no-pip-cache`
empties it for the run).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EVAL = ["robodyn", "eval", "RoboDyn/Crane-v0", "--fixed"]


def run_phase(label: str, cmd: list[str], cwd: Path, env: dict) -> float:
    """Run `cmd`, raise with its output if it fails; returns its wall time."""
    t0 = time.perf_counter()
    out = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if out.returncode != 0:
        raise SystemExit(f"{label} failed ({' '.join(cmd)}):\n{out.stdout[-2000:]}\n{out.stderr[-4000:]}")
    print(f"  {label:<28s} {dt:7.1f} s", flush=True)
    return dt


def run_eval(cwd: Path, env: dict) -> dict:
    """Run `robodyn eval`, timestamping its output: notice, compiled, table, end."""
    marks: dict[str, float] = {}
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [str(cwd / ".venv" / "bin" / EVAL[0]), *EVAL[1:]],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        bufsize=1,
    )
    lines = []
    for line in proc.stdout:
        now = time.perf_counter() - t0
        lines.append(line)
        if "compiling the engine's kernels" in line:
            marks.setdefault("notice", now)
        elif "robodyn: compiled in" in line:
            marks["compiled"] = now
        elif line.startswith("policy ") and "episodes" in line:
            marks.setdefault("table", now)
    proc.wait()
    marks["end"] = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"robodyn eval failed:\n{''.join(lines)[-4000:]}")
    marks["output"] = "".join(lines)
    return marks


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--no-pip-cache", action="store_true", help="download every package afresh")
    ap.add_argument("--keep", type=Path, help="clone into this (new) directory and keep it")
    args = ap.parse_args(argv)

    base = args.keep or Path(tempfile.mkdtemp(prefix="robodyn-first-run-"))
    clone = base / "robodyn"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "VIRTUAL_ENV", "PYTHON"))}
    if args.no_pip_cache:
        env["PIP_NO_CACHE_DIR"] = "1"
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True)
    print(f"first run of the README's main command, from a clean clone of {REPO} at {head.stdout.strip()}")
    print(f"  into {clone} (pip cache {'off' if args.no_pip_cache else 'as configured'})")
    times = {}
    times["clone"] = run_phase("git clone", ["git", "clone", "-q", str(REPO), str(clone)], base, env)
    times["venv"] = run_phase("python3 -m venv .venv", [sys.executable, "-m", "venv", ".venv"], clone, env)
    pip = str(clone / ".venv" / "bin" / "pip")
    install = [pip, "install", "-q", "-e", ".[train]"]
    times["install"] = run_phase('pip install -e ".[train]"', install, clone, env)
    marks = run_eval(clone, env)
    print(marks["output"], end="")
    notice = marks.get("notice")
    compiled = marks.get("compiled")
    print("phases:")
    for key in ("clone", "venv", "install"):
        print(f"  {key:<28s} {times[key]:7.1f} s")
    if notice is not None and compiled is not None:
        print(f"  {'eval: start to notice':<28s} {notice:7.1f} s")
        print(f"  {'eval: compiling':<28s} {compiled - notice:7.1f} s")
    else:
        print("  eval: no compile notice (nothing to compile?)")
    print(f"  {'eval: start to table':<28s} {marks.get('table', float('nan')):7.1f} s")
    print(f"  {'eval: whole command':<28s} {marks['end']:7.1f} s")
    total = times["venv"] + times["install"] + marks["end"]
    print(f"  {'README first line in all':<28s} {total:7.1f} s  (venv + install + eval)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
