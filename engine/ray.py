"""Ray casting: where the half-line p + x v (x >= 0) first meets a primitive geom, and the
nearest geom of a model that it meets (MuJoCo's mju_rayGeom and mj_ray, engine_ray.c).

The functions follow engine_ray.c case by case (same bounding tests, same branch and
arithmetic order), so distances agree with MuJoCo's to rounding. x is in units of |v|
(the rangefinder and touch sensors pass unit vectors, so x is a length).

Every intersection function returns a 4-tuple (x, n0, n1, n2): the smallest x >= 0 where
the ray meets the surface, -1 if it does not, and the unit outward normal n there in
world coordinates (zero without a hit). A ray that starts inside a closed geom meets its
surface on the way out (x >= 0), so "inside" counts as a hit. Geom frames: `pos` (3,) the
centre, `mat` (9,) row-major with column k the local axis k in world coordinates, `size`
(3,) MuJoCo's geom_size. In the local frame (lp = mat^T (p - pos), lv = mat^T v):

- plane: local z = 0, seen from its front (+z) side only (lv_z < 0), within the rendered
  rectangle |lx| <= size[0], |ly| <= size[1] (a size <= 0 is unbounded): x = -lp_z / lv_z.
- sphere: |p + x v - pos|^2 = r^2, the smallest non-negative root of the quadratic
  a x^2 + 2 b x + c = 0 (ray_quad).
- capsule: the side |lp_xy + x lv_xy| = r between the caps (|z| <= size[1]), and the upper
  (z >= size[1]) and lower half of the two end spheres; the nearest of the three.
- ellipsoid: sum_k ((lp_k + x lv_k) / size_k)^2 = 1.
- cylinder: the two flat faces z = +-size[1] within radius, and the side between them.
- box: each of the six faces within its rectangle, for axes with |lv_k| > MINVAL.
Capsule, cylinder and box first test the ray against their bounding sphere (MuJoCo's
order of tests, kept so that rounding at the rim agrees too).

mj_ray skips a geom on the excluded body and an invisible one: without a material, rgba
alpha 0; with a material, the material's alpha 0 (the geom's own rgba then does not
count). It has geomgroup and flg_static arguments too; the rangefinder passes NULL (every
group) and 1 (static geoms seen), the only case implemented here. Mesh, height-field
and SDF geoms have no ray code here: the loader refuses a rangefinder in a model with
one that its ray could meet (engine.model), so `ray` never sees them.
"""

import math

from engine.collision_primitive import (
    GEOM_BOX,
    GEOM_CAPSULE,
    GEOM_CYLINDER,
    GEOM_ELLIPSOID,
    GEOM_PLANE,
    GEOM_SPHERE,
)
from engine.jit import kernel
from engine.spatial import MINVAL, mtv3, mv3, unit3

NO_HIT = (-1.0, 0.0, 0.0, 0.0)


@kernel
def _ray_map(pos, mat, pnt, vec):
    """The ray in the geom's local frame: (mat^T (pnt - pos), mat^T vec)."""
    lp = mtv3(mat, (pnt[0] - pos[0], pnt[1] - pos[1], pnt[2] - pos[2]))
    lv = mtv3(mat, vec)
    return lp, lv


@kernel
def _ray_quad(a, b, c):
    """Real roots x0 <= x1 of a x^2 + 2 b x + c = 0 and the smallest non-negative one:
    (x, x0, x1), x = -1 if both are negative; (-1, -1, -1) without real roots or for
    a < MINVAL (MuJoCo's ray_quad)."""
    det = b * b - a * c
    if det < 0 or a < MINVAL:
        return -1.0, -1.0, -1.0
    det = math.sqrt(det)
    x0 = (-b - det) / a
    x1 = (-b + det) / a
    if x0 >= 0:
        return x0, x0, x1
    if x1 >= 0:
        return x1, x0, x1
    return -1.0, x0, x1


@kernel
def _sphere_dist(pos, dist_sqr, pnt, vec):
    """Smallest x >= 0 with |pnt + x vec - pos|^2 = dist_sqr, -1 if none."""
    d0, d1, d2 = pnt[0] - pos[0], pnt[1] - pos[1], pnt[2] - pos[2]
    a = vec[0] * vec[0] + vec[1] * vec[1] + vec[2] * vec[2]
    b = vec[0] * d0 + vec[1] * d1 + vec[2] * d2
    c = d0 * d0 + d1 * d1 + d2 * d2 - dist_sqr
    return _ray_quad(a, b, c)[0]


