"""The documentation site (mkdocs.yml, docs/): it builds with `mkdocs build --strict` (a broken
link, a missing page, an anchor that is not there or an API object that cannot be found fails
the build), and the code on its pages runs as written.

Each tutorial page's ```python blocks run in order in one module (so a task a page registers
is found by its "module:name" entry points), inside an empty directory, as a reader who
copies them would run them; a block that raises, or an assert in one that fails, fails the
test. The sizes on the pages are small (a few hundred training steps, a few episodes) so
that the pages run in about a minute. The Ray page runs on a local Ray instance of two
CPUs. docs/your_robot.md runs in tests/robogym/test_your_robot_doc.py.

The task pages copy each env's spaces from its docstring: a Box on a page that the env's
docstring does not state fails test_task_pages_state_the_envs_spaces, so they cannot drift.
"""

from __future__ import annotations

import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

from tests.helpers import REPO

DOCS = REPO / "docs"
TUTORIALS = ["randomized_physics", "training_sb3", "training_pytorch", "ray", "gymnasium_tasks"]
TASK_PAGES = {
    "crane": "RoboDyn/Crane-v0",
    "rocket": "RoboDyn/Rocket-v0",
    "tracking": "RoboDyn/Tracking-v0",
    "humanoid": "RoboDyn/HumanoidPush-v0",
    "quadruped": "RoboDyn/Quadruped-v0",
    "imitate": "RoboDyn/Imitate-v0",
    "cartpole": "RoboDyn/CartPole-v0",
}


def python_blocks(text: str) -> list[str]:
    """The bodies of the ```python fenced blocks of a Markdown text, in order."""
    return re.findall(r"^```python\n(.*?)^```$", text, flags=re.MULTILINE | re.DOTALL)


def run_blocks(path: Path, module_name: str, tmp_path, monkeypatch) -> types.ModuleType:
    blocks = python_blocks(path.read_text())
    assert blocks, f"{path.name}: no ```python blocks found"
    monkeypatch.chdir(tmp_path)
    module = types.ModuleType(module_name)
    monkeypatch.setitem(sys.modules, module_name, module)
    for i, block in enumerate(blocks):
        exec(compile(block, f"{path.name}, python block {i + 1}", "exec"), module.__dict__)
    return module


def test_the_block_reader_finds_what_is_fenced_python_only():
    text = "a\n```python\nx = 1\n```\n```bash\nls\n```\n```\nplain\n```\n```python\ny = 2\n```\n"
    assert python_blocks(text) == ["x = 1\n", "y = 2\n"]


def test_a_failing_block_fails(tmp_path, monkeypatch):
    page = tmp_path / "page.md"
    page.write_text("```python\nx = 1\n```\n\n```python\nassert x == 2, 'the page is wrong'\n```\n")
    with pytest.raises(AssertionError, match="the page is wrong"):
        run_blocks(page, "docs_failing_page", tmp_path, monkeypatch)


@pytest.mark.parametrize("page", TUTORIALS)
def test_every_python_block_of_a_tutorial_runs(page, tmp_path, monkeypatch):
    module = run_blocks(DOCS / "tutorials" / f"{page}.md", f"docs_tutorial_{page}", tmp_path, monkeypatch)
    if page == "randomized_physics":
        assert module.HeavyPoleEnv.__module__ == f"docs_tutorial_{page}"
    if page == "training_sb3":
        assert (tmp_path / "runs" / "crane-ppo" / "ppo.zip").is_file() and (
            tmp_path / "crane_sac.zip"
        ).is_file()


def test_the_readme_quick_start_runs(tmp_path, monkeypatch):
    """The README's first Python block, its quick start, runs as written."""
    module = run_blocks(REPO / "README.md", "docs_readme", tmp_path, monkeypatch)
    assert module.frame.shape == (480, 640, 3) and module.obs.shape == (64, 7)


@pytest.mark.parametrize("page", sorted(TASK_PAGES))
def test_task_pages_state_the_envs_spaces(page, tmp_path, monkeypatch):
    """Each task page's code runs, and every `Box(...)` it states is in its env's docstring:
    an action and an observation space, in that order."""
    text = (DOCS / "tasks" / f"{page}.md").read_text()
    module = run_blocks(DOCS / "tasks" / f"{page}.md", f"docs_task_{page}", tmp_path, monkeypatch)
    env = module.env
    assert env.spec.id == TASK_PAGES[page]
    doc = type(env.unwrapped).__doc__
    boxes = re.findall(r"`(Box\([^`]*\))`", text)
    assert len(boxes) == 2, f"{page}.md should state the action and the observation space"
    for box in boxes:
        assert f"`{box}`" in doc, f"{page}.md states {box}, the env's docstring does not"
    shape = re.search(r"\((\d+),\)", boxes[1]).group(1)
    assert env.observation_space.shape == (int(shape),)
    assert "![RoboDyn/" in text and (DOCS / re.search(r"\]\(\.\./(\w+\.png)\)", text).group(1)).is_file()


def test_mkdocs_build_strict(tmp_path):
    """`mkdocs build --strict` succeeds: no warning (a broken link or anchor, a page not in
    the nav, an API object mkdocstrings cannot collect) and every page written."""
    site = tmp_path / "site"
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    index = (site / "index.html").read_text()
    assert "The main job: the crane, PD vs MPC vs PPO" in index  # the README is the front page
    assert 'href="reference/engine/"' in index  # its link to engine/README.md, pointed at its page
    for page in ["api/engine", "api/envs", "api/training", "tasks/crane", "tutorials/ray", "your_robot"]:
        assert (site / page / "index.html").is_file(), page
    api = (site / "api" / "engine" / "index.html").read_text()
    assert "load_mjcf" in api and "Simulator" in api and "set_param" in api  # from the docstrings
    assert "WARNING" not in proc.stderr


def test_a_broken_link_fails_the_strict_build(tmp_path):
    """The strict build is able to fail: the same site with one page linking to a missing
    page is refused."""
    import shutil

    copy = tmp_path / "repo"
    copy.mkdir()
    shutil.copy(REPO / "mkdocs.yml", copy / "mkdocs.yml")
    shutil.copytree(DOCS, copy / "docs")
    for name in ["README.md", "engine", "robogym", "envs", "training", "tests", "benchmarks"]:
        src = REPO / name
        if src.is_dir():
            (copy / name).mkdir()
            if (src / "README.md").is_file():
                shutil.copy(src / "README.md", copy / name / "README.md")
        else:
            shutil.copy(src, copy / name)
    (copy / "docs" / "tasks" / "crane.md").write_text("# Crane\n\n[gone](no_such_page.md)\n")
    text = (copy / "mkdocs.yml").read_text().replace("paths: [.]", f"paths: [{REPO}]")
    (copy / "mkdocs.yml").write_text(text)
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=copy,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode != 0
    assert "no_such_page.md" in proc.stdout + proc.stderr
