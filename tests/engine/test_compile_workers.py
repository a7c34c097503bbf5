"""Cold compiles in worker processes (engine.compile_workers, used by binding.ensure_compiled).

1. The plan: shares of about equal estimated time, longest first to the least loaded share;
   every item in exactly one share.
2. From an empty cache (a NUMBA_CACHE_DIR of its own, in a fresh process), two units compiled
   with ROBODYN_COMPILE_WORKERS=2: the workers compile both and the calling process compiles
   nothing (it loads them from the cache), and the notice says so. With 1 worker the calling
   process compiles them itself, and the notice has no "processes".
3. Processes sharing a cache: `claim` gives this process the items whose lock file is free
   and names those another process holds; `ensure_compiled` in a second process waits (and
   says so) while a first holds a unit's lock, and compiles the unit itself once the first
   lets go without having compiled it.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from robodyn import engine
from robodyn.engine.compile_workers import MAX_WORKERS, claim, estimate, plan, wait, workers
from robodyn.engine.notice import COMPILE_SECONDS


def test_plan_balances_the_estimates():
    items = [(label, None) for label in COMPILE_SECONDS]
    shares = plan(items, 2)
    assert sorted(label for s in shares for label, _ in s) == sorted(COMPILE_SECONDS)
    loads = [sum(COMPILE_SECONDS[label] for label, _ in s) for s in shares]
    # longest-first greedy: no share exceeds the other by more than its own smallest item
    assert max(loads) - min(loads) <= max(COMPILE_SECONDS.values())
    assert estimate(shares) == max(loads) < sum(COMPILE_SECONDS.values())
    assert plan(items[:1], 4) == [items[:1]]  # no empty shares


def test_workers_setting(monkeypatch):
    monkeypatch.setenv("ROBODYN_COMPILE_WORKERS", "3")
    assert workers() == 3
    monkeypatch.setenv("ROBODYN_COMPILE_WORKERS", "0")
    assert workers() == 1
    monkeypatch.setenv("ROBODYN_COMPILE_WORKERS", "many")
    assert workers() == 1
    monkeypatch.delenv("ROBODYN_COMPILE_WORKERS")
    assert 1 <= workers() <= MAX_WORKERS


_PROBE = """
import json, sys
from numba.core import event
from robodyn.engine.binding import ensure_compiled
from robodyn.engine.integrate import euler, rk4
from robodyn.engine.ptr import UNIT_SIGNATURE

class Count(event.Listener):
    n = 0
    def on_start(self, ev):
        pass
    def on_end(self, ev):
        Count.n += 1

with event.install_listener("numba:compile", Count()):
    ensure_compiled((euler, rk4))
addresses = [euler.address(UNIT_SIGNATURE), rk4.address(UNIT_SIGNATURE)]
print(json.dumps({"here": Count.n, "addresses": addresses}))
"""


@pytest.mark.parametrize("n", [2, 1])
def test_cold_units_compiled_by_the_workers(tmp_path, n):
    root = str(Path(engine.__file__).parent.parent)
    env = dict(
        os.environ,
        NUMBA_CACHE_DIR=str(tmp_path),
        ROBODYN_COMPILE_WORKERS=str(n),
        PYTHONPATH=os.pathsep.join([root, *sys.path]),
    )
    out = subprocess.run(
        [sys.executable, "-c", _PROBE], cwd=root, env=env, capture_output=True, text=True, timeout=900
    )
    assert out.returncode == 0, out.stderr
    probe = json.loads(out.stdout.strip().splitlines()[-1])
    print(f"\n{n} worker(s): {probe['here']} functions compiled in the calling process\n{out.stderr}")
    assert all(a != 0 for a in probe["addresses"])
    assert "compiling the engine's kernels" in out.stderr
    if n == 2:
        assert "(euler, rk4) in 2 processes" in out.stderr
        assert probe["here"] == 0, "the calling process compiled what the workers should have"
        assert list(Path(tmp_path).rglob("integrate.euler*.nbi")) and list(
            Path(tmp_path).rglob("integrate.rk4*.nbi")
        )
    else:
        assert "processes" not in out.stderr
        assert probe["here"] > 0


# holds the lock files named on its command line until its stdin closes
_HOLDER = """
import sys
from robodyn.engine.compile_workers import claim
with claim({p: p for p in sys.argv[1:]}) as (mine, theirs):
    print(len(mine), len(theirs), flush=True)
    sys.stdin.read()
"""


def _env(cache: Path) -> dict:
    root = str(Path(engine.__file__).parent.parent)
    return dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=os.pathsep.join([root, *sys.path]))


def _holder(env: dict, *paths) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, *map(str, paths)],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout.readline().split() == ["1", "0"]  # it holds the lock
    return proc


def _line_with(stream, text: str, timeout: float) -> str:
    """The first line of `stream` (a pipe) containing `text`, read within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    seen = []
    while time.monotonic() < deadline:
        if select.select([stream], [], [], 1.0)[0]:
            line = stream.readline()
            seen.append(line)
            if text in line:
                return line
            if not line:
                break
    raise AssertionError(f"no line with {text!r} within {timeout} s; got {seen}")


def test_claim_names_the_items_another_process_holds(tmp_path):
    held, free = tmp_path / "a.lock", tmp_path / "b.lock"
    proc = _holder(_env(tmp_path), held)
    try:
        with claim({"a": str(held), "b": str(free)}) as (mine, theirs):
            assert (mine, theirs) == (["b"], ["a"])
    finally:
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0
    wait([str(held)])  # let go: returns at once
    with claim({"a": str(held), "b": str(free)}) as (mine, theirs):
        assert (mine, theirs) == (["a", "b"], [])


_COMPILE_EULER = """
import sys
from robodyn.engine.binding import ensure_compiled
from robodyn.engine.integrate import euler
from robodyn.engine.ptr import UNIT_SIGNATURE
if sys.argv[1] == "lock-path":
    import os
    print(os.path.join(euler.cache_dir(UNIT_SIGNATURE), euler.label + ".lock"))
else:
    ensure_compiled((euler,))
    print(euler.address(UNIT_SIGNATURE) != 0)
"""


def test_a_second_process_waits_for_the_first(tmp_path):
    env = dict(_env(tmp_path), ROBODYN_COMPILE_WORKERS="1")
    probe = [sys.executable, "-c", _COMPILE_EULER]
    lock = subprocess.run([*probe, "lock-path"], env=env, capture_output=True, text=True, timeout=300)
    assert lock.returncode == 0, lock.stderr
    holder = _holder(env, lock.stdout.strip())
    second = subprocess.Popen(
        [*probe, "compile"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = _line_with(second.stderr, "waiting for another process compiling euler", timeout=300)
        print(f"\n{line.strip()}")
        time.sleep(1.0)
        assert second.poll() is None, "the second process went on while the first held the lock"
    finally:
        holder.stdin.close()
        assert holder.wait(timeout=60) == 0
    out, err = second.communicate(timeout=600)
    print(err)
    assert second.returncode == 0, err
    # the first let go without compiling: the second compiled euler itself
    assert "compiling the engine's kernels for this model (euler)" in err
    assert out.strip().splitlines()[-1] == "True"
