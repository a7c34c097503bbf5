"""Oracle test: Simulator.step(n, observe_end="posvel") leaves what MuJoCo's mj_step (n times)
followed by mj_step1 leaves, as dm_control ends a control step.

After it, the position and velocity stages belong to the final state (kinematics, contacts,
the constraint rows' positions, actuator lengths and velocities, the position- and
velocity-stage sensors), while the acceleration stage (actuator forces, qacc, the touch,
accelerometer and force readings) belongs to the last step's start. Models: the sensor test
models of assets/tests (every sensor type the engine has, touch sensors on bodies in contact,
rangefinders beside touch sensors) and dm_control's cheetah, read from the installed package.
N_STATES random states per model, two calls of NSTEP steps in a row (the second starting
from the first's posvel-ended state, as an env's next control step does), against MuJoCo
from the same states; every field compared with `rel_err` at TOL; the same after
observe_end=True and False for contrast (those leave the acceleration stage at the final
state, and everything at the last step's start).

The second call's first step reuses the position and velocity stages the first call ended
with (engine.step.step_row: dm_control's mj_step2 after mj_step1). Cross-checks of that skip,
each against a twin whose skip is defeated (a set_params that changes no value, which only
clears the mark) or against MuJoCo: the same bits for every Data field along 10 calls
(data.posvel_reused counting the skipped passes, and a stage output overwritten between
calls reaching qacc, so the pass really was skipped); a state written between calls (qpos,
qvel, mocap pose, eq_active, a 0.0 turned -0.0) recomputed and equal to MuJoCo from the
written state; per-row parameters set between calls seen at once (as by a fresh Simulator
restored to the same state and parameters); every call between two posvel ends that must
clear the mark (a plain or observe_end=True step, a rollout, forward, restore, set_param,
collision, inverse) makes the rows it touched recompute; the same bits for a PD drive's
split pass; and no skip under RK4 (dm_control's cartpole and an RK4 copy of the touch
model), still equal to MuJoCo.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import mujoco
import numpy as np
import pytest

from robodyn import engine
from robodyn.engine import types as T
from tests.helpers import ASSETS, load_pair, random_states, rel_err, report, with_options

NSTEP = 3
N_STATES = 3
TOL = 1e-9
DMC = Path(importlib.util.find_spec("dm_control").submodule_search_locations[0]) / "suite"
MODELS = {
    "sensors": ASSETS / "tests" / "sensors.xml",
    "sensors_touch": ASSETS / "tests" / "sensors_touch.xml",
    "sensors_ray": ASSETS / "tests" / "sensors_ray.xml",
    "dm_control cheetah": DMC / "cheetah.xml",
}
RK4_MODELS = {  # dm_control steps RK4 with a whole mj_step: no reuse
    "dm_control cartpole": DMC / "cartpole.xml",
    "sensors_touch RK4": with_options(MODELS["sensors_touch"], integrator="RK4"),
}
CALLS = (1,) * 5 + (3,) * 5  # a sequence of posvel-ended calls: steps in each
POSVEL = ("qpos", "qvel", "xpos", "xquat", "ncon", "actuator_length", "actuator_velocity", "qfrc_bias")
ACC = ("qacc", "actuator_force", "qfrc_actuator")


def _mujoco_after(mj, qpos, qvel, ctrl, nstep: int) -> mujoco.MjData:
    """MuJoCo's data after nstep mj_step calls and one mj_step1 from (qpos, qvel, ctrl)."""
    md = mujoco.MjData(mj)
    md.qpos[:], md.qvel[:], md.ctrl[:] = qpos, qvel, ctrl
    for _ in range(nstep):
        mujoco.mj_step(mj, md)
    mujoco.mj_step1(mj, md)
    return md


def _load(name: str):
    path = {**MODELS, **RK4_MODELS}[name]
    if name.startswith("dm_control"):  # its common/ includes resolve beside the file
        mj = mujoco.MjModel.from_xml_path(str(path))
        return engine.load_mjcf(path), mj
    return load_pair(path)


def _worst_against_mujoco(name: str, sim, mds) -> dict[str, float]:
    """The worst rel_err over the rows of sim.data against MuJoCo's datas `mds` (one a row) of
    the position- and velocity-stage fields, the acceleration-stage ones and sensordata."""
    worst = dict.fromkeys((*POSVEL, *ACC, "sensordata"), 0.0)
    for i, md in enumerate(mds):
        for f in worst:
            ours = getattr(sim.data, f)[i]
            ref = getattr(md, f)
            if f == "xquat":  # a quaternion and its negative are one rotation
                ours = ours * np.sign(np.sum(ours * ref, axis=-1, keepdims=True) + 1e-300)
            worst[f] = max(worst[f], rel_err(ours, ref))
    for f, err in worst.items():
        report(f"{name}: {f}", err, TOL, len(mds))
    return worst


