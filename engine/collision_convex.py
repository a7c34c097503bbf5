"""Stage 9, collision narrow phase: MuJoCo's general convex collider (mjc_Convex with its
native CCD, as the MuJoCo 4.0.0 binary runs it) for the geom pairs that have no closed-form
collider (`CONVEX_PAIRS`, engine/sizes.py): sphere : ellipsoid, capsule : ellipsoid,
ellipsoid : ellipsoid / cylinder / box, sphere : mesh and ellipsoid : mesh, for which MuJoCo
returns one contact, and capsule : cylinder, cylinder : cylinder, cylinder : box and capsule /
cylinder / box / mesh : mesh, whose first contact 4.0.0 follows with its multi-contact search
(engine/collision_multi.py: up to 2 (with a capsule), else 4, contacts on aligned faces and
edges). A mesh is its convex hull (engine/collision_mesh.py: support function, hull copy).
It also collides each triangular prism of a height field with a geom, one contact each
(engine/collision_hfield.py; the prism is an object of its own, `OBJ_PRISM`).

The algorithm follows `engine_collision_convex.c` and `engine_collision_gjk.c`, with the
changes the 4.0.0 binary (libmujoco.so.4.0.0, its static functions read back) makes to that
source; each is marked "4.0.0" where it bites. Steps:

1. Objects. Each geom is a convex set A given by its support function
   S_A(d) = argmax_{x in A} <x, d> for a unit direction d (world frame; `_support`):
   sphere r d + p; capsule R (r l + sign(l_z) h e_z) + p with l = R^T d; ellipsoid
   R (s * l / |s * l| * s) + p with s the semi-axes; cylinder R (r (l_x, l_y) / |(l_x, l_y)|,
   sign(l_z) h) + p; box R (sign(l) * s) + p (signs with 0 counted positive); mesh R v* + p,
   v* the hull vertex of largest <l, v> (collision_mesh.support: every vertex, or hill
   climbing on the hull graph, warm-started from the pair's previous call; each point records
   its vertex, `VERT_I1`/`VERT_I2`, for the multi-contact search); a height field's prism
   its vertex of largest <v, d> among the top three (d_z >= 0) or the bottom three
   (`_prism_support`; GJK starts from the mean of its six vertices, `_center`). Each geom is
   inflated by half the pair's margin + gap (`_support_pair`: S(d) + d margin / 2).
2. Shallow contacts (`_ccd`). When a geom is a sphere or a capsule, or a geom has a margin
   (4.0.0: any margin, not only a sphere's or a capsule's), GJK first runs on the cores:
   spheres shrunk to their centre, capsules to their segment, margins removed, with a
   distance cutoff of the radii + margins taken off. If the cores are farther apart than
   the tolerance, the witness points are pushed back out along n = (x2 - x1)/|x2 - x1| by
   what was taken off (`_inflate`): that is the contact, exact to the GJK tolerance.
3. GJK (`_gjk`, 4.0.0 form) on the Minkowski difference A - B, S_{A-B}(d) = S_A(d) - S_B(-d),
   from x_0 = p_A - p_B ((1, 0, 0) if |x_0| < mjMINVAL): s_k = S_{A-B}(-x_k / |x_k|); stop
   when <x_k, s_k> > 0 proves separation (with a cutoff: when it exceeds cutoff |x_k|), on
   the Frank-Wolfe gap <x_k, x_k - s_k> < tolerance^2 / 2 (from the second iteration), with
   a tetrahedron around the origin, when |x_k| < tolerance (mjMINVAL with a cutoff or a
   single vertex), or when |x_k| stagnates (< mjMINVAL). Between two polytopes (`_discrete`:
   no margin, and a box, a prism, or -- 4.0.0 -- a sphere or capsule shrunk in step 2) the
   gap must fall below 0 and |x_k| below mjMINVAL. The signed-volume sub-algorithm
   (Montanari et al. 2017, `_s1d`/`_s2d`/`_s3d`) picks the simplex face nearest the origin;
   4.0.0 then sets x_k to the origin projected onto that segment's line or triangle's plane,
   normalizes a triangle's weights by their sum, and takes the nearer end of a segment.
   There is no simplex walk (the source's gjkIntersect) in 4.0.0.
4. EPA (`_epa`) for penetration deeper than the tolerance: from GJK's simplex a polytope
   inside A - B around the origin (a hexahedron from a segment `_polytope2`; from a
   triangle `_polytope3`, in its 4.0.0 form: the triangle and the supports along both its
   normals, reordered when the segment between them misses the triangle, else a
   tetrahedron on an edge; the tetrahedron itself `_polytope4`) is expanded towards its face nearest
   the origin (lower bound |v|) by the support w along that face's normal (upper bound
   <v, w> / |v|) until this iteration's upper bound is within the tolerance of the lower
   (4.0.0; the source uses the best upper bound so far) or after ccd_iterations steps;
   between polytopes within mjMINEPATOL (mjMINVAL), or when w's support vertices (a box's
   corner, `_vertex_index`; a prism has none, -1) repeat those of an earlier vertex. The
   depth is that face's distance, the witness points its barycentric point mapped onto A
   and B (`_epa_witness`).
5. Multi-contact (4.0.0, pairs of `MULTI_CONTACTS`): after a penetrating contact, from the
   shallow path as well as from EPA, collision_multi.multicontact looks for aligned faces
   and edges of the two geoms at the features of the last simplex (GJK's; after EPA, the
   vertices of EPA's face, which 4.0.0 copies there) and replaces the contact by the
   clipped polygon's witness pairs when it finds some.
6. The contacts (mjc_penetration): per witness pair, dist = margin + signed distance between
   the witness points x1 (on A) and x2 (on B), pos = (x1 + x2) / 2, normal = (x1 - x2) /
   |x1 - x2|, from geom 1 to geom 2.

Frames: geom positions and orientations are world-frame (`mat` row-major, its columns the
local axes); every point and direction here is world-frame but the `l` of the supports.

No allocation: the work arrays are the row's Data scratch (`ccd` in collision_driver): the
two objects, the GJK simplex (and the last simplex kept for the multi-contact search), the
polytope's vertices, faces, face map, horizon and its search stack, and the multi-contact
search's work rows (their layouts in engine/sizes.py). The polytope holds at most
5 + ccd_iterations vertices and 6 ccd_iterations faces, as MuJoCo sizes it (`ccd_sizes`).
MuJoCo's horizon search is recursive; here it is a loop over an explicit stack that visits
the faces in the same order.

Not reproduced (no contact here where 4.0.0 restarts from an edge of the triangle: its
originOnEdge / polytope2 fallback): a hexahedron face through the origin (within ~1e-15)
in polytope3. Not met in 16,000 random pairs.

Not built, and refused at load: SDFs; MuJoCo's libccd path (`<flag nativeccd="disable">`);
pairs needing the multi-contact search with a mesh whose hull vertex lies in more than
sizes.MAXDEG polygons or whose polygon has more than sizes.MAXFACE vertices (the search's
work rows are fixed).
"""

import math

from robodyn.engine import collision_mesh as CM
from robodyn.engine import collision_multi as M
from robodyn.engine.jit import kernel, outline
from robodyn.engine.sizes import (
    CENTER,
    DIST,
    FACE_DIST2,
    FACEID_ADJ,
    FACEID_INDEX,
    FACEID_VERT,
    LIST_COUNT,
    LIST_HZN_EDGE,
    LIST_HZN_FACE,
    LIST_MAP,
    LIST_STACK_EDGE,
    LIST_STACK_FACE,
    LIST_STACK_NEXT,
    MODE_LINE,
    MODE_POINT,
    MODE_SHAPE,
    NEDGES,
    NFACES,
    NMAP,
    NORMAL,
    NVERTS,
    OBJ_MARGIN,
    OBJ_MAT,
    OBJ_MODE,
    OBJ_POS,
    OBJ_PRISM,
    OBJ_SIZE,
    OBJ_TYPE,
    OBJ_WIDTH,
    POS,
    R_D,
    R_X1,
    R_X2,
    SAVED,
    T_VERTINDEX,
    TANGENT,
    VERT,
    VERT1,
    VERT2,
    VERT_I1,
    VERT_I2,
)
from robodyn.engine.spatial import add3, cross3, dot3, mtv3, mv3, neg3, norm3, normalize3, row3, scl3, sub3
from robodyn.engine.types import (
    GEOM_BOX,
    GEOM_CAPSULE,
    GEOM_CYLINDER,
    GEOM_ELLIPSOID,
    GEOM_HFIELD,
    GEOM_MESH,
    GEOM_SPHERE,
    MINVAL,
)

# (type1, type2) -> most contacts (maxContacts of mjc_Convex, 4.0.0): 1 with a sphere or an
# ellipsoid; capsule : cylinder 2, cylinder : cylinder and cylinder : box 4 (1 with
# `<flag multiccd="disable">`), through the multi-contact search (collision_multi)
MULTI_CONTACTS = {
    (GEOM_CAPSULE, GEOM_CYLINDER): 2,
    (GEOM_CYLINDER, GEOM_CYLINDER): 4,
    (GEOM_CYLINDER, GEOM_BOX): 4,
    (GEOM_CAPSULE, GEOM_MESH): 2,
    (GEOM_CYLINDER, GEOM_MESH): 4,
    (GEOM_BOX, GEOM_MESH): 4,
    (GEOM_MESH, GEOM_MESH): 4,
}


