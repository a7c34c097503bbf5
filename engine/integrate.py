"""Stage 12, integrate: advance (qpos, qvel, act, time) by one timestep h (MuJoCo's integrators).

- Euler (semi-implicit):  v' = v + h a,  q' = q (+) h v'.  With joint damping D the velocity
  update is implicit in D:  a = (M + h D)^-1 (qfrc_smooth + qfrc_constraint).
- RK4: the classical four-stage tableau on (q, v), each stage a full forward pass, with
  the Munthe-Kaas (dexp^-1) correction for the orientations of ball and free joints.
- implicit:  a = (M - h dF/dv)^-1 (qfrc_smooth + qfrc_constraint), F = qfrc_smooth with the
  full velocity derivative (actuators, damping, and -d(qfrc_bias)/dv), dense LU.
- implicitfast: the same without the Coriolis/centrifugal derivative, factored as
  L^T D L in M's sparsity; a standalone free body keeps its gyroscopic derivative in a
  local 6x6 solve (as MuJoCo does).

(+) is position integration on the joint manifold: quaternions of ball and free joints
rotate by exp(h w / 2) in the body frame; everything else adds.

Activations (actuators with activation dynamics) advance in every integrator by
engine.actuation.next_activation with the step's act_dot: act' = act + h act_dot, or exactly
for filterexact, then clamped to actrange if actlimited; Euler and the implicit
integrators use the act_dot of the forward pass, RK4 its weighted stage average. With
actuation disabled act does not change (MuJoCo's mj_advance).
"""

import numpy as np

from robodyn.engine import types as T
from robodyn.engine.actuation import next_activation
from robodyn.engine.derivative import bias_vel_columns, smooth_vel
from robodyn.engine.factor import factor_i, solve_ld
from robodyn.engine.jit import kernel, unit
from robodyn.engine.ptr import call_unit
from robodyn.engine.spatial import put, qsub, quat_integrate


@kernel
def integrate_pos(m, qpos, qvel, h):
    """qpos <- qpos (+) h qvel on the joint manifold (MuJoCo's mj_integratePos)."""
    for j in range(m.njnt):
        pa = m.jnt_qposadr[j]
        va = m.jnt_dofadr[j]
        jtype = m.jnt_type[j]
        if jtype == T.JNT_FREE:
            for k in range(3):
                qpos[pa + k] += h * qvel[va + k]
            quat_integrate(qpos[pa + 3 : pa + 7], qvel[va + 3 : va + 6], h)
        elif jtype == T.JNT_BALL:
            quat_integrate(qpos[pa : pa + 4], qvel[va : va + 3], h)
        else:
            qpos[pa] += h * qvel[va]


@kernel
def differentiate_pos(m, qvel, dt, qpos1, qpos2):
    """qvel = (qpos2 (-) qpos1) / dt: the velocity that integrate_pos turns qpos1 into qpos2
    in dt (MuJoCo's mj_differentiatePos). Quaternions of ball and free joints differ by a
    rotation vector in qpos1's body frame (spatial.qsub); everything else subtracts."""
    for j in range(m.njnt):
        pa = m.jnt_qposadr[j]
        va = m.jnt_dofadr[j]
        jtype = m.jnt_type[j]
        if jtype == T.JNT_FREE:
            for k in range(3):
                qvel[va + k] = (qpos2[pa + k] - qpos1[pa + k]) / dt
            put(qvel[va + 3 : va + 6], qsub(qpos2[pa + 3 : pa + 7], qpos1[pa + 3 : pa + 7]))
            for k in range(3, 6):
                qvel[va + k] /= dt
        elif jtype == T.JNT_BALL:
            put(qvel[va : va + 3], qsub(qpos2[pa : pa + 4], qpos1[pa : pa + 4]))
            for k in range(3):
                qvel[va + k] /= dt
        else:
            qvel[va] = (qpos2[pa] - qpos1[pa]) / dt


@kernel
def advance(m, d, b, act_dot, qacc, qvel_pos, use_qvel_pos):
    """act <- next_activation(act_dot) (unless actuation is disabled); v += h qacc;
    q (+)= h v (or h qvel_pos if use_qvel_pos); t += h (MuJoCo's mj_advance). act_dot (na),
    qacc (nv), qvel_pos (nv).

    Also keeps the qacc of the last forward pass as the constraint solver's next warm start.
    """
    h = m.opt_timestep
    if m.na > 0 and not (m.opt_disableflags & T.DSBL_ACTUATION):
        for a in range(m.nu):
            adr = m.actuator_actadr[a]
            if adr >= 0:
                d.act[b, adr] = next_activation(m, d, b, a, act_dot[adr])
    for i in range(m.nv):
        d.qacc_warmstart[b, i] = d.qacc[b, i]
    qvel = d.qvel[b]
    for i in range(m.nv):
        qvel[i] += h * qacc[i]
    if use_qvel_pos:
        integrate_pos(m, d.qpos[b], qvel_pos, h)
    else:
        integrate_pos(m, d.qpos[b], qvel, h)
    d.time[b] += h


