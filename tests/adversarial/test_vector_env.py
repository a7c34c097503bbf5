"""Bad input to the native vector env (gym.make_vec's RoboDynVectorEnv): every call is refused
with one exception type a user can catch, a message naming the argument, the environment
index and what it must be, and no change to any environment (tests/adversarial/refuse.py
compares every array, RNG state and scalar reachable from the env, bit for bit).

Covered: batched actions, reset masks, seeds (an int, a list with one per environment),
reset options, snapshot rows, restore (a single env's snapshot, another task or parameter
set, tampered snapshots, bad target rows), the order of calls, and construction keywords
(counts, episode length, autoreset mode, rendering, threads, task parameters). The
positive tests at the end check that a restored batch replays bit for bit, truncation and
autoreset included.
"""

from __future__ import annotations

import dataclasses
import pickle

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from robodyn.envs.crane_v0 import CraneVectorEnv
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
N = 4


@pytest.fixture(scope="module")
def env():
    """Four cranes a few steps into their episodes."""
    e = gym.make_vec(ID, num_envs=N, max_episode_steps=30)
    e.reset(seed=10)
    for a in (0.5, -0.2, 1.0):
        e.step(np.full((N, 1), a))
    return e


@pytest.fixture(scope="module")
def fresh():
    """Four cranes never reset."""
    return gym.make_vec(ID, num_envs=N)


# --- actions -------------------------------------------------------------------------------------
def _with(value, row=2):
    a = np.zeros((N, 1))
    a[row, 0] = value
    return a


@pytest.mark.parametrize(
    ("actions", "error", "match"),
    [
        (_with(np.nan), InvalidActionError, r"action contains NaN or inf \(environment 2, component \[0\]\)"),
        (_with(np.inf, row=0), InvalidActionError, r"NaN or inf \(environment 0, component \[0\]\)"),
        (_with(-np.inf, row=3), InvalidActionError, r"NaN or inf \(environment 3"),
        (np.zeros(N), InvalidActionError, r"action must have shape \(4, 1\), got \(4,\)"),
        (np.zeros((N + 1, 1)), InvalidActionError, r"action must have shape \(4, 1\), got \(5, 1\)"),
        (np.zeros((N, 2)), InvalidActionError, r"action must have shape \(4, 1\), got \(4, 2\)"),
        (np.zeros((1, 1)), InvalidActionError, r"action must have shape \(4, 1\), got \(1, 1\)"),
        (np.zeros((N, 1, 1)), InvalidActionError, r"got \(4, 1, 1\)"),
        (0.5, InvalidActionError, r"action must have shape \(4, 1\), got \(\)"),
        ([["0.5"]] * N, ActionTypeError, r"action must hold real numbers .* got dtype <U3"),
        (np.full((N, 1), 1j), ActionTypeError, r"got dtype complex128"),
        (np.ones((N, 1), dtype=bool), ActionTypeError, r"got dtype bool"),
        ([[None]] * N, ActionTypeError, r"got dtype object"),
        (None, ActionTypeError, r"got dtype object"),
        ([[0.1], [0.2], [0.3, 0.4], [0.5]], InvalidActionError, r"action must be an array of numbers"),
    ],
)
def test_step_refuses_bad_actions(env, actions, error, match):
    assert_refused(lambda: env.step(actions), error, match, env)


# --- reset masks and options ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("mask", "error", "match"),
    [
        (
            [True, False, True, False],
            ArgumentTypeError,
            r"options\['reset_mask'\] must be a bool numpy array",
        ),
        (
            np.array([1, 0, 1, 0]),
            ArgumentTypeError,
            r"reset_mask'\] must be a bool numpy array of shape \(4,\)",
        ),
        (np.array([1.0, 0, 0, 0]), ArgumentTypeError, r"reset_mask'\] must be a bool numpy array"),
        ("all", ArgumentTypeError, r"reset_mask'\] must be a bool numpy array"),
        (np.True_, ArgumentTypeError, r"reset_mask'\] must be a bool numpy array"),
        (
            np.ones(N - 1, bool),
            InvalidArgumentError,
            r"reset_mask'\] must be a bool numpy array of shape \(4,\), got shape \(3,\)",
        ),
        (np.ones((N, 1), bool), InvalidArgumentError, r"got shape \(4, 1\)"),
        (np.ones(N + 1, bool), InvalidArgumentError, r"got shape \(5,\)"),
        (np.zeros(N, bool), InvalidArgumentError, r"reset_mask'\] must select at least one environment"),
    ],
)
def test_reset_refuses_bad_masks(env, mask, error, match):
    assert_refused(lambda: env.reset(options={"reset_mask": mask}), error, match, env)


