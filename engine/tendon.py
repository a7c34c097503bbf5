"""Tendons (MuJoCo's mj_tendon). A fixed tendon's length is a linear combination of joint
coordinates:

    ten_length_t = sum_k coef_k qpos[joint_k],   ten_J[t, dof_k] += coef_k,
    ten_velocity_t = ten_J[t] . qvel

The Jacobian is constant but is written per row so that the transmission and passive
stages read one place. A spatial tendon through sites s_0 .. s_n is the polyline through
them:

    ten_length = sum_k |x_k+1 - x_k| / D,
    ten_J += u_k^T (J_p(body_k+1, x_k+1) - J_p(body_k, x_k)) / D,  u_k = (x_k+1 - x_k) / |.|

for each segment whose two sites are on different bodies (world-frame point Jacobians),
and ten_velocity = ten_J qvel. D is 1 until a pulley, which starts a new branch and sets D
to its divisor for the segments after it. A sphere or cylinder geom between two sites is
an obstacle (wrap): where the straight segment would pass through it, or where its side
site asks the path to go round it the other way, the segment becomes x_k -> w0, the
shortest path on the surface w0 -> w1, and w1 -> x_k+1 (w0, w1 on the geom's body), whose
Jacobian is that of the two straight pieces: the piece on the surface adds length but no
moment (by the path's optimality, moving the wrap points along the surface does not change
the length to first order).
"""

import math

from robodyn.engine import types as T
from robodyn.engine.constraint import dot
from robodyn.engine.jacobian import jac_dif_pair
from robodyn.engine.jit import kernel, unit
from robodyn.engine.ptr import call_unit
from robodyn.engine.spatial import unit3
from robodyn.engine.types import MINVAL


@kernel
def _normalize2(x, y):
    """(x, y) / |(x, y)|, or (1, 0) below MINVAL (mju_normalize, n = 2)."""
    norm = math.sqrt(x * x + y * y)
    if norm < MINVAL:
        return 1.0, 0.0
    inv = 1 / norm
    return x * inv, y * inv


@kernel
def _winding(ux, uy, vx, vy):
    """Signed angle in (-pi, pi] from direction u to direction v about the origin."""
    return math.atan2(ux * vy - uy * vx, ux * vx + uy * vy)


