"""Jacobians: how a point or a body frame moves per unit of each dof, and J^T f.

For a point p on body b, with c the centre of mass of b's tree, every dof k on b's
ancestor chain contributes column k:

    jacr[:, k] = cdof_k[0:3],     jacp[:, k] = cdof_k[3:6] + cdof_k[0:3] x (p - c)

(cdof is com-based; the cross product moves its linear part from c to p). Dofs off the
chain give zero columns. J^T f maps a world force f at p (and torque t) to joint forces:
qfrc += jacp^T f + jacr^T t.
"""

from robodyn.engine import types as T
from robodyn.engine.jit import kernel


@kernel
def _point_column(cdof_i, o0, o1, o2):
    """Translation of a point at offset o from the com reference per unit of one dof:
    cdof_lin + cdof_rot x o, as a 3-tuple."""
    w0, w1, w2 = cdof_i[0], cdof_i[1], cdof_i[2]
    return (cdof_i[3] + w1 * o2 - w2 * o1, cdof_i[4] + w2 * o0 - w0 * o2, cdof_i[5] + w0 * o1 - w1 * o0)


@kernel
def last_dof(m, body):
    """The last dof of `body`'s weld root, -1 if no dof moves the body: the walk
    i -> dof_parentid[i] while i >= 0 from it visits every dof that moves the body, from the
    body towards the root (the chain MuJoCo's mj_jac and mj_applyFT walk)."""
    wb = m.body_weldid[body]
    return m.body_dofadr[wb] + m.body_dofnum[wb] - 1 if m.body_dofnum[wb] else -1


@kernel
def chain_start(m, d, b, point, body):
    """(o, i) for `point` (world) on `body`, row b: o = point - c, the point's offset from
    the centre of mass c of the body's tree (the reference cdof is taken about), as a
    3-tuple, and i = last_dof(m, body), where the walk over the body's dofs starts."""
    c = d.subtree_com[b, m.body_rootid[body]]
    return (point[0] - c[0], point[1] - c[1], point[2] - c[2]), last_dof(m, body)


@kernel
def jac(m, d, b, point, body, jacp, jacr):
    """jacp, jacr (3, nv): point and rotation Jacobians of `point` (world) on `body`, row b."""
    nv = m.nv
    for r in range(3):
        for k in range(nv):
            jacp[r, k] = 0.0
            jacr[r, k] = 0.0
    (o0, o1, o2), i = chain_start(m, d, b, point, body)
    cdof = d.cdof[b]
    while i >= 0:
        p = _point_column(cdof[i], o0, o1, o2)
        for r in range(3):
            jacr[r, i] = cdof[i, r]
            jacp[r, i] = p[r]
        i = m.dof_parentid[i]


