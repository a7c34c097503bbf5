"""Actuation: how a task's action reaches the model (the actuation mask and its kind).

One object decides what an action does, and everything that applies an action goes through
its `apply`: the task's env step, the engine linearization MPC plans with, PoseHold and the
tests. Component j of an action of k components means, by kind:

| kind           | component j                                   | the engine runs                      |
|----------------|-----------------------------------------------|--------------------------------------|
| "ctrl"         | control of actuator j, [-1, 1] mapped onto    | ctrl written, then the steps         |
|                | its ctrlrange (dm_control tasks); or, `raw`,  |                                      |
|                | the control itself in its ctrlrange           |                                      |
|                | (Gymnasium's MuJoCo tasks)                    |                                      |
| "force"        | generalized force on dof j (N or N m)         | qfrc_applied written, then the steps |
| "acceleration" | commanded acceleration of dof j, through the  | engine.control.AccelerationDrive     |
|                | motor on it (one dof; no constraint rows)     |                                      |
| "pd_target"    | position target q*_j = default_j + scale_j a, | engine.control.PDDrive, every step:  |
|                | [-1, 1] (legged robots: MuJoCo Playground,    | tau = clamp(kp (q* - q) - kd qdot    |
|                | Isaac Lab)                                    | [+ g(q)], the motor's limits)        |

`frame_skip` physics steps run per action, and the derived quantities (sensordata, ...)
afterwards belong to the final state (or, for "ctrl" and "force" with observe_end=False, to
the start of the last physics step, as after MuJoCo's mj_step). Every driven dof belongs to
a slide or hinge joint: a floating base (free joint) or a ball joint is never in the mask,
and asking for one is an error naming it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from robodyn.engine import types as T
from robodyn.engine.control import AccelerationDrive, PDDrive, check_motor
from robogym.errors import IndexOutOfRangeError, InvalidArgumentError

KINDS = ("ctrl", "force", "acceleration", "pd_target")


class Actuation:
    """An action's meaning for one model. Build it with a classmethod (`ctrl`, `force`,
    `acceleration`, `pd_target`) from a Physics, which looks every name up once.

    kind, dofs (k,) (the dof each component drives, -1 for none), low and high (k,) action
    bounds, actuators (k,) (all but "force"), and for "pd_target" default (k,), scale (k,), kp,
    kd (k,), gravity_compensation.
    """

    def __init__(
        self,
        model,
        kind: str,
        dofs,
        low,
        high,
        actuators=None,
        default=None,
        scale=None,
        kp=None,
        kd=None,
        gravity_compensation: bool = False,
        raw: bool = False,
    ):
        if kind not in KINDS:
            raise InvalidArgumentError(f"actuation kind must be one of {KINDS}, got {kind!r}")
        self.kind = kind
        self.dofs = np.asarray(dofs, dtype=np.int64).reshape(-1)
        k = len(self.dofs)
        self.low = np.broadcast_to(np.asarray(low, dtype=np.float64), (k,)).copy()
        self.high = np.broadcast_to(np.asarray(high, dtype=np.float64), (k,)).copy()
        self.actuators = None if actuators is None else np.asarray(actuators, dtype=np.int64).reshape(-1)
        self.model = model
        _check_mask(model, self.dofs)
        self.raw = bool(raw)
        if kind == "ctrl":
            if self.raw:  # the action is the control: ctrl = 0 + 1 * action, exactly
                self._mid, self._half = np.zeros(k), np.ones(k)
            else:
                self._mid, self._half = _ctrl_mapping(model, self.actuators)
        elif kind == "acceleration":
            if k != 1:
                raise InvalidArgumentError(f"an acceleration actuation drives one dof, got {k}")
            self._drive = AccelerationDrive(model, int(self.actuators[0]))
        elif kind == "pd_target":
            self.default = np.broadcast_to(np.asarray(default, dtype=np.float64), (k,)).copy()
            self.scale = np.broadcast_to(np.asarray(scale, dtype=np.float64), (k,)).copy()
            self._drive = PDDrive(model, self.actuators, kp, kd, gravity_compensation)
            self.kp, self.kd = self._drive.kp, self._drive.kd
            self.gravity_compensation = bool(gravity_compensation)
        if kind in ("acceleration", "pd_target"):
            driven = [check_motor(model, int(a), f"{kind} actuation")[1] for a in self.actuators]
            if driven != self.dofs.tolist():
                raise InvalidArgumentError(
                    f"actuators {self.actuators.tolist()} drive dofs {driven}, not {self.dofs}"
                )

    # --- builders (by name) ---------------------------------------------------------------------
    @classmethod
    def ctrl(cls, physics, actuators: Sequence[str]) -> Actuation:
        """Actions in [-1, 1] mapped onto each named actuator's ctrlrange (any gain and bias
        type; a joint transmission on a slide or hinge joint, or a tendon or site
        transmission, whose component drives no single dof: its entry in `dofs` is -1)."""
        model = physics.model
        ids = [physics.actuator_id(a) for a in actuators]
        dofs = [_joint_dof(model, a) for a in ids]
        return cls(model, "ctrl", dofs, -1.0, 1.0, actuators=ids)

    @classmethod
    def raw_ctrl(
        cls, physics, actuators: Sequence[str] | None = None, unlimited: float | None = None
    ) -> Actuation:
        """Actions that are the named actuators' controls themselves (every actuator, in
        the model's order, when None), bounded by each one's ctrlrange, as Gymnasium's MuJoCo
        envs take them (`data.ctrl[:] = action`). An actuator without a ctrlrange is refused,
        or, with `unlimited` given, bounded by +-unlimited (dm_control's action_spec bounds it
        by +-mjMAXVAL; MuJoCo clamps no such control)."""
        model = physics.model
        ids = list(range(model.nu)) if actuators is None else [physics.actuator_id(a) for a in actuators]
        dofs = [_joint_dof(model, a) for a in ids]
        lo, hi = model.actuator_ctrlrange[ids, 0].copy(), model.actuator_ctrlrange[ids, 1].copy()
        if unlimited is None:
            _ctrl_mapping(model, ids)  # every actuator needs its ctrlrange: the action's bounds
        else:
            if not 0 < unlimited < np.inf:
                raise InvalidArgumentError(f"unlimited must be a finite bound > 0, got {unlimited!r}")
            free = ~np.asarray(model.actuator_ctrllimited[ids], dtype=bool)
            lo[free], hi[free] = -unlimited, unlimited
        return cls(model, "ctrl", dofs, lo, hi, actuators=ids, raw=True)

    @classmethod
    def force(cls, physics, joints: Sequence[str], limit) -> Actuation:
        """Generalized forces on the named joints, |action_j| <= limit_j."""
        dofs = [physics.joint_dof(j) for j in joints]
        limit = np.broadcast_to(np.asarray(limit, dtype=np.float64), (len(dofs),))
        return cls(physics.model, "force", dofs, -limit, limit)

    @classmethod
    def acceleration(cls, physics, actuator: str, limit: float) -> Actuation:
        """The commanded acceleration of the joint the named motor drives, |a| <= limit."""
        a = physics.actuator_id(actuator)
        (jnt,) = _joints(physics.model, [a], [actuator], "acceleration")
        dof = physics.model.jnt_dofadr[jnt]
        return cls(physics.model, "acceleration", [dof], -limit, limit, actuators=[a])

    @classmethod
    def pd_target(
        cls, physics, actuators: Sequence[str], kp, kd, scale, default=None, gravity_compensation=False
    ) -> Actuation:
        """Position targets q* = default + scale * action (action in [-1, 1]) for the joints
        the named motors drive; default: the model's qpos0 at those joints."""
        ids = [physics.actuator_id(a) for a in actuators]
        model = physics.model
        jnts = _joints(model, ids, actuators, "pd_target")
        dofs = [model.jnt_dofadr[j] for j in jnts]
        if default is None:
            default = [model.qpos0[model.jnt_qposadr[j]] for j in jnts]
        return cls(model, "pd_target", dofs, -1.0, 1.0, ids, default, scale, kp, kd, gravity_compensation)

    def for_model(self, model) -> Actuation:
        """The same actuation for another Model of the same structure (e.g. the task's model
        loaded with contacts disabled, for a planner): actions mean the same there."""
        if (model.nq, model.nv, model.nu) != (self.model.nq, self.model.nv, self.model.nu):
            raise InvalidArgumentError(
                f"model has (nq, nv, nu) = {(model.nq, model.nv, model.nu)}, this actuation's "
                f"{(self.model.nq, self.model.nv, self.model.nu)}"
            )
        pd = self.kind == "pd_target"
        return Actuation(
            model,
            self.kind,
            self.dofs,
            self.low,
            self.high,
            self.actuators,
            self.default if pd else None,
            self.scale if pd else None,
            self.kp if pd else None,
            self.kd if pd else None,
            self.gravity_compensation if pd else False,
            self.raw,
        )

    # --- applying an action ----------------------------------------------------------------------
    def apply(
        self, sim, action: np.ndarray, nstep: int, observe_end: bool | str = True, default=None
    ) -> None:
        """Run nstep physics steps of every row of `sim` (a Simulator of this model) under
        `action` (B, k), taken as it is: the env checked it at its edge (shape, finite
        numbers) and clipped it into the box, so the drives run it unchecked; the derived
        quantities afterwards belong to the final state (the observation's), or with
        observe_end=False ("ctrl" and "force" only) to the start of the last physics step,
        as after MuJoCo's mj_step, or with observe_end="posvel" ("ctrl" and "force") the
        position and velocity stages to the final state and the acceleration stage to the last
        step's start, as after mj_step and mj_step1 (engine.Simulator.step). For "pd_target",
        `default` (B, k) gives each row its own targets' centre in place of the actuation's
        default pose (a tracking task's reference pose this step): q* = default + scale a."""
        a = np.ascontiguousarray(action, dtype=np.float64).reshape(sim.batch, len(self.dofs))
        d = sim.data
        if self.kind == "ctrl":
            d.ctrl[:, self.actuators] = self._mid + self._half * a
            sim.step(nstep, observe_end=observe_end)
        elif self.kind == "force":
            d.qfrc_applied[:, self.dofs] = a
            sim.step(nstep, observe_end=observe_end)
        elif self.kind == "acceleration":
            self._drive.run(sim, a, int(nstep))
        else:
            centre = self.default if default is None else default
            self._drive.run(sim, centre + self.scale * a, int(nstep))

    def __repr__(self) -> str:
        return f"Actuation({self.kind!r}, dofs={self.dofs.tolist()}, low={self.low}, high={self.high})"


