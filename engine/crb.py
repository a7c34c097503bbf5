"""Stage 3, crb: composite rigid-body inertias and the joint-space inertia matrix M.

crb_i = cinert_i + sum of crb over the children of i (everything the joints of i carry).
For dof i on body b(i) and every dof j on i's ancestor chain (j = i included):

    M[i, j] = cdof_j . (crb_{b(i)} cdof_i),   M[i, i] += armature_i

M is stored as its lower triangle in the row layout of Model.M_rowadr / M_colind
(ancestors ascending, diagonal last): a tree's M has no entries off that chain.
"""

from robodyn.engine.jit import kernel, u
from robodyn.engine.spatial import dot6, inert_vec


@kernel
def crb(m, d, b):
    """crb and qM of row b (MuJoCo's mj_crb)."""
    c = d.crb[b]
    for i in range(m.nbody):
        for k in range(10):
            c[i, k] = d.cinert[b, i, k]
    for i in range(m.nbody - 1, 0, -1):
        p = m.body_parentid[i]
        if p > 0:
            for k in range(10):
                c[p, k] += c[i, k]

    qM = d.qM[b]
    cdof = d.cdof[b]
    for k in range(m.nM):
        qM[k] = 0.0
    for i in range(m.nv):
        adr = m.M_rowadr[i] + m.M_rownnz[i] - 1  # the diagonal
        f = inert_vec(c[m.dof_bodyid[i]], cdof[i])
        qM[u(adr)] = m.dof_armature[i]
        j = i
        while j >= 0:
            qM[u(adr)] += dot6(cdof[j], f)
            adr -= 1
            j = m.dof_parentid[j]
