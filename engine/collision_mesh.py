"""Stage 9, collision narrow phase: mesh geoms as MuJoCo 4.0.0 collides them, as their convex
hull (the hull MuJoCo's compiler builds: `mesh_vert` at `mesh_vertadr`, the hull graph
`mesh_graph`, the polygons `mesh_poly*`, all in the mesh frame, which the geom's pose
places in the world).

1. The support function (mjc_meshSupport / mjc_hillclimbSupport of libmujoco.so.4.0.0):
   S(d) = R v* + p with v* the hull vertex of largest <l, v>, l = R^T d the direction in the
   mesh frame (l_i = (R_0i d_0 + R_1i d_1) + R_2i d_2; the dot products (l_0 v_0 + l_1 v_1)
   + l_2 v_2 on the float32 vertices widened to double).
   - A mesh with fewer than 10 vertices (mjMESH_HILLCLIMB_MIN) or no hull graph: every
     vertex, first maximum kept (strictly greater replaces), starting from the vertex the
     last call found (`vertindex`; none on a geom pair's first call, where the start is
     -FLT_MAX), so that a tie keeps the previous answer.
   - Otherwise hill climbing on the hull graph: the start is the better of the vertex the
     last call ended on (`meshindex`, warm start) and the grid seed `mesh_extrema[9 cx + 3
     cy + cz]`, c = (l > 0.4) - (l < -0.4) + 1 per axis (the seed wins only when strictly
     better); then, until no change, each neighbour of the current vertex (in edge order)
     replaces the best when strictly better, the scan finishing the current vertex's list.
   Each geom pair starts with no warm start (mjc_initCCDObj).
2. Plane : mesh (mjc_PlaneConvex of the 4.0.0 binary; the 3.12 source adds up to 2 more
   vertices near the support vertex, 4.0.0 reads the hull's polygons): with n the plane's
   normal (its local z axis, world frame) and p1 its centre, the support vertex v along
   -n; dist = ((n_0 dx + n_1 dy) + n_2 dz) with d = v - p1; none when dist > margin. First
   contact: pos = v - (dist / 2) n, normal n. Then among the polygons of v the one whose
   normal (mesh frame) has the smallest dot with R^T n, if below 1; from v's place j in
   that polygon (0 if absent), with k vertices: k <= 4, the vertices j+1 .. j+k-1 (mod k);
   k >= 5, the quadrilateral (j, b, c, d) of largest area grown from (j, j+1, j+2, j+3) as
   polygonQuad grows it (d, then c, then b, while the area 0.5 |(A - C) x (B - D)| grows),
   with j fixed, and its vertices b, c, d. Each such vertex w (world) is a contact, in that
   order, when its distance n.(w - p1) <= margin and it is not above the mesh's centre
   (n.(w - p2) <= 0): pos = w - (dist / 2) n, normal n. At most 4 contacts.

Frames: world frame but where said; `mat` row-major with the local axes as columns.

The convex collider (engine/collision_convex.py) keeps a copy of each mesh geom's hull at
the end of its object row (`init_tail`): the warm-start indices, the vertices, the 27 grid
seeds and the hull graph, so that its support function reads only the row.
"""

import math

from robodyn.engine.jit import kernel
from robodyn.engine.sizes import (
    DIST,
    NORMAL,
    POS,
    T_DATA,
    T_HILL,
    T_MESHINDEX,
    T_NGRAPH,
    T_NPOLY,
    T_NPOLYMAP,
    T_NVERT,
    T_POLY,
    T_VERTINDEX,
    TANGENT,
)
from robodyn.engine.spatial import add3, mv3, put_row3, unit3

HILLCLIMB_MIN = 10  # mjMESH_HILLCLIMB_MIN: fewer vertices are searched exhaustively
FLT_MAX = 3.4028234663852886e38


