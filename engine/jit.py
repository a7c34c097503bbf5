"""The one place that sets numba's compilation flags, and how engine code is compiled.

Three kinds of compiled function:

- `@kernel`: a serial function called from other compiled code only (no CPython wrapper).
  Each is compiled once by numba's front end and cached on disk; Model and Data reach it
  as one pointer each (`engine.ptr`). It is marked `forceinline`, so LLVM inlines it into
  its callers inside a unit (measured: a forward pass of the crane 457 -> 295 ns, the
  floor models 5-15 % faster, for a few seconds more of cold compile). This is LLVM-level
  inlining, unlike numba's `inline="always"`, which re-typed the callee at every call site.
- `@unit`: a pipeline stage compiled on its own into a C function
  `void f(ModelPtr m, DataPtr d, int64 row)`, called through its address in the Model
  record (`call_unit(m.unit_collision, m, d, b)`). A `@pair_unit` is one collider compiled
  the same way, as `int64 f(ModelPtr m, DataPtr d, int64 row, int64 pair)`. A unit is
  compiled only for the models that use it (a model without contacts never compiles the
  collision, constraint or solver units), and its callers never contain its code, so
  editing it recompiles it alone.
- `@entry` / `@parallel_entry`: called from Python with the records' addresses and plain
  integers; a parallel entry splits the batch over numba's threads.

Flags:
- `cache=True`: machine code is written next to the module and reused by the next process
  (`engine.cache` drops it when an edit makes it stale).
- `fastmath=False`: we compare against MuJoCo at 1e-10; reassociation would cost digits.
- `error_model="numpy"`: division by zero gives inf/nan (caught by our NaN checks) instead
  of raising from deep inside a kernel with no context.
- `boundscheck=False`: `engine.binding` checks every shape once, kernels trust them.
- `_nrt=False`: no reference counting: kernels never allocate, and the arrays belong to
  Model and Data in Python for as long as a kernel runs.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types

JIT_OPTIONS = dict(fastmath=False, error_model="numpy", boundscheck=False, nogil=True, _nrt=False)


def _plain_argument_types(dispatcher):
    """Make compiled callers type their calls to `dispatcher` with the arguments' plain types:
    int64 for every signed integer (a constant 3, Literal[int](3), or an int32 read from a
    Model array; unsigned ones, as in PGS's random generator, keep their width). numba would
    otherwise compile a kernel, and everything it calls, once for every constant and integer
    width some caller passes it (measured: the convex collider's unit compiled its
    multi-contact search four times and a small row helper 20 times). Inlined into its
    caller, a constant still folds."""
    typed_as_given = dispatcher.get_call_template

    def plain(t):
        t = types.unliteral(t)
        return types.int64 if isinstance(t, types.Integer) and t.signed else t

    def get_call_template(args, kws):
        return typed_as_given(tuple(plain(a) for a in args), {k: plain(v) for k, v in kws.items()})

    dispatcher.get_call_template = get_call_template
    return dispatcher


def kernel(fn):
    """Compile `fn` as a serial numba kernel, callable from other compiled code only."""
    options = dict(no_cpython_wrapper=True, no_cfunc_wrapper=True, cache=True, forceinline=True)
    return _plain_argument_types(njit(**options, **JIT_OPTIONS)(fn))


@kernel
def u(i):
    """The index i (known >= 0) as an unsigned 64-bit integer.

    numba reads `a[i]` for a signed i as `a[i + len(a)] if i < 0 else a[i]`: a compare and a
    select on every access, which also keeps LLVM from strength-reducing the address of an
    index computed from loaded offsets (`qLD[M_rowadr[i] + t]`). An unsigned index has no
    negative case. Arithmetic on such an index must stay unsigned: numba types uint64 +
    int64 (a signed variable, not a constant) as int64, which brings the select back.
    Measured on the LTDL factor of gymnasium's humanoid: 1.00 -> 0.55 us, the same bits.
    """
    return np.uint64(i)


def outline(fn):
    """Compile `fn` as a serial kernel that LLVM keeps as a function of its own (called, not
    inlined): for large kernels called from several places (the convex collider's support
    function, GJK, EPA, the multi-contact search), which inlining would copy into every
    caller, and the drivers' per-row glue, which runs once per row-step, where inlining
    saves nothing and makes LLVM optimize the whole pipeline again in every caller."""
    options = dict(no_cpython_wrapper=True, no_cfunc_wrapper=True, cache=True)
    return _plain_argument_types(njit(**options, **JIT_OPTIONS)(fn))


def entry(fn):
    """Compile `fn` as an entry point called from Python (serial; releases the GIL)."""
    return njit(cache=True, **JIT_OPTIONS)(fn)


def parallel_entry(fn):
    """Compile `fn` as an entry point whose `prange` loops run on numba's threads."""
    return njit(cache=True, parallel=True, **JIT_OPTIONS)(fn)


class Unit:
    """A pipeline stage compiled on its own as `void f(ModelPtr m, DataPtr d, int64 row)`.

    Compiled (or loaded from the on-disk cache) the first time `address(signature)` is asked
    for, that is when a Simulator is built for a model that needs it; the caller passes the
    C signature (engine.ptr.UNIT_SIGNATURE), so this module needs nothing above it.
    """

    def __init__(self, fn, pair: bool = False):
        self.py_func = fn
        self.pair = pair  # a pair unit: engine.ptr.PAIR_SIGNATURE, else UNIT_SIGNATURE
        self.__name__ = fn.__name__
        self.__qualname__ = fn.__qualname__
        self.__module__ = fn.__module__
        self.__doc__ = fn.__doc__
        self._cfunc = None

    def __repr__(self) -> str:
        return f"<unit {self.__module__}.{self.__qualname__}>"

    @property
    def label(self) -> str:
        return f"{self.__module__.removeprefix('robodyn.engine.')}.{self.__name__}"

    def _compiler(self, signature):
        if self._cfunc is None:
            from numba.core.ccallback import CFunc

            sig = (signature.args, signature.return_type)
            cfunc = CFunc(self.py_func, sig, locals={}, options=dict(JIT_OPTIONS))
            cfunc.enable_caching()
            self._cfunc = cfunc
        return self._cfunc

    def is_compiled(self) -> bool:
        return self._cfunc is not None and self._cfunc.address is not None

    def is_cached(self, signature) -> bool:
        """True if compiled in this process or loadable from the on-disk cache."""
        if self.is_compiled():
            return True
        cfunc = self._compiler(signature)
        return cfunc._cache.load_overload(cfunc._sig, cfunc._targetdescr.target_context) is not None

    def cache_dir(self, signature) -> str:
        """The directory numba caches this unit's machine code in."""
        return self._compiler(signature)._cache._cache_path

    def address(self, signature) -> int:
        """The C function's address (compiling or loading it on first use)."""
        cfunc = self._compiler(signature)
        if cfunc.address is None:
            cfunc.compile()
        return int(cfunc.address)


def unit_call(context, builder, sig, args):
    """Codegen of an intrinsic that calls a unit (or pair unit) through its address: args are
    (address, m, d, row[, pair]), the integers passed as int64 as the unit was compiled; the
    result is the pair unit's int64, nothing for a void unit. engine.ptr.call_unit and
    engine.ptr.call_pair_unit type the calls; this emits them."""
    fn_address = context.cast(builder, args[0], sig.args[0], types.int64)
    ints = [context.cast(builder, a, t, types.int64) for a, t in zip(args[3:], sig.args[3:], strict=True)]
    ptrs = list(args[1:3])
    ret = context.get_value_type(sig.return_type)
    fnty = ir.FunctionType(ret, [p.type for p in ptrs] + [i.type for i in ints])
    out = builder.call(builder.inttoptr(fn_address, fnty.as_pointer()), ptrs + ints)
    return context.get_dummy_value() if sig.return_type == types.void else out


def unit(fn) -> Unit:
    """Declare `fn(m, d, b)` a separately compiled pipeline unit (see the module docstring)."""
    return Unit(fn)


def job_unit(fn) -> Unit:
    """Declare `fn(m, d, b, job)` (job: the Job record's address, engine.job; returns 0) a
    separately compiled part of the step driver that only some calls use (a drive),
    compiled with a pair unit's C signature. The driver calls it through a Model record
    slot that engine.binding sets when a call first needs it, so a Simulator that never
    drives never compiles it."""
    return Unit(fn, pair=True)


def pair_unit(fn) -> Unit:
    """Declare `fn(m, d, b, p)` (the contacts of candidate pair p of row b: their number) a
    separately compiled collider unit."""
    return Unit(fn, pair=True)


def entry_is_cached(dispatcher, argtypes: tuple) -> bool:
    """True if entry `dispatcher` is compiled for `argtypes` in this process or on disk."""
    argtypes = tuple(argtypes)
    if argtypes in dispatcher.overloads:
        return True
    return dispatcher._cache.load_overload(argtypes, dispatcher.targetctx) is not None


def entry_cache_dir(dispatcher) -> str:
    """The directory numba caches entry `dispatcher`'s machine code in."""
    return dispatcher._cache._cache_path
