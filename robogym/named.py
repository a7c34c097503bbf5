"""Named access to the engine's arrays, batched: `physics.named.xpos["torso"]` is the (B, 3)
position of the body called torso in every environment (dm_control's
`physics.named.data.xpos["torso"]`, with a leading batch axis).

Every field of the engine's Data (engine.data.DATA_SPECS) and Model (engine.model.
MODEL_SPECS) whose axis after the batch (for the Model: its first axis) counts a kind of
MuJoCo object is indexed by that object's name, found in MuJoCo's compiled model of the same
file:

    axis         named by                 one name gives
    nbody        body                     that body's entry
    njnt         joint                    that joint's entry
    ngeom, nsite, ntendon, neq, nu        geom, site, tendon, equality, actuator
    nmocap       mocap body               its entry (body_mocapid)
    nq           joint                    its qpos entries (7 free, 4 ball, 1 slide/hinge)
    nv           joint                    its dof entries (6, 3 or 1)
    nsensordata  sensor                   its sensor_dim values
    na           actuator                 its activations

One name gives a view: (B,) for an object one entry wide (a hinge's qpos, a 1-d sensor),
(B, n, ...) otherwise, so writing into it writes the engine's state (`named.qpos["slider"]
[rows] = x`). A list (or tuple) of names gives a new array of their entries side by side;
writing to a list (`named.qvel[["hip", "knee"]] = v`) writes every row, and a key
`(names, rows)` (a pair whose second item is not a name) reads or writes those rows only.
`field.all` is the whole field, (B, ...). An unknown name raises robogym.UnknownNameError
listing the field's names.
"""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np

from robodyn.engine.data import DATA_SPECS
from robodyn.engine.model import MODEL_SPECS
from robogym.errors import ArgumentTypeError, UnknownFieldError, UnknownNameError

OBJ = mujoco.mjtObj
# the object axes, by their dimension's name in the field declarations: (object type, what
# one name selects: "index" one entry, or the address and width arrays of a span)
AXES: dict[str, tuple[Any, str | tuple[str, str]]] = {
    "nbody": (OBJ.mjOBJ_BODY, "index"),
    "njnt": (OBJ.mjOBJ_JOINT, "index"),
    "ngeom": (OBJ.mjOBJ_GEOM, "index"),
    "nsite": (OBJ.mjOBJ_SITE, "index"),
    "ntendon": (OBJ.mjOBJ_TENDON, "index"),
    "neq": (OBJ.mjOBJ_EQUALITY, "index"),
    "nu": (OBJ.mjOBJ_ACTUATOR, "index"),
    "nmocap": (OBJ.mjOBJ_BODY, "mocap"),
    "nq": (OBJ.mjOBJ_JOINT, "qpos"),
    "nv": (OBJ.mjOBJ_JOINT, "dof"),
    "nsensordata": (OBJ.mjOBJ_SENSOR, "sensor"),
    "na": (OBJ.mjOBJ_ACTUATOR, "act"),
    "nhfield": (OBJ.mjOBJ_HFIELD, "index"),
}
# entries of a joint's qpos and dofs, by jnt_type (free, ball, slide, hinge)
_QPOS_WIDTH = {0: 7, 1: 4, 2: 1, 3: 1}
_DOF_WIDTH = {0: 6, 1: 3, 2: 1, 3: 1}


def spans(mj: mujoco.MjModel, axis: str) -> dict[str, tuple[int, int]]:
    """{name: (start, stop)} along `axis` (a key of AXES) of every named object on it."""
    objtype, how = AXES[axis]
    count = {
        OBJ.mjOBJ_BODY: mj.nbody,
        OBJ.mjOBJ_JOINT: mj.njnt,
        OBJ.mjOBJ_GEOM: mj.ngeom,
        OBJ.mjOBJ_SITE: mj.nsite,
        OBJ.mjOBJ_TENDON: mj.ntendon,
        OBJ.mjOBJ_EQUALITY: mj.neq,
        OBJ.mjOBJ_ACTUATOR: mj.nu,
        OBJ.mjOBJ_SENSOR: mj.nsensor,
        OBJ.mjOBJ_HFIELD: mj.nhfield,
    }[objtype]
    out = {}
    for i in range(count):
        name = mujoco.mj_id2name(mj, objtype, i)
        if not name:
            continue
        if how == "index":
            start, width = i, 1
        elif how == "mocap":
            start, width = int(mj.body_mocapid[i]), 1
        elif how == "qpos":
            start, width = int(mj.jnt_qposadr[i]), _QPOS_WIDTH[int(mj.jnt_type[i])]
        elif how == "dof":
            start, width = int(mj.jnt_dofadr[i]), _DOF_WIDTH[int(mj.jnt_type[i])]
        elif how == "sensor":
            start, width = int(mj.sensor_adr[i]), int(mj.sensor_dim[i])
        else:  # act
            start, width = int(mj.actuator_actadr[i]), int(mj.actuator_actnum[i])
        if start >= 0 and width > 0:
            out[name] = (start, start + width)
    return out


