"""Constraint islands (engine/island.py and the per-island solvers of engine/solver.py)
against MuJoCo 4.0.0, which solves each island of coupled trees on its own by default.

At states along MuJoCo rollouts of assets/tests/constraint_islands.xml (a stack, touching
spheres, a lone capsule, a ball in the air with no rows, a limited hinge with friction loss,
free bodies joined by a connect, pendulums coupled by tendon rows) the islands are MuJoCo's
(count, numbering, every map), and with the model's own loose solver settings each island
takes MuJoCo's iteration count (island_niter against mjData.solver_niter), so qacc and
efc_force agree to rounding (1e-10 relative), under Newton and PGS, with the pyramidal
and the elliptic cone (under PGS each elliptic contact one block of its island's shuffled
order, and the dual states after all islands as MuJoCo's; PGS both on each island's matrix
AR = J M^-1 J^T + R, its way for islands of up to engine.fields.PGS_AR_ROWS rows, and on
M^-1 J^T f, its way for larger ones, forced by setting the bound to 0). Trajectories of 200
steps follow mj_step, also on the 40-body pile (nv = 240: MuJoCo's sparse Jacobian) and
with <flag island="disable"/> (one problem in both).
"""

from __future__ import annotations

import functools

import mujoco
import numpy as np
import pytest

from robodyn import engine
from robodyn.engine import fields
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

ISLANDS = ASSETS / "tests" / "constraint_islands.xml"
PILE = ASSETS / "tests" / "constraint_pile.xml"  # 40 free bodies, nv = 240
N_STATES = 40
TOL = 1e-10  # qacc and efc_force, relative to max(1, max |MuJoCo's|): the same iterates
TOL_TRAJ = 1e-9  # qpos over 200 steps (qvel 100 times that), as test_contact_physics
N_STEP = 200
SOLVERS = ["Newton", "PGS"]
# PGS sweeps an island of at most engine.fields.PGS_AR_ROWS rows on its matrix AR, a larger
# one on M^-1 J^T f: "PGS-v" sets the bound to 0, so every island takes the second way
SWEEPS = ["Newton", "PGS", "PGS-v"]


@pytest.fixture
def sweep_solver(request, monkeypatch) -> str:
    """The solver of a SWEEPS parameter, with PGS_AR_ROWS set for it."""
    if request.param == "PGS-v":
        monkeypatch.setattr(fields, "PGS_AR_ROWS", 0)
    return request.param.split("-")[0]


def _check_sweep(sim: engine.Simulator, solver: str, ref: list) -> None:
    """Every island of every row took the way its SWEEPS parameter asks for."""
    if solver != "PGS":
        return
    bound = sim.data.scratch_pgs_AR.shape[1]
    largest = max(max(d.island_nefc[: d.nisland], default=d.nefc) for d in ref)
    assert bound == min(fields.PGS_AR_ROWS, sim.model.nefcmax)
    assert (largest <= bound) == (fields.PGS_AR_ROWS > 0), (largest, bound)


MAPS = (
    "tree_island",
    "dof_island",
    "map_dof2idof",
    "map_idof2dof",
    "map_itree2tree",
)
PER_ISLAND = (
    "island_nv",
    "island_idofadr",
    "island_dofadr",
    "island_ntree",
    "island_itreeadr",
    "island_ne",
    "island_nf",
    "island_nefc",
    "island_iefcadr",
)
PER_ROW = ("efc_island", "map_efc2iefc", "map_iefc2efc")


@functools.cache
def _states() -> dict[str, np.ndarray]:
    mj = mujoco.MjModel.from_xml_path(str(ISLANDS))
    return rollout_states(mj, N_STATES, seed=11, every=7, vel=1.0)


def _pair(text: str, states: dict) -> tuple[engine.Simulator, list[mujoco.MjData]]:
    sim = engine.Simulator(engine.load_mjcf(text), batch=len(states["qpos"]))
    set_state(sim, states)
    sim.forward()
    mj = mujoco.MjModel.from_xml_string(text)
    ref = []
    for i in range(len(states["qpos"])):
        d = mujoco.MjData(mj)
        set_state(None, states, d, i)
        mujoco.mj_forward(mj, d)
        ref.append(d)
    return sim, ref


