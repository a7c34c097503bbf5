"""Offscreen frames of the real model, drawn by MuJoCo's renderer from our engine's state.

The engine owns the physics; MuJoCo only draws: qpos (and qvel) of one environment are
copied into an MjData of the same MJCF, mj_kinematics and mj_camlight place the geoms
and cameras, and MuJoCo's
OpenGL renderer draws them offscreen. On Linux without a display the context is EGL
(MUJOCO_GL=egl), created here directly, so it works whatever MUJOCO_GL said when mujoco
was imported.

An env takes Gymnasium's MujocoEnv rendering keywords (gymnasium/envs/mujoco/mujoco_env.py
and mujoco_rendering.py): render_mode "rgb_array", "depth_array" (MuJoCo's depth buffer,
values in [0, 1]) or "rgbd_tuple"; width and height; camera_id or camera_name (a model
camera; -1 the free camera); default_camera_config (MjvCamera attributes set on the free
camera); max_geom; visual_options ({mjtVisFlag: bool}). `View` holds what they choose.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field

import mujoco
import numpy as np

from robogym.checks import check_count, is_int, is_real
from robogym.errors import ArgumentTypeError, InvalidArgumentError, UnknownNameError

RENDER_MODES = ("rgb_array", "depth_array", "rgbd_tuple")
# the env keywords that choose the view (besides render_mode, width and height)
VIEW_KEYWORDS = ("camera_id", "camera_name", "default_camera_config", "max_geom", "visual_options")
# the MjvCamera attributes a default_camera_config may set
_CAMERA_FIELDS = (
    "type", "fixedcamid", "trackbodyid", "lookat", "distance", "azimuth", "elevation", "orthographic"
)  # fmt: skip


@dataclass(frozen=True)
class View:
    """What a frame shows.

    camera: a model camera by name (str) or id (int >= 0), drawn as MuJoCo's fixed camera;
    None or -1: the free camera. free_camera: None places the free camera as MuJoCo's
    mjv_defaultFreeCamera does; a dict places it as Gymnasium's MujocoRenderer does, looking
    at the median of the geoms' positions in the first frame from the model's extent
    (stat.extent), then sets these MjvCamera attributes (its default_camera_config).
    max_geom: the scene's capacity (MjvScene maxgeom). flags: (mjtVisFlag, bool) pairs set in
    MjvOption.flags."""

    camera: str | int | None = None
    free_camera: dict | None = None
    max_geom: int = 1000
    flags: tuple = field(default_factory=tuple)

    @classmethod
    def of(
        cls,
        mj_model,
        task,
        camera_id=None,
        camera_name=None,
        default_camera_config=None,
        max_geom=1000,
        visual_options=None,
    ) -> View:
        """The view an env's keywords choose, each checked against the model (errors name the
        keyword): camera_id or camera_name (not both), else the task's own camera
        (Task.render_camera) unless default_camera_config asks for the free camera;
        default_camera_config None: the task's (Task.default_camera_config)."""  # fmt: skip
        if camera_id is not None and camera_name is not None:
            raise InvalidArgumentError("give camera_id or camera_name, not both")
        if camera_id is not None:
            if not is_int(camera_id) or isinstance(camera_id, bool):
                raise ArgumentTypeError(f"camera_id must be an int, got {camera_id!r}")
            if not -1 <= camera_id < mj_model.ncam:
                raise InvalidArgumentError(
                    "camera_id must be -1 (the free camera) or a camera of the model "
                    f"(0..{mj_model.ncam - 1}), got {camera_id}"
                )
            camera = None if camera_id == -1 else int(camera_id)
        elif camera_name is not None:
            if not isinstance(camera_name, str):
                raise ArgumentTypeError(f"camera_name must be a str, got {camera_name!r}")
            camera = camera_name
        else:
            camera = task.render_camera if default_camera_config is None else None
        if isinstance(camera, str) and mujoco.mj_name2id(mj_model, mujoco.mjtObj.mjOBJ_CAMERA, camera) < 0:
            raise UnknownNameError(f"camera_name: the model has no camera named {camera!r}")
        config = task.default_camera_config if default_camera_config is None else default_camera_config
        return cls(
            camera=camera,
            free_camera=None if config is None else _camera_config(config),
            max_geom=check_count("max_geom", max_geom),
            flags=_visual_flags(visual_options),
        )