@kernel
def init_tail(tail, m, mesh):
    """Copy mesh `mesh`'s hull into the object row's tail, with no warm start."""
    nvert = m.mesh_vertnum[mesh]
    vadr = m.mesh_vertadr[mesh]
    gadr = m.mesh_graphadr[mesh]
    tail[T_VERTINDEX] = -1
    tail[T_MESHINDEX] = -1
    tail[T_NVERT] = nvert
    tail[T_HILL] = 1 if gadr >= 0 and nvert >= HILLCLIMB_MIN else 0
    for i in range(nvert):
        for k in range(3):
            tail[T_DATA + 3 * i + k] = m.mesh_vert[vadr + i, k]
    base = T_DATA + 3 * nvert
    for k in range(27):
        tail[base + k] = m.mesh_extrema[mesh, k]
    base += 27
    n = 0
    if gadr >= 0:
        # the graph's end: the next graph address, or the end of mesh_graph
        end = m.mesh_graph.shape[0]
        for j in range(m.mesh_graphadr.shape[0]):
            a = m.mesh_graphadr[j]
            if a > gadr and a < end:
                end = a
        n = end - gadr
        for k in range(n):
            tail[base + k] = m.mesh_graph[gadr + k]
    tail[T_NGRAPH] = n
    # the polygons, with addresses relative to the mesh's own lists
    base += n
    tail[T_POLY] = base
    npoly = m.mesh_polynum[mesh]
    padr = m.mesh_polyadr[mesh]
    tail[T_NPOLY] = npoly
    map0 = m.mesh_polymapadr[vadr] if nvert > 0 else 0
    nmap = 0
    for i in range(nvert):
        tail[base + i] = m.mesh_polymapadr[vadr + i] - map0
        tail[base + nvert + i] = m.mesh_polymapnum[vadr + i]
        nmap += m.mesh_polymapnum[vadr + i]
    tail[T_NPOLYMAP] = nmap
    base += 2 * nvert
    for i in range(nmap):
        tail[base + i] = m.mesh_polymap[map0 + i]
    base += nmap
    pv0 = m.mesh_polyvertadr[padr] if npoly > 0 else 0
    npv = 0
    for f in range(npoly):
        for k in range(3):
            tail[base + 5 * f + k] = m.mesh_polynormal[padr + f, k]
        tail[base + 5 * f + 3] = m.mesh_polyvertadr[padr + f] - pv0
        tail[base + 5 * f + 4] = m.mesh_polyvertnum[padr + f]
        npv += m.mesh_polyvertnum[padr + f]
    base += 5 * npoly
    for i in range(npv):
        tail[base + i] = m.mesh_polyvert[pv0 + i]


@kernel
def poly_offsets(tail):
    """(polymapadr, polymapnum, polymap, polygons (5 numbers each), polyvert) offsets of the
    tail's polygon block."""
    nvert = int(tail[T_NVERT])
    base = int(tail[T_POLY])
    mapadr = base
    mapnum = base + nvert
    polymap = base + 2 * nvert
    polys = polymap + int(tail[T_NPOLYMAP])
    polyvert = polys + 5 * int(tail[T_NPOLY])
    return mapadr, mapnum, polymap, polys, polyvert


@kernel
def vertex_world(tail, pos, mat, i):
    """R v_i + p, summed ((m0 x + m1 y) + m2 z) + p (globalcoord)."""
    a = T_DATA + 3 * i
    return add3(mv3(mat, (tail[a], tail[a + 1], tail[a + 2])), pos)


@kernel
def _vdot(tail, i, l0, l1, l2):
    """(l_0 v_0 + l_1 v_1) + l_2 v_2 for vertex i of the tail."""
    a = T_DATA + 3 * i
    return (l0 * tail[a] + l1 * tail[a + 1]) + l2 * tail[a + 2]


@kernel
def _grid(v):
    """(v > 0.4) - (v < -0.4) + 1: the grid coordinate of a direction component."""
    return (1 if v > 0.4 else 0) - (1 if v < -0.4 else 0) + 1


