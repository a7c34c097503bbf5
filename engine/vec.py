"""F64x8: eight float64 lanes as one LLVM `<8 x double>`, a numba value type.

A batch of environments runs the same operations on different numbers. Written with one
environment at a time, LLVM's loop vectorizer does not turn the row loop into vector code
by itself (engine/README.md, "Lanes"); written with this type, every `a * b` is one vector
multiply of eight rows, so the vector code does not depend on what the vectorizer decides.

Each lane does exactly what the scalar code does, in the same order: `+ - * /`, `sqrt` and
`abs` are IEEE operations, correctly rounded lane by lane (LLVM's `fadd`, `fsub`, `fmul`,
`fdiv`, `llvm.sqrt`, `llvm.fabs` on vectors, no fast-math flags, so no fused multiply-add and
no reassociation), and `sin` / `cos` call numba's scalar functions on each lane. A kernel
written for floats and run on F64x8 values therefore gives every row the bits the scalar
kernel gives it: the engine's tuple helpers (`engine.spatial.qmul`, `inert_vec`, ...) are used
unchanged on tuples of F64x8.

What scalar code does with a branch on a value (`if n < eps: ...`) is written here as a
select: comparisons give an M8 (`<8 x i1>`), and `select(mask, a, b)` takes a lane from a
where the mask is set, from b elsewhere.

Arrays hold lanes in their last axis, eight float64 in a row: `vload(x[i, k])` reads the
eight values of field entry (i, k), `vstore(x[i, k], v)` writes them (x[i, k] a C-contiguous
1-d view of length 8; the length is not checked, as engine kernels check no bounds).
"""

from __future__ import annotations

import math
import operator

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.core.imputils import lower_builtin
from numba.core.typing.templates import AbstractTemplate, infer_global, signature
from numba.extending import intrinsic, models, register_model

LANES = 8

_F64 = ir.DoubleType()
_I32 = ir.IntType(32)
_V8 = ir.VectorType(_F64, LANES)
_M8 = ir.VectorType(ir.IntType(1), LANES)


class F64x8Type(types.Type):
    """Eight float64 lanes."""

    def __init__(self):
        super().__init__(name=f"F64x{LANES}")


class M8Type(types.Type):
    """Eight booleans, one per lane: a comparison of F64x8 values."""

    def __init__(self):
        super().__init__(name="M8")


f64x8 = F64x8Type()
m8 = M8Type()


@register_model(F64x8Type)
class _F64x8Model(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, _V8)


@register_model(M8Type)
class _M8Model(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, _M8)


def _is_scalar(t) -> bool:
    return isinstance(t, (types.Float, types.Integer, types.Boolean))


def _splat(context, builder, value, ty):
    """value as eight lanes: an F64x8 is itself; a number is converted to float64 first."""
    if isinstance(ty, F64x8Type):
        return value
    x = context.cast(builder, value, ty, types.float64)
    vec = builder.insert_element(ir.Constant(_V8, ir.Undefined), x, ir.Constant(_I32, 0))
    return builder.shuffle_vector(vec, vec, ir.Constant(ir.VectorType(_I32, LANES), [0] * LANES))


def _lane_operands(args) -> bool:
    """Two operands of which one is F64x8 and the other F64x8 or a number."""
    if len(args) != 2 or not any(isinstance(a, F64x8Type) for a in args):
        return False
    return all(isinstance(a, F64x8Type) or _is_scalar(a) for a in args)


_ARITH = {
    operator.add: "fadd",
    operator.iadd: "fadd",
    operator.sub: "fsub",
    operator.isub: "fsub",
    operator.mul: "fmul",
    operator.imul: "fmul",
    operator.truediv: "fdiv",
    operator.itruediv: "fdiv",
}
_COMPARE = {
    operator.lt: "<",
    operator.le: "<=",
    operator.gt: ">",
    operator.ge: ">=",
    operator.eq: "==",
    operator.ne: "!=",
}


def _register_arith(op, instr):
    @infer_global(op)
    class _Typing(AbstractTemplate):
        def generic(self, args, kws):
            if not kws and _lane_operands(args):
                return signature(f64x8, *args)
            return None

    def lower(context, builder, sig, args):
        a, b = (_splat(context, builder, v, t) for v, t in zip(args, sig.args, strict=True))
        return getattr(builder, instr)(a, b)

    for pair in ((F64x8Type, F64x8Type), (F64x8Type, types.Number), (types.Number, F64x8Type)):
        lower_builtin(op, *pair)(lower)


def _register_compare(op, cmp):
    @infer_global(op)
    class _Typing(AbstractTemplate):
        def generic(self, args, kws):
            if not kws and _lane_operands(args):
                return signature(m8, *args)
            return None

    def lower(context, builder, sig, args):
        a, b = (_splat(context, builder, v, t) for v, t in zip(args, sig.args, strict=True))
        # ordered comparisons, as Python's float comparisons (False with a NaN), except !=
        return builder.fcmp_unordered(cmp, a, b) if cmp == "!=" else builder.fcmp_ordered(cmp, a, b)

    for pair in ((F64x8Type, F64x8Type), (F64x8Type, types.Number), (types.Number, F64x8Type)):
        lower_builtin(op, *pair)(lower)


for _op, _instr in _ARITH.items():
    _register_arith(_op, _instr)
for _op, _cmp in _COMPARE.items():
    _register_compare(_op, _cmp)


