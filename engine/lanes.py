"""The smooth pipeline's position and velocity stages on eight rows at a time (the lanes study).

The per-row engine runs each stage on one row and loops over rows outside it: LLVM then
emits scalar arithmetic (one `vmulsd` a multiply). Here the batch is stored in blocks of
eight rows with the row innermost, a field of shape (B, n, k) as (B / 8, n, k, 8), and each
stage runs on one block with every number an `engine.vec.F64x8`: one AVX-512 instruction
does a multiply for eight rows.

Each lane does what the per-row kernel does to its row, in the same order: the tuple
helpers of `engine.spatial` (`qmul`, `mv3`, `inert_vec`, `inertial_force`, `dot6`, ...) are
the per-row ones, typed on F64x8; where a per-row helper branches on a value (`qrot`'s
identity test, `qnormalized`, `qaxisangle`'s zero angle, `quat_to_mat`'s identity) its lane
form below selects per lane between the same two results. Branches on the model (joint
types, tree structure) are the same for every lane and stay branches. So every row's
result has the per-row kernel's bits (tests/engine/test_lanes.py checks it, and that the
kernels stay vector code).

Stages: kinematics (bodies, joints, inertial frames, geoms, sites), com_pos, crb, the LTDL
factor, com_vel, the bias force (RNE with zero acceleration) and M^-1 solves. What they
support is checked by `check_model`: every row of a block shares one model, and mocap
bodies are not handled here.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import prange

from robodyn.engine import types as T
from robodyn.engine.errors import InvalidArgumentError, UnsupportedModelError
from robodyn.engine.integrate import _DEXPINV_POLY, _PI_SQ, _TWO_PI, _has_damping
from robodyn.engine.jit import entry, kernel, outline, parallel_entry, u
from robodyn.engine.ptr import model_at
from robodyn.engine.spatial import add_scl6, dot6, inert_vec, inertial_force, mv3, qmul
from robodyn.engine.types import MINVAL
from robodyn.engine.vec import LANES, all_lanes, select, splat, vload, vstore

# ---- loads and stores of short vectors ---------------------------------------------------------


@kernel
def _load3(x):
    return (vload(x[0]), vload(x[1]), vload(x[2]))


@kernel
def _load4(x):
    return (vload(x[0]), vload(x[1]), vload(x[2]), vload(x[3]))


@kernel
def _load6(x):
    return _load3(x) + _load3(x[3:])


@kernel
def _load9(x):
    return _load6(x) + _load3(x[6:])


@kernel
def _load10(x):
    return _load9(x) + (vload(x[9]),)


@kernel
def _splat3(v):
    return (splat(v[0]), splat(v[1]), splat(v[2]))


@kernel
def _splat4(v):
    return (splat(v[0]), splat(v[1]), splat(v[2]), splat(v[3]))


@kernel
def _store(x, t):
    """x[k] (eight lanes each) = t[k] for every k of the tuple t."""
    for k in range(len(t)):
        vstore(x[k], t[k])


# ---- the per-row helpers that branch on values, as per-lane selects ------------------------------


@kernel
def _is_identity(q):
    return (q[0] == 1.0) & (q[1] == 0.0) & (q[2] == 0.0) & (q[3] == 0.0)


@kernel
def qrot_lanes(q, v):
    """spatial.qrot per lane: v itself where q is exactly the identity, else
    v + 2 q_xyz x (q_w v + q_xyz x v)."""
    t0 = q[0] * v[0] + q[2] * v[2] - q[3] * v[1]
    t1 = q[0] * v[1] + q[3] * v[0] - q[1] * v[2]
    t2 = q[0] * v[2] + q[1] * v[1] - q[2] * v[0]
    same = _is_identity(q)
    return (
        select(same, v[0], v[0] + 2.0 * (q[2] * t2 - q[3] * t1)),
        select(same, v[1], v[1] + 2.0 * (q[3] * t0 - q[1] * t2)),
        select(same, v[2], v[2] + 2.0 * (q[1] * t1 - q[2] * t0)),
    )


@kernel
def qnormalized_lanes(q):
    """spatial.qnormalized per lane: the identity where |q| < MINVAL, q / |q| where |q| is
    further than MINVAL from 1, else q."""
    n = math.sqrt((q[0] * q[0] + q[1] * q[1]) + (q[2] * q[2] + q[3] * q[3]))
    inv = 1.0 / n
    zero = n < MINVAL
    scale = abs(n - 1.0) > MINVAL
    return (
        select(zero, 1.0, select(scale, q[0] * inv, q[0])),
        select(zero, 0.0, select(scale, q[1] * inv, q[1])),
        select(zero, 0.0, select(scale, q[2] * inv, q[2])),
        select(zero, 0.0, select(scale, q[3] * inv, q[3])),
    )


@kernel
def qaxisangle_lanes(axis, angle):
    """spatial.qaxisangle per lane (axis: the model's, the same in every lane)."""
    s = math.sin(angle * 0.5)
    c = math.cos(angle * 0.5)
    zero = angle == 0.0
    return (
        select(zero, 1.0, c),
        select(zero, 0.0, axis[0] * s),
        select(zero, 0.0, axis[1] * s),
        select(zero, 0.0, axis[2] * s),
    )


@kernel
def quat_to_mat_lanes(q):
    """spatial.quat_to_mat per lane, as a 9-tuple (the identity matrix where q is exactly
    the identity quaternion)."""
    q00 = q[0] * q[0]
    q01 = q[0] * q[1]
    q02 = q[0] * q[2]
    q03 = q[0] * q[3]
    q11 = q[1] * q[1]
    q12 = q[1] * q[2]
    q13 = q[1] * q[3]
    q22 = q[2] * q[2]
    q23 = q[2] * q[3]
    q33 = q[3] * q[3]
    same = _is_identity(q)
    return (
        select(same, 1.0, (q00 - q22) + (q11 - q33)),
        select(same, 0.0, 2.0 * (q12 - q03)),
        select(same, 0.0, 2.0 * (q13 + q02)),
        select(same, 0.0, 2.0 * (q12 + q03)),
        select(same, 1.0, (q00 + q22) - (q11 + q33)),
        select(same, 0.0, 2.0 * (q23 - q01)),
        select(same, 0.0, 2.0 * (q13 - q02)),
        select(same, 0.0, 2.0 * (q23 + q01)),
        select(same, 1.0, (q00 - q22) + (q33 - q11)),
    )


# ---- stage 1: kinematics --------------------------------------------------------------------


@kernel
def _frame_pose_lanes(xpos_out, xmat_out, xpos, xquat, xmat, xipos, ximat, body, pos, quat, same):
    """kinematics._frame_pose on one block: the pose of a frame (pos, quat) on `body`, or a
    copy of the body's or its inertial frame's where the compiler found them equal."""
    if same == T.SAMEFRAME_NONE:
        p = mv3(_load9(xmat[body]), pos)
        bx = _load3(xpos[body])
        _store(xpos_out, (bx[0] + p[0], bx[1] + p[1], bx[2] + p[2]))
        _store(xmat_out, quat_to_mat_lanes(qmul(_load4(xquat[body]), quat)))
        return
    if same == T.SAMEFRAME_BODY:
        _store(xpos_out, _load3(xpos[body]))
    elif same == T.SAMEFRAME_INERTIA:
        _store(xpos_out, _load3(xipos[body]))
    else:
        p = mv3(_load9(xmat[body]), pos)
        bx = _load3(xpos[body])
        _store(xpos_out, (bx[0] + p[0], bx[1] + p[1], bx[2] + p[2]))
    if same == T.SAMEFRAME_BODY or same == T.SAMEFRAME_BODYROT:
        _store(xmat_out, _load9(xmat[body]))
    else:
        _store(xmat_out, _load9(ximat[body]))


@kernel
def kinematics_lanes(m, L):
    """engine.kinematics.kinematics on the block L (a `Block`: each field (n, k, 8))."""
    _store(L.xpos[0], _splat3((0.0, 0.0, 0.0)))
    _store(L.xipos[0], _splat3((0.0, 0.0, 0.0)))
    world = _splat4((1.0, 0.0, 0.0, 0.0))
    _store(L.xquat[0], world)
    _store(L.xmat[0], quat_to_mat_lanes(world))
    _store(L.ximat[0], quat_to_mat_lanes(world))
    qpos = L.qpos
    for i in range(1, m.nbody):
        jntadr = m.body_jntadr[i]
        jntnum = m.body_jntnum[i]
        if jntnum == 1 and m.jnt_type[jntadr] == T.JNT_FREE:
            qa = u(m.jnt_qposadr[jntadr])
            pos = _load3(qpos[qa:])
            quat = qnormalized_lanes(_load4(qpos[qa + u(3) :]))
            _store(L.xanchor[jntadr], pos)
            _store(L.xaxis[jntadr], _splat3(m.jnt_axis[jntadr]))
        else:
            p = m.body_parentid[i]
            bpos = m.body_pos[i]
            bquat = m.body_quat[i]
            if p > 0:
                r = mv3(_load9(L.xmat[p]), bpos)
                xp = _load3(L.xpos[p])
                pos = (r[0] + xp[0], r[1] + xp[1], r[2] + xp[2])
                quat = qmul(_load4(L.xquat[p]), bquat)
            else:
                pos = _splat3(bpos)
                quat = _splat4(bquat)
            for j in range(jntadr, jntadr + jntnum):
                qa = u(m.jnt_qposadr[j])
                axis = qrot_lanes(quat, m.jnt_axis[j])
                off = qrot_lanes(quat, m.jnt_pos[j])
                anchor = (pos[0] + off[0], pos[1] + off[1], pos[2] + off[2])
                jtype = m.jnt_type[j]
                if jtype == T.JNT_SLIDE:
                    s = vload(qpos[qa]) - m.qpos0[qa]
                    pos = (pos[0] + axis[0] * s, pos[1] + axis[1] * s, pos[2] + axis[2] * s)
                else:
                    if jtype == T.JNT_BALL:
                        qloc = qnormalized_lanes(_load4(qpos[qa:]))
                    else:
                        qloc = qaxisangle_lanes(m.jnt_axis[j], vload(qpos[qa]) - m.qpos0[qa])
                    quat = qmul(quat, qloc)
                    v = qrot_lanes(quat, m.jnt_pos[j])
                    pos = (anchor[0] - v[0], anchor[1] - v[1], anchor[2] - v[2])
                _store(L.xanchor[j], anchor)
                _store(L.xaxis[j], axis)
        quat = qnormalized_lanes(quat)
        _store(L.xquat[i], quat)
        _store(L.xpos[i], pos)
        _store(L.xmat[i], quat_to_mat_lanes(quat))

    for i in range(1, m.nbody):
        _frame_pose_lanes(
            L.xipos[i], L.ximat[i], L.xpos, L.xquat, L.xmat, L.xipos, L.ximat,
            i, m.body_ipos[i], m.body_iquat[i], m.body_sameframe[i],
        )  # fmt: skip
    for g in range(m.ngeom):
        _frame_pose_lanes(
            L.geom_xpos[g], L.geom_xmat[g], L.xpos, L.xquat, L.xmat, L.xipos, L.ximat,
            m.geom_bodyid[g], m.geom_pos[g], m.geom_quat[g], m.geom_sameframe[g],
        )  # fmt: skip
    for s in range(m.nsite):
        _frame_pose_lanes(
            L.site_xpos[s], L.site_xmat[s], L.xpos, L.xquat, L.xmat, L.xipos, L.ximat,
            m.site_bodyid[s], m.site_pos[s], m.site_quat[s], m.site_sameframe[s],
        )  # fmt: skip


# ---- stage 2: com_pos --------------------------------------------------------------------------


@kernel
def inert_com_lanes(inertia, mat, dif, mass):
    """spatial.inert_com as a 10-tuple, each entry summed as it sums it (inertia, mass: the
    model's; mat, dif: per lane)."""
    t0 = mat[0] * inertia[0]
    t1 = mat[3] * inertia[0]
    t2 = mat[6] * inertia[0]
    t3 = mat[1] * inertia[1]
    t4 = mat[4] * inertia[1]
    t5 = mat[7] * inertia[1]
    t6 = mat[2] * inertia[2]
    t7 = mat[5] * inertia[2]
    t8 = mat[8] * inertia[2]
    return (
        (mat[0] * t0 + mat[1] * t3 + mat[2] * t6) + mass * (dif[1] * dif[1] + dif[2] * dif[2]),
        (mat[3] * t1 + mat[4] * t4 + mat[5] * t7) + mass * (dif[0] * dif[0] + dif[2] * dif[2]),
        (mat[6] * t2 + mat[7] * t5 + mat[8] * t8) + mass * (dif[0] * dif[0] + dif[1] * dif[1]),
        (mat[0] * t1 + mat[1] * t4 + mat[2] * t7) - mass * dif[0] * dif[1],
        (mat[0] * t2 + mat[1] * t5 + mat[2] * t8) - mass * dif[0] * dif[2],
        (mat[3] * t2 + mat[4] * t5 + mat[5] * t8) - mass * dif[1] * dif[2],
        mass * dif[0],
        mass * dif[1],
        mass * dif[2],
        splat(mass),
    )


@kernel
def _dof_rot(axis, offset):
    """com_pos._dof_com for a rotation: (axis, axis x offset)."""
    return (
        axis[0],
        axis[1],
        axis[2],
        axis[1] * offset[2] - axis[2] * offset[1],
        axis[2] * offset[0] - axis[0] * offset[2],
        axis[0] * offset[1] - axis[1] * offset[0],
    )


@kernel
def _dof_slide(axis):
    """com_pos._dof_com for a translation: (0, axis)."""
    z = splat(0.0)
    return (z, z, z, axis[0], axis[1], axis[2])


@kernel
def com_pos_lanes(m, L):
    """engine.com_pos.com_pos on the block L."""
    com = L.subtree_com
    for i in range(m.nbody):
        xi = _load3(L.xipos[i])
        _store(com[i], (m.body_mass[i] * xi[0], m.body_mass[i] * xi[1], m.body_mass[i] * xi[2]))
    for i in range(m.nbody - 1, 0, -1):
        p = m.body_parentid[i]
        for k in range(3):
            vstore(com[p, k], vload(com[p, k]) + vload(com[i, k]))
    for i in range(m.nbody):
        if m.body_subtreemass[i] < MINVAL:
            _store(com[i], _load3(L.xipos[i]))
        else:
            inv = 1.0 / m.body_subtreemass[i]
            for k in range(3):
                vstore(com[i, k], vload(com[i, k]) * inv)

    z = splat(0.0)
    _store(L.cinert[0], (z, z, z, z, z, z, z, z, z, z))
    for i in range(1, m.nbody):
        xi = _load3(L.xipos[i])
        c = _load3(com[m.body_rootid[i]])
        offset = (xi[0] - c[0], xi[1] - c[1], xi[2] - c[2])
        mass = m.body_mass[i]
        _store(L.cinert[i], inert_com_lanes(m.body_inertia[i], _load9(L.ximat[i]), offset, mass))

    for j in range(m.njnt):
        i = m.jnt_bodyid[j]
        da = m.jnt_dofadr[j]
        c = _load3(com[m.body_rootid[i]])
        a = _load3(L.xanchor[j])
        offset = (c[0] - a[0], c[1] - a[1], c[2] - a[2])
        jtype = m.jnt_type[j]
        if jtype == T.JNT_FREE or jtype == T.JNT_BALL:
            rot = da
            if jtype == T.JNT_FREE:
                _store(L.cdof[da + 0], _dof_slide(_splat3((1.0, 0.0, 0.0))))
                _store(L.cdof[da + 1], _dof_slide(_splat3((0.0, 1.0, 0.0))))
                _store(L.cdof[da + 2], _dof_slide(_splat3((0.0, 0.0, 1.0))))
                rot = da + 3
            x = _load9(L.xmat[i])
            _store(L.cdof[rot + 0], _dof_rot((x[0], x[3], x[6]), offset))
            _store(L.cdof[rot + 1], _dof_rot((x[1], x[4], x[7]), offset))
            _store(L.cdof[rot + 2], _dof_rot((x[2], x[5], x[8]), offset))
        elif jtype == T.JNT_SLIDE:
            _store(L.cdof[da], _dof_slide(_load3(L.xaxis[j])))
        else:
            _store(L.cdof[da], _dof_rot(_load3(L.xaxis[j]), offset))


# ---- stage 3: crb, stage 4: factor -----------------------------------------------------------


@kernel
def crb_lanes(m, L):
    """engine.crb.crb on the block L: composite inertias, then M's lower triangle."""
    c = L.crb
    for i in range(m.nbody):
        _store(c[i], _load10(L.cinert[i]))
    for i in range(m.nbody - 1, 0, -1):
        p = m.body_parentid[i]
        if p > 0:
            for k in range(10):
                vstore(c[p, k], vload(c[p, k]) + vload(c[i, k]))
    qM = L.qM
    zero = splat(0.0)
    for k in range(m.nM):
        vstore(qM[k], zero)
    for i in range(m.nv):
        adr = m.M_rowadr[i] + m.M_rownnz[i] - 1
        f = inert_vec(_load10(c[m.dof_bodyid[i]]), _load6(L.cdof[i]))
        vstore(qM[u(adr)], splat(m.dof_armature[i]))
        j = i
        while j >= 0:
            vstore(qM[u(adr)], vload(qM[u(adr)]) + dot6(_load6(L.cdof[j]), f))
            adr -= 1
            j = m.dof_parentid[j]


@kernel
def factor_i_lanes(m, mat, diaginv):
    """engine.factor.factor_i on one block: mat (nM, 8) in M's layout <- its L^T D L factor,
    diaginv (nv, 8) <- 1 / D."""
    for k in range(m.nv - 1, -1, -1):
        start = m.M_rowadr[k]
        diag = m.M_rownnz[k] - 1
        end = start + diag
        invD = 1.0 / vload(mat[u(end)])
        vstore(diaginv[k], invD)
        rk = u(start)
        top = u(end - 1)
        for t in range(u(diag)):
            adr = top - t
            i = m.M_colind[adr]
            scale = -vload(mat[adr]) * invD
            ri = u(m.M_rowadr[i])
            for t in range(u(m.M_rownnz[i])):
                vstore(mat[ri + t], vload(mat[ri + t]) + scale * vload(mat[rk + t]))
        for adr in range(rk, u(end)):
            vstore(mat[adr], vload(mat[adr]) * invD)


@kernel
def factor_lanes(m, L):
    """engine.factor.factor_m on the block L: qLD = L^T D L of qM, qLDiagInv = 1 / D."""
    for k in range(m.nM):
        vstore(L.qLD[k], vload(L.qM[k]))
    factor_i_lanes(m, L.qLD, L.qLDiagInv)


@kernel
def solve_lanes(m, qLD, diaginv, x):
    """engine.factor.solve_ld on one block: x (nv, 8) <- (L^T D L)^-1 x for the factor
    (qLD, diaginv).

    The per-row solve skips a dof whose value is exactly 0 in its first pass (adding
    nothing); here every lane adds its products, which is the same sum except for a zero
    product's sign: -0.0 + 0.0 = 0.0 where the skip would have kept -0.0. To keep the bits,
    each lane adds only where its value is non-zero."""
    for i in range(m.nv - 1, -1, -1):
        xi = vload(x[i])
        live = xi != 0.0
        adr0 = u(m.M_rowadr[i])
        for adr in range(adr0, adr0 + u(m.M_rownnz[i] - 1)):
            j = u(m.M_colind[adr])
            xj = vload(x[j])
            vstore(x[j], select(live, xj - vload(qLD[adr]) * xi, xj))
    for i in range(m.nv):
        vstore(x[i], vload(x[i]) * vload(diaginv[i]))
    for i in range(m.nv):
        adr0 = u(m.M_rowadr[i])
        s = splat(0.0)
        for adr in range(adr0, adr0 + u(m.M_rownnz[i] - 1)):
            s += vload(qLD[adr]) * vload(x[u(m.M_colind[adr])])
        vstore(x[i], vload(x[i]) - s)


# ---- stage 5: com_vel, stage 6: the bias force -----------------------------------------------


@kernel
def cross_motion_lanes(v, w):
    """spatial.cross_motion as a 6-tuple, summed as it sums (v x w, motion vectors)."""
    return (
        -v[2] * w[1] + v[1] * w[2],
        v[2] * w[0] - v[0] * w[2],
        -v[1] * w[0] + v[0] * w[1],
        (-v[2] * w[4] + v[1] * w[5]) + (-v[5] * w[1] + v[4] * w[2]),
        (v[2] * w[3] - v[0] * w[5]) + (v[5] * w[0] - v[3] * w[2]),
        (-v[1] * w[3] + v[0] * w[4]) + (-v[4] * w[0] + v[3] * w[1]),
    )


@kernel
def _add_dofs(v, cdof, qvel, first, n):
    """v + sum over dofs first..first+n-1 of cdof_k qvel_k, one dof after another."""
    for k in range(first, first + n):
        v = add_scl6(v, _load6(cdof[k]), vload(qvel[k]))
    return v


@kernel
def com_vel_lanes(m, L):
    """engine.com_vel.com_vel on the block L: cvel and cdof_dot."""
    z = splat(0.0)
    zero6 = (z, z, z, z, z, z)
    _store(L.cvel[0], zero6)
    for i in range(1, m.nbody):
        v = _load6(L.cvel[m.body_parentid[i]])
        bda = m.body_dofadr[i]
        j = 0
        while j < m.body_dofnum[i]:
            jtype = m.jnt_type[m.dof_jntid[bda + j]]
            if jtype == T.JNT_FREE:
                for t in range(3):
                    _store(L.cdof_dot[bda + j + t], zero6)
                v = _add_dofs(v, L.cdof, L.qvel, bda + j, 3)
                j += 3
                jtype = T.JNT_BALL
            if jtype == T.JNT_BALL:
                for t in range(3):
                    _store(L.cdof_dot[bda + j + t], cross_motion_lanes(v, _load6(L.cdof[bda + j + t])))
                v = _add_dofs(v, L.cdof, L.qvel, bda + j, 3)
                j += 3
            else:
                _store(L.cdof_dot[bda + j], cross_motion_lanes(v, _load6(L.cdof[bda + j])))
                v = _add_dofs(v, L.cdof, L.qvel, bda + j, 1)
                j += 1
        _store(L.cvel[i], v)


@kernel
def bias_lanes(m, L):
    """engine.rne.bias on the block L: qfrc_bias = c(q, v), RNE with zero acceleration
    (cacc, cfrc: its body accelerations and subtree forces)."""
    g = (0.0, 0.0, 0.0)
    if not (m.opt_disableflags & T.DSBL_GRAVITY):
        g = (-m.opt_gravity[0], -m.opt_gravity[1], -m.opt_gravity[2])
    _store(L.cacc[0], (splat(0.0), splat(0.0), splat(0.0), splat(g[0]), splat(g[1]), splat(g[2])))
    for i in range(1, m.nbody):
        a = _load6(L.cacc[m.body_parentid[i]])
        bda = m.body_dofadr[i]
        for j in range(bda, bda + m.body_dofnum[i]):
            a = add_scl6(a, _load6(L.cdof_dot[j]), vload(L.qvel[j]))
        _store(L.cacc[i], a)
        _store(L.cfrc[i], inertial_force(_load10(L.cinert[i]), a, _load6(L.cvel[i])))
    z = splat(0.0)
    _store(L.cfrc[0], (z, z, z, z, z, z))
    for i in range(m.nbody - 1, 0, -1):
        p = m.body_parentid[i]
        if p > 0:
            for k in range(6):
                vstore(L.cfrc[p, k], vload(L.cfrc[p, k]) + vload(L.cfrc[i, k]))
    for v in range(m.nv):
        vstore(L.qfrc_bias[v], dot6(_load6(L.cdof[v]), _load6(L.cfrc[m.dof_bodyid[v]])))


# ---- tendons and transmissions (fixed tendons, joint and tendon actuators) ----------------------


@kernel
def tendon_lanes(m, L):
    """engine.tendon.tendon for fixed tendons on the block L: ten_length = sum coef qpos,
    ten_J (the same in every lane, written as the per-row kernel writes it)."""
    z = splat(0.0)
    for t in range(m.ntendon):
        for v in range(m.nv):
            vstore(L.ten_J[t, v], z)
        length = z
        for w in range(m.tendon_adr[t], m.tendon_adr[t] + m.tendon_num[t]):
            j = m.wrap_objid[w]
            coef = m.wrap_prm[w]
            length = length + coef * vload(L.qpos[m.jnt_qposadr[j]])
            vstore(L.ten_J[t, m.jnt_dofadr[j]], vload(L.ten_J[t, m.jnt_dofadr[j]]) + coef)
        vstore(L.ten_length[t], length)


@kernel
def transmission_lanes(m, L):
    """engine.actuation.transmission for joint and tendon actuators on the block L."""
    z = splat(0.0)
    for a in range(m.nu):
        mom = L.actuator_moment[a]
        for i in range(m.nv):
            vstore(mom[i], z)
        tid = m.actuator_trnid[a, 0]
        g = m.actuator_gear[a, 0]
        if m.actuator_trntype[a] == T.TRN_JOINT:
            vstore(L.actuator_length[a], g * vload(L.qpos[m.jnt_qposadr[tid]]))
            vstore(mom[m.jnt_dofadr[tid]], splat(g))
        else:
            vstore(L.actuator_length[a], g * vload(L.ten_length[tid]))
            for i in range(m.nv):
                vstore(mom[i], g * vload(L.ten_J[tid, i]))


@kernel
def velocity_lanes(m, L):
    """engine.tendon.tendon_velocity (fixed tendons) and engine.actuation.actuator_velocity
    on the block L."""
    for t in range(m.ntendon):
        v = splat(0.0)
        for w in range(m.tendon_adr[t], m.tendon_adr[t] + m.tendon_num[t]):
            v = v + m.wrap_prm[w] * vload(L.qvel[m.jnt_dofadr[m.wrap_objid[w]]])
        vstore(L.ten_velocity[t], v)
    for a in range(m.nu):
        s = splat(0.0)
        if not (m.opt_disableflags & T.DSBL_ACTUATION):
            for i in range(m.nv):
                s = s + vload(L.actuator_moment[a, i]) * vload(L.qvel[i])
        vstore(L.actuator_velocity[a], s)


# ---- passive forces, actuation, acceleration ------------------------------------------------


@kernel
def passive_lanes(m, L):
    """engine.passive.passive on the block L: hinge and slide springs, dof damping (the
    model checks refuse what else the per-row kernel handles)."""
    z = splat(0.0)
    for i in range(m.nv):
        vstore(L.qfrc_spring[i], z)
        vstore(L.qfrc_damper[i], z)
        vstore(L.qfrc_fluid[i], z)
        vstore(L.qfrc_passive[i], z)
    if m.opt_disableflags & T.DSBL_SPRING and m.opt_disableflags & T.DSBL_DAMPER:
        return
    if not (m.opt_disableflags & T.DSBL_SPRING):
        for j in range(m.njnt):
            k = m.jnt_stiffness[j]
            if k != 0.0:
                pa = m.jnt_qposadr[j]
                vstore(L.qfrc_spring[m.jnt_dofadr[j]], -k * (vload(L.qpos[pa]) - m.qpos_spring[pa]))
    if not (m.opt_disableflags & T.DSBL_DAMPER):
        for i in range(m.nv):
            vstore(L.qfrc_damper[i], -m.dof_damping[i] * vload(L.qvel[i]))
    for i in range(m.nv):
        total = vload(L.qfrc_spring[i]) + vload(L.qfrc_damper[i]) + vload(L.qfrc_fluid[i])
        vstore(L.qfrc_passive[i], total)


@kernel
def _clamped_ctrl(m, L, a, clamp):
    """engine.actuation.clamped_ctrl per lane."""
    x = vload(L.ctrl[a])
    if clamp and m.actuator_ctrllimited[a]:
        lo = m.actuator_ctrlrange[a, 0]
        hi = m.actuator_ctrlrange[a, 1]
        x = select(x < lo, lo, select(x > hi, hi, x))
    return x


@kernel
def actuation_lanes(m, L):
    """engine.actuation.actuation for stateless actuators on the block L. A lane with a bad
    control (NaN, inf, beyond MAXVAL) takes every control as 0, as the per-row kernel does;
    the warning the per-row kernel records is not recorded here."""
    z = splat(0.0)
    for i in range(m.nv):
        vstore(L.qfrc_actuator[i], z)
    for a in range(m.nu):
        vstore(L.actuator_force[a], z)
    if m.nu == 0 or m.opt_disableflags & T.DSBL_ACTUATION:
        return
    clamp = not (m.opt_disableflags & T.DSBL_CLAMPCTRL)
    bad = z != z  # no lane
    for a in range(m.nu):
        x = _clamped_ctrl(m, L, a, clamp)
        bad = bad | (abs(x) > T.MAXVAL) | (x != x)  # warning.is_bad: not |x| <= MAXVAL
    for a in range(m.nu):
        length = vload(L.actuator_length[a])
        vel = vload(L.actuator_velocity[a])
        x = select(bad, 0.0, _clamped_ctrl(m, L, a, clamp))
        gp = m.actuator_gainprm[a]
        gain = splat(gp[0])
        if m.actuator_gaintype[a] == T.GAIN_AFFINE:
            gain = gp[0] + gp[1] * length + gp[2] * vel
        f = gain * x
        if m.actuator_biastype[a] == T.BIAS_AFFINE:
            bp = m.actuator_biasprm[a]
            f = f + (bp[0] + bp[1] * length + bp[2] * vel)
        if m.actuator_forcelimited[a]:
            lo = m.actuator_forcerange[a, 0]
            hi = m.actuator_forcerange[a, 1]
            f = select(lo > f, lo, f)  # numba's max(f, lo), then min(., hi)
            f = select(hi < f, hi, f)
        vstore(L.actuator_force[a], f)
    for a in range(m.nu):
        f = vload(L.actuator_force[a])
        for i in range(m.nv):
            vstore(L.qfrc_actuator[i], vload(L.qfrc_actuator[i]) + vload(L.actuator_moment[a, i]) * f)


@kernel
def acceleration_lanes(m, L):
    """engine.forward.fwd_acceleration without constraint rows on the block L:
    qfrc_smooth = passive - bias + applied + actuator, qacc = qacc_smooth = M^-1 qfrc_smooth
    (xfrc_applied is checked zero when the batch enters lanes)."""
    z = splat(0.0)
    for i in range(m.nv):
        f = vload(L.qfrc_passive[i]) - vload(L.qfrc_bias[i]) + vload(L.qfrc_applied[i])
        f = f + vload(L.qfrc_actuator[i])
        vstore(L.qfrc_smooth[i], f)
        vstore(L.qacc_smooth[i], f)
    solve_lanes(m, L.qLD, L.qLDiagInv, L.qacc_smooth)
    for i in range(m.nv):
        vstore(L.qfrc_constraint[i], z)
        vstore(L.qacc[i], vload(L.qacc_smooth[i]))


@kernel
def forward_lanes(m, L):
    """engine.forward.forward on the block L, for a model without constraint rows."""
    kinematics_lanes(m, L)
    com_pos_lanes(m, L)
    tendon_lanes(m, L)
    crb_lanes(m, L)
    factor_lanes(m, L)
    transmission_lanes(m, L)
    velocity_lanes(m, L)
    com_vel_lanes(m, L)
    passive_lanes(m, L)
    bias_lanes(m, L)
    actuation_lanes(m, L)
    acceleration_lanes(m, L)


# ---- integration ------------------------------------------------------------------------------


@kernel
def quat_integrate_lanes(q, vel, scale):
    """spatial.quat_integrate per lane: q (4, 8) <- normalize(q) * quat(vel / |vel|,
    scale |vel|) (vel (3, 8))."""
    v = _load3(vel)
    n = math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
    small = n < MINVAL
    axis = (select(small, 1.0, v[0] / n), select(small, 0.0, v[1] / n), select(small, 0.0, v[2] / n))
    _store(q, qmul(qnormalized_lanes(_load4(q)), qaxisangle_lanes(axis, scale * n)))


@kernel
def integrate_pos_lanes(m, qpos, qvel, h):
    """engine.integrate.integrate_pos on one block: qpos (nq, 8) <- qpos (+) h qvel."""
    for j in range(m.njnt):
        pa = m.jnt_qposadr[j]
        va = m.jnt_dofadr[j]
        jtype = m.jnt_type[j]
        if jtype == T.JNT_FREE:
            for k in range(3):
                vstore(qpos[pa + k], vload(qpos[pa + k]) + h * vload(qvel[va + k]))
            quat_integrate_lanes(qpos[pa + 3 :], qvel[va + 3 :], h)
        elif jtype == T.JNT_BALL:
            quat_integrate_lanes(qpos[pa:], qvel[va:], h)
        else:
            vstore(qpos[pa], vload(qpos[pa]) + h * vload(qvel[va]))


@kernel
def _dexpinv_lanes(w, dx, h):
    """engine.integrate._dexpinv per lane (w, dx: (3, 8)): both of its branches computed,
    each lane taking the one the per-row kernel takes."""
    t0 = h * vload(dx[0])
    t1 = h * vload(dx[1])
    t2 = h * vload(dx[2])
    tt = (t0 * t0 + t1 * t1) + t2 * t2
    wrap = tt > _PI_SQ
    t = np.sqrt(tt)
    s = (np.floor(t / _TWO_PI + 0.5) * -_TWO_PI + t) / t
    t0 = select(wrap, t0 * s, t0)
    t1 = select(wrap, t1 * s, t1)
    t2 = select(wrap, t2 * s, t2)
    tt = select(wrap, (t0 * t0 + t1 * t1) + t2 * t2, tt)
    c = _DEXPINV_POLY[0] * tt
    for k in range(1, 8):
        c = (c + _DEXPINV_POLY[k]) * tt
    c = c + _DEXPINV_POLY[8]
    x = 0.5 * np.sqrt(tt)
    c = select(tt < 3.0625, c, (1.0 - x / np.tan(x)) / tt)
    w0, w1, w2 = _load3(w)
    a0 = t1 * w2 - t2 * w1
    a1 = t2 * w0 - t0 * w2
    a2 = t0 * w1 - t1 * w0
    vstore(w[0], (w0 + 0.5 * a0) + c * (t1 * a2 - t2 * a1))
    vstore(w[1], (w1 + 0.5 * a1) + c * (t2 * a0 - t0 * a2))
    vstore(w[2], (w2 + 0.5 * a2) + c * (t0 * a1 - t1 * a0))


@kernel
def _rkmk_stage_lanes(m, v, dx, h):
    for j in range(m.njnt):
        jtype = m.jnt_type[j]
        va = m.jnt_dofadr[j]
        if jtype == T.JNT_FREE:
            _dexpinv_lanes(v[va + 3 :], dx[va + 3 :], h)
        elif jtype == T.JNT_BALL:
            _dexpinv_lanes(v[va:], dx[va:], h)


@kernel
def _copy(dst, src, n):
    for k in range(n):
        vstore(dst[k], vload(src[k]))


@kernel
def _advance_lanes(m, L, qacc, qvel_pos):
    """engine.integrate.advance without activations: qacc_warmstart = qacc, v += h qacc,
    q (+)= h qvel_pos, t += h."""
    h = m.opt_timestep
    _copy(L.qacc_warmstart, L.qacc, m.nv)
    for i in range(m.nv):
        vstore(L.qvel[i], vload(L.qvel[i]) + h * vload(qacc[i]))
    integrate_pos_lanes(m, L.qpos, qvel_pos, h)
    vstore(L.time, vload(L.time) + h)


@kernel
def euler_lanes(m, L):
    """engine.integrate.euler on the block L: semi-implicit Euler, implicit in the joint
    damping (M + h D factored in qH)."""
    if not _has_damping(m):
        _advance_lanes(m, L, L.qacc, L.qvel)
        return
    h = m.opt_timestep
    _copy(L.qH, L.qM, m.nM)
    for i in range(m.nv):
        adr = m.M_rowadr[i] + m.M_rownnz[i] - 1
        vstore(L.qH[adr], vload(L.qH[adr]) + h * m.dof_damping[i])
    factor_i_lanes(m, L.qH, L.qHDiagInv)
    acc = L.dx
    for i in range(m.nv):
        vstore(acc[i], vload(L.qfrc_smooth[i]) + vload(L.qfrc_constraint[i]))
    solve_lanes(m, L.qH, L.qHDiagInv, acc)
    _advance_lanes(m, L, acc, L.qvel)


@kernel
def rk4_lanes(m, L):
    """engine.integrate.rk4 on the block L (no activations): four forward passes, the
    Munthe-Kaas correction on ball and free joints."""
    h = m.opt_timestep
    X, V, F = L.rk_qpos, L.rk_qvel, L.rk_qacc
    dx, dv = L.dx, L.dv
    t0 = vload(L.time)
    _copy(X[0], L.qpos, m.nq)
    _copy(V[0], L.qvel, m.nv)
    _copy(F[0], L.qacc, m.nv)
    for i in range(1, 4):
        a = 1.0 if i == 3 else 0.5
        for k in range(m.nv):
            vstore(dx[k], a * vload(V[i - 1, k]))
            vstore(dv[k], a * vload(F[i - 1, k]))
        _copy(X[i], X[0], m.nq)
        integrate_pos_lanes(m, X[i], dx, h)
        for k in range(m.nv):
            vstore(V[i, k], vload(V[0, k]) + h * vload(dv[k]))
        _copy(L.qpos, X[i], m.nq)
        _copy(L.qvel, V[i], m.nv)
        _rkmk_stage_lanes(m, V[i], dx, h)
        vstore(L.time, t0 + a * h)
        forward_lanes(m, L)
        _copy(F[i], L.qacc, m.nv)
    w0, w1 = 1.0 / 6.0, 1.0 / 3.0
    for k in range(m.nv):
        vstore(dx[k], w0 * vload(V[0, k]) + w1 * vload(V[1, k]) + w1 * vload(V[2, k]) + w0 * vload(V[3, k]))
        vstore(dv[k], w0 * vload(F[0, k]) + w1 * vload(F[1, k]) + w1 * vload(F[2, k]) + w0 * vload(F[3, k]))
    vstore(L.time, t0)
    _copy(L.qpos, X[0], m.nq)
    _copy(L.qvel, V[0], m.nv)
    _advance_lanes(m, L, dv, dx)
    _copy(L.qacc, dv, m.nv)


@kernel
def _all_ok(x, n):
    """Every lane of x[0..n-1] finite and within MAXVAL (warning.is_bad of none)."""
    for k in range(n):
        if not all_lanes(abs(vload(x[k])) <= T.MAXVAL):
            return False
    return True


@kernel
def step_lanes(m, L, nstep):
    """nstep steps of the block L: the state check, forward, the acceleration check, the
    model's integrator (Euler or RK4). Returns 0, or the 1-based index of the step at which
    some lane's qpos or qvel (before it) or qacc (after its forward pass) was bad: the
    block stops there (the per-row engine stops, or resets, that row alone)."""
    for k in range(nstep):
        if not (_all_ok(L.qpos, m.nq) and _all_ok(L.qvel, m.nv)):
            return k + 1
        forward_lanes(m, L)
        if not _all_ok(L.qacc, m.nv):
            return k + 1
        if m.opt_integrator == T.INT_RK4:
            rk4_lanes(m, L)
        else:
            euler_lanes(m, L)
    return 0


# ---- the batch in lanes ------------------------------------------------------------------------

# the Data fields the stages above read and write, with the per-row kernel's names, and
# their work arrays (WORK: RNE's body accelerations and subtree forces, which the per-row
# kernel keeps in Data.scratch_body; the integrators' two nv-vectors, in Data.scratch_v)
FIELDS = (
    "qpos", "qvel", "ctrl", "qfrc_applied", "time",
    "xpos", "xquat", "xmat", "xipos", "ximat", "xanchor", "xaxis",
    "geom_xpos", "geom_xmat", "site_xpos", "site_xmat",
    "subtree_com", "cinert", "cdof", "crb", "qM", "qLD", "qLDiagInv",
    "ten_length", "ten_J", "ten_velocity",
    "actuator_length", "actuator_moment", "actuator_velocity", "actuator_force",
    "cvel", "cdof_dot", "qfrc_bias",
    "qfrc_spring", "qfrc_damper", "qfrc_fluid", "qfrc_passive", "qfrc_actuator",
    "qfrc_smooth", "qacc_smooth", "qfrc_constraint", "qacc", "qacc_warmstart",
    "qH", "qHDiagInv", "rk_qpos", "rk_qvel", "rk_qacc",
    "cacc", "cfrc", "dx", "dv",
)  # fmt: skip
WORK = ("cacc", "cfrc", "dx", "dv")


def to_lanes(x: np.ndarray) -> np.ndarray:
    """A (B, ...) field as (B / 8, ..., 8): row 8 k + l at [k, ..., l]."""
    B = x.shape[0]
    if B % LANES:
        raise InvalidArgumentError(f"the batch size must be a multiple of {LANES} for lanes, got {B}")
    blocks = x.reshape(B // LANES, LANES, *x.shape[1:])
    return np.ascontiguousarray(np.moveaxis(blocks, 1, -1))


def from_lanes(x: np.ndarray) -> np.ndarray:
    """The inverse of to_lanes: (B / 8, ..., 8) back to (B, ...)."""
    rows = np.moveaxis(x, -1, 1)
    return np.ascontiguousarray(rows.reshape(x.shape[0] * LANES, *x.shape[1:-1]))


def unsupported(model, whole_step: bool = True) -> list[str]:
    """What in `model` (an engine Model) the lanes do not handle: empty if they run the
    whole step (whole_step), or the six stages kinematics ... bias (not whole_step)."""
    flags = int(model.opt_disableflags)
    why = []
    if int(np.max(np.asarray(model.body_mocapid), initial=-1)) >= 0:
        why.append("mocap bodies (body_mocapid >= 0)")
    if not whole_step:
        return why
    if not flags & (T.DSBL_CONSTRAINT | T.DSBL_CONTACT) and model.cpair_geom.shape[0] > 0:
        why.append("contacts (geom pairs that can collide)")
    if model.nefcmax > 0:
        why.append("constraint rows (contacts, joint or tendon limits, equalities, friction loss)")
    if model.nsensor > 0 and not flags & T.DSBL_SENSOR:
        why.append("sensors")
    if model.ntendon and (np.asarray(model.wrap_type)[np.asarray(model.tendon_adr)] == T.WRAP_SITE).any():
        why.append("spatial tendons")
    if np.any(np.asarray(model.tendon_stiffness) != 0) or np.any(np.asarray(model.tendon_damping) != 0):
        why.append("tendon stiffness or damping")
    if model.na > 0:
        why.append("actuator activations (dyntype)")
    if np.isin(np.asarray(model.actuator_trntype), (T.TRN_JOINT, T.TRN_TENDON), invert=True).any():
        why.append("site or other actuator transmissions (only joint and tendon)")
    rotating = np.isin(np.asarray(model.jnt_type), (T.JNT_FREE, T.JNT_BALL))
    if np.any(np.asarray(model.jnt_stiffness)[rotating] != 0):
        why.append("springs on ball or free joints")
    if model.opt_density > 0 or model.opt_viscosity > 0:
        why.append("fluid forces (density, viscosity)")
    if model.opt_integrator not in (T.INT_EULER, T.INT_RK4):
        why.append("the implicit integrators (only Euler and RK4)")
    return why


def check_model(model, whole_step: bool = True) -> None:
    """Raise ValueError naming what in `model` the lanes do not handle (unsupported)."""
    why = unsupported(model, whole_step)
    if why:
        raise UnsupportedModelError("lanes do not support " + "; ".join(why))


# a batch's fields in lanes (each (B / 8, ..., 8)), and one block of it (each (..., 8))
Lanes = namedtuple("Lanes", FIELDS)


@kernel
def block(A, k):
    """Block k of the batch A (a Lanes of whole-batch arrays): every field's [k] view."""
    return Lanes(
        A.qpos[k], A.qvel[k], A.ctrl[k], A.qfrc_applied[k], A.time[k],
        A.xpos[k], A.xquat[k], A.xmat[k], A.xipos[k], A.ximat[k], A.xanchor[k], A.xaxis[k],
        A.geom_xpos[k], A.geom_xmat[k], A.site_xpos[k], A.site_xmat[k],
        A.subtree_com[k], A.cinert[k], A.cdof[k], A.crb[k], A.qM[k], A.qLD[k], A.qLDiagInv[k],
        A.ten_length[k], A.ten_J[k], A.ten_velocity[k],
        A.actuator_length[k], A.actuator_moment[k], A.actuator_velocity[k], A.actuator_force[k],
        A.cvel[k], A.cdof_dot[k], A.qfrc_bias[k],
        A.qfrc_spring[k], A.qfrc_damper[k], A.qfrc_fluid[k], A.qfrc_passive[k], A.qfrc_actuator[k],
        A.qfrc_smooth[k], A.qacc_smooth[k], A.qfrc_constraint[k], A.qacc[k], A.qacc_warmstart[k],
        A.qH[k], A.qHDiagInv[k], A.rk_qpos[k], A.rk_qvel[k], A.rk_qacc[k],
        A.cacc[k], A.cfrc[k], A.dx[k], A.dv[k],
    )  # fmt: skip


# the stages `run` takes, in pipeline order (forward: all of them, and the rest of the pass)
STAGES = ("kinematics", "com_pos", "crb", "factor", "com_vel", "bias", "forward")


@kernel
def _stage(m, L, stage):
    if stage == 0:
        kinematics_lanes(m, L)
    elif stage == 1:
        com_pos_lanes(m, L)
    elif stage == 2:
        crb_lanes(m, L)
    elif stage == 3:
        factor_lanes(m, L)
    elif stage == 4:
        com_vel_lanes(m, L)
    elif stage == 5:
        bias_lanes(m, L)
    elif stage == 6:
        forward_lanes(m, L)


@entry
def run(model_address, A, first, last, reps):
    """Stages first..last (indices of STAGES) on every block of A, `reps` times over (the
    Model record at model_address, shared by every row)."""
    m = model_at(model_address)
    for _ in range(reps):
        for k in range(A.qpos.shape[0]):
            L = block(A, k)
            for stage in range(first, last + 1):
                _stage(m, L, stage)


@outline
def step_block(model_address, A, k, nstep):
    """step_lanes on block k of A: 0, or the 1-based step at which it stopped."""
    return step_lanes(model_at(model_address), block(A, k), nstep)


@entry
def step(model_address, A, nstep, status):
    """nstep steps of every block of A; status[k] (int64, one per block) <- step_lanes's
    result for block k."""
    for k in range(A.qpos.shape[0]):
        status[k] = step_block(model_address, A, k, nstep)


@parallel_entry
def step_parallel(model_address, A, nstep, status):
    """step on numba's threads, the blocks split between them."""
    for k in prange(A.qpos.shape[0]):
        status[k] = step_block(model_address, A, k, nstep)


def from_simulator(sim, whole_step: bool = True) -> Lanes:
    """The FIELDS of a Simulator's batch, copied into lanes (B a multiple of 8), for `step`
    (whole_step) or for the six stages kinematics ... bias alone (`run` of stages 0..5).
    Every row must use the simulator's base model (no per-row physics)."""
    bound = sim._bound
    if np.any(bound.model_table != bound.model_address):
        raise InvalidArgumentError("lanes: every row must share one model (no per-row physics)")
    check_model(sim.model, whole_step)
    data = sim.data
    if np.any(np.asarray(data.xfrc_applied) != 0):
        raise InvalidArgumentError("lanes do not support xfrc_applied (it must be zero)")
    B, nbody, nv = sim.batch, sim.model.nbody, sim.model.nv
    work = {"cacc": (B, nbody, 6), "cfrc": (B, nbody, 6), "dx": (B, nv), "dv": (B, nv)}

    def field(name):
        return to_lanes(np.zeros(work[name]) if name in WORK else np.asarray(getattr(data, name)))

    return Lanes(*(field(f) for f in FIELDS))
