"""Stage 11, solver: the constrained acceleration of one environment (MuJoCo's
mj_fwdConstraint in engine_forward.c and mj_solPGS / mj_solNewton in engine_solver.c).

With the rows of engine.constraint, MuJoCo's soft-constraint problem is the convex program

    qacc = argmin_a  1/2 (a - a0)^T M (a - a0) + sum_i s_i(J_i a - aref_i),   a0 = qacc_smooth
    s_i(x) = 1/2 D_i x^2 for an equality row;  1/2 D_i min(x, 0)^2 for a limit or contact row;
             for a friction-loss row with bound f: 1/2 D_i x^2 for |x| < R_i f, else
             f |x| - 1/2 R_i f^2 (Huber's function: its force -s_i'(x) is clamped to +-f)

(D = 1/R > 0, so it is strictly convex and its solution unique); the row forces are
efc_force = -D_i (J_i qacc - aref_i) where a row is active (state QUADRATIC), 0 where it
is satisfied, and qfrc_constraint = J^T efc_force. Two solvers, chosen by
<option solver=...>, stop on the model's iterations and tolerance:

- Newton (primal): from a warm start, repeat: H = M + J^T diag(D_active) J (dense on the
  island's dofs, summed from the compact rows of J; Cholesky once, then a rank-one update or
  downdate of the factor for each row that enters or leaves the active set, as MuJoCo's
  HessianIncremental), search = -H^-1 grad with
  grad = M (a - a0) - J^T efc_force, then MuJoCo's exact line search along `search` on
  the piecewise-quadratic cost (Newton steps on its derivative inside a bracket). Stops
  when the scaled improvement or gradient, or the Newton decrement 1/2 grad^T H^-1 grad,
  falls below the tolerance (scaled; see Islands below), or at once if the warm start is
  certified optimal.
- PGS (dual): projected Gauss-Seidel on the forces of min_f 1/2 f^T (A + R) f + f^T b,
  A = J M^-1 J^T, b = J a0 - aref, f >= 0 on limit and contact rows, visiting rows in
  MuJoCo's shuffled order (PCG32, fixed seed) with its Nesterov extrapolation and
  restarts; stops when the scaled cost improvement of a sweep falls below the
  tolerance. An elliptic contact's rows are one block, visited together (_pgs_cone: the
  normal force along its ray, then the friction forces as a small QCQP inside the
  ellipsoid sum_j (f_j / mu_j)^2 <= f_n^2, with the block of A + R kept from the start).
  Rows of A are applied as J_i (M^-1 J^T f), keeping M^-1 J^T f up to date, so A is
  never formed. Then qacc = a0 + M^-1 J^T f. Each Y_i = M^-1 J_i^T is stored like
  J's row: dense (nv) for a dense row, else on the dofs of the kinematic trees J_i touches
  (M is block diagonal over the trees, and a tree's dofs are the contiguous range
  tree_dofadr .. + tree_dofnum, so Y_i is one solve with M's factor per tree and zero
  elsewhere; Model.nefctreedof wide).

Every product with J (J x, J^T f, the Hessian's J^T D J) runs over a row's stored entries
(engine.constraint: efc_J, efc_J_colind, efc_J_rownnz). A row that stores all nv dofs
(every row of a dense model, Model.efc_dense) takes plain vector loops (dot is mju_dot);
a compact row goes through its column indices (dot_sparse is mju_dotSparse).

Warm start (both): the last step's qacc (Data.qacc_warmstart) if its cost is lower than
that of qacc_smooth (Newton), or its forces if their dual cost is negative (PGS).

Islands (MuJoCo 4's default; engine.island finds them). The trees coupled by rows form
islands, and the problem splits into one per island (M is block diagonal over the trees, and
a row touches only its island's dofs), so the solver warm-starts all rows together, as
MuJoCo's warmstart does, then solves island after island, as mj_solNewton_island /
mj_solPGS_island, with the same iterates as MuJoCo:
- Newton gathers the island's dofs into local vectors (map_idof2dof) and its rows
  (map_iefc2efc) and builds H on those dofs only (nv_island x nv_island: where the speed
  comes from), then scatters qacc and qfrc_constraint back;
- PGS sweeps the island's blocks (a row, or an elliptic contact's rows, consecutive in the
  island's list too) in their order, shuffled by a PCG32 generator started afresh for each
  island, with its own Nesterov state (its projection onto the cones over the island's
  rows) and the island's blocks of A + R; efc_state (with the elliptic contacts' dual
  states), qfrc_constraint and qacc are then computed for all rows at once (MuJoCo's
  dualFinish);
- both scale improvement and gradient by 1 / max(MINVAL, sum of M's diagonal over the
  island's dofs) (engine.dual.solver_scale; 4.0.0: for PGS too, though the 3.12 source
  scales PGS by 1 / (meaninertia nv): with that scale the islands test scene's PGS
  iteration counts differ from the binary's in 30 states of 30) and stop on the island's
  own test; island k's iterations are island_niter[k] (mjData.solver_niter[k]),
  solver_niter their sum;
- dofs in no island keep qacc = qacc_smooth and no constraint force.
With <flag island="disable"/> (nisland = 0) all rows are one problem, scaled the same way
over all nv dofs (4.0.0: Newton and PGS both; the 3.12 source scales that case by
1 / (meaninertia nv), off the binary's reported improvement by the ratio of the two, 1-2 %
on the ant), its iterations in island_niter[0]. After Newton, efc_state is the state at
the solution (MuJoCo's island solver leaves the warm start's in efc_state).
"""

import math

import numpy as np

from robodyn.engine import types as T
from robodyn.engine.constraint import dot, dot_row
from robodyn.engine.dual import (
    add_y,
    chol_factor,
    chol_solve,
    clear_y,
    dot_y,
    friction_qcqp,
    group,
    minv_jt_f,
    minv_jt_rows,
    project_ellipsoid,
    solver_scale,
)
from robodyn.engine.factor import mul_m, solve_ld
from robodyn.engine.island import island
from robodyn.engine.jit import kernel, u, unit
from robodyn.engine.noslip import noslip
from robodyn.engine.ptr import call_unit
from robodyn.engine.types import MINVAL

_PCG_MULT = np.uint64(6364136223846793005)
_MASK32 = np.uint64(0xFFFFFFFF)


# ---- shared --------------------------------------------------------------------------------------


@kernel
def friction_cost(x, f, Rf, D):
    """s(x) of a friction row (force bound f, Rf = R f): Huber's function, 1/2 D x^2 for
    |x| < Rf and f |x| - 1/2 R f^2 beyond, whose slope -force is clamped to +-f."""
    if x <= -Rf:
        return -0.5 * Rf * f - f * x
    if x >= Rf:
        return -0.5 * Rf * f + f * x
    return 0.5 * D * x * x


@kernel
def cone_zone(N, T, mu):
    """1 (top: the force is zero), 2 (bottom: every row quadratic) or 3 (middle: on the
    cone) of an elliptic contact with scaled normal N = mu jar_0 and tangential norm T."""
    if N >= mu * T or (T <= 0 and N >= 0):
        return 1
    if mu * N + T <= 0 or (T <= 0 and N < 0):
        return 2
    return 3


@kernel
def cone_zone_at(N, Tsqr, mu):
    """(cone_zone, T) of an elliptic contact from N and T^2 (T = 0 when T^2 <= 0)."""
    Tn = math.sqrt(Tsqr) if Tsqr > 0 else 0.0
    return cone_zone(N, Tn, mu), Tn


@kernel
def cone_split(m, d, b, i, jar, U):
    """(N, T, mu, dim) of the elliptic contact whose rows start at i: U[0] = mu jar_i,
    U[j] = friction_j jar_i+j (the cone made circular), N = U[0], T = |U[1:dim]|
    (mju_norm)."""
    c = d.efc_id[b, i]
    mu = d.contact_mu[b, c]
    fr = d.contact_friction[b, c]
    dim = d.contact_dim[b, c]
    U[0] = jar[i] * mu
    for j in range(1, dim):
        U[j] = jar[i + j] * fr[j - 1]
    T = math.sqrt(dot(U[1:dim], U[1:dim], dim - 1))
    return U[0], T, mu, dim


@kernel
def cone_dm(m, d, b, i, mu):
    """Dm = D_0 / (mu^2 (1 + mu^2)): the middle zone's cost 1/2 Dm (N - mu T)^2."""
    return d.efc_D[b, i] / (mu * mu * (1 + mu * mu))


