"""The shapes of the collision stages' work arrays: their row layouts and the sizes a Model
gives them.

Data declares a work array for each collider (`scratch_con`, `scratch_boxbox`,
`scratch_ccd_*`, engine/data.py), and some of its sizes are derived from the Model
(engine/fields.py: `nccdvert`, `nccdface`, `nccdpoly`, `nccdobj`). The layouts of those
arrays live here, once, so that the declarations read them without importing a stage and
the stages that fill the arrays (collision_primitive, collision_convex, collision_mesh,
collision_multi, collision_hfield) import them from here. Plain numbers and NumPy only:
nothing here is compiled.
"""

import numpy as np

from robodyn.engine.types import (
    GEOM_BOX,
    GEOM_CAPSULE,
    GEOM_CYLINDER,
    GEOM_ELLIPSOID,
    GEOM_HFIELD,
    GEOM_MESH,
    GEOM_SPHERE,
)

# ---- contacts of one geom pair (collision_primitive's `con`, Data.scratch_con) --------------------

POS = 0  # contact position (3)
NORMAL = 3  # unit normal from geom 1 to geom 2 (3)
TANGENT = 6  # first tangent hint of the contact frame, 0 for none (3)
DIST = 9  # signed distance along the normal
CON_WIDTH = 10
CON_MAX = 50  # most contacts a collider here returns (a height-field pair: mjMAXCONPAIR)

# ---- box : box clipping (collision_primitive, Data.scratch_boxbox) --------------------------------

BOXBOX_MAXVERT = 12  # vertex capacity of the clipped polygon (a clipped 4-gon has <= 8)
BOXBOX_WORK = (3, BOXBOX_MAXVERT, 3)  # shape of the work array: two polygons, accepted points

# ---- the convex collider (collision_convex, Data.scratch_ccd_*) -----------------------------------

# (type1, type2), type1 <= type2: pairs MuJoCo hands to mjc_Convex and collision_convex collides
CONVEX_PAIRS = frozenset(
    {
        (GEOM_SPHERE, GEOM_ELLIPSOID),
        (GEOM_CAPSULE, GEOM_ELLIPSOID),
        (GEOM_ELLIPSOID, GEOM_ELLIPSOID),
        (GEOM_ELLIPSOID, GEOM_CYLINDER),
        (GEOM_ELLIPSOID, GEOM_BOX),
        (GEOM_CAPSULE, GEOM_CYLINDER),
        (GEOM_CYLINDER, GEOM_CYLINDER),
        (GEOM_CYLINDER, GEOM_BOX),
        (GEOM_SPHERE, GEOM_MESH),
        (GEOM_CAPSULE, GEOM_MESH),
        (GEOM_ELLIPSOID, GEOM_MESH),
        (GEOM_CYLINDER, GEOM_MESH),
        (GEOM_BOX, GEOM_MESH),
        (GEOM_MESH, GEOM_MESH),
    }
)

# one object (mjCCDObj): a row of OBJ_WIDTH numbers
OBJ_TYPE = 0  # geom type
OBJ_MODE = 1  # MODE_SHAPE, or MODE_POINT / MODE_LINE while a sphere / capsule is shrunk
OBJ_MARGIN = 2  # the pair's margin + gap: each geom is inflated by half of it
OBJ_SIZE = 3  # geom_size (3)
OBJ_POS = 6  # geom centre, world (3)
OBJ_MAT = 9  # geom orientation, world, row-major (9)
OBJ_PRISM = 3  # a height field's prism (collision_hfield): 6 vertices (18), in place of the above
OBJ_WIDTH = 21  # then, for a mesh, its hull (collision_mesh.init_tail; T_* below)
MODE_SHAPE = 0
MODE_POINT = 1
MODE_LINE = 2

# one vertex of the simplex or polytope: a row of VERT_WIDTH numbers
VERT = 0  # S_A(d) - S_B(-d), the Minkowski-difference point
VERT1 = 3  # S_A(d), the point on geom 1
VERT2 = 6  # S_B(-d), the point on geom 2
VERT_I1 = 9  # a mesh's vertex that gave VERT1 (its vertindex), -1 for other types
VERT_I2 = 10  # ... VERT2
VERT_WIDTH = 11
SIMPLEX_ROWS = 8  # GJK simplex (rows 0-3), polytope centre (row 4, columns VERT), GJK's last
CENTER = 4  # simplex kept for the multi-contact search (rows 5-7: EPA may rewrite rows 0-3)
SAVED = 5

# one face of the polytope: FACE_WIDTH numbers (v: projection of the origin onto the face,
# outward, also the face normal; dist2 = |v|^2) and FACEID_WIDTH integers
FACE_DIST2 = 3
FACE_WIDTH = 4
FACEID_VERT = 0  # three vertex indices
FACEID_ADJ = 3  # adjacent faces across edges (v1, v2), (v2, v3), (v3, v1)
FACEID_INDEX = 6  # position in the face map; -1 not in it; -2 deleted from the polytope
FACEID_WIDTH = 7

# rows of the integer list array (LIST_ROWS, nccdface)
LIST_MAP = 0  # faces that may still be the nearest (MuJoCo's map)
LIST_HZN_FACE = 1  # horizon: faces beyond the visible region ...
LIST_HZN_EDGE = 2  # ... and their edge on the horizon
LIST_STACK_FACE = 3  # depth-first horizon search: face ...
LIST_STACK_EDGE = 4  # ... the edge it was entered through ...
LIST_STACK_NEXT = 5  # ... and the next of its two other edges to visit (1, 2; 3 done)
LIST_COUNT = 6  # [nverts, nfaces, nmap, nedges] of the polytope
LIST_ROWS = 7
NVERTS = 0
NFACES = 1
NMAP = 2
NEDGES = 3


