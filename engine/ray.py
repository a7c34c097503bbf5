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
group) and 1 (static geoms seen), the only case implemented here. Mesh and SDF geoms
have no ray code here: the loader refuses a rangefinder in a model with one that its ray
could meet (engine.checks), so `ray` never sees them.

Height field (`ray_hfield`, MuJoCo's mj_rayHfield; the grid as in engine/collision_hfield.py):
the nearest of the base box (below z = 0, the solid's part under the grid), the surface
triangles over the grid cells the ray crosses inside the top box (z in [0, size_z]; two
triangles a cell, (c, r) (c+1, r) (c+1, r+1) and (c, r) (c+1, r+1) (c, r+1), each tested in
the plane normal to the ray, `_ray_triangle`), and the top box's four sides where the hit
lies below the grid's edge profile.
"""

import math

from robodyn.engine.jit import kernel
from robodyn.engine.spatial import cross3, dot3, mtv3, mv3, unit3
from robodyn.engine.types import (
    GEOM_BOX,
    GEOM_CAPSULE,
    GEOM_CYLINDER,
    GEOM_ELLIPSOID,
    GEOM_HFIELD,
    GEOM_PLANE,
    GEOM_SPHERE,
    MINVAL,
)

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
    """(x, normal) of the ray against a box with half-sizes size: the nearest face hit
    within its rectangle (_ray_box_all without the per-face hits)."""
    x, normal, _ = _ray_box_all(pos, mat, size, pnt, vec)
    if x < 0:
        return NO_HIT
    return (x, normal[0], normal[1], normal[2])


@kernel
def _ray_box_all(pos, mat, size, pnt, vec):
    """ray_box, with MuJoCo's `all`: (x, normal, all), all[2 i + (side + 1) / 2] the hit of the
    face on local axis i at side -1 or +1 when it lies within the face, else -1."""
    a0 = a1 = a2 = a3 = a4 = a5 = -1.0
    ssz = size[0] * size[0] + size[1] * size[1] + size[2] * size[2]
    if _sphere_dist(pos, ssz, pnt, vec) < 0:
        return -1.0, (0.0, 0.0, 0.0), (a0, a1, a2, a3, a4, a5)
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
                    if abs(p0) <= size[j] and abs(p1) <= size[k]:
                        if x < 0 or sol < x:
                            x = sol
                            axis = i
                            sign = float(side)
                        face = 2 * i + (side + 1) // 2
                        if face == 0:
                            a0 = sol
                        elif face == 1:
                            a1 = sol
                        elif face == 2:
                            a2 = sol
                        elif face == 3:
                            a3 = sol
                        elif face == 4:
                            a4 = sol
                        else:
                            a5 = sol
    normal = (0.0, 0.0, 0.0)
    if x >= 0:
        normal = (mat[axis] * sign, mat[3 + axis] * sign, mat[6 + axis] * sign)
    return x, normal, (a0, a1, a2, a3, a4, a5)


@kernel
def _ray_triangle(v0, v1, v2, lp, lv, b0, b1):
    """(x, normal) of the ray lp + x lv against triangle v0 v1 v2 (ray_triangle): the
    vertices projected on the plane normal to the ray (basis b0, b1) must surround the
    origin; x where the ray meets the triangle's plane (any sign), normal (v0 - v2) x
    (v1 - v2) normalized; (-1, 0) on a miss."""
    d0 = (v0[0] - lp[0], v0[1] - lp[1], v0[2] - lp[2])
    d1 = (v1[0] - lp[0], v1[1] - lp[1], v1[2] - lp[2])
    d2 = (v2[0] - lp[0], v2[1] - lp[1], v2[2] - lp[2])
    p00, p01 = dot3(b0, d0), dot3(b1, d0)
    p10, p11 = dot3(b0, d1), dot3(b1, d1)
    p20, p21 = dot3(b0, d2), dot3(b1, d2)
    miss = (0.0, 0.0, 0.0)
    if (
        (p00 > 0 and p10 > 0 and p20 > 0)
        or (p00 < 0 and p10 < 0 and p20 < 0)
        or (p01 > 0 and p11 > 0 and p21 > 0)
        or (p01 < 0 and p11 < 0 and p21 < 0)
    ):
        return -1.0, miss
    a0, a1, a2, a3 = p00 - p20, p10 - p20, p01 - p21, p11 - p21
    c0, c1 = -p20, -p21
    det = a0 * a3 - a1 * a2
    if abs(det) < MINVAL:
        return -1.0, miss
    t0 = (a3 * c0 - a1 * c1) / det
    t1 = (-a2 * c0 + a0 * c1) / det
    if t0 < 0 or t1 < 0 or t0 + t1 > 1:
        return -1.0, miss
    e0 = (v0[0] - v2[0], v0[1] - v2[1], v0[2] - v2[2])
    e1 = (v1[0] - v2[0], v1[1] - v2[1], v1[2] - v2[2])
    e2 = (lp[0] - v2[0], lp[1] - v2[1], lp[2] - v2[2])
    nrm = cross3(e0, e1)
    denom = dot3(lv, nrm)
    if abs(denom) < MINVAL:
        return -1.0, miss
    return -dot3(e2, nrm) / denom, unit3(nrm)


@kernel
def _grid_point(hsize, ncol, hdata, dx, dy, r, c):
    return (dx * c - hsize[0], dy * r - hsize[1], hdata[r * ncol + c] * hsize[2])


@kernel
def ray_hfield(pos, mat, hfield, pnt, vec):
    """(x, normal) of the ray against a height field (MuJoCo's mj_rayHfield; module
    docstring). `hfield` is (size (4,), nrow, ncol, data (nrow ncol,))."""
    hsize, nrow, ncol, hdata = hfield
    half_base = hsize[3] * 0.5
    half_top = hsize[2] * 0.5
    base_pos = (
        pos[0] - mat[2] * hsize[3] * 0.5,
        pos[1] - mat[5] * hsize[3] * 0.5,
        pos[2] - mat[8] * hsize[3] * 0.5,
    )
    top_pos = (
        pos[0] + mat[2] * hsize[2] * 0.5,
        pos[1] + mat[5] * hsize[2] * 0.5,
        pos[2] + mat[8] * hsize[2] * 0.5,
    )
    x, normal_base, _ = _ray_box_all(base_pos, mat, (hsize[0], hsize[1], half_base), pnt, vec)
    top, _, faces = _ray_box_all(top_pos, mat, (hsize[0], hsize[1], half_top), pnt, vec)
    if top < 0:
        if x >= 0:
            return (x, normal_base[0], normal_base[1], normal_base[2])
        return NO_HIT
    lp, lv = _ray_map(pos, mat, pnt, vec)
    # a basis (b0, b1) of the plane normal to the ray
    b0 = (1.0, 1.0, 1.0)
    if abs(lv[0]) >= abs(lv[1]) and abs(lv[0]) >= abs(lv[2]):
        b0 = (0.0, 1.0, 1.0)
    elif abs(lv[1]) >= abs(lv[2]):
        b0 = (1.0, 0.0, 1.0)
    else:
        b0 = (1.0, 1.0, 0.0)
    scl = -dot3(lv, b0) / dot3(lv, lv)
    b1 = unit3((b0[0] + scl * lv[0], b0[1] + scl * lv[1], b0[2] + scl * lv[2]))
    b0 = unit3(cross3(b1, lv))
    # the stretch of the ray inside the top box
    seg0 = 0.0
    seg1 = top
    for i in range(6):
        if faces[i] > seg1:
            seg0 = top
            seg1 = faces[i]
    dx = (2.0 * hsize[0]) / (ncol - 1)
    dy = (2.0 * hsize[1]) / (nrow - 1)
    sx0 = (lp[0] + seg0 * lv[0] + hsize[0]) / dx
    sx1 = (lp[0] + seg1 * lv[0] + hsize[0]) / dx
    sy0 = (lp[1] + seg0 * lv[1] + hsize[1]) / dy
    sy1 = (lp[1] + seg1 * lv[1] + hsize[1]) / dy
    # the cells under it, one cell of padding
    cmin = max(0, int(math.floor(sx0 if sx0 < sx1 else sx1)) - 1)
    cmax = min(ncol - 1, int(math.ceil(sx0 if sx0 > sx1 else sx1)) + 1)
    rmin = max(0, int(math.floor(sy0 if sy0 < sy1 else sy1)) - 1)
    rmax = min(nrow - 1, int(math.ceil(sy0 if sy0 > sy1 else sy1)) + 1)
    nloc = (0.0, 0.0, 0.0)
    if x >= 0:
        nloc = mtv3(mat, normal_base)
    for r in range(rmin, rmax):
        for c in range(cmin, cmax):
            p00 = _grid_point(hsize, ncol, hdata, dx, dy, r, c)
            p11 = _grid_point(hsize, ncol, hdata, dx, dy, r + 1, c + 1)
            sol, ntri = _ray_triangle(
                p00, _grid_point(hsize, ncol, hdata, dx, dy, r, c + 1), p11, lp, lv, b0, b1
            )
            if sol >= 0 and (x < 0 or sol < x):
                x = sol
                nloc = ntri
            sol, ntri = _ray_triangle(
                p00, p11, _grid_point(hsize, ncol, hdata, dx, dy, r + 1, c), lp, lv, b0, b1
            )
            if sol >= 0 and (x < 0 or sol < x):
                x = sol
                nloc = ntri
    # the top box's sides, below the grid's edge profile
    for i in range(4):
        xi = faces[i]
        if xi >= 0 and (xi < x or x < 0):
            z = (lp[2] + xi * lv[2]) / hsize[2]
            if i < 2:
                y = (lp[1] + xi * lv[1] + hsize[1]) / dy
                y0 = math.floor(y)
                y0 = nrow - 2 if nrow - 2 < y0 else y0
                y0 = 0.0 if 0 > y0 else y0
                col = ncol - 1 if i == 1 else 0
                z0 = hdata[int(y0) * ncol + col]
                z1 = hdata[int(y0 + 1) * ncol + col]
            else:
                y = (lp[0] + xi * lv[0] + hsize[0]) / dx
                y0 = math.floor(y)
                y0 = ncol - 2 if ncol - 2 < y0 else y0
                y0 = 0.0 if 0 > y0 else y0
                row = (nrow - 1) * ncol if i == 3 else 0
                z0 = hdata[int(y0) + row]
                z1 = hdata[int(y0 + 1) + row]
            if z < z0 * (y0 + 1 - y) + z1 * (y - y0):
                x = xi
                nloc = (
                    -1.0 if i == 0 else (1.0 if i == 1 else 0.0),
                    -1.0 if i == 2 else (1.0 if i == 3 else 0.0),
                    0.0,
                )
    if x < 0:
        return NO_HIT
    n = mv3(mat, nloc)
    return (x, n[0], n[1], n[2])


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
        if m.geom_type[g] == GEOM_HFIELD:
            h = m.geom_dataid[g]
            adr = m.hfield_adr[h]
            nrow = m.hfield_nrow[h]
            ncol = m.hfield_ncol[h]
            hfield = (m.hfield_size[h], nrow, ncol, m.hfield_data[adr : adr + nrow * ncol])
            hit = ray_hfield(d.geom_xpos[b, g], d.geom_xmat[b, g], hfield, pnt, vec)
        else:
            hit = ray_geom(d.geom_xpos[b, g], d.geom_xmat[b, g], m.geom_size[g], pnt, vec, m.geom_type[g])
        if hit[0] >= 0 and (hit[0] < dist or dist < 0):
            dist = hit[0]
            geom = g
            n0, n1, n2 = hit[1], hit[2], hit[3]
    return dist, geom, n0, n1, n2
