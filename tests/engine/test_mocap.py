"""Mocap bodies (`<body mocap="true">`) against MuJoCo 4.0.0, and their place in the state.

A mocap body is a joint-less child of the world whose pose each row sets in
`data.mocap_pos` / `data.mocap_quat` (MuJoCo's mjData fields): mj_kinematics takes its
position as written and its orientation normalized (a copy: a zero quaternion becomes the
identity, mocap_quat is left as written), and mj_resetData puts it back at its body_pos /
body_quat. It has no dofs, so the dynamics see it as static; a robot touching its geoms
gets contacts like any other.

The model below has two mocap bodies: `pusher`, a box with a site, which the two-link arm
touches, and `carrier`, which carries a welded child (geom and site) and, under that, a
hinged pendulum (a jointed body under a mocap body: MuJoCo allows it). The tests:

1. Random states (arm angles, pusher near the arm, carrier anywhere, mocap quaternions of
   random length, one zero and one of norm 1e-16): every pose (xpos, xquat, xmat, xipos,
   ximat, geom and site frames), the pendulum's com-based quantities, the contacts and
   qacc against mj_forward.
2. Trajectories: the pusher moved every step sweeps across the arm and pushes it through
   contact, while the carrier moves the pendulum; qpos and qvel against mj_step.
3. Snapshots (bit for bit, mocap included; a subset of rows), resets (make_data and
   on_bad="reset" put mocap bodies at body_pos/body_quat, as mj_resetData), and bad mocap
   poses (NaN or inf raise NonFiniteError naming quantity and row; nothing changes).
"""

from __future__ import annotations

import re

import mujoco
import numpy as np
import pytest

from robodyn import engine
from robodyn.engine.data import STATE_FIELDS
from tests.helpers import rel_err, report

MODEL = """
<mujoco model="mocap_push">
  <option timestep="0.002"/>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 0.1" pos="0 0 -0.1"/>
    <body name="pusher" mocap="true" pos="0.3 0.25 0.05" quat="0.9 0 0 0.3">
      <geom name="pusher_box" type="box" size="0.04 0.04 0.04"/>
      <site name="pusher_tip" pos="0.04 0.01 -0.02" quat="0.8 0.2 0.1 0"/>
    </body>
    <body name="carrier" mocap="true" pos="-0.5 0 0.8" euler="10 0 20">
      <geom name="carrier_ball" type="sphere" size="0.03" contype="0" conaffinity="0"/>
      <body name="plate" pos="0.1 0 0" euler="0 30 0">
        <geom name="plate_geom" type="box" size="0.05 0.02 0.01" pos="0.02 0 0"
              contype="0" conaffinity="0"/>
        <site name="plate_site" pos="0.03 0.01 0"/>
        <body name="pendulum" pos="0 0 -0.05">
          <joint name="swing" type="hinge" axis="0 1 0" pos="0 0 0.02" damping="0.01"/>
          <geom name="bob" type="capsule" fromto="0 0 0 0 0 -0.2" size="0.01"
                contype="0" conaffinity="0"/>
          <site name="bob_site" pos="0 0 -0.2"/>
        </body>
      </body>
    </body>
    <body name="base" pos="0 0 0.05">
      <joint name="shoulder" type="hinge" axis="0 0 1" damping="0.05"/>
      <geom name="upper" type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/>
      <body name="forearm" pos="0.3 0 0">
        <joint name="elbow" type="hinge" axis="0 0 1" damping="0.05"/>
        <geom name="lower" type="capsule" fromto="0 0 0 0.25 0 0" size="0.025"/>
        <site name="hand" pos="0.25 0 0"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""

N_STATES = 200
TOL_POSE = 1e-12  # poses: the same arithmetic as MuJoCo's
TOL_QACC = 1e-9  # qacc with contacts (Newton, the model's default tolerance), relative
N_STEP = 400  # steps per trajectory (0.8 s: the pusher crosses the arm)
# After each step, relative to max(1, |x|): contact lets the last bits of rounding grow along
# the trajectory; the worst seen (pytest -s) was qpos 1.5e-14 and qvel 1.7e-13 (2.5e-13 on an
# earlier engine), so the bars are about 70x and 60x those.
TOL_TRAJ = 1e-12  # qpos
TOL_TRAJ_VEL = 1e-11  # qvel

POSE_FIELDS = (
    "xpos xquat xmat xipos ximat xanchor xaxis geom_xpos geom_xmat site_xpos site_xmat "
    "subtree_com cinert cdof"
).split()
MOCAP = ("mocap_pos", "mocap_quat")


@pytest.fixture(scope="module")
def pair() -> tuple[engine.Model, mujoco.MjModel]:
    return engine.load_mjcf(MODEL), mujoco.MjModel.from_xml_string(MODEL)


def _body(mj: mujoco.MjModel, name: str) -> int:
    return mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_BODY, name)


def _mocap(mj: mujoco.MjModel, name: str) -> int:
    return int(mj.body_mocapid[_body(mj, name)])


def random_inputs(mj: mujoco.MjModel, n: int, seed: int):
    """n (qpos, qvel, mocap_pos, mocap_quat): arm angles in [-1, 1] rad, the pusher within
    reach of the arm (so that many states touch), the carrier anywhere near, quaternions
    of random length in [0.2, 3]; row 0's pusher quaternion is zero, row 1's has norm 1e-16
    (both become the identity), row 2's is exactly unit (kept as is)."""
    rng = np.random.default_rng(seed)
    qpos = rng.uniform(-1.0, 1.0, (n, mj.nq))
    qvel = rng.normal(0.0, 1.0, (n, mj.nv))
    mpos = rng.uniform(-1.0, 1.0, (n, mj.nmocap, 3))
    p = _mocap(mj, "pusher")
    mpos[:, p] = rng.uniform([-0.1, -0.4, 0.0], [0.6, 0.4, 0.1], (n, 3))
    q = rng.normal(size=(n, mj.nmocap, 4))
    q /= np.linalg.norm(q, axis=2, keepdims=True)
    mquat = q * rng.uniform(0.2, 3.0, (n, mj.nmocap, 1))
    mquat[0, p] = 0.0
    mquat[1, p] = [1e-16, 0.0, 0.0, 0.0]
    mquat[2, p] = [0.5, 0.5, -0.5, 0.5]
    return qpos, qvel, mpos, mquat


