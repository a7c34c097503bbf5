"""RoboDyn/HalfCheetah-v5: Gymnasium's HalfCheetah-v5 on RoboDyn's engine
(gymnasium/envs/mujoco/half_cheetah_v5.py)."""

from __future__ import annotations

import numpy as np

from robogym.checks import NON_NEGATIVE
from robogym.declare import Param, State
from robogym.mujoco_task import MujocoTask, frame_skip_param, reset_noise_param, xml_file_param
from robogym.task_envs import task_envs


def control_cost(weight: float, action: np.ndarray) -> np.ndarray:
    """(B,) weight * |action|^2 as Gymnasium computes it from an action of its float32 action
    space: squared and summed in float32, scaled in float32 (a Python float times a float32
    is a float32 under NumPy 2's promotion rules)."""
    a = np.asarray(action, dtype=np.float32)  # exact: the action is a float32 Box's
    return weight * np.sum(np.square(a), axis=1)


class HalfCheetahTask(MujocoTask):
    """Gymnasium's HalfCheetah-v5: a planar cheetah runs forward."""

    xml_file = xml_file_param("half_cheetah.xml")
    frame_skip = frame_skip_param(5)
    forward_reward_weight = Param(1.0, "weight of reward_forward", NON_NEGATIVE)
    ctrl_cost_weight = Param(0.1, "weight of the control cost", NON_NEGATIVE)
    reset_noise_scale = reset_noise_param(0.1)
    exclude_current_positions_from_observation = Param(True, "leave x out of the observation")
    x_before = State("x at the start of the step (for x_velocity)", reset=None)

    def observation_names(self) -> list[str]:
        skip = 1 if self.exclude_current_positions_from_observation else 0
        nq, nv = self.init_qpos.size, self.init_qvel.size
        return [f"qpos[{i}]" for i in range(skip, nq)] + [f"qvel[{i}]" for i in range(nv)]

    def observe(self) -> np.ndarray:
        skip = 1 if self.exclude_current_positions_from_observation else 0
        return np.concatenate([self.qpos()[:, skip:], self.qvel()], axis=1)

    def apply_action(self, action: np.ndarray) -> None:
        self.x_before[:] = self.qpos()[:, 0]
        super().apply_action(action)

    def x_velocity(self) -> np.ndarray:
        return (self.qpos()[:, 0] - self.x_before) / self.dt

    def reward(self, action):
        forward = self.forward_reward_weight * self.x_velocity()
        ctrl_cost = control_cost(self.ctrl_cost_weight, action)
        # Gymnasium's forward_reward - ctrl_cost, the terms' sum exactly
        terms = {"reward_forward": forward, "reward_ctrl": -ctrl_cost}
        return forward - ctrl_cost, terms

    def metrics(self) -> dict[str, np.ndarray]:
        return {"x_position": self.qpos()[:, 0], "x_velocity": self.x_velocity()}

    def reset_model(self, row, rng) -> None:
        qpos = self.init_qpos + self.noise(rng, self.init_qpos.size)
        qvel = self.init_qvel + self.reset_noise_scale * rng.standard_normal(self.init_qvel.size)
        self.set_qpos_qvel(row, qpos, qvel)
        self.x_before[row] = qpos[0]


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