@kernel
def jac_dif_pair(m, d, b, p1, body1, p2, body2, skipcommon, chain, jacp, jacr):
    """Compact Jacobian difference J(body2, p2) - J(body1, p1) (MuJoCo's sparse
    mj_jacDifPair); returns NV, the number of columns.

    chain[:NV] <- the dofs that move body1 or body2 (their weld roots' dof chains merged,
    ascending, as mj_mergeChain); with `skipcommon`, the chains' common ancestors are left
    out (for p1 = p2 their columns cancel exactly). jacp[:, :NV], jacr[:, :NV] (3 rows
    each) <- the point and rotation columns at those dofs, each the difference of the two
    bodies' columns with 0 for a body the dof does not move (the dense arithmetic).
    """
    (o10, o11, o12), da1 = chain_start(m, d, b, p1, body1)
    (o20, o21, o22), da2 = chain_start(m, d, b, p2, body2)
    cdof = d.cdof[b]
    n = 0
    # walk both chains from their last dofs down (descending), then reverse
    while da1 >= 0 or da2 >= 0:
        da = max(da1, da2)
        if skipcommon and da1 == da and da2 == da:
            break
        x = (0.0, 0.0, 0.0)
        y = (0.0, 0.0, 0.0)
        rx = (0.0, 0.0, 0.0)
        ry = (0.0, 0.0, 0.0)
        if da2 == da:
            x = _point_column(cdof[da], o20, o21, o22)
            rx = (cdof[da, 0], cdof[da, 1], cdof[da, 2])
            da2 = m.dof_parentid[da2]
        if da1 == da:
            y = _point_column(cdof[da], o10, o11, o12)
            ry = (cdof[da, 0], cdof[da, 1], cdof[da, 2])
            da1 = m.dof_parentid[da1]
        chain[n] = da
        for r in range(3):
            jacp[r, n] = x[r] - y[r]
            jacr[r, n] = rx[r] - ry[r]
        n += 1
    for i in range(n // 2):
        k = n - 1 - i
        chain[i], chain[k] = chain[k], chain[i]
        for r in range(3):
            jacp[r, i], jacp[r, k] = jacp[r, k], jacp[r, i]
            jacr[r, i], jacr[r, k] = jacr[r, k], jacr[r, i]
    return n


@kernel
def apply_ft(m, d, b, force, torque, point, body, qfrc):
    """qfrc += J^T (force, torque) for a world force and torque applied at `point` on `body`.

    Walks only the ancestor chain, so the cost is the chain length (MuJoCo's mj_applyFT).
    """
    (o0, o1, o2), i = chain_start(m, d, b, point, body)
    cdof = d.cdof[b]
    while i >= 0:
        p = _point_column(cdof[i], o0, o1, o2)
        qfrc[i] += p[0] * force[0] + p[1] * force[1] + p[2] * force[2]
        qfrc[i] += cdof[i, 0] * torque[0] + cdof[i, 1] * torque[1] + cdof[i, 2] * torque[2]
        i = m.dof_parentid[i]


@kernel
def apply_ft_chain(m, d, b, force, torque, point, body, stop, sign, qfrc):
    """qfrc[k] += sign (jacp[:, k] . force + jacr[:, k] . torque) for the dofs k on `body`'s
    ancestor chain below dof `stop`: the chain is walked from the body up and ends before
    `stop` (-1: the whole chain, as apply_ft). `stop` must be on the chain or -1.

    How a site transmission with a reference site leaves out the dofs the two sites share
    (MuJoCo clears those columns of the relative Jacobian).
    """
    (o0, o1, o2), i = chain_start(m, d, b, point, body)
    cdof = d.cdof[b]
    while i >= 0 and i != stop:
        p = _point_column(cdof[i], o0, o1, o2)
        s = p[0] * force[0] + p[1] * force[1] + p[2] * force[2]
        s += cdof[i, 0] * torque[0] + cdof[i, 1] * torque[1] + cdof[i, 2] * torque[2]
        qfrc[i] += sign * s
        i = m.dof_parentid[i]


@kernel
def jac_dot_vel(m, d, b, point, body):
    """(d/dt J_p) qvel and (d/dt J_r) qvel at `point` (world) on `body`, two 3-tuples.

    The time derivative of the point and rotation Jacobians (MuJoCo's mj_jacDot), applied
    to qvel. With o = point - c and v_p the velocity of the point, column k is
        jacr_dot[:, k] = cdof_dot_k[0:3]
        jacp_dot[:, k] = cdof_dot_k[3:6] + cdof_dot_k[0:3] x o + cdof_k[0:3] x v_p
    where, for the rotational dofs of ball and free joints (whose cdof is fixed in the
    body), cdof_dot_k = cvel_body x cdof_k (motion cross product) as MuJoCo takes it.
    """
    (o0, o1, o2), i = chain_start(m, d, b, point, body)
    w = d.cvel[b, body]
    # point velocity: lin - (point - c) x ang
    v0 = w[3] - (o1 * w[2] - o2 * w[1])
    v1 = w[4] - (o2 * w[0] - o0 * w[2])
    v2 = w[5] - (o0 * w[1] - o1 * w[0])
    p0 = p1 = p2 = r0 = r1 = r2 = 0.0
    cdof = d.cdof[b]
    while i >= 0:
        cd = cdof[i]
        a0, a1, a2 = d.cdof_dot[b, i, 0], d.cdof_dot[b, i, 1], d.cdof_dot[b, i, 2]
        l0, l1, l2 = d.cdof_dot[b, i, 3], d.cdof_dot[b, i, 4], d.cdof_dot[b, i, 5]
        j = m.dof_jntid[i]
        jtype = m.jnt_type[j]
        if jtype == T.JNT_BALL or (jtype == T.JNT_FREE and i >= m.jnt_dofadr[j] + 3):
            u = d.cvel[b, m.dof_bodyid[i]]
            a0 = u[1] * cd[2] - u[2] * cd[1]
            a1 = u[2] * cd[0] - u[0] * cd[2]
            a2 = u[0] * cd[1] - u[1] * cd[0]
            l0 = u[1] * cd[5] - u[2] * cd[4] + u[4] * cd[2] - u[5] * cd[1]
            l1 = u[2] * cd[3] - u[0] * cd[5] + u[5] * cd[0] - u[3] * cd[2]
            l2 = u[0] * cd[4] - u[1] * cd[3] + u[3] * cd[1] - u[4] * cd[0]
        q = d.qvel[b, i]
        r0 += a0 * q
        r1 += a1 * q
        r2 += a2 * q
        p0 += (l0 + (a1 * o2 - a2 * o1) + (cd[1] * v2 - cd[2] * v1)) * q
        p1 += (l1 + (a2 * o0 - a0 * o2) + (cd[2] * v0 - cd[0] * v2)) * q
        p2 += (l2 + (a0 * o1 - a1 * o0) + (cd[0] * v1 - cd[1] * v0)) * q
        i = m.dof_parentid[i]
    return (p0, p1, p2), (r0, r1, r2)
