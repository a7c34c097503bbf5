"""Rays (engine/ray.py) through the rangefinder sensor, against MuJoCo 4.0.0 and by hand.

The model (assets/tests/sensors_ray.xml) has a plane of finite size and one free body of
each other primitive type (sphere, capsule, ellipsoid, cylinder, box), boxes that rays must
not see (alpha 0) and must see (material alpha 1, group 4), and a probe whose sites carry
rangefinders with every data field, a cutoff, and its own geom around them (excluded).

- Random aimed rays: each state turns the targets at random and aims the probe from a
  random point near one of them (sometimes inside it) at a random point around it (some
  miss); every sensor value against MuJoCo's mj_forward. Closed-form on both sides, so
  the tolerance is rounding: 1e-12 relative to max(1, |value|).
- By hand: the floor at distance h straight below reads h (with the direction, origin,
  hit point, normal and depth that go with it), nothing above reads -1 (clipped to
  -cutoff by a cutoff, as MuJoCo's real datatype wants), the plane is not seen from below
  or past its rendered edge, invisible boxes are passed through and visible ones hit.
- The loader refuses a rangefinder whose ray could meet a mesh, and only then (rays
  against height fields: test_collision_hfield).
"""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from robodyn import engine
from tests.helpers import ASSETS, load_pair, rel_err, report

MODEL = ASSETS / "tests" / "sensors_ray.xml"
NSTATE = 480
TOL = 1e-12
TARGETS = ("floor", "ball", "pill", "egg", "can", "brick")  # one per primitive type
PROBE_QPOS = 35  # qpos address of the probe's free joint (after five free targets)
DOWN = (0.0, 1.0, 0.0, 0.0)  # the probe's z axis pointing down


@pytest.fixture(scope="module")
def pair():
    return load_pair(MODEL)


def _quat_z_to(direction, twist):
    """A unit quaternion whose frame has its z axis along `direction`, turned by `twist`."""
    z = direction / np.linalg.norm(direction)
    a = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = np.cross(a, z)
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    c, s = np.cos(twist), np.sin(twist)
    x, y = c * x + s * y, -s * x + c * y
    q = np.zeros(4)
    mujoco.mju_mat2Quat(q, np.column_stack([x, y, z]).reshape(-1))
    return q


def _aimed_states(mj, n, seed):
    """n qpos: targets turned at random near home; the probe aimed from a random point
    near one target (within 2.5 bounding radii: sometimes inside) at a random point of a
    box 1.2 bounding radii around it (some rays miss); for the floor, from a random point
    (sometimes below it) at a random point of the floor's plane (sometimes past its edge)."""
    rng = np.random.default_rng(seed)
    qpos = np.tile(mj.qpos0, (n, 1))
    aim = rng.integers(len(TARGETS), size=n)
    for i in range(n):
        for j in range(5):
            a = 7 * j
            qpos[i, a : a + 3] += rng.uniform(-0.2, 0.2, 3)
            q = rng.normal(size=4)
            qpos[i, a + 3 : a + 7] = q / np.linalg.norm(q)
        if aim[i] == 0:
            origin = rng.uniform([-5, -4, -0.3], [5, 4, 2.5])
            target = np.append(rng.uniform([-5, -4], [5, 4]), 0.0)
        else:
            g = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_GEOM, TARGETS[aim[i]])
            r = mj.geom_rbound[g]
            centre = qpos[i, 7 * (aim[i] - 1) : 7 * (aim[i] - 1) + 3]
            u = rng.normal(size=3)
            origin = centre + u / np.linalg.norm(u) * rng.uniform(0.0, 2.5 * r)
            target = centre + rng.uniform(-1.2 * r, 1.2 * r, 3)
        qpos[i, PROBE_QPOS : PROBE_QPOS + 3] = origin
        qpos[i, PROBE_QPOS + 3 : PROBE_QPOS + 7] = _quat_z_to(target - origin, rng.uniform(0, 2 * np.pi))
    return qpos


def _both(m, mj, qpos):
    """sensordata of every qpos row: ours (one batch) and MuJoCo's (mj_forward each)."""
    sim = engine.Simulator(m, batch=len(qpos))
    sim.data.qpos[:] = qpos
    sim.forward()
    d = mujoco.MjData(mj)
    ref = []
    for q in qpos:
        d.qpos[:] = q
        mujoco.mj_forward(mj, d)
        ref.append(d.sensordata.copy())
    return sim.data.sensordata.copy(), np.array(ref)


