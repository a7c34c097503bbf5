"""MuJoCo's noslip pass (`<option noslip_iterations noslip_tolerance>`; solNoSlip in
engine_solver.c), run by engine.solver's noslip_pass unit after the main solver (Newton or
PGS), island by island (all rows at once with islands disabled).

The main solver solves the soft problem, in which a contact's friction rows are regularized
(R > 0) and so let the contact slip a little. Noslip fixes the equality, limit and normal
forces the main solver found and re-solves the friction forces alone on the dual problem
without their regularization,

    min_f_F  1/2 f^T A f + f^T b   over the friction rows F, the other rows' forces fixed,
    A = J M^-1 J^T (AR without R on the diagonal), b = J qacc_smooth - aref (efc_b),

by projected Gauss-Seidel sweeps in row order (no shuffle, no Nesterov steps):

- a friction-loss row: the 1-d minimum f -= res / A_ii, clamped to +-frictionloss, where
  res = b_i + (A f)_i is the cost's gradient on the row;
- a pyramidal contact: each pair of opposite edges (rows j, j + 1) keeps its sum 2 mid, so
  the normal force stays as it was, and moves its difference: f = (mid + y, mid - y) with y
  minimizing the pair's 2 x 2 quadratic, y = -K0 / K1 (K1 = A00 + A11 - 2 A01,
  K0 = mid (A00 - A11) + bc0 - bc1), clamped to |y| <= mid;
- an elliptic contact: its friction forces with the normal fixed, min 1/2 x^T Ac x + x^T bc
  inside the ellipsoid sum_j (x_j / mu_j)^2 <= f_n^2 (engine.dual's QCQPs, as PGS), or zero
  if f_n < MINVAL;
- a step of a contact block that would raise the cost by more than 1e-10 is undone
  (costChange); frictionless contacts, limits and equalities are not visited.

Here bc = res - Ac f_old is the block's linear term, and A's diagonal over a block is
max(1e-10, AR_jj - R_j) (1 / max(MINVAL, AR_ii - R_i) for a friction-loss row), as MuJoCo's
extractBlock and ARdiaginv with flg_subR. As in engine.solver's PGS, A is never formed: the
rows Y_i = M^-1 J_i^T (engine.dual.minv_jt_rows) give A_ij = J_i Y_j, and v = M^-1 J^T f is
kept up to date, so (A f)_i = J_i v.

A sweep's improvement is the sum of the blocks' cost decreases (the first sweep also adds
sum_i 1/2 R_i f_i^2 over the group's rows: the regularization it removes), scaled like the
main solver's (below); the pass stops when it falls below noslip_tolerance or after
noslip_iterations sweeps. Its iterations are added to the group's island_niter (MuJoCo adds
them to solver_niter[island]) and recorded in noslip_niter, its last improvement in
noslip_improvement (MuJoCo's mjData.solver stats at index island_niter after the main
solver's). noslip_pass then recomputes efc_state (MuJoCo's dualState, which the pass
leaves), qfrc_constraint = J^T f and qacc = qacc_smooth + M^-1 J^T f for all rows
(mj_dualFinish), under Newton too.

Scale: 1 / max(MINVAL, sum of M's diagonal over the group's dofs), over all nv dofs with
islands disabled (engine.dual.solver_scale). 4.0.0: so the binary computes it (read from its
machine code; the iteration counts and improvements agree); the 3.12 source scales noslip
by 1 / (meaninertia nv) in both cases.
"""

from robodyn.engine import types as T
from robodyn.engine.constraint import dot, dot_row
from robodyn.engine.dual import add_y, clear_y, friction_qcqp, group, minv_jt_f, solver_scale
from robodyn.engine.jit import kernel
from robodyn.engine.types import MINVAL


@kernel
def _a_block(m, d, b, i, n, r0, c0):
    """scratch_efc_AR[b, r0 + j, c0 + k] = A_(i+j),(i+k) - as MuJoCo's extractBlock with
    flg_subR: AR = A + R formed, R taken off its diagonal, which is clamped to >= 1e-10 -
    for j, k < n, rows i .. i + n - 1 (A_jk = J_j Y_k)."""
    w = d.scratch_nv[b, 0]  # Y_(i+k) dense, cleared again after each k
    AR = d.scratch_efc_AR[b]
    for k in range(n):
        add_y(m, d, b, i + k, w, 1.0)
        for j in range(n):
            AR[r0 + j, c0 + k] = dot_row(m, d, b, i + j, w)
        R = d.efc_R[b, i + k]
        AR[r0 + k, c0 + k] = max(1e-10, (AR[r0 + k, c0 + k] + R) - R)
        clear_y(m, d, b, i + k, w)


