"""RoboDyn/Swimmer-v5: Gymnasium's Swimmer-v5 on RoboDyn's engine
(gymnasium/envs/mujoco/swimmer_v5.py)."""

from __future__ import annotations

import numpy as np

from robogym.checks import NON_NEGATIVE
from robogym.declare import Param
from robogym.mujoco_task import PlanarTask, frame_skip_param, reset_noise_param, xml_file_param
from robogym.task_envs import task_envs


class SwimmerTask(PlanarTask):
    """Gymnasium's Swimmer-v5: a three-link swimmer moves forward in a viscous fluid."""

    tracked = 2  # x and y
    xml_file = xml_file_param("swimmer.xml")
    frame_skip = frame_skip_param(4)
    forward_reward_weight = Param(1.0, "weight of reward_forward", NON_NEGATIVE)
    ctrl_cost_weight = Param(1e-4, "weight of the control cost", NON_NEGATIVE)
    reset_noise_scale = reset_noise_param(0.1)
    exclude_current_positions_from_observation = Param(True, "leave x and y out of the observation")

    def reward(self, action):
        forward = self.forward_reward_weight * self.velocity()[:, 0]
        ctrl_cost = self.control_cost(self.ctrl_cost_weight, action)
        # Gymnasium's forward_reward - ctrl_cost, the terms' sum exactly
        terms = {"reward_forward": forward, "reward_ctrl": -ctrl_cost}
        return forward - ctrl_cost, terms

    def metrics(self) -> dict[str, np.ndarray]:
        xy = self.qpos()[:, 0:2]
        velocity = self.velocity()
        return {
            "x_position": xy[:, 0],
            "y_position": xy[:, 1],
            "distance_from_origin": np.sqrt(xy[:, 0] * xy[:, 0] + xy[:, 1] * xy[:, 1]),
            "x_velocity": velocity[:, 0],
            "y_velocity": velocity[:, 1],
        }

    def reset_model(self, row, rng) -> None:
        qpos = self.init_qpos + self.noise(rng, self.init_qpos.size)
        qvel = self.init_qvel + self.noise(rng, self.init_qvel.size)
        self.set_qpos_qvel(row, qpos, qvel)


_DOC = """
## Description

Gymnasium's Swimmer-v5 (gymnasium/envs/mujoco/swimmer_v5.py), its model read from the
installed Gymnasium: a planar swimmer of three links and two rotors moves forward through a
viscous fluid. Same keywords and defaults, observation, reward and `info` terms,
termination and reset distribution, step for step equal to Gymnasium's env
(tests/envs/test_gymnasium_v5.py).

## Action Space

`Box(-1.0, 1.0, (2,), float32)`: the torques of the two rotors.

## Observation Space

`Box(-inf, inf, (8,), float64)`: qpos without x and y (the tip's angle, the two rotor
angles), then qvel (5), unclipped. With exclude_current_positions_from_observation=False, x
and y come first: `Box(-inf, inf, (10,), float64)`.

## Rewards

reward_forward (forward_reward_weight * x velocity) + reward_ctrl (-ctrl_cost_weight *
|action|^2, computed in float32 as Gymnasium does from its float32 action). `info` also
holds x_position, y_position, distance_from_origin, x_velocity and y_velocity.

## Episode End

Never terminated; truncated after 1000 steps.

## Starting State

qpos0 and zero velocity, each plus uniform noise in [-reset_noise_scale,
reset_noise_scale].

## Arguments

{arguments}

## Version History

- v5: Gymnasium's Swimmer-v5.
"""

SwimmerEnv, SwimmerVectorEnv = task_envs(
    SwimmerTask,
    "RoboDyn/Swimmer-v5",
    _DOC,
    module=__name__,
    max_episode_steps=1000,
    summary="Gymnasium's Swimmer-v5: swim forward through a viscous fluid",
)
