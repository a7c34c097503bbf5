"""Inverse kinematics: damped least squares on the engine's Jacobians, batched over rows.

Find qpos that puts a body's frame at a target position and, optionally, orientation. With
the residual e = (p* - p, w log(R* R^T)) (world frame; log: the rotation vector, w: metres
per radian) and J = (jacp; w jacr) restricted to the dofs allowed to move (k columns), each
iteration takes the damped least-squares step (Levenberg-Marquardt; Wampler 1986, Nakamura
and Hanafusa 1986)

    dq = J^T (J J^T + lambda^2 I)^-1 e,           qpos <- qpos (+) dq

which minimises |J dq - e|^2 + lambda^2 |dq|^2. In the singular values sigma_i of J the step
is sum_i sigma_i / (sigma_i^2 + lambda^2) (u_i . e) v_i: a plain pseudo-inverse's 1/sigma_i
would blow up as a direction loses rank (an arm stretched straight, a wrist aligned with its
forearm), the damped one is never larger than |e| / (2 lambda) and fades to 0 there. Where
J has more columns than rows (a redundant arm) the step is the least-norm one, so the
solution stays near the start; where the target cannot be reached (out of reach, or an
orientation the joints cannot make) the iteration settles where J^T e = 0, the nearest pose
in the least-squares sense. Orientation adds three rows to the same Jacobian: placing a
point fixes where the hand is, not which way it faces.

Rows never interact: each row stops on its own test, so solving rows together gives each
the answer it would get alone, bit for bit.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from robodyn.engine.errors import ArgumentTypeError, IndexOutOfRangeError, InvalidArgumentError


class IKResult(NamedTuple):
    """The solution of each row.

    qpos: (B, nq) the last iterate
    error: (B,) |e|, the weighted residual at qpos (metres)
    pos_error: (B,) |p* - p| (m); rot_error: (B,) angle of R* R^T (rad; 0 without a target quat)
    iterations: (B,) steps taken
    converged: (B,) error <= tol (a row that stopped on a step below tol did not converge: it
        sits at the least-squares point of an unreachable target)
    """

    qpos: np.ndarray
    error: np.ndarray
    pos_error: np.ndarray
    rot_error: np.ndarray
    iterations: np.ndarray
    converged: np.ndarray


def ik(
    sim,
    body: int,
    pos,
    quat=None,
    qpos=None,
    dofs=None,
    damping: float = 1e-3,
    rot_weight: float = 1.0,
    tol: float = 1e-10,
    max_iter: int = 100,
) -> IKResult:
    """Damped least-squares IK of body `body`'s frame (its xpos and xquat) for every row of `sim`.

    sim: an engine.Simulator of the model, used as scratch: its qpos, qvel and derived
        quantities are overwritten (qvel with zeros); its batch B is the number of problems.
    pos: (3,) or (B, 3) target positions (world); quat: (4,) or (B, 4) target orientations
        (w, x, y, z; normalized here), or None for position only.
    qpos: (B, nq) or (nq,) start (default: the sim's qpos).
    dofs: the dof indices the solver may move (default all; e.g. an actuation mask, so a
        floating base never teleports).
    damping: lambda (> 0 keeps the step finite at a singularity; 0 is Gauss-Newton's
        pseudo-inverse step, which fails there). rot_weight: metres per radian of the
        orientation rows. tol: a row stops when |e| <= tol or its step's largest component
        is <= tol; max_iter: the most steps a row takes.
    """
    m = sim.model
    B = sim.batch
    d = sim.data
    body = _index("body", body, m.nbody)
    pos_t = _rows_of("pos", pos, (3,), B)
    quat_t = None if quat is None else _rows_of("quat", quat, (4,), B)
    if quat_t is not None:
        norm = np.linalg.norm(quat_t, axis=1, keepdims=True)
        if np.any(norm == 0.0):
            raise InvalidArgumentError("quat must be non-zero")
        quat_t = quat_t / norm
    dofs = np.arange(m.nv) if dofs is None else np.asarray(dofs, dtype=np.int64).reshape(-1)
    if len(dofs) == 0 or np.any((dofs < 0) | (dofs >= m.nv)) or len(np.unique(dofs)) != len(dofs):
        raise InvalidArgumentError(f"dofs must be distinct dof indices in [0, {m.nv}), got {dofs.tolist()}")
    for name, value in (("damping", damping), ("rot_weight", rot_weight), ("tol", tol)):
        if not (np.isfinite(value) and value >= 0):
            raise InvalidArgumentError(f"{name} must be finite and >= 0, got {value!r}")
    if isinstance(max_iter, bool) or not isinstance(max_iter, int | np.integer) or max_iter < 0:
        raise InvalidArgumentError(f"max_iter must be an int >= 0, got {max_iter!r}")
    q = _rows_of("qpos", d.qpos if qpos is None else qpos, (m.nq,), B).copy()

    nrow = 3 if quat_t is None else 6
    shift = (damping * damping) * np.eye(nrow)
    iterations = np.zeros(B, dtype=np.int64)
    active = np.ones(B, dtype=bool)
    d.qvel[:] = 0.0
    e = np.zeros((B, nrow))
    for it in range(max_iter + 1):
        rows = np.flatnonzero(active)
        if len(rows) == 0:
            break
        d.qpos[rows] = q[rows]
        sim.forward(rows=rows)
        e[rows] = _residual(d, body, pos_t, quat_t, rot_weight, rows)
        small = np.linalg.norm(e[rows], axis=1) <= tol
        active[rows[small]] = False
        rows = rows[~small]
        if it == max_iter or len(rows) == 0:
            break
        jacp, jacr = sim.jacobian(body)
        J = jacp[rows][:, :, dofs]
        if quat_t is not None:
            J = np.concatenate([J, rot_weight * jacr[rows][:, :, dofs]], axis=1)
        # dq = J^T (J J^T + lambda^2 I)^-1 e
        y = np.linalg.solve(J @ np.swapaxes(J, 1, 2) + shift, e[rows][:, :, None])
        dq = (np.swapaxes(J, 1, 2) @ y)[:, :, 0]
        v = np.zeros((len(rows), m.nv))
        v[:, dofs] = dq
        q[rows] = sim.integrate_pos(q[rows], v, 1.0)
        iterations[rows] += 1
        active[rows[np.max(np.abs(dq), axis=1) <= tol]] = False
    # the residual at the returned qpos (rows that stopped on a small step moved once more)
    d.qpos[:] = q
    sim.forward()
    e = _residual(d, body, pos_t, quat_t, rot_weight, np.arange(B))
    pos_err = np.linalg.norm(e[:, :3], axis=1)
    rot_err = np.zeros(B) if quat_t is None else rotation_angle(quat_t, d.xquat[:, body])
    error = np.linalg.norm(e, axis=1)
    return IKResult(q, error, pos_err, rot_err, iterations, error <= tol)


def _residual(d, body, pos_t, quat_t, rot_weight, rows) -> np.ndarray:
    """(len(rows), 3 or 6) e = (p* - p, w log(q* q^-1)) of `rows` at the last forward pass."""
    e_pos = pos_t[rows] - d.xpos[rows, body]
    if quat_t is None:
        return e_pos
    e_rot = quat_log(quat_mul(quat_t[rows], quat_conj(d.xquat[rows, body])))
    return np.concatenate([e_pos, rot_weight * e_rot], axis=1)


# --- quaternion helpers ((..., 4) arrays, w x y z; no Model or Data) ------------------------------
def quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(..., 4) Hamilton product a b (the rotation b, then a)."""
    aw, ax, ay, az = np.moveaxis(a, -1, 0)
    bw, bx, by, bz = np.moveaxis(b, -1, 0)
    return np.stack(
        [
            aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
        ],
        axis=-1,
    )


def quat_conj(q: np.ndarray) -> np.ndarray:
    """(..., 4) the conjugate (the inverse rotation of a unit quaternion)."""
    return q * np.array([1.0, -1.0, -1.0, -1.0])


def quat_log(q: np.ndarray) -> np.ndarray:
    """(..., 3) rotation vector theta n of a unit quaternion, theta in [0, pi] (q and -q are the
    same rotation: the sign is chosen with w >= 0)."""
    q = np.where(q[..., :1] < 0.0, -q, q)
    v = q[..., 1:]
    s = np.linalg.norm(v, axis=-1, keepdims=True)
    angle = 2.0 * np.arctan2(s, q[..., :1])
    # theta / sin(theta / 2), -> 2 as s -> 0 (the series keeps small rotations exact)
    scale = np.where(s > 1e-8, angle / np.where(s > 1e-8, s, 1.0), 2.0 + s * s / 3.0)
    return scale * v


def quat_from_axis_angle(axis, angle) -> np.ndarray:
    """(..., 4) rotation by `angle` (...,) about the unit `axis` (..., 3) (or (3,))."""
    angle = np.asarray(angle, dtype=np.float64)[..., None]
    axis = np.broadcast_to(np.asarray(axis, dtype=np.float64), angle.shape[:-1] + (3,))
    return np.concatenate([np.cos(0.5 * angle), np.sin(0.5 * angle) * axis], axis=-1)


def quat_rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """(..., 3) the vector v (..., 3) rotated by the unit quaternion q (..., 4)."""
    w, u = q[..., :1], q[..., 1:]
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


def rotation_angle(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(...,) the angle (rad, in [0, pi]) of the rotation between unit quaternions a and b."""
    return np.linalg.norm(quat_log(quat_mul(a, quat_conj(b))), axis=-1)


def _rows_of(name: str, value, shape: tuple, B: int) -> np.ndarray:
    """value as a (B, *shape) float64 array (one value for every row, or one per row), finite."""
    a = np.asarray(value, dtype=np.float64)
    if a.shape == shape:
        a = np.broadcast_to(a, (B, *shape))
    if a.shape != (B, *shape):
        raise InvalidArgumentError(f"{name} must have shape {shape} or {(B, *shape)}, got {np.shape(value)}")
    if not np.all(np.isfinite(a)):
        raise InvalidArgumentError(f"{name} contains NaN or inf")
    return np.array(a)


def _index(name: str, value, n: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ArgumentTypeError(f"{name} must be an int id, got {type(value).__name__}")
    if not 0 <= value < n:
        raise IndexOutOfRangeError(f"{name} {value} out of range (model has {n})")
    return int(value)