@kernel
def constraint_cost(m, d, b, jar):
    """The constraint cost sum_i s_i(jar_i) of jar = J qacc - aref alone (no forces)."""
    ne = d.ne[b]
    nf = d.nf[b]
    nefc = d.nefc[b]
    D = d.efc_D[b]
    U = d.scratch_cone[b, 6]
    cost = 0.0
    i = 0
    while i < nefc:
        x = jar[i]
        if i < ne:
            cost += 0.5 * D[i] * x * x
        elif i < ne + nf:
            f = d.efc_frictionloss[b, i]
            cost += friction_cost(x, f, d.efc_R[b, i] * f, D[i])
        elif d.efc_type[b, i] == T.CNSTR_CONTACT_ELLIPTIC:
            N, Tn, mu, dim = cone_split(m, d, b, i, jar, U)
            zone = cone_zone(N, Tn, mu)
            if zone == 2:
                for j in range(i, i + dim):
                    cost += 0.5 * D[j] * jar[j] * jar[j]
            elif zone == 3:
                r = N - mu * Tn
                cost += 0.5 * cone_dm(m, d, b, i, mu) * r * r
            i += dim
            continue
        elif x < 0:
            cost += 0.5 * D[i] * x * x
        i += 1
    return cost


@kernel
def constraint_update(m, d, b, jar):
    """efc_force, efc_state of every row from jar = J qacc - aref (update_rows) and
    qfrc_constraint = J^T efc_force; returns the constraint cost (mj_constraintUpdate)."""
    rows = d.scratch_iefc[b]
    nefc = d.nefc[b]
    for i in range(nefc):
        rows[i] = i
    cost = update_rows(m, d, b, jar, rows[:nefc])
    _jt_force(m, d, b)
    return cost


@kernel
def update_rows(m, d, b, jar, rows):
    """efc_force, efc_state of the rows listed in `rows` (ascending, whole contacts) from
    jar = J qacc - aref; returns their constraint cost sum_i s_i(jar_i). A friction row's
    force is -D jar inside |jar| < R f and the bound -+f beyond (states LINEARNEG/POS). An
    elliptic contact (cone_split) is free in its top zone (SATISFIED), quadratic in every
    row in its bottom zone, and in the middle zone (CONE) costs 1/2 Dm (N - mu T)^2 with
    forces f_0 = -Dm (N - mu T) mu, f_j = -f_0 U_j friction_j / T."""
    n = rows.shape[0]
    ne = d.ne[b]
    nf = d.nf[b]
    D = d.efc_D[b]
    f = d.efc_force[b]
    U = d.scratch_cone[b, 6]
    cost = 0.0
    c = 0
    while c < n:
        i = rows[c]
        x = jar[i]
        if i >= ne + nf and d.efc_type[b, i] == T.CNSTR_CONTACT_ELLIPTIC:
            N, Tn, mu, dim = cone_split(m, d, b, i, jar, U)
            zone = cone_zone(N, Tn, mu)
            if zone == 1:
                state = T.CNSTRSTATE_SATISFIED
                for j in range(i, i + dim):
                    f[j] = 0.0
            elif zone == 2:
                state = T.CNSTRSTATE_QUADRATIC
                for j in range(i, i + dim):
                    f[j] = -D[j] * jar[j]
                    cost += 0.5 * D[j] * jar[j] * jar[j]
            else:
                state = T.CNSTRSTATE_CONE
                Dm = cone_dm(m, d, b, i, mu)
                r = N - mu * Tn
                cost += 0.5 * Dm * r * r
                f[i] = -Dm * r * mu
                fr = d.contact_friction[b, d.efc_id[b, i]]
                for j in range(1, dim):
                    f[i + j] = -f[i] / Tn * U[j] * fr[j - 1]
            for j in range(i, i + dim):
                d.efc_state[b, j] = state
            c += dim
            continue
        if ne <= i < ne + nf:
            floss = d.efc_frictionloss[b, i]
            Rf = d.efc_R[b, i] * floss
            if x <= -Rf:
                f[i] = floss
                d.efc_state[b, i] = T.CNSTRSTATE_LINEARNEG
                cost += -0.5 * Rf * floss - floss * x
            elif x >= Rf:
                f[i] = -floss
                d.efc_state[b, i] = T.CNSTRSTATE_LINEARPOS
                cost += -0.5 * Rf * floss + floss * x
            else:
                f[i] = -D[i] * x
                d.efc_state[b, i] = T.CNSTRSTATE_QUADRATIC
                cost += 0.5 * D[i] * x * x
        elif i >= ne and x >= 0:
            f[i] = 0.0
            d.efc_state[b, i] = T.CNSTRSTATE_SATISFIED
        else:
            f[i] = -D[i] * x
            cost += 0.5 * D[i] * x * x
            d.efc_state[b, i] = T.CNSTRSTATE_QUADRATIC
        c += 1
    return cost


@kernel
def _jt_force(m, d, b):
    """qfrc_constraint = J^T efc_force, accumulated row by row over each row's entries."""
    q = d.qfrc_constraint[b]
    for v in range(m.nv):
        q[v] = 0.0
    for i in range(d.nefc[b]):
        fi = d.efc_force[b, i]
        if fi != 0.0:
            row = d.efc_J[b, i]
            n = d.efc_J_rownnz[b, i]
            if n == m.nv:
                for v in range(n):
                    q[v] += row[v] * fi
            else:
                col = d.efc_J_colind[b, i]
                for t in range(n):
                    q[u(col[t])] += row[t] * fi


@kernel
def mul_jar(m, d, b, out, qacc):
    """out[i] = J_i qacc - aref_i for the nefc rows: each row's acceleration error."""
    for i in range(d.nefc[b]):
        out[i] = dot_row(m, d, b, i, qacc) - d.efc_aref[b, i]


@kernel
def _enter(d, b, dofs):
    """Mark the group's dofs: scratch_idof[b, 0][dof] = its index in `dofs` (-1 elsewhere)."""
    local = d.scratch_idof[b, 0]
    for j in range(dofs.shape[0]):
        local[dofs[j]] = j


@kernel
def _leave(d, b, dofs):
    """Clear the marks of _enter."""
    local = d.scratch_idof[b, 0]
    for j in range(dofs.shape[0]):
        local[dofs[j]] = -1


@kernel
def _row_local(m, d, b, i, dofs, idx, val):
    """Row i of J on the group's dofs: idx[:n] their indices in `dofs` (ascending), val[:n]
    the values; returns n. A dense row gives the group's dofs where it is not zero (a zero
    would only add zeros to the sums it feeds), a compact row its stored entries (all in the
    group: engine.island joins the trees of its columns)."""
    row = d.efc_J[b, i]
    nnz = d.efc_J_rownnz[b, i]
    if nnz == m.nv:
        n = 0
        for j in range(dofs.shape[0]):
            x = row[u(dofs[j])]
            if x != 0.0:
                idx[u(n)] = j
                val[u(n)] = x
                n += 1
        return n
    col = d.efc_J_colind[b, i]
    local = d.scratch_idof[b, 0]
    n = 0
    for t in range(nnz):
        loc = local[u(col[t])]
        if loc >= 0:
            idx[u(n)] = loc
            val[u(n)] = row[t]
            n += 1
    return n


@kernel
def _dot_local(m, d, b, i, x, dofs):
    """J_i . x for x on the group's dofs (local), in MuJoCo's order: a dense row over the
    group's dofs (mju_dot on its block of J), a compact row over its entries (mju_dotSparse).
    A compact entry outside the group can only be a stored zero (engine.island joins the
    trees of the other entries), so it reads x[0] and adds 0."""
    row = d.efc_J[b, i]
    n = d.efc_J_rownnz[b, i]
    s0 = s1 = s2 = s3 = 0.0
    t = 0
    if n == m.nv:
        nd = dofs.shape[0]
        while t <= nd - 4:
            s0 += row[u(dofs[t])] * x[t]
            s1 += row[u(dofs[t + 1])] * x[t + 1]
            s2 += row[u(dofs[t + 2])] * x[t + 2]
            s3 += row[u(dofs[t + 3])] * x[t + 3]
            t += 4
        res = (s0 + s2) + (s1 + s3)
        while t < nd:
            res += row[u(dofs[t])] * x[t]
            t += 1
        return res
    col = d.efc_J_colind[b, i]
    local = d.scratch_idof[b, 0]
    while t <= n - 4:
        s0 += row[t] * x[u(max(local[u(col[t])], 0))]
        s1 += row[t + 1] * x[u(max(local[u(col[t + 1])], 0))]
        s2 += row[t + 2] * x[u(max(local[u(col[t + 2])], 0))]
        s3 += row[t + 3] * x[u(max(local[u(col[t + 3])], 0))]
        t += 4
    res = (s0 + s2) + (s1 + s3)
    while t < n:
        res += row[t] * x[u(max(local[u(col[t])], 0))]
        t += 1
    return res


@kernel
def _mul_j_local(m, d, b, out, x, rows, dofs):
    """out[i] = J_i . x for the group's rows, x on the group's dofs (local)."""
    for c in range(rows.shape[0]):
        i = rows[c]
        out[i] = _dot_local(m, d, b, i, x, dofs)


