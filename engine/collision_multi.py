"""Stage 9, collision narrow phase: the multi-contact search that MuJoCo 4.0.0's convex collider
runs after GJK/EPA for capsule : cylinder, cylinder : cylinder, cylinder : box and capsule /
cylinder / box / mesh : mesh
(mjc_multicontact of libmujoco.so.4.0.0; the 3.12 source has the box/mesh form, `multicontact`
and `polygonClip` of engine_collision_gjk.c). collision_convex calls `multicontact` with the
first contact's witness points and the two geoms' points of GJK's last simplex.

The 4.0.0 rules, read back from the binary (each differs from the 3.12 source where marked):

1. Features. Each simplex point carries the index of the feature its support came from:
   a cylinder's cap (0 top, local z >= 0; 1 bottom), a box's corner (bit k set when local
   coordinate k >= 0), a mesh's vertex (the one its support found), -1 for a capsule. The
   number of distinct indices among the first three points is the feature's dimension
   (simplexDim: 1 a vertex or cap, 2 an edge, 3 a face).
2. Face normals (world frame): a cylinder whose points lie on one cap has that cap's
   outward normal s e_z (s = +1 top, -1 bottom); a box has boxNormals' normals (4.0.0
   keeps each one, without the 3.12 overwrite); a mesh has meshNormals' polygon normals (the
   polygon of three vertices, the up to two polygons of two, every polygon of one vertex;
   engine/collision_mesh.py); a capsule has none.
3. Two faces (4.0.0): among normals n1_i of geom 1 with n1_i . d < -0.0888 |d| and n2_j of
   geom 2 with n2_j . d > 0.0888 |d|, d = x2 - x1, the pair with the smallest n1_i . n2_j,
   if below -0.996 (mjFACE_TOL).
4. Otherwise a face against an edge (mjEDGE_TOL 0.0888: |n . e| < 0.0888 for a unit edge
   direction e, the face's normal facing the other geom by more than 1e-15). The edges
   (geomEdgeNormals, 4.0.0): a capsule's segment parallel to its axis through its witness
   point, between the heights of its two caps; a cylinder's side line from its first simplex
   point pushed out radially onto its rim (when the pair has no margin) to the other cap;
   a box's edge between two corners (dimension 2) or the three edges at a corner
   (dimension 1); a mesh's edge between two vertices, or at one vertex the edge to its
   previous vertex in each of its polygons (meshEdgeNormals). Which geom's edge is tried
   first: geom 2's when geom 1 has normals, geom 2's feature is not a face and (it has
   lower dimension or geom 2 has no normals); else geom 1's; then the other.
5. The faces as polygons: a box face (boxFace), a cylinder cap as the regular 16-gon of the
   binary's tables (4.0.0: `cylinderFace`, vertex k at angle -22.5 k degrees seen from
   outside the cap), a mesh polygon's vertices in reverse order (meshFace), an edge as its 2
   end points.
6. polygonClip (4.0.0 form): the polygon of geom 2 (or the edge) clipped by the side planes
   of the other face (t = d_P / (d_P - d_Q) on each crossing edge); vertices more than the
   margins' sum in front of that face dropped; at most `maxcon`: with 5 or more left and maxcon
   < 5, the quadrilateral of largest area (area 0.5 |(a - c) x (b - d)|, 3.12's
   polygonQuad search); an edge's two farthest points; else the first maxcon. Each kept
   vertex v gives x1 = v projected onto the clipping face's plane and x2 = x1 moved along
   the witness direction back to v's plane, dist = their separation along it.
7. Margins (4.0.0): each witness pair is moved apart along the face normal by half of each
   geom's margin (none for a capsule, whose edge already lies on its inflated surface).

Frames: world frame throughout; `mat` row-major with the local axes as columns.

No allocation: the work array `poly` (POLY_ROWS, 3) of the row's Data scratch holds normals,
edges, faces, clipping planes, the polygons and the witness points (rows R_*, engine/sizes.py).
"""

import math

