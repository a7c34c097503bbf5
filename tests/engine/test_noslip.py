"""MuJoCo's noslip pass (engine/noslip.py, `<option noslip_iterations>`) against MuJoCo 4.0.0.

After the main solver (Newton or PGS) MuJoCo re-solves the friction-loss and contact
friction forces without their regularization, island by island (all rows at once with
islands disabled), then maps the forces to qacc (dualFinish). At states along MuJoCo's own
rollouts of each model with noslip turned on (noslip_iterations 5, the default
noslip_tolerance 1e-6), ours and MuJoCo's forward are compared:

- qacc, efc_force and qfrc_constraint, relative to max(1, max |MuJoCo's|): 1e-10. Both run
  the same sweeps in the same row order from forces equal to ~1e-15, so they differ by
  rounding only (worst seen 2.0e-13: constraint_elliptic.xml made pyramidal, PGS); a sweep with a
  different step or stopping point would be off by the last sweep's change, >1e-6 here;
- every island's iteration count (island_niter against mjData.solver_niter, which adds the
  noslip sweeps to the main solver's), and the noslip sweeps alone (noslip_niter against
  MuJoCo's count less its count for the same state without noslip): exact;
- the last sweep's scaled improvement (noslip_improvement against MuJoCo's mjData.solver
  stat right after the main solver's): 1e-9 relative to max(1, |MuJoCo's|) (a sweep that
  ends converged improves by ~1e-12 of rounding, where only the absolute error means
  anything);
- efc_state, except where a force sits on a boundary to rounding: a pyramid edge or a
  limit within 1e-12 of 0 (noslip's clamp gives exactly 0, MuJoCo's mid + y may give
  1e-16), an elliptic contact whose friction is within 1e-9 of its cone (the QCQP puts it
  on the cone, where SATISFIED and CONE both read it).

Models: constraint_friction.xml (friction-loss rows on a slide, hinges and a tendon, a
pyramidal contact), constraint_condim.xml (condim 4 and 6), constraint_elliptic.xml
(condim 3, 4, 6 and a frictionless pebble; elliptic and switched to pyramidal),
constraint_islands.xml (several islands at once) and gymnasium's ant and humanoid (as
shipped, pyramidal, and switched to the elliptic cone); each under Newton and PGS, islands
on and disabled. 200-step trajectories follow mj_step (qpos
1e-9, qvel 1e-7 relative). Analytic: the corners of a box resting on a 20 degree slope
(mu 1) slide under the soft friction of the main solver alone, and hold (tangential
acceleration 0 to the noslip tolerance) with noslip.
"""

from __future__ import annotations

import functools

import mujoco
import numpy as np
import pytest

from robodyn import engine
from robodyn.engine import types as T
from tests.helpers import (
    ASSETS,
    GYM_ASSETS,
    rel_err,
    report,
    rollout_states,
    set_state,
    trajectory_errors,
    with_options,
)

MODELS = {
    "friction": (ASSETS / "tests" / "constraint_friction.xml", {}),
    "condim": (ASSETS / "tests" / "constraint_condim.xml", {}),
    "condim_elliptic": (ASSETS / "tests" / "constraint_condim.xml", {"cone": "elliptic"}),
    "elliptic": (ASSETS / "tests" / "constraint_elliptic.xml", {}),
    "elliptic_pyramidal": (ASSETS / "tests" / "constraint_elliptic.xml", {"cone": "pyramidal"}),
    "islands": (ASSETS / "tests" / "constraint_islands.xml", {}),
    "ant": (GYM_ASSETS / "ant.xml", {}),
    "ant_elliptic": (GYM_ASSETS / "ant.xml", {"cone": "elliptic"}),
    "humanoid": (GYM_ASSETS / "humanoid.xml", {}),
    "humanoid_elliptic": (GYM_ASSETS / "humanoid.xml", {"cone": "elliptic"}),
}
N_STATES = 30
NOSLIP = 5
TOL = 1e-10  # qacc, efc_force, qfrc_constraint (relative)
TOL_IMPROVEMENT = 1e-9
TOL_TRAJ = 1e-9  # qpos over 200 steps (qvel 100 times that)
N_STEP = 200


