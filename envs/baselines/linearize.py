"""An env's control step as a map x' = f(x, u), and its linearization about an operating point.

The state is x = (q, qdot) of named 1-dof joints, (2k,), covering every dof of the model; the
control u is the task's action (its Actuation). One control step is `frame_skip` engine steps
with u held, exactly as the task applies it: an "acceleration" action through
engine.control.AccelerationDrive, a "force" action as the generalized force on the actuated dofs.
Everything runs on private engine.Simulator copies of the env's model, so planning never touches
the env's own state.

Jacobians come from central differences (seed 000 §24, §39; in float64):

    A[:, j] = (f(x + eps e_j, u) - f(x - eps e_j, u)) / (2 eps),   B likewise in u,

with truncation error O(eps^2 f''') and cancellation error O(1e-16 |f| / eps).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

import engine
from engine import types as T
from engine.control import AccelerationDrive


class EngineDynamics:
    """x' = f(x, u): one control step of `env`'s task through the engine, for any number of rows.

    x = (q_j for j in joints, qdot_j for j in joints): (N, 2k); u: (N, m) actions, NOT clipped to
    the task's bounds (the env clips; a planner keeps its controls in the box itself), so f stays
    smooth in u and centred differences at a bound see both sides. Every other quantity of the
    model (applied forces, time, controls) starts at zero in each call.
    """

    def __init__(self, env, joints: Sequence[str]):
        physics = env.physics
        model = physics.model
        self.model = model
        self.joints = tuple(joints)
        self.frame_skip = int(env.task.frame_skip)
        self.dt = float(env.dt)
        self.actuation = env.task.actuation()
        kinds = ("acceleration", "force")
        if self.actuation.kind not in kinds:
            raise ValueError(f"actuation kind must be one of {kinds}, got {self.actuation.kind!r}")
        self._qadr = np.array([physics.joint_qposadr(j) for j in self.joints])
        self._vadr = np.array([physics.joint_dof(j) for j in self.joints])
        for j, name in enumerate(self.joints):
            jnt = model.dof_jntid[self._vadr[j]]
            if model.jnt_type[jnt] not in (T.JNT_SLIDE, T.JNT_HINGE):
                raise ValueError(f"joint {name!r} is not a slide or hinge: x = (q, qdot) needs 1-dof joints")
        if model.nq != model.nv or sorted(self._vadr.tolist()) != list(range(model.nv)):
            raise ValueError(
                f"joints {self.joints} must cover every dof of the model (nv={model.nv}) exactly once"
            )
        self.nx = 2 * len(self.joints)
        self.nu = len(self.actuation.dofs)
        self._drive = None
        if self.actuation.kind == "acceleration":
            if self.nu != 1:
                raise ValueError(f"an acceleration task must drive exactly one dof, got {self.nu}")
            self._drive = AccelerationDrive(model, _motor_on_dof(model, int(self.actuation.dofs[0])))
        self._sims: dict[int, engine.Simulator] = {}

    def _sim(self, rows: int) -> engine.Simulator:
        if rows not in self._sims:
            self._sims[rows] = engine.Simulator(self.model, batch=rows, nthread=1)
        return self._sims[rows]

    def step(self, x: np.ndarray, u: np.ndarray) -> np.ndarray:
        """(N, 2k) states and (N, m) actions -> (N, 2k) states one control step later."""
        x = np.asarray(x, dtype=np.float64)
        u = np.asarray(u, dtype=np.float64)
        sim = self._sim(x.shape[0])
        d = sim.data
        for name in ("qfrc_applied", "xfrc_applied", "ctrl", "act", "time"):
            getattr(d, name)[:] = 0.0
        k = len(self.joints)
        d.qpos[:, self._qadr] = x[:, :k]
        d.qvel[:, self._vadr] = x[:, k:]
        if self._drive is not None:
            self._drive.step(sim, u[:, 0], self.frame_skip)
        else:
            d.qfrc_applied[:, self.actuation.dofs] = u
            sim.step(self.frame_skip)
        return np.concatenate([d.qpos[:, self._qadr], d.qvel[:, self._vadr]], axis=1)

    def jacobians(self, x: np.ndarray, u: np.ndarray, eps: float = 1e-5) -> tuple[np.ndarray, np.ndarray]:
        """Central-difference A = df/dx (..., n, n) and B = df/du (..., n, m) at x (..., n), u (..., m),
        all points in one engine call."""
        x = np.asarray(x, dtype=np.float64)
        u = np.asarray(u, dtype=np.float64)
        lead = x.shape[:-1]
        n, m = x.shape[-1], u.shape[-1]
        xs, us = x.reshape(-1, n), u.reshape(-1, m)
        P = xs.shape[0]
        dz = np.concatenate([np.eye(n + m), -np.eye(n + m)]) * eps  # (2(n+m), n+m) perturbations
        z = np.concatenate([xs, us], axis=1)[:, None, :] + dz[None]  # (P, 2(n+m), n+m)
        f = self.step(z[..., :n].reshape(-1, n), z[..., n:].reshape(-1, m)).reshape(P, 2 * (n + m), n)
        J = (f[:, : n + m] - f[:, n + m :]) / (2.0 * eps)  # (P, n+m, n): row j = df/dz_j
        J = np.swapaxes(J, 1, 2)  # (P, n, n+m)
        return J[..., :n].reshape(*lead, n, n), J[..., n:].reshape(*lead, n, m)


class LinearizedDynamics:
    """x' = c + A (x - x_op) + B (u - u_op), c = f(x_op, u_op): the engine's control step
    linearized once about an operating point (for the crane: hanging at rest, u = 0).

    env, joints: as EngineDynamics (kept as `.engine`); x_op (n,), u_op (m,) default to the
    model's qpos0 at rest and zero control. A (n, n), B (n, m) by central differences with `eps`.
    step and jacobians take any batch shape; the Jacobians are the same constants everywhere.
    """

    def __init__(self, env, joints: Sequence[str], x_op=None, u_op=None, eps: float = 1e-5):
        self.engine = EngineDynamics(env, joints)
        k = len(self.engine.joints)
        if x_op is None:
            x_op = np.concatenate([self.engine.model.qpos0[self.engine._qadr], np.zeros(k)])
        if u_op is None:
            u_op = np.zeros(self.engine.nu)
        self.x_op = np.asarray(x_op, dtype=np.float64).reshape(self.engine.nx)
        self.u_op = np.asarray(u_op, dtype=np.float64).reshape(self.engine.nu)
        self.c = self.engine.step(self.x_op[None], self.u_op[None])[0]
        A, B = self.engine.jacobians(self.x_op, self.u_op, eps)
        self.A, self.B = A, B
        self._AT, self._BT = A.T.copy(), B.T.copy()
        self._offset = self.c - self.x_op @ self._AT - self.u_op @ self._BT
        self.dt = self.engine.dt

    def step(self, x: np.ndarray, u: np.ndarray) -> np.ndarray:
        """(..., n), (..., m) -> (..., n)."""
        return x @ self._AT + u @ self._BT + self._offset

    def jacobians(self, x: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """x (..., n), u (..., m) -> A (..., n, n), B (..., n, m) (read-only broadcast views)."""
        lead = x.shape[:-1]
        return np.broadcast_to(self.A, (*lead, *self.A.shape)), np.broadcast_to(
            self.B, (*lead, *self.B.shape)
        )


def _motor_on_dof(model, dof: int) -> int:
    """The one actuator with a joint transmission on `dof` (the motor an AccelerationDrive drives)."""
    found = [
        a
        for a in range(model.nu)
        if model.actuator_trntype[a] == T.TRN_JOINT and model.jnt_dofadr[model.actuator_trnid[a]] == dof
    ]
    if len(found) != 1:
        raise ValueError(f"dof {dof}: expected exactly one joint-transmission actuator, found {len(found)}")
    return found[0]
