"""The elliptic friction cone under Newton and PGS, and tendon equalities, against MuJoCo 4.0.0.

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
- PGS (MuJoCo's solPGS: a contact's rows one block, the normal or ray update, then the
  friction QCQP in 2, 3 or 5 dimensions with the normal fixed), with islands as MuJoCo runs
  them (each island's blocks shuffled and solved on their own) and disabled, dense and
  sparse efc_J: every island's iteration count, qacc and efc_force to 1e-9 (roundoff seen),
  the same dual states (a force on the cone's surface may read SATISFIED or CONE by
  roundoff, so both are accepted there), every force inside its cone to 1e-12; run long
  (3000 iterations) it reaches MuJoCo's converged Newton solution except in the few states
  where MuJoCo's own PGS stalls, the same ones; 200-step trajectories to 1e-9; dm_control's
  manipulator and stacker switched to PGS likewise (islands on).

constraint_tendon_equality.xml: a quartic coupling of two fixed tendons and a single-tendon
offset: rows, qacc and 200-step trajectories as above.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import mujoco
import numpy as np
import pytest

from robodyn import engine
from tests.engine.test_constraint import compare_rows
from tests.helpers import ASSETS, rel_err, report, rollout_states, set_state, trajectory_errors, with_options

ELLIPTIC = ASSETS / "tests" / "constraint_elliptic.xml"
TENDON_EQ = ASSETS / "tests" / "constraint_tendon_equality.xml"
STEPS = 200
SUITE = Path(importlib.util.find_spec("dm_control").submodule_search_locations[0]) / "suite"


def _states(source, n=60, touching=True):
    text = str(source)
    mj = mujoco.MjModel.from_xml_string(text) if text.startswith("<") else mujoco.MjModel.from_xml_path(text)
    return rollout_states(mj, n, seed=2, every=5, touching=touching, vel=2.0)


def _forward_both(source, states):
    """(sim, mj, datas) after forward at states, ours and MuJoCo's; source an MJCF
    document or a path."""
    text = str(source)
    mj = mujoco.MjModel.from_xml_string(text) if text.startswith("<") else mujoco.MjModel.from_xml_path(text)
    n = len(states["qpos"])
    sim = engine.Simulator(engine.load_mjcf(source), batch=n)
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


# ---- PGS ----------------------------------------------------------------------------------------


def _pgs(source, jacobian="auto", islands=True, **options):
    """source switched to PGS; islands on (MuJoCo's default: each island solved on its own)
    or disabled (one problem of all rows)."""
    flags = {} if islands else {"island": "disable"}
    return with_options(source, flags=flags, solver="PGS", jacobian=jacobian, **options)


def _cone_geometry(forces, friction, mu, dim):
    """(f_n, T, slack) of one elliptic contact's forces: T = sqrt(sum_j (f_j / mu_j)^2) the
    friction in the normal's units, slack = (mu N - T) in dualState's variables
    (N = f_n / mu, T' = |f_j / friction_j|), whose sign decides SATISFIED or CONE."""
    t = np.sqrt(np.sum((forces[1:dim] / friction[: dim - 1]) ** 2))
    return forces[0], t, forces[0] - t


def _compare_pgs(sim, mj, datas, label, tol=1e-9, same_iterations=True):
    """Iteration counts (every island's: island_niter against mjData.solver_niter, or the one
    problem's with islands disabled), qacc, efc_force (to tol) and efc_state against MuJoCo's
    PGS, and every elliptic contact's forces inside their cone; returns the counts of
    contacts by condim and of contacts slipping (friction on the cone, normal force > 0)."""
    same = 0
    for i, d in enumerate(datas):
        k = max(1, d.nisland)
        same += np.array_equal(sim.data.island_niter[i, :k], d.solver_niter[:k])
    worst_qacc = worst_force = worst_cone = 0.0
    state_diff = boundary = 0
    dims: dict[int, int] = {}
    slipping = 0
    elliptic = int(mujoco.mjtConstraint.mjCNSTR_CONTACT_ELLIPTIC)
    for i, d in enumerate(datas):
        n = d.nefc
        worst_qacc = max(worst_qacc, rel_err(sim.data.qacc[i], d.qacc))
        worst_force = max(worst_force, rel_err(sim.data.efc_force[i, :n], d.efc_force[:n]))
        ours = sim.data.efc_force[i]
        j = 0
        while j < n:
            if d.efc_type[j] != elliptic:
                if sim.data.efc_state[i, j] != d.efc_state[j]:
                    state_diff += 1
                j += 1
                continue
            c = d.efc_id[j]
            dim = int(d.contact.dim[c])
            fn, t, slack = _cone_geometry(ours[j : j + dim], d.contact.friction[c], d.contact.mu[c], dim)
            scale = max(1.0, abs(fn))
            worst_cone = max(worst_cone, (t - fn) / scale)
            if fn > 0:
                dims[dim] = dims.get(dim, 0) + 1
                slipping += int(abs(slack) <= 1e-9 * scale)
            if np.any(sim.data.efc_state[i, j : j + dim] != d.efc_state[j : j + dim]):
                # SATISFIED (inside) and CONE (outside by roundoff) both describe a force on
                # the cone's surface: accepted there, nowhere else
                if abs(slack) <= 1e-12 * scale:
                    boundary += 1
                else:
                    state_diff += 1
            j += dim
    report(f"{label} qacc", worst_qacc, tol, len(datas))
    report(f"{label} efc_force", worst_force, tol, len(datas))
    report(f"{label} friction outside the cone (relative)", worst_cone, 1e-12, len(datas))
    print(
        f"[solver] {label}: {same}/{len(datas)} states with every island's iteration count equal "
        f"({sum(d.nisland >= 2 for d in datas)} with >= 2 islands); efc_state differs in "
        f"{state_diff} rows off the cone's surface, {boundary} contacts on it (SATISFIED vs CONE); "
        f"contacts pressing by condim {dict(sorted(dims.items()))}, {slipping} on their cone"
    )
    assert worst_qacc <= tol and worst_force <= tol
    assert same == len(datas) or not same_iterations
    assert state_diff == 0 and worst_cone <= 1e-12
    return dims, slipping


@pytest.mark.parametrize("islands", [True, False], ids=["islands", "no_islands"])
@pytest.mark.parametrize("jacobian", ["dense", "sparse"])
def test_elliptic_pgs_repeats_mujoco(jacobian, islands):
    """MuJoCo's PGS with the elliptic cone, the model's tolerance and 100 iterations, with
    islands (MuJoCo's default: the ball, the box, the capsule and the pebble each an island
    of their own, solved one by one) and disabled (one problem): the same iteration count
    for every island, qacc and forces at roundoff, the same dual states."""
    text = _pgs(ELLIPTIC, jacobian, islands)
    sim, mj, datas = _forward_both(text, _states(text))
    label = f"constraint_elliptic PGS jacobian={jacobian} islands={'on' if islands else 'off'}"
    dims, slipping = _compare_pgs(sim, mj, datas, label)
    several = sum(d.nisland >= 2 for d in datas)
    assert several >= 20 if islands else several == 0
    # every QCQP size (2, 3 and 5 friction rows) ran with a pressing normal, and contacts slid
    assert dims.get(3, 0) >= 50 and dims.get(4, 0) >= 50 and dims.get(6, 0) >= 10
    assert slipping >= 10


def test_elliptic_pgs_converged_repeats_mujoco():
    """PGS run long (tolerance 1e-15, 3000 iterations): qacc and forces as MuJoCo's PGS to
    1e-6 (a cost improvement below 1e-15 is roundoff, so where each stops differs in a few
    states, and the iterates with it, within the solver's convergence). Against MuJoCo's
    converged Newton (the problem's unique solution) most states agree to PGS's linear
    convergence (1e-4, as for the pyramidal cone), but in a few MuJoCo's own PGS stalls far
    from it (its ray and QCQP updates stop improving the cost): ours must stall in exactly
    those states and reach the solution in all the others."""
    states = _states(ELLIPTIC)
    text = _pgs(ELLIPTIC, tolerance="1e-15", iterations="3000")
    sim, mj, datas = _forward_both(text, states)
    label = "constraint_elliptic PGS (tolerance 1e-15, 3000 iterations)"
    _compare_pgs(sim, mj, datas, label, tol=1e-6, same_iterations=False)
    _, _, newton = _forward_both(with_options(ELLIPTIC, tolerance="1e-15", iterations="200"), states)
    ours = [rel_err(sim.data.qacc[i], d.qacc) for i, d in enumerate(newton)]
    theirs = [rel_err(datas[i].qacc, d.qacc) for i, d in enumerate(newton)]
    stalled = [i for i, e in enumerate(theirs) if e > 1e-4]
    worst = max(e for i, e in enumerate(ours) if i not in stalled)
    report(
        "constraint_elliptic PGS (3000 iterations) vs converged Newton qacc",
        worst,
        1e-4,
        len(datas) - len(stalled),
    )
    print(
        f"[solver] MuJoCo's PGS stalls away from Newton's solution in states {stalled}; ours in "
        f"{[i for i, e in enumerate(ours) if e > 1e-4]}"
    )
    assert worst <= 1e-4 and [i for i, e in enumerate(ours) if e > 1e-4] == stalled
    assert len(stalled) <= 6


def test_elliptic_pgs_trajectories_match_mujoco():
    text = _pgs(ELLIPTIC)
    mj = mujoco.MjModel.from_xml_string(text)
    states = rollout_states(mj, 6, seed=4, every=15, touching=True, vel=2.0)
    worst = max(trajectory_errors(text, states, STEPS))
    report(
        f"constraint_elliptic PGS {STEPS}-step trajectories (qpos, qvel)", worst, 1e-9, len(states["qpos"])
    )
    assert worst <= 1e-9


@pytest.mark.parametrize("name", ["manipulator.xml", "stacker.xml"])
def test_dm_control_elliptic_models_under_pgs(name, tmp_path):
    """dm_control's manipulator and stacker (elliptic cones, shipped with Newton; no model in
    the installed gymnasium or dm_control packages sets PGS with the elliptic cone) switched
    to PGS, islands on as MuJoCo runs them, read beside a link to the suite's common/ (their
    includes): at 40 states along MuJoCo's rollouts, every island's iterations, qacc, forces
    and dual states as
    MuJoCo's; then 200 steps from 4 of them (1e-6, as tests/engine/test_dm_control.py)."""
    (tmp_path / "common").symlink_to(SUITE / "common")
    path = tmp_path / name
    path.write_text(_pgs(SUITE / name))
    mj = mujoco.MjModel.from_xml_path(str(path))
    states = rollout_states(mj, 40, seed=sum(map(ord, name)), every=10, touching=True)
    sim, mj, datas = _forward_both(path, states)
    dims, _ = _compare_pgs(sim, mj, datas, f"dm_control {name} PGS")
    assert sum(dims.values()) >= 40
    n = 4
    sim = engine.Simulator(engine.load_mjcf(path), batch=n)
    set_state(sim, {k: v[:n] for k, v in states.items()})
    worst = 0.0
    for _ in range(STEPS):
        sim.step(1)
        for i, d in enumerate(datas[:n]):
            mujoco.mj_step(mj, d)
            worst = max(worst, rel_err(sim.data.qpos[i], d.qpos), rel_err(sim.data.qvel[i], d.qvel))
    # 1e-6 as test_dm_control's trajectories: the stacked boxes amplify roundoff (1e-8 here)
    report(f"dm_control {name} PGS {STEPS}-step trajectories (qpos, qvel)", worst, 1e-6, n)
    assert worst <= 1e-6
