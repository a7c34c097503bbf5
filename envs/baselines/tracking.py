"""Tracking baselines: a joint PD (PoseHold) on the IK reference, and iLQR MPC with and without
preview of the target (their names, "pd", "mpc" and "mpc_nopreview", are registered with
RoboDyn/Tracking-v0).

State x = (q, q') (B, 10), the five joint angles and rates from the task's readouts (for this
model the whole qpos and qvel); the action is the five motor commands in [-1, 1], 400 N m each.

The PD is PoseHold with gravity compensation INSIDE the 400 N m clamp and gains scaled by the
joint-space inertia's diagonal (kp = omega^2, kv = 2 zeta omega, in rad/s):

    tau = clip(M_ii (omega^2 (q* - q) - 2 zeta omega q') + g(q), -400, 400)

It sees the reference q*(t) now and nothing of its motion, so at steady state it lags by
e = kv q*' / kp = 2 zeta q*' / omega: the error shrinks only as omega grows, until the torque
limit and the 10 ms control step stop it. Its default gains are the stored output of `robodyn
tune RoboDyn/Tracking-v0 pd` (envs/baselines/tuned/): omega swept on a geometric grid (8 to 256
rad/s) for eight damping ratios from 1 to 0.05, extended until the RMS error grows again on both
sides of the best, then refined (best: omega 94.5, zeta 0.25; lighter damping lags less until
the loop rings, so the damping ratio's trend reverses too).

The MPC runs iLQR (envs/baselines/ilqr.py) on the engine itself (EngineDynamics: one control
step of the task, five 2 ms Euler steps under the held action, re-linearized by central
differences at every knot of the current plan), minimising

    J = sum_k 1/2 (x_k - x*_k)^T Q (x_k - x*_k) + 1/2 u_k^T R u_k + 1/2 (x_T - x*_T)^T Qf (x_T - x*_T)

over a 0.3 s horizon (30 knots of 10 ms) with the torque box enforced by the box-QP backward
pass, re-solved every tick from the measured state with one warm iteration (the last plan
shifted one knot), 50 from cold after a reset. With preview ("mpc") the reference of knot k
is the target's IK solution k knots ahead, x*_k = (q*(t + k dt), q*'(t + k dt)), from the
task's reference buffer (q*' by central differences); without ("mpc_nopreview", the ablation,
everything else identical) every knot references the target where it is now, held still:
x*_k = (q*(t), 0). Q weighs a velocity error of 1 rad/s like a position error of
VELOCITY_TIME rad; Qf is the infinite-horizon LQR value of the engine linearized at the
circle's first reference pose under gravity compensation.

Cost: a warm tick linearizes 30 knots x 30 perturbations of 5 physics steps (4,500 steps) and
rolls 6 line-search candidates out (900 steps) per row, about 22 ms for one row on this
project's machine: an episode of 400 ticks in about 9 s (planning on a fixed linearization
would be cheaper, and wrong by the change of gravity's load and inertia along the circle).
"""

from __future__ import annotations

import numpy as np

from robodyn import engine
from robodyn.envs.baselines.linearize import EngineDynamics, LinearizedDynamics
from robodyn.envs.baselines.mpc import MPC, lqr_terminal_cost
from robodyn.envs.baselines.pose_hold import PoseHold, motor_torque_map
from robodyn.envs.baselines.tuned import tuned_parameters
from robodyn.envs.tracking_v0 import IK_SEED
from robogym.errors import InvalidArgumentError

TASK_ID = "RoboDyn/Tracking-v0"
MPC_HORIZON = 30  # knots of 10 ms: the task's 0.3 s preview
VELOCITY_TIME = 0.1  # s: Q weighs a 1 rad/s velocity error like a VELOCITY_TIME rad position error
MPC_R = 1e-4  # weight on each u^2, u in [-1, 1] (400 N m): torque is nearly free, the box binds


def tracking_state(env) -> np.ndarray:
    """(B, 10) x = (q, q') from the task's readouts."""
    t = env.task
    return np.concatenate([t.joint_positions(), t.joint_velocities()], axis=1)


