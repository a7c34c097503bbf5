"""RoboDyn/Humanoid-v5: Gymnasium's Humanoid-v5 on RoboDyn's engine
(gymnasium/envs/mujoco/humanoid_v5.py).

Not RoboDyn's own humanoid task (envs/humanoid_v0.py): this is Gymnasium's, with its model
read from the installed Gymnasium.
"""

from __future__ import annotations

import math

import numpy as np

from robogym.checks import NON_NEGATIVE
from robogym.declare import Param
from robogym.mujoco_task import (
    TrackedXYTask,
    frame_skip_param,
    range_param,
    reset_noise_param,
    xml_file_param,
)
from robogym.randomize import locomotion, randomize_params
from robogym.task_envs import task_envs

from .ant_v5 import body_labels


def mass_center_xy(task) -> np.ndarray:
    """(B, 2) x and y of the whole body's centre of mass: the bodies' xipos weighted by their
    masses (Gymnasium's mass_center)."""
    mass = task.physics.named_model.body_mass.all
    num = np.einsum("b,rbj->rj", mass, task.physics.named.xipos.all)
    return (num / mass.sum())[:, 0:2]


class HumanoidObservation:
    """The observation Gymnasium's Humanoid-v5 and HumanoidStandup-v5 share: qpos (without x
    and y by default), qvel, then cinert, cvel and cfrc_ext of every body but the world and
    qfrc_actuator of every dof but the free joint's, each part optional."""

    def body_parts(self) -> list[tuple[str, int]]:
        """(field, width) of the per-body parts observed, in order."""
        parts = []
        if self.include_cinert_in_observation:
            parts.append(("cinert", 10))
        if self.include_cvel_in_observation:
            parts.append(("cvel", 6))
        return parts

    def observation_names(self) -> list[str]:
        skip = 2 if self.exclude_current_positions_from_observation else 0
        nq, nv = self.init_qpos.size, self.init_qvel.size
        bodies = body_labels(self.physics)[1:]
        names = [f"qpos[{i}]" for i in range(skip, nq)] + [f"qvel[{i}]" for i in range(nv)]
        for field, width in self.body_parts():
            names += [f"{field}[{b}][{k}]" for b in bodies for k in range(width)]
        if self.include_qfrc_actuator_in_observation:
            names += [f"qfrc_actuator[{i}]" for i in range(6, nv)]
        if self.include_cfrc_ext_in_observation:
            names += [f"cfrc_ext[{b}][{k}]" for b in bodies for k in range(6)]
        return names

    def observe(self) -> np.ndarray:
        named = self.physics.named
        skip = 2 if self.exclude_current_positions_from_observation else 0
        B = self.physics.batch
        parts = [self.qpos()[:, skip:], self.qvel()]
        for field, _ in self.body_parts():
            parts.append(getattr(named, field).all[:, 1:].reshape(B, -1))
        if self.include_qfrc_actuator_in_observation:
            parts.append(named.qfrc_actuator.all[:, 6:])
        if self.include_cfrc_ext_in_observation:
            parts.append(named.cfrc_ext.all[:, 1:].reshape(B, -1))
        return np.concatenate(parts, axis=1)

    def square_sum(self, field: str) -> np.ndarray:
        """(B,) the sum of the squares of a field's every entry (np.sum(np.square(...)))."""
        values = getattr(self.physics.named, field).all
        return np.sum(np.square(values.reshape(values.shape[0], -1)), axis=1)

    def tendon_metrics(self) -> dict[str, np.ndarray]:
        """The tendons' lengths and velocities, (B, ntendon) each."""
        named = self.physics.named
        return {
            "tendon_length": named.ten_length.all.copy(),
            "tendon_velocity": named.ten_velocity.all.copy(),
        }


# the Action Space and Observation Space sections of both ports' documentation (Humanoid-v5,
# HumanoidStandup-v5): one robot, one observation (HumanoidObservation)
SPACES_DOC = """## Action Space

`Box(-0.4, 0.4, (17,), float32)`: the controls of the 17 abdomen, hip, knee, shoulder and
elbow motors.

## Observation Space

`Box(-inf, inf, (348,), float64)`: qpos without x and y (22), qvel (23), then of every body
but the world cinert (13 x 10) and cvel (13 x 6), qfrc_actuator of every dof but the free
joint's (17), cfrc_ext of every body but the world (13 x 6). The `include_*_in_observation`
keywords leave parts out; `exclude_current_positions_from_observation=False` adds x and y.
"""


