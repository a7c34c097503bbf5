"""Your own robot as an env: `robogym.make_env(xml_file)`, `robogym.make_vec_env` and the
registered `RoboDyn/MJCF-v0` (robogym/mjcf_env.py) on an MJCF written here and on a model
shipped inside the installed gymnasium package (gymnasium/envs/mujoco/assets/, the file
Gymnasium's own InvertedPendulum env loads): Gymnasium's check_env, the observation (the
sensors, else qpos and qvel), the action's mapping onto ctrlrange, frame_skip, the reward and
termination callables, the episode length, the vector env, snapshots and pickling, and what
is refused (a path that is no file, an MJCF the engine refuses, a model it cannot act on, a
callable that returns the wrong thing), each error naming the file or the keyword."""

from __future__ import annotations

import pickle
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import robogym
from robodyn.engine.errors import ModelError, ModelFileError, UnsupportedModelError
from robogym.errors import ArgumentTypeError, InvalidArgumentError
from robogym.mjcf_env import ENV_ID, MJCFEnv, MJCFVectorEnv

# a cart on a rail with a pole, two motors, three sensors; timestep 0.01 s
CART = """
<mujoco model="cart">
  <option timestep="0.01"/>
  <worldbody>
    <body name="cart">
      <joint name="slider" type="slide" axis="1 0 0" range="-2 2"/>
      <geom type="box" size="0.2 0.1 0.05" mass="1"/>
      <body name="pole" pos="0 0 0.05">
        <joint name="hinge" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 0.6" size="0.03" mass="0.2"/>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor name="push" joint="slider" gear="10" ctrlrange="-2 4"/>
    <motor name="twist" joint="hinge" gear="1" ctrlrange="-1 1"/>
  </actuator>
  <sensor>
    <jointpos name="x" joint="slider"/>
    <jointpos name="angle" joint="hinge"/>
    <jointvel name="x_rate" joint="slider"/>
  </sensor>
</mujoco>
"""
# no sensors: the observation is qpos and qvel (a ball joint: 4 + 3 of them, and a hinge)
NO_SENSORS = """
<mujoco>
  <worldbody>
    <body name="arm">
      <joint name="shoulder" type="ball"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.04" mass="1"/>
      <body pos="0 0 -0.5">
        <joint name="elbow" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.4" size="0.03" mass="0.5"/>
      </body>
    </body>
  </worldbody>
  <actuator><motor joint="elbow" ctrlrange="-3 3"/></actuator>
</mujoco>
"""
SHIPPED = Path(gym.__file__).parent / "envs" / "mujoco" / "assets" / "inverted_pendulum.xml"


