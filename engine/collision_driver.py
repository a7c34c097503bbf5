"""Stage 9, collision: the contacts of one environment at its current geom poses
(MuJoCo's mj_collision in engine_collision_driver.c).

MuJoCo splits the work into a broad phase (which body pairs may touch), a mid phase
(which of their geom pairs) and a narrow phase (the contacts of one geom pair). Every
filter that depends only on the model is evaluated once, at load (`candidate_pairs`):

- body pairs: both bodies can collide (contype | conaffinity), their contype/conaffinity
  bitmasks match, they are not welded together (same `body_weldid`), not both without
  dofs, not parent and child up to welding unless `<flag filterparent="disable">`, and
  not named in an `<exclude>`;
- geom pairs of such a body pair: geom bitmasks match (contype1 & conaffinity2 or
  contype2 & conaffinity1), no explicit `<pair>` names the same two geoms, and MuJoCo
  has a collision function for the two types;
- explicit `<pair>`s skip the bitmask, weld, parent and exclude filters, and carry their
  own condim, friction, solref, solreffriction, solimp, margin and gap.

What is left, the candidate pairs `cpair_*`, is stored in MuJoCo's contact order, so that
contact i here is contact i of mj_collision: body pairs by signature (body1 << 16) + body2
with body1 < body2, an explicit pair before the body pairs of a larger signature; within
a body pair, geoms in index order, except that pairs of bodies with more than one geom that
MuJoCo sends through its BVH mid phase come sorted by (geom1, geom2). Each pair is ordered
so that type(geom1) <= type(geom2), as the narrow phase wants it.

Per step, for each candidate pair: MuJoCo's bounding-sphere test with the pair's margin +
gap (|x1 - x2| > rbound1 + rbound2 + margin, or for a plane, the other geom's centre more
than rbound + margin above it), then the closed-form collider of `collision_primitive` (or
for plane : mesh `collision_mesh.collide_plane_mesh`, 4.0.0's polygon form) or, for a pair
of `sizes.CONVEX_PAIRS`, MuJoCo's convex collider (GJK/EPA), for a height field against a
convex geom (`collision_hfield.HFIELD_PAIRS`) that collider on each prism of the height
field under the geom (up to 50 contacts), then the contact parameters (mixed at load:
condim and friction by maximum, solref and solimp by solmix weight, or copied from the
geom of higher priority).

For a pair of bodies MuJoCo sends through its BVH mid phase (mj_collideTree: neither a
single-geom body, `cpair_obb`), after the sphere test, the pair is left out if MuJoCo's
traversal of the two bodies' bounding-volume trees would not reach it or would call it
apart at its leaves (`_tree_apart`): each node pair on the tree's path to the two geoms
(fixed by the model, `_tree_paths`, stored as `cpair_test`) and then the two geoms' own
boxes go through MuJoCo's oriented-box test (`_boxes_apart`, mj_collideOBB) in MuJoCo's
arithmetic. Those tests only drop pairs farther apart than their margin + gap, where every
collider here returns nothing anyway, or, by rounding, pairs that touch at distance 0 (a
peg resting in a slot: its colliders return dist -1e-17), which MuJoCo then has no contact
for either. MuJoCo's broad phase (sweep-and-prune over bounding boxes in a frame of the
geom positions' principal axes) drops only pairs farther apart than their margin + gap.
The known difference: in the margin band, box-box edge contacts report the separation
along the edge-edge axis, which can be less than the true distance, so a box pair slightly
farther apart than margin + gap can get a contact (dist > 0) from the collider. MuJoCo's
sweep-and-prune drops some of those, depending on its frame (and on rounding to float32
that its 4.0.0 binary does in ways we could not pin down); we keep them all (but those
the mid phase's box tests drop, in both). With zero
margin and gap the box-box collider is exact and nothing differs; pairs with a world (or
static) body skip the sweep in MuJoCo too.

Two units run that loop (`engine.jit.unit`, the same kernels): `collision`, closed-form
colliders only, and `collision_convex`, which adds the convex collider. GJK/EPA is most of a
collision unit's compile time, so `engine.binding.units_for` gives a model the convex unit
only when one of its candidate pairs needs it. `collision_convex` calls the convex collider
through two pair units of its own (`engine.jit.pair_unit`), `convex_pair` and, for a height
field, `hfield_pair`: each is compiled only for a model with such a pair, the two compile
side by side on a cold start, and none of them is optimized again inside its caller.

A contact with dist >= includemargin (= margin; the gap only widens detection) is
flagged `exclude`: MuJoCo reports it but makes no constraint from it.
"""

from __future__ import annotations

import numpy as np