from robodyn.engine import collision_mesh as CM
from robodyn.engine.jit import kernel
from robodyn.engine.sizes import (
    MAXDEG,
    MAXFACE,
    POLY_MAX,
    R_D,
    R_E,
    R_EV,
    R_F1,
    R_F2,
    R_I1,
    R_I2,
    R_N1,
    R_N2,
    R_PA,
    R_PB,
    R_PN,
    R_V1,
    R_V2,
    R_X1,
    R_X2,
)
from robodyn.engine.spatial import add3, dot3, mv3, put_row3, row3, sub3, unit3
from robodyn.engine.types import GEOM_BOX, GEOM_CAPSULE, GEOM_CYLINDER, GEOM_MESH, MINVAL

FACE_TOL = 0.996  # mjFACE_TOL: cos of the largest angle between aligned faces (~5.1 deg)
EDGE_TOL = 0.0888  # mjEDGE_TOL: |cos| of the largest angle between an edge and a face (~5.1 deg)

# a cylinder cap as a 16-gon: the binary's cylinderFace.cos_16 / sin_16 tables (4.0.0),
# rounded to 15 digits as stored there
COS16 = (
    1.0,
    0.923879532511287,
    0.707106781186548,
    0.38268343236509,
    0.0,
    -0.38268343236509,
    -0.707106781186547,
    -0.923879532511287,
    -1.0,
    -0.923879532511287,
    -0.707106781186548,
    -0.38268343236509,
    0.0,
    0.38268343236509,
    0.707106781186547,
    0.923879532511287,
)
SIN16 = (
    0.0,
    0.38268343236509,
    0.707106781186547,
    0.923879532511287,
    1.0,
    0.923879532511287,
    0.707106781186548,
    0.38268343236509,
    0.0,
    -0.38268343236509,
    -0.707106781186547,
    -0.923879532511287,
    -1.0,
    -0.923879532511287,
    -0.707106781186548,
    -0.38268343236509,
)
NCAP = 16


@kernel
def feature_index(gtype, pos, mat, size, p):
    """Index of the feature whose support gave point p (the vertindex the 4.0.0 support
    functions record): a cylinder's cap (1 when p is below the centre along the axis, else
    0), a box's corner (bit k when local coordinate k >= 0), -1 otherwise."""
    d = (p[0] - pos[0], p[1] - pos[1], p[2] - pos[2])
    if gtype == GEOM_CYLINDER:
        z = mat[2] * d[0] + mat[5] * d[1] + mat[8] * d[2]
        return 1 if z < 0 else 0
    if gtype == GEOM_BOX:
        x = mat[0] * d[0] + mat[3] * d[1] + mat[6] * d[2]
        y = mat[1] * d[0] + mat[4] * d[1] + mat[7] * d[2]
        z = mat[2] * d[0] + mat[5] * d[1] + mat[8] * d[2]
        return (1 if x >= 0 else 0) + (2 if y >= 0 else 0) + (4 if z >= 0 else 0)
    return -1


@kernel
def _simplex_dim(poly, row, i0, i1, i2):
    """(dim, i0, i1) of the feature of three indexed points at poly[row:row+3] (simplexDim):
    1 when all indices agree, 2 when two do (the distinct one moved to the second place),
    else 3."""
    if i0 == i1:
        if i0 == i2:
            return 1, i0, i1
        for k in range(3):
            poly[row + 1, k] = poly[row + 2, k]
        return 2, i0, i2
    if i2 == i0 or i2 == i1:
        return 2, i0, i1
    return 3, i0, i1


# ---- face normals ---------------------------------------------------------------------------------


@kernel
def _box_normals2(poly, row, mat, n):
    """A box face whose outward normal is within mjFACE_TOL of n (boxNormals2): (count, index)."""
    ln = (
        mat[0] * n[0] + mat[3] * n[1] + mat[6] * n[2],
        mat[1] * n[0] + mat[4] * n[1] + mat[7] * n[2],
        mat[2] * n[0] + mat[5] * n[1] + mat[8] * n[2],
    )
    inv = 1 / math.sqrt(ln[0] * ln[0] + ln[1] * ln[1] + ln[2] * ln[2])
    ln = (ln[0] * inv, ln[1] * inv, ln[2] * inv)
    for i in range(6):
        axis = i // 2
        sign = 1.0 if i % 2 == 0 else -1.0
        if sign * ln[axis] > FACE_TOL:
            x = sign if axis == 0 else 0.0
            y = sign if axis == 1 else 0.0
            z = sign if axis == 2 else 0.0
            put_row3(poly, row, mv3(mat, (x, y, z)))
            return 1, i, 0, 0
    return 0, 0, 0, 0


