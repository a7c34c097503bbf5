"""Drives as Python objects: an acceleration drive and a PD position drive on a model's motors.

The maths and the kernels are in engine.drive; the stepping loop that runs them between
the velocity and the acceleration stage of every physics step is engine.step's. A drive
here checks, once, that the motors it drives can be driven that way, and then steps a
Simulator with one command per row:

    drive = AccelerationDrive(model, actuator=0)
    drive.step(sim, accel, nstep=5)          # accel: (B,) commanded joint accelerations

    pd = PDDrive(model, actuators=[0, 1], kp=[400, 400], kd=[40, 40], gravity_compensation=True)
    pd.step(sim, targets, nstep=5)           # targets: (B, 2) joint positions q*

After `step`, `sim.data` holds the derived quantities (sensordata, xpos, qacc, ...) of the
final state (one forward pass after the last step), and ctrl holds the motors' commands of
the last step.
"""

from __future__ import annotations

import numpy as np

from robodyn.engine import types as T
from robodyn.engine.errors import ArgumentTypeError, IndexOutOfRangeError, InvalidArgumentError
from robodyn.engine.model import Model, model_digest


def check_motor(model: Model, actuator, what: str) -> tuple[int, int]:
    """(actuator, dof) if `actuator` is a motor (fixed gain, no bias, no activation dynamics,
    non-zero gain and gear) with a joint transmission on a slide or hinge joint; ValueError
    naming it otherwise."""
    if isinstance(actuator, bool) or not isinstance(actuator, int | np.integer):
        raise ArgumentTypeError(f"actuator must be an int, got {type(actuator).__name__}")
    if not 0 <= actuator < model.nu:
        raise IndexOutOfRangeError(f"actuator {actuator} out of range (model has {model.nu})")
    a = int(actuator)
    trn = int(model.actuator_trntype[a])
    if trn != T.TRN_JOINT:
        # a tendon or site actuator moves several dofs at once: no one joint to drive
        kind = {T.TRN_TENDON: "tendon", T.TRN_SITE: "site"}.get(trn, str(trn))
        raise InvalidArgumentError(
            f"actuator {a}: {what} needs a joint transmission, not a {kind} transmission"
        )
    if model.actuator_gaintype[a] != T.GAIN_FIXED or model.actuator_biastype[a] != T.BIAS_NONE:
        raise InvalidArgumentError(f"actuator {a}: {what} needs a motor (fixed gain, no bias)")
    if model.actuator_dyntype[a] != T.DYN_NONE:
        # its force follows act, not ctrl: setting ctrl cannot set this step's force
        raise InvalidArgumentError(f"actuator {a}: {what} needs a motor without activation dynamics")
    if model.actuator_gainprm[a, 0] == 0.0 or model.actuator_gear[a, 0] == 0.0:
        raise InvalidArgumentError(f"actuator {a}: zero gain or gear cannot drive its joint")
    jnt = int(model.actuator_trnid[a, 0])
    if model.jnt_type[jnt] not in (T.JNT_SLIDE, T.JNT_HINGE):
        raise InvalidArgumentError(f"actuator {a}: {what} needs a slide or hinge joint")
    return a, int(model.jnt_dofadr[jnt])


