"""Stage 9, collision narrow phase: a height field against a convex geom (sphere, capsule,
ellipsoid, cylinder, box), as MuJoCo 4.0.0 collides them (mjc_ConvexHField in
engine_collision_convex.c, with the changes its binary makes, marked "4.0.0").

A height field (`<hfield>` asset, `<geom type="hfield">`) is a grid of nrow x ncol
elevations over the rectangle [-size_x, size_x] x [-size_y, size_y] of its geom frame:
vertex (r, c) lies at

    x_c = c dx - size_x,   y_r = r dy - size_y,   z_rc = data[r ncol + c] size_z,

dx = 2 size_x / (ncol - 1), dy = 2 size_y / (nrow - 1), data the elevations MuJoCo's compiler
normalized to [0, 1] (float32 in MjModel, exact in float64 here); the solid reaches down to
z = -size_base (hfield_size = (size_x, size_y, size_z, size_base)). MuJoCo collides it with
a geom as the union of triangular prisms, two per grid cell, each the convex hull of a
triangle of the surface and the same triangle at z = -size_base:

1. Everything happens in the height field's frame: the geom's centre p = R_h^T (p_g - p_h)
   and orientation R = R_h^T R_g (R_h, p_h the height field's world pose).
2. Early outs: the geom's bounding sphere (rbound + margin about p) misses the box
   [-size_x, size_x] x [-size_y, size_y] x [-size_base, size_z]; then its axis-aligned
   box, from its support points along +-x, +-y, +-z (no margin), grown by the margin, misses
   the same box.
3. The sub-grid under that box: columns floor((x_min - margin + size_x) / (2 size_x) (ncol - 1))
   to ceil((x_max + margin + size_x) / (2 size_x) (ncol - 1)), rows alike, clamped to the
   grid (4.0.0 grows the box by the margin here; the source does not).
4. For each row r and each column c > c_min, two prisms, their top vertices
   {(c-1, r+1), (c-1, r), (c, r+1)} and {(c-1, r), (c, r+1), (c, r)} in MuJoCo's order (the
   prism is a sliding window of the last three grid points, MuJoCo's addPrismVert), each
   skipped when its three top vertices lie below z_min - margin, else collided with the geom
   by the convex collider (collision_convex._penetration with one contact: GJK/EPA on the
   prism's support, `_prism_support`, from the prism's centroid). 4.0.0 inflates both
   objects by margin/2 and reports dist = margin + the distance of the inflated shapes (the
   source raises the prism's top by the margin instead and inflates only the geom).
5. Each contact goes back to the world frame (pos = R_h pos + p_h, normal = R_h normal);
   at most mjMAXCONPAIR (50) contacts, in that order.

No allocation: the prism's six vertices live in the convex collider's first object row
(sizes.OBJ_PRISM), the geom in its second, the contacts in the row's scratch_con.

Plane : height field and height field : height field do not collide in MuJoCo; a mesh or
SDF against a height field is refused at load (no mesh collider here).
"""

import math

from robodyn.engine import collision_convex as C
from robodyn.engine.jit import kernel
from robodyn.engine.sizes import MODE_SHAPE, NORMAL, OBJ_MARGIN, OBJ_MODE, OBJ_PRISM, OBJ_TYPE, POS
from robodyn.engine.spatial import mtm3, mtv3, mv3
from robodyn.engine.types import (
    GEOM_BOX,
    GEOM_CAPSULE,
    GEOM_CYLINDER,
    GEOM_ELLIPSOID,
    GEOM_HFIELD,
    GEOM_SPHERE,
)

# (type1, type2) pairs MuJoCo sends to mjc_ConvexHField and this module collides
HFIELD_PAIRS = frozenset(
    (GEOM_HFIELD, t) for t in (GEOM_SPHERE, GEOM_CAPSULE, GEOM_ELLIPSOID, GEOM_CYLINDER, GEOM_BOX)
)
MAX_CONTACTS = 50  # mjMAXCONPAIR: mj_maxContact for a height-field pair


@kernel
def _add_prism_vertex(prism, x, y, z):
    """Slide the prism's window (addPrismVert): vertices 1, 2 -> 0, 1 at the bottom and
    4, 5 -> 3, 4 at the top; the new grid point (x, y) becomes vertex 2 (bottom, its z stays
    -size_base) and vertex 5 (top, at z)."""
    base = OBJ_PRISM
    for k in range(6):
        prism[base + k] = prism[base + 3 + k]
        prism[base + 9 + k] = prism[base + 12 + k]
    prism[base + 6] = x
    prism[base + 7] = y
    prism[base + 15] = x
    prism[base + 16] = y
    prism[base + 17] = z


@kernel
def _grid_vertex(prism, hsize, ncol, hdata, dx, dy, r, c):
    """Add grid point (row r, column c) to the prism."""
    x = dx * c - hsize[0]
    y = dy * r - hsize[1]
    _add_prism_vertex(prism, x, y, hdata[r * ncol + c] * hsize[2])


