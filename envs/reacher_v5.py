"""RoboDyn/Reacher-v5: Gymnasium's Reacher-v5 on RoboDyn's engine (gymnasium/envs/mujoco/reacher_v5.py)."""

from __future__ import annotations

import numpy as np

from robogym.checks import NON_NEGATIVE
from robogym.declare import Param
from robogym.mujoco_task import MujocoTask, frame_skip_param, xml_file_param
from robogym.task_envs import task_envs


class ReacherTask(MujocoTask):
    """Gymnasium's Reacher-v5: move a two-jointed arm's fingertip to a random target."""

    # Gymnasium's DEFAULT_CAMERA_CONFIG
    default_camera_config = {"trackbodyid": 0}
    xml_file = xml_file_param("reacher.xml")
    frame_skip = frame_skip_param(2)
    reward_dist_weight = Param(
        1.0, "weight of reward_dist (the fingertip's distance to the target)", NON_NEGATIVE
    )
    reward_control_weight = Param(1.0, "weight of reward_ctrl (the control cost)", NON_NEGATIVE)

    def observation_names(self) -> list[str]:
        nq = self.init_qpos.size
        return (
            ["cos(qpos[0])", "cos(qpos[1])", "sin(qpos[0])", "sin(qpos[1])"]
            + [f"qpos[{i}]" for i in range(2, nq)]
            + ["qvel[0]", "qvel[1]", "fingertip-target[x]", "fingertip-target[y]"]
        )

    def _to_target(self) -> np.ndarray:
        """(B, 3) fingertip minus target (Gymnasium's get_body_com: the bodies' xpos)."""
        xpos = self.physics.named.xpos
        return xpos["fingertip"] - xpos["target"]

    def observe(self) -> np.ndarray:
        q = self.qpos()
        theta = q[:, :2]
        return np.concatenate(
            [np.cos(theta), np.sin(theta), q[:, 2:], self.qvel()[:, :2], self._to_target()[:, :2]], axis=1
        )

    def reward(self, action):
        reward_dist = -np.linalg.norm(self._to_target(), axis=1) * self.reward_dist_weight
        reward_ctrl = -self.control_cost(self.reward_control_weight, action)  # float32, as Gymnasium's
        # Gymnasium's order: reward_dist + reward_ctrl (a float32 promoted), the terms' sum exactly
        return reward_dist + reward_ctrl, {"reward_dist": reward_dist, "reward_ctrl": reward_ctrl}

    def reset_model(self, row, rng) -> None:
        qpos = rng.uniform(low=-0.1, high=0.1, size=self.init_qpos.size) + self.init_qpos
        while True:
            goal = rng.uniform(low=-0.2, high=0.2, size=2)
            if np.linalg.norm(goal) < 0.2:
                break
        qpos[-2:] = goal
        qvel = self.init_qvel + rng.uniform(low=-0.005, high=0.005, size=self.init_qvel.size)
        qvel[-2:] = 0
        self.set_qpos_qvel(row, qpos, qvel)


_DOC = """
## Description

Gymnasium's Reacher-v5 (gymnasium/envs/mujoco/reacher_v5.py), its model read from the
installed Gymnasium: a two-jointed arm in the plane is to bring its fingertip to a target
placed at random within 0.2 of the origin at each episode's start. Same keywords and
defaults, observation, reward and `info` terms, termination and reset distribution, step for
step equal to Gymnasium's env (tests/envs/test_gymnasium_v5.py).

## Action Space

`Box(-1.0, 1.0, (2,), float32)`: the torques of the two joints.

## Observation Space

`Box(-inf, inf, (10,), float64)`: the cosines then the sines of the two joint angles, the
target's position (qpos[2:]), the two joints' velocities, and the x, y of the fingertip minus
the target.

## Rewards

reward_dist (-reward_dist_weight * the fingertip's distance to the target) + reward_ctrl
(-reward_control_weight * |action|^2, computed in float32 from the float32 action as
Gymnasium does).

## Episode End

Never terminated; truncated after 50 steps.

## Arguments

{arguments}

## Version History

- v5: Gymnasium's Reacher-v5.
"""

ReacherEnv, ReacherVectorEnv = task_envs(
    ReacherTask,
    "RoboDyn/Reacher-v5",
    _DOC,
    module=__name__,
    max_episode_steps=50,
    summary="Gymnasium's Reacher-v5: bring a two-jointed arm's fingertip to a target",
)
