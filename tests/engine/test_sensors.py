"""Sensors against MuJoCo: sensordata, cacc/cfrc_int/cfrc_ext, subtree_linvel and subtree_angmom.

The model (assets/tests/sensors.xml) has every sensor type the loader accepts but touch
(it needs contacts, which this model disables: tests/engine/test_sensors_touch.py), frame
sensors on body/xbody/geom/site objects with body/xbody/geom/site reference frames, sites on
the world and on a static body, rangefinders over a floor (tests/engine/test_ray.py has their
geometry), and cutoffs. For random states both engines run a full
forward pass; every sensor is compared on its own, quaternions up to sign.
"""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from robodyn import engine
from robodyn.engine import types as T
from robodyn.engine.checks import _SUPPORTED_SENSORS
from tests.helpers import ASSETS, load_pair, random_states, rel_err, report, rollout_states, set_state

MODEL = ASSETS / "tests" / "sensors.xml"
NSTATE = 128
TOL = 1e-9
FRAME_SENSORS = (
    T.SENS_FRAMEPOS,
    T.SENS_FRAMEQUAT,
    T.SENS_FRAMEXAXIS,
    T.SENS_FRAMEYAXIS,
    T.SENS_FRAMEZAXIS,
    T.SENS_FRAMELINVEL,
    T.SENS_FRAMEANGVEL,
)
FRAME_OBJECTS = {T.OBJ_BODY, T.OBJ_XBODY, T.OBJ_GEOM, T.OBJ_SITE}


@pytest.fixture(scope="module")
def pair():
    return load_pair(MODEL)


def _sensor_name(mj, i):
    return mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_SENSOR, i) or f"#{i}"


def _run_both(m, mj, n, seed, xfrc=0.0, ctrl_scale=1.0):
    """Forward n random states in both engines (controls ctrl_scale x across their ranges);
    returns (sim.data, dict of MuJoCo arrays)."""
    qpos, qvel, ctrl = random_states(mj, n, seed=seed)
    ctrl = ctrl * ctrl_scale
    rng = np.random.default_rng(seed + 1000)
    xfrc_applied = rng.uniform(-xfrc, xfrc, (n, mj.nbody, 6))
    xfrc_applied[:, 0] = 0.0
    time = rng.uniform(0.0, 10.0, n)  # the clock sensor reads it
    sim = engine.Simulator(m, batch=n)
    sim.data.time[:] = time
    sim.data.qpos[:] = qpos
    sim.data.qvel[:] = qvel
    sim.data.ctrl[:] = ctrl
    sim.data.xfrc_applied[:] = xfrc_applied
    sim.forward()

    md = mujoco.MjData(mj)
    names = ("sensordata", "cacc", "cfrc_int", "cfrc_ext", "subtree_linvel", "subtree_angmom", "qacc")
    ref = {k: [] for k in names}
    for s in range(n):
        md.time = time[s]
        md.qpos[:] = qpos[s]
        md.qvel[:] = qvel[s]
        md.ctrl[:] = ctrl[s]
        md.xfrc_applied[:] = xfrc_applied[s]
        mujoco.mj_forward(mj, md)
        # already done by mj_forward for accelerometer / subtreelinvel sensors; idempotent
        mujoco.mj_rnePostConstraint(mj, md)
        mujoco.mj_subtreeVel(mj, md)
        for k in names:
            ref[k].append(np.array(getattr(md, k)).reshape(getattr(sim.data, k).shape[1:]))
    return sim.data, {k: np.array(v) for k, v in ref.items()}


def _sensor_errors(mj, ours, ref):
    """Per sensor: worst rel_err over the states (quaternions compared up to sign)."""
    worst = {}
    for i in range(mj.nsensor):
        adr, dim = mj.sensor_adr[i], mj.sensor_dim[i]
        quat = mj.sensor_datatype[i] == mujoco.mjtDataType.mjDATATYPE_QUATERNION
        e = 0.0
        for s in range(ours.shape[0]):
            a, r = ours[s, adr : adr + dim], ref[s, adr : adr + dim]
            es = rel_err(a, r)
            if quat:
                es = min(es, rel_err(-a, r))
            e = max(e, es)
        worst[_sensor_name(mj, i)] = e
    return worst


def _assert_sensors(mj, ours, ref, label):
    worst = _sensor_errors(mj, ours, ref)
    name, w = max(worst.items(), key=lambda kv: kv[1])
    report(f"{label} (worst sensor {name})", w, TOL, ours.shape[0])
    bad = {k: v for k, v in worst.items() if not v <= TOL}
    assert not bad, f"sensors differ from MuJoCo beyond {TOL}: {bad}"


def _assert_field(label, ours, ref):
    errs = [rel_err(ours[s], ref[s]) for s in range(ours.shape[0])]
    w = max(errs)
    report(label, w, TOL, len(errs))
    assert w <= TOL, f"{label} differs from MuJoCo: {w:.3e} at state {int(np.argmax(errs))}"