@kernel
def _has_damping(m):
    if m.opt_disableflags & T.DSBL_EULERDAMP or m.opt_disableflags & T.DSBL_DAMPER:
        return False
    for i in range(m.nv):
        if m.dof_damping[i] > 0:
            return True
    return False


@unit
def euler(m, d, b):
    """Semi-implicit Euler with implicit joint damping (MuJoCo's mj_Euler)."""
    if not _has_damping(m):
        advance(m, d, b, d.act_dot[b], d.qacc[b], d.qvel[b], False)
        return
    h = m.opt_timestep
    qH = d.qH[b]
    for k in range(m.nM):
        qH[k] = d.qM[b, k]
    for i in range(m.nv):
        qH[m.M_rowadr[i] + m.M_rownnz[i] - 1] += h * m.dof_damping[i]
    factor_i(qH, d.qHDiagInv[b], m)
    acc = d.scratch_v[b, 0]
    for i in range(m.nv):
        acc[i] = d.qfrc_smooth[b, i] + d.qfrc_constraint[b, i]
    solve_ld(acc, qH, d.qHDiagInv[b], m)
    advance(m, d, b, d.act_dot[b], acc, d.qvel[b], False)


# dexpinv coefficient c(t) = (1 - (t/2) cot(t/2)) / t^2 for t^2 < 1.75^2: MuJoCo's polynomial
# in t^2 (a fit close to the series 1/12 + t^2/720 + t^4/30240 + ...), highest power first
_DEXPINV_POLY = (
    1.230313397310169e-14,
    3.161551550077822e-13,
    1.3455485951057888e-11,
    5.282849430384459e-10,
    2.0876900642039142e-08,
    8.267194907152073e-07,
    3.30687830944332e-05,
    0.0013888888888859755,
    0.08333333333333338,
)
_TWO_PI = 6.283185307179586
_PI_SQ = 9.869604401089358


@kernel
def _dexpinv(w, dx, h):
    """w <- dexp^-1_theta(w), theta = h dx (3-vectors, body frame), in place, as MuJoCo 4.

    theta is first wrapped to |theta| <= pi (same rotation). With t = |theta|,
    w' = (w + theta x w / 2) + c(t) theta x (theta x w),  c = (1 - (t/2) cot(t/2)) / t^2.
    """
    t0 = h * dx[0]
    t1 = h * dx[1]
    t2 = h * dx[2]
    tt = (t0 * t0 + t1 * t1) + t2 * t2
    if tt > _PI_SQ:
        t = np.sqrt(tt)
        s = (np.floor(t / _TWO_PI + 0.5) * -_TWO_PI + t) / t
        t0 *= s
        t1 *= s
        t2 *= s
        tt = (t0 * t0 + t1 * t1) + t2 * t2
    if tt < 3.0625:
        c = _DEXPINV_POLY[0] * tt
        for k in range(1, 8):
            c = (c + _DEXPINV_POLY[k]) * tt
        c = c + _DEXPINV_POLY[8]
    else:
        x = 0.5 * np.sqrt(tt)
        c = (1.0 - x / np.tan(x)) / tt
    w0, w1, w2 = w[0], w[1], w[2]
    a0 = t1 * w2 - t2 * w1  # theta x w
    a1 = t2 * w0 - t0 * w2
    a2 = t0 * w1 - t1 * w0
    w[0] = (w0 + 0.5 * a0) + c * (t1 * a2 - t2 * a1)  # theta x (theta x w)
    w[1] = (w1 + 0.5 * a1) + c * (t2 * a0 - t0 * a2)
    w[2] = (w2 + 0.5 * a2) + c * (t0 * a1 - t1 * a0)


@kernel
def _rkmk_stage(m, v, dx, h):
    """Map the angular velocities of a stage to the Lie algebra (Runge-Kutta-Munthe-Kaas)."""
    for j in range(m.njnt):
        jtype = m.jnt_type[j]
        va = m.jnt_dofadr[j]
        if jtype == T.JNT_FREE:
            _dexpinv(v[va + 3 : va + 6], dx[va + 3 : va + 6], h)
        elif jtype == T.JNT_BALL:
            _dexpinv(v[va : va + 3], dx[va : va + 3], h)


