"""Stage 8, actuation: transmissions, then gain and bias, clamped to ranges.

Transmission (MuJoCo's mj_transmission). Each actuator has a length l and a moment row
r (nv), so that its scalar force f acts on the dofs as r^T f and l' = r . qvel:

- joint (hinge or slide, gear g = gear[0]): l = g q, r = g e_dof.
- tendon (fixed, g = gear[0]): l = g ten_length, r = g ten_J.
  (MuJoCo reads only gear[0] for these; the other five numbers are ignored, as there.)
- site s, no refsite: the actuator is a wrench at the site, gear = (force, torque) in
  the site frame, R_s its world orientation (site_xmat), J_p, J_r the point and rotation
  Jacobians of the site (world frame, mj_jacSite):

      l = 0,    r = J_p^T (R_s gear[0:3]) + J_r^T (R_s gear[3:6])

  so qfrc_actuator = r^T f is the generalized force of the world force f R_s gear[0:3]
  at the site and the world torque f R_s gear[3:6] (a thruster: f = thrust).
- site s with refsite t: the motion of s relative to t, measured in t's frame R_t:

      l = gear[0:3] . R_t^T (x_s - x_t)  +  gear[3:6] . log(q_t^-1 q_s)
      r = (J_p,s - J_p,t)^T (R_t gear[0:3]) + (J_r,s - J_r,t)^T (R_t gear[3:6])

  with the columns of the dofs the two sites share (the deepest common ancestor dof and
  its ancestors) set to zero, and each half skipped (no length, no moment) when its three
  gears are all zero. q_s = xquat(body) * site_quat is the site's world orientation, and
  log(q_t^-1 q_s) the rotation vector of mju_subQuat (in t's frame, angle in (-pi, pi]).
  This is what the MuJoCo 4.0.0 binary computes and what we test against; the C source
  we read forms site_quat * xquat (the other order), which differs for a rotated site.
  r is not exactly dl/dq (R_t's own motion is left out), as in MuJoCo.

actuator_velocity = moment . qvel.

Force (MuJoCo's general actuator):

    u = clamp(ctrl, ctrlrange)           if ctrllimited (every u = 0 if one is bad)
    gain = gainprm[0]                                        (fixed)
         = gainprm[0] + gainprm[1] length + gainprm[2] velocity  (affine)
    bias = 0 (none)  or  biasprm[0] + biasprm[1] length + biasprm[2] velocity  (affine)
    force = clamp(gain x + bias, forcerange)   if forcelimited

with input x = u for a stateless actuator, and qfrc_actuator = moment^T force. `motor`,
`position` and `velocity` are the special cases MuJoCo's compiler writes into these
parameters.

Activation dynamics (MuJoCo's dyntype; one activation act = act[actuator_actadr] per
stateful actuator, part of the state like qpos and qvel):

    integrator:           act_dot = u
    filter, filterexact:  act_dot = (u - act) / max(tau, MINVAL),  tau = dynprm[0]

and the force's input is x = act, or with actearly x = next_activation(act_dot), the
activation the integrator will give at the end of this step (mj_nextActivation):

    filterexact:  act + act_dot tau (1 - exp(-h / tau))   (exact for constant u)
    otherwise:    act + act_dot h
    then clamped to actrange if actlimited.

The integrators advance act with the same function (engine.integrate.advance); RK4 carries
act in its stages. With actuation disabled, act_dot is left as it was and act does not
change (as MuJoCo).

A servo on a rotation (site with refsite, gear[0:3] = 0; fixed gain, affine bias with
biasprm[1] = -gainprm[0], as `position` writes) has a periodic setpoint,
P = 2 pi |gear[3:6]|: before the gain, u is replaced by its representative nearest the
length, u <- u - P round((u - length) / P) (halves away from zero), so the servo turns
the short way round (MuJoCo's wrapSetpoint).
"""

import math

from robodyn.engine import types as T
from robodyn.engine.jacobian import apply_ft_chain, last_dof
from robodyn.engine.jit import kernel
from robodyn.engine.spatial import mtv3, mv3, qmul, qsub
from robodyn.engine.types import MINVAL
from robodyn.engine.warning import is_bad, warn