def _island_mismatches(sim: engine.Simulator, i: int, d: mujoco.MjData) -> list[str]:
    """The island fields of row i that differ from MuJoCo's."""
    ours = sim.data
    n = d.nisland
    bad = [] if ours.nisland[i] == n and ours.nidof[i] == d.nidof else ["nisland/nidof"]
    if n == 0 or bad:
        return bad
    bad += [k for k in MAPS if not np.array_equal(getattr(ours, k)[i], getattr(d, k))]
    bad += [k for k in PER_ISLAND if not np.array_equal(getattr(ours, k)[i, :n], getattr(d, k)[:n])]
    bad += [k for k in PER_ROW if not np.array_equal(getattr(ours, k)[i, : d.nefc], getattr(d, k)[: d.nefc])]
    return bad


@pytest.mark.parametrize("jacobian", ["auto", "dense", "sparse"])
@pytest.mark.parametrize("sweep_solver", SWEEPS, indirect=True)
def test_islands_follow_mujoco(sweep_solver: str, jacobian: str):
    """Islands, per-island iteration counts, qacc and efc_force equal MuJoCo's, whichever
    way efc_J is stored (nv = 52: "auto" is dense in MuJoCo, which then joins the trees of a
    generic row's nonzero entries; "sparse" those of its stored columns; ours is dense
    under PGS and compact under Newton with "auto"); PGS on each island's AR and on
    M^-1 J^T f."""
    solver = sweep_solver
    states = _states()
    sim, ref = _pair(with_options(ISLANDS, solver=solver, jacobian=jacobian), states)
    _check_sweep(sim, solver, ref)
    d_ours = sim.data
    worst = dict.fromkeys(("qacc", "efc_force", "qfrc_constraint"), 0.0)
    wrong, same_iter, several, coupled, free_dofs, by_contact = [], 0, 0, 0, 0, 0
    for i, d in enumerate(ref):
        n = d.nisland
        wrong += [(i, k) for k in _island_mismatches(sim, i, d)]
        same_iter += np.array_equal(d_ours.island_niter[i, : max(1, n)], d.solver_niter[: max(1, n)])
        several += n >= 2
        coupled += n >= 1 and np.max(d.island_ntree[:n]) >= 2
        free_dofs += n >= 1 and d.nidof < sim.model.nv
        trees = [sim.model.body_treeid[sim.model.geom_bodyid[c.geom]] for c in d.contact[: d.ncon]]
        by_contact += any(min(t) >= 0 for t in trees)  # a contact joins two trees
        worst["qacc"] = max(worst["qacc"], rel_err(d_ours.qacc[i], d.qacc))
        worst["efc_force"] = max(
            worst["efc_force"], rel_err(d_ours.efc_force[i, : d.nefc], d.efc_force[: d.nefc])
        )
        worst["qfrc_constraint"] = max(
            worst["qfrc_constraint"], rel_err(d_ours.qfrc_constraint[i], d.qfrc_constraint)
        )
    for name, err in worst.items():
        report(f"islands {solver} jacobian={jacobian} {name}", err, TOL, len(ref))
    counts = [d.nisland for d in ref]
    print(
        f"[islands] {solver} jacobian={jacobian}: {same_iter}/{len(ref)} states with every island's "
        f"iterations equal; {several} with >= 2 islands, {coupled} with a multi-tree island "
        f"({by_contact} joined by a contact), {free_dofs} with dofs in no island; "
        f"islands per state {min(counts)}..{max(counts)}"
    )
    assert len(ref) == N_STATES and several >= N_STATES // 2 and coupled >= 5 and free_dofs >= 5
    assert by_contact >= 10
    assert not wrong, f"island fields off MuJoCo's (row, field): {wrong[:10]}"
    assert same_iter == len(ref)
    assert np.all(d_ours.solver_niter == d_ours.island_niter.sum(axis=1))
    for name, err in worst.items():
        assert err <= TOL, f"{name} off MuJoCo by {err:.3e}"