@kernel
def _wrap_circle(e0, e1, e2, e3, has_side, sd0, sd1, radius):
    """(length, t0x, t0y, t1x, t1y): the 2D wrap of the path from end point e_0 = (e0, e1)
    to e_1 = (e2, e3) around the circle of the given radius at the origin, as MuJoCo 4.0.0
    defines it: the shortest path from e_0 to e_1 that winds around the origin by W, with

        W = angle(e_0, sd) + angle(sd, e_1)  with a side point sd (the path e_0 -> sd -> e_1),
        W = angle(e_0, e_1)                  without one (the shorter way round),

    each angle signed in (-pi, pi]. No wrap (length -1) if an end point is inside the
    circle, or the straight segment misses the circle and winds by W itself (|W| < pi).
    Else the path leaves e_0 along its tangent to the circle at t0, follows the arc in W's
    direction to t1 and leaves along the tangent to e_1; the arc's angle is
    |W - angle(e_0, t0) - angle(t1, e_1)| (equal to |W| - acos(r / |e_0|) - acos(r / |e_1|)),
    without a side point the angle between t0 and t1. The tangent points are MuJoCo's
    wrap_circle solutions: (e r^2 -+ r e^perp sqrt(|e|^2 - r^2)) / |e|^2."""
    sqlen0 = e0 * e0 + e1 * e1
    sqlen1 = e2 * e2 + e3 * e3
    sqrad = radius * radius
    if sqlen0 < sqrad or sqlen1 < sqrad or radius < MINVAL:
        return -1.0, 0.0, 0.0, 0.0, 0.0
    dif0 = e2 - e0
    dif1 = e3 - e1
    dd = dif0 * dif0 + dif1 * dif1
    if dd < MINVAL:
        return -1.0, 0.0, 0.0, 0.0, 0.0
    # nearest point of the segment to the origin: e_0 + a dif, a in [0, 1]
    a = -(dif0 * e0 + dif1 * e1) / dd
    a = min(max(a, 0.0), 1.0)
    n0 = a * dif0 + e0
    n1 = a * dif1 + e1
    hits = n0 * n0 + n1 * n1 <= sqrad
    if has_side:
        W = _winding(e0, e1, sd0, sd1) + _winding(sd0, sd1, e2, e3)
        # clear of the circle and winding as the straight segment does (W - its winding
        # is 0, not +-2 pi): no wrap
        if not hits and abs(W - _winding(e0, e1, e2, e3)) < math.pi:
            return -1.0, 0.0, 0.0, 0.0, 0.0
    else:
        if not hits:
            return -1.0, 0.0, 0.0, 0.0, 0.0
        W = _winding(e0, e1, e2, e3)
    sqrt0 = math.sqrt(sqlen0 - sqrad)
    sqrt1 = math.sqrt(sqlen1 - sqrad)
    sgn = 1.0 if W < 0 else -1.0  # clockwise (W < 0): t0 behind e_0, t1 ahead of e_1
    t00 = (e0 * sqrad + sgn * radius * e1 * sqrt0) / sqlen0
    t01 = (e1 * sqrad - sgn * radius * e0 * sqrt0) / sqlen0
    t10 = (e2 * sqrad - sgn * radius * e3 * sqrt1) / sqlen1
    t11 = (e3 * sqrad + sgn * radius * e2 * sqrt1) / sqlen1
    if has_side:  # W less the turns from e_0 to t0 and from t1 to e_1
        arc = abs(W - _winding(e0, e1, t00, t01) - _winding(t10, t11, e2, e3))
    else:  # the shorter way: the angle between the tangent points (< pi)
        arc = math.atan2(abs(t00 * t11 - t01 * t10), t00 * t10 + t01 * t11)
    return radius * arc, t00, t01, t10, t11


@kernel
def _wrap_inside(e0, e1, e2, e3, radius):
    """(0 or -1, t0x, t0y, t1x, t1y): the wrap when the side site lies inside the circle
    (MuJoCo 4.0.0's wrap_inside): the path from e_0 to e_1 must touch the circle, at one
    point t0 = t1 where it reflects (equal angles with the radius). With A = r / |e_0|,
    B = r / |e_1| and G the angle between e_0 and e_1, the point is found from
    f(u) = asin(A sin u) + asin(B sin u) - 2 u + G = 0 by Newton's method from u = pi / 2
    (stop at |f| <= 1e-6, at most 20 steps), and lies at the angle u - asin(A sin u) from
    e_0 (or u - asin(B sin u) from e_1, by the sign of e_0 x e_1). -1 (no wrap) if an end
    point is inside the circle or the segment crosses it; the normalized mean of the end
    points (scaled to the radius) if the solve fails or is not needed."""
    len0 = math.sqrt(e0 * e0 + e1 * e1)
    len1 = math.sqrt(e2 * e2 + e3 * e3)
    dif0 = e2 - e0
    dif1 = e3 - e1
    dd = dif0 * dif0 + dif1 * dif1
    if len0 <= radius or len1 <= radius or radius < MINVAL or len0 < MINVAL or len1 < MINVAL:
        return -1.0, 0.0, 0.0, 0.0, 0.0
    if dd > MINVAL:
        a = -(dif0 * e0 + dif1 * e1) / dd
        if a > 0 and a < 1:
            n0 = e0 + a * dif0
            n1 = e1 + a * dif1
            if math.sqrt(n0 * n0 + n1 * n1) <= radius:
                return -1.0, 0.0, 0.0, 0.0, 0.0
    px, py = _normalize2(0.5 * (e0 + e2), 0.5 * (e1 + e3))
    px *= radius
    py *= radius
    A = radius / len0
    B = radius / len1
    cosG = (len0 * len0 + len1 * len1 - dd) / (2 * len0 * len1)
    if cosG < -1 + MINVAL:
        return -1.0, 0.0, 0.0, 0.0, 0.0
    if cosG > 1 - MINVAL:
        return 0.0, px, py, px, py
    G = math.acos(cosG)
    u = 0.5 * math.pi
    z = 1.0
    f = math.asin(A) + math.asin(B) - math.pi + G
    if f > 0:
        return 0.0, px, py, px, py
    it = 0
    while it < 20 and abs(f) > 1e-6:
        # f'(u) = cos u (A / sqrt(1 - A^2 z^2) + B / sqrt(1 - B^2 z^2)) - 2, z = sin u
        df = (
            A / max(MINVAL, math.sqrt(1 - z * z * A * A)) + B / max(MINVAL, math.sqrt(1 - z * z * B * B))
        ) * math.cos(u) - 2
        if df > -MINVAL:
            return 0.0, px, py, px, py
        u1 = u - f / df
        if u1 > u:
            return 0.0, px, py, px, py
        u = u1
        z = math.sin(u)
        f = math.asin(A * z) + math.asin(B * z) - 2 * u + G
        if f > 1e-6:
            return 0.0, px, py, px, py
        it += 1
    if it >= 20:
        return 0.0, px, py, px, py
    # rotate an end point's direction by ang (from e_0 or e_1, by the sign of their cross)
    if e0 * e3 - e1 * e2 > 0:
        vx, vy = _normalize2(e0, e1)
        ang = u - math.asin(A * z)
    else:
        vx, vy = _normalize2(e2, e3)
        ang = u - math.asin(B * z)
    px = radius * (math.cos(ang) * vx - math.sin(ang) * vy)
    py = radius * (math.sin(ang) * vx + math.cos(ang) * vy)
    return 0.0, px, py, px, py


