"""Constraint islands (MuJoCo's mj_island in engine_island.c): the kinematic trees coupled by
constraint rows, so that the solver can solve each group on its own.

A row touches one or two trees (or more: a tendon's, through its Jacobian); trees that share
a row are in one island (the connected components of the graph whose nodes are the trees and
whose edges are the rows). A tree no row touches is in no island: its dofs keep
qacc = qacc_smooth. Islands are numbered in ascending order of their smallest tree (MuJoCo's
union-find, whose roots are the smallest tree of each component), and every map lists its
items island by island, each island's in ascending order:

    map_itree2tree[island_itreeadr[k] .. + island_ntree[k]]   the trees of island k
    map_idof2dof[island_idofadr[k] .. + island_nv[k]]          its dofs (then the nv - nidof
                                                               dofs in no island)
    map_iefc2efc[island_iefcadr[k] .. + island_nefc[k]]        its rows: island_ne equality
                                                               rows, island_nf friction
                                                               rows, then limits and contacts

map_dof2idof and map_efc2iefc are the inverse permutations. Which trees a row touches follows
MuJoCo (treeIterInit / treeNext): a contact's two geoms' bodies, a connect or weld's two bodies,
a joint limit's or dof friction's dof; any other row (joint and tendon equalities, tendon
limits and friction) the trees of its Jacobian's columns: the stored columns where MuJoCo
stores efc_J sparse (mj_isSparse: jacobian="sparse", or "auto" with nv >= 60), the nonzero
entries where it stores it dense. Rows of one constraint (same type and id, consecutive)
share the first row's tree.

With <flag island="disable"/> or no rows, nisland = nidof = 0 and the maps hold one group of
everything in order (identity maps), which is how the solver then solves all rows at once.

A model of one kinematic tree (a single robot; the floor and other static geoms belong to no
tree) with rows has one island of every dof and every row, in order: `island` then fills the
fields directly (_one_tree), without the union-find, as the general search would.
"""

from robodyn.engine import types as T
from robodyn.engine.jit import kernel


@kernel
def _dsu_root(parent, tree):
    """The root of tree's set, compressing the path to it (mj_dsuRoot)."""
    root = tree
    while parent[root] != root:
        root = parent[root]
    while parent[tree] != tree:
        nxt = parent[tree]
        parent[tree] = root
        tree = nxt
    return root


@kernel
def _dsu_merge(parent, tree1, tree2):
    """Activate trees tree1 and tree2 (-1: the static world, ignored) and join their sets, the
    larger root linked under the smaller (mj_dsuMerge)."""
    if tree1 == -1:
        tree1 = tree2
    if tree2 == -1:
        tree2 = tree1
    if tree1 < 0:
        return
    if parent[tree1] == -1:
        parent[tree1] = tree1
    if parent[tree2] == -1:
        parent[tree2] = tree2
    if parent[tree1] == parent[tree2]:
        return
    root1 = _dsu_root(parent, tree1)
    root2 = _dsu_root(parent, tree2)
    if root1 < root2:
        parent[root2] = root1
    elif root2 < root1:
        parent[root1] = root2


@kernel
def _mj_sparse(m):
    """Whether MuJoCo stores efc_J sparse for this model (mj_isSparse)."""
    return m.opt_jacobian == T.JAC_SPARSE or (m.opt_jacobian == T.JAC_AUTO and m.nv >= T.SPARSE_NV)


@kernel
def _scan_trees(m, d, b, i, parent, by_column):
    """Join the trees of row i's Jacobian (MuJoCo's generic scan): those of its stored
    columns (by_column) or of its nonzero entries; returns the first (-1 if none)."""
    row = d.efc_J[b, i]
    n = d.efc_J_rownnz[b, i]
    dense = n == m.nv
    first = -1
    prev = -1
    for t in range(n):
        dof = t if dense else d.efc_J_colind[b, i, t]
        if not by_column and row[t] == 0.0:
            continue
        tree = m.dof_treeid[dof]
        if tree == prev:
            continue
        if first == -1:
            first = tree
            _dsu_merge(parent, tree, -1)
        else:
            _dsu_merge(parent, prev, tree)
        prev = tree
    return first


