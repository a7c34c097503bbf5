"""Stage 8, actuation: transmissions, then gain and bias, clamped to ranges.

Transmission (gear g): a joint actuator has length g q and moment g on the joint's dof;
a tendon actuator has length g ten_length and moment g ten_J.
actuator_velocity = moment . qvel.

Force (MuJoCo's general actuator, no activation dynamics):

    u = clamp(ctrl, ctrlrange)           if ctrllimited
    gain = gainprm[0]                                        (fixed)
         = gainprm[0] + gainprm[1] length + gainprm[2] velocity  (affine)
    bias = 0 (none)  or  biasprm[0] + biasprm[1] length + biasprm[2] velocity  (affine)
    force = clamp(gain u + bias, forcerange)   if forcelimited

and qfrc_actuator = moment^T force. `motor`, `position` and `velocity` are the special
cases MuJoCo's compiler writes into these parameters.
"""

from engine import types as T
from engine.jit import kernel
from engine.warning import is_bad, warn


@kernel
def transmission(m, d, b):
    """actuator_length and actuator_moment of row b (MuJoCo's mj_transmission)."""
    for a in range(m.nu):
        g = m.actuator_gear[a]
        mom = d.actuator_moment[b, a]
        for i in range(m.nv):
            mom[i] = 0.0
        tid = m.actuator_trnid[a]
        if m.actuator_trntype[a] == T.TRN_JOINT:
            d.actuator_length[b, a] = g * d.qpos[b, m.jnt_qposadr[tid]]
            mom[m.jnt_dofadr[tid]] = g
        else:
            d.actuator_length[b, a] = g * d.ten_length[b, tid]
            for i in range(m.nv):
                mom[i] = g * d.ten_J[b, tid, i]


@kernel
def actuator_velocity(m, d, b):
    """actuator_velocity = moment . qvel for row b."""
    for a in range(m.nu):
        s = 0.0
        for i in range(m.nv):
            s += d.actuator_moment[b, a, i] * d.qvel[b, i]
        d.actuator_velocity[b, a] = s


@kernel
def clamped_ctrl(m, d, b, a, clamp):
    """ctrl of actuator a clamped to its ctrlrange if limited and clamping is on (a NaN
    stays NaN)."""
    u = d.ctrl[b, a]
    if clamp and m.actuator_ctrllimited[a]:
        if u < m.actuator_ctrlrange[a, 0]:
            u = m.actuator_ctrlrange[a, 0]
        elif u > m.actuator_ctrlrange[a, 1]:
            u = m.actuator_ctrlrange[a, 1]
    return u


@kernel
def first_bad_ctrl(m, d, b, clamp):
    """The first actuator whose clamped control is NaN, inf or beyond MAXVAL, or -1."""
    for a in range(m.nu):
        if is_bad(clamped_ctrl(m, d, b, a, clamp)):
            return a
    return -1


@kernel
def actuation(m, d, b):
    """actuator_force and qfrc_actuator of row b (MuJoCo's mj_fwdActuation)."""
    qfrc = d.qfrc_actuator[b]
    for i in range(m.nv):
        qfrc[i] = 0.0
    force = d.actuator_force[b]
    for a in range(m.nu):
        force[a] = 0.0
    if m.nu == 0 or m.opt_disableflags & T.DSBL_ACTUATION:
        return
    clamp = not (m.opt_disableflags & T.DSBL_CLAMPCTRL)
    bad = first_bad_ctrl(m, d, b, clamp)
    if bad >= 0:  # MuJoCo takes every control as 0 (mjWARN_BADCTRL)
        warn(d, b, T.WARN_BADCTRL, bad)
    for a in range(m.nu):
        u = 0.0 if bad >= 0 else clamped_ctrl(m, d, b, a, clamp)
        length = d.actuator_length[b, a]
        vel = d.actuator_velocity[b, a]
        gp = m.actuator_gainprm[a]
        gain = gp[0]
        if m.actuator_gaintype[a] == T.GAIN_AFFINE:
            gain = gp[0] + gp[1] * length + gp[2] * vel
        f = gain * u
        if m.actuator_biastype[a] == T.BIAS_AFFINE:
            bp = m.actuator_biasprm[a]
            f += bp[0] + bp[1] * length + bp[2] * vel
        if m.actuator_forcelimited[a]:
            f = min(max(f, m.actuator_forcerange[a, 0]), m.actuator_forcerange[a, 1])
        force[a] = f
    for a in range(m.nu):
        f = force[a]
        for i in range(m.nv):
            qfrc[i] += d.actuator_moment[b, a, i] * f
