"""Stage 13, sensors: the observation vector `sensordata` (MuJoCo's mj_sensorPos/Vel/Acc).

Frames. A frame object is a body's inertial frame (OBJ_BODY: xipos, ximat), a body frame
(OBJ_XBODY: xpos, xmat), a geom or a site; matrices are 9 numbers row-major (columns are
the object's axes in world coordinates), quaternions (w, x, y, z).

Velocities. cvel and cacc are com-based: (rot:lin) of the body's motion, with the linear
part taken at the subtree_com c of the body's tree root. At a point p on the body:

    v_p = (w, v_c - (p - c) x w),                       world-oriented
    local: both halves mapped by R^T, R the object's frame           (mj_objectVelocity)
    a_p = (dw, a_c - (p - c) x dw) in the local frame, + w_loc x v_loc on the linear part
                                                                     (mj_objectAcceleration)

An object whose body is welded to the world (no dofs up its weld chain) has zero velocity.
Its acceleration is NOT short-cut to zero: cacc of a static body is the world's (0, -g),
so an accelerometer on a static site reads -R^T g (+g upward), like a real one at rest.
This is what the MuJoCo 4.0.0 binary computes and what we test against; the C source of
mj_objectAcceleration we read has a dof-less shortcut to zero, which the binary does not.

Touch (mj_sensorAcc): the sum of the normal forces f_n of the contacts that have rows, touch
the site's body (as geom 1 or geom 2) and push into the site's volume:

    touch = sum f_n  over contacts c with f_n > 0 whose ray  p_c + x s n_c  (x >= 0) meets
            the site's volume (sphere, capsule, ellipsoid, cylinder or box; engine.ray),

p_c the contact point, n_c its normal (from geom 1 to geom 2), s = +1 if the site's body
holds geom 1 and -1 if it holds geom 2: the ray runs from the contact point away from the
site's body, along the force the other body feels. A contact point inside the volume always
counts (the ray leaves it through the surface); one outside counts if the volume lies on
that ray (this is MuJoCo's test, not "point inside the site"). f_n is mj_contactForce's
normal force (engine.constraint.contact_normal_force: a pyramid's edge forces summed).

Rangefinder (mj_sensorPos, a site's): the ray from the site's origin along its z axis,
x = distance to the nearest geom surface it meets (engine.ray.ray: the site's own body and
invisible geoms excluded, static geoms seen, every geom group), -1 if none. Its `data`
attribute (sensor_intprm[0], bits RAYDATA_*) chooses the values written, in this order:
dist (x); dir (the unit z axis, zero without a hit); origin (the site's position); point
(origin + x dir, zero without a hit); normal (the surface's unit outward normal at the
hit, zero without one); depth (x, -1 without a hit). MuJoCo gives it the real datatype,
so a cutoff clips a miss (-1) to -cutoff.

Cutoff (MuJoCo's apply_cutoff): for cutoff > 0, real data is clipped to [-cutoff, cutoff]
and positive data to min(cutoff, x); axis and quaternion data are left alone.

Noise: MuJoCo stores sensor_noise but never adds it (mj_forward is deterministic); neither
does the engine. Noise on observations is the task's sensor model (robogym).
"""

from robodyn.engine import types as T
from robodyn.engine.constraint import contact_normal_force
from robodyn.engine.jit import kernel, unit
from robodyn.engine.ptr import call_unit
from robodyn.engine.ray import ray, ray_geom
from robodyn.engine.rne_post import rne_post_constraint
from robodyn.engine.spatial import cross3, mtv3, mv3, qmul, unit3
from robodyn.engine.types import MINVAL

# mjtDataType
DATATYPE_REAL = 0
DATATYPE_POSITIVE = 1

# mjtRayDataField: bits of a rangefinder's data spec (sensor_intprm[0]), in output order
RAYDATA_DIST = 0
RAYDATA_DIR = 1
RAYDATA_ORIGIN = 2
RAYDATA_POINT = 3
RAYDATA_NORMAL = 4
RAYDATA_DEPTH = 5