from robodyn.engine import collision_convex as C
from robodyn.engine import collision_hfield as H
from robodyn.engine import collision_mesh as CM
from robodyn.engine import collision_primitive as P
from robodyn.engine import types as T
from robodyn.engine.jit import kernel, pair_unit, unit
from robodyn.engine.ptr import call_pair_unit
from robodyn.engine.sizes import CONVEX_PAIRS, DIST, MAXDEG, MAXFACE, NORMAL, OBJ_WIDTH, POS, TANGENT
from robodyn.engine.spatial import mtm3, mtv3, mv3
from robodyn.engine.types import MAXVAL, MINMU, MINVAL

GEOM_TYPE_NAMES = {
    T.GEOM_PLANE: "plane",
    T.GEOM_HFIELD: "hfield",
    T.GEOM_SPHERE: "sphere",
    T.GEOM_CAPSULE: "capsule",
    T.GEOM_ELLIPSOID: "ellipsoid",
    T.GEOM_CYLINDER: "cylinder",
    T.GEOM_BOX: "box",
    T.GEOM_MESH: "mesh",
    T.GEOM_SDF: "sdf",
}

# (type1, type2) with type1 <= type2 -> most contacts our collider returns
MAX_CONTACTS = {
    (T.GEOM_PLANE, T.GEOM_SPHERE): 1,
    (T.GEOM_PLANE, T.GEOM_CAPSULE): 2,
    (T.GEOM_PLANE, T.GEOM_ELLIPSOID): 1,
    (T.GEOM_PLANE, T.GEOM_CYLINDER): 4,
    (T.GEOM_PLANE, T.GEOM_BOX): 4,
    (T.GEOM_PLANE, T.GEOM_MESH): 4,
    (T.GEOM_SPHERE, T.GEOM_SPHERE): 1,
    (T.GEOM_SPHERE, T.GEOM_CAPSULE): 1,
    (T.GEOM_SPHERE, T.GEOM_CYLINDER): 1,
    (T.GEOM_SPHERE, T.GEOM_BOX): 1,
    (T.GEOM_CAPSULE, T.GEOM_CAPSULE): 2,
    (T.GEOM_CAPSULE, T.GEOM_BOX): 2,
    (T.GEOM_BOX, T.GEOM_BOX): 8,
}


def _has_collision_function(t1: int, t2: int) -> bool:
    """Whether MuJoCo's mjCOLLISIONFUNC table has an entry for types t1 <= t2."""
    if t1 == T.GEOM_PLANE:
        return t2 not in (T.GEOM_PLANE, T.GEOM_HFIELD)
    if t1 == T.GEOM_HFIELD:
        return t2 != T.GEOM_HFIELD
    return True


# ---- at load: candidate pairs and their contact parameters --------------------------------------


def _ordered(mj, g1: int, g2: int) -> tuple[int, int]:
    """The pair as MuJoCo's narrow phase sees it: type(geom1) <= type(geom2)."""
    return (g2, g1) if mj.geom_type[g1] > mj.geom_type[g2] else (g1, g2)


def _bitmask_ok(contype1, conaffinity1, contype2, conaffinity2) -> bool:
    return bool((contype1 & conaffinity2) or (contype2 & conaffinity1))


def _body_pair_ok(mj, b1: int, b2: int) -> bool:
    """MuJoCo's broad-phase body filters (canCollide, filterBodyPair, canCollide2)."""
    if not (mj.body_contype[b1] or mj.body_conaffinity[b1]):
        return False
    if not (mj.body_contype[b2] or mj.body_conaffinity[b2]):
        return False
    weld1, weld2 = int(mj.body_weldid[b1]), int(mj.body_weldid[b2])
    if weld1 == weld2:
        return False
    if mj.body_dofnum[weld1] == 0 and mj.body_dofnum[weld2] == 0:
        return False
    filterparent = not (mj.opt.disableflags & T.DSBL_FILTERPARENT)
    parent1 = int(mj.body_weldid[mj.body_parentid[weld1]])
    parent2 = int(mj.body_weldid[mj.body_parentid[weld2]])
    if filterparent and weld1 != 0 and weld2 != 0 and (weld1 == parent2 or weld2 == parent1):
        return False
    return _bitmask_ok(
        mj.body_contype[b1], mj.body_conaffinity[b1], mj.body_contype[b2], mj.body_conaffinity[b2]
    )


def _midphase(mj, b1: int, b2: int) -> bool:
    """Whether MuJoCo sends body pair b1, b2 through its BVH mid phase (mj_collideTree):
    not two single-geom bodies, the mid phase not disabled, and both bodies with a BVH."""
    single = mj.body_geomnum[b1] == 1 and mj.body_geomnum[b2] == 1
    enabled = not (mj.opt.disableflags & T.DSBL_MIDPHASE)
    return bool(not single and enabled and mj.body_bvhadr[b1] >= 0 and mj.body_bvhadr[b2] >= 0)


