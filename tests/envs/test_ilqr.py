"""envs/baselines/ilqr.py against oracles it does not contain.

- Linear dynamics, quadratic cost, no box: one big stacked least-squares solve over every
  control at once (the direct approach, exact but growing with the horizon) gives the optimum;
  the textbook finite-horizon Riccati recursion in P-notation gives the feedback gains. iLQR's
  converged answer must equal both.
- With a box the problem is a convex QP: an accelerated projected-gradient solve of the stacked
  QP, finished by an exact solve on its active set and checked by KKT, is the oracle.
- Nonlinear pendulum swing-up: first-order optimality of the converged plan, with the gradient of
  the true rolled-out cost taken by central differences (KKT of the box).
- The predicted improvement dJ(alpha) = alpha d1 + alpha^2 d2 is exact on an LQ problem (the
  quadratic model of a quadratic cost is the cost itself).
- Bookkeeping: rows independent; gains only from accepted passes; Cholesky failure raises mu.
The converged answers are compared, never the iterates.
"""

from __future__ import annotations

import numpy as np

from robodyn.envs.baselines import ilqr
from tests.helpers import report


class Linear:
    """x' = A x + B u (the same for every row)."""

    def __init__(self, A, B):
        self.A, self.B = np.asarray(A, dtype=float), np.asarray(B, dtype=float)

    def step(self, x, u):
        return x @ self.A.T + u @ self.B.T

    def jacobians(self, x, u):
        lead = x.shape[:-1]
        return np.broadcast_to(self.A, (*lead, *self.A.shape)), np.broadcast_to(
            self.B, (*lead, *self.B.shape)
        )


class Pendulum:
    """theta'' = -(g/l) sin(theta) - b theta' + u, semi-implicit Euler with step h; x = (theta, theta')."""

    def __init__(self, h=0.05, g_l=9.81, b=0.1):
        self.h, self.g_l, self.b = h, g_l, b

    def step(self, x, u):
        h = self.h
        w = x[..., 1] + h * (-self.g_l * np.sin(x[..., 0]) - self.b * x[..., 1] + u[..., 0])
        return np.stack([x[..., 0] + h * w, w], axis=-1)

    def jacobians(self, x, u):
        h = self.h
        dw_dth = -h * self.g_l * np.cos(x[..., 0])
        A = np.zeros((*x.shape[:-1], 2, 2))
        A[..., 1, 0] = dw_dth
        A[..., 1, 1] = 1.0 - h * self.b
        A[..., 0, 0] = 1.0 + h * dw_dth
        A[..., 0, 1] = h * (1.0 - h * self.b)
        Bu = np.zeros((*x.shape[:-1], 2, 1))
        Bu[..., 0, 0] = h * h
        Bu[..., 1, 0] = h
        return A, Bu


def random_lq(seed, n=4, m=2):
    rng = np.random.default_rng(seed)
    A = np.eye(n) + 0.15 * rng.normal(size=(n, n))
    B = 0.2 * rng.normal(size=(n, m))
    Q = np.diag(rng.uniform(0.5, 3.0, n))
    R = np.diag(rng.uniform(0.05, 0.5, m))
    Qf = 5.0 * np.eye(n)
    return A, B, Q, R, Qf


def stacked(A, B, Q, R, Qf, T):
    """x = Phi x0 + G U over the horizon; cost 1/2 U^T H U + U^T (G^T W (Phi x0 - r)) + const."""
    n, m = B.shape
    Phi = np.concatenate([np.linalg.matrix_power(A, t) for t in range(T + 1)])
    G = np.zeros(((T + 1) * n, T * m))
    for t in range(1, T + 1):
        for s in range(t):
            G[t * n : (t + 1) * n, s * m : (s + 1) * m] = np.linalg.matrix_power(A, t - 1 - s) @ B
    W = np.kron(np.eye(T + 1), Q)
    W[-n:, -n:] = Qf
    H = G.T @ W @ G + np.kron(np.eye(T), R)
    return Phi, G, W, H


