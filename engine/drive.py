"""Drives: controllers inside the stepping loop, acting on the model's motors every step.

engine.step's loop runs each physics step as MuJoCo's mj_step1 / mj_step2 split: the
position and velocity stages, then the drive, then actuation, acceleration and integration.
A drive sets the controls of motors (fixed gain, no bias, a joint transmission on a 1-dof
joint) from the state of that very step, as a real servo does between two samples:

- DRIVE_PD, before the actuation stage: joint position targets q*,
      tau = clamp(kp (q* - q) - kd qdot [+ g(q)], the motor's force limits),
  with g(q) = qfrc_bias(q, qdot = 0), the gravity load at the dof, INSIDE the clamp (a
  compensation added outside would let the joint exceed its motor's rating).
- DRIVE_ACCELERATION, after the acceleration stage: a commanded joint acceleration a.
  Without constraint rows qacc is affine in the motor force, M qacc = qfrc_smooth(f), so
      qacc_i(f0 + df) = qacc_i(f0) + (M^-1)_ii g df,   df = (a - qacc_i) / ((M^-1)_ii g)
  with g the gear; one solve with M's factor gives x = M^-1 e_i, and every quantity that
  depends on the force (actuator_force, qfrc_actuator, qfrc_smooth, qacc_smooth, qacc) moves
  by the same linear change. (A crane's trolley drive takes acceleration commands this way;
  the payload's dynamics are left to the engine's M and bias force.)

Both write the motor's ctrl, so the state of a row stays what MuJoCo would need to
reproduce it (ctrl given to mj_step gives the same step), and both saturate at the motor's
ctrlrange (times its gain) and forcerange. `index[j] = (dof, actuator)` and `gain[j] =
(kp, kd)` describe component j; `target` holds the row's commands.
"""

from robodyn.engine import types as T
from robodyn.engine.factor import solve_ld
from robodyn.engine.jit import job_unit, kernel
from robodyn.engine.job import job_at
from robodyn.engine.rne import rne_at


@kernel
def motor_force_limits(m, act):
    """(lo, hi): the force a motor can exert, from its ctrlrange (times its gain, when ctrl
    is clamped) and its forcerange; (-inf, inf) when neither limits it."""
    lo = -1e300
    hi = 1e300
    k = m.actuator_gainprm[act, 0]
    if m.actuator_ctrllimited[act] and not (m.opt_disableflags & T.DSBL_CLAMPCTRL):
        a = m.actuator_ctrlrange[act, 0] * k
        c = m.actuator_ctrlrange[act, 1] * k
        lo = max(lo, min(a, c))
        hi = min(hi, max(a, c))
    if m.actuator_forcelimited[act]:
        lo = max(lo, m.actuator_forcerange[act, 0])
        hi = min(hi, m.actuator_forcerange[act, 1])
    return lo, hi


@kernel
def _clamp(x, lo, hi):
    return min(max(x, lo), hi)


@kernel
def gravity_load(m, d, b, out):
    """out (nv) = qfrc_bias at row b's configuration with qvel = 0: gravity alone (after
    the position stage). Uses scratch_cvel, scratch_cdof_dot, scratch_v[b, 5], scratch_body."""
    zero_cvel = d.scratch_cvel[b]
    zero_cdof_dot = d.scratch_cdof_dot[b]
    zero_v = d.scratch_v[b, 5]
    for i in range(m.nbody):
        for k in range(6):
            zero_cvel[i, k] = 0.0
    for i in range(m.nv):
        zero_v[i] = 0.0
        for k in range(6):
            zero_cdof_dot[i, k] = 0.0
    work = d.scratch_body[b]
    rne_at(m, d, b, zero_v, zero_cvel, zero_cdof_dot, True, False, zero_v, out, work[0], work[1])


@kernel
def pd_drive(m, d, b, index, gain, target, gravcomp):
    """ctrl of each component's motor for tau = clamp(kp (q* - q) - kd qdot [+ g], limits)
    at row b's current state (after the position and velocity stages). Uses scratch_v[b, 4]
    for g when gravcomp."""
    g = d.scratch_v[b, 4]
    if gravcomp:
        gravity_load(m, d, b, g)
    for j in range(index.shape[0]):
        dof = index[j, 0]
        act = index[j, 1]
        qadr = m.jnt_qposadr[m.dof_jntid[dof]]
        tau = gain[j, 0] * (target[j] - d.qpos[b, qadr]) - gain[j, 1] * d.qvel[b, dof]
        if gravcomp:
            tau += g[dof]
        lo, hi = motor_force_limits(m, act)
        f = _clamp(tau / d.actuator_moment[b, act, dof], lo, hi)  # tau = moment * force
        d.ctrl[b, act] = f / m.actuator_gainprm[act, 0]


@kernel
def acceleration_drive(m, d, b, index, target):
    """Motor index[0, 1] gives dof index[0, 0] the acceleration target[0] (after the
    acceleration stage of row b; the model has no constraint rows). Uses scratch_v[b, 0]."""
    dof = index[0, 0]
    act = index[0, 1]
    x = d.scratch_v[b, 0]
    for i in range(m.nv):
        x[i] = 0.0
    x[dof] = 1.0
    solve_ld(x, d.qLD[b], d.qLDiagInv[b], m)  # x = M^-1 e_dof
    g = d.actuator_moment[b, act, dof]
    f0 = d.actuator_force[b, act]
    lo, hi = motor_force_limits(m, act)
    f = _clamp(f0 + (target[0] - d.qacc[b, dof]) / (x[dof] * g), lo, hi)
    d.ctrl[b, act] = f / m.actuator_gainprm[act, 0]
    d.actuator_force[b, act] = f
    dq = g * (f - f0)  # change of the generalized force on dof
    d.qfrc_actuator[b, dof] += dq
    d.qfrc_smooth[b, dof] += dq
    for i in range(m.nv):
        d.qacc_smooth[b, i] += x[i] * dq
        d.qacc[b, i] += x[i] * dq


@job_unit
def pd_drive_unit(m, d, b, jp):
    """pd_drive of row b with the drive of the Job record at jp (its index, gains, row b's
    targets and the gravity-compensation flag)."""
    job = job_at(jp)
    pd_drive(m, d, b, job.index, job.gain, job.target[b], job.flags & T.STEP_GRAVITY_COMPENSATION)
    return 0


@job_unit
def acceleration_drive_unit(m, d, b, jp):
    """acceleration_drive of row b with the drive of the Job record at jp."""
    job = job_at(jp)
    acceleration_drive(m, d, b, job.index, job.target[b])
    return 0
