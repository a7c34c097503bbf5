"""Torsional and rolling friction (condim 4 and 6) in the pyramidal cone, against MuJoCo 4.0.0
and an analytic spin-down.

constraint_condim.xml drops four free bodies on a floor: a ball with condim 6, a box with
condim 4, a capsule with condim 3 and a frictionless pebble (condim 1). A condim-4 contact
has 6 pyramid rows (sliding both ways, spinning), a condim-6 one 10 (and rolling about both
tangents), each edge J_n +- mu_k J_k with J_3 the relative rotation about the normal and
J_4, J_5 about the tangents. Compared (the converged solves also in test_solver.py):

- the rows, row for row (efc_J, pos, R, D, aref, ...), at 60 touching states;
- 200-step trajectories under Newton and PGS with <flag island="disable"/> (MuJoCo then
  solves the four bodies as one problem, as we do): qpos and qvel to 1e-9 relative;
- analytic: a ball spinning about the vertical on a floor, its contact point still, feels
  only torsional friction: with condim 4 its spin decays at mu_spin g / (2/5 r^2) (49 rad/s^2
  for mu_spin = 0.02, r = 0.1 m; within 2 % over 0.15 s, the soft contact's creep aside),
  and with condim 3 it keeps its spin exactly.
"""

from __future__ import annotations

import mujoco
import pytest

from robodyn import engine
from tests.engine.test_constraint import compare_rows
from tests.helpers import ASSETS, report, rollout_states, set_state, trajectory_errors, with_options

CONDIM = ASSETS / "tests" / "constraint_condim.xml"
STEPS = 200
TOL = 1e-9

SPINNER = """
<mujoco model="spinner">
  <option timestep="0.001"/>
  <worldbody>
    <geom type="plane" size="2 2 0.1" condim="{condim}" friction="0.8 0.02 0.0001"/>
    <body pos="0 0 0.1">
      <freejoint/>
      <geom type="sphere" size="0.1" density="1000" condim="{condim}" friction="0.8 0.02 0.0001"/>
    </body>
  </worldbody>
</mujoco>
"""


def test_condim_rows():
    mj = mujoco.MjModel.from_xml_path(str(CONDIM))
    states = rollout_states(mj, 60, seed=2, every=5, touching=True, vel=2.0)
    result = compare_rows("constraint_condim", CONDIM, mj, states)
    result.check(60, 1000)
    dims = set()
    sim = engine.Simulator(engine.load_mjcf(CONDIM), batch=60)
    set_state(sim, states)
    sim.forward()
    for i in range(60):
        dims.update(int(k) for k in sim.data.contact_dim[i, : sim.data.ncon[i]])
    assert dims == {1, 3, 4, 6}


@pytest.mark.parametrize("solver", ["Newton", "PGS"])
def test_trajectories_match_mujoco(solver):
    text = with_options(CONDIM, solver=solver, flags={"island": "disable"})
    states = rollout_states(mujoco.MjModel.from_xml_string(text), 6, seed=4, every=15, touching=True, vel=2.0)
    worst = dict(zip(("qpos", "qvel"), trajectory_errors(text, states, STEPS), strict=True))
    for name, err in worst.items():
        report(f"constraint_condim {solver} {STEPS}-step trajectories {name}", err, TOL, len(states["qpos"]))
    for name, err in worst.items():
        assert err <= TOL, f"{name} off MuJoCo by {err:.3e}"


def test_torsional_friction_spins_a_ball_down():
    spin = {}
    for condim in (3, 4):
        sim = engine.Simulator(engine.load_mjcf(SPINNER.format(condim=condim)), batch=1)
        sim.data.qvel[0, 5] = 10.0  # rad/s about the vertical
        sim.step(150)
        spin[condim] = float(sim.data.qvel[0, 5])
    assert spin[3] == 10.0  # no torsional friction: nothing acts on the spin
    rate = (10.0 - spin[4]) / 0.15
    expected = 0.02 * 9.81 / (0.4 * 0.1**2)
    label = "spinning ball (condim 4): spin-down rate off mu g / (2/5 r^2), relative"
    report(label, abs(rate / expected - 1), 0.02, 1)
    assert abs(rate / expected - 1) <= 0.02
