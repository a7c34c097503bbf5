"""Spatial tendons wrapping spheres and cylinders against MuJoCo 4.0.0 (mj_tendon, mju_wrap).

MuJoCo 4.0.0 changed the side-site rule (its changelog: the tendon is the shortest path
homotopic to first site -> side site -> second site in the wrapping plane with the geom
removed); the engine follows the binary, checked here case by case:

- tendon_wrap.xml (an arm on a free base: a world cylinder with a side site, a sphere on
  the forearm with a side site, a cylinder on the upper arm with its side site inside (the
  inside wrap), a cylinder on the hand without a side site after a pulley), 100 random
  states: ten_length, ten_J (and its sparsity, MuJoCo's ten_J_rownnz/colind), ten_velocity,
  the tendon actuators' lengths, velocities and moments, sensors, qfrc_passive,
  qfrc_actuator, qacc and efc_force (the tendon limit rows) to 1e-10; the
  paths (ten_wrapadr, ten_wrapnum, wrap_obj exactly; wrap_xpos to 1e-10);
  every tendon wraps in at least 10 of the states, the side-site ones not in others; 200-step
  trajectories under random controls to 1e-9;
- the wrap alone, 400 random configurations for each of sphere and cylinder (tilted and
  off the origin), with a side site outside, a side site inside, and none: two sites on
  free-sliding bodies and a mocap side site, ten_length and ten_J (the unit directions of
  the two straight pieces, so the wrap points themselves) to 1e-10;
- analytically: a tendon from a world site round a world cylinder (side site below) to a
  site swinging about the cylinder's axis and sliding along it has the length
  sqrt((L0 + r arc + L1)^2 + dz^2), L_k = sqrt(|x_k|^2 - r^2) in the plane,
  arc = W - acos(r / |x_0|) - acos(r / |x_1|) with the winding W; over a sphere without a
  side site L0 + r arc + L1 with arc the angle between the sites less the two acos; both
  to 1e-12; and ten_J equals central differences of ten_length (h = 1e-6) to 1e-7, on
  these and on tendon_wrap.xml.
"""

from __future__ import annotations

import math

import mujoco
import numpy as np
import pytest

from robodyn import engine
from tests.helpers import ASSETS, random_states, rel_err, report, trajectory_errors

WRAP = ASSETS / "tests" / "tendon_wrap.xml"
N = 100
TOL = 1e-10


def _dense_ten_J(mj, d):
    J = np.zeros((mj.ntendon, mj.nv))
    mujoco.mju_sparse2dense(J, d.ten_J, mj.ten_J_rownnz, mj.ten_J_rowadr, mj.ten_J_colind)
    return J


def _wrapped(d, t):
    """True if MuJoCo's path of tendon t has wrap points on a geom (wrap_obj >= 0)."""
    a, n = d.ten_wrapadr[t], d.ten_wrapnum[t]
    return bool(np.any(d.wrap_obj.ravel()[a : a + n] >= 0))


