"""PoseHold: a PD controller on a task's actuated dofs, with gains in physical units.

For an "acceleration" task (the drive realizes the acceleration through M and the bias force, so
no gravity term is needed):

    a = clip(kp (q* - q) - kv qdot, low, high),                kp = omega^2, kv = 2 zeta omega

For a "force" task, with gravity compensation g(q) = qfrc_bias(q, qdot = 0) at the actuated dofs:

    tau = clip(s (kp (q* - q) - kv qdot) + g(q), low, high),   s = M_ii if scale_by_inertia else 1

For a "ctrl" task whose actuators are motors (fixed gain, no bias) on the actuated joints, the
same torque law, clipped to the torque the motors can give (their control range through gain
and gear, intersected with their force range), then turned into the action that commands it:
action = (tau / (gear gain) - mid) / half, with [-1, 1] mapped onto ctrlrange = mid +- half.

Gravity is INSIDE the clip: clamping the tracking term and adding g outside it lets the real
ceiling become tau_max + g, so the torque exceeds the motor's rating (on a 1.9 m arm rated
400 N m it reached 1589 N m). With scale_by_inertia, kp = omega^2 and kv = 2 zeta omega are
properties of the response (rad/s), not of the link: a kp in N m/rad that is gentle on a heavy
shoulder can be unstable on a light wrist.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from robodyn import engine
from robodyn.engine import types as T
from robodyn.engine.control import check_motor
from robogym.errors import InvalidArgumentError

Readout = Callable[[object], tuple[np.ndarray, np.ndarray]]  # env -> (q (B, k), qdot (B, k))


class PoseHold:
    """PD hold of the actuated dofs at `target`, batched over the env's rows (Policy protocol).

    env: a RoboDynVectorEnv (or anything with .task, .physics, .num_envs)
    target: q* (k,) or (B, k), in the coordinates `readout` returns
    omega, zeta: natural frequency (rad/s) and damping ratio; scalars, (k,), (B, 1) or (B, k)
    kp, kv: explicit gains, overriding omega^2 and 2 zeta omega
    readout: env -> (q, qdot), each (B, k); default the engine's qpos, qvel of the actuated dofs
    """

    def __init__(
        self,
        env,
        target,
        omega,
        zeta=1.0,
        scale_by_inertia: bool = False,
        kp=None,
        kv=None,
        readout: Readout | None = None,
    ):
        self.actuation = env.task.actuation()
        self.kind = self.actuation.kind
        if self.kind not in ("acceleration", "force", "ctrl"):
            raise InvalidArgumentError(
                f"PoseHold handles 'acceleration', 'force' and 'ctrl' actuation, got {self.kind!r}"
            )
        if self.kind == "acceleration" and scale_by_inertia:
            raise InvalidArgumentError(
                "scale_by_inertia applies to force actuation; an acceleration drive already divides M out"
            )
        num_envs, k = env.num_envs, len(self.actuation.dofs)
        omega = np.asarray(omega, dtype=np.float64)
        zeta = np.asarray(zeta, dtype=np.float64)
        self.kp = np.broadcast_to(omega**2 if kp is None else np.asarray(kp, dtype=np.float64), (num_envs, k))
        self.kv = np.broadcast_to(
            2.0 * zeta * omega if kv is None else np.asarray(kv, dtype=np.float64), (num_envs, k)
        )
        self.target = np.broadcast_to(np.asarray(target, dtype=np.float64), (num_envs, k))
        self.scale_by_inertia = bool(scale_by_inertia)
        self.readout = readout if readout is not None else _dof_readout(env, self.actuation.dofs)
        self._sim = None
        # the torque box, and the map from torque to action (identity but for "ctrl")
        self.torque_low, self.torque_high = self.actuation.low, self.actuation.high
        self._offset, self._scale = 0.0, 1.0
        if self.kind == "ctrl":
            self._offset, self._scale, self.torque_low, self.torque_high = motor_torque_map(self.actuation)
        if self.kind != "acceleration":  # private copy of the model for g(q) and M(q)
            self._sim = engine.Simulator(env.physics.model, batch=num_envs, nthread=1)

    def reset(self, env, rows: np.ndarray) -> None:
        """Nothing to forget: the law is static."""

    def act(self, env, obs: np.ndarray) -> np.ndarray:
        """(B, k) actions for the current state of every env."""
        if self.kind == "acceleration":
            return np.clip(self.track(env), self.actuation.low, self.actuation.high)
        tau = np.clip(self.torque(env), self.torque_low, self.torque_high)
        return (tau - self._offset) / self._scale

    def track(self, env) -> np.ndarray:
        """(B, k) the PD term kp (q* - q) - kv qdot (no scaling, no gravity, no clip)."""
        q, qdot = self.readout(env)
        return self.kp * (self.target - q) - self.kv * qdot

    def torque(self, env) -> np.ndarray:
        """(B, k) the torque before the clip, s track + g(q) (force and ctrl tasks): g goes
        INSIDE the clip, so the clipped torque never exceeds the motors' rating."""
        g, m_diag = self.gravity_and_inertia(env)
        return (m_diag if self.scale_by_inertia else 1.0) * self.track(env) + g

    def gravity_and_inertia(self, env) -> tuple[np.ndarray, np.ndarray]:
        """(g, M_ii), each (B, k) at the actuated dofs: g(q) = qfrc_bias(q, 0) (gravity; no
        velocity terms) and the diagonal of the joint-space inertia M(q), at the env's qpos."""
        d = self._sim.data
        d.qpos[:] = env.physics.data.qpos
        d.qvel[:] = 0.0
        self._sim.forward()
        dofs = self.actuation.dofs
        m_diag = self._sim.full_mass_matrix()[:, dofs, dofs]
        return d.qfrc_bias[:, dofs].copy(), m_diag


def motor_torque_map(actuation) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(offset, scale, torque_low, torque_high), each (k,), of a "ctrl" actuation whose
    actuators are motors: the joint torque an action a commands is offset + scale a, and the
    motors give torques in [torque_low, torque_high] (the control range through gain and gear,
    intersected with the force range). ValueError for an actuator that is not a motor."""
    model = actuation.model
    offset, scale, low, high = [], [], [], []
    for a in actuation.actuators.tolist():
        check_motor(model, a, "PoseHold's 'ctrl' actuation")
        k = model.actuator_gear[a, 0] * model.actuator_gainprm[a, 0]  # torque per unit of ctrl
        lo, hi = model.actuator_ctrlrange[a]
        offset.append(k * 0.5 * (lo + hi))
        scale.append(k * 0.5 * (hi - lo))
        t = sorted((k * lo, k * hi))
        if model.actuator_forcelimited[a]:
            f = model.actuator_gear[a, 0] * model.actuator_forcerange[a]
            t = [max(t[0], min(f)), min(t[1], max(f))]
        low.append(t[0])
        high.append(t[1])
    return np.array(offset), np.array(scale), np.array(low), np.array(high)


def _dof_readout(env, dofs: np.ndarray) -> Readout:
    """env -> (q, qdot) of 1-dof joints' dofs (via the model's dof -> joint -> qpos map)."""
    model = env.physics.model
    jnts = model.dof_jntid[dofs]
    if np.any((model.jnt_type[jnts] != T.JNT_SLIDE) & (model.jnt_type[jnts] != T.JNT_HINGE)):
        raise InvalidArgumentError(
            f"PoseHold's default readout needs slide or hinge dofs, got dofs {dofs.tolist()}"
        )
    qadr = model.jnt_qposadr[jnts]

    def readout(env):
        d = env.physics.data
        return d.qpos[:, qadr], d.qvel[:, dofs]

    return readout