def _two_calls_against_mujoco(name: str):
    """Two posvel-ended calls of NSTEP steps from N_STATES random states, against MuJoCo's
    2 NSTEP mj_step and one mj_step1; returns the Simulator."""
    model, mj = _load(name)
    assert mj.nsensor > 0 or name.startswith("dm_control")
    qpos0, qvel0, ctrl = random_states(mj, N_STATES, seed=3, vel=1.0)
    sim = engine.Simulator(model, batch=N_STATES)
    sim.data.qpos[:], sim.data.qvel[:], sim.data.ctrl[:] = qpos0, qvel0, ctrl
    sim.forward()
    sim.step(NSTEP, observe_end="posvel")
    sim.step(NSTEP, observe_end="posvel")
    mds = [_mujoco_after(mj, qpos0[i], qvel0[i], ctrl[i], 2 * NSTEP) for i in range(N_STATES)]
    for f, err in _worst_against_mujoco(f"{name} posvel end", sim, mds).items():
        assert err <= TOL, (name, f, err)
    return sim


@pytest.mark.parametrize("name", list(MODELS))
def test_posvel_end_leaves_mujocos_step1_state(name):
    sim = _two_calls_against_mujoco(name)
    np.testing.assert_array_equal(sim.data.posvel_reused, 1)  # the second call's first step
    if name == "sensors_touch":
        mj = _load(name)[1]
        needstage = mj.sensor_needstage
        assert (needstage == mujoco.mjtStage.mjSTAGE_ACC).any()  # acceleration-stage readings kept


@pytest.mark.parametrize("name", list(RK4_MODELS))
def test_rk4_recomputes_the_stages_and_still_equals_mujoco(name):
    sim = _two_calls_against_mujoco(name)
    assert sim.model.opt_integrator == T.INT_RK4
    np.testing.assert_array_equal(sim.data.posvel_reused, 0)


def test_the_three_ends_differ_where_they_should():
    """On a model with touch sensors in contact: posvel agrees with observe_end=True in the
    position and velocity quantities and with observe_end=False in the acceleration ones."""
    model, mj = load_pair(MODELS["sensors_touch"])
    qpos0, qvel0, ctrl = random_states(mj, 2, seed=4, vel=1.0)
    out = {}
    for end in (False, True, "posvel"):
        sim = engine.Simulator(model, batch=2)
        sim.data.qpos[:], sim.data.qvel[:], sim.data.ctrl[:] = qpos0, qvel0, ctrl
        sim.forward()
        sim.step(NSTEP, observe_end=end)
        out[end] = {f: np.array(getattr(sim.data, f)) for f in ("xpos", "qacc", "sensordata")}
    np.testing.assert_array_equal(out["posvel"]["xpos"], out[True]["xpos"])
    np.testing.assert_array_equal(out["posvel"]["qacc"], out[False]["qacc"])
    assert not np.array_equal(out[True]["qacc"], out[False]["qacc"])
    assert not np.array_equal(out[True]["xpos"], out[False]["xpos"])


def test_observe_end_refuses_other_values():
    model, _ = load_pair(MODELS["sensors"])
    sim = engine.Simulator(model, batch=1)
    for bad in ("acc", 1, None):
        with pytest.raises(TypeError, match="observe_end must be True, False or 'posvel'"):
            sim.step(1, observe_end=bad)


# --- the reused position and velocity stages ------------------------------------------------------

# a box on the floor that the mocap pusher's corner presses on, an arm held up by a connect
# equality, a touch sensor under the box and a framepos on the arm: a write into any input of
# the position and velocity stages changes the dynamics
GUARD_MODEL = """
<mujoco model="posvel_guard">
  <option timestep="0.002"/>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 0.1"/>
    <body name="pusher" mocap="true" pos="0.1 0 0.05" quat="0.9 0 0 0.3">
      <geom type="box" size="0.04 0.04 0.04"/>
    </body>
    <body name="box" pos="0 0 0.05">
      <freejoint/>
      <geom type="box" size="0.05 0.05 0.05" mass="0.5"/>
      <site name="box_bottom" pos="0 0 -0.05" size="0.06 0.06 0.01" type="box"/>
    </body>
    <body name="arm" pos="0 0.5 0.5">
      <joint name="hinge" type="hinge" axis="0 1 0" damping="0.05"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02" contype="0" conaffinity="0"/>
      <site name="tip" pos="0.3 0 0"/>
    </body>
  </worldbody>
  <equality>
    <connect body1="arm" body2="world" anchor="0.3 0 0"/>
  </equality>
  <actuator>
    <motor joint="hinge" gear="1"/>
  </actuator>
  <sensor>
    <touch site="box_bottom"/>
    <framepos objtype="site" objname="tip"/>
    <jointvel joint="hinge"/>
  </sensor>
</mujoco>
"""


