"""The buffers of a model's Data: how many contacts (`nconmax`) and constraint rows
(`nefcmax`) each environment holds, and how many dofs one constraint row stores
(`nefcdof`, `nefctreedof`).

MuJoCo sizes one arena per mjData from `<size nconmax njmax memory>`; here each row's
contact and constraint arrays are sized at load (`capacities`, `efc_widths`, called by
engine/loader.py), and engine.data.make_data checks a Model against the same rules
before allocating, since the constraint stage writes rows without bounds checks.
"""

from __future__ import annotations

import mujoco
import numpy as np

from robodyn.engine import fields
from robodyn.engine import types as T
from robodyn.engine.errors import ModelError
from robodyn.engine.model import Model

DEFAULT_NCONMAX = 256
"""Contacts per row when neither the MJCF (`<size nconmax njmax memory>`) nor load_mjcf
sets a capacity: the most the model's candidate geom pairs can produce, but at most this.
MuJoCo's default arena holds 100 contacts; 256 keeps every gymnasium model at its worst
case (humanoid: 190 possible, 8 to 10 seen in random rollouts), while a 200-link
self-colliding chain (39,802 possible) reserves 256 instead of 39,802."""


def _chain_masks(m) -> np.ndarray:
    """(nbody, nv) bool: dof k is on body b's chain, the dofs of b and its ancestors (the
    dofs that can move b; MuJoCo's mj_bodyChain). `m`: an MjModel or a Model."""
    chain = np.zeros((m.nbody, m.nv), dtype=bool)
    chain[m.dof_bodyid, np.arange(m.nv)] = True
    for b in range(1, m.nbody):  # parent-first: the parent's row is complete
        chain[b] |= chain[m.body_parentid[b]]
    return chain


def dense_jacobian(jacobian: int, nv: int, solver: int) -> bool:
    """Whether constraint rows are stored dense: with <option jacobian="dense">, never with
    "sparse", and with "auto" (the default) below SPARSE_NV dofs (MuJoCo's mj_isSparse
    threshold) under PGS only. PGS updates M^-1 J^T f with each row's M^-1 J_i^T, a plain
    vector loop when dense; Newton sums J^T D J, whose cost grows with the square of a row's
    stored entries. Measured on gymnasium's humanoid and ant on the floor (env-steps/s, B =
    64, one thread): under PGS dense rows are 12 % (humanoid) and 4 % (ant) faster than
    compact ones, under Newton compact rows are 7 % faster for both."""
    if jacobian == T.JAC_AUTO:
        return nv < T.SPARSE_NV and solver == T.SOL_PGS
    return jacobian == T.JAC_DENSE


