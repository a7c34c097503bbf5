"""Pieces shared by MuJoCo's dual solvers (engine.solver's PGS and engine.noslip's noslip
pass, engine_solver.c) and Newton's dense factor: the rows and dofs of an island, the rows
Y_i = M^-1 J_i^T of the dual problem's matrix A = J M^-1 J^T (so that A_ij = J_i Y_j and
(A f)_i = J_i (M^-1 J^T f) without forming A), the friction QCQPs of an elliptic contact
and the projection onto its friction ellipsoid, and dense Cholesky factor and solve
(mju_cholFactor, mju_cholSolve).
"""

import math

from robodyn.engine.constraint import dot, dot_sparse
from robodyn.engine.factor import solve_ld, solve_ld_range, solve_lt_range
from robodyn.engine.jit import kernel, u
from robodyn.engine.types import MINVAL


@kernel
def group(m, d, b, k):
    """(rows, dofs, trees) solved together as island k: slices of map_iefc2efc, map_idof2dof
    and map_itree2tree (engine.island); with nisland = 0 (islands disabled) all of them."""
    if d.nisland[b] > 0:
        radr = d.island_iefcadr[b, k]
        dadr = d.island_idofadr[b, k]
        tadr = d.island_itreeadr[b, k]
        return (
            d.map_iefc2efc[b, radr : radr + d.island_nefc[b, k]],
            d.map_idof2dof[b, dadr : dadr + d.island_nv[b, k]],
            d.map_itree2tree[b, tadr : tadr + d.island_ntree[b, k]],
        )
    return d.map_iefc2efc[b, : d.nefc[b]], d.map_idof2dof[b, : m.nv], d.map_itree2tree[b, : m.ntree]


@kernel
def solver_scale(m, d, b, dofs):
    """The dual and primal solvers' scale of improvement and gradient (and noslip's):
    1 / max(MINVAL, sum of M's diagonal over the group's dofs), all nv dofs with islands
    disabled. 4.0.0: so the binary computes it in solPGS, mj_solPrimal and solNoSlip (read
    from its machine code; the reported improvements agree); the 3.12 source has
    1 / (meaninertia nv) for one problem of all rows, and for PGS and noslip always."""
    inertia = 0.0
    for j in range(dofs.shape[0]):
        k = dofs[j]
        inertia += d.qM[b, m.M_rowadr[k] + m.M_rownnz[k] - 1]
    return 1.0 / max(MINVAL, inertia)


@kernel
def chol_factor(H, n, mindiag):
    """The lower triangle of H (n x n) <- its Cholesky factor L (H = L L^T), in place
    (mju_cholFactor: a pivot below mindiag is replaced by it and its column below cleared);
    returns the rank, n less the pivots replaced. Newton's Hessian and the cones' Hessians
    (mindiag = MINVAL), PGS's QCQP (1e-10)."""
    rank = n
    for j in range(n):
        x = H[j, j] - dot(H[j], H[j], j)
        if x < mindiag:
            H[j, j] = math.sqrt(mindiag)
            rank -= 1
            for i in range(j + 1, n):
                H[i, j] = 0.0
        else:
            H[j, j] = math.sqrt(x)
            inv = 1.0 / H[j, j]
            hj = H[j]
            uj = u(j)
            for i in range(uj + u(1), u(n)):
                H[i, uj] = (H[i, uj] - dot(H[i], hj, j)) * inv
    return rank


@kernel
def chol_solve(H, res, vec, n):
    """res = (L L^T)^-1 vec for the Cholesky factor L (n x n) in the lower triangle of H
    (mju_cholSolve): L y = vec forward, then L^T res = y backward."""
    for i in range(n):
        res[i] = vec[i]
    for i in range(n):
        if i:
            res[i] -= dot(H[i], res, i)
        res[i] /= H[i, i]
    for i in range(n - 1, -1, -1):
        ui = u(i)
        s = res[ui]  # res[i] in a register: the same subtractions in the same order
        for j in range(ui + u(1), u(n)):
            s -= H[j, ui] * res[j]
        res[ui] = s / H[ui, ui]


