"""engine.cache, the on-disk cache guard: an edit recompiles what depends on it, and nothing
stale is ever served.

numba keys a cached function on its own source file only, but compiled code contains the
kernels it calls from other files. `engine.cache.invalidate_stale_cache` drops the cache of
every module whose source, or the source of any engine module it imports (transitively),
changed. Checked two ways: on the digests of a synthetic package, and end to end by editing
a callee kernel in a copy of the engine and running it again in a fresh interpreter; the same
end-to-end run with the guard switched off (ROBODYN_KEEP_STALE_CACHE=1) serves the stale
code, which is what the guard prevents.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from robodyn.engine.cache import ENGINE_DIR, dependency_digests, module_imports
from tests.helpers import ASSETS, REPO


def test_module_imports_finds_every_form():
    src = (
        "from robodyn.engine import types as T\n"
        "from robodyn.engine.rne import rne\n"
        "import robodyn.engine.spatial\n"
        "from robodyn.engine import (\n    fields,\n    kinematics,  # a comment\n)\n"
        "def f():\n    from robodyn.engine.solver import fwd_constraint\n"
        "import numpy as np\nfrom numba import njit\n"
    )
    modules = {"types", "rne", "spatial", "fields", "kinematics", "solver", "factor"}
    assert module_imports(src, modules) == {"types", "rne", "spatial", "fields", "kinematics", "solver"}


def test_module_imports_follows_continuations_and_skips_lookalikes():
    src = (
        "from robodyn.engine.rne import \\\n    rne\n"
        "x = 1  # from robodyn.engine.solver import nothing: not at a line's start\n"
        '"""\nfrom robodyn.engine import this is not Python\n"""\n'
    )
    assert module_imports(src, {"rne", "solver", "this"}) == {"rne"}
    # a parenthesis in a comment sends the scan past the line: the whole file is parsed
    src = "from robodyn.engine.rne import rne  # (see\nfrom robodyn.engine import factor\nx = f(1)\n"
    assert module_imports(src, {"rne", "factor"}) == {"rne", "factor"}


def _imports_by_full_parse(source: str, modules: set[str]) -> set[str]:
    """What every import node of the whole parsed file names (the scan's reference)."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        names = [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
        if isinstance(node, ast.ImportFrom) and node.module == "robodyn.engine":
            names = [f"robodyn.engine.{a.name}" for a in node.names]
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        found.update(n.split(".")[2] for n in names if n.startswith("robodyn.engine."))
    return found & modules


def test_module_imports_equals_a_full_parse_on_every_engine_module():
    """The line scan finds every engine import a parse of the whole file finds; beyond them
    only imports written inside strings (a subprocess's script), which can only add a
    dependency. Printed: the modules where the scan found more."""
    sources = {p.stem: p.read_text() for p in ENGINE_DIR.glob("*.py")}
    modules = set(sources)
    more = {}
    for name, source in sources.items():
        scanned, parsed = module_imports(source, modules), _imports_by_full_parse(source, modules)
        assert parsed <= scanned, (name, parsed - scanned)
        if scanned != parsed:
            more[name] = scanned - parsed
    print(f"\n{len(sources)} engine modules; imports found only inside strings: {more}")
    assert set(more) <= {"compile_workers"}, more


def test_digest_changes_exactly_with_the_code_a_module_can_contain(tmp_path):
    """a imports b, b imports c; d imports nothing. Editing c changes the digests of a, b
    and c, not d's; editing d changes only d's."""
    pkg = tmp_path / "engine"
    pkg.mkdir()
    files = {
        "jit": "",
        "ptr": "",
        "fields": "",
        "a": "from robodyn.engine.b import g\n",
        "b": "from robodyn.engine import c\n",
        "c": "x = 1\n",
        "d": "y = 2\n",
    }
    for name, text in files.items():
        (pkg / f"{name}.py").write_text(text)
    before = dependency_digests(pkg)
    (pkg / "c.py").write_text("x = 2\n")
    after_c = dependency_digests(pkg)
    changed = {m for m in before if before[m] != after_c[m]}
    assert changed == {"a", "b", "c"}
    (pkg / "d.py").write_text("y = 3\n")
    after_d = dependency_digests(pkg)
    assert {m for m in after_c if after_c[m] != after_d[m]} == {"d"}
    (pkg / "ptr.py").write_text("# how fields are read changed\n")
    after_ptr = dependency_digests(pkg)
    assert {m for m in after_d if after_d[m] != after_ptr[m]} == set(files)


_PROBE = """
import json, sys
from robodyn import engine
model = engine.load_mjcf(sys.argv[1])
sim = engine.Simulator(model, batch=1)
sim.data.qvel[:] = 0.3
sim.forward()
print(json.dumps({"file": engine.__file__, "sensordata": sim.data.sensordata[0].tolist()}))
"""


def _probe(root: Path, keep_stale: bool = False) -> dict:
    """The sensors model's readings from the engine under `root`, in a fresh interpreter,
    with the cache guard on (or switched off by ROBODYN_KEEP_STALE_CACHE=1)."""
    env = dict(os.environ, PYTHONPATH=str(root))
    env.pop("ROBODYN_KEEP_STALE_CACHE", None)
    if keep_stale:
        env["ROBODYN_KEEP_STALE_CACHE"] = "1"
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, str(ASSETS / "tests" / "sensors.xml")],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def _cache_files(cache: Path, module: str) -> dict[str, int]:
    return {f.name: f.stat().st_mtime_ns for f in cache.glob(f"{module}.*.nb*")}


