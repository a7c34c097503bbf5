"""Bad input to a single RoboDyn env, as gym.make returns it and as a raw task env: every call
is refused with one exception type a user can catch, a message naming the argument and what
it must be, and no change to the env (tests/adversarial/refuse.py compares every array, RNG
state and scalar reachable from the env before and after, bit for bit).

Covered: actions, step/render/snapshot before reset, reset seeds and options, construction
keywords (task parameters with their ranges, unknown keywords, episode length, rendering),
snapshots that do not fit (another kind of env, task, parameter set or wrapper stack, or
tampered with), and robogym.snapshot/restore through Gymnasium's wrappers. The positive
tests at the end check that a restored episode replays bit for bit, truncation included.
"""

from __future__ import annotations

import dataclasses
import pickle
from decimal import Decimal

import gymnasium as gym
import numpy as np
import pytest

import robogym
from robodyn import engine
from robodyn.envs.crane_v0 import CraneEnv, CraneTask
from robogym import (
    ActionTypeError,
    ArgumentTypeError,
    InvalidActionError,
    InvalidArgumentError,
    ResetNeededError,
    SnapshotError,
)
from tests.adversarial.refuse import assert_refused
from tests.robogym import floating_arm_task

ID = "RoboDyn/Crane-v0"


@pytest.fixture(scope="module")
def env():
    """The crane as gym.make returns it (the env itself), a few steps into an episode."""
    e = gym.make(ID)
    e.reset(seed=3)
    for a in (0.5, -0.2, 1.0):
        e.step(np.array([a]))
    return e


@pytest.fixture(scope="module")
def fresh():
    """A crane env that was never reset."""
    return gym.make(ID)


@pytest.fixture(scope="module")
def timed():
    """The crane inside Gymnasium's TimeLimit (gym.make's max_episode_steps) inside
    OrderEnforcing, a few steps in: a stack robogym.snapshot covers."""
    e = gym.wrappers.OrderEnforcing(gym.make(ID, max_episode_steps=20))
    e.reset(seed=4)
    e.step(np.array([0.3]))
    return e


# --- actions -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("action", "error", "match"),
    [
        (
            np.array([np.nan]),
            InvalidActionError,
            r"action contains NaN or inf \(component \[0\]\); nothing was stepped",
        ),
        (np.array([np.inf]), InvalidActionError, r"action contains NaN or inf"),
        ([-np.inf], InvalidActionError, r"action contains NaN or inf"),
        (np.zeros(2), InvalidActionError, r"action must have shape \(1,\), got \(2,\)"),
        (np.zeros((1, 1)), InvalidActionError, r"action must have shape \(1,\), got \(1, 1\)"),
        (0.5, InvalidActionError, r"action must have shape \(1,\), got \(\)"),
        ([], InvalidActionError, r"action must have shape \(1,\), got \(0,\)"),
        (["0.5"], ActionTypeError, r"action must hold real numbers .* got dtype <U3"),
        ("fast", ActionTypeError, r"action must hold real numbers .* got dtype <U4"),
        ([1 + 2j], ActionTypeError, r"action must hold real numbers .* got dtype complex128"),
        (np.array([0.5], dtype=np.complex64), ActionTypeError, r"got dtype complex64"),
        ([True], ActionTypeError, r"action must hold real numbers .* got dtype bool"),
        (np.array([False]), ActionTypeError, r"got dtype bool"),
        (None, ActionTypeError, r"got dtype object"),
        ([None], ActionTypeError, r"got dtype object"),
        ([Decimal("0.5")], ActionTypeError, r"got dtype object"),
        ({"a": 0.5}, ActionTypeError, r"got dtype object"),
        ([[0.1], [0.2, 0.3]], InvalidActionError, r"action must be an array of numbers with shape \(1,\)"),
        (np.datetime64("2020-01-01"), ActionTypeError, r"got dtype datetime64"),
    ],
)
def test_step_refuses_bad_actions(env, action, error, match):
    assert_refused(lambda: env.step(action), error, match, env)


