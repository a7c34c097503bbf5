"""Stage 7, passive: joint and tendon springs and dampers, and fluid forces.

- hinge/slide spring:  qfrc_spring = -k (q - q_spring)
- ball spring (and the rotation of a free joint):  -k log(q_spring^-1 q) (rotation vector)
- free joint translation spring:  -k (p - p_spring)
- damper:  qfrc_damper = -b qvel
- fixed tendon spring: -k x ten_J with x the distance outside [lower, upper] of lengthspring;
  tendon damper -b ten_velocity ten_J
- fluid (MuJoCo's inertia-box model): each body is the box with its inertia, moving
  through a medium of the given density and viscosity (with wind); the viscous
  (Stokes) and quadratic-drag force and torque act at the body's centre of mass.

qfrc_passive = qfrc_spring + qfrc_damper + qfrc_fluid.

The springs' displacements (joint_spring_dif, tendon_spring_stretch) also give their
potential energy, 0.5 k dif^2 (spring_energy, which engine.api.energy adds to gravity's
as MuJoCo's mj_energyPos does).
"""

import math

from robodyn.engine import types as T
from robodyn.engine.jacobian import apply_ft
from robodyn.engine.jit import kernel
from robodyn.engine.spatial import mv3, put, qnormalized, qsub, transform_spatial
from robodyn.engine.types import MINVAL


@kernel
def joint_spring_dif(m, j, qpos, dif, normalize):
    """Joint j's displacement from its spring's reference qpos_spring, in the joint's dof
    coordinates, into dif[0:n]; returns n (6 free, 3 ball, 1 hinge or slide): p - p_spring
    for a free joint's position, then log(q_spring^-1 q) (spatial.qsub, a rotation vector
    in the joint's frame) for its rotation or a ball joint's, q - q_spring for a hinge or
    slide. The quaternion is normalized first when `normalize` (mj_passive does;
    mj_energyPos reads qpos as it is)."""
    pa = m.jnt_qposadr[j]
    jtype = m.jnt_type[j]
    n = 0
    if jtype == T.JNT_FREE:
        for t in range(3):
            dif[t] = qpos[pa + t] - m.qpos_spring[pa + t]
        pa += 3
        n = 3
        jtype = T.JNT_BALL
    if jtype == T.JNT_BALL:
        if normalize:
            quat = qnormalized(qpos[pa : pa + 4])
        else:
            quat = (qpos[pa], qpos[pa + 1], qpos[pa + 2], qpos[pa + 3])
        put(dif[n : n + 3], qsub(quat, m.qpos_spring[pa : pa + 4]))
        return n + 3
    dif[0] = qpos[pa] - m.qpos_spring[pa]
    return 1


@kernel
def tendon_spring_stretch(m, d, b, t):
    """How far tendon t's length lies outside its spring's dead band [lower, upper]
    (tendon_lengthspring): length - upper above it, length - lower below it, 0 inside."""
    length = d.ten_length[b, t]
    lower = m.tendon_lengthspring[t, 0]
    upper = m.tendon_lengthspring[t, 1]
    if length > upper:
        return length - upper
    if length < lower:
        return length - lower
    return 0.0


@kernel
def spring_energy(m, d, b, pot):
    """pot plus the potential energy of row b's springs, added term by term as mj_energyPos
    adds them to energy[0] after gravity: 0.5 k |p - p_spring|^2 and 0.5 k |dif|^2 for a
    free joint's position and rotation, 0.5 k |dif|^2 for a ball joint, 0.5 k dif^2 for a
    hinge or slide (joint_spring_dif, qpos as it is), 0.5 k x^2 for a tendon
    (tendon_spring_stretch). 0 terms when springs are disabled."""
    if m.opt_disableflags & T.DSBL_SPRING:
        return pot
    dif = d.scratch_body[b, 0, 0]
    for j in range(m.njnt):
        k = m.jnt_stiffness[j]
        if k == 0.0:
            continue
        n = joint_spring_dif(m, j, d.qpos[b], dif, False)
        r = 0  # the rotation's first entry in dif
        if n == 6:
            x2 = 0.0
            for t in range(3):
                x2 += dif[t] ** 2
            pot += 0.5 * k * x2
            r = 3
        if n == 1:
            pot += 0.5 * k * dif[0] ** 2
        else:
            pot += 0.5 * k * (dif[r] ** 2 + dif[r + 1] ** 2 + dif[r + 2] ** 2)
    for t in range(m.ntendon):
        x = tendon_spring_stretch(m, d, b, t)
        pot += 0.5 * m.tendon_stiffness[t] * x * x
    return pot


