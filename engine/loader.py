"""Loading an engine.Model from MJCF (`load_mjcf`).

MuJoCo's own compiler does what it does best (defaults, includes, `fromto`, inertia from
geoms, keyframes); `model_from_mujoco` copies the arrays the kernels need into a Model
(engine/model.py), derives the few the engine keeps in another form (the sparsity of M
and of the tendon Jacobians, the candidate contact pairs of engine.collision_driver) and
sizes the buffers (engine/capacity.py). Anything the engine does not simulate is refused
first, by name (engine/checks.py).
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET

import mujoco
import numpy as np

from robodyn.engine.capacity import capacities, dense_jacobian, efc_widths
from robodyn.engine.checks import check_options, check_supported, check_trees, check_values
from robodyn.engine.collision_driver import candidate_pairs
from robodyn.engine.errors import ModelArgumentError, ModelError, ModelFileError
from robodyn.engine.model import MODEL_SPECS, Model

INT = np.int32

_INT32_MAX = 2**31 - 1  # contact and row indices are int32


def load_mjcf(source: str | os.PathLike, nconmax: int | None = None, nefcmax: int | None = None) -> Model:
    """Compile an MJCF file (a str or os.PathLike path) or an MJCF document (a str whose
    first character, after an optional byte-order mark and white space, is '<').

    Returns an engine Model. Raises ModelArgumentError (a TypeError) for a source or a
    capacity of the wrong kind (bytes are refused: decode a document, or pass a path as
    str or pathlib.Path), ModelFileError (a FileNotFoundError) for a path that names no
    file, ModelError (a ValueError) with MuJoCo's message when MuJoCo's compiler refuses
    the model or for a value the engine cannot simulate (NaN or inf, a timestep <= 0,
    negative armature or damping, ...), and UnsupportedModelError (a ModelError) naming
    the element for a feature the engine does not simulate.

    `nconmax` (contacts per row) and `nefcmax` (constraint rows per row, MuJoCo's njmax)
    size each row's contact and constraint buffers; None or -1 leaves them to the MJCF's
    `<size nconmax njmax memory>` and then to the default (`capacities`).
    """
    return load_with_mujoco(source, nconmax, nefcmax)[0]


def load_with_mujoco(
    source: str | os.PathLike, nconmax: int | None = None, nefcmax: int | None = None
) -> tuple[Model, mujoco.MjModel]:
    """load_mjcf's Model together with the MuJoCo model it was compiled from (its names, for
    reading the engine's arrays by name, and what a renderer draws): one compilation of the
    MJCF serves both. Arguments and errors as load_mjcf's."""
    nconmax = _capacity_argument("nconmax", nconmax)
    nefcmax = _capacity_argument("nefcmax", nefcmax)
    mj, memory = _compile(source)
    check_options(mj)
    check_supported(mj)
    return model_from_mujoco(mj, nconmax, nefcmax, memory), mj


def without_contacts(source: str | os.PathLike) -> str:
    """The MJCF text of `source` (a path, or an MJCF document as a string starting with
    '<') with <option><flag contact="disable" constraint="disable"/> set: the model's
    smooth dynamics alone (how the smooth-dynamics tests load gymnasium's models). The
    file itself is not changed; relative includes and assets are not resolved, so use it
    for self-contained files."""
    is_document, text = _source(source)
    if not is_document:
        _check_path(text)
    try:
        root = ET.fromstring(text) if is_document else ET.parse(text).getroot()
    except ET.ParseError as e:
        raise ModelError(f"the MJCF {'document' if is_document else 'file'} is not valid XML: {e}") from e
    option = root.find("option")
    if option is None:
        option = ET.Element("option")
        root.insert(0, option)
    flag = option.find("flag")
    if flag is None:
        flag = ET.SubElement(option, "flag")
    flag.set("contact", "disable")
    flag.set("constraint", "disable")
    return ET.tostring(root, encoding="unicode")


def compile_mjcf(source: str | os.PathLike) -> mujoco.MjModel:
    """Run MuJoCo's MJCF compiler on a path or an XML string (errors as load_mjcf's)."""
    return _compile(source)[0]


def _capacity_argument(name: str, value) -> int | None:
    """A load_mjcf capacity: an int in [0, 2**31 - 1], or None for -1 and None (the default)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ModelArgumentError(
            f"{name} must be an int >= 0 (or -1 or None for the default), "
            f"got {type(value).__name__} {value!r}"
        )
    value = int(value)
    if value == -1:
        return None
    if not 0 <= value <= _INT32_MAX:
        raise ModelError(
            f"{name} must be an int in [0, 2**31 - 1] (or -1 or None for the default), got {value}"
        )
    return value


def _source(source) -> tuple[bool, str]:
    """(True, document) for an MJCF document, (False, path) for a path; refuses the rest.

    A str is a document when its first character after a byte-order mark and white space
    is '<' (MuJoCo's parser does not skip the mark itself in every case); an os.PathLike is
    always a path."""
    if isinstance(source, bytes | bytearray | memoryview):
        raise ModelArgumentError(
            f"source must be a str or os.PathLike, got {type(source).__name__}: decode an MJCF "
            "document first (source.decode()), or pass a path as a str or pathlib.Path"
        )
    if isinstance(source, os.PathLike):
        try:
            path = os.fspath(source)
        except TypeError as e:
            raise ModelArgumentError(f"source {type(source).__name__} is not a valid os.PathLike: {e}") from e
        return False, os.fsdecode(path)
    if not isinstance(source, str):
        raise ModelArgumentError(
            "source must be a path (str or os.PathLike) or an MJCF document (a str starting "
            f"with '<'), got {type(source).__name__}"
        )
    text = source.removeprefix("\ufeff")
    if text.lstrip().startswith("<"):
        return True, text.lstrip()
    if not text.strip():
        raise ModelError(
            "source is an empty string: pass a path or an MJCF document (a str starting with '<')"
        )
    return False, source


def _shown(path: str) -> str:
    return repr(path if len(path) <= 200 else path[:200] + "...")


def _check_path(path: str) -> None:
    """Raise ModelFileError unless `path` names an existing file."""
    if "\x00" in path:
        problem = f"no MJCF file at {_shown(path)}: a path cannot contain a NUL character"
    elif os.path.isdir(path):
        problem = f"{_shown(path)} is a directory, not an MJCF file"
    elif not os.path.isfile(path):
        problem = (
            f"no MJCF file at {_shown(path)} (pass the path of an existing file, or an MJCF document "
            "starting with '<')"
        )
    else:
        return
    raise ModelFileError(problem)


def _compile(source) -> tuple[mujoco.MjModel, int]:
    """(MuJoCo's compiled model, the `<size memory>` it asks for in bytes, -1 if none)."""
    is_document, value = _source(source)
    if not is_document:
        _check_path(value)
    try:
        if is_document:
            mj = mujoco.MjModel.from_xml_string(value)
            memory = mujoco.MjSpec.from_string(value).memory
        else:
            mj = mujoco.MjModel.from_xml_path(value)
            memory = mujoco.MjSpec.from_file(value).memory
    except (ValueError, RuntimeError) as e:
        what = "the MJCF document" if is_document else f"the MJCF file {_shown(value)}"
        message = " ".join(str(e).split())
        raise ModelError(f"MuJoCo could not compile {what}: {message}") from e
    return mj, int(memory)


def _m_sparsity(dof_parentid: np.ndarray):
    """Row structure of lower-triangular M: row i holds i's dof ancestors (ascending), then i.

    On a kinematic tree this pattern is closed under L^T D L factorization (no fill-in),
    so M, its factor and every solve share it.
    """
    nv = len(dof_parentid)
    rows = []
    for i in range(nv):
        chain = []
        j = i
        while j >= 0:
            chain.append(j)
            j = dof_parentid[j]
        rows.append(chain[::-1])
    rownnz = np.array([len(r) for r in rows], dtype=INT)
    rowadr = np.zeros(nv, dtype=INT)
    if nv:
        rowadr[1:] = np.cumsum(rownnz)[:-1]
    colind = np.array([c for r in rows for c in r], dtype=INT)
    return rownnz, rowadr, colind


def _d_mask(dof_parentid: np.ndarray) -> np.ndarray:
    """Dense pattern of d(force)/d(qvel): dof pairs on one ancestor chain (MuJoCo's D pattern).

    Velocity derivatives of joint-space forces are kept only between a dof and its
    ancestors or descendants, as MuJoCo stores them (two dofs in different branches, or in
    different trees, get no entry even if a tendon couples them).
    """
    nv = len(dof_parentid)
    mask = np.zeros((nv, nv), dtype=INT)
    for i in range(nv):
        j = i
        while j >= 0:
            mask[i, j] = mask[j, i] = 1
            j = dof_parentid[j]
    return mask


def _tree_dofnum(dof_parentid: np.ndarray) -> np.ndarray:
    """Number of dofs in the kinematic tree of each dof (its root dof's descendants)."""
    nv = len(dof_parentid)
    root = np.arange(nv)
    for i in range(nv):
        if dof_parentid[i] >= 0:
            root[i] = root[dof_parentid[i]]
    counts = np.bincount(root, minlength=nv)
    return counts[root]


def _body_dofs(mj: mujoco.MjModel, body: int) -> set[int]:
    """The dofs that move `body`: those of the bodies on its path to the world."""
    dofs = set()
    while body > 0:
        dofs.update(range(mj.body_dofadr[body], mj.body_dofadr[body] + mj.body_dofnum[body]))
        body = mj.body_parentid[body]
    return dofs


def _tendon_sparsity(mj: mujoco.MjModel):
    """(ten_J_rownnz, ten_J_rowadr, ten_J_colind) of the tendons: each row the dofs that can
    move the tendon, ascending, each once (MuJoCo's model arrays of the same names): a fixed
    tendon's joints' dofs; a spatial tendon's, the dofs moving the sites' bodies of each
    segment between two bodies, and for a site-geom-site triple the dofs of the two sites'
    and the geom's bodies unless all three are one body."""
    rows = []
    for t in range(mj.ntendon):
        adr, num = mj.tendon_adr[t], mj.tendon_num[t]
        objs = mj.wrap_objid[adr : adr + num]
        if mj.wrap_type[adr] == mujoco.mjtWrap.mjWRAP_JOINT:
            rows.append(np.unique(mj.jnt_dofadr[objs]))
            continue
        dofs: set[int] = set()
        kinds = mj.wrap_type[adr : adr + num]
        W = mujoco.mjtWrap
        for k in range(num - 1):
            if kinds[k] != W.mjWRAP_SITE:
                continue  # a pulley starts a new branch; a geom is handled with its first site
            if kinds[k + 1] == W.mjWRAP_SITE:
                bodies = {mj.site_bodyid[objs[k]], mj.site_bodyid[objs[k + 1]]}
            elif kinds[k + 1] == W.mjWRAP_SPHERE or kinds[k + 1] == W.mjWRAP_CYLINDER:
                # site-geom-site: the straight segment, or the pieces to and from the geom
                g, s1 = objs[k + 1], objs[k + 2]
                bodies = {mj.site_bodyid[objs[k]], mj.geom_bodyid[g], mj.site_bodyid[s1]}
            else:
                continue
            if len(bodies) > 1:
                for body in bodies:
                    dofs |= _body_dofs(mj, body)
        rows.append(np.array(sorted(dofs), dtype=INT))
    rownnz = np.array([len(r) for r in rows], dtype=INT)
    rowadr = np.zeros(len(rows), dtype=INT)
    if len(rows):
        rowadr[1:] = np.cumsum(rownnz)[:-1]
    colind = np.concatenate(rows).astype(INT) if rows else np.zeros(0, dtype=INT)
    return rownnz, rowadr, colind


def model_from_mujoco(
    mj: mujoco.MjModel, nconmax: int | None = None, nefcmax: int | None = None, memory: int = -1
) -> Model:
    """Copy the static arrays of a compiled MjModel into an engine Model.

    Every field is converted to its declaration (dtype, and the fixed trailing dimensions:
    MuJoCo keeps some arrays flat). A field with a counterpart of the same name in the MjModel
    (`opt_*` in mj.opt, `stat_*` in mj.stat) is copied from it; the few the engine derives
    or narrows are computed here (`_derived`), the capacities by `capacities`. Raises
    ModelError for a number the engine cannot simulate (`check_values`)."""
    nconmax = _capacity_argument("nconmax", nconmax)
    nefcmax = _capacity_argument("nefcmax", nefcmax)
    derived = _derived(mj, nconmax, nefcmax, memory)
    values = {}
    for name, spec in MODEL_SPECS.items():
        value = derived[name] if name in derived else _mujoco_field(mj, name)
        values[name] = _as_declared(value, spec)
    model = Model(**values)
    check_values(model, mj)
    return model


def _mujoco_field(mj: mujoco.MjModel, name: str):
    """The MjModel value a field of the same name copies (`opt_x` is mj.opt.x, `stat_x` is
    mj.stat.x)."""
    if name.startswith("opt_"):
        return getattr(mj.opt, name[4:])
    if name.startswith("stat_"):
        return getattr(mj.stat, name[5:])
    return getattr(mj, name)


def _as_declared(value, spec):
    """`value` as its declaration says: a Python int or float, or a C-contiguous array of the
    declared dtype reshaped to the declared number of dimensions (fixed trailing sizes)."""
    if spec is int:
        return int(value)
    if spec is float:
        return float(value)
    a = np.ascontiguousarray(np.asarray(value, dtype=spec.dtype))
    trailing = spec.dims[1:]
    if spec.ndim > 1 and all(isinstance(dim, int) for dim in trailing):
        a = a.reshape(-1, *trailing)
    elif spec.ndim == 1:
        a = a.reshape(-1)
    return a


def _derived(mj: mujoco.MjModel, nconmax: int | None, nefcmax: int | None, memory: int) -> dict:
    """The fields the engine derives (M's sparsity, candidate contact pairs, capacities) or
    narrows from MuJoCo's wider arrays (the three gain and bias parameters and the filters'
    time constant, which are all the engine's actuators use)."""
    parent = np.asarray(mj.dof_parentid)
    rownnz, rowadr, colind = _m_sparsity(parent)
    check_trees(mj)
    ten_J = _tendon_sparsity(mj)
    cpair = candidate_pairs(mj)
    dense = dense_jacobian(mj.opt.jacobian, mj.nv, mj.opt.solver)
    nefcdof, nefctreedof = efc_widths(mj, cpair["cpair_geom"], ten_J, dense)
    widths = {"nefcdof": nefcdof, "nefctreedof": nefctreedof}
    nconmax, nefcmax = capacities(mj, cpair, nconmax, nefcmax, widths, memory)
    out = {
        "na": int(mj.na),
        "nM": int(rownnz.sum()),
        "M_rownnz": rownnz,
        "M_rowadr": rowadr,
        "M_colind": colind,
        "D_mask": _d_mask(parent),
        "dof_treedofnum": _tree_dofnum(parent),
        "actuator_gainprm": np.asarray(mj.actuator_gainprm).reshape(-1, 10)[:, :3],
        "actuator_biasprm": np.asarray(mj.actuator_biasprm).reshape(-1, 10)[:, :3],
        "actuator_dynprm": np.asarray(mj.actuator_dynprm).reshape(-1, 10)[:, :1],
        "nJten": int(ten_J[0].sum()),
        "ten_J_rownnz": ten_J[0],
        "ten_J_rowadr": ten_J[1],
        "ten_J_colind": ten_J[2],
        "nconmax": int(nconmax),
        "nefcmax": int(nefcmax),
        "efc_dense": int(dense),
        **widths,
        "cpair_refused": cpair["refused"],
    }
    out.update((k, v) for k, v in cpair.items() if k.startswith("cpair_"))
    return out