def max_contacts(t1: int, t2: int, multiccd: bool = True) -> int:
    """Most contacts of a CONVEX_PAIRS pair of types t1 <= t2 (maxContacts, 4.0.0)."""
    return MULTI_CONTACTS.get((t1, t2), 1) if multiccd else 1


MINVAL2 = MINVAL * MINVAL  # mjMINVAL^2; also mjMINDIST2/3/4 in double precision
MAXVAL2 = 1e20  # mjMAXVAL^2
MAX_LIMIT = 1.7976931348623157e308  # mjMAX_LIMIT (DBL_MAX)
EPA_MAX_ITERATIONS = 1000  # EPA runs at most min(ccd_iterations, 1000) iterations

# ---- 3-vectors as tuples -------------------------------------------------------------------------


@kernel
def _det3(v1, v2, v3):
    """det [v1 v2 v3] = v1 . (v2 x v3)."""
    return (
        v1[0] * (v2[1] * v3[2] - v2[2] * v3[1])
        + v1[1] * (v2[2] * v3[0] - v2[0] * v3[2])
        + v1[2] * (v2[0] * v3[1] - v2[1] * v3[0])
    )


@kernel
def _put_vertex(a, i, v, v1, v2):
    for k in range(3):
        a[i, VERT + k] = v[k]
        a[i, VERT1 + k] = v1[k]
        a[i, VERT2 + k] = v2[k]


@kernel
def _put_index(a, i, obj1, obj2):
    """Record the mesh vertices the last supports of obj1 and obj2 found (vertindex)."""
    a[i, VERT_I1] = obj1[OBJ_WIDTH + T_VERTINDEX] if int(obj1[OBJ_TYPE]) == GEOM_MESH else -1.0
    a[i, VERT_I2] = obj2[OBJ_WIDTH + T_VERTINDEX] if int(obj2[OBJ_TYPE]) == GEOM_MESH else -1.0


@kernel
def _copy_row(dst, i, src, j):
    for k in range(dst.shape[1]):
        dst[i, k] = src[j, k]


@kernel
def _lincomb(lam, n, a, r0, r1, r2, r3, col):
    """sum_{i<n} lam_i a[r_i, col:col+3], summed left to right (lincomb)."""
    if n == 1:
        return scl3(row3(a, r0, col), lam[0])
    v1 = row3(a, r0, col)
    v2 = row3(a, r1, col)
    if n == 2:
        return (
            lam[0] * v1[0] + lam[1] * v2[0],
            lam[0] * v1[1] + lam[1] * v2[1],
            lam[0] * v1[2] + lam[1] * v2[2],
        )
    v3 = row3(a, r2, col)
    if n == 3:
        return (
            lam[0] * v1[0] + lam[1] * v2[0] + lam[2] * v3[0],
            lam[0] * v1[1] + lam[1] * v2[1] + lam[2] * v3[1],
            lam[0] * v1[2] + lam[1] * v2[2] + lam[2] * v3[2],
        )
    v4 = row3(a, r3, col)
    return (
        lam[0] * v1[0] + lam[1] * v2[0] + lam[2] * v3[0] + lam[3] * v4[0],
        lam[0] * v1[1] + lam[1] * v2[1] + lam[2] * v3[1] + lam[3] * v4[1],
        lam[0] * v1[2] + lam[1] * v2[2] + lam[2] * v3[2] + lam[3] * v4[2],
    )


# ---- objects and support functions ---------------------------------------------------------------


@kernel
def init_obj(obj, gtype, size, pos, mat, margin):
    """Object row `obj` for a geom (mjc_initCCDObj): its full shape, inflated by margin/2."""
    obj[OBJ_TYPE] = gtype
    obj[OBJ_MODE] = MODE_SHAPE
    obj[OBJ_MARGIN] = margin
    for k in range(3):
        obj[OBJ_SIZE + k] = size[k]
        obj[OBJ_POS + k] = pos[k]
    for k in range(9):
        obj[OBJ_MAT + k] = mat[k]


@kernel
def _to_world(obj, loc):
    """R loc + p for the object's orientation R and centre p (localToGlobal)."""
    m = OBJ_MAT
    return (
        obj[m] * loc[0] + obj[m + 1] * loc[1] + obj[m + 2] * loc[2] + obj[OBJ_POS],
        obj[m + 3] * loc[0] + obj[m + 4] * loc[1] + obj[m + 5] * loc[2] + obj[OBJ_POS + 1],
        obj[m + 6] * loc[0] + obj[m + 7] * loc[1] + obj[m + 8] * loc[2] + obj[OBJ_POS + 2],
    )


@kernel
def _prism_support(obj, d):
    """Support of a height field's prism (mjc_prism_support): the vertex of largest <v, d>
    among the bottom three (rows 0-2 of OBJ_PRISM) when d_z < 0, else the top three; the
    first of equal ones. The prism lies in the frame the pair is collided in."""
    start = OBJ_PRISM + (0 if d[2] < 0 else 9)
    best = start
    best_dot = obj[start] * d[0] + obj[start + 1] * d[1] + obj[start + 2] * d[2]
    for i in range(1, 3):
        k = start + 3 * i
        dot = obj[k] * d[0] + obj[k + 1] * d[1] + obj[k + 2] * d[2]
        if dot > best_dot:
            best = k
            best_dot = dot
    return (obj[best], obj[best + 1], obj[best + 2])


@kernel
def _center(obj):
    """The object's centre, GJK's starting point (mjc_center): the geom's position, or
    the mean of a prism's six vertices."""
    if int(obj[OBJ_TYPE]) == GEOM_HFIELD:
        c = (0.0, 0.0, 0.0)
        for i in range(6):
            k = OBJ_PRISM + 3 * i
            c = (c[0] + obj[k], c[1] + obj[k + 1], c[2] + obj[k + 2])
        return scl3(c, 1.0 / 6.0)
    return (obj[OBJ_POS], obj[OBJ_POS + 1], obj[OBJ_POS + 2])


@kernel
def _discrete(obj1, obj2):
    """Both objects are polytopes (discreteGeoms of 4.0.0): no margin, and a box, a height
    field's prism, or a sphere / capsule shrunk to its centre / segment (4.0.0 counts those
    too; the 3.12 source does not). GJK then stops on a zero duality gap and EPA at
    mjMINEPATOL, or on a repeated support vertex."""
    return _polytope_obj(obj1) and _polytope_obj(obj2)


@kernel
def _polytope_obj(obj):
    if obj[OBJ_MARGIN] != 0:
        return False
    if obj[OBJ_MODE] != MODE_SHAPE:
        return True
    gtype = int(obj[OBJ_TYPE])
    return gtype == GEOM_BOX or gtype == GEOM_HFIELD


@kernel
def _vertex_index(obj, x):
    """The support vertex's index (mjCCDObj.vertindex) of point x of the object: a box's
    corner (bit k set where its local coordinate k is positive); -1 for a prism, whose
    support sets none."""
    if int(obj[OBJ_TYPE]) != GEOM_BOX:
        return -1
    m = OBJ_MAT
    r = (x[0] - obj[OBJ_POS], x[1] - obj[OBJ_POS + 1], x[2] - obj[OBJ_POS + 2])
    index = 0
    for k in range(3):
        if obj[m + k] * r[0] + obj[m + 3 + k] * r[1] + obj[m + 6 + k] * r[2] > 0:
            index |= 1 << k
    return index


@outline
def _support(obj, d):
    """S(d), the object's point farthest along the unit world direction d, without the
    margin (mjc_*Support): see the module docstring for each shape."""
    mode = obj[OBJ_MODE]
    p = (obj[OBJ_POS], obj[OBJ_POS + 1], obj[OBJ_POS + 2])
    if mode == MODE_POINT:  # a sphere shrunk to its centre
        return p
    m = OBJ_MAT
    if mode == MODE_LINE:  # a capsule shrunk to its segment: the end along d
        dot = obj[m + 2] * d[0] + obj[m + 5] * d[1] + obj[m + 8] * d[2]
        scl = obj[OBJ_SIZE + 1] if dot >= 0 else -obj[OBJ_SIZE + 1]
        return (obj[m + 2] * scl + p[0], obj[m + 5] * scl + p[1], obj[m + 8] * scl + p[2])
    gtype = int(obj[OBJ_TYPE])
    if gtype == GEOM_HFIELD:
        return _prism_support(obj, d)
    if gtype == GEOM_MESH:  # the hull copied after the geom part of the row (collision_mesh)
        return CM.support(obj[OBJ_WIDTH:], p, obj[m : m + 9], d)
    s0, s1, s2 = obj[OBJ_SIZE], obj[OBJ_SIZE + 1], obj[OBJ_SIZE + 2]
    if gtype == GEOM_SPHERE:
        return (s0 * d[0] + p[0], s0 * d[1] + p[1], s0 * d[2] + p[2])
    mat = (
        obj[m],
        obj[m + 1],
        obj[m + 2],
        obj[m + 3],
        obj[m + 4],
        obj[m + 5],
        obj[m + 6],
        obj[m + 7],
        obj[m + 8],
    )
    loc = mtv3(mat, d)  # d in the geom frame
    if gtype == GEOM_CAPSULE:
        top = s1 if loc[2] >= 0 else -s1
        return _to_world(obj, (loc[0] * s0, loc[1] * s0, loc[2] * s0 + top))
    if gtype == GEOM_ELLIPSOID:
        e = (loc[0] * s0, loc[1] * s1, loc[2] * s2)
        norm2 = e[0] * e[0] + e[1] * e[1] + e[2] * e[2]
        if norm2 < MINVAL2:  # too small to normalize: the end of the first semi-axis
            return (mat[0] * s0 + p[0], mat[3] * s0 + p[1], mat[6] * s0 + p[2])
        inv = 1 / math.sqrt(norm2)
        return _to_world(obj, (e[0] * (inv * s0), e[1] * (inv * s1), e[2] * (inv * s2)))
    if gtype == GEOM_CYLINDER:
        n2 = loc[0] * loc[0] + loc[1] * loc[1]
        scl = s0 / math.sqrt(n2) if n2 >= MINVAL2 else 0.0
        return _to_world(obj, (scl * loc[0], scl * loc[1], s1 if loc[2] >= 0 else -s1))
    # box
    return _to_world(
        obj, (s0 if loc[0] >= 0 else -s0, s1 if loc[1] >= 0 else -s1, s2 if loc[2] >= 0 else -s2)
    )


