"""engine.ik: damped least-squares IK on the engine's Jacobians, checked with MuJoCo's own
kinematics as the oracle (the pose at the solution, computed by mj_kinematics, must be the
target) and against what damping is for.

- A redundant arm (assets/tests/ik_arm7.xml, seven hinges for a six-number pose) reaches 64
  random reachable poses from one start; the solutions are other than the poses were made
  from (self-motion), so the test checks poses, never joint angles.
- The five-joint tracking arm, position only (three rows, five dofs: redundant), and position
  with orientation: without the orientation rows the hand faces wherever the solver drifted.
- A singular pose (the tracking arm stretched straight, a target beyond reach along it): the
  plain pseudo-inverse step (damping 0) fails, the damped one stays bounded by |e| / (2
  lambda), and the iteration settles on the nearest reachable point.
- A dof mask keeps a floating base still; rows solved together equal rows solved alone.
"""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from robodyn import engine
from robodyn.engine.ik import (
    ik,
    quat_conj,
    quat_from_axis_angle,
    quat_log,
    quat_mul,
    quat_rotate,
    rotation_angle,
)
from tests.helpers import ASSETS, report


def _load(name: str):
    path = ASSETS / name
    return engine.load_mjcf(path), mujoco.MjModel.from_xml_path(str(path))