@kernel
def _axis_sign(a, b, c, bit, dim):
    """+1 when the corners share the bit set, -1 when they share it clear, else 0."""
    if dim == 3:
        return (1 if (a & bit) and (b & bit) and (c & bit) else 0) - (
            1 if not (a & bit) and not (b & bit) and not (c & bit) else 0
        )
    return (1 if (a & bit) and (b & bit) else 0) - (1 if not (a & bit) and not (b & bit) else 0)


@kernel
def _box_normals(poly, row, dim, mat, i0, i1, i2, d):
    """Face normals of a box at corners i0, i1, i2 of a feature of dimension dim (boxNormals,
    4.0.0): (count, face index 0, 1, 2). Faces: 0/1 +x/-x, 2/3 +y/-y, 4/5 +z/-z. d is the
    direction towards the other geom, for boxNormals2."""
    if dim == 1:
        x = 1.0 if i0 & 1 else -1.0
        y = 1.0 if i0 & 2 else -1.0
        z = 1.0 if i0 & 4 else -1.0
        put_row3(poly, row, mv3(mat, (x, 0.0, 0.0)))
        put_row3(poly, row + 1, mv3(mat, (0.0, y, 0.0)))
        put_row3(poly, row + 2, mv3(mat, (0.0, 0.0, z)))
        return 3, 0 if x > 0 else 1, 2 if y > 0 else 3, 4 if z > 0 else 5
    x = _axis_sign(i0, i1, i2, 1, dim)
    y = _axis_sign(i0, i1, i2, 2, dim)
    z = _axis_sign(i0, i1, i2, 4, dim)
    if dim == 3:
        if (x != 0) + (y != 0) + (z != 0) == 1:
            put_row3(poly, row, mv3(mat, (float(x), float(y), float(z))))
            idx = 0 if x else (2 if y else 4)
            if x + y + z == -1:
                idx += 1
            return 1, idx, 0, 0
        return _box_normals2(poly, row, mat, d)
    # dimension 2 (4.0.0: each normal in its own row)
    c = 0
    f0 = 0
    f1 = 0
    f2 = 0
    if x:
        put_row3(poly, row, mv3(mat, (float(x), 0.0, 0.0)))
        f0 = 0 if x > 0 else 1
        c = 1
    if y:
        put_row3(poly, row + c, mv3(mat, (0.0, float(y), 0.0)))
        if c == 0:
            f0 = 2 if y > 0 else 3
        else:
            f1 = 2 if y > 0 else 3
        c += 1
    if z:
        put_row3(poly, row + c, mv3(mat, (0.0, 0.0, float(z))))
        fz = 4 if z > 0 else 5
        if c == 0:
            f0 = fz
        elif c == 1:
            f1 = fz
        else:
            f2 = fz
        c += 1
    if c == 0:
        return _box_normals2(poly, row, mat, d)
    return c, f0, f1, f2


@kernel
def _normals(poly, row, gtype, dim, mat, i0, i1, i2, d):
    """Face normals of a geom's feature: (count, face indices (3))."""
    if gtype == GEOM_CYLINDER:
        if dim != 1:
            return 0, 0, 0, 0
        s = 1.0 if i0 == 0 else -1.0
        put_row3(poly, row, mv3(mat, (0.0, 0.0, s)))
        return 1, i0, 0, 0
    if gtype == GEOM_BOX:
        return _box_normals(poly, row, dim, mat, i0, i1, i2, d)
    return 0, 0, 0, 0


# ---- edges ---------------------------------------------------------------------------------------


@kernel
def _box_corner(mat, pos, size, i):
    return add3(
        mv3(
            mat,
            (size[0] if i & 1 else -size[0], size[1] if i & 2 else -size[1], size[2] if i & 4 else -size[2]),
        ),
        pos,
    )