@kernel
def _support_pair(obj1, obj2, d, d_neg):
    """(S_A(d) - S_B(d_neg), S_A(d), S_B(d_neg)) with each geom inflated by its margin/2
    (support in engine_collision_gjk.c); d_neg is -d."""
    a = _support(obj1, d)
    if obj1[OBJ_MARGIN] > 0:
        h = 0.5 * obj1[OBJ_MARGIN]
        a = (a[0] + d[0] * h, a[1] + d[1] * h, a[2] + d[2] * h)
    b = _support(obj2, d_neg)
    if obj2[OBJ_MARGIN] > 0:
        h = 0.5 * obj2[OBJ_MARGIN]
        b = (b[0] + d_neg[0] * h, b[1] + d_neg[1] * h, b[2] + d_neg[2] * h)
    return sub3(a, b), a, b


# ---- GJK: distance sub-algorithm ----------------------------------------------------------------


@kernel
def _same_sign(a, b):
    """1 if both > 0, -1 if both < 0, else 0 (sameSign2)."""
    if a > 0 and b > 0:
        return 1
    if a < 0 and b < 0:
        return -1
    return 0


@kernel
def _plane_candidate(n, v):
    """The origin projected onto the plane through v with normal n: (0, projection) when n
    is usable (n.v != 0 and |n|^2 > MINVAL), (1, _) when n = 0 (a degenerate triangle),
    (2, _) when n is unusable but nonzero (try the next candidate)."""
    nv = dot3(n, v)
    nn = dot3(n, n)
    if nn == 0:
        return 1, (0.0, 0.0, 0.0)
    if nv != 0 and nn > MINVAL:
        return 0, scl3(n, nv / nn)
    return 2, (0.0, 0.0, 0.0)


@kernel
def _project_origin_plane(v1, v2, v3):
    """(1, _) if the triangle is degenerate, else (0, the origin projected onto its plane)
    (projectOriginPlane): the first usable of the normals (v3-v2)x(v2-v1) through v2 and
    (v2-v1)x(v3-v1) through v1, else (v3-v1)x(v3-v2) through v3 as it is."""
    d21 = sub3(v2, v1)
    d31 = sub3(v3, v1)
    d32 = sub3(v3, v2)
    status, p = _plane_candidate(cross3(d32, d21), v2)
    if status != 2:
        return status, p
    status, p = _plane_candidate(cross3(d21, d31), v1)
    if status != 2:
        return status, p
    n = cross3(d31, d32)
    return 0, scl3(n, dot3(n, v3) / dot3(n, n))


@kernel
def _s1d(s1, s2):
    """Barycentric coordinates of the point of segment s1 s2 nearest the origin (S1D of
    MuJoCo 4.0.0): the origin projected onto the line, in the coordinate of largest extent;
    outside the segment, the nearer end (s2 when the projection is beyond s2, s1 beyond s1)."""
    diff = sub3(s2, s1)
    dd = dot3(diff, diff)
    if dd < MINVAL2:  # degenerate segment
        return (0.0, 1.0)
    scl = -dot3(s2, diff) / dd
    p_o = (scl * diff[0] + s2[0], scl * diff[1] + s2[1], scl * diff[2] + s2[2])
    # the axis with the largest projection of the segment
    mu_max = s1[0] - s2[0]
    index = 0
    mu = s1[1] - s2[1]
    if abs(mu) >= abs(mu_max):
        mu_max = mu
        index = 1
    mu = s1[2] - s2[2]
    if abs(mu) >= abs(mu_max):
        mu_max = mu
        index = 2
    c1 = p_o[index] - s2[index]
    c2 = s1[index] - p_o[index]
    if _same_sign(mu_max, c1) == 0:
        return (0.0, 1.0)
    if _same_sign(mu_max, c2) == 0:
        return (1.0, 0.0)
    return (c1 / mu_max, c2 / mu_max)


@kernel
def _s2d(s1, s2, s3):
    """Barycentric coordinates of the point of triangle s1 s2 s3 nearest the origin (S2D of
    MuJoCo 4.0.0): the origin's projection p in the 2D coordinates that drop the axis of
    largest projected area, with signed areas of (p, s_j, s_k) relative to p; inside, their
    normalized values; else the best edge (all three edges for a degenerate triangle)."""
    bad, p_o = _project_origin_plane(s1, s2, s3)
    comp1 = 0
    comp2 = 0
    comp3 = 0
    if not bad:
        d21 = sub3(s2, s1)
        d31 = sub3(s3, s1)
        m14 = d21[1] * d31[2] - d21[2] * d31[1]
        m24 = d21[0] * d31[2] - d21[2] * d31[0]
        m34 = d21[0] * d31[1] - d21[1] * d31[0]
        mu1, mu2, mu3 = abs(m14), abs(m24), abs(m34)
        if mu1 >= mu2 and mu1 >= mu3:
            m_max, x, y = m14, 1, 2
        elif mu2 >= mu3:
            m_max, x, y = m24, 0, 2
        else:
            m_max, x, y = m34, 0, 1
        a1, b1 = s1[x] - p_o[x], s1[y] - p_o[y]
        a2, b2 = s2[x] - p_o[x], s2[y] - p_o[y]
        a3, b3 = s3[x] - p_o[x], s3[y] - p_o[y]
        c31 = a2 * b3 - a3 * b2
        c32 = a3 * b1 - a1 * b3
        c33 = a1 * b2 - a2 * b1
        comp1 = _same_sign(m_max, c31)
        comp2 = _same_sign(m_max, c32)
        comp3 = _same_sign(m_max, c33)
        if comp1 and comp2 and comp3:
            total = c31 + c32 + c33
            return (c31 / total, c32 / total, c33 / total)
    lam = (0.0, 0.0, 0.0)
    dmin = MAX_LIMIT
    if not comp1:
        l1 = _s1d(s2, s3)
        x_ = (l1[0] * s2[0] + l1[1] * s3[0], l1[0] * s2[1] + l1[1] * s3[1], l1[0] * s2[2] + l1[1] * s3[2])
        lam = (0.0, l1[0], l1[1])
        dmin = dot3(x_, x_)
    if not comp2:
        l1 = _s1d(s1, s3)
        x_ = (l1[0] * s1[0] + l1[1] * s3[0], l1[0] * s1[1] + l1[1] * s3[1], l1[0] * s1[2] + l1[1] * s3[2])
        d = dot3(x_, x_)
        if d < dmin:
            lam = (l1[0], 0.0, l1[1])
            dmin = d
    if not comp3:
        l1 = _s1d(s1, s2)
        x_ = (l1[0] * s1[0] + l1[1] * s2[0], l1[0] * s1[1] + l1[1] * s2[1], l1[0] * s1[2] + l1[1] * s2[2])
        d = dot3(x_, x_)
        if d < dmin:
            lam = (l1[0], l1[1], 0.0)
    return lam


@kernel
def _lin3(lam, a, b, c):
    return (
        lam[0] * a[0] + lam[1] * b[0] + lam[2] * c[0],
        lam[0] * a[1] + lam[1] * b[1] + lam[2] * c[1],
        lam[0] * a[2] + lam[1] * b[2] + lam[2] * c[2],
    )


