"""The one place that sets numba's compilation flags, and how engine code is compiled.

Three kinds of compiled function:

- `@kernel`: a serial function called from other compiled code only (no CPython wrapper).
  Kernels are plain calls, compiled once each and cached on disk; Model and Data reach
  them as one pointer each (`engine.ptr`), so a call costs a few nanoseconds.
- `@unit`: a pipeline stage compiled on its own into a C function
  `void f(ModelPtr m, DataPtr d, int64 row)`, called through its address in the Model
  record (`call_unit(m.unit_collision, m, d, b)`). A unit is compiled only for the models
  that use it (a model without contacts never compiles the collision, constraint or solver
  units), and its callers never contain its code, so editing it recompiles it alone.
- `@entry` / `@parallel_entry`: called from Python with the records' addresses and plain
  integers; a parallel entry splits the batch over numba's threads.

Flags:
- `cache=True`: machine code is written next to the module and reused by the next process.
- `fastmath=False`: we compare against MuJoCo at 1e-10; reassociation would cost digits.
- `error_model="numpy"`: division by zero gives inf/nan (caught by our NaN checks) instead
  of raising from deep inside a kernel with no context.
- `boundscheck=False`: `engine.binding` checks every shape once, kernels trust them.
- `_nrt=False`: no reference counting: kernels never allocate, and the arrays belong to
  Model and Data in Python for as long as a kernel runs.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import json
import os
import sys
import threading
import time
from pathlib import Path

from numba import config, njit
from numba.core import event

JIT_OPTIONS = dict(fastmath=False, error_model="numpy", boundscheck=False, nogil=True, _nrt=False)

ENGINE_DIR = Path(__file__).parent


def kernel(fn):
    """Compile `fn` as a serial numba kernel, callable from other compiled code only."""
    return njit(no_cpython_wrapper=True, no_cfunc_wrapper=True, cache=True, **JIT_OPTIONS)(fn)


def entry(fn):
    """Compile `fn` as an entry point called from Python (serial; releases the GIL)."""
    return njit(cache=True, **JIT_OPTIONS)(fn)


def parallel_entry(fn):
    """Compile `fn` as an entry point whose `prange` loops run on numba's threads."""
    return njit(cache=True, parallel=True, **JIT_OPTIONS)(fn)


class Unit:
    """A pipeline stage compiled on its own as `void f(ModelPtr m, DataPtr d, int64 row)`.

    Compiled (or loaded from the on-disk cache) the first time `address()` is asked for,
    that is when a Simulator is built for a model that needs it.
    """

    def __init__(self, fn):
        self.py_func = fn
        self.__name__ = fn.__name__
        self.__qualname__ = fn.__qualname__
        self.__module__ = fn.__module__
        self.__doc__ = fn.__doc__
        self._cfunc = None

    def __repr__(self) -> str:
        return f"<unit {self.__module__}.{self.__qualname__}>"

    @property
    def label(self) -> str:
        return f"{self.__module__.removeprefix('engine.')}.{self.__name__}"

    def _compiler(self):
        if self._cfunc is None:
            from numba.core.ccallback import CFunc

            from engine.ptr import UNIT_SIGNATURE

            sig = (UNIT_SIGNATURE.args, UNIT_SIGNATURE.return_type)
            cfunc = CFunc(self.py_func, sig, locals={}, options=dict(JIT_OPTIONS))
            cfunc.enable_caching()
            self._cfunc = cfunc
        return self._cfunc

    def is_compiled(self) -> bool:
        return self._cfunc is not None and self._cfunc.address is not None

    def is_cached(self) -> bool:
        """True if compiled in this process or loadable from the on-disk cache."""
        if self.is_compiled():
            return True
        cfunc = self._compiler()
        return cfunc._cache.load_overload(cfunc._sig, cfunc._targetdescr.target_context) is not None

    def address(self) -> int:
        """The C function's address (compiling or loading it on first use)."""
        cfunc = self._compiler()
        if cfunc.address is None:
            cfunc.compile()
        return int(cfunc.address)


def unit(fn) -> Unit:
    """Declare `fn(m, d, b)` a separately compiled pipeline unit (see the module docstring)."""
    return Unit(fn)


def entry_is_cached(dispatcher, argtypes: tuple) -> bool:
    """True if entry `dispatcher` is compiled for `argtypes` in this process or on disk."""
    argtypes = tuple(argtypes)
    if argtypes in dispatcher.overloads:
        return True
    return dispatcher._cache.load_overload(argtypes, dispatcher.targetctx) is not None


# ---- the on-disk cache: drop what an edit made stale ------------------------------------------

# every kernel's machine code depends on these: the flags, and how Model and Data fields are read
_EVERYONE_DEPENDS_ON = ("jit", "ptr", "fields")