def _text(name: str, solver: str, island: str, noslip: int = NOSLIP) -> str:
    path, options = MODELS[name]
    return with_options(path, flags={"island": island}, solver=solver, noslip_iterations=noslip, **options)


@functools.cache
def _states(name: str, solver: str, island: str) -> dict[str, np.ndarray]:
    mj = mujoco.MjModel.from_xml_string(_text(name, solver, island))
    return rollout_states(mj, N_STATES, seed=5, every=5, vel=1.0)


def _mj_forward(text: str, states: dict, i: int) -> tuple[mujoco.MjModel, mujoco.MjData]:
    mj = mujoco.MjModel.from_xml_string(text)
    d = mujoco.MjData(mj)
    set_state(None, states, d, i)
    mujoco.mj_forward(mj, d)
    return mj, d


def _on_boundary(d: mujoco.MjData, r: int, f: np.ndarray) -> bool:
    """Whether row r's force (ours f or MuJoCo's) sits on its state boundary to rounding."""
    kind = d.efc_type[r]
    scale = max(1.0, float(np.max(np.abs(d.efc_force[: d.nefc]))))
    if kind == T.CNSTR_CONTACT_ELLIPTIC:
        c = d.efc_id[r]
        con = d.contact[c]
        start = d.contact.efc_address[c]
        for force in (f, d.efc_force):
            normal = force[start] / con.mu
            tangent = np.linalg.norm(force[start + 1 : start + con.dim] / con.friction[: con.dim - 1])
            if abs(con.mu * normal - tangent) <= 1e-9 * scale:
                return True
        return False
    if kind in (T.CNSTR_FRICTION_DOF, T.CNSTR_FRICTION_TENDON):
        floss = d.efc_frictionloss[r]
        return min(abs(abs(f[r]) - floss), abs(abs(d.efc_force[r]) - floss)) <= 1e-12 * scale
    return min(abs(f[r]), abs(d.efc_force[r])) <= 1e-12 * scale