@kernel
def support_vertex(tail, l0, l1, l2):
    """Index (in the mesh) of the support vertex along the mesh-frame direction l, updating
    the warm-start indices (module docstring, 1)."""
    nvert = int(tail[T_NVERT])
    if tail[T_HILL] == 0:
        imax = 0
        best = -FLT_MAX
        cached = int(tail[T_VERTINDEX])
        if cached >= 0:
            imax = cached
            best = _vdot(tail, cached, l0, l1, l2)
        for i in range(nvert):
            v = _vdot(tail, i, l0, l1, l2)
            if v > best:
                best = v
                imax = i
        tail[T_VERTINDEX] = imax
        return imax
    g = T_DATA + 3 * nvert + 27  # the graph
    numvert = int(tail[g])
    edgeadr = g + 2
    globalid = g + 2 + numvert
    localid = g + 2 + 2 * numvert
    seed = int(tail[T_DATA + 3 * nvert + 9 * _grid(l0) + 3 * _grid(l1) + _grid(l2)])
    imax = seed
    cached = int(tail[T_MESHINDEX])
    if cached >= 0:
        seed_dot = _vdot(tail, int(tail[globalid + seed]), l0, l1, l2)
        cached_dot = _vdot(tail, int(tail[globalid + cached]), l0, l1, l2)
        if not seed_dot > cached_dot:
            imax = cached
    best = _vdot(tail, int(tail[globalid + imax]), l0, l1, l2)
    prev = -1
    while imax != prev:
        prev = imax
        i = int(tail[edgeadr + prev])
        while True:
            sub = int(tail[localid + i])
            if sub < 0:
                break
            v = _vdot(tail, int(tail[globalid + sub]), l0, l1, l2)
            if v > best:
                best = v
                imax = sub
            i += 1
    tail[T_MESHINDEX] = imax
    gid = int(tail[globalid + imax])
    tail[T_VERTINDEX] = gid
    return gid


@kernel
def support(tail, pos, mat, d):
    """S(d) = R v* + p, the hull's point farthest along the unit world direction d
    (mjc_meshSupport / mjc_hillclimbSupport of 4.0.0; module docstring, 1)."""
    l0 = (mat[0] * d[0] + mat[3] * d[1]) + mat[6] * d[2]
    l1 = (mat[1] * d[0] + mat[4] * d[1]) + mat[7] * d[2]
    l2 = (mat[2] * d[0] + mat[5] * d[1]) + mat[8] * d[2]
    i = support_vertex(tail, l0, l1, l2)
    a = T_DATA + 3 * i
    v0, v1, v2 = tail[a], tail[a + 1], tail[a + 2]
    return (
        ((mat[0] * v0 + mat[1] * v1) + mat[2] * v2) + pos[0],
        ((mat[3] * v0 + mat[4] * v1) + mat[5] * v2) + pos[1],
        ((mat[6] * v0 + mat[7] * v1) + mat[8] * v2) + pos[2],
    )


# ---- plane : mesh ----------------------------------------------------------------------------------


@kernel
def _mesh_vertex(m, vadr, i):
    return (m.mesh_vert[vadr + i, 0], m.mesh_vert[vadr + i, 1], m.mesh_vert[vadr + i, 2])


@kernel
def quad_area(a, b, c, d):
    """0.5 |(a - c) x (b - d)|, summed as the binary does."""
    u = (a[0] - c[0], a[1] - c[1], a[2] - c[2])
    v = (b[0] - d[0], b[1] - d[1], b[2] - d[2])
    cx = u[1] * v[2] - u[2] * v[1]
    cy = u[2] * v[0] - u[0] * v[2]
    cz = u[0] * v[1] - u[1] * v[0]
    return math.sqrt(cz * cz + (cx * cx + cy * cy)) * 0.5


@kernel
def _put(con, row, w, dist, n):
    """Contact row: dist, pos = w - (dist / 2) n, normal n."""
    h = dist * -0.5
    con[row, DIST] = dist
    for k in range(3):
        con[row, POS + k] = n[k] * h + w[k]
        con[row, NORMAL + k] = n[k]
        con[row, TANGENT + k] = 0.0


