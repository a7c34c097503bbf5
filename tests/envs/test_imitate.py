"""RoboDyn/Imitate-v0 and the clip it plays (envs/motion/clip.py): the shipped clip is on the
floor and inside the joints' ranges; resampling and velocities are exact on motions whose
answer is known; the observation shows the reference; reference state initialization puts the
robot exactly in the reference's state; the PD on the reference alone falls; the clip's end
completes an episode; the actuation's per-row targets; Physics.body_points against MuJoCo.

The checks every task gets (check_env, determinism, vector env = single env, snapshots, bad
input) are in tests/robogym/test_registered_tasks.py.
"""

from __future__ import annotations

import gymnasium as gym
import mujoco
import numpy as np
import pytest

import robogym
from robodyn.envs.humanoid_v0 import JOINTS
from robodyn.envs.imitate_v0 import CLIP, HAND_TIP, LOOKAHEAD
from robodyn.envs.motion.clip import (
    Clip,
    flatten_feet,
    ground,
    load_clip,
    resample,
    save_clip,
    velocities,
)
from robogym.actuation import Actuation
from robogym.errors import InvalidArgumentError, MissingFileError
from robogym.physics import Physics, asset_path

TASK_ID = "RoboDyn/Imitate-v0"
FEET = ("left_foot", "right_foot")
ANKLES = (("left_ankle_y", "left_ankle_x"), ("right_ankle_y", "right_ankle_x"))


@pytest.fixture(scope="module")
def physics():
    return Physics(asset_path("humanoid.xml"), batch=1)


def _env(**kwargs):
    return gym.make(TASK_ID, **kwargs).unwrapped


# --- the clip ------------------------------------------------------------------------------------
def test_the_shipped_clip_is_a_grounded_walk_inside_the_joint_ranges(physics):
    clip = load_clip(asset_path(CLIP), physics.model.nq)
    assert clip.fps == 30.0 and len(clip.qpos) == 181 and clip.duration == pytest.approx(6.0)
    assert "holosoma-retargeting 0.1.0 (Apache-2.0)" in clip.source and "mocap_climb_seq_1" in clip.source
    low = physics.lowest_box_corner(FEET, qpos=clip.qpos)
    print(f"\nclip: lowest sole corner per frame within {np.max(np.abs(low)):.1e} m of the floor")
    np.testing.assert_allclose(low, 0.0, atol=1e-12)  # ground() put it there; only rounding remains
    np.testing.assert_array_equal(clip.qpos[0, 0:2], [0.0, 0.0])
    rng = physics.named_model.jnt_range[list(JOINTS)]
    hinges = clip.qpos[:, physics.named.qpos.columns(JOINTS)]
    assert np.all(hinges >= rng[:, 0]) and np.all(hinges <= rng[:, 1])
    walked = np.linalg.norm(clip.qpos[-1, 0:2] - clip.qpos[0, 0:2])
    assert 0.9 < walked < 1.3  # the walk covers about 1.1 m


def test_ground_puts_the_lowest_sole_on_the_floor_and_the_start_at_the_origin(physics):
    home = physics.keyframe("home")
    q = np.tile(home, (3, 1))
    q[:, 0:3] += [[1.0, 2.0, 0.05], [1.5, 2.0, -0.02], [2.0, 2.0, 0.0]]
    g = ground(q, physics, FEET)
    np.testing.assert_allclose(physics.lowest_box_corner(FEET, qpos=g), 0.0, atol=1e-12)
    np.testing.assert_allclose(g[:, 0:2], [[0.0, 0.0], [0.5, 0.0], [1.0, 0.0]], atol=1e-12)
    np.testing.assert_array_equal(g[:, 3:], q[:, 3:])  # only the base moves


def _tilt_deg(physics, qpos, foot) -> np.ndarray:
    """(T,) the angle between the foot box's z axis and the vertical (degrees)."""
    sim = physics.scratch(len(qpos))
    sim.data.qpos[:] = qpos
    sim.forward()
    return np.degrees(np.arccos(np.clip(sim.data.geom_xmat[:, physics.geom_id(foot), 8], -1.0, 1.0)))