@pytest.mark.parametrize(
    ("options", "error", "match"),
    [
        ("reset_mask", ArgumentTypeError, r"options must be a dict or None, got str"),
        ([("reset_mask", np.ones(N, bool))], ArgumentTypeError, r"options must be a dict or None, got list"),
        (
            {"resetmask": np.ones(N, bool)},
            InvalidArgumentError,
            r"unknown reset option 'resetmask'; the options are: reset_mask",
        ),
        (
            {"reset_mask": np.ones(N, bool), "noise": 0.0},
            InvalidArgumentError,
            r"unknown reset option 'noise'",
        ),
    ],
)
def test_reset_refuses_bad_options(env, options, error, match):
    assert_refused(lambda: env.reset(options=options), error, match, env)


# --- seeds ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("seed", "error", "match"),
    [
        (
            [10, 11, -1, 13],
            InvalidArgumentError,
            r"seed of environment 2 must be an int >= 0 or None, got -1",
        ),
        (
            [10, 11, 12, -13],
            InvalidArgumentError,
            r"seed of environment 3 must be an int >= 0 or None, got -13",
        ),
        (
            [10, 1.5, 12, 13],
            ArgumentTypeError,
            r"seed of environment 1 must be an int >= 0 or None, got float 1.5",
        ),
        ([10, 11, "12", 13], ArgumentTypeError, r"seed of environment 2 must be .* got str '12'"),
        ([True, 11, 12, 13], ArgumentTypeError, r"seed of environment 0 must be .* got bool True"),
        ((10, 11, 12, [13]), ArgumentTypeError, r"seed of environment 3 must be .* got list \[13\]"),
        (
            np.array([10.0, 11, 12, 13]),
            ArgumentTypeError,
            r"seed of environment 0 must be an int >= 0 or None, got float64",
        ),
        ([1, 2, 3], InvalidArgumentError, r"a list of seeds must have num_envs=4 entries, got 3"),
        ([1, 2, 3, 4, 5], InvalidArgumentError, r"num_envs=4 entries, got 5"),
        ([], InvalidArgumentError, r"num_envs=4 entries, got 0"),
        (-1, InvalidArgumentError, r"seed must be an int >= 0 or None, got -1"),
        (
            1.5,
            ArgumentTypeError,
            r"seed must be None, an int >= 0 or a list of num_envs=4 such seeds, got float 1.5",
        ),
        ("7", ArgumentTypeError, r"seed must be None, an int >= 0 or a list .* got str '7'"),
        (True, ArgumentTypeError, r"got bool True"),
        (np.float32(3), ArgumentTypeError, r"got float32"),
        ({0: 1}, ArgumentTypeError, r"got dict"),
        ({1, 2, 3, 4}, ArgumentTypeError, r"got set"),
        (np.arange(8).reshape(2, 4), ArgumentTypeError, r"got ndarray"),
    ],
)
def test_reset_refuses_bad_seeds_before_reseeding_any_environment(env, seed, error, match):
    assert_refused(lambda: env.reset(seed=seed), error, match, env)


def test_a_bad_seed_with_a_mask_is_refused_too(env):
    mask = np.array([True, False, True, False])
    assert_refused(
        lambda: env.reset(seed=[1, 2, -3, 4], options={"reset_mask": mask}),
        InvalidArgumentError,
        r"seed of environment 2",
        env,
    )


