"""Model and Data as one pointer each inside compiled code.

A kernel takes `m` and `d` and reads `m.body_pos[i]` or `d.qpos[b]` as if they were the
NamedTuples. Passing the NamedTuples themselves would flatten every array into machine
words at each call (5 + 2 ndim words an array, ~2,000 for Model and Data together), give
every function a signature naming every field's type, and cost microseconds per call and
minutes of compile time. Instead `engine.binding` lays a Model (or Data) out once as a
flat record of 64-bit words, and compiled code receives the record's address:

    array field, ndim k:  data address, size, shape[0..k-1], strides[0..k-1]   (2 + 2k words)
    int / float field:    the value (a float stored by its bits)

`ModelPtr` and `DataPtr` are numba types whose attributes are those fields: reading
`m.body_pos` loads the field's words (marked invariant: the record never changes while
compiled code runs) and rebuilds the array, so a field costs a few loads where it is used
and nothing where it is not. The record layout is derived from the field declarations
(`engine.fields`), and the type's name carries a digest of it, so cached code compiled for
another layout is never reused.

The Model record also holds the addresses of the separately compiled pipeline units
(`m.unit_forward`, `m.unit_collision`, ...: see `engine.jit.unit`); `call_unit` calls one, and
`call_pair_unit` a pair unit (one collider's, engine.jit.pair_unit).
"""

from __future__ import annotations

import hashlib

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import ir_utils
from numba.core.typing.templates import AttributeTemplate, infer_getattr
from numba.extending import intrinsic, lower_getattr_generic, models, register_model
from numba.np import numpy_support

from robodyn.engine.data import DATA_SPECS
from robodyn.engine.fields import ArraySpec
from robodyn.engine.jit import unit_call
from robodyn.engine.model import MODEL_SPECS

# the separately compiled units a Model record points to (0: the model never calls it)
UNITS = (
    "forward",  # smooth and constraint dynamics up to qacc (engine.forward.forward)
    "forward_posvel",  # position and velocity stages, for a PD drive (engine.forward.forward_posvel)
    "forward_acc",  # actuation and acceleration after it (engine.forward.forward_acc)
    "tendon",  # tendons with a spatial one among them (engine.tendon.spatial_tendons)
    "sensors",  # sensordata (engine.sensors.sensors)
    "sensors_posvel",  # the position and velocity stages' sensors only (engine.sensors.sensors_posvel)
    "rne_post",  # cacc, cfrc_int for the sensors that read them (engine.sensors.rne_post)
    "ray_sensors",  # touch and rangefinder readings (engine.sensors.ray_sensors)
    "collision",  # contacts (engine.collision_driver.collision, or collision_convex)
    "convex_pair",  # the convex collider of one pair (engine.collision_driver.convex_pair)
    "hfield_pair",  # a height field against a convex geom (engine.collision_driver.hfield_pair)
    "make_constraint",  # constraint rows (engine.constraint.make_constraint)
    "reference_constraint",  # efc_vel, efc_aref (engine.constraint.reference_constraint)
    "solver",  # qacc, efc_force (engine.solver.fwd_constraint_newton or _pgs)
    "noslip",  # the noslip pass after the solver (engine.solver.noslip_pass)
    "integrate",  # the model's integrator (engine.integrate.euler, rk4 or implicit)
    "drive_pd",  # a PD drive's motor controls (engine.drive.pd_drive_unit), for Simulator.drive
    "drive_acceleration",  # an acceleration drive's (engine.drive.acceleration_drive_unit)
)

_I64 = ir.IntType(64)
_WORD_PTR = _I64.as_pointer()


def _numba_type(spec):
    if isinstance(spec, ArraySpec):
        return types.Array(numpy_support.from_dtype(np.dtype(spec.dtype)), spec.ndim, "C")
    return types.int64 if spec is int else types.float64


def words(nbtype) -> int:
    """Words a field of numba type `nbtype` takes in a record."""
    return 2 + 2 * nbtype.ndim if isinstance(nbtype, types.Array) else 1


class StructPtr(types.Type):
    """Pointer to a word record of named fields; `fields` is ((name, numba type), ...)."""

    def __init__(self, kind: str, fields: tuple):
        self.kind = kind
        self.fields = tuple(fields)
        self.offsets = {}
        offset = 0
        for name, nbtype in self.fields:
            self.offsets[name] = (offset, nbtype)
            offset += words(nbtype)
        self.nwords = offset
        digest = hashlib.sha256(repr(self.fields).encode()).hexdigest()[:16]
        super().__init__(name=f"{kind}Ptr_{digest}")


