"""Every episode starts from MuJoCo's reset state before the task draws it: a task that sets
one coordinate gets the others at the model's qpos0 (or its reset keyframe) at rest, whatever
the last episode left (a user's cart-pole task that sets only its pole's angle)."""

from __future__ import annotations

import mujoco
import numpy as np
from gymnasium.utils.env_checker import check_env

from robogym.actuation import Actuation
from robogym.env import RoboDynEnv
from robogym.physics import asset_path
from robogym.task import Task
from robogym.vector_env import RoboDynVectorEnv


class PoleOnly(Task):
    """The cart-pole, its reset setting only the pole's angle."""

    model_file = "cartpole.xml"
    frame_skip = 2

    def bind(self, physics) -> None:
        super().bind(physics)
        self._actuation = Actuation.ctrl(physics, ["push"])

    def actuation(self) -> Actuation:
        return self._actuation

    def reset_rows(self, rows, rngs) -> None:
        for r, rng in zip(rows, rngs, strict=True):
            self.physics.set_qpos("hinge", rng.uniform(-0.1, 0.1), [r])

    def reward(self, action):
        return np.zeros(len(action)), {}


class PoleOnlyEnv(RoboDynEnv):
    task_class = PoleOnly


class PoleOnlyVectorEnv(RoboDynVectorEnv):
    task_class = PoleOnly


def test_a_reset_leaves_nothing_of_the_last_episode():
    env, fresh = PoleOnlyEnv(max_episode_steps=50), PoleOnlyEnv(max_episode_steps=50)
    env.reset(seed=1)
    for _ in range(40):
        env.step(np.ones(1))  # the cart runs along the rail
    assert abs(env.physics.qpos("slider")[0]) > 0.5
    a, _ = env.reset(seed=7)
    b, _ = fresh.reset(seed=7)
    np.testing.assert_array_equal(a, b)
    mj = mujoco.MjModel.from_xml_path(str(asset_path("cartpole.xml")))
    d = mujoco.MjData(mj)
    mujoco.mj_resetData(mj, d)
    assert env.physics.qpos("slider")[0] == d.qpos[0] and env.physics.qvel("slider")[0] == 0.0
    check_env(PoleOnlyEnv(max_episode_steps=50), skip_render_check=True)  # deterministic resets


def test_a_vector_env_row_starts_as_a_fresh_one():
    vec = PoleOnlyVectorEnv(num_envs=3, max_episode_steps=50)
    vec.reset(seed=3)
    for _ in range(30):
        vec.step(np.ones((3, 1)))
    obs, _ = vec.reset(seed=3, options={"reset_mask": np.array([False, True, False])})
    first, _ = PoleOnlyVectorEnv(num_envs=3, max_episode_steps=50).reset(seed=3)
    np.testing.assert_array_equal(obs[1], first[1])


class HomeKeyframe(Task):
    """The humanoid from its `home` keyframe, its reset adding nothing."""

    model_file = "humanoid.xml"
    reset_keyframe = "home"

    def bind(self, physics) -> None:
        super().bind(physics)
        self._actuation = Actuation.force(physics, ["abdomen_z"], 1.0)

    def actuation(self) -> Actuation:
        return self._actuation

    def reset_rows(self, rows, rngs) -> None:
        pass

    def reward(self, action):
        return np.zeros(len(action)), {}


class HomeKeyframeEnv(RoboDynEnv):
    task_class = HomeKeyframe


def test_a_reset_keyframe_is_the_start():
    env = HomeKeyframeEnv()
    env.reset(seed=0)
    for _ in range(5):
        env.step(np.ones(1))
    env.reset(seed=0)
    mj = env.physics.mj_model
    d = mujoco.MjData(mj)
    mujoco.mj_resetDataKeyframe(mj, d, mj.key("home").id)
    np.testing.assert_array_equal(env.physics.named.qpos.all[0], d.qpos)
    np.testing.assert_array_equal(env.physics.named.qvel.all[0], d.qvel)