@kernel
def add_y(m, d, b, i, v, scale):
    """v += scale * Y_i: a plain vector update when Y_i holds every dof (its columns are
    then 0..nv-1), else over its entries."""
    y = d.scratch_efc_Y[b, i]
    n = d.scratch_efc_Y_rownnz[b, i]
    if n == m.nv:
        for k in range(n):
            v[k] += scale * y[k]
    else:
        col = d.scratch_efc_Y_colind[b, i]
        for t in range(n):
            v[u(col[t])] += scale * y[t]


@kernel
def clear_y(m, d, b, i, w):
    """Zero w on the entries of Y_i (undoes add_y on a cleared vector)."""
    n = d.scratch_efc_Y_rownnz[b, i]
    if n == m.nv:
        for t in range(n):
            w[t] = 0.0
    else:
        col = d.scratch_efc_Y_colind[b, i]
        for t in range(n):
            w[col[t]] = 0.0


@kernel
def minv_jt_f(m, d, b, v, rows, dofs):
    """v = M^-1 J^T f = sum_i f_i (M^-1 J_i^T) over the group's rows, on its dofs (v is
    indexed by dof; the group's rows touch its dofs only), from the rows Y_i kept by
    minv_jt_rows."""
    for j in range(dofs.shape[0]):
        v[dofs[j]] = 0.0
    for c in range(rows.shape[0]):
        i = rows[c]
        fi = d.efc_force[b, i]
        if fi != 0.0:
            add_y(m, d, b, i, v, fi)


@kernel
def minv_jt_rows(m, d, b, half):
    """Y_i = M^-1 J_i^T for every row, kept on the dofs of the trees J_i touches (M is
    block diagonal over the trees, so Y_i is zero elsewhere; each tree is the contiguous
    dof range tree_dofadr .. + tree_dofnum, so Y_i's columns come out ascending), and
    scratch_efc[b, 0][i] = 1 / (J_i Y_i + R_i) (PGS's ARinv). With `half`, Z_i =
    D^-1/2 L^-T J_i^T instead (M = L^T D L; MuJoCo's mj_solveM2), half the work, so that
    J_i M^-1 J_j^T = Z_i . Z_j (AR = Z Z^T + R, as MuJoCo's mj_makeY and mj_makeAR form it),
    and ARinv is left to the AR build (engine.solver's _island_ar: 1 / AR's diagonal);
    scratch_nv[b, 8] then holds D^-1/2."""
    Y = d.scratch_efc_Y[b]
    Ycol = d.scratch_efc_Y_colind[b]
    w = d.scratch_nv[b, 0]  # J_i^T, then M^-1 J_i^T (or Z_i), dense on those trees
    ARinv = d.scratch_efc[b, 0]
    qLD = d.qLD[b]
    sdinv = d.scratch_nv[b, 8]
    if half:
        for k in range(m.nv):
            sdinv[k] = 1.0 / math.sqrt(qLD[m.M_rowadr[k] + m.M_rownnz[k] - 1])
    for i in range(d.nefc[b]):
        nnz = d.efc_J_rownnz[b, i]
        row = d.efc_J[b, i]
        if nnz == m.nv:  # a dense row: Y_i on every dof (colind unused, see add_y)
            y = Y[i]
            for k in range(nnz):
                y[k] = row[k]
            d.scratch_efc_Y_rownnz[b, i] = nnz
            if half:
                solve_lt_range(y, qLD, m, 0, nnz)
                for k in range(nnz):
                    y[k] *= sdinv[k]
            else:
                solve_ld(y, qLD, d.qLDiagInv[b], m)
                ARinv[i] = 1.0 / (dot(row, y, nnz) + d.efc_R[b, i])
            continue
        col = d.efc_J_colind[b, i]
        n = 0
        last = -1
        for t in range(nnz):
            tree = m.dof_treeid[col[t]]
            if tree != last:  # a new tree (J's columns ascending: each tree once)
                last = tree
                for k in range(m.tree_dofadr[tree], m.tree_dofadr[tree] + m.tree_dofnum[tree]):
                    w[k] = 0.0
                    Ycol[i, n] = k
                    n += 1
        d.scratch_efc_Y_rownnz[b, i] = n
        for t in range(nnz):
            w[col[t]] = row[t]
        last = -1
        for t in range(nnz):
            tree = m.dof_treeid[col[t]]
            if tree != last:
                last = tree
                start = m.tree_dofadr[tree]
                if half:
                    solve_lt_range(w, qLD, m, start, start + m.tree_dofnum[tree])
                else:
                    solve_ld_range(w, qLD, d.qLDiagInv[b], m, start, start + m.tree_dofnum[tree])
        if half:
            for t in range(n):
                k = Ycol[i, t]
                Y[i, t] = w[k] * sdinv[k]
        else:
            ARinv[i] = 1.0 / (dot_sparse(row, col, w, nnz) + d.efc_R[b, i])
            for t in range(n):
                Y[i, t] = w[Ycol[i, t]]