def module_imports(source: str, modules: set[str]) -> set[str]:
    """The engine modules a module's source imports (`from engine.x import ...`,
    `from engine import x`, `import engine.x`), at any depth of the file."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "engine":
                found.update(alias.name for alias in node.names)
            elif node.module.startswith("engine."):
                found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[1] for a in node.names if a.name.startswith("engine."))
    return found & modules


def dependency_digests(src_dir: Path = ENGINE_DIR) -> dict[str, str]:
    """{module: digest of its source and of every engine module it imports, transitively}.

    numba keys a cached function on its own file only, but the code it caches contains the
    kernels it calls from other files: after an edit to rne.py, cached code of every module
    that imports rne (directly or through another module) still holds the old RNE. A
    module's digest changes exactly when its code, or code it can contain, changes.
    """
    sources = {p.stem: p.read_bytes() for p in sorted(src_dir.glob("*.py"))}
    modules = set(sources)
    imports = {name: module_imports(src.decode(), modules) for name, src in sources.items()}
    digests = {}
    for name in sources:
        seen, todo = set(), [name, *_EVERYONE_DEPENDS_ON]
        while todo:
            mod = todo.pop()
            if mod in seen or mod not in sources:
                continue
            seen.add(mod)
            todo.extend(imports[mod])
        h = hashlib.sha256()
        for mod in sorted(seen):
            h.update(mod.encode() + b"\0" + sources[mod] + b"\0")
        digests[name] = h.hexdigest()
    return digests


def cache_dir(src_dir: Path = ENGINE_DIR) -> Path:
    """Where numba keeps the cache of the engine's modules."""
    if config.CACHE_DIR:  # numba's UserProvidedCacheLocator
        from numba.core.caching import UserProvidedCacheLocator

        sub = UserProvidedCacheLocator.get_suitable_cache_subpath(str(src_dir / "jit.py"))
        return Path(config.CACHE_DIR) / sub
    return src_dir / "__pycache__"


def invalidate_stale_cache(src_dir: Path = ENGINE_DIR) -> list[str]:
    """Delete the cached code of every module whose digest changed since it was cached;
    returns those modules. Modules whose code and imports are unchanged keep their cache."""
    where = cache_dir(src_dir)
    stamp = where / "robodyn-dependencies.json"
    digests = dependency_digests(src_dir)
    try:
        old = json.loads(stamp.read_text()) if stamp.exists() else {}
    except (OSError, ValueError):
        old = {}
    stale = sorted(name for name, digest in digests.items() if old.get(name) != digest)
    if not stale:
        return []
    try:
        where.mkdir(parents=True, exist_ok=True)
        for name in stale:
            for f in list(where.glob(f"{name}.*.nbi")) + list(where.glob(f"{name}.*.nbc")):
                f.unlink(missing_ok=True)
        stamp.write_text(json.dumps(digests, indent=0, sort_keys=True))
    except OSError:
        pass  # a read-only install: numba falls back to its own cache locations
    return stale


if os.environ.get("ROBODYN_KEEP_STALE_CACHE") != "1":
    invalidate_stale_cache()


# ---- telling the user about a cold compile ----------------------------------------------------

# Seconds a cold compile of each unit or entry took on this project's 2-core machine
# (`python -m benchmarks.bench_step --cold` measures them); the notice sums them.
COMPILE_SECONDS = {
    "forward.forward": 30.0,
    "sensors.sensors": 8.0,
    "collision_driver.collision": 25.0,
    "constraint.make_constraint": 15.0,
    "constraint.reference_constraint": 4.0,
    "solver.fwd_constraint": 20.0,
    "integrate.euler": 3.0,
    "integrate.rk4": 4.0,
    "integrate.implicit": 8.0,
    "step.forward_rows": 3.0,
    "step.step_rows": 3.0,
}
_DEFAULT_SECONDS = 3.0


@contextlib.contextmanager
def compiling(labels: list[str], stream=None):
    """Around the compilation of `labels` (units and entries, "module.function"): when
    there is anything to compile, say so first, then show progress until it is done."""
    if not labels:
        yield
        return
    stream = stream or sys.stderr
    estimate = sum(COMPILE_SECONDS.get(label, _DEFAULT_SECONDS) for label in labels)
    names = ", ".join(label.split(".")[-1] for label in labels)
    print(
        f"robodyn: compiling the engine's kernels for this model ({names}), about {estimate:.0f} s, "
        "once; later runs load them from the cache",
        file=stream,
        flush=True,
    )
    progress = _Progress(stream)
    start = time.perf_counter()
    with event.install_listener("numba:compile", progress):
        progress.start()
        try:
            yield
        finally:
            progress.stop()
    print(f"robodyn: compiled in {time.perf_counter() - start:.0f} s", file=stream, flush=True)


class _Progress(event.Listener):
    """Counts numba's compile events and reports them: in place every half second on a
    terminal, one line every 15 s otherwise (a log)."""

    def __init__(self, stream):
        self.stream = stream
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.count = 0
        self.current = ""
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="robodyn-compile-progress", daemon=True)
        self._start = time.perf_counter()

    def on_start(self, ev):
        dispatcher = ev.data.get("dispatcher")
        self.current = getattr(getattr(dispatcher, "py_func", None), "__qualname__", "")

    def on_end(self, ev):
        self.count += 1

    def start(self):
        self._start = time.perf_counter()
        self._thread.start()

    def stop(self):
        self._done.set()
        self._thread.join()
        if self.tty:
            print(file=self.stream, flush=True)

    def _line(self) -> str:
        elapsed = time.perf_counter() - self._start
        return f"robodyn: compiling ... {elapsed:4.0f} s, {self.count} functions done ({self.current})"

    def _run(self):
        period = 0.5 if self.tty else 15.0
        while not self._done.wait(period):
            if self.tty:
                print("\r" + self._line().ljust(100), end="", file=self.stream, flush=True)
            else:
                print(self._line(), file=self.stream, flush=True)
