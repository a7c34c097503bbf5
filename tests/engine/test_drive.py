"""engine.drive through engine.control.PDDrive, against MuJoCo stepping with the same law.

The reference runs the PD law in Python on MuJoCo's own state before every mj_step:
tau = clip(kp (q* - q) - kd qdot + g(q), the motor's force limits), g(q) = qfrc_bias at
qvel = 0 from a second MjData, ctrl = tau / (gear * gain). Our drive computes the same law
inside the stepping loop, between the velocity and the acceleration stage of each step, so
the two trajectories agree to the engine's usual trajectory tolerance. Model:
assets/tests/floating_arm.xml (a free-floating base that the drive never touches, two
hinges with motors, one of them also force-limited).
"""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from robodyn import engine
from robodyn.engine.control import PDDrive
from tests.helpers import ASSETS, report

ARM = ASSETS / "tests" / "floating_arm.xml"
KP = np.array([30.0, 12.0])
KD = np.array([2.0, 0.8])


def _reference_step(mj, d, grav, targets, nstep, gravcomp):
    """nstep mj_steps of d with the PD law evaluated on MuJoCo's state before each."""
    acts = np.arange(mj.nu)
    dofs = mj.jnt_dofadr[mj.actuator_trnid[acts, 0]]
    qadr = mj.jnt_qposadr[mj.actuator_trnid[acts, 0]]
    gear = mj.actuator_gear[acts, 0]
    gain = mj.actuator_gainprm[acts, 0]
    lo = np.where(mj.actuator_ctrllimited, mj.actuator_ctrlrange[:, 0] * gain, -np.inf)
    hi = np.where(mj.actuator_ctrllimited, mj.actuator_ctrlrange[:, 1] * gain, np.inf)
    lo = np.where(mj.actuator_forcelimited, np.maximum(lo, mj.actuator_forcerange[:, 0]), lo)
    hi = np.where(mj.actuator_forcelimited, np.minimum(hi, mj.actuator_forcerange[:, 1]), hi)
    for _ in range(nstep):
        tau = KP * (targets - d.qpos[qadr]) - KD * d.qvel[dofs]
        if gravcomp:
            grav.qpos[:] = d.qpos
            grav.qvel[:] = 0.0
            mujoco.mj_forward(mj, grav)
            tau = tau + grav.qfrc_bias[dofs]
        force = np.clip(tau / gear, lo, hi)
        d.ctrl[:] = force / gain
        mujoco.mj_step(mj, d)


@pytest.mark.parametrize("gravcomp", [False, True], ids=["pd", "pd+gravity"])
def test_pd_drive_matches_mujoco_stepping_the_same_law(gravcomp):
    model = engine.load_mjcf(ARM)
    mj = mujoco.MjModel.from_xml_path(str(ARM))
    n = 6
    rng = np.random.default_rng(11)
    sim = engine.Simulator(model, batch=n, nthread=2)
    sim.data.qpos[:] = mj.qpos0
    sim.data.qpos[:, 7:] = rng.uniform(-1.0, 1.0, (n, 2))
    sim.data.qvel[:] = rng.uniform(-1.0, 1.0, (n, mj.nv))
    targets = rng.uniform(-1.2, 1.2, (n, 2))
    targets[0] = [3.0, -3.0]  # far off: both motors saturate
    q0, v0 = sim.data.qpos.copy(), sim.data.qvel.copy()
    drive = PDDrive(model, [0, 1], KP, KD, gravity_compensation=gravcomp)
    drive.step(sim, targets, nstep=1)
    # the far-off target saturates: shoulder at its ctrlrange, elbow at its forcerange (0.8)
    np.testing.assert_allclose(np.abs(sim.data.ctrl[0]), [1.0, 0.8], rtol=0, atol=1e-15)
    for _ in range(3):
        drive.step(sim, targets, nstep=33)
    d, grav = mujoco.MjData(mj), mujoco.MjData(mj)
    worst = 0.0
    for b in range(n):
        d.qpos[:], d.qvel[:] = q0[b], v0[b]
        _reference_step(mj, d, grav, targets[b], 100, gravcomp)
        worst = max(worst, float(np.max(np.abs(d.qpos - sim.data.qpos[b]))))
        worst = max(worst, float(np.max(np.abs(d.ctrl - sim.data.ctrl[b]))))
    label = "with" if gravcomp else "no"
    report(f"PD drive ({label} gravity compensation) vs MuJoCo, 100 steps", worst, 1e-9, n)
    assert worst < 1e-9


def test_gravity_compensation_removes_the_sag():
    """The arm on a fixed base (the free joint removed): a PD drive without compensation
    settles below its targets by about g(q) / kp; with it, on them."""
    model = engine.load_mjcf(ARM.read_text().replace('<freejoint name="base"/>', ""))
    targets = np.array([[0.3, -0.4]])
    errors = {}
    for gravcomp in (False, True):
        sim = engine.Simulator(model, batch=1)
        sim.data.qpos[0] = targets[0]
        drive = PDDrive(model, [0, 1], KP, KD, gravity_compensation=gravcomp)
        drive.step(sim, targets, nstep=600)  # 3 s
        errors[gravcomp] = float(np.max(np.abs(sim.data.qpos[0] - targets[0])))
    assert errors[False] > 0.05, errors  # the sag is real
    assert errors[True] < 1e-6, errors


def test_pd_drive_refuses_bad_setups_and_commands():
    model = engine.load_mjcf(ARM)
    with pytest.raises(ValueError, match="two actuators drive the same dof"):
        PDDrive(model, [0, 0], 1.0, 1.0)
    with pytest.raises(ValueError, match="kp and kd must be finite and >= 0"):
        PDDrive(model, [0, 1], [1.0, -1.0], 1.0)
    with pytest.raises(IndexError):
        PDDrive(model, [2], 1.0, 1.0)
    sim = engine.Simulator(model, batch=3)
    drive = PDDrive(model, [0, 1], 1.0, 0.1)
    before = {k: getattr(sim.data, k).copy() for k in ("qpos", "qvel", "ctrl", "time")}
    for bad, message in (
        (np.zeros((3, 3)), r"command must have shape \(3, 2\)"),
        (np.full((3, 2), np.nan), "NaN or inf"),
    ):
        with pytest.raises(ValueError, match=message):
            drive.step(sim, bad, nstep=2)
    with pytest.raises(ValueError, match="nstep must be an int >= 1"):
        drive.step(sim, np.zeros((3, 2)), nstep=0)
    for k, v in before.items():
        np.testing.assert_array_equal(getattr(sim.data, k), v)