@kernel
def ray_plane(pos, mat, size, pnt, vec):
    """(x, normal) of the ray against a plane geom, front side and rendered rectangle only."""
    lp, lv = _ray_map(pos, mat, pnt, vec)
    if lv[2] > -MINVAL:  # not pointing towards the front face
        return NO_HIT
    x = -lp[2] / lv[2]
    if x < 0:
        return NO_HIT
    p0 = lp[0] + x * lv[0]
    p1 = lp[1] + x * lv[1]
    if (size[0] <= 0 or abs(p0) <= size[0]) and (size[1] <= 0 or abs(p1) <= size[1]):
        return (x, mat[2], mat[5], mat[8])
    return NO_HIT


@kernel
def ray_sphere(pos, radius, pnt, vec):
    """(x, normal) of the ray against a sphere of `radius` centred at pos."""
    x = _sphere_dist(pos, radius * radius, pnt, vec)
    if x < 0:
        return NO_HIT
    s = (pnt[0] + vec[0] * x, pnt[1] + vec[1] * x, pnt[2] + vec[2] * x)
    n = unit3((s[0] - pos[0], s[1] - pos[1], s[2] - pos[2]))
    return (x, n[0], n[1], n[2])


@kernel
def ray_capsule(pos, mat, size, pnt, vec):
    """(x, normal) of the ray against a capsule (radius size[0], half-length size[1] along z)."""
    ssz = size[0] + size[1]
    if _sphere_dist(pos, ssz * ssz, pnt, vec) < 0:
        return NO_HIT
    lp, lv = _ray_map(pos, mat, pnt, vec)
    r2 = size[0] * size[0]
    x = -1.0
    part = 0  # -1 bottom cap, 0 side, 1 top cap
    # side: |lp_xy + x lv_xy|^2 = r^2, between the caps
    a = lv[0] * lv[0] + lv[1] * lv[1]
    b = lv[0] * lp[0] + lv[1] * lp[1]
    c = lp[0] * lp[0] + lp[1] * lp[1] - r2
    sol = _ray_quad(a, b, c)[0]
    if sol >= 0 and abs(lp[2] + sol * lv[2]) <= size[1]:
        x = sol
    # the two end spheres: only their outer halves
    a = lv[0] * lv[0] + lv[1] * lv[1] + lv[2] * lv[2]
    for side in (1, -1):
        dz = lp[2] - side * size[1]
        b = lv[0] * lp[0] + lv[1] * lp[1] + lv[2] * dz
        c = lp[0] * lp[0] + lp[1] * lp[1] + dz * dz - r2
        _, x0, x1 = _ray_quad(a, b, c)
        for xx in (x0, x1):
            z = lp[2] + xx * lv[2]
            outer = z >= size[1] if side == 1 else z <= -size[1]
            if xx >= 0 and outer and (x < 0 or xx < x):
                x = xx
                part = side
    if x < 0:
        return NO_HIT
    nz = 0.0 if part == 0 else lp[2] + lv[2] * x - size[1] * part
    n = mv3(mat, unit3((lp[0] + lv[0] * x, lp[1] + lv[1] * x, nz)))
    return (x, n[0], n[1], n[2])


@kernel
def ray_ellipsoid(pos, mat, size, pnt, vec):
    """(x, normal) of the ray against an ellipsoid with semi-axes size (local x, y, z)."""
    lp, lv = _ray_map(pos, mat, pnt, vec)
    s0 = 1 / (size[0] * size[0])
    s1 = 1 / (size[1] * size[1])
    s2 = 1 / (size[2] * size[2])
    a = s0 * lv[0] * lv[0] + s1 * lv[1] * lv[1] + s2 * lv[2] * lv[2]
    b = s0 * lv[0] * lp[0] + s1 * lv[1] * lp[1] + s2 * lv[2] * lp[2]
    c = s0 * lp[0] * lp[0] + s1 * lp[1] * lp[1] + s2 * lp[2] * lp[2] - 1
    x = _ray_quad(a, b, c)[0]
    if x < 0:
        return NO_HIT
    # normal: the gradient of the ellipsoid function at the hit, diag(s) l
    g = (s0 * (lp[0] + lv[0] * x), s1 * (lp[1] + lv[1] * x), s2 * (lp[2] + lv[2] * x))
    n = mv3(mat, unit3(g))
    return (x, n[0], n[1], n[2])