@kernel
def _s3d(s1, s2, s3, s4):
    """Barycentric coordinates of the point of tetrahedron s1..s4 nearest the origin (S3D):
    the signed volumes C4i / det M when they all share det M's sign, else the best face."""
    c41 = -_det3(s2, s3, s4)
    c42 = _det3(s1, s3, s4)
    c43 = -_det3(s1, s2, s4)
    c44 = _det3(s1, s2, s3)
    m_det = c41 + c42 + c43 + c44
    comp1 = _same_sign(m_det, c41)
    comp2 = _same_sign(m_det, c42)
    comp3 = _same_sign(m_det, c43)
    comp4 = _same_sign(m_det, c44)
    if comp1 and comp2 and comp3 and comp4:
        return (c41 / m_det, c42 / m_det, c43 / m_det, c44 / m_det)
    lam = (0.0, 0.0, 0.0, 0.0)
    dmin = MAX_LIMIT
    if not comp1:
        l2 = _s2d(s2, s3, s4)
        x_ = _lin3(l2, s2, s3, s4)
        lam = (0.0, l2[0], l2[1], l2[2])
        dmin = dot3(x_, x_)
    if not comp2:
        l2 = _s2d(s1, s3, s4)
        x_ = _lin3(l2, s1, s3, s4)
        d = dot3(x_, x_)
        if d < dmin:
            lam = (l2[0], 0.0, l2[1], l2[2])
            dmin = d
    if not comp3:
        l2 = _s2d(s1, s2, s4)
        x_ = _lin3(l2, s1, s2, s4)
        d = dot3(x_, x_)
        if d < dmin:
            lam = (l2[0], l2[1], 0.0, l2[2])
            dmin = d
    if not comp4:
        l2 = _s2d(s1, s2, s3)
        x_ = _lin3(l2, s1, s2, s3)
        d = dot3(x_, x_)
        if d < dmin:
            lam = (l2[0], l2[1], l2[2], 0.0)
    return lam


@kernel
def _subdistance(simplex, n):
    """Barycentric coordinates (4,) of the point of the n-vertex simplex nearest the origin."""
    if n == 4:
        return _s3d(
            row3(simplex, 0, VERT), row3(simplex, 1, VERT), row3(simplex, 2, VERT), row3(simplex, 3, VERT)
        )
    if n == 3:
        lam = _s2d(row3(simplex, 0, VERT), row3(simplex, 1, VERT), row3(simplex, 2, VERT))
        return (lam[0], lam[1], lam[2], 0.0)
    if n == 2:
        lam = _s1d(row3(simplex, 0, VERT), row3(simplex, 1, VERT))
        return (lam[0], lam[1], 0.0, 0.0)
    return (1.0, 0.0, 0.0, 0.0)


# ---- GJK ------------------------------------------------------------------------------------------


@kernel
def _gjk_support(obj1, obj2, x, x_norm):
    """Support of A - B along -x (gjkSupport: d_neg = x / |x|, d = -d_neg)."""
    inv = 1 / x_norm
    d_neg = (inv * x[0], inv * x[1], inv * x[2])
    return _support_pair(obj1, obj2, neg3(d_neg), d_neg)


@kernel
def _gjk_point(simplex, lam, n):
    """The simplex point nearest the origin after the sub-algorithm: a vertex; on a segment,
    the origin projected onto its line; on a triangle, onto its plane (barycentric
    combination when the segment or triangle is degenerate)."""
    if n == 1:
        return _lincomb(lam, 1, simplex, 0, 1, 2, 3, VERT)
    s1 = row3(simplex, 0, VERT)
    s2 = row3(simplex, 1, VERT)
    if n == 2:
        diff = sub3(s2, s1)
        dd = dot3(diff, diff)
        if dd < MINVAL2:
            return _lincomb(lam, 2, simplex, 0, 1, 2, 3, VERT)
        scl = -dot3(s2, diff) / dd
        return (scl * diff[0] + s2[0], scl * diff[1] + s2[1], scl * diff[2] + s2[2])
    bad, p = _project_origin_plane(s1, s2, row3(simplex, 2, VERT))
    if bad:
        return _lincomb(lam, 3, simplex, 0, 1, 2, 3, VERT)
    return p


@outline
def _gjk(simplex, obj1, obj2, x1, x2, tolerance, kmax, cutoff):
    """GJK from the guess x1 - x2 (gjk of MuJoCo 4.0.0; see the module docstring). `cutoff`
    > 0 asks for distances (pairs farther apart than it are separated); 0 asks only whether
    the shapes overlap.
    Returns (dist, nsimplex, separated, nx, x1, x2): the distance (0 for a tetrahedron
    around the origin, MAX_LIMIT when separated early), the simplex size, separation, the
    number of witness pairs and the witness points on A and B."""
    get_dist = cutoff > 0
    n = 0
    k = 0
    # 4.0.0: between polytopes (_discrete) the duality gap must reach 0, |x_k| mjMINVAL
    discrete = _discrete(obj1, obj2)
    epsilon = 0.0 if discrete else 0.5 * tolerance * tolerance
    min_norm = MINVAL if get_dist or discrete else tolerance
    x = sub3(x1, x2)
    x_norm = norm3(x)
    if x_norm < MINVAL:
        x = (1.0, 0.0, 0.0)
        x_norm = 1.0
    separated = 0
    lam = (1.0, 0.0, 0.0, 0.0)
    dist = x_norm
    tetra = False
    while k < kmax:
        v, v1, v2 = _gjk_support(obj1, obj2, x, x_norm)
        _put_vertex(simplex, n, v, v1, v2)
        _put_index(simplex, n, obj1, obj2)
        lower = dot3(x, v)  # lower / |x_k| bounds the distance from below
        if not get_dist:
            if lower > 0:
                return MAX_LIMIT, 0, 1, 0, x1, x2
        elif lower > 0:
            separated = 1
            if cutoff < MAX_LIMIT and lower >= cutoff * x_norm:
                return MAX_LIMIT, 0, 1, 0, x1, x2
        # Frank-Wolfe duality gap: |f(x_k) - f(x_min)|^2 <= <x_k, x_k - s_k>
        if k > 0 and dot3(x, sub3(x, v)) < epsilon:
            dist = x_norm
            break
        lam = _subdistance(simplex, n + 1)
        # keep the vertices with nonzero weight
        n = 0
        kept = (0.0, 0.0, 0.0, 0.0)
        for i in range(4):
            if lam[i] == 0:
                continue
            if n != i:
                _copy_row(simplex, n, simplex, i)
            kept = _set4(kept, n, lam[i])
            n += 1
        lam = kept
        if n < 1:  # should not occur
            return MAX_LIMIT, 0, 1, 0, x1, x2
        if n == 4:  # a tetrahedron around the origin
            dist = x_norm if separated else 0.0
            tetra = True
            break
        x = _gjk_point(simplex, lam, n)
        x_norm_prev = x_norm
        x_norm = norm3(x)
        dist = x_norm
        if x_norm < (MINVAL if n == 1 else min_norm):
            break
        if k > 0 and abs(x_norm - x_norm_prev) < MINVAL:
            break
        k += 1
    if n > 0:  # witness points
        x1 = _lincomb(lam, n, simplex, 0, 1, 2, 3, VERT1)
        x2 = _lincomb(lam, n, simplex, 0, 1, 2, 3, VERT2)
    if not tetra and not separated and dist >= MINVAL:  # final separation check
        v, v1, v2 = _gjk_support(obj1, obj2, x, dist)
        if dot3(x, v) > 0:
            separated = 1
    return dist, n, separated, 1, x1, x2


@kernel
def _set4(t, i, value):
    """The 4-tuple t with entry i replaced by value."""
    return (
        value if i == 0 else t[0],
        value if i == 1 else t[1],
        value if i == 2 else t[2],
        value if i == 3 else t[3],
    )


# ---- EPA: the polytope ----------------------------------------------------------------------------


@kernel
def _insert_vertex(vert, count, simplex, i):
    """Copy simplex vertex i into the polytope; returns its index (insertVertex)."""
    n = count[NVERTS]
    count[NVERTS] = n + 1
    _copy_row(vert, n, simplex, i)
    return n


@kernel
def _epa_support(vert, count, obj1, obj2, d, dnorm):
    """Add the support of A - B along d / dnorm (along x when dnorm <= mjMINVAL) to the
    polytope; returns its index (epaSupport)."""
    di = (1.0, 0.0, 0.0)
    dn = (-1.0, 0.0, 0.0)
    if dnorm > MINVAL:
        di = (d[0] / dnorm, d[1] / dnorm, d[2] / dnorm)
        dn = scl3(di, -1.0)
    n = count[NVERTS]
    count[NVERTS] = n + 1
    v, v1, v2 = _support_pair(obj1, obj2, di, dn)
    _put_vertex(vert, n, v, v1, v2)
    _put_index(vert, n, obj1, obj2)
    return n


@kernel
def _attach_face(ws, v1, v2, v3, adj1, adj2, adj3):
    """Append face (v1, v2, v3) with its adjacent faces; returns |v|^2 of the origin's
    projection onto it, oriented away from the polytope centre, or 0 when the face is
    degenerate (attachFace)."""
    obj, simplex, vert, face, faceid, lst, poly = ws
    count = lst[LIST_COUNT]
    f = count[NFACES]
    count[NFACES] = f + 1
    faceid[f, FACEID_VERT] = v1
    faceid[f, FACEID_VERT + 1] = v2
    faceid[f, FACEID_VERT + 2] = v3
    faceid[f, FACEID_ADJ] = adj1
    faceid[f, FACEID_ADJ + 1] = adj2
    faceid[f, FACEID_ADJ + 2] = adj3
    bad, v = _project_origin_plane(row3(vert, v3, VERT), row3(vert, v2, VERT), row3(vert, v1, VERT))
    if bad:
        return 0.0
    outward = sub3(row3(vert, v1, VERT), row3(simplex, CENTER, VERT))
    if dot3(v, outward) < 0:
        v = scl3(v, -1.0)
    dist2 = dot3(v, v)
    for k in range(3):
        face[f, k] = v[k]
    face[f, FACE_DIST2] = dist2
    faceid[f, FACEID_INDEX] = -1
    return dist2


