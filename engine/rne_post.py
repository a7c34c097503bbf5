"""Stage 13a, rne_post: body accelerations and joint forces after qacc is known.

MuJoCo's mj_rnePostConstraint, which the acceleration-stage sensors (accelerometer) read.
All spatial vectors are com-based (rot:lin about the subtree_com of the body's tree root,
world-oriented), like cvel. The world accelerates upward, so gravity appears in cacc:

    cacc_0     = (0, -g)                                   (0 if gravity is disabled)
    cacc_i     = cacc_parent + sum_k cdof_dot_k qvel_k + sum_k cdof_k qacc_k
    cfrc_ext_i = xfrc_applied_i, contact and connect/weld forces on body i, moved from their
                 points to the root's subtree_com
    cfrc_int_i = cinert_i cacc_i + cvel_i x* (cinert_i cvel_i) - cfrc_ext_i
                 + sum over the children of i of cfrc_int_child

cfrc_int_i is the force body i's parent exerts on the subtree of i. Unlike RNE's
backward pass the world row is accumulated too: cfrc_int_0 is the sum over the roots.
"""

from robodyn.engine import types as T
from robodyn.engine.constraint import contact_force, eq_anchors, weld_quats
from robodyn.engine.jit import kernel
from robodyn.engine.spatial import cross3, inertial_force, mtv3, qmul, qmul_axis, sub3


@kernel
def _add_ext(m, d, b, body, point, t0, t1, t2, f0, f1, f2, sign):
    """cfrc_ext[body] += sign * (torque:force at `point`, world) moved to the root's subtree_com.

    torque' = torque - (subtree_com_root - point) x force (MuJoCo's mju_transformSpatial).
    """
    c = cross3(sub3(d.subtree_com[b, m.body_rootid[body]], point), (f0, f1, f2))
    e = d.cfrc_ext[b, body]
    e[0] += sign * (t0 - c[0])
    e[1] += sign * (t1 - c[1])
    e[2] += sign * (t2 - c[2])
    e[3] += sign * f0
    e[4] += sign * f1
    e[5] += sign * f2


@kernel
def _cfrc_ext(m, d, b):
    """cfrc_ext of row b: xfrc_applied (force:torque at xipos), contact forces (+ on the
    body of geom 2, - on geom 1, at the contact point) and the forces of connect and weld
    equalities (+ on body 1, - on body 2, at their anchors), as com-based torque:force.

    A weld's torque is what its three rotation rows exert: with the rows' Jacobian
    0.5 ts E jr (E w = (q2^-1 * (0, w) * q)_xyz, ts the torquescale), the torque is
    0.5 ts E^T f_rot. (MuJoCo's C source applies f_rot itself; its 4.0.0 binary, our
    oracle, applies this torque.)
    """
    ext = d.cfrc_ext[b]
    for i in range(m.nbody):
        for k in range(6):
            ext[i, k] = 0.0
    for i in range(1, m.nbody):
        x = d.xfrc_applied[b, i]
        if x[0] == 0 and x[1] == 0 and x[2] == 0 and x[3] == 0 and x[4] == 0 and x[5] == 0:
            continue
        _add_ext(m, d, b, i, d.xipos[b, i], x[3], x[4], x[5], x[0], x[1], x[2], 1.0)
    lfrc = d.scratch_body[b, 2, 0]  # 6 numbers: contact force in the contact frame
    for c in range(d.ncon[b]):
        if d.contact_efc_address[b, c] < 0:
            continue
        contact_force(m, d, b, c, lfrc)
        fr = d.contact_frame[b, c]
        f = mtv3(fr, lfrc[0:3])  # world force
        t = mtv3(fr, lfrc[3:6])  # world torque
        p = d.contact_pos[b, c]
        for side in range(2):
            body = m.geom_bodyid[d.contact_geom[b, c, side]]
            if body:
                sign = 1.0 if side else -1.0
                _add_ext(m, d, b, body, p, t[0], t[1], t[2], f[0], f[1], f[2], sign)
    i = 0
    while i < d.ne[b]:
        eq = d.efc_id[b, i]
        etype = m.eq_type[eq]
        if etype != T.EQ_CONNECT and etype != T.EQ_WELD:
            i += 1
            continue
        p1, p2, body1, body2 = eq_anchors(m, d, b, eq)
        f0, f1, f2 = d.efc_force[b, i], d.efc_force[b, i + 1], d.efc_force[b, i + 2]
        t0 = t1 = t2 = 0.0
        if etype == T.EQ_WELD:
            q, q2inv = weld_quats(m, d, b, eq, body1, body2)
            scl = 0.5 * m.eq_data[eq, 10]
            fr = d.efc_force[b, i + 3 : i + 6]
            # column j of E: (q2^-1 * (0, e_j) * q)_xyz;  t = 0.5 ts E^T f_rot
            e = qmul(qmul_axis(q2inv, 1.0, 0.0, 0.0), q)
            t0 = scl * (e[1] * fr[0] + e[2] * fr[1] + e[3] * fr[2])
            e = qmul(qmul_axis(q2inv, 0.0, 1.0, 0.0), q)
            t1 = scl * (e[1] * fr[0] + e[2] * fr[1] + e[3] * fr[2])
            e = qmul(qmul_axis(q2inv, 0.0, 0.0, 1.0), q)
            t2 = scl * (e[1] * fr[0] + e[2] * fr[1] + e[3] * fr[2])
        if body1:
            _add_ext(m, d, b, body1, p1, t0, t1, t2, f0, f1, f2, 1.0)
        if body2:
            _add_ext(m, d, b, body2, p2, t0, t1, t2, f0, f1, f2, -1.0)
        i += 6 if etype == T.EQ_WELD else 3


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
        h = inertial_force(d.cinert[b, j], a, d.cvel[b, j])
        for k in range(6):
            f[k] = h[k] - d.cfrc_ext[b, j, k]

    for j in range(m.nbody - 1, 0, -1):
        p = m.body_parentid[j]
        for k in range(6):
            cint[p, k] += cint[j, k]
