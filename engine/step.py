"""Batched drivers: one compiled call advances every row of the batch.

The entry takes the addresses of the bound Model records (one per row: `engine.binding`'s
model_table), of the Data record and of the call's Job record (engine.job: what to do, with
which drive and records), and the thread count, so a call from Python costs well under a
microsecond. Rows share nothing: with nthread > 1 the batch is split into nthread
contiguous blocks that numba's threads run at once (`prange`); the pipeline itself is
reached through the model's unit addresses (`m.unit_forward`, `m.unit_integrate`, ...), so
a parallel loop compiles in seconds.

A row whose state, mocap pose or acceleration is bad (NaN, inf or beyond MuJoCo's 1e10), or
that found more contacts than its buffer holds, is flagged in `d.status` and not advanced,
so the Python layer can raise with the row, the step and the reason while its state is
intact; with STEP_RESET_BAD a bad state or acceleration resets the row instead, as MuJoCo
does (a bad mocap pose, an input the physics never writes, fails the row either way).
Warnings are counted per row in `d.warning`. Every entry returns the number of flagged and
of warned rows, so Python looks at `status` and `warning` only when something happened.
"""

import math

from numba import prange

from robodyn.engine import types as T
from robodyn.engine.jit import kernel, outline, parallel_entry
from robodyn.engine.job import JOB_FORWARD, JOB_STEP, job_address, job_at
from robodyn.engine.ptr import call_pair_unit, call_unit, data_at, model_at
from robodyn.engine.warning import first_bad, is_bad, warn


@outline
def reset_row(m, d, b):
    """Row b back to the model's initial state (MuJoCo's mj_resetData for the state):
    time 0, qpos0, zero velocities, activations (and act_dot, which a forward pass with
    actuation disabled leaves as it is), controls, applied forces and warm start, equality
    constraints as the model declares them, mocap bodies at their body_pos and body_quat; the
    position and velocity stages no longer current (posvel_current)."""
    d.time[b] = 0.0
    for i in range(m.nq):
        d.qpos[b, i] = m.qpos0[i]
    for i in range(m.nv):
        d.qvel[b, i] = 0.0
        d.qfrc_applied[b, i] = 0.0
        d.qacc_warmstart[b, i] = 0.0
    for i in range(m.na):
        d.act[b, i] = 0.0
        d.act_dot[b, i] = 0.0
    for i in range(m.nu):
        d.ctrl[b, i] = 0.0
    for i in range(m.nbody):
        for k in range(6):
            d.xfrc_applied[b, i, k] = 0.0
    for i in range(m.neq):
        d.eq_active[b, i] = m.eq_active0[i]
    for i in range(m.nbody):
        k = m.body_mocapid[i]
        if k >= 0:
            for c in range(3):
                d.mocap_pos[b, k, c] = m.body_pos[i, c]
            for c in range(4):
                d.mocap_quat[b, k, c] = m.body_quat[i, c]
    d.posvel_current[b] = 0


@kernel
def mocap_ok(m, d, b):
    """True if every mocap_pos and mocap_quat number of row b is good (not NaN, inf or
    beyond MAXVAL). They are inputs the physics never writes, so a bad one is the caller's
    error: the row fails whatever STEP_RESET_BAD says (MuJoCo does not check them)."""
    for k in range(m.nmocap):
        for c in range(3):
            if is_bad(d.mocap_pos[b, k, c]):
                return False
        for c in range(4):
            if is_bad(d.mocap_quat[b, k, c]):
                return False
    return True


@kernel
def state_ok(m, d, b, reset):
    """MuJoCo's mj_checkPos and mj_checkVel for row b: a bad qpos or qvel is counted
    (WARN_BADQPOS / WARN_BADQVEL); with `reset` the row is reset and stepping goes on,
    otherwise it fails. A bad mocap pose (mocap_ok) always fails. Returns False if the step
    must not run."""
    if not mocap_ok(m, d, b):
        return False
    i = first_bad(d.qpos[b], m.nq)
    kind = T.WARN_BADQPOS
    if i < 0:
        i = first_bad(d.qvel[b], m.nv)
        kind = T.WARN_BADQVEL
    if i < 0:
        return True
    warn(d, b, kind, i)
    if reset:
        reset_row(m, d, b)
    return reset


@kernel
def acc_ok(m, d, b):
    """True if the forward pass of row b can be integrated: every contact fit in the
    buffer (contact_lost == 0) and no qacc is bad (counted as WARN_BADQACC)."""
    if d.contact_lost[b] > 0:
        return False
    i = first_bad(d.qacc[b], m.nv)
    if i >= 0:
        warn(d, b, T.WARN_BADQACC, i)
        return False
    return True


@kernel
def same_bits(x, y):
    """True if the floats x and y are the same number bit for bit (0.0 and -0.0 differ; a
    NaN equals nothing, so a NaN input is never taken as unchanged)."""
    return x == y and math.copysign(1.0, x) == math.copysign(1.0, y)