def test_non_numeric_actions_are_both_invalid_actions_and_type_errors(env):
    info = assert_refused(lambda: env.step(["0.5"]), TypeError, r"real numbers", env)
    assert isinstance(info.value, InvalidActionError)
    assert isinstance(info.value, robogym.RoboDynError)


# --- order of calls ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda e: e.step(np.array([0.5])), r"call reset\(\) before step\(\)"),
        (lambda e: e.step(np.array([np.nan])), r"call reset\(\) before step\(\)"),
        (lambda e: e.snapshot(), r"call reset\(\) before snapshot\(\)"),
        (lambda e: e.render(), r"call reset\(\) before render\(\)"),
        (lambda e: robogym.snapshot(e), r"call reset\(\) before snapshot\(\)"),
    ],
)
def test_calls_before_reset_are_refused(fresh, call, match):
    info = assert_refused(lambda: call(fresh), ResetNeededError, match, fresh)
    assert isinstance(info.value, gym.error.ResetNeeded)  # what Gymnasium's OrderEnforcing raises


def test_a_raw_task_env_refuses_to_step_before_reset():
    raw = CraneEnv()
    assert_refused(lambda: raw.step([0.1]), ResetNeededError, r"call reset\(\) before step\(\)", raw)


# --- reset ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"seed": -1}, InvalidArgumentError, r"seed must be an int >= 0 or None, got -1"),
        ({"seed": -(2**70)}, InvalidArgumentError, r"seed must be an int >= 0 or None"),
        ({"seed": 1.5}, ArgumentTypeError, r"seed must be an int >= 0 or None, got float 1.5"),
        ({"seed": np.float64(2.0)}, ArgumentTypeError, r"seed must be an int >= 0 or None, got float64"),
        ({"seed": "3"}, ArgumentTypeError, r"seed must be an int >= 0 or None, got str '3'"),
        ({"seed": True}, ArgumentTypeError, r"seed must be an int >= 0 or None, got bool True"),
        ({"seed": [1, 2]}, ArgumentTypeError, r"seed must be an int >= 0 or None, got list"),
        ({"options": "reset_mask"}, ArgumentTypeError, r"options must be a dict or None, got str"),
        ({"options": [("a", 1)]}, ArgumentTypeError, r"options must be a dict or None, got list"),
        (
            {"options": {"reset_mask": np.ones(1, bool)}},
            InvalidArgumentError,
            r"unknown reset option 'reset_mask'",
        ),
        (
            {"options": {"noise": 0.0}},
            InvalidArgumentError,
            r"unknown reset option 'noise'.*takes no reset options",
        ),
        ({"seed": -1, "options": {"noise": 0}}, InvalidArgumentError, r"seed must be an int >= 0"),
    ],
)
def test_reset_refuses_bad_seeds_and_options(env, kwargs, error, match):
    assert_refused(lambda: env.reset(**kwargs), error, match, env)