@kernel
def _frame(m, d, b, objtype, objid):
    """(xpos, xmat, body) of a frame object (MuJoCo's get_xpos_xmat); views, no copies."""
    if objtype == T.OBJ_XBODY:
        return d.xpos[b, objid], d.xmat[b, objid], objid
    if objtype == T.OBJ_BODY:
        return d.xipos[b, objid], d.ximat[b, objid], objid
    if objtype == T.OBJ_GEOM:
        return d.geom_xpos[b, objid], d.geom_xmat[b, objid], m.geom_bodyid[objid]
    return d.site_xpos[b, objid], d.site_xmat[b, objid], m.site_bodyid[objid]


@kernel
def _frame_quat(m, d, b, objtype, objid):
    """World orientation of a frame object as a quaternion 4-tuple (MuJoCo's get_xquat).

    xbody: xquat;  body: xquat * body_iquat;  geom/site: xquat_body * local quat.
    """
    if objtype == T.OBJ_XBODY:
        q = d.xquat[b, objid]
        return (q[0], q[1], q[2], q[3])
    if objtype == T.OBJ_BODY:
        return qmul(d.xquat[b, objid], m.body_iquat[objid])
    if objtype == T.OBJ_GEOM:
        return qmul(d.xquat[b, m.geom_bodyid[objid]], m.geom_quat[objid])
    return qmul(d.xquat[b, m.site_bodyid[objid]], m.site_quat[objid])


@kernel
def _static(m, body):
    """True if `body` cannot move: nothing on its weld chain to the world has a dof."""
    return m.body_dofnum[m.body_weldid[body]] == 0


@kernel
def _motion_at(vec, pos, com, mat, flg_local):
    """Com-based motion `vec` (rot:lin at com) seen at point pos, as a 6-tuple.

    lin' = lin - (pos - com) x rot; if flg_local both halves are mapped by mat^T
    (MuJoCo's mju_transformSpatial for a motion vector).
    """
    dif = (pos[0] - com[0], pos[1] - com[1], pos[2] - com[2])
    c = cross3(dif, vec)
    rot = (vec[0], vec[1], vec[2])
    lin = (vec[3] - c[0], vec[4] - c[1], vec[5] - c[2])
    if flg_local:
        rot = mtv3(mat, rot)
        lin = mtv3(mat, lin)
    return (rot[0], rot[1], rot[2], lin[0], lin[1], lin[2])


@kernel
def _force_at(vec, pos, com, mat):
    """Com-based force `vec` (torque:force, torque about com) seen at point pos, in the frame
    `mat`, as a 6-tuple: torque' = R^T (torque - (pos - com) x force), force' = R^T force
    (MuJoCo's mju_transformSpatial for a force vector)."""
    dif = (pos[0] - com[0], pos[1] - com[1], pos[2] - com[2])
    c = cross3(dif, (vec[3], vec[4], vec[5]))
    torque = mtv3(mat, (vec[0] - c[0], vec[1] - c[1], vec[2] - c[2]))
    force = mtv3(mat, (vec[3], vec[4], vec[5]))
    return (torque[0], torque[1], torque[2], force[0], force[1], force[2])


