"""Quaternion helpers for tasks, batched over leading axes, MuJoCo's convention (w, x, y, z):
the engine's own (engine.ik), so a task's target poses and the engine's kinematics agree."""

from robodyn.engine.ik import quat_conj, quat_from_axis_angle, quat_mul, quat_rotate, rotation_angle

__all__ = ["quat_conj", "quat_from_axis_angle", "quat_mul", "quat_rotate", "rotation_angle"]
