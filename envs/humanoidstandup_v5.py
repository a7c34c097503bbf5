"""RoboDyn/HumanoidStandup-v5: Gymnasium's HumanoidStandup-v5 on RoboDyn's engine
(gymnasium/envs/mujoco/humanoidstandup_v5.py)."""

from __future__ import annotations

import math

import numpy as np

from robogym.checks import NON_NEGATIVE
from robogym.declare import Param
from robogym.mujoco_task import MujocoTask, frame_skip_param, range_param, reset_noise_param, xml_file_param
from robogym.randomize import locomotion, randomize_params
from robogym.task_envs import task_envs

from .humanoid_v5 import SPACES_DOC, HumanoidObservation


class HumanoidStandupTask(HumanoidObservation, MujocoTask):
    """Gymnasium's HumanoidStandup-v5: a humanoid lying on the ground stands up."""

    rne_post = True  # the contact forces cfrc_ext are observed and cost

    # Gymnasium's DEFAULT_CAMERA_CONFIG
    default_camera_config = {
        "trackbodyid": 1,
        "distance": 4.0,
        "lookat": (0.0, 0.0, 0.8925),
        "elevation": -20.0,
    }
    xml_file = xml_file_param("humanoidstandup.xml")
    frame_skip = frame_skip_param(5)
    uph_cost_weight = Param(1.0, "weight of reward_linup (unused, as in Gymnasium)", NON_NEGATIVE)
    ctrl_cost_weight = Param(0.1, "weight of the control cost", NON_NEGATIVE)
    impact_cost_weight = Param(0.5e-6, "weight of the impact (contact) cost", NON_NEGATIVE)
    impact_cost_range = range_param((-math.inf, 10.0), "the impact cost is clipped to this range")
    reset_noise_scale = reset_noise_param(1e-2)
    randomization = locomotion("torso")  # physics drawn per episode with randomize=True
    randomize, randomize_scale = randomize_params(2.0)
    exclude_current_positions_from_observation = Param(True, "leave x and y out of the observation")
    include_cinert_in_observation = Param(True, "observe the bodies' inertias cinert")
    include_cvel_in_observation = Param(True, "observe the bodies' velocities cvel")
    include_qfrc_actuator_in_observation = Param(True, "observe the actuator forces qfrc_actuator")
    include_cfrc_ext_in_observation = Param(True, "observe the contact forces cfrc_ext")

    def reward(self, action):
        # Gymnasium's uph_cost: the torso's height over the physics timestep (not dt), unweighted
        uph = (self.qpos()[:, 2] - 0) / self.physics.timestep
        ctrl_cost = self.ctrl_cost_weight * self.square_sum("ctrl")  # the controls, float64
        lo, hi = self.impact_cost_range
        impact_cost = np.clip(self.impact_cost_weight * self.square_sum("cfrc_ext"), lo, hi)
        # Gymnasium's uph_cost - quad_ctrl_cost - quad_impact_cost + 1, term by term; its
        # constant 1 is reward_alive here (Gymnasium's info has no term for it)
        alive = np.ones_like(uph)
        terms = {
            "reward_linup": uph,
            "reward_quadctrl": -ctrl_cost,
            "reward_impact": -impact_cost,
            "reward_alive": alive,
        }
        return uph - ctrl_cost - impact_cost + alive, terms

    def metrics(self) -> dict[str, np.ndarray]:
        q = self.qpos()
        return {
            "x_position": q[:, 0],
            "y_position": q[:, 1],
            "z_distance_from_origin": q[:, 2] - self.init_qpos[2],
            **self.tendon_metrics(),
        }

    def reset_model(self, row, rng) -> None:
        self.reset_uniform(row, rng)


_DOC = f"""
## Description

Gymnasium's HumanoidStandup-v5 (gymnasium/envs/mujoco/humanoidstandup_v5.py), its model
read from the installed Gymnasium: Humanoid-v5's robot starts lying on the ground and is
rewarded for raising its torso. Same keywords and defaults, observation, reward and `info`
terms, termination and reset distribution, step for step equal to Gymnasium's env
(tests/envs/test_gymnasium_v5.py).

{SPACES_DOC}
## Rewards

reward_linup (the torso's z / the physics timestep) + reward_quadctrl (-ctrl_cost_weight *
|ctrl|^2) + reward_impact (-impact_cost_weight * |cfrc_ext|^2, clipped to
impact_cost_range) + reward_alive (1 every step). As in Gymnasium, uph_cost_weight is
accepted but weighs nothing. `info` also holds x_position, y_position,
z_distance_from_origin, tendon_length and tendon_velocity (arrays of the two tendons).

## Episode End

Never terminated; truncated after 1000 steps.

## Arguments

{{arguments}}

## Version History

- v5: Gymnasium's HumanoidStandup-v5.
"""

HumanoidStandupEnv, HumanoidStandupVectorEnv = task_envs(
    HumanoidStandupTask,
    "RoboDyn/HumanoidStandup-v5",
    _DOC,
    module=__name__,
    max_episode_steps=1000,
    summary="Gymnasium's HumanoidStandup-v5: a humanoid lying down stands up",
)