@kernel
def _edges(poly, vrow, gtype, dim, pos, mat, size, margin, i0, i1, x):
    """Edge directions (rows R_E) and far end points (rows R_EV) of a geom's feature, the
    near end point replacing its first simplex point poly[vrow] (geomEdgeNormals, 4.0.0);
    returns their count. x is the geom's witness point (for a capsule)."""
    if gtype == GEOM_CAPSULE:
        a = (mat[2], mat[5], mat[8])
        t = ((x[0] - pos[0]) * a[0] + (x[1] - pos[1]) * a[1]) + (x[2] - pos[2]) * a[2]
        lo = -t - size[1]
        hi = size[1] - t
        put_row3(poly, R_E, a)
        put_row3(poly, vrow, (lo * a[0] + x[0], lo * a[1] + x[1], lo * a[2] + x[2]))
        put_row3(poly, R_EV, (hi * a[0] + x[0], hi * a[1] + x[1], hi * a[2] + x[2]))
        return 1
    if gtype == GEOM_CYLINDER:
        s = -1.0 if i0 == 0 else 1.0  # from the point's cap towards the other
        e = (s * mat[2], s * mat[5], s * mat[8])
        put_row3(poly, R_E, e)
        v = row3(poly, vrow, 0)
        if margin > 0:  # a support point inflated by the margin: back onto the rim of its cap
            d = (v[0] - pos[0], v[1] - pos[1], v[2] - pos[2])
            lx = (mat[0] * d[0] + mat[3] * d[1]) + mat[6] * d[2]
            ly = (mat[1] * d[0] + mat[4] * d[1]) + mat[7] * d[2]
            n2 = lx * lx + ly * ly
            scl = size[0] / math.sqrt(n2) if n2 >= 1e-30 else 0.0
            v = add3(mv3(mat, (lx * scl, ly * scl, -s * size[1])), pos)
            put_row3(poly, vrow, v)
        h2 = size[1] + size[1]
        put_row3(poly, R_EV, (h2 * e[0] + v[0], h2 * e[1] + v[1], h2 * e[2] + v[2]))
        return 1
    if gtype == GEOM_BOX:
        c = _box_corner(mat, pos, size, i0)
        put_row3(poly, vrow, c)
        if dim == 2:
            c2 = _box_corner(mat, pos, size, i1)
            put_row3(poly, R_EV, c2)
            put_row3(poly, R_E, unit3((c2[0] - c[0], c2[1] - c[1], c2[2] - c[2])))
            return 1
        sx = size[0] if i0 & 1 else -size[0]
        sy = size[1] if i0 & 2 else -size[1]
        sz = size[2] if i0 & 4 else -size[2]
        for k in range(3):
            q = add3(mv3(mat, (-sx if k == 0 else sx, -sy if k == 1 else sy, -sz if k == 2 else sz)), pos)
            put_row3(poly, R_EV + k, q)
            put_row3(poly, R_E + k, unit3((q[0] - c[0], q[1] - c[1], q[2] - c[2])))
        return 3
    return 0


# ---- faces ---------------------------------------------------------------------------------------


@kernel
def _box_face(poly, row, mat, pos, size, idx):
    """The 4 corners of box face idx in boxFace's order."""
    s0, s1, s2 = size[0], size[1], size[2]
    if idx == 0:
        c = ((s0, s1, s2), (s0, s1, -s2), (s0, -s1, -s2), (s0, -s1, s2))
    elif idx == 1:
        c = ((-s0, s1, -s2), (-s0, s1, s2), (-s0, -s1, s2), (-s0, -s1, -s2))
    elif idx == 2:
        c = ((-s0, s1, -s2), (s0, s1, -s2), (s0, s1, s2), (-s0, s1, s2))
    elif idx == 3:
        c = ((-s0, -s1, s2), (s0, -s1, s2), (s0, -s1, -s2), (-s0, -s1, -s2))
    elif idx == 4:
        c = ((-s0, s1, s2), (s0, s1, s2), (s0, -s1, s2), (-s0, -s1, s2))
    else:
        c = ((s0, s1, -s2), (-s0, s1, -s2), (-s0, -s1, -s2), (s0, -s1, -s2))
    for k in range(4):
        put_row3(poly, row + k, add3(mv3(mat, (c[k][0], c[k][1], c[k][2])), pos))
    return 4


@kernel
def _cylinder_face(poly, row, mat, pos, size, idx):
    """Cap idx (0 top, 1 bottom) as a 16-gon (cylinderFace, 4.0.0): vertex k at local
    (r cos_k, -s r sin_k, s h), s = +1 for the top."""
    s = 1.0 if idx == 0 else -1.0
    z = s * size[1]
    for k in range(NCAP):
        x = size[0] * COS16[k]
        y = s * (size[0] * -SIN16[k])
        put_row3(poly, row + k, add3(mv3(mat, (x, y, z)), pos))
    return NCAP