# --- snapshot rows -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("rows", "error", "match"),
    [
        ([N], IndexError, r"snapshot rows: environment 4 out of range; indices run from 0 to 3"),
        ([0, -1], IndexError, r"environment -1 out of range"),
        ([1, 1], InvalidArgumentError, r"snapshot rows \[1, 1\] name an environment twice"),
        ([0.5], ArgumentTypeError, r"snapshot rows must be a list of environment indices \(ints\)"),
        (["0"], ArgumentTypeError, r"snapshot rows must be a list of environment indices"),
        ([[0, 1]], ArgumentTypeError, r"snapshot rows must be a list of environment indices"),
        (np.ones(N, bool), ArgumentTypeError, r"snapshot rows must be a list of environment indices"),
        ([], InvalidArgumentError, r"snapshot rows must name at least one environment"),
    ],
)
def test_snapshot_refuses_bad_rows(env, rows, error, match):
    assert_refused(lambda: env.snapshot(rows), error, match, env)


# --- restore -------------------------------------------------------------------------------------
def _replace(snap, **changes):
    return dataclasses.replace(snap, **changes)


def _physics(snap, **fields):
    p = snap.physics
    return _replace(snap, physics=p._replace(fields={**p.fields, **fields}))


@pytest.fixture(scope="module")
def others():
    """Snapshots this env must refuse: a single env's, another parameter set's, another task's."""
    single = gym.make(ID)
    single.reset(seed=0)
    single.step(np.array([0.4]))
    params = gym.make_vec(ID, num_envs=N, max_episode_steps=30, move_distance=6.0)
    params.reset(seed=0)
    task = gym.make_vec(floating_arm_task.TASK_ID, num_envs=N)
    task.reset(seed=0)
    return {"single": single.snapshot(), "params": params.snapshot(), "task": task.snapshot()}