@kernel
def _jt_local(m, d, b, out, rows, dofs):
    """out = J^T efc_force over the group's rows, on its dofs (local)."""
    local = d.scratch_idof[b, 0]
    nd = dofs.shape[0]
    for j in range(nd):
        out[j] = 0.0
    for c in range(rows.shape[0]):
        i = rows[c]
        fi = d.efc_force[b, i]
        if fi == 0.0:
            continue
        row = d.efc_J[b, i]
        n = d.efc_J_rownnz[b, i]
        if n == m.nv:
            for j in range(nd):
                out[j] += row[u(dofs[j])] * fi
        else:
            col = d.efc_J_colind[b, i]
            for t in range(n):
                loc = local[u(col[t])]
                if loc >= 0:
                    out[u(loc)] += row[t] * fi


@kernel
def _mul_m_local(m, d, b, res, x, trees):
    """res = M x on the group's dofs (local vectors; M is block diagonal over the trees, and
    a tree's dofs are contiguous in the group as in the model), as mul_m."""
    local = d.scratch_idof[b, 0]
    qM = d.qM[b]
    for tt in range(trees.shape[0]):
        t = trees[tt]
        a = m.tree_dofadr[t]
        shift = local[a] - a
        for i in range(a, a + m.tree_dofnum[t]):
            res[i + shift] = 0.0
        for i in range(a, a + m.tree_dofnum[t]):
            start = u(m.M_rowadr[i])
            diag = start + u(m.M_rownnz[i] - 1)
            li = u(i + shift)
            s = 0.0  # row i's own sum in a register, as in factor.mul_m
            s += qM[diag] * x[li]
            xi = x[li]
            for adr in range(start, diag):
                lj = u(m.M_colind[adr] + shift)
                s += qM[adr] * x[lj]
                res[lj] += qM[adr] * xi
            res[li] = s


@kernel
def _solve_m_local(m, d, b, x, trees):
    """x <- M^-1 x on the group's dofs (local), tree by tree with M's factor (solve_ld)."""
    local = d.scratch_idof[b, 0]
    qLD = d.qLD[b]
    for tt in range(trees.shape[0]):
        t = trees[tt]
        a = m.tree_dofadr[t]
        e = a + m.tree_dofnum[t]
        shift = local[a] - a
        for i in range(e - 1, a - 1, -1):  # x <- L^-T x
            xi = x[u(i + shift)]
            if xi != 0.0:
                adr0 = u(m.M_rowadr[i])
                for adr in range(adr0, adr0 + u(m.M_rownnz[i] - 1)):
                    x[u(m.M_colind[adr] + shift)] -= qLD[adr] * xi
        for i in range(a, e):  # x <- D^-1 x
            x[u(i + shift)] *= d.qLDiagInv[b, i]
        for i in range(a, e):  # x <- L^-1 x
            adr0 = u(m.M_rowadr[i])
            s = 0.0
            for adr in range(adr0, adr0 + u(m.M_rownnz[i] - 1)):
                s += qLD[adr] * x[u(m.M_colind[adr] + shift)]
            x[u(i + shift)] -= s


@kernel
def _warmstart(m, d, b):
    """Initial qacc (Newton) or efc_force (PGS): the last step's solution if it is better
    than qacc_smooth (zero forces), as MuJoCo's warmstart decides."""
    nv = m.nv
    nefc = d.nefc[b]
    qacc = d.qacc[b]
    if m.opt_disableflags & T.DSBL_WARMSTART:
        for v in range(nv):
            qacc[v] = d.qacc_smooth[b, v]
        for i in range(nefc):
            d.efc_force[b, i] = 0.0
        return
    ws = d.qacc_warmstart[b]
    for v in range(nv):
        qacc[v] = ws[v]
    Jaref = d.scratch_efc[b, 0]
    mul_jar(m, d, b, Jaref, ws)
    if m.opt_solver == T.SOL_PGS:
        constraint_update(m, d, b, Jaref)  # the warm start's forces, PGS's starting point
        # dual cost of the warm-start forces: f.b + 1/2 f (J M^-1 J^T + R) f
        w = d.scratch_nv[b, 0]
        for v in range(nv):
            w[v] = d.qfrc_constraint[b, v]
        solve_ld(w, d.qLD[b], d.qLDiagInv[b], m)
        dual = 0.0
        quad = dot(d.qfrc_constraint[b], w, nv)
        for i in range(nefc):
            fi = d.efc_force[b, i]
            dual += fi * d.efc_b[b, i]
            quad += d.efc_R[b, i] * fi * fi
        dual += 0.5 * quad
        if dual > 0:
            for i in range(nefc):
                d.efc_force[b, i] = 0.0
            for v in range(nv):
                d.qfrc_constraint[b, v] = 0.0
    else:
        # Newton compares costs only; solve_newton evaluates the forces at the chosen qacc
        cost_ws = constraint_cost(m, d, b, Jaref)
        Ma = d.scratch_nv[b, 0]
        mul_m(Ma, d.qM[b], ws, m)
        for v in range(nv):
            cost_ws += 0.5 * (Ma[v] - d.qfrc_smooth[b, v]) * (ws[v] - d.qacc_smooth[b, v])
        cost_smooth = constraint_cost(m, d, b, d.efc_b[b])
        if cost_ws > cost_smooth:
            for v in range(nv):
                qacc[v] = d.qacc_smooth[b, v]
    # dofs in no island (no row touches their trees): their exact acceleration
    if d.nisland[b] > 0:
        for idof in range(d.nidof[b], nv):
            v = d.map_idof2dof[b, idof]
            qacc[v] = d.qacc_smooth[b, v]


# ---- PGS -----------------------------------------------------------------------------------------


@kernel
def _pcg32(state):
    """(next state, 32-bit output) of MuJoCo's PCG32 generator (increment 1)."""
    new = state * _PCG_MULT + np.uint64(1)
    xs = (((state >> np.uint64(18)) ^ state) >> np.uint64(27)) & _MASK32
    rot = state >> np.uint64(59)
    out = ((xs >> rot) | (xs << ((np.uint64(32) - rot) & np.uint64(31)))) & _MASK32
    return new, out


@kernel
def _block_dim(d, b, i):
    """Rows of the PGS block that starts at row i: an elliptic contact's condim rows are one
    block (MuJoCo's blockstart), every other row is a block of its own."""
    if d.efc_type[b, i] == T.CNSTR_CONTACT_ELLIPTIC:
        return d.contact_dim[b, d.efc_id[b, i]]
    return 1


@kernel
def _ar_blocks(m, d, b, rows):
    """scratch_efc_AR[b, i + j, k] = AR[i + j, i + k] = J_(i+j) Y_(i+k) + R_(i+j) delta_jk for
    the rows i .. i + dim of every elliptic contact among `rows` (an island's, in efc order;
    a contact's rows are consecutive there too): the diagonal block of AR = J M^-1 J^T + R
    that MuJoCo's extractBlock reads; after minv_jt_rows (Y_i = M^-1 J_i^T)."""
    w = d.scratch_nv[b, 0]  # Y_(i+k) dense
    for k in range(m.nv):
        w[k] = 0.0
    AR = d.scratch_efc_AR[b]
    n_rows = rows.shape[0]
    c = 0
    while c < n_rows:
        i = rows[c]
        dim = _block_dim(d, b, i)
        if d.efc_type[b, i] == T.CNSTR_CONTACT_ELLIPTIC:
            for k in range(dim):
                add_y(m, d, b, i + k, w, 1.0)
                for j in range(dim):
                    AR[i + j, k] = dot_row(m, d, b, i + j, w)
                AR[i + k, k] += d.efc_R[b, i + k]
                clear_y(m, d, b, i + k, w)
        c += dim


@kernel
def _island_ar(m, d, b, rows, AR, half):
    """AR[c, c'] = J_i M^-1 J_i'^T + R_i delta_ii' for the rows i = rows[c], i' = rows[c']
    of an island (positions in its list): Z_i . Z_i' with minv_jt_rows' `half` rows, else
    J_i Y_i'. The dual problem's matrix MuJoCo's mj_projectConstraint forms (efc_AR), built
    once per solve so that a PGS sweep costs a dot product of the island's forces per row.
    ARinv (scratch_efc[b, 0]) is 1 / AR's diagonal; each elliptic contact's diagonal block
    is copied to scratch_efc_AR as _ar_blocks leaves it."""
    n = rows.shape[0]
    w = d.scratch_nv[b, 0]  # Y_i' dense
    ARinv = d.scratch_efc[b, 0]
    for k in range(m.nv):
        w[k] = 0.0
    for c2 in range(n):
        j = rows[c2]
        add_y(m, d, b, j, w, 1.0)
        for c in range(c2, n):  # AR is symmetric: the lower triangle, mirrored
            x = dot_y(m, d, b, rows[c], w) if half else dot_row(m, d, b, rows[c], w)
            AR[c, c2] = x
            AR[c2, c] = x
        AR[c2, c2] += d.efc_R[b, j]
        ARinv[j] = 1.0 / AR[c2, c2]  # MuJoCo's ARdiaginv
        clear_y(m, d, b, j, w)
    A = d.scratch_efc_AR[b]
    c = 0
    while c < n:
        i = rows[c]
        dim = _block_dim(d, b, i)
        if d.efc_type[b, i] == T.CNSTR_CONTACT_ELLIPTIC:
            for j in range(dim):
                for k in range(dim):
                    A[i + j, k] = AR[c + j, c + k]
        c += dim