@kernel
def _face(poly, row, gtype, mat, pos, size, idx, i, tail, irow):
    """Face of normal i: a cap, a box face (face ids idx) or a mesh polygon (its id in
    poly[irow + i, 0])."""
    if gtype == GEOM_MESH:
        return CM.mesh_face(poly, row, MAXFACE, pos, mat, tail, int(poly[irow + i, 0]))
    if gtype == GEOM_CYLINDER:
        return _cylinder_face(poly, row, mat, pos, size, idx[i])
    return _box_face(poly, row, mat, pos, size, idx[i])


# ---- polygon clipping ----------------------------------------------------------------------------


@kernel
def _quad_area(poly, base, a, b, c, d):
    """Area of quadrilateral (a, b, c, d) of the polygon at poly[base:] (collision_mesh.quad_area)."""
    return CM.quad_area(
        row3(poly, base + a, 0), row3(poly, base + b, 0), row3(poly, base + c, 0), row3(poly, base + d, 0)
    )


@kernel
def _polygon_quad(poly, base, n):
    """Indices (a, b, c, d) of the largest-area quadrilateral of the n-gon at poly[base:]
    (polygonQuad: grow d, then c, then b while the area grows, for each a)."""
    ra, rb, rc, rd = 0, 1, 2, 3
    b, c, d = 1, 2, 3
    m = _quad_area(poly, base, 0, 1, 2, 3)
    for a in range(n):
        while True:
            dn = (d + 1) % n
            m_next = _quad_area(poly, base, a, b, c, dn)
            if m_next <= m:
                break
            m = m_next
            d = dn
            while True:
                cn = (c + 1) % n
                m_next = _quad_area(poly, base, a, b, cn, d)
                if m_next <= m:
                    break
                m = m_next
                c = cn
            while True:
                bn = (b + 1) % n
                m_next = _quad_area(poly, base, a, bn, c, d)
                if m_next <= m:
                    break
                m = m_next
                b = bn
            ra, rb, rc, rd = a, b, c, d
        if b == a:
            b = (b + 1) % n
            if c == b:
                c = (c + 1) % n
                if d == c:
                    d = (d + 1) % n
    return ra, rb, rc, rd


@kernel
def _witness(poly, k, v, f0, n, w):
    """Contact k from clipped vertex v: x1 = v projected onto the face (point f0, normal n),
    x2 = x1 moved back along w to v's plane, dist their separation along w."""
    d1 = dot3(sub3(v, f0), n)
    x1 = (v[0] - d1 * n[0], v[1] - d1 * n[1], v[2] - d1 * n[2])
    d2 = dot3(sub3(x1, v), w)
    put_row3(poly, R_X1 + k, x1)
    put_row3(poly, R_X2 + k, (x1[0] - d2 * w[0], x1[1] - d2 * w[1], x1[2] - d2 * w[2]))
    poly[R_D + k, 0] = d2