@kernel
def object_velocity(m, d, b, objtype, objid, flg_local):
    """6D velocity (rot:lin) of a frame object at its origin, as a 6-tuple.

    World-oriented, or in the object's own frame if flg_local (MuJoCo's mj_objectVelocity).
    """
    pos, mat, body = _frame(m, d, b, objtype, objid)
    if _static(m, body):
        return (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    com = d.subtree_com[b, m.body_rootid[body]]
    return _motion_at(d.cvel[b, body], pos, com, mat, flg_local)


@kernel
def object_acceleration(m, d, b, objtype, objid, flg_local):
    """6D acceleration (rot:lin) of a frame object at its origin, as a 6-tuple.

    a = cacc moved to the origin (and rotated if flg_local), plus the Coriolis term
    w x v (both also moved and rotated) on the linear part (MuJoCo's mj_objectAcceleration).
    Needs rne_post_constraint (cacc). Includes -g: a resting object reads +g upward, static
    objects included (no dof-less shortcut, as in the MuJoCo 4.0.0 binary).
    """
    pos, mat, body = _frame(m, d, b, objtype, objid)
    com = d.subtree_com[b, m.body_rootid[body]]
    acc = _motion_at(d.cacc[b, body], pos, com, mat, flg_local)
    vel = _motion_at(d.cvel[b, body], pos, com, mat, flg_local)
    c = cross3((vel[0], vel[1], vel[2]), (vel[3], vel[4], vel[5]))
    return (acc[0], acc[1], acc[2], acc[3] + c[0], acc[4] + c[1], acc[5] + c[2])


@kernel
def subtree_vel(m, d, b):
    """subtree_linvel and subtree_angmom of row b (world frame; MuJoCo's mj_subtreeVel).

    p_i = mass_i v_i (v_i: velocity of body i's com) summed child to parent, then
    subtree_linvel_i = p_i / max(MINVAL, subtreemass_i). Angular momentum: each body's own,
    R_i diag(inertia_i) R_i^T w_i; then, leaf to root, body i adds
    (xipos_i - c_i) x mass_i (v_i - V_i) about its subtree com c_i (V_i its velocity), its
    subtree passes its momentum to the parent and the parent adds
    (c_i - c_p) x subtreemass_i (V_i - V_p) for the motion of i's com about its own.
    """
    sl = d.subtree_linvel[b]
    am = d.subtree_angmom[b]
    for i in range(m.nbody):
        v = object_velocity(m, d, b, T.OBJ_BODY, i, False)
        mass = m.body_mass[i]
        sl[i, 0] = v[3] * mass
        sl[i, 1] = v[4] * mass
        sl[i, 2] = v[5] * mass
        R = d.ximat[b, i]
        w = mtv3(R, (v[0], v[1], v[2]))
        inertia = m.body_inertia[i]
        L = mv3(R, (w[0] * inertia[0], w[1] * inertia[1], w[2] * inertia[2]))
        am[i, 0], am[i, 1], am[i, 2] = L[0], L[1], L[2]
    for i in range(m.nbody - 1, -1, -1):
        if i > 0:
            p = m.body_parentid[i]
            for k in range(3):
                sl[p, k] += sl[i, k]
        inv = 1.0 / max(MINVAL, m.body_subtreemass[i])
        for k in range(3):
            sl[i, k] *= inv
    for i in range(m.nbody - 1, 0, -1):
        p = m.body_parentid[i]
        v = object_velocity(m, d, b, T.OBJ_BODY, i, False)
        c = d.subtree_com[b, i]
        x = d.xipos[b, i]
        mass = m.body_mass[i]
        dx = (x[0] - c[0], x[1] - c[1], x[2] - c[2])
        dp = ((v[3] - sl[i, 0]) * mass, (v[4] - sl[i, 1]) * mass, (v[5] - sl[i, 2]) * mass)
        dL = cross3(dx, dp)
        for k in range(3):
            am[i, k] += dL[k]
        for k in range(3):
            am[p, k] += am[i, k]
        cp = d.subtree_com[b, p]
        smass = m.body_subtreemass[i]
        dx = (c[0] - cp[0], c[1] - cp[1], c[2] - cp[2])
        dv = ((sl[i, 0] - sl[p, 0]) * smass, (sl[i, 1] - sl[p, 1]) * smass, (sl[i, 2] - sl[p, 2]) * smass)
        dL = cross3(dx, dv)
        for k in range(3):
            am[p, k] += dL[k]


@kernel
def _framepos(m, d, b, s, out):
    """Object position; with a reference: R_ref^T (x_obj - x_ref)."""
    pos, _, _ = _frame(m, d, b, m.sensor_objtype[s], m.sensor_objid[s])
    refid = m.sensor_refid[s]
    if refid < 0:
        out[0], out[1], out[2] = pos[0], pos[1], pos[2]
        return
    rpos, rmat, _ = _frame(m, d, b, m.sensor_reftype[s], refid)
    r = mtv3(rmat, (pos[0] - rpos[0], pos[1] - rpos[1], pos[2] - rpos[2]))
    out[0], out[1], out[2] = r[0], r[1], r[2]


@kernel
def _framequat(m, d, b, s, out):
    """Object orientation; with a reference: conj(q_ref) * q_obj (not renormalized)."""
    q = _frame_quat(m, d, b, m.sensor_objtype[s], m.sensor_objid[s])
    refid = m.sensor_refid[s]
    if refid >= 0:
        r = _frame_quat(m, d, b, m.sensor_reftype[s], refid)
        q = qmul((r[0], -r[1], -r[2], -r[3]), q)
    out[0], out[1], out[2], out[3] = q[0], q[1], q[2], q[3]


@kernel
def _frameaxis(m, d, b, s, out, axis):
    """Column `axis` (0 x, 1 y, 2 z) of the object's frame, world coordinates; with a
    reference: R_ref^T times it, the axis in the reference frame (MuJoCo's frame?axis)."""
    _, mat, _ = _frame(m, d, b, m.sensor_objtype[s], m.sensor_objid[s])
    v = (mat[axis], mat[axis + 3], mat[axis + 6])
    refid = m.sensor_refid[s]
    if refid >= 0:
        _, rmat, _ = _frame(m, d, b, m.sensor_reftype[s], refid)
        v = mtv3(rmat, v)
    out[0], out[1], out[2] = v[0], v[1], v[2]


@kernel
def _framevel(m, d, b, s, out, angular):
    """Object linear (or angular) velocity, world frame; with a reference frame:

    rel = v_obj - v_ref (both 6D, world-oriented, each at its own origin);
    rel_lin += (x_obj - x_ref) x w_ref;  result = R_ref^T rel  (MuJoCo's frame(lin|ang)vel).
    """
    objtype = m.sensor_objtype[s]
    objid = m.sensor_objid[s]
    v = object_velocity(m, d, b, objtype, objid, False)
    refid = m.sensor_refid[s]
    if refid >= 0:
        reftype = m.sensor_reftype[s]
        pos, _, _ = _frame(m, d, b, objtype, objid)
        rpos, rmat, _ = _frame(m, d, b, reftype, refid)
        vr = object_velocity(m, d, b, reftype, refid, False)
        rel_rot = (v[0] - vr[0], v[1] - vr[1], v[2] - vr[2])
        rel_lin = (v[3] - vr[3], v[4] - vr[4], v[5] - vr[5])
        c = cross3((pos[0] - rpos[0], pos[1] - rpos[1], pos[2] - rpos[2]), vr)
        rel_lin = (rel_lin[0] + c[0], rel_lin[1] + c[1], rel_lin[2] + c[2])
        rot = mtv3(rmat, rel_rot)
        lin = mtv3(rmat, rel_lin)
        v = (rot[0], rot[1], rot[2], lin[0], lin[1], lin[2])
    if angular:
        out[0], out[1], out[2] = v[0], v[1], v[2]
    else:
        out[0], out[1], out[2] = v[3], v[4], v[5]


@kernel
def _touch(m, d, b, site):
    """Touch sensor on `site`: sum of the normal forces of the contacts of the site's body
    whose ray from the contact point, away from that body, meets the site's volume."""
    body = m.site_bodyid[site]
    spos = d.site_xpos[b, site]
    smat = d.site_xmat[b, site]
    ssize = m.site_size[site]
    stype = m.site_type[site]
    total = 0.0
    for c in range(d.ncon[b]):
        if d.contact_efc_address[b, c] < 0:
            continue
        body1 = m.geom_bodyid[d.contact_geom[b, c, 0]]
        body2 = m.geom_bodyid[d.contact_geom[b, c, 1]]
        if body != body1 and body != body2:
            continue
        fn = contact_normal_force(d, b, c)
        if fn <= 0:
            continue
        # ray direction: the normal force (normal * f_n) normalized, flipped when the site's
        # body holds geom 2 (MuJoCo's order of operations, for the same rounding)
        fr = d.contact_frame[b, c]
        r = unit3((fr[0] * fn, fr[1] * fn, fr[2] * fn))
        if body == body2:
            r = (-r[0], -r[1], -r[2])
        p = d.contact_pos[b, c]
        if ray_geom(spos, smat, ssize, (p[0], p[1], p[2]), r, stype)[0] >= 0:
            total += fn
    return total


@kernel
def _rangefinder(m, d, b, s, out):
    """Rangefinder s on a site: the ray along the site's z axis, its values as the data spec
    sensor_intprm[s, 0] selects (see the module docstring)."""
    site = m.sensor_objid[s]
    mat = d.site_xmat[b, site]
    o = d.site_xpos[b, site]
    origin = (o[0], o[1], o[2])
    vec = (mat[2], mat[5], mat[8])
    dist, _, n0, n1, n2 = ray(m, d, b, origin, vec, m.site_bodyid[site])
    hit = dist >= 0
    spec = m.sensor_intprm[s, 0]
    k = 0
    if spec & (1 << RAYDATA_DIST):
        out[k] = dist
        k += 1
    if spec & (1 << RAYDATA_DIR):
        for j in range(3):
            out[k + j] = vec[j] if hit else 0.0
        k += 3
    if spec & (1 << RAYDATA_ORIGIN):
        for j in range(3):
            out[k + j] = origin[j]
        k += 3
    if spec & (1 << RAYDATA_POINT):
        for j in range(3):
            out[k + j] = origin[j] + vec[j] * dist if hit else 0.0
        k += 3
    if spec & (1 << RAYDATA_NORMAL):
        out[k], out[k + 1], out[k + 2] = n0, n1, n2  # zero without a hit
        k += 3
    if spec & (1 << RAYDATA_DEPTH):
        out[k] = dist if hit else -1.0


@kernel
def _apply_cutoff(m, s, out):
    """Clamp sensor s's values (MuJoCo's apply_cutoff): real to [-c, c], positive to min(c, x)."""
    c = m.sensor_cutoff[s]
    if c <= 0:
        return
    dt = m.sensor_datatype[s]
    for j in range(m.sensor_dim[s]):
        x = out[j]
        if dt == DATATYPE_REAL:
            if x < -c:
                out[j] = -c
            elif x > c:
                out[j] = c
        elif dt == DATATYPE_POSITIVE:
            if c < x:
                out[j] = c


@kernel
def _sensor(m, d, b, s, out):
    """Value of a frame, subtree or IMU sensor s into out (sensor_dim numbers), before the cutoff.

    (the scalar joint, tendon, actuator and clock readings are read inline in `sensors`.)
    """
    st = m.sensor_type[s]
    oid = m.sensor_objid[s]
    if st == T.SENS_FRAMEPOS:
        _framepos(m, d, b, s, out)
    elif st == T.SENS_FRAMEQUAT:
        _framequat(m, d, b, s, out)
    elif st == T.SENS_FRAMEXAXIS or st == T.SENS_FRAMEYAXIS or st == T.SENS_FRAMEZAXIS:
        _frameaxis(m, d, b, s, out, st - T.SENS_FRAMEXAXIS)
    elif st == T.SENS_FRAMELINVEL:
        _framevel(m, d, b, s, out, False)
    elif st == T.SENS_FRAMEANGVEL:
        _framevel(m, d, b, s, out, True)
    elif st == T.SENS_SUBTREECOM:
        for k in range(3):
            out[k] = d.subtree_com[b, oid, k]
    elif st == T.SENS_SUBTREELINVEL:
        for k in range(3):
            out[k] = d.subtree_linvel[b, oid, k]
    elif st == T.SENS_SUBTREEANGMOM:
        for k in range(3):
            out[k] = d.subtree_angmom[b, oid, k]
    elif st == T.SENS_GYRO:
        # site angular velocity in the site frame
        v = object_velocity(m, d, b, T.OBJ_SITE, oid, True)
        out[0], out[1], out[2] = v[0], v[1], v[2]
    elif st == T.SENS_VELOCIMETER:
        # site linear velocity in the site frame
        v = object_velocity(m, d, b, T.OBJ_SITE, oid, True)
        out[0], out[1], out[2] = v[3], v[4], v[5]
    elif st == T.SENS_ACCELEROMETER:
        # site linear acceleration (incl. -g and Coriolis) in the site frame
        a = object_acceleration(m, d, b, T.OBJ_SITE, oid, True)
        out[0], out[1], out[2] = a[3], a[4], a[5]
    elif st == T.SENS_FORCE or st == T.SENS_TORQUE:
        # interaction force of the site's body with its parent (cfrc_int), at the site, in its frame
        body = m.site_bodyid[oid]
        f = _force_at(
            d.cfrc_int[b, body],
            d.site_xpos[b, oid],
            d.subtree_com[b, m.body_rootid[body]],
            d.site_xmat[b, oid],
        )
        k = 3 if st == T.SENS_FORCE else 0
        out[0], out[1], out[2] = f[k], f[k + 1], f[k + 2]
    elif st == T.SENS_FRAMELINACC or st == T.SENS_FRAMEANGACC:
        # object acceleration at its origin, world frame (linear part incl. -g and Coriolis)
        a = object_acceleration(m, d, b, m.sensor_objtype[s], oid, False)
        k = 3 if st == T.SENS_FRAMELINACC else 0
        out[0], out[1], out[2] = a[k], a[k + 1], a[k + 2]


@kernel
def _tendon_actuator_force(m, d, b, tendon):
    """Sum of the forces of the actuators that pull on `tendon` (MuJoCo's tendonactuatorfrc)."""
    f = 0.0
    for i in range(m.nu):
        if m.actuator_trntype[i] == T.TRN_TENDON and m.actuator_trnid[i, 0] == tendon:
            f += d.actuator_force[b, i]
    return f


@unit
def ray_sensors(m, d, b):
    """The touch and rangefinder readings of row b, cutoffs applied: the sensors that cast
    rays (engine.ray). A unit of its own, called by `sensors` through m.unit_ray_sensors
    (set only for models that have one), so that other models never compile the ray code."""
    data = d.sensordata[b]
    for s in range(m.nsensor):
        st = m.sensor_type[s]
        adr = m.sensor_adr[s]
        if st == T.SENS_TOUCH:
            data[adr] = _touch(m, d, b, m.sensor_objid[s])
        elif st == T.SENS_RANGEFINDER:
            _rangefinder(m, d, b, s, data[adr : adr + m.sensor_dim[s]])
        else:
            continue
        if m.sensor_cutoff[s] > 0:
            _apply_cutoff(m, s, data[adr : adr + m.sensor_dim[s]])


@unit
def rne_post(m, d, b):
    """cacc, cfrc_ext and cfrc_int of row b (engine.rne_post, mj_rnePostConstraint) for the
    sensors that read them: a unit of its own, which the sensors unit calls through
    m.unit_rne_post; engine.binding sets it only for a model with such a sensor
    (accelerometer, force, torque, framelinacc, frameangacc)."""
    rne_post_constraint(m, d, b)


@kernel
def acc_stage(st):
    """True for a sensor type MuJoCo computes in mj_sensorAcc (its needstage mjSTAGE_ACC):
    the readings of forces and accelerations, which need the constraint solve."""
    return (
        st == T.SENS_TOUCH
        or st == T.SENS_ACCELEROMETER
        or st == T.SENS_FORCE
        or st == T.SENS_TORQUE
        or st == T.SENS_ACTUATORFRC
        or st == T.SENS_JOINTACTFRC
        or st == T.SENS_TENDONACTFRC
        or st == T.SENS_FRAMELINACC
        or st == T.SENS_FRAMEANGACC
    )


@unit
def sensors(m, d, b):
    """sensordata of row b; computes subtree_linvel and subtree_angmom, and cacc and
    cfrc_int, first if a sensor needs them; the touch and rangefinder readings come from
    the unit ray_sensors."""
    _sensors(m, d, b, True)


@unit
def sensors_posvel(m, d, b):
    """The readings of row b's position- and velocity-stage sensors (MuJoCo's mj_sensorPos
    and mj_sensorVel, as mj_step1 leaves them), the acceleration-stage ones left as they
    were: after a position-velocity pass (engine.forward.forward_posvel) the constraint
    forces and accelerations they read belong to the last step's start."""
    _sensors(m, d, b, False)


@kernel
def _sensors(m, d, b, acc):
    """The sensors of row b: all of them (acc), or those of the position and velocity stages."""
    need_subtreevel = False
    for s in range(m.nsensor):
        st = m.sensor_type[s]
        if st == T.SENS_SUBTREELINVEL or st == T.SENS_SUBTREEANGMOM:
            need_subtreevel = True
    if need_subtreevel:
        subtree_vel(m, d, b)
    if acc and m.unit_rne_post != 0:  # set for the models whose sensors read cacc or cfrc_int
        call_unit(m.unit_rne_post, m, d, b)
    data = d.sensordata[b]
    for s in range(m.nsensor):
        adr = m.sensor_adr[s]
        st = m.sensor_type[s]
        oid = m.sensor_objid[s]
        if not acc and acc_stage(st):
            continue
        # the scalar joint and actuator readings inline: a kernel call per sensor costs more
        # than the reading itself
        if st == T.SENS_JOINTPOS:
            data[adr] = d.qpos[b, m.jnt_qposadr[oid]]
        elif st == T.SENS_JOINTVEL:
            data[adr] = d.qvel[b, m.jnt_dofadr[oid]]
        elif st == T.SENS_ACTUATORFRC:
            data[adr] = d.actuator_force[b, oid]
        elif st == T.SENS_JOINTACTFRC:
            data[adr] = d.qfrc_actuator[b, m.jnt_dofadr[oid]]
        elif st == T.SENS_TENDONACTFRC:
            data[adr] = _tendon_actuator_force(m, d, b, oid)
        elif st == T.SENS_TENDONPOS:
            data[adr] = d.ten_length[b, oid]
        elif st == T.SENS_TENDONVEL:
            data[adr] = d.ten_velocity[b, oid]
        elif st == T.SENS_ACTUATORPOS:
            data[adr] = d.actuator_length[b, oid]
        elif st == T.SENS_ACTUATORVEL:
            data[adr] = d.actuator_velocity[b, oid]
        elif st == T.SENS_CLOCK:
            data[adr] = d.time[b]
        elif st == T.SENS_TOUCH or st == T.SENS_RANGEFINDER:
            continue  # ray_sensors
        else:
            _sensor(m, d, b, s, data[adr : adr + m.sensor_dim[s]])
        if m.sensor_cutoff[s] > 0:
            _apply_cutoff(m, s, data[adr : adr + m.sensor_dim[s]])
    if m.unit_ray_sensors != 0:
        if acc:
            call_unit(m.unit_ray_sensors, m, d, b)
        else:  # the rangefinders anew; the touch readings (acceleration stage) kept
            _keep_touch(m, d, b, True)
            call_unit(m.unit_ray_sensors, m, d, b)
            _keep_touch(m, d, b, False)


@kernel
def _keep_touch(m, d, b, save):
    """Copy row b's touch readings into scratch_sensor (save) or back from it."""
    for s in range(m.nsensor):
        if m.sensor_type[s] == T.SENS_TOUCH:
            adr = m.sensor_adr[s]
            if save:
                d.scratch_sensor[b, adr] = d.sensordata[b, adr]
            else:
                d.sensordata[b, adr] = d.scratch_sensor[b, adr]
