"""engine.Simulator contracts: snapshot/restore, row independence, threads, NaN handling, time.

Everything here is bit for bit (np.testing.assert_array_equal on float64 arrays), not within
a tolerance: the same state stepped the same number of times must give the same bits,
whatever else is in the batch, however many threads run it and however the steps are
grouped into calls. Models: integ_free.xml (free bodies, hinge children, damping, a motor)
under all four integrators for the determinism contracts, integ_damping.xml (gear-2 motor)
and the double pendulum for errors and time.
"""

from __future__ import annotations

import re
import warnings
import xml.etree.ElementTree as ET

import mujoco
import numpy as np
import pytest

from robodyn import engine
from robodyn.engine import types as T
from robodyn.engine.data import STATE_FIELDS
from tests.helpers import ASSETS, random_states, report

INTEGRATORS = ("Euler", "RK4", "implicit", "implicitfast")
FREE = ASSETS / "tests" / "integ_free.xml"
DAMPING = ASSETS / "tests" / "integ_damping.xml"
PENDULUM = ASSETS / "double_pendulum.xml"


def load(path, integrator: str | None = None) -> tuple[engine.Model, mujoco.MjModel]:
    root = ET.fromstring(path.read_text())
    if integrator is not None:
        root.find("option").set("integrator", integrator)
    text = ET.tostring(root, encoding="unicode")
    return engine.load_mjcf(text), mujoco.MjModel.from_xml_string(text)


def make_sim(path, batch: int, integrator: str | None = None, seed: int = 3, nthread: int = 1):
    """A Simulator whose rows hold distinct random states, controls and applied forces."""
    model, mj = load(path, integrator)
    sim = engine.Simulator(model, batch=batch, nthread=nthread)
    qpos, qvel, ctrl = random_states(mj, batch, seed=seed)
    rng = np.random.default_rng(seed + 100)
    sim.data.qpos[:] = qpos
    sim.data.qvel[:] = qvel
    sim.data.ctrl[:] = ctrl
    sim.data.qfrc_applied[:] = rng.uniform(-0.5, 0.5, sim.data.qfrc_applied.shape)
    sim.data.xfrc_applied[:, 1:] = rng.uniform(-0.5, 0.5, sim.data.xfrc_applied[:, 1:].shape)
    return sim


def state(sim, rows=slice(None)) -> dict[str, np.ndarray]:
    return {name: getattr(sim.data, name)[rows].copy() for name in STATE_FIELDS}


def all_fields(sim, rows=slice(None)) -> dict[str, np.ndarray]:
    return {name: getattr(sim.data, name)[rows].copy() for name in sim.data._fields}


def assert_same(a: dict, b: dict, what: str = "") -> None:
    assert a.keys() == b.keys()
    for name in a:
        np.testing.assert_array_equal(a[name], b[name], err_msg=f"{what}: field {name} differs")


def rows_of(fields: dict, rows) -> dict:
    return {name: value[rows] for name, value in fields.items()}


# --- snapshot / restore -----------------------------------------------------------------------
@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_snapshot_restore_is_bit_exact(integrator):
    sim = make_sim(FREE, batch=4, integrator=integrator)
    sim.step(7)  # not at the initial state, and time != 0
    before = state(sim)
    snap = sim.snapshot()
    assert snap.nstep == 7 and list(snap.rows) == [0, 1, 2, 3]
    sim.step(50)
    first = all_fields(sim)
    assert not np.array_equal(first["qpos"], before["qpos"])
    sim.restore(snap)
    assert_same(state(sim), before, "restored state")
    assert sim.nstep == 7
    sim.step(50)
    # every field, derived quantities and work space included, has the same bits again
    assert_same(all_fields(sim), first, "after restore + 50 steps")
    assert sim.nstep == 57
    # the snapshot is a copy: stepping did not change it
    assert_same(snap.fields, before, "snapshot contents")