@kernel
def _fill_map(faceid, lst, nfaces):
    """Every face of the initial polytope in the map."""
    for i in range(nfaces):
        lst[LIST_MAP, i] = i
        faceid[i, FACEID_INDEX] = i
    lst[LIST_COUNT, NMAP] = nfaces


@kernel
def _set_center(simplex, vert, r0, n):
    """Polytope centre = mean of polytope vertices r0..r0+n-1, summed in order."""
    c = row3(vert, r0, VERT)
    for i in range(1, n):
        c = add3(c, row3(vert, r0 + i, VERT))
    scale = 0.5 if n == 2 else (1.0 / 3.0 if n == 3 else 0.25)
    for k in range(3):
        simplex[CENTER, VERT + k] = scale * c[k]


@kernel
def _replace_simplex3(ws, v1, v2, v3):
    """Restart from the triangle (v1, v2, v3) of the polytope (replaceSimplex3)."""
    obj, simplex, vert, face, faceid, lst, poly = ws
    _copy_row(simplex, 0, vert, v1)
    _copy_row(simplex, 1, vert, v2)
    _copy_row(simplex, 2, vert, v3)
    lst[LIST_COUNT, NFACES] = 0
    lst[LIST_COUNT, NVERTS] = 0
    lst[LIST_COUNT, NMAP] = 0


@kernel
def _same_side(p0, p1, p2, p3):
    """True if the origin and p3 lie strictly on the same side of plane p0 p1 p2."""
    n = cross3(sub3(p1, p0), sub3(p2, p0))
    dot1 = dot3(n, sub3(p3, p0))
    dot2 = dot3(n, scl3(p0, -1.0))
    return (dot1 > 0 and dot2 > 0) or (dot1 < 0 and dot2 < 0)


@kernel
def _test_tetra(p0, p1, p2, p3):
    """True if the origin is inside the tetrahedron (testTetra)."""
    return (
        _same_side(p0, p1, p2, p3)
        and _same_side(p1, p2, p3, p0)
        and _same_side(p2, p3, p0, p1)
        and _same_side(p3, p0, p1, p2)
    )


@kernel
def _rotmat120(axis):
    """Rotation by 120 degrees about `axis` (rotmat), row-major 9-tuple."""
    n = norm3(axis)
    u1, u2, u3 = axis[0] / n, axis[1] / n, axis[2] / n
    s = 0.86602540378  # sin(120 deg), as MuJoCo writes it
    c = -0.5
    return (
        c + u1 * u1 * (1 - c),
        u1 * u2 * (1 - c) - u3 * s,
        u1 * u3 * (1 - c) + u2 * s,
        u2 * u1 * (1 - c) + u3 * s,
        c + u2 * u2 * (1 - c),
        u2 * u3 * (1 - c) - u1 * s,
        u1 * u3 * (1 - c) - u2 * s,
        u2 * u3 * (1 - c) + u1 * s,
        c + u3 * u3 * (1 - c),
    )


@kernel
def _ray_triangle(v1, v2, v3, v4, v5):
    """Nonzero if the line v1 v2 passes through triangle v3 v4 v5 (rayTriangle)."""
    d12 = sub3(v2, v1)
    d13 = sub3(v3, v1)
    d14 = sub3(v4, v1)
    d15 = sub3(v5, v1)
    vol1 = _det3(d13, d14, d12)
    vol2 = _det3(d14, d15, d12)
    vol3 = _det3(d15, d13, d12)
    if vol1 >= 0 and vol2 >= 0 and vol3 >= 0:
        return 1
    if vol1 <= 0 and vol2 <= 0 and vol3 <= 0:
        return -1
    return 0


@kernel
def _tri_affine(v1, v2, v3, p):
    """Affine coordinates of p on triangle v1 v2 v3 in the 2D coordinates that drop the
    axis of largest projected area (triAffineCoord)."""
    m14 = v2[1] * v3[2] - v2[2] * v3[1] - v1[1] * v3[2] + v1[2] * v3[1] + v1[1] * v2[2] - v1[2] * v2[1]
    m24 = v2[0] * v3[2] - v2[2] * v3[0] - v1[0] * v3[2] + v1[2] * v3[0] + v1[0] * v2[2] - v1[2] * v2[0]
    m34 = v2[0] * v3[1] - v2[1] * v3[0] - v1[0] * v3[1] + v1[1] * v3[0] + v1[0] * v2[1] - v1[1] * v2[0]
    mu1, mu2, mu3 = abs(m14), abs(m24), abs(m34)
    if mu1 >= mu2 and mu1 >= mu3:
        m_max, x, y = m14, 1, 2
    elif mu2 >= mu3:
        m_max, x, y = m24, 0, 2
    else:
        m_max, x, y = m34, 0, 1
    c31 = p[x] * v2[y] + p[y] * v3[x] + v2[x] * v3[y] - p[x] * v3[y] - p[y] * v2[x] - v3[x] * v2[y]
    c32 = p[x] * v3[y] + p[y] * v1[x] + v3[x] * v1[y] - p[x] * v1[y] - p[y] * v3[x] - v1[x] * v3[y]
    c33 = p[x] * v1[y] + p[y] * v2[x] + v1[x] * v2[y] - p[x] * v2[y] - p[y] * v1[x] - v2[x] * v1[y]
    return (c31 / m_max, c32 / m_max, c33 / m_max)


@kernel
def _tri_point_intersect(v1, v2, v3, p):
    """True if p lies on triangle v1 v2 v3 (triPointIntersect)."""
    lam = _tri_affine(v1, v2, v3, p)
    if lam[0] < 0 or lam[1] < 0 or lam[2] < 0:
        return False
    pr = (
        v1[0] * lam[0] + v2[0] * lam[1] + v3[0] * lam[2],
        v1[1] * lam[0] + v2[1] * lam[1] + v3[1] * lam[2],
        v1[2] * lam[0] + v2[2] * lam[1] + v3[2] * lam[2],
    )
    return norm3(sub3(pr, p)) < MINVAL


@kernel
def _ray_volumes(v1, v2, v3, v4, v5):
    """Signed volumes (v3-v1, v4-v1, v2-v1), (v4-v1, v5-v1, v2-v1), (v5-v1, v3-v1, v2-v1):
    all of one sign iff the line v1 v2 passes through triangle v3 v4 v5 (rayTriangle)."""
    d12 = sub3(v2, v1)
    d13 = sub3(v3, v1)
    d14 = sub3(v4, v1)
    d15 = sub3(v5, v1)
    return _det3(d13, d14, d12), _det3(d14, d15, d12), _det3(d15, d13, d12)


@kernel
def _recover_hexa(i0, i1, i2, i3, i4, vol):
    """4.0.0's recoverHexa: when the segment v4 v5 (i3, i4) misses triangle v1 v2 v3, the
    vertex order (i0..i4) of a hexahedron that holds the origin, or (False, an edge of the
    triangle first) for a tetrahedron on that edge and v4, v5. Thresholds: vol > 0 and
    vol < -mjMINVAL."""
    c = -MINVAL
    if vol[0] > 0 and c > vol[1] and c > vol[2]:
        return True, (i2, i4, i3, i0, i1)
    if vol[1] > 0 and c > vol[0] and c > vol[2]:
        return True, (i0, i4, i3, i1, i2)
    if c > vol[1] and c > vol[0] and vol[2] > 0:
        return True, (i1, i4, i3, i2, i0)
    if not (vol[1] < vol[0]) and not (vol[2] < vol[0]):
        return False, (i0, i1, i2, i3, i4)
    if not (vol[0] < vol[1]) and not (vol[2] < vol[1]):
        return False, (i1, i2, i2, i3, i4)
    return False, (i2, i0, i2, i3, i4)


@kernel
def _inside_face(vert, a, b, c, opposite, dist2, tol2):
    """The origin is on the inner side of face (a, b, c) (the side of vertex `opposite`), or
    the face is within the tolerance of it (dist2 < tolerance^2)."""
    r = row3(vert, a, VERT)
    s = row3(vert, b, VERT)
    t = row3(vert, c, VERT)
    return _same_side(r, s, t, row3(vert, opposite, VERT)) or dist2 < tol2