@kernel
def keep_posvel(m, d, b):
    """Mark row b's position and velocity stages current (posvel_current = 1), keeping the
    inputs of Data they read: qpos, qvel, mocap_pos, mocap_quat and eq_active (kinematics,
    tendons, collision, constraint rows, transmission, com_vel, passive and bias read no
    other; the Model's parameters change only through Python, which clears the flag)."""
    for i in range(m.nq):
        d.posvel_qpos[b, i] = d.qpos[b, i]
    for i in range(m.nv):
        d.posvel_qvel[b, i] = d.qvel[b, i]
    for k in range(m.nmocap):
        for c in range(3):
            d.posvel_mocap_pos[b, k, c] = d.mocap_pos[b, k, c]
        for c in range(4):
            d.posvel_mocap_quat[b, k, c] = d.mocap_quat[b, k, c]
    for i in range(m.neq):
        d.posvel_eq_active[b, i] = d.eq_active[b, i]
    d.posvel_current[b] = 1


@kernel
def posvel_kept(m, d, b):
    """True if row b's position and velocity stages are current (keep_posvel) and every
    input they read is still, bit for bit, what they read: nothing was written into qpos,
    qvel, mocap_pos, mocap_quat or eq_active since."""
    if d.posvel_current[b] == 0:
        return False
    for i in range(m.nq):
        if not same_bits(d.qpos[b, i], d.posvel_qpos[b, i]):
            return False
    for i in range(m.nv):
        if not same_bits(d.qvel[b, i], d.posvel_qvel[b, i]):
            return False
    for k in range(m.nmocap):
        for c in range(3):
            if not same_bits(d.mocap_pos[b, k, c], d.posvel_mocap_pos[b, k, c]):
                return False
        for c in range(4):
            if not same_bits(d.mocap_quat[b, k, c], d.posvel_mocap_quat[b, k, c]):
                return False
    for i in range(m.neq):
        if d.eq_active[b, i] != d.posvel_eq_active[b, i]:
            return False
    return True


@kernel
def forward_row(m, d, b):
    """mj_forward for row b: dynamics up to qacc, then the sensors."""
    call_unit(m.unit_forward, m, d, b)
    if m.unit_sensors != 0:
        call_unit(m.unit_sensors, m, d, b)


@outline
def forward_for_step(m, d, b, job, drive, posvel_done):
    """The forward pass of one step of row b with its drive (mj_step1, the drive, mj_step2
    up to the sensors): `drive` is DRIVE_NONE or the job's drive, whose (dof, actuator)
    pairs, gains and commands the job record holds. With posvel_done the position and
    velocity stages are those of the state already (posvel_kept) and only the acceleration
    stage runs, as dm_control's mj_step2 after mj_step1. Returns acc_ok."""
    flags = job.flags
    if drive == T.DRIVE_PD:  # Simulator.drive compiled and set the split forward and drive units
        if not posvel_done:
            call_unit(m.unit_forward_posvel, m, d, b)
        call_pair_unit(m.unit_drive_pd, m, d, b, job_address(job))  # engine.drive.pd_drive_unit
        call_unit(m.unit_forward_acc, m, d, b)
    elif posvel_done:  # STEP_OBSERVE_POSVEL: Simulator.step set unit_forward_acc
        call_unit(m.unit_forward_acc, m, d, b)
    else:
        call_unit(m.unit_forward, m, d, b)
    if drive == T.DRIVE_ACCELERATION:
        call_pair_unit(m.unit_drive_acceleration, m, d, b, job_address(job))
    if not (flags & T.STEP_OBSERVE_END) and m.unit_sensors != 0:
        call_unit(m.unit_sensors, m, d, b)
    return acc_ok(m, d, b)


@outline
def step_row(m, d, b, job, nstep, drive):
    """nstep steps of row b, each MuJoCo's mj_step1 / mj_step2 with a drive between them:
    the state check; position and velocity stages; a PD drive sets its motors' ctrl;
    actuation and acceleration; an acceleration drive sets its motor's force; sensors
    (unless STEP_OBSERVE_END in job.flags); the acceleration and contact-buffer check;
    integration. With STEP_OBSERVE_END, one forward pass after the last step leaves the
    sensors (and every derived quantity) at the final state instead; with
    STEP_OBSERVE_POSVEL, the position and velocity stages and their sensors (mj_step1) leave
    those at the final state and the acceleration stage's at the last step's start, and mark
    them current (keep_posvel).

    The first step of a STEP_OBSERVE_POSVEL call skips the position and velocity stages
    (runs the acceleration stage alone, as dm_control's mj_step2 after the last control
    step's mj_step1) when the last call left them current and nothing they read has changed
    since, bit for bit (posvel_kept), and the integrator is not RK4 (dm_control steps RK4
    with a whole mj_step). The results are the same bits as recomputing them; each such
    step counts in d.posvel_reused. Any step clears the mark (posvel_current) before it
    integrates, and so do a reset and (in Python) forward, restore, a parameter change,
    collision and inverse.

    A bad qpos, qvel (before the step) or qacc (after its forward pass) is counted in
    d.warning; with STEP_RESET_BAD the row is reset and the step goes on from the initial
    state, as MuJoCo's mj_step does, otherwise the step fails.

    drive: DRIVE_NONE, or the job's DRIVE_ACCELERATION or DRIVE_PD (engine.drive). Returns
    0, or the 1-based index of the step that failed (that step is not integrated)."""
    reset = job.flags & T.STEP_RESET_BAD
    posvel_end = job.flags & T.STEP_OBSERVE_POSVEL
    for k in range(nstep):
        if not state_ok(m, d, b, reset):
            return k + 1
        posvel_done = False
        if k == 0:
            posvel_done = posvel_end != 0 and m.opt_integrator != T.INT_RK4 and posvel_kept(m, d, b)
            d.posvel_current[b] = 0  # used up: this step integrates (or fails: the next recomputes)
            if posvel_done:
                d.posvel_reused[b] += 1
        if not forward_for_step(m, d, b, job, drive, posvel_done):
            if not reset or d.contact_lost[b] > 0:
                return k + 1
            reset_row(m, d, b)  # mj_checkAcc: reset, forward again, integrate
            if not forward_for_step(m, d, b, job, drive, False):
                return k + 1
        call_unit(m.unit_integrate, m, d, b)
    if job.flags & T.STEP_OBSERVE_END:
        forward_row(m, d, b)
    elif posvel_end:  # Simulator.step compiled and set these units
        call_unit(m.unit_forward_posvel, m, d, b)
        if m.unit_sensors != 0:
            call_unit(m.unit_sensors_posvel, m, d, b)
        keep_posvel(m, d, b)
    return 0


