"""RoboDyn/CartPole-v0: swing a pole up from hanging and balance it, by pushing its cart."""

from __future__ import annotations

import math

import numpy as np

from robogym.actuation import Actuation
from robogym.checks import NON_NEGATIVE, POSITIVE
from robogym.declare import Obs, Param
from robogym.task import Task
from robogym.task_envs import task_envs

UPRIGHT = 0.95  # cos(pole angle) above this counts as upright (within about 18 degrees)


class CartPoleTask(Task):
    """Readouts, reward, metrics and resets of the cart-pole swing-up."""

    model_file = "cartpole.xml"
    frame_skip = 2  # 0.01 s physics steps, 50 Hz control
    render_camera = "side"
    upright_weight = Param(1.0, "weight of reward_upright", NON_NEGATIVE)
    centered_weight = Param(0.5, "weight of reward_centered", NON_NEGATIVE)
    control_weight = Param(0.1, "weight of reward_control", NON_NEGATIVE)
    centered_scale = Param(1.0, "cart distance scale of reward_centered (m)", POSITIVE)
    reset_noise_scale = Param(1.0, "scales the start's noise (0: hanging still at the centre)", NON_NEGATIVE)
    observation = (
        Obs("cart_position", lambda t: t.physics.qpos("slider")),
        Obs("pole", lambda t: np.stack([np.cos(t.angle()), np.sin(t.angle())], axis=1), ("cos", "sin")),
        Obs("cart_velocity", lambda t: t.physics.qvel("slider")),
        Obs("pole_rate", lambda t: t.physics.qvel("hinge")),
    )

    def bind(self, physics) -> None:
        super().bind(physics)
        self._actuation = Actuation.ctrl(physics, ["push"])

    def actuation(self) -> Actuation:
        return self._actuation

    def angle(self) -> np.ndarray:
        """(B,) the pole's angle from upright (rad; pi hanging)."""
        return self.physics.qpos("hinge")

    def reset_rows(self, rows, rngs) -> None:
        p, s = self.physics, self.reset_noise_scale
        for r, rng in zip(rows, rngs, strict=True):
            u = rng.uniform(-1.0, 1.0, size=4)
            p.set_qpos("slider", 0.2 * s * u[0], [r])
            p.set_qpos("hinge", math.pi + 0.2 * s * u[1], [r])
            p.set_qvel("slider", 0.1 * s * u[2], [r])
            p.set_qvel("hinge", 0.1 * s * u[3], [r])

    def reward(self, action):
        x = self.physics.qpos("slider")
        a = action[:, 0]
        terms = {
            "reward_upright": self.upright_weight * 0.5 * (np.cos(self.angle()) + 1.0),
            "reward_centered": self.centered_weight * np.exp(-((x / self.centered_scale) ** 2)),
            "reward_control": -self.control_weight * a * a,
        }
        return sum(terms.values()), terms

    def metrics(self) -> dict[str, np.ndarray]:
        up = np.cos(self.angle())
        return {"upright": up, "success": (up > UPRIGHT).astype(np.float64)}


_DOC = """
## Description

A cart runs on a 5 m rail (assets/cartpole.xml; the rail's ends are joint limits at +-2.4 m)
and carries a 1 m pole on a hinge. The pole starts hanging; a motor pushing the cart must
swing it up and balance it upright, near the rail's centre.

## Action Space

`Box(-1, 1, (1,), float64)`: the motor's control, a force of 20 N at 1 (clipped into the box).

## Observation Space

`Box(-inf, inf, (5,), float64)`: cart_position (m), pole[cos], pole[sin] (of the pole's angle
from upright), cart_velocity (m/s), pole_rate (rad/s).

## Rewards

- `reward_upright` = upright_weight * (cos(angle) + 1) / 2: 1 upright, 0 hanging
- `reward_centered` = centered_weight * exp(-(x / centered_scale)^2)
- `reward_control` = -control_weight * a^2

The reward is exactly their sum; each term is in `info`, with the metrics `upright`
(cos of the angle) and `success` (1.0 when upright within about 18 degrees).

## Starting State

Hanging (angle pi) at the rail's centre, at rest, plus uniform noise of 0.2 m, 0.2 rad,
0.1 m/s and 0.1 rad/s times reset_noise_scale.

## Episode End

No termination; truncation after 500 steps (10 s).

## Arguments

{arguments}

## Version History

- v0: initial version.
"""


CartPoleEnv, CartPoleVectorEnv = task_envs(
    CartPoleTask,
    "RoboDyn/CartPole-v0",
    _DOC,
    module=__name__,
    max_episode_steps=500,
    summary="cart-pole: swing the pole up from hanging and balance it (ctrl)",
    scenarios={"fixed": {"reset_noise_scale": 0.0}},
)