# --- 1. poses, contacts and qacc on random states against mj_forward ----------------------------
def test_random_states_against_mujoco(pair):
    model, mj = pair
    qpos, qvel, mpos, mquat = random_inputs(mj, N_STATES, seed=7)
    sim = engine.Simulator(model, batch=N_STATES)
    d = sim.data
    d.qpos[:], d.qvel[:], d.mocap_pos[:], d.mocap_quat[:] = qpos, qvel, mpos, mquat
    sim.forward()
    # kinematics reads the mocap pose, it does not rewrite it (MuJoCo normalizes a copy)
    np.testing.assert_array_equal(d.mocap_quat, mquat)
    np.testing.assert_array_equal(d.mocap_pos, mpos)

    md = mujoco.MjData(mj)
    worst = dict.fromkeys(POSE_FIELDS, 0.0)
    worst_contact = worst_qacc = 0.0
    touching = 0
    for i in range(N_STATES):
        md.qpos[:], md.qvel[:], md.mocap_pos[:], md.mocap_quat[:] = qpos[i], qvel[i], mpos[i], mquat[i]
        mujoco.mj_forward(mj, md)
        for name in POSE_FIELDS:
            worst[name] = max(worst[name], float(np.max(np.abs(getattr(d, name)[i] - getattr(md, name)))))
        assert d.ncon[i] == md.ncon, f"state {i}: {d.ncon[i]} contacts, MuJoCo {md.ncon}"
        touching += md.ncon > 0
        for c in range(md.ncon):
            con = md.contact[c]
            assert tuple(d.contact_geom[i, c]) == tuple(con.geom), f"state {i} contact {c}"
            err = max(
                abs(d.contact_dist[i, c] - con.dist),
                float(np.max(np.abs(d.contact_pos[i, c] - con.pos))),
                float(np.max(np.abs(d.contact_frame[i, c] - con.frame))),
            )
            worst_contact = max(worst_contact, err)
        worst_qacc = max(worst_qacc, rel_err(d.qacc[i], md.qacc))
    for name, err in worst.items():
        report(f"mocap random states: {name}", err, TOL_POSE, N_STATES)
    report("mocap random states: contacts (pos, frame, dist)", worst_contact, TOL_POSE, touching)
    report("mocap random states: qacc", worst_qacc, TOL_QACC, N_STATES)
    for name, err in worst.items():
        assert err <= TOL_POSE, f"{name} off MuJoCo by {err:.3e}"
    assert worst_contact <= TOL_POSE
    assert worst_qacc <= TOL_QACC
    # the states exercise what they are meant to: contacts with the pusher's box, and the
    # zero and tiny quaternions posing the pusher at the identity, as in MuJoCo
    assert touching >= N_STATES // 10, f"only {touching} states touch the pusher"
    pusher = _body(mj, "pusher")
    np.testing.assert_array_equal(d.xquat[:2, pusher], [[1.0, 0.0, 0.0, 0.0]] * 2)