def test_model_covers_every_sensor_type_and_frame(pair):
    """sensors.xml has every supported sensor type but touch, which needs contacts (this
    model disables them): sensors_touch.xml has it (tests/engine/test_sensors_touch.py)."""
    m, mj = pair
    assert set(np.unique(mj.sensor_type)) == set(_SUPPORTED_SENSORS) - {T.SENS_TOUCH}
    touch = mujoco.MjModel.from_xml_path(str(ASSETS / "tests" / "sensors_touch.xml"))
    assert T.SENS_TOUCH in set(touch.sensor_type)
    for st in FRAME_SENSORS:
        sel = mj.sensor_type == st
        assert set(mj.sensor_objtype[sel]) == FRAME_OBJECTS, st
        assert set(mj.sensor_reftype[sel & (mj.sensor_refid >= 0)]) == FRAME_OBJECTS, st
    assert np.any(mj.sensor_cutoff > 0)
    assert m.nsensordata == mj.nsensordata


def test_sensordata_matches_mujoco(pair):
    m, mj = pair
    ours, ref = _run_both(m, mj, NSTATE, seed=0)
    assert ours.sensordata.shape[0] >= 100
    # the dynamics the acceleration sensors read must agree first
    _assert_field("qacc", ours.qacc, ref["qacc"])
    _assert_sensors(mj, ours.sensordata, ref["sensordata"], "sensordata")

    # honesty: every moving sensor reads something, and every cutoff clips some states
    # but not all of them, so a missing or wrong cutoff cannot pass unnoticed
    r = ref["sensordata"]
    for i in range(mj.nsensor):
        block = r[:, mj.sensor_adr[i] : mj.sensor_adr[i] + mj.sensor_dim[i]]
        name = _sensor_name(mj, i)
        # static objects: no velocity (accelerometers on them still read +g, as in MuJoCo)
        static = name in ("gyro_world", "vel_post", "flv_static", "sl_post", "sa_post")
        assert (np.abs(block).max() == 0) == static, name
        c = mj.sensor_cutoff[i]
        if c > 0:
            clipped = np.any(np.abs(block) == c, axis=1)
            assert 0 < clipped.sum() < len(clipped), f"{name}: cutoff {c} clips {clipped.sum()} states"


def test_rne_post_and_subtree_linvel_match_mujoco(pair):
    m, mj = pair
    ours, ref = _run_both(m, mj, NSTATE, seed=1)
    assert ours.cacc.shape[0] >= 100
    _assert_field("cacc", ours.cacc, ref["cacc"])
    _assert_field("cfrc_int", ours.cfrc_int, ref["cfrc_int"])
    _assert_field("subtree_linvel", ours.subtree_linvel, ref["subtree_linvel"])
    _assert_field("subtree_angmom", ours.subtree_angmom, ref["subtree_angmom"])
    assert np.all(ours.cfrc_ext == 0) and np.all(ref["cfrc_ext"] == 0)


def test_applied_forces_enter_cfrc_ext_and_sensors(pair):
    """xfrc_applied is MuJoCo's only external force without contacts: it enters cfrc_ext."""
    m, mj = pair
    ours, ref = _run_both(m, mj, NSTATE, seed=2, xfrc=3.0)
    assert ours.cacc.shape[0] >= 100
    assert np.abs(ref["cfrc_ext"]).max() > 0.1
    _assert_field("cfrc_ext (xfrc_applied)", ours.cfrc_ext, ref["cfrc_ext"])
    _assert_field("cfrc_int (xfrc_applied)", ours.cfrc_int, ref["cfrc_int"])
    _assert_field("cacc (xfrc_applied)", ours.cacc, ref["cacc"])
    _assert_sensors(mj, ours.sensordata, ref["sensordata"], "sensordata (xfrc_applied)")


def test_positive_datatype_cutoff(pair):
    """MuJoCo clips positive-datatype sensors on one side only (no supported sensor type is
    positive by default, so the datatype is switched in both models)."""
    m, mj0 = pair
    mj = mujoco.MjModel.from_xml_path(str(MODEL))
    dt = np.array(mj.sensor_datatype)
    sel = (mj0.sensor_cutoff > 0) & (dt == mujoco.mjtDataType.mjDATATYPE_REAL)
    dt[sel] = mujoco.mjtDataType.mjDATATYPE_POSITIVE
    mj.sensor_datatype[:] = dt
    m2 = m._replace(sensor_datatype=np.ascontiguousarray(dt, dtype=m.sensor_datatype.dtype))
    ours, ref = _run_both(m2, mj, NSTATE, seed=3)
    assert ours.sensordata.shape[0] >= 100
    _assert_sensors(mj, ours.sensordata, ref["sensordata"], "sensordata (positive cutoff)")
    # one-sided: some value below -cutoff survives
    r = ref["sensordata"]
    assert any(
        np.any(r[:, mj.sensor_adr[i] : mj.sensor_adr[i] + mj.sensor_dim[i]] < -mj.sensor_cutoff[i])
        for i in np.flatnonzero(sel)
    )