@outline
def _polytope3(ws, obj1, obj2, tolerance):
    """EPA's start from GJK's triangle simplex[0:3] (polytope3 of MuJoCo 4.0.0): the
    supports v4, v5 along both triangle normals; a hexahedron (v1 v2 v3 with apexes v4, v5;
    vertices reordered by `_recover_hexa` when the segment v4 v5 misses the triangle) or, when
    no order works, a tetrahedron on one triangle edge and v4, v5; each face must have the
    origin inside or lie within the tolerance of it. Returns 0 on success, else MuJoCo's
    (nonzero) failure."""
    obj, simplex, vert, face, faceid, lst, poly = ws
    count = lst[LIST_COUNT]
    v1i = _insert_vertex(vert, count, simplex, 0)
    v2i = _insert_vertex(vert, count, simplex, 1)
    v3i = _insert_vertex(vert, count, simplex, 2)
    v1 = row3(vert, v1i, VERT)
    v2 = row3(vert, v2i, VERT)
    v3 = row3(vert, v3i, VERT)
    n = cross3(sub3(v2, v1), sub3(v3, v1))
    n_norm = norm3(n)
    if n_norm < MINVAL:
        return 4  # mjEPA_P3_BAD_NORMAL
    n_neg = neg3(n)
    v5i = _epa_support(vert, count, obj1, obj2, n_neg, n_norm)
    v4i = _epa_support(vert, count, obj1, obj2, n, n_norm)
    v4 = row3(vert, v4i, VERT)
    v5 = row3(vert, v5i, VERT)
    if _tri_point_intersect(v1, v2, v3, v4):
        return 5  # mjEPA_P3_INVALID_V4
    if _tri_point_intersect(v1, v2, v3, v5):
        return 6  # mjEPA_P3_INVALID_V5
    # the supports must lie off the triangle's plane on their sides
    if dot3(sub3(v4, v1), n) < MINVAL * n_norm or dot3(sub3(v5, v1), n_neg) < MINVAL * n_norm:
        return 8  # mjEPA_P3_ORIGIN_ON_FACE
    hexa = True
    i0, i1, i2, i3, i4 = v1i, v2i, v3i, v4i, v5i
    vol = _ray_volumes(v4, v5, v1, v2, v3)
    if not ((vol[0] >= 0 and vol[1] >= 0 and vol[2] >= 0) or (vol[0] <= 0 and vol[1] <= 0 and vol[2] <= 0)):
        hexa, order = _recover_hexa(v1i, v2i, v3i, v4i, v5i, vol)
        i0, i1, i2, i3, i4 = order
    tol2 = tolerance * tolerance
    p0 = row3(vert, i0, VERT)
    p1 = row3(vert, i1, VERT)
    p3 = row3(vert, i3, VERT)
    p4 = row3(vert, i4, VERT)
    if hexa:
        c = add3(add3(add3(add3(p0, p1), row3(vert, i2, VERT)), p3), p4)
        for k in range(3):
            simplex[CENTER, VERT + k] = c[k] * 0.2
        d1 = _attach_face(ws, i3, i0, i1, 1, 3, 2)
        d2 = _attach_face(ws, i3, i2, i0, 2, 4, 0)
        d3 = _attach_face(ws, i3, i1, i2, 0, 5, 1)
        d4 = _attach_face(ws, i4, i1, i0, 5, 0, 4)
        d5 = _attach_face(ws, i4, i0, i2, 3, 1, 5)
        d6 = _attach_face(ws, i4, i2, i1, 4, 2, 3)
        if d1 < MINVAL2 or d2 < MINVAL2 or d3 < MINVAL2 or d4 < MINVAL2 or d5 < MINVAL2 or d6 < MINVAL2:
            return 8  # origin on a face (4.0.0 then tries an edge of the triangle: not reproduced)
        if not (
            _inside_face(vert, i3, i0, i1, i2, d1, tol2)
            and _inside_face(vert, i3, i2, i0, i1, d2, tol2)
            and _inside_face(vert, i3, i1, i2, i0, d3, tol2)
            and _inside_face(vert, i4, i1, i0, i2, d4, tol2)
            and _inside_face(vert, i4, i0, i2, i1, d5, tol2)
            and _inside_face(vert, i4, i2, i1, i0, d6, tol2)
        ):
            return 7  # mjEPA_P3_MISSING_ORIGIN
        _fill_map(faceid, lst, 6)
        return 0
    c = add3(add3(add3(p0, p1), p3), p4)
    for k in range(3):
        simplex[CENTER, VERT + k] = c[k] * 0.25
    d1 = _attach_face(ws, i0, i1, i3, 1, 3, 2)
    d2 = _attach_face(ws, i0, i4, i1, 2, 3, 0)
    d3 = _attach_face(ws, i0, i3, i4, 0, 3, 1)
    d4 = _attach_face(ws, i4, i3, i1, 2, 0, 1)
    if d1 < MINVAL2 or d2 < MINVAL2 or d3 < MINVAL2 or d4 < MINVAL2:
        return 8
    if not (
        _inside_face(vert, i0, i1, i3, i4, d1, tol2)
        and _inside_face(vert, i0, i4, i1, i3, d2, tol2)
        and _inside_face(vert, i0, i3, i4, i1, d3, tol2)
        and _inside_face(vert, i4, i3, i1, i0, d4, tol2)
    ):
        return 7
    _fill_map(faceid, lst, 4)
    return 0


@kernel
def _polytope2(ws, obj1, obj2, tolerance):
    """Hexahedron on GJK's segment simplex[0:2] and three supports 120 degrees apart
    around it (polytope2); a face through the origin restarts from that triangle."""
    obj, simplex, vert, face, faceid, lst, poly = ws
    count = lst[LIST_COUNT]
    v1 = row3(simplex, 0, VERT)
    v2 = row3(simplex, 1, VERT)
    c = add3(v1, v2)
    for k in range(3):
        simplex[CENTER, VERT + k] = c[k] * 0.5
    diff = sub3(v2, v1)
    value = MAX_LIMIT
    index = 0
    for i in range(3):
        if abs(diff[i]) < value:
            value = abs(diff[i])
            index = i
    e = (1.0 if index == 0 else 0.0, 1.0 if index == 1 else 0.0, 1.0 if index == 2 else 0.0)
    d1 = cross3(e, diff)
    rot = _rotmat120(diff)
    d2 = mv3(rot, d1)
    d3 = mv3(rot, d2)
    v1i = _insert_vertex(vert, count, simplex, 0)
    v2i = _insert_vertex(vert, count, simplex, 1)
    v3i = _epa_support(vert, count, obj1, obj2, d1, norm3(d1))
    v4i = _epa_support(vert, count, obj1, obj2, d2, norm3(d2))
    v5i = _epa_support(vert, count, obj1, obj2, d3, norm3(d3))
    if _attach_face(ws, v1i, v3i, v4i, 1, 3, 2) < MINVAL2:
        _replace_simplex3(ws, v1i, v3i, v4i)
        return _polytope3(ws, obj1, obj2, tolerance)
    if _attach_face(ws, v1i, v5i, v3i, 2, 4, 0) < MINVAL2:
        _replace_simplex3(ws, v1i, v5i, v3i)
        return _polytope3(ws, obj1, obj2, tolerance)
    if _attach_face(ws, v1i, v4i, v5i, 0, 5, 1) < MINVAL2:
        _replace_simplex3(ws, v1i, v4i, v5i)
        return _polytope3(ws, obj1, obj2, tolerance)
    if _attach_face(ws, v2i, v4i, v3i, 5, 0, 4) < MINVAL2:
        _replace_simplex3(ws, v2i, v4i, v3i)
        return _polytope3(ws, obj1, obj2, tolerance)
    if _attach_face(ws, v2i, v3i, v5i, 3, 1, 5) < MINVAL2:
        _replace_simplex3(ws, v2i, v3i, v5i)
        return _polytope3(ws, obj1, obj2, tolerance)
    if _attach_face(ws, v2i, v5i, v4i, 4, 2, 3) < MINVAL2:
        _replace_simplex3(ws, v2i, v5i, v4i)
        return _polytope3(ws, obj1, obj2, tolerance)
    if not _ray_triangle(v1, v2, row3(vert, v3i, VERT), row3(vert, v4i, VERT), row3(vert, v5i, VERT)):
        return 1  # mjEPA_P2_NONCONVEX
    _fill_map(faceid, lst, 6)
    return 0


@kernel
def _polytope4(ws, obj1, obj2, tolerance):
    """GJK's tetrahedron simplex[0:4] as the polytope (polytope4); a face through the
    origin restarts from that triangle."""
    obj, simplex, vert, face, faceid, lst, poly = ws
    count = lst[LIST_COUNT]
    v1 = _insert_vertex(vert, count, simplex, 0)
    v2 = _insert_vertex(vert, count, simplex, 1)
    v3 = _insert_vertex(vert, count, simplex, 2)
    v4 = _insert_vertex(vert, count, simplex, 3)
    _set_center(simplex, vert, v1, 4)
    if _attach_face(ws, v1, v2, v3, 1, 3, 2) < MINVAL2:
        _replace_simplex3(ws, v1, v2, v3)
        return _polytope3(ws, obj1, obj2, tolerance)
    if _attach_face(ws, v1, v4, v2, 2, 3, 0) < MINVAL2:
        _replace_simplex3(ws, v1, v4, v2)
        return _polytope3(ws, obj1, obj2, tolerance)
    if _attach_face(ws, v1, v3, v4, 0, 3, 1) < MINVAL2:
        _replace_simplex3(ws, v1, v3, v4)
        return _polytope3(ws, obj1, obj2, tolerance)
    if _attach_face(ws, v4, v3, v2, 2, 0, 1) < MINVAL2:
        _replace_simplex3(ws, v4, v3, v2)
        return _polytope3(ws, obj1, obj2, tolerance)
    if not _test_tetra(
        row3(vert, v1, VERT), row3(vert, v2, VERT), row3(vert, v3, VERT), row3(vert, v4, VERT)
    ):
        return 9  # mjEPA_P4_MISSING_ORIGIN
    _fill_map(faceid, lst, 4)
    return 0


# ---- EPA: expansion ---------------------------------------------------------------------------------


@kernel
def _delete_face(faceid, lst, f):
    """Take face f out of the map (swap in the last entry) and mark it deleted (deleteFace)."""
    idx = faceid[f, FACEID_INDEX]
    if idx >= 0:
        last_pos = lst[LIST_COUNT, NMAP] - 1
        lst[LIST_COUNT, NMAP] = last_pos
        last = lst[LIST_MAP, last_pos]
        lst[LIST_MAP, idx] = last
        faceid[last, FACEID_INDEX] = idx
    faceid[f, FACEID_INDEX] = -2


