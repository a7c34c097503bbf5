"""Vector arithmetic LLVM does not find by itself, in exactly the scalar code's order.

MuJoCo's mju_dot (AVX) keeps four partial sums, s_k = sum of a[i] b[i] over i = k mod 4 in
ascending i, and adds them as (s0 + s2) + (s1 + s3). `engine.constraint.dot` reproduces that
order with four scalar accumulators, which LLVM keeps scalar (one multiply and one add at a
time). `dot_lanes` computes the same four sums as the four lanes of one 256-bit vector: each
lane multiplies and adds the same numbers in the same order (no fused multiply-add, no
reassociation: plain IEEE `fmul` and `fadd`), so the results are the same bits, four at a
time.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

_F64 = ir.DoubleType()
_V4 = ir.VectorType(_F64, 4)
_I64 = ir.IntType(64)
_I32 = ir.IntType(32)


def _load4(context, builder, aryty, ary, i):
    """a[i:i+4] as a <4 x double>: one unaligned vector load from a C-contiguous array, else
    four element loads through the strides."""
    if aryty.layout == "C":
        ptr = builder.gep(ary.data, [i])
        return builder.load(builder.bitcast(ptr, _V4.as_pointer()), align=8)
    vec = ir.Constant(_V4, ir.Undefined)
    for k in range(4):
        idx = builder.add(i, ir.Constant(_I64, k))
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [idx], wraparound=False)
        vec = builder.insert_element(vec, builder.load(ptr), ir.Constant(_I32, k))
    return vec


@intrinsic
def dot_lanes(typingctx, a, b, n):
    """(s0, s1, s2, s3) with s_k = sum over i < n, i = k mod 4, of a[i] b[i], each summed in
    ascending i from 0.0; n a multiple of 4 (a and b: 1-d float64 arrays)."""
    ok = all(isinstance(x, types.Array) and x.ndim == 1 and x.dtype == types.float64 for x in (a, b))
    if not ok or not isinstance(n, types.Integer):
        return None
    sig = types.UniTuple(types.float64, 4)(a, b, n)

    def codegen(context, builder, signature, args):
        aty, bty, nty = signature.args
        ary = context.make_array(aty)(context, builder, args[0])
        bry = context.make_array(bty)(context, builder, args[1])
        end = context.cast(builder, args[2], nty, types.int64)
        entry = builder.basic_block
        head = builder.append_basic_block("dot_lanes.head")
        body = builder.append_basic_block("dot_lanes.body")
        done = builder.append_basic_block("dot_lanes.done")
        builder.branch(head)
        builder.position_at_end(head)
        i = builder.phi(_I64)
        acc = builder.phi(_V4)
        i.add_incoming(ir.Constant(_I64, 0), entry)
        acc.add_incoming(ir.Constant(_V4, [0.0] * 4), entry)
        builder.cbranch(builder.icmp_signed("<", i, end), body, done)
        builder.position_at_end(body)
        prod = builder.fmul(_load4(context, builder, aty, ary, i), _load4(context, builder, bty, bry, i))
        nacc = builder.fadd(acc, prod)
        i.add_incoming(builder.add(i, ir.Constant(_I64, 4)), builder.basic_block)
        acc.add_incoming(nacc, builder.basic_block)
        builder.branch(head)
        builder.position_at_end(done)
        lanes = [builder.extract_element(acc, ir.Constant(_I32, k)) for k in range(4)]
        return context.make_tuple(builder, signature.return_type, lanes)

    return sig, codegen
