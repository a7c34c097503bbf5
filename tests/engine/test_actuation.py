"""Actuator transmissions against MuJoCo, with the site transmission in detail.

Three models written here exercise `mjTRN_SITE` (engine/actuation.py):

- FREE: two free-floating bodies: a "rocket" whose thruster sits on an off-centre, rotated
  site with all six gears non-zero (and a centre of mass off the body origin), and a
  probe with a hinged flap (not a standalone free body, so implicitfast takes its general
  path) driven through sites by a velocity servo, a position servo and a force-limited
  affine actuator.
- CHAIN: a hinge/slide/hinge chain on the world with site motors, velocity and position
  actuators on rotated sites, plus a hinge motor and a tendon motor whose gear has six
  non-zero numbers (MuJoCo reads only gear[0] there; so must we).
- REFSITE: site + refsite pairs in every relation: sibling branches (a shared root dof),
  refsite on an ancestor, refsite on the world, the site on the world, site and refsite in
  two different trees (a free body and the arm), both on one body; translation-only,
  rotation-only and full gears; position-like affine bias on the length, velocity terms
  for the implicit integrators; a ball joint in the chain. Servos on a pure rotation
  (`position`, or fixed gain with biasprm[1] = -gain) have MuJoCo's periodic setpoint
  (engine/actuation.py); the same gear without the servo shape, or with a translation
  gear, has none.

Each actuator has an `actuatorfrc` sensor. For N_STATES random states (controls 1.5x the
range, so clamping acts) both engines run a forward pass: actuator_length,
actuator_moment (MuJoCo 4 stores it sparse: mju_sparse2dense), actuator_velocity,
actuator_force, qfrc_actuator, sensordata and qacc must agree to TOL. Then 500-step
trajectories with time-varying controls under each integrator (rollout vs mj_step) to
TOL_TRAJ. Analytic: a thruster through the centre of mass equal to the weight holds a free
body still; tilting the nozzle tilts the acceleration the same way (both signs), a
nozzle below the centre of mass pitches the body against its tilt.
"""

from __future__ import annotations

import functools

import mujoco
import numpy as np
import pytest

from robodyn import engine
from robodyn.engine import types as T
from robodyn.engine.control import AccelerationDrive, PDDrive
from tests.helpers import random_states, rel_err, report

N_STATES = 100
TOL = 1e-10
TOL_TRAJ = 1e-8
NSTEP = 500
N_TRAJ = 3
INTEGRATORS = ("Euler", "RK4", "implicit", "implicitfast")

FREE = """
<mujoco model="site_free">
  <option timestep="0.002" integrator="{integrator}"><flag contact="disable" constraint="disable"/></option>
  <worldbody>
    <body name="rocket" pos="0 0 1">
      <freejoint name="root"/>
      <geom type="box" size="0.1 0.15 0.3" mass="2"/>
      <geom type="sphere" size="0.05" pos="0.1 0.05 -0.2" mass="0.3"/>
      <site name="nozzle" pos="0.04 -0.07 -0.31" quat="0.9 0.2 -0.3 0.1"/>
    </body>
    <body name="probe" pos="1 0 1">
      <freejoint/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.05" mass="0.8"/>
      <site name="tip" pos="0.3 0.02 0" euler="10 20 30"/>
      <body name="flap" pos="0.3 0 0">
        <joint name="flap" type="hinge" axis="0 1 0.2" damping="0.01"/>
        <geom type="box" size="0.1 0.02 0.05" pos="0.1 0 0" mass="0.2"/>
        <site name="flap_tip" pos="0.2 0 0.03" euler="-15 5 40"/>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor name="thrust" site="nozzle" gear="0.3 -0.5 1 0.05 -0.08 0.02"
           ctrllimited="true" ctrlrange="-5 30"/>
    <velocity name="tip_damper" site="tip" kv="0.5" gear="0.2 1 -0.4 0.1 0.3 -0.2"/>
    <position name="flap_servo" site="flap_tip" kp="3" kv="0.2" gear="0.5 0.1 -0.2 0.3 -0.1 0.4"/>
    <general name="flap_push" site="flap_tip" gear="1 0 0 0 0 0.2" gaintype="affine" gainprm="2 0 0.3"
             forcelimited="true" forcerange="-1 1"/>
  </actuator>
  <sensor>
    <actuatorfrc actuator="thrust"/><actuatorfrc actuator="tip_damper"/>
    <actuatorfrc actuator="flap_servo"/><actuatorfrc actuator="flap_push"/>
  </sensor>
</mujoco>
"""