@kernel
def _on_ar(d, b, n):
    """Whether PGS sweeps an island of n rows on its matrix AR (scratch_pgs_AR holds up to
    PGS_AR_ROWS rows), else on v = M^-1 J^T f."""
    return n <= d.scratch_pgs_AR.shape[1]


@kernel
def _residual(m, d, b, i, c, v, AR, ar_n, rows, r0):
    """res_i = b_i + (AR f)_i of row i (position c in its island's list), AR = J M^-1 J^T
    + R: with the island's AR (ar_n > 0: its rows; r0 >= 0 when they are r0 .. r0 + ar_n - 1)
    the dot product of AR's row with the island's forces, MuJoCo's residual; else
    b_i + J_i (M^-1 J^T f) + R_i f_i from v = M^-1 J^T f."""
    f = d.efc_force[b]
    if ar_n > 0:
        row = AR[c]
        if r0 >= 0:
            return d.efc_b[b, i] + dot(row, f[r0:], ar_n)
        s = 0.0
        for t in range(ar_n):
            s += row[t] * f[rows[t]]
        return d.efc_b[b, i] + s
    return d.efc_b[b, i] + dot_row(m, d, b, i, v) + d.efc_R[b, i] * f[i]


@kernel
def _pgs_cone(m, d, b, i, pos, v, AR, ar_n, rows, r0):
    """One PGS update of the elliptic contact whose rows start at i (at `pos` in its
    island's list; MuJoCo's solPGS block):
    res = AR f + b on its rows (AR f = J M^-1 J^T f + R f = J v + R f); then
    - the normal: if f_n < MINVAL the unconstrained minimum along the normal row, clamped
      to f_n >= 0, friction cleared; else the exact minimum along the ray f (the block's
      forces scaled by 1 + x, x = -f.res / f^T AR f, no further than f_n = 0);
    - the friction with f_n fixed: min 1/2 x^T Ac x + x^T bc over sum_j (x_j / mu_j)^2 <=
      f_n^2 (Ac the friction rows' block of AR, bc their residual at the old friction and
      the new normal), by engine.dual.friction_qcqp (QCQP2/3/N), on the ellipsoid when active;
    - the cost change 1/2 df^T AR df + df.res: above 1e-10 the old forces are kept.
    The residual comes from the island's AR or from v = M^-1 J^T f (_residual), and v is
    then updated; returns the cost change (<= 1e-10)."""
    c = d.efc_id[b, i]
    dim = d.contact_dim[b, c]
    n = dim - 1
    fr = d.contact_friction[b, c]
    f = d.efc_force[b]
    A = d.scratch_efc_AR[b]
    W = d.scratch_pgs_block[b]
    res = W[0]
    old = W[1]
    ray = W[2]
    tmp = W[3]
    bc = W[4]
    out = W[5]
    for j in range(dim):
        res[j] = _residual(m, d, b, i + j, pos + j, v, AR, ar_n, rows, r0)
        old[j] = f[i + j]
    if f[i] < MINVAL:  # normal update
        f[i] -= res[0] * d.scratch_efc[b, 0, i]
        if f[i] < 0:
            f[i] = 0.0
        for j in range(1, dim):
            f[i + j] = 0.0
    else:  # ray update
        for j in range(dim):
            ray[j] = f[i + j]
        for j in range(dim):
            tmp[j] = dot(A[i + j], ray, dim)
        denom = dot(ray, tmp, dim)
        if denom >= MINVAL:
            x = -dot(ray, res, dim) / denom
            if f[i] + x * ray[0] < 0:
                x = -ray[0] / f[i]
            for j in range(dim):
                f[i + j] += x * ray[j]
    # friction with the normal fixed: bc = res_t - Ac f_t(old) + AR_tn (f_n - f_n(old))
    for j in range(n):
        bc[j] = res[1 + j]
        bc[j] -= dot(A[i + 1 + j, 1:], old[1:], n)
        bc[j] += A[i + 1 + j, 0] * (f[i] - old[0])
    friction_qcqp(A, i, bc, fr, f, n, out, W)
    # cost change 1/2 df^T AR df + df.res (mju_mulVecMatVec, mju_dot)
    for j in range(dim):
        tmp[j] = f[i + j] - old[j]
    quad = 0.0
    for j in range(dim):
        quad += tmp[j] * dot(A[i + j], tmp, dim)
    change = 0.5 * quad + dot(tmp, res, dim)
    if change > 1e-10:  # the update raised the cost: keep the old forces
        for j in range(dim):
            f[i + j] = old[j]
        return 0.0
    if ar_n == 0:
        for j in range(dim):
            if tmp[j] != 0.0:
                add_y(m, d, b, i + j, v, tmp[j])
    return change


@kernel
def _project_cones(m, d, b, rows):
    """The Nesterov step's projection of the forces of `rows` (an island's, in efc order):
    friction-loss forces onto +-frictionloss, limit and pyramidal contact forces onto f >= 0,
    an elliptic contact's onto its cone (all zero if f_n < 0, else the friction scaled down
    onto the ellipsoid if outside; projectCone)."""
    f = d.efc_force[b]
    ne = d.ne[b]
    nf = d.nf[b]
    n_rows = rows.shape[0]
    c = 0
    while c < n_rows:
        i = rows[c]
        dim = 1
        if i < ne:
            pass
        elif i < ne + nf:
            fl = d.efc_frictionloss[b, i]
            f[i] = min(max(f[i], -fl), fl)
        elif d.efc_type[b, i] == T.CNSTR_CONTACT_ELLIPTIC:
            dim = _block_dim(d, b, i)
            if f[i] < 0:
                for j in range(i, i + dim):
                    f[j] = 0.0
            else:
                fr = d.contact_friction[b, d.efc_id[b, i]]
                project_ellipsoid(f[i + 1 : i + dim], f[i], fr, dim - 1, True)
        elif f[i] < 0:
            f[i] = 0.0
        c += dim


@kernel
def _dual_state(m, d, b):
    """efc_state from the forces (MuJoCo's dualState): equality rows QUADRATIC; a friction
    row at its bound -+f LINEARPOS/NEG (the primal's other side); a limit or pyramidal
    contact row SATISFIED at f <= 0; an elliptic contact, with N = f_n / mu and T the norm
    of f_j / mu_j, SATISFIED if mu N >= T, QUADRATIC if N + mu T <= 0, else CONE."""
    f = d.efc_force[b]
    ne = d.ne[b]
    nf = d.nf[b]
    nefc = d.nefc[b]
    U = d.scratch_pgs_block[b, 0]
    i = 0
    while i < nefc:
        if i < ne:
            d.efc_state[b, i] = T.CNSTRSTATE_QUADRATIC
        elif i < ne + nf:
            fl = d.efc_frictionloss[b, i]
            if f[i] <= -fl:
                d.efc_state[b, i] = T.CNSTRSTATE_LINEARPOS
            elif f[i] >= fl:
                d.efc_state[b, i] = T.CNSTRSTATE_LINEARNEG
            else:
                d.efc_state[b, i] = T.CNSTRSTATE_QUADRATIC
        elif d.efc_type[b, i] == T.CNSTR_CONTACT_ELLIPTIC:
            c = d.efc_id[b, i]
            dim = d.contact_dim[b, c]
            mu = d.contact_mu[b, c]
            fr = d.contact_friction[b, c]
            N = f[i] / mu
            for j in range(1, dim):
                U[j - 1] = f[i + j] / fr[j - 1]
            Tn = math.sqrt(dot(U, U, dim - 1))
            if mu * N >= Tn:
                state = T.CNSTRSTATE_SATISFIED
            elif N + mu * Tn <= 0:
                state = T.CNSTRSTATE_QUADRATIC
            else:
                state = T.CNSTRSTATE_CONE
            for j in range(i, i + dim):
                d.efc_state[b, j] = state
            i += dim
            continue
        elif f[i] > 0:
            d.efc_state[b, i] = T.CNSTRSTATE_QUADRATIC
        else:
            d.efc_state[b, i] = T.CNSTRSTATE_SATISFIED
        i += 1


