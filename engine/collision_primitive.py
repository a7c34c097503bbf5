"""Stage 9, collision narrow phase: closed-form contacts between two primitive geoms.

The functions here follow MuJoCo's `engine_collision_primitive.c` and
`engine_collision_box.c` (same cases, same branch order, same arithmetic order, so the
contacts agree with MuJoCo's to rounding). They are maths only: no Model or Data.

Every collider has the signature

    n = collide_<type1>_<type2>(con, margin, pos1, mat1, size1, pos2, mat2, size2)

with geom 1 of the lower type code (plane 0 < sphere 2 < capsule 3 < cylinder 5 < box 6):
`pos` (3,) is the geom centre in world coordinates, `mat` (9,) its orientation row-major
(column k is the geom's local axis k in world coordinates), `size` (3,) MuJoCo's geom_size.
It writes n contacts into rows 0..n-1 of `con` (CON_MAX, CON_WIDTH) and returns n:

    con[k, POS:POS+3]       contact position, midway between the two surfaces
    con[k, NORMAL:NORMAL+3] unit contact normal, pointing from geom 1 to geom 2
    con[k, TANGENT:+3]      first tangent hint for the contact frame (0: none)
    con[k, DIST]            signed surface distance along the normal (< 0: penetration)

A contact is reported when dist <= margin, where the caller passes the pair's
margin + gap. Shapes: a sphere has radius size[0]; capsules and cylinders lie along
local z with radius size[0] and half-length size[1]; a box has half-sizes size[0:3]; a
plane is the local z = 0 plane with normal +z (infinite here, as in MuJoCo).

Deep penetration gets no special case: every collider is exact for any overlap (the
nearest face of a box is chosen even with the centre of the other geom inside), and
(nearly) parallel capsules take an explicit branch that returns two contacts at the
ends of the overlapping span, as the MuJoCo 4.0.0 binary does.

Where the 4.0.0 binary (our oracle) differs from the C source we read, we follow the
binary; the one such collider is capsule : capsule (see collide_capsule_capsule).
"""

import math

from robodyn.engine.jit import kernel
from robodyn.engine.sizes import BOXBOX_MAXVERT, DIST, NORMAL, POS, TANGENT
from robodyn.engine.spatial import add3, add_scl3, cross3, dot3, mtm3, mtv3, mv3, normalize3, scl3, sub3
from robodyn.engine.types import MINVAL

# ---- small vector helpers (3-tuples in, 3-tuples out) -----------------------------------------


@kernel
def _zaxis(mat):
    return (mat[2], mat[5], mat[8])


@kernel
def frame_axes(normal, tangent):
    """The contact frame's axes (x, y, z) as 3-tuples (mju_makeFrame): x = the normal
    (renormalized), y = the tangent hint made orthogonal to x (without a hint: world y,
    or world z when x is within 60 degrees of world y), z = x cross y."""
    x, _ = normalize3(normal)
    y = (tangent[0], tangent[1], tangent[2])
    if dot3(y, y) < 0.25:
        y = (0.0, 1.0, 0.0) if -0.5 < x[1] < 0.5 else (0.0, 0.0, 1.0)
    y, _ = normalize3(sub3(y, scl3(x, dot3(x, y))))
    return x, y, cross3(x, y)


@kernel
def _clip(x, lo, hi):
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


@kernel
def _set(con, k, pos, normal, tangent, dist):
    """Write contact k of `con`."""
    for i in range(3):
        con[k, POS + i] = pos[i]
        con[k, NORMAL + i] = normal[i]
        con[k, TANGENT + i] = tangent[i]
    con[k, DIST] = dist


_ZERO3 = (0.0, 0.0, 0.0)


# ---- plane --------------------------------------------------------------------------------------


@kernel
def _plane_sphere_raw(con, k, margin, pos1, mat1, pos2, radius):
    """Plane (pos1, mat1) against a sphere at pos2: n = plane z, d = (pos2 - pos1).n - r,
    contact at pos2 - n (r + d/2). Writes row k; returns 0 or 1."""
    normal = _zaxis(mat1)
    cdist = dot3(sub3(pos2, pos1), normal)
    if cdist > margin + radius:
        return 0
    dist = cdist - radius
    pos = add3(pos2, scl3(normal, -dist / 2 - radius))
    _set(con, k, pos, normal, _ZERO3, dist)
    return 1


@kernel
def collide_plane_sphere(con, margin, pos1, mat1, size1, pos2, mat2, size2):
    """Plane : sphere, one contact (mjc_PlaneSphere)."""
    return _plane_sphere_raw(con, 0, margin, pos1, mat1, pos2, size2[0])


@kernel
def collide_plane_ellipsoid(con, margin, pos1, mat1, size1, pos2, mat2, size2):
    """Plane : ellipsoid, one contact at the ellipsoid's support point in the direction
    -n (MuJoCo's mjc_PlaneConvex with the ellipsoid's support function). With u = R^T (-n)
    in the ellipsoid's frame and semi-axes a, the support point is
    s = pos2 + R (a * w), w = normalize3(a * u): the point of the surface farthest along
    -n, whose normal is -n. d = (s - pos1).n; contact at s - n d/2, normal n."""
    normal = _zaxis(mat1)
    u = (
        -(mat2[0] * normal[0] + mat2[3] * normal[1] + mat2[6] * normal[2]),
        -(mat2[1] * normal[0] + mat2[4] * normal[1] + mat2[7] * normal[2]),
        -(mat2[2] * normal[0] + mat2[5] * normal[1] + mat2[8] * normal[2]),
    )
    w, _ = normalize3((u[0] * size2[0], u[1] * size2[1], u[2] * size2[2]))
    local = (w[0] * size2[0], w[1] * size2[1], w[2] * size2[2])
    support = (
        mat2[0] * local[0] + mat2[1] * local[1] + mat2[2] * local[2] + pos2[0],
        mat2[3] * local[0] + mat2[4] * local[1] + mat2[5] * local[2] + pos2[1],
        mat2[6] * local[0] + mat2[7] * local[1] + mat2[8] * local[2] + pos2[2],
    )
    dist = dot3(sub3(support, pos1), normal)
    if dist > margin:
        return 0
    _set(con, 0, add_scl3(support, normal, -0.5 * dist), normal, _ZERO3, dist)
    return 1