CHAIN = """
<mujoco model="site_chain">
  <option timestep="0.002" integrator="{integrator}"><flag contact="disable" constraint="disable"/></option>
  <worldbody>
    <body name="l1" pos="0 0 1" quat="0.95 0.1 0.2 0">
      <joint name="h1" type="hinge" axis="0 1 0.3" pos="0.05 0 0"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03" mass="1"/>
      <site name="s1" pos="0.15 0.03 -0.02" quat="0.8 0.3 -0.2 0.4"/>
      <body name="l2" pos="0.3 0 0" quat="0.9 0 0.3 0.1">
        <joint name="sl" type="slide" axis="1 0.2 0"/>
        <geom type="box" size="0.05 0.03 0.03" mass="0.5"/>
        <site name="s2" pos="0.05 0.02 -0.01" euler="30 -20 45"/>
        <body name="l3" pos="0.05 0 0">
          <joint name="h3" type="hinge" axis="1 0 0" pos="0 0.01 0"/>
          <geom type="capsule" fromto="0 0 0 0 0.2 0" size="0.02" mass="0.3"/>
          <site name="s3" pos="0.01 0.2 0" euler="0 90 10"/>
        </body>
      </body>
    </body>
  </worldbody>
  <tendon>
    <fixed name="t13"><joint joint="h1" coef="0.7"/><joint joint="h3" coef="-0.4"/></fixed>
  </tendon>
  <actuator>
    <motor name="m1" site="s1" gear="0.4 -0.3 0.2 0.5 -0.6 0.7"/>
    <velocity name="v2" site="s2" kv="0.6" gear="1 0.5 -0.5 0.2 0.1 -0.3"/>
    <position name="p3" site="s3" kp="4" kv="0.3" gear="-0.2 0.6 0.1 0.4 0.3 -0.5"
              ctrllimited="true" ctrlrange="-1 1"/>
    <motor name="hinge_full_gear" joint="h1" gear="2 5 7 -1 3 1"/>
    <motor name="tendon_full_gear" tendon="t13" gear="1.5 -2 4 1 1 1"/>
  </actuator>
  <sensor>
    <actuatorfrc actuator="m1"/><actuatorfrc actuator="v2"/><actuatorfrc actuator="p3"/>
    <actuatorfrc actuator="hinge_full_gear"/><actuatorfrc actuator="tendon_full_gear"/>
  </sensor>
</mujoco>
"""

