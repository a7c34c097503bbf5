"""robogym.Physics: reads and writes by name. Here: mocap bodies (a task's moving target),
through Physics and through EnvCore's reset, on the mocap model of tests/engine/test_mocap.py."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

import robogym.core
from robogym.actuation import Actuation
from robogym.core import EnvCore
from robogym.physics import Physics, asset_path
from robogym.task import Task
from tests.engine.test_mocap import MODEL


@pytest.fixture
def model_path(tmp_path):
    path = tmp_path / "mocap_push.xml"
    path.write_text(MODEL)
    return path


def _declared(physics: Physics, body: str) -> tuple[np.ndarray, np.ndarray]:
    b = mujoco.mj_name2id(physics.mj_model, mujoco.mjtObj.mjOBJ_BODY, body)
    return physics.model.body_pos[b], physics.model.body_quat[b]


def test_mocap_pose_by_name(model_path):
    physics = Physics(model_path, batch=3, nthread=1)
    pos, quat = physics.mocap_pose("pusher")
    assert pos.shape == (3, 3) and quat.shape == (3, 4)
    np.testing.assert_array_equal(pos, np.broadcast_to(_declared(physics, "pusher")[0], (3, 3)))
    physics.set_mocap_pose("pusher", [0.1, 0.2, 0.3], [0.0, 0.0, 0.0, 2.0], rows=[1])
    physics.set_mocap_pose("carrier", [[0.0, 0.0, 1.0]] * 3)  # every row, orientation kept
    physics.sim.forward()
    b = mujoco.mj_name2id(physics.mj_model, mujoco.mjtObj.mjOBJ_BODY, "pusher")
    np.testing.assert_array_equal(physics.body_pos("pusher")[1], [0.1, 0.2, 0.3])
    np.testing.assert_array_equal(physics.data.xquat[1, b], [0.0, 0.0, 0.0, 1.0])  # normalized
    np.testing.assert_array_equal(physics.mocap_pose("pusher")[1][1], [0.0, 0.0, 0.0, 2.0])  # as written
    np.testing.assert_array_equal(physics.body_pos("carrier"), [[0.0, 0.0, 1.0]] * 3)
    np.testing.assert_array_equal(
        physics.mocap_pose("carrier")[1], np.broadcast_to(_declared(physics, "carrier")[1], (3, 4))
    )


def test_mocap_pose_refusals_change_nothing(model_path):
    physics = Physics(model_path, batch=2, nthread=1)
    before = (physics.data.mocap_pos.copy(), physics.data.mocap_quat.copy())
    with pytest.raises(ValueError, match="'pusher': quat must be finite"):
        physics.set_mocap_pose("pusher", [1.0, 2.0, 3.0], [1.0, np.nan, 0.0, 0.0])
    with pytest.raises(ValueError, match="'pusher': pos must be finite"):
        physics.set_mocap_pose("pusher", [np.inf, 2.0, 3.0])
    with pytest.raises(ValueError, match="'base' is not a mocap body"):
        physics.set_mocap_pose("base", [1.0, 2.0, 3.0])
    with pytest.raises(KeyError, match="no body named 'nowhere'"):
        physics.mocap_pose("nowhere")
    np.testing.assert_array_equal(physics.data.mocap_pos, before[0])
    np.testing.assert_array_equal(physics.data.mocap_quat, before[1])


class _PushTask(Task):
    """The least task EnvCore accepts: shoulder and elbow forces, nothing rewarded; an
    episode starts with the arm at rest and the mocap bodies where the model puts them."""

    model_file = "mocap_push.xml"

    def bind(self, physics) -> None:
        super().bind(physics)
        self._actuation = Actuation.force(physics, ["shoulder", "elbow"], 1.0)

    def actuation(self) -> Actuation:
        return self._actuation

    def reset_rows(self, rows, rngs) -> None:
        self.physics.data.qpos[rows] = 0.0
        self.physics.data.qvel[rows] = 0.0


def test_env_reset_puts_mocap_bodies_back(model_path, monkeypatch):
    """EnvCore.reset_rows starts an episode's inputs as mj_resetData does: the mocap bodies
    of the reset rows go back to their declared pose, the other rows keep theirs."""
    monkeypatch.setattr(robogym.core, "asset_path", lambda name: model_path)
    core = EnvCore(_PushTask(), num_envs=3, nthread=1)
    core.physics.set_mocap_pose("pusher", [0.5, -0.5, 0.2], [0.0, 1.0, 0.0, 0.0])
    core.reset_rows(np.array([0, 2]))
    mjd = mujoco.MjData(core.physics.mj_model)
    mjd.mocap_pos[:] = 1.0
    mujoco.mj_resetData(core.physics.mj_model, mjd)
    for r in (0, 2):
        np.testing.assert_array_equal(core.physics.data.mocap_pos[r], mjd.mocap_pos)
        np.testing.assert_array_equal(core.physics.data.mocap_quat[r], mjd.mocap_quat)
    pos, quat = core.physics.mocap_pose("pusher")
    np.testing.assert_array_equal(pos[1], [0.5, -0.5, 0.2])
    np.testing.assert_array_equal(quat[1], [0.0, 1.0, 0.0, 0.0])


def test_one_compilation_and_drawing_never_reaches_the_physics():
    """Physics compiles its MJCF once (engine.loader.load_with_mujoco); the MuJoCo model it
    keeps for names and drawing is a copy, so a drawing-only change (the rocket's flame,
    Task.decorate_frame) leaves the engine's Model, and its digest, as they were."""
    physics = Physics(asset_path("rocket.xml"), batch=2, nthread=1)
    shared = [
        name
        for name, value in physics.model._asdict().items()
        if isinstance(value, np.ndarray)
        and np.shares_memory(value, np.asarray(getattr(physics.mj_model, name, np.zeros(0))))
    ]
    assert shared == []
    digest = physics.sim.model_digest()
    size = physics.model.geom_size.copy()
    flame = physics.geom_id("flame")
    physics.mj_model.geom_size[flame, 1] = 7.0
    np.testing.assert_array_equal(physics.model.geom_size, size)
    assert physics.sim.model_digest() == digest