# --- construction --------------------------------------------------------------------------------
NAN, INF = float("nan"), float("inf")


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (
            {"position_weight": NAN},
            InvalidArgumentError,
            r"position_weight must be finite and in \[0, inf\), got nan",
        ),
        (
            {"arrive_weight": INF},
            InvalidArgumentError,
            r"arrive_weight must be finite and in \[0, inf\), got inf",
        ),
        (
            {"control_weight": -0.1},
            InvalidArgumentError,
            r"control_weight must be finite and in \[0, inf\), got -0.1",
        ),
        ({"jerk_weight": -INF}, InvalidArgumentError, r"jerk_weight must be finite"),
        (
            {"rail_penalty": -50},
            InvalidArgumentError,
            r"rail_penalty must be finite and in \[0, inf\), got -50",
        ),
        ({"max_accel": 0.0}, InvalidArgumentError, r"max_accel must be finite and in \(0, inf\), got 0.0"),
        ({"max_accel": NAN}, InvalidArgumentError, r"max_accel must be finite and in \(0, inf\)"),
        (
            {"position_scale": 0},
            InvalidArgumentError,
            r"position_scale must be finite and in \(0, inf\), got 0",
        ),
        ({"swing_scale": -1e-3}, InvalidArgumentError, r"swing_scale must be finite and in \(0, inf\)"),
        ({"rail_limit": INF}, InvalidArgumentError, r"rail_limit must be finite and in \(0, inf\), got inf"),
        (
            {"reset_noise_scale": -1.0},
            InvalidArgumentError,
            r"reset_noise_scale must be finite and in \[0, inf\)",
        ),
        ({"move_distance": -2.0}, InvalidArgumentError, r"move_distance must be finite and in \(0, inf\)"),
        (
            {"move_distance": 20.0},
            InvalidArgumentError,
            r"move_distance must lie in \(0, rail_limit=15\), got 20.0",
        ),
        (
            {"move_distance": 5.0, "rail_limit": 5.0},
            InvalidArgumentError,
            r"move_distance must lie in \(0, rail_limit=5\)",
        ),
        (
            {"position_weight": "1"},
            ArgumentTypeError,
            r"position_weight must be a real number in \[0, inf\), got str '1'",
        ),
        (
            {"max_accel": True},
            ArgumentTypeError,
            r"max_accel must be a real number in \(0, inf\), got bool True",
        ),
        ({"speed_scale": None}, ArgumentTypeError, r"speed_scale must be a real number.*got NoneType"),
        ({"arrive_scale": 1 + 0j}, ArgumentTypeError, r"arrive_scale must be a real number.*got complex"),
        ({"control_weight": [0.1]}, ArgumentTypeError, r"control_weight must be a real number.*got list"),
        (
            {"position_wieght": 1.0},
            ArgumentTypeError,
            r"CraneEnv got an unknown keyword 'position_wieght'; the valid keywords are: move_distance, "
            r".*reset_noise_scale, max_episode_steps, render_mode, width, height",
        ),
        ({"num_envs": 4}, ArgumentTypeError, r"CraneEnv got an unknown keyword 'num_envs'"),
        ({"width": 0}, InvalidArgumentError, r"width must be an int >= 1, got 0"),
        ({"height": -480}, InvalidArgumentError, r"height must be an int >= 1, got -480"),
        ({"width": 320.5}, ArgumentTypeError, r"width must be an int >= 1, got float 320.5"),
        ({"height": "240"}, ArgumentTypeError, r"height must be an int >= 1, got str '240'"),
        (
            {"render_mode": "rgb_array", "width": 4000},
            InvalidArgumentError,
            r"frame 4000x480 exceeds the model's offscreen buffer",
        ),
    ],
)
def test_construction_refuses_bad_keywords(kwargs, error, match):
    # gym.make builds nothing that outlives the refusal; the registry's spec is left alone
    spec = gym.spec(ID)
    assert_refused(lambda: gym.make(ID, **kwargs), error, match, spec)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        # the env's own episode length: gym.make keeps its max_episode_steps argument for
        # Gymnasium's TimeLimit, so these reach the env through its constructor
        ({"max_episode_steps": 0}, InvalidArgumentError, r"max_episode_steps must be an int >= 1, got 0"),
        ({"max_episode_steps": -1}, InvalidArgumentError, r"max_episode_steps must be an int >= 1, got -1"),
        (
            {"max_episode_steps": 10.0},
            ArgumentTypeError,
            r"max_episode_steps must be an int >= 1, got float 10.0",
        ),
        (
            {"max_episode_steps": True},
            ArgumentTypeError,
            r"max_episode_steps must be an int >= 1, got bool True",
        ),
        (
            {"max_episode_steps": "400"},
            ArgumentTypeError,
            r"max_episode_steps must be an int >= 1, got str '400'",
        ),
        # gym.make itself turns "human" into HumanRendering over rgb_array (see below for non-str)
        (
            {"render_mode": "human"},
            InvalidArgumentError,
            r"render_mode must be one of \['rgb_array', 'depth_array', 'rgbd_tuple'\] or None, got 'human'",
        ),
        (
            {"render_mode": 1},
            ArgumentTypeError,
            r"render_mode must be one of \['rgb_array', 'depth_array', 'rgbd_tuple'\] or None, got 1",
        ),
        (
            {"move_distance": NAN},
            InvalidArgumentError,
            r"move_distance must be finite and in \(0, inf\), got nan",
        ),
    ],
)
def test_the_env_constructor_refuses_bad_keywords(kwargs, error, match):
    assert_refused(lambda: CraneEnv(**kwargs), error, match, gym.spec("RoboDyn/Crane-v0"), kwargs)