@pytest.mark.parametrize("jacobian", ["dense", "sparse"])
@pytest.mark.parametrize("sweep_solver", SWEEPS, indirect=True)
def test_islands_elliptic(sweep_solver: str, jacobian: str):
    """The elliptic cone, island by island: under Newton each cone's Hessian added on its
    island's dofs; under PGS each contact's rows one block of its island's shuffled order
    (its QCQP, the Nesterov step's projection onto its cone), and the dual states of every
    row after all islands. Islands, every island's iterations, qacc and efc_force equal
    MuJoCo's; under PGS efc_state too (MuJoCo's dualFinish), except that a force on the
    cone's surface may read SATISFIED or CONE by rounding (accepted only there). (After
    Newton MuJoCo's island solver leaves the warm start's states: not compared.) PGS on
    each island's AR and on M^-1 J^T f."""
    solver = sweep_solver
    states = _states()
    sim, ref = _pair(with_options(ISLANDS, solver=solver, cone="elliptic", jacobian=jacobian), states)
    _check_sweep(sim, solver, ref)
    worst = wrong = same = several = sliding = state_diff = boundary = 0
    elliptic = int(mujoco.mjtConstraint.mjCNSTR_CONTACT_ELLIPTIC)
    for i, d in enumerate(ref):
        k = max(1, d.nisland)
        wrong += bool(_island_mismatches(sim, i, d))
        same += np.array_equal(sim.data.island_niter[i, :k], d.solver_niter[:k])
        worst = max(worst, rel_err(sim.data.qacc[i], d.qacc))
        worst = max(worst, rel_err(sim.data.efc_force[i, : d.nefc], d.efc_force[: d.nefc]))
        contact_islands = {int(d.efc_island[r]) for r in range(d.nefc) if d.efc_type[r] == elliptic}
        several += len(contact_islands) >= 2
        f = sim.data.efc_force[i]
        slides = False
        r = 0
        while r < d.nefc:
            dim = int(d.contact.dim[d.efc_id[r]]) if d.efc_type[r] == elliptic else 1
            slack = 1.0  # f_n - |f_t / mu|: 0 on the cone's surface
            if dim > 1:
                fr = d.contact.friction[d.efc_id[r]]
                slack = f[r] - np.sqrt(np.sum((f[r + 1 : r + dim] / fr[: dim - 1]) ** 2))
                slides |= f[r] > 0 and abs(slack) <= 1e-9 * max(1.0, f[r])
            states = sim.data.efc_state[i, r : r + dim]
            if solver == "PGS" and np.any(states != d.efc_state[r : r + dim]):
                on_surface = abs(slack) <= 1e-12 * max(1.0, abs(f[r]))
                boundary += on_surface
                state_diff += not on_surface
            r += dim
        sliding += slides
    report(f"islands {solver} jacobian={jacobian} elliptic qacc and efc_force", worst, TOL, len(ref))
    print(
        f"[islands] {solver} jacobian={jacobian} elliptic: {same}/{len(ref)} states with every "
        f"island's iterations equal, {several} with elliptic contacts in >= 2 islands, {sliding} "
        f"with a contact sliding (on its cone); efc_state differs in {state_diff} rows off a cone's "
        f"surface, "
        f"{boundary} contacts on it"
    )
    assert wrong == 0 and same == len(ref) and sliding >= 5 and several >= 10
    assert state_diff == 0
    assert worst <= TOL


@pytest.mark.parametrize("solver", SOLVERS)
def test_island_invariants(solver: str):
    """Without an oracle: an island's rows touch only its dofs (J is zero elsewhere), the
    dofs in no island have exactly qacc_smooth and no constraint force, the maps are
    inverse permutations, and the row's iterations are the sum of its islands'."""
    states = _states()
    sim = engine.Simulator(engine.load_mjcf(with_options(ISLANDS, solver=solver)), batch=N_STATES)
    set_state(sim, states)
    sim.forward()
    d = sim.data
    J = engine.dense_efc_J(sim.model, d)
    nv = sim.model.nv
    checked = 0
    for i in range(N_STATES):
        n, nefc = d.nisland[i], d.nefc[i]
        if n == 0:
            continue
        for r in range(nefc):
            outside = d.dof_island[i] != d.efc_island[i, r]
            assert not np.any(J[i, r, outside]), f"row {r} of state {i} moves dofs outside its island"
        free = d.dof_island[i] < 0
        assert np.array_equal(d.qacc[i, free], d.qacc_smooth[i, free])
        assert not np.any(d.qfrc_constraint[i, free])
        assert np.array_equal(d.map_idof2dof[i, d.map_dof2idof[i]], np.arange(nv))
        assert np.array_equal(d.map_iefc2efc[i, d.map_efc2iefc[i, :nefc]], np.arange(nefc))
        assert d.nidof[i] == np.sum(d.island_nv[i, :n]) == np.sum(~free)
        assert d.solver_niter[i] == np.sum(d.island_niter[i, :n])
        assert d.solver_converged[i] == np.min(d.island_converged[i, :n])
        checked += 1
    print(f"[islands] {solver}: invariants hold in {checked} states")
    assert checked >= N_STATES // 2


