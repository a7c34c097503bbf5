"""Constrained motion: trajectories against mj_step, and physical checks without an oracle.

1. Trajectories. Gymnasium's ant, humanoid, hopper, walker2d and half_cheetah, loaded as
   they ship (their own integrator, solver, iterations and tolerance: Newton for all but
   humanoid's PGS), dropped on the floor from random heights, tilts and velocities and
   driven by random controls; ours and MuJoCo's mj_step from the same start with the same
   controls. Our models with limits and equalities likewise, under Euler and implicitfast.
   The solvers repeat MuJoCo's iterations (PGS: its shuffled order and Nesterov steps; Newton:
   its line search), so trajectories agree far below the solver tolerance; contact makes
   the dynamics non-smooth and small differences grow, so the horizon is short.
2. Physical checks (properties any correct contact model has, no oracle needed): a box, a
   capsule and a sphere come to rest on a plane at the right height; a stack of four boxes
   stands; contact forces stay in the friction cone; a joint driven against its limit stays
   within it; a four-bar loop closed by `connect` keeps its closure.
"""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from robodyn import engine
from tests.helpers import ASSETS, GYM_ASSETS, rel_err, report, with_options

GYM_MODELS = ["ant.xml", "humanoid.xml", "hopper.xml", "walker2d.xml", "half_cheetah.xml"]
OUR_MODELS = ["constraint_equality.xml", "constraint_fourbar.xml", "constraint_stack.xml"]
N_ROLL = 6  # rollouts per model
N_STEP = 200  # steps per rollout
# Trajectory tolerances, relative to max(1, |x|). Contact makes the dynamics non-smooth and
# the last bits of rounding grow along a trajectory; the worst seen over the gymnasium
# robots and our models (pytest -s prints each) was qpos 1.6e-12 (ant) and qvel 9.2e-11
# (constraint_equality.xml, implicitfast), so the bars are about 60x and 50x those.
TOL_TRAJ = 1e-10  # qpos
TOL_TRAJ_VEL = 5e-9  # qvel


def _start_states(mj: mujoco.MjModel, n: int, seed: int):
    """n start states: the robot above the floor (free root: random height up to 0.5 m and
    tilt; planar: root slide z raised), random joint velocities."""
    rng = np.random.default_rng(seed)
    qpos = np.tile(mj.qpos0, (n, 1))
    free = mj.jnt_type[0] == mujoco.mjtJoint.mjJNT_FREE
    for i in range(n):
        if free:
            qpos[i, 2] += rng.uniform(0.0, 0.5)
            q = rng.normal(size=4) * [4.0, 1.0, 1.0, 1.0]  # mostly upright
            qpos[i, 3:7] = q / np.linalg.norm(q)
        else:
            qpos[i, 1] += rng.uniform(0.0, 0.4)
        qpos[i, 7 if free else 3 :] += rng.uniform(-0.2, 0.2, mj.nq - (7 if free else 3))
    qvel = rng.normal(0.0, 0.5, (n, mj.nv))
    return qpos, qvel


def _rollout_pair(text: str, qpos: np.ndarray, qvel: np.ndarray, nstep: int, seed: int):
    """Step ours (one batch) and MuJoCo (one MjData per rollout) side by side; returns the
    worst relative qpos and qvel error and the number of steps with contacts."""
    mj = mujoco.MjModel.from_xml_string(text)
    n = len(qpos)
    sim = engine.Simulator(engine.load_mjcf(text), batch=n)
    sim.data.qpos[:] = qpos
    sim.data.qvel[:] = qvel
    datas = []
    for i in range(n):
        d = mujoco.MjData(mj)
        d.qpos[:] = qpos[i]
        d.qvel[:] = qvel[i]
        datas.append(d)
    rng = np.random.default_rng(seed)
    worst_q = worst_v = 0.0
    touching = 0
    for _ in range(nstep):
        ctrl = rng.uniform(-1.0, 1.0, (n, mj.nu))
        sim.data.ctrl[:] = ctrl
        sim.step()
        for i, d in enumerate(datas):
            d.ctrl[:] = ctrl[i]
            mujoco.mj_step(mj, d)
            touching += d.ncon > 0
            worst_q = max(worst_q, rel_err(sim.data.qpos[i], d.qpos))
            worst_v = max(worst_v, rel_err(sim.data.qvel[i], d.qvel))
    return worst_q, worst_v, touching