def _tree_paths(mj, b1: int, b2: int) -> dict[tuple[int, int], tuple[tuple[int, int], ...]]:
    """The mid phase's traversal of body pair b1 < b2 (mj_collideTree): {(geom of b1, geom
    of b2): the node pairs (global BVH ids) whose boxes it tests on its way to that pair of
    leaves}. From the roots it descends, at a pair of nodes, into the children of the one
    that is not a leaf, or when neither is, of the one whose box has the larger surface
    (h_x h_y + h_y h_z + h_z h_x of its half-sizes h; on a tie, the second), so the path to
    each pair of leaves depends on the model alone; per step, a leaf pair is tested only
    if every node pair on its path passed. (MuJoCo's source before 4.0 took the surface of
    half-size minus centre; 4.0.0's binary takes the half-sizes: on the manipulator's peg
    and slot only this choice of paths reproduces which pairs its mid phase keeps.)"""
    adr = (int(mj.body_bvhadr[b1]), int(mj.body_bvhadr[b2]))
    child = np.asarray(mj.bvh_child).reshape(-1, 2)
    aabb = np.asarray(mj.bvh_aabb).reshape(-1, 6)

    def leaf(i: int) -> bool:
        return bool(child[i, 0] < 0 and child[i, 1] < 0)

    def surface(i: int) -> float:
        x, y, z = aabb[i, 3], aabb[i, 4], aabb[i, 5]
        return x * y + y * z + z * x

    paths = {}
    stack = [(0, 0, ())]
    while stack:
        n1, n2, path = stack.pop()
        i1, i2 = adr[0] + n1, adr[1] + n2
        if leaf(i1) and leaf(i2):
            key = (int(mj.bvh_nodeid[i1]), int(mj.bvh_nodeid[i2]))
            assert key not in paths, f"the mid phase reaches geoms {key} twice"
            paths[key] = path
            continue
        path = (*path, (i1, i2))
        if not leaf(i1) and (leaf(i2) or surface(i1) > surface(i2)):
            stack.extend((int(c), n2, path) for c in child[i1] if c != -1)
        else:
            stack.extend((n1, int(c), path) for c in child[i2] if c != -1)
    return paths


def _body_geom_pairs(mj, b1: int, b2: int, explicit: set, midphase: bool) -> list[tuple[int, int]]:
    """Geom pairs of body pair b1 < b2 in the order MuJoCo's narrow phase meets them (by
    (geom1, geom2) when the pair goes through the mid phase)."""
    geoms1 = range(mj.body_geomadr[b1], mj.body_geomadr[b1] + mj.body_geomnum[b1])
    geoms2 = range(mj.body_geomadr[b2], mj.body_geomadr[b2] + mj.body_geomnum[b2])
    pairs = []
    for g1 in geoms1:
        for g2 in geoms2:
            if (g1, g2) in explicit or (g2, g1) in explicit:
                continue
            if not _bitmask_ok(
                mj.geom_contype[g1], mj.geom_conaffinity[g1], mj.geom_contype[g2], mj.geom_conaffinity[g2]
            ):
                continue
            pair = _ordered(mj, g1, g2)
            if _has_collision_function(int(mj.geom_type[pair[0]]), int(mj.geom_type[pair[1]])):
                pairs.append(pair)
    if midphase:
        pairs.sort()  # the mid phase sorts its contacts by (geom1, geom2)
    return pairs


def _mix_params(mj, g1: int, g2: int):
    """(condim, friction (5,), solref (2,), solimp (5,)) of a geom pair (mj_contactParam):
    the geom of higher priority wins; on equal priority condim and friction take the
    maximum, solref and solimp the solmix-weighted mean (direct solref < 0: the minimum)."""
    p1, p2 = mj.geom_priority[g1], mj.geom_priority[g2]
    if p1 != p2:
        g = g1 if p1 > p2 else g2
        condim = int(mj.geom_condim[g])
        solref = [float(x) for x in mj.geom_solref[g]]
        solimp = [float(x) for x in mj.geom_solimp[g]]
        fri = [float(x) for x in mj.geom_friction[g]]
    else:
        condim = int(max(mj.geom_condim[g1], mj.geom_condim[g2]))
        s1, s2 = float(mj.geom_solmix[g1]), float(mj.geom_solmix[g2])
        if s1 >= MINVAL and s2 >= MINVAL:
            mix = s1 / (s1 + s2)
        elif s1 < MINVAL and s2 < MINVAL:
            mix = 0.5
        elif s1 < MINVAL:
            mix = 0.0
        else:
            mix = 1.0
        ref1, ref2 = mj.geom_solref[g1], mj.geom_solref[g2]
        if ref1[0] > 0 and ref2[0] > 0:
            solref = [mix * float(ref1[i]) + (1 - mix) * float(ref2[i]) for i in range(2)]
        else:
            solref = [float(min(ref1[i], ref2[i])) for i in range(2)]
        imp1, imp2 = mj.geom_solimp[g1], mj.geom_solimp[g2]
        solimp = [mix * float(imp1[i]) + (1 - mix) * float(imp2[i]) for i in range(5)]
        fri = [float(max(mj.geom_friction[g1][i], mj.geom_friction[g2][i])) for i in range(3)]
    friction = [fri[0], fri[0], fri[1], fri[2], fri[2]]
    return condim, friction, solref, solimp


