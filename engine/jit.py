"""The one place that sets numba's compilation flags for every engine kernel.

Every kernel in `engine/` is declared with `@kernel` (one environment, serial) or
`@entry` (called from Python, loops over a range of rows). Nothing else picks its own flags.

- `cache=True`: compiled machine code is written next to the module and reused by the
  next process, so a new Python process pays load time, not compile time.
- `fastmath=False`: we compare against MuJoCo at 1e-10; reassociation would cost digits.
- `error_model="numpy"`: division by zero gives inf/nan (caught by our NaN checks) instead
  of raising from deep inside a kernel with no context.
- `boundscheck=False`: wrappers check shapes once, kernels trust them.
- `_nrt=False`: no reference counting. Every kernel call that takes Model and Data would
  otherwise incref and decref each of their ~150 arrays on entry and exit (measured: about
  70% of a step's time). Kernels never allocate, so there is nothing to count; the arrays
  are owned by Model and Data in Python for as long as a kernel runs.
- Inner kernels are only ever called from other kernels, so they are built without the
  CPython and cfunc wrappers (`no_cpython_wrapper`): unboxing Model and Data (a hundred
  arrays each) in a wrapper per function would cost seconds of compile time each.
  Only the batch entry points, called from Python, carry a wrapper.
"""

import hashlib
import os
from pathlib import Path

from numba import config, njit

JIT_OPTIONS = dict(cache=True, fastmath=False, error_model="numpy", boundscheck=False, nogil=True, _nrt=False)


def kernel(fn):
    """Compile `fn` as a serial numba kernel, callable from other kernels only."""
    return njit(no_cpython_wrapper=True, no_cfunc_wrapper=True, **JIT_OPTIONS)(fn)


def stage(fn):
    """Compile `fn` as a kernel that numba inlines into each caller (`inline="always"`).

    Used for the pipeline stages and small per-step helpers: a call that passes Model and
    Data flattens ~150 arrays into its arguments, which costs more than a small stage's
    work (measured: ~0.25 us a call, ~25 calls a step). Inlined, one step of the double
    pendulum makes three calls instead of twenty-five.
    """
    return njit(inline="always", no_cpython_wrapper=True, no_cfunc_wrapper=True, **JIT_OPTIONS)(fn)


def entry(fn):
    """Compile `fn` as an entry point called from Python (serial; releases the GIL)."""
    return njit(**JIT_OPTIONS)(fn)


def _invalidate_stale_cache() -> None:
    """Drop numba's on-disk cache when any engine source file changed.

    numba keys a cached function on its own file only, but our kernels inline kernels from
    other files: after an edit to, say, rne.py, a cached forward kernel would still contain
    the old RNE. A hash of every engine source, stored beside the cache, catches that.
    """
    here = Path(__file__).parent
    digest = hashlib.sha256()
    for src in sorted(here.glob("*.py")):
        digest.update(src.name.encode())
        digest.update(src.read_bytes())
    if config.CACHE_DIR:  # where numba's UserProvidedCacheLocator puts this package's cache
        from numba.core.caching import UserProvidedCacheLocator

        sub = UserProvidedCacheLocator.get_suitable_cache_subpath(str(here / "jit.py"))
        cache_dir = Path(config.CACHE_DIR) / sub
    else:
        cache_dir = here / "__pycache__"
    stamp = cache_dir / "robodyn-source.sha256"
    try:
        if stamp.exists() and stamp.read_text() == digest.hexdigest():
            return
        cache_dir.mkdir(parents=True, exist_ok=True)
        for f in list(cache_dir.glob("*.nbi")) + list(cache_dir.glob("*.nbc")):
            f.unlink(missing_ok=True)
        stamp.write_text(digest.hexdigest())
    except OSError:
        # a read-only install: numba falls back to its own cache locations
        pass


if os.environ.get("ROBODYN_KEEP_STALE_CACHE") != "1":
    _invalidate_stale_cache()