@pytest.mark.parametrize("name", GYM_MODELS)
def test_gym_trajectories(name: str):
    """A gymnasium robot dropped on the floor, as it ships: ours against mj_step."""
    path = GYM_ASSETS / name
    text = path.read_text()
    mj = mujoco.MjModel.from_xml_string(text)
    qpos, qvel = _start_states(mj, N_ROLL, seed=sum(map(ord, name)))
    worst_q, worst_v, touching = _rollout_pair(text, qpos, qvel, N_STEP, seed=1)
    report(f"{name} {N_STEP}-step trajectories qpos", worst_q, TOL_TRAJ, N_ROLL)
    report(f"{name} {N_STEP}-step trajectories qvel", worst_v, TOL_TRAJ_VEL, N_ROLL)
    assert touching >= N_ROLL * N_STEP // 4, f"only {touching} steps with contacts"
    assert worst_q <= TOL_TRAJ
    assert worst_v <= TOL_TRAJ_VEL


@pytest.mark.parametrize("integrator", ["Euler", "implicitfast"])
@pytest.mark.parametrize("model", OUR_MODELS)
def test_model_trajectories(model: str, integrator: str):
    """Our models with limits, equalities and contacts, with both integrators that treat
    damping implicitly, against mj_step."""
    text = with_options(ASSETS / "tests" / model, integrator=integrator)
    mj = mujoco.MjModel.from_xml_string(text)
    rng = np.random.default_rng(3)
    qpos = np.tile(mj.qpos0, (4, 1))
    qvel = rng.normal(0.0, 0.5, (4, mj.nv))
    worst_q, worst_v, _ = _rollout_pair(text, qpos, qvel, N_STEP, seed=2)
    report(f"{model} {integrator} {N_STEP}-step qpos", worst_q, TOL_TRAJ, 4)
    report(f"{model} {integrator} {N_STEP}-step qvel", worst_v, TOL_TRAJ_VEL, 4)
    assert worst_q <= TOL_TRAJ
    assert worst_v <= TOL_TRAJ_VEL


PILE = ASSETS / "tests" / "constraint_pile.xml"  # 40 free bodies, nv = 240
# relative to max(1, |x|); worst seen (Newton and PGS) qpos 4.1e-14, qvel 5.5e-14: about 100x
TOL_PILE = 4e-12  # qpos
TOL_PILE_VEL = 5e-12  # qvel


@pytest.mark.parametrize("solver", ["Newton", "PGS"])
def test_many_bodies_trajectories(solver: str):
    """40 spheres and boxes (nv = 240, rows at most 12 dofs wide, so compact) dropped on a
    floor and on each other, ours against mj_step for 200 steps, with islands disabled in
    both: MuJoCo then solves one problem as we do, with the same iterations, so the
    trajectories agree to rounding grown by the contacts (with islands, MuJoCo's per-island
    iterates end elsewhere within the solver tolerance: ~1e-6 apart after 200 steps)."""
    text = with_options(PILE, flags={"island": "disable"}, solver=solver)
    mj = mujoco.MjModel.from_xml_string(text)
    rng = np.random.default_rng(6)
    qpos = np.tile(mj.qpos0, (3, 1))
    qvel = rng.normal(0.0, 0.3, (3, mj.nv))
    worst_q, worst_v, touching = _rollout_pair(text, qpos, qvel, N_STEP, seed=0)
    report(f"pile {solver} {N_STEP}-step qpos", worst_q, TOL_PILE, 3)
    report(f"pile {solver} {N_STEP}-step qvel", worst_v, TOL_PILE_VEL, 3)
    assert touching >= 3 * N_STEP * 9 // 10, f"only {touching} steps with contacts"
    assert worst_q <= TOL_PILE
    assert worst_v <= TOL_PILE_VEL