@kernel
def solve_pgs(m, d, b, k, half):
    """Projected Gauss-Seidel on the efc_force of island k (all rows if nisland = 0) from its
    warm start (MuJoCo's solPGS, one island): min_f 1/2 f^T AR f + f^T b over the island's
    rows, AR = J M^-1 J^T + R. A row is a block of its own, except the rows of an elliptic
    contact, updated together by _pgs_cone (MuJoCo's blockstart); the island's blocks are
    visited in an order shuffled every sweep by a PCG32 generator started afresh for each
    island, with the island's own Nesterov state. An island of at most PGS_AR_ROWS rows is
    swept on its matrix AR (_island_ar: a row's residual is a dot product over the island's
    forces, and the extrapolation costs nothing more); a larger one on v = M^-1 J^T f,
    updated with each force (and formed anew after each extrapolation). Needs
    minv_jt_rows (with `half`, its Z rows: every island is then swept on its AR). Returns
    (iterations, improvement, converged)."""
    rows, dofs, _ = group(m, d, b, k)
    scale = solver_scale(m, d, b, dofs)
    n = rows.shape[0]
    ne = d.ne[b]
    nf = d.nf[b]
    f = d.efc_force[b]
    ARinv = d.scratch_efc[b, 0]
    fprev = d.scratch_efc[b, 1]
    fmom = d.scratch_efc[b, 2]
    order = d.scratch_efc_int[b]  # the island's blocks' first positions, shuffled in place
    v = d.scratch_nv[b, 1]
    AR = d.scratch_pgs_AR[b]
    tol = m.opt_tolerance
    ar_n = n if _on_ar(d, b, n) else 0
    r0 = rows[0] if ar_n > 0 and rows[n - 1] - rows[0] == n - 1 else -1  # rows in one run
    if ar_n > 0:
        _island_ar(m, d, b, rows, AR, half)
    else:
        _ar_blocks(m, d, b, rows)  # the island's cones' blocks of AR
        minv_jt_f(m, d, b, v, rows, dofs)
    for c in range(n):
        fprev[rows[c]] = f[rows[c]]
    # the blocks: an elliptic contact's rows are consecutive in the island's list too
    nblocks = 0
    c = 0
    while c < n:
        order[nblocks] = c  # order[j] = MuJoCo's shuffled blockstart j
        nblocks += 1
        c += _block_dim(d, b, rows[c])
    state, _ = _pcg32(np.uint64(0))
    nesterov_k = 0
    it = 0
    improvement = 0.0
    while it < m.opt_iterations:
        beta = (nesterov_k - 1) / (nesterov_k + 2) if it > 0 else 0.0
        if beta > 0:
            # Nesterov extrapolation, projected back onto the feasible set
            for c in range(n):
                i = rows[c]
                fs = f[i]
                f[i] += beta * (f[i] - fprev[i])
                fprev[i] = fs
            _project_cones(m, d, b, rows)
            if ar_n == 0:
                minv_jt_f(m, d, b, v, rows, dofs)
        else:
            for c in range(n):
                fprev[rows[c]] = f[rows[c]]
        for c in range(n):
            fmom[rows[c]] = f[rows[c]]
        # MuJoCo's visiting order: a Fisher-Yates shuffle of the island's blocks every sweep
        for c in range(nblocks - 1, 0, -1):
            state, r = _pcg32(state)
            j = int(r % np.uint64(c + 1))
            tmp = order[c]
            order[c] = order[j]
            order[j] = tmp
        improvement = 0.0
        for j in range(nblocks):
            c = order[j]
            i = rows[c]
            if d.efc_type[b, i] == T.CNSTR_CONTACT_ELLIPTIC:
                improvement -= _pgs_cone(m, d, b, i, c, v, AR, ar_n, rows, r0)
                continue
            res = _residual(m, d, b, i, c, v, AR, ar_n, rows, r0)
            old = f[i]
            f[i] -= res * ARinv[i]
            if ne <= i < ne + nf:
                fl = d.efc_frictionloss[b, i]
                if f[i] < -fl:
                    f[i] = -fl
                elif f[i] > fl:
                    f[i] = fl
            elif i >= ne and f[i] < 0:
                f[i] = 0.0
            delta = f[i] - old
            change = 0.5 * delta * delta * (1.0 / ARinv[i]) + delta * res
            if change > 1e-10:  # the projected step raised the cost: keep the old force
                f[i] = old
                change = 0.0
            elif delta != 0.0 and ar_n == 0:
                add_y(m, d, b, i, v, delta)
            improvement -= change
        improvement *= scale
        # gradient restart (O'Donoghue-Candes): when the sweep undid the extrapolation
        restart = False
        if it > 0:
            s = 0.0
            for c in range(n):
                i = rows[c]
                s += (f[i] - fmom[i]) * (fmom[i] - fprev[i])
            restart = s < 0
        nesterov_k = 0 if restart else nesterov_k + 1
        it += 1
        if improvement < tol:
            break
    return it, improvement, 1 if improvement < tol else 0


@kernel
def _dual_finish(m, d, b):
    """After PGS (MuJoCo's dualFinish, for all rows at once): every row's state from its
    force (_dual_state), qfrc_constraint = J^T f and qacc = qacc_smooth + M^-1 J^T f."""
    nv = m.nv
    _dual_state(m, d, b)
    _jt_force(m, d, b)
    qacc = d.qacc[b]
    for k in range(nv):
        qacc[k] = d.qfrc_constraint[b, k]
    solve_ld(qacc, d.qLD[b], d.qLDiagInv[b], m)
    for k in range(nv):
        qacc[k] += d.qacc_smooth[b, k]


# ---- Newton --------------------------------------------------------------------------------------


@kernel
def _hessian(m, d, b, rows, dofs, trees):
    """scratch_H <- Cholesky factor (lower) of the group's H = M + J^T diag(D_active) J on its
    dofs (local indices; mju_cholFactor: a pivot below mjMINVAL is replaced by it)."""
    nd = dofs.shape[0]
    H = d.scratch_H[b]
    idx = d.scratch_idof[b, 1]
    val = d.scratch_row[b]
    local = d.scratch_idof[b, 0]
    for r in range(nd):
        for c in range(r + 1):
            H[r, c] = 0.0
    for c in range(rows.shape[0]):
        i = rows[c]
        if d.efc_state[b, i] != T.CNSTRSTATE_QUADRATIC:
            continue
        Di = d.efc_D[b, i]
        n = _row_local(m, d, b, i, dofs, idx, val)
        for t in range(n):
            x = Di * val[t]
            if x != 0.0:
                hr = H[u(idx[t])]
                for s in range(t + 1):  # indices ascending: idx[s] <= idx[t]
                    hr[u(idx[s])] += x * val[s]
    for tt in range(trees.shape[0]):
        t = trees[tt]
        a = m.tree_dofadr[t]
        shift = local[a] - a
        for i in range(a, a + m.tree_dofnum[t]):
            start = u(m.M_rowadr[i])
            hr = H[u(i + shift)]
            for e in range(u(m.M_rownnz[i])):
                hr[u(m.M_colind[start + e] + shift)] += d.qM[b, start + e]
    chol_factor(H, nd, MINVAL)


@kernel
def _cone_hessian(m, d, b, i, jar, A):
    """A (dim x dim, symmetric) <- the Hessian of 1/2 Dm (N - mu T)^2 with respect to the
    rows' jar, for the elliptic contact at rows i.. in its middle zone (MuJoCo's cone
    Hessian): in the scaled coordinates U it is Dm times [[1, -mu U_t^T / T],
    [., mu N / T^3 U_t U_t^T + (mu^2 - mu N / T) I]], pre and post multiplied by
    diag(mu, friction). Returns dim."""
    U = d.scratch_cone[b, 6]
    N, Tn, mu, dim = cone_split(m, d, b, i, jar, U)
    fr = d.contact_friction[b, d.efc_id[b, i]]
    Dm = cone_dm(m, d, b, i, mu)
    A[0, 0] = 1.0
    scl = -mu / Tn
    for j in range(1, dim):
        A[0, j] = scl * U[j]
    scl = mu * N / (Tn * Tn * Tn)
    for k in range(1, dim):
        for j in range(k, dim):
            A[k, j] = scl * U[j] * U[k]
    scl = mu * mu - mu * N / Tn
    for j in range(1, dim):
        A[j, j] += scl
    for k in range(dim):
        scl = Dm * (mu if k == 0 else fr[k - 1])
        for j in range(k, dim):
            A[k, j] *= scl * (mu if j == 0 else fr[j - 1])
    for k in range(dim):
        for j in range(k + 1, dim):
            A[j, k] = A[k, j]
    return dim


@kernel
def _add_cones(m, d, b, rows, dofs):
    """scratch_Hcone <- the factor of H plus every elliptic contact in the middle zone's cone
    Hessian (MuJoCo's HessianCone: each cone's local Hessian factored, L_c, then the rows of
    L_c^T J added to a copy of H's factor by rank-one updates), on the group's dofs. Returns
    True if some contact is on its cone (solve with scratch_Hcone), else False (scratch_H,
    unchanged)."""
    if m.opt_cone != T.CONE_ELLIPTIC:
        return False
    nd = dofs.shape[0]
    nr = rows.shape[0]
    A = d.scratch_cone[b]
    LTJ = d.scratch_jac[b]
    Hc = d.scratch_Hcone[b]
    jar = d.scratch_efc[b, 0]
    idx = d.scratch_idof[b, 1]
    val = d.scratch_row[b]
    copied = False
    c = 0
    while c < nr:
        i = rows[c]
        if i < d.ne[b] + d.nf[b] or d.efc_type[b, i] != T.CNSTR_CONTACT_ELLIPTIC:
            c += 1
            continue
        dim = d.contact_dim[b, d.efc_id[b, i]]
        if d.efc_state[b, i] != T.CNSTRSTATE_CONE:
            c += dim
            continue
        if not copied:
            H = d.scratch_H[b]
            for r in range(nd):
                for q in range(r + 1):
                    Hc[r, q] = H[r, q]
            copied = True
        _cone_hessian(m, d, b, i, jar, A)
        chol_factor(A, dim, MINVAL)
        for r in range(dim):
            for v in range(nd):
                LTJ[r, v] = 0.0
        for r in range(dim):
            n = _row_local(m, d, b, i + r, dofs, idx, val)
            for q in range(r + 1):
                a = A[r, q]
                lq = LTJ[q]
                for t in range(n):
                    lq[u(idx[t])] += val[t] * a
        for r in range(dim):
            _chol_update(Hc, LTJ[r], nd, True)
        c += dim
    return copied


