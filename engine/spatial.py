"""Vector, quaternion, rotation and spatial-vector helpers used by every stage: one
definition of each operation.

Conventions (MuJoCo's): quaternions are `(w, x, y, z)`; rotation matrices are stored as
9 numbers, row-major; spatial vectors are 6 numbers, angular first (`rot:lin`); a 10-number
inertia is `(Ixx, Iyy, Izz, Ixy, Ixz, Iyz, m*cx, m*cy, m*cz, m)` about a given origin with
`c` the centre of mass relative to that origin.

Two forms, one per operation:
- 3-vectors and quaternions are values: each helper takes arrays or tuples and returns a
  tuple, which lives in registers (`cross3`, `mv3`, ... for 3-vectors, `qmul`, `qrot`,
  ... for quaternions); `put` stores one into an array.
- What a stage writes into its arrays (a rotation matrix, a spatial vector, an inertia, a
  quaternion integrated in place) is computed into an output argument that comes first,
  `res`; where it may alias an input, the inputs are read into locals first.

They never take Model or Data and allocate nothing. The order of each helper's operations
is part of its definition (the stages' results are compared with MuJoCo's to the last
digits): change it only on purpose.
"""

import math

from robodyn.engine.jit import kernel
from robodyn.engine.types import MINVAL

# ---- 3-vectors ------------------------------------------------------------------------------------


@kernel
def dot3(a, b):
    """a . b (mju_dot3)."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@kernel
def add3(a, b):
    """a + b as a 3-tuple (mju_add3)."""
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@kernel
def sub3(a, b):
    """a - b as a 3-tuple (mju_sub3)."""
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@kernel
def scl3(a, s):
    """a s as a 3-tuple (mju_scl3)."""
    return (a[0] * s, a[1] * s, a[2] * s)


@kernel
def add_scl3(a, b, s):
    """a + b s as a 3-tuple, component by component (mju_addScl3)."""
    return (a[0] + b[0] * s, a[1] + b[1] * s, a[2] + b[2] * s)


@kernel
def neg3(a):
    """-a as a 3-tuple."""
    return (-a[0], -a[1], -a[2])


@kernel
def norm3(a):
    """|a| (mju_norm3)."""
    return math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])


@kernel
def normalize3(v):
    """(v / |v|, |v|): the unit vector as a 3-tuple, and the norm; (1, 0, 0) for |v| <
    MINVAL (mju_normalize3, which multiplies by 1 / |v|)."""
    n = math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
    if n < MINVAL:
        return (1.0, 0.0, 0.0), n
    inv = 1.0 / n
    return (v[0] * inv, v[1] * inv, v[2] * inv), n


@kernel
def unit3(v):
    """v / |v| as a 3-tuple; (1, 0, 0) for |v| < MINVAL (normalize3 without the norm)."""
    return normalize3(v)[0]


@kernel
def cross3(a, b):
    """a x b as a 3-tuple."""
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@kernel
def mv3(mat, v):
    """mat v as a 3-tuple for a 9-number row-major matrix."""
    return (
        mat[0] * v[0] + mat[1] * v[1] + mat[2] * v[2],
        mat[3] * v[0] + mat[4] * v[1] + mat[5] * v[2],
        mat[6] * v[0] + mat[7] * v[1] + mat[8] * v[2],
    )


@kernel
def mtv3(mat, v):
    """mat^T v as a 3-tuple for a 9-number row-major matrix."""
    return (
        mat[0] * v[0] + mat[3] * v[1] + mat[6] * v[2],
        mat[1] * v[0] + mat[4] * v[1] + mat[7] * v[2],
        mat[2] * v[0] + mat[5] * v[1] + mat[8] * v[2],
    )


@kernel
def mtm3(a, b):
    """a^T b for row-major 3x3 a, b, as a 9-tuple (row-major; mju_mulMatTMat3): b's axes
    in a's frame, as columns."""
    return (
        a[0] * b[0] + a[3] * b[3] + a[6] * b[6],
        a[0] * b[1] + a[3] * b[4] + a[6] * b[7],
        a[0] * b[2] + a[3] * b[5] + a[6] * b[8],
        a[1] * b[0] + a[4] * b[3] + a[7] * b[6],
        a[1] * b[1] + a[4] * b[4] + a[7] * b[7],
        a[1] * b[2] + a[4] * b[5] + a[7] * b[8],
        a[2] * b[0] + a[5] * b[3] + a[8] * b[6],
        a[2] * b[1] + a[5] * b[4] + a[8] * b[7],
        a[2] * b[2] + a[5] * b[5] + a[8] * b[8],
    )


