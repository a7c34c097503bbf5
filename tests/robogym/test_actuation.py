"""robogym.actuation.Actuation: every kind applies an action exactly as writing the model's
inputs (or running the engine drive) by hand does, bit for bit, and the mask never holds a
floating base. Model: assets/tests/floating_arm.xml (a free base, two hinges with motors)."""

from __future__ import annotations

import numpy as np
import pytest

from robodyn.engine.control import AccelerationDrive, PDDrive
from robogym.actuation import Actuation
from robogym.physics import Physics
from tests.helpers import ASSETS

ARM = ASSETS / "tests" / "floating_arm.xml"
B = 4


def _physics() -> Physics:
    """B rows of the arm at distinct joint angles and velocities, forward run."""
    p = Physics(ARM, B)
    rng = np.random.default_rng(2)
    p.data.qpos[:, 7:] = rng.uniform(-1, 1, (B, 2))
    p.data.qvel[:] = rng.uniform(-1, 1, (B, p.model.nv))
    p.sim.forward()
    return p


def _same_state(a: Physics, b: Physics) -> None:
    for name in ("qpos", "qvel", "ctrl", "qfrc_applied", "sensordata", "qacc"):
        np.testing.assert_array_equal(getattr(a.data, name), getattr(b.data, name), err_msg=name)


ACTION = np.array([[0.5, -0.25], [1.0, 1.0], [-1.0, 0.0], [0.1, -0.9]])


def test_ctrl_maps_the_unit_box_onto_ctrlrange():
    p, ref = _physics(), _physics()
    act = Actuation.ctrl(p, ["shoulder", "elbow"])
    assert act.kind == "ctrl" and np.all(act.low == -1) and np.all(act.high == 1)
    act.apply(p.sim, ACTION, 5)
    ref.data.ctrl[:] = ACTION  # both ctrlranges are [-1, 1]
    ref.sim.step(5)
    ref.sim.forward()
    _same_state(p, ref)


def test_force_writes_generalized_forces():
    p, ref = _physics(), _physics()
    act = Actuation.force(p, ["elbow", "shoulder"], [2.0, 3.0])
    np.testing.assert_array_equal(act.high, [2.0, 3.0])
    act.apply(p.sim, ACTION, 5)
    dofs = [p.joint_dof("elbow"), p.joint_dof("shoulder")]
    ref.data.qfrc_applied[:, dofs] = ACTION
    ref.sim.step(5)
    ref.sim.forward()
    _same_state(p, ref)


def test_acceleration_and_pd_target_run_the_engine_drives():
    p, ref = _physics(), _physics()
    act = Actuation.acceleration(p, "shoulder", 3.0)
    act.apply(p.sim, ACTION[:, :1], 5)
    AccelerationDrive(ref.model, ref.actuator_id("shoulder")).step(ref.sim, ACTION[:, 0], 5)
    _same_state(p, ref)

    p, ref = _physics(), _physics()
    names = ["shoulder", "elbow"]
    act = Actuation.pd_target(p, names, kp=[30, 12], kd=[2, 1], scale=0.5, default=[0.1, -0.2])
    act.apply(p.sim, ACTION, 5)
    PDDrive(ref.model, [0, 1], [30, 12], [2, 1]).step(ref.sim, np.array([0.1, -0.2]) + 0.5 * ACTION, 5)
    _same_state(p, ref)


def test_the_mask_never_holds_a_floating_base():
    p = _physics()
    with pytest.raises(ValueError, match="free joint 0: a floating base is never actuated"):
        Actuation.force(p, ["base"], 1.0)
    for dof in range(6):  # the free joint's dofs, given by index
        with pytest.raises(ValueError, match="a floating base is never actuated"):
            Actuation(p.model, "force", [dof], -1.0, 1.0)
    with pytest.raises(ValueError, match="appears twice"):
        Actuation(p.model, "force", [6, 6], -1.0, 1.0)
    with pytest.raises(ValueError, match="actuation kind must be one of"):
        Actuation(p.model, "torque", [6], -1.0, 1.0)