@pytest.mark.parametrize("solver", SOLVERS)
def test_islands_disabled(solver: str):
    """<flag island="disable"/>: one problem of all rows in both engines (nisland 0, the
    iterations in solver_niter[0]), the same iterations and qacc to rounding."""
    states = _states()
    sim, ref = _pair(with_options(ISLANDS, solver=solver, flags={"island": "disable"}), states)
    worst = max(rel_err(sim.data.qacc[i], d.qacc) for i, d in enumerate(ref))
    same = sum(int(d.solver_niter[0]) == int(sim.data.island_niter[i, 0]) for i, d in enumerate(ref))
    report(f"islands disabled {solver} qacc", worst, TOL, len(ref))
    assert all(d.nisland == 0 for d in ref) and np.all(sim.data.nisland == 0)
    assert same == len(ref) and np.array_equal(sim.data.solver_niter, sim.data.island_niter[:, 0])
    assert worst <= TOL


@pytest.mark.parametrize("solver", SOLVERS)
def test_island_trajectories(solver: str):
    """200 steps of mj_step from four states: the scenes' contacts come and go, islands
    merge and split, and the trajectories stay together to rounding."""
    states = {k: v[::10] for k, v in _states().items()}
    counts = []
    worst_q, worst_v = trajectory_errors(
        with_options(ISLANDS, solver=solver), states, N_STEP, on_step=lambda d: counts.append(d.nisland)
    )
    report(f"islands {solver} {N_STEP}-step qpos", worst_q, TOL_TRAJ, len(states["qpos"]))
    report(f"islands {solver} {N_STEP}-step qvel", worst_v, 100 * TOL_TRAJ, len(states["qpos"]))
    print(f"[islands] {solver} trajectories: {min(counts)}..{max(counts)} islands a step")
    assert max(counts) >= 3
    assert worst_q <= TOL_TRAJ
    assert worst_v <= 100 * TOL_TRAJ


@pytest.mark.parametrize("solver", SOLVERS)
def test_pile_trajectories_with_islands(solver: str):
    """The 40-body pile (nv = 240, so MuJoCo stores efc_J sparse and joins the trees of a
    row's stored columns) dropped with islands on, as MuJoCo runs it by default: 200 steps
    agree to rounding (test_contact_physics runs it with islands disabled)."""
    mj = mujoco.MjModel.from_xml_path(str(PILE))
    rng = np.random.default_rng(6)
    n = 2
    states = {
        "qpos": np.tile(mj.qpos0, (n, 1)),
        "qvel": rng.normal(0.0, 0.3, (n, mj.nv)),
        "ctrl": np.zeros((n, 0)),
        "qacc_warmstart": np.zeros((n, mj.nv)),
    }
    counts = []
    worst_q, worst_v = trajectory_errors(
        with_options(PILE, solver=solver), states, N_STEP, on_step=lambda d: counts.append(d.nisland)
    )
    report(f"pile with islands {solver} {N_STEP}-step qpos", worst_q, TOL_TRAJ, n)
    report(f"pile with islands {solver} {N_STEP}-step qvel", worst_v, 100 * TOL_TRAJ, n)
    print(f"[islands] pile {solver}: {min(counts)}..{max(counts)} islands a step")
    assert max(counts) >= 5
    assert worst_q <= TOL_TRAJ
    assert worst_v <= 100 * TOL_TRAJ