def riccati_gains(A, B, Q, R, Qf, T):
    """(T, m, n) K_t of u_t = -K_t x_t, by the Riccati recursion in P-notation:
    K_t = (R + B^T P B)^-1 B^T P A, then P <- Q + A^T P A - K_t^T (R + B^T P B) K_t, from P = Qf."""
    P = Qf
    Ks = []
    for _ in range(T):
        S = R + B.T @ P @ B
        K = np.linalg.solve(S, B.T @ P @ A)
        P = Q + A.T @ P @ A - K.T @ S @ K
        Ks.append(K)
    return np.array(Ks[::-1])


def box_qp(H, g, lo, hi, iters=5000):
    """min 1/2 U^T H U + g^T U over lo <= U <= hi: FISTA, then an exact solve on its active set,
    then KKT checked (raises if the active set was wrong)."""
    L = np.linalg.eigvalsh(H).max()
    U = np.clip(np.zeros_like(g), lo, hi)
    Y, t = U.copy(), 1.0
    for _ in range(iters):
        Un = np.clip(Y - (H @ Y + g) / L, lo, hi)
        tn = 0.5 * (1 + np.sqrt(1 + 4 * t * t))
        Y, U, t = Un + (t - 1) / tn * (Un - U), Un, tn
    at_lo, at_hi = U <= lo + 1e-9, U >= hi - 1e-9
    free = ~(at_lo | at_hi)
    U = np.where(at_lo, lo, np.where(at_hi, hi, U))
    rhs = -(g + H[:, ~free] @ U[~free])
    U[free] = np.linalg.solve(H[np.ix_(free, free)], rhs[free])
    grad = H @ U + g
    assert np.all(U[free] > lo[free]) and np.all(U[free] < hi[free]), "oracle's active set is wrong"
    assert np.all(grad[at_lo] >= -1e-9) and np.all(grad[at_hi] <= 1e-9), "oracle fails KKT"
    assert np.max(np.abs(grad[free]), initial=0.0) < 1e-9 * max(1.0, np.max(np.abs(g)))
    return U


def test_unconstrained_lq_equals_stacked_optimum_and_riccati_gains():
    T, Bn = 25, 4
    worst_u = worst_K = worst_J = 0.0
    for seed in range(3):
        A, B, Q, R, Qf = random_lq(seed)
        n, m = B.shape
        rng = np.random.default_rng(10 + seed)
        x0 = rng.normal(size=(Bn, n))
        x_ref = 0.5 * rng.normal(size=(Bn, T + 1, n))
        x_ref[0] = 0.0  # row 0 regulates to zero: its gains are exactly the Riccati gains
        big = np.full(m, 1e6)
        plan = ilqr.solve(Linear(A, B), x0, np.zeros((Bn, T, m)), x_ref, Q, R, Qf, -big, big, tol=1e-12)
        assert plan.converged.all() and plan.iterations.max() <= 3, plan.iterations
        Phi, G, W, H = stacked(A, B, Q, R, Qf, T)
        for b in range(Bn):
            g = G.T @ W @ (Phi @ x0[b] - x_ref[b].ravel())
            U = -np.linalg.solve(H, g)
            worst_u = max(worst_u, np.max(np.abs(U - plan.u[b].ravel())) / max(1.0, np.max(np.abs(U))))
            e = Phi @ x0[b] + G @ U - x_ref[b].ravel()
            J = 0.5 * e @ W @ e + 0.5 * U @ np.kron(np.eye(T), R) @ U
            worst_J = max(worst_J, abs(J - plan.cost[b]) / J)
        # feedback gains do not depend on the reference in LQ: every row has the same K
        K_ref = riccati_gains(A, B, Q, R, Qf, T)
        worst_K = max(worst_K, np.max(np.abs(plan.K + K_ref[None])) / np.max(np.abs(K_ref)))
    report("iLQR u vs stacked LQ optimum", worst_u, 1e-9, 12)
    report("iLQR cost vs stacked LQ optimum (relative)", worst_J, 1e-12, 12)
    report("iLQR K vs Riccati gains (P-notation)", worst_K, 1e-9, 3)
    assert worst_u < 1e-9 and worst_J < 1e-12 and worst_K < 1e-9


