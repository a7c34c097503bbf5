"""Stage 1, kinematics: world poses of bodies, inertial frames, joints, geoms and sites.

For body i with parent p, before its joints:  x_i = x_p + R_p pos_i,  q_i = q_p * quat_i.
Each joint then moves the body about its anchor a = x_i + R_i jnt_pos (world):
- slide:  x_i += axis_w (qpos - qpos0)
- hinge:  q_i <- q_i * quat(axis, qpos - qpos0), then x_i = a - R_i jnt_pos
          (the off-centre correction: the anchor stays put, the origin swings around it)
- ball:   q_i <- q_i * normalize(qpos[0:4]), with the same off-centre correction
- free:   x_i = qpos[0:3], q_i = normalize(qpos[3:7]) (parent ignored)
The joint axis and anchor are recorded before the joint's own rotation (`xaxis`, `xanchor`).

(pos_i, quat_i) is the model's (body_pos, body_quat), except for a mocap body
(body_mocapid[i] = k >= 0), whose offset is the row's (mocap_pos[k], normalize(mocap_quat[k])):
as in MuJoCo, a copy is normalized (norm < 1e-15, a zero quaternion: the identity) and
mocap_quat keeps what the user wrote. MuJoCo's compiler makes every mocap body a joint-less
child of the world, so x_i = mocap_pos and q_i = normalize(mocap_quat); bodies welded or
jointed under it follow it, and its geoms and sites move with it. It has no dofs, so the
dynamics see it as static at each step (no velocity, a zero Jacobian), as MuJoCo does.
"""

from robodyn.engine import types as T
from robodyn.engine.jit import kernel
from robodyn.engine.spatial import mv3, put, qaxisangle, qmul, qnormalized, qrot, quat_to_mat


@kernel
def _local_to_global(xpos_out, xmat_out, body_xpos, body_xquat, body_xmat, pos, quat):
    """Pose of a frame given in body coordinates: x = x_b + R_b pos, R = R(q_b * quat) (R_b
    the body's xmat, as MuJoCo's mj_local2Global multiplies)."""
    p = mv3(body_xmat, pos)
    xpos_out[0] = body_xpos[0] + p[0]
    xpos_out[1] = body_xpos[1] + p[1]
    xpos_out[2] = body_xpos[2] + p[2]
    q = qmul(body_xquat, quat)
    quat_to_mat(xmat_out, q)


@kernel
def _frame_pose(d, b, xpos_out, xmat_out, body, pos, quat, same):
    """Pose of a frame on `body` (MuJoCo's mj_local2Global): a body's inertial frame, a
    geom's or a site's. Where the compiler found the frame equal to the body's or its
    inertial frame (`same`, mjtSameFrame, to within the compiler's tolerance), the position
    and orientation are copied from that frame, as MuJoCo copies them; else x = x_b + R_b
    pos, R = R(q_b * quat) (with the body's or the inertial frame's rotation copied for the
    ...ROT kinds). An inertial frame is only ever NONE, BODY or BODYROT."""
    if same == T.SAMEFRAME_NONE:
        _local_to_global(xpos_out, xmat_out, d.xpos[b, body], d.xquat[b, body], d.xmat[b, body], pos, quat)
        return
    if same == T.SAMEFRAME_BODY:
        for k in range(3):
            xpos_out[k] = d.xpos[b, body, k]
    elif same == T.SAMEFRAME_INERTIA:
        for k in range(3):
            xpos_out[k] = d.xipos[b, body, k]
    else:  # ...ROT: the position from the body frame
        p = mv3(d.xmat[b, body], pos)
        for k in range(3):
            xpos_out[k] = d.xpos[b, body, k] + p[k]
    if same == T.SAMEFRAME_BODY or same == T.SAMEFRAME_BODYROT:
        for k in range(9):
            xmat_out[k] = d.xmat[b, body, k]
    else:
        for k in range(9):
            xmat_out[k] = d.ximat[b, body, k]


