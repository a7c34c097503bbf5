"""How good a retargeted motion is: residuals, continuity, foot skating, penetration.

All lengths in metres (printed in cm), speeds in m/s, on the retargeted robot at the capture's
scale (boxes scaled by the same factor as the capture).

- residual: |T_b(q) s_bk - t_k| per sample and frame: the mean and the worst.
- continuity: the largest frame-to-frame step of any hinge (rad) against the capture's own
  largest frame-to-frame rotation of any linked bone (rad), the motion it asked for.
- foot skating: a foot's clearance is the height of its lowest point (of its ankle and ball)
  over the surface under it (the floor, or the top of a box whose footprint holds it); the
  foot is planted on a frame when its clearance is within CONTACT (2 cm) of its least over
  the clip (a joint centre never touches the ground, so the least clearance stands for
  touching); the skating is its mean horizontal speed over pairs of planted frames. The
  capture's own feet, scaled, are measured the same way, for comparison.
- penetration: the share of frames on which some point of the robot's geoms (box corners,
  capsule end spheres, spheres, a mesh's vertices) is more than DEPTH (1 cm) below the
  floor or inside a box.
"""

from __future__ import annotations

import mujoco
import numpy as np

from robodyn.envs.motion.retarget import Result, Robot

CONTACT = 0.02  # m: a foot this close to the surface under it is planted
DEPTH = 0.01  # m: deeper than this into the floor or a box is a penetration
MESH_POINTS = 200  # vertices of a mesh geom checked for penetration (every k-th)
FEET = ("LeftFoot", "LeftToeBase", "RightFoot", "RightToeBase")


def bone_rotation(c: np.ndarray, parents: list[int | None]) -> np.ndarray:
    """(T-1,) the largest frame-to-frame rotation (rad) of any bone of c (T, K, 3), the bone
    from parents[k] to k."""
    worst = np.zeros(len(c) - 1)
    for k, j in enumerate(parents):
        if j is None:
            continue
        u = c[:, k] - c[:, j]
        n = np.linalg.norm(u, axis=1, keepdims=True)
        u = u / np.where(n > 0, n, 1.0)
        worst = np.maximum(worst, np.arccos(np.clip(np.sum(u[1:] * u[:-1], axis=1), -1.0, 1.0)))
    return worst


def surface_height(xy: np.ndarray, boxes) -> np.ndarray:
    """(...,) the height of the surface under points xy (..., 2): the highest box top whose
    footprint holds the point, else the floor (0). boxes: a list of capture.Box."""
    h = np.zeros(xy.shape[:-1])
    for box in boxes:
        h = np.maximum(h, box.top(xy))
    return h


def skating(feet: np.ndarray, fps: float, boxes: np.ndarray) -> float:
    """Mean horizontal speed (m/s) of the planted feet (module docstring): feet (T, F, P, 3),
    F feet of P points each."""
    centre = feet.mean(axis=2)  # (T, F, 3)
    clearance = feet[..., 2].min(axis=2) - surface_height(centre[..., :2], boxes)  # (T, F)
    planted = clearance <= clearance.min(axis=0) + CONTACT
    speed = np.linalg.norm(np.diff(centre[..., :2], axis=0), axis=-1) * fps  # (T-1, F)
    both = planted[1:] & planted[:-1]
    return float(speed[both].mean()) if both.any() else 0.0