def test_flatten_feet_levels_a_foot_on_the_floor_and_leaves_a_raised_one(physics):
    home = physics.keyframe("home")
    at = {j: physics.named.qpos.columns([j])[0] for j in JOINTS}
    q = np.tile(home, (2, 1))
    q[:, at["left_ankle_y"]] += 0.2  # the left foot tilted onto its heel or toe
    q[1, at["right_ankle_x"]] -= 0.15  # frame 1: the right foot on one edge,
    q[1, at["left_hip_y"]] += 0.9  # the left leg swung up, its tilted foot well off the floor
    g = ground(q, physics, FEET)
    flat = ground(flatten_feet(g, physics, FEET, ANKLES), physics, FEET)
    left, right = _tilt_deg(physics, flat, "left_foot"), _tilt_deg(physics, flat, "right_foot")
    print(f"\nflatten_feet: tilt on the floor {max(left[0], right[0], right[1]):.1e} deg")
    assert left[0] < 1e-6 and right[0] < 1e-6 and right[1] < 1e-6
    left_ankle = [at["left_ankle_y"], at["left_ankle_x"]]
    np.testing.assert_array_equal(flat[1, left_ankle], g[1, left_ankle])
    assert _tilt_deg(physics, g, "left_foot")[1] > 5.0  # the raised foot kept its tilt


def test_the_shipped_clip_stands_on_flat_feet(physics):
    """On the frames where a foot is on the floor (its lowest corner within 1 cm), its sole is
    within a few degrees of level (the retargeted feet stood 15 degrees tilted on average)."""
    clip = load_clip(asset_path(CLIP))
    tilts = []
    for foot in FEET:
        down = physics.lowest_box_corner((foot,), qpos=clip.qpos) < 0.01
        tilts.append(_tilt_deg(physics, clip.qpos[down], foot))
    tilts = np.concatenate(tilts)
    print(f"\nclip: feet on the floor tilted {tilts.mean():.2f} deg on average, {tilts.max():.2f} at most")
    assert tilts.mean() < 2.0 and tilts.max() < 15.0


def test_load_clip_refuses_what_is_not_a_clip(tmp_path, physics):
    nq = physics.model.nq
    good = np.tile(physics.keyframe("home"), (4, 1))
    path = save_clip(tmp_path / "a.npz", Clip(good, 30.0, "test"))
    back = load_clip(path, nq)
    np.testing.assert_array_equal(back.qpos, good)
    assert back.fps == 30.0 and back.source == "test"
    with pytest.raises(MissingFileError, match="does not exist"):
        load_clip(tmp_path / "none.npz")
    with pytest.raises(InvalidArgumentError, match=r"shape \(T >= 2, 28\), got \(4, 27\)"):
        load_clip(save_clip(tmp_path / "b.npz", Clip(good[:, :-1], 30.0)), nq)
    bad = good.copy()
    bad[2, 9] = np.nan
    with pytest.raises(InvalidArgumentError, match=r"1 frames .* NaN or an infinity: \[2\]"):
        load_clip(save_clip(tmp_path / "c.npz", Clip(bad, 30.0)), nq)
    bad = good.copy()
    bad[1, 3] = 2.0
    with pytest.raises(InvalidArgumentError, match="not of unit length"):
        load_clip(save_clip(tmp_path / "d.npz", Clip(bad, 30.0)), nq)
    with pytest.raises(InvalidArgumentError, match="fps must be a finite number > 0"):
        load_clip(save_clip(tmp_path / "e.npz", Clip(good, 0.0)), nq)
    np.savez(tmp_path / "f.npz", positions=good)
    with pytest.raises(InvalidArgumentError, match="is not a clip: it has no qpos, fps, source"):
        load_clip(tmp_path / "f.npz")