def test_box_constrained_lq_equals_qp_oracle():
    T, Bn = 20, 3
    worst_u = worst_J = 0.0
    active_counts = []
    for seed, m in ((0, 1), (1, 2), (2, 2)):
        A, B, Q, R, Qf = random_lq(seed, m=m)
        n = A.shape[0]
        rng = np.random.default_rng(20 + seed)
        x0 = 0.3 * rng.normal(size=(Bn, n))
        x_ref = np.zeros((Bn, T + 1, n))
        lo, hi = -0.6 * np.ones(m), 0.4 * np.ones(m)
        plan = ilqr.solve(
            Linear(A, B), x0, np.zeros((Bn, T, m)), x_ref, Q, R, Qf, lo, hi, max_iter=100, tol=1e-14
        )
        assert plan.converged.all(), plan.iterations
        assert np.all(plan.u >= lo) and np.all(plan.u <= hi)
        Phi, G, W, H = stacked(A, B, Q, R, Qf, T)
        for b in range(Bn):
            g = G.T @ W @ Phi @ x0[b]
            U = box_qp(H, g, np.tile(lo, T), np.tile(hi, T))
            active_counts.append((int(np.sum((U <= np.tile(lo, T)) | (U >= np.tile(hi, T)))), T * m))
            worst_u = max(worst_u, np.max(np.abs(U - plan.u[b].ravel())))
            J = 0.5 * U @ H @ U + g @ U + 0.5 * (Phi @ x0[b]) @ W @ (Phi @ x0[b])
            worst_J = max(worst_J, abs(J - plan.cost[b]) / J)
    print(f"[oracle] (active box constraints, controls) per problem: {active_counts}")
    report("box iLQR u vs QP oracle", worst_u, 1e-9, len(active_counts))
    report("box iLQR cost vs QP oracle (relative)", worst_J, 1e-11, len(active_counts))
    # a meaningful box: some controls clamped, some free, in every problem
    assert all(0 < c < total for c, total in active_counts)
    assert worst_u < 1e-9 and worst_J < 1e-11


def _cost_gradient(dyn, x0, u, x_ref, Q, R, Qf, eps=1e-6):
    """dJ/du (T, m) of the true rollout cost by central differences, every control at once."""
    T, m = u.shape
    d = np.eye(T * m).reshape(T * m, T, m) * eps
    us = np.concatenate([u[None] + d, u[None] - d])
    xs = ilqr.rollout(dyn, np.repeat(x0[None], len(us), axis=0), us)
    J = ilqr.tracking_cost(xs, us, x_ref[None], Q, R, Qf)
    return ((J[: T * m] - J[T * m :]) / (2 * eps)).reshape(T, m)


def test_nonlinear_swing_up_is_a_kkt_point_of_the_true_cost():
    dyn = Pendulum()
    T, Bn = 80, 3
    x0 = np.array([[0.0, 0.0], [0.3, -0.5], [-0.2, 1.0]])
    x_ref = np.zeros((Bn, T + 1, 2))
    x_ref[:, :, 0] = np.pi
    Q, R, Qf = np.diag([0.1, 0.01]), np.array([[0.01]]), np.diag([1000.0, 100.0])
    lo, hi = np.array([-4.0]), np.array([4.0])  # weaker than gravity (9.81): it has to pump
    u0 = np.zeros((Bn, T, 1))
    J0 = ilqr.tracking_cost(ilqr.rollout(dyn, x0, u0), u0, x_ref, Q, R, Qf)
    plan = ilqr.solve(dyn, x0, u0, x_ref, Q, R, Qf, lo, hi, max_iter=300, tol=1e-12)
    assert plan.converged.all(), (plan.iterations, plan.cost)
    worst = 0.0
    for b in range(Bn):
        g = _cost_gradient(dyn, x0[b], plan.u[b], x_ref[b], Q, R, Qf)
        scale = np.max(np.abs(_cost_gradient(dyn, x0[b], u0[b], x_ref[b], Q, R, Qf)))
        at_lo, at_hi = plan.u[b] <= lo + 1e-12, plan.u[b] >= hi - 1e-12
        free = ~(at_lo | at_hi)
        viol = np.concatenate([np.abs(g[free]), np.maximum(-g[at_lo], 0.0), np.maximum(g[at_hi], 0.0)])
        worst = max(worst, np.max(viol) / scale)
    print(
        f"[oracle] swing-up: cost {J0} -> {plan.cost}, iterations {plan.iterations}, "
        f"upright error {np.abs(plan.x[:, -1, 0] - np.pi)}"
    )
    report("swing-up KKT residual / initial gradient", worst, 1e-6, Bn)
    assert np.all(plan.cost < 0.2 * J0)
    assert np.all(np.abs(plan.x[:, -1, 0] - np.pi) < 0.01), "the plan must end upright"
    assert np.any(plan.u == hi) and np.any(plan.u == lo), "a pumping swing-up uses both bounds"
    assert worst < 1e-6