@kernel
def _edge_of(faceid, f, vertex):
    """Index (0, 1, 2) of the edge of face f that starts at `vertex` (getEdge)."""
    if faceid[f, FACEID_VERT] == vertex:
        return 0
    if faceid[f, FACEID_VERT + 1] == vertex:
        return 1
    return 2


@kernel
def _visible(face, f, w):
    """Face f is seen from w: <v, w> - |v|^2 > mjMINVAL."""
    return (face[f, 0] * w[0] + face[f, 1] * w[1] + face[f, 2] * w[2]) - face[f, FACE_DIST2] > MINVAL


@kernel
def _add_edge(lst, f, edge):
    n = lst[LIST_COUNT, NEDGES]
    lst[LIST_HZN_EDGE, n] = edge
    lst[LIST_HZN_FACE, n] = f
    lst[LIST_COUNT, NEDGES] = n + 1


@kernel
def _horizon_from(ws, f, e, w):
    """MuJoCo's horizonRec(f, e) without recursion: if face f (entered through its edge e)
    is visible from w, delete it and search its two other edges' neighbours depth first,
    each invisible neighbour adding its shared edge to the horizon. Returns visibility."""
    obj, simplex, vert, face, faceid, lst, poly = ws
    if not _visible(face, f, w):
        return False
    _delete_face(faceid, lst, f)
    sp = 0
    lst[LIST_STACK_FACE, 0] = f
    lst[LIST_STACK_EDGE, 0] = e
    lst[LIST_STACK_NEXT, 0] = 1
    sp = 1
    while sp > 0:
        top = sp - 1
        g = lst[LIST_STACK_FACE, top]
        k = lst[LIST_STACK_NEXT, top]
        if k == 3:
            sp -= 1
            continue
        lst[LIST_STACK_NEXT, top] = k + 1
        i = (lst[LIST_STACK_EDGE, top] + k) % 3
        adj = faceid[g, FACEID_ADJ + i]
        if faceid[adj, FACEID_INDEX] > -2:
            adj_edge = _edge_of(faceid, adj, faceid[g, FACEID_VERT + (i + 1) % 3])
            if _visible(face, adj, w):
                _delete_face(faceid, lst, adj)
                lst[LIST_STACK_FACE, sp] = adj
                lst[LIST_STACK_EDGE, sp] = adj_edge
                lst[LIST_STACK_NEXT, sp] = 1
                sp += 1
            else:
                _add_edge(lst, adj, adj_edge)
    return True


@kernel
def _horizon(ws, f, w):
    """Delete face f and every face visible from w connected to it; the horizon (the edges
    between visible and invisible faces) goes to the horizon lists, in MuJoCo's order."""
    obj, simplex, vert, face, faceid, lst, poly = ws
    _delete_face(faceid, lst, f)
    a0 = faceid[f, FACEID_VERT]
    a1 = faceid[f, FACEID_VERT + 1]
    a2 = faceid[f, FACEID_VERT + 2]
    adj = faceid[f, FACEID_ADJ]
    edge = _edge_of(faceid, adj, a1)
    if not _horizon_from(ws, adj, edge, w):
        _add_edge(lst, adj, edge)
    adj = faceid[f, FACEID_ADJ + 1]
    edge = _edge_of(faceid, adj, a2)
    if faceid[adj, FACEID_INDEX] > -2 and not _horizon_from(ws, adj, edge, w):
        _add_edge(lst, adj, edge)
    adj = faceid[f, FACEID_ADJ + 2]
    edge = _edge_of(faceid, adj, a0)
    if faceid[adj, FACEID_INDEX] > -2 and not _horizon_from(ws, adj, edge, w):
        _add_edge(lst, adj, edge)


@kernel
def _map_add(faceid, lst, f):
    n = lst[LIST_COUNT, NMAP]
    lst[LIST_MAP, n] = f
    faceid[f, FACEID_INDEX] = n
    lst[LIST_COUNT, NMAP] = n + 1


@kernel
def _epa_witness(ws, f):
    """(-|v|, x1, x2) of face f: its barycentric point mapped onto A and B (epaWitness)."""
    obj, simplex, vert, face, faceid, lst, poly = ws
    r1 = faceid[f, FACEID_VERT]
    r2 = faceid[f, FACEID_VERT + 1]
    r3 = faceid[f, FACEID_VERT + 2]
    lam = _tri_affine(row3(vert, r1, VERT), row3(vert, r2, VERT), row3(vert, r3, VERT), row3(face, f, 0))
    x1 = _lin3(lam, row3(vert, r1, VERT1), row3(vert, r2, VERT1), row3(vert, r3, VERT1))
    x2 = _lin3(lam, row3(vert, r1, VERT2), row3(vert, r2, VERT2), row3(vert, r3, VERT2))
    return -math.sqrt(face[f, FACE_DIST2]), x1, x2


@kernel
def _repeated_vertex(vert, n, obj1, obj2):
    """The last of the n polytope vertices has the support vertices (indices on A and on B,
    _vertex_index) of an earlier one: EPA between polytopes can expand no further."""
    last = n - 1
    i1 = _vertex_index(obj1, row3(vert, last, VERT1))
    i2 = _vertex_index(obj2, row3(vert, last, VERT2))
    for i in range(last):
        same1 = _vertex_index(obj1, row3(vert, i, VERT1)) == i1
        if same1 and _vertex_index(obj2, row3(vert, i, VERT2)) == i2:
            return True
    return False


@outline
def _epa(ws, obj1, obj2, tolerance, iterations, maxfaces):
    """Expand the polytope towards its face nearest the origin (epa): lower bound |v| of
    that face, upper bound min_k <v, w_k> / |v| from the support w_k along it; stop when
    they are within `tolerance`. Returns (found, dist = -depth, x1, x2)."""
    obj, simplex, vert, face, faceid, lst, poly = ws
    count = lst[LIST_COUNT]
    upper = MAX_LIMIT
    upper2 = MAX_LIMIT
    f = -1
    kmax = iterations if iterations < EPA_MAX_ITERATIONS else EPA_MAX_ITERATIONS
    discrete = _discrete(obj1, obj2)  # 4.0.0: polytopes stop at mjMINEPATOL (= mjMINVAL)
    if discrete:
        tolerance = MINVAL
    k = 0
    while k < kmax:
        pf = f
        lower2 = MAX_LIMIT
        for i in range(count[NMAP]):
            g = lst[LIST_MAP, i]
            if face[g, FACE_DIST2] < lower2:
                f = g
                lower2 = face[g, FACE_DIST2]
        if lower2 > upper2 or f < 0:
            f = pf
            break
        if lower2 <= 0:  # origin on a face's plane (MuJoCo warns)
            break
        lower = math.sqrt(lower2)
        v = row3(face, f, 0)
        wi = _epa_support(vert, count, obj1, obj2, v, lower)
        w = row3(vert, wi, VERT)
        upper_k = dot3(v, w) / lower
        if upper_k < upper:
            upper = upper_k
            upper2 = upper * upper
        if upper_k - lower < tolerance:  # 4.0.0 tests this iteration's bound, not the best
            if k == 0 and upper < lower - 1e-10:  # no contact
                f = -1
            break
        if discrete and _repeated_vertex(vert, count[NVERTS], obj1, obj2):
            break
        _horizon(ws, f, w)
        nedges = count[NEDGES]
        if nedges < 3:  # unrecoverable numerical issue
            f = -1
            break
        nfaces = count[NFACES]
        if nedges > maxfaces - nfaces:  # out of face memory (MuJoCo warns)
            break
        # attach the faces between w and the horizon, each next to its neighbours
        failed = False
        for i in range(nedges):
            hzn_face = lst[LIST_HZN_FACE, i]
            hzn_edge = lst[LIST_HZN_EDGE, i]
            a = faceid[hzn_face, FACEID_VERT + hzn_edge]
            b = faceid[hzn_face, FACEID_VERT + (hzn_edge + 1) % 3]
            cur = nfaces + i
            faceid[hzn_face, FACEID_ADJ + hzn_edge] = cur
            prev = nfaces + nedges - 1 if i == 0 else cur - 1
            dist2 = _attach_face(ws, wi, b, a, prev, hzn_face, nfaces + (i + 1) % nedges)
            if dist2 == 0:
                failed = True
                break
            if dist2 >= lower2 and dist2 <= upper2:
                _map_add(faceid, lst, count[NFACES] - 1)
        count[NEDGES] = 0
        if failed:
            f = -1
            break
        if count[NMAP] == 0:
            break
        k += 1
    if f < 0:
        return False, 0.0, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
    dist, x1, x2 = _epa_witness(ws, f)
    # 4.0.0: the face's vertices replace GJK's simplex as the contact features
    for i in range(3):
        _copy_row(simplex, SAVED + i, vert, faceid[f, FACEID_VERT + i])
    return True, dist, x1, x2


# ---- mjc_ccd, mjc_penetration, mjc_Convex -----------------------------------------------------------


