"""The elliptic friction cone under Newton, and tendon equalities, against MuJoCo 4.0.0.

constraint_elliptic.xml drops a ball (condim 6), a box (condim 4), a capsule (condim 3,
through an explicit pair with its own solreffriction) and a frictionless pebble on a floor
with cone="elliptic" and impratio 3. An elliptic contact has condim rows (the contact
frame's); its cost is zero in the top zone, quadratic in every row in the bottom zone and
1/2 Dm (N - mu T)^2 on the cone; Newton adds each cone's Hessian to the factor by rank-one
updates. Compared:

- the rows one to one (J, pos, R with the friction rows' R mu^2 = R_1 mu_1^2, K = 0 and
  solreffriction on the friction rows, aref) at 60 touching states;
- Newton with the model's settings and <flag island="disable"/> (one problem, as we solve
  it): the same iteration count and qacc to 1e-9; converged (tolerance 1e-15): qacc,
  efc_force to 1e-6 relative with islands;
- every contact force inside its cone: sqrt(sum_j (f_j / mu_j)^2) <= f_n (the friction
  coefficients' cone) to 1e-9 relative, and contact_force equal to mj_contactForce;
- 200-step trajectories (islands disabled) to 1e-9;
- PGS with the elliptic cone is refused at load, naming it.

constraint_tendon_equality.xml: a quartic coupling of two fixed tendons and a single-tendon
offset: rows, qacc and 200-step trajectories as above.
"""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

import engine
from tests.engine.test_constraint import compare_rows
from tests.helpers import ASSETS, rel_err, report, rollout_states, set_state, trajectory_errors, with_options

ELLIPTIC = ASSETS / "tests" / "constraint_elliptic.xml"
TENDON_EQ = ASSETS / "tests" / "constraint_tendon_equality.xml"
STEPS = 200


def _states(path, n=60, touching=True):
    mj = mujoco.MjModel.from_xml_path(str(path))
    return rollout_states(mj, n, seed=2, every=5, touching=touching, vel=2.0)


def _forward_both(text, states):
    mj = mujoco.MjModel.from_xml_string(text)
    n = len(states["qpos"])
    sim = engine.Simulator(engine.load_mjcf(text), batch=n)
    set_state(sim, states)
    sim.forward()
    datas = []
    for i in range(n):
        d = mujoco.MjData(mj)
        set_state(None, states, d, i)
        mujoco.mj_forward(mj, d)
        datas.append(d)
    return sim, mj, datas


def test_elliptic_rows():
    mj = mujoco.MjModel.from_xml_path(str(ELLIPTIC))
    result = compare_rows("constraint_elliptic", ELLIPTIC, mj, _states(ELLIPTIC))
    result.check(60, 1000)
    assert result.types.get(int(mujoco.mjtConstraint.mjCNSTR_CONTACT_ELLIPTIC), 0) >= 1000


def test_elliptic_newton_repeats_mujoco():
    sim, mj, datas = _forward_both(with_options(ELLIPTIC, flags={"island": "disable"}), _states(ELLIPTIC))
    same = sum(int(d.solver_niter[0]) == int(sim.data.solver_niter[i]) for i, d in enumerate(datas))
    worst = max(rel_err(sim.data.qacc[i], d.qacc) for i, d in enumerate(datas))
    on_cone = int(mujoco.mjtConstraintState.mjCNSTRSTATE_CONE)
    cone = sum(int(np.sum(d.efc_state[: d.nefc] == on_cone)) for d in datas)
    report("constraint_elliptic Newton default settings qacc", worst, 1e-9, len(datas))
    print(f"[solver] constraint_elliptic: {same}/{len(datas)} iteration counts equal, {cone} rows on a cone")
    assert same == len(datas) and worst <= 1e-9
    assert cone >= 100  # contacts slipping on their cone, not only sticking


def test_elliptic_converged_forces_inside_their_cones():
    text = with_options(ELLIPTIC, tolerance="1e-15", iterations="200")
    sim, mj, datas = _forward_both(text, _states(ELLIPTIC))
    forces = sim.contact_force()
    worst_qacc, worst_force, worst_cone, worst_decode = 0.0, 0.0, 0.0, 0.0
    theirs = np.zeros(6)
    for i, d in enumerate(datas):
        worst_qacc = max(worst_qacc, rel_err(sim.data.qacc[i], d.qacc))
        worst_force = max(worst_force, rel_err(sim.data.efc_force[i, : d.nefc], d.efc_force[: d.nefc]))
        for c in range(d.ncon):
            dim = int(d.contact.dim[c])
            mujoco.mj_contactForce(mj, d, c, theirs)
            worst_decode = max(worst_decode, rel_err(forces[i, c, :dim], theirs[:dim]))
            if dim > 1:
                mu = sim.data.contact_friction[i, c, : dim - 1]
                f = forces[i, c]
                excess = np.sqrt(np.sum((f[1:dim] / mu) ** 2)) - f[0]
                worst_cone = max(worst_cone, excess / max(1.0, abs(f[0])))
    report("constraint_elliptic converged qacc", worst_qacc, 1e-6, len(datas))
    report("constraint_elliptic converged efc_force", worst_force, 1e-6, len(datas))
    report("constraint_elliptic contact_force vs mj_contactForce", worst_decode, 1e-6, len(datas))
    report("constraint_elliptic friction outside the cone (relative)", worst_cone, 1e-9, len(datas))
    assert worst_qacc <= 1e-6 and worst_force <= 1e-6 and worst_decode <= 1e-6
    assert worst_cone <= 1e-9


@pytest.mark.parametrize("path", [ELLIPTIC, TENDON_EQ], ids=lambda p: p.name)
def test_trajectories_match_mujoco(path):
    text = with_options(path, flags={"island": "disable"})
    mj = mujoco.MjModel.from_xml_string(text)
    states = rollout_states(mj, 6, seed=4, every=15, touching=path == ELLIPTIC, vel=2.0)
    worst = max(trajectory_errors(text, states, STEPS))
    report(f"{path.name} {STEPS}-step trajectories (qpos, qvel)", worst, 1e-9, len(states["qpos"]))
    assert worst <= 1e-9


def test_tendon_equality_rows_and_solve():
    mj = mujoco.MjModel.from_xml_path(str(TENDON_EQ))
    states = _states(TENDON_EQ, touching=False)
    result = compare_rows("constraint_tendon_equality", TENDON_EQ, mj, states)
    result.check(60, 120)
    assert result.types.get(int(mujoco.mjtConstraint.mjCNSTR_EQUALITY), 0) == 120
    sim, mj, datas = _forward_both(TENDON_EQ.read_text(), states)
    worst = max(rel_err(sim.data.qacc[i], d.qacc) for i, d in enumerate(datas))
    report("constraint_tendon_equality qacc", worst, 1e-9, len(datas))
    assert worst <= 1e-9


def test_elliptic_cone_with_pgs_is_refused():
    text = with_options(ELLIPTIC, solver="PGS")
    with pytest.raises(engine.UnsupportedModelError, match='cone="elliptic" solver="PGS"'):
        engine.load_mjcf(text)
