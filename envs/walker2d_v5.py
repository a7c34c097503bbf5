"""RoboDyn/Walker2d-v5: Gymnasium's Walker2d-v5 on RoboDyn's engine
(gymnasium/envs/mujoco/walker2d_v5.py)."""

from __future__ import annotations

from robogym.checks import NON_NEGATIVE
from robogym.declare import Param
from robogym.mujoco_task import (
    PlanarWalkerTask,
    frame_skip_param,
    range_param,
    reset_noise_param,
    xml_file_param,
)
from robogym.randomize import locomotion, randomize_params
from robogym.task_envs import task_envs


class Walker2dTask(PlanarWalkerTask):
    """Gymnasium's Walker2d-v5: walk forward on two legs without falling."""

    # Gymnasium's DEFAULT_CAMERA_CONFIG
    default_camera_config = {
        "trackbodyid": 2,
        "distance": 4.0,
        "lookat": (0.0, 0.0, 1.15),
        "elevation": -20.0,
    }
    xml_file = xml_file_param("walker2d_v5.xml")
    frame_skip = frame_skip_param(4)
    forward_reward_weight = Param(1.0, "weight of reward_forward", NON_NEGATIVE)
    ctrl_cost_weight = Param(1e-3, "weight of the control cost", NON_NEGATIVE)
    healthy_reward = Param(1.0, "reward_survive per step while healthy", NON_NEGATIVE)
    terminate_when_unhealthy = Param(True, "end the episode when the walker is unhealthy")
    healthy_z_range = range_param((0.8, 2.0), "healthy bounds of the torso's height z (m)")
    healthy_angle_range = range_param((-1.0, 1.0), "healthy bounds of the torso's angle (rad)")
    reset_noise_scale = reset_noise_param(5e-3)
    randomization = locomotion("torso")  # physics drawn per episode with randomize=True
    randomize, randomize_scale = randomize_params(2.0)
    exclude_current_positions_from_observation = Param(True, "leave x out of the observation")


_DOC = """
## Description

Gymnasium's Walker2d-v5 (gymnasium/envs/mujoco/walker2d_v5.py), its model read from the
installed Gymnasium (walker2d_v5.xml: both feet with friction 1.9): a
planar biped of seven bodies walks forward. Same keywords and defaults, observation, reward
and `info` terms, termination and reset distribution, step for step equal to Gymnasium's
env (tests/envs/test_gymnasium_v5.py).

## Action Space

`Box(-1.0, 1.0, (6,), float32)`: the torques of the right thigh, leg and foot and the left
thigh, leg and foot motors.

## Observation Space

`Box(-inf, inf, (17,), float64)`: qpos without x (z, angle, the six joint angles), then
qvel (9) clipped to [-10, 10]. With exclude_current_positions_from_observation=False, x
comes first: `Box(-inf, inf, (18,), float64)`.

## Rewards

reward_forward (forward_reward_weight * x velocity) + reward_survive (healthy_reward while
healthy) + reward_ctrl (-ctrl_cost_weight * |action|^2, computed in float32 as Gymnasium
does from its float32 action). `info` also holds x_position, z_distance_from_origin and
x_velocity.

## Episode End

Terminated when unhealthy (if terminate_when_unhealthy): the torso's height z outside
healthy_z_range or its angle outside healthy_angle_range (open bounds); truncated after
1000 steps.

## Starting State

qpos0 and zero velocity, each plus uniform noise in [-reset_noise_scale,
reset_noise_scale].

## Arguments

{arguments}

## Version History

- v5: Gymnasium's Walker2d-v5.
"""

Walker2dEnv, Walker2dVectorEnv = task_envs(
    Walker2dTask,
    "RoboDyn/Walker2d-v5",
    _DOC,
    module=__name__,
    max_episode_steps=1000,
    summary="Gymnasium's Walker2d-v5: walk forward on two legs",
)