@kernel
def _row_trees(m, d, b, i):
    """(tree1, tree2) of row i where MuJoCo names them directly (-1: static, -2: none), or
    (-3, -3): scan the Jacobian."""
    kind = d.efc_type[b, i]
    obj = d.efc_id[b, i]
    if kind == T.CNSTR_FRICTION_DOF:
        return m.dof_treeid[obj], -2
    if kind == T.CNSTR_LIMIT_JOINT:
        return m.dof_treeid[m.jnt_dofadr[obj]], -2
    if kind >= T.CNSTR_CONTACT_FRICTIONLESS:  # the contact types (frictionless, pyramidal, elliptic)
        g1 = d.contact_geom[b, obj, 0]
        g2 = d.contact_geom[b, obj, 1]
        return m.body_treeid[m.geom_bodyid[g1]], m.body_treeid[m.geom_bodyid[g2]]
    if kind == T.CNSTR_EQUALITY and (m.eq_type[obj] == T.EQ_CONNECT or m.eq_type[obj] == T.EQ_WELD):
        b1 = m.eq_obj1id[obj]
        b2 = m.eq_obj2id[obj]
        if m.eq_objtype[obj] == T.OBJ_SITE:
            b1 = m.site_bodyid[b1]
            b2 = m.site_bodyid[b2]
        return m.body_treeid[b1], m.body_treeid[b2]
    return -3, -3


@kernel
def _in_order(m, d, b, k):
    """Identity maps of every tree, dof and row of row b, each marked as in island k (-1: in
    none)."""
    for t in range(m.ntree):
        d.tree_island[b, t] = k
        d.map_itree2tree[b, t] = t
    for v in range(m.nv):
        d.dof_island[b, v] = k
        d.map_dof2idof[b, v] = v
        d.map_idof2dof[b, v] = v
    for i in range(d.nefc[b]):
        d.efc_island[b, i] = k
        d.map_efc2iefc[b, i] = i
        d.map_iefc2efc[b, i] = i


@kernel
def _identity(m, d, b):
    """nisland = nidof = 0 and identity maps: one group of every tree, dof and row."""
    d.nisland[b] = 0
    d.nidof[b] = 0
    _in_order(m, d, b, -1)


@kernel
def _one_tree(m, d, b):
    """island() for a model of one tree and nefc > 0 rows: island 0 holds tree 0, all nv dofs
    and every row, each map the identity (every row touches the tree; one that touched none
    would join it too, as in the general search, where its tree -1 reads the last tree's
    island)."""
    nefc = d.nefc[b]
    nv = m.nv
    _in_order(m, d, b, 0)
    d.nisland[b] = 1
    d.nidof[b] = nv
    d.island_ntree[b, 0] = 1
    d.island_itreeadr[b, 0] = 0
    d.island_nv[b, 0] = nv
    d.island_idofadr[b, 0] = 0
    d.island_dofadr[b, 0] = 0
    ne = 0
    nf = 0
    for i in range(nefc):
        kind = d.efc_type[b, i]
        if kind == T.CNSTR_EQUALITY:
            ne += 1
        elif kind == T.CNSTR_FRICTION_DOF or kind == T.CNSTR_FRICTION_TENDON:
            nf += 1
    d.island_ne[b, 0] = ne
    d.island_nf[b, 0] = nf
    d.island_nefc[b, 0] = nefc
    d.island_iefcadr[b, 0] = 0