def test_forward_matches_mujoco():
    mj = mujoco.MjModel.from_xml_path(str(WRAP))
    model = engine.load_mjcf(WRAP)
    assert np.array_equal(model.ten_J_rownnz, mj.ten_J_rownnz)
    assert np.array_equal(model.ten_J_colind, mj.ten_J_colind)
    qpos, qvel, ctrl = random_states(mj, N, seed=3)
    sim = engine.Simulator(model, batch=N)
    sim.data.qpos[:], sim.data.qvel[:], sim.data.ctrl[:] = qpos, qvel, ctrl
    sim.forward()
    d = mujoco.MjData(mj)
    fields = (
        "ten_length",
        "ten_velocity",
        "actuator_length",
        "actuator_velocity",
        "sensordata",
        "qfrc_passive",
        "qfrc_actuator",
        "qacc",
    )
    worst = dict.fromkeys((*fields, "ten_J", "actuator_moment", "wrap_xpos", "efc_force"), 0.0)
    moment = np.zeros((mj.nu, mj.nv))
    wrapped = np.zeros(mj.ntendon, dtype=int)
    limits = 0
    for i in range(N):
        d.qpos[:], d.qvel[:], d.ctrl[:] = qpos[i], qvel[i], ctrl[i]
        mujoco.mj_forward(mj, d)
        for f in fields:
            worst[f] = max(worst[f], rel_err(getattr(sim.data, f)[i], getattr(d, f)))
        worst["ten_J"] = max(worst["ten_J"], rel_err(sim.data.ten_J[i], _dense_ten_J(mj, d)))
        mujoco.mju_sparse2dense(moment, d.actuator_moment, d.moment_rownnz, d.moment_rowadr, d.moment_colind)
        worst["actuator_moment"] = max(worst["actuator_moment"], rel_err(sim.data.actuator_moment[i], moment))
        assert sim.data.nefc[i] == d.nefc  # the tendon limit rows and their forces
        worst["efc_force"] = max(worst["efc_force"], rel_err(sim.data.efc_force[i, : d.nefc], d.efc_force))
        # the paths: the same points, each the same object, at the same places
        assert np.array_equal(sim.data.ten_wrapadr[i], d.ten_wrapadr), f"state {i}"
        assert np.array_equal(sim.data.ten_wrapnum[i], d.ten_wrapnum), f"state {i}"
        npath = int(d.ten_wrapadr[-1] + d.ten_wrapnum[-1])
        assert np.array_equal(sim.data.wrap_obj[i].ravel()[:npath], d.wrap_obj.ravel()[:npath]), f"state {i}"
        ours = sim.data.wrap_xpos[i].reshape(-1, 3)[:npath]
        worst["wrap_xpos"] = max(worst["wrap_xpos"], rel_err(ours, d.wrap_xpos.reshape(-1, 3)[:npath]))
        wrapped += [_wrapped(d, t) for t in range(mj.ntendon)]
        limits += int(np.sum(d.efc_type[: d.nefc] == mujoco.mjtConstraint.mjCNSTR_LIMIT_TENDON))
    for f, err in worst.items():
        report(f"tendon_wrap {f}", err, TOL, N)
    print(f"[tendon_wrap] states where each tendon wraps (of {N}): {wrapped.tolist()}; {limits} limit rows")
    assert np.all(wrapped >= 10) and np.all(wrapped[:2] <= N - 10)  # both branches of the side-site rule
    assert limits >= 30
    for f, err in worst.items():
        assert err <= TOL, f"{f} off MuJoCo by {err:.3e}"


def test_trajectories_match_mujoco():
    mj = mujoco.MjModel.from_xml_path(str(WRAP))
    qpos, qvel, ctrl = random_states(mj, 6, seed=5, vel=1.0)
    states = {"qpos": qpos, "qvel": qvel, "ctrl": ctrl, "qacc_warmstart": np.zeros_like(qvel)}
    controls = np.random.default_rng(2).uniform(-1.0, 1.0, (200, 6, mj.nu))
    worst = max(trajectory_errors(WRAP.read_text(), states, 200, controls))
    report("tendon_wrap 200-step trajectories (qpos, qvel)", worst, 1e-9, 6)
    assert worst <= 1e-9


# ---- the wrap alone ------------------------------------------------------------------------------

PROBE = """
<mujoco model="wrap_probe">
  <option gravity="0 0 0"><flag constraint="disable" contact="disable"/></option>
  <worldbody>
    <geom name="g" type="{kind}" size="0.1 0.3" pos="0.05 -0.03 0.02" euler="20 -35 50"
          contype="0" conaffinity="0"/>
    <body name="A">
      <joint type="slide" axis="1 0 0"/><joint type="slide" axis="0 1 0"/><joint type="slide" axis="0 0 1"/>
      <inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>
      <site name="a"/>
    </body>
    <body name="B">
      <joint type="slide" axis="1 0 0"/><joint type="slide" axis="0 1 0"/><joint type="slide" axis="0 0 1"/>
      <inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>
      <site name="b"/>
    </body>
    <body name="S" mocap="true"><site name="s"/></body>
  </worldbody>
  <tendon>
    <spatial name="t"><site site="a"/><geom geom="g"{side}/><site site="b"/></spatial>
  </tendon>
</mujoco>
"""


def _outside(mj, x, radius, kind):
    """Distance of world point x from the geom's centre (sphere) or axis (cylinder) > radius."""
    local = mj.geom_quat[0]
    R = np.zeros(9)
    mujoco.mju_quat2Mat(R, local)
    p = R.reshape(3, 3).T @ (x - mj.geom_pos[0])
    return np.linalg.norm(p if kind == "sphere" else p[:2]) > radius * 1.05


