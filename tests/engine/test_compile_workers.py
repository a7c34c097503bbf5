"""Cold compiles in worker processes (engine.compile_workers, used by binding.ensure_compiled).

1. The plan: shares of about equal estimated time, longest first to the least loaded share;
   every item in exactly one share.
2. From an empty cache (a NUMBA_CACHE_DIR of its own, in a fresh process), two units compiled
   with ROBODYN_COMPILE_WORKERS=2: the workers compile both and the calling process compiles
   nothing (it loads them from the cache), and the notice says so. With 1 worker the calling
   process compiles them itself, and the notice has no "processes".
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import engine
from engine.compile_workers import MAX_WORKERS, estimate, plan, workers
from engine.notice import COMPILE_SECONDS


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
from engine.binding import ensure_compiled
from engine.integrate import euler, rk4
from engine.ptr import UNIT_SIGNATURE

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
