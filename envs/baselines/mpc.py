"""MPC: iLQR re-solved from the measured state at every control tick, warm-started from the last plan.

Each act():
  1. read the state x (B, n) from the task's readouts;
  2. seed every row with its previous plan shifted one knot, u_init[t] = u[t+1] (the last knot
     repeated), or with zeros after a reset (cold start), and run `iterations` iLQR iterations
     (`cold_iterations` for a cold row) on the planning model from x;
  3. apply u_0 + K_0 (x - x_0), clipped to the action box.

The model planned on may differ from the env it acts on (the crane plans on its linearization
and acts on the nonlinear engine): that is how real MPC runs, and the episode measures whether
the model holds. With replan_every > 1 the rows between solves follow the stored plan with its
feedback, u_i + K_i (x - x_i) at knot i, which is where K stops being a formality.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from robodyn.envs.baselines import ilqr
from robogym.errors import InvalidArgumentError

StateFn = Callable[[object], np.ndarray]  # env -> (B, n)


def lqr_terminal_cost(
    A: np.ndarray, B: np.ndarray, Q: np.ndarray, R: np.ndarray, tol: float = 1e-12
) -> np.ndarray:
    """(n, n) P of the discrete algebraic Riccati equation (the infinite-horizon LQR value,
    V(x) = 1/2 x^T P x): P = Q + A^T P A - A^T P B (R + B^T P B)^-1 B^T P A, by iterating the
    finite-horizon Riccati recursion from P = Q until it stops changing. Raises if it does not
    converge."""
    P = np.array(Q, dtype=np.float64)
    for _ in range(100000):
        S = R + B.T @ P @ B
        P_next = Q + A.T @ P @ A - A.T @ P @ B @ np.linalg.solve(S, B.T @ P @ A)
        P_next = 0.5 * (P_next + P_next.T)
        if np.max(np.abs(P_next - P)) <= tol * max(1.0, np.max(np.abs(P_next))):
            return P_next
        P = P_next
    raise RuntimeError("Riccati iteration did not converge: is (A, B) stabilizable?")


class MPC:
    """Receding-horizon iLQR policy over a batch of envs (Policy protocol: reset, act).

    env: the RoboDynVectorEnv it acts on (action box from env.task.actuation())
    dynamics: the planning model (ilqr.Dynamics), e.g. a LinearizedDynamics of the env
    state: env -> (B, n), the state from the task's named readouts
    Q (n, n), R (m, m), Qf (n, n): tracking weights (Qf default: the LQR value of (A, B, Q, R)
        when the dynamics carry constant A, B)
    x_ref: (n,) target state, (T+1, n) reference over the horizon, or env -> (B, T+1, n)
    horizon: T knots of env.dt; iterations: iLQR iterations per warm tick; cold_iterations: after
        a reset; replan_every: solve every this many ticks (1: every tick)
    """

    def __init__(
        self,
        env,
        dynamics,
        state: StateFn,
        Q,
        R,
        Qf=None,
        x_ref=None,
        horizon: int = 60,
        iterations: int = 1,
        cold_iterations: int = 50,
        replan_every: int = 1,
        tol: float = 1e-9,
    ):
        act = env.task.actuation()
        self.lo, self.hi = np.asarray(act.low, dtype=np.float64), np.asarray(act.high, dtype=np.float64)
        self.dynamics = dynamics
        self.state = state
        self.Q = np.asarray(Q, dtype=np.float64)
        self.R = np.asarray(R, dtype=np.float64)
        n, m = self.Q.shape[0], self.R.shape[0]
        if Qf is None:
            if not (hasattr(dynamics, "A") and hasattr(dynamics, "B")):
                raise InvalidArgumentError(
                    "Qf is required unless the dynamics carry constant A, B (a LinearizedDynamics)"
                )
            Qf = lqr_terminal_cost(dynamics.A, dynamics.B, self.Q, self.R)
        self.Qf = np.asarray(Qf, dtype=np.float64)
        self.T = int(horizon)
        if self.T < 1 or iterations < 1 or cold_iterations < 1 or replan_every < 1:
            raise InvalidArgumentError("horizon, iterations, cold_iterations and replan_every must be >= 1")
        if replan_every > self.T:
            raise InvalidArgumentError(f"replan_every={replan_every} exceeds the horizon {self.T}")
        self.iterations, self.cold_iterations = int(iterations), int(cold_iterations)
        self.replan_every = int(replan_every)
        self.tol = float(tol)
        self.x_ref = np.zeros(n) if x_ref is None else x_ref
        B = env.num_envs
        self.u = np.zeros((B, self.T, m))  # current plan of every row
        self.x = np.zeros((B, self.T + 1, n))
        self.K = np.zeros((B, self.T, m, n))
        self.valid = np.zeros(B, dtype=bool)  # a plan exists (False: cold start next tick)
        self.age = np.zeros(B, dtype=np.int64)  # ticks since the plan was solved
        self.last: ilqr.Plan | None = None  # the last solve's Plan (its rows: self.last_rows)
        self.last_rows = np.zeros(0, dtype=np.int64)

    def reset(self, env, rows: np.ndarray) -> None:
        """Forget the plans of `rows`: their next act() solves cold."""
        self.valid[np.asarray(rows, dtype=np.int64)] = False

    def reference(self, env, rows: np.ndarray) -> np.ndarray:
        """(len(rows), T+1, n) reference for the rows being solved."""
        n = self.Q.shape[0]
        if callable(self.x_ref):
            return np.asarray(self.x_ref(env), dtype=np.float64)[rows]
        ref = np.asarray(self.x_ref, dtype=np.float64)
        if ref.ndim == 3:  # (B, T+1, n): one reference per env
            return ref[rows]
        return np.broadcast_to(ref, (len(rows), self.T + 1, n))  # (n,) or (T+1, n), shared

    def act(self, env, obs: np.ndarray) -> np.ndarray:
        """(B, m) actions: u_i + K_i (x - x_i) of every row's plan at its current knot i (0 right
        after a solve), clipped to the box."""
        x = self.state(env)
        rows = np.flatnonzero(~self.valid | (self.age >= self.replan_every))
        if len(rows):
            self._solve(env, x, rows)
        i = self.age
        b = np.arange(len(x))
        u = self.u[b, i] + np.einsum("bij,bj->bi", self.K[b, i], x - self.x[b, i])
        self.age += 1
        return np.clip(u, self.lo, self.hi)

    def _solve(self, env, x: np.ndarray, rows: np.ndarray) -> None:
        warm = self.valid[rows]
        shift = np.where(warm, self.age[rows], 0)
        knots = np.minimum(np.arange(self.T)[None] + shift[:, None], self.T - 1)  # u[t + s], last repeated
        u_init = np.take_along_axis(self.u[rows], knots[..., None], axis=1)
        u_init[~warm] = 0.0
        caps = np.where(warm, self.iterations, self.cold_iterations)
        plan = ilqr.solve(
            self.dynamics,
            x[rows],
            u_init,
            self.reference(env, rows),
            self.Q,
            self.R,
            self.Qf,
            self.lo,
            self.hi,
            max_iter=caps,
            tol=self.tol,
        )
        self.u[rows], self.x[rows], self.K[rows] = plan.u, plan.x, plan.K
        self.valid[rows] = True
        self.age[rows] = 0
        self.last, self.last_rows = plan, rows


def task_mpc(env, Q, R, x_goal=None, u_goal=None, horizon: int = 40, **kwargs) -> MPC:
    """iLQR MPC for any task: it plans on the engine's control step linearized about the
    goal state x_goal = (qpos, qvel) (default: the model's qpos0 at rest) and control u_goal
    (default 0), in the tangent space (LinearizedDynamics), and drives the whole state toward
    the goal. Q (2nv, 2nv) weighs the tangent-space error x (-) x_goal (zero weights for
    states the actuation cannot reach, such as a floating base's position), R (m, m) the
    actions; the terminal cost is the infinite-horizon LQR value. kwargs go to MPC."""
    from robodyn.envs.baselines.linearize import LinearizedDynamics

    dynamics = LinearizedDynamics(env, x_op=x_goal, u_op=u_goal)

    def state(env) -> np.ndarray:
        d = env.physics.data
        return dynamics.engine.difference(np.concatenate([d.qpos, d.qvel], axis=1), dynamics.x_op)

    return MPC(env, dynamics, state, Q=Q, R=R, horizon=horizon, **kwargs)


def model_rollouts(mpc: MPC):
    """A rollout.ModelRollouts that scores plans on the problem `mpc` solves: its dynamics,
    its state readout, and its tracking cost (ilqr.tracking_cost with its Q, R and Qf) about
    its reference over its horizon."""
    from robodyn.envs.baselines.rollout import ModelRollouts

    def cost(env, x, u):
        ref = mpc.reference(env, np.arange(env.num_envs))[:, None]  # (B, 1, T+1, n)
        return ilqr.tracking_cost(x, u, ref, mpc.Q, mpc.R, mpc.Qf)

    return ModelRollouts(mpc.dynamics, mpc.state, cost, horizon=mpc.T)


def sampling_on_mpc(
    env,
    samples: int = 32,
    knots: int = 4,
    noise: float = 0.1,
    update: str = "best",
    **kwargs,
):
    """The sampling planner (envs/baselines/sampling.py) on the problem env's task's iLQR MPC
    solves: its planning model, its state readout and its tracking cost about its reference
    over its horizon (model_rollouts), so that the two optimizers are compared
    on the same problem; the registered baseline "mpc_sampling" (predictive sampling: the best
    of `samples` plans of `knots` knots, perturbed by `noise`). kwargs go to SamplingPlanner.
    Raises InvalidArgumentError if the task's "mpc" is not an iLQR MPC."""
    from robodyn.envs.baselines import make_baseline
    from robodyn.envs.baselines.sampling import SamplingPlanner

    mpc = make_baseline("mpc", env)
    if not isinstance(mpc, MPC):
        raise InvalidArgumentError(
            f"{type(env.task).__name__}'s mpc is a {type(mpc).__name__}, not an iLQR MPC: no model "
            "and cost to plan on"
        )
    return SamplingPlanner(
        env,
        samples=samples,
        horizon=mpc.T,
        knots=knots,
        noise=noise,
        update=update,
        rollouts=model_rollouts(mpc),
        **kwargs,
    )