@pytest.mark.parametrize("mode", [1, 2.5, True, ["rgb_array"]])
def test_gym_make_refuses_a_render_mode_that_is_not_a_string(mode):
    # gymnasium.make calls str methods on an unknown render_mode; ours must reach the env
    match = r"render_mode must be one of \['rgb_array', 'depth_array', 'rgbd_tuple'\] or None, got "
    spec = gym.spec("RoboDyn/Crane-v0")
    assert_refused(
        lambda: gym.make("RoboDyn/Crane-v0", render_mode=mode), ArgumentTypeError, match, spec, mode
    )


def test_gym_make_still_adapts_string_render_modes():
    env = gym.make("RoboDyn/Crane-v0", render_mode="rgb_array_list", width=32, height=24)
    try:
        assert type(env).__name__ == "RenderCollection"
        env.reset(seed=0)
        env.step(env.action_space.sample())
        frames = env.render()
        assert len(frames) == 2 and frames[0].shape == (24, 32, 3)
    finally:
        env.close()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"position_weight": NAN}, r"position_weight must be finite"),
        ({"max_accel": -1.0}, r"max_accel must be finite and in \(0, inf\)"),
        ({"reset_noise_scale": INF}, r"reset_noise_scale must be finite"),
    ],
)
def test_the_task_itself_checks_its_parameters(kwargs, match):
    assert_refused(lambda: CraneTask(**kwargs), InvalidArgumentError, match, kwargs)


def test_a_task_without_declared_bounds_still_refuses_non_finite_numbers():
    spec = gym.spec(floating_arm_task.TASK_ID)
    assert_refused(
        lambda: gym.make(floating_arm_task.TASK_ID, reach_scale=NAN),
        InvalidArgumentError,
        r"reach_scale must be finite and in \(-inf, inf\), got nan",
        spec,
    )


# --- the legged tasks' noise, delay and randomization keywords ---------------------------------
HUMANOID, QUADRUPED = "RoboDyn/HumanoidPush-v0", "RoboDyn/Quadruped-v0"


@pytest.mark.parametrize(
    ("dtype", "error", "match"),
    [
        ("float16", InvalidArgumentError, r"dtype must be one of \('float64', 'float32'\), got 'float16'"),
        (np.int32, InvalidArgumentError, r"dtype must be one of .* got <class 'numpy.int32'>"),
        ("double-ish", ArgumentTypeError, r"dtype must be one of .* got 'double-ish'"),
        (3.5, ArgumentTypeError, r"dtype must be one of .* got 3.5"),
    ],
)
def test_a_space_dtype_other_than_float64_or_float32_is_refused(dtype, error, match):
    spec = gym.spec(ID)
    assert_refused(lambda: gym.make(ID, dtype=dtype), error, match, spec)
    assert_refused(lambda: gym.make_vec(ID, num_envs=2, dtype=dtype), error, match, spec)


