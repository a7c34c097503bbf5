"""Oracle tests of the constraint rows (engine/constraint.py) against MuJoCo 4.0.0.

States come from MuJoCo rollouts: gymnasium's ant, humanoid, hopper, walker2d and
half_cheetah dropped onto the floor (touching states, joints often at their limits), and
our `assets/tests/constraint_equality.xml`, which has every supported row kind (connect
and weld with body and site semantics, joint coupling, limits on hinge, slide and a fixed
tendon with both sides within the margin, contacts of condim 1 and 3) and solver
parameters in every form (direct solref, refsafe clamping, solimp powers 1 and 3, a flat
impedance). Both engines run forward at the same state; the rows are compared one to one,
in MuJoCo's order: counts, types and ids exactly, then every efc_* array.

Tolerance: each array's error relative to max(1, max |MuJoCo's value|) <= 1e-9. The rows
repeat MuJoCo's arithmetic on geometry that agrees to ~1e-15 (test_smooth,
test_collision), so errors are rounding (worst seen ~1e-13, in aref, whose velocity terms
sum J qvel over the dofs in a different order).
"""

from __future__ import annotations

import functools

import mujoco
import numpy as np
import pytest

from robodyn import engine
from tests.helpers import (
    ASSETS,
    GYM_ASSETS,
    mj_efc_J,
    random_states,
    rel_err,
    report,
    rollout_states,
    set_state,
    with_options,
)

TOL = 1e-9
N_GYM = 60  # touching states per gymnasium model
N_EQUALITY = 150  # states of constraint_equality.xml
GYM_MODELS = ["ant.xml", "humanoid.xml", "hopper.xml", "walker2d.xml", "half_cheetah.xml"]
EQUALITY = ASSETS / "tests" / "constraint_equality.xml"

FLOAT_FIELDS = ("J", "pos", "margin", "frictionloss", "diagA", "R", "D", "KBIP", "vel", "aref", "b")
INT_FIELDS = ("type", "id")


def mj_rows(mj: mujoco.MjModel, d: mujoco.MjData) -> dict[str, np.ndarray]:
    n = d.nefc
    out = {f: np.array(getattr(d, "efc_" + f)[:n]) for f in (*FLOAT_FIELDS, *INT_FIELDS) if f != "J"}
    out["J"] = mj_efc_J(mj, d)
    out["efc_address"] = np.array(d.contact.efc_address[: d.ncon])
    out["mu"] = np.array(d.contact.mu[: d.ncon])
    out["counts"] = (d.nefc, d.ne, d.nf, d.nl, d.ncon)
    return out