def test_mocap_pose_is_the_body_pose(pair):
    """A mocap body's frame is its mocap pose itself (a child of the world): xpos equals
    mocap_pos bit for bit, xquat the normalized mocap_quat."""
    model, mj = pair
    _, _, mpos, mquat = random_inputs(mj, 20, seed=3)
    sim = engine.Simulator(model, batch=20)
    sim.data.mocap_pos[:] = mpos
    sim.data.mocap_quat[:] = mquat
    sim.forward()
    for name in ("pusher", "carrier"):
        b, k = _body(mj, name), _mocap(mj, name)
        np.testing.assert_array_equal(sim.data.xpos[:, b], mpos[:, k])
        norm = np.linalg.norm(mquat[3:, k], axis=1, keepdims=True)
        np.testing.assert_allclose(sim.data.xquat[3:, b], mquat[3:, k] / norm, rtol=0, atol=1e-15)


# --- 2. the pusher moved every step pushes the arm: trajectories against mj_step -----------------
def _pusher_path(t: float, x0: float, mj: mujoco.MjModel) -> tuple[np.ndarray, np.ndarray]:
    """Mocap poses at time t (all mocap bodies): the pusher sweeps from y = 0.3 to y = -0.3
    at x = x0 while turning about z (quaternion left unnormalized); the carrier circles and
    tilts, swinging the pendulum."""
    pos = np.zeros((mj.nmocap, 3))
    quat = np.zeros((mj.nmocap, 4))
    p, c = _mocap(mj, "pusher"), _mocap(mj, "carrier")
    pos[p] = [x0, 0.3 - 0.75 * t, 0.05]
    angle = 0.3 + 2.0 * t
    quat[p] = 1.7 * np.array([np.cos(angle / 2), 0.0, 0.0, np.sin(angle / 2)])
    pos[c] = [-0.5 + 0.1 * np.cos(6 * t), 0.1 * np.sin(6 * t), 0.8]
    quat[c] = [1.0, 0.3 * np.sin(5 * t), 0.0, 0.1]
    return pos, quat


def test_pusher_trajectories_against_mujoco(pair):
    model, mj = pair
    starts = [0.12, 0.22, 0.35, 0.48]  # where along the arm the pusher crosses it
    n = len(starts)
    sim = engine.Simulator(model, batch=n)
    datas = [mujoco.MjData(mj) for _ in range(n)]
    worst_q = worst_v = 0.0
    touching = np.zeros(n, dtype=int)
    for step in range(N_STEP):
        t = step * mj.opt.timestep
        for i, x0 in enumerate(starts):
            pos, quat = _pusher_path(t, x0, mj)
            sim.data.mocap_pos[i], sim.data.mocap_quat[i] = pos, quat
            datas[i].mocap_pos[:], datas[i].mocap_quat[:] = pos, quat
        sim.step()
        for i, md in enumerate(datas):
            mujoco.mj_step(mj, md)
            touching[i] += md.ncon > 0
            worst_q = max(worst_q, rel_err(sim.data.qpos[i], md.qpos))
            worst_v = max(worst_v, rel_err(sim.data.qvel[i], md.qvel))
    report(f"mocap pusher {N_STEP}-step trajectories qpos", worst_q, TOL_TRAJ, n)
    report(f"mocap pusher {N_STEP}-step trajectories qvel", worst_v, TOL_TRAJ_VEL, n)
    assert worst_q <= TOL_TRAJ
    assert worst_v <= TOL_TRAJ_VEL
    # the pusher really pushed: every arm was touched for a while and turned clockwise
    shoulder = mj.jnt_qposadr[mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_JOINT, "shoulder")]
    turned = sim.data.qpos[:, shoulder]
    print(f"[mocap] steps with contacts {touching.tolist()}, shoulder angles {turned.round(3).tolist()}")
    assert np.all(touching >= 20), f"steps with contacts per row: {touching.tolist()}"
    assert np.all(turned < -0.2)