@kernel
def _common_dof(m, body0, body1):
    """The deepest dof that moves both bodies (on both ancestor chains), -1 if none."""
    d0 = last_dof(m, body0)
    d1 = last_dof(m, body1)
    if d0 < 0 or d1 < 0:
        return -1
    # a parent dof has a smaller index: step up the deeper chain until they meet
    while d0 != d1:
        if d0 < d1:
            d1 = m.dof_parentid[d1]
        else:
            d0 = m.dof_parentid[d0]
        if d0 < 0 or d1 < 0:
            return -1
    return d0


@kernel
def site_transmission(m, d, b, a, mom):
    """Length of site actuator a of row b, and its moment into mom (nv, zeroed)."""
    g = m.actuator_gear[a]
    s = m.actuator_trnid[a, 0]
    ref = m.actuator_trnid[a, 1]
    body = m.site_bodyid[s]
    pos = d.site_xpos[b, s]
    if ref < 0:
        # wrench (R_s gear) at the site: moment = J_p^T force + J_r^T torque, length 0
        rot = d.site_xmat[b, s]
        force = mv3(rot, (g[0], g[1], g[2]))
        torque = mv3(rot, (g[3], g[4], g[5]))
        apply_ft_chain(m, d, b, force, torque, pos, body, -1, 1.0, mom)
        d.actuator_length[b, a] = 0.0
        return
    rbody = m.site_bodyid[ref]
    rpos = d.site_xpos[b, ref]
    rmat = d.site_xmat[b, ref]
    length = 0.0
    force = (0.0, 0.0, 0.0)
    torque = (0.0, 0.0, 0.0)
    if g[0] != 0.0 or g[1] != 0.0 or g[2] != 0.0:
        # site position in the refsite frame, dotted with the force gear
        vec = mtv3(rmat, (pos[0] - rpos[0], pos[1] - rpos[1], pos[2] - rpos[2]))
        length += vec[0] * g[0] + vec[1] * g[1] + vec[2] * g[2]
        force = mv3(rmat, (g[0], g[1], g[2]))
    if g[3] != 0.0 or g[4] != 0.0 or g[5] != 0.0:
        # world orientations xquat * site_quat (the binary's; its source has the other order)
        q = qmul(d.xquat[b, body], m.site_quat[s])
        rq = qmul(d.xquat[b, rbody], m.site_quat[ref])
        vec = qsub(q, rq)
        length += vec[0] * g[3] + vec[1] * g[4] + vec[2] * g[5]
        torque = mv3(rmat, (g[3], g[4], g[5]))
    # relative Jacobian (site minus refsite), the shared dofs' columns left at zero
    common = _common_dof(m, body, rbody)
    apply_ft_chain(m, d, b, force, torque, pos, body, common, 1.0, mom)
    apply_ft_chain(m, d, b, force, torque, rpos, rbody, common, -1.0, mom)
    d.actuator_length[b, a] = length


@kernel
def transmission(m, d, b):
    """actuator_length and actuator_moment of row b (MuJoCo's mj_transmission)."""
    for a in range(m.nu):
        mom = d.actuator_moment[b, a]
        for i in range(m.nv):
            mom[i] = 0.0
        trn = m.actuator_trntype[a]
        tid = m.actuator_trnid[a, 0]
        g = m.actuator_gear[a, 0]
        if trn == T.TRN_JOINT:
            d.actuator_length[b, a] = g * d.qpos[b, m.jnt_qposadr[tid]]
            mom[m.jnt_dofadr[tid]] = g
        elif trn == T.TRN_TENDON:
            d.actuator_length[b, a] = g * d.ten_length[b, tid]
            for i in range(m.nv):
                mom[i] = g * d.ten_J[b, tid, i]
        else:
            site_transmission(m, d, b, a, mom)


