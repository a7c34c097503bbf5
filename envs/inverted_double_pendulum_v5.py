"""RoboDyn/InvertedDoublePendulum-v5: Gymnasium's InvertedDoublePendulum-v5 on RoboDyn's
engine (gymnasium/envs/mujoco/inverted_double_pendulum_v5.py)."""

from __future__ import annotations

import numpy as np

from robogym.checks import NON_NEGATIVE
from robogym.declare import Param
from robogym.mujoco_task import MujocoTask, frame_skip_param, reset_noise_param, xml_file_param
from robogym.task_envs import task_envs


class InvertedDoublePendulumTask(MujocoTask):
    """Gymnasium's InvertedDoublePendulum-v5: keep two poles, one on the other, upright on a
    cart pushed along a rail."""

    xml_file = xml_file_param("inverted_double_pendulum.xml")
    frame_skip = frame_skip_param(5)
    healthy_reward = Param(10.0, "reward_survive per step while the tip is above y = 1", NON_NEGATIVE)
    reset_noise_scale = reset_noise_param(0.1)

    def observation_names(self) -> list[str]:
        nq, nv = self.init_qpos.size, self.init_qvel.size
        return (
            ["qpos[0]"]
            + [f"sin(qpos[{i}])" for i in range(1, nq)]
            + [f"cos(qpos[{i}])" for i in range(1, nq)]
            + [f"qvel[{i}]" for i in range(nv)]
            + ["qfrc_constraint[0]"]
        )

    def observe(self) -> np.ndarray:
        q = self.qpos()
        return np.concatenate(
            [
                q[:, :1],  # the cart's position
                np.sin(q[:, 1:]),  # the poles' angles
                np.cos(q[:, 1:]),
                np.clip(self.qvel(), -10, 10),
                np.clip(self.physics.named.qfrc_constraint.all, -10, 10)[:, :1],
            ],
            axis=1,
        )

    def _tip(self) -> tuple[np.ndarray, np.ndarray]:
        """(x, y) of the first site (the second pole's tip): Gymnasium's
        `x, _, y = data.site_xpos[0]`."""
        site = self.physics.named.site_xpos.all[:, 0]
        return site[:, 0], site[:, 2]

    def terminated(self) -> np.ndarray:
        return self._tip()[1] <= 1

    def _penalties(self) -> tuple[np.ndarray, np.ndarray]:
        """(dist_penalty, vel_penalty) (B,): Gymnasium's, of the tip and the hinges' velocities."""
        x, y = self._tip()
        v = self.qvel()
        v1, v2 = v[:, 1], v[:, 2]
        dist_penalty = 0.01 * x**2 + (y - 2) ** 2
        vel_penalty = 1e-3 * v1**2 + 5e-3 * v2**2
        return dist_penalty, vel_penalty

    def reward(self, action):
        dist_penalty, vel_penalty = self._penalties()
        alive_bonus = self.healthy_reward * ~self.terminated()  # healthy_reward * int(not terminated)
        # Gymnasium's order: (alive_bonus - dist_penalty) - vel_penalty, the terms' sum exactly
        terms = {
            "reward_survive": alive_bonus,
            "reward_distance": -dist_penalty,
            "reward_velocity": -vel_penalty,
        }
        return alive_bonus - dist_penalty - vel_penalty, terms

    def metrics(self) -> dict[str, np.ndarray]:
        """Gymnasium's info names of the two penalty terms (reward_distance, reward_velocity)."""
        dist_penalty, vel_penalty = self._penalties()
        return {"distance_penalty": -dist_penalty, "velocity_penalty": -vel_penalty}

    def reset_model(self, row, rng) -> None:
        qpos = self.init_qpos + self.noise(rng, self.init_qpos.size)
        qvel = self.init_qvel + rng.standard_normal(self.init_qvel.size) * self.reset_noise_scale
        self.set_qpos_qvel(row, qpos, qvel)


_DOC = """
## Description

Gymnasium's InvertedDoublePendulum-v5 (gymnasium/envs/mujoco/inverted_double_pendulum_v5.py),
its model read from the installed Gymnasium: a cart on a rail carries a pole, which carries
a second pole, both on hinges; the tip of the second is to be kept high by pushing the cart.
Same keywords and defaults, observation, reward and `info` terms, termination and reset
distribution, step for step equal to Gymnasium's env (tests/envs/test_gymnasium_v5.py).

## Action Space

`Box(-1.0, 1.0, (1,), float32)`: the force on the cart (the slider motor's control).

## Observation Space

`Box(-inf, inf, (9,), float64)`: the cart's position, the sines then the cosines of the two
hinge angles, qvel clipped to [-10, 10], and the slider's constraint force (qfrc_constraint
[0]) clipped to [-10, 10].

## Rewards

reward_survive (healthy_reward while the tip is above y = 1) + reward_distance
(-(0.01 x^2 + (y - 2)^2) of the tip's site) + reward_velocity (-(1e-3 w1^2 + 5e-3 w2^2) of
the hinges' angular velocities). `info` also reports the last two under Gymnasium's names,
distance_penalty and velocity_penalty.

## Episode End

Terminated when the tip of the second pole is at height y <= 1; truncated after 1000 steps.

## Arguments

{arguments}

## Version History

- v5: Gymnasium's InvertedDoublePendulum-v5.
"""

InvertedDoublePendulumEnv, InvertedDoublePendulumVectorEnv = task_envs(
    InvertedDoublePendulumTask,
    "RoboDyn/InvertedDoublePendulum-v5",
    _DOC,
    module=__name__,
    max_episode_steps=1000,
    summary="Gymnasium's InvertedDoublePendulum-v5: balance two poles on a cart",
)