def test_restore_subset_of_rows():
    sim = make_sim(FREE, batch=5, integrator="implicitfast")
    sim.step(3)
    ref = make_sim(FREE, batch=5, integrator="implicitfast")  # the same rows, never restored
    ref.step(3)
    snap = sim.snapshot(rows=[1, 3])
    assert list(snap.rows) == [1, 3]
    at_snap = state(sim, [1, 3])
    sim.step(50)
    ref.step(50)
    after50 = state(sim)
    sim.restore(snap)  # back into rows 1 and 3 only
    assert_same(state(sim, [1, 3]), at_snap, "restored rows 1, 3")
    assert_same(state(sim, [0, 2, 4]), rows_of(after50, [0, 2, 4]), "untouched rows 0, 2, 4")
    assert sim.nstep == 53  # a partial restore does not rewind the batch's step count
    sim.step(50)
    # rows 1 and 3 repeat their 50 steps bit for bit; rows 0, 2, 4 went on to 103 steps
    assert_same(state(sim, [1, 3]), rows_of(after50, [1, 3]), "rows 1, 3 after restore + 50")
    ref.step(50)
    assert_same(state(sim, [0, 2, 4]), state(ref, [0, 2, 4]), "rows 0, 2, 4 after 103 steps")


def test_restore_into_other_rows():
    sim = make_sim(PENDULUM, batch=4)
    snap = sim.snapshot(rows=[1, 3])
    expected = state(sim, [1, 3])
    untouched = state(sim, [1, 3])
    sim.restore(snap, rows=[0, 2])
    assert_same(state(sim, [0, 2]), expected, "rows 0, 2 from snapshot of rows 1, 3")
    assert_same(state(sim, [1, 3]), untouched, "source rows")
    sim.step(20)
    np.testing.assert_array_equal(sim.data.qpos[0], sim.data.qpos[1])
    np.testing.assert_array_equal(sim.data.qvel[2], sim.data.qvel[3])


def test_restore_refuses_snapshot_of_another_model():
    sim = make_sim(PENDULUM, batch=2)
    other = make_sim(DAMPING, batch=2)
    before = state(sim)
    with pytest.raises(ValueError, match="different model"):
        sim.restore(other.snapshot())
    assert_same(state(sim), before, "after refused restore")
    # same sizes, same masses, different timestep: a different model too
    root = ET.fromstring(PENDULUM.read_text())
    root.find("option").set("timestep", "0.001")
    fast = engine.Simulator(engine.load_mjcf(ET.tostring(root, encoding="unicode")), batch=2)
    with pytest.raises(ValueError, match="different model"):
        sim.restore(fast.snapshot())
    with pytest.raises(TypeError, match="Snapshot"):
        sim.restore(state(sim))
    assert_same(state(sim), before, "after refused restores")


def test_restore_refuses_wrong_number_of_rows():
    sim = make_sim(PENDULUM, batch=4)
    before = state(sim)
    snap = sim.snapshot(rows=[0, 1])
    with pytest.raises(ValueError, match="holds 2 rows"):
        sim.restore(snap, rows=[0, 1, 2])
    with pytest.raises(ValueError, match="holds 2 rows"):
        sim.restore(snap, rows=[3])
    with pytest.raises(ValueError, match="holds 2 rows"):
        sim.restore(snap, rows=np.ones(4, dtype=bool))
    # a whole-batch snapshot into a smaller batch: its rows do not exist there
    small = make_sim(PENDULUM, batch=3)
    small_before = state(small)
    with pytest.raises((ValueError, IndexError)):
        small.restore(sim.snapshot())
    assert_same(state(small), small_before, "smaller batch after refused restore")
    assert_same(state(sim), before, "after refused restores")