@kernel
def _spring_damper(m, d, b):
    spring = d.qfrc_spring[b]
    damper = d.qfrc_damper[b]
    if not (m.opt_disableflags & T.DSBL_SPRING):
        dif = d.scratch_body[b, 0, 0]
        for j in range(m.njnt):
            k = m.jnt_stiffness[j]
            if k == 0.0:
                continue
            da = m.jnt_dofadr[j]
            for t in range(joint_spring_dif(m, j, d.qpos[b], dif, True)):
                spring[da + t] = -k * dif[t]
    if not (m.opt_disableflags & T.DSBL_DAMPER):
        for i in range(m.nv):
            damper[i] = -m.dof_damping[i] * d.qvel[b, i]
    for t in range(m.ntendon):
        k = 0.0 if m.opt_disableflags & T.DSBL_SPRING else m.tendon_stiffness[t]
        c = 0.0 if m.opt_disableflags & T.DSBL_DAMPER else m.tendon_damping[t]
        if k == 0.0 and c == 0.0:
            continue
        f_spring = -k * tendon_spring_stretch(m, d, b, t)
        f_damper = -c * d.ten_velocity[b, t]
        for i in range(m.nv):
            J = d.ten_J[b, t, i]
            if J != 0.0:
                spring[i] += J * f_spring
                damper[i] += J * f_damper


@kernel
def _fluid(m, d, b):
    """Inertia-box fluid forces on every body of row b into qfrc_fluid."""
    lvel = d.scratch_body[b, 0, 0]
    lwind = d.scratch_body[b, 0, 1]
    wind = d.scratch_body[b, 0, 2]
    frc = d.scratch_body[b, 0, 3]  # frc[0:3] torque, frc[3:6] force, world frame
    for k in range(3):
        wind[k] = 0.0
        wind[3 + k] = m.opt_wind[k]
    rho = m.opt_density
    mu = m.opt_viscosity
    for i in range(1, m.nbody):
        mass = m.body_mass[i]
        if mass < MINVAL:
            continue
        inertia = m.body_inertia[i]
        bx = math.sqrt(max(MINVAL, inertia[1] + inertia[2] - inertia[0]) / mass * 6.0)
        by = math.sqrt(max(MINVAL, inertia[0] + inertia[2] - inertia[1]) / mass * 6.0)
        bz = math.sqrt(max(MINVAL, inertia[0] + inertia[1] - inertia[2]) / mass * 6.0)
        ximat = d.ximat[b, i]
        xipos = d.xipos[b, i]
        com = d.subtree_com[b, m.body_rootid[i]]
        # body velocity at its com, in the inertial frame; wind likewise
        transform_spatial(lvel, d.cvel[b, i], False, xipos, com, ximat, True)
        transform_spatial(lwind, wind, False, xipos, com, ximat, True)
        for k in range(3):
            lvel[3 + k] -= lwind[3 + k]
        t0 = t1 = t2 = f0 = f1 = f2 = 0.0
        if mu > 0:
            diam = (bx + by + bz) / 3.0
            ca = -math.pi * diam * diam * diam * mu
            cl = -3.0 * math.pi * diam * mu
            t0, t1, t2 = ca * lvel[0], ca * lvel[1], ca * lvel[2]
            f0, f1, f2 = cl * lvel[3], cl * lvel[4], cl * lvel[5]
        if rho > 0:
            f0 -= 0.5 * rho * by * bz * abs(lvel[3]) * lvel[3]
            f1 -= 0.5 * rho * bx * bz * abs(lvel[4]) * lvel[4]
            f2 -= 0.5 * rho * bx * by * abs(lvel[5]) * lvel[5]
            t0 -= rho * bx * (by**4 + bz**4) * abs(lvel[0]) * lvel[0] / 64.0
            t1 -= rho * by * (bx**4 + bz**4) * abs(lvel[1]) * lvel[1] / 64.0
            t2 -= rho * bz * (bx**4 + by**4) * abs(lvel[2]) * lvel[2] / 64.0
        # rotate to the world frame
        put(frc[0:3], mv3(ximat, (t0, t1, t2)))
        put(frc[3:6], mv3(ximat, (f0, f1, f2)))
        apply_ft(m, d, b, frc[3:6], frc[0:3], xipos, i, d.qfrc_fluid[b])


@kernel
def passive(m, d, b):
    """qfrc_spring, qfrc_damper, qfrc_fluid and their sum qfrc_passive for row b."""
    for i in range(m.nv):
        d.qfrc_spring[b, i] = 0.0
        d.qfrc_damper[b, i] = 0.0
        d.qfrc_fluid[b, i] = 0.0
        d.qfrc_passive[b, i] = 0.0
    if m.opt_disableflags & T.DSBL_SPRING and m.opt_disableflags & T.DSBL_DAMPER:
        return
    _spring_damper(m, d, b)
    if m.opt_density > 0 or m.opt_viscosity > 0:
        _fluid(m, d, b)
    for i in range(m.nv):
        d.qfrc_passive[b, i] = d.qfrc_spring[b, i] + d.qfrc_damper[b, i] + d.qfrc_fluid[b, i]