def geom_points(robot: Robot, qpos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The points of the robot's colliding geoms at qpos (T, nq): box corners, capsule end centres, sphere
    centres and each mesh's vertices (MuJoCo keeps them in the geom's frame); points (T, P, 3) and their radii
    (P,) (0 for a corner)."""
    m = robot.mj
    unit = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=np.float64)
    local, owner, radii = [], [], []  # each point in its geom's frame
    for g in range(m.ngeom):
        if m.geom_bodyid[g] == 0 or (m.geom_contype[g] == 0 and m.geom_conaffinity[g] == 0):
            continue  # the world's geoms (the floor), and geoms only drawn
        size = m.geom_size[g]
        if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_BOX:
            local.append(unit * size)
            radii += [0.0] * 8
        elif m.geom_type[g] == mujoco.mjtGeom.mjGEOM_CAPSULE:
            local.append(np.array([[0.0, 0.0, -size[1]], [0.0, 0.0, size[1]]]))
            radii += [size[0]] * 2
        elif m.geom_type[g] == mujoco.mjtGeom.mjGEOM_SPHERE:
            local.append(np.zeros((1, 3)))
            radii.append(size[0])
        elif m.geom_type[g] == mujoco.mjtGeom.mjGEOM_MESH:  # its vertices (at most MESH_POINTS)
            mesh = m.geom_dataid[g]
            first, count = m.mesh_vertadr[mesh], m.mesh_vertnum[mesh]
            every = max(1, -(-count // MESH_POINTS))
            local.append(np.asarray(m.mesh_vert[first : first + count : every], dtype=np.float64))
            radii += [0.0] * len(local[-1])
        else:
            continue
        owner += [g] * len(local[-1])
    local, owner = np.concatenate(local), np.array(owner)
    d = robot.sim.data
    out = np.empty((len(qpos), len(owner), 3))
    for i, q in enumerate(qpos):
        d.qpos[:] = q
        robot.sim.forward()
        R = d.geom_xmat[0, owner].reshape(-1, 3, 3)
        out[i] = d.geom_xpos[0, owner] + np.einsum("pij,pj->pi", R, local)
    return out, np.array(radii)


def penetration(points: np.ndarray, radii: np.ndarray, boxes) -> np.ndarray:
    """(T,) whether any point (T, P, 3) with its radius (P,) goes deeper than DEPTH below the
    floor or into a box (its depth: the shortest way out of the box, plus the radius)."""
    below = np.any(points[..., 2] - radii < -DEPTH, axis=1)
    inside = np.zeros(len(points), dtype=bool)
    for box in boxes:
        inside |= np.any(box.depth(points) + radii > DEPTH, axis=1)
    return below | inside


def report(result: Result, capture_points: np.ndarray, fps: float, boxes=()) -> dict:
    """The metrics of row 0 of `result`: capture_points (T, K, 3) the capture's positions of
    the table's joints; boxes: capture.Box list at capture scale (scaled here)."""
    table = result.table
    scale = float(result.scale[0])
    boxes = [b.scaled(scale) for b in boxes]
    robot = Robot(table)
    qpos = result.qpos[0]
    index = table.index()
    parents = [None if s.parent is None else index[s.parent] for s in table.samples]
    step = np.abs(np.diff(qpos[:, robot.limited_qpos], axis=0)).max(axis=1)
    res = result.residual[0]
    out = {
        "frames": int(len(qpos)),
        "scale": scale,
        "residual_mean_cm": 100 * float(res.mean()),
        "residual_worst_cm": 100 * float(res.max()),
        "residual_mean_cm_by_joint": {
            s.joint: 100 * float(res[:, k].mean()) for k, s in enumerate(table.samples)
        },
        "largest_joint_step_rad": float(step.max()),
        "capture_largest_bone_rotation_rad": float(bone_rotation(capture_points, parents).max()),
    }
    feet = [index[j] for j in FEET if j in index]
    if len(feet) == 4:
        robot_feet = np.stack([robot.positions(q[None])[0][feet] for q in qpos]).reshape(len(qpos), 2, 2, 3)
        capture_feet = scale * capture_points[:, feet].reshape(len(qpos), 2, 2, 3)
        out["foot_skating_m_per_s"] = skating(robot_feet, fps, boxes)
        out["capture_foot_skating_m_per_s"] = skating(capture_feet, fps, boxes)
    points, radii = geom_points(robot, qpos)
    out["penetrating_frames"] = float(penetration(points, radii, boxes).mean())
    return out
