"""A test task with a floating base: assets/tests/floating_arm.xml (a free-floating box
carrying a two-link arm) under "pd_target" actuation of its two hinges.

Registered as `RoboDynTest/FloatingArm-v0` when this module is imported, so every check
parametrized over the registered tasks runs on a model with a free joint too: named access
to a free joint's pose and velocity in reset, a mask that holds the hinges but never the
base, and the tangent-space linearization of a state with a quaternion. Its keywords
sensor_noise, sensor_noise_kind and observation_delay put a robogym.SensorModel on the
observation (off by default), which tests/robogym/test_sensor_model.py checks.
"""

from __future__ import annotations

import numpy as np

from robogym.actuation import Actuation
from robogym.declare import Param
from robogym.sensor_model import sensor_params
from robogym.task import Task
from robogym.task_envs import task_envs

TASK_ID = "RoboDynTest/FloatingArm-v0"
GOAL = np.array([0.55, 0.0, -0.1])  # tip position relative to the base, m


class FloatingArmTask(Task):
    """Reach GOAL (relative to the floating base) with the arm's tip; the base tumbles freely."""

    model_file = "tests/floating_arm.xml"
    frame_skip = 4  # 0.02 s
    render_camera = "track"  # follows the falling arm

    # no bounds declared: any finite number (tests/adversarial/test_env.py checks NaN is refused)
    reach_weight = Param(1.0, "weight of reward_reach")
    control_weight = Param(0.01, "weight of reward_control")
    reach_scale = Param(0.2, "distance scale of reward_reach (m)")
    sensor_noise, sensor_noise_kind, observation_delay = sensor_params("the sensor vector's noise scale")

    def bind(self, physics) -> None:
        super().bind(physics)
        self._actuation = Actuation.pd_target(
            physics,
            ["shoulder", "elbow"],
            kp=[30.0, 12.0],
            kd=[2.0, 0.8],
            scale=1.5,
        )
        self._base = physics.sensor("base_pos")
        self._tip = physics.sensor("tip_pos")

    def actuation(self) -> Actuation:
        return self._actuation

    def reset_rows(self, rows, rngs) -> None:
        p = self.physics
        for r, rng in zip(rows, rngs, strict=True):
            q = rng.normal(size=4)
            p.set_free_pose("base", [0.0, 0.0, 1.0], q, [r])
            p.set_free_velocity("base", rng.uniform(-0.2, 0.2, 3), rng.uniform(-0.5, 0.5, 3), [r])
            p.set_qpos("shoulder", rng.uniform(-0.5, 0.5), [r])
            p.set_qpos("elbow", rng.uniform(-0.5, 0.5), [r])
            p.set_qvel("shoulder", 0.0, [r])
            p.set_qvel("elbow", 0.0, [r])

    def tip_error(self) -> np.ndarray:
        """(B,) distance of the tip from GOAL, relative to the base (m)."""
        return np.linalg.norm(self._tip - self._base - GOAL, axis=1)

    def reward(self, action):
        terms = {
            "reward_reach": self.reach_weight * np.exp(-self.tip_error() / self.reach_scale),
            "reward_control": -self.control_weight * np.sum(action * action, axis=1),
        }
        return terms["reward_reach"] + terms["reward_control"], terms

    def metrics(self) -> dict[str, np.ndarray]:
        return {"tip_error": self.tip_error()}


_DOC = """Reach a goal with a two-link arm on a tumbling free base.

## Action Space

`Box(-1, 1, (2,), float64)`: the two motors' controls.

## Observation Space

`Box(-inf, inf, (14,), float64)`: the model's sensors.

{arguments}
"""

FloatingArmEnv, FloatingArmVectorEnv = task_envs(
    FloatingArmTask,
    TASK_ID,
    _DOC,
    module=__name__,
    max_episode_steps=200,
    summary="test task: a two-link arm on a tumbling free base reaches a goal (pd_target)",
)
