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

import engine
from tests.helpers import ASSETS, GYM_ASSETS, mj_efc_J, random_states, report, rollout_states, set_state

TOL = 1e-9
N_GYM = 60  # touching states per gymnasium model
N_EQUALITY = 150  # states of constraint_equality.xml
GYM_MODELS = ["ant.xml", "humanoid.xml", "hopper.xml", "walker2d.xml", "half_cheetah.xml"]
EQUALITY = ASSETS / "tests" / "constraint_equality.xml"

FLOAT_FIELDS = ("J", "pos", "margin", "diagA", "R", "D", "KBIP", "vel", "aref", "b")
INT_FIELDS = ("type", "id")


def mj_rows(mj: mujoco.MjModel, d: mujoco.MjData) -> dict[str, np.ndarray]:
    n = d.nefc
    out = {f: np.array(getattr(d, "efc_" + f)[:n]) for f in (*FLOAT_FIELDS, *INT_FIELDS) if f != "J"}
    out["J"] = mj_efc_J(mj, d)
    out["efc_address"] = np.array(d.contact.efc_address[: d.ncon])
    out["mu"] = np.array(d.contact.mu[: d.ncon])
    out["counts"] = (d.nefc, d.ne, d.nl, d.ncon)
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
    out["counts"] = (n, int(data.ne[i]), int(data.nl[i]), ncon)
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
        counts = f"(nefc, ne, nl, ncon) {ours['counts']} vs {ref['counts']}"
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