@kernel
def collide_plane_mesh(con, tail, m, mesh, margin, pos1, mat1, pos2, mat2):
    """Contacts of a plane (geom 1) and a mesh (geom 2), mjc_PlaneConvex of the 4.0.0 binary
    (module docstring, 2): up to 4 rows of con; returns their number. `tail` is work space
    for the mesh's hull copy (a convex-collider object row's tail)."""
    n = (mat1[2], mat1[5], mat1[8])
    init_tail(tail, m, mesh)
    v = support(tail, pos2, mat2, (-n[0], -n[1], -n[2]))
    dist = (n[0] * (v[0] - pos1[0]) + n[1] * (v[1] - pos1[1])) + n[2] * (v[2] - pos1[2])
    if dist > margin:
        return 0
    _put(con, 0, v, dist, n)
    vi = int(tail[T_VERTINDEX])
    if vi < 0 or m.mesh_polynum[mesh] == 0:
        return 1
    vadr = m.mesh_vertadr[mesh]
    nmap = m.mesh_polymapnum[vadr + vi]
    if nmap <= 0:
        return 1
    # the plane's normal in the mesh frame
    ln0 = (n[0] * mat2[0] + n[1] * mat2[3]) + n[2] * mat2[6]
    ln1 = (n[0] * mat2[1] + n[1] * mat2[4]) + n[2] * mat2[7]
    ln2 = (n[0] * mat2[2] + n[1] * mat2[5]) + n[2] * mat2[8]
    polyadr = m.mesh_polyadr[mesh]
    mapadr = m.mesh_polymapadr[vadr + vi]
    face = -1
    best = 1.0
    for i in range(nmap):
        f = m.mesh_polymap[mapadr + i]
        nrm = m.mesh_polynormal[polyadr + f]
        c = (ln0 * nrm[0] + ln1 * nrm[1]) + ln2 * nrm[2]
        if best > c:
            face = f
            best = c
    if face < 0:
        return 1
    adr = m.mesh_polyvertadr[polyadr + face]
    k = m.mesh_polyvertnum[polyadr + face]
    j = 0
    for i in range(k):
        if m.mesh_polyvert[adr + i] == vi:
            j = i
            break
    b = (j + 1) % k
    c = (j + 2) % k
    d = (j + 3) % k
    nextra = k - 1
    if k >= 5:
        pv = m.mesh_polyvert
        va = _mesh_vertex(m, vadr, pv[adr + j])
        area = quad_area(
            va,
            _mesh_vertex(m, vadr, pv[adr + b]),
            _mesh_vertex(m, vadr, pv[adr + c]),
            _mesh_vertex(m, vadr, pv[adr + d]),
        )
        while True:
            dn = (d + 1) % k
            vb = _mesh_vertex(m, vadr, pv[adr + b])
            a_next = quad_area(
                va, vb, _mesh_vertex(m, vadr, pv[adr + c]), _mesh_vertex(m, vadr, pv[adr + dn])
            )
            if area >= a_next:
                break
            area = a_next
            d = dn
            vd = _mesh_vertex(m, vadr, pv[adr + d])
            while True:
                cn = (c + 1) % k
                a_next = quad_area(va, vb, _mesh_vertex(m, vadr, pv[adr + cn]), vd)
                if not area < a_next:
                    break
                area = a_next
                c = cn
            vc = _mesh_vertex(m, vadr, pv[adr + c])
            while True:
                bn = (b + 1) % k
                a_next = quad_area(va, _mesh_vertex(m, vadr, pv[adr + bn]), vc, vd)
                if not area < a_next:
                    break
                area = a_next
                b = bn
        nextra = 3
    elif k < 2:
        return 1
    count = 1
    for e in range(nextra):
        idx = b if e == 0 else (c if e == 1 else d)
        lv = _mesh_vertex(m, vadr, m.mesh_polyvert[adr + idx])
        w = (
            ((mat2[0] * lv[0] + mat2[1] * lv[1]) + mat2[2] * lv[2]) + pos2[0],
            ((mat2[3] * lv[0] + mat2[4] * lv[1]) + mat2[5] * lv[2]) + pos2[1],
            ((mat2[6] * lv[0] + mat2[7] * lv[1]) + mat2[8] * lv[2]) + pos2[2],
        )
        dw = (n[0] * (w[0] - pos1[0]) + n[1] * (w[1] - pos1[1])) + n[2] * (w[2] - pos1[2])
        if dw > margin:
            continue
        up = (n[0] * (w[0] - pos2[0]) + n[1] * (w[1] - pos2[1])) + n[2] * (w[2] - pos2[2])
        if up > 0:
            continue
        _put(con, count, w, dw, n)
        count += 1
    return count


# ---- the multi-contact search's mesh features (collision_multi) -----------------------------------


@kernel
def _put_normal(poly, row, irow, k, tail, polys, mat, f):
    """Normal k: polygon f's normal rotated to the world, (m0 x + m1 y) + m2 z; its id in irow."""
    b = polys + 5 * f
    put_row3(poly, row + k, mv3(mat, (tail[b], tail[b + 1], tail[b + 2])))
    poly[irow + k, 0] = f