# --- row independence and threads ------------------------------------------------------------
@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_rows_are_independent(integrator):
    batch, odd = 4, 2
    sim = make_sim(FREE, batch=batch, integrator=integrator)
    # row 2 is far from the others: faster, larger controls and forces
    sim.data.qvel[odd] *= 4.0
    sim.data.ctrl[odd] = 3.0
    sim.data.qfrc_applied[odd] = 2.0
    start = state(sim)
    sim.step(60)
    for row in range(batch):
        if row == odd:
            continue
        alone = engine.Simulator(sim.model, batch=1, nthread=1)
        for name in STATE_FIELDS:
            getattr(alone.data, name)[0] = start[name][row]
        alone.step(60)
        assert_same(state(alone), state(sim, [row]), f"row {row} alone vs in the batch")
    # and changing the odd row again changes nothing for the others
    other = engine.Simulator(sim.model, batch=batch, nthread=1)
    for name in STATE_FIELDS:
        getattr(other.data, name)[:] = start[name]
    other.data.qvel[odd] = -start["qvel"][odd]
    other.step(60)
    rows = [r for r in range(batch) if r != odd]
    assert_same(state(other, rows), state(sim, rows), "other rows with a different odd row")
    assert not np.array_equal(other.data.qpos[odd], sim.data.qpos[odd])


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_threads_give_identical_results(integrator):
    one = make_sim(FREE, batch=6, integrator=integrator, nthread=1)
    two = make_sim(FREE, batch=6, integrator=integrator, nthread=2)
    assert one.nthread == 1 and two.nthread == 2
    assert_same(state(one), state(two), "initial")
    for nstep in (1, 17, 32):
        one.step(nstep)
        two.step(nstep)
    one.forward()
    two.forward()
    assert_same(all_fields(one), all_fields(two), "nthread 1 vs 2 after 50 steps")


# --- non-finite values -----------------------------------------------------------------------
_MESSAGE = re.compile(r"(\w+)\[[\d, ]+\] = \S+ in row (\d+) at step (\d+)")


def _parse(err: engine.NonFiniteError) -> tuple[str, int, int]:
    match = _MESSAGE.search(str(err))
    assert match, f"message does not name quantity, row and step: {err}"
    return match.group(1), int(match.group(2)), int(match.group(3))


@pytest.mark.parametrize(
    ("quantity", "poison"),
    [
        ("qvel", lambda d, r: d.qvel.__setitem__((r, 1), np.nan)),
        ("qfrc_applied", lambda d, r: d.qfrc_applied.__setitem__((r, 0), np.inf)),
        ("qpos", lambda d, r: d.qpos.__setitem__((r, 2), -np.inf)),
        ("xfrc_applied", lambda d, r: d.xfrc_applied.__setitem__((r, 3, 4), np.nan)),
    ],
)
def test_non_finite_raises_and_keeps_the_row(quantity, poison):
    sim = make_sim(DAMPING, batch=4, integrator="Euler")
    ref = make_sim(DAMPING, batch=4, integrator="Euler")  # the same rows, never poisoned
    sim.step(5)
    ref.step(5)
    bad = 2
    poison(sim.data, bad)
    before = state(sim, [bad])
    with pytest.raises(engine.NonFiniteError) as info:
        sim.step(10)
    name, row, step = _parse(info.value)
    assert (name, row) == (quantity, bad), str(info.value)
    assert step == 6, f"the first step of this call is the 6th step: {info.value}"
    assert "row 2" in str(info.value) and "step 6" in str(info.value)
    # the failing row was not advanced: its state is bit for bit what it was
    assert_same(state(sim, [bad]), before, "failing row")
    # the other rows took all 10 steps, exactly as without the bad row
    ref.step(10)
    others = [0, 1, 3]
    assert_same(state(sim, others), state(ref, others), "healthy rows")