def _inside(mj, d, g, p):
    """True if point p lies strictly inside geom g (closed primitive types)."""
    lp = d.geom_xmat[g].reshape(3, 3).T @ (p - d.geom_xpos[g])
    s = mj.geom_size[g]
    t = mj.geom_type[g]
    G = mujoco.mjtGeom
    if t == G.mjGEOM_SPHERE:
        return np.linalg.norm(lp) < s[0]
    if t == G.mjGEOM_CAPSULE:
        return np.linalg.norm(lp - [0, 0, np.clip(lp[2], -s[1], s[1])]) < s[0]
    if t == G.mjGEOM_ELLIPSOID:
        return np.sum((lp / s) ** 2) < 1
    if t == G.mjGEOM_CYLINDER:
        return np.hypot(lp[0], lp[1]) < s[0] and abs(lp[2]) < s[1]
    if t == G.mjGEOM_BOX:
        return bool(np.all(np.abs(lp) < s))
    return False


def _coverage(mj, qpos):
    """Per geom type: hits of the `eye` ray (MuJoCo's mj_ray, as the rangefinder calls it),
    and hits from inside the geom; plus the number of misses."""
    d = mujoco.MjData(mj)
    probe = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_BODY, "probe")
    eye = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_SITE, "eye")
    hits, inside, misses = {}, {}, 0
    geomid = np.zeros(1, dtype=np.int32)
    for q in qpos:
        d.qpos[:] = q
        mujoco.mj_kinematics(mj, d)
        p, z = d.site_xpos[eye].copy(), d.site_xmat[eye].reshape(3, 3)[:, 2].copy()
        if mujoco.mj_ray(mj, d, p, z, None, 1, probe, geomid) < 0:
            misses += 1
            continue
        g = int(geomid[0])
        t = mujoco.mjtGeom(mj.geom_type[g]).name
        hits[t] = hits.get(t, 0) + 1
        inside[t] = inside.get(t, 0) + int(_inside(mj, d, g, p))
    return hits, inside, misses


def _sensor_name(mj, i):
    return mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_SENSOR, i)


def _assert_matches(mj, ours, ref, label):
    worst = {}
    for i in range(mj.nsensor):
        a, n = mj.sensor_adr[i], mj.sensor_dim[i]
        errs = [rel_err(o[a : a + n], r[a : a + n]) for o, r in zip(ours, ref, strict=True)]
        worst[_sensor_name(mj, i)] = max(errs)
    name, w = max(worst.items(), key=lambda kv: kv[1])
    report(f"{label} (worst sensor {name})", w, TOL, len(ours))
    assert w <= TOL, f"rangefinders differ from MuJoCo: {worst}"


def test_aimed_rays_match_mujoco(pair):
    m, mj = pair
    qpos = _aimed_states(mj, NSTATE, seed=0)
    ours, ref = _both(m, mj, qpos)
    assert len(ours) >= 100
    _assert_matches(mj, ours, ref, "rangefinders, aimed rays at every primitive type")

    # honesty: every primitive type is hit, from outside and (closed types) from inside,
    # and some rays miss everything
    hits, inside, misses = _coverage(mj, qpos)
    print(f"[coverage] hits {hits}, from inside {inside}, misses {misses}")
    types = ("PLANE", "SPHERE", "CAPSULE", "ELLIPSOID", "CYLINDER", "BOX")
    for t in types:
        assert hits.get(f"mjGEOM_{t}", 0) >= 15, (t, hits)
        if t != "PLANE":
            assert inside.get(f"mjGEOM_{t}", 0) >= 3, (t, inside)
            assert hits[f"mjGEOM_{t}"] - inside[f"mjGEOM_{t}"] >= 10, (t, hits, inside)
    assert misses >= 15
    # the cutoff clips some readings (misses to -0.8, far hits to 0.8), not all
    tilt = mj.sensor_adr[mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_SENSOR, "tilt")]
    clipped = np.abs(ref[:, tilt]) == 0.8
    assert 0 < clipped.sum() < len(ref)
    assert np.any(ref[:, tilt] == -0.8) and np.any(ref[:, tilt] == 0.8)


def _posed(mj, probe_pos, probe_quat=DOWN):
    """qpos with every target 10 m below the floor and the probe at probe_pos."""
    q = mj.qpos0.copy()
    for j in range(5):
        q[7 * j + 2] = -10.0
    q[PROBE_QPOS : PROBE_QPOS + 3] = probe_pos
    q[PROBE_QPOS + 3 : PROBE_QPOS + 7] = probe_quat
    return q


