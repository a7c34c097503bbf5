"""A Model and a Data checked to belong together, laid out for the compiled kernels.

Kernels run without bounds checks, so everything they index must be consistent: every
array of the Model has the dtype, the number of dimensions and the sizes its declaration
(`engine.fields`) gives in terms of the Model's own counts, and every array of the Data
has the shape that Model and the batch size call for. `bind(model, data)` checks all of it
once, then writes each into a record of 64-bit words (`engine.ptr` describes the layout)
whose address is all a compiled call needs. A `Bound` keeps the Model and Data it was made
from, so their arrays live as long as the records point to them; NamedTuple fields cannot
be reassigned, so a checked binding cannot be swapped for another behind its back.

Binding also makes sure the separately compiled units the model uses (`engine.jit.unit`)
and the driver entry points are compiled, telling the user when that takes a while.
"""

from __future__ import annotations

import os

import numpy as np
from numba import types

from robodyn.engine import fields
from robodyn.engine import types as T
from robodyn.engine.compile_workers import claim, compile_in_workers, estimate, plan, wait, workers
from robodyn.engine.data import DATA_SPECS, Data
from robodyn.engine.errors import ArgumentTypeError, RoboDynError
from robodyn.engine.fields import ArraySpec
from robodyn.engine.jit import Unit, entry_cache_dir, entry_is_cached
from robodyn.engine.job import JOB_PTR
from robodyn.engine.model import MODEL_SPECS, Model
from robodyn.engine.notice import compiling, waiting
from robodyn.engine.ptr import DATA_PTR, MODEL_PTR, PAIR_SIGNATURE, UNIT_SIGNATURE, UNITS, signature

# the sensors that read cacc or cfrc_int, which engine.rne_post computes
RNE_POST_SENSORS = (T.SENS_ACCELEROMETER, T.SENS_FRAMELINACC, T.SENS_FRAMEANGACC, T.SENS_FORCE, T.SENS_TORQUE)


class BindingError(RoboDynError, ValueError):
    """A Model or Data whose arrays do not match their declarations (or each other)."""


# ---- checks ----------------------------------------------------------------------------------------


def _check_fields(obj, specs: dict, what: str, sizes: dict, writable: bool) -> None:
    """Every field of `obj` matches its spec; `sizes` maps Dim names to known sizes and is
    extended with the free dims the arrays define."""
    for name, spec in specs.items():
        value = getattr(obj, name)
        if spec is int:
            if isinstance(value, bool) or not isinstance(value, int | np.integer):
                raise BindingError(f"{what}.{name} must be an int, got {type(value).__name__}")
            continue
        if spec is float:
            if not isinstance(value, float | int | np.floating | np.integer) or isinstance(value, bool):
                raise BindingError(f"{what}.{name} must be a float, got {type(value).__name__}")
            continue
        _check_array(value, spec, f"{what}.{name}", sizes, writable)


def _check_array(value, spec: ArraySpec, label: str, sizes: dict, writable: bool) -> None:
    want = np.dtype(spec.dtype)
    if not isinstance(value, np.ndarray):
        raise BindingError(f"{label} must be a numpy array, got {type(value).__name__}")
    if value.dtype != want or value.ndim != spec.ndim:
        raise BindingError(f"{label} must be a {spec.ndim}-d {want} array, got {value.ndim}-d {value.dtype}")
    if not (value.flags.c_contiguous and value.flags.aligned):
        raise BindingError(f"{label} must be C-contiguous and aligned")
    if writable and not value.flags.writeable:
        raise BindingError(f"{label} must be writeable")
    for axis, dim in enumerate(spec.dims):
        n = value.shape[axis]
        if isinstance(dim, int):
            expect = dim
        elif dim.name in sizes:
            expect = sizes[dim.name]
        else:  # a free dim: the first array that uses it defines it
            sizes[dim.name] = expect = n
        if n != expect:
            raise BindingError(
                f"{label} has shape {value.shape}, but axis {axis} ({dim}) must be {expect}: "
                "this array does not belong to this model"
            )


