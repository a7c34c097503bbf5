"""A test task on assets/tests/integ_activation.xml, whose actuators have activation
dynamics: "ctrl" actuation of four of its stateful actuators (one per joint), observing
(qpos, qvel, act). Not registered; tests/robogym/test_activation.py and
tests/envs/test_linearize.py build it directly."""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from robogym.actuation import Actuation
from robogym.task import Task
from robogym.vector_env import RoboDynVectorEnv


class ActivationTask(Task):
    """Hold nothing in particular: actions set the filters' and integrators' controls."""

    model_file = "tests/integ_activation.xml"
    frame_skip = 2

    def bind(self, physics) -> None:
        super().bind(physics)
        names = ["filt_servo", "int_servo", "fexact_early", "int_early"]  # one per joint
        self._actuation = Actuation.ctrl(physics, names)

    def actuation(self) -> Actuation:
        return self._actuation

    def observation_space(self) -> spaces.Box:
        m = self.physics.model
        return spaces.Box(-np.inf, np.inf, shape=(m.nq + m.nv + m.na,), dtype=np.float64)

    def observation_names(self) -> list[str]:
        m = self.physics.model
        return (
            [f"qpos{i}" for i in range(m.nq)]
            + [f"qvel{i}" for i in range(m.nv)]
            + [f"act{i}" for i in range(m.na)]
        )

    def observe(self) -> np.ndarray:
        d = self.physics.data
        return np.concatenate([d.qpos, d.qvel, d.act], axis=1)

    def reset_rows(self, rows, rngs) -> None:
        for r, rng in zip(rows, rngs, strict=True):
            self.physics.set_qpos("j1", rng.uniform(-0.5, 0.5), [r])

    def reward(self, action):
        zero = np.zeros(self.physics.batch)
        return zero, {"reward_none": zero}


class ActivationVectorEnv(RoboDynVectorEnv):
    task_class = ActivationTask