@kernel
def dot_y(m, d, b, i, x):
    """Y_i . x (x: nv) for a row Y_i (or Z_i) of minv_jt_rows: a plain dot product when it
    holds every dof, else over its entries."""
    n = d.scratch_efc_Y_rownnz[b, i]
    if n == m.nv:
        return dot(d.scratch_efc_Y[b, i], x, n)
    return dot_sparse(d.scratch_efc_Y[b, i], d.scratch_efc_Y_colind[b, i], x, n)


@kernel
def project_ellipsoid(fric, normal, mu, n, feasible):
    """Scale the friction forces fric[:n] onto sum_j (fric_j / mu_j)^2 = normal^2; with
    feasible only when they lie outside (MuJoCo's projectEllipsoid)."""
    s = 0.0
    for j in range(n):
        s += fric[j] * fric[j] / (mu[j] * mu[j])
    normal2 = normal * normal
    if not feasible or s > normal2:
        scl = math.sqrt(normal2 / max(MINVAL, s))
        for j in range(n):
            fric[j] *= scl


@kernel
def qcqp2(A, i, bin, dfr, r, out):
    """out = argmin 1/2 x^T Ac x + x^T bin  s.t.  sum_j (x_j / dfr_j)^2 <= r^2 in 2 dimensions,
    Ac[j, k] = A[i + 1 + j, 1 + k]; returns 1 if the constraint is active (mju_QCQP2). In the
    scaled variables y_j = x_j / dfr_j the constraint is |y| <= r; Newton's method on the
    multiplier la of |(Ac' + la I)^-1 b'| = r, from la = 0."""
    b1 = bin[0] * dfr[0]
    b2 = bin[1] * dfr[1]
    A11 = A[i + 1, 1] * dfr[0] * dfr[0]
    A22 = A[i + 2, 2] * dfr[1] * dfr[1]
    A12 = A[i + 1, 2] * dfr[0] * dfr[1]
    la = 0.0
    v1 = v2 = 0.0
    for _ in range(20):
        det = (A11 + la) * (A22 + la) - A12 * A12
        if det < 1e-10:  # not positive definite (1e-10 threshold): no friction
            out[0] = 0.0
            out[1] = 0.0
            return 0
        detinv = 1 / det
        P11 = (A22 + la) * detinv
        P22 = (A11 + la) * detinv
        P12 = -A12 * detinv
        v1 = -P11 * b1 - P12 * b2  # v = -(A + la)^-1 b
        v2 = -P12 * b1 - P22 * b2
        val = v1 * v1 + v2 * v2 - r * r
        if val < 1e-10:  # converged, or the unconstrained minimum is inside
            break
        deriv = -2.0 * (P11 * v1 * v1 + 2.0 * P12 * v1 * v2 + P22 * v2 * v2)
        delta = -val / deriv
        if delta < 1e-10:
            break
        la += delta
    out[0] = v1 * dfr[0]
    out[1] = v2 * dfr[1]
    return 1 if la != 0 else 0


