"""Crane baselines: a position PD on the trolley and an MPC that plans on the
small-angle linearization, measured on the fixed 10 m move of RoboDyn/Crane-v0.

State x = (trolley position relative to the target, swing angle, trolley velocity, swing rate),
(B, 4), read from the task's named readouts; the target state is x = 0 (the target is the world
origin). The action is the trolley acceleration, |a| <= max_accel.

The PD (PoseHold) only sees the trolley: a = clip(omega^2 (0 - x) - 2 zeta omega v). Its gains are
swept on a geometric grid of omega, for zeta 1 and 0.7, until the trend reverses on both sides
(a sweep stopped while the PD is still improving would understate it and flatter the MPC), and
the best PD is the one with the least residual swing among those that arrive
(final position error < ARRIVE m). The MPC runs iLQR on x' = A x + B u, the engine's control step
linearized about hanging at rest, and acts on the nonlinear engine.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode

import robogym  # noqa: F401  (registers RoboDyn/ ids)
from envs.baselines.linearize import LinearizedDynamics
from envs.baselines.mpc import MPC
from envs.baselines.pose_hold import PoseHold

ARRIVE = 0.05  # m: a controller arrives if its final position error is below this
SETTLED_SWING = 0.01  # rad: settled = within ARRIVE of the target with the swing amplitude below this
MPC_Q = (1.0, 100.0, 1.0, 10.0)  # weights on (x, theta, v, theta_dot)
MPC_R = 0.1  # weight on a^2
MPC_HORIZON = 40  # knots of 0.05 s: 2 s, then the LQR value as terminal cost
COLUMNS = ("final_x", "angle", "rate", "peak_vel", "residual_swing", "position_error", "settle_time")


def crane_state(env) -> np.ndarray:
    """(B, 4) x = (trolley_position, swing_angle, trolley_velocity, swing_rate) from the readouts."""
    t = env.task
    return np.stack([t.trolley_position(), t.swing_angle(), t.trolley_velocity(), t.swing_rate()], axis=1)


def crane_dynamics(env) -> LinearizedDynamics:
    """The control step linearized about the payload hanging at rest under the target, a = 0:
    x' = A x + B a with A (4, 4), B (4, 1) by central differences of the engine."""
    return LinearizedDynamics(env, x_op=np.zeros(4), u_op=np.zeros(1))


def _trolley_readout(env) -> tuple[np.ndarray, np.ndarray]:
    return env.task.trolley_position()[:, None], env.task.trolley_velocity()[:, None]


def crane_pd(env, omega, zeta=1.0) -> PoseHold:
    """Position PD on the trolley toward the target: a = clip(omega^2 (0 - x) - 2 zeta omega v, +-max_accel).
    omega, zeta: scalars or (B, 1) arrays (one gain per env, for sweeps)."""
    return PoseHold(env, target=0.0, omega=omega, zeta=zeta, readout=_trolley_readout)


def crane_mpc(
    env,
    horizon: int = MPC_HORIZON,
    Q: Sequence[float] = MPC_Q,
    R: float = MPC_R,
    iterations: int = 1,
    cold_iterations: int = 50,
    **kwargs,
) -> MPC:
    """iLQR MPC on the linearized crane toward x = 0: cost sum 1/2 x^T diag(Q) x + 1/2 R a^2 over
    `horizon` knots plus the infinite-horizon LQR value 1/2 x^T P x at the end; `iterations` warm
    iLQR iterations per tick. kwargs go to MPC (replan_every, tol, x_ref)."""
    dynamics = crane_dynamics(env)
    return MPC(
        env,
        dynamics,
        crane_state,
        Q=np.diag(np.asarray(Q, dtype=np.float64)),
        R=np.array([[float(R)]]),
        horizon=horizon,
        iterations=iterations,
        cold_iterations=cold_iterations,
        **kwargs,
    )


def make_move_env(num_envs: int):
    """The fixed 10 m move: reset_noise_scale 0 (trolley at -10 m, load at rest), no autoreset."""
    return gym.make_vec(
        "RoboDyn/Crane-v0", num_envs=num_envs, reset_noise_scale=0.0, autoreset_mode=AutoresetMode.DISABLED
    )


def _fixed_move(make_policy: Callable, num_envs: int) -> dict[str, np.ndarray]:
    """Run one 400-step episode of the fixed move with make_policy(env); (num_envs,) measurements:
    the COLUMNS (final_x: distance travelled, m; angle, rate: final |theta|, |theta_dot|;
    peak_vel: max |v|; residual_swing: the swing amplitude at the end, rad; position_error: final
    |x|, m; settle_time: from when on the row stayed within ARRIVE with swing < SETTLED_SWING, s,
    inf if it was not settled at the end) and peak_accel, the largest |action| it sent."""
    env = make_move_env(num_envs)
    obs, _ = env.reset(seed=0)
    policy = make_policy(env)
    policy.reset(env, np.arange(num_envs))
    task = env.task
    start = task.trolley_position().copy()
    peak_vel = np.zeros(num_envs)
    peak_accel = np.zeros(num_envs)
    settle_time = np.zeros(num_envs)  # start of the final stretch spent settled
    for step in range(env.max_episode_steps):
        action = policy.act(env, obs)
        peak_accel = np.maximum(peak_accel, np.abs(action[:, 0]))
        obs, _, terminated, truncated, _ = env.step(action)
        peak_vel = np.maximum(peak_vel, np.abs(task.trolley_velocity()))
        settled = (np.abs(task.trolley_position()) < ARRIVE) & (task.swing_amplitude() < SETTLED_SWING)
        settle_time[~settled] = (step + 1) * env.dt
    if not truncated.all() or terminated.any():
        raise RuntimeError("the fixed move must run its full 400 steps without leaving the rail")
    out = {
        "final_x": task.trolley_position() - start,
        "angle": np.abs(task.swing_angle()),
        "rate": np.abs(task.swing_rate()),
        "peak_vel": peak_vel,
        "residual_swing": task.swing_amplitude(),
        "position_error": np.abs(task.trolley_position()),
        "peak_accel": peak_accel,
        "settle_time": np.where(settled, settle_time, np.inf),
    }
    env.close()
    return out


