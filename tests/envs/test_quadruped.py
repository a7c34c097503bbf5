"""RoboDyn/Quadruped-v0: the walking task's actuation mask, observation, command, reward,
termination, metrics, sensor model and snapshots, and the issue's bar for its baseline.

- The action is 12 joint targets (`pd_target` about the home keyframe); the free base's six
  dofs are never in the mask.
- The observation's 45 components are named, and each is checked against a quantity read
  another way: the gyro against the free joint's body-frame angular velocity, the gravity
  direction against the trunk's quaternion, the joint angles against qpos minus the home
  keyframe, the last action against the action sent, the command against the task state.
- The command is drawn per episode inside its ranges, from the row's generator: row i of a
  vector env seeded s has the command of a single env seeded s + i.
- The reward is exactly the sum of its terms; an upside-down trunk or one on the floor ends
  the episode; velocity_error is the RMS of the heading-frame velocity error recomputed here.
- Sensor noise changes what the policy sees, not the physics; a delay of k steps shows the
  reading of k steps ago; snapshot/restore replays bit for bit with both on.
- The `pd` baseline (the zero action: the task's PD holds the home pose) stands for 20 s
  (1,000 steps) on the fixed scenario (velocity_error 0.5035 m/s against the 0.5 m/s command,
  43 mm below home, nose down 0.072 rad, at rest: envs/README.md's numbers, asserted to their
  digits) and from randomized starts.
- The shipped PPO policies against the numbers README.md and envs/README.md give, over the
  64 episodes seeded 0..63 through training.evaluate, as `robodyn eval ... --episodes 64
  --num-envs 64` runs them.
"""

from __future__ import annotations

import gymnasium as gym
import mujoco
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import robogym
from robodyn.envs.baselines import make_baseline
from robodyn.envs.quadruped_v0 import JOINTS, NOISE_ANGLE, NOISE_GRAVITY, NOISE_GYRO, NOISE_RATE
from robogym import registration
from tests.helpers import ASSETS

ID = "RoboDyn/Quadruped-v0"


@pytest.fixture(scope="module")
def home():
    mj = mujoco.MjModel.from_xml_path(str(ASSETS / "quadruped.xml"))
    return mj.key_qpos[mj.key("home").id].copy()


def _vec(n: int, **kwargs):
    return gym.make_vec(ID, num_envs=n, autoreset_mode=AutoresetMode.DISABLED, **kwargs)


def _heading_velocity(qpos, qvel) -> np.ndarray:
    """(B, 2) world horizontal velocity turned by -yaw (yaw of the quaternion w, x, y, z)."""
    w, x, y, z = qpos[:, 3:7].T
    yaw = np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
    c, s = np.cos(yaw), np.sin(yaw)
    return np.stack([c * qvel[:, 0] + s * qvel[:, 1], -s * qvel[:, 0] + c * qvel[:, 1]], axis=1)


def test_action_is_twelve_joint_targets_and_the_base_is_never_actuated(home):
    env = gym.make(ID)
    assert env.action_space.shape == (12,)
    np.testing.assert_array_equal(env.action_space.low, -1.0)
    np.testing.assert_array_equal(env.action_space.high, 1.0)
    act = env.unwrapped.task.actuation()
    model = env.unwrapped.physics.model
    assert act.kind == "pd_target" and not act.gravity_compensation
    assert sorted(act.dofs.tolist()) == list(range(6, 18))  # dofs 0-5: the free joint "root"
    assert np.all(model.jnt_type[model.dof_jntid[act.dofs]] == mujoco.mjtJoint.mjJNT_HINGE)
    np.testing.assert_array_equal(act.default, home[7:])  # targets about the home keyframe
    np.testing.assert_array_equal(act.kp, 35.0)
    np.testing.assert_array_equal(act.kd, 0.5)
    np.testing.assert_array_equal(act.scale, 0.5)


