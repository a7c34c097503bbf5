"""Stage 5, com_vel: body velocities `cvel` and the rate of change of the motion axes.

    cvel_i = cvel_parent + sum_{dofs k of i} cdof_k qvel_k
    cdof_dot_k = cvel x cdof_k   (motion cross product, rot:lin)

where cvel in cdof_dot is the velocity accumulated *before* dof k's own contribution
(v x v = 0 makes the difference vanish for 1-dof joints; for a ball joint all three axes use
the velocity before the ball). The translational dofs of a free joint have cdof_dot = 0:
their axes are fixed in the world.
"""

from robodyn.engine import types as T
from robodyn.engine.jit import kernel
from robodyn.engine.spatial import cross_motion


@kernel
def com_vel(m, d, b):
    """cvel and cdof_dot of row b (MuJoCo's mj_comVel)."""
    com_vel_at(m, d, b, d.qvel[b], d.cvel[b], d.cdof_dot[b])


@kernel
def com_vel_at(m, d, b, qvel, cvel, cdof_dot):
    """cvel (nbody, 6) and cdof_dot (nv, 6) for velocity qvel at row b's configuration."""
    cdof = d.cdof[b]
    for k in range(6):
        cvel[0, k] = 0.0
    for i in range(1, m.nbody):
        p = m.body_parentid[i]
        v = cvel[i]
        for k in range(6):
            v[k] = cvel[p, k]
        bda = m.body_dofadr[i]
        j = 0
        while j < m.body_dofnum[i]:
            jtype = m.jnt_type[m.dof_jntid[bda + j]]
            if jtype == T.JNT_FREE:
                for t in range(3):
                    for k in range(6):
                        cdof_dot[bda + j + t, k] = 0.0
                for t in range(3):
                    for k in range(6):
                        v[k] += cdof[bda + j + t, k] * qvel[bda + j + t]
                j += 3
                jtype = T.JNT_BALL
            if jtype == T.JNT_BALL:
                for t in range(3):
                    cross_motion(cdof_dot[bda + j + t], v, cdof[bda + j + t])
                for t in range(3):
                    for k in range(6):
                        v[k] += cdof[bda + j + t, k] * qvel[bda + j + t]
                j += 3
            else:
                cross_motion(cdof_dot[bda + j], v, cdof[bda + j])
                for k in range(6):
                    v[k] += cdof[bda + j, k] * qvel[bda + j]
                j += 1