# --- 3. snapshots, resets and bad mocap poses ----------------------------------------------------
def _state(sim, rows=slice(None)) -> dict[str, np.ndarray]:
    return {name: getattr(sim.data, name)[rows].copy() for name in STATE_FIELDS}


def _all_fields(sim, rows=slice(None)) -> dict[str, np.ndarray]:
    return {name: getattr(sim.data, name)[rows].copy() for name in sim.data._fields}


def _assert_same(a: dict, b: dict, what: str) -> None:
    assert a.keys() == b.keys()
    for name in a:
        np.testing.assert_array_equal(a[name], b[name], err_msg=f"{what}: field {name} differs")


def _moving_sim(model, mj, batch: int = 4):
    """A Simulator whose rows start with different arm states and pusher crossings."""
    sim = engine.Simulator(model, batch=batch, nthread=1)
    rng = np.random.default_rng(5)
    sim.data.qpos[:] = rng.uniform(-0.2, 0.2, (batch, mj.nq))
    return sim


def _drive(sim, mj, start: int, nstep: int) -> None:
    """nstep steps, the mocap bodies of row i moved along _pusher_path (x0 = 0.15 + 0.1 i)
    before each step."""
    for step in range(start, start + nstep):
        for i in range(sim.batch):
            pos, quat = _pusher_path(step * mj.opt.timestep, 0.15 + 0.1 * i, mj)
            sim.data.mocap_pos[i], sim.data.mocap_quat[i] = pos, quat
        sim.step()


def test_snapshot_restore_includes_mocap(pair):
    model, mj = pair
    assert "mocap_pos" in STATE_FIELDS and "mocap_quat" in STATE_FIELDS
    sim = _moving_sim(model, mj)
    _drive(sim, mj, 0, 150)  # in contact by now
    assert sim.data.ncon.sum() > 0
    before = _state(sim)
    snap = sim.snapshot()
    _drive(sim, mj, 150, 100)
    first = _all_fields(sim)
    assert not np.array_equal(first["mocap_pos"], before["mocap_pos"])
    sim.restore(snap)
    _assert_same(_state(sim), before, "restored state")  # mocap poses included
    _drive(sim, mj, 150, 100)
    _assert_same(_all_fields(sim), first, "after restore + the same 100 steps")
    _assert_same(snap.fields, before, "snapshot contents")


def test_restore_subset_of_rows_includes_mocap(pair):
    model, mj = pair
    sim = _moving_sim(model, mj)
    _drive(sim, mj, 0, 150)
    snap = sim.snapshot(rows=[1, 3])
    at_snap = _state(sim, [1, 3])
    _drive(sim, mj, 150, 60)
    after = _state(sim)
    # the restore recomputes rows 1 and 3 from the restored mocap pose: their frames and
    # contacts are those of the snapshot's state, not of the poses written since
    sim.restore(snap)
    _assert_same(_state(sim, [1, 3]), at_snap, "restored rows 1, 3")
    _assert_same(_state(sim, [0, 2]), {k: v[[0, 2]] for k, v in after.items()}, "untouched rows 0, 2")
    ref = _moving_sim(model, mj)
    _drive(ref, mj, 0, 150)
    ref.forward()
    for name in ("xpos", "xquat", "geom_xpos", "site_xpos", "ncon", "qacc"):
        np.testing.assert_array_equal(getattr(sim.data, name)[[1, 3]], getattr(ref.data, name)[[1, 3]], name)