@kernel
def polygon_clip(poly, rf1, nf1, rf2, nf2, n, w, margin, maxcon):
    """Clip polygon poly[rf2:rf2+nf2] by the side planes of face poly[rf1:rf1+nf1] (normal
    n) and write the witness pairs of what is left (polygonClip, 4.0.0; module docstring,
    step 6) to rows R_X1, R_X2, R_D; returns their count."""
    if nf1 < 3:
        return 0
    f0 = row3(poly, rf1, 0)
    for e in range(nf1):
        v1 = row3(poly, rf1 + e, 0)
        v2 = row3(poly, rf1 + (e + 1) % nf1, 0)
        v3 = (v1[0] + n[0], v1[1] + n[1], v1[2] + n[2])
        d21 = (v2[0] - v1[0], v2[1] - v1[1], v2[2] - v1[2])
        d31 = (v3[0] - v1[0], v3[1] - v1[1], v3[2] - v1[2])
        c = (
            d21[1] * d31[2] - d21[2] * d31[1],
            d21[2] * d31[0] - d21[0] * d31[2],
            d21[0] * d31[1] - d21[1] * d31[0],
        )
        put_row3(poly, R_PN + e, unit3(c))
    src = R_PA
    dst = R_PB
    npoly = nf2
    for i in range(nf2):
        put_row3(poly, src + i, row3(poly, rf2 + i, 0))
    for e in range(nf1):
        a = row3(poly, rf1 + e, 0)
        pn = row3(poly, R_PN + e, 0)
        nout = 0
        for i in range(npoly):
            p = row3(poly, src + i, 0)
            q = row3(poly, src + (i + 1 if i < npoly - 1 else 0), 0)
            dp = dot3(sub3(p, a), pn)
            dq = dot3(sub3(q, a), pn)
            in_p = dp > -MINVAL
            in_q = dq > -MINVAL
            if not in_p and not in_q:
                continue
            if in_p and in_q:
                if nout < POLY_MAX:
                    put_row3(poly, dst + nout, q)
                    nout += 1
                continue
            den = dp - dq
            if den != 0:
                t = dp / den
                if t >= 0 and t <= 1 and nout < POLY_MAX:
                    put_row3(
                        poly,
                        dst + nout,
                        (t * (q[0] - p[0]) + p[0], t * (q[1] - p[1]) + p[1], t * (q[2] - p[2]) + p[2]),
                    )
                    nout += 1
            if in_q and nout < POLY_MAX:
                put_row3(poly, dst + nout, q)
                nout += 1
        src, dst = dst, src
        npoly = nout
    # keep the vertices no farther in front of the face than the margins
    m = 0
    for i in range(npoly):
        v = row3(poly, src + i, 0)
        if dot3(sub3(v, f0), n) <= margin:
            if m != i:
                put_row3(poly, src + m, v)
            m += 1
    npoly = m
    if npoly < 1:
        return 0
    if maxcon < 5 and npoly >= 5:
        a, b, c, d = _polygon_quad(poly, src, npoly)
        _witness(poly, 0, row3(poly, src + a, 0), f0, n, w)
        _witness(poly, 1, row3(poly, src + b, 0), f0, n, w)
        _witness(poly, 2, row3(poly, src + c, 0), f0, n, w)
        _witness(poly, 3, row3(poly, src + d, 0), f0, n, w)
        return 4
    if nf2 == 2 and npoly >= 3:  # an edge: its two farthest points
        best1, best2 = 0, 1
        dmax = 0.0
        for i in range(npoly):
            pi = row3(poly, src + i, 0)
            for j in range(i + 1, npoly):
                pj = row3(poly, src + j, 0)
                dd = (pj[0] - pi[0]) ** 2 + (pj[1] - pi[1]) ** 2 + (pj[2] - pi[2]) ** 2
                if dd > dmax:
                    dmax = dd
                    best1 = i
                    best2 = j
        _witness(poly, 0, row3(poly, src + best1, 0), f0, n, w)
        _witness(poly, 1, row3(poly, src + best2, 0), f0, n, w)
        return 2
    if npoly > maxcon:
        npoly = maxcon
    if npoly > 4:
        npoly = 4
    for i in range(npoly):
        _witness(poly, i, row3(poly, src + i, 0), f0, n, w)
    return npoly


# ---- the search ------------------------------------------------------------------------------------


@kernel
def _face_edge(poly, rn, nn, ne, towards):
    """First (face i, edge j) with the face's normal n_i . towards > 1e-15 and |n_i . e_j| <
    mjEDGE_TOL, or (-1, -1)."""
    for i in range(nn):
        ni = row3(poly, rn + i, 0)
        if not dot3(ni, towards) > MINVAL:
            continue
        for j in range(ne):
            if abs(dot3(ni, row3(poly, R_E + j, 0))) < EDGE_TOL:
                return i, j
    return -1, -1