def _load_any(name: str):
    return load_pair(GUARD_MODEL) if name == "guard" else _load(name)


def _started(model, mj, seed: int = 3):
    """A Simulator of N_STATES rows at random states (MuJoCo's model mj for the sampling),
    after forward()."""
    if mj.nmocap:  # GUARD_MODEL: the box on the floor, 2-12 mm into the pusher, the arm off its anchor
        rng = np.random.default_rng(seed)
        qpos0 = np.tile(mj.qpos0, (N_STATES, 1))
        qpos0[:, :2] += rng.uniform(-0.005, 0.005, (N_STATES, 2))
        qpos0[:, 2] -= 1e-3  # the box's bottom 1 mm into the floor: in contact
        qpos0[:, 7] = rng.uniform(-0.3, 0.3, N_STATES)
        qvel0 = rng.uniform(-0.1, 0.1, (N_STATES, mj.nv))
        ctrl = rng.uniform(-1.0, 1.0, (N_STATES, mj.nu))
    else:
        qpos0, qvel0, ctrl = random_states(mj, N_STATES, seed=seed, vel=1.0)
    sim = engine.Simulator(model, batch=N_STATES)
    sim.data.qpos[:], sim.data.qvel[:], sim.data.ctrl[:] = qpos0, qvel0, ctrl
    sim.forward()
    return sim


def _defeat(sim) -> None:
    """Clear the mark without changing anything else: every row set to the model's own masses
    (a row on the model's values keeps the shared Model record: engine.params)."""
    sim.set_params(np.arange(sim.batch), {"body_mass": sim.get_param("body_mass")})


def _compared(sim, fields=None) -> dict[str, np.ndarray]:
    """Copies of Data's fields (all but the work arrays and the reuse count by default)."""
    names = fields or [f for f in sim.data._fields if not f.startswith("scratch_") and f != "posvel_reused"]
    return {f: np.array(getattr(sim.data, f)) for f in names}


def _assert_same_bits(a: dict, b: dict, what: str) -> None:
    for f in a:
        np.testing.assert_array_equal(a[f], b[f], err_msg=f"{what}: {f} differs")


@pytest.mark.parametrize("name", [*MODELS, "guard"])
def test_reused_stages_give_the_same_bits(name):
    """10 posvel-ended calls (5 of 1 step, 5 of 3) with the reuse against the same calls with
    it defeated before each: every Data field (work arrays aside) equal bit for bit after
    each call; the first call follows forward() and recomputes, the 9 others reuse."""
    model, mj = _load_any(name)
    ours, twin = _started(model, mj), _started(model, mj)
    for k, n in enumerate(CALLS):
        _defeat(twin)
        ours.step(n, observe_end="posvel")
        twin.step(n, observe_end="posvel")
        _assert_same_bits(_compared(ours), _compared(twin), f"{name} call {k} of {n} steps")
    np.testing.assert_array_equal(ours.data.posvel_reused, len(CALLS) - 1)
    np.testing.assert_array_equal(twin.data.posvel_reused, 0)
    np.testing.assert_array_equal(ours.data.posvel_current, 1)
    # a fresh Simulator restored to the same state (restore runs forward: no reuse) agrees too
    fresh = engine.Simulator(model, batch=N_STATES)
    fresh.restore(ours.snapshot())
    fields = ("qpos", "qvel", "act", "qacc", "qfrc_constraint", "sensordata", "xpos", "ncon", "nefc")
    for sim in (ours, fresh):
        sim.step(3, observe_end="posvel")
    _assert_same_bits(_compared(ours, fields), _compared(fresh, fields), f"{name} against a restored copy")
    np.testing.assert_array_equal(fresh.data.posvel_reused, 0)