def test_predicted_improvement_is_exact_on_lq():
    A, B, Q, R, Qf = random_lq(4, m=2)
    n, m = B.shape
    T, Bn = 15, 2
    rng = np.random.default_rng(5)
    x0, u = rng.normal(size=(Bn, n)), rng.normal(size=(Bn, T, m))
    x_ref = np.zeros((Bn, T + 1, n))
    dyn = Linear(A, B)
    x = ilqr.rollout(dyn, x0, u)
    J = ilqr.tracking_cost(x, u, x_ref, Q, R, Qf)
    big = np.full((Bn, m), 1e6)
    Qb, Rb, Qfb = (np.broadcast_to(w, (Bn, *w.shape)) for w in (Q, R, Qf))
    k, K, d1, d2, ok = ilqr._backward(
        *dyn.jacobians(x[:, :T], u), x, u, x_ref, Qb, Rb, Qfb, -big, big, np.zeros(Bn)
    )
    _, _, Js = ilqr._forward(dyn, x, u, k, K, -big, big, x_ref, Qb, Rb, Qfb)
    predicted = ilqr.ALPHAS[None] * d1[:, None] + ilqr.ALPHAS[None] ** 2 * d2[:, None]
    err = np.max(np.abs((Js - J[:, None]) - predicted) / np.abs(J[:, None]))
    report("predicted vs actual improvement on LQ (relative to J)", err, 1e-12, Bn * len(ilqr.ALPHAS))
    assert ok.all() and err < 1e-12
    assert np.all(d1 < 0) and np.all(d2 > 0) and np.allclose(d1, -2 * d2)  # the Newton step: d1 = -2 d2


def test_rows_solve_independently():
    dyn = Pendulum()
    T = 40
    x0 = np.array([[0.0, 0.0], [0.5, 0.0], [np.nan, 0.0], [-1.0, 2.0]])  # row 2 is broken
    x_ref = np.zeros((4, T + 1, 2))
    x_ref[:, :, 0] = np.pi
    Q, R, Qf = np.diag([0.1, 0.01]), np.array([[0.01]]), np.diag([200.0, 20.0])
    lo, hi = np.array([-4.0]), np.array([4.0])
    caps = np.array([100, 3, 100, 100])  # per-row iteration caps
    together = ilqr.solve(dyn, x0, np.zeros((4, T, 1)), x_ref, Q, R, Qf, lo, hi, max_iter=caps)
    assert together.iterations[2] == 0 and not together.converged[2]
    assert together.iterations[1] == 3 and not together.converged[1]
    worst = 0.0
    for b in (0, 1, 3):
        alone = ilqr.solve(
            dyn, x0[b : b + 1], np.zeros((1, T, 1)), x_ref[b : b + 1], Q, R, Qf, lo, hi, max_iter=caps[b]
        )
        for field in ("x", "u", "k", "K", "cost"):
            worst = max(worst, np.max(np.abs(getattr(alone, field)[0] - getattr(together, field)[b])))
        assert alone.iterations[0] == together.iterations[b]
    report("row solved alone vs in a batch", worst, 0.0, 3)
    assert worst == 0.0


