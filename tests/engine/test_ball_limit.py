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

import engine
from tests.helpers import ASSETS, rel_err, report, rollout_states, set_state, with_options

BALL = ASSETS / "tests" / "constraint_ball_limit.xml"
STEPS = 200
TOL = 1e-9


@pytest.mark.parametrize("solver", ["Newton", "PGS"])
def test_trajectories_match_mujoco(solver):
    text = with_options(BALL, solver=solver)
    mj = mujoco.MjModel.from_xml_string(text)
    states = rollout_states(mj, 8, seed=3, every=10, touching=False, vel=3.0)
    n = len(states["qpos"])
    sim = engine.Simulator(engine.load_mjcf(text), batch=n)
    set_state(sim, states)
    datas = []
    for i in range(n):
        d = mujoco.MjData(mj)
        set_state(None, states, d, i)
        datas.append(d)
    worst = {"qpos": 0.0, "qvel": 0.0}
    ball_rows = 0
    for _ in range(STEPS):
        sim.step(1)
        for i, d in enumerate(datas):
            mujoco.mj_step(mj, d)
            worst["qpos"] = max(worst["qpos"], rel_err(sim.data.qpos[i], d.qpos))
            worst["qvel"] = max(worst["qvel"], rel_err(sim.data.qvel[i], d.qvel))
            limits = d.efc_type[: d.nefc] == mujoco.mjtConstraint.mjCNSTR_LIMIT_JOINT
            ball_rows += int(np.sum(limits & (d.efc_id[: d.nefc] < 2)))  # the two ball joints
    for name, err in worst.items():
        report(f"constraint_ball_limit {solver} {STEPS}-step trajectories {name}", err, TOL, n)
    assert ball_rows >= STEPS  # the cones are hit, not only approached
    for name, err in worst.items():
        assert err <= TOL, f"{name} off MuJoCo by {err:.3e}"
