"""The model constants MuJoCo derives from masses and inertias at qpos0 (its mj_setConst).

MuJoCo's compiler computes a few quantities once, at the reference pose qpos0, from the
bodies' masses, inertias and centres of mass and the dofs' armature; the constraint solver
reads them every step. When a row of a batch gets its own physical parameters
(engine.params), they are recomputed for that row as mj_setConst does (setFixed, set0 and
setStat in MuJoCo's engine_setconst.c):

    body_subtreemass[i] = sum of body_mass over i's subtree
    body_invweight0[i]  = (mean of diag(A)[0:3], mean of diag(A)[3:6]),  A = J M^-1 J^T
                          with J (6, nv) the translation and rotation Jacobian of i's centre
                          of mass; 0 for a body without dofs; (1/mass, 0) for a body MuJoCo
                          marks simple with no rotations (body_simple == 2)
    dof_invweight0[i]   = (M^-1)[i, i]; averaged over the translations and over the
                          rotations of a free joint, over the three dofs of a ball joint;
                          1/mass for a joint of a body_simple == 2 body
    tendon_invweight0   = ten_J M^-1 ten_J^T

all with M = M(qpos0) of the row's own parameters. The inverse weights set the constraint
rows' regularization (engine.constraint). MuJoCo's compiler also sets stat.meaninertia (the
mean of diag M, which scales the solver's tolerance), but the 4.0.0 binary's mj_setConst
leaves it as compiled when masses change (checked in tests/engine/test_params.py), so a row
keeps the model's.
"""

from __future__ import annotations

import numpy as np
from numba import types

from robodyn.engine import types as T
from robodyn.engine.com_pos import com_pos
from robodyn.engine.crb import crb
from robodyn.engine.factor import factor_m, solve_ld
from robodyn.engine.jacobian import jac
from robodyn.engine.jit import entry, kernel
from robodyn.engine.kinematics import kinematics
from robodyn.engine.ptr import data_at, model_at
from robodyn.engine.step import reset_row
from robodyn.engine.tendon import tendon
from robodyn.engine.types import MINVAL


@kernel
def _inv_quad(m, d, row, tmp):
    """row . M^-1 row, with M the factored mass matrix of Data row 0 (tmp: (nv,) work)."""
    for k in range(m.nv):
        tmp[k] = row[k]
    solve_ld(tmp, d.qLD[0], d.qLDiagInv[0], m)
    s = 0.0
    for k in range(m.nv):
        s += row[k] * tmp[k]
    return s


@kernel
def _body_invweight(m, d, i, jac6, tmp):
    """(translation, rotation) mean inverse inertia of body i's centre of mass."""
    if m.body_dofnum[m.body_weldid[i]] == 0:
        return 0.0, 0.0
    if m.body_simple[i] == 2:
        return 1.0 / max(MINVAL, m.body_mass[i]), 0.0
    jac(m, d, 0, d.xipos[0, i], i, jac6[0:3], jac6[3:6])
    tran = 0.0
    rot = 0.0
    for r in range(3):
        tran += _inv_quad(m, d, jac6[r], tmp)
        rot += _inv_quad(m, d, jac6[3 + r], tmp)
    return tran / 3.0, rot / 3.0


@kernel
def _dof_invweight(m, d, j, out, unit, tmp):
    """dof_invweight0 of joint j's dofs into out (nv,); unit: (nv,) zeros on entry and exit."""
    adr = m.jnt_dofadr[j]
    body = m.jnt_bodyid[j]
    jtype = m.jnt_type[j]
    n = 6 if jtype == T.JNT_FREE else (3 if jtype == T.JNT_BALL else 1)
    if m.body_simple[body] == 2:
        for k in range(n):
            out[adr + k] = 1.0 / max(MINVAL, m.body_mass[body])
        return
    diag = (0.0, 0.0)
    for k in range(n):
        unit[adr + k] = 1.0
        a = _inv_quad(m, d, unit, tmp)
        unit[adr + k] = 0.0
        if k < 3:
            diag = (diag[0] + a, diag[1])
        else:
            diag = (diag[0], diag[1] + a)
    if n == 1:
        out[adr] = diag[0]
        return
    for k in range(3):
        out[adr + k] = diag[0] / 3.0
    for k in range(3, n):
        out[adr + k] = diag[1] / 3.0


@kernel
def set_const_row(m, d, subtreemass, body_iw, dof_iw, ten_iw, jac6, work):
    """The constants of the module docstring for Model m, computed in Data row 0 (a scratch
    row: its state is set to qpos0). Returns the smallest pivot of M's factorization: one
    <= 0 (or NaN) means M(qpos0) is not positive definite, and nothing else is computed."""
    for i in range(m.nbody):
        subtreemass[i] = m.body_mass[i]
    for i in range(m.nbody - 1, 0, -1):
        subtreemass[m.body_parentid[i]] += subtreemass[i]
    reset_row(m, d, 0)
    kinematics(m, d, 0)
    com_pos(m, d, 0)
    tendon(m, d, 0)
    crb(m, d, 0)
    factor_m(m, d, 0)
    pivot = np.inf
    for i in range(m.nv):
        pivot = min(pivot, d.qLD[0, m.M_rowadr[i] + m.M_rownnz[i] - 1])
    if not pivot > 0.0:
        return pivot
    tmp = work[0]
    unit = work[1]
    for k in range(m.nv):
        unit[k] = 0.0
    body_iw[0, 0] = 0.0
    body_iw[0, 1] = 0.0
    for i in range(1, m.nbody):
        body_iw[i, 0], body_iw[i, 1] = _body_invweight(m, d, i, jac6, tmp)
    for j in range(m.njnt):
        _dof_invweight(m, d, j, dof_iw, unit, tmp)
    for t in range(m.ntendon):
        ten_iw[t] = _inv_quad(m, d, d.ten_J[0, t], tmp) if m.nv > 0 else 0.0
    return pivot


@entry
def set_const_rows(mtab, sdp, rows, subtreemass, body_iw, dof_iw, ten_iw, pivot, jac6, work):
    """set_const_row for the Model records of `rows` (mtab[rows[k]]) into row k of the
    outputs, each computed in the one-row scratch Data at sdp."""
    d = data_at(sdp)
    for k in range(rows.shape[0]):
        m = model_at(mtab[rows[k]])
        pivot[k] = set_const_row(m, d, subtreemass[k], body_iw[k], dof_iw[k], ten_iw[k], jac6, work)


_F = types.float64
SET_CONST_ARGTYPES = (
    types.Array(types.int64, 1, "C"),  # mtab
    types.int64,  # the scratch Data
    types.Array(types.int64, 1, "C"),  # rows
    types.Array(_F, 2, "C"),  # subtreemass (k, nbody)
    types.Array(_F, 3, "C"),  # body invweight (k, nbody, 2)
    types.Array(_F, 2, "C"),  # dof invweight (k, nv)
    types.Array(_F, 2, "C"),  # tendon invweight (k, ntendon)
    types.Array(_F, 1, "C"),  # pivot (k,)
    types.Array(_F, 2, "C"),  # jac6 (6, nv)
    types.Array(_F, 2, "C"),  # work (2, nv)
)