def check_model(model) -> dict:
    """Check a Model's arrays against its own counts; returns {dim name: size}."""
    if not isinstance(model, Model):
        raise ArgumentTypeError(
            f"expected an engine.Model (from engine.load_mjcf), got {type(model).__name__}"
        )
    sizes = {}
    for name, spec in MODEL_SPECS.items():
        if spec is int:
            v = getattr(model, name)
            if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < 0:
                raise BindingError(f"Model.{name} must be an int >= 0, got {v!r}")
            sizes[name] = int(v)
    _check_fields(model, MODEL_SPECS, "Model", sizes, writable=False)
    if int(model.M_rownnz.sum()) != model.nM:
        raise BindingError("Model.nM must equal the sum of M_rownnz")
    return sizes


def check_data(model: Model, data, sizes: dict | None = None) -> int:
    """Check that every Data array has the shape `model` and the batch size call for;
    returns the batch size."""
    if not isinstance(data, Data):
        raise ArgumentTypeError(f"expected an engine.Data (from engine.make_data), got {type(data).__name__}")
    sizes = dict(check_model(model) if sizes is None else sizes)
    if not isinstance(data.time, np.ndarray) or data.time.ndim != 1 or data.time.shape[0] < 1:
        raise BindingError("Data.time must be a 1-d array with one entry per row (B >= 1)")
    sizes["B"] = int(data.time.shape[0])
    for spec in DATA_SPECS.values():
        for dim in spec.dims:
            if isinstance(dim, fields.Dim) and dim.derive is not None:
                sizes[dim.name] = fields.dim_size(model, dim)
    _check_fields(data, DATA_SPECS, "Data", sizes, writable=True)
    return sizes["B"]


# ---- records -----------------------------------------------------------------------------------------


def write_field(words: np.ndarray, offset: int, nbtype, value) -> None:
    """Lay `value` out at `offset` of a word record as a field of numba type `nbtype`
    (engine.ptr: an array's data address, size, shape and strides; a number's bits)."""
    if isinstance(nbtype, types.Array):
        k = value.ndim
        words[offset] = value.ctypes.data
        words[offset + 1] = value.size
        words[offset + 2 : offset + 2 + k] = value.shape
        words[offset + 2 + k : offset + 2 + 2 * k] = value.strides
    elif nbtype == types.float64:
        words[offset] = np.float64(value).view(np.int64)
    else:
        words[offset] = int(value)


def _record(obj, ptr_type, extra: dict) -> np.ndarray:
    """The word record of `obj` (a checked Model or Data) in `ptr_type`'s layout; `extra`
    gives the values of fields `obj` does not have (the unit addresses)."""
    words = np.zeros(ptr_type.nwords, dtype=np.int64)
    for name, nbtype in ptr_type.fields:
        offset, _ = ptr_type.offsets[name]
        write_field(words, offset, nbtype, extra[name] if name in extra else getattr(obj, name))
    return words


class JobRecord:
    """A Simulator's Job record (engine.job): the words run_rows reads, and the arrays they
    point to (held here, so they live as long as the record points to them).

    A call sets what it does with `set(kind, nstep, flags, drive)` and points the record at
    its arrays with `point(name, array)`; an array the record already points to is not laid
    out again. The caller checks every array against the field's dtype, shape (batch-sized
    first dimension) and C order: compiled code reads them unchecked."""

    __slots__ = ("words", "address", "_held", "_offsets")

    def __init__(self, batch: int):
        self.words = np.zeros(JOB_PTR.nwords, dtype=np.int64)
        self._offsets = {name: offset for name, (offset, _) in JOB_PTR.offsets.items()}
        self._held = {}
        empty = {  # what each array field holds until a call points it elsewhere
            "rows": np.ones(batch, dtype=np.uint8),
            "index": np.zeros((0, 2), dtype=np.int32),
            "gain": np.zeros((0, 2)),
            "target": np.zeros((batch, 0)),
        }
        for name, nbtype in JOB_PTR.fields:
            if isinstance(nbtype, types.Array):
                self.point(name, empty.get(name, np.zeros((batch, 0, 0))))
        self.address = int(self.words.ctypes.data)

    def set(self, kind: int, nstep: int, flags: int, drive: int = T.DRIVE_NONE) -> None:
        """The job's kind (engine.job.JOB_*), steps, STEP_* flags and drive kind."""
        words, at = self.words, self._offsets
        words[at["kind"]] = kind
        words[at["nstep"]] = nstep
        words[at["flags"]] = flags
        words[at["drive"]] = drive

    def point(self, name: str, array: np.ndarray) -> None:
        """Field `name` reads `array` from now on."""
        if self._held.get(name) is array:
            return
        write_field(self.words, self._offsets[name], JOB_PTR.offsets[name][1], array)
        self._held[name] = array