@kernel
def collide_plane_capsule(con, margin, pos1, mat1, size1, pos2, mat2, size2):
    """Plane : capsule, a sphere test at each end of the segment pos2 +- h a (mjc_PlaneCapsule).

    Up to two contacts; their frames take the capsule axis a as the first tangent."""
    axis = _zaxis(mat2)
    segment = (size2[1] * axis[0], size2[1] * axis[1], size2[1] * axis[2])
    n1 = _plane_sphere_raw(con, 0, margin, pos1, mat1, add3(pos2, segment), size2[0])
    n2 = _plane_sphere_raw(con, n1, margin, pos1, mat1, sub3(pos2, segment), size2[0])
    for k in range(n1 + n2):
        for i in range(3):
            con[k, TANGENT + i] = axis[i]
    return n1 + n2


@kernel
def collide_plane_cylinder(con, margin, pos1, mat1, size1, pos2, mat2, size2):
    """Plane : cylinder, up to four contacts (mjc_PlaneCylinder).

    With the axis a turned towards the plane and v the radius vector of the rim point
    nearest the plane (-n with its a-component removed, scaled to the radius), the
    candidates are the rim points c + h a + v and c - h a + v, and, when the near cap is
    within the margin, two more rim points of the near cap at 120 degrees from v.
    """
    normal = _zaxis(mat1)
    axis = _zaxis(mat2)

    # project, make sure the axis points towards the plane
    prjaxis = dot3(normal, axis)
    if prjaxis > 0:
        axis = scl3(axis, -1.0)
        prjaxis = -prjaxis

    # normal distance of the centre; v = a (a.n) - n, the direction to the nearest rim point
    dist0 = dot3(sub3(pos2, pos1), normal)
    vec = sub3(scl3(axis, prjaxis), normal)
    len_sqr = dot3(vec, vec)
    if len_sqr >= MINVAL * MINVAL:
        vec = scl3(vec, size2[0] / math.sqrt(len_sqr))
    else:  # disk parallel to the plane: any radius will do, take the cylinder's x axis
        vec = (mat2[0] * size2[0], mat2[3] * size2[0], mat2[6] * size2[0])
    prjvec = dot3(vec, normal)

    # scale the axis by the half-length
    axis = scl3(axis, size2[1])
    prjaxis *= size2[1]

    # first point: rim of the near cap; nothing within the margin if it is not
    dist = dist0 + prjaxis + prjvec
    if dist > margin:
        return 0
    pos = add_scl3(add3(add3(pos2, vec), axis), normal, -dist * 0.5)
    _set(con, 0, pos, normal, _ZERO3, dist)
    cnt = 1

    # second point: rim of the far cap
    dist = dist0 - prjaxis + prjvec
    if dist <= margin:
        pos = add_scl3(sub3(add3(pos2, vec), axis), normal, -dist * 0.5)
        _set(con, cnt, pos, normal, _ZERO3, dist)
        cnt += 1

    # two more rim points of the near cap, at +-120 degrees from the first
    prjvec1 = -prjvec * 0.5
    dist = dist0 + prjaxis + prjvec1
    if dist <= margin:
        vec1, _ = normalize3(cross3(vec, axis))
        vec1 = scl3(vec1, size2[0] * math.sqrt(3.0) / 2)
        pos = add_scl3(add_scl3(add3(add3(pos2, vec1), axis), vec, -0.5), normal, -dist * 0.5)
        _set(con, cnt, pos, normal, _ZERO3, dist)
        cnt += 1
        pos = add_scl3(add_scl3(add3(sub3(pos2, vec1), axis), vec, -0.5), normal, -dist * 0.5)
        _set(con, cnt, pos, normal, _ZERO3, dist)
        cnt += 1
    return cnt


@kernel
def collide_plane_box(con, margin, pos1, mat1, size1, pos2, mat2, size2):
    """Plane : box, the first four corners (in corner order) below the margin and on the
    plane side of the box centre (mjc_PlaneBox)."""
    norm = _zaxis(mat1)
    dist = dot3(sub3(pos2, pos1), norm)
    cnt = 0
    for i in range(8):
        vec = (
            size2[0] if i & 1 else -size2[0],
            size2[1] if i & 2 else -size2[1],
            size2[2] if i & 4 else -size2[2],
        )
        corner = mv3(mat2, vec)
        ldist = dot3(norm, corner)
        if dist + ldist > margin or ldist > 0:
            continue
        cdist = dist + ldist
        pos = add3(add3(corner, pos2), scl3(norm, -cdist / 2))
        _set(con, cnt, pos, norm, _ZERO3, cdist)
        cnt += 1
        if cnt >= 4:
            return 4
    return cnt


# ---- sphere and capsule -------------------------------------------------------------------------


@kernel
def _sphere_sphere_raw(con, k, margin, pos1, mat1, r1, pos2, mat2, r2):
    """Sphere (pos1, r1) : sphere (pos2, r2): n = (pos2 - pos1)/|.|, d = |pos2 - pos1| - r1 - r2,
    contact at pos1 + n (r1 + d/2). Concentric spheres take n = z1 x z2 (or x). Row k."""
    dif = sub3(pos1, pos2)
    cdist_sqr = dot3(dif, dif)
    min_dist = margin + r1 + r2
    if cdist_sqr > min_dist * min_dist:
        return 0
    dist = math.sqrt(cdist_sqr) - r1 - r2
    normal, length = normalize3(sub3(pos2, pos1))
    if length < MINVAL:
        normal, _ = normalize3(cross3(_zaxis(mat1), _zaxis(mat2)))
    pos = add3(scl3(normal, r1 + dist / 2), pos1)
    _set(con, k, pos, normal, _ZERO3, dist)
    return 1


