"""Stage 2, com_pos: subtree centres of mass, com-based inertias `cinert` and motion axes `cdof`.

Every spatial quantity from here on is expressed in the world frame about one reference
point per kinematic tree: the centre of mass of that tree (`subtree_com` of its root).
Keeping the reference near the mass keeps the numbers small and well conditioned.

- subtree_com_i = sum_{k in subtree(i)} m_k xipos_k / sum m_k
- cinert_i = inertia of body i about subtree_com[root(i)] (see spatial.inert_com)
- cdof for a hinge: (axis, axis x (c - anchor)); slide: (0, axis); ball and the rotational
  part of a free joint: the three body axes (columns of xmat) as hinges through the anchor;
  the translational part of a free joint: the world x, y, z axes.
"""

from robodyn.engine import types as T
from robodyn.engine.jit import kernel
from robodyn.engine.spatial import inert_com, sub3
from robodyn.engine.types import MINVAL


@kernel
def _dof_com(res, axis0, axis1, axis2, offset, slide):
    """res = (axis, axis x offset) for a rotation, (0, axis) for a translation."""
    if slide:
        res[0] = 0.0
        res[1] = 0.0
        res[2] = 0.0
        res[3] = axis0
        res[4] = axis1
        res[5] = axis2
    else:
        res[0] = axis0
        res[1] = axis1
        res[2] = axis2
        res[3] = axis1 * offset[2] - axis2 * offset[1]
        res[4] = axis2 * offset[0] - axis0 * offset[2]
        res[5] = axis0 * offset[1] - axis1 * offset[0]


@kernel
def com_pos(m, d, b):
    """subtree_com, cinert and cdof of row b (MuJoCo's mj_comPos)."""
    com = d.subtree_com[b]
    xipos = d.xipos[b]
    for i in range(m.nbody):
        for k in range(3):
            com[i, k] = m.body_mass[i] * xipos[i, k]
    for i in range(m.nbody - 1, 0, -1):
        p = m.body_parentid[i]
        for k in range(3):
            com[p, k] += com[i, k]
    for i in range(m.nbody):
        if m.body_subtreemass[i] < MINVAL:
            for k in range(3):
                com[i, k] = xipos[i, k]
        else:
            inv = 1.0 / m.body_subtreemass[i]
            for k in range(3):
                com[i, k] *= inv

    cinert = d.cinert[b]
    for k in range(10):
        cinert[0, k] = 0.0
    for i in range(1, m.nbody):
        r = m.body_rootid[i]
        offset = sub3(xipos[i], com[r])
        inert_com(cinert[i], m.body_inertia[i], d.ximat[b, i], offset, m.body_mass[i])

    xmat = d.xmat[b]
    for j in range(m.njnt):
        i = m.jnt_bodyid[j]
        r = m.body_rootid[i]
        da = m.jnt_dofadr[j]
        offset = sub3(com[r], d.xanchor[b, j])
        jtype = m.jnt_type[j]
        if jtype == T.JNT_FREE or jtype == T.JNT_BALL:
            rot = da
            if jtype == T.JNT_FREE:
                _dof_com(d.cdof[b, da + 0], 1.0, 0.0, 0.0, offset, True)
                _dof_com(d.cdof[b, da + 1], 0.0, 1.0, 0.0, offset, True)
                _dof_com(d.cdof[b, da + 2], 0.0, 0.0, 1.0, offset, True)
                rot = da + 3
            for k in range(3):  # k-th body axis = k-th column of xmat
                _dof_com(d.cdof[b, rot + k], xmat[i, k], xmat[i, k + 3], xmat[i, k + 6], offset, False)
        else:
            ax = d.xaxis[b, j]
            _dof_com(d.cdof[b, da], ax[0], ax[1], ax[2], offset, jtype == T.JNT_SLIDE)