def _spinning(physics, T: int, fps: float, rate: float, turn: float):
    """A clip of T frames: hinges moving at `rate` rad/s, the base turning at `turn` rad/s about
    its own fixed axis (1, 2, 2)/3 and sliding at (0.3, -0.2, 0.1) m/s."""
    t = np.arange(T) / fps
    q = np.tile(physics.keyframe("home"), (T, 1))
    axis = np.array([1.0, 2.0, 2.0]) / 3.0
    q[:, 3:7] = np.concatenate([np.cos(turn * t / 2)[:, None], np.sin(turn * t / 2)[:, None] * axis], axis=1)
    q[:, 0:3] += np.outer(t, [0.3, -0.2, 0.1])
    q[:, 7:] += rate * t[:, None]
    return Clip(q, fps), axis


def test_resample_and_velocities_are_exact_on_a_steady_motion(physics):
    """Linear positions and a steady spin: the resampled poses are the motion's own at the new
    times, and the central differences are its velocities (the angular one in the body frame,
    along the fixed axis), to rounding."""
    clip, axis = _spinning(physics, T=31, fps=30.0, rate=0.7, turn=1.3)
    dt = 0.02
    q = resample(clip, dt)
    assert len(q) == 51
    t = np.arange(51) * dt
    np.testing.assert_allclose(q[:, 7:], clip.qpos[0, 7:] + 0.7 * t[:, None], atol=1e-12)
    want = np.concatenate([np.cos(1.3 * t / 2)[:, None], np.sin(1.3 * t / 2)[:, None] * axis], axis=1)
    np.testing.assert_allclose(q[:, 3:7], want, atol=1e-12)
    np.testing.assert_allclose(q[::5], clip.qpos[::3], atol=1e-12)  # every 0.1 s both have a frame
    v = velocities(q, dt, physics.scratch(1))
    np.testing.assert_allclose(v[:, 0:3], np.tile([0.3, -0.2, 0.1], (51, 1)), atol=1e-10)
    np.testing.assert_allclose(v[:, 3:6], np.tile(1.3 * axis, (51, 1)), atol=1e-10)
    np.testing.assert_allclose(v[:, 6:], 0.7, atol=1e-10)


# --- the task ------------------------------------------------------------------------------------
def test_the_first_step_of_a_first_frame_start_and_the_observation(physics):
    env = _env(random_start=False)
    obs, _ = env.reset(seed=3)
    task = env.task
    assert task.steps == 300 and obs.shape == (109,)
    names = task.observation_names()
    at = {n: i for i, n in enumerate(names)}
    assert obs[at["phase"]] == 0.0
    # the robot is exactly in the reference's first frame; the observation shows frames 1 and 2
    np.testing.assert_array_equal(task.physics.named.qpos.all[0], task.ref_qpos[0])
    hinges = task.physics.named.qpos.columns(JOINTS)
    for k in LOOKAHEAD:
        shown = obs[[at[f"ref{k}_{j}_pos"] for j in JOINTS]]
        np.testing.assert_array_equal(shown, task.ref_qpos[k, hinges])
        rel = obs[[at[f"ref{k}_base_q{c}"] for c in "wxyz"]]
        assert rel[0] > 0.99  # the base barely turns in 0.04 s
    # the zero action follows the reference closely on the first step
    obs, reward, term, trunc, info = env.step(np.zeros(21))
    print(
        f"\nImitate-v0, zero action, first step: reward {reward:.4f}, "
        f"joint_error {info['joint_error']:.4f} rad"
    )
    assert reward > 0.95 and not term and not trunc
    assert info["joint_error"] < 0.01 and info["root_error"] < 0.01
    assert obs[at["phase"]] == pytest.approx(1 / 300)


def test_random_starts_are_the_reference_state_at_their_frame():
    env = gym.make_vec(TASK_ID, num_envs=16)
    env.reset(seed=5)
    task = env.unwrapped.task
    starts = task.start.copy()
    assert len(set(starts.tolist())) > 8 and starts.min() >= 0 and starts.max() < task.steps
    np.testing.assert_array_equal(task.physics.named.qpos.all, task.ref_qpos[starts])
    np.testing.assert_array_equal(task.physics.named.qvel.all, task.ref_qvel[starts])


