"""Batched drivers: one compiled call advances every row of the batch.

Entry points take the addresses of the bound Model and Data records (`engine.binding`) and
plain integers, so a call from Python costs well under a microsecond. Rows share nothing:
with nthread > 1 the batch is split into nthread contiguous blocks that numba's threads
run at once (`prange`); the pipeline itself is reached through the model's unit addresses
(`m.unit_forward`, `m.unit_integrate`, ...), so a parallel loop compiles in seconds.

A row whose acceleration is not finite, or that found more contacts than its buffer holds,
is flagged in `d.status` and not advanced, so the Python layer can raise with the row, the
step and the reason while its state is intact. Every entry returns the number of flagged
rows, so Python looks at `status` only when something failed.
"""

import math

from numba import prange

from engine import types as T
from engine.drive import acceleration_drive, pd_drive
from engine.jit import kernel, parallel_entry
from engine.ptr import call_unit, data_at, model_at


@kernel
def acc_ok(m, d, b):
    """True if the forward pass of row b can be integrated: every contact fit in the
    buffer (contact_lost == 0) and qacc is finite."""
    if d.contact_lost[b] > 0:
        return False
    for i in range(m.nv):
        if not math.isfinite(d.qacc[b, i]):
            return False
    return True


@kernel
def forward_row(m, d, b):
    """mj_forward for row b: dynamics up to qacc, then the sensors."""
    call_unit(m.unit_forward_posvel, m, d, b)
    call_unit(m.unit_forward_acc, m, d, b)
    if m.unit_sensors != 0:
        call_unit(m.unit_sensors, m, d, b)


@kernel
def step_row(m, d, b, nstep, drive, flags, index, gain, target):
    """nstep steps of row b, each MuJoCo's mj_step1 / mj_step2 with a drive between them:
    position and velocity stages; a PD drive sets its motors' ctrl; actuation and
    acceleration; an acceleration drive sets its motor's force; sensors (unless
    STEP_OBSERVE_END); the finiteness and contact-buffer check; integration. With
    STEP_OBSERVE_END, one forward pass after the last step leaves the sensors (and every
    derived quantity) at the final state instead.

    drive: DRIVE_NONE, DRIVE_ACCELERATION or DRIVE_PD; index (k, 2) int32 (dof, actuator),
    gain (k, 2) (kp, kd), target (k,) the row's commands (engine.drive). Returns 0, or the
    1-based index of the step whose qacc was not finite or whose contacts overflowed (that
    step is not integrated)."""
    observe_end = flags & T.STEP_OBSERVE_END
    for k in range(nstep):
        call_unit(m.unit_forward_posvel, m, d, b)
        if drive == T.DRIVE_PD:
            pd_drive(m, d, b, index, gain, target, flags & T.STEP_GRAVITY_COMPENSATION)
        call_unit(m.unit_forward_acc, m, d, b)
        if drive == T.DRIVE_ACCELERATION:
            acceleration_drive(m, d, b, index, target)
        if not observe_end and m.unit_sensors != 0:
            call_unit(m.unit_sensors, m, d, b)
        if not acc_ok(m, d, b):
            return k + 1
        call_unit(m.unit_integrate, m, d, b)
    if observe_end:
        forward_row(m, d, b)
    return 0


@kernel
def no_drive(d, b):
    """Empty (index, gain, target) for step_row without a drive, typed as a drive's are:
    zero-length views of Data arrays (nothing is allocated)."""
    return d.contact_geom[b, 0:0], d.scratch_v[b, 0:0], d.qacc[b, 0:0]


@kernel
def count_failed(d):
    """Rows with a non-zero status."""
    n = 0
    for b in range(d.status.shape[0]):
        if d.status[b] != 0:
            n += 1
    return n


@kernel
def block(B, nblock, k):
    """Rows [lo, hi) of block k when B rows are split into nblock contiguous blocks."""
    return k * B // nblock, (k + 1) * B // nblock


@parallel_entry
def forward_rows(mp, dp, nthread):
    """forward_row for every row; status 1 where qacc is not finite or contacts overflowed."""
    m = model_at(mp)
    d = data_at(dp)
    B = d.status.shape[0]
    if nthread > 1:
        for k in prange(nthread):
            lo, hi = block(B, nthread, k)
            for b in range(lo, hi):
                forward_row(m, d, b)
                d.status[b] = 0 if acc_ok(m, d, b) else 1
    else:
        for b in range(B):
            forward_row(m, d, b)
            d.status[b] = 0 if acc_ok(m, d, b) else 1
    return count_failed(d)


@parallel_entry
def step_rows(mp, dp, nstep, nthread):
    """nstep steps of every row, no drive; a row stops before its first failed step (status:
    its 1-based index within this call)."""
    m = model_at(mp)
    d = data_at(dp)
    B = d.status.shape[0]
    if nthread > 1:
        for k in prange(nthread):
            lo, hi = block(B, nthread, k)
            for b in range(lo, hi):
                index, gain, target = no_drive(d, b)
                d.status[b] = step_row(m, d, b, nstep, T.DRIVE_NONE, 0, index, gain, target)
    else:
        for b in range(B):
            index, gain, target = no_drive(d, b)
            d.status[b] = step_row(m, d, b, nstep, T.DRIVE_NONE, 0, index, gain, target)
    return count_failed(d)


@parallel_entry
def drive_rows(mp, dp, nstep, drive, flags, index, gain, target, nthread):
    """nstep steps of every row with a drive (step_row); target (B, k) holds each row's
    commands."""
    m = model_at(mp)
    d = data_at(dp)
    B = d.status.shape[0]
    if nthread > 1:
        for k in prange(nthread):
            lo, hi = block(B, nthread, k)
            for b in range(lo, hi):
                d.status[b] = step_row(m, d, b, nstep, drive, flags, index, gain, target[b])
    else:
        for b in range(B):
            d.status[b] = step_row(m, d, b, nstep, drive, flags, index, gain, target[b])
    return count_failed(d)


@kernel
def rollout_row(m, d, b, ctrl, qpos, qvel, sensordata):
    """len(ctrl) steps of row b with ctrl[t] applied at step t, recording the state after
    each step and the sensors of the state each step started from (as mujoco.rollout).
    Returns 0 or the 1-based index of the failed step; later records are left unwritten."""
    index, gain, target = no_drive(d, b)
    for t in range(ctrl.shape[0]):
        for i in range(m.nu):
            d.ctrl[b, i] = ctrl[t, i]
        if step_row(m, d, b, 1, T.DRIVE_NONE, 0, index, gain, target) != 0:
            return t + 1
        for i in range(m.nsensordata):
            sensordata[t, i] = d.sensordata[b, i]
        for i in range(m.nq):
            qpos[t, i] = d.qpos[b, i]
        for i in range(m.nv):
            qvel[t, i] = d.qvel[b, i]
    return 0


@parallel_entry
def rollout_rows(mp, dp, ctrl, qpos, qvel, sensordata, nthread):
    """rollout_row for every row: ctrl (B, T, nu) -> qpos (B, T, nq), qvel (B, T, nv),
    sensordata (B, T, nsensordata)."""
    m = model_at(mp)
    d = data_at(dp)
    B = d.status.shape[0]
    if nthread > 1:
        for k in prange(nthread):
            lo, hi = block(B, nthread, k)
            for b in range(lo, hi):
                d.status[b] = rollout_row(m, d, b, ctrl[b], qpos[b], qvel[b], sensordata[b])
    else:
        for b in range(B):
            d.status[b] = rollout_row(m, d, b, ctrl[b], qpos[b], qvel[b], sensordata[b])
    return count_failed(d)