def test_gravity_disabled(pair):
    """Without gravity the world's cacc is zero: accelerometers lose their -g."""
    m, mj0 = pair
    mj = mujoco.MjModel.from_xml_path(str(MODEL))
    mj.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_GRAVITY
    m2 = m._replace(opt_disableflags=int(mj.opt.disableflags))
    ours, ref = _run_both(m2, mj, NSTATE, seed=4)
    assert ours.sensordata.shape[0] >= 100
    _assert_field("cacc (no gravity)", ours.cacc, ref["cacc"])
    _assert_sensors(mj, ours.sensordata, ref["sensordata"], "sensordata (no gravity)")


def test_rne_post_with_contacts_and_equalities():
    """With constraints, cfrc_ext also holds the contact forces and the forces of connect
    and weld equalities (at their points, on both bodies): cfrc_ext, cfrc_int, cacc and an
    accelerometer against MuJoCo on constraint_equality.xml (contacts of condim 1 and 3,
    body and site connect/weld, limits)."""
    text = (ASSETS / "tests" / "constraint_equality.xml").read_text()
    text = text.replace("</mujoco>", '<sensor><accelerometer site="tip"/></sensor>\n</mujoco>')
    mj = mujoco.MjModel.from_xml_string(text)
    states = rollout_states(mj, NSTATE, seed=9, every=5, touching=False, vel=2.0)
    sim = engine.Simulator(engine.load_mjcf(text), batch=NSTATE)
    set_state(sim, states)
    sim.forward()
    md = mujoco.MjData(mj)
    names = ("cfrc_ext", "cfrc_int", "cacc", "sensordata")
    ref = {k: [] for k in names}
    for i in range(NSTATE):
        set_state(None, states, md, i)
        mujoco.mj_forward(mj, md)
        for k in names:
            ref[k].append(np.array(getattr(md, k)))
    assert np.sum(sim.data.ncon > 0) >= NSTATE // 2 and np.all(sim.data.ne > 0)
    for k in names:
        _assert_field(f"{k} (constraints)", getattr(sim.data, k), np.array(ref[k]))


@pytest.mark.parametrize("flag", sorted(engine.simulator.PASS_DISABLE))
def test_forward_with_a_flag_disabled_for_one_pass_is_mujocos_with_that_flag(pair, flag):
    """Simulator.forward(rows, disable=(flag,)) equals MuJoCo's mj_forward on the model with
    that disable flag set (dm_control's `with physics.model.disable(...)`), in the rows given;
    the other rows, and the next plain forward of every row, are the model's own pass."""
    m, mj = pair
    n = 16
    # the model's own pass, both engines; for clampctrl, controls beyond their ranges (else
    # clamping changes nothing)
    ours, plain = _run_both(m, mj, n, seed=3, ctrl_scale=3.0 if flag == "clampctrl" else 1.0)
    sim = engine.Simulator(m, batch=n)
    for name in ("time", "qpos", "qvel", "ctrl"):
        getattr(sim.data, name)[:] = getattr(ours, name)
    sim.forward()
    rows = np.arange(0, n, 2)
    sim.forward(rows, disable=(flag,))
    md, bit, worst = mujoco.MjData(mj), engine.simulator.PASS_DISABLE[flag], 0.0
    mj.opt.disableflags |= bit
    try:
        for s in rows:
            md.time, md.qpos[:], md.qvel[:], md.ctrl[:] = (
                ours.time[s],
                ours.qpos[s],
                ours.qvel[s],
                ours.ctrl[s],
            )
            mujoco.mj_forward(mj, md)
            for field in ("qacc", "sensordata", "qfrc_actuator", "qfrc_passive", "actuator_velocity"):
                err = rel_err(getattr(sim.data, field)[s], getattr(md, field))
                assert err <= TOL, f"{flag}: {field} of state {s} differs from MuJoCo's by {err:.3e}"
                worst = max(worst, err)
            changed = rel_err(md.qacc, plain["qacc"][s]) + rel_err(md.sensordata, plain["sensordata"][s])
            assert changed > 1e-3, f"{flag}: the flag changes nothing on state {s}: a weak test"
    finally:
        mj.opt.disableflags &= ~bit
    others = np.setdiff1d(np.arange(n), rows)
    assert np.array_equal(sim.data.qacc[others], ours.qacc[others])
    sim.forward()
    assert np.array_equal(sim.data.qacc, ours.qacc) and np.array_equal(sim.data.sensordata, ours.sensordata)
    report(f"forward(disable={flag!r}) on {len(rows)} of {n} rows", worst, TOL, len(rows))


def test_forward_refuses_a_flag_one_pass_cannot_disable(pair):
    m, _ = pair
    sim = engine.Simulator(m, batch=1)
    with pytest.raises(engine.InvalidArgumentError, match="'contact' is not a flag one pass can disable"):
        sim.forward(disable=("contact",))