def test_initial_and_reset_mocap_pose_is_the_body_pose(pair):
    """make_data and on_bad="reset" put every mocap body at its body_pos/body_quat, as
    MjData's allocation and mj_resetData do; the other rows keep theirs."""
    model, mj = pair
    md = mujoco.MjData(mj)
    sim = engine.Simulator(model, batch=3, nthread=1, on_bad="reset")
    for i in range(3):
        np.testing.assert_array_equal(sim.data.mocap_pos[i], md.mocap_pos)
        np.testing.assert_array_equal(sim.data.mocap_quat[i], md.mocap_quat)
    _drive(sim, mj, 0, 20)
    moved = _state(sim)
    sim.data.qvel[1, 0] = np.nan  # MuJoCo resets the whole row, mocap included
    with pytest.warns(engine.PhysicsWarning, match=r"row 1 .*reset to the model's initial state"):
        sim.step()
    md.mocap_pos[:] = moved["mocap_pos"][1]
    md.mocap_quat[:] = moved["mocap_quat"][1]
    mujoco.mj_resetData(mj, md)
    np.testing.assert_array_equal(sim.data.mocap_pos[1], md.mocap_pos)
    np.testing.assert_array_equal(sim.data.mocap_quat[1], md.mocap_quat)
    mocap = mj.body_mocapid >= 0
    np.testing.assert_array_equal(sim.data.mocap_pos[1, mj.body_mocapid[mocap]], model.body_pos[mocap])
    np.testing.assert_array_equal(sim.data.mocap_quat[1, mj.body_mocapid[mocap]], model.body_quat[mocap])
    for name in MOCAP:  # a step never moves a mocap body: rows 0 and 2 keep theirs
        np.testing.assert_array_equal(getattr(sim.data, name)[[0, 2]], moved[name][[0, 2]])


_MESSAGE = re.compile(r"(\w+)\[([\d, ]+)\] = \S+ in row (\d+) at step (\d+)")


@pytest.mark.parametrize(
    ("quantity", "index", "value"),
    [("mocap_pos", (0, 1), np.nan), ("mocap_quat", (1, 3), np.inf), ("mocap_pos", (1, 2), -np.inf)],
)
@pytest.mark.parametrize("on_bad", ["raise", "reset"])
def test_bad_mocap_pose_raises_and_keeps_the_row(pair, quantity, index, value, on_bad):
    """A NaN or inf in a row's mocap pose raises NonFiniteError naming the quantity, the
    entry and the row, whatever on_bad says (the caller wrote it; MuJoCo has no check to
    mirror); that row is not advanced, the others step as they would have."""
    model, mj = pair
    sim, ref = _moving_sim(model, mj), _moving_sim(model, mj)
    sim.on_bad = on_bad
    _drive(sim, mj, 0, 5)
    _drive(ref, mj, 0, 5)
    bad = 2
    getattr(sim.data, quantity)[(bad, *index)] = value
    before = _state(sim, [bad])
    with pytest.raises(engine.NonFiniteError) as info:
        sim.step(10)
    print(f"[mocap] {info.value}")
    match = _MESSAGE.search(str(info.value))
    assert match, str(info.value)
    assert match.group(1) == quantity and match.group(2) == ", ".join(map(str, index))
    assert (int(match.group(3)), int(match.group(4))) == (bad, 6)
    assert "whatever on_bad says" in str(info.value)
    _assert_same(_state(sim, [bad]), before, "the row with the bad mocap pose")
    ref.step(10)
    others = [0, 1, 3]
    _assert_same(_state(sim, others), _state(ref, others), "healthy rows")
    np.testing.assert_array_equal(sim.data.warning[bad], 0)  # refused, not counted as MuJoCo's


def test_bad_mocap_pose_in_forward_and_restore(pair):
    """forward() refuses a bad mocap pose too (state unchanged), and so does restore() for
    a snapshot holding one (nothing written)."""
    model, mj = pair
    sim = _moving_sim(model, mj, batch=2)
    _drive(sim, mj, 0, 5)
    snap = sim.snapshot()
    sim.data.mocap_quat[1, 0, 0] = np.nan
    before = _state(sim)
    with pytest.raises(engine.NonFiniteError, match=r"mocap_quat\[0, 0\] = nan in row 1"):
        sim.forward()
    _assert_same(_state(sim), before, "forward never changes state")
    sim.data.mocap_quat[1, 0, 0] = 1.0
    sim.forward()
    tampered = snap.fields["mocap_pos"].copy()
    tampered[0, 1, 2] = np.inf
    bad = snap._replace(fields={**snap.fields, "mocap_pos": tampered})
    before = _state(sim)
    with pytest.raises(ValueError, match="mocap_pos holds NaN, inf"):
        sim.restore(bad)
    _assert_same(_state(sim), before, "after a refused restore")
