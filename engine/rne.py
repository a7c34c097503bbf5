"""Stage 6, rne: recursive Newton-Euler, M(q) qacc + c(q, v) in one outward and one inward pass.

Gravity enters as an upward acceleration of the world:  cacc_0 = (0, -g).  Outward:

    cacc_i = cacc_parent + sum_k (cdof_dot_k qvel_k + cdof_k qacc_k)
    f_i    = cinert_i cacc_i + cvel_i x* (cinert_i cvel_i)

Inward, each body's force is added to its parent's, and dof k feels  tau_k = cdof_k . f_{b(k)}.
With qacc = 0 (flg_acc False) the result is the bias force c = C(q, v) v + g(q), which is
MuJoCo's qfrc_bias; with qacc it is M qacc + c (Featherstone, RBDA ch. 5).
"""

from robodyn.engine import types as T
from robodyn.engine.jit import kernel
from robodyn.engine.spatial import add_scl6, dot6, inertial_force, put


@kernel
def rne(m, d, b, flg_acc, qacc, result, cacc, cfrc):
    """result (nv) = M qacc + c if flg_acc else c, for row b (MuJoCo's mj_rne).

    cacc, cfrc: (nbody, 6) work arrays, left holding body accelerations and the forces
    each subtree exerts on its parent.
    """
    rne_at(m, d, b, d.qvel[b], d.cvel[b], d.cdof_dot[b], True, flg_acc, qacc, result, cacc, cfrc)


@kernel
def rne_at(m, d, b, qvel, cvel, cdof_dot, flg_grav, flg_acc, qacc, result, cacc, cfrc):
    """RNE at row b's configuration for a given velocity state (qvel, cvel, cdof_dot).

    flg_grav False drops gravity, leaving the part of c that is quadratic in qvel.
    """
    cinert = d.cinert[b]
    cdof = d.cdof[b]
    for k in range(6):
        cacc[0, k] = 0.0
    if flg_grav and not (m.opt_disableflags & T.DSBL_GRAVITY):
        for k in range(3):
            cacc[0, 3 + k] = -m.opt_gravity[k]
    for i in range(1, m.nbody):
        p = m.body_parentid[i]
        ap = cacc[p]
        a = (ap[0], ap[1], ap[2], ap[3], ap[4], ap[5])
        bda = m.body_dofadr[i]
        for j in range(bda, bda + m.body_dofnum[i]):
            a = add_scl6(a, cdof_dot[j], qvel[j])
            if flg_acc:
                a = add_scl6(a, cdof[j], qacc[j])
        put(cacc[i], a)
        put(cfrc[i], inertial_force(cinert[i], a, cvel[i]))
    for k in range(6):
        cfrc[0, k] = 0.0
    for i in range(m.nbody - 1, 0, -1):
        p = m.body_parentid[i]
        if p > 0:
            for k in range(6):
                cfrc[p, k] += cfrc[i, k]
    for v in range(m.nv):
        result[v] = dot6(cdof[v], cfrc[m.dof_bodyid[v]])


@kernel
def bias(m, d, b):
    """qfrc_bias of row b: c(q, v) = RNE with zero acceleration."""
    work = d.scratch_body[b]
    rne(m, d, b, False, d.qacc[b], d.qfrc_bias[b], work[0], work[1])
