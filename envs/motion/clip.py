"""A reference motion a task plays: a retargeted joint trajectory, put on the floor, saved as
a small file and resampled at the task's control rate.

A Clip is qpos (T, nq) of one model at `fps` frames per second, with the capture it came
from (`source`, licence included). A retargeting's output becomes one in three steps:
`ground` moves each frame's base vertically so that the lowest corner of the foot boxes
touches the floor (z = 0; the retargeted feet hover 1-3 cm or sink a few mm, as the
performer's marker heights and the robot's proportions differ), and the whole clip
horizontally so that the first frame's base is above the origin; `flatten_feet` turns each
foot near the floor flat on its ankle's hinges (retargeted, the feet stood 15 degrees tilted
on average, a box foot on one edge); `ground` again. `resample` gives the clip at a step dt,
positions and hinge angles linearly, the free joint's quaternion along the shortest arc
(slerp), and `velocities` are central differences on the joint manifold
(mj_differentiatePos's convention: a free joint's linear velocity in the world frame, its
angular velocity in the body frame).

    robodyn retarget mocap_climb_seq_1 --start 64.5 --stop 70.5 --clip assets/imitate_walk.npz

made the clip RoboDyn/Imitate-v0 plays (assets/imitate_walk.npz).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from robodyn.engine.ik import quat_conj, quat_from_axis_angle, quat_log, quat_mul
from robogym.errors import InvalidArgumentError, MissingFileError


@dataclass(frozen=True)
class Clip:
    """qpos: (T, nq) joint positions, a free joint's first (position, quaternion w x y z);
    fps: frames per second; source: the capture it was retargeted from, with its licence."""

    qpos: np.ndarray
    fps: float
    source: str = ""

    @property
    def duration(self) -> float:
        """Seconds from the first frame to the last."""
        return (len(self.qpos) - 1) / self.fps


def save_clip(path: str | Path, clip: Clip) -> Path:
    """Write `clip` as a .npz (qpos, fps, source); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, qpos=clip.qpos, fps=clip.fps, source=clip.source)
    return path


def load_clip(path: str | Path, nq: int | None = None) -> Clip:
    """The Clip saved at `path` (save_clip's format). Refuses a missing file, qpos that is not
    (T >= 2, nq) finite numbers (nq: the model's, when given), a free joint quaternion that is
    not of unit length, and an fps that is not a finite number > 0."""
    path = Path(path)
    if not path.is_file():
        raise MissingFileError(f"clip file {str(path)!r} does not exist")
    with np.load(path, allow_pickle=False) as f:
        missing = [k for k in ("qpos", "fps", "source") if k not in f.files]
        if missing:
            raise InvalidArgumentError(f"{str(path)!r} is not a clip: it has no {', '.join(missing)}")
        qpos, fps, source = np.asarray(f["qpos"]), float(f["fps"]), str(f["source"])
    if qpos.ndim != 2 or len(qpos) < 2 or (nq is not None and qpos.shape[1] != nq):
        want = f"(T >= 2, {nq})" if nq is not None else "(T >= 2, nq)"
        raise InvalidArgumentError(f"a clip's qpos must have shape {want}, got {qpos.shape}")
    qpos = qpos.astype(np.float64)
    bad = np.flatnonzero(~np.all(np.isfinite(qpos), axis=1))
    if len(bad):
        raise InvalidArgumentError(
            f"{len(bad)} frames of {str(path)!r} hold a NaN or an infinity: {bad[:10]}"
        )
    if qpos.shape[1] >= 7 and np.max(np.abs(np.linalg.norm(qpos[:, 3:7], axis=1) - 1.0)) > 1e-9:
        raise InvalidArgumentError(f"the base quaternions of {str(path)!r} are not of unit length")
    if not (np.isfinite(fps) and fps > 0):
        raise InvalidArgumentError(f"a clip's fps must be a finite number > 0, got {fps!r}")
    return Clip(qpos, fps, source)


def ground(qpos: np.ndarray, physics, feet) -> np.ndarray:
    """(T, nq) the poses qpos (T, nq) (a free base first) with each frame's base moved along z
    so that the lowest corner of the box geoms `feet` is at z = 0, and every frame moved
    horizontally by the same amount so that the first frame's base is at x = y = 0.
    physics: a robogym Physics of the model (its scratch kinematics are used)."""
    q = np.array(qpos, dtype=np.float64)
    q[:, 2] -= physics.lowest_box_corner(feet, qpos=q)
    q[:, 0:2] -= q[0, 0:2]
    return q