@pytest.mark.parametrize("solver", SOLVERS)
def test_islands_disabled_scale(solver: str):
    """With islands disabled the 4.0.0 binary scales the solver's improvement (and Newton's
    gradient) by 1 / (sum of M's diagonal over all dofs) at the current state, as it does an
    island's over its dofs; the 3.12 source's 1 / (meaninertia nv) is off by their ratio
    (1-2 % on the ant, whose M changes with its pose). Our last iteration's scaled
    improvement equals MuJoCo's solver stat to 1e-6 relative at 20 states of gymnasium's
    ant, with the same iteration count (a converged PGS sweep improves by ~1e-10, summed
    from smaller changes, so its rounding is ~1e-10 of it; a sweep that changes nothing
    improves by 0, so the error is taken relative to max(|MuJoCo's|, 1e-20)); the two scales
    differ there by
    more than 0.5 %, so the test tells them apart."""
    text = with_options(GYM_ASSETS / "ant.xml", solver=solver, flags={"island": "disable"})
    mj = mujoco.MjModel.from_xml_string(text)
    states = rollout_states(mj, 20, seed=3, every=5)
    sim, ref = _pair(text, states)
    worst = spread = 0.0
    M = np.zeros((mj.nv, mj.nv))
    for i, d in enumerate(ref):
        n = d.solver_niter[0]
        assert sim.data.nisland[i] == 0 and sim.data.island_niter[i, 0] == n
        last = d.solver[n - 1].improvement
        worst = max(worst, abs(sim.data.solver_improvement[i] - last) / max(abs(last), 1e-20))
        mujoco.mj_fullM(mj, d, M)
        spread = max(spread, abs(mj.stat.meaninertia * mj.nv / np.trace(M) - 1))
    report(f"islands disabled {solver}: scaled improvement vs MuJoCo's (ant)", worst, 1e-6, len(ref))
    assert spread > 5e-3
    assert worst <= 1e-6


# one tree with equality and friction-loss rows too: a free base, a limited hinge with friction
# loss coupled to a second hinge by a joint equality, falling on the floor
ONE_TREE = """
<mujoco>
  <worldbody>
    <geom type="plane" size="2 2 0.1"/>
    <body pos="0 0 0.4">
      <freejoint/>
      <geom type="box" size="0.2 0.1 0.05"/>
      <body pos="0.2 0 0">
        <joint name="a" type="hinge" axis="0 1 0" range="-0.5 0.5" frictionloss="0.2"/>
        <geom type="capsule" fromto="0 0 0 0.2 0 -0.1" size="0.03"/>
        <body pos="0.2 0 -0.1">
          <joint name="b" type="hinge" axis="0 1 0" frictionloss="0.1"/>
          <geom type="sphere" size="0.05"/>
        </body>
      </body>
    </body>
  </worldbody>
  <equality><joint joint1="b" joint2="a" polycoef="0 0.5 0 0 0"/></equality>
  <actuator><motor joint="a"/></actuator>
</mujoco>
"""


@pytest.mark.parametrize("name", ["humanoid.xml", "ant.xml", "hopper.xml", "inline"])
def test_one_tree_islands_follow_mujoco(name: str, tmp_path):
    """A single robot on the floor (gymnasium's models as they ship, and ONE_TREE with
    equality and friction-loss rows: one kinematic tree each, the floor static):
    engine.island's one-tree path gives MuJoCo's islands, one island of every dof and row
    with identity maps, every field equal; and qacc equal to rounding."""
    path = GYM_ASSETS / name
    if name == "inline":
        path = tmp_path / "one_tree.xml"
        path.write_text(ONE_TREE)
    mj = mujoco.MjModel.from_xml_path(str(path))
    states = rollout_states(mj, 24, seed=5)
    sim, ref = _pair(path.read_text(), states)
    assert sim.model.ntree == 1 == mj.ntree and len(ref) == 24
    wrong = [(i, k) for i, d in enumerate(ref) for k in _island_mismatches(sim, i, d)]
    ne_nf = sum(int(d.island_ne[0] + d.island_nf[0]) for d in ref)
    worst = max(rel_err(sim.data.qacc[i], d.qacc) for i, d in enumerate(ref))
    report(f"one-tree islands {name} qacc", worst, TOL, len(ref))
    print(
        f"[islands] {name}: {len(ref)} states, rows {min(d.nefc for d in ref)}..{max(d.nefc for d in ref)}, "
        f"equality and friction rows {ne_nf}"
    )
    assert all(d.nisland == 1 for d in ref) and np.all(sim.data.nisland == 1)
    assert not wrong, f"island fields off MuJoCo's (row, field): {wrong[:10]}"
    assert worst <= TOL
    if name == "inline":
        assert all(d.island_ne[0] == 1 and d.island_nf[0] == 2 for d in ref)