def _max_contacts(t1: int, t2: int, multiccd: bool) -> int:
    """Most contacts the collider of types t1 <= t2 returns (MuJoCo's mj_maxContact)."""
    if (t1, t2) in CONVEX_PAIRS:
        return C.max_contacts(t1, t2, multiccd)
    if (t1, t2) in H.HFIELD_PAIRS:
        return H.MAX_CONTACTS
    return MAX_CONTACTS[(t1, t2)]


def mesh_too_large(mj, g: int) -> str:
    """Why the multi-contact search here cannot hold mesh geom g's features ('' if it can):
    a hull vertex in more than sizes.MAXDEG polygons, or a polygon of more than
    sizes.MAXFACE vertices (MuJoCo sizes its buffers by the model's largest)."""
    k = int(mj.geom_dataid[g])
    vadr, nvert = int(mj.mesh_vertadr[k]), int(mj.mesh_vertnum[k])
    padr, npoly = int(mj.mesh_polyadr[k]), int(mj.mesh_polynum[k])
    deg = int(np.max(mj.mesh_polymapnum[vadr : vadr + nvert], initial=0))
    face = int(np.max(mj.mesh_polyvertnum[padr : padr + npoly], initial=0))
    if deg > MAXDEG:
        return f"a hull vertex in {deg} polygons (the multi-contact search here holds {MAXDEG})"
    if face > MAXFACE:
        return f"a hull polygon of {face} vertices (the multi-contact search here holds {MAXFACE})"
    return ""


def _mesh_pair_ok(mj, g1: int, g2: int, multiccd: bool) -> bool:
    """A convex pair with a mesh whose features the multi-contact search can hold."""
    t1, t2 = int(mj.geom_type[g1]), int(mj.geom_type[g2])
    if C.max_contacts(t1, t2, multiccd) < 2:
        return True
    return not any(int(mj.geom_type[g]) == T.GEOM_MESH and mesh_too_large(mj, g) for g in (g1, g2))