@pytest.mark.parametrize(
    ("make", "error", "match"),
    [
        (
            lambda e, o: o["single"],
            SnapshotError,
            r"taken from a single env \(RoboDynEnv\); this is a vector env",
        ),
        (lambda e, o: o["params"], SnapshotError, r"other task parameters: move_distance=6.0 \(here 10.0\)"),
        (
            lambda e, o: o["task"],
            SnapshotError,
            r"taken from FloatingArmTask on tests/floating_arm.xml; this env runs CraneTask",
        ),
        (
            lambda e, o: None,
            ArgumentTypeError,
            r"restore needs a snapshot taken by a RoboDyn env's snapshot\(\), got NoneType",
        ),
        (lambda e, o: e.physics.sim.snapshot(), ArgumentTypeError, r"got Snapshot"),
        (lambda e, o: vars(e.snapshot()), ArgumentTypeError, r"got dict"),
        (lambda e, o: _replace(e.snapshot(), kind="env"), SnapshotError, r"taken from a single env"),
        (
            lambda e, o: _replace(e.snapshot(), signature=(*e.snapshot().signature[:3], "0")),
            SnapshotError,
            r"different model",
        ),
        (
            lambda e, o: _replace(e.snapshot(), signature=None),
            SnapshotError,
            r"signature None is not a RoboDyn env's",
        ),
        (
            lambda e, o: _replace(e.snapshot(), physics="qpos"),
            SnapshotError,
            r"physics must be an engine Snapshot, got str",
        ),
        (
            lambda e, o: _replace(e.snapshot(), elapsed=np.arange(N - 1)),
            SnapshotError,
            r"step counters must be int64 of shape \(4,\)",
        ),
        (
            lambda e, o: _replace(e.snapshot(), elapsed=np.array([3, 3, -3, 3])),
            SnapshotError,
            r"step counters must be >= 0, got \[3, 3, -3, 3\]",
        ),
        (lambda e, o: _replace(e.snapshot(), elapsed=[3] * N), SnapshotError, r"step counters must be int64"),
        (
            lambda e, o: _replace(e.snapshot(), rng_states=e.snapshot().rng_states[:2]),
            SnapshotError,
            r"must hold 4 random generator states",
        ),
        (
            lambda e, o: _replace(e.snapshot(), rng_states=list(e.snapshot().rng_states)),
            SnapshotError,
            r"must hold 4 random generator states \(a tuple\)",
        ),
        (
            lambda e, o: _replace(
                e.snapshot(), rng_states=(*e.snapshot().rng_states[:3], {"bit_generator": "MT19937"})
            ),
            SnapshotError,
            r"row 3: its random generator state is not a PCG64 state",
        ),
        (
            lambda e, o: _replace(e.snapshot(), task_state={"action": np.zeros(N)}),
            SnapshotError,
            r"task state must hold exactly \['action', 'prev_action'\], got \['action'\]",
        ),
        (
            lambda e, o: _replace(
                e.snapshot(), task_state={"action": np.zeros(N), "prev_action": np.zeros(N, np.float32)}
            ),
            SnapshotError,
            r"task state 'prev_action' must be float64 of shape \(4,\), got float32",
        ),
        (
            lambda e, o: _replace(
                e.snapshot(), task_state={"action": np.full(N, np.inf), "prev_action": np.zeros(N)}
            ),
            SnapshotError,
            r"task state 'action' holds NaN or inf",
        ),
        (
            lambda e, o: _replace(e.snapshot(), extra={"obs": e.snapshot().extra["obs"]}),
            SnapshotError,
            r"extra state must hold exactly \['done', 'obs'\], got \['obs'\]",
        ),
        (
            lambda e, o: _replace(e.snapshot(), extra={**e.snapshot().extra, "done": np.zeros(N, int)}),
            SnapshotError,
            r"extra state 'done' must be bool of shape \(4,\), got int64",
        ),
        (
            lambda e, o: _replace(e.snapshot(), extra={**e.snapshot().extra, "obs": np.full((N, 7), np.nan)}),
            SnapshotError,
            r"extra state 'obs' holds NaN or inf",
        ),
        (
            lambda e, o: _replace(e.snapshot(), extra={**e.snapshot().extra, "obs": np.zeros((N, 6))}),
            SnapshotError,
            r"extra state 'obs' must be float64 of shape \(4, 7\)",
        ),
        (
            lambda e, o: _physics(e.snapshot(), qpos=np.full((N, 2), 1e11)),
            SnapshotError,
            r"physics refused: snapshot field qpos holds NaN, inf or a value beyond 1e10",
        ),
        (
            lambda e, o: _physics(e.snapshot(), ctrl=np.zeros((N, 2))),
            SnapshotError,
            r"physics refused: snapshot field ctrl must be float64 of shape \(4, 1\)",
        ),
        (
            lambda e, o: _replace(
                e.snapshot(), physics=e.snapshot().physics._replace(rows=np.array([0, 1, 2, 9]))
            ),
            IndexError,
            r"restore rows: environment 9 out of range",
        ),
        (
            lambda e, o: _replace(e.snapshot(), physics=e.snapshot().physics._replace(rows=None)),
            SnapshotError,
            r"physics rows must be a 1-d array of row indices, got None",
        ),
        (
            lambda e, o: _replace(e.snapshot(), wrappers=(("TimeLimit", {}, {}),)),
            SnapshotError,
            r"snapshot holds the state of wrappers \(TimeLimit\); a vector env has none",
        ),
    ],
)
def test_restore_refuses_snapshots_that_do_not_fit(env, others, make, error, match):
    snap = make(env, others)
    assert_refused(lambda: env.restore(snap), error, match, env)


@pytest.mark.parametrize(
    ("rows", "error", "match"),
    [
        ([0, 1], SnapshotError, r"snapshot holds 4 environments, cannot restore into 2 rows"),
        ([0, 1, 2, 2], InvalidArgumentError, r"restore rows \[0, 1, 2, 2\] name an environment twice"),
        ([0, 1, 2, 4], IndexError, r"restore rows: environment 4 out of range; indices run from 0 to 3"),
        ([0.0, 1, 2, 3], ArgumentTypeError, r"restore rows must be a list of environment indices"),
        (np.ones(N, bool), ArgumentTypeError, r"restore rows must be a list of environment indices"),
    ],
)
def test_restore_refuses_bad_target_rows(env, rows, error, match):
    snap = env.snapshot()
    assert_refused(lambda: env.restore(snap, rows=rows), error, match, env)


def test_restore_of_a_subset_refuses_more_target_rows(env):
    part = env.snapshot(rows=[1, 3])
    assert_refused(
        lambda: env.restore(part, rows=[0, 1, 2]),
        SnapshotError,
        r"snapshot holds 2 environments, cannot restore into 3 rows",
        env,
    )