def test_refusals_name_what_is_wrong():
    p = _physics()
    with pytest.raises(ValueError, match="an acceleration actuation drives one dof"):
        Actuation(p.model, "acceleration", [6, 7], -1.0, 1.0, actuators=[0, 1])
    with pytest.raises(ValueError, match=r"actuators \[1\] drive dofs \[7\]"):
        Actuation(p.model, "pd_target", [6], -1.0, 1.0, [1], 0.0, 1.0, 1.0, 1.0)
    with pytest.raises(KeyError, match="no actuator named 'wrist'"):
        Actuation.ctrl(p, ["wrist"])


SITE_MOTOR = """<mujoco><option><flag contact="disable" constraint="disable"/></option><worldbody>
  <body name="rocket"><freejoint/><geom type="box" size=".1 .1 .3" mass="1"/>
    <site name="nozzle" pos="0 0 -.3"/></body></worldbody>
  <actuator>
    <motor name="thrust" site="nozzle" gear="0 0 1 0 0 0" ctrllimited="true" ctrlrange="0 20"/>
  </actuator>
</mujoco>"""


def test_joint_kinds_refuse_a_site_actuator(tmp_path):
    """The acceleration and pd_target kinds drive the one dof of each actuator's joint: an
    actuator on a site (a thruster) has none, and they say so by name."""
    path = tmp_path / "rocket.xml"
    path.write_text(SITE_MOTOR)
    p = Physics(path, 1)
    with pytest.raises(ValueError, match="'thrust'.*not a site transmission"):
        Actuation.acceleration(p, "thrust", 1.0)
    with pytest.raises(ValueError, match="'thrust'.*not a site transmission"):
        Actuation.pd_target(p, ["thrust"], kp=1.0, kd=0.1, scale=1.0)


def test_ctrl_drives_a_site_actuator(tmp_path):
    """A 'ctrl' component maps [-1, 1] onto the thruster's ctrlrange; it drives no single dof
    (-1 in the mask), and the force acts along the site's z axis through the site."""
    path = tmp_path / "rocket.xml"
    path.write_text(SITE_MOTOR)
    p = Physics(path, 1)
    act = Actuation.ctrl(p, ["thrust"])
    assert act.dofs.tolist() == [-1]
    act.apply(p.sim, np.array([[0.5]]), 1)
    assert p.data.ctrl[0, 0] == 15.0  # 10 + 10 * 0.5
    np.testing.assert_allclose(p.data.actuator_force[0], [15.0])
    # a 1 kg box with 15 N up through its axis: az = 15 - 9.81, no rotation
    np.testing.assert_allclose(p.data.qacc[0, :3], [0.0, 0.0, 15.0 - 9.81], atol=1e-12)
    np.testing.assert_allclose(p.data.qacc[0, 3:], 0.0, atol=1e-12)


UNLIMITED_MOTOR = """<mujoco><option><flag contact="disable" constraint="disable"/></option><worldbody>
  <body name="cart"><joint name="x" type="slide" axis="1 0 0"/><geom type="sphere" size=".1"/>
    <body name="bob"><joint name="y" type="slide" axis="0 1 0"/><geom type="sphere" size=".1"/></body>
  </body></worldbody>
  <actuator>
    <motor name="limited" joint="x" ctrllimited="true" ctrlrange="-2 3"/>
    <motor name="free" joint="y"/>
  </actuator>
</mujoco>"""


def test_raw_ctrl_bounds_an_actuator_without_ctrlrange_only_when_asked(tmp_path):
    """raw_ctrl refuses an actuator without a ctrlrange, or with `unlimited` bounds it by
    +-unlimited (dm_control's action_spec: +-mjMAXVAL) while a ctrlrange stays the bound; the
    action is the control itself either way."""
    path = tmp_path / "sliders.xml"
    path.write_text(UNLIMITED_MOTOR)
    p = Physics(path, 1)
    with pytest.raises(ValueError, match="no ctrlrange"):
        Actuation.raw_ctrl(p)
    with pytest.raises(ValueError, match="unlimited must be a finite bound"):
        Actuation.raw_ctrl(p, unlimited=np.inf)
    act = Actuation.raw_ctrl(p, unlimited=1e10)
    np.testing.assert_array_equal(act.low, [-2.0, -1e10])
    np.testing.assert_array_equal(act.high, [3.0, 1e10])
    act.apply(p.sim, np.array([[1.5, -123.25]]), 1)
    np.testing.assert_array_equal(p.data.ctrl[0], [1.5, -123.25])
