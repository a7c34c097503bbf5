"""Offscreen frames of the real model, drawn by MuJoCo's renderer from our engine's state.

The engine owns the physics; MuJoCo only draws: qpos (and qvel) of one environment are
copied into an MjData of the same MJCF, mj_kinematics and mj_camlight place the geoms
and cameras, and MuJoCo's
OpenGL renderer draws them offscreen. On Linux without a display the context is EGL
(MUJOCO_GL=egl), created here directly, so it works whatever MUJOCO_GL said when mujoco
was imported.
"""

from __future__ import annotations

import os
import sys

import mujoco
import numpy as np

from robogym.checks import check_count
from robogym.errors import ArgumentTypeError, InvalidArgumentError, UnknownNameError


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

    def __init__(self, mj_model: mujoco.MjModel, width: int, height: int, camera: str | None = None):
        check_frame_size(mj_model, width, height)
        self.model = mj_model
        self.data = mujoco.MjData(mj_model)
        self.width, self.height = int(width), int(height)
        self._gl = _gl_context(self.width, self.height)
        self._gl.make_current()
        self._context = mujoco.MjrContext(mj_model, mujoco.mjtFontScale.mjFONTSCALE_150)
        mujoco.mjr_setBuffer(mujoco.mjtFramebuffer.mjFB_OFFSCREEN, self._context)
        self._scene = mujoco.MjvScene(mj_model, maxgeom=1000)
        self._option = mujoco.MjvOption()
        self._camera = mujoco.MjvCamera()
        if camera is not None:
            cam_id = mujoco.mj_name2id(mj_model, mujoco.mjtObj.mjOBJ_CAMERA, camera)
            if cam_id < 0:
                raise UnknownNameError(f"model has no camera named {camera!r}")
            self._camera.type = mujoco.mjtCamera.mjCAMERA_FIXED
            self._camera.fixedcamid = cam_id
        else:
            mujoco.mjv_defaultFreeCamera(mj_model, self._camera)
        self._viewport = mujoco.MjrRect(0, 0, self.width, self.height)
        self._rgb = np.zeros((self.height, self.width, 3), dtype=np.uint8)

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
        self._gl.make_current()
        mujoco.mjv_updateScene(
            self.model, self.data, self._option, None, self._camera, mujoco.mjtCatBit.mjCAT_ALL, self._scene
        )
        mujoco.mjr_render(self._viewport, self._scene, self._context)

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
    """The rendering side of an env: validates render_mode and frame size at construction,
    opens MuJoCo's renderer on the first frame, and draws any row of the batch."""

    def __init__(
        self, physics, render_mode: str | None, modes: list, width: int, height: int, camera, decorate=None
    ):
        allowed = f"render_mode must be one of {list(modes)} or None, got {render_mode!r}"
        if render_mode is not None and not isinstance(render_mode, str):
            raise ArgumentTypeError(allowed)
        if render_mode is not None and render_mode not in modes:
            raise InvalidArgumentError(allowed)
        self.render_mode = render_mode
        self.size = (check_count("width", width), check_count("height", height))
        if render_mode is not None:
            check_frame_size(physics.mj_model, *self.size)
        self._physics = physics
        self._camera = camera
        self._decorate = decorate  # decorate(mj_model, row): drawing-only changes before a frame
        self._renderer: Renderer | None = None

    def frame(self, row: int) -> np.ndarray:
        if self._renderer is None:
            self._renderer = Renderer(self._physics.mj_model, *self.size, camera=self._camera)
        if self._decorate is not None:
            self._decorate(self._physics.mj_model, row)
        d = self._physics.data
        return self._renderer.render(
            d.qpos[row], d.qvel[row], mocap_pos=d.mocap_pos[row], mocap_quat=d.mocap_quat[row]
        )

    def close(self) -> None:
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None
