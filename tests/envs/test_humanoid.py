"""RoboDyn/HumanoidPush-v0: the actuation mask, the observation's layout, the push schedule, the
reward and termination, the sensor model, and the issue's bar for the `pd` baseline.

- The action is 21 joint targets about home (`pd_target`); the free base's six dofs are never
  in the mask, and the zero action's targets are the home keyframe.
- The observation is the sensor vector less the head's x, y, named component by component;
  at the fixed start (the home keyframe) it reads upright, the head at 1.514 m, home angles.
- Pushes: the kick each row gets, read just before the physics steps, is exactly
  push_magnitude m/s horizontal, at the steps the seeded schedule says (the same schedule
  whatever the magnitude; the rows identical bit for bit up to it); a snapshot carries the
  schedule, so a restored episode is pushed again at the same steps the same way.
- Reward = the sum of its terms, exactly; termination exactly when the head drops below
  min_head_height, with success 0 and the last push not survived.
- Sensor noise and delay change what the policy sees and nothing of the physics.
- The issue's test: the `pd` baseline (hold home: the zero action) stands 20 s in 16
  randomized episodes without pushes, the head within 6 mm of home (envs/README.md); with the
  default pushes it stands in 10 of 16 and survives 52 of 58 pushes (envs/README.md).
- The shipped PPO against `pd` on 64 pushed episodes and 16 without pushes, through
  training.evaluate as `robodyn eval` runs it.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import robogym
from robodyn.envs.baselines import make_baseline
from robodyn.envs.humanoid_v0 import JOINTS
from robogym import registration

TASK_ID = "RoboDyn/HumanoidPush-v0"
HOME_HEAD = 1.514  # m: the head site at the home keyframe (assets/humanoid.xml), to 0.1 mm
HOME_HEAD_EXACT = 1.514053  # m: the same, as MuJoCo's mj_forward puts it at the keyframe


def _vec(num_envs: int, **kwargs):
    return gym.make_vec(TASK_ID, num_envs=num_envs, autoreset_mode=AutoresetMode.DISABLED, **kwargs)


def test_action_space_has_21_joints_and_never_the_base():
    env = gym.make(TASK_ID)
    assert env.action_space.shape == (21,)
    np.testing.assert_array_equal(env.action_space.low, -1.0)
    np.testing.assert_array_equal(env.action_space.high, 1.0)
    task = env.unwrapped.task
    a = task.actuation()
    assert a.kind == "pd_target" and not a.gravity_compensation
    assert a.dofs.tolist() == list(range(6, 27))  # the base's dofs are 0-5
    assert [env.unwrapped.physics.mj_model.actuator(i).name for i in a.actuators] == list(JOINTS)
    np.testing.assert_array_equal(a.default, task.home[7:])  # the zero action holds home
    arm = np.array([("shoulder" in j) or ("elbow" in j) for j in JOINTS])
    np.testing.assert_array_equal(a.kp, np.where(arm, 200.0, 1000.0))
    np.testing.assert_array_equal(a.kd, np.where(arm, 4.0, 20.0))
    venv = _vec(2)
    policy = make_baseline("pd", venv)
    obs, _ = venv.reset(seed=0)
    np.testing.assert_array_equal(policy.act(venv, obs), np.zeros((2, 21)))


def test_observation_layout_and_names():
    env = gym.make(TASK_ID, reset_noise_scale=0.0)
    names = env.unwrapped.task.observation_names()
    want = [
        *(f"up[{i}]" for i in range(3)),
        *(f"gyro[{i}]" for i in range(3)),
        *(f"velocimeter[{i}]" for i in range(3)),
        "head_height",
        *(f"{j}_pos" for j in JOINTS),
        *(f"{j}_vel" for j in JOINTS),
    ]
    assert names == want and env.observation_space.shape == (52,)
    obs, _ = env.reset(seed=0)
    home = env.unwrapped.task.home
    np.testing.assert_allclose(obs[0:3], [0.0, 0.0, 1.0], atol=1e-12)
    np.testing.assert_allclose(obs[3:9], 0.0, atol=1e-12)
    assert obs[9] == pytest.approx(HOME_HEAD, abs=1e-4)
    np.testing.assert_allclose(obs[10:31], home[7:], atol=1e-12)
    np.testing.assert_allclose(obs[31:52], 0.0, atol=1e-12)


def _kicks(env, actions_steps: int) -> tuple[np.ndarray, np.ndarray]:
    """(steps, B, 3) the base's velocity just before each step's physics steps (after any
    kick), and (steps, B) the pushes received after each step, under the zero action."""
    task = env.unwrapped.task if hasattr(env, "unwrapped") else env.task
    apply = task._actuation.apply
    seen = []

    def recording(sim, action, nstep):
        seen.append(task.base_velocity().copy())
        apply(sim, action, nstep)

    task._actuation.apply = recording
    pushes = []
    for _ in range(actions_steps):
        env.step(np.zeros(env.action_space.shape))
        pushes.append(task.pushes.copy())
    return np.array(seen), np.array(pushes)


def test_pushes_follow_the_seeded_schedule_with_the_configured_magnitude():
    B, steps, magnitude = 4, 160, 0.1
    pushed, calm = (
        _vec(B, push_interval=1.0, push_magnitude=magnitude),
        _vec(B, push_interval=1.0, push_magnitude=0.0),
    )
    pushed.reset(seed=3)
    calm.reset(seed=3)
    task = pushed.task
    # the schedule: push k at the sum of the first k + 1 drawn intervals (0.5-1.5 s apart)
    schedule = []
    for r in range(B):
        at, k, row = 0, 0, []
        while True:
            interval = task._push_schedule.gap(r, k)
            at += interval
            if at >= steps:
                break
            assert 25 <= interval <= 75
            row.append(at)
            k += 1
        schedule.append(row)
    # the same seeds whatever the magnitude
    np.testing.assert_array_equal(calm.task._push_schedule.seed, task._push_schedule.seed)
    v_pushed, n_pushed = _kicks(pushed, steps)
    v_calm, n_calm = _kicks(calm, steps)
    assert not n_calm.any()
    for r in range(B):
        first = schedule[r][0]
        # identical bit for bit up to the first push; then exactly the kick, horizontal
        np.testing.assert_array_equal(v_pushed[:first, r], v_calm[:first, r])
        kick = v_pushed[first, r] - v_calm[first, r]
        assert kick[2] == 0.0
        assert np.linalg.norm(kick) == pytest.approx(magnitude, rel=1e-12)
        # the count steps up at the scheduled steps and nowhere else
        received = np.flatnonzero(np.diff(np.concatenate([[0], n_pushed[:, r]])))
        assert received.tolist() == schedule[r] and len(received) >= 2
    last = task.push_velocity  # each row's last kick: horizontal, its own direction
    np.testing.assert_allclose(np.linalg.norm(last, axis=1), magnitude, rtol=1e-12)
    assert len(set(np.round(np.arctan2(last[:, 1], last[:, 0]), 9))) == B


def test_snapshot_carries_the_push_schedule():
    env = gym.make(TASK_ID, push_interval=1.0, push_magnitude=0.1).unwrapped
    env.reset(seed=11)
    zero = np.zeros(21)
    for _ in range(10):
        env.step(zero)
    snap = env.snapshot()
    assert {"push_seed", "push_next", "push_count", "push_last", "push_velocity"} <= set(snap.task_state)
    actions = np.random.default_rng(0).uniform(-0.2, 0.2, (150, 21))
    first = [env.step(a) for a in actions]
    assert first[-1][4]["pushes"] >= 2
    env.restore(snap)
    for a, (obs, r, term, trunc, info) in zip(actions, first, strict=True):
        o, s, t, u, i = env.step(a)
        np.testing.assert_array_equal(o, obs)
        assert (s, t, u, i["pushes"]) == (r, term, trunc, info["pushes"])


def test_reward_is_its_terms_and_the_episode_ends_when_the_head_drops():
    env = gym.make(TASK_ID, push_magnitude=1.5, push_interval=0.5, push_jitter=0.0)
    env.reset(seed=2)
    task = env.unwrapped.task
    for _ in range(400):
        obs, r, term, trunc, info = env.step(np.zeros(21))
        terms = [info[k] for k in ("reward_upright", "reward_height", "reward_still", "reward_control")]
        assert r == sum(terms)
        assert all(0.0 <= t <= 1.0 for t in terms[:3]) and terms[3] == 0.0
        assert term == (info["head_height"] < task.min_head_height)
        assert info["head_height"] == obs[9]
        if term:
            break
    assert term, "a 1.5 m/s push every 0.5 s should knock it over"
    assert info["success"] == 0.0 and info["pushes"] >= 1
    assert info["pushes_survived"] == info["pushes"] - 1
    assert info["reward_height"] == 0.0


def test_invalid_keywords_are_refused():
    with pytest.raises(robogym.InvalidArgumentError, match="stand_height"):
        gym.make(TASK_ID, stand_height=0.9)
    with pytest.raises(robogym.InvalidArgumentError, match="push_jitter"):
        gym.make(TASK_ID, push_jitter=1.0)
    with pytest.raises(robogym.InvalidArgumentError, match="push_magnitude"):
        gym.make(TASK_ID, push_magnitude=-0.1)


def test_sensor_noise_and_delay_change_observations_not_physics():
    clean, noisy, late = (
        _vec(2),
        _vec(2, sensor_noise=0.01),
        _vec(2, sensor_noise=0.02, sensor_noise_kind="gaussian", observation_delay=2),
    )
    actions = np.random.default_rng(1).uniform(-0.3, 0.3, (12, 2, 21))
    seen = {}
    for name, env in (("clean", clean), ("noisy", noisy), ("late", late)):
        obs, _ = env.reset(seed=5)
        out = [obs]
        for a in actions:
            out.append(env.step(a)[0])
        seen[name] = (np.array(out), env.physics.data.qpos.copy())
    clean_obs, clean_q = seen["clean"]
    for name in ("noisy", "late"):
        np.testing.assert_array_equal(seen[name][1], clean_q)  # the same physics, bit for bit
    diff = seen["noisy"][0] - clean_obs
    assert np.all(diff != 0.0) and np.abs(diff).max() <= 0.01
    # two steps late: the policy sees (noisy) observations of two control steps ago
    late_obs = seen["late"][0]
    lag = late_obs[3:] - clean_obs[1:-2]
    assert np.abs(lag).max() < 0.2 and np.std(lag) == pytest.approx(0.02, rel=0.2)
    assert np.abs(late_obs[3:] - clean_obs[3:]).max() > np.abs(lag).max()


def _run(policy_name: str, num_envs: int, **kwargs) -> dict[str, np.ndarray]:
    """One episode per row (the first of each), under the baseline: the final info of each."""
    env = gym.make_vec(TASK_ID, num_envs=num_envs, **kwargs)
    policy = make_baseline(policy_name, env)
    obs, _ = env.reset(seed=100)
    policy.reset(env, np.arange(num_envs))
    done = np.zeros(num_envs, dtype=bool)
    final = {k: np.zeros(num_envs) for k in ("success", "pushes", "pushes_survived", "head_height")}
    final["min_head"] = np.full(num_envs, np.inf)
    final["max_head"] = np.full(num_envs, -np.inf)
    final["steps"] = np.zeros(num_envs)
    while not done.all():
        obs, r, term, trunc, info = env.step(policy.act(env, obs))
        live = ~done
        for k in ("success", "pushes", "pushes_survived", "head_height"):
            final[k][live] = info[k][live]
        final["min_head"][live] = np.minimum(final["min_head"][live], info["head_height"][live])
        final["max_head"][live] = np.maximum(final["max_head"][live], info["head_height"][live])
        final["steps"][live] += 1
        done |= term | trunc
    return final


def test_pd_baseline_stands_20_s_without_pushes():
    """The issue's test: holding home stands 20 s from 16 randomized starts, no push, the head
    never more than 6 mm below its home height (envs/README.md's "within 6 mm of home"; 5.9 mm
    seen, in the first steps, as the legs take the load) and ending within 6 mm of it (1.9 mm
    seen). The randomized starts put it up to 12.7 mm above home, from which it settles."""
    no_push = registration.entry(TASK_ID).scenarios["no_push"]
    out = _run("pd", 16, **no_push)
    below = HOME_HEAD_EXACT - out["min_head"].min()
    end = np.abs(out["head_height"] - HOME_HEAD_EXACT).max()
    print(
        f"\nHumanoidPush-v0 pd, no pushes: head {out['min_head'].min():.4f}-{out['max_head'].max():.4f} m "
        f"over 16 x 20 s, at most {below * 1e3:.2f} mm below home, at the end within {end * 1e3:.2f} mm"
    )
    np.testing.assert_array_equal(out["steps"], 1000)
    np.testing.assert_array_equal(out["success"], 1.0)
    assert below < 0.006 and end < 0.006
    np.testing.assert_array_equal(out["pushes"], 0.0)


def test_pd_baseline_under_the_default_pushes():
    out = _run("pd", 16)
    stood = int(out["success"].sum())
    print(
        f"\nHumanoidPush-v0 pd, default pushes (0.3 m/s every 4 +- 2 s): stood 20 s in {stood} of 16 "
        f"episodes; pushes survived {int(out['pushes_survived'].sum())} of {int(out['pushes'].sum())}"
    )
    assert np.all(out["pushes"] >= 1)  # every episode is pushed
    # envs/README.md: it stands in 10 of 16, surviving 52 of 58 pushes
    assert stood == 10 and int(out["pushes_survived"].sum()) == 52 and int(out["pushes"].sum()) == 58
    fell = out["success"] == 0.0
    np.testing.assert_array_equal(out["pushes_survived"][~fell], out["pushes"][~fell])
    np.testing.assert_array_equal(out["pushes_survived"][fell], out["pushes"][fell] - 1)
    np.testing.assert_array_equal(out["steps"][~fell], 1000)


def test_shipped_ppo_survives_the_pushes_in_more_episodes_than_pd():
    """training/policies/humanoid_ppo.zip over the 64 randomized, pushed episodes seeded 0..63
    (`robodyn eval RoboDyn/HumanoidPush-v0 --policy pd --policy training/policies/humanoid_ppo.zip
    --episodes 64 --num-envs 64`, the same evaluate() call): pd stands to the end in 32 (50 %),
    the PPO in 61 (95 %; the same count with the code and policy of the commit that shipped
    it, so the 98 % the READMEs give was never this policy's), asserted at least 61; without
    pushes it stands in all 16 episodes seeded 0..15."""
    from robodyn.training.cli import SAVED_POLICIES
    from robodyn.training.evaluate import evaluate

    spec = str(SAVED_POLICIES / "humanoid_ppo.zip")
    stood = {}
    for policy in ("pd", spec):
        res = evaluate(TASK_ID, policy, episodes=64, num_envs=64, seed=0, record=0)
        assert len(res.episodes) == 64
        stood[policy] = int(sum(e["final"]["success"] for e in res.episodes))
    print(f"humanoid_ppo: stands in {stood[spec]} of 64 pushed episodes, pd in {stood['pd']}")
    assert stood["pd"] == 32
    assert stood[spec] >= 61
    calm = registration.entry(TASK_ID).scenarios["no_push"]
    res = evaluate(TASK_ID, spec, episodes=16, num_envs=16, seed=0, env_kwargs=calm, record=0)
    assert [e["final"]["success"] for e in res.episodes] == [1.0] * 16


def test_extreme_pushes_and_bound_actions_stay_finite_and_a_bad_row_is_named():
    """Pushes of 20 m/s every 0.2 s and actions at the bounds every step, 300 steps on 8 envs
    with autoreset: no exception, every observation finite. A row made non-finite by hand
    raises the engine's NonFiniteError naming that row, and the other rows stay finite."""
    from robodyn import engine

    env = gym.make_vec(TASK_ID, num_envs=8, push_magnitude=20.0, push_interval=0.2)
    env.reset(seed=0)
    sign = np.where(np.arange(21) % 2 == 0, 1.0, -1.0)
    ends = 0
    for t in range(300):
        obs, _, term, trunc, _ = env.step(np.tile(sign * (-1.0) ** t, (8, 1)))
        assert np.all(np.isfinite(obs)), t
        ends += int(np.sum(term | trunc))
    assert ends > 8  # the pushes knock them over again and again
    d = env.unwrapped.physics.data
    d.qvel[2, 0] = np.nan
    with pytest.raises(engine.NonFiniteError, match=r"row 2"):
        env.step(np.zeros((8, 21)))
    others = np.arange(8) != 2
    assert np.all(np.isfinite(d.qpos[others])) and np.all(np.isfinite(d.qvel[others]))


def test_rewards_do_not_depend_on_the_action_arrays_memory_layout():
    """A Fortran-ordered action batch (a transposed array; the env's clipping keeps the
    layout) gets bit for bit the rewards of the same actions in C order: the control term's
    21-number sum is added in one order for every row (robogym.rowwise)."""
    rng = np.random.default_rng(3)
    actions = rng.uniform(-1.0, 1.0, size=(20, 21, 8))  # (step, joint, env)
    results = []
    for layout in (np.ascontiguousarray, np.asfortranarray):
        env = _vec(8, push_magnitude=0.0)
        env.reset(seed=11)
        rewards = []
        for a in actions:
            batch = layout(a.T)
            assert batch.flags.f_contiguous == (layout is np.asfortranarray)
            rewards.append(env.step(batch)[1])
        results.append(np.array(rewards))
        env.close()
    assert np.array_equal(results[0], results[1])