@pytest.mark.parametrize("bad", [np.nan, np.inf, 1e308, 2e10])
def test_bad_ctrl_is_ignored_like_mujoco(bad):
    """A NaN or huge (> 1e10) control is not an error: as mj_fwdActuation does (mjWARN_BADCTRL),
    every control of that row is ignored for the step (forces from ctrl 0); ctrl itself is kept."""
    sim = make_sim(DAMPING, batch=3, integrator="Euler")
    zero = make_sim(DAMPING, batch=3, integrator="Euler")
    start = state(sim, 1)
    sim.data.ctrl[1] = [bad, 0.3]
    zero.data.ctrl[1] = 0.0
    with pytest.warns(engine.PhysicsWarning, match=r"row 1 \(ctrl\[0\]\).*mjWARN_BADCTRL"):
        sim.step(3)  # no NonFiniteError
    zero.step(3)
    np.testing.assert_array_equal(sim.data.warning[:, T.WARN_BADCTRL], [0, 3, 0])
    kept = [name for name in STATE_FIELDS if name != "ctrl"]
    for name in kept:
        np.testing.assert_array_equal(getattr(sim.data, name), getattr(zero.data, name), err_msg=name)
    np.testing.assert_array_equal(sim.data.ctrl[1], [bad, 0.3])
    np.testing.assert_array_equal(sim.data.actuator_force[1], 0.0)
    # MuJoCo does the same
    _, mj = load(DAMPING, "Euler")
    d = mujoco.MjData(mj)
    for name in ("qpos", "qvel", "qfrc_applied", "xfrc_applied"):
        getattr(d, name)[:] = start[name]
    d.ctrl[:] = [bad, 0.3]
    for _ in range(3):
        mujoco.mj_step(mj, d)
    assert d.warning[mujoco.mjtWarning.mjWARN_BADCTRL].number == 3 == sim.data.warning[1, T.WARN_BADCTRL]
    np.testing.assert_array_equal(d.actuator_force, 0.0)
    np.testing.assert_allclose(sim.data.qvel[1], d.qvel, rtol=0, atol=1e-12)
    np.testing.assert_allclose(sim.data.qpos[1], d.qpos, rtol=0, atol=1e-12)


def test_non_finite_mid_call_keeps_state_before_the_failing_step():
    """A row whose velocity blows up after a few steps stops at the last good state."""
    sim = make_sim(PENDULUM, batch=3, integrator="Euler")
    sim.data.qvel[1] = [1e3, -1e3]  # Coriolis ~ v^2 grows v past 1e10 (mjMAXVAL) in a few steps
    start = state(sim)
    with pytest.raises(engine.NonFiniteError) as info:
        sim.step(20)
    name, row, step = _parse(info.value)
    assert row == 1 and 1 < step <= 20, str(info.value)
    # replay row 1 alone for step - 1 steps: that is the state the batch must hold
    alone = engine.Simulator(sim.model, batch=1, nthread=1)
    for field in STATE_FIELDS:
        getattr(alone.data, field)[0] = start[field][1]
    alone.step(step - 1)
    assert_same(state(sim, [1]), state(alone), f"row 1 after failing at step {step}")
    assert np.all(np.abs(sim.data.qvel[1]) <= 1e10)
    with pytest.raises(engine.NonFiniteError):
        alone.step()
    # rows 0 and 2 took all 20 steps
    assert np.all(sim.data.time[[0, 2]] == alone_time(sim.model, 20))


def alone_time(model: engine.Model, nstep: int) -> float:
    t = 0.0
    for _ in range(nstep):
        t += model.opt_timestep
    return t


def test_forward_reports_non_finite():
    sim = make_sim(PENDULUM, batch=3)
    sim.data.qvel[0, 0] = np.nan
    before = state(sim)
    with pytest.raises(engine.NonFiniteError) as info:
        sim.forward()
    name, row, _ = _parse(info.value)
    assert (name, row) == ("qvel", 0)
    assert_same(state(sim), before, "forward never changes state")


# --- on_bad="reset": MuJoCo's autoreset --------------------------------------------------------
def _mujoco_steps(mj, start: dict, nstep: int):
    """MuJoCo from the same state, nstep mj_step calls (autoreset on, its default)."""
    d = mujoco.MjData(mj)
    for name in ("qpos", "qvel", "ctrl", "qfrc_applied", "xfrc_applied"):
        getattr(d, name)[:] = start[name]
    d.time = float(start["time"])
    for _ in range(nstep):
        mujoco.mj_step(mj, d)
    return d