@pytest.mark.parametrize("kind", ["sphere", "cylinder"])
@pytest.mark.parametrize("side", ["outside", "inside", "none"])
def test_wrap_against_mujoco(kind, side):
    """Random site and side-site positions around a tilted geom: length and the Jacobian
    (the straight pieces' directions, -u0 for the first site's slides, u1 for the second's)."""
    text = PROBE.format(kind=kind, side="" if side == "none" else ' sidesite="s"')
    mj = mujoco.MjModel.from_xml_string(text)
    rng = np.random.default_rng(sum(map(ord, kind + side)))
    n = 400
    qpos = np.zeros((n, 6))
    mocap = np.zeros((n, 3))
    centre = mj.geom_pos[0]
    for i in range(n):
        for k in (0, 3):
            while True:
                x = centre + rng.normal(0.0, 0.3, 3)
                if _outside(mj, x, 0.1, kind):
                    break
            qpos[i, k : k + 3] = x
        while True:  # a side site well outside or inside the geom (not on its surface)
            s = centre + rng.normal(0.0, 0.3 if side != "inside" else 0.04, 3)
            outside = _outside(mj, s, 0.1, kind) and np.linalg.norm(s - centre) > 0.105
            inside = np.linalg.norm(s - centre) < 0.095
            if (side == "inside" and inside) or (side != "inside" and outside):
                break
        mocap[i] = s
    sim = engine.Simulator(engine.load_mjcf(text), batch=n)
    sim.data.qpos[:] = qpos
    sim.data.mocap_pos[:, 0] = mocap
    sim.forward()
    d = mujoco.MjData(mj)
    worst_len = worst_J = 0.0
    wraps = 0
    for i in range(n):
        d.qpos[:] = qpos[i]
        d.mocap_pos[0] = mocap[i]
        mujoco.mj_forward(mj, d)
        worst_len = max(worst_len, abs(sim.data.ten_length[i, 0] - d.ten_length[0]))
        worst_J = max(worst_J, rel_err(sim.data.ten_J[i], _dense_ten_J(mj, d)))
        wraps += _wrapped(d, 0)
    label = f"wrap {kind}, side site {side}"
    report(f"{label}: ten_length", worst_len, TOL, n)
    report(f"{label}: ten_J", worst_J, TOL, n)
    print(f"[tendon_wrap] {label}: wraps in {wraps} of {n} configurations")
    assert worst_len <= TOL and worst_J <= TOL
    assert 15 <= wraps <= n - (0 if side == "inside" else 40)


# ---- analytic ------------------------------------------------------------------------------------

ANALYTIC = """
<mujoco model="wrap_analytic">
  <option gravity="0 0 0"><flag constraint="disable" contact="disable"/></option>
  <worldbody>
    <geom name="drum" type="cylinder" size="0.1 0.5" contype="0" conaffinity="0"/>
    <site name="a" pos="-0.5 0 0"/>
    <site name="below" pos="0 -0.3 0"/>
    <body name="swing">
      <joint name="swing" type="hinge" axis="0 0 1"/>
      <joint name="lift" type="slide" axis="0 0 1"/>
      <inertial pos="0.2 0 0" mass="1" diaginertia="0.1 0.1 0.1"/>
      <site name="b" pos="0.4 0 0"/>
    </body>
    <geom name="ball" type="sphere" size="0.1" pos="2 0 0" contype="0" conaffinity="0"/>
    <site name="c" pos="1.5 0 0"/>
    <body name="arm" pos="2 0 0">
      <joint name="turn" type="hinge" axis="0 1 0"/>
      <inertial pos="0.2 0 0" mass="1" diaginertia="0.1 0.1 0.1"/>
      <site name="e" pos="0.4 0 0"/>
    </body>
  </worldbody>
  <tendon>
    <spatial name="over_drum"><site site="a"/><geom geom="drum" sidesite="below"/><site site="b"/></spatial>
    <spatial name="over_ball"><site site="c"/><geom geom="ball"/><site site="e"/></spatial>
  </tendon>
</mujoco>
"""