def _error_readout(env) -> tuple[np.ndarray, np.ndarray]:
    """(q - q*(t), q'): PoseHold holds this error at 0 (its target)."""
    t = env.task
    return t.joint_positions() - t.reference_positions(), t.joint_velocities()


def tracking_pd(env, omega=None, zeta=None) -> PoseHold:
    """PoseHold on the five joints toward the reference now, gravity compensated inside the
    400 N m clamp, gains scaled by M_ii. omega, zeta: scalars or (B, 1) arrays (one gain per
    env, for sweeps); by default the tuned gains (envs/baselines/tuned/)."""
    if omega is None or zeta is None:
        tuned = tuned_parameters(TASK_ID, "pd")
        omega = tuned["omega"] if omega is None else omega
        zeta = tuned["zeta"] if zeta is None else zeta
    return PoseHold(env, target=0.0, omega=omega, zeta=zeta, scale_by_inertia=True, readout=_error_readout)


def _check_state(env) -> None:
    """The readouts must be the engine's whole state (qpos, qvel), which EngineDynamics steps."""
    model, t = env.physics.model, env.task
    if (model.nq, model.nv) != (t.joint_positions().shape[1], t.joint_velocities().shape[1]):
        raise InvalidArgumentError(
            "the tracking MPC plans on (qpos, qvel): the joints must be the whole state"
        )


def tracking_weights(velocity_time: float = VELOCITY_TIME, r: float = MPC_R) -> tuple[np.ndarray, np.ndarray]:
    """(Q (10, 10), R (5, 5)): unit weight on each joint angle, velocity_time^2 on each rate,
    r on each action."""
    q = np.concatenate([np.ones(5), np.full(5, velocity_time**2)])
    return np.diag(q), r * np.eye(5)


def terminal_cost(env, Q: np.ndarray, R: np.ndarray) -> np.ndarray:
    """Qf: the LQR value of the control step linearized at rest at the circle's reference pose of
    phase 0, under the action that holds it against gravity (g(q) = qfrc_bias at rest)."""
    task = env.task
    q0 = task.solve_reference(np.zeros(1), np.asarray([IK_SEED]))[0]
    x_op = np.concatenate([q0, np.zeros(5)])
    sim = engine.Simulator(env.physics.model, batch=1, nthread=1)
    sim.data.qpos[0] = q0
    sim.forward()
    offset, scale, _, _ = motor_torque_map(task.actuation())
    lin = LinearizedDynamics(env, x_op=x_op, u_op=(sim.data.qfrc_bias[0] - offset) / scale)
    return lqr_terminal_cost(lin.A, lin.B, Q, R)


def tracking_mpc(
    env,
    preview: bool = True,
    horizon: int = MPC_HORIZON,
    velocity_time: float = VELOCITY_TIME,
    R: float = MPC_R,
    iterations: int = 1,
    cold_iterations: int = 50,
    **kwargs,
) -> MPC:
    """iLQR MPC on the engine toward the task's joint reference: with `preview`, knot k tracks
    (q*(t + k dt), q*'(t + k dt)); without, every knot tracks (q*(t), 0). kwargs go to MPC."""
    _check_state(env)
    Q, Rm = tracking_weights(velocity_time, R)
    Qf = terminal_cost(env, Q, Rm)
    T = int(horizon)

    if preview:

        def x_ref(env) -> np.ndarray:
            return env.task.reference(T)

    else:

        def x_ref(env) -> np.ndarray:
            now = np.concatenate([env.task.reference_positions(), np.zeros((env.num_envs, 5))], axis=1)
            return np.repeat(now[:, None], T + 1, axis=1)

    return MPC(
        env,
        EngineDynamics(env),
        tracking_state,
        Q=Q,
        R=Rm,
        Qf=Qf,
        x_ref=x_ref,
        horizon=T,
        iterations=iterations,
        cold_iterations=cold_iterations,
        **kwargs,
    )


def tracking_mpc_nopreview(env, **kwargs) -> MPC:
    """The ablation: tracking_mpc with the preview removed (every knot references the target
    now, held still); everything else identical."""
    return tracking_mpc(env, preview=False, **kwargs)