def candidate_pairs(mj) -> dict[str, np.ndarray]:
    """The candidate geom pairs of a compiled MjModel, in MuJoCo's contact order, with
    their contact parameters; see the module docstring. Returns the `cpair_*` arrays, and
    `refused`: (k, 2) geom pairs that can collide but have no collider here."""
    explicit = {(int(mj.pair_geom1[i]), int(mj.pair_geom2[i])) for i in range(mj.npair)}
    excluded = {int(s) for s in mj.exclude_signature}
    pairs: list[tuple[int, int, int, bool]] = []  # (geom1, geom2, explicit pair id or -1, mid phase)
    ipair = 0
    for b1 in range(mj.nbody):
        for b2 in range(b1 + 1, mj.nbody):
            signature = (b1 << 16) + b2
            if not _body_pair_ok(mj, b1, b2) or signature in excluded:
                continue
            while ipair < mj.npair and mj.pair_signature[ipair] <= signature:
                g1, g2 = _ordered(mj, int(mj.pair_geom1[ipair]), int(mj.pair_geom2[ipair]))
                pairs.append((g1, g2, ipair, False))
                ipair += 1
            obb = _midphase(mj, b1, b2)
            pairs.extend((g1, g2, -1, obb) for g1, g2 in _body_geom_pairs(mj, b1, b2, explicit, obb))
    for ip in range(ipair, mj.npair):
        pairs.append((*_ordered(mj, int(mj.pair_geom1[ip]), int(mj.pair_geom2[ip])), ip, False))

    multiccd = not (mj.opt.disableflags & T.DSBL_MULTICCD)
    kept, refused = [], []
    for g1, g2, ip, obb in pairs:
        key = (int(mj.geom_type[g1]), int(mj.geom_type[g2]))
        if (
            key in MAX_CONTACTS
            or key in H.HFIELD_PAIRS
            or (key in CONVEX_PAIRS and _mesh_pair_ok(mj, g1, g2, multiccd))
        ):
            kept.append((g1, g2, ip, obb))
        elif _has_collision_function(*key):
            refused.append((g1, g2))

    paths = {}  # the mid phase's node-pair tests on the way to each pair of geoms (obb pairs)
    for g1, g2, _, obb in kept:
        if obb:
            b1, b2 = sorted((int(mj.geom_bodyid[g1]), int(mj.geom_bodyid[g2])))
            if (b1, b2) not in paths:
                tree = _tree_paths(mj, b1, b2)
                paths[(b1, b2)] = {frozenset(k): v for k, v in tree.items()}
    tests: list[tuple[int, int, int, int]] = []

    n = len(kept)
    out = {
        "cpair_geom": np.zeros((n, 2), dtype=np.int32),
        "cpair_ipair": np.zeros(n, dtype=np.int32),
        "cpair_maxcon": np.zeros(n, dtype=np.int32),
        "cpair_obb": np.zeros(n, dtype=np.int32),
        "cpair_testadr": np.zeros(n, dtype=np.int32),
        "cpair_testnum": np.zeros(n, dtype=np.int32),
        "cpair_margin": np.zeros(n),
        "cpair_gap": np.zeros(n),
        "cpair_dim": np.zeros(n, dtype=np.int32),
        "cpair_friction": np.zeros((n, 5)),
        "cpair_solref": np.zeros((n, 2)),
        "cpair_solreffriction": np.zeros((n, 2)),
        "cpair_solimp": np.zeros((n, 5)),
    }
    for k, (g1, g2, ip, obb) in enumerate(kept):
        out["cpair_geom"][k] = (g1, g2)
        out["cpair_ipair"][k] = ip
        out["cpair_obb"][k] = obb
        out["cpair_testadr"][k] = len(tests)
        if obb:
            b1, b2 = sorted((int(mj.geom_bodyid[g1]), int(mj.geom_bodyid[g2])))
            path = paths[(b1, b2)][frozenset((g1, g2))]
            tests.extend((i1, i2, b1, b2) for i1, i2 in path)
            out["cpair_testnum"][k] = len(path)
        out["cpair_maxcon"][k] = _max_contacts(int(mj.geom_type[g1]), int(mj.geom_type[g2]), multiccd)
        if ip >= 0:
            out["cpair_margin"][k] = mj.pair_margin[ip]
            out["cpair_gap"][k] = mj.pair_gap[ip]
            condim = int(mj.pair_dim[ip])
            friction, solref, solimp = mj.pair_friction[ip], mj.pair_solref[ip], mj.pair_solimp[ip]
            if mj.pair_solreffriction[ip, 0] or mj.pair_solreffriction[ip, 1]:
                out["cpair_solreffriction"][k] = mj.pair_solreffriction[ip]
        else:
            out["cpair_margin"][k] = mj.geom_margin[g1] + mj.geom_margin[g2]
            out["cpair_gap"][k] = mj.geom_gap[g1] + mj.geom_gap[g2]
            condim, friction, solref, solimp = _mix_params(mj, g1, g2)
        out["cpair_dim"][k] = condim
        out["cpair_friction"][k] = np.maximum(MINMU, np.asarray(friction, dtype=float))
        out["cpair_solref"][k] = solref
        out["cpair_solimp"][k] = solimp
    out["cpair_test"] = np.array(tests, dtype=np.int32).reshape(-1, 4)
    out["cpair_testmargin"] = np.array([mj.body_margin[t[2]] + mj.body_margin[t[3]] for t in tests])
    out["refused"] = np.array(refused, dtype=np.int32).reshape(-1, 2)
    return out


# ---- per step: narrow phase over the candidate pairs --------------------------------------------


@kernel
def make_frame(frame, normal, tangent):
    """Contact frame (9,) row-major, rows = axes (mju_makeFrame; P.frame_axes)."""
    x, y, z = P.frame_axes(normal, tangent)
    for i in range(3):
        frame[i] = x[i]
        frame[3 + i] = y[i]
        frame[6 + i] = z[i]


@kernel
def _far_apart(m, d, b, g1, g2, margin):
    """MuJoCo's bounding-sphere test (mj_filterSphere): True if the pair cannot touch."""
    r1 = m.geom_rbound[g1]
    r2 = m.geom_rbound[g2]
    x1 = d.geom_xpos[b, g1]
    x2 = d.geom_xpos[b, g2]
    if r1 > 0 and r2 > 0:
        bound = r1 + r2 + margin
        dx = x1[0] - x2[0]
        dy = x1[1] - x2[1]
        dz = x1[2] - x2[2]
        return dx * dx + dy * dy + dz * dz > bound * bound
    # a plane (rbound 0): the other geom's centre above it by more than rbound + margin
    if m.geom_type[g1] == T.GEOM_PLANE and r2 > 0:
        n = d.geom_xmat[b, g1]
        h = (x2[0] - x1[0]) * n[2] + (x2[1] - x1[1]) * n[5] + (x2[2] - x1[2]) * n[8]
        if h > margin + r2:
            return True
    if m.geom_type[g2] == T.GEOM_PLANE and r1 > 0:
        n = d.geom_xmat[b, g2]
        h = (x1[0] - x2[0]) * n[2] + (x1[1] - x2[1]) * n[5] + (x1[2] - x2[2]) * n[8]
        if h > margin + r1:
            return True
    return False


@kernel
def _infinite(aabb):
    """Whether a box is infinite along some axis (a plane's), and along all three."""
    some = aabb[3] >= MAXVAL or aabb[4] >= MAXVAL or aabb[5] >= MAXVAL
    every = aabb[3] >= MAXVAL and aabb[4] >= MAXVAL and aabb[5] >= MAXVAL
    return some, every


