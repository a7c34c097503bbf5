"""An env's control step as a map x' = f(x, u), and its linearization about an operating point.

The state is the whole model's x = (qpos (nq), qvel (nv)); the control u is the task's action,
applied through the task's own Actuation exactly as the env applies it (one control step is
`frame_skip` engine steps with u held). Everything runs on private engine.Simulator copies of
the env's model, so planning never touches the env's own state.

Derivatives live in the tangent space of the state, dx = (dq (nv), dv (nv)): a perturbation
moves x to x (+) dx = (integrate_pos(qpos, dq, 1), qvel + dv), and two states differ by
x1 (-) x0 = (differentiate_pos(qpos0, qpos1, 1), qvel1 - qvel0). For slide and hinge joints
that is plain addition and subtraction; for ball and free joints it rotates the quaternion by
a rotation vector, so a floating base linearizes like any other joint. Jacobians come from
central differences, in float64 (in float32 a small control nudge can move the state by less
than its last bit, and then no eps gives a usable quotient):

    A[:, j] = (f(x (+) eps e_j, u) (-) f(x (+) -eps e_j, u)) / (2 eps),   B likewise in u,

with truncation error O(eps^2 f''') and cancellation error O(1e-16 |f| / eps).
"""

from __future__ import annotations

import numpy as np

from robodyn import engine
from robogym.errors import InvalidArgumentError


class EngineDynamics:
    """x' = f(x, u): one control step of `env`'s task through the engine, for any number of rows.

    x = (qpos, qvel): (N, nq + nv); u: (N, m) actions, NOT clipped to the task's bounds (the env
    clips; a planner keeps its controls in the box itself), so f stays smooth in u and centred
    differences at a bound see both sides. Every other input of the model (applied forces,
    time, controls not driven by the action) starts at zero in each call. `model`: plan on
    another Model of the same structure (default: the env's own), e.g. one loaded with
    contacts disabled.
    """

    def __init__(self, env, model=None):
        physics = env.physics
        self.model = physics.model if model is None else model
        if self.model.na > 0:
            # act would be state too, and x = (qpos, qvel) would silently drop it
            raise InvalidArgumentError(
                f"EngineDynamics: the model has {self.model.na} actuator activations (activation "
                "dynamics); its state x = (qpos, qvel) has no place for them"
            )
        self.actuation = env.task.actuation()
        if model is not None:
            self.actuation = self.actuation.for_model(model)
        self.frame_skip = int(env.task.frame_skip)
        self.dt = float(env.dt)
        self.nq, self.nv = self.model.nq, self.model.nv
        self.nx = self.nq + self.nv  # size of a state
        self.ndx = 2 * self.nv  # size of a state difference (the tangent space)
        self.nu = len(self.actuation.dofs)
        self._sims: dict[int, engine.Simulator] = {}

    def _sim(self, rows: int) -> engine.Simulator:
        if rows not in self._sims:
            self._sims[rows] = engine.Simulator(self.model, batch=rows, nthread=1)
        return self._sims[rows]

    def step(self, x: np.ndarray, u: np.ndarray) -> np.ndarray:
        """(N, nq + nv) states and (N, m) actions -> (N, nq + nv) states one control step later."""
        x = np.asarray(x, dtype=np.float64)
        u = np.asarray(u, dtype=np.float64)
        sim = self._sim(x.shape[0])
        d = sim.data
        for name in ("qfrc_applied", "xfrc_applied", "ctrl", "act", "time"):
            getattr(d, name)[:] = 0.0
        d.qpos[:] = x[:, : self.nq]
        d.qvel[:] = x[:, self.nq :]
        self.actuation.apply(sim, u, self.frame_skip)
        return np.concatenate([d.qpos, d.qvel], axis=1)

    def retract(self, x: np.ndarray, dx: np.ndarray) -> np.ndarray:
        """x (+) dx: (N, nq + nv) states moved by (N, 2 nv) tangent vectors."""
        x = np.asarray(x, dtype=np.float64).reshape(-1, self.nx)
        dx = np.asarray(dx, dtype=np.float64).reshape(-1, self.ndx)
        qpos = self._sim(1).integrate_pos(x[:, : self.nq], dx[:, : self.nv], 1.0)
        return np.concatenate([qpos, x[:, self.nq :] + dx[:, self.nv :]], axis=1)

    def difference(self, x1: np.ndarray, x0: np.ndarray) -> np.ndarray:
        """x1 (-) x0: the (N, 2 nv) tangent vectors with x0 (+) (x1 (-) x0) = x1 (a single x0
        serves every row of x1)."""
        x1 = np.asarray(x1, dtype=np.float64).reshape(-1, self.nx)
        x0 = np.broadcast_to(np.asarray(x0, dtype=np.float64).reshape(-1, self.nx), x1.shape)
        dq = self._sim(1).differentiate_pos(x0[:, : self.nq], x1[:, : self.nq], 1.0)
        return np.concatenate([dq, x1[:, self.nq :] - x0[:, self.nq :]], axis=1)

    def jacobians(self, x: np.ndarray, u: np.ndarray, eps: float = 1e-5) -> tuple[np.ndarray, np.ndarray]:
        """Central-difference A = df/dx (..., 2nv, 2nv) and B = df/du (..., 2nv, m) in the tangent
        space at x (..., nq + nv), u (..., m), all points in one engine call."""
        x = np.asarray(x, dtype=np.float64)
        u = np.asarray(u, dtype=np.float64)
        lead = x.shape[:-1]
        n, m = self.ndx, u.shape[-1]
        xs, us = x.reshape(-1, self.nx), u.reshape(-1, m)
        P = xs.shape[0]
        dz = np.concatenate([np.eye(n + m), -np.eye(n + m)]) * eps  # (2(n+m), n+m) perturbations
        dxs = np.broadcast_to(dz[None, :, :n], (P, 2 * (n + m), n)).reshape(-1, n)
        xz = self.retract(np.repeat(xs, 2 * (n + m), axis=0), dxs)
        uz = (us[:, None, :] + dz[None, :, n:]).reshape(-1, m)
        f = self.step(xz, uz).reshape(P, 2 * (n + m), self.nx)
        plus, minus = f[:, : n + m].reshape(-1, self.nx), f[:, n + m :].reshape(-1, self.nx)
        J = self.difference(plus, minus).reshape(P, n + m, n) / (2.0 * eps)  # row j = df/dz_j
        J = np.swapaxes(J, 1, 2)  # (P, n, n+m)
        return J[..., :n].reshape(*lead, n, n), J[..., n:].reshape(*lead, n, m)