@kernel
def count_rows(d):
    """(rows with a non-zero status) + 2**32 (rows that counted a warning)."""
    failed = 0
    warned = 0
    for b in range(d.status.shape[0]):
        if d.status[b] != 0:
            failed += 1
        if d.warned[b] != 0:
            warned += 1
    return failed + (warned << 32)


@kernel
def block(B, nblock, k):
    """Rows [lo, hi) of block k when B rows are split into nblock contiguous blocks."""
    return k * B // nblock, (k + 1) * B // nblock


@outline
def rollout_row(m, d, b, job):
    """job.nstep steps of row b with job.ctrl[b, t] applied at step t, recording the state
    after each step (job.qpos, qvel, act) and the sensors of the state each step started
    from (job.sensordata), as mujoco.rollout does.
    Returns 0 or the 1-based index of the failed step; later records are left unwritten."""
    ctrl, qpos, qvel, act, sensordata = job.ctrl[b], job.qpos[b], job.qvel[b], job.act[b], job.sensordata[b]
    for t in range(job.nstep):
        for i in range(m.nu):
            d.ctrl[b, i] = ctrl[t, i]
        if step_row(m, d, b, job, 1, T.DRIVE_NONE) != 0:
            return t + 1
        for i in range(m.nsensordata):
            sensordata[t, i] = d.sensordata[b, i]
        for i in range(m.nq):
            qpos[t, i] = d.qpos[b, i]
        for i in range(m.nv):
            qvel[t, i] = d.qvel[b, i]
        for i in range(m.na):
            act[t, i] = d.act[b, i]
    return 0


@outline
def row_job(m, d, b, job):
    """One row's part of a call: JOB_FORWARD (forward_row, the position and velocity stages'
    mark cleared; 1 if qacc is bad or the contacts overflowed, or without running it if
    the mocap pose is bad), JOB_STEP (step_row with the job's drive) or JOB_ROLLOUT
    (rollout_row). Returns the row's status."""
    kind = job.kind
    if kind == JOB_FORWARD:
        d.posvel_current[b] = 0  # Simulator.forward: the caller may have changed anything
        if not mocap_ok(m, d, b):
            return 1
        forward_row(m, d, b)
        return 0 if acc_ok(m, d, b) else 1
    if kind == JOB_STEP:
        return step_row(m, d, b, job, job.nstep, job.drive)
    return rollout_row(m, d, b, job)


@outline
def run_block(mtab, d, job, lo, hi):
    """row_job for the rows lo..hi-1 that job.rows selects, each with its Model record
    (mtab[b]), each row's status into d.status (0 for the others) and its count of new
    warnings into d.warned."""
    rows = job.rows
    for b in range(lo, hi):
        d.status[b] = 0
        d.warned[b] = 0
        if rows[b]:
            d.status[b] = row_job(model_at(mtab[b]), d, b, job)


@parallel_entry
def run_rows(mtab, dp, jp, nthread):
    """row_job for every row the job selects: the one entry Python calls to run the batch.
    mtab (B,) holds the address of each row's Model record (the shared one, or a row's own
    physical parameters: engine.params), dp the Data record's, jp the Job record's
    (engine.job: what to do, with which drive and records). With nthread > 1 the rows are
    split into nthread contiguous blocks run on numba's threads. Returns count_rows: failed
    rows + 2**32 warned rows (0: nothing to report)."""
    d = data_at(dp)
    job = job_at(jp)
    B = d.status.shape[0]
    if nthread > 1:
        for k in prange(nthread):
            lo, hi = block(B, nthread, k)
            run_block(mtab, d, job, lo, hi)
    else:
        run_block(mtab, d, job, 0, B)
    return count_rows(d)