@pytest.mark.parametrize(
    ("warning", "poison"),
    [
        ("mjWARN_BADQACC", lambda d, r: d.xfrc_applied.__setitem__((r, 1, 0), 1e12)),  # qacc ~ 1e11
        ("mjWARN_BADQACC", lambda d, r: d.qfrc_applied.__setitem__((r, 0), np.nan)),
        ("mjWARN_BADQPOS", lambda d, r: d.qpos.__setitem__((r, 1), 2e10)),
        ("mjWARN_BADQVEL", lambda d, r: d.qvel.__setitem__((r, 0), -np.inf)),
    ],
)
@pytest.mark.parametrize("integrator", ["Euler", "implicitfast"])
def test_reset_mode_resets_the_row_as_mujoco_does(warning, poison, integrator):
    """With on_bad="reset" a bad state or acceleration resets the row to the model's initial
    state and the step goes on from there, as mj_step does; the warning is counted for that
    row and reported, and the other rows are untouched."""
    sim = make_sim(DAMPING, batch=3, integrator=integrator)
    ref = make_sim(DAMPING, batch=3, integrator=integrator)
    sim.on_bad = "reset"
    poison(sim.data, 1)
    start = state(sim, 1)
    with pytest.warns(engine.PhysicsWarning, match=r"in row 1 .*reset to the model's initial state"):
        sim.step(4)
    ref.step(4)
    assert_same(state(sim, [0, 2]), state(ref, [0, 2]), "healthy rows")
    _, mj = load(DAMPING, integrator)
    d = _mujoco_steps(mj, start, 4)
    kind = getattr(T, warning.replace("mjWARN_", "WARN_"))
    assert d.warning[getattr(mujoco.mjtWarning, warning)].number == 1 == sim.data.warning[1, kind]
    np.testing.assert_array_equal(sim.data.warning[[0, 2]], 0)
    for name in ("qpos", "qvel", "time"):
        err = np.max(np.abs(getattr(sim.data, name)[1] - getattr(d, name)))
        report(f"on_bad=reset {warning} {integrator}: {name}", err, 1e-12, 4)
        assert err <= 1e-12, f"{name} after reset differs from MuJoCo's by {err}"


def test_raise_mode_names_the_huge_input():
    """The default refuses a force that MuJoCo would reset over (1e12 N on a 1 kg body):
    the row stays where it was, the error names xfrc_applied, the warning is counted."""
    sim = make_sim(DAMPING, batch=2)
    sim.data.xfrc_applied[0, 1, 0] = 1e12
    before = state(sim)
    with pytest.raises(engine.NonFiniteError, match=r"xfrc_applied\[1, 0\] = 1e\+12 in row 0 at step 1"):
        sim.step(200)
    assert_same(state(sim, [0]), rows_of(before, [0]), "failed row")
    assert sim.data.warning[0, T.WARN_BADQACC] == 1


def test_on_bad_is_checked():
    sim = make_sim(PENDULUM, batch=1)
    with pytest.raises(ValueError, match="on_bad must be one of"):
        sim.on_bad = "ignore"
    with pytest.raises(ValueError, match="on_bad must be one of"):
        engine.Simulator(sim.model, on_bad=None)
    assert sim.on_bad == "raise"


def test_warnings_are_reported_once_each():
    """A warning is reported by the call that counted it, not again by later calls."""
    sim = make_sim(DAMPING, batch=2)
    sim.data.ctrl[0, 0] = np.nan
    with pytest.warns(engine.PhysicsWarning):
        sim.step(2)
    sim.data.ctrl[0, 0] = 0.1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sim.step(2)
    assert sim.data.warning[0, T.WARN_BADCTRL] == 2


# --- restore leaves derived quantities current ------------------------------------------------
def test_restore_recomputes_derived_quantities_of_its_rows_only():
    sim = make_sim(FREE, batch=3, integrator="Euler")
    sim.step(5)
    sim.forward()
    at_snap = all_fields(sim, [1])
    snap = sim.snapshot(rows=[1])
    sim.step(20)
    others = all_fields(sim, [0, 2])
    sim.restore(snap)
    for name in ("xpos", "xquat", "sensordata", "qacc", "qM", "geom_xpos"):
        np.testing.assert_array_equal(getattr(sim.data, name)[[1]], at_snap[name], err_msg=name)
    assert_same(all_fields(sim, [0, 2]), others, "rows not restored")


