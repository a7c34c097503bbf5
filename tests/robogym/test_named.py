"""Named access to the engine's arrays (robogym/named.py) against MuJoCo's own named access
(`MjData.joint(name).qpos`, `.body(name).xpos`, `.sensor(name).data`, ...) on the same
states: every named entry of every object of the quadruped and the humanoid, read from the
engine, equals MuJoCo's for that name, bit for bit after our forward pass matches theirs to
1e-12; writes by name land where MuJoCo's names say; lists, rows and unknown names."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from robogym import UnknownNameError
from robogym.errors import UnknownFieldError
from robogym.physics import Physics, asset_path

MODELS = ("quadruped.xml", "humanoid.xml")
B = 3
TOL = 1e-12  # the engine's forward pass against MuJoCo's (1e-15 seen in tests/engine)


@pytest.fixture(scope="module", params=MODELS)
def pair(request):
    """A Physics of B rows at random states, and MuJoCo's MjData for each row."""
    physics = Physics(asset_path(request.param), B, nthread=1)
    mj = physics.mj_model
    rng = np.random.default_rng(0)
    datas = []
    key = physics.keyframe("home")
    for r in range(B):
        d = mujoco.MjData(mj)
        d.qpos[:] = key + rng.uniform(-0.1, 0.1, mj.nq)
        d.qvel[:] = rng.uniform(-1.0, 1.0, mj.nv)
        d.ctrl[:] = rng.uniform(-1.0, 1.0, mj.nu)
        mujoco.mj_forward(mj, d)
        physics.named.qpos.all[r] = d.qpos
        physics.named.qvel.all[r] = d.qvel
        physics.named.ctrl.all[r] = d.ctrl
        datas.append(d)
    physics.forward()
    return physics, datas


# (our field, MuJoCo's named accessor, its attribute, object type)
CASES = [
    ("qpos", "joint", "qpos", mujoco.mjtObj.mjOBJ_JOINT),
    ("qvel", "joint", "qvel", mujoco.mjtObj.mjOBJ_JOINT),
    ("xpos", "body", "xpos", mujoco.mjtObj.mjOBJ_BODY),
    ("xquat", "body", "xquat", mujoco.mjtObj.mjOBJ_BODY),
    ("cvel", "body", "cvel", mujoco.mjtObj.mjOBJ_BODY),
    ("geom_xpos", "geom", "xpos", mujoco.mjtObj.mjOBJ_GEOM),
    ("site_xpos", "site", "xpos", mujoco.mjtObj.mjOBJ_SITE),
    ("sensordata", "sensor", "data", mujoco.mjtObj.mjOBJ_SENSOR),
    ("ctrl", "actuator", "ctrl", mujoco.mjtObj.mjOBJ_ACTUATOR),
    ("actuator_force", "actuator", "force", mujoco.mjtObj.mjOBJ_ACTUATOR),
]


@pytest.mark.parametrize(("field", "accessor", "attr", "objtype"), CASES)
def test_every_named_entry_is_mujocos(pair, field, accessor, attr, objtype):
    physics, datas = pair
    named = getattr(physics.named, field)
    mj = physics.mj_model
    compared = 0
    for name in named.names:
        ours = named[name]
        assert ours.shape[0] == B
        for r, d in enumerate(datas):
            theirs = np.asarray(getattr(getattr(d, accessor)(name), attr)).reshape(-1)
            np.testing.assert_allclose(np.reshape(ours[r], -1), theirs, rtol=0, atol=TOL, err_msg=name)
            compared += 1
    # every named object of that type was offered
    count = sum(1 for i in range(_count(mj, objtype)) if mujoco.mj_id2name(mj, objtype, i))
    assert len(named.names) == count and compared == count * B


def _count(mj, objtype) -> int:
    O = mujoco.mjtObj
    return {O.mjOBJ_JOINT: mj.njnt, O.mjOBJ_BODY: mj.nbody, O.mjOBJ_GEOM: mj.ngeom, O.mjOBJ_SITE: mj.nsite,
            O.mjOBJ_SENSOR: mj.nsensor, O.mjOBJ_ACTUATOR: mj.nu}[objtype]  # fmt: skip


def test_model_constants_by_name(pair):
    physics, _ = pair
    mj = physics.mj_model
    for name in physics.named_model.body_mass.names:
        assert physics.named_model.body_mass[name] == mj.body(name).mass[0]
        np.testing.assert_array_equal(physics.named_model.body_pos[name], mj.body(name).pos)
    for name in physics.named_model.jnt_range.names:
        np.testing.assert_array_equal(physics.named_model.jnt_range[name], mj.joint(name).range)


def test_one_name_is_a_view_and_writes_reach_the_engine(pair):
    physics, _ = pair
    named = physics.named
    joint = next(n for n in named.qpos.names if physics.mj_model.joint(n).type == mujoco.mjtJoint.mjJNT_HINGE)
    adr = int(physics.mj_model.joint(joint).qposadr[0])
    before = named.qpos.all.copy()
    try:
        view = named.qpos[joint]
        assert view.shape == (B,) and np.shares_memory(view, named.qpos.all)
        view[1] = 0.25  # a row, through the view
        assert named.qpos.all[1, adr] == 0.25
        named.qpos[joint] = -0.5  # every row
        assert np.all(named.qpos.all[:, adr] == -0.5)
        named.qpos[[joint], [0, 2]] = 0.75  # a list of names, some rows
        assert named.qpos.all[:, adr].tolist() == [0.75, -0.5, 0.75]
        free = named.qpos["root"]
        assert free.shape == (B, 7) and np.shares_memory(free, named.qpos.all)
        two = named.qpos[[joint, "root"]]  # a list: a new array, the entries side by side
        assert two.shape == (B, 8) and not np.shares_memory(two, named.qpos.all)
        np.testing.assert_array_equal(two[:, 1:], free)
        np.testing.assert_array_equal(named.qpos.columns([joint, "root"])[:1], [adr])
    finally:
        named.qpos.all[:] = before
        physics.forward()


def test_unknown_names_and_fields_are_refused(pair):
    physics, _ = pair
    with pytest.raises(UnknownNameError, match=r"qpos has no entry named 'tail'; its names: "):
        physics.named.qpos["tail"]
    with pytest.raises(UnknownFieldError, match=r"qM is not a field that can be read by name"):
        _ = physics.named.qM
    with pytest.raises(TypeError, match=r"a name must be a str \(or a list of them\), got 3"):
        physics.named.xpos[3]