@kernel
def kinematics(m, d, b):
    """Forward kinematics of row b: xpos, xquat, xmat, xanchor, xaxis, xipos, ximat,
    geom_xpos/xmat and site_xpos/xmat from qpos, mocap_pos and mocap_quat (MuJoCo's
    mj_kinematics)."""
    qpos = d.qpos[b]
    xpos = d.xpos[b]
    xquat = d.xquat[b]
    xmat = d.xmat[b]
    # world body
    for k in range(3):
        xpos[0, k] = 0.0
        d.xipos[b, 0, k] = 0.0
    xquat[0, 0] = 1.0
    xquat[0, 1] = 0.0
    xquat[0, 2] = 0.0
    xquat[0, 3] = 0.0
    quat_to_mat(xmat[0], xquat[0])
    quat_to_mat(d.ximat[b, 0], xquat[0])

    for i in range(1, m.nbody):
        jntadr = m.body_jntadr[i]
        jntnum = m.body_jntnum[i]
        if jntnum == 1 and m.jnt_type[jntadr] == T.JNT_FREE:
            qa = m.jnt_qposadr[jntadr]
            pos = (qpos[qa], qpos[qa + 1], qpos[qa + 2])
            quat = qnormalized((qpos[qa + 3], qpos[qa + 4], qpos[qa + 5], qpos[qa + 6]))
            put(d.xanchor[b, jntadr], pos)
            put(d.xaxis[b, jntadr], m.jnt_axis[jntadr])
        else:
            p = m.body_parentid[i]
            k = m.body_mocapid[i]
            if k >= 0:
                # a mocap body: its offset is the row's mocap pose, the quaternion normalized
                # here (a zero one becomes the identity); mocap_quat itself is left as written
                bp = d.mocap_pos[b, k]
                bq = d.mocap_quat[b, k]
                bpos = (bp[0], bp[1], bp[2])
                bquat = qnormalized((bq[0], bq[1], bq[2], bq[3]))
            else:
                bp = m.body_pos[i]
                bq = m.body_quat[i]
                bpos = (bp[0], bp[1], bp[2])
                bquat = (bq[0], bq[1], bq[2], bq[3])
            if p > 0:
                r = mv3(xmat[p], bpos)
                pos = (r[0] + xpos[p, 0], r[1] + xpos[p, 1], r[2] + xpos[p, 2])
                quat = qmul(xquat[p], bquat)
            else:
                pos = bpos
                quat = bquat
            for j in range(jntadr, jntadr + jntnum):
                qa = m.jnt_qposadr[j]
                axis = qrot(quat, m.jnt_axis[j])
                off = qrot(quat, m.jnt_pos[j])
                anchor = (pos[0] + off[0], pos[1] + off[1], pos[2] + off[2])
                jtype = m.jnt_type[j]
                if jtype == T.JNT_SLIDE:
                    s = qpos[qa] - m.qpos0[qa]
                    pos = (pos[0] + axis[0] * s, pos[1] + axis[1] * s, pos[2] + axis[2] * s)
                else:
                    if jtype == T.JNT_BALL:
                        qloc = qnormalized((qpos[qa], qpos[qa + 1], qpos[qa + 2], qpos[qa + 3]))
                    else:
                        qloc = qaxisangle(m.jnt_axis[j], qpos[qa] - m.qpos0[qa])
                    quat = qmul(quat, qloc)
                    # off-centre correction: keep the anchor fixed while the body turns
                    v = qrot(quat, m.jnt_pos[j])
                    pos = (anchor[0] - v[0], anchor[1] - v[1], anchor[2] - v[2])
                put(d.xanchor[b, j], anchor)
                put(d.xaxis[b, j], axis)
        quat = qnormalized(quat)
        put(xquat[i], quat)
        put(xpos[i], pos)
        quat_to_mat(xmat[i], xquat[i])

    for i in range(1, m.nbody):
        _frame_pose(
            d, b, d.xipos[b, i], d.ximat[b, i], i, m.body_ipos[i], m.body_iquat[i], m.body_sameframe[i]
        )
    for g in range(m.ngeom):
        _frame_pose(
            d,
            b,
            d.geom_xpos[b, g],
            d.geom_xmat[b, g],
            m.geom_bodyid[g],
            m.geom_pos[g],
            m.geom_quat[g],
            m.geom_sameframe[g],
        )
    for s in range(m.nsite):
        _frame_pose(
            d,
            b,
            d.site_xpos[b, s],
            d.site_xmat[b, s],
            m.site_bodyid[s],
            m.site_pos[s],
            m.site_quat[s],
            m.site_sameframe[s],
        )
