"""Oracle tests of the constraint solvers (engine/solver.py) against MuJoCo 4.0.0.

The soft-constraint problem is strictly convex, so with the same rows (test_constraint)
its solution qacc is unique: we compare converged answers, never iterates. Both engines
solve the same states (MuJoCo rollouts: gymnasium robots dropped on the floor, and
constraint_equality.xml) with the same warm start:

- Newton against MuJoCo's Newton, both with a tight tolerance (1e-15, 200 iterations):
  qacc within 1e-6 relative to max(1, max |qacc|) (worst seen ~1e-11);
- PGS with many iterations (3000, tolerance 1e-15) against MuJoCo's tight Newton: within
  1e-4 relative (PGS converges only linearly, so its iterates creep towards the answer);
- the forces lie in the pyramidal friction cone (every edge force >= 0, so
  |f_tangent_k| <= mu_k f_normal); forward and inverse dynamics agree with MuJoCo's
  mj_inverse and with each other; the per-row solver report is consistent.

With the models' own (loose) settings the answer depends on the iterations, so that test
checks that ours are MuJoCo's: the same iteration count on every island and qacc to
rounding (tests/engine/test_islands.py tests the islands themselves).
"""

from __future__ import annotations

import functools

import mujoco
import numpy as np
import pytest

from robodyn import engine
from tests.helpers import ASSETS, GYM_ASSETS, rel_err, report, rollout_states, set_state, with_options

N_STATES = 40  # states per model
GYM_MODELS = ["ant.xml", "humanoid.xml", "hopper.xml", "walker2d.xml", "half_cheetah.xml"]
EQUALITY = ASSETS / "tests" / "constraint_equality.xml"
FRICTION = ASSETS / "tests" / "constraint_friction.xml"  # friction-loss rows (one tree: one island)
BALL = ASSETS / "tests" / "constraint_ball_limit.xml"  # ball-joint limits (one tree)
CONDIM = ASSETS / "tests" / "constraint_condim.xml"  # condim 1, 3, 4, 6 (four free bodies: islands)
MODELS = [*(GYM_ASSETS / n for n in GYM_MODELS), EQUALITY, FRICTION, BALL, CONDIM]
TIGHT = dict(tolerance="1e-15", iterations="200")
TOL_NEWTON = 1e-6
TOL_PGS = 1e-4


@functools.cache
def _states(path) -> dict[str, np.ndarray]:
    mj = mujoco.MjModel.from_xml_path(str(path))
    if path in (EQUALITY, FRICTION):
        return rollout_states(mj, N_STATES, seed=5, every=5, touching=False, vel=2.0)
    if path == BALL:
        return rollout_states(mj, N_STATES, seed=3, every=10, touching=False, vel=3.0)
    return rollout_states(mj, N_STATES, seed=sum(map(ord, path.name)) + 1, vel=2.0)


def _ours(text: str, states: dict) -> engine.Simulator:
    sim = engine.Simulator(engine.load_mjcf(text), batch=len(states["qpos"]))
    set_state(sim, states)
    sim.forward()
    return sim


def _mujoco(text: str, states: dict) -> list[mujoco.MjData]:
    mj = mujoco.MjModel.from_xml_string(text)
    out = []
    for i in range(len(states["qpos"])):
        d = mujoco.MjData(mj)
        set_state(None, states, d, i)
        mujoco.mj_forward(mj, d)
        out.append(d)
    return out


def _text(path, **options) -> str:
    return with_options(path, **options)


@functools.cache
def _mujoco_tight(path) -> list[mujoco.MjData]:
    return _mujoco(_text(path, solver="Newton", **TIGHT), _states(path))


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.name)
def test_newton_converged_qacc(path):
    """Newton, tight tolerance: qacc, efc_force and qfrc_constraint equal MuJoCo's."""
    states = _states(path)
    sim = _ours(_text(path, solver="Newton", **TIGHT), states)
    ref = _mujoco_tight(path)
    worst = dict.fromkeys(("qacc", "efc_force", "qfrc_constraint"), 0.0)
    nrow = 0
    for i, d in enumerate(ref):
        n = d.nefc
        nrow += n
        worst["qacc"] = max(worst["qacc"], rel_err(sim.data.qacc[i], d.qacc))
        worst["efc_force"] = max(worst["efc_force"], rel_err(sim.data.efc_force[i, :n], d.efc_force[:n]))
        worst["qfrc_constraint"] = max(
            worst["qfrc_constraint"], rel_err(sim.data.qfrc_constraint[i], d.qfrc_constraint)
        )
    for name, err in worst.items():
        report(f"{path.name} Newton {name}", err, TOL_NEWTON, len(ref))
    assert len(ref) >= N_STATES and nrow >= (N_STATES if path == BALL else 4 * N_STATES)
    assert np.all(sim.data.solver_converged == 1)
    for name, err in worst.items():
        assert err <= TOL_NEWTON, f"{path.name}: {name} off MuJoCo by {err:.3e}"


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.name)
def test_pgs_converged_qacc(path):
    """PGS with many iterations reaches the Newton solution (MuJoCo's, tight)."""
    states = _states(path)
    sim = _ours(_text(path, solver="PGS", iterations="3000", tolerance="1e-15"), states)
    ref = _mujoco_tight(path)
    worst = max(rel_err(sim.data.qacc[i], d.qacc) for i, d in enumerate(ref))
    report(f"{path.name} PGS (3000 iterations) qacc vs MuJoCo Newton", worst, TOL_PGS, len(ref))
    print(f"[solver] {path.name} PGS iterations: mean {sim.data.solver_niter.mean():.0f}")
    assert len(ref) >= N_STATES
    assert worst <= TOL_PGS