# ---- physical checks ----------------------------------------------------------------------------


def _run(path_or_text, seconds: float, batch: int = 1, **options) -> engine.Simulator:
    text = with_options(path_or_text, **options)
    sim = engine.Simulator(engine.load_mjcf(text), batch=batch)
    sim.step(int(round(seconds / sim.model.opt_timestep)))
    sim.forward()
    return sim


@pytest.mark.parametrize("solver", ["Newton", "PGS"])
def test_bodies_come_to_rest_at_the_right_height(solver: str):
    """A box (half-height 0.1), a capsule lying down (radius 0.05) and a sphere (radius
    0.08) dropped onto a plane rest at their heights, within the soft contacts' small
    steady penetration, and agree with MuJoCo's resting state."""
    path = ASSETS / "tests" / "constraint_rest.xml"
    sim = _run(path, 2.0, solver=solver)
    mj = mujoco.MjModel.from_xml_string(with_options(path, solver=solver))
    d = mujoco.MjData(mj)
    mujoco.mj_step(mj, d, nstep=int(round(2.0 / mj.opt.timestep)))
    z = sim.data.qpos[0, [2, 9, 16]]
    expected = np.array([0.1, 0.05, 0.08])
    sink = expected - z
    speed = np.max(np.abs(sim.data.qvel[0]))
    box, capsule, sphere = sink
    print(f"[physics] {solver} resting sink (m): box {box:.2e}, capsule {capsule:.2e}, sphere {sphere:.2e}")
    assert np.all(sink > 0) and np.all(sink < 2e-3), f"heights {z} vs {expected}"
    assert speed < 1e-3, f"still moving: max |qvel| = {speed}"
    np.testing.assert_allclose(z, d.qpos[[2, 9, 16]], atol=1e-8)
    # a resting body's quaternion stays level: the box flat, the capsule lying along x
    assert abs(sim.data.qpos[0, 3]) > 1 - 1e-6


@pytest.mark.parametrize("solver", ["Newton", "PGS"])
def test_stack_of_boxes_stands(solver: str):
    """Four cubes stacked on a plane stay stacked for 3 s: each within 2 mm of its start
    sideways, at its height within 3 mm, at rest; the contact forces carry the weight."""
    path = ASSETS / "tests" / "constraint_stack.xml"
    sim = _run(path, 3.0, solver=solver)
    q = sim.data.qpos[0].reshape(4, 7)
    drift = np.max(np.abs(q[:, :2]))
    heights = q[:, 2] - (0.1 + 0.2 * np.arange(4))
    speed = np.max(np.abs(sim.data.qvel[0]))
    print(f"[physics] {solver} stack: drift {drift:.2e} m, sink {heights.min():.2e} m, |qvel| {speed:.2e}")
    assert drift < 2e-3
    assert np.all(np.abs(heights) < 3e-3)
    assert speed < 1e-2
    # the floor carries the weight of all four boxes
    forces = sim.contact_force()[0]
    g = sim.model.opt_gravity[2]
    d = sim.data
    floor = [c for c in range(d.ncon[0]) if 0 in d.contact_geom[0, c] and d.contact_efc_address[0, c] >= 0]
    weight = -g * sim.model.body_mass[1:].sum()
    np.testing.assert_allclose(forces[floor, 0].sum(), weight, rtol=1e-2)