@kernel
def _chol_update(H, x, n, plus):
    """The lower Cholesky factor L in H becomes that of L L^T + x x^T (plus) or L L^T - x x^T,
    by Givens-like rotations column by column (mju_cholUpdate); x is overwritten. A pivot
    that would fall below mjMINVAL is set to it and lowers the returned rank (of n)."""
    rank = n
    for k in range(n):
        xk = x[k]
        if xk == 0.0:
            continue
        Lkk = H[k, k]
        tmp = Lkk * Lkk + (xk * xk if plus else -(xk * xk))
        if tmp < MINVAL:
            tmp = MINVAL
            rank -= 1
        r = math.sqrt(tmp)
        c = r / Lkk
        cinv = 1.0 / c
        s = xk / Lkk
        H[k, k] = r
        # one pass per column: each x[i] update reads the H[i, k] just written, as
        # mju_cholUpdate's second loop does, so the arithmetic is the same
        uk = u(k)
        if plus:
            for i in range(uk + u(1), u(n)):
                h = (H[i, uk] + s * x[i]) * cinv
                H[i, uk] = h
                x[i] = c * x[i] - s * h
        else:
            for i in range(uk + u(1), u(n)):
                h = (H[i, uk] - s * x[i]) * cinv
                H[i, uk] = h
                x[i] = c * x[i] - s * h
    return rank


@kernel
def _hessian_incremental(m, d, b, oldstate, rows, dofs, trees):
    """Update the factor of the group's H = M + J^T diag(D_active) J for the rows whose state
    changed since `oldstate`: a row turning quadratic adds sqrt(D_i) J_i by a rank-one update,
    one leaving it removes it by a downdate (MuJoCo's HessianIncremental). If a downdate loses
    rank, H is rebuilt and factored from the current states instead."""
    nd = dofs.shape[0]
    H = d.scratch_H[b]
    x = d.scratch_nv[b, 5]
    idx = d.scratch_idof[b, 1]
    val = d.scratch_row[b]
    for c in range(rows.shape[0]):
        i = rows[c]
        was = oldstate[i] == T.CNSTRSTATE_QUADRATIC
        now = d.efc_state[b, i] == T.CNSTRSTATE_QUADRATIC
        if was == now:
            continue
        for v in range(nd):
            x[v] = 0.0
        scale = math.sqrt(d.efc_D[b, i])
        n = _row_local(m, d, b, i, dofs, idx, val)
        for t in range(n):
            x[u(idx[t])] = val[t] * scale
        if _chol_update(H, x, nd, now) < nd:
            _hessian(m, d, b, rows, dofs, trees)
            return


@kernel
def _ls_eval(m, d, b, rows, alpha, qg1, qg2):
    """(alpha, cost(alpha) - cost(0), d cost/d alpha, d^2 cost/d alpha^2) along the search
    direction (MuJoCo's PrimalEval). A friction row's piecewise cost and an elliptic
    contact's (_cone_cost_dif, from the coefficients of _cone_quad) are evaluated directly,
    their derivatives summed apart from the quadratic rows'."""
    ne = d.ne[b]
    nf = d.nf[b]
    Jaref = d.scratch_efc[b, 0]
    Jv = d.scratch_efc[b, 1]
    q0 = d.scratch_efc[b, 2]
    q1 = d.scratch_efc[b, 3]
    q2 = d.scratch_efc[b, 4]
    cost = 0.0
    t0 = 0.0
    t1 = qg1
    t2 = qg2
    fd0 = 0.0
    fd1 = 0.0
    nr = rows.shape[0]
    c = -1
    while c + 1 < nr:
        c += 1
        i = rows[c]
        if i < ne:
            t1 += q1[i]
            t2 += q2[i]
            continue
        if d.efc_type[b, i] == T.CNSTR_CONTACT_ELLIPTIC:
            mu = d.contact_mu[b, d.efc_id[b, i]]
            U0, V0, UU = q0[i + 1], q1[i + 1], q2[i + 1]
            UV, VV, Dm = q0[i + 2], q1[i + 2], q2[i + 2]
            cost += _cone_cost_dif(U0, V0, UU, UV, VV, q0[i], q1[i], q2[i], alpha, mu, Dm)
            N = U0 + alpha * V0
            zone, Ta = cone_zone_at(N, UU + alpha * (2 * UV + alpha * VV), mu)
            if zone == 2:
                fd0 += 2 * alpha * q2[i] + q1[i]
                fd1 += 2 * q2[i]
            elif zone == 3:
                T1 = (UV + alpha * VV) / Ta
                T2 = VV / Ta - (UV + alpha * VV) * T1 / (Ta * Ta)
                fd0 += Dm * (N - mu * Ta) * (V0 - mu * T1)
                fd1 += Dm * ((V0 - mu * T1) * (V0 - mu * T1) + (N - mu * Ta) * (-mu * T2))
            c += d.contact_dim[b, d.efc_id[b, i]] - 1
            continue
        if i < ne + nf:
            start = Jaref[i]
            v = Jv[i]
            x = start + alpha * v
            f = d.efc_frictionloss[b, i]
            D = d.efc_D[b, i]
            Rf = d.efc_R[b, i] * f
            cost += _friction_cost_dif(start, x, f, Rf, D)
            if -Rf < x < Rf:
                fd0 += D * x * v
                fd1 += D * v * v
            elif x <= -Rf:
                fd0 += -f * v
            else:
                fd0 += f * v
            continue
        start = Jaref[i]
        x = start + alpha * Jv[i]
        cost0 = q0[i] if start < 0 else 0.0
        if x < 0:
            t0 += q0[i] - cost0
            t1 += q1[i]
            t2 += q2[i]
        else:
            cost -= cost0
    cost += alpha * alpha * t2 + alpha * t1 + t0
    d0 = fd0 + (2 * alpha * t2 + t1)
    d1 = fd1 + 2 * t2
    if d1 <= 0:
        d1 = MINVAL
    return (alpha, cost, d0, d1)


@kernel
def _friction_zone(x, Rf):
    """-1, 0, 1: x in the linear negative, quadratic or linear positive zone of a friction row."""
    if -Rf < x < Rf:
        return 0
    return -1 if x <= -Rf else 1


@kernel
def _friction_cost_dif(start, x, f, Rf, D):
    """s(x) - s(start) of a friction row, from one zone's formula when both lie in it
    (MuJoCo's frictionCostDif)."""
    z0 = _friction_zone(start, Rf)
    z1 = _friction_zone(x, Rf)
    if z0 == 0 and z1 == 0:
        return 0.5 * D * (x - start) * (x + start)
    if z0 == -1 and z1 == -1:
        return f * (start - x)
    if z0 == 1 and z1 == 1:
        return f * (x - start)
    return friction_cost(x, f, Rf, D) - friction_cost(start, f, Rf, D)


@kernel
def _bracket(m, d, b, rows, p, c1, c2, c3, pnext, qg1, qg2):
    """MuJoCo's updateBracket: move bracket end p to the candidate with the same derivative
    sign closest to zero; returns (flag, p, pnext, evaluations)."""
    flag = 0
    for c in (c1, c2, c3):
        if p[2] < 0 and c[2] < 0 and p[2] < c[2]:
            p = c
            flag = 1
        elif p[2] > 0 and c[2] > 0 and p[2] > c[2]:
            p = c
            flag = 2
    if flag:
        pnext = _ls_eval(m, d, b, rows, p[0] - p[2] / p[3], qg1, qg2)
        return flag, p, pnext, 1
    return flag, p, pnext, 0


@kernel
def _quad(d, b, i, k):
    """Where MuJoCo's quad[3 i + k] of the line search lives here: scratch_efc[b, 2 + k % 3]
    at row i + k // 3 (an elliptic contact keeps 9 numbers over its first three rows)."""
    return d.scratch_efc[b, 2 + k % 3], i + k // 3


