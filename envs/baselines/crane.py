"""Crane baselines: a position PD on the trolley and an MPC that plans on the small-angle
linearization (their names, "pd" and "mpc", are registered with RoboDyn/Crane-v0).

State x = (trolley position relative to the target, swing angle, trolley velocity, swing rate),
(B, 4), read from the task's named readouts; the target state is x = 0 (the target is the world
origin). The action is the trolley acceleration, |a| <= max_accel.

The PD (PoseHold) only sees the trolley: a = clip(omega^2 (0 - x) - 2 zeta omega v). Its default
gains are the stored output of `robodyn tune RoboDyn/Crane-v0 pd` (envs/baselines/tuned/): a
sweep of omega on a geometric grid, for zeta 1 and 0.7, on the fixed 10 m move, extended until
the trend reverses on both sides (a sweep stopped while the PD still improves would understate
it and flatter the MPC); the best is the one with the least residual swing among those that
arrive. The MPC runs iLQR on x' = A x + B u, the engine's control step linearized about hanging
at rest, and acts on the nonlinear engine.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from robodyn.envs.baselines.linearize import LinearizedDynamics
from robodyn.envs.baselines.mpc import MPC
from robodyn.envs.baselines.pose_hold import PoseHold
from robodyn.envs.baselines.tuned import tuned_parameters

TASK_ID = "RoboDyn/Crane-v0"
MPC_Q = (1.0, 100.0, 1.0, 10.0)  # weights on (x, theta, v, theta_dot)
MPC_R = 0.1  # weight on a^2
MPC_HORIZON = 40  # knots of 0.05 s: 2 s, then the LQR value as terminal cost


def crane_state(env) -> np.ndarray:
    """(B, 4) x = (trolley_position, swing_angle, trolley_velocity, swing_rate) from the readouts."""
    t = env.task
    return np.stack([t.trolley_position(), t.swing_angle(), t.trolley_velocity(), t.swing_rate()], axis=1)


def crane_dynamics(env) -> LinearizedDynamics:
    """The control step linearized about the payload hanging at rest under the target, a = 0:
    x' = A x + B a with A (4, 4), B (4, 1) by central differences of the engine."""
    return LinearizedDynamics(env, x_op=np.zeros(4), u_op=np.zeros(1))


def _trolley_readout(env) -> tuple[np.ndarray, np.ndarray]:
    return env.task.trolley_position()[:, None], env.task.trolley_velocity()[:, None]


def crane_pd(env, omega=None, zeta=None) -> PoseHold:
    """Position PD on the trolley toward the target: a = clip(omega^2 (0 - x) - 2 zeta omega v, +-max_accel).
    omega, zeta: scalars or (B, 1) arrays (one gain per env, for sweeps); by default the tuned
    gains (envs/baselines/tuned/)."""
    if omega is None or zeta is None:
        tuned = tuned_parameters(TASK_ID, "pd")
        omega = tuned["omega"] if omega is None else omega
        zeta = tuned["zeta"] if zeta is None else zeta
    return PoseHold(env, target=0.0, omega=omega, zeta=zeta, readout=_trolley_readout)


def crane_mpc(
    env,
    horizon: int = MPC_HORIZON,
    Q: Sequence[float] = MPC_Q,
    R: float = MPC_R,
    iterations: int = 1,
    cold_iterations: int = 50,
    **kwargs,
) -> MPC:
    """iLQR MPC on the linearized crane toward x = 0: cost sum 1/2 x^T diag(Q) x + 1/2 R a^2 over
    `horizon` knots plus the infinite-horizon LQR value 1/2 x^T P x at the end; `iterations` warm
    iLQR iterations per tick. kwargs go to MPC (replan_every, tol, x_ref)."""
    dynamics = crane_dynamics(env)
    return MPC(
        env,
        dynamics,
        crane_state,
        Q=np.diag(np.asarray(Q, dtype=np.float64)),
        R=np.array([[float(R)]]),
        horizon=horizon,
        iterations=iterations,
        cold_iterations=cold_iterations,
        **kwargs,
    )
