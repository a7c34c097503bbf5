"""RoboDyn/Pusher-v5: Gymnasium's Pusher-v5 on RoboDyn's engine (gymnasium/envs/mujoco/pusher_v5.py)."""

from __future__ import annotations

import numpy as np

from robogym.checks import NON_NEGATIVE
from robogym.declare import Param
from robogym.mujoco_task import MujocoTask, frame_skip_param, xml_file_param
from robogym.task_envs import task_envs


class PusherTask(MujocoTask):
    """Gymnasium's Pusher-v5: push a cylinder to a goal with a seven-jointed arm."""

    # Gymnasium's DEFAULT_CAMERA_CONFIG
    default_camera_config = {"trackbodyid": -1, "distance": 4.0}
    xml_file = xml_file_param("pusher_v5.xml")
    frame_skip = frame_skip_param(5)
    reward_near_weight = Param(
        0.5, "weight of reward_near (the fingertip's distance to the object)", NON_NEGATIVE
    )
    reward_dist_weight = Param(1.0, "weight of reward_dist (the object's distance to the goal)", NON_NEGATIVE)
    reward_control_weight = Param(0.1, "weight of reward_ctrl (the control cost)", NON_NEGATIVE)

    def observation_names(self) -> list[str]:
        return (
            [f"qpos[{i}]" for i in range(7)]
            + [f"qvel[{i}]" for i in range(7)]
            + [f"{body}[{c}]" for body in ("tips_arm", "object", "goal") for c in "xyz"]
        )

    def observe(self) -> np.ndarray:
        xpos = self.physics.named.xpos  # Gymnasium's get_body_com
        return np.concatenate(
            [self.qpos()[:, :7], self.qvel()[:, :7], xpos["tips_arm"], xpos["object"], xpos["goal"]], axis=1
        )

    def reward(self, action):
        xpos = self.physics.named.xpos
        vec_1 = xpos["object"] - xpos["tips_arm"]
        vec_2 = xpos["object"] - xpos["goal"]
        reward_near = -np.linalg.norm(vec_1, axis=1) * self.reward_near_weight
        reward_dist = -np.linalg.norm(vec_2, axis=1) * self.reward_dist_weight
        reward_ctrl = -self.control_cost(self.reward_control_weight, action)  # float32, as Gymnasium's
        # Gymnasium's order: (reward_dist + reward_ctrl) + reward_near, the terms' sum exactly
        terms = {"reward_dist": reward_dist, "reward_ctrl": reward_ctrl, "reward_near": reward_near}
        return reward_dist + reward_ctrl + reward_near, terms

    def reset_model(self, row, rng) -> None:
        qpos = self.init_qpos.copy()  # Gymnasium writes into its init_qpos: only these entries
        goal_pos = np.asarray([0, 0])
        while True:
            cylinder_pos = np.concatenate(
                [rng.uniform(low=-0.3, high=0, size=1), rng.uniform(low=-0.2, high=0.2, size=1)]
            )
            if np.linalg.norm(cylinder_pos - goal_pos) > 0.17:
                break
        qpos[-4:-2] = cylinder_pos
        qpos[-2:] = goal_pos
        qvel = self.init_qvel + rng.uniform(low=-0.005, high=0.005, size=self.init_qvel.size)
        qvel[-4:] = 0
        self.set_qpos_qvel(row, qpos, qvel)


_DOC = """
## Description

Gymnasium's Pusher-v5 (gymnasium/envs/mujoco/pusher_v5.py), its model read from the
installed Gymnasium: a seven-jointed arm on a table is to push a cylinder (the object,
placed at random at each episode's start, more than 0.17 from the goal) to a fixed goal.
Same keywords and defaults, observation, reward and `info` terms, termination and reset
distribution, step for step equal to Gymnasium's env (tests/envs/test_gymnasium_v5.py).

## Action Space

`Box(-2.0, 2.0, (7,), float32)`: the torques of the seven arm joints.

## Observation Space

`Box(-inf, inf, (23,), float64)`: the arm's seven joint angles and seven joint velocities,
then the positions (x, y, z) of the fingertip (tips_arm), the object and the goal.

## Rewards

reward_dist (-reward_dist_weight * the object's distance to the goal) + reward_ctrl
(-reward_control_weight * |action|^2, computed in float32 from the float32 action as
Gymnasium does) + reward_near (-reward_near_weight * the fingertip's distance to the object).

## Episode End

Never terminated; truncated after 100 steps.

## Arguments

{arguments}

## Version History

- v5: Gymnasium's Pusher-v5.
"""

PusherEnv, PusherVectorEnv = task_envs(
    PusherTask,
    "RoboDyn/Pusher-v5",
    _DOC,
    module=__name__,
    max_episode_steps=100,
    summary="Gymnasium's Pusher-v5: push a cylinder to a goal with an arm",
)
