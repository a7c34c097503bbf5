"""envs/baselines/rollout.py: the sampling planner scoring its plans on an iLQR MPC's own
model and cost (ModelRollouts), so that the two optimizers are compared on one problem.

Oracles: the crane's linearized control step written out by hand from its matrices,
x_{t+1} = c + A x_t + B (u_t - u_op), and the tracking cost summed term by term in plain
loops; the crane's iLQR MPC on the same fixed move (the planners' returns there: README.md's
main job, envs/README.md, tests/README.md).
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import robogym  # noqa: F401  (registers RoboDyn/ ids)
from robodyn.envs.baselines import make_baseline
from robodyn.envs.baselines.linearize import LinearizedDynamics
from robodyn.envs.baselines.mpc import MPC, model_rollouts, sampling_on_mpc
from robodyn.envs.baselines.sampling import SamplingPlanner
from robogym import registration
from robogym.errors import InvalidArgumentError
from tests.helpers import report

CRANE = "RoboDyn/Crane-v0"


def crane(num_envs: int = 1, **kwargs):
    fixed = registration.entry(CRANE).scenarios["fixed"]
    env = gym.make_vec(CRANE, num_envs=num_envs, autoreset_mode=AutoresetMode.DISABLED, **fixed, **kwargs)
    return env


def test_a_candidates_score_is_minus_the_mpcs_cost_on_its_own_model():
    """Two cranes in different states, six candidates each: every score equals minus the iLQR
    MPC's tracking cost of the candidate rolled through the linearized step by hand."""
    env = crane(2)
    env.reset(seed=[0, 1])
    rng = np.random.default_rng(0)
    for _ in range(20):
        env.step(rng.uniform(-1, 1, (2, 1)))
    u_env = env.unwrapped
    planner = sampling_on_mpc(u_env, samples=6, seed=2)
    mpc = make_baseline("mpc", u_env)
    dyn = planner.rollouts.dynamics
    assert isinstance(dyn, LinearizedDynamics) and planner.horizon == mpc.T
    candidates = planner._candidates(np.zeros((2, 4, 1)), np.ones(2, dtype=bool))
    planner.rollouts.begin(u_env)
    returns = planner._returns(u_env, candidates)
    controls = np.clip(planner.spline.controls(candidates), -1, 1)  # (2, 6, T, 1)

    x0 = np.stack(
        [
            u_env.task.trolley_position(),
            u_env.task.swing_angle(),
            u_env.task.trolley_velocity(),
            u_env.task.swing_rate(),
        ],
        axis=1,
    )
    ref = mpc.reference(u_env, np.arange(2))  # zeros: the payload at rest under the target
    worst, scale = 0.0, 0.0
    for b in range(2):
        for s in range(6):
            x, J = x0[b].copy(), 0.0
            for t in range(mpc.T):
                e, a = x - ref[b, t], controls[b, s, t]
                J += 0.5 * e @ mpc.Q @ e + 0.5 * a @ mpc.R @ a
                x = dyn.c + dyn.A @ x + dyn.B @ (a - dyn.u_op)
            e = x - ref[b, mpc.T]
            J += 0.5 * e @ mpc.Qf @ e
            worst, scale = max(worst, abs(-J - returns[b, s])), max(scale, abs(J))
    tol = 1e-12 * scale  # the same sums in another order
    report("ModelRollouts: score against the hand-rolled linear crane's -cost", worst, tol, 12)
    assert worst <= tol
    # the first (the nominal) and last (the zero plan) candidates are both zero here
    assert len(np.unique(returns[:, 1:-1])) == 8, "the noisy candidates differ, and so do their costs"


def test_on_the_same_problem_sampling_comes_close_to_ilqr():
    """The crane's fixed 10 m move, iLQR MPC against predictive sampling on its model and
    cost: both succeed; 128 plans come within 1 % of iLQR's return, 32 within 3 %
    (535.03: README.md; 530.35: tests/README.md; 537.06 with 128: envs/README.md)."""
    returns = {}
    for name, kwargs in (("mpc", {}), ("mpc_sampling", {}), ("mpc_sampling_128", {"samples": 128})):
        env = crane()
        obs, _ = env.reset(seed=0)
        policy = make_baseline(name.removesuffix("_128"), env.unwrapped, **kwargs)
        policy.reset(env.unwrapped, np.arange(1))
        total, done = 0.0, False
        while not done:
            obs, r, term, trunc, info = env.step(policy.act(env.unwrapped, obs))
            total += r[0]
            done = term[0] or trunc[0]
        assert info["success"][0] == 1.0, name
        returns[name] = total
    print(f"[planners] crane fixed move: returns {returns}")
    assert returns["mpc_sampling"] >= 0.97 * returns["mpc"]
    assert returns["mpc_sampling_128"] >= 0.99 * returns["mpc"]


def test_model_rollouts_refuse_what_they_cannot_plan():
    env = crane()
    env.reset(seed=0)
    mpc = make_baseline("mpc", env.unwrapped)
    assert isinstance(mpc, MPC)
    with pytest.raises(InvalidArgumentError, match="horizon=10, but the rollouts' cost is written for 40"):
        SamplingPlanner(env.unwrapped, horizon=10, knots=2, rollouts=model_rollouts(mpc))
    with pytest.raises(InvalidArgumentError, match="gamma discounts the task's return"):
        SamplingPlanner(env.unwrapped, horizon=40, gamma=0.9, rollouts=model_rollouts(mpc))
    with pytest.raises(RuntimeError, match="before begin"):
        model_rollouts(mpc).returns(env.unwrapped, np.zeros((1, 2, 40, 1)))
    humanoid = gym.make_vec("RoboDyn/HumanoidPush-v0", num_envs=1, autoreset_mode=AutoresetMode.DISABLED)
    with pytest.raises(InvalidArgumentError, match="not an iLQR MPC"):
        sampling_on_mpc(humanoid.unwrapped)