class NamedField:
    """One field read and written by object name (see the module docstring). `axis` is the
    object axis of the array (1 for Data's batched fields, 0 for the Model's)."""

    def __init__(self, field: str, array: np.ndarray, axis: int, names: dict[str, tuple[int, int]]):
        self.field = field
        self.all = array
        self._axis = axis
        self._names = names
        self._columns: dict[tuple, np.ndarray] = {}  # columns() of each list of names asked

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._names)

    def _span(self, name) -> tuple[int, int]:
        if not isinstance(name, str):
            raise ArgumentTypeError(f"{self.field}: a name must be a str, got {name!r}")
        span = self._names.get(name)
        if span is None:
            known = ", ".join(repr(n) for n in list(self._names)[:12]) or "none"
            more = " ..." if len(self._names) > 12 else ""
            raise UnknownNameError(f"{self.field} has no entry named {name!r}; its names: {known}{more}")
        return span

    def _at(self, name: str):
        """The index along the object axis one name selects (an int drops the axis)."""
        start, stop = self._span(name)
        return start if stop - start == 1 else slice(start, stop)

    def columns(self, names) -> np.ndarray:
        """The entries along the object axis of a list of names, side by side (looked up once
        per list: a task reads the same lists every step)."""
        if isinstance(names, str):
            names = [names]
        if not isinstance(names, list | tuple):
            raise ArgumentTypeError(f"{self.field}: a name must be a str (or a list of them), got {names!r}")
        key = tuple(names)
        cols = self._columns.get(key)
        if cols is None:
            spans = [np.arange(*self._span(n)) for n in names]
            cols = self._columns[key] = np.concatenate(spans) if spans else np.zeros(0, dtype=np.int64)
        return cols

    @staticmethod
    def _split(key) -> tuple:
        """(names, rows) of a key: a name, a list or tuple of names, or (names, rows) (a pair
        whose second item is not a name)."""
        if isinstance(key, tuple) and len(key) == 2 and not isinstance(key[1], str):
            return key
        return key, None

    def __getitem__(self, key):
        names, rows = self._split(key)
        lead = (slice(None),) * self._axis
        if isinstance(names, str):
            view = self.all[(*lead, self._at(names))]
            return view if rows is None else view[rows]
        picked = self.all[(*lead, self.columns(names))]
        return picked if rows is None else picked[rows]

    def __setitem__(self, key, value) -> None:
        names, rows = self._split(key)
        lead = (slice(None),) * self._axis
        at = self._at(names) if isinstance(names, str) else self.columns(names)
        if rows is None:
            self.all[(*lead, at)] = value
        elif self._axis == 1:
            rows = np.atleast_1d(np.asarray(rows))
            index = (rows[:, None], at) if isinstance(at, np.ndarray) else (rows, at)
            self.all[index] = value
        else:
            raise ArgumentTypeError(f"{self.field} has no rows: write it without them")


class Named:
    """The named fields of one set of arrays: `named.<field>` is a NamedField (made on first
    use). `arrays`: the Data or the Model; `specs`: their declarations; `batched`: the first
    axis of every array is the batch."""

    def __init__(self, mj: mujoco.MjModel, arrays, specs: dict, batched: bool):
        self._mj = mj
        self._arrays = arrays
        self._specs = specs
        self._axis = 1 if batched else 0
        self._spans: dict[str, dict] = {}
        self._fields: dict[str, NamedField] = {}

    def fields(self) -> list[str]:
        """The fields that can be read by name."""
        return [f for f, spec in self._specs.items() if self._object_axis(spec) is not None]

    def _object_axis(self, spec) -> str | None:
        dims = getattr(spec, "dims", ())
        axis = getattr(dims[self._axis], "name", None) if len(dims) > self._axis else None
        return axis if axis in AXES else None

    def __getattr__(self, field: str) -> NamedField:
        if field.startswith("_"):
            raise AttributeError(field)
        named = self._fields.get(field)
        if named is None:
            spec = self._specs.get(field)
            axis = None if spec is None else self._object_axis(spec)
            if axis is None:
                raise UnknownFieldError(
                    f"{field} is not a field that can be read by name; those are: {', '.join(self.fields())}"
                )
            if axis not in self._spans:
                self._spans[axis] = spans(self._mj, axis)
            named = NamedField(field, getattr(self._arrays, field), self._axis, self._spans[axis])
            self._fields[field] = named
            self.__dict__[field] = named  # later reads find it without __getattr__
        return named

    def __dir__(self):
        return [*super().__dir__(), *self.fields()]


def named_data(mj: mujoco.MjModel, data) -> Named:
    """Named access to a batched engine Data (its arrays never move: the views stay live)."""
    return Named(mj, data, DATA_SPECS, batched=True)


def named_model(mj: mujoco.MjModel, model) -> Named:
    """Named access to an engine Model's arrays (the model's own values, shared by every row
    that has no parameters of its own)."""
    return Named(mj, model, MODEL_SPECS, batched=False)
