"""envs/baselines/sampling.py: the sampling planner scores a plan with the return the env
itself gives it, never writes the env it plans for, is deterministic given its seed, improves
on its initial plan where the optimum is known, and cannot see the pushes a task schedules.

Oracles: a copy of the env restored from the same snapshot and stepped with the same
actions (the return a candidate is scored with is the one that env earns, step for step,
terminations included); the crane's optimum at the start of its 10 m move with its control
and jerk costs set to zero: full acceleration towards the target (what is left of the reward
grows as the payload nears the target); linear interpolation's closed form.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import robogym  # noqa: F401  (registers RoboDyn/ ids)
from robodyn.envs.baselines import BASELINES, GENERIC, make_baseline
from robodyn.envs.baselines.sampling import SamplingPlanner, Spline
from robogym import registration
from robogym.errors import InvalidArgumentError
from tests.helpers import report


def vector_env(task_id: str, num_envs: int, **kwargs):
    return gym.make_vec(task_id, num_envs=num_envs, autoreset_mode=AutoresetMode.DISABLED, **kwargs)


def state_of(env) -> dict:
    """Everything of env that a step depends on, as plain arrays."""
    snap = env.snapshot()
    out = {f"physics.{k}": v for k, v in snap.physics.fields.items()}
    out.update({f"task.{k}": np.array(v) for k, v in snap.task_state.items()})
    out["elapsed"] = snap.elapsed
    out["rng"] = np.array([repr(s) for s in snap.rng_states])
    out.update({f"extra.{k}": v for k, v in snap.extra.items()})
    return out


def test_spline_reads_its_knots_and_shifts_by_one_step():
    s = Spline(horizon=7, knots=3, interpolation="linear")  # knots at steps 0, 3, 6
    knots = np.array([[0.0], [3.0], [-3.0]])
    np.testing.assert_allclose(s.controls(knots)[:, 0], [0, 1, 2, 3, 1, -1, -3])
    # one step later: the plan read at 1, 4 and 7 (past the end: the last knot held)
    np.testing.assert_allclose(s.shift(knots)[:, 0], [1.0, 1.0, -3.0])
    z = Spline(horizon=6, knots=3, interpolation="zero")  # knots at 0, 2.5, 5
    np.testing.assert_allclose(z.controls(knots)[:, 0], [0, 0, 0, 3, 3, -3])
    one = Spline(horizon=4, knots=1, interpolation="linear")
    np.testing.assert_allclose(one.controls(np.array([[2.0]]))[:, 0], [2, 2, 2, 2])


def test_a_candidates_score_is_the_return_the_env_gives_it():
    """Three quadrupeds in different states, eight candidates each: every score equals the
    planning reward summed over the steps a restored copy of that row's env takes under the
    candidate's actions, until it terminates (one row is tipped so that it falls inside the
    horizon)."""
    B, S, H = 3, 8, 6
    env = vector_env("RoboDyn/Quadruped-v0", B)
    env.reset(seed=[0, 1, 2])
    rng = np.random.default_rng(0)
    for _ in range(3):
        env.step(rng.uniform(-1, 1, (B, 12)))
    env.unwrapped.physics.named.qvel["root"][2, 3] = 60.0  # a violent roll: falls within the horizon
    env.unwrapped.physics.sim.forward([2])
    planner = SamplingPlanner(env.unwrapped, samples=S, horizon=H, knots=3, noise=0.5, seed=3)
    candidates = planner._candidates(np.zeros((B, 3, 12)), np.ones(B, dtype=bool))
    planner.rollouts.begin(env.unwrapped)
    returns = planner._returns(env.unwrapped, candidates)
    actions = np.clip(planner.spline.controls(candidates), -1, 1)  # (B, S, H, 12)

    copy = vector_env("RoboDyn/Quadruped-v0", 1)
    worst, ended = 0.0, 0
    for b in range(B):
        snap = env.unwrapped.snapshot([b])
        for s in range(S):
            copy.unwrapped.restore(snap, [0])
            total = 0.0
            for t in range(H):
                _, r, term, _, _ = copy.step(actions[b, s, t][None])
                total += copy.unwrapped.task.planning_reward(r)[0]
                if term[0]:
                    ended += 1
                    break
            worst = max(worst, abs(total - returns[b, s]))
    label = f"sampling planner: score against the env's own return ({ended} rollouts ended)"
    report(label, worst, 0.0, B * S)
    assert ended >= S, "the tipped row's candidates all terminate inside the horizon"
    assert worst == 0.0


def test_planning_leaves_the_env_bit_identical_and_is_deterministic():
    env = vector_env("RoboDyn/HumanoidPush-v0", 2)
    obs, _ = env.reset(seed=[5, 6])
    before = state_of(env.unwrapped)
    a = SamplingPlanner(env.unwrapped, samples=4, horizon=5, knots=2, noise=0.2, seed=1)
    b = SamplingPlanner(env.unwrapped, samples=4, horizon=5, knots=2, noise=0.2, seed=1)
    c = SamplingPlanner(env.unwrapped, samples=4, horizon=5, knots=2, noise=0.2, seed=2)
    acts = [p.act(env.unwrapped, obs) for p in (a, b, c)]
    after = state_of(env.unwrapped)
    assert before.keys() == after.keys()
    for k in before:
        np.testing.assert_array_equal(after[k], before[k], err_msg=k)
    np.testing.assert_array_equal(acts[0], acts[1])
    assert not np.array_equal(acts[0], acts[2]), "another seed draws other candidates"
    assert env.action_space.contains(acts[0])


def test_the_planner_finds_the_cranes_known_first_move():
    """From rest 10 m short of the target, planning 1 s ahead with the control and jerk costs
    off: the return of the plan grows over the iterations from the zero plan's, and the first
    action is full acceleration towards the target, and the plan's return is within a tenth
    of the way from that optimum's to the zero plan's."""
    fixed = registration.entry("RoboDyn/Crane-v0").scenarios["fixed"]
    env = vector_env("RoboDyn/Crane-v0", 1, control_weight=0.0, jerk_weight=0.0, **fixed)
    obs, _ = env.reset(seed=0)
    planner = SamplingPlanner(env.unwrapped, samples=16, horizon=20, knots=2, noise=0.5, iterations=8, seed=0)
    planner.rollouts.begin(env.unwrapped)
    zero, optimum = (planner._returns(env.unwrapped, np.full((1, 16, 2, 1), a))[0, 0] for a in (0.0, 1.0))
    action = planner.act(env.unwrapped, obs)
    best = planner.last_returns.max()
    print(f"[sampling] crane: zero plan {zero:.5f}, optimum {optimum:.5f}, planned {best:.5f}")
    assert zero < best <= optimum
    assert best - zero >= 0.9 * (optimum - zero)
    assert action[0, 0] > 0.9  # max_accel is 1: towards the target at +x


def test_the_planners_copies_see_no_scheduled_push():
    """A humanoid whose push is due on the next step: the env pushes it, the planning rows
    (restored from the same snapshot) do not."""
    env = vector_env("RoboDyn/HumanoidPush-v0", 1)
    env.reset(seed=0)
    task = env.unwrapped.task
    task._push_schedule.next[0] = task.elapsed[0]  # due now
    planner = SamplingPlanner(env.unwrapped, samples=2, horizon=3, knots=1, noise=0.0)
    planner.rollouts.begin(env.unwrapped)
    planner._returns(env.unwrapped, np.zeros((1, 2, 1, 21)))
    assert planner.rollouts.env.task.pushes.tolist() == [0, 0]
    env.step(np.zeros((1, 21)))
    assert task.pushes.tolist() == [1]


def test_every_task_has_the_sampling_planner_and_refuses_bad_settings():
    assert set(GENERIC) <= set(BASELINES)
    env = vector_env("RoboDyn/Rocket-v0", 2)
    obs, _ = env.reset(seed=0)
    planner = make_baseline("sampling", env.unwrapped, samples=3, horizon=4, knots=2)
    assert isinstance(planner, SamplingPlanner)
    planner.reset(env.unwrapped, np.arange(2))
    assert env.action_space.contains(planner.act(env.unwrapped, obs))
    for kwargs, message in (
        ({"samples": 1}, "samples must be an integer >= 2"),
        ({"horizon": 3, "knots": 4}, "knots=4 exceeds the horizon 3"),
        ({"update": "cem"}, "update must be one of"),
        ({"noise": -0.1}, "noise must be finite and >= 0"),
        ({"gamma": 0.0}, r"gamma must be in \(0, 1\]"),
        ({"replan_every": 30, "horizon": 20}, "replan_every=30 exceeds the horizon 20"),
    ):
        with pytest.raises(InvalidArgumentError, match=message):
            SamplingPlanner(env.unwrapped, **kwargs)