@kernel
def actuator_velocity(m, d, b):
    """actuator_velocity = moment . qvel for row b; 0 with actuation disabled, as MuJoCo's
    mj_fwdVelocity leaves it (an actuatorvel sensor then reads 0)."""
    if m.opt_disableflags & T.DSBL_ACTUATION:
        for a in range(m.nu):
            d.actuator_velocity[b, a] = 0.0
        return
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
def wrap_period(m, a):
    """Period of actuator a's setpoint, 0 if it has none (MuJoCo's wrapPeriod).

    A servo (fixed gain, affine bias with biasprm[1] = -gainprm[0], no dynamics) on a site
    transmission with a refsite and a purely rotational gear has a length that is an angle
    times |gear[3:6]|: its setpoint is periodic with 2 pi |gear[3:6]|.
    """
    if m.actuator_trntype[a] != T.TRN_SITE or m.actuator_trnid[a, 1] < 0:
        return 0.0
    if m.actuator_gaintype[a] != T.GAIN_FIXED or m.actuator_biastype[a] != T.BIAS_AFFINE:
        return 0.0
    if m.actuator_gainprm[a, 0] != -m.actuator_biasprm[a, 1]:
        return 0.0
    g = m.actuator_gear[a]
    if g[0] != 0.0 or g[1] != 0.0 or g[2] != 0.0:
        return 0.0
    return 2.0 * math.pi * math.sqrt(g[3] * g[3] + g[4] * g[4] + g[5] * g[5])


@kernel
def _round_int(x):
    """x rounded to the nearest integer, halves away from zero, clamped to the int32 range
    (MuJoCo's mju_round: C's round, then int)."""
    if x > 2147483647.0:
        return 2147483647.0
    if x < -2147483648.0:
        return -2147483648.0
    t = float(math.trunc(x))
    if abs(x - t) >= 0.5:  # x - trunc(x) is exact
        t += 1.0 if x > 0 else -1.0
    return t


@kernel
def next_activation(m, d, b, a, act_dot):
    """act of stateful actuator a of row b one step later under act_dot, clamped to its
    actrange if actlimited (MuJoCo's mj_nextActivation): filterexact integrates exactly,
    act + act_dot tau (1 - exp(-h / tau)); integrator and filter by Euler, act + act_dot h."""
    act = d.act[b, m.actuator_actadr[a]]
    if m.actuator_dyntype[a] == T.DYN_FILTEREXACT:
        # for constant u: act(h) = u + (act - u) exp(-h/tau), and act_dot tau = u - act
        tau = max(MINVAL, m.actuator_dynprm[a, 0])
        act = act + act_dot * tau * (1.0 - math.exp(-m.opt_timestep / tau))
    else:
        act = act + act_dot * m.opt_timestep
    if m.actuator_actlimited[a]:
        lo = m.actuator_actrange[a, 0]
        hi = m.actuator_actrange[a, 1]
        act = lo if act < lo else (hi if act > hi else act)  # a NaN passes, as mju_clip
    return act


@kernel
def activation_dot(m, d, b, a, u):
    """act_dot of stateful actuator a of row b from its (clamped) control u."""
    adr = m.actuator_actadr[a]
    if m.actuator_dyntype[a] == T.DYN_INTEGRATOR:
        d.act_dot[b, adr] = u
    else:  # filter, filterexact: first order towards u with time constant tau
        tau = max(MINVAL, m.actuator_dynprm[a, 0])
        d.act_dot[b, adr] = (u - d.act[b, adr]) / tau


@kernel
def actuation(m, d, b):
    """act_dot, actuator_force and qfrc_actuator of row b (MuJoCo's mj_fwdActuation)."""
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
    # every act_dot first: an actearly force reads its own actuator's
    for a in range(m.nu):
        if m.actuator_actadr[a] >= 0:
            activation_dot(m, d, b, a, 0.0 if bad >= 0 else clamped_ctrl(m, d, b, a, clamp))
    for a in range(m.nu):
        length = d.actuator_length[b, a]
        adr = m.actuator_actadr[a]
        if adr >= 0:  # stateful: the activation, now or (actearly) after this step
            if m.actuator_actearly[a]:
                u = next_activation(m, d, b, a, d.act_dot[b, adr])
            else:
                u = d.act[b, adr]
        else:
            u = 0.0 if bad >= 0 else clamped_ctrl(m, d, b, a, clamp)
            period = wrap_period(m, a)  # (the loader refuses activations on such servos)
            if period > 0.0:  # the setpoint nearest the length, on the circle
                u -= period * _round_int((u - length) / period)
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