def test_snapshot_identity_is_the_model_not_its_sizes():
    """A different geometry with the same sizes is refused; the same model loaded with
    another contact capacity is the same model."""
    root = ET.fromstring(PENDULUM.read_text())
    sim = engine.Simulator(engine.load_mjcf(PENDULUM), batch=2)
    snap = sim.snapshot()
    root.find(".//body[@name='link2']").set("pos", "0.5 0 0")  # a 0.5 m first link
    longer = engine.Simulator(engine.load_mjcf(ET.tostring(root, encoding="unicode")), batch=2)
    assert longer.model.nbody == sim.model.nbody
    with pytest.raises(ValueError, match="different model"):
        longer.restore(snap)
    bigger = engine.Simulator(engine.load_mjcf(PENDULUM, nconmax=7), batch=2)
    bigger.restore(snap)
    np.testing.assert_array_equal(bigger.data.qpos, sim.data.qpos)


# --- stepping contracts ----------------------------------------------------------------------
@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_nstep_equals_single_steps(integrator):
    a = make_sim(FREE, batch=3, integrator=integrator)
    b = make_sim(FREE, batch=3, integrator=integrator)
    a.step(40)
    for _ in range(40):
        b.step()
    assert a.nstep == b.nstep == 40
    # derived quantities of both belong to the start of the last step: all fields agree
    assert_same(all_fields(a), all_fields(b), "step(40) vs 40 x step()")


def test_forward_does_not_change_state():
    sim = make_sim(FREE, batch=3, integrator="RK4")
    sim.step(5)
    before = state(sim)
    nstep = sim.nstep
    sim.forward()
    assert_same(state(sim), before, "state after forward")
    first = all_fields(sim)
    sim.forward()
    assert_same(all_fields(sim), first, "forward twice")
    assert sim.nstep == nstep
    # and forward() between steps does not change the trajectory
    other = make_sim(FREE, batch=3, integrator="RK4")
    other.step(5)
    for _ in range(10):
        sim.step()
        sim.forward()
        other.step()
    assert_same(state(sim), state(other), "trajectory with forward() between steps")


def test_time_advances_by_nstep_timesteps():
    sim = make_sim(PENDULUM, batch=3)
    h = sim.model.opt_timestep
    sim.data.time[:] = [0.0, 1.5, -2.0]
    t0 = sim.data.time.copy()
    expected = t0.copy()
    for nstep in (1, 7, 25):
        sim.step(nstep)
        for _ in range(nstep):
            expected += h  # time += h once per step, as mj_step
        np.testing.assert_array_equal(sim.data.time, expected)
    assert sim.nstep == 33
    np.testing.assert_allclose(sim.data.time - t0, 33 * h, rtol=1e-12)
    with pytest.raises(ValueError):
        sim.step(0)
    assert sim.nstep == 33


# --- rollout --------------------------------------------------------------------------------------
SENSORS = ASSETS / "tests" / "sensors.xml"


def _controls(sim, T: int, seed: int = 5) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-0.8, 0.8, (sim.batch, T, sim.model.nu))


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_rollout_equals_stepping_with_each_control(integrator):
    """sim.rollout(ctrl) is, bit for bit, writing ctrl[:, t] and calling step() T times:
    the same states after each step and the sensors of the state each step started from."""
    ro = make_sim(SENSORS, batch=5, integrator=integrator, nthread=2)
    loop = make_sim(SENSORS, batch=5, integrator=integrator, nthread=1)
    ctrl = _controls(ro, 40)
    out = ro.rollout(ctrl)
    for t in range(ctrl.shape[1]):
        loop.data.ctrl[:] = ctrl[:, t]
        loop.step()
        np.testing.assert_array_equal(out.qpos[:, t], loop.data.qpos)
        np.testing.assert_array_equal(out.qvel[:, t], loop.data.qvel)
        np.testing.assert_array_equal(out.sensordata[:, t], loop.data.sensordata)
    assert_same(state(ro), state(loop), "final state")
    assert ro.nstep == loop.nstep == 40


