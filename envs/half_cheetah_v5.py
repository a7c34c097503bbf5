"""RoboDyn/HalfCheetah-v5: Gymnasium's HalfCheetah-v5 on RoboDyn's engine
(gymnasium/envs/mujoco/half_cheetah_v5.py)."""

from __future__ import annotations

import numpy as np

from robogym.checks import NON_NEGATIVE
from robogym.declare import Param
from robogym.mujoco_task import PlanarTask, frame_skip_param, reset_noise_param, xml_file_param
from robogym.randomize import locomotion, randomize_params
from robogym.task_envs import task_envs


class HalfCheetahTask(PlanarTask):
    """Gymnasium's HalfCheetah-v5: a planar cheetah runs forward."""

    # Gymnasium's DEFAULT_CAMERA_CONFIG
    default_camera_config = {"distance": 4.0}
    xml_file = xml_file_param("half_cheetah.xml")
    frame_skip = frame_skip_param(5)
    forward_reward_weight = Param(1.0, "weight of reward_forward", NON_NEGATIVE)
    ctrl_cost_weight = Param(0.1, "weight of the control cost", NON_NEGATIVE)
    reset_noise_scale = reset_noise_param(0.1)
    randomization = locomotion("torso")  # physics drawn per episode with randomize=True
    randomize, randomize_scale = randomize_params(2.0)
    exclude_current_positions_from_observation = Param(True, "leave x out of the observation")

    def reward(self, action):
        forward = self.forward_reward_weight * self.velocity()[:, 0]
        ctrl_cost = self.control_cost(self.ctrl_cost_weight, action)
        # Gymnasium's forward_reward - ctrl_cost, the terms' sum exactly
        terms = {"reward_forward": forward, "reward_ctrl": -ctrl_cost}
        return forward - ctrl_cost, terms

    def metrics(self) -> dict[str, np.ndarray]:
        return {"x_position": self.qpos()[:, 0], "x_velocity": self.velocity()[:, 0]}

    def reset_model(self, row, rng) -> None:
        qpos = self.init_qpos + self.noise(rng, self.init_qpos.size)
        qvel = self.init_qvel + self.reset_noise_scale * rng.standard_normal(self.init_qvel.size)
        self.set_qpos_qvel(row, qpos, qvel)


_DOC = """
## Description

Gymnasium's HalfCheetah-v5 (gymnasium/envs/mujoco/half_cheetah_v5.py), its model read from
the installed Gymnasium: a planar cat-like robot of 9 bodies and 8 joints (6 of them
actuated) runs forward. Same keywords and defaults, observation, reward and `info` terms,
termination and reset distribution, step for step equal to Gymnasium's env
(tests/envs/test_gymnasium_v5.py).

## Action Space

`Box(-1.0, 1.0, (6,), float32)`: the torques of the back thigh, shin and foot and the front
thigh, shin and foot motors.

## Observation Space

`Box(-inf, inf, (17,), float64)`: qpos without x (z, angle, the six joint angles), then qvel
(9), unclipped. With exclude_current_positions_from_observation=False, x comes first:
`Box(-inf, inf, (18,), float64)`.

## Rewards

reward_forward (forward_reward_weight * x velocity) + reward_ctrl (-ctrl_cost_weight *
|action|^2, computed in float32 as Gymnasium does from its float32 action). `info` also
holds x_position and x_velocity.

## Episode End

Never terminated; truncated after 1000 steps.

## Starting State

qpos0 plus uniform noise in [-reset_noise_scale, reset_noise_scale], zero velocity plus
reset_noise_scale times standard normal noise.

## Arguments

{arguments}

## Version History

- v5: Gymnasium's HalfCheetah-v5.
"""

HalfCheetahEnv, HalfCheetahVectorEnv = task_envs(
    HalfCheetahTask,
    "RoboDyn/HalfCheetah-v5",
    _DOC,
    module=__name__,
    max_episode_steps=1000,
    summary="Gymnasium's HalfCheetah-v5: a planar cheetah runs forward",
)
