"""Gymnasium's eleven MuJoCo v5 tasks on RoboDyn: the constructor keywords and their defaults,
and the frames, against Gymnasium's own envs.

- Every keyword of a Gymnasium env's constructor is a keyword of its RoboDyn port, with the
  same default (the task's keywords, and MujocoEnv's rendering keywords: width, height,
  camera_id, camera_name, default_camera_config, max_geom, visual_options).
- Frames equal Gymnasium's pixel for pixel, from the same state: both envs draw with MuJoCo's
  renderer, so the same camera, scene options and geom poses give the same image. Gymnasium
  draws the geoms where the last physics step began (mj_step's derived quantities), RoboDyn at
  the env's qpos; so after steps Gymnasium's env gets RoboDyn's state (set_state, whose
  mj_forward places the geoms there) before both draw. rgb_array for all eleven; depth_array,
  rgbd_tuple, a model camera (camera_id, camera_name), a default_camera_config of the user's,
  visual_options and max_geom on Hopper.
- Rendering keywords the model cannot honour are refused at construction, naming the keyword.
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys

import gymnasium as gym
import mujoco
import numpy as np
import pytest

import robogym  # noqa: F401  (registers the envs)
from robogym.env import RoboDynEnv
from robogym.errors import InvalidArgumentError, RoboDynError

TASKS = (
    "Ant", "HalfCheetah", "Hopper", "Humanoid", "HumanoidStandup", "InvertedDoublePendulum",
    "InvertedPendulum", "Pusher", "Reacher", "Swimmer", "Walker2d",
)  # fmt: skip
STEPS = 5
RENDER_KEYWORDS = ("camera_id", "camera_name", "default_camera_config", "max_geom", "visual_options")


@pytest.fixture(autouse=True)
def _headless_gymnasium(monkeypatch):
    """Gymnasium's renderer tries GLFW first, which needs a display; RoboDyn's draws with EGL
    on Linux (robogym/render.py), and so does Gymnasium's here."""
    if sys.platform.startswith("linux"):
        monkeypatch.setenv("MUJOCO_GL", os.environ.get("MUJOCO_GL", "egl"))


def _gymnasium_class(name: str):
    module, cls = gym.spec(f"{name}-v5").entry_point.split(":")
    return getattr(importlib.import_module(module), cls)


def _same(a, b) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray | tuple | list) or isinstance(b, np.ndarray | tuple | list):
        return np.shape(a) == np.shape(b) and np.array_equal(np.asarray(a), np.asarray(b))
    return a == b


@pytest.mark.parametrize("name", TASKS)
def test_keywords_and_defaults_are_gymnasiums(name):
    theirs = dict(inspect.signature(_gymnasium_class(name).__init__).parameters)
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in theirs.values()):  # the rest go to MujocoEnv
        from gymnasium.envs.mujoco.mujoco_env import MujocoEnv

        base = inspect.signature(MujocoEnv.__init__).parameters
        for key in ("render_mode", "width", "height", *RENDER_KEYWORDS):
            theirs.setdefault(key, base[key])
    env = gym.make(f"RoboDyn/{name}-v5")
    task = env.unwrapped.task
    ours_env = inspect.signature(RoboDynEnv.__init__).parameters
    compared = 0
    for key, p in theirs.items():
        if key == "self" or p.kind is inspect.Parameter.VAR_KEYWORD:
            continue
        if key in type(task).params:
            ours = type(task).params[key].default
            if key == "xml_file":
                assert ours == p.default, key
            else:
                assert _same(tuple(ours) if isinstance(p.default, tuple) else ours, p.default), key
        elif key in ("width", "height"):
            assert task.render_size[key == "height"] == p.default, key  # our None: the task's size
        elif key == "default_camera_config":  # our None: the task's; Gymnasium's None: no settings
            assert _same(task.default_camera_config, {} if p.default is None else p.default), key
        else:
            assert key in ours_env, f"{name}: Gymnasium's keyword {key!r} is not RoboDyn's"
            assert _same(ours_env[key].default, p.default), key
        compared += 1
    assert compared >= 11  # every port: xml_file, frame_skip, reset_noise_scale and the eight rendering ones
    print(f"[{name}-v5] {compared} keywords, defaults equal")


def _frames(name, steps=STEPS, **kwargs):
    """(Gymnasium's frame, RoboDyn's) from the same seed, after `steps` equal actions and
    Gymnasium set to RoboDyn's state."""
    theirs = gym.make(f"{name}-v5", **kwargs)
    ours = gym.make(f"RoboDyn/{name}-v5", **kwargs)
    try:
        theirs.reset(seed=5)
        ours.reset(seed=5)
        theirs.action_space.seed(5)
        pairs = [(theirs.render(), ours.render())]  # the first frame places the free camera
        for _ in range(steps):
            action = theirs.action_space.sample()
            theirs.step(action)
            ours.step(action)
        d = ours.unwrapped.physics.data
        theirs.unwrapped.set_state(d.qpos[0], d.qvel[0])
        theirs.unwrapped.mujoco_renderer.viewer.make_context_current()  # each env draws in its own
        pairs.append((theirs.render(), ours.render()))
        return pairs
    finally:
        theirs.close()
        ours.close()