def test_a_never_reset_env_takes_only_a_snapshot_of_all_its_environments(env, fresh):
    part = env.snapshot(rows=[0, 2])
    assert_refused(
        lambda: fresh.restore(part),
        ResetNeededError,
        r"this env was never reset: restoring 2 of its 4 environments would leave the others "
        r"without an episode",
        fresh,
    )


# --- order of calls ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda e: e.step(np.zeros((N, 1))), r"call reset\(\) before step\(\)"),
        (lambda e: e.step(np.full((N, 1), np.nan)), r"call reset\(\) before step\(\)"),
        (lambda e: e.snapshot(), r"call reset\(\) before snapshot\(\)"),
        (lambda e: e.snapshot([1]), r"call reset\(\) before snapshot\(\)"),
    ],
)
def test_calls_before_reset_are_refused(fresh, call, match):
    info = assert_refused(lambda: call(fresh), ResetNeededError, match, fresh)
    assert isinstance(info.value, gym.error.ResetNeeded)


def test_disabled_autoreset_refuses_to_step_ended_environments():
    env = gym.make_vec(ID, num_envs=N, max_episode_steps=2, autoreset_mode=AutoresetMode.DISABLED)
    env.reset(seed=1)
    env.step(np.zeros((N, 1)))
    env.step(np.zeros((N, 1)))
    assert_refused(
        lambda: env.step(np.zeros((N, 1))),
        ResetNeededError,
        r"environments \[0, 1, 2, 3\] ended and autoreset is DISABLED",
        env,
    )


# --- construction --------------------------------------------------------------------------------
NAN, INF = float("nan"), float("inf")


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"num_envs": 0}, InvalidArgumentError, r"num_envs must be an int >= 1, got 0"),
        ({"num_envs": -2}, InvalidArgumentError, r"num_envs must be an int >= 1, got -2"),
        ({"num_envs": 2.5}, ArgumentTypeError, r"num_envs must be an int >= 1, got float 2.5"),
        ({"num_envs": 2.0}, ArgumentTypeError, r"num_envs must be an int >= 1, got float 2.0"),
        ({"num_envs": True}, ArgumentTypeError, r"num_envs must be an int >= 1, got bool True"),
        ({"num_envs": "4"}, ArgumentTypeError, r"num_envs must be an int >= 1, got str '4'"),
        ({"max_episode_steps": 0}, InvalidArgumentError, r"max_episode_steps must be an int >= 1, got 0"),
        ({"max_episode_steps": -1}, InvalidArgumentError, r"max_episode_steps must be an int >= 1, got -1"),
        (
            {"max_episode_steps": 1.5},
            ArgumentTypeError,
            r"max_episode_steps must be an int >= 1, got float 1.5",
        ),
        (
            {"max_episode_steps": True},
            ArgumentTypeError,
            r"max_episode_steps must be an int >= 1, got bool True",
        ),
        (
            {"max_episode_steps": "100"},
            ArgumentTypeError,
            r"max_episode_steps must be an int >= 1, got str '100'",
        ),
        (
            {"autoreset_mode": "sometimes"},
            InvalidArgumentError,
            r"autoreset_mode must be one of NEXT_STEP, SAME_STEP, DISABLED",
        ),
        ({"autoreset_mode": 1}, ArgumentTypeError, r"autoreset_mode must be one of .* got int 1"),
        ({"autoreset_mode": None}, ArgumentTypeError, r"autoreset_mode must be one of .* got NoneType"),
        (
            {"render_mode": "human"},
            InvalidArgumentError,
            r"render_mode must be one of \['rgb_array', 'depth_array', 'rgbd_tuple'\] or None, got 'human'",
        ),
        ({"render_mode": "rgb_array_list"}, InvalidArgumentError, r"render_mode must be one of"),
        ({"render_mode": True}, ArgumentTypeError, r"render_mode must be one of"),
        ({"width": 0}, InvalidArgumentError, r"width must be an int >= 1, got 0"),
        ({"height": 240.0}, ArgumentTypeError, r"height must be an int >= 1, got float 240.0"),
        ({"width": True}, ArgumentTypeError, r"width must be an int >= 1, got bool True"),
        (
            {"render_mode": "rgb_array", "height": 5000},
            InvalidArgumentError,
            r"frame 640x5000 exceeds the model's offscreen buffer",
        ),
        ({"nthread": 0}, ValueError, r"nthread must be an int >= 1, got 0"),
        ({"nthread": -3}, ValueError, r"nthread must be an int >= 1, got -3"),
        ({"nthread": 1.5}, ValueError, r"nthread must be an int >= 1, got 1.5"),
        (
            {"position_weight": NAN},
            InvalidArgumentError,
            r"position_weight must be finite and in \[0, inf\), got nan",
        ),
        (
            {"rail_limit": -15.0},
            InvalidArgumentError,
            r"rail_limit must be finite and in \(0, inf\), got -15.0",
        ),
        ({"max_accel": INF}, InvalidArgumentError, r"max_accel must be finite and in \(0, inf\), got inf"),
        (
            {"jerk_weight": "0.05"},
            ArgumentTypeError,
            r"jerk_weight must be a real number in \[0, inf\), got str",
        ),
        (
            {"move_distance": 16.0},
            InvalidArgumentError,
            r"move_distance must lie in \(0, rail_limit=15\), got 16.0",
        ),
        (
            {"batch": 4},
            ArgumentTypeError,
            r"CraneVectorEnv got an unknown keyword 'batch'; the valid keywords are: .*num_envs, "
            r"autoreset_mode, max_episode_steps, render_mode, width, height, camera_id, camera_name, "
            r"default_camera_config, max_geom, visual_options, nthread",
        ),
        ({"reset_noise": 0.0}, ArgumentTypeError, r"unknown keyword 'reset_noise'.*reset_noise_scale"),
    ],
)
def test_make_vec_refuses_bad_keywords(kwargs, error, match):
    # nothing outlives the refusal; the registry's spec is left alone
    spec = gym.spec(ID)
    kwargs = {"num_envs": 2, **kwargs}
    assert_refused(lambda: gym.make_vec(ID, **kwargs), error, match, spec)