class HumanoidTask(HumanoidObservation, TrackedXYTask):
    """Gymnasium's Humanoid-v5: a 3D humanoid walks forward (+x) without falling."""

    rne_post = True  # the contact forces cfrc_ext are observed and cost

    # Gymnasium's DEFAULT_CAMERA_CONFIG
    default_camera_config = {"trackbodyid": 1, "distance": 4.0, "lookat": (0.0, 0.0, 2.0), "elevation": -20.0}
    xml_file = xml_file_param("humanoid.xml")
    frame_skip = frame_skip_param(5)
    forward_reward_weight = Param(1.25, "weight of reward_forward", NON_NEGATIVE)
    ctrl_cost_weight = Param(0.1, "weight of the control cost", NON_NEGATIVE)
    contact_cost_weight = Param(5e-7, "weight of the contact cost", NON_NEGATIVE)
    contact_cost_range = range_param((-math.inf, 10.0), "the contact cost is clipped to this range")
    healthy_reward = Param(5.0, "reward_survive per step while healthy", NON_NEGATIVE)
    terminate_when_unhealthy = Param(True, "end the episode when the humanoid is unhealthy")
    healthy_z_range = range_param((1.0, 2.0), "healthy bounds (open) of the torso's height z (m)")
    reset_noise_scale = reset_noise_param(1e-2)
    randomization = locomotion("torso")  # physics drawn per episode with randomize=True
    randomize, randomize_scale = randomize_params(2.0)
    exclude_current_positions_from_observation = Param(True, "leave x and y out of the observation")
    include_cinert_in_observation = Param(True, "observe the bodies' inertias cinert")
    include_cvel_in_observation = Param(True, "observe the bodies' velocities cvel")
    include_qfrc_actuator_in_observation = Param(True, "observe the actuator forces qfrc_actuator")
    include_cfrc_ext_in_observation = Param(True, "observe the contact forces cfrc_ext")

    def is_healthy(self) -> np.ndarray:
        """(B,) bool: the torso's height z strictly inside healthy_z_range."""
        z = self.qpos()[:, 2]
        lo, hi = self.healthy_z_range
        return (lo < z) & (z < hi)

    def tracked_xy(self) -> np.ndarray:
        return mass_center_xy(self)

    def reward(self, action):
        survive = self.is_healthy() * self.healthy_reward
        ctrl_cost = self.ctrl_cost_weight * self.square_sum("ctrl")  # the controls, float64
        lo, hi = self.contact_cost_range
        contact_cost = np.clip(self.contact_cost_weight * self.square_sum("cfrc_ext"), lo, hi)
        return self.locomotion_reward(survive, ctrl_cost, contact_cost)

    def metrics(self) -> dict[str, np.ndarray]:
        return {**self.xy_metrics(), **self.tendon_metrics()}

    def reset_model(self, row, rng) -> None:
        self.reset_uniform(row, rng)


_DOC = f"""
## Description

Gymnasium's Humanoid-v5 (gymnasium/envs/mujoco/humanoid_v5.py), its model read from the
installed Gymnasium: a 3D bipedal robot (a free torso, legs and arms; 17 motors) walks
forward (+x) as fast as it can without falling. Same keywords and defaults, observation,
reward and `info` terms, termination and reset distribution, step for step equal to
Gymnasium's env (tests/envs/test_gymnasium_v5.py). Not RoboDyn's own humanoid task
(RoboDyn/HumanoidPush-v0).

{SPACES_DOC}
## Rewards

reward_forward (forward_reward_weight * the centre of mass's x velocity) + reward_survive
(while healthy) + reward_ctrl (-ctrl_cost_weight * |ctrl|^2) + reward_contact
(-contact_cost_weight * |cfrc_ext|^2, clipped to contact_cost_range). `info` also holds
x_position, y_position, tendon_length and tendon_velocity (arrays of the two tendons),
distance_from_origin, x_velocity and y_velocity.

## Episode End

Terminated when unhealthy (if terminate_when_unhealthy): the torso's z outside
healthy_z_range (open); truncated after 1000 steps.

## Arguments

{{arguments}}

## Version History

- v5: Gymnasium's Humanoid-v5.
"""

HumanoidEnv, HumanoidVectorEnv = task_envs(
    HumanoidTask,
    "RoboDyn/Humanoid-v5",
    _DOC,
    module=__name__,
    max_episode_steps=1000,
    summary="Gymnasium's Humanoid-v5: a humanoid walks forward without falling",
)