@kernel
def collide_sphere_sphere(con, margin, pos1, mat1, size1, pos2, mat2, size2):
    """Sphere : sphere, one contact (mjc_SphereSphere)."""
    return _sphere_sphere_raw(con, 0, margin, pos1, mat1, size1[0], pos2, mat2, size2[0])


@kernel
def _sphere_capsule_raw(con, k, margin, pos1, mat1, r1, pos2, mat2, size2):
    """Sphere : capsule, a sphere test against the nearest point of the capsule segment."""
    length = size2[1]
    axis = _zaxis(mat2)
    x = _clip(dot3(axis, sub3(pos1, pos2)), -length, length)
    near = add3(scl3(axis, x), pos2)
    return _sphere_sphere_raw(con, k, margin, pos1, mat1, r1, near, mat2, size2[0])


@kernel
def collide_sphere_capsule(con, margin, pos1, mat1, size1, pos2, mat2, size2):
    """Sphere : capsule, one contact (mjc_SphereCapsule)."""
    return _sphere_capsule_raw(con, 0, margin, pos1, mat1, size1[0], pos2, mat2, size2)


@kernel
def collide_sphere_cylinder(con, margin, pos1, mat1, size1, pos2, mat2, size2):
    """Sphere : cylinder, one contact (mjc_SphereCylinder).

    With x the sphere centre's coordinate along the axis and p its radial offset: the side
    (|x| < h) collides as a sphere against the axis point, a cap (|p| < r) as a plane; a
    centre inside the cylinder uses whichever of side and cap is nearer; otherwise the
    nearest rim point is a sphere of radius 0.
    """
    radius = size2[0]
    height = size2[1]
    axis = _zaxis(mat2)
    vec = sub3(pos1, pos2)
    x = dot3(axis, vec)
    a_proj = scl3(axis, x)
    p_proj = sub3(vec, a_proj)
    p_proj_sqr = dot3(p_proj, p_proj)

    collide_side = abs(x) < height
    collide_cap = p_proj_sqr < radius * radius
    if collide_side and collide_cap:  # centre inside: keep the shallower exit
        dist_cap = height - abs(x)
        dist_radius = radius - math.sqrt(p_proj_sqr)
        if dist_cap < dist_radius:
            collide_side = False
        else:
            collide_cap = False

    if collide_side:
        return _sphere_sphere_raw(con, 0, margin, pos1, mat1, size1[0], add3(a_proj, pos2), mat2, radius)

    if collide_cap:
        if x > 0:  # top cap: a plane with the cylinder's frame
            pos_cap = add_scl3(pos2, axis, height)
            n = _plane_sphere_raw(con, 0, margin, pos_cap, mat2, pos1, size1[0])
        else:  # bottom cap: the frame turned about y (x and z flipped)
            pos_cap = add_scl3(pos2, axis, -height)
            flipz = (0.0, 0.0, -mat2[2], 0.0, 0.0, -mat2[5], 0.0, 0.0, -mat2[8])
            n = _plane_sphere_raw(con, 0, margin, pos_cap, flipz, pos1, size1[0])
        if n:  # the plane was geom 1 there: the normal must point from the sphere
            for i in range(3):
                con[0, NORMAL + i] = -con[0, NORMAL + i]
        return n

    # rim: a point sphere at the nearest rim point
    p_proj = scl3(p_proj, size2[0] / math.sqrt(p_proj_sqr))
    rim = add3(add3(scl3(axis, height if x > 0 else -height), p_proj), pos2)
    return _sphere_sphere_raw(con, 0, margin, pos1, mat1, size1[0], rim, mat2, 0.0)


PARALLEL_SIN2 = 1e-8  # capsule axes with sin^2(angle) below this take the parallel branch


@kernel
def collide_capsule_capsule(con, margin, pos1, mat1, size1, pos2, mat2, size2):
    """Capsule : capsule (mjc_CapsuleCapsule): nearest points of the two segments, then a
    sphere test; one contact, or two for (nearly) parallel axes.

    Segments s_i(x_i) = pos_i + x_i A_i, A_i = h_i z_i, x_i in [-1, 1]. The nearest points
    solve [ma mb; mb mc] [x1; x2] = [u; v] with ma = |A1|^2, mb = -A1.A2, mc = |A2|^2,
    u = -A1.d, v = A2.d (d = pos1 - pos2), clipped to the segments (a clipped x1 re-solves
    x2 and vice versa).

    Parallel axes, det = ma mc - mb^2 = ma mc sin^2(angle) < 1e-8 ma mc: the system is
    singular (or nearly), and the contact is a line. Segment 2's ends project onto segment
    1 at x1 = (u -+ mb)/ma; the two contacts are at the ends of the overlap of the two
    spans, lower end (in x1) first: an end of segment 1 against its projection onto
    segment 2, or an end of segment 2 against its projection onto segment 1, whichever
    bounds the overlap. Spans that do not overlap give the end-to-end contact twice.
    This is what the MuJoCo 4.0.0 binary does (measured: the threshold, the points and
    their order); the C source we read tests the ends of segment 1 first and takes the
    branch only for det < 1e-15, which differs by up to the capsule length in position.
    """
    axis1 = (mat1[2] * size1[1], mat1[5] * size1[1], mat1[8] * size1[1])
    axis2 = (mat2[2] * size2[1], mat2[5] * size2[1], mat2[8] * size2[1])
    dif = sub3(pos1, pos2)
    ma = dot3(axis1, axis1)
    mb = -dot3(axis1, axis2)
    mc = dot3(axis2, axis2)
    u = -dot3(axis1, dif)
    v = dot3(axis2, dif)
    det = ma * mc - mb * mb
    r1 = size1[0]
    r2 = size2[0]

    if det >= PARALLEL_SIN2 * ma * mc:
        x1 = (mc * u - mb * v) / det
        x2 = (ma * v - mb * u) / det
        if x1 > 1:
            x1 = 1.0
            x2 = (v - mb) / mc
        elif x1 < -1:
            x1 = -1.0
            x2 = (v + mb) / mc
        if x2 > 1:
            x2 = 1.0
            x1 = _clip((u - mb) / ma, -1.0, 1.0)
        elif x2 < -1:
            x2 = -1.0
            x1 = _clip((u + mb) / ma, -1.0, 1.0)
        vec1 = add3(scl3(axis1, x1), pos1)
        vec2 = add3(scl3(axis2, x2), pos2)
        return _sphere_sphere_raw(con, 0, margin, vec1, mat1, r1, vec2, mat2, r2)

    # parallel: segment 2's ends (x2 = +1, -1) at x1 = t_plus, t_minus on segment 1
    t_plus = (u - mb) / ma
    t_minus = (u + mb) / ma
    if t_plus <= t_minus:
        t_lo, end_lo, t_hi, end_hi = t_plus, 1.0, t_minus, -1.0
    else:
        t_lo, end_lo, t_hi, end_hi = t_minus, -1.0, t_plus, 1.0
    n = 0
    for k in range(2):
        if k == 0:
            inside = t_lo > -1  # segment 2's end bounds the overlap from below
            t, end2, end1 = t_lo, end_lo, -1.0
        else:
            inside = t_hi < 1  # ... from above
            t, end2, end1 = t_hi, end_hi, 1.0
        if inside:
            x2 = end2
            x1 = _clip(t, -1.0, 1.0)
        else:
            x1 = end1
            x2 = _clip((v - end1 * mb) / mc, -1.0, 1.0)
        vec1 = add3(scl3(axis1, x1), pos1)
        vec2 = add3(scl3(axis2, x2), pos2)
        n += _sphere_sphere_raw(con, n, margin, vec1, mat1, r1, vec2, mat2, r2)
    return n