def test_observation_layout_and_names(home):
    env = _vec(2, reset_noise_scale=0.0, command=(0.3, -0.2))
    task = env.task
    names = task.observation_names()
    assert len(names) == len(set(names)) == 45 == env.single_observation_space.shape[0]
    assert names[:6] == ["gyro[x]", "gyro[y]", "gyro[z]", "gravity[x]", "gravity[y]", "gravity[z]"]
    assert names[6:18] == [f"q[{j}]" for j in JOINTS] and names[18:30] == [f"qdot[{j}]" for j in JOINTS]
    assert names[30:42] == [f"last_action[{j}]" for j in JOINTS]
    assert names[42:] == ["command[vx]", "command[vy]", "command[yaw_rate]"]
    obs, _ = env.reset(seed=0)
    expected = np.zeros(45)
    expected[5] = -1.0  # gravity straight down the trunk's -z
    expected[42:] = (0.3, 0.0, -0.2)
    np.testing.assert_allclose(obs, np.tile(expected, (2, 1)), atol=1e-12)
    action = np.random.default_rng(0).uniform(-1.5, 1.5, (2, 12))  # some outside the box
    for _ in range(5):
        obs, *_ = env.step(action)
    d = env.physics.data
    np.testing.assert_allclose(obs[:, 0:3], d.qvel[:, 3:6], atol=1e-12)  # body-frame angular velocity
    w, x, y, z = d.qpos[:, 3:7].T  # world z in the trunk frame: the third row of R(q)
    up = np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], axis=1)
    np.testing.assert_allclose(obs[:, 3:6], -up, atol=1e-12)
    np.testing.assert_allclose(obs[:, 6:18], d.qpos[:, 7:] - home[7:], atol=1e-12)
    np.testing.assert_allclose(obs[:, 18:30], d.qvel[:, 6:], atol=1e-12)
    np.testing.assert_array_equal(obs[:, 30:42], np.clip(action, -1, 1))
    np.testing.assert_array_equal(obs[:, 42:], [(0.3, 0.0, -0.2)] * 2)
    env.close()


def test_command_is_drawn_per_episode_in_its_ranges_and_seeded():
    n = 16
    env = _vec(n)
    obs, _ = env.reset(seed=3)
    c = obs[:, 42:]
    np.testing.assert_array_equal(c, env.task.commands)
    assert np.all((c[:, 0] >= 0.0) & (c[:, 0] <= 1.0)) and np.all(c[:, 1] == 0.0)
    assert np.all(np.abs(c[:, 2]) <= 0.5)
    assert len(np.unique(c[:, 0])) == n and c[:, 0].max() - c[:, 0].min() > 0.5  # spread, not one value
    assert (c[:, 2] > 0).any() and (c[:, 2] < 0).any()
    for i in (0, 5, n - 1):
        single = gym.make(ID)
        o, _ = single.reset(seed=3 + i)
        np.testing.assert_array_equal(o, obs[i])
    again, _ = env.reset(seed=4)
    assert not np.any(again[:, 42] == c[:, 0])  # a new episode, a new command
    narrow = _vec(4, max_forward_speed=0.2, max_yaw_rate=0.1)
    o, _ = narrow.reset(seed=0)
    assert np.all(o[:, 42] <= 0.2) and np.all(np.abs(o[:, 44]) <= 0.1)
    env.close()
    narrow.close()


def test_bad_commands_are_refused():
    with pytest.raises(TypeError, match="command"):
        gym.make(ID, command="fast")
    with pytest.raises(TypeError, match="command"):
        gym.make(ID, command=(0.5, 0.0, 0.0))
    with pytest.raises(ValueError, match="finite"):
        gym.make(ID, command=(np.nan, 0.0))
    with pytest.raises(ValueError, match="max_forward_speed"):
        gym.make(ID, max_forward_speed=-1.0)


