"""What each task's camera shows: its robot at a sensible size, whole, with its target, in a
scene whose sun casts shadows.

The robot's pixels are counted with MuJoCo's segmentation rendering (robogym.render.Renderer
.segment: the model geom drawn at each pixel), the robot being every geom of a body other
than the world and the mocap bodies (the tracking task's target). A frame passes when the
robot covers at least MIN_PIXELS of it, its bounding box at least MIN_BOX of the frame's area
and MIN_SPAN of its height or width, and no robot pixel touches the frame's edge (cut off).
At this project's first scenes the crane covered 0.27 % of its frame (box 1.5 %), the rocket
0.06 % (box 0.3 %, 20 px tall at 240) and the cart-pole 0.47 % (box 1.9 %): all three fail.
"""

from __future__ import annotations

import gymnasium as gym
import mujoco
import numpy as np
import pytest

import robogym  # noqa: F401 (registers the tasks)
from robogym.registration import TASKS
from robogym.render import Renderer

W, H = 320, 240
MIN_PIXELS = 0.01  # share of the frame's pixels that are the robot's
MIN_BOX = 0.04  # share of the frame's area inside the robot's bounding box
MIN_SPAN = 0.3  # the box's height over the frame's, or its width over the frame's
# RoboDyn's own scenes: its tasks but Gymnasium's ports (envs/*_v5.py) and dm_control's suite
# (envs/dmc_*_v0.py), which draw their originals' models as those envs do, and the test tasks a
# test module may register in the same process
TASK_IDS = [
    t.id
    for t in TASKS
    if t.entry_point.startswith("robodyn.envs.")
    and not t.id.endswith("-v5")
    and not t.id.startswith("RoboDyn/dmc-")
]
# the geom each task must show as its target, in the states it is checked in
TARGETS = {"RoboDyn/Crane-v0": "target_mark", "RoboDyn/Tracking-v0": "target", "RoboDyn/Rocket-v0": "pad"}


def _env(env_id):
    env = gym.make(env_id, render_mode="rgb_array", width=W, height=H)
    env.reset(seed=0)
    return env


def _segment(env) -> tuple[np.ndarray, mujoco.MjModel]:
    """(H, W) geom id per pixel of row 0 from the task's camera, and the model drawn."""
    u = env.unwrapped
    m = u.physics.mj_model
    u.task.decorate_frame(m, 0)  # e.g. the rocket's flame, as every frame of the env has it
    renderer = Renderer(m, W, H, camera=u.task.render_camera)
    try:
        d = u.physics.data
        return renderer.segment(d.qpos[0], d.qvel[0], d.mocap_pos[0], d.mocap_quat[0]), m
    finally:
        renderer.close()


def _robot_geoms(m: mujoco.MjModel) -> np.ndarray:
    body = m.geom_bodyid
    return np.flatnonzero((body > 0) & (m.body_mocapid[body] < 0))


def check_framed(seg: np.ndarray, m: mujoco.MjModel, what: str) -> None:
    robot = np.isin(seg, _robot_geoms(m))
    assert robot.any(), f"{what}: the robot is not in the frame"
    rows, cols = np.flatnonzero(robot.any(axis=1)), np.flatnonzero(robot.any(axis=0))
    span_h, span_w = (rows[-1] - rows[0] + 1) / H, (cols[-1] - cols[0] + 1) / W
    share = robot.mean()
    assert share >= MIN_PIXELS, f"{what}: the robot covers {100 * share:.2f} % of the frame"
    assert span_h * span_w >= MIN_BOX, (
        f"{what}: the robot's box is {100 * span_h * span_w:.1f} % of the frame"
    )
    assert max(span_h, span_w) >= MIN_SPAN, (
        f"{what}: the robot spans {span_h:.2f} x {span_w:.2f} of the frame"
    )
    edge = robot[0].any() or robot[-1].any() or robot[:, 0].any() or robot[:, -1].any()
    assert not edge, f"{what}: the robot touches the frame's edge (cut off)"