@kernel
def _cone_quad(m, d, b, i):
    """The line search's coefficients of the elliptic contact at rows i.. (MuJoCo's
    PrimalPrepare): quad[0..2] the bottom zone's quadratic summed over its rows (with the
    halves), then U0 = mu Jaref_0, V0 = mu Jv_0, UU, UV, VV over the friction rows of
    U = friction Jaref, V = friction Jv, and Dm. Returns dim."""
    Jaref = d.scratch_efc[b, 0]
    Jv = d.scratch_efc[b, 1]
    D = d.efc_D[b]
    c = d.efc_id[b, i]
    mu = d.contact_mu[b, c]
    fr = d.contact_friction[b, c]
    dim = d.contact_dim[b, c]
    dj = D[i] * Jaref[i]
    q0 = Jaref[i] * dj
    q1 = Jv[i] * dj
    q2 = Jv[i] * D[i] * Jv[i]
    for j in range(1, dim):
        dj = D[i + j] * Jaref[i + j]
        q0 += Jaref[i + j] * dj
        q1 += Jv[i + j] * dj
        q2 += Jv[i + j] * D[i + j] * Jv[i + j]
    uu = 0.0
    uv = 0.0
    vv = 0.0
    for j in range(1, dim):
        u = Jaref[i + j] * fr[j - 1]
        v = Jv[i + j] * fr[j - 1]
        uu += u * u
        uv += u * v
        vv += v * v
    values = (0.5 * q0, q1, 0.5 * q2, Jaref[i] * mu, Jv[i] * mu, uu, uv, vv, cone_dm(m, d, b, i, mu))
    for k in range(9):
        arr, row = _quad(d, b, i, k)
        arr[row] = values[k]
    return dim


@kernel
def _cone_cost_dif(U0, V0, UU, UV, VV, q0, q1, q2, alpha, mu, Dm):
    """cost(alpha) - cost(0) of an elliptic contact along the search (MuJoCo's
    ellipticCostDif: each pair of zones at 0 and at alpha by its own formula, the middle
    zone's rationalized to avoid cancellation)."""
    zone0, T0 = cone_zone_at(U0, UU, mu)
    N = U0 + alpha * V0
    zone, Ta = cone_zone_at(N, UU + alpha * (2 * UV + alpha * VV), mu)
    if zone0 == 1 and zone == 1:
        return 0.0
    if zone0 == 2 and zone == 2:
        return alpha * alpha * q2 + alpha * q1
    if zone0 == 3 and zone == 3:
        t_delta = alpha * (2 * UV + alpha * VV) / (Ta + T0)
        r_delta = alpha * V0 - mu * t_delta
        r0 = U0 - mu * T0
        return 0.5 * Dm * r_delta * (2 * r0 + r_delta)
    if zone0 == 3 and zone == 2:
        boundary0 = mu * U0 + T0
        return alpha * (alpha * q2 + q1) + 0.5 * Dm * boundary0 * boundary0
    if zone0 == 2 and zone == 3:
        boundary = mu * N + Ta
        return alpha * (alpha * q2 + q1) - 0.5 * Dm * boundary * boundary
    if zone0 == 1 and zone == 2:
        return alpha * alpha * q2 + alpha * q1 + q0
    if zone0 == 1 and zone == 3:
        r = N - mu * Ta
        return 0.5 * Dm * r * r
    if zone0 == 3 and zone == 1:
        r0 = U0 - mu * T0
        return -0.5 * Dm * r0 * r0
    if zone0 == 2 and zone == 1:
        return -q0
    return 0.0


@kernel
def _line_search(m, d, b, rows, dofs, trees, scale):
    """(alpha, improvement) of MuJoCo's exact line search (PrimalSearch) along search, on the
    group's rows and dofs (local dof vectors)."""
    nv = dofs.shape[0]
    nr = rows.shape[0]
    Ma = d.scratch_nv[b, 0]
    Mv = d.scratch_nv[b, 1]
    search = d.scratch_nv[b, 4]
    snorm = math.sqrt(dot(search, search, nv))
    if snorm < MINVAL:
        return 0.0, 0.0
    gtol = m.opt_tolerance * m.opt_ls_tolerance * snorm / scale
    lsmax = m.opt_ls_iterations
    _mul_m_local(m, d, b, Mv, search, trees)
    Jaref = d.scratch_efc[b, 0]
    Jv = d.scratch_efc[b, 1]
    _mul_j_local(m, d, b, Jv, search, rows, dofs)
    qg1 = dot(search, Ma, nv) - dot(d.scratch_nv[b, 7], search, nv)
    qg2 = 0.5 * dot(search, Mv, nv)
    c = 0
    while c < nr:
        i = rows[c]
        if d.efc_type[b, i] == T.CNSTR_CONTACT_ELLIPTIC:
            c += _cone_quad(m, d, b, i)
            continue
        Di = d.efc_D[b, i]
        dj = Di * Jaref[i]
        d.scratch_efc[b, 2, i] = 0.5 * (Jaref[i] * dj)
        d.scratch_efc[b, 3, i] = Jv[i] * dj
        d.scratch_efc[b, 4, i] = 0.5 * (Jv[i] * Di * Jv[i])
        c += 1
    p0 = _ls_eval(m, d, b, rows, 0.0, qg1, qg2)
    p1 = _ls_eval(m, d, b, rows, p0[0] - p0[2] / p0[3], qg1, qg2)
    nev = 2
    if abs(p1[2]) < gtol and (p1[0] == 0 or p1[1] < 0):
        return p1[0], -p1[1]
    direction = 1.0 if p1[2] < 0 else -1.0
    # one-sided search: Newton steps while the derivative keeps its sign
    p2 = p0
    while p1[2] * direction <= -gtol and nev < lsmax:
        p2 = p1
        p1 = _ls_eval(m, d, b, rows, p1[0] - p1[2] / p1[3], qg1, qg2)
        nev += 1
        if abs(p1[2]) < gtol and p1[1] < 0:
            return p1[0], -p1[1]
    if nev >= lsmax:
        return p1[0], -p1[1]
    # bracketed search between p1 and p2
    p2next = p1
    p1next = _ls_eval(m, d, b, rows, p1[0] - p1[2] / p1[3], qg1, qg2)
    nev += 1
    while nev < lsmax:
        pmid = _ls_eval(m, d, b, rows, 0.5 * (p1[0] + p2[0]), qg1, qg2)
        nev += 1
        best = -1
        bestcost = 0.0
        k = 0
        for c in (p1next, p2next, pmid):
            if abs(c[2]) < gtol and (best == -1 or c[1] < bestcost):
                bestcost = c[1]
                best = k
            k += 1
        if best == 0:
            return p1next[0], -p1next[1]
        if best == 1:
            return p2next[0], -p2next[1]
        if best == 2:
            return pmid[0], -pmid[1]
        c1, c2, c3 = p1next, p2next, pmid
        b1, p1, p1next, n1 = _bracket(m, d, b, rows, p1, c1, c2, c3, p1next, qg1, qg2)
        b2, p2, p2next, n2 = _bracket(m, d, b, rows, p2, c1, c2, c3, p2next, qg1, qg2)
        nev += n1 + n2
        if not b1 and not b2:
            return pmid[0], -pmid[1]
    if p1[1] <= p2[1] and p1[1] < 0:
        return p1[0], -p1[1]
    if p2[1] <= p1[1] and p2[1] < 0:
        return p2[0], -p2[1]
    return 0.0, 0.0


@kernel
def _newton_gradient(m, d, b, factor, rows, dofs, trees):
    """At the current qacc (Ma, Jaref kept): the group's forces, states and J^T f
    (scratch_nv[b, 9]), then grad = M qacc - qfrc_smooth - J^T f and Mgrad = H^-1 grad, with
    H's factor updated for the rows whose state changed if `factor`, else Mgrad = M^-1 grad
    (local dof vectors)."""
    nv = dofs.shape[0]
    oldstate = d.scratch_efc_int[b]
    if factor:
        for c in range(rows.shape[0]):
            oldstate[rows[c]] = d.efc_state[b, rows[c]]
    update_rows(m, d, b, d.scratch_efc[b, 0], rows)
    qfrc = d.scratch_nv[b, 9]
    _jt_local(m, d, b, qfrc, rows, dofs)
    Ma = d.scratch_nv[b, 0]
    grad = d.scratch_nv[b, 2]
    Mgrad = d.scratch_nv[b, 3]
    fsmooth = d.scratch_nv[b, 7]
    for v in range(nv):
        grad[v] = Ma[v] - fsmooth[v] - qfrc[v]
    if factor:
        _hessian_incremental(m, d, b, oldstate, rows, dofs, trees)
        H = d.scratch_Hcone[b] if _add_cones(m, d, b, rows, dofs) else d.scratch_H[b]
        chol_solve(H, Mgrad, grad, nv)
    else:
        for v in range(nv):
            Mgrad[v] = grad[v]
        _solve_m_local(m, d, b, Mgrad, trees)