@kernel
def row3(a, i, j):
    """a[i, j:j + 3] of a 2-d array as a 3-tuple."""
    return (a[i, j], a[i, j + 1], a[i, j + 2])


@kernel
def put_row3(a, i, v):
    """a[i, 0:3] = v for a 2-d array a and a 3-tuple (or array) v."""
    a[i, 0] = v[0]
    a[i, 1] = v[1]
    a[i, 2] = v[2]


@kernel
def put(dst, src):
    """dst[k] = src[k] for every k of the (short) tuple or array src."""
    for k in range(len(src)):
        dst[k] = src[k]


# ---- quaternions ---------------------------------------------------------------------------------


@kernel
def qmul(a, b):
    """Hamilton product a * b of two quaternions, as a 4-tuple; each component's four products
    summed in pairs, as the MuJoCo 4.0.0 binary's mju_mulQuat sums them (the same bits)."""
    return (
        (a[0] * b[0] - a[1] * b[1]) - (a[2] * b[2] + a[3] * b[3]),
        (a[0] * b[1] + a[1] * b[0]) + (a[2] * b[3] - a[3] * b[2]),
        (a[0] * b[2] - a[1] * b[3]) + (a[2] * b[0] + a[3] * b[1]),
        (a[0] * b[3] + a[1] * b[2]) + (a[3] * b[0] - a[2] * b[1]),
    )


@kernel
def qmul_axis(q, a0, a1, a2):
    """q * (0, a): the product with a pure quaternion (mju_mulQuatAxis), as a 4-tuple."""
    return (
        -q[1] * a0 - q[2] * a1 - q[3] * a2,
        q[0] * a0 + q[2] * a2 - q[3] * a1,
        q[0] * a1 + q[3] * a0 - q[1] * a2,
        q[0] * a2 + q[1] * a1 - q[2] * a0,
    )


@kernel
def qderiv(q, w):
    """dq/dt = 0.5 (0, w) * q under the world angular velocity w (mju_derivQuat), a 4-tuple."""
    return (
        0.5 * (-w[0] * q[1] - w[1] * q[2] - w[2] * q[3]),
        0.5 * (w[0] * q[0] + w[1] * q[3] - w[2] * q[2]),
        0.5 * (-w[0] * q[3] + w[1] * q[0] + w[2] * q[1]),
        0.5 * (w[0] * q[2] - w[1] * q[1] + w[2] * q[0]),
    )


@kernel
def qnormalized(q):
    """q / |q| as a 4-tuple (q times 1/|q|, |q|^2 summed in pairs: MuJoCo 4.0.0's
    mju_normalize4, the same bits); a collapsed quaternion becomes the identity, and one
    within 1e-15 of unit length is left as it is."""
    n = math.sqrt((q[0] * q[0] + q[1] * q[1]) + (q[2] * q[2] + q[3] * q[3]))
    if n < MINVAL:
        return (1.0, 0.0, 0.0, 0.0)
    if abs(n - 1.0) > MINVAL:
        inv = 1.0 / n
        return (q[0] * inv, q[1] * inv, q[2] * inv, q[3] * inv)
    return (q[0], q[1], q[2], q[3])