def efc_widths(m, cpair_geom: np.ndarray, ten_J: tuple, dense: bool = False) -> tuple[int, int]:
    """(nefcdof, nefctreedof): the most dofs one constraint row can touch, and the most
    dofs of the kinematic trees one row touches, over every row the model can make; both
    nv when the rows are `dense` (and the model can make any row).

    A row stores the dofs of its chain as MuJoCo's sparse Jacobian does (mj_mergeChain):
    - connect and weld between bodies b1, b2 (or the sites' bodies): the union of the two
      chains, |c1| + |c2| - |c1 & c2|;
    - a contact between the bodies of a candidate pair: the union less the common
      ancestors' dofs, whose columns cancel (J_p(b2, p) - J_p(b1, p) = 0 there):
      |c1| + |c2| - 2 |c1 & c2|;
    - joint equality: its one or two dofs; joint limit: one dof (a ball joint: its three);
      tendon limit: the tendon's dofs.
    The chain overlaps |c1 & c2| of all body pairs come from one product of the (nbody, nv)
    chain masks. The second width bounds a row of M^-1 J^T: M is block diagonal over the
    trees, so that row is zero outside the trees of the row's dofs (for a body pair, the
    dofs of the one or two trees the bodies belong to).

    `m` is an MjModel or a Model (the same fields), `cpair_geom` the candidate contact
    pairs and `ten_J` the tendon rows' (rownnz, rowadr, colind), as the Model's
    ten_J_rownnz, ten_J_rowadr and ten_J_colind."""
    if m.nv == 0:
        return 0, 0
    chain = _chain_masks(m)
    count = chain.sum(axis=1)
    as_float = chain.astype(np.float64)
    common = np.rint(as_float @ as_float.T).astype(np.int64)  # |c1 & c2| for every body pair
    # a body's tree: that of any dof on its chain (-1: welded to the world)
    tree = np.where(count > 0, np.asarray(m.dof_treeid)[np.argmax(chain, axis=1)], -1)
    tree_dofs = np.where(tree >= 0, np.asarray(m.tree_dofnum)[np.maximum(tree, 0)], 0)

    def tree_width(b1, b2):
        return np.where(tree[b1] == tree[b2], tree_dofs[b1], tree_dofs[b1] + tree_dofs[b2])

    widths, tree_widths = [0], [0]
    geom_body = np.asarray(m.geom_bodyid)
    if len(cpair_geom):
        b1, b2 = geom_body[cpair_geom[:, 0]], geom_body[cpair_geom[:, 1]]
        widths.append(int(np.max(count[b1] + count[b2] - 2 * common[b1, b2])))
        tree_widths.append(int(np.max(tree_width(b1, b2))))
    eq = np.isin(m.eq_type, (T.EQ_CONNECT, T.EQ_WELD))
    if eq.any():
        b1, b2 = m.eq_obj1id[eq], m.eq_obj2id[eq]
        site = m.eq_objtype[eq] == T.OBJ_SITE
        b1, b2 = b1.copy(), b2.copy()
        b1[site], b2[site] = m.site_bodyid[b1[site]], m.site_bodyid[b2[site]]
        widths.append(int(np.max(count[b1] + count[b2] - common[b1, b2])))
        tree_widths.append(int(np.max(tree_width(b1, b2))))
    dof_tree_dofs = np.asarray(m.tree_dofnum)[m.dof_treeid]
    rownnz, rowadr, colind = ten_J
    for i in np.flatnonzero(m.eq_type == T.EQ_TENDON):
        tendons = [t for t in (m.eq_obj1id[i], m.eq_obj2id[i]) if t >= 0]
        dofs = set().union(*({int(k) for k in colind[rowadr[t] : rowadr[t] + rownnz[t]]} for t in tendons))
        widths.append(len(dofs))
        tree_widths.append(int(sum(m.tree_dofnum[k] for k in {int(m.dof_treeid[v]) for v in dofs})))
    for i in np.flatnonzero(m.eq_type == T.EQ_JOINT):
        dofs = {int(m.jnt_dofadr[j]) for j in (m.eq_obj1id[i], m.eq_obj2id[i]) if j >= 0}
        trees = {int(m.dof_treeid[k]) for k in dofs}
        widths.append(len(dofs))
        tree_widths.append(int(sum(m.tree_dofnum[t] for t in trees)))
    limited = np.asarray(m.jnt_limited).astype(bool)
    if limited.any():
        ball = limited & (np.asarray(m.jnt_type) == T.JNT_BALL)
        widths.append(3 if ball.any() else 1)  # a ball limit's row is on its three dofs
        tree_widths.append(int(np.max(dof_tree_dofs[m.jnt_dofadr[limited]])))
    friction = np.asarray(m.dof_frictionloss) > 0
    if friction.any():
        widths.append(1)
        tree_widths.append(int(np.max(dof_tree_dofs[friction])))
    rownnz, rowadr, colind = ten_J
    tendon_rows = np.asarray(m.tendon_limited).astype(bool) | (np.asarray(m.tendon_frictionloss) > 0)
    for t in np.flatnonzero(tendon_rows):
        dofs = colind[rowadr[t] : rowadr[t] + rownnz[t]]
        widths.append(len(dofs))
        tree_widths.append(int(sum(m.tree_dofnum[k] for k in np.unique(m.dof_treeid[dofs]))))
    if dense and max(widths) > 0:
        return m.nv, m.nv
    return max(widths), max(tree_widths)


def _disableflags(m) -> int:
    """The disable flags of an MjModel (m.opt.disableflags) or a Model (m.opt_disableflags)."""
    return int(m.opt_disableflags) if hasattr(m, "opt_disableflags") else int(m.opt.disableflags)


def _efc_rows(m, cpair_dim) -> tuple[int, int]:
    """(rows that do not depend on contacts, rows of one contact) of one environment of
    `m` (an MjModel or a Model) at most: every equality (connect 3, weld 6, joint 1 rows),
    one friction row per dof and tendon with frictionloss > 0 and both sides of every
    limit, then per contact the largest condim among the candidate pairs gives (1 row for
    condim 1, 2 (condim - 1) for a pyramid). The flags remove what they disable."""
    flags = _disableflags(m)
    eq_type, jnt_limited, tendon_limited = m.eq_type, m.jnt_limited, m.tendon_limited
    if flags & T.DSBL_CONSTRAINT:
        return 0, 0
    fixed = 0
    if not flags & T.DSBL_EQUALITY:
        sizes = {T.EQ_CONNECT: 3, T.EQ_WELD: 6, T.EQ_JOINT: 1, T.EQ_TENDON: 1}
        fixed += sum(sizes.get(int(t), 0) for t in eq_type)
    if not flags & T.DSBL_FRICTIONLOSS:
        fixed += int(
            np.sum(np.asarray(m.dof_frictionloss) > 0) + np.sum(np.asarray(m.tendon_frictionloss) > 0)
        )
    if not flags & T.DSBL_LIMIT:
        fixed += 2 * int(np.sum(jnt_limited)) + 2 * int(np.sum(tendon_limited))
    per_contact = 0
    if not flags & T.DSBL_CONTACT and len(cpair_dim):
        per_contact = max(1 if dim == 1 else 2 * (int(dim) - 1) for dim in cpair_dim)
    return fixed, per_contact