@pytest.mark.parametrize(
    ("env_id", "kwargs", "error", "match"),
    [
        # the friction draw U(0.4, 1) about the floor's 1.0 turns negative beyond scale 5/3
        (HUMANOID, {"randomize": True, "randomize_scale": 2.0}, InvalidArgumentError,
         r"randomize_scale must be finite and in \[0, 1.6\], got 2.0"),
        (QUADRUPED, {"randomize": True, "randomize_scale": 2.5}, InvalidArgumentError,
         r"randomize_scale must be finite and in \[0, 2\], got 2.5"),
        (QUADRUPED, {"observation_delay": 10**9}, InvalidArgumentError,
         r"observation_delay must be an int in \[0, 1000\], got 1000000000"),
        (QUADRUPED, {"observation_delay": 2**62}, InvalidArgumentError, r"observation_delay .* \[0, 1000\]"),
        (HUMANOID, {"observation_delay": 10**7}, InvalidArgumentError, r"observation_delay .* \[0, 1000\]"),
        (HUMANOID, {"sensor_noise": 1e308, "sensor_noise_kind": "gaussian"}, InvalidArgumentError,
         r"sensor_noise must be finite and in \[0, 1e\+10\], got 1e\+308"),
        (QUADRUPED, {"sensor_noise": 1e11}, InvalidArgumentError, r"sensor_noise must be .* \[0, 1e\+10\]"),
        (QUADRUPED, {"sensor_noise_kind": np.array(["uniform", "gaussian"])}, ArgumentTypeError,
         r"sensor_noise_kind must be one of \('uniform', 'gaussian'\) \(a str\)"),
        (HUMANOID, {"sensor_noise_kind": "normal"}, InvalidArgumentError, r"sensor_noise_kind must be one"),
        (HUMANOID, {"sensor_noise": [0.01] * 51}, ArgumentTypeError,
         r"sensor noise scale must be a number or 52 numbers .* got 51 numbers"),
        (HUMANOID, {"sensor_noise": [0.01] * 51 + [-1.0]}, InvalidArgumentError,
         r"sensor_noise\[51\] must be finite and in \[0, 1e\+10\], got -1.0"),
        (HUMANOID, {"sensor_noise": [0.01] * 51 + [np.nan]}, InvalidArgumentError, r"sensor_noise\[51\]"),
        (HUMANOID, {"sensor_noise": [[0.01] * 52]}, ArgumentTypeError, r"sensor_noise\[0\] must be a real"),
    ],
)  # fmt: skip
def test_legged_keywords_are_refused(env_id, kwargs, error, match):
    assert_refused(lambda: gym.make(env_id, **kwargs), error, match, gym.spec(env_id), kwargs)


def test_a_reset_that_fails_leaves_the_env_as_it_was(monkeypatch):
    """A randomization the physics refuses after it changed the robot (simulated: the draw is
    applied, then refused) must leave the env exactly as before reset() was called."""
    env = gym.make(HUMANOID, randomize=True)
    env.reset(seed=8)
    for _ in range(3):
        env.step(np.zeros(env.action_space.shape))
    twin = pickle.loads(pickle.dumps(env))
    task = env.unwrapped.task
    apply = task.randomizer.apply

    def apply_then_refuse(sim, rows, rngs):
        apply(sim, rows, rngs)
        raise engine.ParamError("refused after the robot changed (simulated)")

    monkeypatch.setattr(task.randomizer, "apply", apply_then_refuse)
    assert_refused(lambda: env.reset(seed=9), engine.ParamError, r"simulated", env.unwrapped)
    a = np.full(env.action_space.shape, 0.1)
    for _ in range(3):
        np.testing.assert_array_equal(env.step(a)[0], twin.step(a)[0])


# --- restore -------------------------------------------------------------------------------------
def _replace(snap, **changes):
    return dataclasses.replace(snap, **changes)


def _physics(snap, **fields):
    p = snap.physics
    return _replace(snap, physics=p._replace(fields={**p.fields, **fields}))


@pytest.fixture(scope="module")
def others():
    """Snapshots this env must refuse: another parameter set, another task, a vector env."""
    a = gym.make(ID, move_distance=5.0)
    a.reset(seed=0)
    b = gym.make(floating_arm_task.TASK_ID)
    b.reset(seed=0)
    v = gym.make_vec(ID, num_envs=1)
    v.reset(seed=0)
    return {"params": a.snapshot(), "task": b.snapshot(), "vector": v.snapshot()}