def ccd_sizes(iterations: int) -> tuple[int, int]:
    """(vertices, faces) of the EPA polytope for opt.ccd_iterations (mjc_ccdSize); at least
    4 faces, as the face lists' last row holds the polytope's four counts."""
    return 5 + int(iterations), max(6 * int(iterations), 4)


def has_convex_pair(m) -> bool:
    """Whether a Model (engine.model.Model) has a candidate pair (cpair_geom) of CONVEX_PAIRS:
    whether it needs the convex collider, its work space and the collision_convex unit."""
    return any(convex_pair_kinds(m))


def convex_pair_kinds(m) -> tuple[bool, bool]:
    """(whether a candidate pair of a Model is one of CONVEX_PAIRS other than a height field,
    whether one is a height field against a convex geom): the pair units it needs."""
    types = m.geom_type[m.cpair_geom] if len(m.cpair_geom) else ()
    convex = hfield = False
    for t1, t2 in types:
        # a height-field pair collides each prism through the convex collider (collision_hfield)
        if int(t1) == GEOM_HFIELD:
            hfield = True
        elif (int(t1), int(t2)) in CONVEX_PAIRS:
            convex = True
    return convex, hfield


# ---- a mesh's hull, copied after an object row's OBJ_WIDTH numbers (collision_mesh) ---------------

T_VERTINDEX = 0  # vertex (global in the mesh) the last support call found, -1 none
T_MESHINDEX = 1  # hull vertex (graph-local id) the last hill climb ended on, -1 none
T_NVERT = 2  # number of vertices
T_HILL = 3  # 1: hill climbing on the graph; 0: every vertex
T_NGRAPH = 4  # length of the copied graph
T_NPOLY = 5  # number of polygons
T_NPOLYMAP = 6  # length of the vertex-to-polygon map
T_POLY = 7  # where the polygon block starts (below)
T_DATA = 8  # vertices (3 nvert), the grid seeds (27), the graph (ngraph), then the polygon
# block: per vertex its first polygon in the map and their number (2 nvert), the map
# (npolymap), per polygon its normal (3), first vertex in the vertex list and number of
# vertices (5 npoly), the vertex list


def _graph_length(m, mesh: int) -> int:
    """Length of mesh `mesh`'s part of mesh_graph (0 without a hull)."""
    adr = int(m.mesh_graphadr[mesh])
    if adr < 0:
        return 0
    later = [int(a) for a in m.mesh_graphadr if int(a) > adr]
    return (min(later) if later else len(m.mesh_graph)) - adr


def tail_width(m) -> int:
    """Numbers the largest colliding mesh (a mesh geom of a candidate pair) needs after a
    convex-collider object row's geom part; visual meshes need none."""
    width = 0
    colliding = {int(m.geom_dataid[g]) for g in np.unique(m.cpair_geom) if m.geom_type[g] == GEOM_MESH}
    for k in sorted(colliding):
        nvert = int(m.mesh_vertnum[k])
        vadr = int(m.mesh_vertadr[k])
        npoly = int(m.mesh_polynum[k])
        padr = int(m.mesh_polyadr[k])
        npolymap = int(sum(int(m.mesh_polymapnum[vadr + i]) for i in range(nvert)))
        npolyvert = int(sum(int(m.mesh_polyvertnum[padr + i]) for i in range(npoly)))
        polyblock = 2 * nvert + npolymap + 5 * npoly + npolyvert
        width = max(width, T_DATA + 3 * nvert + 27 + _graph_length(m, k) + polyblock)
    return width


# ---- the multi-contact search's rows (collision_multi's `poly`, Data.scratch_ccd_poly) ------------

MAXDEG = 16  # most face normals or edges of one feature (a mesh vertex's polygons)
MAXFACE = 32  # most vertices of one face (a cap's 16-gon, a mesh polygon)
R_N1 = 0  # face normals of geom 1 (MAXDEG)
R_N2 = R_N1 + MAXDEG  # face normals of geom 2 (MAXDEG)
R_E = R_N2 + MAXDEG  # edge directions (MAXDEG)
R_EV = R_E + MAXDEG  # edge end points (MAXDEG)
R_I1 = R_EV + MAXDEG  # a mesh's polygon of each normal of geom 1 (column 0; MAXDEG)
R_I2 = R_I1 + MAXDEG  # ... of geom 2 (MAXDEG)
R_V1 = R_I2 + MAXDEG  # geom 1's simplex points (3)
R_V2 = R_V1 + 3  # geom 2's simplex points (3)
R_F1 = R_V2 + 3  # face of geom 1 (MAXFACE)
R_F2 = R_F1 + MAXFACE  # face of geom 2 (MAXFACE)
R_PN = R_F2 + MAXFACE  # clipping planes' normals (MAXFACE)
POLY_MAX = 2 * MAXFACE  # vertices of a clipped polygon
R_PA = R_PN + MAXFACE  # polygon buffers (2 x POLY_MAX)
R_PB = R_PA + POLY_MAX
R_X1 = R_PB + POLY_MAX  # witness points on geom 1 (4)
R_X2 = R_X1 + 4  # witness points on geom 2 (4)
R_D = R_X2 + 4  # distances (4, column 0)
POLY_ROWS = R_D + 4