def efc_rows_needed(m: Model) -> int:
    """Most constraint rows one environment of `m` can have with m.nconmax contacts; the
    constraint stage writes rows without bounds checks, so m.nefcmax must be at least this
    (engine.data.make_data checks it)."""
    fixed, per_contact = _efc_rows(m, m.cpair_dim)
    return fixed + int(m.nconmax) * per_contact


def _bytes_per(mj: mujoco.MjModel, dims: tuple[str, ...], widths: dict[str, int]) -> int:
    """Bytes of one entry along any of the Data dimensions `dims` ("nconmax": one contact,
    "nefcmax", "npgs": one constraint row) in one environment, from Data's declarations;
    `widths` gives the compact row widths (nefcdof, nefctreedof)."""
    # Data's declarations, recorded by engine.fields when engine.data (which imports this
    # module, so it cannot be imported here) was loaded with the engine package
    counts = {"nv": mj.nv, "nq": mj.nq, "nu": mj.nu, "nbody": mj.nbody, **widths}
    total = 0
    for spec in fields.DECLARED["Data"].values():
        names = [getattr(dim, "name", None) for dim in spec.dims]
        if not any(name in dims for name in names):
            continue
        n = np.dtype(spec.dtype).itemsize
        for dim, name in zip(spec.dims, names, strict=True):
            if name == "B" or name in dims:
                continue
            n *= dim if isinstance(dim, int) else counts[name]
        total += n
    return total


def capacities(
    mj: mujoco.MjModel,
    cpair: dict,
    nconmax: int | None,
    nefcmax: int | None,
    widths: dict[str, int],
    memory: int = -1,
):
    """(nconmax, nefcmax): each row's contact and constraint-row capacity.

    In order of precedence: load_mjcf's `nconmax`/`nefcmax`, the MJCF's `<size nconmax>`
    and `<size njmax>`, the MJCF's `<size memory>` (bytes per environment for the contact
    and constraint arrays: the most contacts whose arrays and rows fit, and the rest as
    rows), then the defaults: nconmax the most contacts the candidate pairs can produce,
    at most DEFAULT_NCONMAX; nefcmax every row those contacts, the equalities and the
    limits can need. nefcmax is never more than that (more rows could never be filled);
    with a smaller nefcmax, nconmax shrinks to the contacts whose rows fit, so a row that
    finds more contacts raises ContactOverflowError instead of overrunning the rows.
    `widths` ({"nefcdof": ..., "nefctreedof": ...}, from efc_widths) size a row's bytes.
    Raises ModelError when nefcmax cannot hold the equality and limit rows."""
    flags = mj.opt.disableflags
    fixed, per_contact = _efc_rows(mj, cpair["cpair_dim"])
    worst = int(cpair["cpair_maxcon"].sum())
    origin = f"nefcmax={nefcmax}"
    if nconmax is None and mj.nconmax >= 0:
        nconmax = int(mj.nconmax)
    if nefcmax is None and mj.njmax >= 0:
        nefcmax, origin = int(mj.njmax), f'<size njmax="{mj.njmax}">'
    if nefcmax is None and memory >= 0:
        origin = f'<size memory="{memory}"> ({memory} bytes per environment)'
        dual = mj.opt.solver == T.SOL_PGS or mj.opt.noslip_iterations > 0
        row_dims = ("nefcmax", "npgs") if dual else ("nefcmax",)
        con_bytes, row_bytes = _bytes_per(mj, ("nconmax",), widths), _bytes_per(mj, row_dims, widths)
        if flags & T.DSBL_CONSTRAINT:
            row_bytes = 0
        if nconmax is None:
            free = memory - fixed * row_bytes
            nconmax = max(0, min(worst, free // (con_bytes + per_contact * row_bytes)))
        left = memory - nconmax * con_bytes
        nefcmax = left // row_bytes if row_bytes else 0
        if left < 0 or nefcmax < fixed:
            need = fixed * row_bytes + nconmax * con_bytes
            raise ModelError(
                f"{origin} cannot hold the model's {fixed} equality and limit rows and "
                f"{nconmax} contacts: it needs at least {need} bytes; raise memory or remove it"
            )
    if nconmax is None:
        nconmax = min(worst, DEFAULT_NCONMAX)
    full = fixed + nconmax * per_contact
    if nefcmax is None:
        return nconmax, full
    if nefcmax < fixed:
        raise ModelError(
            f"{origin} cannot hold the model's {fixed} equality and limit rows: nefcmax must be >= {fixed}"
        )
    if per_contact:
        nconmax = min(nconmax, (nefcmax - fixed) // per_contact)
    return nconmax, min(nefcmax, fixed + nconmax * per_contact)
