"""engine.control.AccelerationDrive against MuJoCo: the force our drive chooses, given to
MuJoCo as the motor's ctrl at the same state, must produce exactly the commanded joint
acceleration, and our step must equal mj_step with that ctrl."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from robodyn import engine
from robodyn.engine.control import AccelerationDrive
from tests.helpers import ASSETS, GYM_ASSETS, report, without_contacts

CASES = [
    ("crane", ASSETS / "crane.xml", "drive"),  # Euler
    ("inverted_pendulum", GYM_ASSETS / "inverted_pendulum.xml", "slide"),  # RK4, gear 100
]


def _models(path):
    xml = without_contacts(path)
    mj = mujoco.MjModel.from_xml_string(xml)
    return engine.load_mjcf(xml), mj


@pytest.mark.parametrize("name,path,actuator", CASES, ids=[c[0] for c in CASES])
def test_drive_gives_commanded_acceleration_in_mujoco(name, path, actuator):
    model, mj = _models(path)
    act = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_ACTUATOR, actuator)
    drive = AccelerationDrive(model, act)
    dof = drive.dof
    n = 40
    rng = np.random.default_rng(3)
    sim = engine.Simulator(model, batch=n)
    sim.data.qpos[:] = mj.qpos0 + rng.uniform(-0.8, 0.8, (n, mj.nq))
    sim.data.qvel[:] = rng.uniform(-1.5, 1.5, (n, mj.nv))
    # commands that need less force than the motor's ctrlrange allows
    target = rng.uniform(-0.2, 0.2, n)
    q0, v0 = sim.data.qpos.copy(), sim.data.qvel.copy()
    drive.step(sim, target, nstep=1)
    d = mujoco.MjData(mj)
    worst_acc = worst_step = 0.0
    for b in range(n):
        d.qpos[:], d.qvel[:] = q0[b], v0[b]
        d.ctrl[:] = sim.data.ctrl[b]
        lo, hi = mj.actuator_ctrlrange[act]
        assert lo < d.ctrl[act] < hi, f"case {b} saturated; the test needs unsaturated commands"
        mujoco.mj_forward(mj, d)
        worst_acc = max(worst_acc, abs(d.qacc[dof] - target[b]) / max(1.0, abs(target[b])))
        mujoco.mj_step(mj, d)
        worst_step = max(
            worst_step, np.max(np.abs(d.qpos - sim.data.qpos[b])), np.max(np.abs(d.qvel - sim.data.qvel[b]))
        )
    report(f"{name}: MuJoCo qacc[dof] vs commanded", worst_acc, 1e-9, n)
    report(f"{name}: mj_step vs our driven step", worst_step, 1e-10, n)
    assert worst_acc < 1e-9
    assert worst_step < 1e-10


def test_drive_saturates_at_the_motor_range_and_reports_final_state():
    model, mj = _models(ASSETS / "crane.xml")
    drive = AccelerationDrive(model, 0)
    sim = engine.Simulator(model, batch=2)
    drive.step(sim, np.array([1e6, -1e6]), nstep=3)
    lo, hi = mj.actuator_ctrlrange[0]
    assert sim.data.ctrl[0, 0] == hi and sim.data.ctrl[1, 0] == lo
    # after step, sensordata belongs to the final state (one extra forward pass)
    np.testing.assert_array_equal(sim.data.sensordata[:, 0], sim.data.qpos[:, 0])
    np.testing.assert_array_equal(sim.data.sensordata[:, 2], sim.data.qvel[:, 0])
    assert sim.nstep == 3


def test_drive_of_an_exact_command_integrates_exactly():
    """Euler with a constant commanded a: v = a t exactly, x = a h^2 n(n+1)/2."""
    model, _ = _models(ASSETS / "crane.xml")
    drive = AccelerationDrive(model, 0)
    sim = engine.Simulator(model, batch=1)
    h = model.opt_timestep
    drive.step(sim, np.array([0.5]), nstep=10)
    assert sim.data.qvel[0, 0] == pytest.approx(0.5 * 10 * h, abs=1e-13)
    assert sim.data.qpos[0, 0] == pytest.approx(0.5 * h * h * 55, abs=1e-13)


def test_drive_refuses_what_it_cannot_drive():
    xml = """<mujoco><option><flag contact="disable" constraint="disable"/></option><worldbody>
      <body><joint name="j" type="hinge"/><geom type="sphere" size=".1" mass="1"/></body>
      </worldbody><actuator><position joint="j" kp="10"/><motor joint="j" gear="0"/></actuator></mujoco>"""
    model = engine.load_mjcf(xml)
    with pytest.raises(ValueError, match="motor"):
        AccelerationDrive(model, 0)
    with pytest.raises(ValueError, match="zero gain or gear"):
        AccelerationDrive(model, 1)
    with pytest.raises(IndexError):
        AccelerationDrive(model, 2)
    crane, _ = _models(ASSETS / "crane.xml")
    sim = engine.Simulator(crane, batch=3)
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        AccelerationDrive(crane, 0).step(sim, np.zeros(2))