def _mujoco_pose(mj, body: int, qpos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(xpos (N, 3), xquat (N, 4)) of `body` at each row of qpos, by MuJoCo's mj_kinematics."""
    d = mujoco.MjData(mj)
    pos, quat = [], []
    for q in qpos:
        d.qpos[:] = q
        mujoco.mj_kinematics(mj, d)
        pos.append(d.xpos[body].copy())
        quat.append(d.xquat[body].copy())
    return np.array(pos), np.array(quat)


def test_quaternion_helpers_match_mujoco():
    rng = np.random.default_rng(0)
    q = rng.normal(size=(200, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    p = rng.normal(size=(200, 4))
    p /= np.linalg.norm(p, axis=1, keepdims=True)
    v = rng.normal(size=(200, 3))
    worst = 0.0
    for a, b, x in zip(q, p, v, strict=True):
        ab = np.zeros(4)
        mujoco.mju_mulQuat(ab, a, b)
        vel = np.zeros(3)
        mujoco.mju_quat2Vel(vel, a, 1.0)  # the rotation vector of a (MuJoCo picks the short way)
        rot = np.zeros(3)
        mujoco.mju_rotVecQuat(rot, x, a)
        worst = max(
            worst,
            np.abs(quat_mul(a, b) - ab).max(),
            np.abs(quat_log(a) - vel).max(),
            np.abs(quat_rotate(a, x) - rot).max(),
        )
    report("quat_mul, quat_log, quat_rotate vs mju_mulQuat, mju_quat2Vel, mju_rotVecQuat", worst, 1e-12, 200)
    assert worst < 1e-12
    # log of a tiny rotation stays exact; the angle between q and -q is 0
    tiny = quat_from_axis_angle([0.0, 0.0, 1.0], 1e-12)
    assert np.allclose(quat_log(tiny), [0.0, 0.0, 1e-12], rtol=1e-9, atol=0)
    assert np.all(rotation_angle(q, -q) < 1e-7)
    assert np.allclose(quat_mul(q, quat_conj(q)), [1.0, 0.0, 0.0, 0.0])


def test_redundant_arm_reaches_random_poses():
    """Seven joints, 64 targets made by forward kinematics of random joint angles, one start."""
    model, mj = _load("tests/ik_arm7.xml")
    tool = mj.body("tool").id
    n = 64
    rng = np.random.default_rng(1)
    q_true = rng.uniform(-1.2, 1.2, (n, 7))
    target_pos, target_quat = _mujoco_pose(mj, tool, q_true)
    start = np.full(7, 0.3)
    sim = engine.Simulator(model, batch=n)
    res = ik(sim, tool, target_pos, target_quat, qpos=start, tol=1e-11)
    pos, quat = _mujoco_pose(mj, tool, res.qpos)
    worst_pos = np.abs(pos - target_pos).max()
    worst_rot = rotation_angle(quat, target_quat).max()
    report("IK on 7 dofs: MuJoCo's pose at the solution vs target, position (m)", worst_pos, 1e-10, n)
    report("IK on 7 dofs: MuJoCo's pose at the solution vs target, rotation (rad)", worst_rot, 1e-10, n)
    print(f"[oracle] iterations: max {res.iterations.max()}, median {np.median(res.iterations):.0f}")
    assert res.converged.all() and worst_pos < 1e-10 and worst_rot < 1e-10
    assert np.all(res.error <= 1e-11) and np.all(res.iterations < 100)
    # self-motion: some solutions are other joint angles for the same pose
    assert np.max(np.abs(res.qpos - q_true)) > 0.1


def test_orientation_rows_fix_which_way_the_hand_faces():
    """The tracking arm: position only is redundant (5 dofs, 3 rows) and lands on the point with
    the hand turned wherever the least-norm steps took it; with the orientation rows it lands on
    the point facing the target's way."""
    model, mj = _load("tracking_arm.xml")
    hand = mj.body("hand").id
    rng = np.random.default_rng(2)
    n = 32
    q_true = np.array([0.0, 0.7, -1.6, 0.4, 0.0]) + rng.uniform(-0.3, 0.3, (n, 5))
    target_pos, target_quat = _mujoco_pose(mj, hand, q_true)
    start = np.array([0.0, 0.5, -1.2, 0.2, 0.0])
    sim = engine.Simulator(model, batch=n)
    point = ik(sim, hand, target_pos, qpos=start, tol=1e-12)
    pose = ik(sim, hand, target_pos, target_quat, qpos=start, tol=1e-12)
    pos_p, quat_p = _mujoco_pose(mj, hand, point.qpos)
    pos_f, quat_f = _mujoco_pose(mj, hand, pose.qpos)
    worst = max(np.abs(pos_p - target_pos).max(), np.abs(pos_f - target_pos).max())
    worst_rot = rotation_angle(quat_f, target_quat).max()
    report("tracking arm IK, position (MuJoCo's pose at the solution)", worst, 1e-10, 2 * n)
    report("tracking arm IK with orientation, rotation", worst_rot, 1e-10, n)
    assert point.converged.all() and pose.converged.all() and worst < 1e-10 and worst_rot < 1e-10
    drift = rotation_angle(quat_p, target_quat)
    print(f"[oracle] position only: the hand ends {drift.min():.3f} to {drift.max():.3f} rad off")
    assert np.median(drift) > 0.05


def test_damping_handles_a_singular_pose():
    """The tracking arm stretched straight along +x (q = 0) with the target 0.4 m beyond its
    reach along that line: no joint moves the tool point along x, so J J^T is singular."""
    model, mj = _load("tracking_arm.xml")
    hand = mj.body("hand").id
    sim = engine.Simulator(model, batch=1)
    target = np.array([2.0, 0.0, 0.8])  # the tool point is at (1.6, 0, 0.8) when stretched
    with pytest.raises(np.linalg.LinAlgError):
        ik(sim, hand, target, qpos=np.zeros(5), damping=0.0)
    lam = 1e-2
    res = ik(sim, hand, target, qpos=np.zeros(5), damping=lam)
    assert np.all(np.isfinite(res.qpos))
    report(
        "stretched arm, damped: distance left vs the 0.4 m beyond reach", abs(res.pos_error[0] - 0.4), 1e-9, 1
    )
    assert abs(res.pos_error[0] - 0.4) < 1e-9 and np.abs(res.qpos).max() < 1e-9  # it stays stretched

    # slightly bent (near the singularity), a target out of reach off the axis: one plain
    # pseudo-inverse step is enormous, one damped step is at most |e| / (2 lambda)
    bent = np.array([0.0, 0.0, 1e-6, 0.0, 0.0])
    off_axis = np.array([2.0, 0.3, 0.9])
    plain = ik(sim, hand, off_axis, qpos=bent, damping=0.0, max_iter=1)
    damped = ik(sim, hand, off_axis, qpos=bent, damping=lam, max_iter=1)
    e0 = np.linalg.norm(off_axis - np.array([1.6, 0.0, 0.8]))
    step_plain = np.abs(plain.qpos - bent).max()
    step_damped = np.linalg.norm(damped.qpos - bent)
    print(f"[oracle] near-singular first step: pseudo-inverse {step_plain:.3g} rad, damped {step_damped:.3g}")
    assert step_plain > 1e3 and step_damped <= e0 / (2 * lam)
    # well damped (lambda 0.5: steps of at most 0.43 rad here), the iteration settles on the
    # nearest reachable point, the arm straight at the target; a small lambda lets steps of up to
    # |e| / (2 lambda) through near the boundary of reach, and wanders there
    settled = ik(sim, hand, off_axis, qpos=bent, damping=0.5, max_iter=500)
    reach = 1.6
    shoulder = np.array([0.0, 0.0, 0.8])
    nearest = shoulder + reach * (off_axis - shoulder) / np.linalg.norm(off_axis - shoulder)
    pos, _ = _mujoco_pose(mj, hand, settled.qpos)
    gap = np.abs(pos[0] - nearest).max()
    report("damped IK beyond reach: tool point vs the nearest reachable point", gap, 1e-9, 1)
    assert not settled.converged[0] and gap < 1e-9 and settled.iterations[0] < 500


def test_dof_mask_and_rows_solved_alone():
    """Only the listed dofs move (a floating base stays where it is), and a row solved in a
    batch gives the bits it gives alone."""
    model, mj = _load("tests/floating_arm.xml")
    hinges = [mj.joint(j).dofadr[0] for j in range(mj.njnt) if mj.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE]
    tip = mj.nbody - 1
    n = 6
    rng = np.random.default_rng(4)
    q0 = np.tile(mj.qpos0, (n, 1))
    q_true = q0.copy()
    adr = [mj.jnt_qposadr[mj.dof_jntid[d]] for d in hinges]
    q_true[:, adr] = rng.uniform(-1.0, 1.0, (n, len(adr)))
    target_pos, _ = _mujoco_pose(mj, tip, q_true)
    sim = engine.Simulator(model, batch=n)
    res = ik(sim, tip, target_pos, qpos=q0, dofs=hinges)
    base = [a for a in range(mj.nq) if a not in adr]
    np.testing.assert_array_equal(res.qpos[:, base], q0[:, base])
    pos, _ = _mujoco_pose(mj, tip, res.qpos)
    assert np.abs(pos - target_pos).max() < 1e-9
    one = engine.Simulator(model, batch=1)
    for i in range(n):
        alone = ik(one, tip, target_pos[i], qpos=q0[i], dofs=hinges)
        np.testing.assert_array_equal(alone.qpos[0], res.qpos[i])
        assert alone.iterations[0] == res.iterations[i]


def test_bad_arguments_raise():
    model, _ = _load("tracking_arm.xml")
    sim = engine.Simulator(model, batch=2)
    for kwargs, error in (
        ({"pos": np.zeros(2)}, ValueError),
        ({"pos": [np.nan, 0.0, 0.0]}, ValueError),
        ({"pos": np.zeros(3), "quat": np.zeros(4)}, ValueError),
        ({"pos": np.zeros(3), "dofs": [0, 0]}, ValueError),
        ({"pos": np.zeros(3), "dofs": [7]}, ValueError),
        ({"pos": np.zeros(3), "damping": -1.0}, ValueError),
        ({"pos": np.zeros(3), "max_iter": 2.5}, ValueError),
        ({"pos": np.zeros(3), "qpos": np.zeros(4)}, ValueError),
    ):
        with pytest.raises(error):
            ik(sim, 6, **kwargs)
    with pytest.raises(IndexError):
        ik(sim, 99, np.zeros(3))
    with pytest.raises(TypeError):
        ik(sim, 1.5, np.zeros(3))