@pytest.mark.parametrize(
    ("make", "error", "match"),
    [
        (
            lambda e, o: None,
            ArgumentTypeError,
            r"restore needs a snapshot taken by a RoboDyn env's snapshot\(\), got NoneType",
        ),
        (lambda e, o: e.physics.sim.snapshot(), ArgumentTypeError, r"restore needs a snapshot.*got Snapshot"),
        (lambda e, o: dataclasses.asdict(e.snapshot()), ArgumentTypeError, r"got dict"),
        (
            lambda e, o: o["vector"],
            SnapshotError,
            r"taken from a vector env \(RoboDynVectorEnv\); this is a single env",
        ),
        (
            lambda e, o: o["params"],
            SnapshotError,
            r"other task parameters: move_distance=5.0 \(here 10.0\).*refusing to restore",
        ),
        (
            lambda e, o: o["task"],
            SnapshotError,
            r"taken from FloatingArmTask on tests/floating_arm.xml; this env runs CraneTask on crane.xml",
        ),
        (lambda e, o: _replace(e.snapshot(), kind="robot"), SnapshotError, r"taken from 'robot'"),
        (
            lambda e, o: _replace(e.snapshot(), signature=("x",)),
            SnapshotError,
            r"signature \('x',\) is not a RoboDyn env's",
        ),
        (
            lambda e, o: _replace(e.snapshot(), signature=(*e.snapshot().signature[:3], "0" * 32)),
            SnapshotError,
            r"taken from a different model \(its digest differs",
        ),
        (
            lambda e, o: _replace(e.snapshot(), physics=None),
            SnapshotError,
            r"physics must be an engine Snapshot, got NoneType",
        ),
        (
            lambda e, o: _replace(e.snapshot(), elapsed=np.array([-1])),
            SnapshotError,
            r"step counters must be >= 0, got \[-1\]",
        ),
        (
            lambda e, o: _replace(e.snapshot(), elapsed=np.array([3.0])),
            SnapshotError,
            r"step counters must be int64 of shape \(1,\)",
        ),
        (
            lambda e, o: _replace(e.snapshot(), elapsed=np.array([3, 3])),
            SnapshotError,
            r"step counters must be int64 of shape \(1,\)",
        ),
        (
            lambda e, o: _replace(e.snapshot(), rng_states=()),
            SnapshotError,
            r"must hold 1 random generator states",
        ),
        (
            lambda e, o: _replace(e.snapshot(), rng_states=({"state": 1},)),
            SnapshotError,
            r"row 0: its random generator state is not a PCG64 state",
        ),
        (
            lambda e, o: _replace(e.snapshot(), rng_states=("seed",)),
            SnapshotError,
            r"row 0: its random generator state",
        ),
        (
            lambda e, o: _replace(e.snapshot(), task_state={}),
            SnapshotError,
            r"task state must hold exactly \['action', 'prev_action'\], got \[\]",
        ),
        (
            lambda e, o: _replace(
                e.snapshot(), task_state={"action": np.zeros(1), "prev_action": np.zeros(2)}
            ),
            SnapshotError,
            r"task state 'prev_action' must be float64 of shape \(1,\), got float64 of shape \(2,\)",
        ),
        (
            lambda e, o: _replace(
                e.snapshot(), task_state={"action": np.full(1, np.nan), "prev_action": np.zeros(1)}
            ),
            SnapshotError,
            r"task state 'action' holds NaN or inf",
        ),
        (
            lambda e, o: _replace(e.snapshot(), extra={}),
            SnapshotError,
            r"extra state must hold exactly \['obs'\]",
        ),
        (
            lambda e, o: _replace(e.snapshot(), extra={"obs": np.zeros((1, 3))}),
            SnapshotError,
            r"extra state 'obs' must be float64 of shape \(1, 7\)",
        ),
        (
            lambda e, o: _replace(e.snapshot(), extra={"obs": [0.0] * 7}),
            SnapshotError,
            r"extra state 'obs' must be float64.*got list",
        ),
        (
            lambda e, o: _physics(e.snapshot(), qvel=np.full((1, 2), np.nan)),
            SnapshotError,
            r"physics refused: snapshot field qvel holds NaN",
        ),
        (
            lambda e, o: _physics(e.snapshot(), qpos=np.zeros((1, 3))),
            SnapshotError,
            r"physics refused: snapshot field qpos must be float64 of shape \(1, 2\)",
        ),
        (
            lambda e, o: _replace(e.snapshot(), physics=e.snapshot().physics._replace(model_digest="0")),
            SnapshotError,
            r"physics refused:.*different model",
        ),
        (
            lambda e, o: robogym.snapshot(gym.wrappers.TimeLimit(e, 30)),
            SnapshotError,
            r"holds the state of the wrappers TimeLimit too: restore it with robogym.restore",
        ),
    ],
)
def test_restore_refuses_snapshots_that_do_not_fit(env, others, make, error, match):
    snap = make(env, others)
    assert_refused(lambda: env.restore(snap), error, match, env)