# ---- box ----------------------------------------------------------------------------------------


@kernel
def _sphere_box_raw(con, k, margin, pos1, r1, pos2, mat2, size2):
    """Sphere (pos1, r1) : box (mjraw_SphereBox). Row k; returns 0 or 1.

    In box coordinates the sphere centre c is clamped into the box (q); outside the box
    n = (q - c)/|q - c|, d = |q - c| - r, and the contact lies midway between q and the
    deepest sphere point c + r n. A centre inside the box leaves through the nearest face:
    n = -(face normal), d = -(distance to that face) - r.
    """
    center = mtv3(mat2, sub3(pos1, pos2))
    clamped = (
        _clip(center[0], -size2[0], size2[0]) if size2[0] > 0 else center[0],
        _clip(center[1], -size2[1], size2[1]) if size2[1] > 0 else center[1],
        _clip(center[2], -size2[2], size2[2]) if size2[2] > 0 else center[2],
    )
    tmp, dist = normalize3(sub3(clamped, center))
    if dist - r1 > margin:
        return 0

    if dist <= MINVAL:  # centre inside the box: nearest face
        closest = (size2[0] + size2[1] + size2[2]) * 2
        face = 0
        for i in range(6):
            sign = 1.0 if i % 2 else -1.0
            gap = abs(sign * size2[i // 2] - center[i // 2])
            if closest > gap:
                closest = gap
                face = i
        sign = -1.0 if face % 2 else 1.0
        near = (
            sign if face // 2 == 0 else 0.0,
            sign if face // 2 == 1 else 0.0,
            sign if face // 2 == 2 else 0.0,
        )
        pos = add_scl3(center, near, (r1 - closest) / 2)
        normal = mv3(mat2, near)
        dist = -closest
    else:
        deepest = add_scl3(center, tmp, r1)
        pos = add_scl3(scl3(clamped, 0.5), deepest, 0.5)
        normal = mv3(mat2, tmp)

    _set(con, k, add3(mv3(mat2, pos), pos2), normal, _ZERO3, dist - r1)
    return 1


@kernel
def collide_sphere_box(con, margin, pos1, mat1, size1, pos2, mat2, size2):
    """Sphere : box, one contact (mjc_SphereBox)."""
    return _sphere_box_raw(con, 0, margin, pos1, size1[0], pos2, mat2, size2)


@kernel
def _clamp_flag(x, s):
    """(x clamped to [-s, s], 1 if it moved else 0)."""
    if x < -s:
        return -s, 1
    if x > s:
        return s, 1
    return x, 0


@kernel
def _capsule_box_nearest(pos, halfaxis, size1, size2, bestdistmax):
    """Where the capsule segment (pos + x halfaxis, box coordinates) comes nearest the box.

    First the two segment ends against the faces (an end whose clamp into the box moves
    more than one coordinate is near an edge, left to the edge search), then the segment
    against each of the twelve edges (closest points of two segments). Returns
    (cltype, clface, clcorner, cledge, bestsegmentpos, bestboxpos); see capsule_box.
    """
    bestdist = bestdistmax
    bestsegmentpos = 0.0
    bestboxpos = 0.0
    cltype = -4
    clface = -1
    clcorner = 0
    cledge = 0

    # a face nearest to an end of the segment
    for i in (-1, 1):
        end = add_scl3(pos, halfaxis, float(i))
        c0, out0 = _clamp_flag(end[0], size2[0])
        c1, out1 = _clamp_flag(end[1], size2[1])
        c2, out2 = _clamp_flag(end[2], size2[2])
        if out0 + out1 + out2 > 1:
            continue
        face = 2 if out2 else (1 if out1 else (0 if out0 else -1))
        dif = (c0 - end[0], c1 - end[1], c2 - end[2])
        dist = dot3(dif, dif)
        if dist < bestdist:
            bestdist = dist
            bestsegmentpos = float(i)
            cltype = -2 + i
            clface = face

    # an edge of the box nearest to the segment
    for j in range(3):
        for i in range(8):
            if i & (1 << j):
                continue
            start = (
                0.0 if j == 0 else (size2[0] if i & 1 else -size2[0]),
                0.0 if j == 1 else (size2[1] if i & 2 else -size2[1]),
                0.0 if j == 2 else (size2[2] if i & 4 else -size2[2]),
            )
            # edge start + x1 size2[j] e_j against segment pos + x2 halfaxis
            dif = sub3(start, pos)
            ma = size2[j] * size2[j]
            mb = -size2[j] * halfaxis[j]
            mc = size1[1] * size1[1]
            u = -size2[j] * dif[j]
            v = dot3(halfaxis, dif)
            det = ma * mc - mb * mb
            if abs(det) < MINVAL:
                continue
            idet = 1 / det
            # s1, s2: 0 or 2 = clamped at the lower or upper end, 1 = inside
            x1 = (mc * u - mb * v) * idet
            x2 = (ma * v - mb * u) * idet
            s1 = 1
            s2 = 1
            if x1 > 1:
                x1 = 1.0
                s1 = 2
                x2 = (v - mb) * (1 / mc)
            elif x1 < -1:
                x1 = -1.0
                s1 = 0
                x2 = (v + mb) * (1 / mc)
            if x2 > 1:
                x2 = 1.0
                s2 = 2
                x1 = (u - mb) * (1 / ma)
                if x1 > 1:
                    x1 = 1.0
                    s1 = 2
                elif x1 < -1:
                    x1 = -1.0
                    s1 = 0
            elif x2 < -1:
                x2 = -1.0
                s2 = 0
                x1 = (u + mb) * (1 / ma)
                if x1 > 1:
                    x1 = 1.0
                    s1 = 2
                elif x1 < -1:
                    x1 = -1.0
                    s1 = 0
            gap = add_scl3(dif, halfaxis, -x2)
            gap_j = gap[j] + size2[j] * x1
            gap = (gap_j if j == 0 else gap[0], gap_j if j == 1 else gap[1], gap_j if j == 2 else gap[2])
            dist = dot3(gap, gap)
            # MuJoCo's -MINVAL: an edge must beat a face strictly (axis numerically parallel)
            if dist < bestdist - MINVAL:
                bestdist = dist
                bestsegmentpos = x2
                bestboxpos = x1
                c1 = s1 * 3 + s2
                clcorner = i + (1 << j) * (c1 // 6)
                cledge = j
                cltype = c1
    return cltype, clface, clcorner, cledge, bestsegmentpos, bestboxpos


@kernel
def _capsule_box_second(
    cltype, clface, clcorner, cledge, bestsegmentpos, bestboxpos, pos, axis, halfaxis, size2
):
    """Offset along the segment (in units of the half-axis) of a second contact point, or
    -4 for none: how far the capsule runs on along the box from the nearest point, towards
    the far edge or face, without leaving the box (MuJoCo's hand-derived case analysis)."""
    axisdir = (1 if halfaxis[0] > 0 else 0) + (2 if halfaxis[1] > 0 else 0) + (4 if halfaxis[2] > 0 else 0)
    secondpos = -4.0

    if cltype >= 0 and cltype // 3 != 1:  # nearest point on a corner of the box
        c1 = axisdir ^ clcorner
        if c1 == 0 or c1 == 7:  # pointing at or away from the corner
            return secondpos
        mul = 1.0
        de = 0.0
        dp = 0.0
        if c1 == 1 or c1 == 2 or c1 == 4:
            mul = 1.0
            de = 1 - bestsegmentpos
            dp = 1 + bestsegmentpos
        if c1 == 3 or c1 == 5 or c1 == 6:
            mul = -1.0
            c1 = 7 - c1
            dp = 1 - bestsegmentpos
            de = 1 + bestsegmentpos
        ax, ax1, ax2 = 0, 1, 2
        if c1 == 2:
            ax, ax1, ax2 = 1, 2, 0
        if c1 == 4:
            ax, ax1, ax2 = 2, 0, 1
        if axis[ax] * axis[ax] > 0.5:  # second point along the edge of the box
            secondpos = de
            e1 = 2 * size2[ax] / abs(halfaxis[ax])
            if e1 < secondpos:
                secondpos = e1
            secondpos *= mul
        else:  # second point along a face of the box
            secondpos = dp
            e1 = 2 * size2[ax1] / abs(halfaxis[ax1])
            if e1 < secondpos:
                secondpos = e1
            e1 = 2 * size2[ax2] / abs(halfaxis[ax2])
            if e1 < secondpos:
                secondpos = e1
            secondpos *= -mul

    elif cltype >= 0:  # nearest point inside an edge of the box
        c1 = axisdir ^ clcorner
        c1 &= 7 - (1 << cledge)
        if c1 != 1 and c1 != 2 and c1 != 4:  # T configuration: no second point
            return secondpos
        ax = cledge
        ax1, ax2 = 1, 2
        if cledge == 1:
            ax1, ax2 = 2, 0
        if cledge == 2:
            ax1, ax2 = 0, 1
        # the face the capsule makes the lower angle with
        if abs(axis[ax1]) > abs(axis[ax2]):
            ax1 = ax2
        ax2 = 3 - ax - ax1
        if c1 & (1 << ax2):
            mul = 1.0
            secondpos = 1 - bestsegmentpos
        else:
            mul = -1.0
            secondpos = 1 + bestsegmentpos
        e1 = 2 * size2[ax2] / abs(halfaxis[ax2])
        if e1 < secondpos:
            secondpos = e1
        if ((axisdir & (1 << ax)) != 0) == ((c1 & (1 << ax2)) != 0):
            e2 = 1 - bestboxpos
        else:
            e2 = 1 + bestboxpos
        e1 = size2[ax] * e2 / abs(halfaxis[ax])
        if e1 < secondpos:
            secondpos = e1
        secondpos *= mul

    elif cltype < 0:  # an end of the capsule nearest to a face
        if clface == -1:  # that end is inside the box
            return secondpos
        mul = 1.0 if cltype == -3 else -1.0
        secondpos = 2.0
        other = add_scl3(pos, halfaxis, -mul)
        for i in range(3):
            if i != clface:
                e1 = (size2[i] - other[i]) / halfaxis[i] * mul
                if e1 > 0 and e1 < secondpos:
                    secondpos = e1
                e1 = (-size2[i] - other[i]) / halfaxis[i] * mul
                if e1 > 0 and e1 < secondpos:
                    secondpos = e1
        secondpos *= mul
    return secondpos


@kernel
def collide_capsule_box(con, margin, pos1, mat1, size1, pos2, mat2, size2):
    """Capsule : box, one or two contacts (mjc_CapsuleBox).

    In box coordinates, find the point of the capsule segment nearest the box (segment
    ends against faces, the segment against the twelve edges); collide a sphere of the
    capsule radius there with the box. If the capsule lies along the box (it does not
    point at or away from the nearest corner, nor cross the nearest edge in a T), a second
    sphere further along the segment, where it would leave the box, gives a second contact.
    cltype: -3/-1 the lower/upper end is nearest to a face; 0..8 = 3 s1 + s2 for an edge,
    s1 (box edge) and s2 (segment) 0/2 clamped at the lower/upper end, 1 inside.
    """
    halflength = size1[1]
    pos = mtv3(mat2, sub3(pos1, pos2))
    axis = mtv3(mat2, _zaxis(mat1))
    halfaxis = scl3(axis, halflength)
    bestdistmax = margin + 2 * (size1[0] + halflength + size2[0] + size2[1] + size2[2])

    cltype, clface, clcorner, cledge, bestsegmentpos, bestboxpos = _capsule_box_nearest(
        pos, halfaxis, size1, size2, bestdistmax
    )
    if cltype == -4:
        return 0
    secondpos = _capsule_box_second(
        cltype, clface, clcorner, cledge, bestsegmentpos, bestboxpos, pos, axis, halfaxis, size2
    )

    first = add3(mv3(mat2, add_scl3(pos, halfaxis, bestsegmentpos)), pos2)
    n = _sphere_box_raw(con, 0, margin, first, size1[0], pos2, mat2, size2)
    if secondpos > -3:
        second = add3(mv3(mat2, add_scl3(pos, halfaxis, secondpos + bestsegmentpos)), pos2)
        n += _sphere_box_raw(con, n, margin, second, size1[0], pos2, mat2, size2)
    return n


# ---- box : box ----------------------------------------------------------------------------------

BOXBOX_SEPEPS = 1e-13  # slack on the separation tests, times the summed half-sizes
BOXBOX_PAREPS = 1e-16  # sin^2 of the edge angle below which an edge-cross axis is noise
BOXBOX_SGNEPS = 1e-9  # axis component below which a supporting edge is ambiguous
BOXBOX_DUPEPS = 1e-14  # squared relative radius for clipped-vertex deduplication
BOXBOX_EDGEBIAS = 1e-6  # relative penalty of an edge axis on near-ties with a face axis
_MAXVAL = 1e10  # MuJoCo's mjMAXVAL


@kernel
def _transpose9(r):
    return (r[0], r[3], r[6], r[1], r[4], r[7], r[2], r[5], r[8])


@kernel
def _clip_half_plane(work, src, nin, coord, sign, limit):
    """Clip polygon work[src] (nin vertices, cyclic) to sign * v[coord] <= limit
    (Sutherland-Hodgman, z carried along). Untouched when every vertex is inside; else the
    result goes to work[1 - src]. Returns (vertex count, buffer holding the result)."""
    inp = work[src]
    all_inside = True
    for k in range(nin):
        if not (sign * inp[k, coord] - limit <= 0):
            all_inside = False
    if all_inside:
        return nin, src
    out = work[1 - src]
    nout = 0
    for k in range(nin):
        k1 = 0 if k + 1 == nin else k + 1
        dp = sign * inp[k, coord] - limit
        dq = sign * inp[k1, coord] - limit
        if dp <= 0 and nout < BOXBOX_MAXVERT:  # keep p if inside
            for i in range(3):
                out[nout, i] = inp[k, i]
            nout += 1
        if ((dp < 0 and dq > 0) or (dp > 0 and dq < 0)) and nout < BOXBOX_MAXVERT:  # crossing
            t = dp / (dp - dq)
            for i in range(3):
                out[nout, i] = inp[k, i] + t * (inp[k1, i] - inp[k, i])
            nout += 1
    return nout, 1 - src


@kernel
def _edge_axis(rot, code):
    """Unit separating axis e_i x (box 2 axis j) of edge-edge code 6 + 3 i + j, in the
    box-1 frame (rot: box 2's axes as the columns of a row-major 3x3, box-1 frame)."""
    i = (code - 6) // 3
    j = (code - 6) % 3
    i1 = (i + 1) % 3
    i2 = (i + 2) % 3
    a_i1 = -rot[3 * i2 + j]
    a_i2 = rot[3 * i1 + j]
    raw = (
        0.0 if i == 0 else (a_i1 if i1 == 0 else a_i2),
        0.0 if i == 1 else (a_i1 if i1 == 1 else a_i2),
        0.0 if i == 2 else (a_i1 if i1 == 2 else a_i2),
    )
    axis, _ = normalize3(raw)
    return axis


@kernel
def _box_box_edge(con, septol, code, rot, pos1, mat1, size1, size2, pos21):
    """Edge-edge contact of box : box: the midpoint of the closest points of the two
    supporting edges, depth along the separating axis e_i x (box 2 axis j) (box 1 frame)."""
    i = (code - 6) // 3
    j = (code - 6) % 3
    i1 = (i + 1) % 3
    i2 = (i + 2) % 3
    j1 = (j + 1) % 3
    j2 = (j + 2) % 3

    # unit separating axis in the box-1 frame, oriented from box 1 towards box 2
    axis = _edge_axis(rot, code)
    if dot3(axis, pos21) < 0:
        axis = scl3(axis, -1.0)

    # the axis in box-2 coordinates
    a2 = (
        axis[0] * rot[0] + axis[1] * rot[3] + axis[2] * rot[6],
        axis[0] * rot[1] + axis[1] * rot[4] + axis[2] * rot[7],
        axis[0] * rot[2] + axis[1] * rot[5] + axis[2] * rot[8],
    )
    # a near-zero axis component makes the supporting edge ambiguous: try both signs
    amb1 = -1
    amb2 = -1
    if abs(axis[i1]) < BOXBOX_SGNEPS:
        amb1 = i1
    elif abs(axis[i2]) < BOXBOX_SGNEPS:
        amb1 = i2
    if abs(a2[j1]) < BOXBOX_SGNEPS:
        amb2 = j1
    elif abs(a2[j2]) < BOXBOX_SGNEPS:
        amb2 = j2

    d2 = (rot[j], rot[3 + j], rot[6 + j])
    b = d2[i]  # d1 . d2 with d1 = e_i
    denom = 1 - b * b
    best_d2 = _MAXVAL
    w1 = _ZERO3
    w2 = _ZERO3
    for v1 in range(2 if amb1 >= 0 else 1):
        for v2 in range(2 if amb2 >= 0 else 1):
            # box-1 edge corner: support along +axis (ambiguous component flipped by v1)
            c1 = (
                0.0 if i == 0 else (size1[0] if axis[0] >= 0 else -size1[0]),
                0.0 if i == 1 else (size1[1] if axis[1] >= 0 else -size1[1]),
                0.0 if i == 2 else (size1[2] if axis[2] >= 0 else -size1[2]),
            )
            if v1:
                c1 = (
                    -c1[0] if amb1 == 0 else c1[0],
                    -c1[1] if amb1 == 1 else c1[1],
                    -c1[2] if amb1 == 2 else c1[2],
                )
            # box-2 edge corner: support along -axis in box-2 coordinates
            cc = (
                0.0 if j == 0 else (-size2[0] if a2[0] >= 0 else size2[0]),
                0.0 if j == 1 else (-size2[1] if a2[1] >= 0 else size2[1]),
                0.0 if j == 2 else (-size2[2] if a2[2] >= 0 else size2[2]),
            )
            if v2:
                cc = (
                    -cc[0] if amb2 == 0 else cc[0],
                    -cc[1] if amb2 == 1 else cc[1],
                    -cc[2] if amb2 == 2 else cc[2],
                )
            c2 = add3(mv3(rot, cc), pos21)

            # closest points of the segments c1 + s e_i and c2 + t d2, clamped
            e = sub3(c2, c1)
            d1e = e[i]
            d2e = dot3(d2, e)
            s = 0.0 if denom < MINVAL else (d1e - b * d2e) / denom
            s = _clip(s, -size1[i], size1[i])
            t = _clip(b * s - d2e, -size2[j], size2[j])
            s = _clip(d1e + b * t, -size1[i], size1[i])
            p1 = (
                c1[0] + s if i == 0 else c1[0],
                c1[1] + s if i == 1 else c1[1],
                c1[2] + s if i == 2 else c1[2],
            )
            p2 = add_scl3(c2, d2, t)
            gap = sub3(p2, p1)
            gap2 = dot3(gap, gap)
            if gap2 < best_d2:
                best_d2 = gap2
                w1 = p1
                w2 = p2

    dist = dot3(sub3(w2, w1), axis)
    if dist > septol:
        return 0
    mid = (0.5 * (w1[0] + w2[0]), 0.5 * (w1[1] + w2[1]), 0.5 * (w1[2] + w2[2]))
    _set(con, 0, add3(mv3(mat1, mid), pos1), mv3(mat1, axis), _ZERO3, dist)
    return 1


@kernel
def _box_box_face(con, margin, code, rot, pos1, mat1, size1, pos2, mat2, size2, pos21, pos12, work):
    """Face contact of box : box: the incident face of one box clipped to the reference
    face of the other; every clipped vertex within the margin is a contact, midway between
    the reference plane and the incident surface, depth measured along the face normal."""
    ref1 = code < 3  # box 1 owns the reference face
    a = code if ref1 else code - 3
    sizeref = size1 if ref1 else size2
    sizeinc = size2 if ref1 else size1
    posref = pos1 if ref1 else pos2
    matref = mat1 if ref1 else mat2
    posoi = pos21 if ref1 else pos12  # incident centre in the reference frame
    rinc = rot if ref1 else _transpose9(rot)  # incident axes (columns) in the reference frame

    sgn = 1.0 if posoi[a] >= 0 else -1.0
    # incident face: the incident box's face most opposed to the reference normal
    binc = 0
    for k in range(1, 3):
        if abs(rinc[3 * a + k]) > abs(rinc[3 * a + binc]):
            binc = k
    tinc = -1.0 if sgn * rinc[3 * a + binc] > 0 else 1.0

    # incident face corners in (x, y, z): the two in-face reference axes, and height above
    # the reference face (negative = inside the reference box)
    ax = (a + 1) % 3
    ay = (a + 2) % 3
    bu = (binc + 1) % 3
    bv = (binc + 2) % 3
    cx0 = posoi[ax] + tinc * sizeinc[binc] * rinc[3 * ax + binc]
    cx1 = posoi[ay] + tinc * sizeinc[binc] * rinc[3 * ay + binc]
    cx2 = posoi[a] + tinc * sizeinc[binc] * rinc[3 * a + binc]
    du = (sizeinc[bu] * rinc[3 * ax + bu], sizeinc[bu] * rinc[3 * ay + bu], sizeinc[bu] * rinc[3 * a + bu])
    dv = (sizeinc[bv] * rinc[3 * ax + bv], sizeinc[bv] * rinc[3 * ay + bv], sizeinc[bv] * rinc[3 * a + bv])
    cx = (cx0, cx1, sgn * cx2 - sizeref[a])
    du = (du[0], du[1], du[2] * sgn)
    dv = (dv[0], dv[1], dv[2] * sgn)
    poly = work[0]
    for k in range(4):
        su = 1.0 if k == 0 or k == 3 else -1.0
        sv = 1.0 if k < 2 else -1.0
        for r in range(3):
            poly[k, r] = cx[r] + su * du[r] + sv * dv[r]

    # clip to the four side planes of the reference face
    nvert, cur = _clip_half_plane(work, 0, 4, 0, 1.0, sizeref[ax])
    nvert, cur = _clip_half_plane(work, cur, nvert, 0, -1.0, sizeref[ax])
    nvert, cur = _clip_half_plane(work, cur, nvert, 1, 1.0, sizeref[ay])
    nvert, cur = _clip_half_plane(work, cur, nvert, 1, -1.0, sizeref[ay])

    # keep vertices within the margin, dropping near-duplicates from clipping at corners
    accepted = work[2]
    naccept = 0
    dupe2 = BOXBOX_DUPEPS * (sizeref[ax] * sizeref[ax] + sizeref[ay] * sizeref[ay])
    for k in range(nvert):
        v = work[cur, k]
        if v[2] > margin:
            continue
        dupe = False
        for q in range(naccept):
            dx = accepted[q, 0] - v[0]
            dy = accepted[q, 1] - v[1]
            if dx * dx + dy * dy < dupe2:
                dupe = True
                break
        if not dupe:
            for r in range(3):
                accepted[naccept, r] = v[r]
            naccept += 1
    if naccept == 0:
        return 0

    # the normal points from box 1 to box 2
    nsign = sgn if ref1 else -sgn
    normal = (nsign * matref[a], nsign * matref[3 + a], nsign * matref[6 + a])
    for k in range(naccept):
        v = accepted[k]
        h = sgn * (sizeref[a] + 0.5 * v[2])
        posc = (
            h if a == 0 else (v[0] if ax == 0 else v[1]),
            h if a == 1 else (v[0] if ax == 1 else v[1]),
            h if a == 2 else (v[0] if ax == 2 else v[1]),
        )
        _set(con, k, add3(mv3(matref, posc), posref), normal, _ZERO3, v[2])
    return naccept


@kernel
def collide_box_box(con, margin, pos1, mat1, size1, pos2, mat2, size2, work):
    """Box : box, up to eight contacts (mjc_BoxBox; `work` is a BOXBOX_WORK array).

    Separating-axis test over the 15 candidate axes (3 faces of each box, 9 edge-edge
    cross products): no contact if any separation exceeds the margin. The axis of largest
    separation decides the manifold: a face axis clips the other box's most opposed face
    to that face (up to eight points); an edge axis gives one contact between the two
    supporting edges. Near-ties go to faces (edge separation penalised by 1e-6 relative,
    and an edge within ~8 degrees of the best face and less than 5% better is replaced).
    """
    pos21 = mtv3(mat1, sub3(pos2, pos1))  # box-2 centre in the box-1 frame
    pos12 = mtv3(mat2, sub3(pos1, pos2))  # box-1 centre in the box-2 frame
    rot = mtm3(mat1, mat2)
    septol = margin + BOXBOX_SEPEPS * (size1[0] + size1[1] + size1[2] + size2[0] + size2[1] + size2[2])

    # face axes: code 0..2 box 1, 3..5 box 2
    sep_best = -_MAXVAL
    code = -1
    for i in range(3):
        radius2 = abs(rot[3 * i]) * size2[0] + abs(rot[3 * i + 1]) * size2[1] + abs(rot[3 * i + 2]) * size2[2]
        sep = abs(pos21[i]) - size1[i] - radius2
        if sep > septol:
            return 0
        if sep > sep_best:
            sep_best = sep
            code = i
    for j in range(3):
        radius1 = abs(rot[j]) * size1[0] + abs(rot[3 + j]) * size1[1] + abs(rot[6 + j]) * size1[2]
        sep = abs(pos12[j]) - size2[j] - radius1
        if sep > septol:
            return 0
        if sep > sep_best:
            sep_best = sep
            code = 3 + j
    sep_face = sep_best
    code_face = code

    # edge axes: e_i x (box-2 axis j), code 6 + 3 i + j
    for i in range(3):
        for j in range(3):
            i1 = (i + 1) % 3
            i2 = (i + 2) % 3
            ax1 = -rot[3 * i2 + j]
            ax2 = rot[3 * i1 + j]
            norm2 = ax1 * ax1 + ax2 * ax2
            if norm2 < BOXBOX_PAREPS:  # nearly parallel edges: covered by the faces
                continue
            inv = 1 / math.sqrt(norm2)
            ax1 *= inv
            ax2 *= inv
            radius1 = size1[i1] * abs(ax1) + size1[i2] * abs(ax2)
            j1 = (j + 1) % 3
            j2 = (j + 2) % 3
            a2_1 = ax1 * rot[3 * i1 + j1] + ax2 * rot[3 * i2 + j1]
            a2_2 = ax1 * rot[3 * i1 + j2] + ax2 * rot[3 * i2 + j2]
            radius2 = size2[j1] * abs(a2_1) + size2[j2] * abs(a2_2)
            sep = abs(ax1 * pos21[i1] + ax2 * pos21[i2]) - radius1 - radius2
            if sep > septol:
                return 0
            if sep - BOXBOX_EDGEBIAS * abs(sep) > sep_best and sep > sep_face:
                sep_best = sep
                code = 6 + 3 * i + j
    if code < 0:
        return 0

    # an edge axis within ~8 degrees of the best face axis, less than 5% better: the face
    if code >= 6:
        axis = _edge_axis(rot, code)
        if code_face < 3:
            face_dot = abs(axis[code_face])
        else:
            f = code_face - 3
            face_dot = abs(axis[0] * rot[f] + axis[1] * rot[3 + f] + axis[2] * rot[6 + f])
        if face_dot > 0.99 and sep_best < sep_face + 0.05 * abs(sep_face) + MINVAL:
            code = code_face

    if code >= 6:
        return _box_box_edge(con, septol, code, rot, pos1, mat1, size1, size2, pos21)
    return _box_box_face(con, margin, code, rot, pos1, mat1, size1, pos2, mat2, size2, pos21, pos12, work)
