"""docs/your_robot.md runs as written: its ```python blocks, in order, in one module (so the
task it registers is found by its "module:name" entry points) inside an empty directory,
as a reader who copies them would run them. A block that raises or an assert in one that
fails fails this test, so the tutorial cannot drift from the code."""

from __future__ import annotations

import re
import sys
import types

import gymnasium as gym
import pytest

from robogym import registration
from tests.helpers import REPO

DOC = REPO / "docs" / "your_robot.md"
MODULE = "your_robot_tutorial"


def python_blocks(text: str) -> list[str]:
    """The bodies of the ```python fenced blocks of a Markdown text, in order."""
    return re.findall(r"^```python\n(.*?)^```$", text, flags=re.MULTILINE | re.DOTALL)


def test_the_block_reader_finds_what_is_fenced_python_only():
    text = "a\n```python\nx = 1\n```\n```bash\nls\n```\n```python\ny = 2\nz = 3\n```\n"
    assert python_blocks(text) == ["x = 1\n", "y = 2\nz = 3\n"]


@pytest.fixture
def registries_restored():
    """robogym.TASKS and Gymnasium's registry as they were before the test: the tutorial's
    task lives in a module that exists only during the test, and a later test in the same
    process (`robodyn list` in tests/training/test_cli.py) would try to import it."""
    tasks = list(registration.TASKS)
    ids = set(gym.registry)
    yield
    registration.TASKS[:] = tasks
    for env_id in set(gym.registry) - ids:
        del gym.registry[env_id]


def test_every_python_block_of_the_tutorial_runs(tmp_path, monkeypatch, registries_restored):
    blocks = python_blocks(DOC.read_text())
    assert len(blocks) >= 8, "the tutorial's code blocks were not found"
    monkeypatch.chdir(tmp_path)
    module = types.ModuleType(MODULE)
    monkeypatch.setitem(sys.modules, MODULE, module)
    for i, block in enumerate(blocks):
        code = compile(block, f"{DOC.name}, python block {i + 1}", "exec")
        exec(code, module.__dict__)
    # what the blocks made is what the tutorial says
    assert (tmp_path / "arm.xml").is_file()
    assert module.ReachEnv.__module__ == MODULE and "MyRobot/Reach-v0" in [t.id for t in module.robogym.TASKS]
    assert "| `target_noise` | `0.1` |" in module.ReachEnv.__doc__  # documented from its declarations
