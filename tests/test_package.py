"""A wheel built from the repository carries everything RoboDyn needs and works from any
directory, without the repository.

What this test does, and so proves:

1. copies what the build reads (pyproject.toml, README.md and the directories robodyn/,
   engine/, robogym/, envs/, training/ and assets/, without compiled caches) from the working tree
   to a temporary directory, so no earlier build/ directory can leak into the wheel, and
   builds a wheel from that copy with `pip wheel --no-deps --no-build-isolation` (this
   environment's setuptools, so no network), as `pip install .` or `pip install git+URL`
   would build it;
2. reads the wheel: every module of engine/, robogym/, envs/ and training/ is in it under
   its import name (robodyn.engine, robogym, robodyn.envs, robodyn.training), every MJCF
   file of assets/ and assets/tests/ as package data of `robodyn.assets`, every file of
   training/policies/ as package data of `robodyn.training`; nothing but the packages
   robodyn and robogym (and the wheel's metadata) is at its top level; the `robodyn`
   console script points at robodyn.training.cli:main;
3. installs the wheel with `pip install --no-deps --target INSTALL` and runs ONE Python
   subprocess with `python -S` (no site: the editable install's finder, registered by a .pth
   file, is never loaded) and PYTHONPATH=INSTALL:<this environment's site-packages> (for
   numpy, numba, mujoco, gymnasium, stable-baselines3, torch, matplotlib), from a temporary
   working directory outside the repository. In it, `gymnasium.make("robogym:RoboDyn/Crane-v0")`
   makes the crane with no RoboDyn import before it (Gymnasium imports robogym, which
   registers every task), every project package and
   `robogym.physics.asset_path` resolve under INSTALL and the repository is not on sys.path;
   every task of robogym.TASKS is registered, its class imported and its model loaded from
   the install, and the crane is made and stepped; and the generated console script
   INSTALL/bin/robodyn runs `robodyn eval RoboDyn/Crane-v0 --fixed --episodes 2`, which
   finds the crane's saved PPO policy inside the installed training package and writes its
   results to the working directory.

What it does not prove: that pip resolves the dependencies declared in pyproject.toml (they
come from this environment, not from an install of the wheel's metadata), nor that every
task steps from the install: each task's physics is the repository's (tests/envs), and only
the crane's kernels are compiled afresh for the installed copy (about 20 s on two cores);
the other tasks' classes and models are loaded there.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

from tests.helpers import REPO

# each layer's directory in the repository -> where its modules lie in the wheel
LAYERS = {
    "engine": "robodyn/engine",
    "robogym": "robogym",
    "envs": "robodyn/envs",
    "training": "robodyn/training",
}

RUN_INSTALLED = r"""
import sys
from pathlib import Path

install, repo = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
assert all(Path(p or ".").resolve() != repo for p in sys.path), sys.path
import gymnasium as gym

env = gym.make("robogym:RoboDyn/Crane-v0")  # no RoboDyn import before: robogym registers
assert "robogym" in sys.modules and "robodyn.envs.crane_v0" in sys.modules

import robodyn, robogym
from robodyn import assets, engine, envs, training
from robodyn.envs import baselines
from robodyn.training import cli
from robogym.physics import asset_path

for module in (robodyn, engine, envs, baselines, assets, robogym, training, cli):
    assert Path(module.__file__).resolve().is_relative_to(install), module.__file__
assert asset_path("crane.xml").resolve().is_relative_to(install)
assert not any("editable" in name for name in sys.modules), "the editable finder was loaded"

from robogym.registration import load

for task in robogym.TASKS:  # each task's class and model, from the install
    task_class = load(task.entry_point).task_class
    model_file = task_class().model_file  # a port of a Gymnasium task: Gymnasium's own file
    path = Path(model_file) if Path(model_file).is_absolute() else asset_path(model_file)
    model = engine.load_mjcf(path)
    assert model.nq > 0 and Path(sys.modules[task_class.__module__].__file__).is_relative_to(install)
    print(f"loaded {task.id}", flush=True)
