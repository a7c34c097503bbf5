"""RoboDyn/Ant-v5: Gymnasium's Ant-v5 on RoboDyn's engine (gymnasium/envs/mujoco/ant_v5.py)."""

from __future__ import annotations

import numpy as np

from robogym.checks import NON_NEGATIVE, is_int
from robogym.declare import Param
from robogym.errors import ArgumentTypeError, InvalidArgumentError
from robogym.mujoco_task import (
    TrackedXYTask,
    frame_skip_param,
    range_param,
    reset_noise_param,
    xml_file_param,
)
from robogym.randomize import locomotion, randomize_params
from robogym.task_envs import task_envs


def _body(name: str, value) -> int | str:
    """A body of the model: its id (an int >= 0) or its name (a str), as MuJoCo's
    `data.body(...)` takes it; whether the model has it is checked once it is loaded."""
    if isinstance(value, str):
        return value
    if is_int(value) and not isinstance(value, bool):
        if value < 0:
            raise InvalidArgumentError(f"{name} must be a body id >= 0 or a body name, got {value!r}")
        return int(value)
    raise ArgumentTypeError(f"{name} must be a body id (an int) or a body name (a str), got {value!r}")


def body_labels(physics) -> list[str]:
    """A label for every body, in id order: its name, or `body<id>` for an unnamed one."""
    nbody = physics.named.xpos.all.shape[1]
    named = {physics.body_id(n): n for n in physics.named.xpos.names}
    return [named.get(i, f"body{i}") for i in range(nbody)]


class AntTask(TrackedXYTask):
    """Gymnasium's Ant-v5: a four-legged robot walks forward (+x)."""

    rne_post = True  # the contact forces cfrc_ext are observed and cost

    # Gymnasium's DEFAULT_CAMERA_CONFIG
    default_camera_config = {"distance": 4.0}
    xml_file = xml_file_param("ant.xml")
    frame_skip = frame_skip_param(5)
    forward_reward_weight = Param(1.0, "weight of reward_forward", NON_NEGATIVE)
    ctrl_cost_weight = Param(0.5, "weight of the control cost", NON_NEGATIVE)
    contact_cost_weight = Param(5e-4, "weight of the contact cost", NON_NEGATIVE)
    healthy_reward = Param(1.0, "reward_survive per step while healthy", NON_NEGATIVE)
    main_body = Param(
        1,
        "the body whose x-y velocity is rewarded (its id or name)",
        convert=_body,
        allowed="a body id (int) or name (str)",
    )
    terminate_when_unhealthy = Param(True, "end the episode when the ant is unhealthy")
    healthy_z_range = range_param((0.2, 1.0), "healthy bounds (closed) of the torso's height z (m)")
    contact_force_range = range_param((-1.0, 1.0), "the contact forces are clipped to this range")
    reset_noise_scale = reset_noise_param(0.1)
    randomization = locomotion("torso")  # physics drawn per episode with randomize=True
    randomize, randomize_scale = randomize_params(2.0)
    exclude_current_positions_from_observation = Param(True, "leave x and y out of the observation")
    include_cfrc_ext_in_observation = Param(True, "observe the (clipped) contact forces")

    def bind(self, physics) -> None:
        super().bind(physics)
        nbody = physics.named.xpos.all.shape[1]
        if isinstance(self.main_body, str):
            physics.named.xpos[self.main_body]  # an UnknownNameError listing the bodies if none
        elif self.main_body >= nbody:
            raise InvalidArgumentError(f"main_body must be a body id below {nbody}, got {self.main_body}")
        self._bodies = body_labels(physics)

    def tracked_xy(self) -> np.ndarray:
        """(B, 2) the main body's x and y (a new array)."""
        xpos = self.physics.named.xpos
        if isinstance(self.main_body, str):
            return xpos[self.main_body][:, :2].copy()
        return xpos.all[:, self.main_body, :2].copy()

    def contact_forces(self) -> np.ndarray:
        """(B, nbody, 6) cfrc_ext clipped to contact_force_range."""
        lo, hi = self.contact_force_range
        return np.clip(self.physics.named.cfrc_ext.all, lo, hi)

    def observation_names(self) -> list[str]:
        skip = 2 if self.exclude_current_positions_from_observation else 0
        nq, nv = self.init_qpos.size, self.init_qvel.size
        names = [f"qpos[{i}]" for i in range(skip, nq)] + [f"qvel[{i}]" for i in range(nv)]
        if self.include_cfrc_ext_in_observation:
            names += [f"cfrc_ext[{b}][{k}]" for b in self._bodies[1:] for k in range(6)]
        return names

    def observe(self) -> np.ndarray:
        skip = 2 if self.exclude_current_positions_from_observation else 0
        parts = [self.qpos()[:, skip:], self.qvel()]
        if self.include_cfrc_ext_in_observation:
            forces = self.contact_forces()[:, 1:]
            parts.append(forces.reshape(forces.shape[0], -1))
        return np.concatenate(parts, axis=1)

    def is_healthy(self) -> np.ndarray:
        """(B,) bool: every state finite and the torso's height z inside healthy_z_range."""
        state = self.state_vector()
        lo, hi = self.healthy_z_range
        return np.all(np.isfinite(state), axis=1) & (lo <= state[:, 2]) & (state[:, 2] <= hi)

    def reward(self, action):
        survive = self.is_healthy() * self.healthy_reward
        ctrl_cost = self.control_cost(self.ctrl_cost_weight, action)  # float32, as Gymnasium's
        forces = self.contact_forces().reshape(self.physics.batch, -1)
        contact_cost = self.contact_cost_weight * np.sum(np.square(forces), axis=1)
        return self.locomotion_reward(survive, ctrl_cost, contact_cost)

    def metrics(self) -> dict[str, np.ndarray]:
        return self.xy_metrics()

    def reset_model(self, row, rng) -> None:
        qpos = self.init_qpos + self.noise(rng, self.init_qpos.size)
        qvel = self.init_qvel + self.reset_noise_scale * rng.standard_normal(self.init_qvel.size)
        self.set_qpos_qvel(row, qpos, qvel)