def check_target_shown(seg: np.ndarray, m: mujoco.MjModel, geom: str, what: str) -> None:
    gid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, geom)
    assert gid >= 0
    assert (seg == gid).sum() >= 20, f"{what}: the target {geom!r} is not in the frame"


@pytest.mark.parametrize("env_id", TASK_IDS)
def test_the_camera_frames_the_robot_at_reset(env_id):
    env = _env(env_id)
    try:
        seg, m = _segment(env)
        check_framed(seg, m, f"{env_id} at reset")
        if env_id in TARGETS and env_id != "RoboDyn/Rocket-v0":  # the rocket starts 50-70 m up
            check_target_shown(seg, m, TARGETS[env_id], f"{env_id} at reset")
    finally:
        env.close()


# states far from the reset one: the crane at the target with the load swinging, the rocket
# on the pad, the cart at the rail's end with the pole up; the camera must follow
MOVED = {
    "RoboDyn/Crane-v0": {"trolley": 0.0, "swing": -0.3},
    "RoboDyn/Rocket-v0": {"x": 1.0, "z": 3.85, "pitch": 0.05},
    "RoboDyn/CartPole-v0": {"slider": 2.3, "hinge": 0.0},
}


@pytest.mark.parametrize("env_id", sorted(MOVED))
def test_the_camera_follows_the_robot(env_id):
    env = _env(env_id)
    try:
        seg0, _ = _segment(env)
        for joint, value in MOVED[env_id].items():
            env.unwrapped.physics.set_qpos(joint, value, [0])
        seg, m = _segment(env)
        assert not np.array_equal(seg, seg0), "the state should have changed the frame"
        check_framed(seg, m, f"{env_id} at {MOVED[env_id]}")
        if env_id in TARGETS:
            check_target_shown(seg, m, TARGETS[env_id], f"{env_id} at {MOVED[env_id]}")
    finally:
        env.close()


def test_framing_checks_fail_on_a_far_camera():
    """The checks can fail: the crane seen from 4x its camera's distance."""
    env = _env("RoboDyn/Crane-v0")
    try:
        m = env.unwrapped.physics.mj_model
        cam = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_CAMERA, "side")
        saved = m.cam_pos[cam].copy(), m.cam_pos0[cam].copy(), m.cam_poscom0[cam].copy()
        for a in (m.cam_pos, m.cam_pos0, m.cam_poscom0):
            a[cam] *= 4.0
        try:
            seg, _ = _segment(env)
        finally:
            m.cam_pos[cam], m.cam_pos0[cam], m.cam_poscom0[cam] = saved
        with pytest.raises(AssertionError, match="covers"):
            check_framed(seg, m, "far crane")
    finally:
        env.close()


@pytest.mark.parametrize("env_id", TASK_IDS)
def test_the_sun_casts_the_robots_shadow(env_id):
    """Every scene has a light that casts shadows, and the shadow is in the frame: the same
    frame drawn without any shadow is brighter in a patch of the floor (the rocket on its pad:
    from 50 m up its shadow is out of the frame)."""
    env = _env(env_id)
    try:
        if env_id == "RoboDyn/Rocket-v0":
            for joint, value in MOVED[env_id].items():
                env.unwrapped.physics.set_qpos(joint, value, [0])
        m = env.unwrapped.physics.mj_model
        assert m.light_castshadow.any(), "no light casts shadows"
        with_shadow = env.render().astype(float)
        saved = m.light_castshadow.copy()
        m.light_castshadow[:] = 0
        try:
            without = env.render().astype(float)  # MuJoCo reads the lights anew every frame
        finally:
            m.light_castshadow[:] = saved
        darker = (without - with_shadow).mean(axis=2) > 15
        assert darker.mean() > 0.002, f"shadows darken {100 * darker.mean():.2f} % of the frame"
    finally:
        env.close()