def test_contact_forces_in_cone_along_rollouts():
    """Along rollouts of the stack tipping over (pushed sideways) and of the ant dropped on
    the floor, every contact force lies in the pyramidal friction cone."""
    cases = [
        (ASSETS / "tests" / "constraint_stack.xml", "Newton"),
        (ASSETS / "tests" / "constraint_stack.xml", "PGS"),
        (GYM_ASSETS / "ant.xml", "Newton"),
    ]
    worst = 0.0
    count = 0
    for path, solver in cases:
        sim = engine.Simulator(engine.load_mjcf(with_options(path, solver=solver)), batch=4)
        sim.data.qvel[:] = np.random.default_rng(0).normal(0.0, 1.0, sim.data.qvel.shape)
        if path.name == "ant.xml":
            sim.data.qpos[:, 2] += 0.3
        for _ in range(100):
            sim.step(5)
            sim.forward()
            d = sim.data
            forces = sim.contact_force()
            for i in range(sim.batch):
                for c in range(d.ncon[i]):
                    adr = d.contact_efc_address[i, c]
                    if adr < 0:
                        continue
                    rows = 2 * (d.contact_dim[i, c] - 1) if d.contact_dim[i, c] > 1 else 1
                    fn = forces[i, c, 0]
                    worst = max(worst, -d.efc_force[i, adr : adr + rows].min() / max(1.0, fn))
                    for k in range(d.contact_dim[i, c] - 1):
                        excess = abs(forces[i, c, 1 + k]) - d.contact_friction[i, c, k] * fn
                        worst = max(worst, excess / max(1.0, fn))
                    count += 1
    report("rollouts: cone violation (relative)", worst, 1e-12, count)
    # 8,997 contacts with forces in these rollouts (the "9,000" of tests/README.md); the
    # tipping stack's contacts may come and go with the last bits of rounding, so 1 % less
    assert count >= 8900, f"only {count} contacts checked"
    assert worst <= 1e-12


LIMITED_ARM = """
<mujoco>
  <compiler angle="radian"/>
  <option timestep="0.002"/>
  <worldbody>
    <body pos="0 0 1">
      <joint name="hinge" type="hinge" axis="0 1 0" range="-0.5 0.5"/>
      <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.03"/>
      <body pos="0.5 0 0">
        <joint name="slide" type="slide" axis="1 0 0" range="-0.1 0.1"/>
        <geom type="box" size="0.05 0.05 0.05"/>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor joint="hinge" gear="20"/>
    <motor joint="slide" gear="50"/>
  </actuator>
</mujoco>
"""


def test_joint_at_its_limit_stays_within_it():
    """A hinge and a slide driven hard against their limits (by gravity and motors, from a
    run-up) overshoot them only by what the soft limit's 20 ms time constant allows, and at
    rest stay within 2 mm / 2 mrad of them; MuJoCo's trajectory is the same."""
    mj = mujoco.MjModel.from_xml_string(LIMITED_ARM)
    sim = engine.Simulator(engine.load_mjcf(LIMITED_ARM), batch=2)
    sim.data.ctrl[:] = [[1.0, 1.0], [-1.0, -1.0]]
    sim.data.qvel[:] = [[3.0, 1.0], [-3.0, -1.0]]
    datas = [mujoco.MjData(mj) for _ in range(2)]
    for i, d in enumerate(datas):
        d.ctrl[:] = sim.data.ctrl[i]
        d.qvel[:] = sim.data.qvel[i]
    worst = np.zeros(2)
    for _ in range(1000):
        sim.step()
        for d in datas:
            mujoco.mj_step(mj, d)
        over = np.maximum(np.abs(sim.data.qpos) - [0.5, 0.1], 0.0).max(axis=0)
        worst = np.maximum(worst, over)
    rest = np.maximum(np.abs(sim.data.qpos) - [0.5, 0.1], 0.0).max(axis=0)
    print(f"[physics] limit overshoot: hinge {worst[0]:.2e} rad, slide {worst[1]:.2e} m; at rest {rest}")
    assert np.all(np.abs(sim.data.qpos) > [0.49, 0.099])  # they are at their limits
    assert worst[0] < 0.1 and worst[1] < 0.05  # ~ impact speed x 20 ms, plus the motors' push
    assert np.all(rest < 2e-3)
    for i, d in enumerate(datas):
        np.testing.assert_allclose(sim.data.qpos[i], d.qpos, atol=1e-9)