def test_reward_is_the_sum_of_its_terms():
    env = _vec(4)
    env.reset(seed=1)
    rng = np.random.default_rng(1)
    seen = set()
    for _ in range(20):
        _, r, _, _, info = env.step(rng.uniform(-1, 1, (4, 12)))
        terms = [k for k in info if k.startswith("reward_") and not k.startswith("_")]
        np.testing.assert_array_equal(r, sum(info[k] for k in terms))
        seen.update(k for k in terms if np.any(info[k] != 0))
    # every term but the fall's is active under random actions
    assert seen == {
        "reward_tracking",
        "reward_yaw_tracking",
        "reward_vertical_velocity",
        "reward_roll_pitch_rate",
        "reward_orientation",
        "reward_torque",
        "reward_action_rate",
    }
    env.close()


def test_flipped_or_floored_trunk_terminates():
    env = _vec(2, reset_noise_scale=0.0)
    env.reset(seed=0)
    env.physics.set_free_pose("root", [0.0, 0.0, 0.5], [0.0, 1.0, 0.0, 0.0], [1])  # upside down, in the air
    env.physics.sim.forward()
    _, _, term, _, info = env.step(np.zeros((2, 12)))
    np.testing.assert_array_equal(term, [False, True])
    assert env.task.up()[1, 2] < 0 and not env.task.trunk_contact()[1]
    np.testing.assert_array_equal(info["fallen"], [0.0, 1.0])
    assert info["success"][1] == 0.0
    np.testing.assert_array_equal(info["reward_termination"], [0.0, -1.0])
    env.close()

    # with the flip condition off (up z < -1 never holds), the trunk on the floor still ends it
    env = _vec(3, reset_noise_scale=0.0, min_upright=-1.0)
    env.reset(seed=0)
    env.physics.set_free_pose("root", [0.0, 0.0, 0.5], [0.0, 1.0, 0.0, 0.0], [1])
    env.physics.set_free_pose("root", [0.0, 0.0, 0.055], [0.0, 1.0, 0.0, 0.0], [2])  # on its back
    env.physics.sim.forward()
    _, _, term, _, info = env.step(np.zeros((3, 12)))
    np.testing.assert_array_equal(term, [False, False, True])
    np.testing.assert_array_equal(env.task.trunk_contact(), [False, False, True])
    env.close()


def test_velocity_error_is_the_rms_of_the_heading_velocity_error():
    env = _vec(3)
    env.reset(seed=2)
    d = env.physics.data
    command = env.task.commands[:, :2].copy()
    rng = np.random.default_rng(2)
    sq = np.zeros(3)
    for t in range(1, 31):
        _, _, _, _, info = env.step(rng.uniform(-0.3, 0.3, (3, 12)))
        dv = _heading_velocity(d.qpos, d.qvel) - command
        sq += np.sum(dv * dv, axis=1)
        assert {"velocity_error", "fallen", "success"} <= set(info)
        np.testing.assert_allclose(info["velocity_error"], np.sqrt(sq / t), rtol=1e-12)
        np.testing.assert_array_equal(
            info["success"], (info["velocity_error"] < 0.15) & (info["fallen"] == 0)
        )
    env.close()


def test_sensor_noise_changes_observations_not_physics():
    actions = np.random.default_rng(4).uniform(-1, 1, (12, 2, 12))
    runs = {}
    for noise in (0.0, 1.0):
        env = _vec(2, sensor_noise=noise)
        obs = [env.reset(seed=9)[0]]
        obs += [env.step(a)[0] for a in actions]
        runs[noise] = (np.array(obs), env.physics.data.qpos.copy(), env.physics.data.qvel.copy())
        env.close()
    (clean, q0, v0), (noisy, q1, v1) = runs[0.0], runs[1.0]
    np.testing.assert_array_equal(q0, q1)
    np.testing.assert_array_equal(v0, v1)
    np.testing.assert_array_equal(clean[..., 30:], noisy[..., 30:])  # last action, command: no noise
    scale = np.concatenate([np.full(3, NOISE_GYRO), np.full(3, NOISE_GRAVITY), np.full(12, NOISE_ANGLE)])
    scale = np.concatenate([scale, np.full(12, NOISE_RATE)])
    diff = noisy[..., :30] - clean[..., :30]
    assert np.all(diff != 0.0) and np.all(np.abs(diff) <= scale)  # uniform in +-scale
    assert np.all(np.abs(diff).max(axis=(0, 1)) > 0.5 * scale)