def _joint_dof(model, actuator: int) -> int:
    """The dof actuator drives through a joint transmission; -1 for another transmission."""
    if model.actuator_trntype[actuator] != T.TRN_JOINT:
        return -1
    return int(model.jnt_dofadr[model.actuator_trnid[actuator, 0]])


def _joints(model, ids, names, kind: str) -> list[int]:
    """The joint each actuator drives; ValueError naming an actuator with a tendon or site
    transmission (the mask holds the one dof each actuator drives, and those have none)."""
    joints = []
    for a, name in zip(ids, names, strict=True):
        if model.actuator_trntype[a] != T.TRN_JOINT:
            trn = {T.TRN_TENDON: "tendon", T.TRN_SITE: "site"}.get(int(model.actuator_trntype[a]), "other")
            raise InvalidArgumentError(
                f"actuator {name!r}: a {kind!r} actuation needs a joint transmission, not a {trn} "
                "transmission (its mask holds the one dof each actuator drives)"
            )
        joints.append(int(model.actuator_trnid[a, 0]))
    return joints


def _check_mask(model, dofs: np.ndarray) -> None:
    """Every dof exists and belongs to a slide or hinge joint (never a floating base); -1
    marks a component that drives no single dof (a 'ctrl' actuator on a tendon or a site)."""
    for dof in dofs.tolist():
        if dof == -1:
            continue
        if not 0 <= dof < model.nv:
            raise IndexOutOfRangeError(f"dof {dof} out of range (model has {model.nv})")
        jnt = int(model.dof_jntid[dof])
        jtype = int(model.jnt_type[jnt])
        if jtype == T.JNT_FREE:
            raise InvalidArgumentError(
                f"dof {dof} belongs to free joint {jnt}: a floating base is never actuated"
            )
        if jtype == T.JNT_BALL:
            raise InvalidArgumentError(
                f"dof {dof} belongs to ball joint {jnt}: the mask holds slide and hinge dofs"
            )
    driven = [dof for dof in dofs.tolist() if dof != -1]
    if len(set(driven)) != len(driven):
        raise InvalidArgumentError(f"a dof appears twice in the actuation mask {dofs.tolist()}")


def _ctrl_mapping(model, actuators) -> tuple[np.ndarray, np.ndarray]:
    """(mid, half) so that ctrl = mid + half * action maps [-1, 1] onto each actuator's
    ctrlrange; an actuator without a ctrlrange is refused (the box would be unbounded)."""
    mids, halves = [], []
    for a in np.asarray(actuators).tolist():
        if not 0 <= a < model.nu:
            raise IndexOutOfRangeError(f"actuator {a} out of range (model has {model.nu})")
        if not model.actuator_ctrllimited[a]:
            raise InvalidArgumentError(
                f"actuator {a} has no ctrlrange: a 'ctrl' action needs one to scale onto"
            )
        lo, hi = model.actuator_ctrlrange[a]
        mids.append(0.5 * (lo + hi))
        halves.append(0.5 * (hi - lo))
    return np.array(mids), np.array(halves)