REFSITE = """
<mujoco model="site_refsite">
  <option timestep="0.002" integrator="{integrator}"><flag contact="disable" constraint="disable"/></option>
  <worldbody>
    <site name="ground" pos="0.2 -0.3 0.1" quat="0.9 0.1 0.3 -0.2"/>
    <body name="base" pos="0 0 1">
      <joint name="h0" type="hinge" axis="0 0 1"/>
      <geom type="cylinder" size="0.08 0.05" mass="1"/>
      <site name="s_base" pos="0.05 0.02 0.06" euler="20 -10 5"/>
      <site name="s_base2" pos="-0.04 0.05 0" euler="-30 40 0"/>
      <body name="arm1" pos="0.1 0 0">
        <joint name="h1" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03" mass="0.7"/>
        <site name="s1" pos="0.2 0.03 0" quat="0.8 0.3 -0.2 0.4"/>
        <body name="arm2" pos="0.3 0 0" quat="0.9 0.1 0 0.2">
          <joint name="sl2" type="slide" axis="1 0 0.3"/>
          <joint name="h2" type="hinge" axis="0 0.3 1"/>
          <geom type="box" size="0.06 0.03 0.02" mass="0.4"/>
          <site name="s2" pos="0.05 0.02 -0.01" quat="0.7 -0.2 0.5 0.3"/>
        </body>
      </body>
      <body name="arm3" pos="-0.1 0 0">
        <joint name="b3" type="ball"/>
        <geom type="capsule" fromto="0 0 0 -0.25 0.05 0" size="0.03" mass="0.5"/>
        <site name="s3" pos="-0.25 0.05 0.02" quat="0.6 0.5 -0.4 0.3"/>
      </body>
    </body>
    <body name="drone" pos="1 0 1">
      <freejoint/>
      <geom type="box" size="0.1 0.1 0.03" mass="0.6"/>
      <site name="sd" pos="0.03 -0.02 0.01" euler="5 15 -25"/>
    </body>
  </worldbody>
  <actuator>
    <general name="siblings" site="s2" refsite="s3" gear="1 -2 0.5 0.3 0.6 -0.2"
             biastype="affine" biasprm="0 -3 -0.4"/>
    <general name="ancestor" site="s2" refsite="s1" gear="0.7 0.4 -1 -0.5 0.2 0.3"
             gaintype="affine" gainprm="1 0.5 0.2" biastype="affine" biasprm="0.1 -2 -0.3"/>
    <position name="to_ground" site="s3" refsite="ground" gear="0 0 1 0 0 0" kp="5" kv="0.5"/>
    <general name="ground_to_arm" site="ground" refsite="s2" gear="0.5 0.2 -0.3 0.4 -0.3 0.2"/>
    <general name="two_trees" site="sd" refsite="s_base" gear="0 0 0 0.3 -0.2 0.5"
             biastype="affine" biasprm="0 -1 -0.2"/>
    <motor name="same_body" site="s_base" refsite="s_base2" gear="1 2 3 0.4 0.5 0.6"/>
    <general name="drone_thrust" site="sd" gear="0 0 1 0 0.1 0" ctrllimited="true" ctrlrange="0 8"/>
    <position name="wrist_servo" site="s2" refsite="s1" gear="0 0 0 0.1 0.05 -0.1" kp="2" kv="0.1"/>
    <general name="not_a_servo" site="s2" refsite="s1" gear="0 0 0 0.1 0.05 -0.1"
             biastype="affine" biasprm="0 -2.5 0"/>
    <position name="full_gear_servo" site="s3" refsite="s_base" gear="0.05 0 0 0.1 0 0.1" kp="2"/>
  </actuator>
  <sensor>
    <actuatorfrc actuator="siblings"/><actuatorfrc actuator="ancestor"/>
    <actuatorfrc actuator="to_ground"/><actuatorfrc actuator="ground_to_arm"/>
    <actuatorfrc actuator="two_trees"/><actuatorfrc actuator="same_body"/>
    <actuatorfrc actuator="drone_thrust"/><actuatorfrc actuator="wrist_servo"/>
    <actuatorfrc actuator="not_a_servo"/><actuatorfrc actuator="full_gear_servo"/>
  </sensor>
</mujoco>
"""

MODELS = {"free": FREE, "chain": CHAIN, "refsite": REFSITE}
FIELDS = ("actuator_length", "actuator_moment", "actuator_velocity", "actuator_force", "qfrc_actuator")
FIELDS += ("sensordata", "qacc")


def _text(name: str, integrator: str = "Euler") -> str:
    return MODELS[name].format(integrator=integrator)


@functools.cache
def _pair(name: str, integrator: str = "Euler"):
    text = _text(name, integrator)
    return engine.load_mjcf(text), mujoco.MjModel.from_xml_string(text)


def _moment(mj: mujoco.MjModel, d: mujoco.MjData) -> np.ndarray:
    """MuJoCo 4's sparse actuator_moment as a dense (nu, nv) array."""
    out = np.zeros((mj.nu, mj.nv))
    mujoco.mju_sparse2dense(out, d.actuator_moment, d.moment_rownnz, d.moment_rowadr, d.moment_colind)
    return out


def test_models_have_what_the_tests_claim():
    """Every model's site actuators are site transmissions (refsite where named), gears
    are 6-vectors in the engine, and the joint and tendon actuators have full gears."""
    for name in MODELS:
        model, mj = _pair(name)
        assert model.actuator_gear.shape == (mj.nu, 6)
        assert model.actuator_trnid.shape == (mj.nu, 2)
        np.testing.assert_array_equal(model.actuator_gear, mj.actuator_gear)
        np.testing.assert_array_equal(model.actuator_trnid, mj.actuator_trnid)
        assert np.any(mj.actuator_trntype == T.TRN_SITE)
    _, mj = _pair("free")
    assert np.all(mj.actuator_gear[0] != 0)  # the thruster: all six gears
    assert np.any(mj.site_pos[0] != mj.body_ipos[1]) and mj.site_quat[0, 0] != 1.0
    _, mj = _pair("chain")
    assert mj.actuator_trntype[3] == T.TRN_JOINT and np.all(mj.actuator_gear[3] != 0)
    assert mj.actuator_trntype[4] == T.TRN_TENDON and np.all(mj.actuator_gear[4] != 0)
    _, mj = _pair("refsite")
    site = mj.actuator_trntype == T.TRN_SITE
    assert np.sum(site & (mj.actuator_trnid[:, 1] >= 0)) == 9