@kernel
def solve_newton(m, d, b, k):
    """Newton's method on the primal cost of island k (all rows if nisland = 0) from the
    warm-start qacc (MuJoCo's mj_solPrimal with flg_Newton, one island: its dofs gathered
    into local vectors, a dense Hessian on them factored once and then updated by rank-one
    updates for the rows whose state changes, as MuJoCo's HessianIncremental); scatters qacc
    and qfrc_constraint back to the island's dofs. Returns (iterations, improvement,
    gradient, converged).

    Before any iteration, MuJoCo's certificate: the cost is strongly convex in the M-norm,
    so cost(qacc) - cost* <= 1/2 grad^T M^-1 grad; if that (scaled) and the scaled
    gradient are below the tolerance the warm start is the answer (0 iterations), and
    likewise if the Newton decrement 1/2 grad^T H^-1 grad is.
    """
    rows, dofs, trees = group(m, d, b, k)
    scale = solver_scale(m, d, b, dofs)
    nv = dofs.shape[0]
    nr = rows.shape[0]
    _enter(d, b, dofs)
    qacc = d.scratch_nv[b, 6]
    for j in range(nv):
        qacc[j] = d.qacc[b, dofs[j]]
        d.scratch_nv[b, 7, j] = d.qfrc_smooth[b, dofs[j]]
    Ma = d.scratch_nv[b, 0]
    Mv = d.scratch_nv[b, 1]
    grad = d.scratch_nv[b, 2]
    Mgrad = d.scratch_nv[b, 3]
    search = d.scratch_nv[b, 4]
    Jaref = d.scratch_efc[b, 0]
    Jv = d.scratch_efc[b, 1]
    tol = m.opt_tolerance
    _mul_m_local(m, d, b, Ma, qacc, trees)
    _mul_j_local(m, d, b, Jaref, qacc, rows, dofs)
    for c in range(nr):
        Jaref[rows[c]] -= d.efc_aref[b, rows[c]]
    _newton_gradient(m, d, b, False, rows, dofs, trees)
    gradient = scale * math.sqrt(dot(grad, grad, nv))
    done = gradient < tol and max(0.0, 0.5 * scale * dot(grad, Mgrad, nv)) < tol
    if not done:
        _hessian(m, d, b, rows, dofs, trees)
        H = d.scratch_Hcone[b] if _add_cones(m, d, b, rows, dofs) else d.scratch_H[b]
        chol_solve(H, Mgrad, grad, nv)
        done = gradient < tol and max(0.0, 0.5 * scale * dot(grad, Mgrad, nv)) < tol
    converged = 1 if done else 0
    for v in range(nv):
        search[v] = -Mgrad[v]
    it = 0
    improvement = 0.0
    while not done and it < m.opt_iterations:
        alpha, ls_improvement = _line_search(m, d, b, rows, dofs, trees, scale)
        if alpha == 0.0:
            break
        for v in range(nv):
            qacc[v] += alpha * search[v]
            Ma[v] += alpha * Mv[v]
        for c in range(nr):
            Jaref[rows[c]] += alpha * Jv[rows[c]]
        _newton_gradient(m, d, b, True, rows, dofs, trees)
        improvement = scale * ls_improvement
        gradient = scale * math.sqrt(dot(grad, grad, nv))
        decrement = max(0.0, 0.5 * scale * dot(grad, Mgrad, nv))
        it += 1
        if (improvement > 0 and improvement < tol) or gradient < tol or decrement < tol:
            converged = 1
            break
        for v in range(nv):
            search[v] = -Mgrad[v]
    if not converged:
        # stopped by the iteration limit or a line search without improvement: converged
        # if the final point passes the gradient or Newton-decrement test
        gradient = scale * math.sqrt(dot(grad, grad, nv))
        decrement = max(0.0, 0.5 * scale * dot(grad, Mgrad, nv))
        converged = 1 if (gradient < tol or decrement < tol) else 0
    qfrc = d.scratch_nv[b, 9]
    for j in range(nv):
        d.qacc[b, dofs[j]] = qacc[j]
        d.qfrc_constraint[b, dofs[j]] = qfrc[j]
    _leave(d, b, dofs)
    return it, improvement, gradient, converged


# ---- driver --------------------------------------------------------------------------------------


@kernel
def _constraint_start(m, d, b):
    """The first part of mj_fwdConstraint for row b, the same for every solver: the islands
    (engine.island), qfrc_constraint cleared, efc_b = J qacc_smooth - aref, the warm start
    of all rows together, the per-island statistics cleared. Returns the number of groups
    solved on their own: the islands, or 1 (all rows) with islands disabled."""
    island(m, d, b)
    for v in range(m.nv):
        d.qfrc_constraint[b, v] = 0.0
        d.scratch_idof[b, 0, v] = -1
    mul_jar(m, d, b, d.efc_b[b], d.qacc_smooth[b])
    _warmstart(m, d, b)
    for k in range(m.ntree):
        d.island_niter[b, k] = 0
        d.island_converged[b, k] = 0
        d.noslip_niter[b, k] = 0
        d.noslip_improvement[b, k] = 0.0
    return max(1, d.nisland[b])


@kernel
def _constraint_end(m, d, b, niter, improvement, gradient, converged):
    """The last part of mj_fwdConstraint for row b: the solver's statistics (solver_niter
    the sum of the islands' iterations), then the noslip pass if the model has one (its own
    unit, noslip_pass, which adds its iterations), else after PGS MuJoCo's dualFinish."""
    d.solver_niter[b] = niter
    d.solver_improvement[b] = improvement
    d.solver_gradient[b] = gradient
    d.solver_converged[b] = converged
    if m.unit_noslip != 0:
        call_unit(m.unit_noslip, m, d, b)
    elif m.opt_solver == T.SOL_PGS:
        _dual_finish(m, d, b)


# mj_fwdConstraint is three units, so a model compiles only the solver it uses: Newton or
# PGS (engine.binding.units_for picks one by opt_solver), and the noslip pass only with
# noslip_iterations > 0. Each is called when the row has constraint rows (fwd_acceleration
# handles nefc == 0). Each island k reports its iterations in island_niter[k] (the noslip
# pass's included, as MuJoCo's solver_niter counts them; noslip_niter apart) and its
# convergence (the main solver's) in island_converged[k].


@unit
def fwd_constraint_newton(m, d, b):
    """qacc, qfrc_constraint and efc_force of row b by Newton (mj_fwdConstraint with
    mjSOL_NEWTON): after the smooth acceleration (qacc_smooth) and the constraint rows
    (make_constraint, reference), each island solved on its own (all rows as one problem
    with islands disabled); its largest scaled improvement and gradient reported."""
    ngroup = _constraint_start(m, d, b)
    niter = 0
    improvement = 0.0
    gradient = 0.0
    converged = 1
    for k in range(ngroup):
        it, imp, grad, ok = solve_newton(m, d, b, k)
        d.island_niter[b, k] = it
        d.island_converged[b, k] = ok
        niter += it
        improvement = max(improvement, imp)
        gradient = max(gradient, grad)
        converged = min(converged, ok)
    _constraint_end(m, d, b, niter, improvement, gradient, converged)


@unit
def fwd_constraint_pgs(m, d, b):
    """qacc, qfrc_constraint and efc_force of row b by PGS (mj_fwdConstraint with
    mjSOL_PGS): the rows Y_i = M^-1 J_i^T (or Z_i = D^-1/2 L^-T J_i^T when every island
    is swept on its AR and no noslip pass follows) and ARinv of every row, each island swept
    on its own, then the forces mapped to qacc (MuJoCo's dualFinish, in _constraint_end or
    after the noslip pass)."""
    ngroup = _constraint_start(m, d, b)
    # every island on its AR and no noslip pass (which reads Y): the half rows Z suffice
    half = m.unit_noslip == 0
    for k in range(ngroup):
        if not _on_ar(d, b, d.island_nefc[b, k] if d.nisland[b] > 0 else d.nefc[b]):
            half = False
    minv_jt_rows(m, d, b, half)
    niter = 0
    improvement = 0.0
    converged = 1
    for k in range(ngroup):
        it, imp, ok = solve_pgs(m, d, b, k, half)
        d.island_niter[b, k] = it
        d.island_converged[b, k] = ok
        niter += it
        improvement = max(improvement, imp)
        converged = min(converged, ok)
    _constraint_end(m, d, b, niter, improvement, 0.0, converged)


@unit
def noslip_pass(m, d, b):
    """MuJoCo's noslip pass on row b after Newton or PGS (engine.noslip), island by island:
    the rows Y_i it reads A from (PGS has them already), each island's sweeps added to its
    island_niter and to solver_niter (as MuJoCo counts them) and kept in noslip_niter and
    noslip_improvement, then efc_state, qfrc_constraint and qacc for all rows
    (dualFinish, under Newton too)."""
    if m.opt_solver != T.SOL_PGS:
        minv_jt_rows(m, d, b, False)
    for k in range(max(1, d.nisland[b])):
        it, imp = noslip(m, d, b, k)
        d.island_niter[b, k] += it
        d.noslip_niter[b, k] = it
        d.noslip_improvement[b, k] = imp
        d.solver_niter[b] += it
    _dual_finish(m, d, b)