@pytest.mark.parametrize("island", ["enable", "disable"])
@pytest.mark.parametrize("solver", ["Newton", "PGS"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_noslip_matches_mujoco(name, solver, island):
    text = _text(name, solver, island)
    plain = _text(name, solver, island, noslip=0)
    states = _states(name, solver, island)
    sim = engine.Simulator(engine.load_mjcf(text), batch=N_STATES)
    set_state(sim, states)
    sim.forward()
    dat = sim.data
    worst = dict.fromkeys(("qacc", "efc_force", "qfrc_constraint", "improvement"), 0.0)
    swept = same_state = 0
    for i in range(N_STATES):
        mj, d = _mj_forward(text, states, i)
        _, d0 = _mj_forward(plain, states, i)
        n = d.nefc
        assert dat.nefc[i] == n and dat.nisland[i] == d.nisland
        worst["qacc"] = max(worst["qacc"], rel_err(dat.qacc[i], d.qacc))
        worst["efc_force"] = max(worst["efc_force"], rel_err(dat.efc_force[i, :n], d.efc_force[:n]))
        worst["qfrc_constraint"] = max(
            worst["qfrc_constraint"], rel_err(dat.qfrc_constraint[i], d.qfrc_constraint)
        )
        k = max(1, d.nisland)
        np.testing.assert_array_equal(dat.island_niter[i, :k], d.solver_niter[:k], err_msg=f"state {i}")
        np.testing.assert_array_equal(
            dat.noslip_niter[i, :k], d.solver_niter[:k] - d0.solver_niter[:k], err_msg=f"state {i}"
        )
        assert dat.solver_niter[i] == d.solver_niter[:k].sum()
        for g in range(k):
            last = d.solver[g * mujoco.mjNSOLVER + d.solver_niter[g] - 1].improvement
            err = abs(dat.noslip_improvement[i, g] - last) / max(1.0, abs(last))
            worst["improvement"] = max(worst["improvement"], err)
        swept += int(dat.noslip_niter[i, :k].sum())
        for r in np.nonzero(dat.efc_state[i, :n] != d.efc_state[:n])[0]:
            assert _on_boundary(d, r, dat.efc_force[i]), (
                f"state {i} row {r}: efc_state differs off a boundary"
            )
        same_state += int(np.sum(dat.efc_state[i, :n] == d.efc_state[:n]))
    label = f"noslip {name} {solver} islands {island}"
    for key, err in worst.items():
        report(f"{label} {key}", err, TOL_IMPROVEMENT if key == "improvement" else TOL, N_STATES)
    print(f"[noslip] {label}: {swept} noslip sweeps, {same_state} rows with MuJoCo's efc_state")
    assert swept >= N_STATES  # every state ran the pass
    for key, err in worst.items():
        assert err <= (TOL_IMPROVEMENT if key == "improvement" else TOL), f"{label}: {key} {err:.3e}"


@pytest.mark.parametrize(
    ("name", "solver", "island"),
    [
        ("friction", "PGS", "disable"),
        ("elliptic", "Newton", "enable"),
        ("elliptic", "PGS", "disable"),
        ("condim", "Newton", "disable"),
        ("islands", "PGS", "enable"),
        ("ant", "Newton", "enable"),
        ("humanoid", "PGS", "enable"),
        ("humanoid_elliptic", "Newton", "disable"),
    ],
)
def test_noslip_trajectories(name, solver, island):
    text = _text(name, solver, island)
    states = {k: v[:4] for k, v in _states(name, solver, island).items()}
    worst_q, worst_v = trajectory_errors(text, states, N_STEP)
    label = f"noslip {name} {solver} islands {island} {N_STEP}-step trajectories"
    report(f"{label} (qpos)", worst_q, TOL_TRAJ, 4)
    report(f"{label} (qvel)", worst_v, 100 * TOL_TRAJ, 4)
    assert worst_q <= TOL_TRAJ and worst_v <= 100 * TOL_TRAJ


SLOPE = """
<mujoco>
  <option {option}/>
  <worldbody>
    <geom type="plane" size="5 5 0.1" euler="0 20 0" friction="1"/>
    <body pos="0 0 0.1" euler="0 20 0">
      <freejoint/>
      <geom type="box" size="0.1 0.1 0.1" mass="1"/>
    </body>
  </worldbody>
</mujoco>
"""


def test_noslip_holds_a_box_on_a_slope():
    """A box at rest on a 20 degree slope with mu = 1 (tan 20 deg = 0.36 < 1) should stay.
    The main solver's soft friction lets its four corners slide (each pyramid's pair of
    opposite edges j, j + 1 has (J_j - J_(j+1)) qacc = 2 mu a_t, the corner's acceleration
    along that tangent: 0.36 m/s^2 here); the noslip pass drops the friction rows'
    regularization, so at its optimum a_t = aref's share = 0 at rest, to the pass's
    stopping test (the scaled cost decrease below noslip_tolerance 1e-15 leaves ~1e-8).
    Ours and MuJoCo's qacc agree in both."""
    tangential = {}
    for noslip in (0, 20):
        text = SLOPE.format(option=f'noslip_iterations="{noslip}" noslip_tolerance="1e-15"')
        mj = mujoco.MjModel.from_xml_string(text)
        d = mujoco.MjData(mj)
        for _ in range(200):  # settle into the slope (MuJoCo), then hold it at rest
            mujoco.mj_step(mj, d)
        d.qvel[:] = 0.0
        mujoco.mj_forward(mj, d)
        model = engine.load_mjcf(text)
        sim = engine.Simulator(model, batch=1)
        sim.data.qpos[0] = d.qpos
        sim.data.qacc_warmstart[0] = d.qacc_warmstart
        sim.forward()
        assert sim.data.ncon[0] == d.ncon == 4 and sim.data.nefc[0] == 16
        assert rel_err(sim.data.qacc[0], d.qacc) <= TOL
        J = engine.dense_efc_J(model, sim.data)[0, :16]
        a = sim.data.qacc[0]
        tangential[noslip] = max(abs((J[j] - J[j + 1]) @ a) for j in range(0, 16, 2))
    report("noslip box on a slope: contact points' acceleration along the slope", tangential[20], 1e-6, 1)
    print(f"[noslip] box on a slope: {tangential[0]:.3e} m/s^2 without noslip")
    assert tangential[0] > 0.1  # the soft friction alone lets the corners slide
    assert tangential[20] <= 1e-6