@kernel
def qsub(qa, qb):
    """log(qb^-1 qa) as a rotation vector (axis * angle), a 3-tuple: the rotation, in qb's
    frame, that takes qb to qa (MuJoCo's mju_subQuat; qb * quat(res) = qa). The angle is
    wrapped to (-pi, pi]; below MINVAL the axis is x, as MuJoCo's normalize3 leaves it."""
    # qdif = conj(qb) * qa
    w = qb[0] * qa[0] + qb[1] * qa[1] + qb[2] * qa[2] + qb[3] * qa[3]
    x = qb[0] * qa[1] - qb[1] * qa[0] - qb[2] * qa[3] + qb[3] * qa[2]
    y = qb[0] * qa[2] + qb[1] * qa[3] - qb[2] * qa[0] - qb[3] * qa[1]
    z = qb[0] * qa[3] - qb[1] * qa[2] + qb[2] * qa[1] - qb[3] * qa[0]
    s = math.sqrt(x * x + y * y + z * z)
    angle = 2.0 * math.atan2(s, w)
    if angle > math.pi:
        angle -= 2.0 * math.pi
    if s < MINVAL:
        return (angle, 0.0, 0.0)
    inv = 1.0 / s
    return (x * inv * angle, y * inv * angle, z * inv * angle)


@kernel
def qaxisangle(axis, angle):
    """Quaternion of a rotation by `angle` about the unit `axis`, as a 4-tuple."""
    if angle == 0.0:
        return (1.0, 0.0, 0.0, 0.0)
    s = math.sin(angle * 0.5)
    return (math.cos(angle * 0.5), axis[0] * s, axis[1] * s, axis[2] * s)


@kernel
def qrot(q, v):
    """R(q) v as a 3-tuple: v rotated by the unit quaternion q, as MuJoCo's mju_rotVecQuat
    evaluates it (the same operations in the same order, so the same bits):
    t = q_w v + q_xyz x v,  R(q) v = v + 2 q_xyz x t."""
    if q[0] == 1.0 and q[1] == 0.0 and q[2] == 0.0 and q[3] == 0.0:
        return (v[0], v[1], v[2])
    t0 = q[0] * v[0] + q[2] * v[2] - q[3] * v[1]
    t1 = q[0] * v[1] + q[3] * v[0] - q[1] * v[2]
    t2 = q[0] * v[2] + q[1] * v[1] - q[2] * v[0]
    return (
        v[0] + 2.0 * (q[2] * t2 - q[3] * t1),
        v[1] + 2.0 * (q[3] * t0 - q[1] * t2),
        v[2] + 2.0 * (q[1] * t1 - q[2] * t0),
    )


# ---- into arrays: rotation matrices, quaternions in place ---------------------------------------


@kernel
def quat_to_mat(res, q):
    """res (9, row-major) = rotation matrix of the unit quaternion q."""
    if q[0] == 1.0 and q[1] == 0.0 and q[2] == 0.0 and q[3] == 0.0:
        for k in range(9):
            res[k] = 0.0
        res[0] = 1.0
        res[4] = 1.0
        res[8] = 1.0
        return
    q00 = q[0] * q[0]
    q01 = q[0] * q[1]
    q02 = q[0] * q[2]
    q03 = q[0] * q[3]
    q11 = q[1] * q[1]
    q12 = q[1] * q[2]
    q13 = q[1] * q[3]
    q22 = q[2] * q[2]
    q23 = q[2] * q[3]
    q33 = q[3] * q[3]
    # the diagonal summed in pairs, as the MuJoCo 4.0.0 binary's mju_quat2Mat sums it (the
    # same bits: tests/engine/test_spatial.py)
    res[0] = (q00 - q22) + (q11 - q33)
    res[4] = (q00 + q22) - (q11 + q33)
    res[8] = (q00 - q22) + (q33 - q11)
    res[1] = 2.0 * (q12 - q03)
    res[2] = 2.0 * (q13 + q02)
    res[3] = 2.0 * (q12 + q03)
    res[5] = 2.0 * (q23 - q01)
    res[6] = 2.0 * (q13 - q02)
    res[7] = 2.0 * (q23 + q01)