# ---- units ---------------------------------------------------------------------------------------------


def collision_unit(model: Model) -> Unit:
    """The collision unit for the model: `collision_convex` (closed-form colliders and the
    GJK/EPA convex collider) when a candidate pair needs the convex collider, else
    `collision` (closed-form colliders only, a fraction of the compile time)."""
    from robodyn.engine.collision_driver import collision, collision_convex
    from robodyn.engine.sizes import has_convex_pair

    return collision_convex if has_convex_pair(model) else collision


def pair_units(model: Model) -> dict[str, Unit]:
    """{unit slot: pair unit} the collision_convex unit calls for the model's candidate
    pairs: convex_pair for the convex collider's pairs, hfield_pair for a height field's."""
    from robodyn.engine.collision_driver import convex_pair, hfield_pair
    from robodyn.engine.sizes import convex_pair_kinds

    convex, hfield = convex_pair_kinds(model)
    return {
        slot: u
        for slot, u, needed in (("convex_pair", convex_pair, convex), ("hfield_pair", hfield_pair, hfield))
        if needed
    }


def units_for(model: Model) -> dict[str, Unit]:
    """{unit slot: Unit} the model's pipeline calls; slots it never calls stay 0.

    engine.forward calls collision and the constraint units only when their address is set.
    """
    from robodyn.engine.constraint import make_constraint, reference_constraint
    from robodyn.engine.forward import forward
    from robodyn.engine.integrate import euler, implicit, rk4
    from robodyn.engine.sensors import ray_sensors, rne_post, sensors
    from robodyn.engine.solver import fwd_constraint_newton, fwd_constraint_pgs, noslip_pass
    from robodyn.engine.tendon import spatial_tendons

    flags = model.opt_disableflags
    chosen = {"forward": forward}
    if model.ntendon > 0 and (model.wrap_type[model.tendon_adr] == T.WRAP_SITE).any():
        chosen["tendon"] = spatial_tendons
    chosen["integrate"] = {T.INT_EULER: euler, T.INT_RK4: rk4}.get(model.opt_integrator, implicit)
    if model.nsensor > 0 and not flags & T.DSBL_SENSOR:
        chosen["sensors"] = sensors
        if np.isin(model.sensor_type, RNE_POST_SENSORS).any():
            chosen["rne_post"] = rne_post
        if np.isin(model.sensor_type, (T.SENS_TOUCH, T.SENS_RANGEFINDER)).any():
            chosen["ray_sensors"] = ray_sensors
    if not flags & (T.DSBL_CONSTRAINT | T.DSBL_CONTACT) and model.cpair_geom.shape[0] > 0:
        chosen["collision"] = collision_unit(model)
        chosen.update(pair_units(model))
    if model.nefcmax > 0:
        chosen["make_constraint"] = make_constraint
        chosen["reference_constraint"] = reference_constraint
        pgs = model.opt_solver == T.SOL_PGS
        chosen["solver"] = fwd_constraint_pgs if pgs else fwd_constraint_newton
        if model.opt_noslip_iterations > 0:
            chosen["noslip"] = noslip_pass
    return chosen


def _driver_entries() -> list:
    """(entry, argtypes) every Simulator calls: engine.step.run_rows, for every job."""
    from robodyn.engine.step import run_rows

    i64 = types.int64
    argtypes = (
        types.Array(types.int64, 1, "C"),  # model_table (B,): each row's Model record
        i64,  # data: the Data record's address
        i64,  # job: the Job record's address (JobRecord)
        i64,  # nthread
    )
    return [(run_rows, argtypes)]


def ensure_compiled(units, entries=()) -> None:
    """Compile (or load from the cache) `units` and `entries` ((dispatcher, argtypes)),
    telling the user first if anything has to be compiled. Several cold items are compiled
    side by side in worker processes (engine.compile_workers), then loaded from the cache.
    An item another process is compiling into the same cache is waited for, then loaded."""
    items = [(u.label, None, u) for u in units]
    items += [
        (f"{e.__module__.removeprefix('robodyn.engine.')}.{e.__name__}", tuple(a), e) for e, a in entries
    ]
    missing = [it for it in items if not _is_cached(it)]
    if missing:
        locks = {it[0]: os.path.join(_cache_dir(it), it[0] + ".lock") for it in missing}
        with claim(locks) as (mine, theirs):
            _compile([it for it in missing if it[0] in mine])
        if theirs:
            with waiting(theirs):
                wait([locks[label] for label in theirs])
            _compile([it for it in missing if it[0] in theirs and not _is_cached(it)])
    for _, argtypes, obj in items:
        _load(obj, argtypes)