def our_rows(sim: engine.Simulator, i: int, J: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Row i's constraint rows; efc_J expanded to dense (J: engine.dense_efc_J of the batch,
    if the caller has it)."""
    data = sim.data
    n = int(data.nefc[i])
    out = {f: np.array(getattr(data, "efc_" + f)[i, :n]) for f in (*FLOAT_FIELDS, *INT_FIELDS) if f != "J"}
    out["J"] = (engine.dense_efc_J(sim.model, data) if J is None else J)[i, :n]
    ncon = int(data.ncon[i])
    out["efc_address"] = np.array(data.contact_efc_address[i, :ncon])
    out["mu"] = np.array(data.contact_mu[i, :ncon])
    out["counts"] = (n, int(data.ne[i]), int(data.nf[i]), int(data.nl[i]), ncon)
    return out


class RowComparison:
    """Worst relative error per efc_* array over many states, rows compared one to one."""

    def __init__(self, label: str):
        self.label = label
        self.worst = dict.fromkeys((*FLOAT_FIELDS, "mu"), 0.0)
        self.nstate = 0
        self.nrow = 0
        self.types: dict[int, int] = {}

    def add(self, ref: dict, ours: dict, state: int) -> None:
        where = f"{self.label} state {state}"
        counts = f"(nefc, ne, nf, nl, ncon) {ours['counts']} vs {ref['counts']}"
        assert ours["counts"] == ref["counts"], f"{where}: {counts}"
        for name in (*INT_FIELDS, "efc_address"):
            assert np.array_equal(ours[name], ref[name]), f"{where}: {name} {ours[name]} vs {ref[name]}"
        for name in self.worst:
            if ref[name].size:
                scale = max(1.0, float(np.max(np.abs(ref[name]))))
                err = float(np.max(np.abs(ours[name] - ref[name]))) / scale
                self.worst[name] = max(self.worst[name], err)
        for t in ref["type"]:
            self.types[int(t)] = self.types.get(int(t), 0) + 1
        self.nstate += 1
        self.nrow += len(ref["type"])

    def check(self, min_states: int, min_rows: int) -> None:
        for name, err in self.worst.items():
            report(f"{self.label} efc_{name}", err, TOL, self.nrow)
        assert self.nstate >= min_states, f"{self.label}: compared {self.nstate} states < {min_states}"
        assert self.nrow >= min_rows, f"{self.label}: compared {self.nrow} rows < {min_rows}"
        for name, err in self.worst.items():
            assert err <= TOL, f"{self.label}: efc_{name} off MuJoCo by {err:.3e} (relative) > {TOL:.0e}"


def compare_rows(label: str, source, mj: mujoco.MjModel, states: dict) -> RowComparison:
    """forward() every state in one batch, mj_forward each in MuJoCo; compare the rows."""
    n = len(states["qpos"])
    sim = engine.Simulator(engine.load_mjcf(source), batch=n)
    set_state(sim, states)
    sim.forward()
    d = mujoco.MjData(mj)
    result = RowComparison(label)
    J = engine.dense_efc_J(sim.model, sim.data)
    for i in range(n):
        set_state(None, states, d, i)
        mujoco.mj_forward(mj, d)
        result.add(mj_rows(mj, d), our_rows(sim, i, J), i)
    return result


@functools.cache
def _gym(name: str) -> mujoco.MjModel:
    return mujoco.MjModel.from_xml_path(str(GYM_ASSETS / name))


@pytest.mark.parametrize("name", GYM_MODELS)
def test_gym_rows(name: str):
    """Limits and contacts of a gymnasium robot dropped on the floor, row for row."""
    mj = _gym(name)
    states = rollout_states(mj, N_GYM, seed=sum(map(ord, name)), vel=3.0)
    result = compare_rows(f"{name}", str(GYM_ASSETS / name), mj, states)
    result.check(N_GYM, 4 * N_GYM)
    assert result.types.get(mujoco.mjtConstraint.mjCNSTR_CONTACT_PYRAMIDAL, 0) >= 4 * N_GYM


@pytest.mark.parametrize("name", GYM_MODELS)
def test_gym_limit_rows(name: str):
    """Random poses (joints up to 1.5 rad off qpos0, so often past a limit, and limbs
    through the floor and each other): limit rows on every limited joint."""
    mj = _gym(name)
    qpos, qvel, ctrl = random_states(mj, N_GYM, seed=11)
    states = {"qpos": qpos, "qvel": qvel, "ctrl": ctrl, "qacc_warmstart": np.zeros_like(qvel)}
    result = compare_rows(f"{name} random pose", str(GYM_ASSETS / name), mj, states)
    result.check(N_GYM, N_GYM)
    assert result.types.get(mujoco.mjtConstraint.mjCNSTR_LIMIT_JOINT, 0) >= N_GYM


def test_equality_model_rows():
    """Every supported row kind and solref/solimp form (constraint_equality.xml)."""
    mj = mujoco.MjModel.from_xml_path(str(EQUALITY))
    states = rollout_states(mj, N_EQUALITY, seed=7, every=5, touching=False, vel=2.0)
    result = compare_rows("constraint_equality", EQUALITY, mj, states)
    result.check(N_EQUALITY, 20 * N_EQUALITY)
    C = mujoco.mjtConstraint
    for kind in (C.mjCNSTR_EQUALITY, C.mjCNSTR_LIMIT_JOINT, C.mjCNSTR_LIMIT_TENDON):
        assert result.types.get(int(kind), 0) >= 50, f"{kind.name}: {result.types.get(int(kind), 0)} rows"
    for kind in (C.mjCNSTR_CONTACT_FRICTIONLESS, C.mjCNSTR_CONTACT_PYRAMIDAL):
        assert result.types.get(int(kind), 0) >= 20, f"{kind.name}: {result.types.get(int(kind), 0)} rows"


FRICTION = ASSETS / "tests" / "constraint_friction.xml"


def test_friction_loss_rows():
    """Friction-loss rows (constraint_friction.xml: a slide, three hinges and a fixed
    tendon with frictionloss, one with its own solreffriction/solimpfriction) beside limit
    and contact rows: J (a unit row, or the tendon's), the bound, R, D, K = 0 and aref =
    -B vel, row for row."""
    mj = mujoco.MjModel.from_xml_path(str(FRICTION))
    states = rollout_states(mj, 60, seed=4, every=5, touching=False, vel=2.0)
    result = compare_rows("constraint_friction", FRICTION, mj, states)
    result.check(60, 5 * 60)
    C = mujoco.mjtConstraint
    assert result.types.get(int(C.mjCNSTR_FRICTION_DOF), 0) == 4 * 60
    assert result.types.get(int(C.mjCNSTR_FRICTION_TENDON), 0) == 60
    for kind, least in ((C.mjCNSTR_LIMIT_JOINT, 10), (C.mjCNSTR_CONTACT_PYRAMIDAL, 40)):
        assert result.types.get(int(kind), 0) >= least, f"{kind.name}: {result.types.get(int(kind), 0)} rows"


BALL = ASSETS / "tests" / "constraint_ball_limit.xml"


def test_ball_limit_rows():
    """Limited ball joints (constraint_ball_limit.xml: two cones, one with a margin and its
    own solref/solimp) beside a hinge limit and contacts, row for row."""
    mj = mujoco.MjModel.from_xml_path(str(BALL))
    states = rollout_states(mj, 60, seed=3, every=10, touching=False, vel=3.0)
    result = compare_rows("constraint_ball_limit", BALL, mj, states)
    result.check(60, 40)
    C = mujoco.mjtConstraint
    assert result.types.get(int(C.mjCNSTR_LIMIT_JOINT), 0) >= 40
    assert result.types.get(int(C.mjCNSTR_CONTACT_PYRAMIDAL), 0) >= 40


def test_ball_limit_row_is_the_angle_past_the_cone():
    """A ball joint turned by angle t about a unit axis u (quaternion (cos t/2, sin t/2 u))
    has a limit row exactly when max(range) - t < margin: pos = max(range) - t (negative
    past the cone), J = -u on its three dofs; none inside the cone. Analytic, the shoulder
    of constraint_ball_limit.xml (range 0.6 rad, no margin)."""
    sim = engine.Simulator(engine.load_mjcf(BALL), batch=4)
    rng = np.random.default_rng(0)
    angles = np.array([0.3, 0.59, 0.75, 2.5])
    axes = rng.normal(size=(4, 3))
    axes /= np.linalg.norm(axes, axis=1, keepdims=True)
    sim.data.qpos[:, 0] = np.cos(angles / 2)
    sim.data.qpos[:, 1:4] = np.sin(angles / 2)[:, None] * axes
    sim.forward()
    for i, (t, u) in enumerate(zip(angles, axes, strict=True)):
        n = sim.data.nefc[i]
        shoulder = (sim.data.efc_type[i, :n] == mujoco.mjtConstraint.mjCNSTR_LIMIT_JOINT) & (
            sim.data.efc_id[i, :n] == 0
        )
        assert shoulder.sum() == (1 if t > 0.6 else 0), f"angle {t}"
        if t > 0.6:
            r = int(np.flatnonzero(shoulder)[0])
            assert sim.data.efc_pos[i, r] == pytest.approx(0.6 - t, abs=1e-14)
            J = engine.dense_efc_J(sim.model, sim.data)[i, r]
            np.testing.assert_allclose(J[:3], -u, atol=1e-14)
            assert np.all(J[3:] == 0.0)


def test_both_limit_sides_and_inactive_equality():
    """A joint whose range is narrower than its margin has both limit rows at once; an
    equality with active="false" has none until Data.eq_active switches it on."""
    mj = mujoco.MjModel.from_xml_path(str(EQUALITY))
    model = engine.load_mjcf(EQUALITY)
    sim = engine.Simulator(model, batch=2)
    sim.data.eq_active[1, :] = 1  # row 1: the inactive site connect as well
    sim.forward()
    elbow = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_JOINT, "elbow")
    for i in range(2):
        limit = sim.data.efc_type[i, : sim.data.nefc[i]] == mujoco.mjtConstraint.mjCNSTR_LIMIT_JOINT
        ids = sim.data.efc_id[i, : sim.data.nefc[i]][limit]
        assert np.sum(ids == elbow) == 2
    assert sim.data.ne[1] == sim.data.ne[0] + 3
    d = mujoco.MjData(mj)
    d.eq_active[:] = 1
    mujoco.mj_forward(mj, d)
    result = RowComparison("all equalities active")
    result.add(mj_rows(mj, d), our_rows(sim, 1), 1)
    result.check(1, 20)


def test_rows_disabled_by_flags():
    """<flag equality/limit/contact="disable"> remove those rows, as in MuJoCo."""
    text = EQUALITY.read_text()
    mj0 = mujoco.MjModel.from_xml_path(str(EQUALITY))
    states = rollout_states(mj0, 20, seed=3, every=5, touching=False, vel=2.0)
    for flag in ("equality", "limit", "contact", "constraint"):
        option = f'<option timestep="0.004"><flag {flag}="disable"/></option>'
        variant = text.replace('<option timestep="0.004"/>', option)
        assert variant != text
        mj = mujoco.MjModel.from_xml_string(variant)
        result = compare_rows(f"{flag} disabled", variant, mj, states)
        result.check(20, 0 if flag == "constraint" else 20)
    text = FRICTION.read_text()
    no_friction = '<option timestep="0.002"><flag frictionloss="disable"/></option>'
    variant = text.replace('<option timestep="0.002"/>', no_friction)
    assert variant != text
    mj = mujoco.MjModel.from_xml_string(variant)
    states = rollout_states(mj, 20, seed=3, every=5, touching=False, vel=2.0)
    result = compare_rows("frictionloss disabled", variant, mj, states)
    result.check(20, 20)
    assert not result.types.get(int(mujoco.mjtConstraint.mjCNSTR_FRICTION_DOF), 0)


# ---- compact rows ------------------------------------------------------------------------------

PILE = ASSETS / "tests" / "constraint_pile.xml"  # 40 free bodies on a floor, nv = 240
TOL_J = 1e-12  # the expanded rows against MuJoCo's efc_J (relative to max(1, |J|))
COMPACT_MODELS = {
    "constraint_pile.xml": PILE,
    "humanoid.xml": GYM_ASSETS / "humanoid.xml",
    "ant.xml": GYM_ASSETS / "ant.xml",
    "constraint_equality.xml": EQUALITY,
}


def _pile_states(n: int, seed: int) -> dict[str, np.ndarray]:
    """n states along MuJoCo rollouts of the pile (the upper layer landing on the lower
    one from step ~100), from random initial velocities."""
    mj = mujoco.MjModel.from_xml_path(str(PILE))
    rng = np.random.default_rng(seed)
    d = mujoco.MjData(mj)
    out: dict[str, list] = {k: [] for k in ("qpos", "qvel", "ctrl", "qacc_warmstart")}
    while len(out["qpos"]) < n:
        mujoco.mj_resetData(mj, d)
        d.qvel[:] = rng.normal(0.0, 0.3, mj.nv)
        for t in range(400):
            mujoco.mj_step(mj, d)
            if t % 40 == 39 and len(out["qpos"]) < n:
                for k in out:
                    out[k].append(getattr(d, k).copy())
    return {k: np.array(v) for k, v in out.items()}


def _compact_states(name: str) -> tuple[dict, int]:
    path = COMPACT_MODELS[name]
    if path == PILE:
        return _pile_states(20, seed=4), 20
    mj = mujoco.MjModel.from_xml_path(str(path))
    return rollout_states(mj, 30, seed=9, every=5, touching=path != EQUALITY, vel=2.0), 30


@pytest.mark.parametrize("name", list(COMPACT_MODELS))
def test_compact_rows_are_mujocos_sparse_rows(name: str):
    """With jacobian="sparse" each compact row holds exactly the columns of MuJoCo's sparse
    efc_J row (its merged dof chain: mj_mergeChain, without the common ancestors for a
    contact), ascending, within nv and nefcdof, and expanded to dense it equals MuJoCo's
    sparse efc_J, so no value outside a row's columns is ever needed; with
    jacobian="dense" every row stores all nv dofs in order and equals MuJoCo's dense efc_J."""
    path = COMPACT_MODELS[name]
    states, n = _compact_states(name)
    worst = {"sparse": 0.0, "dense": 0.0}
    nrow = 0
    for mode in ("sparse", "dense"):
        text = with_options(path, jacobian=mode)
        mj = mujoco.MjModel.from_xml_string(text)
        sim = engine.Simulator(engine.load_mjcf(text), batch=n)
        set_state(sim, states)
        sim.forward()
        data, nv, width = sim.data, sim.model.nv, sim.model.nefcdof
        J = engine.dense_efc_J(sim.model, data)
        d = mujoco.MjData(mj)
        for i in range(n):
            set_state(None, states, d, i)
            mujoco.mj_forward(mj, d)
            nefc = int(data.nefc[i])
            assert nefc == d.nefc, f"{name} state {i}: nefc {nefc} vs MuJoCo {d.nefc}"
            assert np.array_equal(data.efc_type[i, :nefc], d.efc_type) and np.array_equal(
                data.efc_id[i, :nefc], d.efc_id
            )
            worst[mode] = max(worst[mode], rel_err(J[i, :nefc], mj_efc_J(mj, d)))
            assert np.all(J[i, nefc:] == 0)
            for r in range(nefc):
                nnz = int(data.efc_J_rownnz[i, r])
                col = data.efc_J_colind[i, r, :nnz]
                assert nnz <= width and np.all(np.diff(col) > 0) and (nnz == 0 or 0 <= col[0] <= col[-1] < nv)
                if mode == "dense":  # stored dense, as MuJoCo: every dof, in order
                    assert nnz == nv and np.array_equal(col, np.arange(nv)), f"{name} row {r}: {col}"
                else:
                    adr = d.efc_J_rowadr[r]
                    theirs = d.efc_J_colind[adr : adr + d.efc_J_rownnz[r]]
                    assert np.array_equal(col, theirs), (
                        f"{name} state {i} row {r}: columns {col} vs MuJoCo {theirs}"
                    )
            nrow += nefc
    for mode, err in worst.items():
        report(f"{name} expanded efc_J vs MuJoCo's {mode} efc_J", err, TOL_J, nrow // 2)
    assert nrow >= 2 * 4 * n, f"{name}: compared only {nrow // 2} rows"
    for mode, err in worst.items():
        assert err <= TOL_J, f"{name}: expanded efc_J off MuJoCo's {mode} efc_J by {err:.3e}"


def test_many_bodies_rows_are_compact_and_match_mujoco():
    """40 free bodies (nv = 240): no row touches more than two bodies' 12 dofs, so a row
    of efc_J (values, columns, count) and of PGS's M^-1 J^T takes a small fraction of the
    dense layout's nv doubles; the contacts and every efc_* array equal MuJoCo's (which
    stores efc_J sparse at this nv), rows one to one in MuJoCo's order."""
    text = with_options(PILE, solver="PGS")  # PGS: Data also holds the rows of M^-1 J^T
    model = engine.load_mjcf(text)
    nv, width, tree_width = model.nv, model.nefcdof, model.nefctreedof
    assert nv == 240 and width <= 12 and tree_width <= 12
    sizes = engine.data.data_bytes(model, 1)
    compact = sum(v for k, v in sizes.items() if k.startswith(("efc_J", "scratch_efc_Y"))) / model.nefcmax
    dense = 2 * 8 * nv  # efc_J and M^-1 J^T as nv doubles a row
    total = sum(sizes.values())
    dense_total = total - compact * model.nefcmax + dense * model.nefcmax
    print(
        f"[compact] pile: nv={nv} nefcdof={width} nefctreedof={tree_width}: {compact:.0f} bytes a "
        f"constraint row (dense {dense}); Data {total / 2**20:.2f} MiB per environment "
        f"(with dense rows {dense_total / 2**20:.2f} MiB)"
    )
    assert compact <= dense / 8
    mj = mujoco.MjModel.from_xml_string(text)
    assert mujoco.mj_isSparse(mj)
    states = _pile_states(20, seed=5)
    sim = engine.Simulator(model, batch=20)
    set_state(sim, states)
    sim.forward()
    J = engine.dense_efc_J(model, sim.data)
    result = RowComparison("pile")
    d = mujoco.MjData(mj)
    worst_contact = 0.0
    for i in range(20):
        set_state(None, states, d, i)
        mujoco.mj_forward(mj, d)
        ncon = d.ncon
        assert np.array_equal(sim.data.contact_geom[i, :ncon], d.contact.geom)
        for ours, theirs in (
            ("contact_pos", d.contact.pos),
            ("contact_frame", d.contact.frame),
            ("contact_dist", d.contact.dist),
        ):
            worst_contact = max(worst_contact, rel_err(getattr(sim.data, ours)[i, :ncon], theirs))
        result.add(mj_rows(mj, d), our_rows(sim, i, J), i)
    report("pile contacts (pos, frame, dist)", worst_contact, TOL, result.nstate)
    result.check(20, 20 * 100)
    report("pile efc_J (expanded) vs MuJoCo", result.worst["J"], TOL_J, result.nrow)
    assert worst_contact <= TOL and result.worst["J"] <= TOL_J
    assert result.types.get(mujoco.mjtConstraint.mjCNSTR_CONTACT_PYRAMIDAL, 0) >= 20 * 100
