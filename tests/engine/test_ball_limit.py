"""Ball-joint limits along trajectories: constraint_ball_limit.xml (two limited ball
joints, one with a margin and its own solref/solimp, a limited hinge and a hand on the
floor) swinging under gravity for 200 steps from random states, Newton and PGS with the
model's own settings, against mj_step: qpos and qvel to 1e-9 relative (the rows and the
converged solves are compared in test_constraint.py and test_solver.py; the analytic row
is test_constraint.test_ball_limit_row_is_the_angle_past_the_cone)."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from tests.helpers import ASSETS, report, rollout_states, trajectory_errors, with_options

BALL = ASSETS / "tests" / "constraint_ball_limit.xml"
STEPS = 200
TOL = 1e-9


@pytest.mark.parametrize("solver", ["Newton", "PGS"])
def test_trajectories_match_mujoco(solver):
    text = with_options(BALL, solver=solver)
    mj = mujoco.MjModel.from_xml_string(text)
    states = rollout_states(mj, 8, seed=3, every=10, touching=False, vel=3.0)
    ball_rows = []

    def count(d):
        limits = d.efc_type[: d.nefc] == mujoco.mjtConstraint.mjCNSTR_LIMIT_JOINT
        ball_rows.append(int(np.sum(limits & (d.efc_id[: d.nefc] < 2))))  # the two ball joints

    worst = dict(zip(("qpos", "qvel"), trajectory_errors(text, states, STEPS, on_step=count), strict=True))
    for name, err in worst.items():
        label = f"constraint_ball_limit {solver} {STEPS}-step trajectories {name}"
        report(label, err, TOL, len(states["qpos"]))
    assert sum(ball_rows) >= STEPS  # the cones are hit, not only approached
    for name, err in worst.items():
        assert err <= TOL, f"{name} off MuJoCo by {err:.3e}"