def _copy_and_run(tmp_path: Path) -> tuple[Path, dict]:
    """A copy of the engine with its cache (the files' times kept, so the copy's first run
    loads what it can), laid out as the package robodyn.engine under `root` (found before the
    installed one: PYTHONPATH), and its first run's readings."""
    root = tmp_path / "copy"
    shutil.copytree(ENGINE_DIR, root / "robodyn" / "engine")  # importable as robodyn.engine
    shutil.copy(REPO / "robodyn" / "__init__.py", root / "robodyn" / "__init__.py")
    first = _probe(root)
    assert Path(first["file"]).parent == root / "robodyn" / "engine"
    return root, first


def _edit_rne_post(root: Path) -> None:
    """Double gravity in the copy's rne_post_constraint (cacc of the world body), which the
    accelerometer reads through the sensors module's rne_post unit."""
    rne_post = root / "robodyn" / "engine" / "rne_post.py"
    text = rne_post.read_text()
    old = "cacc[0, 3 + k] = -m.opt_gravity[k]"
    assert text.count(old) == 1
    rne_post.write_text(text.replace(old, "cacc[0, 3 + k] = -2.0 * m.opt_gravity[k]"))


def test_an_edited_callee_is_recompiled_and_nothing_else(tmp_path):
    """Copy the engine (with its cache), run the sensors model, then edit rne_post.py (a kernel the sensors
    unit calls; sensors.py itself is unchanged): the next run must read the edited code
    (accelerometer readings change), recompile rne_post and sensors, and keep the cache of
    modules that do not import rne_post (kinematics, forward)."""
    root, first = _copy_and_run(tmp_path)
    cache = root / "robodyn" / "engine" / "__pycache__"
    kept = {m: _cache_files(cache, m) for m in ("kinematics", "forward")}
    assert all(kept.values()), f"expected cached kernels of kinematics and forward in {cache}"

    _edit_rne_post(root)
    second = _probe(root)

    assert second["sensordata"] != first["sensordata"], "the edited kernel was not recompiled"
    for module, files in kept.items():
        assert _cache_files(cache, module) == files, f"{module} was recompiled; it does not import rne_post"
    stamp = json.loads((cache / "robodyn-dependencies.json").read_text())
    assert stamp == dependency_digests(root / "robodyn" / "engine")


def test_without_the_guard_the_stale_unit_is_served(tmp_path):
    """The same edit with the guard switched off (ROBODYN_KEEP_STALE_CACHE=1): numba checks
    only sensors.py, which is unchanged, so it serves the cached sensors code with the old
    rne_post compiled in. The readings are the first run's to the bit (the guarded run above
    reads the edit), the sensors cache is not rewritten, and the guard's stamp is left alone."""
    root, first = _copy_and_run(tmp_path)
    cache = root / "robodyn" / "engine" / "__pycache__"
    sensors = _cache_files(cache, "sensors")
    assert sensors, f"expected cached kernels of sensors in {cache}"
    stamp = (cache / "robodyn-dependencies.json").read_text()

    _edit_rne_post(root)
    stale = _probe(root, keep_stale=True)

    assert stale["sensordata"] == first["sensordata"], "the guard is off, yet the edit was compiled in"
    assert _cache_files(cache, "sensors") == sensors
    assert (cache / "robodyn-dependencies.json").read_text() == stamp


def test_an_edit_to_the_vector_type_changes_every_digest(tmp_path):
    """engine.vec's F64x8 reaches modules that never import it: a lane kernel calls
    spatial.qmul on F64x8 tuples, and numba caches that specialization with spatial's code.
    An edit to vec.py must drop every module's cache (it once served spatial's cached 8-lane
    code to 16-lane callers: a segfault)."""
    pkg = tmp_path / "engine"
    shutil.copytree(ENGINE_DIR, pkg, ignore=shutil.ignore_patterns("__pycache__"))
    before = dependency_digests(pkg)
    assert "vec" not in module_imports((pkg / "spatial.py").read_text(), set(before))
    (pkg / "vec.py").write_text((pkg / "vec.py").read_text() + "\n# an edit\n")
    after = dependency_digests(pkg)
    assert {m for m in before if before[m] == after[m]} == set()
