"""Quadruped baselines: hold the home pose ("pd") and sampling MPC about a trot ("mpc").

The quadruped's action is already a PD: `pd_target` actuation gives each joint
tau = clamp(kp (home + action_scale a - q) - kd qdot, the motor's limits) at every physics step
(kp = 35 N m/rad, kd = 0.5 N m s/rad, MuJoCo Playground's Go1 gains), so holding the home pose
is the zero action, and the clamp keeps every torque inside the motors' ceiling. PoseHold
(envs/baselines/pose_hold.py) computes torques for `acceleration`, `force` and `ctrl`
actuation and does not apply to `pd_target`, whose drive is the PD itself; its gravity
compensation is the one thing left out here (a standing robot's leg loads come through the
feet, not the hanging-leg g(q) a joint-space compensation would add). The baseline stands: it
neither walks nor turns, so its velocity_error is the command's speed.

The MPC is the sampling planner (baselines/sampling.py) with MPPI updates, planning offsets
from an open-loop trot (Trot below): every control step, 32 plans of the twelve joint targets
(4 knots over a 0.5 s horizon, linear in between, perturbed by 0.2 in action units) are rolled
out from the robot's exact state on the task's planning reward (its reward less costs on the
trunk's height and tilt, on the hips' splay and on a fall, QuadrupedTask.planning_reward), and
their return-weighted average (temperature 0.1 of the returns' spread) is kept. The trot alone
walks but drifts off the command and can fall; the planner alone, from the standing pose,
finds no gait in a 0.5 s horizon; planning about the trot steers it and catches its
stumbles (no fall in 16 random episodes, velocity_error 0.193 m/s on average: envs/README.md).
"""

from __future__ import annotations

import numpy as np

from robodyn.envs.baselines.sampling import SamplingPlanner
from robogym.errors import InvalidArgumentError

# the diagonal pairs of a trot, in the task's leg order (FR, FL, RR, RL): FR and RL swing
# together, half a period before FL and RR
TROT_PAIR = np.array([0, 1, 1, 0])
SIDE = np.array([-1.0, 1.0, -1.0, 1.0])  # right legs -1, left legs +1


class HoldHome:
    """The zero action of a `pd_target` task: every joint held at the actuation's default pose
    by the task's own PD (Policy protocol)."""

    def __init__(self, env):
        actuation = env.task.actuation()
        if actuation.kind != "pd_target":
            raise InvalidArgumentError(
                f"HoldHome needs 'pd_target' actuation (its zero action holds a pose), got {actuation.kind!r}"
            )
        self.shape = (env.num_envs, len(actuation.dofs))

    def reset(self, env, rows: np.ndarray) -> None:
        """Nothing to forget: the action is constant."""

    def act(self, env, obs: np.ndarray) -> np.ndarray:
        return np.zeros(self.shape)


def quadruped_pd(env) -> HoldHome:
    return HoldHome(env)


class Trot:
    """An open-loop trot of the quadruped, in the task's action units (x action_scale rad about
    home), for each row's command (vx, vy, yaw rate) and step count since reset:

        phase_l = 2 pi t / period + pi pair(l)                t = steps * dt (s)
        lift_l  = max(sin phase_l, 0)                         (the half-cycle the leg swings)
        calf_l  = calf * lift_l                               (calf < 0 folds the leg up)
        thigh_l = (kv vx - kw side_l yaw_rate) cos phase_l    (side_l: -1 right, +1 left)

    A leg's thigh sweeps forward while it swings and back while it stands, so the stride grows
    with the commanded speed, and a yaw rate lengthens one side's stride and shortens the
    other's. Hips are left at home. Called as a SamplingPlanner prior: (env, steps (B, n)) ->
    (B, n, 12)."""

    def __init__(self, period: float = 0.4, calf: float = -0.8, kv: float = 1.25, kw: float = 1.0):
        if not (np.isfinite(period) and period > 0):
            raise InvalidArgumentError(f"period must be finite and > 0 (s), got {period!r}")
        for name, value in (("calf", calf), ("kv", kv), ("kw", kw)):
            if not np.isfinite(value):
                raise InvalidArgumentError(f"{name} must be finite, got {value!r}")
        self.period, self.calf, self.kv, self.kw = float(period), float(calf), float(kv), float(kw)

    def __call__(self, env, steps: np.ndarray) -> np.ndarray:
        command = env.task.commands  # (B, 3): vx, vy, yaw rate
        phase = (2 * np.pi * env.dt / self.period) * np.asarray(steps, dtype=np.float64)
        actions = np.zeros((*phase.shape, 12))
        for leg in range(4):
            leg_phase = phase + np.pi * TROT_PAIR[leg]
            stride = self.kv * command[:, 0:1] - SIDE[leg] * self.kw * command[:, 2:3]
            actions[..., 3 * leg + 1] = stride * np.cos(leg_phase)
            actions[..., 3 * leg + 2] = self.calf * np.maximum(np.sin(leg_phase), 0.0)
        return actions


def quadruped_mpc(
    env,
    samples: int = 32,
    horizon: int = 25,
    knots: int = 4,
    noise: float = 0.2,
    temperature: float = 0.1,
    trot: Trot | None = None,
    **kwargs,
) -> SamplingPlanner:
    """Sampling MPC (MPPI) about `trot` (default Trot(); module docstring); kwargs go to
    SamplingPlanner."""
    return SamplingPlanner(
        env,
        samples=samples,
        horizon=horizon,
        knots=knots,
        noise=noise,
        update="mppi",
        temperature=temperature,
        prior=Trot() if trot is None else trot,
        **kwargs,
    )
