"""The tasks read and write the physics by name only (robogym/physics.py, robogym/named.py):
no task module (envs/*_v0.py) imports the engine or reaches for the engine's Data, Model or
Simulator, or MuJoCo's model, behind the Physics' back. What a task needs beyond named state
(a forward pass, contact queries, a keyframe, kinematics of other poses, inverse kinematics,
the physics steps under its actuation) is a method of Physics or Task."""

from __future__ import annotations

import ast

from robodyn.envs import TASK_MODULE
from tests.helpers import REPO

# attributes that hand out the engine's or MuJoCo's arrays unnamed
UNNAMED = {"data", "model", "mj_model", "sim"}


def _is_engine(module: str) -> bool:
    """True for the engine package or a module of it, by its installed or its folder's name."""
    return any(module == root or module.startswith(f"{root}.") for root in ("robodyn.engine", "engine"))


def _violations(path) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out += [f"line {node.lineno}: import {a.name}" for a in node.names if _is_engine(a.name)]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [f"{node.module}.{a.name}" for a in node.names]
            if _is_engine(node.module) or any(_is_engine(n) for n in names):
                out.append(f"line {node.lineno}: from {node.module} import ...")
        elif isinstance(node, ast.Attribute) and node.attr in UNNAMED:
            out.append(f"line {node.lineno}: .{node.attr}")
    return out


def test_tasks_use_the_physics_by_name_only():
    tasks = sorted(p for p in (REPO / "envs").glob("*_v*.py") if TASK_MODULE.fullmatch(p.stem))
    assert len(tasks) >= 5
    found = {p.name: v for p in tasks if (v := _violations(p))}
    assert not found, f"tasks reaching under the Physics: {found}"


def test_the_rule_finds_what_it_forbids(tmp_path):
    bad = tmp_path / "bad_v0.py"
    bad.write_text(
        "import engine\nfrom engine.ik import ik\nx = physics.data.qpos[:, 3]\ny = p.sim\n"
        "from robodyn import engine\nfrom robodyn.engine.ik import ik\nimport robodyn.engine.params\n"
        "from robodyn import envs\n"
    )
    assert len(_violations(bad)) == 7  # all but the last line