@kernel
def ray_cylinder(pos, mat, size, pnt, vec):
    """(x, normal) of the ray against a cylinder (radius size[0], half-length size[1] along z)."""
    ssz = size[0] * size[0] + size[1] * size[1]
    if _sphere_dist(pos, ssz, pnt, vec) < 0:
        return NO_HIT
    lp, lv = _ray_map(pos, mat, pnt, vec)
    r2 = size[0] * size[0]
    x = -1.0
    part = 0  # -1 bottom face, 0 side, 1 top face
    # flat faces: lp_z + x lv_z = side * size[1], within the radius
    if abs(lv[2]) > MINVAL:
        for side in (-1, 1):
            sol = (side * size[1] - lp[2]) / lv[2]
            if sol >= 0:
                p0 = lp[0] + sol * lv[0]
                p1 = lp[1] + sol * lv[1]
                if p0 * p0 + p1 * p1 <= r2 and (x < 0 or sol < x):
                    x = sol
                    part = side
    # side: |lp_xy + x lv_xy|^2 = r^2, between the faces
    a = lv[0] * lv[0] + lv[1] * lv[1]
    b = lv[0] * lp[0] + lv[1] * lp[1]
    c = lp[0] * lp[0] + lp[1] * lp[1] - r2
    sol = _ray_quad(a, b, c)[0]
    if sol >= 0 and abs(lp[2] + sol * lv[2]) <= size[1] and (x < 0 or sol < x):
        x = sol
        part = 0
    if x < 0:
        return NO_HIT
    if part == 0:
        nl = unit3((lp[0] + lv[0] * x, lp[1] + lv[1] * x, 0.0))
    else:
        nl = (0.0, 0.0, float(part))
    n = mv3(mat, nl)
    return (x, n[0], n[1], n[2])


@kernel
def ray_box(pos, mat, size, pnt, vec):
    """(x, normal) of the ray against a box with half-sizes size."""
    ssz = size[0] * size[0] + size[1] * size[1] + size[2] * size[2]
    if _sphere_dist(pos, ssz, pnt, vec) < 0:
        return NO_HIT
    lp, lv = _ray_map(pos, mat, pnt, vec)
    x = -1.0
    axis = 0
    sign = 0.0
    for i in range(3):
        if abs(lv[i]) > MINVAL:
            # the other two axes, in MuJoCo's order: (1, 2), (0, 2), (0, 1)
            j = 1 if i == 0 else 0
            k = 1 if i == 2 else 2
            for side in (-1, 1):
                sol = (side * size[i] - lp[i]) / lv[i]
                if sol >= 0:
                    p0 = lp[j] + sol * lv[j]
                    p1 = lp[k] + sol * lv[k]
                    if abs(p0) <= size[j] and abs(p1) <= size[k] and (x < 0 or sol < x):
                        x = sol
                        axis = i
                        sign = float(side)
    if x < 0:
        return NO_HIT
    # normal: the face's local axis, signed, in world coordinates (column `axis` of mat)
    return (x, mat[axis] * sign, mat[3 + axis] * sign, mat[6 + axis] * sign)


@kernel
def ray_geom(pos, mat, size, pnt, vec, geomtype):
    """(x, normal) of the ray pnt + x vec against a primitive geom (MuJoCo's mju_rayGeom):
    plane, sphere, capsule, ellipsoid, cylinder or box; NO_HIT for any other type."""
    if geomtype == GEOM_PLANE:
        return ray_plane(pos, mat, size, pnt, vec)
    if geomtype == GEOM_SPHERE:
        return ray_sphere(pos, size[0], pnt, vec)
    if geomtype == GEOM_CAPSULE:
        return ray_capsule(pos, mat, size, pnt, vec)
    if geomtype == GEOM_ELLIPSOID:
        return ray_ellipsoid(pos, mat, size, pnt, vec)
    if geomtype == GEOM_CYLINDER:
        return ray_cylinder(pos, mat, size, pnt, vec)
    if geomtype == GEOM_BOX:
        return ray_box(pos, mat, size, pnt, vec)
    return NO_HIT


@kernel
def ray_visible(m, g):
    """True unless geom g is invisible to mj_ray: alpha 0 in its material's rgba, or, without
    a material, in its own."""
    mat = m.geom_matid[g]
    if mat < 0:
        return m.geom_rgba[g, 3] != 0
    return m.mat_rgba[mat, 3] != 0


@kernel
def ray(m, d, b, pnt, vec, bodyexclude):
    """Nearest geom of row b that the ray pnt + x vec (x >= 0) meets (MuJoCo's mj_ray with
    geomgroup NULL and flg_static 1): (x, geom, n0, n1, n2), x = -1 and geom = -1 if none.

    Skips the geoms of body `bodyexclude` (-1: none) and invisible geoms (ray_visible);
    on a tie the lower geom id wins. pnt, vec: 3-tuples, world coordinates.
    """
    dist = -1.0
    geom = -1
    n0 = n1 = n2 = 0.0
    for g in range(m.ngeom):
        if m.geom_bodyid[g] == bodyexclude or not ray_visible(m, g):
            continue
        hit = ray_geom(d.geom_xpos[b, g], d.geom_xmat[b, g], m.geom_size[g], pnt, vec, m.geom_type[g])
        if hit[0] >= 0 and (hit[0] < dist or dist < 0):
            dist = hit[0]
            geom = g
            n0, n1, n2 = hit[1], hit[2], hit[3]
    return dist, geom, n0, n1, n2
