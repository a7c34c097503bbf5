"""Field declarations: every Model and Data array is declared once, with its dtype and shape.

MuJoCo lists every field of mjModel and mjData once (`mjxmacro.h`) and generates the
declarations, allocation and copies from that list. Here the list is the NamedTuple itself:

    class Model(NamedTuple):
        nbody: int                    # number of bodies
        body_pos: f64[nbody, 3]       # position offset rel. to parent body

`f64[...]` and `i32[...]` declare a C-contiguous float64 / int32 array; the dimensions are
`Dim`s (sizes named after Model's integer fields, the batch `B`, or sizes the arrays define
among themselves such as the number of candidate geom pairs) and integer constants. From
these declarations `engine.data.make_data` allocates Data, and `engine.binding` checks
that a Model and a Data belong together before any kernel sees them and lays them out for
the kernels (one pointer each).
"""

from __future__ import annotations

import typing
from dataclasses import dataclass

import numpy as np

from robodyn.engine import sizes


@dataclass(frozen=True)
class Dim:
    """A named array dimension. `derive(model) -> int`, if given, computes it from a Model;
    otherwise it is the Model field of the same name, the batch size (`B`), or, for a size
    no field records, whatever the first array using it has (the others must agree)."""

    name: str
    derive: object = None

    def __repr__(self) -> str:
        return self.name


@dataclass(frozen=True)
class ArraySpec:
    """A C-contiguous array of `dtype` with shape `dims` (Dims and ints)."""

    dtype: type
    dims: tuple

    @property
    def ndim(self) -> int:
        return len(self.dims)


class _ArrayKind:
    def __init__(self, dtype):
        self.dtype = dtype

    def __getitem__(self, dims) -> ArraySpec:
        return ArraySpec(self.dtype, dims if isinstance(dims, tuple) else (dims,))


f64 = _ArrayKind(np.float64)
i32 = _ArrayKind(np.int32)

# the batch: one row per environment
B = Dim("B")

# sizes that are Model fields
nq = Dim("nq")
nv = Dim("nv")
nu = Dim("nu")
na = Dim("na")
nbody = Dim("nbody")
nmocap = Dim("nmocap")
njnt = Dim("njnt")
ngeom = Dim("ngeom")
nmat = Dim("nmat")
nmesh = Dim("nmesh")
nmeshvert = Dim("nmeshvert")
nmeshgraph = Dim("nmeshgraph")
nmeshpoly = Dim("nmeshpoly")
nmeshpolyvert = Dim("nmeshpolyvert")
nmeshpolymap = Dim("nmeshpolymap")
nsite = Dim("nsite")
ntendon = Dim("ntendon")
nwrap = Dim("nwrap")
nsensor = Dim("nsensor")
nsensordata = Dim("nsensordata")
nM = Dim("nM")
npair = Dim("npair")
neq = Dim("neq")
nconmax = Dim("nconmax")
nefcmax = Dim("nefcmax")
ntree = Dim("ntree")
nJten = Dim("nJten")
nefcdof = Dim("nefcdof")
nefctreedof = Dim("nefctreedof")

# sizes the arrays define among themselves
ncpair = Dim("ncpair")  # candidate geom pairs
nexclude = Dim("nexclude")  # excluded body pairs
nrefused = Dim("nrefused")  # geom pairs that can collide but have no collider
nbvh = Dim("nbvh")  # nodes of the bodies' bounding-volume hierarchies
nnodetest = Dim("nnodetest")  # the mid phase's bounding-box tests of inner node pairs
nhfield = Dim("nhfield")  # height fields
nhfielddata = Dim("nhfielddata")  # elevations of all height fields
neqdata = Dim("neqdata")  # numbers per equality constraint (MuJoCo's mjNEQDATA)


def _pgs_rows(m) -> int:
    from robodyn.engine import types as T

    dual = int(m.opt_solver) == T.SOL_PGS or int(m.opt_noslip_iterations) > 0
    return int(m.nefcmax) if dual else 0


