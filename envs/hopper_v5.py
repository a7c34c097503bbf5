"""RoboDyn/Hopper-v5: Gymnasium's Hopper-v5 on RoboDyn's engine (gymnasium/envs/mujoco/hopper_v5.py)."""

from __future__ import annotations

import math

import numpy as np

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


class HopperTask(PlanarWalkerTask):
    """Gymnasium's Hopper-v5: hop forward on one leg without falling."""

    # Gymnasium's DEFAULT_CAMERA_CONFIG
    default_camera_config = {
        "trackbodyid": 2,
        "distance": 3.0,
        "lookat": (0.0, 0.0, 1.15),
        "elevation": -20.0,
    }
    xml_file = xml_file_param("hopper.xml")
    frame_skip = frame_skip_param(4)
    forward_reward_weight = Param(1.0, "weight of reward_forward", NON_NEGATIVE)
    ctrl_cost_weight = Param(1e-3, "weight of the control cost", NON_NEGATIVE)
    healthy_reward = Param(1.0, "reward_survive per step while healthy", NON_NEGATIVE)
    terminate_when_unhealthy = Param(True, "end the episode when the hopper is unhealthy")
    healthy_state_range = range_param((-100.0, 100.0), "healthy bounds of every state but x, z")
    healthy_z_range = range_param((0.7, math.inf), "healthy bounds of the torso's height z (m)")
    healthy_angle_range = range_param((-0.2, 0.2), "healthy bounds of the torso's angle (rad)")
    reset_noise_scale = reset_noise_param(5e-3)
    randomization = locomotion("torso")  # physics drawn per episode with randomize=True
    randomize, randomize_scale = randomize_params(2.0)
    exclude_current_positions_from_observation = Param(True, "leave x out of the observation")

    def is_healthy(self) -> np.ndarray:
        """(B,) bool: the torso's height z and angle inside their ranges (PlanarWalkerTask),
        and every state but x and z (qpos[2:], then qvel) strictly inside healthy_state_range."""
        lo, hi = self.healthy_state_range
        state = self.state_vector()[:, 2:]
        return np.all((lo < state) & (state < hi), axis=1) & super().is_healthy()


_DOC = """
## Description

Gymnasium's Hopper-v5 (gymnasium/envs/mujoco/hopper_v5.py), its model read from the
installed Gymnasium: a one-legged robot of four bodies hops forward. Same keywords and
defaults, observation, reward and `info` terms, termination and reset distribution, step for
step equal to Gymnasium's env (tests/envs/test_gymnasium_v5.py).

## Action Space

`Box(-1, 1, (3,), float32)`: the torques of the thigh, leg and foot motors.

## Observation Space

`Box(-inf, inf, (11,), float64)`: qpos without x (z, angle, the three joint angles), then
qvel clipped to [-10, 10].

## Rewards

reward_forward (x velocity) + reward_survive (while healthy) + reward_ctrl (-ctrl_cost_weight
* |action|^2).

## Episode End

Terminated when unhealthy (if terminate_when_unhealthy); truncated after 1000 steps.

## Arguments

{arguments}

## Version History

- v5: Gymnasium's Hopper-v5.
"""

HopperEnv, HopperVectorEnv = task_envs(
    HopperTask,
    "RoboDyn/Hopper-v5",
    _DOC,
    module=__name__,
    max_episode_steps=1000,
    summary="Gymnasium's Hopper-v5: hop forward on one leg",
)
