"""Quaternion helpers for tasks, batched over leading axes, MuJoCo's convention (w, x, y, z):
the engine's own (engine.ik), so a task's target poses and the engine's kinematics agree."""

import numpy as np

from robodyn.engine.ik import quat_conj, quat_from_axis_angle, quat_mul, quat_rotate, rotation_angle

__all__ = [
    "heading",
    "quat_conj",
    "quat_from_axis_angle",
    "quat_mul",
    "quat_rotate",
    "rotation_angle",
    "to_heading_frame",
]


def heading(quat: np.ndarray) -> np.ndarray:
    """(...,) the yaw of a body's heading (rad): the angle about the world z axis of its x
    axis projected on the floor, for unit quaternions quat (..., 4). With R the rotation
    matrix, atan2(R[1, 0], R[0, 0]) = atan2(2 (w z + x y), 1 - 2 (y^2 + z^2))."""
    w, x, y, z = np.moveaxis(np.asarray(quat, dtype=np.float64), -1, 0)
    return np.arctan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))


def to_heading_frame(quat: np.ndarray, vec: np.ndarray) -> np.ndarray:
    """vec (..., 2) or (..., 3), world frame, in the heading frame of the body turned by quat
    (..., 4): rotated about z by minus heading(quat), so its first axis is forward and its
    second leftward (the vertical component, if any, unchanged)."""
    yaw = heading(quat)
    c, s = np.cos(yaw), np.sin(yaw)
    vec = np.asarray(vec, dtype=np.float64)
    vx, vy = vec[..., 0], vec[..., 1]
    return np.concatenate([np.stack([c * vx + s * vy, -s * vx + c * vy], axis=-1), vec[..., 2:]], axis=-1)
