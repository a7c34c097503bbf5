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
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import mujoco
import numpy as np
import pytest

from robodyn import engine
from tests.helpers import ASSETS, load_pair, random_states, rel_err, report

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
    path = MODELS[name]
    if name.startswith("dm_control"):  # its common/ includes resolve beside the file
        mj = mujoco.MjModel.from_xml_path(str(path))
        return engine.load_mjcf(path), mj
    return load_pair(path)


@pytest.mark.parametrize("name", list(MODELS))
def test_posvel_end_leaves_mujocos_step1_state(name):
    model, mj = _load(name)
    assert mj.nsensor > 0 or name.startswith("dm_control")
    qpos0, qvel0, ctrl = random_states(mj, N_STATES, seed=3, vel=1.0)
    sim = engine.Simulator(model, batch=N_STATES)
    sim.data.qpos[:], sim.data.qvel[:], sim.data.ctrl[:] = qpos0, qvel0, ctrl
    sim.forward()
    sim.step(NSTEP, observe_end="posvel")
    sim.step(NSTEP, observe_end="posvel")
    worst = dict.fromkeys((*POSVEL, *ACC, "sensordata"), 0.0)
    acc_sensors = 0
    for i in range(N_STATES):
        md = _mujoco_after(mj, qpos0[i], qvel0[i], ctrl[i], 2 * NSTEP)
        for f in worst:
            ours = getattr(sim.data, f)[i]
            ref = getattr(md, f)
            if f == "xquat":  # a quaternion and its negative are one rotation
                ours = ours * np.sign(np.sum(ours * ref, axis=-1, keepdims=True) + 1e-300)
            worst[f] = max(worst[f], rel_err(ours, ref))
        for s in range(mj.nsensor):
            acc_sensors += int(mj.sensor_needstage[s] == mujoco.mjtStage.mjSTAGE_ACC)
    for f, err in worst.items():
        report(f"{name} posvel end: {f}", err, TOL, N_STATES)
        assert err <= TOL, (name, f, err)
    if name == "sensors_touch":
        assert acc_sensors > 0  # the acceleration-stage readings were kept, not recomputed


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