@pytest.mark.parametrize("name", list(MODELS))
def test_forward_matches_mujoco(name: str):
    """Transmission, actuator forces, actuatorfrc and qacc, ours vs mj_forward, N_STATES
    random states."""
    model, mj = _pair(name)
    qpos, qvel, ctrl = random_states(mj, N_STATES, seed=sum(map(ord, name)))
    ctrl = 1.5 * ctrl  # outside ctrlrange a third of the time: clamping acts
    sim = engine.Simulator(model, batch=N_STATES)
    sim.data.qpos[:] = qpos
    sim.data.qvel[:] = qvel
    sim.data.ctrl[:] = ctrl
    sim.forward()
    d = mujoco.MjData(mj)
    worst = dict.fromkeys(FIELDS, 0.0)
    where = {}
    for i in range(N_STATES):
        d.qpos[:], d.qvel[:], d.ctrl[:] = qpos[i], qvel[i], ctrl[i]
        mujoco.mj_forward(mj, d)
        ref = {f: np.array(getattr(d, f)) for f in FIELDS if f != "actuator_moment"}
        ref["actuator_moment"] = _moment(mj, d)
        for f in FIELDS:
            e = rel_err(getattr(sim.data, f)[i], ref[f])
            if e > worst[f]:
                worst[f], where[f] = e, i
    for f in FIELDS:
        report(f"site actuators {name} {f}", worst[f], TOL, N_STATES)
    # honesty: the site actuators produce forces and lengths, the ranges clip some states
    assert np.abs(sim.data.qfrc_actuator).max() > 0.1
    site = model.actuator_trntype == T.TRN_SITE
    assert np.abs(sim.data.actuator_moment[:, site]).max() > 0.1
    bad = {f: (f"{worst[f]:.3e}", where[f]) for f in FIELDS if not worst[f] <= TOL}
    assert not bad, f"{name}: (worst rel_err, state) beyond {TOL:.0e}: {bad}"


def test_refsite_lengths_move_and_shared_dofs_are_cleared():
    """The refsite model's lengths vary with the state (so the comparison above tests
    them), except for the site and refsite on one body, whose moment is zero; the dofs
    two sites share (the base hinge h0 for the siblings; h0 and h1 for the ancestor pair)
    get no moment, as in MuJoCo."""
    model, mj = _pair("refsite")
    qpos, qvel, ctrl = random_states(mj, 20, seed=5)
    sim = engine.Simulator(model, batch=20)
    sim.data.qpos[:], sim.data.qvel[:], sim.data.ctrl[:] = qpos, qvel, ctrl
    sim.forward()
    length = sim.data.actuator_length
    mom = sim.data.actuator_moment
    names = [mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_ACTUATOR, a) for a in range(mj.nu)]
    a = {n: i for i, n in enumerate(names)}
    for n in ("siblings", "ancestor", "to_ground", "ground_to_arm", "two_trees"):
        assert np.ptp(length[:, a[n]]) > 0.05, n
    assert np.ptp(length[:, a["same_body"]]) < 1e-12
    assert np.all(mom[:, a["same_body"]] == 0.0)
    assert np.all(length[:, a["drone_thrust"]] == 0.0)  # no refsite: length 0
    h0, h1 = mj.jnt_dofadr[mj.joint("h0").id], mj.jnt_dofadr[mj.joint("h1").id]
    assert np.all(mom[:, a["siblings"], h0] == 0.0)
    assert np.all(mom[:, a["ancestor"], [h0, h1]] == 0.0)
    assert np.abs(mom[:, a["ground_to_arm"], h0]).max() > 0.01  # the world shares nothing


def test_rotation_servo_setpoint_wraps_as_in_mujoco():
    """The forward test's random controls put wrist_servo's setpoint more than half a
    period from its length in some states and not in others, so MuJoCo's wrap is tested
    both ways; not_a_servo and full_gear_servo, which MuJoCo does not wrap, see such
    states too (their forces match MuJoCo's unwrapped ones in test_forward_matches_mujoco)."""
    model, mj = _pair("refsite")
    qpos, qvel, ctrl = random_states(mj, N_STATES, seed=sum(map(ord, "refsite")))
    ctrl = 1.5 * ctrl  # as test_forward_matches_mujoco
    d = mujoco.MjData(mj)
    names = ("wrist_servo", "not_a_servo", "full_gear_servo")
    ids = [mj.actuator(n).id for n in names]
    far = np.zeros((N_STATES, len(ids)), dtype=bool)
    for i in range(N_STATES):
        d.qpos[:], d.qvel[:], d.ctrl[:] = qpos[i], qvel[i], ctrl[i]
        mujoco.mj_forward(mj, d)
        for k, a in enumerate(ids):
            period = 2 * np.pi * np.linalg.norm(mj.actuator_gear[a, 3:])
            far[i, k] = abs(ctrl[i, a] - d.actuator_length[a]) > 0.5 * period
    counts = {n: int(c) for n, c in zip(names, far.sum(0), strict=True)}
    print(f"[wrap] states with the setpoint over half a period from the length: {counts}")
    assert 0 < far[:, 0].sum() < N_STATES
    assert far[:, 1].sum() > 0 and far[:, 2].sum() > 0


