"""envs.baselines.linearize on a model with a floating base (the free-joint test task).

EngineDynamics differentiates the control step in the tangent space of the state, so a
quaternion is perturbed by rotation vectors and differences are rotation vectors. Checked two
independent ways: (1) against central differences built with MuJoCo's own mj_integratePos and
mj_differentiatePos for the tangent operations (our engine steps both); (2) as a first-order
model: the prediction error of x' (+) A dx + B du shrinks as |dx|^2.
"""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from robodyn.envs.baselines.linearize import EngineDynamics, LinearizedDynamics
from tests.helpers import report
from tests.robogym.activation_task import ActivationVectorEnv
from tests.robogym.floating_arm_task import FloatingArmVectorEnv


@pytest.fixture(scope="module")
def arm():
    env = FloatingArmVectorEnv(num_envs=3)
    env.reset(seed=5)
    yield env
    env.close()


def _states(env) -> np.ndarray:
    d = env.physics.data
    return np.concatenate([d.qpos, d.qvel], axis=1)


def test_jacobians_equal_central_differences_with_mujocos_tangent_maps(arm):
    dyn = EngineDynamics(arm)
    mj = arm.physics.mj_model
    nq, nv = mj.nq, mj.nv
    x = _states(arm)
    u = np.array([[0.3, -0.2], [-0.8, 0.5], [0.0, 1.0]])
    A, B = dyn.jacobians(x, u)
    assert A.shape == (3, 2 * nv, 2 * nv) and B.shape == (3, 2 * nv, 2)
    eps = 1e-5
    worst = 0.0
    for i in range(len(x)):
        cols = []
        for j in range(2 * nv + 2):
            ends = []
            for sign in (1.0, -1.0):
                q = x[i, :nq].copy()
                v = x[i, nq:].copy()
                a = u[i].copy()
                if j < nv:
                    dq = np.zeros(nv)
                    dq[j] = sign * eps
                    mujoco.mj_integratePos(mj, q, dq, 1.0)
                elif j < 2 * nv:
                    v[j - nv] += sign * eps
                else:
                    a[j - 2 * nv] += sign * eps
                ends.append(dyn.step(np.concatenate([q, v])[None], a[None])[0])
            plus, minus = ends
            dq = np.zeros(nv)
            mujoco.mj_differentiatePos(mj, dq, 1.0, minus[:nq], plus[:nq])
            cols.append(np.concatenate([dq, plus[nq:] - minus[nq:]]) / (2 * eps))
        J = np.array(cols).T
        ref = np.concatenate([A[i], B[i]], axis=1)
        worst = max(worst, float(np.max(np.abs(J - ref)) / max(1.0, float(np.max(np.abs(ref))))))
    report("floating arm A, B vs central differences through MuJoCo's tangent maps", worst, 1e-9, len(x))
    assert worst < 1e-9


def test_linearization_is_first_order_accurate_on_the_quaternion(arm):
    """f(x (+) h dx, u + h du) (-) f(x, u) - h (A dx + B du) = O(h^2): halving h quarters it."""
    dyn = EngineDynamics(arm)
    x = _states(arm)[:1]
    u = np.array([[0.2, -0.4]])
    A, B = dyn.jacobians(x, u)
    rng = np.random.default_rng(0)
    dx = rng.normal(size=(1, dyn.ndx))
    du = rng.normal(size=(1, 2))
    f0 = dyn.step(x, u)
    errors = []
    for h in (1e-3, 5e-4, 2.5e-4):
        f1 = dyn.step(dyn.retract(x, h * dx), u + h * du)
        pred = h * (dx @ A[0].T + du @ B[0].T)
        errors.append(float(np.max(np.abs(dyn.difference(f1, f0) - pred))))
    ratios = [errors[k] / errors[k + 1] for k in range(2)]
    print(f"[oracle] floating arm first-order residuals {errors}, halving ratios {ratios} (expect 4)")
    assert all(3.5 < r < 4.5 for r in ratios), ratios


def test_linearized_dynamics_about_a_pose_with_a_rotated_base(arm):
    """LinearizedDynamics works in tangent coordinates about x_op: c = f(x_op, u_op) (-) x_op,
    and stepping from dx = 0 reproduces it."""
    x_op = _states(arm)[1]
    lin = LinearizedDynamics(arm, x_op=x_op, u_op=np.zeros(2))
    f = lin.engine.step(x_op[None], np.zeros((1, 2)))
    np.testing.assert_allclose(lin.engine.retract(x_op[None], lin.c[None]), f, rtol=0, atol=1e-12)
    np.testing.assert_allclose(lin.step(np.zeros(lin.engine.ndx), np.zeros(2)), lin.c, rtol=0, atol=0)


def test_task_mpc_brings_the_arm_to_a_goal_pose(arm):
    """The generic MPC on the free-joint task: weights on the hinges only (the tumbling base
    is not the actuation's to control); from the reset poses the arm reaches the goal angles.
    The base's spin keeps nudging the arm, so the infinite-horizon LQR value does not exist
    (its Riccati iteration diverges): the terminal weight is given. The model is linearized
    about the action that holds the goal (at action 0 the elbow's motor would saturate there,
    and a saturated motor has no control authority to linearize)."""
    from robodyn.envs.baselines.mpc import task_mpc

    model = arm.physics.model
    nv = model.nv
    goal = np.concatenate([model.qpos0, np.zeros(nv)])
    goal[7:9] = [0.6, -0.9]
    q = np.zeros(2 * nv)
    q[[6, 7]] = 10.0  # hinge angles
    q[[nv + 6, nv + 7]] = 0.1  # hinge rates
    hold = (goal[7:9] - arm.task.actuation().default) / arm.task.actuation().scale  # the action at the goal
    weights = dict(Q=np.diag(q), R=0.01 * np.eye(2), Qf=np.diag(10 * q))
    mpc = task_mpc(arm, **weights, x_goal=goal, u_goal=hold, horizon=20)
    obs, _ = arm.reset(seed=7)
    mpc.reset(arm, np.arange(arm.num_envs))
    start = np.abs(arm.physics.data.qpos[:, 7:9] - goal[7:9]).max()
    for _ in range(60):  # 1.2 s
        obs, *_ = arm.step(mpc.act(arm, obs))
    end = np.abs(arm.physics.data.qpos[:, 7:9] - goal[7:9]).max()
    print(f"[oracle] task MPC on the floating arm: hinge error {start:.3f} -> {end:.2e} rad")
    assert end < 1e-2 * start


def test_refuses_a_model_with_activations():
    """A model whose actuators have activation dynamics has state beyond (qpos, qvel): act.
    EngineDynamics' x = (qpos, qvel) cannot hold it, so it refuses instead of dropping it."""
    env = ActivationVectorEnv(num_envs=1)
    with pytest.raises(ValueError, match="8 actuator activations"):
        EngineDynamics(env)