class _Drive:
    """What every drive shares: its motors, the loop's arguments, and the checked step."""

    kind = T.DRIVE_NONE
    what = "a drive"

    def __init__(self, model: Model, actuators, gain: np.ndarray, flags: int):
        pairs = [check_motor(model, a, self.what) for a in np.atleast_1d(actuators).tolist()]
        if not pairs and self.kind != T.DRIVE_NONE:
            raise InvalidArgumentError(f"{self.what} needs at least one actuator")
        dofs = [dof for _, dof in pairs]
        if len(set(dofs)) != len(dofs):
            raise InvalidArgumentError(f"{self.what}: two actuators drive the same dof ({dofs})")
        self.actuators = np.array([a for a, _ in pairs], dtype=np.int64)
        self.dofs = np.array(dofs, dtype=np.int64)
        self._index = np.ascontiguousarray(np.stack([self.dofs, self.actuators], axis=1), dtype=np.int32)
        self._gain = np.ascontiguousarray(gain, dtype=np.float64).reshape(len(pairs), 2)
        self._flags = int(flags | T.STEP_OBSERVE_END)
        self._digest = model_digest(model)

    def step(self, sim, command, nstep: int = 1) -> None:
        """Advance every row of `sim` by nstep physics steps under `command` ((B,) or
        (B, k): one value per row and driven dof). Raises NonFiniteError like
        Simulator.step; a bad command raises ValueError and steps nothing."""
        if sim.model_digest() != self._digest:
            raise InvalidArgumentError(
                f"{self.what} was made for another model: make one for this simulator's"
            )
        k = len(self.dofs)
        target = np.asarray(command, dtype=np.float64)
        if target.shape == (sim.batch,) and k == 1:
            target = target[:, None]
        if target.shape != (sim.batch, k):
            want = f"({sim.batch},) or ({sim.batch}, 1)" if k == 1 else f"({sim.batch}, {k})"
            raise InvalidArgumentError(f"command must have shape {want}, got {np.shape(command)}")
        if not np.all(np.isfinite(target)):
            raise InvalidArgumentError("command contains NaN or inf; nothing was stepped")
        if isinstance(nstep, bool) or not isinstance(nstep, int | np.integer) or nstep < 1:
            raise InvalidArgumentError(f"nstep must be an int >= 1, got {nstep!r}")
        self.run(sim, np.ascontiguousarray(target), int(nstep))

    def run(self, sim, target: np.ndarray, nstep: int) -> None:
        """step() for a caller that has checked its arguments already (an env's actuation, at
        the env's edge): `sim` of this drive's model, target a C-contiguous finite float64
        (B, k) array, nstep an int >= 1. Nothing is checked again."""
        sim.drive(self.kind, self._flags, self._index, self._gain, target, nstep)


class AccelerationDrive(_Drive):
    """Drives one motor so that its joint follows an acceleration command (engine.drive).

    A model that can have constraint rows is refused: the solver's forces would change the
    acceleration the motor force was chosen for.
    """

    kind = T.DRIVE_ACCELERATION
    what = "an acceleration drive"

    def __init__(self, model: Model, actuator: int):
        if model.nefcmax > 0:
            raise InvalidArgumentError(
                "an acceleration drive needs a model without constraints (its joint acceleration "
                'is set through M^-1 alone); disable them with <flag constraint="disable"/>'
            )
        super().__init__(model, [actuator], np.zeros(2), 0)
        self.actuator = int(self.actuators[0])
        self.dof = int(self.dofs[0])


class PDDrive(_Drive):
    """Holds each driven joint at a position target through its motor, every physics step:
    tau = clamp(kp (q* - q) - kd qdot [+ g(q)], the motor's force limits) (engine.drive).

    kp, kd: gains (N m / rad and N m s / rad, or N / m and N s / m), a scalar or one per
    actuator; gravity_compensation adds the gravity load g(q) at the joint inside the clamp.
    """

    kind = T.DRIVE_PD
    what = "a PD drive"

    def __init__(self, model: Model, actuators, kp, kd, gravity_compensation: bool = False):
        k = len(np.atleast_1d(actuators))
        kp = np.broadcast_to(np.asarray(kp, dtype=np.float64), (k,))
        kd = np.broadcast_to(np.asarray(kd, dtype=np.float64), (k,))
        if not (np.all(np.isfinite(kp)) and np.all(np.isfinite(kd))) or np.any(kp < 0) or np.any(kd < 0):
            raise InvalidArgumentError(
                f"kp and kd must be finite and >= 0, got kp={kp.tolist()}, kd={kd.tolist()}"
            )
        flags = T.STEP_GRAVITY_COMPENSATION if gravity_compensation else 0
        super().__init__(model, actuators, np.column_stack([kp, kd]), flags)
        self.kp, self.kd = kp.copy(), kd.copy()
        self.gravity_compensation = bool(gravity_compensation)
