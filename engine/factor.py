"""Stage 4, factor: sparse M = L^T D L with no fill-in, and solves with the factor.

L is unit lower-triangular with the sparsity of M (row i: i's dof ancestors). Processing
rows from the last to the first, row k's off-diagonal entries L[k, j] = M[k, j] / D[k]
update only rows j < k that are ancestors of k, whose patterns contain every ancestor of
j: eliminating a leaf never creates an entry outside the tree pattern.

`qLD` holds L's strictly lower entries and D on the diagonal position of each row;
`qLDiagInv` holds 1/D. Solving x = M^-1 y is then  x <- L^-T x, x <- D^-1 x, x <- L^-1 x.
"""

from robodyn.engine.jit import kernel, u


@kernel
def factor_i(mat, diaginv, m):
    """In-place L^T D L factorization of a matrix in M's layout (MuJoCo's mj_factorI)."""
    for k in range(m.nv - 1, -1, -1):
        start = m.M_rowadr[k]
        diag = m.M_rownnz[k] - 1
        end = start + diag
        invD = 1.0 / mat[end]
        diaginv[k] = invD
        # update rows i < k:  L(i, 0..i) -= L(i, 0..i) * L(k, i) / L(k, k)
        rk = u(start)
        top = u(end - 1)  # unused when the row has no entries left of its diagonal
        for t in range(u(diag)):
            adr = top - t
            i = m.M_colind[adr]
            scale = -mat[adr] * invD
            ri = u(m.M_rowadr[i])
            # row i's pattern is a prefix of row k's pattern (ancestors of i)
            for t in range(u(m.M_rownnz[i])):
                mat[ri + t] += scale * mat[rk + t]
        # L(k, :) /= D(k)
        for adr in range(rk, u(end)):
            mat[adr] *= invD


@kernel
def solve_ld(x, qLD, diaginv, m):
    """x <- (L^T D L)^-1 x in place, for a factor in M's layout (MuJoCo's mj_solveLD)."""
    solve_ld_range(x, qLD, diaginv, m, 0, m.nv)


@kernel
def solve_lt_range(x, qLD, m, start, end):
    """x <- L^-T x on the dofs start..end-1 (whole kinematic trees) for the factor
    M = L^T D L in M's layout: the first half of solve_ld (L unit lower triangular, so
    L^T carries a dof's value to its ancestors)."""
    for i in range(end - 1, start - 1, -1):
        xi = x[i]
        if xi != 0.0:
            adr0 = u(m.M_rowadr[i])
            for adr in range(adr0, adr0 + u(m.M_rownnz[i] - 1)):
                x[u(m.M_colind[adr])] -= qLD[adr] * xi


@kernel
def solve_ld_range(x, qLD, diaginv, m, start, end):
    """solve_ld on the dofs start..end-1 alone: x[start:end] <- (M^-1 x)[start:end] when
    they are whole kinematic trees (M is block diagonal over the trees, and a dof's
    ancestors lie in its tree); x elsewhere is neither read nor written."""
    solve_lt_range(x, qLD, m, start, end)
    # x <- D^-1 x
    for i in range(start, end):
        x[i] *= diaginv[i]
    # x <- L^-1 x
    for i in range(start, end):
        adr0 = u(m.M_rowadr[i])
        s = 0.0
        for adr in range(adr0, adr0 + u(m.M_rownnz[i] - 1)):
            s += qLD[adr] * x[u(m.M_colind[adr])]
        x[i] -= s


@kernel
def factor_m(m, d, b):
    """qLD, qLDiagInv of row b from qM (MuJoCo's mj_factorM)."""
    qLD = d.qLD[b]
    for k in range(m.nM):
        qLD[k] = d.qM[b, k]
    factor_i(qLD, d.qLDiagInv[b], m)


@kernel
def mul_m(res, qM, x, m):
    """res = M x for M stored as its lower triangle in M's layout (MuJoCo's mj_mulM)."""
    for i in range(m.nv):
        res[i] = 0.0
    for i in range(m.nv):
        start = u(m.M_rowadr[i])
        diag = start + u(m.M_rownnz[i] - 1)
        # row i's own sum in a register: rows before i never write res[i] (their columns
        # are below them), so this adds the same terms in the same order
        s = 0.0
        s += qM[diag] * x[i]
        xi = x[i]
        for adr in range(start, diag):
            j = u(m.M_colind[adr])
            s += qM[adr] * x[j]
            res[j] += qM[adr] * xi
        res[i] = s
