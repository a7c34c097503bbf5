"""robogym.rotations' heading helpers: the heading yaw against the projected x axis, and the
heading frame against the inverse rotation of a pure yaw."""

from __future__ import annotations

import numpy as np

from robogym.rotations import (
    heading,
    quat_conj,
    quat_from_axis_angle,
    quat_mul,
    quat_rotate,
    to_heading_frame,
)


def _random_quats(rng: np.random.Generator, n: int) -> np.ndarray:
    q = rng.normal(size=(n, 4))
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def test_heading_is_the_yaw_of_the_projected_x_axis():
    q = _random_quats(np.random.default_rng(0), 1000)
    x = quat_rotate(q, np.array([1.0, 0.0, 0.0]))
    want = np.arctan2(x[:, 1], x[:, 0])
    diff = np.angle(np.exp(1j * (heading(q) - want)))  # wrapped to (-pi, pi]
    print(f"\nheading against atan2 of the rotated x axis: worst {np.max(np.abs(diff)):.1e} rad")
    assert np.max(np.abs(diff)) < 1e-12
    assert heading(q[:7]).shape == (7,) and heading(q[:6].reshape(2, 3, 4)).shape == (2, 3)


def test_heading_frame_undoes_the_yaw_and_keeps_the_vertical():
    rng = np.random.default_rng(1)
    q = _random_quats(rng, 500)
    v = rng.normal(size=(500, 3))
    yaw_only = quat_from_axis_angle(np.array([0.0, 0.0, 1.0]), heading(q))
    want = quat_rotate(quat_conj(yaw_only), v)
    got = to_heading_frame(q, v)
    worst = float(np.max(np.abs(got - want)))
    print(f"\nto_heading_frame against the inverse yaw rotation: worst {worst:.1e}")
    assert worst < 1e-12
    np.testing.assert_array_equal(got[:, 2], v[:, 2])
    np.testing.assert_array_equal(to_heading_frame(q, v[:, :2]), got[:, :2])  # 2-vectors alike
    # a body's own forward axis is (c, 0) in its heading frame, c its horizontal length
    fwd = to_heading_frame(q, quat_rotate(q, np.array([1.0, 0.0, 0.0])))
    assert np.max(np.abs(fwd[:, 1])) < 1e-12 and np.all(fwd[:, 0] >= -1e-12)
    # pitch and roll after the yaw do not change the heading
    tilt = quat_from_axis_angle(np.array([0.0, 1.0, 0.0]), np.full(500, 0.3))
    np.testing.assert_allclose(heading(quat_mul(yaw_only, tilt)), heading(q), atol=1e-12)
