"""The touch sensor (engine/sensors.py) against MuJoCo 4.0.0 and the weight it must read.

The model (assets/tests/sensors_touch.xml): a cube on the floor with touch sites that take
all, one, or none of its floor contacts (one holds no contact point but lies on the
contacts' rays, as MuJoCo's test wants), a condim-6 ball with margin and gap (contacts in
the gap have no rows) that is geom 1 of its contacts with the cube and geom 2 of those with
the floor, a rod on a condim-1 pair, a pad on the world's floor, and rangefinders riding
along. Islands are disabled in the model, so MuJoCo solves the problem we solve and the
solver's forces agree to rounding.

- Analytic: the cube settled for 2 s reads its weight m g through `sole` and `below`,
  none through `core`; at any state with the cube flat on the floor, Newton's law for the
  cube (its only vertical forces are gravity and the floor's normal forces, its centre of
  mass at its origin) gives sole = m (g + qacc_z) to rounding, and the corner site reads
  the one contact it holds.
- Random states from MuJoCo rollouts of the three bodies dropped together: sensordata
  against mj_forward at the same state (and warm start). The touch value is a sum of the
  solver's converged normal forces; the same iterations on the same rows give them to
  rounding, so the tolerance is 1e-9 relative to max(1, |value|), as for qacc with the
  models' own solver settings (tests/engine/test_solver.py).
- A 200-step trajectory of the same scene, ours against mj_step, sensordata each step.
"""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from robodyn import engine
from robodyn.engine.binding import units_for
from tests.helpers import ASSETS, load_pair, rel_err, report, set_state, with_options

MODEL = ASSETS / "tests" / "sensors_touch.xml"
NSTATE = 150
TOL = 1e-9
TOUCH = ("sole", "corner", "below", "core", "lid", "skin", "rod_end", "pad")


@pytest.fixture(scope="module")
def pair():
    return load_pair(MODEL)


def _sensor(mj, name):
    i = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_SENSOR, name)
    return slice(mj.sensor_adr[i], mj.sensor_adr[i] + mj.sensor_dim[i])


def _start(mj, rng):
    """A start state: the cube a little above the floor and tilted, the ball above the cube
    (off its centre: it rolls off or stays), the rod above the floor; random velocities."""
    d = mujoco.MjData(mj)
    q = d.qpos
    q[0:3] = [*rng.uniform(-0.05, 0.05, 2), 0.1 + rng.uniform(0.0, 0.15)]
    q[3:7] = [1.0, *rng.normal(0.0, 0.15, 3)]
    q[7:10] = [*rng.uniform(-0.08, 0.08, 2), 0.35 + rng.uniform(0.0, 0.2)]
    q[14:17] = [0.45, 0.0, 0.05 + rng.uniform(0.0, 0.1)]
    q[17:21] = [0.7071068, *rng.normal(0.0, 0.1, 2), 0.7071068]
    for a in (3, 10, 17):
        q[a : a + 4] /= np.linalg.norm(q[a : a + 4])
    d.qvel[:] = rng.normal(0.0, 0.3, mj.nv)
    return d


def _states(mj, n, seed):
    """n states (qpos, qvel, qacc_warmstart) along MuJoCo rollouts from random starts, every
    7th step of 300 with at least one contact."""
    rng = np.random.default_rng(seed)
    out = {"qpos": [], "qvel": [], "ctrl": [], "qacc_warmstart": []}
    while len(out["qpos"]) < n:
        d = _start(mj, rng)
        for t in range(300):
            mujoco.mj_step(mj, d)
            if t % 7 == 0 and d.ncon > 0 and len(out["qpos"]) < n:
                for k in out:
                    out[k].append(getattr(d, k).copy())
    return {k: np.array(v) for k, v in out.items()}


def _sensor_errors(mj, ours, ref):
    worst = {}
    for i in range(mj.nsensor):
        a, n = mj.sensor_adr[i], mj.sensor_dim[i]
        name = mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_SENSOR, i)
        worst[name] = max(rel_err(o[a : a + n], r[a : a + n]) for o, r in zip(ours, ref, strict=True))
    return worst


def _assert_sensors(mj, ours, ref, label):
    worst = _sensor_errors(mj, ours, ref)
    name, w = max(worst.items(), key=lambda kv: kv[1])
    report(f"{label} (worst sensor {name})", w, TOL, len(ours))
    assert w <= TOL, f"sensors differ from MuJoCo beyond {TOL}: {worst}"