class LinearizedDynamics:
    """x' = c + A (x - x_op) + B (u - u_op), c = f(x_op, u_op): the engine's control step
    linearized once about an operating point (for the crane: hanging at rest, u = 0).

    env: as EngineDynamics (kept as `.engine`); x_op (nq + nv,), u_op (m,) default to the
    model's qpos0 at rest and zero control. A (2nv, 2nv), B (2nv, m) by central differences
    with `eps`, in the tangent space. States here are tangent-space coordinates about x_op,
    dx = x (-) x_op (`engine.difference`); for a model with only slide and hinge joints that is
    x - x_op. step and jacobians take any batch shape; the Jacobians are constant.
    """

    def __init__(self, env, x_op=None, u_op=None, eps: float = 1e-5):
        self.engine = EngineDynamics(env)
        model = self.engine.model
        if x_op is None:
            x_op = np.concatenate([model.qpos0, np.zeros(model.nv)])
        if u_op is None:
            u_op = np.zeros(self.engine.nu)
        self.x_op = np.asarray(x_op, dtype=np.float64).reshape(self.engine.nx)
        self.u_op = np.asarray(u_op, dtype=np.float64).reshape(self.engine.nu)
        # c in tangent coordinates about x_op: f(x_op, u_op) (-) x_op
        f_op = self.engine.step(self.x_op[None], self.u_op[None])
        self.c = self.engine.difference(f_op, self.x_op[None])[0]
        A, B = self.engine.jacobians(self.x_op, self.u_op, eps)
        self.A, self.B = A, B
        self._AT, self._BT = A.T.copy(), B.T.copy()
        self._offset = self.c - self.u_op @ self._BT
        self.dt = self.engine.dt

    def step(self, dx: np.ndarray, u: np.ndarray) -> np.ndarray:
        """(..., 2nv) tangent coordinates about x_op, (..., m) -> (..., 2nv)."""
        return dx @ self._AT + u @ self._BT + self._offset

    def jacobians(self, dx: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """dx (..., 2nv), u (..., m) -> A (..., 2nv, 2nv), B (..., 2nv, m) (read-only broadcast views)."""
        lead = dx.shape[:-1]
        return np.broadcast_to(self.A, (*lead, *self.A.shape)), np.broadcast_to(
            self.B, (*lead, *self.B.shape)
        )
