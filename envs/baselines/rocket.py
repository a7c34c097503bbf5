"""Rocket baselines: a PD on a descent profile and an iLQR MPC on the engine's own nonlinear
step (their names, "pd" and "mpc", are registered with RoboDyn/Rocket-v0).

Both read the task's named readouts. Both follow the same reachable reference: on each axis
the descent profile v_ref(e) = -sign(e) sqrt(2 a |e|) (e: the lateral offset or the height),
the fastest approach from which the deceleration a still stops the vehicle at the pad. A
destination alone is not a reference: told to be at the pad now, a planner whose horizon
cannot get there settles for what it can reach.

The PD turns the errors into a wanted acceleration of the base and allocates it:

    a = omega^2 (0 - p) + 2 zeta omega (v_ref(p) - v) + (0, g)      (p = (x, height))
    lean* = atan2(a_x, max(a_z, g / 2)), clipped to +-max_lean
    thrust = m a_z / cos(lean*), clipped to [0.4 W, 2 W]
    gimbal = -(I / (thrust l)) (w^2 (lean* - pitch) - 2 w pitch_rate), clipped to +-0.3 rad

(a positive gimbal pitches the nose towards -x; l is the pivot's distance below the centre
of mass). Its default omega is the stored output of `robodyn tune RoboDyn/Rocket-v0 pd`.

The MPC is iLQR on the full state (qpos, qvel) through the engine's control step itself
(the model in flight: contacts disabled, so the plan cannot use the pad to stop on; with
them, more iterations found that and touched down harder), re-linearized at every knot of
every iteration, with the action box [-1, 1]^2 (so the
thrust's asymmetric bound [0.4 W, 2 W] is a box constraint of the solve, and leaning to
spend thrust sideways falls out of it), a line search on the true rollout cost, and the
last plan shifted one knot as the warm start (envs.baselines.mpc.MPC).
"""

from __future__ import annotations

import numpy as np

from robodyn import engine
from robodyn.envs.baselines.linearize import EngineDynamics
from robodyn.envs.baselines.mpc import MPC
from robodyn.envs.baselines.tuned import tuned_parameters

TASK_ID = "RoboDyn/Rocket-v0"
MAX_LEAN = 0.35  # rad: the PD's largest commanded lean
ATTITUDE_OMEGA = 3.0  # rad/s: the PD's attitude loop
VERTICAL_GAIN = 4.0  # 1/s: the PD's vertical velocity loop
# MPC weights on the tangent state (x, z, pitch, gimbal, vx, vz, pitch rate, gimbal rate)
MPC_Q = (0.05, 0.05, 20.0, 0.0, 2.0, 4.0, 2.0, 0.0)
MPC_QF = (0.5, 0.5, 100.0, 0.0, 20.0, 40.0, 20.0, 0.0)
MPC_R = (0.05, 0.05)
MPC_HORIZON = 60  # knots of 0.05 s: 3 s
MPC_TOL = 1e-6  # iLQR stops when its predicted improvement is below this fraction of the cost


def rocket_state(env) -> np.ndarray:
    """(B, 8) x = (qpos, qvel) of the engine: (x, z, pitch, gimbal, vx, vz, pitch rate, gimbal rate)."""
    d = env.physics.data
    return np.concatenate([d.qpos, d.qvel], axis=1)


