"""Batched iLQR with a control box: B independent trajectory problems solved together.

iLQR as in Li & Todorov, "Iterative linear quadratic regulator design for nonlinear biological
movement systems" (2004), with the regularization and line search of Tassa, Erez & Todorov,
"Synthesis and stabilization of complex behaviors through online trajectory optimization"
(IROS 2012).

Each batch row b minimises the quadratic tracking cost

    J = sum_{t<T} 1/2 (x_t - r_t)^T Q (x_t - r_t) + 1/2 u_t^T R u_t  +  1/2 (x_T - r_T)^T Qf (x_T - r_T)

subject to x_{t+1} = f(x_t, u_t) and lo <= u_t <= hi. One iteration: linearize f about the
current rollout (A_t, B_t), run the Riccati recursion backwards in Q-notation (Q names the
coefficients of the second-order expansion of cost-to-go about the rollout),

    Q_x  = l_x  + A^T V_x          Q_u  = l_u  + B^T V_x
    Q_xx = l_xx + A^T V_xx A       Q_uu = l_uu + B^T V_xx B       Q_ux = B^T V_xx A
    k = -Q_uu^-1 Q_u               K = -Q_uu^-1 Q_ux
    V_x  = Q_x  + K^T Q_uu k + K^T Q_u + Q_ux^T k
    V_xx = Q_xx + K^T Q_uu K + K^T Q_ux + Q_ux^T K,

then roll u_t + alpha k_t + K_t (x_t' - x_t) out through the dynamics f itself, not the quadratic
model, and accept the first alpha in ALPHAS that lowers the true cost: the model is only trusted
near the rollout it was fitted to, and a full step can land where the cost is higher. Q_uu is
factored by Cholesky after a Levenberg-Marquardt shift mu I (an indefinite Q_uu would give a step
that points uphill, and Cholesky fails exactly then); a failed factorization or a failed line
search raises mu, an accepted step lowers it. The iteration stops when the predicted improvement
dJ(alpha) = alpha k^T Q_u + 1/2 alpha^2 k^T Q_uu k (summed over knots) at alpha = 1 is below
tol * max(|J|, 1). The gains a Plan carries always come from an accepted (or converged) pass: a
rejected exploratory pass never reaches the caller, because K_0 is applied to the real system.

The box: at each knot the step k solves the box QP min 1/2 k^T Q_uu k + Q_u^T k over
lo <= u_t + k <= hi (closed form for m = 1, projected Newton otherwise: box-DDP, Tassa, Mansard
and Todorov 2014); a clamped component gets no feedback (its row of K is 0), so the value function
never counts on a control the box forbids, and the forward pass clamps every control to the box.

Everything is vectorised over the batch (numpy matmul/einsum); Python loops run only over time
knots (and, for m > 1, inside the small per-knot box QP). The line search rolls every alpha out
at once, as extra rows of one batched rollout. Open-loop plans roll out through
envs/baselines/rollout.py's `rollout`, the one the sampling planner's model rollouts use.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol

import numpy as np

from robodyn.envs.baselines.rollout import rollout
from robogym.errors import InvalidArgumentError

ALPHAS = np.array([1.0, 0.5, 0.25, 0.1, 0.05, 0.01])  # line-search steps, tried in this order


class Dynamics(Protocol):
    """A discrete-time model x' = f(x, u): the same map for every row, any number of rows N."""

    def step(self, x: np.ndarray, u: np.ndarray) -> np.ndarray:
        """(N, n), (N, m) -> (N, n) next states."""
        ...

    def jacobians(self, x: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """x (B, T, n), u (B, T, m) -> A = df/dx (B, T, n, n), Bu = df/du (B, T, n, m)."""
        ...


class Plan(NamedTuple):
    """The solution of each batch row.

    x: (B, T+1, n) rollout of u from x0 through the dynamics
    u: (B, T, m) controls, inside [lo, hi]
    k: (B, T, m) feedforward and K: (B, T, m, n) feedback of the last accepted backward pass
       (zeros if no pass was accepted); the control law about the plan is u_t + K_t (x - x_t)
    cost: (B,) J of (x, u)
    iterations: (B,) backward passes run
    converged: (B,) predicted improvement fell below tol
    mu: (B,) Levenberg-Marquardt shift at exit
    """

    x: np.ndarray
    u: np.ndarray
    k: np.ndarray
    K: np.ndarray
    cost: np.ndarray
    iterations: np.ndarray
    converged: np.ndarray
    mu: np.ndarray


def tracking_cost(x, u, x_ref, Q, R, Qf) -> np.ndarray:
    """(...,) J = sum_t 1/2 e_t^T Q e_t + 1/2 u_t^T R u_t + 1/2 e_T^T Qf e_T with e = x - x_ref.

    x, x_ref: (..., T+1, n); u: (..., T, m); Q, Qf: (n, n) or (..., n, n); R: (m, m) or (..., m, m),
    with leading dimensions that broadcast against those of x.
    """
    e = x - x_ref
    run = 0.5 * np.sum((e[..., :-1, :] @ Q) * e[..., :-1, :], axis=(-2, -1))
    ctrl = 0.5 * np.sum((u @ R) * u, axis=(-2, -1))
    eT = e[..., -1:, :]
    term = 0.5 * np.sum((eT @ Qf) * eT, axis=(-2, -1))
    return run + ctrl + term


def solve(
    dynamics: Dynamics,
    x0: np.ndarray,
    u_init: np.ndarray,
    x_ref: np.ndarray,
    Q: np.ndarray,
    R: np.ndarray,
    Qf: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    max_iter: int | np.ndarray = 50,
    tol: float = 1e-9,
    mu_init: float = 0.0,
    mu_min: float = 1e-6,
    mu_max: float = 1e10,
    mu_factor: float = 10.0,
) -> Plan:
    """Minimise the tracking cost of every row from x0 (B, n), starting at u_init (B, T, m).

    x_ref: (B, T+1, n) reference; Q, Qf: (n, n) or (B, n, n); R: (m, m) or (B, m, m), positive
    definite; lo, hi: (m,) or (B, m) control box. max_iter: an int or (B,) per-row iteration caps
    (a warm-started row can get 1 while a cold one gets 50). Rows never interact: solving them
    together gives each row the answer it would get alone.
    """
    u = np.clip(np.array(u_init, dtype=np.float64), lo, hi)
    B, T, m = u.shape
    n = x0.shape[-1]
    if x_ref.shape != (B, T + 1, n):
        raise InvalidArgumentError(f"x_ref must have shape {(B, T + 1, n)}, got {x_ref.shape}")
    Q, Qf = (np.broadcast_to(np.asarray(w, dtype=np.float64), (B, n, n)) for w in (Q, Qf))
    R = np.broadcast_to(np.asarray(R, dtype=np.float64), (B, m, m))
    lo, hi = (np.broadcast_to(np.asarray(b, dtype=np.float64), (B, m)) for b in (lo, hi))
    if np.any(lo > hi):
        raise InvalidArgumentError("control box has lo > hi")
    caps = np.broadcast_to(np.asarray(max_iter, dtype=np.int64), (B,))

    x = rollout(dynamics, np.asarray(x0, dtype=np.float64), u)
    cost = tracking_cost(x, u, x_ref, Q, R, Qf)
    mu = np.full(B, float(mu_init))
    k_keep, K_keep = np.zeros((B, T, m)), np.zeros((B, T, m, n))  # gains of the last accepted pass
    iterations = np.zeros(B, dtype=np.int64)
    converged = np.zeros(B, dtype=bool)
    active = (caps > 0) & np.isfinite(cost)

    while active.any():
        A, Bu = dynamics.jacobians(x[:, :T], u)
        k, K, d1, d2, ok = _backward(A, Bu, x, u, x_ref, Q, R, Qf, lo, hi, mu)
        while not ok[active].all():  # Q_uu not positive definite: shift harder and retry
            bad = active & ~ok
            mu[bad] = np.maximum(mu[bad] * mu_factor, mu_min)
            if np.any(mu[bad] > mu_max):
                active &= ~(bad & (mu > mu_max))
                if not active.any():
                    break
            k, K, d1, d2, ok = _backward(A, Bu, x, u, x_ref, Q, R, Qf, lo, hi, mu)
        if not active.any():
            break
        iterations[active] += 1

        predicted = -(d1 + d2)  # improvement the quadratic model expects from the full step
        done = active & (predicted <= tol * np.maximum(np.abs(cost), 1.0))
        k_keep[done], K_keep[done] = k[done], K[done]  # the undamped answer about an accepted x, u
        converged |= done
        search = active & ~done

        if search.any():
            xs, us, Js = _forward(dynamics, x, u, k, K, lo, hi, x_ref, Q, R, Qf)
            better = Js < cost[:, None]  # (B, len(ALPHAS)): TRUE rolled-out cost went down
            accept = search & better.any(axis=1)
            first = np.argmax(better, axis=1)
            rows = np.flatnonzero(accept)
            x[rows], u[rows], cost[rows] = xs[rows, first[rows]], us[rows, first[rows]], Js[rows, first[rows]]
            k_keep[rows], K_keep[rows] = k[rows], K[rows]
            mu[accept] = np.where(mu[accept] / mu_factor < mu_min, 0.0, mu[accept] / mu_factor)
            reject = search & ~accept  # keep x, u and the gains already kept; regularise harder
            mu[reject] = np.maximum(mu[reject] * mu_factor, mu_min)
            active &= ~(reject & (mu > mu_max))

        active &= ~converged & (iterations < caps)

    return Plan(x, u, k_keep, K_keep, cost, iterations, converged, mu)


def _backward(A, Bu, x, u, x_ref, Q, R, Qf, lo, hi, mu):
    """Riccati recursion in Q-notation with the box; returns k (B,T,m), K (B,T,m,n), the
    predicted-improvement coefficients d1 = sum k^T Q_u, d2 = sum 1/2 k^T Q_uu k (B,) and
    ok (B,): every Q_uu + mu I was positive definite.

    Written on augmented vectors so each knot is a few batched matmuls: with z = (dx, du, 1) and
    y = (dx', 1) = Fa z, Fa = [[A, B, 0], [0, 0, 1]], the quadratic models are 1/2 z^T Qa z and
    1/2 y^T Va y, where Qa = [[Q_xx, Q_xu, Q_x], [Q_ux, Q_uu, Q_u], [Q_x^T, Q_u^T, .]] and
    Va = [[V_xx, V_x], [V_x^T, .]]. Then Qa = La + Fa^T Va Fa (La: the running cost's derivatives)
    and, with du = K dx + k, i.e. z = Ga y, Ga = [[I, 0], [K, k], [0, 1]]: Va = Ga^T Qa Ga, which
    expands to exactly the V_x, V_xx lines of the module docstring.
    """
    B, T, m = u.shape
    n = x.shape[-1]
    na = n + m + 1
    e = x - x_ref
    La = np.zeros((B, T, na, na))  # running cost: [[Q, 0, Q e], [0, R, R u], [., ., .]]
    La[:, :, :n, :n] = Q[:, None]
    La[:, :, n : n + m, n : n + m] = R[:, None]
    La[:, :, :n, -1] = np.einsum("bij,btj->bti", Q, e[:, :T])
    La[:, :, n : n + m, -1] = np.einsum("bij,btj->bti", R, u)
    La[:, :, -1, :n] = La[:, :, :n, -1]
    La[:, :, -1, n : n + m] = La[:, :, n : n + m, -1]
    Fa = np.zeros((B, T, n + 1, na))
    Fa[:, :, :n, :n] = A
    Fa[:, :, :n, n : n + m] = Bu
    Fa[:, :, n, -1] = 1.0
    FaT = np.swapaxes(Fa, -1, -2)
    Va = np.zeros((B, n + 1, n + 1))
    Va[:, :n, :n] = Qf
    Va[:, :n, n] = Va[:, n, :n] = np.einsum("bij,bj->bi", Qf, e[:, T])
    Ga = np.zeros((B, na, n + 1))
    Ga[:, :n, :n] = np.eye(n)
    Ga[:, -1, -1] = 1.0
    k = np.zeros((B, T, m))
    K = np.zeros((B, T, m, n))
    Qu = np.zeros((B, T, m))
    Quu = np.zeros((B, T, m, m))
    ok = np.ones(B, dtype=bool)
    shift = mu[:, None, None] * np.eye(m)
    dlo, dhi = lo[:, None] - u, hi[:, None] - u  # (B, T, m) room to the box
    for t in range(T - 1, -1, -1):
        Qa = La[:, t] + FaT[:, t] @ Va @ Fa[:, t]
        Quu[:, t] = Qa[:, n : n + m, n : n + m]
        Qu[:, t] = Qa[:, n : n + m, -1]
        kt, Kt, good = _box_newton(Quu[:, t] + shift, Qu[:, t], Qa[:, n : n + m, :n], dlo[:, t], dhi[:, t])
        ok &= good
        Ga[:, n : n + m, :n] = Kt
        Ga[:, n : n + m, -1] = kt
        Va = np.swapaxes(Ga, 1, 2) @ Qa @ Ga
        Va += np.swapaxes(Va, 1, 2)  # symmetric up to rounding: keep it exactly so
        Va *= 0.5
        k[:, t], K[:, t] = kt, Kt
    d1 = np.einsum("bti,bti->b", k, Qu)
    d2 = 0.5 * np.einsum("bti,btij,btj->b", k, Quu, k)
    return k, K, d1, d2, ok


def _box_newton(H, g, G, dlo, dhi):
    """Step of min_d 1/2 d^T H d + g^T d over dlo <= d <= dhi, and its feedback, per row.

    H: (B, m, m) shifted Q_uu; g: (B, m) Q_u; G: (B, m, n) Q_ux; dlo <= 0 <= dhi: (B, m) room to
    the box. Returns k (B, m), K = -H_ff^-1 G_f on the free components and 0 on the clamped ones
    (B, m, n), and ok (B,): H's free block was positive definite. m = 1 is solved in closed form
    (k = clip(-g/H)); larger m by projected Newton (_box_qp).
    """
    B, m = g.shape
    if m == 1:
        h = H[:, 0, 0]
        ok = h > 0.0
        inv = -1.0 / np.where(ok, h, 1.0)
        k_free = g * inv[:, None]
        k = np.minimum(np.maximum(k_free, dlo), dhi)
        K = G * (inv[:, None] * (k == k_free))[:, :, None]  # no feedback on a clamped control
        return k, K, ok
    k, clamped, ok = _box_qp(H, g, dlo, dhi)
    L, ok_f = _cholesky(np.where(~clamped[:, :, None] & ~clamped[:, None, :], H, np.eye(m)))
    K = _cho_solve(L, np.where(clamped[:, :, None], 0.0, -G))
    return k, K, ok & ok_f


STEPS = 0.5 ** np.arange(12)  # projected-Newton line-search steps


def _box_qp(H, g, lo, hi, max_iter: int = 30, tol: float = 1e-12):
    """Projected Newton (Bertsekas 1982; Tassa et al. 2014's boxQP) for min 1/2 d^T H d + g^T d,
    lo <= d <= hi, batched: d (B, m), clamped (B, m) (at a bound with the gradient pushing out)
    and ok (B,) (the free block of H was positive definite). Start at d = clip(0)."""
    B, m = g.shape
    d = np.clip(np.zeros((B, m)), lo, hi)
    ok = np.ones(B, dtype=bool)
    run = np.ones(B, dtype=bool)
    eye = np.eye(m)
    for _ in range(max_iter):
        grad = g + np.einsum("bij,bj->bi", H, d)
        clamped = ((d <= lo) & (grad > 0.0)) | ((d >= hi) & (grad < 0.0))
        free = ~clamped
        L, good = _cholesky(np.where(free[:, :, None] & free[:, None, :], H, eye))
        ok &= good | ~run
        # Newton point of the free components with the clamped ones held: H_ff d_f = -(g_f + H_fc d_c)
        rhs = np.where(free, -(g + np.einsum("bij,bj->bi", H, np.where(clamped, d, 0.0))), d)
        step = _cho_solve(L, rhs) - d
        run &= good & (np.max(np.abs(step), axis=1) > tol)
        if not run.any():
            break
        # Armijo on the projected arc, every step length at once
        cand = np.clip(d[:, None] + STEPS[None, :, None] * step[:, None], lo[:, None], hi[:, None])
        f0 = np.einsum("bi,bi->b", d, 0.5 * np.einsum("bij,bj->bi", H, d) + g)
        fc = np.einsum("bsi,bsi->bs", cand, 0.5 * np.einsum("bij,bsj->bsi", H, cand) + g[:, None])
        dec = fc <= f0[:, None] + 1e-10 * np.einsum("bi,bsi->bs", grad, cand - d[:, None])
        take = run & dec.any(axis=1)
        first = np.argmax(dec, axis=1)
        d = np.where(take[:, None], cand[np.arange(B), first], d)
        run &= take
    grad = g + np.einsum("bij,bj->bi", H, d)
    clamped = ((d <= lo) & (grad > 0.0)) | ((d >= hi) & (grad < 0.0))
    return d, clamped, ok


def _cholesky(H):
    """Batched H = L L^T (B, m, m) and ok (B,); a row that is not positive definite gets ok False
    (and an arbitrary finite L)."""
    B, m, _ = H.shape
    L = np.zeros_like(H)
    ok = np.ones(B, dtype=bool)
    for j in range(m):
        d = H[:, j, j] - np.einsum("bk,bk->b", L[:, j, :j], L[:, j, :j])
        ok &= d > 0.0
        ljj = np.sqrt(np.where(d > 0.0, d, 1.0))
        L[:, j, j] = ljj
        if j + 1 < m:
            s = H[:, j + 1 :, j] - np.einsum("bik,bk->bi", L[:, j + 1 :, :j], L[:, j, :j])
            L[:, j + 1 :, j] = s / ljj[:, None]
    return L, ok


def _cho_solve(L, b):
    """x = (L L^T)^-1 b for b (B, m) or (B, m, r), by forward then back substitution."""
    vec = b.ndim == 2
    y = np.array(b[..., None] if vec else b, dtype=np.float64)
    m = L.shape[1]
    for i in range(m):  # y <- L^-1 y
        y[:, i] = (y[:, i] - np.einsum("bk,bkr->br", L[:, i, :i], y[:, :i])) / L[:, i, i, None]
    for i in range(m - 1, -1, -1):  # y <- L^-T y
        y[:, i] = (y[:, i] - np.einsum("bk,bkr->br", L[:, i + 1 :, i], y[:, i + 1 :])) / L[:, i, i, None]
    return y[..., 0] if vec else y


def _forward(dynamics, x, u, k, K, lo, hi, x_ref, Q, R, Qf):
    """Every line-search candidate at once: u'_t = clip(u_t + alpha k_t + K_t (x'_t - x_t)) rolled
    out through the dynamics. Returns x' (B, a, T+1, n), u' (B, a, T, m), J' (B, a)."""
    B, T, m = u.shape
    n = x.shape[-1]
    a = len(ALPHAS)
    xs = np.empty((B, a, T + 1, n))
    us = np.empty((B, a, T, m))
    xs[:, :, 0] = x[:, None, 0]
    lo_, hi_ = lo[:, None], hi[:, None]
    for t in range(T):
        dx = xs[:, :, t] - x[:, None, t]
        ut = u[:, None, t] + ALPHAS[None, :, None] * k[:, None, t] + np.einsum("bij,baj->bai", K[:, t], dx)
        us[:, :, t] = np.clip(ut, lo_, hi_)
        xs[:, :, t + 1] = dynamics.step(xs[:, :, t].reshape(B * a, n), us[:, :, t].reshape(B * a, m)).reshape(
            B, a, n
        )
    Js = tracking_cost(xs, us, x_ref[:, None], Q[:, None], R[:, None], Qf[:, None])
    return xs, us, Js