@kernel
def mesh_normals(poly, row, irow, maxdeg, dim, mat, tail, i0, i1, i2):
    """Face normals of a mesh feature (meshNormals, as in 4.0.0): for 3 vertices the first
    polygon common to all three (the first two polygons common to vertices 1 and 2, each
    tried against vertex 3's); for 2 vertices the polygons common to both (at most 2, in
    vertex 1's order); for 1 vertex each of its polygons. Writes normals to poly[row..],
    polygon ids to poly[irow.., 0]; returns their count (at most maxdeg)."""
    mapadr, mapnum, polymap, polys, polyvert = poly_offsets(tail)
    a0 = polymap + int(tail[mapadr + i0])
    n0 = int(tail[mapnum + i0])
    if dim == 1:
        n = n0 if n0 < maxdeg else maxdeg
        for k in range(n):
            _put_normal(poly, row, irow, k, tail, polys, mat, int(tail[a0 + k]))
        return n
    a1 = polymap + int(tail[mapadr + i1])
    n1 = int(tail[mapnum + i1])
    # polygons common to vertices 1 and 2, at most two
    c0 = -1
    c1 = -1
    nc = 0
    for i in range(n0):
        f = int(tail[a0 + i])
        for j in range(n1):
            if int(tail[a1 + j]) == f:
                if nc == 0:
                    c0 = f
                else:
                    c1 = f
                nc += 1
                if nc == 2:
                    break
        if nc == 2:
            break
    if nc == 0:
        return 0
    if dim == 2:
        _put_normal(poly, row, irow, 0, tail, polys, mat, c0)
        if nc == 2:
            _put_normal(poly, row, irow, 1, tail, polys, mat, c1)
        return nc
    a2 = polymap + int(tail[mapadr + i2])
    n2 = int(tail[mapnum + i2])
    for i in range(nc):
        f = c0 if i == 0 else c1
        for j in range(n2):
            if int(tail[a2 + j]) == f:
                _put_normal(poly, row, irow, 0, tail, polys, mat, f)
                return 1
    return 0


@kernel
def mesh_edges(poly, vrow, erow, evrow, maxdeg, dim, pos, mat, tail, i0, i1):
    """Edges of a mesh feature (meshEdgeNormals): for 2 vertices the edge between them; for
    1 vertex, in each of its polygons the edge to the polygon's previous vertex. The near
    end point (the vertex, in the world) goes to poly[vrow], the far ends to poly[evrow..],
    the unit directions to poly[erow..]; returns their count."""
    v = vertex_world(tail, pos, mat, i0)
    put_row3(poly, vrow, v)
    if dim == 2:
        w = vertex_world(tail, pos, mat, i1)
        put_row3(poly, evrow, w)
        put_row3(poly, erow, unit3((w[0] - v[0], w[1] - v[1], w[2] - v[2])))
        return 1
    if dim != 1:
        return 0
    mapadr, mapnum, polymap, polys, polyvert = poly_offsets(tail)
    a0 = polymap + int(tail[mapadr + i0])
    n = int(tail[mapnum + i0])
    if n > maxdeg:
        n = maxdeg
    for k in range(n):
        f = int(tail[a0 + k])
        adr = polyvert + int(tail[polys + 5 * f + 3])
        nv = int(tail[polys + 5 * f + 4])
        for j in range(nv):
            if int(tail[adr + j]) == i0:
                prev = nv - 1 if j == 0 else j - 1
                w = vertex_world(tail, pos, mat, int(tail[adr + prev]))
                put_row3(poly, evrow + k, w)
                put_row3(poly, erow + k, unit3((w[0] - v[0], w[1] - v[1], w[2] - v[2])))
                break
    return n


@kernel
def mesh_face(poly, row, maxface, pos, mat, tail, f):
    """Polygon f's vertices in the world, in reverse order (meshFace); returns their count."""
    mapadr, mapnum, polymap, polys, polyvert = poly_offsets(tail)
    adr = polyvert + int(tail[polys + 5 * f + 3])
    nv = int(tail[polys + 5 * f + 4])
    if nv > maxface:
        nv = maxface
    j = 0
    for i in range(nv - 1, -1, -1):
        put_row3(poly, row + j, vertex_world(tail, pos, mat, int(tail[adr + i])))
        j += 1
    return nv