def test_the_native_class_refuses_the_same_keywords():
    spec = gym.spec(ID)
    match = r"max_episode_steps must be an int >= 1, got 0"
    assert_refused(lambda: CraneVectorEnv(num_envs=2, max_episode_steps=0), InvalidArgumentError, match, spec)
    match = r"num_envs must be an int >= 1, got float 3.0"
    assert_refused(lambda: CraneVectorEnv(num_envs=3.0), ArgumentTypeError, match, spec)


# --- a reset that fails is undone ------------------------------------------------------------------
def _failing_reset(monkeypatch, vec):
    """From now on the task's reset draws its episodes, then raises (a task bug, simulated)."""
    task = vec.unwrapped.task if hasattr(vec, "unwrapped") else vec.task
    reset = task.reset_rows

    def reset_then_raise(rows, rngs):
        reset(rows, rngs)
        raise InvalidArgumentError("the task's reset raised (simulated)")

    monkeypatch.setattr(task, "reset_rows", reset_then_raise)


def _ended(mode):
    """Three cranes whose episodes (2 steps) have just ended."""
    vec = gym.make_vec(ID, num_envs=3, max_episode_steps=2, autoreset_mode=mode)
    vec.reset(seed=1)
    for _ in range(2):
        vec.step(np.full((3, 1), 0.3))
    return vec


def test_a_failing_reset_leaves_every_environment_as_it_was(monkeypatch):
    vec = _ended(AutoresetMode.NEXT_STEP)
    _failing_reset(monkeypatch, vec)
    assert_refused(lambda: vec.reset(seed=5), InvalidArgumentError, r"simulated", vec)
    mask = np.array([True, False, True])
    assert_refused(lambda: vec.reset(options={"reset_mask": mask}), InvalidArgumentError, r"simulated", vec)