def test_a_snapshot_of_a_crane_with_another_cable_is_refused(env):
    # the engine's model digest covers geometry the task parameters do not name
    snap = env.snapshot()
    other = _replace(snap, signature=(*snap.signature[:3], "f" * 32))
    assert_refused(lambda: env.restore(other), SnapshotError, r"different model", env)


# --- snapshots through wrappers --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("make", "error", "match"),
    [
        (lambda e: None, ArgumentTypeError, r"restore needs a snapshot.*got NoneType"),
        (
            lambda e: e.unwrapped.snapshot(),
            SnapshotError,
            r"taken through the wrappers \[\]; this env has "
            r"\[OrderEnforcing\(\), TimeLimit\(max_episode_steps=20\)\]",
        ),
        (
            lambda e: robogym.snapshot(_reset(gym.make(ID, max_episode_steps=20))),
            SnapshotError,
            r"taken through the wrappers \[TimeLimit\(max_episode_steps=20\)\]; "
            r"this env has \[OrderEnforcing\(\), TimeLimit",
        ),
        (
            lambda e: robogym.snapshot(
                gym.wrappers.OrderEnforcing(_reset(gym.make(ID, max_episode_steps=21)))
            ),
            SnapshotError,
            r"\[OrderEnforcing\(\), TimeLimit\(max_episode_steps=21\)\]; this env has \[OrderEnforcing\(\), "
            r"TimeLimit\(max_episode_steps=20\)\]",
        ),
        (
            lambda e: _wrappers(e, "TimeLimit", _elapsed_steps=-1),
            SnapshotError,
            r"TimeLimit step count must be an int >= 0 or None, got -1",
        ),
        (
            lambda e: _wrappers(e, "TimeLimit", _elapsed_steps=2.0),
            SnapshotError,
            r"TimeLimit step count must be an int >= 0 or None, got 2.0",
        ),
        (
            lambda e: _wrappers(e, "TimeLimit", _elapsed_steps="3"),
            SnapshotError,
            r"TimeLimit step count must be an int >= 0 or None, got '3'",
        ),
        (
            lambda e: _wrappers(e, "OrderEnforcing", _has_reset="yes"),
            SnapshotError,
            r"OrderEnforcing reset flag must be a bool, got 'yes'",
        ),
        (
            lambda e: _replace(robogym.snapshot(e), wrappers=[]),
            SnapshotError,
            r"wrapper state must be a tuple of \(name, settings, state\)",
        ),
        (
            lambda e: _replace(robogym.snapshot(e), wrappers=(("TimeLimit",),)),
            SnapshotError,
            r"wrapper state must be a tuple",
        ),
        (
            lambda e: _replace(robogym.snapshot(e), elapsed=np.array([-5])),
            SnapshotError,
            r"step counters must be >= 0",
        ),
    ],
)
def test_robogym_restore_refuses_snapshots_of_other_wrapper_stacks(timed, make, error, match):
    snap = make(timed)
    assert_refused(lambda: robogym.restore(timed, snap), error, match, timed)


def _reset(e):
    e.reset(seed=0)
    return e


def _wrappers(e, name, **state):
    """robogym.snapshot(e) with the saved state of wrapper `name` replaced by `state`."""
    snap = robogym.snapshot(e)
    saved = tuple((n, s, {**st, **state} if n == name else st) for n, s, st in snap.wrappers)
    return _replace(snap, wrappers=saved)


@pytest.mark.parametrize(
    ("wrap", "error", "match"),
    [
        (
            gym.wrappers.RecordEpisodeStatistics,
            SnapshotError,
            r"cannot snapshot through the wrapper RecordEpisodeStatistics: its state is unknown",
        ),
        (
            lambda e: gym.wrappers.TransformReward(e, lambda r: 2 * r),
            SnapshotError,
            r"wrapper TransformReward",
        ),
        (lambda e: gym.wrappers.FrameStackObservation(e, 2), SnapshotError, r"wrapper FrameStackObservation"),
    ],
)
def test_snapshot_and_restore_refuse_wrappers_whose_state_they_cannot_hold(env, wrap, error, match):
    wrapped = wrap(env)
    snap = env.snapshot()
    assert_refused(lambda: robogym.snapshot(wrapped), error, match, wrapped)
    assert_refused(lambda: robogym.restore(wrapped, snap), error, match, wrapped)