def _controls(mj: mujoco.MjModel, rng: np.random.Generator) -> np.ndarray:
    """(N_TRAJ, NSTEP, nu) controls that vary every step: a random sine per actuator and
    state, across ctrlrange (or [-1, 1]) and a little beyond it."""
    lo = np.where(mj.actuator_ctrllimited, mj.actuator_ctrlrange[:, 0], -1.0)
    hi = np.where(mj.actuator_ctrllimited, mj.actuator_ctrlrange[:, 1], 1.0)
    mid, half = 0.5 * (lo + hi), 0.5 * (hi - lo)
    t = np.arange(NSTEP) * mj.opt.timestep
    freq = rng.uniform(0.5, 3.0, (N_TRAJ, 1, mj.nu))
    phase = rng.uniform(0, 2 * np.pi, (N_TRAJ, 1, mj.nu))
    return mid + 1.2 * half * np.sin(2 * np.pi * freq * t[None, :, None] + phase)


@pytest.mark.parametrize("integrator", INTEGRATORS)
@pytest.mark.parametrize("name", list(MODELS))
def test_trajectory_matches_mujoco(name: str, integrator: str):
    """NSTEP steps with time-varying controls: our rollout vs mj_step, qpos and qvel after
    every step, and the actuatorfrc sensors of every step."""
    model, mj = _pair(name, integrator)
    assert model.opt_integrator == INTEGRATORS.index(integrator)
    qpos0, qvel0, _ = random_states(mj, N_TRAJ, seed=17, vel=1.0)
    ctrl = _controls(mj, np.random.default_rng(23))
    sim = engine.Simulator(model, batch=N_TRAJ)
    sim.data.qpos[:], sim.data.qvel[:] = qpos0, qvel0
    out = sim.rollout(ctrl)
    d = mujoco.MjData(mj)
    worst, where, count = 0.0, None, 0
    for r in range(N_TRAJ):
        mujoco.mj_resetData(mj, d)
        d.qpos[:], d.qvel[:] = qpos0[r], qvel0[r]
        for k in range(NSTEP):
            d.ctrl[:] = ctrl[r, k]
            mujoco.mj_step(mj, d)
            e = max(
                rel_err(out.qpos[r, k], d.qpos),
                rel_err(out.qvel[r, k], d.qvel),
                rel_err(out.sensordata[r, k], d.sensordata),  # sensors of the step's start
            )
            if e > worst:
                worst, where = e, (r, k)
            count += 1
        assert d.warning[mujoco.mjtWarning.mjWARN_BADQACC].number == 0
    assert count == N_TRAJ * NSTEP
    assert np.abs(out.sensordata).max() > 0.1  # the actuators act
    report(f"site actuators {name} {integrator}, {NSTEP} steps", worst, TOL_TRAJ, count)
    assert worst <= TOL_TRAJ, f"{name} {integrator}: rel_err {worst:.3e} at (state, step) {where}"


# --- analytic: a thruster on a free body -----------------------------------------------------------
TILT = 20.0  # degrees
BELOW = 0.25  # nozzle below the centre of mass (m)
HOVER = f"""
<mujoco model="hover">
  <option timestep="0.002"><flag contact="disable" constraint="disable"/></option>
  <worldbody>
    <body name="rocket" pos="0 0 1">
      <freejoint/>
      <geom type="box" size="0.1 0.1 0.4" mass="3"/>
      <site name="centre"/>
      <site name="tilt_plus" euler="0 {TILT} 0"/>
      <site name="tilt_minus" euler="0 {-TILT} 0"/>
      <site name="gimbal" pos="0 0 {-BELOW}" euler="0 {TILT} 0"/>
    </body>
  </worldbody>
  <actuator>
    <motor name="centre" site="centre" gear="0 0 1 0 0 0"/>
    <motor name="tilt_plus" site="tilt_plus" gear="0 0 1 0 0 0"/>
    <motor name="tilt_minus" site="tilt_minus" gear="0 0 1 0 0 0"/>
    <motor name="gimbal" site="gimbal" gear="0 0 1 0 0 0"/>
  </actuator>
</mujoco>
"""