@kernel
def wrap(x0, x1, xpos, xmat, radius, kind, has_side, side):
    """(length, w0, w1) of a tendon segment from x0 to x1 (world frame) wrapping the sphere
    or cylinder (kind WRAP_SPHERE / WRAP_CYLINDER) of the given radius at xpos, xmat (MuJoCo's
    mju_wrap, with 4.0.0's side-site rule): length -1 if it does not wrap, else the length
    on the surface between the two wrap points w0, w1 (world-frame 3-tuples). In the geom's
    frame (p = R^T (x - xpos)) the problem is 2D, in the plane through the centre, p0 and p1
    (sphere: axes p0 / |p0| and normal x p0, normal = p0 x p1) or the plane z = 0
    (cylinder): _wrap_circle, with the side site (if has_side) projected into the plane and
    scaled to the radius, or _wrap_inside when the side site lies inside the radius. A
    cylinder's wrap points then get heights interpolated along the unrolled path
    L0 + arc + L1 and the length sqrt(arc^2 + height^2) (a helix)."""
    # end points in the geom's frame: p = R^T (x - xpos)
    t0, t1, t2 = x0[0] - xpos[0], x0[1] - xpos[1], x0[2] - xpos[2]
    p00 = xmat[0] * t0 + xmat[3] * t1 + xmat[6] * t2
    p01 = xmat[1] * t0 + xmat[4] * t1 + xmat[7] * t2
    p02 = xmat[2] * t0 + xmat[5] * t1 + xmat[8] * t2
    t0, t1, t2 = x1[0] - xpos[0], x1[1] - xpos[1], x1[2] - xpos[2]
    p10 = xmat[0] * t0 + xmat[3] * t1 + xmat[6] * t2
    p11 = xmat[1] * t0 + xmat[4] * t1 + xmat[7] * t2
    p12 = xmat[2] * t0 + xmat[5] * t1 + xmat[8] * t2
    none = (-1.0, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
    if (
        math.sqrt(p00 * p00 + p01 * p01 + p02 * p02) < MINVAL
        or math.sqrt(p10 * p10 + p11 * p11 + p12 * p12) < MINVAL
    ):
        return none
    if kind == T.WRAP_SPHERE:
        # the plane of the centre, p0 and p1: axis 0 along p0, axis 1 normal to it in the plane
        a00, a01, a02 = unit3((p00, p01, p02))
        n0 = p01 * p12 - p02 * p11
        n1 = p02 * p10 - p00 * p12
        n2 = p00 * p11 - p01 * p10
        nrm = math.sqrt(n0 * n0 + n1 * n1 + n2 * n2)
        n0, n1, n2 = unit3((n0, n1, n2))
        if nrm < MINVAL:  # p0, p1 parallel: a normal to p0 and a vector of ones but at p0's largest
            i = 0
            if abs(a01) > abs(a00) and abs(a01) > abs(a02):
                i = 1
            if abs(a02) > abs(a00) and abs(a02) > abs(a01):
                i = 2
            c0 = 0.0 if i == 0 else 1.0
            c1 = 0.0 if i == 1 else 1.0
            c2 = 0.0 if i == 2 else 1.0
            n0, n1, n2 = unit3((a01 * c2 - a02 * c1, a02 * c0 - a00 * c2, a00 * c1 - a01 * c0))
        a10, a11, a12 = unit3((n1 * a02 - n2 * a01, n2 * a00 - n0 * a02, n0 * a01 - n1 * a00))
    else:  # cylinder: the plane z = 0 of its frame
        a00, a01, a02 = 1.0, 0.0, 0.0
        a10, a11, a12 = 0.0, 1.0, 0.0
    e0 = p00 * a00 + p01 * a01 + p02 * a02
    e1 = p00 * a10 + p01 * a11 + p02 * a12
    e2 = p10 * a00 + p11 * a01 + p12 * a02
    e3 = p10 * a10 + p11 * a11 + p12 * a12
    inside = False
    sd0 = sd1 = 0.0
    if has_side:
        t0, t1, t2 = side[0] - xpos[0], side[1] - xpos[1], side[2] - xpos[2]
        s0 = xmat[0] * t0 + xmat[3] * t1 + xmat[6] * t2
        s1 = xmat[1] * t0 + xmat[4] * t1 + xmat[7] * t2
        s2 = xmat[2] * t0 + xmat[5] * t1 + xmat[8] * t2
        sd0, sd1 = _normalize2(s0 * a00 + s1 * a01 + s2 * a02, s0 * a10 + s1 * a11 + s2 * a12)
        sd0 *= radius
        sd1 *= radius
        inside = math.sqrt(s0 * s0 + s1 * s1 + s2 * s2) < radius
    if inside:
        wlen, q0, q1, q2, q3 = _wrap_inside(e0, e1, e2, e3, radius)
    else:
        wlen, q0, q1, q2, q3 = _wrap_circle(e0, e1, e2, e3, has_side, sd0, sd1, radius)
    if wlen < 0:
        return none
    # back to 3D in the geom's frame: r = axis0 q_x + axis1 q_y
    r0 = a00 * q0 + a10 * q1
    r1 = a01 * q0 + a11 * q1
    r2 = a02 * q0 + a12 * q1
    r3 = a00 * q2 + a10 * q3
    r4 = a01 * q2 + a11 * q3
    r5 = a02 * q2 + a12 * q3
    if kind == T.WRAP_CYLINDER:  # heights along the unrolled path; the helix's length
        L0 = math.sqrt((p00 - r0) * (p00 - r0) + (p01 - r1) * (p01 - r1))
        L1 = math.sqrt((p10 - r3) * (p10 - r3) + (p11 - r4) * (p11 - r4))
        r2 = p02 + (p12 - p02) * L0 / (L0 + wlen + L1)
        r5 = p02 + (p12 - p02) * (L0 + wlen) / (L0 + wlen + L1)
        height = abs(r5 - r2)
        wlen = math.sqrt(wlen * wlen + height * height)
    w0 = (
        xmat[0] * r0 + xmat[1] * r1 + xmat[2] * r2 + xpos[0],
        xmat[3] * r0 + xmat[4] * r1 + xmat[5] * r2 + xpos[1],
        xmat[6] * r0 + xmat[7] * r1 + xmat[8] * r2 + xpos[2],
    )
    w1 = (
        xmat[0] * r3 + xmat[1] * r4 + xmat[2] * r5 + xpos[0],
        xmat[3] * r3 + xmat[4] * r4 + xmat[5] * r5 + xpos[1],
        xmat[6] * r3 + xmat[7] * r4 + xmat[8] * r5 + xpos[2],
    )
    return wlen, w0, w1


@kernel
def _segment(m, d, b, t, p0, body0, p1, body1, divisor):
    """ten_J[t] += u^T (J_p(body1, p1) - J_p(body0, p0)) / divisor, u = (p1 - p0) / |.|
    ((1, 0, 0) for a collapsed segment, as mju_normalize3), when the bodies differ;
    returns |p1 - p0| (mju_dist3)."""
    dx = p1[0] - p0[0]
    dy = p1[1] - p0[1]
    dz = p1[2] - p0[2]
    norm = math.sqrt(dx * dx + dy * dy + dz * dz)
    if body0 == body1:
        return norm
    if norm >= MINVAL:
        inv = 1 / norm
        dx, dy, dz = dx * inv, dy * inv, dz * inv
    else:
        dx, dy, dz = 1.0, 0.0, 0.0
    chain = d.scratch_chain[b]
    jacp = d.scratch_jac[b, 0:3]
    jacr = d.scratch_jac[b, 3:6]
    n = jac_dif_pair(m, d, b, p0, body0, p1, body1, False, chain, jacp, jacr)
    scale = 1 / divisor
    for k in range(n):
        d.ten_J[b, t, chain[k]] += (jacp[0, k] * dx + jacp[1, k] * dy + jacp[2, k] * dz) * scale
    return norm


@kernel
def _path_point(d, b, k, obj, x, y, z):
    """Point k of the row's tendon paths: wrap_obj (-1 a site, -2 a pulley, else the geom)
    and wrap_xpos, stored as MuJoCo's (nwrap, 2) and (nwrap, 6) arrays (two points a row)."""
    d.wrap_obj[b, k >> 1, k & 1] = obj
    c = 3 * (k & 1)
    d.wrap_xpos[b, k >> 1, c] = x
    d.wrap_xpos[b, k >> 1, c + 1] = y
    d.wrap_xpos[b, k >> 1, c + 2] = z


@kernel
def _spatial(m, d, b, t, count):
    """ten_length and ten_J of spatial tendon t (MuJoCo's mj_tendon): ten_J cleared, then
    each site-site segment adds its length; a site-geom-site triple that wraps (see wrap;
    the geom's wrap_prm is its side site, -1 for none) adds the straight pieces to and from
    the wrap points and the length on the surface between them, else the straight segment.
    Straight pieces between different bodies add u^T (J_p(end) - J_p(start)) to ten_J, the
    wrap points moving with the geom's body; the piece on the surface adds none (both its
    points on the geom's body). A pulley starts a new branch with its divisor. The path's
    points (sites, wrap points, a pulley as obj -2 at the origin) go to wrap_obj and
    wrap_xpos from point `count` on (ten_wrapadr, ten_wrapnum); returns the next free one."""
    for v in range(m.nv):
        d.ten_J[b, t, v] = 0.0
    adr = m.tendon_adr[t]
    num = m.tendon_num[t]
    d.ten_wrapadr[b, t] = count
    length = 0.0
    divisor = 1.0
    j = 0
    while j < num - 1:
        w = adr + j
        kind0 = m.wrap_type[w]
        kind1 = m.wrap_type[w + 1]
        if kind0 == T.WRAP_PULLEY or kind1 == T.WRAP_PULLEY:
            if kind0 == T.WRAP_PULLEY:
                divisor = m.wrap_prm[w]
                _path_point(d, b, count, -2, 0.0, 0.0, 0.0)
                count += 1
            j += 1
            continue
        s0 = m.wrap_objid[w]
        x0 = d.site_xpos[b, s0]
        b0 = m.site_bodyid[s0]
        _path_point(d, b, count, -1, x0[0], x0[1], x0[2])
        count += 1
        wlen = -1.0
        if kind1 == T.WRAP_SPHERE or kind1 == T.WRAP_CYLINDER:
            g = m.wrap_objid[w + 1]
            s1 = m.wrap_objid[w + 2]
            x1 = d.site_xpos[b, s1]
            b1 = m.site_bodyid[s1]
            side = int(math.floor(m.wrap_prm[w + 1] + 0.5))
            sidepos = d.site_xpos[b, side if side >= 0 else s0]
            wlen, w0, w1 = wrap(
                x0, x1, d.geom_xpos[b, g], d.geom_xmat[b, g], m.geom_size[g, 0], kind1, side >= 0, sidepos
            )
            j += 2
            if wlen >= 0:
                gb = m.geom_bodyid[g]
                l0 = _segment(m, d, b, t, x0, b0, w0, gb, divisor)
                l1 = _segment(m, d, b, t, w1, gb, x1, b1, divisor)
                length += (l0 + wlen + l1) / divisor
                _path_point(d, b, count, g, w0[0], w0[1], w0[2])
                _path_point(d, b, count + 1, g, w1[0], w1[1], w1[2])
                count += 2
        else:
            s1 = m.wrap_objid[w + 1]
            x1 = d.site_xpos[b, s1]
            b1 = m.site_bodyid[s1]
            j += 1
        if wlen < 0:
            length += _segment(m, d, b, t, x0, b0, x1, b1, divisor) / divisor
        if j == num - 1 or m.wrap_type[adr + j + 1] == T.WRAP_PULLEY:
            # the branch's last site
            _path_point(d, b, count, -1, x1[0], x1[1], x1[2])
            count += 1
    d.ten_length[b, t] = length
    d.ten_wrapnum[b, t] = count - d.ten_wrapadr[b, t]
    return count


@kernel
def _fixed(m, d, b, t, count):
    """ten_length and ten_J of fixed tendon t; it has no path points (ten_wrapnum 0 from
    point `count`)."""
    for v in range(m.nv):
        d.ten_J[b, t, v] = 0.0
    d.ten_wrapadr[b, t] = count
    d.ten_wrapnum[b, t] = 0
    length = 0.0
    for w in range(m.tendon_adr[t], m.tendon_adr[t] + m.tendon_num[t]):
        j = m.wrap_objid[w]
        coef = m.wrap_prm[w]
        length += coef * d.qpos[b, m.jnt_qposadr[j]]
        d.ten_J[b, t, m.jnt_dofadr[j]] += coef
    d.ten_length[b, t] = length


@unit
def spatial_tendons(m, d, b):
    """ten_length, ten_J and the paths (ten_wrapadr, ten_wrapnum, wrap_obj, wrap_xpos) of
    every tendon of row b, for a model with a spatial tendon: the tendons in order, the path
    points numbered as they come. A unit of its own, set in m.unit_tendon only for such
    models (engine.binding), so a model of fixed tendons compiles no path or wrapping code."""
    count = 0
    for t in range(m.ntendon):
        if m.wrap_type[m.tendon_adr[t]] == T.WRAP_SITE:
            count = _spatial(m, d, b, t, count)
        else:
            _fixed(m, d, b, t, count)


@kernel
def tendon(m, d, b):
    """ten_length, ten_J and the spatial tendons' paths (ten_wrapadr, ten_wrapnum, wrap_obj,
    wrap_xpos) of row b: through the spatial_tendons unit if the model has one, else every
    tendon is fixed and has no path points."""
    if m.unit_tendon != 0:
        call_unit(m.unit_tendon, m, d, b)
        return
    for t in range(m.ntendon):
        _fixed(m, d, b, t, 0)


@kernel
def tendon_velocity(m, d, b):
    """ten_velocity = ten_J qvel for row b."""
    for t in range(m.ntendon):
        if m.wrap_type[m.tendon_adr[t]] == T.WRAP_SITE:
            d.ten_velocity[b, t] = dot(d.ten_J[b, t], d.qvel[b], m.nv)
            continue
        v = 0.0
        for w in range(m.tendon_adr[t], m.tendon_adr[t] + m.tendon_num[t]):
            dof = m.jnt_dofadr[m.wrap_objid[w]]
            v += m.wrap_prm[w] * d.qvel[b, dof]
        d.ten_velocity[b, t] = v