@kernel
def _boxes_apart(box1, box2, margin, expanded):
    """MuJoCo's bounding-box test of its mid phase (mj_collideOBB: the separating-axis test
    of Gottschalk, Lin and Manocha, "OBBTree", SIGGRAPH 1996, on the six face normals only):
    True if a face normal n of either box separates them by more than margin,
    |n.c2 - n.c1| > r1 + r2 + margin, with c a box's centre and r = sum_l |h_l (a_l . n)| its
    half-extent along n (h its half-sizes, a its axes: the columns of mat, the box centred at
    mat aabb[:3] + pos). A box infinite in every direction (a plane without size) meets
    everything; a box infinite along some axis is not tested against the other box's normals.
    A box is (aabb (6,): centre and half-sizes in its frame, pos, mat: its frame). n.c is
    evaluated as MuJoCo does, for its rounding: n.(mat aabb[:3] + pos) for two geoms,
    `expanded` sum_l aabb_l (a_l . n) + pos.n for two nodes of bodies' trees."""
    aabb1, pos1, mat1 = box1
    aabb2, pos2, mat2 = box2
    some1, every1 = _infinite(aabb1)
    some2, every2 = _infinite(aabb2)
    if every1 or every2:
        return False
    c1 = c2 = (0.0, 0.0, 0.0)  # world centres, needed for two geoms only
    if not expanded:
        c1 = mv3(mat1, aabb1)
        c2 = mv3(mat2, aabb2)
        c1 = (c1[0] + pos1[0], c1[1] + pos1[1], c1[2] + pos1[2])
        c2 = (c2[0] + pos2[0], c2[1] + pos2[1], c2[2] + pos2[2])
    for j in range(2):  # whose face normals
        if some2 if j == 0 else some1:
            continue
        axes = mat1 if j == 0 else mat2
        dots1 = mtm3(mat1, axes)  # [3 l + k] = a1_l . n_k
        dots2 = mtm3(mat2, axes)
        if expanded:
            off1 = mtv3(axes, pos1)  # [k] = n_k . pos1
            off2 = mtv3(axes, pos2)
        else:
            proj1 = mtv3(axes, c1)  # [k] = n_k . c1
            proj2 = mtv3(axes, c2)
        for k in range(3):
            if expanded:
                p1 = aabb1[0] * dots1[k] + aabb1[1] * dots1[3 + k] + aabb1[2] * dots1[6 + k] + off1[k]
                p2 = aabb2[0] * dots2[k] + aabb2[1] * dots2[3 + k] + aabb2[2] * dots2[6 + k] + off2[k]
            else:
                p1 = proj1[k]
                p2 = proj2[k]
            r1 = abs(aabb1[3] * dots1[k]) + abs(aabb1[4] * dots1[3 + k]) + abs(aabb1[5] * dots1[6 + k])
            r2 = abs(aabb2[3] * dots2[k]) + abs(aabb2[4] * dots2[3 + k]) + abs(aabb2[5] * dots2[6 + k])
            if r1 + r2 + margin < abs(p2 - p1):
                return True
    return False


@kernel
def _tree_apart(m, d, b, p, g1, g2, margin):
    """Whether MuJoCo's mid phase (mj_collideTree) leaves candidate pair p of row b out: a
    node pair on the tree's path to its two geoms (cpair_test, in the bodies' inertial
    frames) or the geoms' own boxes (geom_aabb, in the geom frames) apart (_boxes_apart)."""
    for t in range(m.cpair_testadr[p], m.cpair_testadr[p] + m.cpair_testnum[p]):
        n1, n2, b1, b2 = m.cpair_test[t, 0], m.cpair_test[t, 1], m.cpair_test[t, 2], m.cpair_test[t, 3]
        node1 = (m.bvh_aabb[n1], d.xipos[b, b1], d.ximat[b, b1])
        node2 = (m.bvh_aabb[n2], d.xipos[b, b2], d.ximat[b, b2])
        if _boxes_apart(node1, node2, m.cpair_testmargin[t], True):
            return True
    geom1 = (m.geom_aabb[g1], d.geom_xpos[b, g1], d.geom_xmat[b, g1])
    geom2 = (m.geom_aabb[g2], d.geom_xpos[b, g2], d.geom_xmat[b, g2])
    return _boxes_apart(geom1, geom2, margin, False)