def test_joint_names_and_the_kinematics_of_other_poses_are_mujocos():
    """joint_names(kind) lists MuJoCo's named joints of that type in model order (refusing
    an unknown kind); body_positions and site_positions at poses apart from the env's equal
    mj_kinematics' xpos and site_xpos there, and leave the env's rows untouched."""
    path = asset_path("quadruped.xml")
    physics = Physics(path, batch=2, nthread=1)
    mj = mujoco.MjModel.from_xml_path(str(path))
    for kind, code in (("free", 0), ("hinge", 3), (None, None)):
        expected = [
            mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_JOINT, j)
            for j in range(mj.njnt)
            if code is None or mj.jnt_type[j] == code
        ]
        assert physics.joint_names(kind) == expected and expected
    with pytest.raises(ValueError, match="joint kind 'prismatic'"):
        physics.joint_names("prismatic")
    rng = np.random.default_rng(0)
    qpos = np.tile(mj.qpos0, (3, 1))
    qpos[:, 7:] += rng.uniform(-0.5, 0.5, (3, mj.nq - 7))
    before = physics.data.qpos.copy()
    bodies = [mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_BODY, b) for b in (1, mj.nbody - 1)]
    sites = [mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_SITE, s) for s in range(mj.nsite)]
    ours_b, ours_s = physics.body_positions(qpos, bodies), physics.site_positions(qpos, sites)
    d = mujoco.MjData(mj)
    for n in range(3):
        d.qpos[:] = qpos[n]
        mujoco.mj_kinematics(mj, d)
        np.testing.assert_allclose(ours_b[n], d.xpos[[1, mj.nbody - 1]], rtol=0, atol=1e-14)
        np.testing.assert_allclose(ours_s[n], d.site_xpos, rtol=0, atol=1e-14)
    np.testing.assert_array_equal(physics.data.qpos, before)