def test_the_pd_on_the_reference_alone_falls():
    """The `pd` baseline (the zero action) from the clip's first frame: the joints follow, the
    base drifts off as the robot falls, and the episode fails long before the clip's end."""
    env = _env(random_start=False)
    env.reset(seed=0)
    term, step = False, 0
    while not term and step < 300:
        _, _, term, _, info = env.step(np.zeros(21))
        step += 1
    print(
        f"\nImitate-v0 pd from the first frame: failed at step {step} of 300, "
        f"joint_error {info['joint_error']:.3f} rad, root_error {info['root_error']:.3f} m"
    )
    assert term and step < 150 and info["completed"] == 0.0 and info["success"] == 0.0


def test_reaching_the_clip_end_completes_the_episode():
    env = _env()
    env.reset(seed=0)
    task = env.task
    k = task.steps - 1  # one step before the end, in the reference's state
    task.start[0] = k
    task.physics.named.qpos.all[0] = task.ref_qpos[k]
    task.physics.named.qvel.all[0] = task.ref_qvel[k]
    task.physics.forward()
    _, reward, term, trunc, info = env.step(np.zeros(21))
    assert term and not trunc and info["phase"] == 1.0
    assert info["completed"] == 1.0 and info["success"] == 1.0 and reward > 0.9


def test_a_drift_beyond_max_root_error_fails():
    env = _env(random_start=False)
    env.reset(seed=0)
    env.task.physics.named.qpos["root"][0, 0] += 0.31  # the base 0.31 m off the reference
    env.task.physics.forward()
    _, _, term, _, info = env.step(np.zeros(21))
    assert term and info["completed"] == 0.0 and info["root_error"] > 0.3


def test_registered_with_its_baseline_and_scenario():
    entry = robogym.registration.entry(TASK_ID)
    assert set(entry.baselines) == {"pd"} and entry.scenarios == {"start": {"random_start": False}}
    assert gym.spec(TASK_ID).max_episode_steps == 300  # the clip's steps: it ends every episode


# --- the pieces it uses --------------------------------------------------------------------------
def test_pd_target_actuation_takes_a_centre_per_row():
    """apply(..., default=c) runs the same physics as an actuation whose default pose is c."""
    kp, kd = 1000.0, 20.0
    p = Physics(asset_path("humanoid.xml"), batch=2)
    home = p.keyframe("home")
    centre = home[p.named.qpos.columns(JOINTS)] + np.linspace(-0.1, 0.1, 21)
    a = np.linspace(-1.0, 1.0, 42).reshape(2, 21)
    moving = Actuation.pd_target(p, list(JOINTS), kp=kp, kd=kd, scale=0.5)
    p.reset_data(keyframe="home")
    moving.apply(p.sim, a, 5, default=np.stack([centre, centre]))
    got = p.named.qpos.all.copy()
    q = Physics(asset_path("humanoid.xml"), batch=2)
    fixed = Actuation.pd_target(q, list(JOINTS), kp=kp, kd=kd, scale=0.5, default=centre)
    q.reset_data(keyframe="home")
    fixed.apply(q.sim, a, 5)
    np.testing.assert_array_equal(got, q.named.qpos.all)
    assert not np.array_equal(got[0], home)


def test_body_points_against_mujoco(physics):
    m = mujoco.MjModel.from_xml_path(str(asset_path("humanoid.xml")))
    d = mujoco.MjData(m)
    clip = load_clip(asset_path(CLIP))
    poses = clip.qpos[::60]
    bodies = ("left_forearm", "right_forearm")
    got = physics.body_points(poses, bodies, [HAND_TIP, -HAND_TIP])
    worst = 0.0
    for n, qpos in enumerate(poses):
        d.qpos[:] = qpos
        mujoco.mj_kinematics(m, d)
        for b, (name, off) in enumerate(zip(bodies, [HAND_TIP, -HAND_TIP], strict=True)):
            i = m.body(name).id
            want = d.xpos[i] + d.xmat[i].reshape(3, 3) @ off
            worst = max(worst, float(np.max(np.abs(got[n, b] - want))))
    print(f"\nbody_points against MuJoCo's xpos + xmat offset: worst {worst:.1e} m")
    assert worst < 1e-12


