"""Acceleration drive: a motor whose command is its joint's acceleration (seed 000 §41).

A real crane's trolley drive, like most industrial axis drives, takes an acceleration
command and produces whatever force achieves it. With the smooth dynamics

    M qacc = qfrc_smooth(ctrl) = qfrc_smooth(0-change) + g k du e_i,

where the motor on dof i has moment g (the gear) and gain k, the acceleration of dof i is
linear in the control change du:

    qacc_i(u + du) = qacc_i(u) + (M^-1)_ii g k du.

So one solve with M's factor (x = M^-1 e_i) gives the control that makes qacc_i equal the
command a:  du = (a - qacc_i) / (x_i g k). The force is clamped to the motor's ctrl and
force ranges, as a real drive saturates; then every quantity that depends on the control
(actuator_force, qfrc_actuator, qfrc_smooth, qacc_smooth, qacc) is updated by the same
linear change, and the step integrates as usual. The payload's dynamics are never touched:
the drive only chooses the trolley force, through the engine's own M and bias force.
"""

from __future__ import annotations

import numpy as np
from numba import prange, types

from engine import types as T
from engine.binding import ensure_compiled
from engine.factor import solve_ld
from engine.jit import kernel, parallel_entry
from engine.model import Model
from engine.ptr import call_unit, data_at, model_at
from engine.step import acc_ok, block, count_failed, forward_row


@kernel
def accel_drive(m, d, b, act, dof, target):
    """Set ctrl[b, act] so that qacc[b, dof] = target (after forward_row for row b).

    act: a motor (fixed gain, no bias) with a joint transmission on 1-dof joint `dof`.
    Uses scratch_v[b, 0] for x = M^-1 e_dof. The force saturates at the motor's ranges.
    """
    x = d.scratch_v[b, 0]
    for i in range(m.nv):
        x[i] = 0.0
    x[dof] = 1.0
    solve_ld(x, d.qLD[b], d.qLDiagInv[b], m)  # x = M^-1 e_dof
    g = d.actuator_moment[b, act, dof]
    k = m.actuator_gainprm[act, 0]
    f0 = d.actuator_force[b, act]
    f = f0 + (target - d.qacc[b, dof]) / (x[dof] * g)  # actuator force that gives `target`
    if m.actuator_ctrllimited[act] and not (m.opt_disableflags & T.DSBL_CLAMPCTRL):
        lo = m.actuator_ctrlrange[act, 0] * k
        hi = m.actuator_ctrlrange[act, 1] * k
        f = min(max(f, min(lo, hi)), max(lo, hi))
    if m.actuator_forcelimited[act]:
        f = min(max(f, m.actuator_forcerange[act, 0]), m.actuator_forcerange[act, 1])
    d.ctrl[b, act] = f / k
    d.actuator_force[b, act] = f
    dq = g * (f - f0)  # change of the generalized force on dof
    d.qfrc_actuator[b, dof] += dq
    d.qfrc_smooth[b, dof] += dq
    for i in range(m.nv):
        d.qacc_smooth[b, i] += x[i] * dq
        d.qacc[b, i] += x[i] * dq


@kernel
def accel_step_row(m, d, b, nstep, act, dof, target):
    """nstep steps of row b with motor `act` driving dof `dof` at `target`; then a forward
    pass so sensordata belongs to the final state. Returns 0 or the failed step (1-based)."""
    for k in range(nstep):
        call_unit(m.unit_forward, m, d, b)
        if not acc_ok(m, d, b):
            return k + 1
        accel_drive(m, d, b, act, dof, target)
        call_unit(m.unit_integrate, m, d, b)
    forward_row(m, d, b)
    return 0


@parallel_entry
def step_accel_rows(mp, dp, nstep, act, dof, target, nthread):
    """nstep steps of every row with motor `act` driving dof `dof` at target[b] m/s^2
    (or rad/s^2); then a forward pass so sensordata belongs to the final state."""
    m = model_at(mp)
    d = data_at(dp)
    B = d.status.shape[0]
    if nthread > 1:
        for k in prange(nthread):
            lo, hi = block(B, nthread, k)
            for b in range(lo, hi):
                d.status[b] = accel_step_row(m, d, b, nstep, act, dof, target[b])
    else:
        for b in range(B):
            d.status[b] = accel_step_row(m, d, b, nstep, act, dof, target[b])
    return count_failed(d)


class AccelerationDrive:
    """Drives one motor so that its joint follows an acceleration command.

    drive = AccelerationDrive(model, actuator=0)
    drive.step(sim, accel, nstep=5)    # accel: (B,) commanded joint accelerations

    After `step`, `sim.data` holds derived quantities (sensordata, xpos, ...) of the final
    state (one extra forward pass), and ctrl holds the force command of the last substep.
    """

    def __init__(self, model: Model, actuator: int):
        self.actuator, self.dof = self._check(model, actuator)
        self._model = model
        i64 = types.int64
        target = types.Array(types.float64, 1, "C")
        ensure_compiled((), [(step_accel_rows, (i64, i64, i64, i64, i64, target, i64))])

    @staticmethod
    def _check(model: Model, actuator: int) -> tuple[int, int]:
        """(actuator, dof) if `actuator` of `model` can be driven by its acceleration."""
        if isinstance(actuator, bool) or not isinstance(actuator, int | np.integer):
            raise TypeError(f"actuator must be an int, got {type(actuator).__name__}")
        if not 0 <= actuator < model.nu:
            raise IndexError(f"actuator {actuator} out of range (model has {model.nu})")
        a = int(actuator)
        if model.nefcmax > 0:
            raise ValueError(
                "an acceleration drive needs a model without constraints (its joint acceleration "
                'is set through M^-1 alone); disable them with <flag constraint="disable"/>'
            )
        if model.actuator_trntype[a] != T.TRN_JOINT:
            raise ValueError(f"actuator {a}: an acceleration drive needs a joint transmission")
        if model.actuator_gaintype[a] != T.GAIN_FIXED or model.actuator_biastype[a] != T.BIAS_NONE:
            raise ValueError(f"actuator {a}: an acceleration drive needs a motor (fixed gain, no bias)")
        if model.actuator_gainprm[a, 0] == 0.0 or model.actuator_gear[a] == 0.0:
            raise ValueError(f"actuator {a}: zero gain or gear cannot drive its joint")
        jnt = int(model.actuator_trnid[a])
        if model.jnt_type[jnt] not in (T.JNT_SLIDE, T.JNT_HINGE):
            raise ValueError(f"actuator {a}: an acceleration drive needs a slide or hinge joint")
        return a, int(model.jnt_dofadr[jnt])

    def step(self, sim, accel, nstep: int = 1) -> None:
        """Advance every row of `sim` by nstep timesteps with this drive's joint
        accelerating at accel[b]. Raises NonFiniteError like Simulator.step."""
        if sim.model is not self._model and self._check(sim.model, self.actuator) != (
            self.actuator,
            self.dof,
        ):
            raise ValueError("this drive was made for another model: make one for the simulator's model")
        target = np.ascontiguousarray(accel, dtype=np.float64)
        if target.shape != (sim.batch,):
            raise ValueError(f"accel must have shape ({sim.batch},), got {target.shape}")
        if not np.all(np.isfinite(target)):
            raise ValueError("accel contains NaN or inf; nothing was stepped")
        if isinstance(nstep, bool) or not isinstance(nstep, int | np.integer) or nstep < 1:
            raise ValueError(f"nstep must be an int >= 1, got {nstep!r}")
        sim.run("step", step_accel_rows, int(nstep), self.actuator, self.dof, target)