def _is_cached(item) -> bool:
    _, argtypes, obj = item
    return obj.is_cached(signature(obj)) if argtypes is None else entry_is_cached(obj, argtypes)


def _cache_dir(item) -> str:
    _, argtypes, obj = item
    return obj.cache_dir(signature(obj)) if argtypes is None else entry_cache_dir(obj)


def _load(obj, argtypes) -> None:
    """Compile `obj` in this process, or load it from the cache (a unit if argtypes is None,
    else an entry for those argument types)."""
    if argtypes is None:
        obj.address(signature(obj))
    else:
        obj.compile(argtypes)


def _compile(items) -> None:
    """Compile `items` ((label, argtypes, unit or entry), none of them cached) with the
    notice: in worker processes when there are several, and load them into this process."""
    jobs = [(label, argtypes) for label, argtypes, _ in items]
    shares = plan(jobs, workers()) if len(jobs) > 1 else []
    parallel = len(shares) > 1
    labels = [label for label, _ in jobs]
    with compiling(
        labels, processes=len(shares) if parallel else 1, seconds=estimate(shares) if parallel else None
    ):
        if parallel:
            compile_in_workers(shares)  # fills the on-disk cache; what a worker missed is compiled below
        for _, argtypes, obj in items:
            _load(obj, argtypes)


# ---- the binding ------------------------------------------------------------------------------------


