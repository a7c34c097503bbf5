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
"""

import math

from engine import types as T
from engine.jacobian import apply_ft
from engine.jit import kernel
from engine.spatial import qnormalized, sub_quat, transform_spatial
from engine.types import MINVAL


@kernel
def _spring_damper(m, d, b):
    qpos = d.qpos[b]
    spring = d.qfrc_spring[b]
    damper = d.qfrc_damper[b]
    if not (m.opt_disableflags & T.DSBL_SPRING):
        dif = d.scratch_body[b, 0, 0]
        for j in range(m.njnt):
            k = m.jnt_stiffness[j]
            if k == 0.0:
                continue
            pa = m.jnt_qposadr[j]
            da = m.jnt_dofadr[j]
            jtype = m.jnt_type[j]
            if jtype == T.JNT_FREE:
                for t in range(3):
                    spring[da + t] = -k * (qpos[pa + t] - m.qpos_spring[pa + t])
                pa += 3
                da += 3
                jtype = T.JNT_BALL
            if jtype == T.JNT_BALL:
                quat = qnormalized(qpos[pa : pa + 4])
                sub_quat(dif, quat, m.qpos_spring[pa : pa + 4])
                for t in range(3):
                    spring[da + t] = -k * dif[t]
            else:
                spring[da] = -k * (qpos[pa] - m.qpos_spring[pa])
    if not (m.opt_disableflags & T.DSBL_DAMPER):
        for i in range(m.nv):
            damper[i] = -m.dof_damping[i] * d.qvel[b, i]
    for t in range(m.ntendon):
        k = 0.0 if m.opt_disableflags & T.DSBL_SPRING else m.tendon_stiffness[t]
        c = 0.0 if m.opt_disableflags & T.DSBL_DAMPER else m.tendon_damping[t]
        if k == 0.0 and c == 0.0:
            continue
        length = d.ten_length[b, t]
        lower = m.tendon_lengthspring[t, 0]
        upper = m.tendon_lengthspring[t, 1]
        x = 0.0
        if length > upper:
            x = length - upper
        elif length < lower:
            x = length - lower
        f_spring = -k * x
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
        frc[0] = ximat[0] * t0 + ximat[1] * t1 + ximat[2] * t2
        frc[1] = ximat[3] * t0 + ximat[4] * t1 + ximat[5] * t2
        frc[2] = ximat[6] * t0 + ximat[7] * t1 + ximat[8] * t2
        frc[3] = ximat[0] * f0 + ximat[1] * f1 + ximat[2] * f2
        frc[4] = ximat[3] * f0 + ximat[4] * f1 + ximat[5] * f2
        frc[5] = ximat[6] * f0 + ximat[7] * f1 + ximat[8] * f2
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
