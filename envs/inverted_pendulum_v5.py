"""RoboDyn/InvertedPendulum-v5: Gymnasium's InvertedPendulum-v5 on RoboDyn's engine
(gymnasium/envs/mujoco/inverted_pendulum_v5.py)."""

from __future__ import annotations

import numpy as np

from robogym.mujoco_task import MujocoTask, frame_skip_param, reset_noise_param, xml_file_param
from robogym.task_envs import task_envs


class InvertedPendulumTask(MujocoTask):
    """Gymnasium's InvertedPendulum-v5: keep a pole upright on a cart pushed along a rail."""

    # Gymnasium's DEFAULT_CAMERA_CONFIG
    default_camera_config = {"trackbodyid": 0, "distance": 2.04}
    xml_file = xml_file_param("inverted_pendulum.xml")
    frame_skip = frame_skip_param(2)
    reset_noise_scale = reset_noise_param(0.01)

    def observation_names(self) -> list[str]:
        nq, nv = self.init_qpos.size, self.init_qvel.size
        return [f"qpos[{i}]" for i in range(nq)] + [f"qvel[{i}]" for i in range(nv)]

    def observe(self) -> np.ndarray:
        return np.concatenate([self.qpos(), self.qvel()], axis=1)

    def terminated(self) -> np.ndarray:
        """(B,) bool: a state value not finite, or the pole's angle beyond 0.2 rad."""
        finite = np.all(np.isfinite(self.qpos()), axis=1) & np.all(np.isfinite(self.qvel()), axis=1)
        return ~finite | (np.abs(self.qpos()[:, 1]) > 0.2)

    def reward(self, action):
        survive = (~self.terminated()).astype(np.float64)  # Gymnasium's int(not terminated)
        return survive, {"reward_survive": survive}

    def reset_model(self, row, rng) -> None:
        qpos = self.init_qpos + self.noise(rng, self.init_qpos.size)
        qvel = self.init_qvel + self.noise(rng, self.init_qvel.size)
        self.set_qpos_qvel(row, qpos, qvel)


_DOC = """
## Description

Gymnasium's InvertedPendulum-v5 (gymnasium/envs/mujoco/inverted_pendulum_v5.py), its model
read from the installed Gymnasium: a cart on a rail carries a pole on a hinge, to be kept
upright by pushing the cart. Same keywords and defaults, observation, reward and `info`
terms, termination and reset distribution, step for step equal to Gymnasium's env
(tests/envs/test_gymnasium_v5.py).

## Action Space

`Box(-3.0, 3.0, (1,), float32)`: the force on the cart (the slider motor's control).

## Observation Space

`Box(-inf, inf, (4,), float64)`: qpos (the cart's position, the pole's angle), then qvel
(their velocities).

## Rewards

reward_survive: 1 per step while the pole is upright (the step does not terminate), else 0.

## Episode End

Terminated when a state value is not finite or the pole's angle exceeds 0.2 rad in
magnitude; truncated after 1000 steps.

## Arguments

{arguments}

## Version History

- v5: Gymnasium's InvertedPendulum-v5.
"""

InvertedPendulumEnv, InvertedPendulumVectorEnv = task_envs(
    InvertedPendulumTask,
    "RoboDyn/InvertedPendulum-v5",
    _DOC,
    module=__name__,
    max_episode_steps=1000,
    summary="Gymnasium's InvertedPendulum-v5: balance a pole on a cart",
)