def test_a_next_step_autoreset_that_fails_undoes_the_whole_step(monkeypatch):
    vec = _ended(AutoresetMode.NEXT_STEP)
    twin = pickle.loads(pickle.dumps(vec))
    _failing_reset(monkeypatch, vec)
    actions = np.full((3, 1), -0.5)
    # data.scratch_*: the step's work arrays (written by the step that was undone; not state)
    assert_refused(lambda: vec.step(actions), InvalidArgumentError, r"simulated", vec, ignore=r"\.scratch_")
    monkeypatch.undo()
    for _ in range(3):  # and it steps on as one that never saw the failed call
        for a, b in zip(vec.step(actions), twin.step(actions), strict=True):
            if isinstance(a, np.ndarray):
                np.testing.assert_array_equal(a, b)


def test_a_same_step_autoreset_that_fails_leaves_the_ended_rows_waiting_for_reset(monkeypatch):
    vec = gym.make_vec(ID, num_envs=3, max_episode_steps=2, autoreset_mode=AutoresetMode.SAME_STEP)
    vec.reset(seed=1)
    vec.step(np.full((3, 1), 0.3))
    _failing_reset(monkeypatch, vec)
    with pytest.raises(
        InvalidArgumentError, match=r"(?s)simulated.*this step was applied; environments \[0, 1, 2\]"
    ):
        vec.step(np.full((3, 1), 0.3))
    monkeypatch.undo()
    inner = vec.unwrapped if hasattr(vec, "unwrapped") else vec
    assert_refused(
        lambda: vec.step(np.zeros((3, 1))),
        ResetNeededError,
        r"environments \[0, 1, 2\] ended and their autoreset failed",
        inner,
    )
    vec.reset(options={"reset_mask": np.ones(3, dtype=bool)})
    obs, *_ = vec.step(np.zeros((3, 1)))
    assert np.all(np.isfinite(obs))


# --- what must work: a restored batch replays, truncation and autoreset included -------------------
ACTIONS = np.random.default_rng(0).uniform(-1, 1, (16, N, 1))


def _rollout(env, actions):
    return [tuple(np.array(x) for x in env.step(a)[:4]) for a in actions]


def _assert_same(first, second):
    for x, y in zip(first, second, strict=True):
        for u, w in zip(x, y, strict=True):
            assert u.tobytes() == w.tobytes()


@pytest.mark.parametrize("mode", list(AutoresetMode))
def test_restore_replays_truncation_and_autoreset(mode):
    env = gym.make_vec(ID, num_envs=N, max_episode_steps=6, autoreset_mode=mode)
    env.reset(seed=5)
    _rollout(env, ACTIONS[:3])
    snap = env.snapshot()
    steps = 3 if mode == AutoresetMode.DISABLED else 12  # to the truncation (and across an autoreset)
    first = _rollout(env, ACTIONS[3 : 3 + steps])
    assert first[2][3].all() and not first[1][3].any()  # truncated after the 6th step
    env.restore(snap)
    _assert_same(first, _rollout(env, ACTIONS[3 : 3 + steps]))
    other = gym.make_vec(ID, num_envs=N, max_episode_steps=6, autoreset_mode=mode)  # never reset
    other.restore(snap)
    _assert_same(first, _rollout(other, ACTIONS[3 : 3 + steps]))


def test_a_refused_restore_leaves_the_batch_stepping_as_before(env, others):
    # a single env's snapshot must not overwrite environment 0 before it is refused
    snap = env.snapshot()
    assert_refused(lambda: env.restore(others["single"]), SnapshotError, "taken from a single env", env)
    first = _rollout(env, ACTIONS[:3])
    env.restore(snap)
    _assert_same(first, _rollout(env, ACTIONS[:3]))
    env.restore(snap)  # the module's fixture goes on from where it was


def test_a_never_reset_vector_env_pickles_and_still_needs_a_reset():
    env = gym.make_vec(ID, num_envs=N)
    clone = pickle.loads(pickle.dumps(env))
    assert_refused(
        lambda: clone.step(np.zeros((N, 1))), ResetNeededError, r"call reset\(\) before step", clone
    )
    a, _ = env.reset(seed=np.int64(3))
    b, _ = clone.reset(seed=[3, 4, 5, 6])
    assert a.tobytes() == b.tobytes()