def test_rollout_matches_mujoco_rollout():
    """The same control sequence through mujoco.rollout: qpos, qvel and sensordata agree to
    1e-10 along 200 steps of every row (the trajectory tolerance of tests/README.md)."""
    import mujoco.rollout

    model, mj = load(SENSORS)
    sim = engine.Simulator(model, batch=4)
    qpos, qvel, _ = random_states(mj, 4, seed=9, vel=0.5)
    sim.data.qpos[:] = qpos
    sim.data.qvel[:] = qvel
    ctrl = _controls(sim, 200)
    d = mujoco.MjData(mj)
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    init = np.empty((4, mujoco.mj_stateSize(mj, spec)))
    for b in range(4):
        d.qpos[:], d.qvel[:] = qpos[b], qvel[b]
        mujoco.mj_getState(mj, d, init[b], spec)
    ref_state, ref_sensor = mujoco.rollout.rollout(mj, d, init, ctrl)
    out = sim.rollout(ctrl)
    ref_qpos = ref_state[:, :, 1 : 1 + mj.nq]
    ref_qvel = ref_state[:, :, 1 + mj.nq : 1 + mj.nq + mj.nv]
    worst = max(
        float(np.max(np.abs(out.qpos - ref_qpos))),
        float(np.max(np.abs(out.qvel - ref_qvel))),
        float(np.max(np.abs(out.sensordata - ref_sensor)) / max(1.0, float(np.max(np.abs(ref_sensor))))),
    )
    report("rollout vs mujoco.rollout (sensors.xml)", worst, 1e-10, out.qpos.shape[1] * 4)
    assert worst < 1e-10


def test_rollout_refuses_bad_controls_and_changes_nothing():
    sim = make_sim(SENSORS, batch=3)
    before = all_fields(sim)
    nu = sim.model.nu
    for bad, message in (
        (np.zeros((2, 10, nu)), rf"ctrl must have shape \(3, T, {nu}\)"),
        (np.zeros((3, 10, nu + 1)), r"ctrl must have shape"),
        (np.zeros((3, 0, nu)), r"ctrl must have shape"),
        (np.full((10, nu), np.nan), r"NaN or inf"),
    ):
        with pytest.raises(ValueError, match=message):
            sim.rollout(bad)
    assert_same(all_fields(sim), before, "after refused rollouts")
    out = sim.rollout(np.zeros((10, nu)))  # (T, nu): every row the same sequence
    assert out.qpos.shape == (3, 10, sim.model.nq)


def test_rollout_failure_names_the_step_and_keeps_the_row():
    sim = make_sim(DAMPING, batch=3, integrator="Euler")
    ref = make_sim(DAMPING, batch=3, integrator="Euler")
    sim.step(4)
    ref.step(4)
    sim.data.qfrc_applied[1, 0] = np.nan
    before = state(sim, [1])
    ctrl = _controls(sim, 7)
    with pytest.raises(engine.NonFiniteError) as info:
        sim.rollout(ctrl)
    name, row, step = _parse(info.value)
    assert (name, row, step) == ("qfrc_applied", 1, 5)
    assert_same(
        {k: v for k, v in state(sim, [1]).items() if k != "ctrl"},
        {k: v for k, v in before.items() if k != "ctrl"},
        "failed row",
    )
    ref.rollout(ctrl)
    assert_same(state(sim, [0, 2]), state(ref, [0, 2]), "healthy rows")


# --- threads and fork ------------------------------------------------------------------------------
_FORK = """
import os, sys, warnings
import numpy as np
from robodyn import engine
model = engine.load_mjcf(sys.argv[1])
def run(nthread):
    sim = engine.Simulator(model, batch=16, nthread=nthread)
    sim.data.qvel[:] = np.linspace(-1, 1, 16)[:, None]
    sim.step(50)
    return sim
serial = run(1).data.qpos.copy()
run(2)  # the parent uses numba's threads (OpenMP) before forking
pid = os.fork()
if pid == 0:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        qpos = run(2).data.qpos
    ok = np.array_equal(qpos, serial) and any("forked" in str(w.message) for w in caught)
    os._exit(0 if ok else 3)
_, status = os.waitpid(pid, 0)
print("child", os.waitstatus_to_exitcode(status))
"""


def test_a_forked_child_steps_serially_instead_of_dying():
    """GNU OpenMP cannot start threads in a child forked from a process that used them
    (numba terminates the child). A Simulator in such a child runs its rows serially, with
    a warning, and gets the same bits."""
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", _FORK, str(PENDULUM)], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "child 0", out.stdout + out.stderr