def _assert_equal_frames(pairs, what: str) -> None:
    for k, (a, b) in enumerate(pairs):
        for x, y in zip(
            a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,), strict=True
        ):
            assert x.shape == y.shape and x.dtype == y.dtype, what
            differ = np.count_nonzero(x != y)
            assert differ == 0, f"{what}: frame {k}: {differ} of {x.size} values differ"
    print(f"[{what}] {len(pairs)} frames equal")


@pytest.mark.parametrize("name", TASKS)
def test_frames_equal_gymnasiums(name):
    pairs = _frames(name, render_mode="rgb_array")
    assert pairs[0][1].shape == (480, 480, 3) and np.ptp(pairs[1][1]) > 0
    _assert_equal_frames(pairs, f"{name}-v5 rgb_array")


@pytest.mark.parametrize(
    "kwargs",
    [
        {"render_mode": "depth_array"},
        {"render_mode": "rgbd_tuple", "width": 320, "height": 240},
        {"render_mode": "rgb_array", "camera_id": 0},
        {"render_mode": "rgb_array", "camera_name": "track"},
        {
            "render_mode": "rgb_array",
            "camera_id": -1,
            "default_camera_config": {"distance": 6.0, "azimuth": 45.0},
        },
        {
            "render_mode": "rgb_array",
            "visual_options": {int(mujoco.mjtVisFlag.mjVIS_COM): True},
            "max_geom": 200,
        },
    ],
    ids=["depth", "rgbd", "camera_id", "camera_name", "camera_config", "visual_options"],
)
def test_hopper_frames_equal_gymnasiums_under_every_rendering_keyword(kwargs):
    pairs = _frames("Hopper", **kwargs)
    first = pairs[0][1]
    if kwargs["render_mode"] == "depth_array":
        assert (
            first.dtype == np.float32 and first.shape == (480, 480) and 0.0 < first.min() < first.max() <= 1.0
        )
    if kwargs["render_mode"] == "rgbd_tuple":
        assert first[0].shape == (240, 320, 3) and first[1].shape == (240, 320)
    _assert_equal_frames(pairs, f"Hopper-v5 {kwargs}")


def test_the_default_and_a_given_camera_differ():
    """The rendering keywords change the frame (the test above would pass if they were ignored
    on both sides only if Gymnasium ignored them too)."""
    default = _frames("Hopper", steps=0, render_mode="rgb_array")[0][1]
    for kwargs in ({"camera_id": 0}, {"default_camera_config": {"distance": 6.0}}):
        other = _frames("Hopper", steps=0, render_mode="rgb_array", **kwargs)[0][1]
        assert np.count_nonzero(default != other) > 0.05 * default.size, kwargs


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"camera_id": 0, "camera_name": "track"}, "camera_id or camera_name, not both"),
        ({"camera_id": 7}, "camera_id must be -1"),
        ({"camera_id": 0.5}, "camera_id must be an int"),
        ({"camera_name": "overhead"}, "no camera named 'overhead'"),
        ({"default_camera_config": {"zoom": 2.0}}, "'zoom' is not a camera attribute"),
        ({"default_camera_config": {"lookat": (0.0, 1.0)}}, r"\['lookat'\] must be 3 finite numbers"),
        ({"default_camera_config": {"distance": float("nan")}}, r"\['distance'\] must be a finite number"),
        ({"default_camera_config": [("distance", 2.0)]}, "default_camera_config must be a dict"),
        ({"visual_options": {99: True}}, "visual_options: 99"),
        ({"max_geom": 0}, "max_geom"),
    ],
)
def test_bad_rendering_keywords_are_refused_by_name(kwargs, match):
    with pytest.raises(RoboDynError, match=match):
        gym.make("RoboDyn/Hopper-v5", **kwargs)
    with pytest.raises(RoboDynError, match=match):
        gym.make_vec("RoboDyn/Hopper-v5", num_envs=2, **kwargs)


def test_rendering_keywords_survive_pickling():
    import pickle

    env = gym.make("RoboDyn/Hopper-v5", render_mode="rgb_array", camera_id=0, width=64, height=48)
    env.reset(seed=1)
    copy = pickle.loads(pickle.dumps(env))
    np.testing.assert_array_equal(copy.render(), env.render())
    assert copy.render().shape == (48, 64, 3)
    with pytest.raises(InvalidArgumentError):
        gym.make("RoboDyn/Hopper-v5", render_mode="rgb_array", width=4000)
