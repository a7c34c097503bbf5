"""Quadruped baseline: PoseHold of the home pose (registered as "pd" with RoboDyn/Quadruped-v0).

The quadruped's action is already a PD: `pd_target` actuation gives each joint
tau = clamp(kp (home + action_scale a - q) - kd qdot, the motor's limits) at every physics step
(kp = 35 N m/rad, kd = 0.5 N m s/rad, MuJoCo Playground's Go1 gains), so holding the home pose
is the zero action, and the clamp keeps every torque inside the motors' ceiling. PoseHold
(envs/baselines/pose_hold.py) computes torques for `acceleration`, `force` and `ctrl`
actuation and does not apply to `pd_target`, whose drive is the PD itself; its gravity
compensation is the one thing left out here (a standing robot's leg loads come through the
feet, not the hanging-leg g(q) a joint-space compensation would add). The baseline stands: it
neither walks nor turns, so its velocity_error is the command's speed.
"""

from __future__ import annotations

import numpy as np

from robogym.errors import InvalidArgumentError


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