@unit
def rk4(m, d, b):
    """Runge-Kutta 4 on (qpos, qvel), Munthe-Kaas on quaternions (MuJoCo 4's mj_RungeKutta).

    forward() has run at the current state. Tableau: a = (1/2, 1/2, 1) on the sub-diagonal,
    weights b = (1/6, 1/3, 1/3, 1/6). Stage i = 1..3, with U_0 = v_0:

        dx_i = a_i U_{i-1},  dv_i = a_i acc_{i-1}
        q_i  = q_0 (+) h dx_i,  v_i = v_0 + h dv_i,  acc_i = forward(q_i, v_i, t + c_i h)
        U_i  = v_i, except for the angular dofs w of each ball / free joint (body frame):
               U_i = dexp^-1_theta(w_i),  theta = h dx_i (wrapped to |theta| <= pi),
               dexp^-1_theta(w) = w + theta x w / 2 + c(t) theta x (theta x w),
               c(t) = (1 - (t/2) cot(t/2)) / t^2 (a polynomial in t^2 below t = 1.75)

    Final: q' = q_0 (+) h sum_j b_j U_j,  v' = v_0 + h sum_j b_j acc_j.  (+) rotates a
    quaternion by exp(h u / 2) in the body frame (mj_integratePos), so each stage and the
    step compose q_0 with the exponential of an algebra element theta = h sum a_ij U_j,
    which is the RKMK method: orientations are 4th order. Forward sees the uncorrected
    v_i; hinge, slide and the free joint's translation are classical RK4.

    Activations are part of the state: act_i = act_0 + h a_i act_dot_{i-1} in each stage
    (plain Euler, unclamped, even for filterexact, as MuJoCo), and the final update is
    next_activation with the weighted act_dot = sum_j b_j act_dot_j (exact for filterexact,
    then clamped to actrange).

    Left after the step, as MuJoCo 4.0.0's: d.qacc = sum_j b_j acc_j (the acceleration v was
    advanced with), d.qacc_warmstart = acc_3 (the last stage's, copied by advance before
    d.qacc is replaced), d.act_dot = the last stage's act_dot (not the weighted one).
    """
    h = m.opt_timestep
    nq, nv, na = m.nq, m.nv, m.na
    X = d.rk_qpos[b]
    V = d.rk_qvel[b]
    F = d.rk_qacc[b]
    XA = d.rk_act[b]
    FA = d.rk_act_dot[b]
    dx = d.scratch_v[b, 0]
    dv = d.scratch_v[b, 1]
    da = d.scratch_act[b]
    t0 = d.time[b]
    for k in range(nq):
        X[0, k] = d.qpos[b, k]
    for k in range(nv):
        V[0, k] = d.qvel[b, k]
        F[0, k] = d.qacc[b, k]
    for k in range(na):
        XA[0, k] = d.act[b, k]
        FA[0, k] = d.act_dot[b, k]
    for i in range(1, 4):
        a = 1.0 if i == 3 else 0.5  # the tableau's sub-diagonal: 1/2, 1/2, 1
        for k in range(nv):
            dx[k] = a * V[i - 1, k]
            dv[k] = a * F[i - 1, k]
        for k in range(nq):
            X[i, k] = X[0, k]
        integrate_pos(m, X[i], dx, h)
        for k in range(nv):
            V[i, k] = V[0, k] + h * dv[k]
        for k in range(na):
            XA[i, k] = XA[0, k] + h * (a * FA[i - 1, k])  # no clamp inside a step
        for k in range(nq):
            d.qpos[b, k] = X[i, k]
        for k in range(nv):
            d.qvel[b, k] = V[i, k]
        for k in range(na):
            d.act[b, k] = XA[i, k]
        _rkmk_stage(m, V[i], dx, h)  # after the copy: forward sees the plain v_i
        d.time[b] = t0 + a * h
        call_unit(m.unit_forward, m, d, b)
        for k in range(nv):
            F[i, k] = d.qacc[b, k]
        for k in range(na):
            FA[i, k] = d.act_dot[b, k]
    w0, w1 = 1.0 / 6.0, 1.0 / 3.0
    for k in range(nv):
        dx[k] = w0 * V[0, k] + w1 * V[1, k] + w1 * V[2, k] + w0 * V[3, k]
        dv[k] = w0 * F[0, k] + w1 * F[1, k] + w1 * F[2, k] + w0 * F[3, k]
    for k in range(na):
        da[k] = w0 * FA[0, k] + w1 * FA[1, k] + w1 * FA[2, k] + w0 * FA[3, k]
    d.time[b] = t0
    for k in range(nq):
        d.qpos[b, k] = X[0, k]
    for k in range(nv):
        d.qvel[b, k] = V[0, k]
    for k in range(na):
        d.act[b, k] = XA[0, k]
    advance(m, d, b, da, dv, dx, True)  # qacc_warmstart <- the last stage's qacc
    for k in range(nv):
        d.qacc[b, k] = dv[k]  # MuJoCo 4 leaves the weighted qacc the step used