@kernel
def quat_integrate(q, vel, scale):
    """q <- normalize(q) * quat(axis = vel/|vel|, angle = scale |vel|) (MuJoCo's
    mju_quatIntegrate, whose mju_normalize3 multiplies by 1/|vel| where this divides).

    The increment multiplies on the right: `vel` is an angular velocity in the frame that
    q describes (the body's own frame), as for MuJoCo's ball and free joints. Exact for a
    constant vel.
    """
    n = math.sqrt(vel[0] * vel[0] + vel[1] * vel[1] + vel[2] * vel[2])
    if n < MINVAL:
        axis = (1.0, 0.0, 0.0)
    else:
        axis = (vel[0] / n, vel[1] / n, vel[2] / n)
    put(q, qmul(qnormalized(q), qaxisangle(axis, scale * n)))


# ---- spatial vectors and inertias (6 and 10 numbers) ---------------------------------------------


@kernel
def cross_motion(res, v, u):
    """res = v x u for spatial motion vectors (rot:lin): (w x u_rot, w x u_lin + v_lin x u_rot)."""
    res[0] = -v[2] * u[1] + v[1] * u[2]
    res[1] = v[2] * u[0] - v[0] * u[2]
    res[2] = -v[1] * u[0] + v[0] * u[1]
    res[3] = -v[2] * u[4] + v[1] * u[5]
    res[4] = v[2] * u[3] - v[0] * u[5]
    res[5] = -v[1] * u[3] + v[0] * u[4]
    res[3] += -v[5] * u[1] + v[4] * u[2]
    res[4] += v[5] * u[0] - v[3] * u[2]
    res[5] += -v[4] * u[0] + v[3] * u[1]


@kernel
def cross_force_of(v, f):
    """v x* f as a 6-tuple, for a motion v and a force f (rot:lin):
    (w x f_rot + v_lin x f_lin, w x f_lin)."""
    return (
        (-v[2] * f[1] + v[1] * f[2]) + (-v[5] * f[4] + v[4] * f[5]),
        (v[2] * f[0] - v[0] * f[2]) + (v[5] * f[3] - v[3] * f[5]),
        (-v[1] * f[0] + v[0] * f[1]) + (-v[4] * f[3] + v[3] * f[4]),
        -v[2] * f[4] + v[1] * f[5],
        v[2] * f[3] - v[0] * f[5],
        -v[1] * f[3] + v[0] * f[4],
    )


@kernel
def add_scl6(a, v, s):
    """a + v s for 6-vectors, as a tuple (a: a tuple or an array)."""
    return (
        a[0] + v[0] * s,
        a[1] + v[1] * s,
        a[2] + v[2] * s,
        a[3] + v[3] * s,
        a[4] + v[4] * s,
        a[5] + v[5] * s,
    )


@kernel
def inert_com(res, inertia, mat, dif, mass):
    """res (10) = inertia of a body about a point `dif` away from its centre of mass.

    I = R diag(inertia) R^T + m (|d|^2 1 - d d^T), with R = mat (principal axes to world)
    and d = dif = com - origin; the linear part is (m d, m). The trap here is rows versus
    columns: R diag R^T, not R^T diag R.
    """
    t0 = mat[0] * inertia[0]
    t1 = mat[3] * inertia[0]
    t2 = mat[6] * inertia[0]
    t3 = mat[1] * inertia[1]
    t4 = mat[4] * inertia[1]
    t5 = mat[7] * inertia[1]
    t6 = mat[2] * inertia[2]
    t7 = mat[5] * inertia[2]
    t8 = mat[8] * inertia[2]
    res[0] = mat[0] * t0 + mat[1] * t3 + mat[2] * t6
    res[1] = mat[3] * t1 + mat[4] * t4 + mat[5] * t7
    res[2] = mat[6] * t2 + mat[7] * t5 + mat[8] * t8
    res[3] = mat[0] * t1 + mat[1] * t4 + mat[2] * t7
    res[4] = mat[0] * t2 + mat[1] * t5 + mat[2] * t8
    res[5] = mat[3] * t2 + mat[4] * t5 + mat[5] * t8
    res[0] += mass * (dif[1] * dif[1] + dif[2] * dif[2])
    res[1] += mass * (dif[0] * dif[0] + dif[2] * dif[2])
    res[2] += mass * (dif[0] * dif[0] + dif[1] * dif[1])
    res[3] -= mass * dif[0] * dif[1]
    res[4] -= mass * dif[0] * dif[2]
    res[5] -= mass * dif[1] * dif[2]
    res[6] = mass * dif[0]
    res[7] = mass * dif[1]
    res[8] = mass * dif[2]
    res[9] = mass