@pytest.mark.parametrize("unwrap", [False, True])
def test_robogym_snapshot_refuses_what_is_no_robodyn_env(unwrap):
    cart = gym.make("CartPole-v1")
    cart.reset(seed=0)
    target = cart.unwrapped if unwrap else cart
    assert_refused(
        lambda: robogym.snapshot(target), ArgumentTypeError, r"needs a RoboDyn env.*got CartPoleEnv", cart
    )


# --- what must work: a restored episode replays, truncation included ------------------------------
def _rollout(env, actions):
    out = []
    for a in actions:
        obs, r, term, trunc, _ = env.step(a)
        out.append((np.array(obs), r, term, trunc))
    return out


def _assert_same(first, second):
    assert len(first) == len(second)
    for (x, r, *ends), (y, s, *ends2) in zip(first, second, strict=True):
        assert x.tobytes() == y.tobytes()
        assert r == s and ends == ends2


ACTIONS = np.random.default_rng(0).uniform(-1, 1, (12, 1))


def test_gym_make_returns_the_env_with_snapshot_and_its_own_episode_length():
    env = gym.make(ID, max_episode_steps=None)  # gym.make's own argument: None keeps the registration
    assert isinstance(env, CraneEnv) and env.max_episode_steps == 400
    env = gym.make(ID, **{"reset_noise_scale": 0.5})
    assert isinstance(env, CraneEnv) and callable(env.snapshot) and callable(env.restore)


def test_restore_replays_truncation_at_the_right_step():
    # the env's own limit (the spec's kwargs), as gym.make("RoboDyn/Crane-v0") gives it
    env = CraneEnv(max_episode_steps=10)
    env.reset(seed=1)
    _rollout(env, ACTIONS[:4])
    snap = env.snapshot()
    first = _rollout(env, ACTIONS[4:12])
    assert [t for *_, t in first] == [False] * 5 + [True] * 3
    env.restore(snap)
    _assert_same(first, _rollout(env, ACTIONS[4:12]))
    other = CraneEnv(max_episode_steps=10)  # a fresh env, never reset, takes it too
    other.restore(snap)
    _assert_same(first, _rollout(other, ACTIONS[4:12]))


def test_robogym_snapshot_covers_gymnasium_wrappers():
    def make():
        return gym.wrappers.OrderEnforcing(gym.make(ID, max_episode_steps=8, disable_env_checker=False))

    env = make()
    env.reset(seed=2)
    _rollout(env, ACTIONS[:3])
    snap = robogym.snapshot(env)
    first = _rollout(env, ACTIONS[3:10])
    assert [t for *_, t in first] == [False] * 4 + [True] * 3  # TimeLimit's truncation after 8 steps
    robogym.restore(env, snap)
    _assert_same(first, _rollout(env, ACTIONS[3:10]))
    fresh = make()  # never reset: OrderEnforcing's flag and the checker come back with the snapshot
    robogym.restore(fresh, snap)
    _assert_same(first, _rollout(fresh, ACTIONS[3:10]))


def test_the_random_generator_comes_back_with_the_snapshot():
    env = gym.make(ID)
    env.reset(seed=7)
    snap = env.snapshot()
    draws = env.np_random.random(3)
    env.restore(snap)
    assert env.np_random.random(3).tobytes() == draws.tobytes()


def test_a_numpy_integer_seed_and_a_never_reset_env_pickle_work():
    env = gym.make(ID)
    clone = pickle.loads(pickle.dumps(env))  # never reset: no snapshot to carry
    assert_refused(
        lambda: clone.step(np.array([0.1])), ResetNeededError, r"call reset\(\) before step", clone
    )
    a, _ = env.reset(seed=np.int64(12))
    b, _ = clone.reset(seed=12)
    assert a.tobytes() == b.tobytes()