def flatten_feet(
    qpos: np.ndarray, physics, feet, ankles, reach: float = 0.05, iterations: int = 6
) -> np.ndarray:
    """(T, nq) the grounded poses qpos (T, nq) with each foot turned towards flat on its
    ankle's two hinges while it is near the floor: for foot box feet[i] driven by the hinges
    ankles[i] (pitch, roll), the angles that make the box's z axis vertical (Newton's method
    on the axis's world x and y components, finite-difference Jacobian, kept inside the
    hinges' ranges), blended with the original angles by w = clip(1 - h / reach, 0, 1), h the
    foot's lowest corner above the floor: a foot on the floor is made flat, a foot `reach` or
    higher keeps its angles. A retargeted foot otherwise stands tilted (the capture marks the
    ankle and the toe, not the sole), and a tilted box foot stands on one edge."""
    q = np.array(qpos, dtype=np.float64)
    for foot, pair in zip(feet, ankles, strict=True):
        cols = physics.named.qpos.columns(list(pair))
        lo, hi = physics.named_model.jnt_range[list(pair)].T
        w = np.clip(1.0 - physics.lowest_box_corner((foot,), qpos=q) / reach, 0.0, 1.0)
        flat = q.copy()
        for _ in range(iterations):
            r = _tilt(flat, physics, foot)  # (T, 2)
            J = np.empty((len(q), 2, 2))
            for c in range(2):
                bumped = flat.copy()
                bumped[:, cols[c]] += 1e-6
                J[:, :, c] = (_tilt(bumped, physics, foot) - r) / 1e-6
            step = np.linalg.solve(J, -r[:, :, None])[:, :, 0]
            flat[:, cols] = np.clip(flat[:, cols] + step, lo, hi)
        q[:, cols] += w[:, None] * (flat[:, cols] - q[:, cols])
    return q


def _tilt(qpos: np.ndarray, physics, box: str) -> np.ndarray:
    """(T, 2) the world x and y components of the box geom's z axis at each pose."""
    _, xmat = physics.geom_frames((box,), qpos=qpos)
    return xmat[:, 0, [2, 5]]


def slerp(a: np.ndarray, b: np.ndarray, u: np.ndarray) -> np.ndarray:
    """(..., 4) the unit quaternion a fraction u (...,) of the way from a to b along the
    shortest arc: a exp(u log(a^-1 b))."""
    rv = quat_log(quat_mul(quat_conj(a), b))  # rotation vector, angle in [0, pi]
    angle = np.linalg.norm(rv, axis=-1)
    axis = rv / np.where(angle > 0.0, angle, 1.0)[..., None]
    return quat_mul(a, quat_from_axis_angle(axis, np.asarray(u) * angle))


def resample(clip: Clip, dt: float, free: bool = True) -> np.ndarray:
    """(K + 1, nq) the clip at times k dt, k = 0 .. K = floor(duration / dt): linear
    interpolation between the two frames about each time, the free joint's quaternion (when
    `free`) by slerp."""
    K = int(np.floor(clip.duration / dt + 1e-9))
    s = np.arange(K + 1) * dt * clip.fps  # fractional frame index
    i = np.minimum(np.floor(s).astype(np.int64), len(clip.qpos) - 2)
    u = s - i
    a, b = clip.qpos[i], clip.qpos[i + 1]
    out = a + u[:, None] * (b - a)
    if free:
        out[:, 3:7] = slerp(a[:, 3:7], b[:, 3:7], u)
    return out


def velocities(qpos: np.ndarray, dt: float, sim) -> np.ndarray:
    """(K + 1, nv) joint velocities along poses qpos (K + 1, nq) dt apart: central differences
    (q_{k+1} (-) q_{k-1}) / 2 dt on the joint manifold (sim.differentiate_pos), one-sided at
    the two ends."""
    before = np.concatenate([qpos[:1], qpos[:-2], qpos[-2:-1]])
    after = np.concatenate([qpos[1:2], qpos[2:], qpos[-1:]])
    span = np.full(len(qpos), 2.0 * dt)
    span[[0, -1]] = dt
    return sim.differentiate_pos(before, after, 1.0) / span[:, None]
