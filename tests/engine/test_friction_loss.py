"""Dry friction (joint and tendon frictionloss) against MuJoCo 4.0.0 and an analytic case.

MuJoCo models dry friction as one constraint row per dof or tendon whose force is bounded by
the frictionloss: inside the bound the row sticks (a soft equality on the velocity), at the
bound it slips and pushes back with exactly the bound. The rows themselves and the solvers'
converged answers are compared in test_constraint.py and test_solver.py; here:

- 200-step trajectories of constraint_friction.xml (four dofs and a tendon with friction,
  limits, a hand on the floor) under random controls, Newton and PGS with the model's own
  settings, against mj_step: qpos and qvel to 1e-9 relative (each step is solved to the
  model's tolerance, so rounding differences in the iterates may grow over 200 steps; worst
  seen is printed);
- the rows' final states (sticking, slipping either way, satisfied) equal MuJoCo's with
  <flag island="disable"/> (with islands MuJoCo's efc_state is not filled in row order);
- analytic: a 1 kg block on a frictionless slide with frictionloss 2 N, pushed by 3 N,
  slips with acceleration (3 - 2) / 1 = 1 m/s^2 exactly once sliding; pushed by 1.5 N
  from rest it sticks: the row's force converges to the push (to 1e-6 N in 0.5 s), the block only
  creeps (a soft constraint), under 1 % of the slipping block's speed; both as MuJoCo;
- a negative frictionloss is refused at load, naming the joint.
"""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from robodyn import engine
from tests.helpers import ASSETS, rel_err, report, rollout_states, set_state, trajectory_errors, with_options

FRICTION = ASSETS / "tests" / "constraint_friction.xml"
STEPS = 200
TOL_TRAJ = 1e-9

BLOCK = """
<mujoco model="block">
  <option timestep="0.001" gravity="0 0 0" solver="{solver}"/>
  <worldbody>
    <body name="block">
      <joint name="slide" type="slide" axis="1 0 0" frictionloss="2"/>
      <inertial pos="0 0 0" mass="1" diaginertia="0.01 0.01 0.01"/>
      <geom type="box" size="0.1 0.1 0.1" contype="0" conaffinity="0"/>
    </body>
  </worldbody>
  <actuator><motor joint="slide"/></actuator>
</mujoco>
"""


@pytest.mark.parametrize("solver", ["Newton", "PGS"])
def test_trajectories_match_mujoco(solver):
    text = with_options(FRICTION, solver=solver)
    mj = mujoco.MjModel.from_xml_string(text)
    states = rollout_states(mj, 8, seed=21, every=9, touching=False, vel=2.0)
    ctrl = np.random.default_rng(5).uniform(-1.0, 1.0, (STEPS, len(states["qpos"]), 4))
    slipping = []

    def count(d):
        slipping.append(int(np.sum(np.isin(d.efc_state[d.ne : d.ne + d.nf], (2, 3)))))

    worst = dict(zip(("qpos", "qvel"), trajectory_errors(text, states, STEPS, ctrl, count), strict=True))
    for name, err in worst.items():
        report(f"constraint_friction {solver} {STEPS}-step trajectories {name}", err, TOL_TRAJ, len(ctrl[0]))
    assert sum(slipping) > STEPS  # the friction rows slip often, not only stick
    for name, err in worst.items():
        assert err <= TOL_TRAJ, f"{name} off MuJoCo by {err:.3e}"


@pytest.mark.parametrize("solver", ["Newton", "PGS"])
def test_row_states_match_mujoco_without_islands(solver):
    text = with_options(FRICTION, solver=solver, flags={"island": "disable"})
    mj = mujoco.MjModel.from_xml_string(text)
    states = rollout_states(mj, 40, seed=9, every=5, touching=False, vel=2.0)
    sim = engine.Simulator(engine.load_mjcf(text), batch=40)
    set_state(sim, states)
    sim.forward()
    kinds = set()
    for i in range(40):
        d = mujoco.MjData(mj)
        set_state(None, states, d, i)
        mujoco.mj_forward(mj, d)
        assert np.array_equal(sim.data.efc_state[i, : d.nefc], d.efc_state[: d.nefc]), f"state {i}"
        kinds.update(int(s) for s in d.efc_state[d.ne : d.ne + d.nf])
    assert kinds == {1, 2, 3}  # sticking, slipping either way


@pytest.mark.parametrize("solver", ["Newton", "PGS"])
def test_block_slips_at_the_bound_and_sticks_below_it(solver):
    sim = engine.Simulator(engine.load_mjcf(BLOCK.format(solver=solver)), batch=2)
    sim.data.ctrl[:, 0] = (3.0, 1.5)  # N: above and below the 2 N bound
    sim.step(500)
    accel = sim.data.qacc[0, 0]
    report(f"block {solver}: slipping acceleration off (3 - 2) / 1 m/s^2", abs(accel - 1.0), 1e-12, 1)
    assert abs(accel - 1.0) <= 1e-12
    assert sim.data.efc_force[0, 0] == -2.0  # exactly the bound, against the motion
    # below the bound the row sticks as a soft constraint: the friction force balances the
    # push and the block only creeps (MuJoCo's soft rows let a held force through slowly)
    assert abs(sim.data.efc_force[1, 0] + 1.5) < 1e-6 and abs(sim.data.qacc[1, 0]) < 1e-6
    assert abs(sim.data.qvel[1, 0]) < 0.01 * sim.data.qvel[0, 0]
    assert sim.data.efc_state[0, 0] == 3 and sim.data.efc_state[1, 0] == 1
    # and both as MuJoCo steps them
    mj = mujoco.MjModel.from_xml_string(BLOCK.format(solver=solver))
    for i, push in enumerate((3.0, 1.5)):
        d = mujoco.MjData(mj)
        d.ctrl[0] = push
        for _ in range(500):
            mujoco.mj_step(mj, d)
        assert rel_err(sim.data.qvel[i], d.qvel) <= 1e-12 and rel_err(sim.data.qpos[i], d.qpos) <= 1e-12


def test_negative_frictionloss_is_refused():
    with pytest.raises(engine.ModelError, match="slide.*frictionloss must be >= 0"):
        engine.load_mjcf(BLOCK.format(solver="Newton").replace('frictionloss="2"', 'frictionloss="-1"'))