def test_a_reused_step_reads_the_stages_as_they_were_left():
    """The pass really is skipped: qfrc_bias (a velocity-stage output) overwritten after a
    posvel end reaches the next step's qacc; with forward() after the overwrite (which
    recomputes it and clears the mark) the next step gives the bits of one that never saw it."""
    model, mj = _load("dm_control cheetah")
    for recompute in (False, True):
        ours, twin = _started(model, mj), _started(model, mj)
        for sim in (ours, twin):
            sim.step(1, observe_end="posvel")
        ours.data.qfrc_bias[:] += 1.0
        if recompute:
            ours.forward()
        for sim in (ours, twin):
            sim.step(1, observe_end="posvel")
        np.testing.assert_array_equal(twin.data.posvel_reused, 1)
        if recompute:
            np.testing.assert_array_equal(ours.data.posvel_reused, 0)
            _assert_same_bits(_compared(ours), _compared(twin), "forward() after the overwrite")
        else:
            np.testing.assert_array_equal(ours.data.posvel_reused, 1)
            assert not (ours.data.qacc == twin.data.qacc).any()  # the overwritten bias was used


def _write_qpos(d):
    d.qpos[:, -1] += 0.05


def _write_qvel(d):
    d.qvel[:, -1] -= 0.01


def _write_mocap_pos(d):
    d.mocap_pos[:, 0, 0] += 0.01


def _write_mocap_quat(d):
    d.mocap_quat[:, 0] = [0.8, 0.0, 0.0, 0.6]


def _write_eq_active(d):
    d.eq_active[:, 0] = 0


def _write_minus_zero(d):
    assert np.all(d.mocap_pos[:, 0, 1] == 0.0) and not np.signbit(d.mocap_pos[:, 0, 1]).any()
    d.mocap_pos[:, 0, 1] = -0.0  # the same number, other bits: recomputed all the same


WRITES = {
    "qpos": _write_qpos,
    "qvel": _write_qvel,
    "mocap_pos": _write_mocap_pos,
    "mocap_quat": _write_mocap_quat,
    "eq_active": _write_eq_active,
    "-0.0": _write_minus_zero,
}
CASES = [("guard", w) for w in WRITES] + [("dm_control cheetah", "qpos"), ("dm_control cheetah", "qvel")]


def _mujoco_from(mj, sim, i: int, nstep: int) -> mujoco.MjData:
    """MuJoCo's data after nstep mj_step and one mj_step1 from row i of sim's state."""
    md = mujoco.MjData(mj)
    for f in ("qpos", "qvel", "act", "ctrl", "mocap_pos", "mocap_quat", "eq_active", "qacc_warmstart"):
        getattr(md, f)[:] = getattr(sim.data, f)[i]
    for _ in range(nstep):
        mujoco.mj_step(mj, md)
    mujoco.mj_step1(mj, md)
    return md


@pytest.mark.parametrize(("name", "write"), CASES)
def test_a_state_written_between_calls_is_recomputed(name, write):
    """A write into qpos, qvel, mocap_pos, mocap_quat or eq_active after a posvel end (without
    forward) makes the next call recompute the stages: the same bits as a twin that cannot
    reuse, and MuJoCo's mj_step from the written state; rewriting the same bits reuses."""
    model, mj = _load_any(name)
    ours, twin = _started(model, mj), _started(model, mj)
    for sim in (ours, twin):
        sim.step(NSTEP, observe_end="posvel")
        sim.step(NSTEP, observe_end="posvel")
        WRITES[write](sim.data)
    np.testing.assert_array_equal(ours.data.posvel_reused, 1)
    _defeat(twin)
    mds = [_mujoco_from(mj, ours, i, NSTEP) for i in range(N_STATES)]
    for sim in (ours, twin):
        sim.step(NSTEP, observe_end="posvel")
    _assert_same_bits(_compared(ours), _compared(twin), f"{name} after writing {write}")
    for f, err in _worst_against_mujoco(f"{name} written {write}", ours, mds).items():
        assert err <= TOL, (name, write, f, err)
    np.testing.assert_array_equal(ours.data.posvel_reused, 1)  # this call recomputed
    for sim in (ours, twin):  # the same bits written again: reused
        sim.data.qpos[:] = sim.data.qpos.copy()
        sim.step(1, observe_end="posvel")
    np.testing.assert_array_equal(ours.data.posvel_reused, 2)