def test_resting_cube_reads_its_weight():
    """After 2 s at rest on the floor (the ball and rod moved far away), sole and below read
    m g, core reads 0, and sole = m (g + qacc_z) holds to rounding; the same in MuJoCo.

    Solved to tolerance 1e-15: the model's own (1e-8) stops Newton with the cube's force
    balance off by the unresolved gradient, 7e-8 N of 19.62 (3.6e-9) in both engines."""
    m, mj = load_pair(with_options(MODEL, tolerance="1e-15", iterations="200"))
    sim = engine.Simulator(m, batch=1)
    q = sim.data.qpos[0]
    q[7:10] = [2.0, 2.0, 0.08]  # the ball far away on the floor
    q[14:17] = [-2.0, 2.0, 0.05]  # so is the rod
    d = mujoco.MjData(mj)
    d.qpos[:] = q
    nstep = int(round(2.0 / mj.opt.timestep))
    sim.step(nstep)
    sim.forward()
    mujoco.mj_step(mj, d, nstep)
    mujoco.mj_forward(mj, d)
    ours = sim.data.sensordata[0]

    mass = m.body_mass[1]
    weight = -mass * m.opt_gravity[2]
    speed = np.abs(sim.data.qvel[0, :6]).max()
    err = abs(ours[_sensor(mj, "sole")][0] - weight) / weight
    print(
        f"[physics] resting cube: touch {ours[_sensor(mj, 'sole')][0]!r} vs m g {weight!r}, "
        f"relative {err:.1e}, |qvel| {speed:.1e}, qacc_z {sim.data.qacc[0, 2]:.1e}"
    )
    assert speed < 1e-6 and sim.data.ncon[0] == 4 + 2 + 1  # cube corners, rod ends, ball
    # at rest (|qvel| 2e-15, |qacc_z| 6e-17 seen) the floor carries m g: 5e-16 seen
    assert err < 1e-12
    newton = mass * (sim.data.qacc[0, 2] - m.opt_gravity[2])
    assert ours[_sensor(mj, "sole")][0] == pytest.approx(newton, rel=1e-12)
    assert ours[_sensor(mj, "below")][0] == ours[_sensor(mj, "sole")][0]
    assert ours[_sensor(mj, "pad")][0] == ours[_sensor(mj, "sole")][0]  # the floor's side
    assert ours[_sensor(mj, "core")][0] == 0.0
    assert 0.2 * weight < ours[_sensor(mj, "corner")][0] < 0.3 * weight  # one corner of four
    _assert_sensors(mj, sim.data.sensordata, d.sensordata[None], "resting cube")


def test_touch_matches_mujoco_at_random_states(pair):
    m, mj = pair
    states = _states(mj, NSTATE, seed=0)
    sim = engine.Simulator(m, batch=NSTATE)
    set_state(sim, states)
    sim.forward()
    d = mujoco.MjData(mj)
    ref = []
    for i in range(NSTATE):
        set_state(None, states, d, i)
        mujoco.mj_forward(mj, d)
        ref.append(d.sensordata.copy())
    ref = np.array(ref)
    assert len(ref) >= 100
    _assert_sensors(mj, sim.data.sensordata, ref, "touch and rangefinders, random contact states")

    corner = ref[:, _sensor(mj, "corner")][:, 0]
    sole = ref[:, _sensor(mj, "sole")][:, 0]
    # honesty: every touch sensor reads something in some states and nothing in others
    # (core never: its rays all point away from it), and the sums differ from each other
    for name in TOUCH:
        v = ref[:, _sensor(mj, name)][:, 0]
        assert np.all(v >= 0), name
        if name == "core":
            assert np.all(v == 0)
        else:
            assert 0 < np.sum(v > 0) < len(v), (name, np.sum(v > 0))
    assert np.any((corner > 0) & (corner < sole))
    skin = ref[:, _sensor(mj, "skin")][:, 0]
    assert 0 < np.sum(skin == 6.0) < len(skin)  # the cutoff clips some readings
    # a ball contact in the gap has no rows (efc_address -1): the sensor skips it
    gap = [
        i for i in range(NSTATE) for c in range(sim.data.ncon[i]) if sim.data.contact_efc_address[i, c] < 0
    ]
    assert len(gap) >= 5, f"only {len(gap)} contacts in the gap"
    # condim 1 (the rod's pair), 3 (the cube) and 6 (the ball) all counted
    dims = {int(x) for i in range(NSTATE) for x in sim.data.contact_dim[i, : sim.data.ncon[i]]}
    assert dims == {1, 3, 6}


def test_touch_and_rangefinder_trajectories_match_mujoco(pair):
    """Four 200-step trajectories of the scene dropped from random starts, ours against
    mj_step: sensordata after each step (MuJoCo's belongs to the state each step started
    from; so does ours)."""
    m, mj = pair
    rng = np.random.default_rng(7)
    starts = [_start(mj, rng) for _ in range(4)]
    sim = engine.Simulator(m, batch=len(starts))
    for i, d in enumerate(starts):
        sim.data.qpos[i] = d.qpos
        sim.data.qvel[i] = d.qvel
    ours, ref, qerr = [], [], 0.0
    for _ in range(200):
        sim.step()
        for d in starts:
            mujoco.mj_step(mj, d)
        ours.append(sim.data.sensordata.copy())
        ref.append(np.array([d.sensordata for d in starts]))
        qerr = max(qerr, max(rel_err(sim.data.qpos[i], d.qpos) for i, d in enumerate(starts)))
    ours = np.concatenate(ours)
    ref = np.concatenate(ref)
    report("touch scene, 200-step trajectories: qpos", qerr, TOL, len(starts))
    assert qerr <= TOL
    _assert_sensors(mj, ours, ref, "touch scene, 200-step trajectories: sensordata")
    for name in TOUCH:
        if name != "core":
            assert np.any(ref[:, _sensor(mj, name)][:, 0] > 0), name


def test_ray_sensors_unit_only_where_used(pair):
    """The touch and rangefinder readings are a unit of their own (sensors.ray_sensors),
    compiled and called only for a model that has one: not for the crane's sensors."""
    m, _ = pair
    assert {"sensors", "ray_sensors"} <= set(units_for(m))
    crane = engine.load_mjcf(ASSETS / "crane.xml")
    assert crane.nsensor > 0
    assert "sensors" in units_for(crane) and "ray_sensors" not in units_for(crane)
