"""Cold compiles spread over worker processes, one per core.

Each unit (`engine.jit.unit`) and each driver entry is compiled on its own and cached on
disk, so a cold start that needs several of them can compile them side by side: worker
processes each compile a share and write it to the cache, and the calling process then
loads everything from there. A first run then takes about the longest worker's time
instead of the sum (the crane's units: about half).

The shares balance the estimated compile times (`engine.notice.COMPILE_SECONDS`): longest
first, each to the least loaded worker. Workers are plain `python -c` processes started with
the caller's interpreter and `sys.path`; one that fails (or finds another `engine` package)
costs nothing but its time, because the caller compiles whatever is still missing itself.

Processes that share a cache (a SubprocVecEnv's or Ray's workers, pytest-xdist's) take a
lock file per item, next to the item's cache (`claim`): an item another process is already
compiling is waited for and then loaded from the cache, not compiled a second time, while the
items nobody else has claimed are compiled meanwhile.

ROBODYN_COMPILE_WORKERS sets the number of workers (1: compile in the calling process);
the default is the cores this process may run on, at most 4 (each worker holds a compiler
of its own, about 1 GB).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import subprocess
import sys

from robodyn.engine.notice import COMPILE_SECONDS, DEFAULT_SECONDS

try:
    import fcntl
except ImportError:  # not a POSIX system: no locks, so processes may compile an item twice
    fcntl = None

MAX_WORKERS = 4

# what a worker runs: read its share from stdin, compile each item into the on-disk cache
_WORKER = """
import importlib, os, pickle, sys
share = pickle.load(sys.stdin.buffer)
from robodyn import engine
if os.path.abspath(engine.__file__) != share["engine"]:
    sys.exit(3)  # another engine package on this path: its cache would not be the caller's
from robodyn.engine.ptr import signature
for label, argtypes in share["items"]:
    module, name = label.rsplit(".", 1)
    obj = getattr(importlib.import_module("robodyn.engine." + module), name)
    if argtypes is None:
        obj.address(signature(obj))
    else:
        obj.compile(argtypes)
"""


def workers() -> int:
    """How many worker processes a cold compile may use (ROBODYN_COMPILE_WORKERS, else the
    usable cores, at most MAX_WORKERS)."""
    value = os.environ.get("ROBODYN_COMPILE_WORKERS", "")
    if value.strip():
        try:
            return max(1, int(value))
        except ValueError:
            return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(MAX_WORKERS, cores))


def plan(items: list, n: int) -> list[list]:
    """`items` ((label, argtypes) pairs) in at most n shares of about equal estimated time:
    longest first, each to the share with the least time so far. Empty shares are dropped."""
    shares: list[list] = [[] for _ in range(n)]
    loads = [0.0] * n
    for item in sorted(items, key=lambda it: -COMPILE_SECONDS.get(it[0], DEFAULT_SECONDS)):
        k = loads.index(min(loads))
        shares[k].append(item)
        loads[k] += COMPILE_SECONDS.get(item[0], DEFAULT_SECONDS)
    return [s for s in shares if s]


def estimate(shares: list[list]) -> float:
    """Estimated seconds of a compile in these shares: the longest share's."""
    return max(
        (sum(COMPILE_SECONDS.get(label, DEFAULT_SECONDS) for label, _ in s) for s in shares), default=0.0
    )


def compile_in_workers(shares: list[list]) -> bool:
    """Compile each share in a worker process of its own and wait for all of them; True if
    every worker finished. The caller then loads (or compiles) each item as usual."""
    package = os.path.join(os.path.dirname(os.path.abspath(__file__)), "__init__.py")  # engine.__file__
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    procs = []
    try:
        for share in shares:
            proc = subprocess.Popen(
                [sys.executable, "-c", _WORKER],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=env,
            )
            procs.append(proc)
            proc.stdin.write(pickle.dumps({"engine": package, "items": share}))
            proc.stdin.close()
    except (OSError, ValueError, pickle.PicklingError):
        pass  # no interpreter to start (an embedded Python) or a worker gone: the caller compiles
    return len(procs) == len(shares) and all(proc.wait() == 0 for proc in procs)


def _open_lock(path: str):
    """An open file to lock at `path`, or None where it cannot be made (no fcntl, a cache
    directory that cannot be written: numba then compiles without caching anyway)."""
    if fcntl is None:
        return None
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        return open(path, "a")
    except OSError:
        return None


@contextlib.contextmanager
def claim(locks: dict):
    """Claim the items of `locks` (label -> lock file path) for this process: yields
    (mine, theirs), the labels whose lock this process now holds, to compile while the `with`
    lasts, and those another process holds (see `wait`). The locks are released when the
    `with` ends or the process dies, so a crashed compile never blocks anyone."""
    held, mine, theirs = [], [], []
    try:
        for label in sorted(locks):
            f = _open_lock(locks[label])
            if f is None:
                mine.append(label)
                continue
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                f.close()
                theirs.append(label)
                continue
            held.append(f)
            mine.append(label)
        yield mine, theirs
    finally:
        for f in held:
            f.close()  # releases its lock


def wait(paths: list[str]) -> None:
    """Block until no process holds any of the lock files at `paths` (each is taken and let
    go in turn)."""
    for path in sorted(paths):
        f = _open_lock(path)
        if f is not None:
            with f:
                fcntl.flock(f, fcntl.LOCK_EX)