@kernel
def _residual(m, d, b, i, v):
    """res_i = b_i + (A f)_i = b_i + J_i v, summed as MuJoCo's residual with flg_subR:
    b_i + (AR f)_i - R_i f_i (v = M^-1 J^T f)."""
    Rf = d.efc_R[b, i] * d.efc_force[b, i]
    return (d.efc_b[b, i] + dot_row(m, d, b, i, v) + Rf) - Rf


@kernel
def _cost_change(A, r0, c0, f, i, old, res, delta, n):
    """1/2 df^T Ac df + df . res of the block f[i : i + n] (Ac = A[r0:, c0:], n x n) against
    its old forces; above 1e-10 the old forces are put back and 0 returned (costChange)."""
    for j in range(n):
        delta[j] = f[i + j] - old[j]
    quad = 0.0
    for j in range(n):
        quad += delta[j] * dot(A[r0 + j, c0:], delta, n)
    change = 0.5 * quad + dot(delta, res, n)
    if change > 1e-10:
        for j in range(n):
            f[i + j] = old[j]
        return 0.0
    return change


@kernel
def _prepare(m, d, b, rows):
    """A's blocks the pass reads, for the group's rows: a friction-loss row's
    scratch_efc[b, 0][i] = 1 / max(MINVAL, AR_ii - R_i); a pyramidal contact's edge pairs
    (rows j, j + 1) at scratch_efc_AR[b, j:j+2, 0:2]; an elliptic contact's friction rows
    i + 1 .. i + dim - 1 at scratch_efc_AR[b, i+1:i+dim, 1:dim] (where engine.dual's QCQPs
    read them)."""
    ne = d.ne[b]
    nf = d.nf[b]
    Ainv = d.scratch_efc[b, 0]
    w = d.scratch_nv[b, 0]
    for k in range(m.nv):
        w[k] = 0.0
    n_rows = rows.shape[0]
    c = 0
    while c < n_rows:
        i = rows[c]
        if i < ne:
            c += 1
        elif i < ne + nf:
            add_y(m, d, b, i, w, 1.0)
            R = d.efc_R[b, i]
            Ainv[i] = 1.0 / max(MINVAL, (dot_row(m, d, b, i, w) + R) - R)
            clear_y(m, d, b, i, w)
            c += 1
        elif d.efc_type[b, i] == T.CNSTR_CONTACT_PYRAMIDAL:
            dim = d.contact_dim[b, d.efc_id[b, i]]
            for j in range(i, i + 2 * (dim - 1), 2):
                _a_block(m, d, b, j, 2, j, 0)
            c += 2 * (dim - 1)
        elif d.efc_type[b, i] == T.CNSTR_CONTACT_ELLIPTIC:
            dim = d.contact_dim[b, d.efc_id[b, i]]
            _a_block(m, d, b, i + 1, dim - 1, i + 1, 1)
            c += dim
        else:
            c += 1


@kernel
def _pyramid_pair(m, d, b, j, v, W):
    """Noslip's update of the opposite pyramid edges j, j + 1 (their sum kept); returns the
    cost change (<= 1e-10)."""
    f = d.efc_force[b]
    A = d.scratch_efc_AR[b]
    res = W[0]
    old = W[1]
    res[0] = _residual(m, d, b, j, v)
    res[1] = _residual(m, d, b, j + 1, v)
    old[0] = f[j]
    old[1] = f[j + 1]
    bc0 = res[0] - dot(A[j], old, 2)
    bc1 = res[1] - dot(A[j + 1], old, 2)
    # f0 = mid + y, f1 = mid - y: minimize the pair's quadratic over y in [-mid, mid]
    mid = 0.5 * (f[j] + f[j + 1])
    K1 = A[j, 0] + A[j + 1, 1] - A[j, 1] - A[j + 1, 0]
    K0 = mid * (A[j, 0] - A[j + 1, 1]) + bc0 - bc1
    if K1 < MINVAL:
        f[j] = mid
        f[j + 1] = mid
    else:
        y = -K0 / K1
        if y < -mid:
            f[j] = 0.0
            f[j + 1] = 2 * mid
        elif y > mid:
            f[j] = 2 * mid
            f[j + 1] = 0.0
        else:
            f[j] = mid + y
            f[j + 1] = mid - y
    change = _cost_change(A, j, 0, f, j, old, res, W[2], 2)
    for k in range(2):
        delta = f[j + k] - old[k]
        if delta != 0.0:
            add_y(m, d, b, j + k, v, delta)
    return change