def test_lowest_box_corner_against_mujocos_corners(physics):
    """Physics.lowest_box_corner (a box's centre height less sum_i |R[2, i]| h_i) equals the
    lowest of the eight corners MuJoCo's geom_xpos and geom_xmat give, at given poses and
    for the env's own rows after a forward pass."""
    m = mujoco.MjModel.from_xml_path(str(asset_path("humanoid.xml")))
    d = mujoco.MjData(m)
    poses = load_clip(asset_path(CLIP)).qpos[::20]
    signs = np.array([[a, b, c] for a in (-1, 1) for b in (-1, 1) for c in (-1, 1)], dtype=float)
    want = np.empty(len(poses))
    for n, qpos in enumerate(poses):
        d.qpos[:] = qpos
        mujoco.mj_kinematics(m, d)
        z = [
            (d.geom_xpos[g] + (signs * m.geom_size[g]) @ d.geom_xmat[g].reshape(3, 3).T)[:, 2].min()
            for g in (m.geom(f).id for f in FEET)
        ]
        want[n] = min(z)
    got = physics.lowest_box_corner(FEET, qpos=poses)
    live = Physics(asset_path("humanoid.xml"), batch=len(poses))
    live.sim.data.qpos[:] = poses
    live.forward()
    rows = np.arange(1, len(poses), 2)
    worst = float(np.max(np.abs(got - want)))
    print(f"\nlowest_box_corner against MuJoCo's eight corners: worst {worst:.1e} m over {len(poses)} poses")
    assert len(poses) == 10 and worst < 1e-12
    np.testing.assert_array_equal(live.lowest_box_corner(FEET, rows=rows), got[rows])


# --- the shipped policy --------------------------------------------------------------------------
def test_shipped_ppo_performs_the_walk():
    """training/policies/imitate_ppo.zip, deterministic, over the 64 random starts seeded 0..63
    (`robodyn eval RoboDyn/Imitate-v0 --policy pd --policy training/policies/imitate_ppo.zip
    --episodes 64 --num-envs 64`, the same evaluate() call): it succeeds (completes the clip
    with a mean hinge error of at most 0.15 rad) in 62 of 64 (97 %; the worst joint_error
    0.039 rad), asserted at least 58 (90 %), where the PD on the reference completes 16 (25 %,
    each a start in the clip's last 1.1 s); from the clip's first frame it performs the whole
    6 s walk."""
    from robodyn.training.cli import SAVED_POLICIES
    from robodyn.training.evaluate import evaluate

    spec = str(SAVED_POLICIES / "imitate_ppo.zip")
    done = {}
    for policy in ("pd", spec):
        res = evaluate(TASK_ID, policy, episodes=64, num_envs=64, seed=0, record=0)
        done[policy] = int(sum(e["final"]["success"] for e in res.episodes))
        if policy == spec:
            finals = [e["final"] for e in res.episodes if e["final"]["success"]]
            worst = max(f["joint_error"] for f in finals)
    print(
        f"\nimitate_ppo: {done[spec]} of 64 random starts succeed "
        f"(worst joint_error {worst:.3f} rad), pd {done['pd']}"
    )
    assert done["pd"] == 16
    assert done[spec] >= 58 and worst <= 0.15
    res = evaluate(
        TASK_ID, spec, episodes=1, num_envs=1, seed=0, env_kwargs={"random_start": False}, record=0
    )
    (episode,) = res.episodes
    print(
        f"imitate_ppo from the first frame: {episode['length']} steps, "
        f"joint_error {episode['final']['joint_error']:.4f} rad"
    )
    assert episode["length"] == 300 and episode["final"]["success"] == 1.0