def sweep_pd(omegas: Sequence[float], zetas: Sequence[float] = (1.0, 0.7)) -> list[dict]:
    """Every (zeta, omega) PD on the fixed move, all in one batch; one row per gain with the
    COLUMNS, peak_accel and `arrives` (position_error < ARRIVE)."""
    grid = [(float(z), float(w)) for z in zetas for w in omegas]
    z = np.array([g[0] for g in grid])[:, None]
    w = np.array([g[1] for g in grid])[:, None]
    res = _fixed_move(lambda env: crane_pd(env, w, z), len(grid))
    rows = []
    for i, (zeta, omega) in enumerate(grid):
        row = {"controller": f"PD omega={omega:.3f} zeta={zeta:.1f}", "omega": omega, "zeta": zeta}
        row.update({k: float(v[i]) for k, v in res.items()})
        row["arrives"] = row["position_error"] < ARRIVE
        rows.append(row)
    return rows


def best_pd(rows: list[dict]) -> dict:
    """The PD with the least residual swing among those that arrive."""
    arrived = [r for r in rows if r["arrives"]]
    if not arrived:
        raise ValueError("no PD in the sweep arrives: widen the omega grid")
    return min(arrived, key=lambda r: r["residual_swing"])


def run_mpc(num_envs: int = 8, **mpc_kwargs) -> dict:
    """The MPC on the fixed move (num_envs identical rows, so the batch path is exercised); the
    row of env 0 plus `spread`, the largest difference between rows of any column."""
    res = _fixed_move(lambda env: crane_mpc(env, **mpc_kwargs), num_envs)
    row = {"controller": "MPC"}
    row.update({k: float(v[0]) for k, v in res.items()})
    row["arrives"] = row["position_error"] < ARRIVE
    row["spread"] = max(0.0 if np.all(v == v[0]) else float(np.ptp(v)) for v in res.values())
    return row


def crane_table(
    omegas: Sequence[float] | None = None,
    zetas: Sequence[float] = (1.0, 0.7),
    max_extensions: int = 4,
    refine: int = 17,
    **mpc_kwargs,
) -> dict:
    """PD against MPC on the fixed 10 m move, with the PD given its best shot (the gain is swept
    until the trend reverses, so the best PD is not an artefact of where the sweep stopped).

    1. Sweep the geometric omega grid for every zeta; while the best PD sits at an end of the grid,
       extend the grid by a factor 2 past that end (at most max_extensions times).
    2. Refine: `refine` geometric points between the best's grid neighbours, at its zeta.
    3. Run the MPC (kwargs to run_mpc / crane_mpc).
    Returns {"sweep": coarse rows, "refined": fine rows, "best_pd": row, "mpc": row,
    "bracketed": the best is interior to the coarse grid, "omegas": the coarse grid}.
    """
    omegas = np.geomspace(0.25, 4.0, 25) if omegas is None else np.asarray(omegas, dtype=np.float64)
    ratio = omegas[1] / omegas[0] if len(omegas) > 1 else 2.0
    for _ in range(max_extensions + 1):
        rows = sweep_pd(omegas, zetas)
        best = best_pd(rows)
        at_low, at_high = best["omega"] == omegas[0], best["omega"] == omegas[-1]
        bracketed = not (at_low or at_high)  # a worse (or non-arriving) gain on each side
        if bracketed:
            break
        extra = int(np.ceil(np.log(2.0) / np.log(ratio)))
        if at_high:
            omegas = np.concatenate([omegas, omegas[-1] * ratio ** np.arange(1, extra + 1)])
        else:
            omegas = np.concatenate([omegas[0] * ratio ** np.arange(-extra, 0), omegas])
    fine = sweep_pd(np.geomspace(best["omega"] / ratio, best["omega"] * ratio, refine), (best["zeta"],))
    best = best_pd(rows + fine)
    return {
        "sweep": rows,
        "refined": fine,
        "best_pd": best,
        "mpc": run_mpc(**mpc_kwargs),
        "bracketed": bracketed,
        "omegas": omegas,
    }


def format_table(rows: list[dict]) -> str:
    """Tab-separated rows: controller, final x, |angle|, |rate|, peak |vel|, residual swing,
    the final position error and the settle time (s; inf: never settled)."""
    head = "controller\tfinal x\t|angle|\t|rate|\tpeak |vel|\tresidual swing\tposition error\tsettled at"
    fmt = {"position_error": "{:.2e}", "settle_time": "{:.2f}", "angle": "{:.3g}", "rate": "{:.3g}"}
    fmt["residual_swing"] = "{:.3g}"
    lines = [head]
    for r in rows:
        vals = "\t".join(fmt.get(c, "{:.4f}").format(r[c]) for c in COLUMNS)
        lines.append(f"{r['controller']}\t{vals}")
    return "\n".join(lines)