@infer_global(operator.neg)
class _NegTyping(AbstractTemplate):
    def generic(self, args, kws):
        if len(args) == 1 and isinstance(args[0], F64x8Type):
            return signature(f64x8, f64x8)
        return None


@lower_builtin(operator.neg, F64x8Type)
def _neg(context, builder, sig, args):
    return builder.fneg(args[0])


def _register_mask_logic(op, instr):
    @infer_global(op)
    class _Typing(AbstractTemplate):
        def generic(self, args, kws):
            if len(args) == 2 and all(isinstance(a, M8Type) for a in args):
                return signature(m8, m8, m8)
            return None

    @lower_builtin(op, M8Type, M8Type)
    def lower(context, builder, sig, args):
        return getattr(builder, instr)(args[0], args[1])


_register_mask_logic(operator.and_, "and_")
_register_mask_logic(operator.or_, "or_")


def _vector_intrinsic(builder, name, value):
    fnty = ir.FunctionType(_V8, [_V8])
    fn = cgutils.get_or_insert_function(builder.module, fnty, f"llvm.{name}.v8f64")
    return builder.call(fn, [value])


def _register_unary(fn, lowering):
    @infer_global(fn)
    class _Typing(AbstractTemplate):
        def generic(self, args, kws):
            if len(args) == 1 and isinstance(args[0], F64x8Type):
                return signature(f64x8, f64x8)
            return None

    lower_builtin(fn, F64x8Type)(lowering)


def _per_lane(fn):
    """Lowering of fn on F64x8: numba's own scalar fn applied to each lane."""

    def lower(context, builder, sig, args):
        scalar = context.get_function(fn, signature(types.float64, types.float64))
        vec = args[0]
        out = ir.Constant(_V8, ir.Undefined)
        for k in range(LANES):
            x = builder.extract_element(vec, ir.Constant(_I32, k))
            out = builder.insert_element(out, scalar(builder, [x]), ir.Constant(_I32, k))
        return out

    return lower


def _intrinsic_lowering(name):
    return lambda context, builder, sig, args: _vector_intrinsic(builder, name, args[0])


# exact operations (correctly rounded, or exact as floor and |x| are): one vector instruction
_register_unary(math.sqrt, _intrinsic_lowering("sqrt"))
_register_unary(np.sqrt, _intrinsic_lowering("sqrt"))
_register_unary(abs, _intrinsic_lowering("fabs"))
_register_unary(np.floor, _intrinsic_lowering("floor"))
# the rest: numba's scalar function on each lane, so each lane gets the scalar code's bits
_register_unary(math.sin, _per_lane(math.sin))
_register_unary(math.cos, _per_lane(math.cos))
_register_unary(np.tan, _per_lane(np.tan))


def _lane_view(aryty) -> bool:
    return isinstance(aryty, types.Array) and aryty.ndim == 1 and aryty.dtype == types.float64


def _lanes_pointer(context, builder, aryty, ary):
    data = context.make_array(aryty)(context, builder, ary).data
    return builder.bitcast(data, _V8.as_pointer())


@intrinsic
def vload(typingctx, x):
    """The eight lanes x[0:8] of a C-contiguous 1-d float64 view, as one F64x8."""
    if not _lane_view(x) or x.layout != "C":
        return None

    def codegen(context, builder, sig, args):
        return builder.load(_lanes_pointer(context, builder, sig.args[0], args[0]), align=8)

    return f64x8(x), codegen


@intrinsic
def vstore(typingctx, x, v):
    """x[0:8] = the eight lanes of v (x a C-contiguous 1-d float64 view)."""
    if not _lane_view(x) or x.layout != "C" or not isinstance(v, F64x8Type):
        return None

    def codegen(context, builder, sig, args):
        builder.store(args[1], _lanes_pointer(context, builder, sig.args[0], args[0]), align=8)
        return context.get_dummy_value()

    return types.void(x, v), codegen


@intrinsic
def splat(typingctx, x):
    """A number in all eight lanes."""
    if not _is_scalar(x):
        return None

    def codegen(context, builder, sig, args):
        return _splat(context, builder, args[0], sig.args[0])

    return f64x8(x), codegen


@intrinsic
def select(typingctx, mask, a, b):
    """Lane k: a[k] where mask[k], else b[k] (a, b: F64x8 or numbers)."""
    ok = isinstance(mask, M8Type) and all(isinstance(t, F64x8Type) or _is_scalar(t) for t in (a, b))
    if not ok:
        return None

    def codegen(context, builder, sig, args):
        va = _splat(context, builder, args[1], sig.args[1])
        vb = _splat(context, builder, args[2], sig.args[2])
        return builder.select(args[0], va, vb)

    return f64x8(mask, a, b), codegen


@intrinsic
def lane(typingctx, v, k):
    """Lane k of v, as a float64."""
    if not isinstance(v, F64x8Type) or not isinstance(k, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        idx = context.cast(builder, args[1], sig.args[1], types.int32)
        return builder.extract_element(args[0], idx)

    return types.float64(v, k), codegen


@intrinsic
def all_lanes(typingctx, mask):
    """True if every lane of mask is set."""
    if not isinstance(mask, M8Type):
        return None

    def codegen(context, builder, sig, args):
        bits = builder.bitcast(args[0], ir.IntType(LANES))
        return builder.icmp_unsigned("==", bits, ir.Constant(ir.IntType(LANES), (1 << LANES) - 1))

    return types.boolean(mask), codegen