def _write(tmp_path, text: str, name: str = "robot.xml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def cart_height(physics, action):
    """A module-level reward (so the env pickles): the pole tip's height, per row."""
    return physics.named.xpos["pole"][:, 2] + 0.6 * np.cos(physics.qpos("hinge"))


def _checker_warnings(env) -> list[str]:
    """Gymnasium's check_env warnings, less the two notes that the observation box is
    unbounded, which Gymnasium's own MuJoCo envs get too (the sensor vector has no bounds;
    tests/robogym/test_registered_tasks.py allows the same for every task)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env)
    return [str(w.message) for w in caught if "infinity" not in str(w.message)]


# --- check_env --------------------------------------------------------------------------------------
def test_an_mjcf_written_here_passes_check_env(tmp_path):
    env = robogym.make_env(
        _write(tmp_path, CART), frame_skip=2, reset_noise_scale=0.05, reward_fn=cart_height
    )
    assert isinstance(env, MJCFEnv)  # gym.make's env itself: snapshot() and restore() on it
    assert _checker_warnings(env) == []


def test_a_model_shipped_in_the_gymnasium_package_passes_check_env():
    assert SHIPPED.is_file(), SHIPPED
    env = gym.make(ENV_ID, xml_file=str(SHIPPED), frame_skip=2, reset_noise_scale=0.01)
    assert isinstance(env, MJCFEnv)
    # inverted_pendulum.xml: a slider and a hinge, no sensors, one motor with ctrlrange [-3, 3]
    assert env.observation_space.shape == (4,) and env.action_space.shape == (1,)
    assert env.task.observation_names() == ["qpos[slider]", "qpos[hinge]", "qvel[slider]", "qvel[hinge]"]
    assert _checker_warnings(env) == []
    obs, _ = env.reset(seed=0)
    obs, *_ = env.step(np.ones(1))
    np.testing.assert_array_equal(obs, np.concatenate([env.physics.data.qpos[0], env.physics.data.qvel[0]]))
    assert env.physics.data.ctrl[0, 0] == 3.0  # 1 is the top of its ctrlrange


# --- what the env is made of -----------------------------------------------------------------------
def test_observation_is_the_sensor_vector_and_actions_map_onto_ctrlrange(tmp_path):
    env = robogym.make_env(_write(tmp_path, CART), frame_skip=3)
    assert env.task.observation_names() == ["x", "angle", "x_rate"]
    assert env.action_space.shape == (2,) and env.dt == pytest.approx(0.03)
    obs, _ = env.reset(seed=0)
    np.testing.assert_array_equal(obs, np.zeros(3))  # qpos0 at rest: no noise by default
    for action, ctrl in (([1.0, -1.0], [4.0, -1.0]), ([-1.0, 0.5], [-2.0, 0.5]), ([0.0, 0.0], [1.0, 0.0])):
        obs, reward, terminated, truncated, info = env.step(np.array(action))
        np.testing.assert_array_equal(env.physics.data.ctrl[0], ctrl)
        np.testing.assert_array_equal(obs, env.physics.data.sensordata[0])
        assert (reward, terminated, truncated, info) == (0.0, False, False, {})  # the defaults
    assert env.physics.data.time[0] == pytest.approx(0.09)  # 3 steps of frame_skip 3 x 0.01 s


def test_without_sensors_the_observation_is_qpos_then_qvel(tmp_path):
    env = robogym.make_env(_write(tmp_path, NO_SENSORS), reset_noise_scale=0.1)
    names = env.task.observation_names()
    assert names == [
        *[f"qpos[shoulder][{k}]" for k in range(4)],
        "qpos[elbow]",
        *[f"qvel[shoulder][{k}]" for k in range(3)],
        "qvel[elbow]",
    ]
    obs, _ = env.reset(seed=1)
    qpos, qvel = env.physics.data.qpos[0], env.physics.data.qvel[0]
    np.testing.assert_array_equal(obs, np.concatenate([qpos, qvel]))
    np.testing.assert_array_equal(qpos[:4], [1.0, 0.0, 0.0, 0.0])  # noise leaves the ball's quaternion
    assert qpos[4] != 0.0 and np.all(qvel != 0.0) and np.all(np.abs(qvel) <= 0.1)


def test_reward_and_termination_callables_are_applied_row_by_row(tmp_path):
    path = _write(tmp_path, CART)

    def fallen(physics):
        return np.abs(physics.qpos("hinge")) > 0.3

    env = robogym.make_env(path, frame_skip=2, reward_fn=cart_height, terminated_fn=fallen)
    env.reset(seed=0)
    steps = 0
    while steps < 200:
        steps += 1
        obs, reward, terminated, truncated, _ = env.step(np.array([0.0, 1.0]))  # twist the pole over
        assert reward == pytest.approx(cart_height(env.physics, None)[0], abs=0)
        assert reward == pytest.approx(0.05 + 0.6 * np.cos(obs[1]), abs=1e-12)
        assert terminated == (abs(obs[1]) > 0.3) and not truncated
        if terminated:
            break
    assert terminated and steps > 1

    vec = robogym.make_vec_env(
        path, 3, frame_skip=2, reset_noise_scale=0.2, reward_fn=cart_height, terminated_fn=fallen
    )
    assert isinstance(vec, MJCFVectorEnv)
    obs, _ = vec.reset(seed=5)
    obs, reward, terminated, _, _ = vec.step(np.zeros((3, 2)))
    np.testing.assert_allclose(reward, 0.05 + 0.6 * np.cos(obs[:, 1]), rtol=0, atol=1e-12)
    assert len(set(reward.tolist())) == 3  # one value per row, each its own
    np.testing.assert_array_equal(terminated, np.abs(obs[:, 1]) > 0.3)


def test_episode_length_default_and_override(tmp_path):
    path = _write(tmp_path, CART)
    assert gym.spec(ENV_ID).max_episode_steps == 1000
    assert ENV_ID not in [t.id for t in robogym.TASKS]  # made only with its file
    env = robogym.make_env(path)
    assert env.max_episode_steps == env.spec.max_episode_steps == 1000
    short = robogym.make_env(path, max_episode_steps=4)
    assert isinstance(short, MJCFEnv) and short.spec.max_episode_steps == 4
    short.reset(seed=0)
    assert [short.step(np.zeros(2))[3] for _ in range(4)] == [False, False, False, True]
    vec = robogym.make_vec_env(path, 2, max_episode_steps=3)
    assert vec.spec.max_episode_steps == vec.max_episode_steps == 3
    vec.reset(seed=0)
    assert [vec.step(np.zeros((2, 2)))[3].tolist() for _ in range(3)][-1] == [True, True]
    assert gym.make_vec(ENV_ID, num_envs=2, xml_file=str(path)).max_episode_steps == 1000


def test_vector_rows_equal_single_envs_and_snapshots_replay(tmp_path):
    path = _write(tmp_path, CART)
    kw = dict(frame_skip=2, reset_noise_scale=0.1, reward_fn=cart_height)
    vec = robogym.make_vec_env(path, 3, **kw)
    actions = np.random.default_rng(0).uniform(-1, 1, (6, 3, 2))
    vobs, _ = vec.reset(seed=10)
    rows = [vobs]
    rewards = []
    for a in actions:
        o, r, *_ = vec.step(a)
        rows.append(o)
        rewards.append(r)
    for i in range(3):
        env = robogym.make_env(path, **kw)
        o, _ = env.reset(seed=10 + i)
        np.testing.assert_array_equal(o, rows[0][i])
        for k, a in enumerate(actions):
            o, r, *_ = env.step(a[i])
            np.testing.assert_array_equal(o, rows[k + 1][i])
            assert r == rewards[k][i]
    env = robogym.make_env(path, **kw)
    env.reset(seed=2)
    env.step(actions[0, 0])
    snap = env.snapshot()
    first = [env.step(a[0])[:2] for a in actions]
    back = pickle.loads(pickle.dumps(env))  # the reward_fn travels by reference
    back.restore(snap)
    env.restore(snap)
    for a, (o, r) in zip(actions, first, strict=True):
        for e in (env, back):
            o2, r2, *_ = e.step(a[0])
            np.testing.assert_array_equal(o2, o)
            assert r2 == r


# --- what is refused -------------------------------------------------------------------------------
def test_a_path_that_is_not_a_file_is_refused_naming_it(tmp_path):
    missing = tmp_path / "nowhere.xml"
    with pytest.raises(ModelFileError, match=r"xml_file: no MJCF file at '.*nowhere\.xml' \(no such file"):
        robogym.make_env(missing)
    with pytest.raises(ModelFileError, match=r"no MJCF file at .* \(a directory"):
        robogym.make_env(tmp_path)
    with pytest.raises(ArgumentTypeError, match=r"RoboDyn/MJCF-v0 needs xml_file="):
        gym.make(ENV_ID)
    with pytest.raises(ArgumentTypeError, match=r"xml_file must be the path of an MJCF file .* got int 3"):
        robogym.make_env(3)


@pytest.mark.parametrize(
    ("text", "error", "match"),
    [
        ("<mujoco><worldbody>", ModelError, r"could not compile the MJCF file '.*robot\.xml'"),
        (
            CART.replace('<option timestep="0.01"/>', '<option><flag override="enable"/></option>'),
            UnsupportedModelError,
            r"robot\.xml: <option><flag override=\"enable\">: only the energy flag",
        ),
        (
            NO_SENSORS.replace('<actuator><motor joint="elbow" ctrlrange="-3 3"/></actuator>', ""),
            InvalidArgumentError,
            r"robot\.xml has no actuators",
        ),
        (
            CART.replace(' ctrlrange="-1 1"', ""),
            InvalidArgumentError,
            r"robot\.xml: actuator twist has no ctrlrange",
        ),
    ],
)
def test_an_mjcf_the_env_cannot_run_is_refused_naming_the_file(tmp_path, text, error, match):
    path = _write(tmp_path, text)
    spec = gym.spec(ENV_ID)
    with pytest.raises(error, match=match):
        robogym.make_env(path)
    with pytest.raises(error, match=match):
        robogym.make_vec_env(path, 2)
    assert gym.spec(ENV_ID) is spec and spec.max_episode_steps == 1000  # the registry is left alone


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"reward_fn": 1.0}, ArgumentTypeError, r"reward_fn must be None or a callable, got float 1.0"),
        ({"reward_fn": lambda p, a: 1.0}, InvalidArgumentError, r"reward_fn must return \(1,\) finite real"),
        (
            {"reward_fn": lambda p, a: np.full(1, np.nan)},
            InvalidArgumentError,
            r"reward_fn must return \(1,\) finite",
        ),
        (
            {"terminated_fn": lambda p: np.zeros(1)},
            InvalidArgumentError,
            r"terminated_fn must return \(1,\) bools",
        ),
        (
            {"reward_fn": lambda p, a: p.qpos("no_such_joint")},
            InvalidArgumentError,
            r"reward_fn raised UnknownNameError when called on robot\.xml's initial state: .*no_such_joint",
        ),
        ({"frame_skip": 0}, InvalidArgumentError, r"frame_skip must be an int in \[1, inf\), got 0"),
        (
            {"reset_noise_scale": -1.0},
            InvalidArgumentError,
            r"reset_noise_scale must be finite and in \[0, inf\)",
        ),
        ({"max_episode_steps": 0}, InvalidArgumentError, r"max_episode_steps must be an int >= 1, got 0"),
        ({"xml": "robot.xml"}, ArgumentTypeError, r"unknown keyword 'xml'"),
    ],
)
def test_bad_keywords_are_refused_when_the_env_is_built(tmp_path, kwargs, error, match):
    with pytest.raises(error, match=match):
        robogym.make_env(_write(tmp_path, CART), **kwargs)


def test_a_vector_env_checks_the_callables_per_row(tmp_path):
    with pytest.raises(InvalidArgumentError, match=r"reward_fn must return \(4,\) finite real numbers"):
        robogym.make_vec_env(_write(tmp_path, CART), 4, reward_fn=lambda p, a: np.zeros(1))