@kernel
def _inflate(x1, x2, dist, margin1, margin2):
    """Witness points and distance of the shrunk shapes grown back by margin1 and margin2
    along n = (x2 - x1) / |x2 - x1| (inflate): x1 + margin1 n, x2 - margin2 n."""
    n, _ = normalize3(sub3(x2, x1))
    if margin1:
        x1 = (x1[0] + margin1 * n[0], x1[1] + margin1 * n[1], x1[2] + margin1 * n[2])
    if margin2:
        x2 = (x2[0] - margin2 * n[0], x2[1] - margin2 * n[1], x2[2] - margin2 * n[2])
    return x1, x2, dist - (margin1 + margin2)


@kernel
def _shrink(obj):
    """Shrink a sphere to its centre, a capsule to its segment, and take every geom's
    margin off (4.0.0); returns what was taken off: radius + margin/2, or margin/2."""
    gtype = int(obj[OBJ_TYPE])
    if gtype != GEOM_SPHERE and gtype != GEOM_CAPSULE:
        full = 0.5 * obj[OBJ_MARGIN]
        obj[OBJ_MARGIN] = 0.0
        return full
    full = obj[OBJ_SIZE] + 0.5 * obj[OBJ_MARGIN]
    obj[OBJ_MODE] = MODE_POINT if gtype == GEOM_SPHERE else MODE_LINE
    obj[OBJ_MARGIN] = 0.0
    return full


@kernel
def _save_simplex(simplex, n):
    """Keep rows 0..min(n, 3)-1 of GJK's simplex in rows SAVED.. for the multi-contact search."""
    for i in range(3 if n > 3 else n):
        _copy_row(simplex, SAVED + i, simplex, i)


@kernel
def _multi_view(o, ids):
    """An object of ws as the multi-contact search takes a geom: (type, pos, mat, size,
    margin, its mesh block, the ids of its vertices in the saved simplex)."""
    return (
        int(o[OBJ_TYPE]),
        o[OBJ_POS : OBJ_POS + 3],
        o[OBJ_MAT : OBJ_MAT + 9],
        o[OBJ_SIZE : OBJ_SIZE + 3],
        o[OBJ_MARGIN],
        o[OBJ_WIDTH:],
        ids,
    )


@outline
def _multi(ws, maxcon, nsimplex, x1, x2):
    """The multi-contact search (collision_multi.multicontact) after a penetrating first
    contact (x1, x2): its count (0: keep the one contact); the pairs are in ws's poly rows."""
    obj, simplex, vert, face, faceid, lst, poly = ws
    o1 = obj[0]
    o2 = obj[1]
    t1 = int(o1[OBJ_TYPE])
    t2 = int(o2[OBJ_TYPE])
    g1 = _multi_view(o1, simplex[SAVED : SAVED + 3, VERT_I1])
    g2 = _multi_view(o2, simplex[SAVED : SAVED + 3, VERT_I2])
    # 4.0.0: the faces are the bare surfaces; each geom but a capsule adds half its margin
    m1 = 0.0 if t1 == GEOM_CAPSULE else 0.5 * o1[OBJ_MARGIN]
    m2 = 0.0 if t2 == GEOM_CAPSULE else 0.5 * o2[OBJ_MARGIN]
    v1 = simplex[SAVED : SAVED + 3, VERT1 : VERT1 + 3]
    v2 = simplex[SAVED : SAVED + 3, VERT2 : VERT2 + 3]
    return M.multicontact(poly, g1, g2, v1, v2, nsimplex, nsimplex, x1, x2, m1, m2, maxcon)


@kernel
def _ccd(ws, tolerance, iterations, maxcon):
    """Signed distance and witness points of the two objects of ws (mjc_ccd with no
    distance cutoff; module docstring, steps 2-4). Returns (dist, nx, x1, x2): dist < 0 is
    penetration, nx the number of witness pairs: 0 or 1 (x1, x2), or, when maxcon > 1 and
    the multi-contact search finds some, their number (the pairs in ws's poly rows, the
    first also in x1, x2; dist their smallest distance)."""
    obj, simplex, vert, face, faceid, lst, poly = ws
    obj1 = obj[0]
    obj2 = obj[1]
    center1 = _center(obj1)
    center2 = _center(obj2)
    t1 = int(obj1[OBJ_TYPE])
    t2 = int(obj2[OBJ_TYPE])
    round1 = t1 == GEOM_SPHERE or t1 == GEOM_CAPSULE or obj1[OBJ_MARGIN] > 0
    round2 = t2 == GEOM_SPHERE or t2 == GEOM_CAPSULE or obj2[OBJ_MARGIN] > 0
    if round1 or round2:
        # distance between the shrunk shapes, then grow them back (4.0.0: with any margin)
        margin1 = obj1[OBJ_MARGIN]
        margin2 = obj2[OBJ_MARGIN]
        full1 = _shrink(obj1)
        full2 = _shrink(obj2)
        dist, nsimplex, separated, nx, x1, x2 = _gjk(
            simplex, obj1, obj2, center1, center2, tolerance, iterations, full1 + full2
        )
        _save_simplex(simplex, nsimplex)
        obj1[OBJ_MODE] = MODE_SHAPE
        obj2[OBJ_MODE] = MODE_SHAPE
        obj1[OBJ_MARGIN] = margin1
        obj2[OBJ_MARGIN] = margin2
        if dist > tolerance:  # shallow: exact from the shrunk shapes
            x1, x2, dist = _inflate(x1, x2, dist, full1, full2)
            if dist > 0:
                dist = MAX_LIMIT
            elif dist < 0 and maxcon >= 2 and nsimplex > 0:
                # 4.0.0: the multi-contact search also follows a shallow contact
                nm = _multi(ws, maxcon, nsimplex, x1, x2)
                if nm > 0:  # (one found replaces the first contact)
                    return _min_dist(poly, nm), nm, row3(poly, R_X1, 0), row3(poly, R_X2, 0)
            return dist, nx, x1, x2
        # deep: GJK and EPA on the full shapes
    dist, nsimplex, separated, nx, x1, x2 = _gjk(
        simplex, obj1, obj2, center1, center2, tolerance, iterations, 0.0
    )
    _save_simplex(simplex, nsimplex)
    if dist <= tolerance and nsimplex > 1 and not separated:
        dist = 0.0  # assume touching
        count = lst[LIST_COUNT]
        for i in range(4):
            count[i] = 0
        if nsimplex == 2:
            ret = _polytope2(ws, obj1, obj2, tolerance)
        elif nsimplex == 3:
            ret = _polytope3(ws, obj1, obj2, tolerance)
        else:
            ret = _polytope4(ws, obj1, obj2, tolerance)
        if ret == 0:
            found, dist, x1, x2 = _epa(ws, obj1, obj2, tolerance, iterations, 6 * iterations)
            nx = 1 if found else 0
            if found and maxcon >= 2:
                nm = _multi(ws, maxcon, 3, x1, x2)  # the features of EPA's face
                if nm > 0:
                    return _min_dist(poly, nm), nm, row3(poly, R_X1, 0), row3(poly, R_X2, 0)
    return dist, nx, x1, x2


@kernel
def _min_dist(poly, n):
    """The smallest distance of the multi-contact search's n pairs (mjc_ccd's return)."""
    d = poly[R_D, 0]
    for k in range(1, n):
        d = min(d, poly[R_D + k, 0])
    return d


@kernel
def _put_contact(con, row, x1, x2, dist, margin):
    """Contact row `row` of con: dist = margin + dist, pos midway between the witness points,
    normal from x2 to x1 normalized (geom 1 to geom 2)."""
    normal, _ = normalize3(sub3(x1, x2))
    pos = add3(x1, x2)
    for k in range(3):
        con[row, POS + k] = pos[k] * 0.5
        con[row, NORMAL + k] = normal[k]
        con[row, TANGENT + k] = 0.0
    con[row, DIST] = margin + dist


@outline
def _penetration(con, ws, margin, tolerance, iterations, maxcon):
    """Contact rows of con from the objects of ws if they penetrate (mjc_penetration): one
    per witness pair (module docstring, step 5). Returns their number."""
    dist, nx, x1, x2 = _ccd(ws, tolerance, iterations, maxcon)
    if not dist < 0 or nx == 0:
        return 0
    if nx == 1:
        _put_contact(con, 0, x1, x2, dist, margin)
        return 1
    poly = ws[6]
    for k in range(nx):
        _put_contact(con, k, row3(poly, R_X1 + k, 0), row3(poly, R_X2 + k, 0), poly[R_D + k, 0], margin)
    return nx


@kernel
def collide_convex(con, ws, type1, type2, margin, pos1, mat1, size1, pos2, mat2, size2, ccd_opt):
    """Contacts of a pair of CONVEX_PAIRS (mjc_Convex): one for a pair with a sphere or an
    ellipsoid; for capsule : cylinder, cylinder : cylinder and cylinder : box up to
    `maxcon` from the multi-contact search. `ws` is the row's CCD work space
    (collision_driver._convex_pair), `ccd_opt` (ccd_tolerance, ccd_iterations, maxcon),
    `margin` the pair's margin + gap. Writes contact rows 0.. of con; returns their number."""
    tolerance, iterations, maxcon = ccd_opt
    obj = ws[0]
    init_obj(obj[0], type1, size1, pos1, mat1, margin)
    init_obj(obj[1], type2, size2, pos2, mat2, margin)
    return _penetration(con, ws, margin, tolerance, iterations, maxcon)
