"""Stage 13a, rne_post: body accelerations and joint forces after qacc is known.

MuJoCo's mj_rnePostConstraint, which the acceleration-stage sensors (accelerometer) read.
All spatial vectors are com-based (rot:lin about the subtree_com of the body's tree root,
world-oriented), like cvel. The world accelerates upward, so gravity appears in cacc:

    cacc_0     = (0, -g)                                   (0 if gravity is disabled)
    cacc_i     = cacc_parent + sum_k cdof_dot_k qvel_k + sum_k cdof_k qacc_k
    cfrc_ext_i = xfrc_applied_i moved from xipos_i to the root's subtree_com (no contacts)
    cfrc_int_i = cinert_i cacc_i + cvel_i x* (cinert_i cvel_i) - cfrc_ext_i
                 + sum over the children of i of cfrc_int_child

cfrc_int_i is the force body i's parent exerts on the subtree of i. Unlike RNE's
backward pass the world row is accumulated too: cfrc_int_0 is the sum over the roots.
"""

from engine import types as T
from engine.jit import kernel
from engine.spatial import cross_force, mul_inert_vec


@kernel
def _cfrc_ext(m, d, b):
    """cfrc_ext of row b: xfrc_applied (force:torque at xipos) as a com-based torque:force.

    torque' = torque - (subtree_com_root - xipos) x force. No contacts or equality
    constraints exist yet, so nothing else acts on a body from outside.
    """
    ext = d.cfrc_ext[b]
    for k in range(6):
        ext[0, k] = 0.0
    for i in range(1, m.nbody):
        x = d.xfrc_applied[b, i]
        e = ext[i]
        for k in range(6):
            e[k] = 0.0
        if x[0] == 0 and x[1] == 0 and x[2] == 0 and x[3] == 0 and x[4] == 0 and x[5] == 0:
            continue
        com = d.subtree_com[b, m.body_rootid[i]]
        p = d.xipos[b, i]
        d0, d1, d2 = com[0] - p[0], com[1] - p[1], com[2] - p[2]
        e[0] = x[3] - (d1 * x[2] - d2 * x[1])
        e[1] = x[4] - (d2 * x[0] - d0 * x[2])
        e[2] = x[5] - (d0 * x[1] - d1 * x[0])
        e[3] = x[0]
        e[4] = x[1]
        e[5] = x[2]


@kernel
def rne_post_constraint(m, d, b):
    """cacc, cfrc_ext and cfrc_int of row b from qvel and qacc (MuJoCo's mj_rnePostConstraint).

    Needs the position and velocity stages (cinert, cdof, cvel, cdof_dot) and qacc.
    """
    cacc = d.cacc[b]
    cint = d.cfrc_int[b]
    cdof = d.cdof[b]
    cdof_dot = d.cdof_dot[b]
    qvel = d.qvel[b]
    qacc = d.qacc[b]
    tmp = d.scratch_body[b, 0, 0]  # 6 numbers: cinert cvel
    tmp1 = d.scratch_body[b, 1, 0]  # 6 numbers: cvel x* (cinert cvel)
    for k in range(6):
        cacc[0, k] = 0.0
    if not (m.opt_disableflags & T.DSBL_GRAVITY):
        for k in range(3):
            cacc[0, 3 + k] = -m.opt_gravity[k]
    _cfrc_ext(m, d, b)

    for k in range(6):
        cint[0, k] = 0.0
    for j in range(1, m.nbody):
        p = m.body_parentid[j]
        bda = m.body_dofadr[j]
        n = m.body_dofnum[j]
        a = cacc[j]
        # cacc_j = cacc_parent + (cdof_dot qvel), then += (cdof qacc): sums formed first
        for k in range(6):
            s = 0.0
            for v in range(bda, bda + n):
                s += cdof_dot[v, k] * qvel[v]
            a[k] = cacc[p, k] + s
        for k in range(6):
            s = 0.0
            for v in range(bda, bda + n):
                s += cdof[v, k] * qacc[v]
            a[k] += s
        # cfrc_int_j = cinert cacc + cvel x* (cinert cvel) - cfrc_ext
        f = cint[j]
        mul_inert_vec(f, d.cinert[b, j], a)
        mul_inert_vec(tmp, d.cinert[b, j], d.cvel[b, j])
        cross_force(tmp1, d.cvel[b, j], tmp)
        for k in range(6):
            f[k] += tmp1[k]
            f[k] -= d.cfrc_ext[b, j, k]

    for j in range(m.nbody - 1, 0, -1):
        p = m.body_parentid[j]
        for k in range(6):
            cint[p, k] += cint[j, k]