def _central_differences(model, mj, qpos, h=1e-6):
    """d ten_length / d qpos_v by central differences (mj_integratePos steps), (n, ntendon, nv)."""
    probe = engine.Simulator(model, batch=2 * len(qpos) * mj.nv)
    rows = []
    for q0 in qpos:
        for v in range(mj.nv):
            for sign in (1.0, -1.0):
                q = q0.copy()
                dq = np.zeros(mj.nv)
                dq[v] = sign * h
                mujoco.mj_integratePos(mj, q, dq, 1.0)
                rows.append(q)
    probe.data.qpos[:] = np.array(rows)
    probe.forward()
    L = probe.data.ten_length.reshape(len(qpos), mj.nv, 2, mj.ntendon)
    return np.transpose((L[:, :, 0] - L[:, :, 1]) / (2 * h), (0, 2, 1))


def test_wrap_lengths_analytic_and_jacobian_is_the_derivative():
    mj = mujoco.MjModel.from_xml_string(ANALYTIC)
    model = engine.load_mjcf(ANALYTIC)
    rng = np.random.default_rng(7)
    n = 50
    # the swing keeps the drum's wrap on (its winding W = pi + q exceeds both acos), the
    # turn keeps the ball's chord through the sphere
    qpos = np.column_stack([rng.uniform(-0.3, 1.0, n), rng.uniform(-0.2, 0.2, n), rng.uniform(-0.4, 0.4, n)])
    sim = engine.Simulator(model, batch=n)
    sim.data.qpos[:] = qpos
    sim.forward()
    r = 0.1
    q, z, turn = qpos.T
    L0 = math.sqrt(0.5**2 - r * r)
    L1 = math.sqrt(0.4**2 - r * r)
    arc = math.pi + q - math.acos(r / 0.5) - math.acos(r / 0.4)
    drum = np.sqrt((L0 + r * arc + L1) ** 2 + z**2)
    ball = L0 + L1 + r * (math.pi - np.abs(turn) - math.acos(r / 0.5) - math.acos(r / 0.4))
    worst_drum = float(np.max(np.abs(sim.data.ten_length[:, 0] - drum)))
    worst_ball = float(np.max(np.abs(sim.data.ten_length[:, 1] - ball)))
    report("wrap analytic: cylinder (helix) length", worst_drum, 1e-12, n)
    report("wrap analytic: sphere length", worst_ball, 1e-12, n)
    assert worst_drum <= 1e-12 and worst_ball <= 1e-12
    fd = _central_differences(model, mj, qpos[:10])
    worst_J = float(np.max(np.abs(fd - sim.data.ten_J[:10])))
    report("wrap analytic: ten_J vs central differences", worst_J, 1e-7, 10)
    assert worst_J <= 1e-7


def test_wrap_jacobian_is_the_derivative_on_the_arm():
    """ten_J against central differences of ten_length on tendon_wrap.xml at random states,
    most of them with wrapping tendons (none of these states lies within h of a switch
    between wrapping and not, where the length has a kink)."""
    mj = mujoco.MjModel.from_xml_path(str(WRAP))
    model = engine.load_mjcf(WRAP)
    qpos, _, _ = random_states(mj, 40, seed=11)
    sim = engine.Simulator(model, batch=len(qpos))
    sim.data.qpos[:] = qpos
    sim.forward()
    fd = _central_differences(model, mj, qpos)
    worst = float(np.max(np.abs(fd - sim.data.ten_J)))
    d = mujoco.MjData(mj)
    wrapping = 0
    for i in range(len(qpos)):
        d.qpos[:] = qpos[i]
        mujoco.mj_forward(mj, d)
        wrapping += any(_wrapped(d, t) for t in (0, 1, 3))
    report("tendon_wrap ten_J vs central differences (h = 1e-6)", worst, 1e-7, len(qpos))
    print(f"[tendon_wrap] {wrapping} of {len(qpos)} states with flexor, biceps or hoist wrapping")
    assert worst <= 1e-7 and wrapping >= 20


@pytest.mark.parametrize("kind", ["capsule", "box", "ellipsoid"])
def test_other_wrapping_geoms_are_refused_naming_the_geom(kind):
    """Only spheres and cylinders can be wrapped: MuJoCo's compiler refuses any other geom
    in a spatial tendon, and the loader passes its message on (a ModelError naming it)."""
    text = ANALYTIC.replace('type="sphere" size="0.1"', f'type="{kind}" size="0.1 0.1 0.1"')
    with pytest.raises(engine.ModelError, match="geom 'ball' in tendon 1.* is not sphere or cylinder"):
        engine.load_mjcf(text)