@kernel
def _to_world(con, row, pos_h, mat_h):
    """Contact row `row` from the height field's frame to the world's."""
    n = mv3(mat_h, (con[row, NORMAL], con[row, NORMAL + 1], con[row, NORMAL + 2]))
    p = mv3(mat_h, (con[row, POS], con[row, POS + 1], con[row, POS + 2]))
    for k in range(3):
        con[row, NORMAL + k] = n[k]
        con[row, POS + k] = p[k] + pos_h[k]


@kernel
def collide_hfield(con, ws, hfield, type2, rbound2, margin, pos1, mat1, pos2, mat2, size2, ccd_opt):
    """Contacts of a height field (geom 1: pose pos1, mat1) with a convex geom of type2
    (pose pos2, mat2, geom_size size2, bounding radius rbound2) (mjc_ConvexHField of
    MuJoCo 4.0.0; module docstring). `hfield` is (size (4,), nrow, ncol, data (nrow ncol,)),
    `ws` the row's CCD work space, `ccd_opt` (ccd_tolerance, ccd_iterations), `margin` the
    pair's margin + gap. Writes contact rows 0.. of con (at most MAX_CONTACTS), world frame,
    normals from the height field to the geom; returns their number."""
    hsize, nrow, ncol, hdata = hfield
    tolerance, iterations = ccd_opt
    # the geom's centre in the height field's frame, and its bounding sphere against the box
    p = mtv3(mat1, (pos2[0] - pos1[0], pos2[1] - pos1[1], pos2[2] - pos1[2]))
    radius = rbound2 + margin
    if (
        hsize[0] < p[0] - radius
        or -hsize[0] > p[0] + radius
        or hsize[1] < p[1] - radius
        or -hsize[1] > p[1] + radius
        or hsize[2] < p[2] - radius
        or -hsize[3] > p[2] + radius
    ):
        return 0
    obj = ws[0]
    prism = obj[0]
    geom = obj[1]
    # the geom in the height field's frame, inflated by margin/2 (4.0.0: so is the prism)
    C.init_obj(geom, type2, size2, p, mtm3(mat1, mat2), 0.0)
    # its axis-aligned box from its support points (no margin)
    xmax = C._support(geom, (1.0, 0.0, 0.0))[0]
    xmin = C._support(geom, (-1.0, 0.0, 0.0))[0]
    ymax = C._support(geom, (0.0, 1.0, 0.0))[1]
    ymin = C._support(geom, (0.0, -1.0, 0.0))[1]
    zmax = C._support(geom, (0.0, 0.0, 1.0))[2]
    zmin = C._support(geom, (0.0, 0.0, -1.0))[2]
    if (
        xmin - margin > hsize[0]
        or -hsize[0] > xmax + margin
        or ymin - margin > hsize[1]
        or -hsize[1] > ymax + margin
        or zmin - margin > hsize[2]
        or -hsize[3] > zmax + margin
    ):
        return 0
    # the sub-grid under the box, grown by the margin (4.0.0)
    cmin = max(0, int(math.floor((hsize[0] + (xmin - margin)) / (hsize[0] + hsize[0]) * (ncol - 1))))
    cmax = min(ncol - 1, int(math.ceil((hsize[0] + (xmax + margin)) / (hsize[0] + hsize[0]) * (ncol - 1))))
    rmin = max(0, int(math.floor((hsize[1] + (ymin - margin)) / (hsize[1] + hsize[1]) * (nrow - 1))))
    rmax = min(nrow - 1, int(math.ceil((hsize[1] + (ymax + margin)) / (hsize[1] + hsize[1]) * (nrow - 1))))
    geom[OBJ_MARGIN] = margin
    prism[OBJ_TYPE] = GEOM_HFIELD
    prism[OBJ_MODE] = MODE_SHAPE
    prism[OBJ_MARGIN] = margin  # 4.0.0 (the source: 0, and the top raised by the margin)
    dx = (hsize[0] + hsize[0]) / (ncol - 1)
    dy = (hsize[1] + hsize[1]) / (nrow - 1)
    for i in range(3):  # the bottom at -size_base
        prism[OBJ_PRISM + 3 * i + 2] = -hsize[3]
    zlow = zmin - margin  # 4.0.0: prisms entirely below z_min - margin are skipped
    ncon = 0
    for r in range(rmin, rmax):
        _grid_vertex(prism, hsize, ncol, hdata, dx, dy, r + 1, cmin)
        _grid_vertex(prism, hsize, ncol, hdata, dx, dy, r, cmin)
        for c in range(cmin + 1, cmax + 1):
            for i in range(2):
                _grid_vertex(prism, hsize, ncol, hdata, dx, dy, r + 1 - i, c)
                top = OBJ_PRISM + 9
                if prism[top + 2] < zlow and prism[top + 5] < zlow and prism[top + 8] < zlow:
                    continue
                if C._penetration(con[ncon:], ws, margin, tolerance, iterations, 1):
                    _to_world(con, ncon, pos1, mat1)
                    ncon += 1
                    if ncon >= MAX_CONTACTS:
                        return ncon
    return ncon