@register_model(StructPtr)
class _StructPtrModel(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, _WORD_PTR)


@infer_getattr
class _StructPtrAttributes(AttributeTemplate):
    key = StructPtr

    def generic_resolve(self, typ, attr):
        hit = typ.offsets.get(attr)
        return None if hit is None else hit[1]


def _load_word(builder, base, k):
    load = builder.load(builder.gep(base, [ir.Constant(_I64, k)]))
    # the record never changes while compiled code runs: loads may be hoisted and merged
    load.set_metadata("invariant.load", builder.module.add_metadata([]))
    return load


@lower_getattr_generic(StructPtr)
def _struct_ptr_getattr(context, builder, typ, value, attr):
    offset, nbtype = typ.offsets[attr]
    if not isinstance(nbtype, types.Array):
        word = _load_word(builder, value, offset)
        return builder.bitcast(word, ir.DoubleType()) if nbtype == types.float64 else word
    ndim = nbtype.ndim
    data = _load_word(builder, value, offset)
    shape = [_load_word(builder, value, offset + 2 + k) for k in range(ndim)]
    strides = [_load_word(builder, value, offset + 2 + ndim + k) for k in range(ndim)]
    array = context.make_array(nbtype)(context, builder)
    context.populate_array(
        array,
        data=builder.inttoptr(data, context.get_data_type(nbtype.dtype).as_pointer()),
        shape=shape,
        strides=strides,
        itemsize=context.get_constant(types.intp, nbtype.dtype.bitwidth // 8),
        meminfo=None,
    )
    return array._getvalue()


MODEL_PTR = StructPtr(
    "Model",
    tuple((name, _numba_type(spec)) for name, spec in MODEL_SPECS.items())
    + tuple((f"unit_{name}", types.int64) for name in UNITS),
)
DATA_PTR = StructPtr("Data", tuple((name, _numba_type(spec)) for name, spec in DATA_SPECS.items()))

# every unit is compiled as a C function  void unit(ModelPtr m, DataPtr d, int64 b), and
# a pair unit (engine.jit.pair_unit) as  int64 unit(ModelPtr m, DataPtr d, int64 b, int64 p)
UNIT_SIGNATURE = types.void(MODEL_PTR, DATA_PTR, types.int64)
PAIR_SIGNATURE = types.int64(MODEL_PTR, DATA_PTR, types.int64, types.int64)


def signature(unit):
    """The C signature `unit` (an engine.jit.Unit) is compiled with."""
    return PAIR_SIGNATURE if unit.pair else UNIT_SIGNATURE


@intrinsic
def model_at(typingctx, address):
    """The Model record at `address` (an int from engine.binding) as a ModelPtr."""

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], _WORD_PTR)

    return MODEL_PTR(types.intp), codegen


@intrinsic
def data_at(typingctx, address):
    """The Data record at `address` (an int from engine.binding) as a DataPtr."""

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], _WORD_PTR)

    return DATA_PTR(types.intp), codegen


def points_outside(lhs, args, alias_map, arg_aliases):
    """numba alias analysis: a record's fields live outside the function, like the arrays
    passed in as arguments, so writes into them are never dead code. (Without this,
    numba's parallel pipeline drops `d.status[b] = ...` as a store to a local array.)"""
    arg_aliases.add(lhs)


for _name in ("model_at", "data_at"):
    ir_utils.alias_func_extensions[(_name, __name__)] = points_outside


@intrinsic
def call_unit(typingctx, address, m, d, b):
    """unit(m, d, b) for the unit compiled at `address` (a `m.unit_*` field)."""
    if m != MODEL_PTR or d != DATA_PTR or not isinstance(b, types.Integer):
        return None
    return types.void(address, m, d, b), unit_call


@intrinsic
def call_pair_unit(typingctx, address, m, d, b, p):
    """unit(m, d, b, p) for the pair unit compiled at `address` (m.unit_convex_pair or
    m.unit_hfield_pair: the number of contacts it found; or a job unit, m.unit_drive_pd or
    m.unit_drive_acceleration, with p the Job record's address: 0)."""
    if getattr(m, "kind", None) != "Model" or getattr(d, "kind", None) != "Data":
        return None
    if not (isinstance(b, types.Integer) and isinstance(p, types.Integer)):
        return None
    return types.int64(address, m, d, b, p), unit_call