_DOC = """
## Description

Gymnasium's Ant-v5 (gymnasium/envs/mujoco/ant_v5.py), its model read from the installed
Gymnasium: a 3D quadruped (a free torso and four legs of two links each, eight hinges)
walks forward (+x). Same keywords and defaults, observation, reward and `info` terms,
termination and reset distribution, step for step equal to Gymnasium's env
(tests/envs/test_gymnasium_v5.py).

## Action Space

`Box(-1.0, 1.0, (8,), float32)`: the torques of the eight hip and ankle motors.

## Observation Space

`Box(-inf, inf, (105,), float64)`: qpos without x and y (the torso's z and quaternion, the
eight joint angles), qvel, then the contact forces cfrc_ext of every body but the world
(13 x 6) clipped to contact_force_range. `exclude_current_positions_from_observation=False`
adds x and y (107); `include_cfrc_ext_in_observation=False` leaves the forces out (27).

## Rewards

reward_forward (forward_reward_weight * the main body's x velocity) + reward_survive (while
healthy) + reward_ctrl (-ctrl_cost_weight * |action|^2) + reward_contact
(-contact_cost_weight * |clipped cfrc_ext|^2). `info` also holds x_position, y_position,
distance_from_origin, x_velocity and y_velocity.

## Episode End

Terminated when unhealthy (if terminate_when_unhealthy): a state not finite, or the torso's
z outside healthy_z_range; truncated after 1000 steps.

## Arguments

{arguments}

## Version History

- v5: Gymnasium's Ant-v5.
"""

AntEnv, AntVectorEnv = task_envs(
    AntTask,
    "RoboDyn/Ant-v5",
    _DOC,
    module=__name__,
    max_episode_steps=1000,
    summary="Gymnasium's Ant-v5: a four-legged robot walks forward",
)