def test_observation_delay_shows_the_reading_of_k_steps_ago():
    k = 2
    actions = np.random.default_rng(5).uniform(-1, 1, (8, 2, 12))
    clean_env, late_env = _vec(2), _vec(2, observation_delay=k)
    clean = [clean_env.reset(seed=1)[0]] + [clean_env.step(a)[0] for a in actions]
    late = [late_env.reset(seed=1)[0]] + [late_env.step(a)[0] for a in actions]
    for t in range(len(late)):
        np.testing.assert_array_equal(late[t][:, :30], clean[max(t - k, 0)][:, :30])
        np.testing.assert_array_equal(late[t][:, 30:], clean[t][:, 30:])


def test_snapshot_restore_replays_bit_for_bit_with_noise_and_delay():
    env = _vec(3, sensor_noise=0.5, sensor_noise_kind="gaussian", observation_delay=3)
    env.reset(seed=11)
    rng = np.random.default_rng(11)
    for _ in range(7):
        env.step(rng.uniform(-1, 1, (3, 12)))
    snap = env.snapshot()
    actions = rng.uniform(-1, 1, (10, 3, 12))
    first = [env.step(a) for a in actions]
    env.restore(snap)
    second = [env.step(a) for a in actions]
    for a, b in zip(first, second, strict=True):
        for x, y in zip(a[:4], b[:4], strict=True):
            np.testing.assert_array_equal(x, y)
        for key in a[4]:
            np.testing.assert_array_equal(a[4][key], b[4][key])
    env.close()


def _stand(env, seed, steps: int = 1000):
    """Run the pd baseline for `steps` steps; (last info, worst trunk height below home (m), worst
    tilt (rad), final max |qvel|)."""
    obs, _ = env.reset(seed=seed)
    policy = make_baseline("pd", env)
    policy.reset(env, np.arange(env.num_envs))
    z0 = env.physics.mj_model.key("home").qpos[2]  # the home keyframe's trunk height
    drop = tilt = 0.0
    for t in range(steps):
        obs, _, term, trunc, info = env.step(policy.act(env, obs))
        assert not term.any(), f"fell at step {t + 1}"
        assert trunc.all() == (t == steps - 1)
        drop = max(drop, float(np.max(z0 - env.task.height())))
        tilt = max(tilt, float(np.max(np.arccos(np.clip(env.task.up()[:, 2], -1, 1)))))
    speed = float(np.abs(env.physics.data.qvel).max())
    return info, drop, tilt, speed


def test_pd_baseline_stands_for_20_s_and_reports_velocity_error():
    fixed = registration.entry(ID).scenarios["fixed"]
    env = gym.make_vec(ID, num_envs=1, **fixed)
    assert env.max_episode_steps == 1000 and env.dt == pytest.approx(0.02)
    info, drop, tilt, speed = _stand(env, seed=0)
    err = float(info["velocity_error"][0])
    print(
        f"[baseline] {ID} pd on the fixed scenario (command {fixed['command']}): stood 20 s, "
        f"velocity_error {err:.4f} m/s, trunk sank {drop * 1e3:.1f} mm, tilt <= {tilt:.4f} rad, "
        f"final max |qvel| {speed:.1e}"
    )
    assert info["fallen"][0] == 0.0 and info["success"][0] == 0.0  # standing is not walking
    assert round(err, 4) == 0.5035  # it stands: the error is the commanded speed
    # the soft gains (kp 35) let the legs sag under the load, the front ones more (the trunk's
    # centre of mass is 2 cm ahead): it settles 43 mm lower, nose down by 0.072 rad, and stays
    # (envs/README.md's numbers, to the digits it prints; at rest: 7e-7 m/s seen)
    assert round(drop * 1e3) == 43 and round(tilt, 3) == 0.072 and speed < 1e-5
    env.close()

    randomized = gym.make_vec(ID, num_envs=4)  # joint noise, drawn commands
    info, drop, tilt, speed = _stand(randomized, seed=100)
    commanded = np.linalg.norm(randomized.task.commands[:, :2], axis=1)
    print(
        f"[baseline] {ID} pd from 4 randomized starts: stood 20 s, velocity_error "
        f"{np.round(info['velocity_error'], 4)} (commands {np.round(commanded, 4)} m/s), sank "
        f"{drop * 1e3:.1f} mm, tilt <= {tilt:.4f} rad"
    )
    np.testing.assert_allclose(info["velocity_error"], commanded, atol=0.02)
    assert drop < 0.06 and tilt < 0.1 and speed < 1e-2
    randomized.close()