class DescentPD:
    """The PD of the module docstring, batched over the env's rows (Policy protocol).

    omega, zeta: the position loop's natural frequency (rad/s) and damping ratio; scalars or
    (B, 1) arrays (one gain per env, for sweeps). Default omega: the tuned value.
    """

    def __init__(self, env, omega=None, zeta=1.0):
        if omega is None:
            omega = tuned_parameters(TASK_ID, "pd")["omega"]
        task = env.task
        self.omega = np.asarray(omega, dtype=np.float64).reshape(-1)
        self.zeta = np.asarray(zeta, dtype=np.float64).reshape(-1)
        mj = env.physics.mj_model
        self.mass = float(mj.body_subtreemass[0])
        self.g = env.physics.gravity
        vehicle = env.physics.body_id("vehicle")
        self.inertia = float(mj.body_inertia[vehicle][1])
        # the pivot's distance below the vehicle's centre of mass
        self.arm = float(mj.body_ipos[vehicle][2] - mj.body_pos[env.physics.body_id("nozzle")][2])
        self.thrust_range = task.thrust_range
        self.gimbal_range = task.gimbal_range

    def reset(self, env, rows: np.ndarray) -> None:
        """Nothing to forget: the law is static."""

    def act(self, env, obs: np.ndarray) -> np.ndarray:
        task = env.task
        p, v = task.position(), task.velocity()
        w, z = self.omega[:, None], self.zeta[:, None]
        a = task.descent_profile(p) - v
        a[:, 0:1] *= 2.0 * z * w
        a[:, 1] = VERTICAL_GAIN * a[:, 1] + self.g
        # lean towards the wanted lateral acceleration (against at least half of g), and the
        # thrust whose vertical part gives the wanted vertical acceleration at that lean
        lean = np.clip(np.arctan2(a[:, 0], np.maximum(a[:, 1], 0.5 * self.g)), -MAX_LEAN, MAX_LEAN)
        thrust = np.clip(self.mass * a[:, 1] / np.cos(lean), *self.thrust_range)
        wa = ATTITUDE_OMEGA
        alpha = wa * wa * (lean - task.pitch()) - 2.0 * wa * task.pitch_rate()
        gimbal = np.clip(-alpha * self.inertia / (thrust * self.arm), *self.gimbal_range)
        lo, hi = self.thrust_range
        glo, ghi = self.gimbal_range
        return np.stack(
            [2.0 * (thrust - lo) / (hi - lo) - 1.0, 2.0 * (gimbal - glo) / (ghi - glo) - 1.0], axis=1
        )


def rocket_pd(env, omega=None, zeta=1.0) -> DescentPD:
    return DescentPD(env, omega=omega, zeta=zeta)


def descent_reference(env, horizon: int, dt: float) -> np.ndarray:
    """(B, horizon + 1, 8) the reference over the horizon: from the base's current position,
    each axis follows the descent profile (integrated knot by knot: e_{k+1} = e_k + dt
    v_ref(e_k), never past the pad), upright, the gimbal centred."""
    task = env.task
    p = task.position().copy()
    x = rocket_state(env)
    offset = x[:, :2] - p  # engine (x, z) minus the base's (x, height)
    ref = np.zeros((len(p), horizon + 1, 8))
    for k in range(horizon + 1):
        v = task.descent_profile(p)
        ref[:, k, 0:2] = p + offset
        ref[:, k, 4:6] = v
        step = v * dt
        p = np.where(np.abs(step) >= np.abs(p), 0.0, p + step)
        p[:, 1] = np.maximum(p[:, 1], 0.0)
    return ref


def rocket_mpc(
    env,
    horizon: int = MPC_HORIZON,
    iterations: int = 2,
    cold_iterations: int = 60,
    tol: float = MPC_TOL,
    **kwargs,
) -> MPC:
    """iLQR MPC of the module docstring; at most `iterations` warm iLQR iterations per tick
    (fewer once converged to `tol`). kwargs go to MPC (replan_every)."""
    # in flight: a planner that models the pad's contact learns to stop on it instead of above it
    flight = engine.load_mjcf(engine.without_contacts(env.physics.model_path))
    dynamics = EngineDynamics(env, model=flight)
    dt = float(env.dt)
    return MPC(
        env,
        dynamics,
        rocket_state,
        Q=np.diag(MPC_Q),
        R=np.diag(MPC_R),
        Qf=np.diag(MPC_QF),
        x_ref=lambda e: descent_reference(e, horizon, dt),
        horizon=horizon,
        iterations=iterations,
        cold_iterations=cold_iterations,
        tol=tol,
        **kwargs,
    )