def _cone_violation(sim: engine.Simulator) -> tuple[float, int]:
    """Largest violation of the pyramidal cone over every contact of every row, relative
    to the normal force: -min(edge force) and |f_t_k| - mu_k f_n."""
    d = sim.data
    forces = sim.contact_force()
    worst = 0.0
    count = 0
    for i in range(sim.batch):
        for c in range(d.ncon[i]):
            adr = d.contact_efc_address[i, c]
            if adr < 0:
                continue
            dim = d.contact_dim[i, c]
            rows = 1 if dim == 1 else 2 * (dim - 1)
            edges = d.efc_force[i, adr : adr + rows]
            fn = forces[i, c, 0]
            scale = max(1.0, abs(fn))
            worst = max(worst, -float(edges.min()) / scale)
            for k in range(dim - 1):
                excess = abs(forces[i, c, 1 + k]) - d.contact_friction[i, c, k] * fn
                worst = max(worst, excess / scale)
            count += 1
    return worst, count


@pytest.mark.parametrize("solver", ["Newton", "PGS"])
@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.name)
def test_forces_in_friction_cone(path, solver):
    """Every contact force of the solution lies in the pyramidal friction cone."""
    sim = _ours(_text(path, solver=solver), _states(path))
    worst, count = _cone_violation(sim)
    report(f"{path.name} {solver} cone violation (relative)", worst, 1e-12, count)
    assert count >= (N_STATES // 4 if path in (FRICTION, BALL) else N_STATES)
    assert worst <= 1e-12


@pytest.mark.parametrize("solver", ["Newton", "PGS"])
def test_friction_loss_forces_within_their_bounds(solver):
    """Every friction-loss force is within +-frictionloss; the rows at a bound (slipping)
    are in state LINEARNEG/LINEARPOS with the force's sign, the others QUADRATIC (sticking),
    and the test states hold both kinds."""
    sim = _ours(_text(FRICTION, solver=solver), _states(FRICTION))
    d = sim.data
    worst, at_bound, inside = 0.0, 0, 0
    for i in range(sim.batch):
        lo, hi = d.ne[i], d.ne[i] + d.nf[i]
        f, bound, state = d.efc_force[i, lo:hi], d.efc_frictionloss[i, lo:hi], d.efc_state[i, lo:hi]
        worst = max(worst, float(np.max((np.abs(f) - bound) / bound)))
        sliding = np.abs(f) >= bound * (1 - 1e-12)
        at_bound += int(sliding.sum())
        inside += int((~sliding).sum())
        assert np.all(state[~sliding] == 1)  # mjCNSTRSTATE_QUADRATIC
        expect = np.where(f[sliding] > 0, 2, 3)  # +f: LINEARNEG (jar <= -Rf), -f: LINEARPOS
        assert np.array_equal(state[sliding], expect)
    label = f"constraint_friction {solver} friction force beyond its bound (relative)"
    report(label, worst, 1e-12, sim.batch)
    assert worst <= 1e-12
    assert at_bound >= 20 and inside >= 20, (at_bound, inside)


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.name)
def test_inverse_matches_mujoco(path):
    """mj_inverse at an arbitrary qacc: the soft-constraint forces of that qacc
    (efc_force = -D (J qacc - aref) on active rows) and qfrc_inverse, as MuJoCo."""
    states = _states(path)
    text = _text(path)
    sim = _ours(text, states)
    rng = np.random.default_rng(0)
    qacc = rng.normal(0.0, 20.0, sim.data.qacc.shape)
    sim.data.qacc[:] = qacc
    sim.inverse()
    ref = _mujoco(text, states)
    mj = mujoco.MjModel.from_xml_string(text)
    worst = dict.fromkeys(("qfrc_inverse", "efc_force"), 0.0)
    for i, d in enumerate(ref):
        d.qacc[:] = qacc[i]
        mujoco.mj_inverse(mj, d)
        worst["qfrc_inverse"] = max(worst["qfrc_inverse"], rel_err(sim.data.qfrc_inverse[i], d.qfrc_inverse))
        force = rel_err(sim.data.efc_force[i, : d.nefc], d.efc_force[: d.nefc])
        worst["efc_force"] = max(worst["efc_force"], force)
    for name, err in worst.items():
        report(f"{path.name} inverse {name}", err, 1e-9, len(ref))
        assert err <= 1e-9


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.name)
def test_forward_inverse_round_trip(path):
    """Inverse dynamics at Newton's converged qacc gives back the applied forces:
    qfrc_inverse = qfrc_applied + qfrc_actuator (no oracle needed)."""
    states = _states(path)
    sim = _ours(_text(path, solver="Newton", **TIGHT), states)
    expected = sim.data.qfrc_actuator + sim.data.qfrc_applied
    sim.inverse()
    worst = max(rel_err(sim.data.qfrc_inverse[i], expected[i]) for i in range(sim.batch))
    report(f"{path.name} forward/inverse round trip", worst, 1e-8, sim.batch)
    assert worst <= 1e-8


