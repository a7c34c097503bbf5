"""The baselines of RoboDyn/HumanoidPush-v0: hold the home pose (`pd`) and sampling MPC (`mpc`).

The task's actuation is already a PD: its action is the joints' position targets about the
home pose (`pd_target`), and engine.control.PDDrive runs tau = clamp(kp (q* - q) - kd qdot,
the motor's limits) every 2 ms physics step with the stiff gains that keep the model
standing (kp 1000 N m/rad, kd 20 N m s/rad; arms 200 and 4). Holding the home pose is
therefore the zero action, and this policy returns it.

PoseHold (baselines/pose_hold.py) is not used: it computes torques for "acceleration",
"force" and "ctrl" actuation and refuses "pd_target", where the drive itself closes the loop
at the physics rate. Nor does this baseline add gravity compensation: PDDrive's g(q) is the
joint-space gravity load of the tree with the base held in the air, which is not what the
joints of a robot standing on its feet carry (tests/engine/test_model_humanoid.py keeps it
standing 20 s without it).

The MPC is the sampling planner (baselines/sampling.py) on the task's own reward: every
control step, 16 plans of the joint targets (3 knots over a 0.5 s horizon, linear in between,
perturbed by 0.1 in action units, i.e. 0.05 rad) rolled out from the robot's exact state, the
hold-home plan always among them, and the best one's first action applied. Its copies of the
robot are not pushed (HumanoidTask.hide_future): it reacts to a push, it cannot brace for one.
"""

from __future__ import annotations

import numpy as np

from robodyn.envs.baselines.sampling import SamplingPlanner

TASK_ID = "RoboDyn/HumanoidPush-v0"


class HoldHome:
    """The zero action (targets at the home pose) for every env (Policy protocol)."""

    def __init__(self, env):
        self.shape = (env.num_envs, *env.single_action_space.shape)

    def reset(self, env, rows: np.ndarray) -> None:
        """Nothing to forget: the action is constant."""

    def act(self, env, obs: np.ndarray) -> np.ndarray:
        return np.zeros(self.shape)


def humanoid_pd(env) -> HoldHome:
    return HoldHome(env)


def humanoid_mpc(
    env, samples: int = 16, horizon: int = 25, knots: int = 3, noise: float = 0.1, **kwargs
) -> SamplingPlanner:
    """Sampling MPC on the task's reward (module docstring); kwargs go to SamplingPlanner."""
    return SamplingPlanner(env, samples=samples, horizon=horizon, knots=knots, noise=noise, **kwargs)