HOVER_MJ = mujoco.MjModel.from_xml_string(HOVER)
WEIGHT = HOVER_MJ.body_mass[1] * 9.81


def _hover_qacc(ctrl: list[float], quat=(1.0, 0.0, 0.0, 0.0)) -> tuple[np.ndarray, np.ndarray]:
    """(our qacc, MuJoCo's qacc) at rest, the body at orientation quat, under ctrl."""
    model = engine.load_mjcf(HOVER)
    mj = HOVER_MJ
    sim = engine.Simulator(model, batch=1)
    sim.data.qpos[0, 3:7] = quat
    sim.data.ctrl[0] = ctrl
    sim.forward()
    d = mujoco.MjData(mj)
    d.qpos[3:7] = quat
    d.ctrl[:] = ctrl
    mujoco.mj_forward(mj, d)
    return np.array(sim.data.qacc[0]), np.array(d.qacc)


def test_thrust_equal_to_weight_holds_a_free_body_still():
    qacc, ref = _hover_qacc([WEIGHT, 0, 0, 0])
    report("hover: |qacc| with thrust = weight through the com", np.abs(qacc).max(), 1e-12, 1)
    assert np.abs(qacc).max() < 1e-12
    assert np.abs(ref).max() < 1e-12
    # the body rolled by phi about x: the thrust turns with it, to (0, -sin phi, cos phi) W
    phi = 0.4
    quat = (np.cos(phi / 2), np.sin(phi / 2), 0.0, 0.0)
    qacc, ref = _hover_qacc([WEIGHT, 0, 0, 0], quat)
    expect = [0.0, -9.81 * np.sin(phi), 9.81 * np.cos(phi) - 9.81, 0.0, 0.0, 0.0]
    np.testing.assert_allclose(qacc, expect, atol=1e-12)
    np.testing.assert_allclose(ref, expect, atol=1e-12)


@pytest.mark.parametrize(("actuator", "sign"), [(1, 1.0), (2, -1.0)])
def test_tilted_nozzle_tilts_the_acceleration(actuator: int, sign: float):
    """A nozzle turned by +-TILT about y pushes along (+-sin, 0, cos): x acceleration has
    the sign of the tilt, and through the centre of mass there is no rotation."""
    ctrl = [0.0] * 4
    ctrl[actuator] = WEIGHT
    qacc, ref = _hover_qacc(ctrl)
    t = np.radians(TILT)
    expect = [sign * 9.81 * np.sin(t), 0.0, 9.81 * np.cos(t) - 9.81, 0.0, 0.0, 0.0]
    np.testing.assert_allclose(qacc, expect, atol=1e-12)
    np.testing.assert_allclose(ref, expect, atol=1e-12)
    assert np.sign(qacc[0]) == sign


def test_gimbal_below_the_com_pitches_against_its_tilt():
    """Tilted +TILT about y at BELOW under the centre of mass, thrust F pushes the body +x
    and turns it about -y: torque r x F = (0, 0, -h) x (F sin t, 0, F cos t) = (0, -h F sin t, 0),
    angular acceleration -h F sin t / I_yy (the free joint's angular dofs are body-frame)."""
    force = 20.0
    qacc, ref = _hover_qacc([0, 0, 0, force])
    t = np.radians(TILT)
    m, iyy = HOVER_MJ.body_mass[1], HOVER_MJ.body_inertia[1, 1]
    expect = [
        force * np.sin(t) / m,
        0.0,
        force * np.cos(t) / m - 9.81,
        0.0,
        -BELOW * force * np.sin(t) / iyy,
        0.0,
    ]
    np.testing.assert_allclose(qacc, expect, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ref, expect, rtol=1e-12, atol=1e-12)
    assert qacc[0] > 0 and qacc[4] < 0


# --- what takes a site actuator and what does not ---------------------------------------------------
def test_drives_refuse_a_site_actuator():
    """The engine's drives act on one joint through a joint motor: a site motor is refused
    by name of its transmission."""
    model = engine.load_mjcf(HOVER)
    with pytest.raises(ValueError, match="site transmission"):
        AccelerationDrive(model, 0)
    with pytest.raises(ValueError, match="site transmission"):
        PDDrive(model, [0], kp=1.0, kd=0.1)