def _camera_config(config) -> dict:
    """default_camera_config checked: a dict of MjvCamera attributes and numbers (lookat: 3)."""
    if not isinstance(config, dict):
        raise ArgumentTypeError(f"default_camera_config must be a dict or None, got {type(config).__name__}")
    out = {}
    for key, value in config.items():
        if key not in _CAMERA_FIELDS:
            raise InvalidArgumentError(
                f"default_camera_config: {key!r} is not a camera attribute; one of {_CAMERA_FIELDS}"
            )
        v = np.asarray(value, dtype=np.float64) if key == "lookat" else value
        ok = v.shape == (3,) and np.all(np.isfinite(v)) if key == "lookat" else is_real(v) and np.isfinite(v)
        if not ok:
            want = "3 finite numbers" if key == "lookat" else "a finite number"
            raise InvalidArgumentError(f"default_camera_config[{key!r}] must be {want}, got {value!r}")
        out[key] = v
    return out


def _visual_flags(options) -> tuple:
    """visual_options checked: {mjtVisFlag (int): bool} as sorted (flag, bool) pairs."""
    if options is None:
        return ()
    if not isinstance(options, dict):
        raise ArgumentTypeError(f"visual_options must be a dict {{mjtVisFlag: bool}}, got {options!r}")
    n = int(mujoco.mjtVisFlag.mjNVISFLAG)
    for flag, on in options.items():
        if not (is_int(flag) and 0 <= flag < n) or not isinstance(on, bool | np.bool_ | int):
            raise InvalidArgumentError(
                f"visual_options: {flag!r}: {on!r} must be a mjtVisFlag (0..{n - 1}) and a bool"
            )
    return tuple(sorted((int(f), bool(on)) for f, on in options.items()))


def _gl_context(width: int, height: int):
    backend = os.environ.get("MUJOCO_GL", "egl" if sys.platform.startswith("linux") else "").lower()
    if backend == "egl":
        from mujoco.egl import GLContext
    elif backend == "osmesa":
        from mujoco.osmesa import GLContext
    else:
        from mujoco.glfw import GLContext
    return GLContext(width, height)


def check_frame_size(mj_model: mujoco.MjModel, width: int, height: int) -> None:
    """Refuse a frame larger than the model's offscreen buffer (MuJoCo would fail later)."""
    buf = (mj_model.vis.global_.offwidth, mj_model.vis.global_.offheight)
    if not (0 < width <= buf[0] and 0 < height <= buf[1]):
        raise InvalidArgumentError(
            f"frame {width}x{height} exceeds the model's offscreen buffer {buf[0]}x{buf[1]} "
            "(set <visual><global offwidth=... offheight=...> in the MJCF)"
        )