@kernel
def _elliptic_friction(m, d, b, i, v, W):
    """Noslip's update of the friction forces of the elliptic contact at rows i.. with its
    normal force fixed (the QCQP); returns the cost change (<= 1e-10)."""
    c = d.efc_id[b, i]
    dim = d.contact_dim[b, c]
    n = dim - 1
    fr = d.contact_friction[b, c]
    f = d.efc_force[b]
    A = d.scratch_efc_AR[b]
    res = W[0]
    old = W[1]
    bc = W[2]
    out = W[3]
    for j in range(n):
        res[j] = _residual(m, d, b, i + 1 + j, v)
        old[j] = f[i + 1 + j]
    for j in range(n):
        bc[j] = res[j] - dot(A[i + 1 + j, 1:], old, n)
    friction_qcqp(A, i, bc, fr, f, n, out, W)
    change = _cost_change(A, i + 1, 1, f, i + 1, old, res, W[4], n)
    for j in range(n):
        delta = f[i + 1 + j] - old[j]
        if delta != 0.0:
            add_y(m, d, b, i + 1 + j, v, delta)
    return change


@kernel
def noslip(m, d, b, k):
    """The noslip pass over island k's rows (all rows if nisland = 0) from the main solver's
    efc_force (see the module docstring); needs engine.dual.minv_jt_rows (Y_i for every row)
    and efc_b. Updates efc_force only. Returns (iterations, improvement of the last sweep)."""
    rows, dofs, _ = group(m, d, b, k)
    scale = solver_scale(m, d, b, dofs)
    n_rows = rows.shape[0]
    ne = d.ne[b]
    nf = d.nf[b]
    f = d.efc_force[b]
    Ainv = d.scratch_efc[b, 0]
    W = d.scratch_pgs_block[b]
    v = d.scratch_nv[b, 1]
    _prepare(m, d, b, rows)
    minv_jt_f(m, d, b, v, rows, dofs)
    it = 0
    improvement = 0.0
    while it < m.opt_noslip_iterations:
        improvement = 0.0
        if it == 0:  # the regularization cost the pass removes
            for c in range(n_rows):
                i = rows[c]
                improvement += 0.5 * f[i] * f[i] * d.efc_R[b, i]
        # friction-loss rows (consecutive in the group's list, after its equalities)
        for c in range(n_rows):
            i = rows[c]
            if i < ne or i >= ne + nf:
                continue
            res = _residual(m, d, b, i, v)
            old = f[i]
            f[i] -= res * Ainv[i]
            fl = d.efc_frictionloss[b, i]
            if f[i] < -fl:
                f[i] = -fl
            elif f[i] > fl:
                f[i] = fl
            delta = f[i] - old
            improvement -= 0.5 * delta * delta / Ainv[i] + delta * res
            if delta != 0.0:
                add_y(m, d, b, i, v, delta)
        # contacts' friction, in row order
        c = 0
        while c < n_rows:
            i = rows[c]
            if i < ne + nf:
                c += 1
                continue
            kind = d.efc_type[b, i]
            if kind == T.CNSTR_CONTACT_PYRAMIDAL:
                dim = d.contact_dim[b, d.efc_id[b, i]]
                for j in range(i, i + 2 * (dim - 1), 2):
                    improvement -= _pyramid_pair(m, d, b, j, v, W)
                c += 2 * (dim - 1)
            elif kind == T.CNSTR_CONTACT_ELLIPTIC:
                improvement -= _elliptic_friction(m, d, b, i, v, W)
                c += d.contact_dim[b, d.efc_id[b, i]]
            else:
                c += 1
        improvement *= scale
        it += 1
        if improvement < m.opt_noslip_tolerance:
            break
    return it, improvement