def _values(mj, row, name):
    i = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_SENSOR, name)
    return row[mj.sensor_adr[i] : mj.sensor_adr[i] + mj.sensor_dim[i]]


def test_rangefinder_by_hand(pair):
    m, mj = pair
    heights = (0.3, 1.0, 2.5)
    cases = [_posed(mj, (0.5, -1.0, h)) for h in heights]  # the floor straight below
    cases.append(_posed(mj, (0.5, -1.0, 1.0), (1.0, 0.0, 0.0, 0.0)))  # up: nothing there
    cases.append(_posed(mj, (0.5, -1.0, -0.5), (1.0, 0.0, 0.0, 0.0)))  # the floor from below
    cases.append(_posed(mj, (4.5, 0.0, 1.0)))  # past the floor's rendered edge (half-size 4)
    # above the ghost boxes (tops at z = 0.6): clear, clearmat, solidmat, group4
    ghosts = [_posed(mj, (x, 2.5, 1.5)) for x in (-1.5, -0.5, 0.5, 1.5)]
    ours, ref = _both(m, mj, np.array(cases + ghosts))
    _assert_matches(mj, ours, ref, "rangefinders by hand")

    for row, h in zip(ours, heights, strict=False):
        expected = [h, 0, 0, -1, 0.5, -1, h, 0.5, -1, 0, 0, 0, 1, h]
        np.testing.assert_allclose(_values(mj, row, "all"), expected, rtol=0, atol=1e-15)
        assert _values(mj, row, "dist")[0] == pytest.approx(h, abs=1e-15)
    up = ours[len(heights)]
    np.testing.assert_array_equal(_values(mj, up, "all"), [-1, 0, 0, 0, 0.5, -1, 1, 0, 0, 0, 0, 0, 0, -1])
    assert _values(mj, up, "tilt")[0] == -0.8  # -1, clipped by the cutoff (real datatype)
    np.testing.assert_array_equal(_values(mj, up, "tilt_normal"), [0, 0, 0, -1])
    for row in ours[len(heights) + 1 : len(cases)]:
        assert _values(mj, row, "dist")[0] == -1
    seen = [_values(mj, row, "dist")[0] for row in ours[len(cases) :]]
    np.testing.assert_allclose(seen, [1.5, 1.5, 0.9, 0.9], rtol=0, atol=1e-15)


# a probe over a floor, and one more geom `other` to the side of its downward ray (or on
# the probe's own body); contacts off, so the mesh or height field needs no collider
RAY_NEAR = """
<mujoco>
  <asset>
    <mesh name="tet" vertex="0 0 0  1 0 0  0 1 0  0 0 1"/>
    <hfield name="hill" nrow="3" ncol="3" size="1 1 0.2 0.1"/>
  </asset>
  <option><flag contact="disable"/></option>
  <worldbody>
    <geom type="plane" size="3 3 0.1"/>
    <body name="probe" pos="0 0 1">
      <freejoint/>
      <geom type="sphere" size="0.05"/>
      <site name="eye" quat="0 1 0 0"/>
      {own}
    </body>
    {world}
  </worldbody>
  <sensor><rangefinder name="lidar" site="eye"/></sensor>
</mujoco>
"""


@pytest.mark.parametrize(("kind", "attrs"), [("mesh", 'mesh="tet"')])
def test_rangefinder_near_mesh_is_refused(kind, attrs):
    geom = f'<geom name="other" type="{kind}" {attrs} pos="2 0 0"/>'
    with pytest.raises(engine.UnsupportedModelError, match=rf"<rangefinder> 'lidar'.*'other' \({kind}\)"):
        engine.load_mjcf(RAY_NEAR.format(own="", world=geom))
    # one the ray cannot see loads: invisible (alpha 0), or on the probe's own body
    hidden = f'<geom name="other" type="{kind}" {attrs} pos="2 0 0" rgba="1 1 1 0"/>'
    engine.load_mjcf(RAY_NEAR.format(own="", world=hidden))
    engine.load_mjcf(RAY_NEAR.format(own=geom, world=""))
    # and the same geom without a rangefinder loads
    blind = RAY_NEAR.replace('<rangefinder name="lidar" site="eye"/>', "")
    engine.load_mjcf(blind.format(own="", world=geom))