def test_solver_report():
    """solver_niter / _improvement / _gradient / _converged: no rows, nothing to do; a
    tight Newton solve converges with a gradient below tolerance; PGS stopped after one
    sweep has not converged; a solve warm-started at its own solution takes at most one
    iteration (none where MuJoCo's certificate accepts the warm start)."""
    states = _states(GYM_ASSETS / "ant.xml")
    n = len(states["qpos"])
    sim = _ours(_text(GYM_ASSETS / "ant.xml", solver="Newton", tolerance="1e-10"), states)
    d = sim.data
    rows = d.nefc > 0
    assert np.sum(rows) >= n // 2
    assert np.all(d.solver_niter[~rows] == 0) and np.any(d.solver_niter[rows] >= 2)
    assert np.all(d.solver_converged == 1)
    print(f"[solver] ant Newton: iterations {d.solver_niter[rows].min()}..{d.solver_niter.max()}")
    # warm start at the solution: at most one iteration, the same answer
    qacc = d.qacc.copy()
    d.qacc_warmstart[:] = qacc
    sim.forward()
    at_once = int(np.sum(d.solver_niter[rows] == 0))
    print(f"[solver] warm-started at the solution: {at_once} of {np.sum(rows)} exit at once")
    assert np.all(d.solver_niter <= 1) and np.all(d.solver_converged == 1)
    assert max(rel_err(d.qacc[i], qacc[i]) for i in range(n)) < 1e-9
    one = _ours(_text(GYM_ASSETS / "ant.xml", solver="PGS", iterations="1"), states)
    assert np.all(one.data.solver_niter[rows] == 1) and not np.all(one.data.solver_converged[rows] == 1)
    free = _ours(_text(GYM_ASSETS / "ant.xml", flags={"constraint": "disable"}), states)
    assert np.all(free.data.nefc == 0) and np.all(free.data.solver_niter == 0)
    assert np.all(free.data.solver_converged == 1)
    np.testing.assert_array_equal(free.data.qacc, free.data.qacc_smooth)


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.name)
def test_default_settings_follow_mujoco(path):
    """With the model's own solver settings (not converged tightly), the solvers repeat
    MuJoCo's: the same iteration count on every island (island_niter against MuJoCo's
    solver_niter per island) and qacc to rounding; constraint_equality.xml and
    constraint_condim.xml, which have several islands, also with <flag island="disable"/>
    (MuJoCo's monolithic solve, its count in solver_niter[0])."""
    states = _states(path)
    for flags in [None, {"island": "disable"}] if path in (EQUALITY, CONDIM) else [None]:
        text = with_options(path, flags=flags)
        sim = _ours(text, states)
        ref = _mujoco(text, states)
        same = 0
        for i, d in enumerate(ref):
            k = max(1, d.nisland)
            same += d.nisland == sim.data.nisland[i] and np.array_equal(
                sim.data.island_niter[i, :k], d.solver_niter[:k]
            )
        worst = max(rel_err(sim.data.qacc[i], d.qacc) for i, d in enumerate(ref))
        label = f"{path.name} default settings{', islands disabled' if flags else ''}"
        print(f"[solver] {label}: {same}/{len(ref)} iteration counts equal MuJoCo's (every island)")
        report(f"{label} qacc", worst, 1e-9, len(ref))
        # every state compared, and in every one each island's count is MuJoCo's (the
        # solvers repeat its iterations; 11 cases x 40 states = the 440/440 in tests/README.md)
        assert len(ref) == N_STATES
        assert same == len(ref), f"{label}: {len(ref) - same} of {len(ref)} states with another count"
        assert worst <= 1e-9