@kernel
def inert_vec(i, v):
    """I v as a 6-tuple: the spatial momentum (force) of a 10-number inertia I moving with
    motion v. A tuple stays in registers, where a result written to an array would be read
    back after every store the compiler cannot prove lands elsewhere."""
    return (
        i[0] * v[0] + i[3] * v[1] + i[4] * v[2] - i[8] * v[4] + i[7] * v[5],
        i[3] * v[0] + i[1] * v[1] + i[5] * v[2] + i[8] * v[3] - i[6] * v[5],
        i[4] * v[0] + i[5] * v[1] + i[2] * v[2] - i[7] * v[3] + i[6] * v[4],
        i[8] * v[1] - i[7] * v[2] + i[9] * v[3],
        i[6] * v[2] - i[8] * v[0] + i[9] * v[4],
        i[7] * v[0] - i[6] * v[1] + i[9] * v[5],
    )


@kernel
def inertial_force(i, a, v):
    """I a + v x* (I v) as a 6-tuple: the force that gives a body of 10-number inertia I the
    acceleration a at velocity v (the gyroscopic and centrifugal force added; RNE's f)."""
    ia = inert_vec(i, a)
    g = cross_force_of(v, inert_vec(i, v))
    return (ia[0] + g[0], ia[1] + g[1], ia[2] + g[2], ia[3] + g[3], ia[4] + g[4], ia[5] + g[5])


@kernel
def dot6(a, b):
    """a . b for 6-vectors (a motion paired with a force is power)."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


@kernel
def transform_spatial(res, vec, flg_force, newpos, oldpos, rot, use_rot):
    """Move a spatial vector from reference point `oldpos` to `newpos`, then rotate.

    motion: lin' = lin - (newpos - oldpos) x rot;  force: rot' = rot - (newpos - oldpos) x lin.
    If use_rot, both halves are then mapped by rot^T (rot: new frame's axes in old frame,
    9 numbers row-major), giving the vector in the new frame's coordinates.
    """
    d0 = newpos[0] - oldpos[0]
    d1 = newpos[1] - oldpos[1]
    d2 = newpos[2] - oldpos[2]
    a0, a1, a2, l0, l1, l2 = vec[0], vec[1], vec[2], vec[3], vec[4], vec[5]
    if flg_force:
        a0 -= d1 * l2 - d2 * l1
        a1 -= d2 * l0 - d0 * l2
        a2 -= d0 * l1 - d1 * l0
    else:
        l0 -= d1 * a2 - d2 * a1
        l1 -= d2 * a0 - d0 * a2
        l2 -= d0 * a1 - d1 * a0
    if use_rot:
        res[0] = rot[0] * a0 + rot[3] * a1 + rot[6] * a2
        res[1] = rot[1] * a0 + rot[4] * a1 + rot[7] * a2
        res[2] = rot[2] * a0 + rot[5] * a1 + rot[8] * a2
        res[3] = rot[0] * l0 + rot[3] * l1 + rot[6] * l2
        res[4] = rot[1] * l0 + rot[4] * l1 + rot[7] * l2
        res[5] = rot[2] * l0 + rot[5] * l1 + rot[8] * l2
    else:
        res[0] = a0
        res[1] = a1
        res[2] = a2
        res[3] = l0
        res[4] = l1
        res[5] = l2
