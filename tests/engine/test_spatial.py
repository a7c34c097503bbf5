"""engine.spatial's quaternion and rotation helpers evaluate MuJoCo's own functions with the
same operations in the same order, so they give the same bits as the MuJoCo 4.0.0 binary
(mju_quat2Mat, mju_mulQuat, mju_rotVecQuat, mju_mulMatVec3, mju_normalize4,
mju_axisAngle2Quat, called through MuJoCo's Python bindings) on random inputs. Kinematics
built from them (tests/engine/test_kinematics.py) then equals mj_kinematics bit for bit."""

from __future__ import annotations

import mujoco
import numpy as np
from numba import njit

from robodyn.engine.spatial import mv3, qaxisangle, qmul, qnormalized, qrot, quat_to_mat

N = 2000


@njit(cache=False)
def _ours(quats, others, vecs, mats, raws, axes, angles, out_mat, out_mul, out_rot, out_mv, out_norm, out_aa):
    """Each helper on row n of the inputs, written into row n of the outputs (the kernels are
    callable from compiled code only)."""
    for n in range(quats.shape[0]):
        q = (quats[n, 0], quats[n, 1], quats[n, 2], quats[n, 3])
        quat_to_mat(out_mat[n], q)
        r = qmul(q, others[n])
        r3 = qrot(q, vecs[n])
        m3 = mv3(mats[n], vecs[n])
        nq = qnormalized(raws[n])
        aa = qaxisangle(axes[n], angles[n])
        for k in range(4):
            out_mul[n, k] = r[k]
            out_norm[n, k] = nq[k]
            out_aa[n, k] = aa[k]
        for k in range(3):
            out_rot[n, k] = r3[k]
            out_mv[n, k] = m3[k]


def _unit_quats(rng, n):
    q = rng.normal(size=(n, 4))
    return q / np.linalg.norm(q, axis=1)[:, None]


def test_quaternion_helpers_are_mujocos_bit_for_bit():
    rng = np.random.default_rng(0)
    quats, others = _unit_quats(rng, N), _unit_quats(rng, N)
    vecs = rng.normal(size=(N, 3))
    axes = vecs / np.linalg.norm(vecs, axis=1)[:, None]
    angles = rng.uniform(-4.0, 4.0, N)
    angles[:10] = 0.0  # the identity branch
    raws = quats * rng.uniform(0.5, 2.0, (N, 1))
    mats = np.zeros((N, 9))
    for q, m in zip(quats, mats, strict=True):
        mujoco.mju_quat2Mat(m, q)
    ours = {
        k: np.zeros((N, w))
        for k, w in (("mat", 9), ("mul", 4), ("rot", 3), ("mv", 3), ("norm", 4), ("aa", 4))
    }
    _ours(quats, others, vecs, mats, raws, axes, angles, *ours.values())
    theirs = {k: np.zeros_like(v) for k, v in ours.items()}
    for n in range(N):
        theirs["mat"][n] = mats[n]
        mujoco.mju_mulQuat(theirs["mul"][n], quats[n], others[n])
        mujoco.mju_rotVecQuat(theirs["rot"][n], vecs[n], quats[n])
        mujoco.mju_mulMatVec3(theirs["mv"][n], mats[n], vecs[n])
        theirs["norm"][n] = raws[n]
        mujoco.mju_normalize4(theirs["norm"][n])
        mujoco.mju_axisAngle2Quat(theirs["aa"][n], axes[n], angles[n])
    names = {
        "mat": "quat2Mat",
        "mul": "mulQuat",
        "rot": "rotVecQuat",
        "mv": "mulMatVec3",
        "norm": "normalize4",
        "aa": "axisAngle2Quat",
    }
    differ = {names[k]: int(np.sum(ours[k] != theirs[k])) for k in ours}
    print(f"[spatial] numbers that differ from MuJoCo's functions, of {N} random inputs each: {differ}")
    assert not any(differ.values()), differ