@pytest.mark.parametrize("name", ["dm_control cheetah", "sensors_touch"])
def test_parameters_set_between_calls_are_seen_at_once(name):
    """set_params after a posvel end (each row its own masses and friction) reaches the next
    call's first step: its qacc (of that step's start, a 1-step call) is the one a fresh
    Simulator restored to the same state and parameters computes, bit for bit, and not the
    one of the old parameters."""
    model, mj = _load(name)
    ours, old = _started(model, mj), _started(model, mj)
    for sim in (ours, old):
        sim.step(NSTEP, observe_end="posvel")
    rows = np.arange(N_STATES)
    scale = 1.0 + 0.2 * (rows[:, None] + 1)
    new = {
        "body_mass": ours.get_param("body_mass") * scale,
        "geom_friction": ours.get_param("geom_friction") / scale[:, :, None],
    }
    ours.set_params(rows, new)
    fresh = engine.Simulator(model, batch=N_STATES)
    fresh.restore(ours.snapshot())  # the state and every row's parameters
    fields = ("qpos", "qvel", "qacc", "qfrc_constraint", "qM", "sensordata", "xpos", "ncon", "nefc")
    for sim in (ours, old, fresh):
        sim.step(1, observe_end="posvel")
    _assert_same_bits(_compared(ours, fields), _compared(fresh, fields), f"{name} with new parameters")
    assert not np.array_equal(ours.data.qacc, old.data.qacc)
    np.testing.assert_array_equal(ours.data.posvel_reused, 0)
    np.testing.assert_array_equal(old.data.posvel_reused, 1)


def test_a_pd_drive_reuses_the_stages_and_gives_the_same_bits():
    """Simulator.drive with a PD drive and STEP_OBSERVE_POSVEL: the first step skips the pass
    before the drive when the stages are current; the same bits as a twin that recomputes."""
    model, mj = _load("dm_control cheetah")
    acts = np.arange(model.nu)
    dofs = model.jnt_dofadr[model.actuator_trnid[acts, 0]]
    index = np.ascontiguousarray(np.stack([dofs, acts], axis=1), dtype=np.int32)
    gain = np.ascontiguousarray(np.tile([20.0, 1.0], (model.nu, 1)))
    target = np.ascontiguousarray(np.random.default_rng(7).uniform(-0.5, 0.5, (N_STATES, model.nu)))
    ours, twin = _started(model, mj), _started(model, mj)
    for k, n in enumerate(CALLS):
        _defeat(twin)
        for sim in (ours, twin):
            sim.drive(T.DRIVE_PD, T.STEP_OBSERVE_POSVEL, index, gain, target, n)
        _assert_same_bits(_compared(ours), _compared(twin), f"PD drive call {k} of {n} steps")
    np.testing.assert_array_equal(ours.data.posvel_reused, len(CALLS) - 1)
    np.testing.assert_array_equal(twin.data.posvel_reused, 0)


CLEARING = {  # every call between two posvel-ended calls that must make the second recompute
    "step": lambda sim: sim.step(1),
    "step observe_end=True": lambda sim: sim.step(1, observe_end=True),
    "rollout": lambda sim: sim.rollout(np.array(sim.data.ctrl)[:, None]),
    "forward": lambda sim: sim.forward(),
    "forward of one row": lambda sim: sim.forward([1]),
    "restore": lambda sim: sim.restore(sim.snapshot()),
    "set_param": lambda sim: sim.set_param("dof_damping", [0], sim.get_param("dof_damping")[:1]),
    "collision": lambda sim: sim.collision(),
    "inverse": lambda sim: sim.inverse(),
}


@pytest.mark.parametrize("call", list(CLEARING))
def test_calls_between_posvel_ends_clear_the_mark(call):
    """After each call of CLEARING the rows it touched recompute the stages at the next
    posvel-ended call (the others reuse them), with the bits of a twin that cannot reuse."""
    model, mj = _load_any("guard")
    ours, twin = _started(model, mj), _started(model, mj)
    for sim in (ours, twin):
        sim.step(NSTEP, observe_end="posvel")
        CLEARING[call](sim)
        sim.step(NSTEP, observe_end="posvel")
    _defeat(twin)
    touched = {"forward of one row": [1], "set_param": [0]}.get(call, list(range(N_STATES)))
    expected = np.zeros(N_STATES, dtype=np.int32)
    expected[np.setdiff1d(np.arange(N_STATES), touched)] = 1
    np.testing.assert_array_equal(ours.data.posvel_reused, expected)
    for sim in (ours, twin):
        sim.step(NSTEP, observe_end="posvel")
    _assert_same_bits(_compared(ours), _compared(twin), f"after {call}")
    np.testing.assert_array_equal(ours.data.posvel_reused, expected + 1)