assert asset_path("imitate_walk.npz").resolve().is_relative_to(install)  # the clip a task plays
env.reset(seed=0)  # one task run end to end (its kernels compiled for the install)
for _ in range(3):
    env.step(env.action_space.sample())
print("stepped RoboDyn/Crane-v0", flush=True)

import runpy

sys.argv = ["robodyn", "eval", "RoboDyn/Crane-v0", "--fixed", "--episodes", "2"]
runpy.run_path(str(install / "bin" / "robodyn"), run_name="__main__")
"""


def _build_wheel(tmp_path: Path) -> Path:
    """Build the wheel from a copy of what the build reads; returns its path."""
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, src / name)
    caches = shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc")
    for directory in ("robodyn", *LAYERS, "assets"):
        shutil.copytree(REPO / directory, src / directory, ignore=caches)
    dist = tmp_path / "dist"
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(dist)]
    subprocess.run([*cmd, str(src)], check=True, capture_output=True, timeout=300)
    (wheel,) = dist.glob("robodyn-*.whl")
    return wheel


def test_wheel_installs_apart_from_the_repository_and_runs_from_any_directory(tmp_path):
    wheel = _build_wheel(tmp_path)

    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {
        f"{where}/{p.relative_to(REPO / layer).as_posix()}"
        for layer, where in LAYERS.items()
        for p in (REPO / layer).rglob("*.py")
        if "__pycache__" not in p.parts
    }
    expected |= {f"robodyn/assets/{p.relative_to(REPO / 'assets').as_posix()}" for p in _assets()}
    expected |= {f"robodyn/training/policies/{p.name}" for p in (REPO / "training" / "policies").iterdir()}
    tuned = (REPO / "envs" / "baselines" / "tuned").glob("*.json")
    expected |= {f"robodyn/envs/baselines/tuned/{p.name}" for p in tuned}
    assert expected - names == set(), "missing from the wheel"
    assert any(n.startswith("robodyn/assets/tests/") for n in names)
    top = {n.split("/")[0] for n in names if ".dist-info/" not in n}
    assert top == {"robodyn", "robogym"}, f"the wheel's top level: {sorted(top)}"
    (entry_points,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "robodyn = robodyn.training.cli:main" in text and "robodyn = robodyn.envs" in text

    install = tmp_path / "install"
    pip = [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(install)]
    subprocess.run([*pip, str(wheel)], check=True, capture_output=True, timeout=300)

    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "MPLBACKEND": "Agg"}
    env["PYTHONPATH"] = f"{install}:{sysconfig.get_paths()['purelib']}"
    proc = subprocess.run(
        [sys.executable, "-S", "-c", RUN_INSTALLED, str(install), str(REPO)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    for task in _task_ids():
        assert f"loaded {task}" in proc.stdout
    assert "stepped RoboDyn/Crane-v0" in proc.stdout
    assert "mean return" in proc.stdout and "crane_ppo" in proc.stdout

    doc = json.loads((cwd / "runs" / "eval-Crane-v0" / "results.json").read_text())
    assert doc["episodes"] == 2 and "crane_ppo" in doc["policies"]
    spec = Path(doc["policies"]["crane_ppo"]["spec"])
    assert spec.is_relative_to(install / "robodyn" / "training" / "policies"), spec
    # the installed copy of the policy acts as the repository's (its bar: tests/envs/test_crane.py)
    assert doc["policies"]["crane_ppo"]["summary"]["success_rate"] == 1.0


def _assets() -> list[Path]:
    """Every MJCF file of assets/ and assets/tests/, and the clips of assets/ (a task's
    reference motion, .npz)."""
    top = sorted((REPO / "assets").glob("*.xml")) + sorted((REPO / "assets").glob("*.npz"))
    return top + sorted((REPO / "assets" / "tests").glob("*.xml"))


def _task_ids() -> list[str]:
    """The ids of the tasks the package's own envs register, as this (editable) install
    does (robogym.TASKS may also hold test tasks a test module registered)."""
    import robogym

    return [t.id for t in robogym.TASKS if t.entry_point.startswith("robodyn.envs.")]