def test_registered_with_its_baseline_and_scenarios():
    entry = registration.entry(ID)
    assert entry.max_episode_steps == 1000 and "pd" in entry.baselines
    assert set(entry.scenarios) == {"fixed", "stand"}
    assert ID in [t.id for t in robogym.TASKS]


def _ppo_finals(name: str, **env_kwargs) -> dict[str, np.ndarray]:
    """Each final metric of the 64 episodes seeded 0..63 of a shipped policy on 64 envs."""
    from robodyn.training.cli import SAVED_POLICIES
    from robodyn.training.evaluate import evaluate

    spec = str(SAVED_POLICIES / name)
    res = evaluate(ID, spec, episodes=64, num_envs=64, seed=0, record=0, env_kwargs=env_kwargs)
    assert len(res.episodes) == 64
    return {
        k: np.array([e["final"][k] for e in res.episodes]) for k in ("velocity_error", "fallen", "success")
    }


def test_shipped_ppo_tracks_commands_and_never_falls():
    """training/policies/quadruped_ppo.zip on 64 randomized episodes (commands and starts
    seeded 0..63), README.md's row and envs/README.md: velocity_error 0.079 m/s on average and
    0.122 at worst, no falls, 100 % success (64 of 64); the bar envs/README.md sets for a
    trained policy (under 0.15 m/s, under 5 % falls) is far looser. Asserted to the digits the
    READMEs print; success at least 63 (the policy acts in float32 through torch, whose
    kernels round differently on other CPUs, and an episode near the 0.15 m/s threshold can
    cross it)."""
    f = _ppo_finals("quadruped_ppo.zip")
    error, falls, success = f["velocity_error"], int(f["fallen"].sum()), int(f["success"].sum())
    print(
        f"quadruped_ppo: velocity_error {error.mean():.4f} m/s (max {error.max():.4f}), {falls} falls, "
        f"success {success} of 64"
    )
    assert error.mean() < 0.0795 and error.max() < 0.1225 and falls == 0 and success >= 63


def test_shipped_randomized_ppo_holds_the_bar_on_randomized_robots():
    """training/policies/quadruped_ppo_randomized.zip (envs/README's randomized-physics table),
    64 episodes seeded 0..63: with randomize=True (robots it was not tuned to) velocity_error
    0.088 m/s on average, no falls, success in 63 of 64 (98 %) on the machine it was
    measured on and 62 on an AMD EPYC (envs/README.md gives both: one episode sits on the
    success threshold, and the CPU's BLAS, through the policy's float32 inference, decides
    it); on the nominal robot 0.081 m/s, no falls, 100 %. Asserted
    to the digits the README prints, success at least the README's count."""
    for label, kwargs, most, least in (
        ("randomized", {"randomize": True}, 0.0885, 62),
        ("nominal", {}, 0.0815, 64),
    ):
        f = _ppo_finals("quadruped_ppo_randomized.zip", **kwargs)
        error, falls, success = f["velocity_error"].mean(), int(f["fallen"].sum()), int(f["success"].sum())
        print(
            f"quadruped_ppo_randomized, {label}: error {error:.4f} m/s, {falls} falls, "
            f"success {success} of 64"
        )
        assert error < most and falls == 0 and success >= least