@kernel
def narrowphase(con, work, type1, type2, margin, pos1, mat1, size1, pos2, mat2, size2):
    """Dispatch on the geom types (type1 <= type2) to the closed-form collider of
    collision_primitive; returns its count, or -1 for a pair it has no collider for (one
    of sizes.CONVEX_PAIRS). `work` is the box-box work array."""
    if type1 == T.GEOM_PLANE:
        if type2 == T.GEOM_SPHERE:
            return P.collide_plane_sphere(con, margin, pos1, mat1, size1, pos2, mat2, size2)
        if type2 == T.GEOM_CAPSULE:
            return P.collide_plane_capsule(con, margin, pos1, mat1, size1, pos2, mat2, size2)
        if type2 == T.GEOM_ELLIPSOID:
            return P.collide_plane_ellipsoid(con, margin, pos1, mat1, size1, pos2, mat2, size2)
        if type2 == T.GEOM_CYLINDER:
            return P.collide_plane_cylinder(con, margin, pos1, mat1, size1, pos2, mat2, size2)
        if type2 == T.GEOM_BOX:
            return P.collide_plane_box(con, margin, pos1, mat1, size1, pos2, mat2, size2)
        return -1
    if type1 == T.GEOM_SPHERE:
        if type2 == T.GEOM_SPHERE:
            return P.collide_sphere_sphere(con, margin, pos1, mat1, size1, pos2, mat2, size2)
        if type2 == T.GEOM_CAPSULE:
            return P.collide_sphere_capsule(con, margin, pos1, mat1, size1, pos2, mat2, size2)
        if type2 == T.GEOM_CYLINDER:
            return P.collide_sphere_cylinder(con, margin, pos1, mat1, size1, pos2, mat2, size2)
        if type2 == T.GEOM_BOX:
            return P.collide_sphere_box(con, margin, pos1, mat1, size1, pos2, mat2, size2)
    elif type1 == T.GEOM_CAPSULE:
        if type2 == T.GEOM_CAPSULE:
            return P.collide_capsule_capsule(con, margin, pos1, mat1, size1, pos2, mat2, size2)
        if type2 == T.GEOM_BOX:
            return P.collide_capsule_box(con, margin, pos1, mat1, size1, pos2, mat2, size2)
    elif type1 == T.GEOM_BOX and type2 == T.GEOM_BOX:
        return P.collide_box_box(con, margin, pos1, mat1, size1, pos2, mat2, size2, work)
    return -1


@kernel
def _primitive_pair(m, d, b, p):
    """Contacts of candidate pair p of row b from its closed-form collider, in row b's
    scratch_con: their count; 0 when the bounding spheres are apart (_far_apart), -1 when
    the pair has no closed-form collider (a convex pair, see _convex_pair)."""
    g1 = m.cpair_geom[p, 0]
    g2 = m.cpair_geom[p, 1]
    margin = m.cpair_margin[p] + m.cpair_gap[p]
    if _far_apart(m, d, b, g1, g2, margin):
        return 0
    if m.cpair_obb[p] and _tree_apart(m, d, b, p, g1, g2, margin):
        return 0
    if m.geom_type[g2] == T.GEOM_MESH and m.geom_type[g1] == T.GEOM_PLANE:
        return CM.collide_plane_mesh(
            d.scratch_con[b],
            d.scratch_ccd_obj[b, 0, OBJ_WIDTH:],
            m,
            m.geom_dataid[g2],
            margin,
            d.geom_xpos[b, g1],
            d.geom_xmat[b, g1],
            d.geom_xpos[b, g2],
            d.geom_xmat[b, g2],
        )
    return narrowphase(
        d.scratch_con[b],
        d.scratch_boxbox[b],
        m.geom_type[g1],
        m.geom_type[g2],
        margin,
        d.geom_xpos[b, g1],
        d.geom_xmat[b, g1],
        m.geom_size[g1],
        d.geom_xpos[b, g2],
        d.geom_xmat[b, g2],
        m.geom_size[g2],
    )


@kernel
def _ccd_work(d, b):
    """Row b's work space of the convex collider (collision_convex's ws)."""
    return (
        d.scratch_ccd_obj[b],
        d.scratch_ccd_simplex[b],
        d.scratch_ccd_vert[b],
        d.scratch_ccd_face[b],
        d.scratch_ccd_faceid[b],
        d.scratch_ccd_list[b],
        d.scratch_ccd_poly[b],
    )


@pair_unit
def hfield_pair(m, d, b, p):
    """Contacts of candidate pair p of row b, a height field against a convex geom
    (collision_hfield.HFIELD_PAIRS, bounding spheres not apart), prism by prism through the
    convex collider, in row b's scratch_con: their count (up to 50, one per prism)."""
    g1 = m.cpair_geom[p, 0]
    g2 = m.cpair_geom[p, 1]
    h = m.geom_dataid[g1]
    adr = m.hfield_adr[h]
    nrow = m.hfield_nrow[h]
    ncol = m.hfield_ncol[h]
    return H.collide_hfield(
        d.scratch_con[b],
        _ccd_work(d, b),
        (m.hfield_size[h], nrow, ncol, m.hfield_data[adr : adr + nrow * ncol]),
        m.geom_type[g2],
        m.geom_rbound[g2],
        m.cpair_margin[p] + m.cpair_gap[p],
        d.geom_xpos[b, g1],
        d.geom_xmat[b, g1],
        d.geom_xpos[b, g2],
        d.geom_xmat[b, g2],
        m.geom_size[g2],
        (m.opt_ccd_tolerance, m.opt_ccd_iterations),
    )