class Bound:
    """A checked Model and Data, their word records, and the records' addresses."""

    __slots__ = (
        "model",
        "data",
        "batch",
        "model_record",
        "data_record",
        "model_address",
        "data_address",
        "model_table",
        "row_models",
        "row_records",
    )

    def __init__(self, model: Model, data: Data, sizes: dict | None = None):
        sizes = check_model(model) if sizes is None else sizes
        self.batch = check_data(model, data, sizes)
        units = units_for(model)
        ensure_compiled(units.values(), _driver_entries())
        addresses = {f"unit_{slot}": 0 for slot in UNITS}
        addresses.update({f"unit_{slot}": u.address(signature(u)) for slot, u in units.items()})
        self.model = model
        self.data = data
        self.model_record = _record(model, MODEL_PTR, addresses)
        self.data_record = _record(data, DATA_PTR, {})
        self.model_address = int(self.model_record.ctypes.data)
        # the Model record each row runs with: the shared one, or a row's own (set_row_model)
        self.model_table = np.full(self.batch, self.model_address, dtype=np.int64)
        self.row_models: dict[int, Model] = {}
        self.row_records: dict[int, np.ndarray] = {}
        self.data_address = int(self.data_record.ctypes.data)  # last: fixes the Bound

    def set_row_model(self, row: int, model: Model) -> None:
        """Run `row` with `model` from now on: a Model of the same structure as the bound one
        (engine.params makes it: the same arrays but for a row's own physical parameters, which
        the caller checked). Its record carries the same unit addresses as the shared one."""
        record = self.record_for(model)
        self.row_models[row] = model
        self.row_records[row] = record
        self.model_table[row] = record.ctypes.data

    def record_for(self, model: Model) -> np.ndarray:
        """The word record of `model` (the bound Model's structure, other parameter values)
        with the bound record's unit addresses."""
        units = {}
        for slot in UNITS:
            offset = MODEL_PTR.offsets[f"unit_{slot}"][0]
            units[f"unit_{slot}"] = int(self.model_record[offset])
        return _record(model, MODEL_PTR, units)

    def with_disabled(self, rows: np.ndarray, bits: int) -> tuple[np.ndarray, list[np.ndarray]]:
        """Point each of `rows` at a record of its own Model (the shared one or the row's)
        with the disable flags `bits` added, until restore_models; returns what restore_models
        takes (the rows' record addresses before, and the new records, kept alive meanwhile).
        Only flags the kernels read as they run may be added (the caller checks): the units
        chosen at bind (units_for) stay those of the model's own flags."""
        before = self.model_table[rows].copy()
        twins: dict[int, np.ndarray] = {}  # id of a Model -> its record with the flags added
        for row in rows.tolist():
            model = self.row_models.get(row, self.model)
            record = twins.get(id(model))
            if record is None:
                record = twins[id(model)] = self.record_for(
                    model._replace(opt_disableflags=model.opt_disableflags | bits)
                )
            self.model_table[row] = record.ctypes.data
        return before, list(twins.values())

    def restore_models(self, rows: np.ndarray, saved: tuple[np.ndarray, list[np.ndarray]]) -> None:
        """Undo with_disabled: `rows` run with the records they had before it."""
        self.model_table[rows] = saved[0]

    def clear_row_model(self, row: int) -> None:
        """Run `row` with the shared Model again."""
        self.model_table[row] = self.model_address
        self.row_models.pop(row, None)
        self.row_records.pop(row, None)

    def add_split_forward(self) -> None:
        """Compile (once) and set the units a PD drive steps through: forward_posvel and
        forward_acc, the two halves of forward with the drive between them. Writes two aligned
        words of the Model record, which only a call with a PD drive reads, after this."""
        offset = MODEL_PTR.offsets["unit_forward_posvel"][0]
        if self.model_record[offset] != 0:
            return
        from robodyn.engine.forward import forward_acc, forward_posvel

        ensure_compiled((forward_posvel, forward_acc))
        acc_offset = MODEL_PTR.offsets["unit_forward_acc"][0]
        for record in (self.model_record, *self.row_records.values()):
            record[acc_offset] = forward_acc.address(UNIT_SIGNATURE)
            record[offset] = forward_posvel.address(UNIT_SIGNATURE)

    def add_drive(self, kind: int) -> None:
        """Compile (once) and set what a call with drive `kind` steps through: for DRIVE_PD
        the split forward units (add_split_forward) and engine.drive.pd_drive_unit, for
        DRIVE_ACCELERATION engine.drive.acceleration_drive_unit. A Simulator that never
        drives never compiles them (they are not in the step driver)."""
        from robodyn.engine.drive import acceleration_drive_unit, pd_drive_unit

        if kind == T.DRIVE_PD:
            self.add_split_forward()
            slot, unit = "unit_drive_pd", pd_drive_unit
        else:
            slot, unit = "unit_drive_acceleration", acceleration_drive_unit
        offset = MODEL_PTR.offsets[slot][0]
        if self.model_record[offset] != 0:
            return
        ensure_compiled((unit,))
        for record in (self.model_record, *self.row_records.values()):
            record[offset] = unit.address(PAIR_SIGNATURE)

    def add_posvel_end(self) -> None:
        """Compile (once) and set the units a step that ends with the position and velocity
        stages runs (STEP_OBSERVE_POSVEL): forward_posvel (with add_split_forward) and
        sensors_posvel. Writes only their words of the Model records."""
        self.add_split_forward()
        offset = MODEL_PTR.offsets["unit_sensors_posvel"][0]
        if self.model_record[offset] != 0:
            return
        from robodyn.engine.sensors import sensors_posvel

        ensure_compiled((sensors_posvel,))
        for record in (self.model_record, *self.row_records.values()):
            record[offset] = sensors_posvel.address(UNIT_SIGNATURE)

    def add_pair_units(self) -> None:
        """Compile (once) and set the pair units of the model's candidate pairs, for a
        collision pass that runs whatever the disable flags say (engine.api.collision), where
        the Simulator's units may hold none. Writes only the pair units' words."""
        units = pair_units(self.model)
        ensure_compiled(units.values())
        for slot, u in units.items():
            offset = MODEL_PTR.offsets[f"unit_{slot}"][0]
            for record in (self.model_record, *self.row_records.values()):
                record[offset] = u.address(signature(u))

    def __setattr__(self, name, value):
        if hasattr(self, "data_address"):
            raise AttributeError("a Bound is fixed once made; bind the new Model and Data instead")
        object.__setattr__(self, name, value)


def bind(model: Model, data: Data, sizes: dict | None = None) -> Bound:
    """Check that `data` belongs to `model` and lay both out for the kernels (`sizes`:
    what check_model(model) returned, if the caller checked it already)."""
    return Bound(model, data, sizes)