@kernel
def qcqp3(A, i, bin, dfr, r, out):
    """qcqp2 in 3 dimensions (mju_QCQP3: (A + la)^-1 from its adjugate)."""
    b1 = bin[0] * dfr[0]
    b2 = bin[1] * dfr[1]
    b3 = bin[2] * dfr[2]
    A11 = A[i + 1, 1] * dfr[0] * dfr[0]
    A22 = A[i + 2, 2] * dfr[1] * dfr[1]
    A33 = A[i + 3, 3] * dfr[2] * dfr[2]
    A12 = A[i + 1, 2] * dfr[0] * dfr[1]
    A13 = A[i + 1, 3] * dfr[0] * dfr[2]
    A23 = A[i + 2, 3] * dfr[1] * dfr[2]
    la = 0.0
    v1 = v2 = v3 = 0.0
    for _ in range(20):
        P11 = (A22 + la) * (A33 + la) - A23 * A23  # the adjugate of A + la
        P22 = (A11 + la) * (A33 + la) - A13 * A13
        P33 = (A11 + la) * (A22 + la) - A12 * A12
        P12 = A13 * A23 - A12 * (A33 + la)
        P13 = A12 * A23 - A13 * (A22 + la)
        P23 = A12 * A13 - A23 * (A11 + la)
        det = (A11 + la) * P11 + A12 * P12 + A13 * P13
        if det < 1e-10:
            out[0] = 0.0
            out[1] = 0.0
            out[2] = 0.0
            return 0
        detinv = 1 / det
        P11 *= detinv
        P22 *= detinv
        P33 *= detinv
        P12 *= detinv
        P13 *= detinv
        P23 *= detinv
        v1 = -P11 * b1 - P12 * b2 - P13 * b3
        v2 = -P12 * b1 - P22 * b2 - P23 * b3
        v3 = -P13 * b1 - P23 * b2 - P33 * b3
        val = v1 * v1 + v2 * v2 + v3 * v3 - r * r
        if val < 1e-10:
            break
        deriv = -2.0 * (P11 * v1 * v1 + P22 * v2 * v2 + P33 * v3 * v3) - 4.0 * (
            P12 * v1 * v2 + P13 * v1 * v3 + P23 * v2 * v3
        )
        delta = -val / deriv
        if delta < 1e-10:
            break
        la += delta
    out[0] = v1 * dfr[0]
    out[1] = v2 * dfr[1]
    out[2] = v3 * dfr[2]
    return 1 if la != 0 else 0


@kernel
def qcqp_n(A, i, bin, dfr, r, n, out, bs, tmp, S, L):
    """qcqp2 in n <= 5 dimensions (mju_QCQP: (A + la)^-1 by Cholesky; rank below n with
    the 1e-10 threshold gives no friction). Work space: bs, tmp (n), S, L (n x n)."""
    for j in range(n):
        bs[j] = bin[j] * dfr[j]
        for k in range(n):
            S[j, k] = A[i + 1 + j, 1 + k] * dfr[j] * dfr[k]
    la = 0.0
    for _ in range(20):
        for j in range(n):
            for k in range(n):
                L[j, k] = S[j, k]
            L[j, j] += la
        if chol_factor(L, n, 1e-10) < n:
            for j in range(n):
                out[j] = 0.0
            return 0
        chol_solve(L, out, bs, n)
        for j in range(n):
            out[j] = -out[j]
        val = dot(out, out, n) - r * r
        if val < 1e-10:
            break
        chol_solve(L, tmp, out, n)
        deriv = -2.0 * dot(out, tmp, n)
        delta = -val / deriv
        if delta < 1e-10:
            break
        la += delta
    for j in range(n):
        out[j] *= dfr[j]
    return 1 if la != 0 else 0


@kernel
def friction_qcqp(A, i, bc, fr, f, n, out, W):
    """The n friction forces f[i + 1 .. i + n] of the elliptic contact at row i, its normal
    force f[i] fixed: 0 when f[i] < MINVAL, else the minimizer of 1/2 x^T A_tt x + x^T bc
    inside the ellipsoid sum (x_j / fr_j)^2 <= f[i]^2 (MuJoCo's mju_QCQP2/3/N on A's
    friction block), put on the ellipsoid exactly when the constraint is active (the QCQP's
    answer is approximate). `out` and W[6:20] are work space."""
    if f[i] < MINVAL:
        for j in range(n):
            f[i + 1 + j] = 0.0
        return
    if n == 2:
        active = qcqp2(A, i, bc, fr, f[i], out)
    elif n == 3:
        active = qcqp3(A, i, bc, fr, f[i], out)
    else:
        active = qcqp_n(A, i, bc, fr, f[i], n, out, W[6], W[7], W[8:14], W[14:20])
    if active:
        project_ellipsoid(out, f[i], fr, n, False)
    for j in range(n):
        f[i + 1 + j] = out[j]