class LyingAfter:
    """The pendulum, whose Jacobians turn wrong (B sign-flipped) after `calls` calls."""

    def __init__(self, calls):
        self.inner, self.calls, self.n = Pendulum(), calls, 0

    def step(self, x, u):
        return self.inner.step(x, u)

    def jacobians(self, x, u):
        self.n += 1
        A, Bu = self.inner.jacobians(x, u)
        return (A, -Bu) if self.n > self.calls else (A, Bu)


def test_gains_come_only_from_accepted_passes():
    """A pass whose step the line search rejects must not leave its gains in the plan: in MPC K_0
    acts on the real system, so a gain from a rejected exploratory pass would be a real bug."""
    T = 50
    x0 = np.array([[0.0, 0.0]])
    x_ref = np.zeros((1, T + 1, 2))
    x_ref[:, :, 0] = np.pi
    Q, R, Qf = np.diag([0.1, 0.01]), np.array([[0.01]]), np.diag([200.0, 20.0])
    lo, hi = np.array([-4.0]), np.array([4.0])
    args = (x0, np.zeros((1, T, 1)), x_ref, Q, R, Qf, lo, hi)
    j = 4
    honest = ilqr.solve(Pendulum(), *args, max_iter=j)
    lying = LyingAfter(j)
    plan = ilqr.solve(lying, *args, max_iter=j + 6)
    assert not honest.converged[0], "the honest run must still be improving at iteration j"
    assert lying.n > j and plan.iterations[0] > j, "the lying passes must have run"
    # every lying pass was rejected: plan, cost and gains are those of iteration j
    np.testing.assert_array_equal(plan.u, honest.u)
    np.testing.assert_array_equal(plan.K, honest.K)
    np.testing.assert_array_equal(plan.k, honest.k)
    assert plan.cost[0] == honest.cost[0] and not plan.converged[0] and plan.mu[0] > honest.mu[0]
    # and the lying pass's gains differ, so a solver that kept them would fail the check above
    A, Bu = Pendulum().jacobians(plan.x[:, :T], plan.u)
    Qb, Rb, Qfb = (w[None] for w in (Q, R, Qf))
    _, K_lie, *_ = ilqr._backward(A, -Bu, plan.x, plan.u, x_ref, Qb, Rb, Qfb, lo[None], hi[None], plan.mu)
    assert np.max(np.abs(K_lie - honest.K)) > 1e-3


def test_cholesky_failure_raises_regularization():
    rng = np.random.default_rng(7)
    M = rng.normal(size=(6, 3, 3))
    H = M @ np.swapaxes(M, 1, 2) + 0.1 * np.eye(3)
    H[4] -= 5.0 * np.eye(3)  # indefinite
    L, ok = ilqr._cholesky(H)
    assert ok.tolist() == [True, True, True, True, False, True]
    good = ok
    np.testing.assert_allclose(L[good], np.linalg.cholesky(H[good]), rtol=1e-12, atol=1e-12)
    b = rng.normal(size=(6, 3))
    x = ilqr._cho_solve(L[good], b[good])
    np.testing.assert_allclose(np.einsum("bij,bj->bi", H[good], x), b[good], rtol=1e-10, atol=1e-10)
    # a concave control cost makes Q_uu = R + B^T V_xx B ~ -0.5 indefinite at every knot: the first
    # backward pass must fail, and mu rise past 0.5 before any step is taken
    dyn = Linear(np.eye(2), np.array([[0.0], [1e-3]]))
    T = 10
    x0 = np.array([[1.0, 0.5]])
    x_ref = np.zeros((1, T + 1, 2))
    R = np.array([[-0.5]])
    u_init = np.full((1, T, 1), 0.3)
    J0 = ilqr.tracking_cost(ilqr.rollout(dyn, x0, u_init), u_init, x_ref, np.eye(2), R, np.eye(2))
    plan = ilqr.solve(dyn, x0, u_init, x_ref, np.eye(2), R, np.eye(2), [-1.0], [1.0], max_iter=20)
    print(f"[oracle] indefinite Q_uu: mu {plan.mu}, cost {J0} -> {plan.cost}, iterations {plan.iterations}")
    assert plan.mu[0] >= 0.5
    assert plan.cost[0] < J0[0] and np.all(np.abs(plan.u) <= 1.0)