class Renderer:
    """renderer = Renderer(mj_model, 640, 480, camera="side"); rgb = renderer.render(qpos, qvel).

    `render(qpos, label="pd")` also writes `label` in the frame's top-left corner with MuJoCo's
    own text overlay (mjr_overlay), as the videos of training/video.py name each policy's tile.
    A model with mocap bodies takes their poses too (`mocap_pos` (nmocap, 3), `mocap_quat`
    (nmocap, 4)); without them they are drawn where the model declares them.
    """

    def __init__(self, mj_model: mujoco.MjModel, width: int, height: int, camera: str | View | None = None):
        check_frame_size(mj_model, width, height)
        view = camera if isinstance(camera, View) else View(camera=camera)
        self.model = mj_model
        self.data = mujoco.MjData(mj_model)
        self.width, self.height = int(width), int(height)
        self._gl = _gl_context(self.width, self.height)
        self._gl.make_current()
        self._context = mujoco.MjrContext(mj_model, mujoco.mjtFontScale.mjFONTSCALE_150)
        mujoco.mjr_setBuffer(mujoco.mjtFramebuffer.mjFB_OFFSCREEN, self._context)
        self._scene = mujoco.MjvScene(mj_model, maxgeom=view.max_geom)
        self._option = mujoco.MjvOption()
        for flag, on in view.flags:
            self._option.flags[flag] = on
        self._camera = mujoco.MjvCamera()
        self._free_camera = None  # Gymnasium's free camera, placed at the first frame
        if isinstance(view.camera, str):
            cam_id = mujoco.mj_name2id(mj_model, mujoco.mjtObj.mjOBJ_CAMERA, view.camera)
            if cam_id < 0:
                raise UnknownNameError(f"model has no camera named {view.camera!r}")
        else:
            cam_id = -1 if view.camera is None else view.camera
        if cam_id >= 0:
            self._camera.type = mujoco.mjtCamera.mjCAMERA_FIXED
            self._camera.fixedcamid = cam_id
        elif view.free_camera is None:
            mujoco.mjv_defaultFreeCamera(mj_model, self._camera)
        else:
            self._free_camera = view.free_camera
        self._viewport = mujoco.MjrRect(0, 0, self.width, self.height)
        self._rgb = np.zeros((self.height, self.width, 3), dtype=np.uint8)
        self._depth = np.zeros((self.height, self.width), dtype=np.float32)

    def render(
        self,
        qpos: np.ndarray,
        qvel: np.ndarray | None = None,
        label: str | None = None,
        mocap_pos: np.ndarray | None = None,
        mocap_quat: np.ndarray | None = None,
    ) -> np.ndarray:
        """(height, width, 3) uint8 frame of the model at qpos (and the mocap poses, if given),
        with `label` (if any) written in its top-left corner."""
        self._draw(qpos, qvel, mocap_pos, mocap_quat)
        if label:
            mujoco.mjr_overlay(
                mujoco.mjtFont.mjFONT_NORMAL,
                mujoco.mjtGridPos.mjGRID_TOPLEFT,
                self._viewport,
                label,
                "",
                self._context,
            )
        mujoco.mjr_readPixels(self._rgb, None, self._viewport, self._context)
        return np.flipud(self._rgb).copy()

    def rgbd(
        self,
        qpos: np.ndarray,
        qvel: np.ndarray | None = None,
        mocap_pos: np.ndarray | None = None,
        mocap_quat: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """(rgb (height, width, 3) uint8, depth (height, width) float32) of the same frame as
        render(): depth is MuJoCo's depth buffer as mjr_readPixels gives it, in [0, 1] (what
        Gymnasium's depth_array holds)."""
        self._draw(qpos, qvel, mocap_pos, mocap_quat)
        mujoco.mjr_readPixels(self._rgb, self._depth, self._viewport, self._context)
        return np.flipud(self._rgb).copy(), np.flipud(self._depth).copy()

    def segment(
        self,
        qpos: np.ndarray,
        qvel: np.ndarray | None = None,
        mocap_pos: np.ndarray | None = None,
        mocap_quat: np.ndarray | None = None,
    ) -> np.ndarray:
        """(height, width) int32: the id of the model geom drawn at each pixel of the same
        frame as render(), -1 where none is (the sky, a site).

        MuJoCo's segmentation rendering (the scene flags mjRND_SEGMENT and mjRND_IDCOLOR, as
        mujoco.Renderer's enable_segmentation_rendering sets them) draws every visual element
        unlit in a flat colour that encodes its index in the scene, plus one (0: nothing)."""
        flags = self._scene.flags
        flags[mujoco.mjtRndFlag.mjRND_SEGMENT] = flags[mujoco.mjtRndFlag.mjRND_IDCOLOR] = 1
        try:
            self._draw(qpos, qvel, mocap_pos, mocap_quat)
        finally:
            flags[mujoco.mjtRndFlag.mjRND_SEGMENT] = flags[mujoco.mjtRndFlag.mjRND_IDCOLOR] = 0
        mujoco.mjr_readPixels(self._rgb, None, self._viewport, self._context)
        rgb = np.flipud(self._rgb).astype(np.int64)
        index = rgb[..., 0] + (rgb[..., 1] << 8) + (rgb[..., 2] << 16)  # scene index + 1
        n = self._scene.ngeom
        geom_of = np.full(n + 1, -1, dtype=np.int32)  # scene index + 1 -> model geom id
        for i in range(n):
            g = self._scene.geoms[i]
            if g.objtype == mujoco.mjtObj.mjOBJ_GEOM and g.segid >= 0:
                geom_of[g.segid + 1] = g.objid
        return np.where(index <= n, geom_of[np.minimum(index, n)], -1)

    def _draw(self, qpos, qvel, mocap_pos, mocap_quat) -> None:
        """Pose the model at the state given and draw it into the offscreen buffer."""
        self.data.qpos[:] = qpos
        if qvel is not None:
            self.data.qvel[:] = qvel
        if mocap_pos is not None:
            self.data.mocap_pos[:] = np.reshape(mocap_pos, (-1, 3))
        if mocap_quat is not None:
            self.data.mocap_quat[:] = np.reshape(mocap_quat, (-1, 4))
        mujoco.mj_kinematics(self.model, self.data)
        mujoco.mj_comPos(self.model, self.data)
        mujoco.mj_camlight(self.model, self.data)  # camera and light poses
        if self._free_camera is not None:
            self._place_free_camera()
        self._gl.make_current()
        mujoco.mjv_updateScene(
            self.model, self.data, self._option, None, self._camera, mujoco.mjtCatBit.mjCAT_ALL, self._scene
        )
        mujoco.mjr_render(self._viewport, self._scene, self._context)

    def _place_free_camera(self) -> None:
        """Gymnasium's free camera (OffScreenViewer._init_camera, then MujocoRenderer's
        _set_cam_config), from the pose of the first frame."""
        cam = self._camera
        cam.type = mujoco.mjtCamera.mjCAMERA_FREE
        cam.fixedcamid = -1
        for i in range(3):
            cam.lookat[i] = np.median(self.data.geom_xpos[:, i])
        cam.distance = self.model.stat.extent
        for key, value in self._free_camera.items():
            if key == "lookat":
                cam.lookat[:] = value
            else:
                setattr(cam, key, value)
        cam.type, cam.fixedcamid = mujoco.mjtCamera.mjCAMERA_FREE, -1  # a free camera stays free
        self._free_camera = None

    def close(self) -> None:
        if self._gl is not None:
            self._context.free()
            self._gl.free()
            self._gl = None


class RenderModes(list):
    """An env's `metadata["render_modes"]`.

    gymnasium.make calls string methods on a render_mode it does not find here, so a
    render_mode that is not a string would fail inside gymnasium with an AttributeError.
    Such a value counts as a member, which sends it on to the env's constructor, where
    EnvFrames refuses it with an ArgumentTypeError naming the argument.
    """

    def __contains__(self, mode) -> bool:
        return not isinstance(mode, str) or list.__contains__(self, mode)


class EnvFrames:
    """The rendering side of an env: validates render_mode, frame size and view at
    construction, opens MuJoCo's renderer on the first frame, and draws any row of the batch."""

    def __init__(self, physics, task, render_mode: str | None, modes: list, width, height, **view):
        allowed = f"render_mode must be one of {list(modes)} or None, got {render_mode!r}"
        if render_mode is not None and not isinstance(render_mode, str):
            raise ArgumentTypeError(allowed)
        if render_mode is not None and render_mode not in modes:
            raise InvalidArgumentError(allowed)
        self.render_mode = render_mode
        w, h = task.render_size
        w, h = (w if width is None else width), (h if height is None else height)
        self.size = (check_count("width", w), check_count("height", h))
        if render_mode is not None:
            check_frame_size(physics.mj_model, *self.size)
        self.view = View.of(physics.mj_model, task, **view)
        self._keywords = dict(view, width=width, height=height)  # as given, for pickling
        self._physics = physics
        self._decorate = task.decorate_frame  # drawing-only changes before a frame
        self._renderer: Renderer | None = None

    def keywords(self) -> dict:
        """The rendering keywords the env was made with (width, height and the view's)."""
        return dict(self._keywords)

    def frame(self, row: int):
        """Row `row` as render_mode asks: an RGB image, a depth image or the (rgb, depth) pair."""
        if self._renderer is None:
            self._renderer = Renderer(self._physics.mj_model, *self.size, camera=self.view)
        self._decorate(self._physics.mj_model, row)
        d = self._physics.data
        state = (d.qpos[row], d.qvel[row], d.mocap_pos[row], d.mocap_quat[row])
        if self.render_mode == "rgb_array":
            return self._renderer.render(*state[:2], mocap_pos=state[2], mocap_quat=state[3])
        rgbd = self._renderer.rgbd(*state)
        return rgbd[1] if self.render_mode == "depth_array" else rgbd

    def close(self) -> None:
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None