def test_four_bar_keeps_its_closure():
    """A four-bar linkage closed by a connect equality (time constant 5 ms) turning under
    gravity for 5 s from three run-ups: the distance between the two anchors of the
    closure stays below 1 mm (links are 0.2-0.4 m), as in MuJoCo."""
    path = ASSETS / "tests" / "constraint_fourbar.xml"
    mj = mujoco.MjModel.from_xml_path(str(path))
    speeds = [1.0, -2.0, 3.0]
    sim = engine.Simulator(engine.load_mjcf(path), batch=3)
    sim.data.qvel[:, 0] = speeds
    datas = [mujoco.MjData(mj) for _ in speeds]
    for d, v in zip(datas, speeds, strict=True):
        d.qvel[0] = v
    worst = 0.0
    worst_mj = 0.0
    swing = 0.0
    for _ in range(2500):
        sim.step()
        sim.forward()
        worst = max(worst, float(np.max(np.linalg.norm(sim.data.efc_pos[:, :3], axis=1))))
        swing = max(swing, float(np.max(np.abs(sim.data.qpos[:, 0]))))
        for d in datas:
            mujoco.mj_step(mj, d)
            mujoco.mj_forward(mj, d)
            worst_mj = max(worst_mj, float(np.linalg.norm(d.efc_pos[:3])))
    report("four-bar closure |p1 - p2| (m)", worst, 1e-3, 3)
    print(f"[physics] four-bar closure: ours {worst:.3e} m, MuJoCo {worst_mj:.3e} m; swing {swing:.2f} rad")
    assert swing > 3.0  # the crank turned
    assert worst < 1e-3
    assert abs(worst - worst_mj) < 1e-6


# ---- the Simulator with contacts ----------------------------------------------------------------


def test_snapshot_restore_with_contacts_is_bit_exact():
    """The warm start is part of the state: restoring a snapshot taken mid-contact repeats
    the following steps bit for bit (with PGS, whose iterates depend on it most)."""
    sim = engine.Simulator(engine.load_mjcf(with_options(GYM_ASSETS / "ant.xml", solver="PGS")), batch=3)
    sim.data.qpos[:, 2] += np.array([0.0, 0.1, 0.3])
    sim.step(60)
    snap = sim.snapshot()
    touching = 0
    for _ in range(40):
        sim.step()
        touching += int(np.sum(sim.data.ncon > 0))
    assert touching >= 40
    first = sim.data.qpos.copy(), sim.data.qvel.copy()
    sim.data.qacc_warmstart[:] = 0.0  # scribble over the state
    sim.restore(snap)
    sim.step(40)
    np.testing.assert_array_equal(sim.data.qpos, first[0])
    np.testing.assert_array_equal(sim.data.qvel, first[1])


def test_contact_overflow_in_step_raises():
    """A row that finds more contacts than nconmax during step() raises
    ContactOverflowError naming it, and is left at its state before that step."""
    path = ASSETS / "tests" / "constraint_stack.xml"
    small = engine.load_mjcf(path, nconmax=4)
    sim = engine.Simulator(small, batch=2)
    z = sim.data.qpos.reshape(2, 4, 7)[:, :, 2]
    z[0] = [0.099, 0.298, 0.497, 0.696]  # row 0: every box pressed into the next, 16 contacts
    z[1] = [0.2, 0.5, 0.8, 1.1]  # row 1: apart, no contact
    before = sim.data.qpos.copy()
    with pytest.raises(engine.ContactOverflowError, match=r"row 0 has \d+ contacts.*nconmax=4"):
        sim.step()
    np.testing.assert_array_equal(sim.data.qpos[0], before[0])