@kernel
def _lu_solve(A, x, n):
    """x <- A^-1 x by LU without pivoting, factoring A in place (A = M - h D is near SPD)."""
    for k in range(n):
        inv = 1.0 / A[k, k]
        for i in range(k + 1, n):
            A[i, k] *= inv
            f = A[i, k]
            if f != 0.0:
                for j in range(k + 1, n):
                    A[i, j] -= f * A[k, j]
    for i in range(n):
        s = x[i]
        for j in range(i):
            s -= A[i, j] * x[j]
        x[i] = s
    for i in range(n - 1, -1, -1):
        s = x[i]
        for j in range(i + 1, n):
            s -= A[i, j] * x[j]
        x[i] = s / A[i, i]


@kernel
def _is_free_body(m, body):
    """A standalone free body: one free joint, and no other dof in its tree (children, if
    any, are welded to it), as MuJoCo 4 treats it in implicitfast."""
    if m.body_jntnum[body] != 1 or m.jnt_type[m.body_jntadr[body]] != T.JNT_FREE:
        return False
    return m.dof_treedofnum[m.jnt_dofadr[m.body_jntadr[body]]] == 6


@unit
def implicit(m, d, b):
    """implicit and implicitfast velocity updates (MuJoCo's mj_implicit)."""
    h = m.opt_timestep
    nv = m.nv
    acc = d.scratch_v[b, 0]
    for i in range(nv):
        acc[i] = d.qfrc_smooth[b, i] + d.qfrc_constraint[b, i]
    full = m.opt_integrator == T.INT_IMPLICIT
    smooth_vel(m, d, b, full)
    D = d.qDeriv[b]
    if full:
        A = d.qLU[b]
        for i in range(nv):
            for j in range(nv):
                A[i, j] = -h * D[i, j]
        for i in range(nv):
            start = m.M_rowadr[i]
            for t in range(m.M_rownnz[i]):
                j = m.M_colind[start + t]
                A[i, j] += d.qM[b, start + t]
                if j != i:
                    A[j, i] += d.qM[b, start + t]
        _lu_solve(A, acc, nv)
    else:
        qH = d.qH[b]
        for i in range(nv):
            start = m.M_rowadr[i]
            for t in range(m.M_rownnz[i]):
                qH[start + t] = d.qM[b, start + t] - h * D[i, m.M_colind[start + t]]
        factor_i(qH, d.qHDiagInv[b], m)
        solve_ld(acc, qH, d.qHDiagInv[b], m)
        _free_bodies_local_solve(m, d, b, acc)
    advance(m, d, b, d.act_dot[b], acc, d.qvel[b], False)


@kernel
def _free_bodies_local_solve(m, d, b, acc):
    """implicitfast: redo the 6 rows of each standalone free body with its gyroscopic term.

    A = M_blk - h (dF/dv)_blk with the bias derivative included; the block is decoupled
    from every other dof, so overwriting its rows of acc changes nothing else.
    """
    h = m.opt_timestep
    for j in range(m.njnt):
        body = m.jnt_bodyid[j]
        if not _is_free_body(m, body):
            continue
        adr = m.jnt_dofadr[j]
        A = d.qLU[b]  # top-left 6x6 used as work space
        rhs = d.scratch_v[b, 3]
        bias_vel_columns(m, d, b, adr, 6)  # qDeriv[:, adr:adr+6] -= d qfrc_bias / d qvel
        D = d.qDeriv[b]
        for r in range(6):
            rhs[r] = d.qfrc_smooth[b, adr + r] + d.qfrc_constraint[b, adr + r]
            for c in range(6):
                A[r, c] = -h * D[adr + r, adr + c]
        for r in range(6):
            i = adr + r
            start = m.M_rowadr[i]
            for t in range(m.M_rownnz[i]):
                c = m.M_colind[start + t] - adr
                A[r, c] += d.qM[b, start + t]
                if c != r:
                    A[c, r] += d.qM[b, start + t]
        _lu_solve(A, rhs, 6)
        for r in range(6):
            acc[adr + r] = rhs[r]