# PGS and the noslip pass keep M^-1 J^T of every row: nefcmax for them, else 0
npgs = Dim("npgs", _pgs_rows)

# PGS sweeps an island of at most this many rows on its matrix AR = J M^-1 J^T + R, built
# once per solve (as MuJoCo's mj_projectConstraint does); a larger island on M^-1 J^T f
PGS_AR_ROWS = 64


def _pgs_ar_rows(m) -> int:
    from robodyn.engine import types as T

    return min(int(m.nefcmax), PGS_AR_ROWS) if int(m.opt_solver) == T.SOL_PGS else 0


npgsar = Dim("npgsar", _pgs_ar_rows)


def _ccd_sizes(m) -> tuple[int, int]:
    """(vertices, faces) of the convex collider's polytope; (0, 0) without convex pairs."""
    if not sizes.has_convex_pair(m):
        return 0, 0
    return sizes.ccd_sizes(m.opt_ccd_iterations)


nccdvert = Dim("nccdvert", lambda m: _ccd_sizes(m)[0])  # EPA polytope vertices: 5 + ccd_iterations
nccdface = Dim("nccdface", lambda m: _ccd_sizes(m)[1])  # EPA polytope faces: 6 ccd_iterations


def _ccd_poly_rows(m) -> int:
    """Rows of the multi-contact search's work array; 0 without convex pairs."""
    return sizes.POLY_ROWS if sizes.has_convex_pair(m) else 0


nccdpoly = Dim("nccdpoly", _ccd_poly_rows)  # multi-contact work rows (sizes.POLY_ROWS)


def _ccd_obj_width(m) -> int:
    """Numbers of one convex-collider object row: the geom (sizes.OBJ_WIDTH) and, with
    meshes, a copy of the largest mesh's hull (sizes.tail_width)."""
    return sizes.OBJ_WIDTH + sizes.tail_width(m)


nccdobj = Dim("nccdobj", _ccd_obj_width)  # convex-collider object row: geom, mesh hull copy

_NAMESPACE = {
    "f64": f64,
    "i32": i32,
    "int": int,
    "float": float,
    **{k: v for k, v in globals().items() if isinstance(v, Dim)},
}


DECLARED: dict[str, dict[str, object]] = {}
"""{class name: its field specs} of every NamedTuple whose specs field_specs computed
("Model", "Data"): how a module reads another's declarations without importing it
(engine.capacity sizes buffers from Data's, and engine.data imports engine.capacity)."""


def field_specs(cls) -> dict[str, object]:
    """{field: ArraySpec, int or float} for a NamedTuple declared as above, in field order;
    also recorded in DECLARED under the class's name.

    Annotations are read as written (the modules use `from __future__ import annotations`),
    evaluated against this module's names and any integer constants of the class's module.
    """
    import sys

    module = vars(sys.modules[cls.__module__])
    names = dict(_NAMESPACE)
    names.update({k: v for k, v in module.items() if k.isupper() and isinstance(v, int | tuple)})
    specs = {}
    for name in cls._fields:
        ann = cls.__annotations__[name]
        if isinstance(ann, typing.ForwardRef):  # how NamedTuple keeps a string annotation
            ann = ann.__forward_arg__
        spec = eval(ann, names) if isinstance(ann, str) else ann  # noqa: S307 (our own declarations)
        if not (isinstance(spec, ArraySpec) or spec in (int, float)):
            raise TypeError(f"{cls.__name__}.{name}: declare it as int, float, f64[...] or i32[...]")
        specs[name] = spec
    DECLARED[cls.__name__] = specs
    return specs


def dim_size(model, dim) -> int:
    """The size of `dim` (a Dim or an int) for `model`; free dims are not handled here."""
    if isinstance(dim, int):
        return dim
    if dim.derive is not None:
        return int(dim.derive(model))
    return int(getattr(model, dim.name))