@pair_unit
def convex_pair(m, d, b, p):
    """Contacts of candidate pair p of row b (one of sizes.CONVEX_PAIRS, bounding
    spheres not apart) from the convex collider, in row b's scratch_con: their count (0 or
    1, up to cpair_maxcon with the multi-contact search). The collider works in the row's
    scratch_ccd_* arrays."""
    g1 = m.cpair_geom[p, 0]
    g2 = m.cpair_geom[p, 1]
    for k, g in ((0, g1), (1, g2)):
        if m.geom_type[g] == T.GEOM_MESH:  # a copy of the hull for the support function
            CM.init_tail(d.scratch_ccd_obj[b, k, OBJ_WIDTH:], m, m.geom_dataid[g])
    pose1 = (d.geom_xpos[b, g1], d.geom_xmat[b, g1], m.geom_size[g1])
    pose2 = (d.geom_xpos[b, g2], d.geom_xmat[b, g2], m.geom_size[g2])
    return C.collide_convex(
        d.scratch_con[b],
        _ccd_work(d, b),
        m.geom_type[g1],
        m.geom_type[g2],
        m.cpair_margin[p] + m.cpair_gap[p],
        *pose1,
        *pose2,
        (m.opt_ccd_tolerance, m.opt_ccd_iterations, m.cpair_maxcon[p]),
    )


@kernel
def _convex_pair(m, d, b, p):
    """Contacts of candidate pair p of row b that has no closed-form collider, from the pair
    unit for it (hfield_pair or convex_pair; engine.binding sets both addresses for a model
    with such pairs)."""
    if m.geom_type[m.cpair_geom[p, 0]] == T.GEOM_HFIELD:
        return call_pair_unit(m.unit_hfield_pair, m, d, b, p)
    return call_pair_unit(m.unit_convex_pair, m, d, b, p)


@kernel
def _store(m, d, b, i, p, con, k):
    """Contact i of row b from row k of the collider output of candidate pair p."""
    d.contact_dist[b, i] = con[k, DIST]
    for j in range(3):
        d.contact_pos[b, i, j] = con[k, POS + j]
    make_frame(d.contact_frame[b, i], con[k, NORMAL : NORMAL + 3], con[k, TANGENT : TANGENT + 3])
    d.contact_geom[b, i, 0] = m.cpair_geom[p, 0]
    d.contact_geom[b, i, 1] = m.cpair_geom[p, 1]
    d.contact_includemargin[b, i] = m.cpair_margin[p]
    d.contact_dim[b, i] = m.cpair_dim[p]
    for j in range(5):
        d.contact_friction[b, i, j] = m.cpair_friction[p, j]
        d.contact_solimp[b, i, j] = m.cpair_solimp[p, j]
    for j in range(2):
        d.contact_solref[b, i, j] = m.cpair_solref[p, j]
        d.contact_solreffriction[b, i, j] = m.cpair_solreffriction[p, j]
    d.contact_mu[b, i] = 0.0  # set by the constraint stage (MuJoCo: from R)
    d.contact_exclude[b, i] = 1 if con[k, DIST] >= m.cpair_margin[p] else 0


@kernel
def _store_pair(m, d, b, p, n):
    """Append the n contacts of candidate pair p (rows 0..n-1 of row b's scratch_con) to
    contact_*[ncon:]; those beyond nconmax are counted in contact_lost, not stored."""
    con = d.scratch_con[b]
    for k in range(n):
        if d.ncon[b] < m.nconmax:
            _store(m, d, b, d.ncon[b], p, con, k)
            d.ncon[b] += 1
        else:
            d.contact_lost[b] += 1


# The two collision units run the same pair loop; a model compiles only the one it needs
# (engine.binding.units_for): `collision` when every candidate pair has a closed-form
# collider, `collision_convex` when a pair needs the convex collider (GJK/EPA, the bulk of
# the compile time: the closed-form unit never contains it).


@unit
def collision(m, d, b):
    """Contacts of row b at its current geom poses (run kinematics first), every candidate
    pair through its closed-form collider: fills ncon and contact_*[:ncon]; contacts beyond
    nconmax are counted in contact_lost, not stored."""
    d.ncon[b] = 0
    d.contact_lost[b] = 0
    for p in range(m.cpair_geom.shape[0]):
        _store_pair(m, d, b, p, _primitive_pair(m, d, b, p))


@unit
def collision_convex(m, d, b):
    """As `collision`, with the convex collider (collision_convex) for the candidate pairs
    that have no closed-form one."""
    d.ncon[b] = 0
    d.contact_lost[b] = 0
    for p in range(m.cpair_geom.shape[0]):
        n = _primitive_pair(m, d, b, p)
        if n < 0:
            n = _convex_pair(m, d, b, p)
        _store_pair(m, d, b, p, n)