@kernel
def multicontact(poly, geom1, geom2, v1, v2, nsimplex1, nsimplex2, x1, x2, margin1, margin2, maxcon):
    """The contacts of a penetrating pair from its first contact (mjc_multicontact, 4.0.0;
    module docstring). geomK = (type, pos, mat, size, margin, tail, vidx) with margin the
    pair's margin + gap (what the object carries), tail a mesh's hull copy (collision_mesh)
    and vidx (3,) the mesh vertices of the simplex points (unused for other types); vK
    (3, 3) the geom's points of GJK's last simplex (its first nsimplexK rows); xK the witness
    points; marginK half the margin for a geom that is not a capsule, else 0. Writes the
    witness pairs to rows R_X1, R_X2, R_D of poly and returns their count, or 0 when there
    is no multi-contact (keep the one contact)."""
    t1, pos1, mat1, size1, m1, tail1, vi1 = geom1
    t2, pos2, mat2, size2, m2, tail2, vi2 = geom2
    if nsimplex1 <= 0 or nsimplex2 <= 0:
        return 0
    # feature points and their indices
    r = (0, 1 if nsimplex1 >= 2 else 0, 2 if nsimplex1 > 2 else 0)
    for k in range(3):
        put_row3(poly, R_V1 + k, (v1[r[k], 0], v1[r[k], 1], v1[r[k], 2]))
    r = (0, 1 if nsimplex2 >= 2 else 0, 2 if nsimplex2 > 2 else 0)
    for k in range(3):
        put_row3(poly, R_V2 + k, (v2[r[k], 0], v2[r[k], 1], v2[r[k], 2]))
    r1 = (0, 1 if nsimplex1 >= 2 else 0, 2 if nsimplex1 > 2 else 0)
    r2 = (0, 1 if nsimplex2 >= 2 else 0, 2 if nsimplex2 > 2 else 0)
    if t1 == GEOM_MESH:  # a mesh's support records its vertex
        i1 = (int(vi1[r1[0]]), int(vi1[r1[1]]), int(vi1[r1[2]]))
    else:
        i1 = (
            feature_index(t1, pos1, mat1, size1, row3(poly, R_V1, 0)),
            feature_index(t1, pos1, mat1, size1, row3(poly, R_V1 + 1, 0)),
            feature_index(t1, pos1, mat1, size1, row3(poly, R_V1 + 2, 0)),
        )
    if t2 == GEOM_MESH:
        i2 = (int(vi2[r2[0]]), int(vi2[r2[1]]), int(vi2[r2[2]]))
    else:
        i2 = (
            feature_index(t2, pos2, mat2, size2, row3(poly, R_V2, 0)),
            feature_index(t2, pos2, mat2, size2, row3(poly, R_V2 + 1, 0)),
            feature_index(t2, pos2, mat2, size2, row3(poly, R_V2 + 2, 0)),
        )
    dim1, a0, a1 = _simplex_dim(poly, R_V1, i1[0], i1[1], i1[2])
    dim2, b0, b1 = _simplex_dim(poly, R_V2, i2[0], i2[1], i2[2])
    d = (x2[0] - x1[0], x2[1] - x1[1], x2[2] - x1[2])
    d_neg = (x1[0] - x2[0], x1[1] - x2[1], x1[2] - x2[2])
    if t1 == GEOM_MESH:
        nn1 = CM.mesh_normals(poly, R_N1, R_I1, MAXDEG, dim1, mat1, tail1, a0, a1, i1[2])
        fa0, fa1, fa2 = 0, 0, 0
    else:
        nn1, fa0, fa1, fa2 = _normals(poly, R_N1, t1, dim1, mat1, a0, a1, i1[2], d_neg)
    if t2 == GEOM_MESH:
        nn2 = CM.mesh_normals(poly, R_N2, R_I2, MAXDEG, dim2, mat2, tail2, b0, b1, i2[2])
        fb0, fb1, fb2 = 0, 0, 0
    else:
        nn2, fb0, fb1, fb2 = _normals(poly, R_N2, t2, dim2, mat2, b0, b1, i2[2], d)
    idx1 = (fa0, fa1, fa2)
    idx2 = (fb0, fb1, fb2)
    # 1. two faces facing each other (4.0.0: the most opposed pair)
    kind = 0  # 1 face-face, 2 edge of geom 1 on a face of geom 2, 3 edge of geom 2 on geom 1
    fi = -1
    fj = -1
    if nn1 > 0 and nn2 > 0:
        dnorm = math.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2])
        tol = dnorm * EDGE_TOL
        best = -FACE_TOL
        for i in range(nn1):
            ni = row3(poly, R_N1 + i, 0)
            if not dot3(d, ni) < -tol:
                continue
            for j in range(nn2):
                nj = row3(poly, R_N2 + j, 0)
                if not tol < dot3(d, nj):
                    continue
                c = dot3(ni, nj)
                if best > c:
                    best = c
                    fi = i
                    fj = j
                    kind = 1
    if kind == 0:
        # 2. a face against an edge, in the binary's order of tries
        first2 = nn1 != 0 and dim2 != 3 and (dim2 < dim1 or nn2 == 0)
        for attempt in range(2):
            edge2 = first2 if attempt == 0 else not first2
            if edge2:
                if dim2 == 3 or nn1 == 0:
                    if attempt == 0:
                        continue
                    return 0
                if t2 == GEOM_MESH:
                    ne = CM.mesh_edges(poly, R_V2, R_E, R_EV, MAXDEG, dim2, pos2, mat2, tail2, b0, b1)
                else:
                    ne = _edges(poly, R_V2, t2, dim2, pos2, mat2, size2, m2, b0, b1, x2)
                i, j = _face_edge(poly, R_N1, nn1, ne, d_neg)
                if i >= 0:
                    fi, fj, kind = i, j, 3
                    break
            else:
                if dim1 == 3 or nn2 == 0:
                    if attempt == 0:
                        continue
                    return 0
                if t1 == GEOM_MESH:
                    ne = CM.mesh_edges(poly, R_V1, R_E, R_EV, MAXDEG, dim1, pos1, mat1, tail1, a0, a1)
                else:
                    ne = _edges(poly, R_V1, t1, dim1, pos1, mat1, size1, m1, a0, a1, x1)
                j, i = _face_edge(poly, R_N2, nn2, ne, d)
                if j >= 0:
                    fi, fj, kind = i, j, 2
                    break
        if kind == 0:
            return 0
    # 3. the features as polygons, clipped
    margin = margin1 + margin2
    if kind == 1:
        nf1 = _face(poly, R_F1, t1, mat1, pos1, size1, idx1, fi, tail1, R_I1)
        nf2 = _face(poly, R_F2, t2, mat2, pos2, size2, idx2, fj, tail2, R_I2)
        n = row3(poly, R_N1 + fi, 0)
        w = row3(poly, R_N2 + fj, 0)
        nx = polygon_clip(poly, R_F1, nf1, R_F2, nf2, n, w, margin, maxcon)
        nrm = (-w[0], -w[1], -w[2])
    elif kind == 2:  # edge fi of geom 1 against face fj of geom 2: clip the edge, x1 <-> x2
        put_row3(poly, R_F1, row3(poly, R_V1, 0))
        put_row3(poly, R_F1 + 1, row3(poly, R_EV + fi, 0))
        nf2 = _face(poly, R_F2, t2, mat2, pos2, size2, idx2, fj, tail2, R_I2)
        n = row3(poly, R_N2 + fj, 0)
        w = (-n[0], -n[1], -n[2])
        nx = polygon_clip(poly, R_F2, nf2, R_F1, 2, n, w, margin, maxcon)
        for k in range(nx):
            p = row3(poly, R_X1 + k, 0)
            put_row3(poly, R_X1 + k, row3(poly, R_X2 + k, 0))
            put_row3(poly, R_X2 + k, p)
        nrm = w
    else:  # edge fj of geom 2 against face fi of geom 1
        nf1 = _face(poly, R_F1, t1, mat1, pos1, size1, idx1, fi, tail1, R_I1)
        put_row3(poly, R_F2, row3(poly, R_V2, 0))
        put_row3(poly, R_F2 + 1, row3(poly, R_EV + fj, 0))
        n = row3(poly, R_N1 + fi, 0)
        w = (-n[0], -n[1], -n[2])
        nx = polygon_clip(poly, R_F1, nf1, R_F2, 2, n, w, margin, maxcon)
        nrm = n
    if nx <= 0:
        return 0
    # 4.0.0: each pair pushed apart by the geoms' half margins along the face normal
    if margin1 != 0 or margin2 != 0:
        for k in range(nx):
            p = row3(poly, R_X1 + k, 0)
            put_row3(
                poly, R_X1 + k, (p[0] + margin1 * nrm[0], p[1] + margin1 * nrm[1], p[2] + margin1 * nrm[2])
            )
            q = row3(poly, R_X2 + k, 0)
            put_row3(
                poly, R_X2 + k, (q[0] - margin2 * nrm[0], q[1] - margin2 * nrm[1], q[2] - margin2 * nrm[2])
            )
            poly[R_D + k, 0] -= margin1 + margin2
    return nx