@kernel
def island(m, d, b):
    """The islands of row b's constraint rows (see the module docstring): nisland, nidof and
    every tree_*, island_*, dof_island, efc_island and map_* field."""
    nefc = d.nefc[b]
    ntree = m.ntree
    if (m.opt_disableflags & T.DSBL_ISLAND) or nefc == 0:
        _identity(m, d, b)
        return
    if ntree == 1:
        _one_tree(m, d, b)
        return
    parent = d.scratch_tree[b]
    efc_tree = d.efc_island[b]  # each row's tree first, its island below
    for t in range(ntree):
        parent[t] = -1
    kind = -1
    obj = -1
    for i in range(nefc):
        if i > 0 and d.efc_type[b, i] == kind and d.efc_id[b, i] == obj:
            efc_tree[i] = efc_tree[i - 1]
            continue
        kind = d.efc_type[b, i]
        obj = d.efc_id[b, i]
        tree1, tree2 = _row_trees(m, d, b, i)
        if tree1 == -3:
            tree = _scan_trees(m, d, b, i, parent, _mj_sparse(m))
            if tree == -1:  # an all-zero row (MuJoCo stops with an error): its columns
                tree = _scan_trees(m, d, b, i, parent, True)
            efc_tree[i] = tree
            continue
        efc_tree[i] = tree1 if tree1 >= 0 else tree2
        if tree2 == -2:
            _dsu_merge(parent, tree1, -1)
        else:
            _dsu_merge(parent, tree1, tree2)
    # islands in ascending order of their roots (mj_dsuAssign)
    tree_island = d.tree_island[b]
    nisland = 0
    nidof = 0
    for t in range(ntree):
        if parent[t] == -1:
            tree_island[t] = -1
            continue
        if parent[t] == t:
            tree_island[t] = nisland
            nisland += 1
        else:
            parent[t] = parent[parent[t]]
            tree_island[t] = tree_island[parent[t]]
        nidof += m.tree_dofnum[t]
    d.nisland[b] = nisland
    d.nidof[b] = nidof
    if nisland == 0:  # cannot happen: every row touches a tree
        _identity(m, d, b)
        return
    # trees
    ntr = d.island_ntree[b]
    tadr = d.island_itreeadr[b]
    for k in range(nisland):
        ntr[k] = 0
    for t in range(ntree):
        if tree_island[t] >= 0:
            ntr[tree_island[t]] += 1
    tadr[0] = 0
    for k in range(1, nisland):
        tadr[k] = tadr[k - 1] + ntr[k - 1]
    fill = d.island_nefc[b]  # a running count per island, recomputed below
    for k in range(nisland):
        fill[k] = 0
    rest = tadr[nisland - 1] + ntr[nisland - 1]
    for t in range(ntree):
        k = tree_island[t]
        if k >= 0:
            d.map_itree2tree[b, tadr[k] + fill[k]] = t
            fill[k] += 1
        else:
            d.map_itree2tree[b, rest] = t
            rest += 1
    # dofs: a tree's dofs are contiguous and its island's trees ascending, so each island's
    # dofs come out ascending
    inv = d.island_nv[b]
    iadr = d.island_idofadr[b]
    for k in range(nisland):
        inv[k] = 0
    for v in range(m.nv):
        k = tree_island[m.dof_treeid[v]]
        d.dof_island[b, v] = k
        if k >= 0:
            inv[k] += 1
    iadr[0] = 0
    for k in range(1, nisland):
        iadr[k] = iadr[k - 1] + inv[k - 1]
    for k in range(nisland):
        fill[k] = 0
    rest = nidof
    for v in range(m.nv):
        k = d.dof_island[b, v]
        if k >= 0:
            idof = iadr[k] + fill[k]
            fill[k] += 1
        else:
            idof = rest
            rest += 1
        d.map_dof2idof[b, v] = idof
        d.map_idof2dof[b, idof] = v
    for k in range(nisland):
        d.island_dofadr[b, k] = d.map_idof2dof[b, iadr[k]]
    # rows
    ne = d.island_ne[b]
    nf = d.island_nf[b]
    nrow = d.island_nefc[b]
    eadr = d.island_iefcadr[b]
    for k in range(nisland):
        ne[k] = 0
        nf[k] = 0
        nrow[k] = 0
    for i in range(nefc):
        k = tree_island[efc_tree[i]]
        d.efc_island[b, i] = k
        nrow[k] += 1
        kind = d.efc_type[b, i]
        if kind == T.CNSTR_EQUALITY:
            ne[k] += 1
        elif kind == T.CNSTR_FRICTION_DOF or kind == T.CNSTR_FRICTION_TENDON:
            nf[k] += 1
    eadr[0] = 0
    for k in range(1, nisland):
        eadr[k] = eadr[k - 1] + nrow[k - 1]
    fill = d.scratch_tree[b]  # the parents are no longer needed
    for k in range(nisland):
        fill[k] = 0
    for i in range(nefc):
        k = d.efc_island[b, i]
        c = eadr[k] + fill[k]
        fill[k] += 1
        d.map_efc2iefc[b, i] = c
        d.map_iefc2efc[b, c] = i
