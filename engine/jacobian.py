"""Jacobians: how a point or a body frame moves per unit of each dof, and J^T f.

For a point p on body b, with c the centre of mass of b's tree, every dof k on b's
ancestor chain contributes column k:

    jacr[:, k] = cdof_k[0:3],     jacp[:, k] = cdof_k[3:6] + cdof_k[0:3] x (p - c)

(cdof is com-based; the cross product moves its linear part from c to p). Dofs off the
chain give zero columns. J^T f maps a world force f at p (and torque t) to joint forces:
qfrc += jacp^T f + jacr^T t.
"""

from engine.jit import kernel


@kernel
def _point_column(cdof_i, o0, o1, o2):
    """Translation of a point at offset o from the com reference per unit of one dof:
    cdof_lin + cdof_rot x o, as a 3-tuple."""
    w0, w1, w2 = cdof_i[0], cdof_i[1], cdof_i[2]
    return (cdof_i[3] + w1 * o2 - w2 * o1, cdof_i[4] + w2 * o0 - w0 * o2, cdof_i[5] + w0 * o1 - w1 * o0)


@kernel
def jac(m, d, b, point, body, jacp, jacr):
    """jacp, jacr (3, nv): point and rotation Jacobians of `point` (world) on `body`, row b."""
    nv = m.nv
    for r in range(3):
        for k in range(nv):
            jacp[r, k] = 0.0
            jacr[r, k] = 0.0
    c = d.subtree_com[b, m.body_rootid[body]]
    o0 = point[0] - c[0]
    o1 = point[1] - c[1]
    o2 = point[2] - c[2]
    wb = m.body_weldid[body]
    if m.body_dofnum[wb] == 0:
        return
    i = m.body_dofadr[wb] + m.body_dofnum[wb] - 1
    cdof = d.cdof[b]
    while i >= 0:
        p = _point_column(cdof[i], o0, o1, o2)
        for r in range(3):
            jacr[r, i] = cdof[i, r]
            jacp[r, i] = p[r]
        i = m.dof_parentid[i]


@kernel
def apply_ft(m, d, b, force, torque, point, body, qfrc):
    """qfrc += J^T (force, torque) for a world force and torque applied at `point` on `body`.

    Walks only the ancestor chain, so the cost is the chain length (MuJoCo's mj_applyFT).
    """
    c = d.subtree_com[b, m.body_rootid[body]]
    o0 = point[0] - c[0]
    o1 = point[1] - c[1]
    o2 = point[2] - c[2]
    wb = m.body_weldid[body]
    if m.body_dofnum[wb] == 0:
        return
    i = m.body_dofadr[wb] + m.body_dofnum[wb] - 1
    cdof = d.cdof[b]
    while i >= 0:
        p = _point_column(cdof[i], o0, o1, o2)
        qfrc[i] += p[0] * force[0] + p[1] * force[1] + p[2] * force[2]
        qfrc[i] += cdof[i, 0] * torque[0] + cdof[i, 1] * torque[1] + cdof[i, 2] * torque[2]
        i = m.dof_parentid[i]
