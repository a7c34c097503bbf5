"""Randomized physics in the task layer (robogym.randomize; Quadruped-v0 and HumanoidPush-v0's
`randomize` keywords).

- Row i of a randomized vector env is the robot (and the episode) a single env seeded
  seed + i gets, bit for bit; every row is a different robot; an autoreset draws a new one.
- Randomization draws last: the episode's other draws (the command) are those of the same
  seed without randomization.
- randomize_scale=0 is the nominal robot; randomize=False leaves every row on the model's
  own record; the draws stay inside their declared ranges.
- A snapshot of the env carries the robots: restoring it steps bit-identically; randomized
  envs pickle.
- Every draw at the largest allowed scale is a valid robot; a scale at which a draw could
  leave its parameter's range is refused, naming the parameter, the element and the bound.
- Wrong keywords and Draws are refused with errors naming them.
"""

from __future__ import annotations

import pickle

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import robodyn.engine.params
import robogym  # noqa: F401  (registers the envs)
from robogym.errors import ArgumentTypeError, InvalidArgumentError
from robogym.randomize import Draw, Randomization

QUAD = "RoboDyn/Quadruped-v0"
HUMANOID = "RoboDyn/HumanoidPush-v0"
HOPPER = "RoboDyn/Hopper-v5"  # Gymnasium's locomotion ports draw robogym.randomize.locomotion
ANT = "RoboDyn/Ant-v5"
LOCOMOTION_PORTS = ("Ant", "HalfCheetah", "Hopper", "Walker2d", "Humanoid", "HumanoidStandup")
FIELDS = ("geom_friction", "body_mass", "body_ipos", "dof_armature", "dof_damping")


def _sim(env):
    return env.unwrapped.physics.sim if hasattr(env, "unwrapped") else env.physics.sim


@pytest.mark.parametrize("env_id", [QUAD, HUMANOID, HOPPER, ANT])
def test_rows_equal_single_envs_seeded_seed_plus_i(env_id):
    n, seed, steps = 3, 40, 5
    vec = gym.make_vec(env_id, num_envs=n, autoreset_mode=AutoresetMode.DISABLED, randomize=True)
    obs, _ = vec.reset(seed=seed)
    rng = np.random.default_rng(0)
    actions = rng.uniform(-1.0, 1.0, (steps, *vec.action_space.shape))
    vec_obs = [obs]
    for t in range(steps):
        vec_obs.append(vec.step(actions[t])[0])
    vsim = vec.unwrapped.physics.sim if hasattr(vec, "unwrapped") else vec.physics.sim
    masses = vsim.get_param("body_mass")
    assert len({tuple(m) for m in masses}) == n  # every row its own robot
    for i in range(n):
        env = gym.make(env_id, randomize=True)
        o, _ = env.reset(seed=seed + i)
        np.testing.assert_array_equal(o, vec_obs[0][i])
        for t in range(steps):
            o = env.step(actions[t, i])[0]
            np.testing.assert_array_equal(o, vec_obs[t + 1][i])
        sim = _sim(env)
        for name in FIELDS:
            np.testing.assert_array_equal(sim.get_param(name)[0], vsim.get_param(name)[i], err_msg=name)


def test_randomization_draws_last_and_stays_in_range():
    seed = 11
    plain = gym.make(QUAD)
    plain.reset(seed=seed)
    env = gym.make(QUAD, randomize=True)
    env.reset(seed=seed)
    np.testing.assert_array_equal(env.unwrapped.task.commands, plain.unwrapped.task.commands)
    model = _sim(plain).model
    sim = _sim(env)
    assert _sim(plain)._bound.model_table[0] == _sim(plain)._bound.model_address  # off: shared record
    mass = sim.get_param("body_mass")[0]
    trunk = env.unwrapped.physics.body_id("trunk")
    ratio = np.delete(mass / np.where(model.body_mass > 0, model.body_mass, 1.0), [0, trunk])
    assert np.all((ratio >= 0.9) & (ratio <= 1.1)) and np.ptp(ratio) > 0
    assert 0.9 * model.body_mass[trunk] - 1.0 <= mass[trunk] <= 1.1 * model.body_mass[trunk] + 1.0
    offset = sim.get_param("body_ipos")[0, trunk] - model.body_ipos[trunk]
    assert np.all(np.abs(offset) <= 0.05) and np.ptp(offset) > 0
    friction = sim.get_param("geom_friction")[0, :, 0]
    floor = env.unwrapped.physics.geom_id("floor")
    assert 0.4 <= friction[floor] <= 1.0 and friction[floor] != model.geom_friction[floor, 0]
    # the floor and the feet carry one draw, so every foot contact has it
    d = sim.data
    for _ in range(20):
        env.step(np.zeros(env.action_space.shape))
    assert d.ncon[0] > 0
    np.testing.assert_array_equal(d.contact_friction[0, : d.ncon[0], 0], friction[floor])


def test_a_locomotion_port_scales_its_own_values_and_keeps_gymnasiums_draws():
    """Gymnasium's Hopper randomized: the reset noise is Gymnasium's (same initial
    observation as without randomize), one friction factor in [0.6, 1.4] scales every geom
    (the foot's nominal 2 with the rest), the torso's mass is the all-body draw in [0.9, 1.1]
    times its own in [0.8, 1.2]."""
    seed = 12
    plain, env = gym.make(HOPPER), gym.make(HOPPER, randomize=True)
    np.testing.assert_array_equal(env.reset(seed=seed)[0], plain.reset(seed=seed)[0])
    model, sim = _sim(plain).model, _sim(env)
    factor = sim.get_param("geom_friction")[0, :, 0] / model.geom_friction[:, 0]
    assert 0.6 <= factor[0] <= 1.4 and factor[0] != 1.0
    np.testing.assert_allclose(factor, factor[0], rtol=1e-15)
    torso = env.unwrapped.physics.body_id("torso")
    ratio = sim.get_param("body_mass")[0, torso] / model.body_mass[torso]
    assert 0.9 * 0.8 <= ratio <= 1.1 * 1.2 and ratio != 1.0
    action = np.full(env.action_space.shape, 0.5, dtype=np.float32)
    assert not np.array_equal(env.step(action)[0], plain.step(action)[0])  # another robot


def test_scale_zero_is_the_nominal_robot_and_autoreset_draws_anew():
    env = gym.make(QUAD, randomize=True, randomize_scale=0.0)
    env.reset(seed=3)
    model = _sim(env).model
    for name in FIELDS:
        np.testing.assert_array_equal(_sim(env).get_param(name)[0], getattr(model, name), err_msg=name)
    vec = gym.make_vec(QUAD, num_envs=2, randomize=True)
    vec.reset(seed=5)
    sim = vec.unwrapped.physics.sim if hasattr(vec, "unwrapped") else vec.physics.sim
    before = sim.get_param("body_mass")
    core = vec.unwrapped.core if hasattr(vec, "unwrapped") else vec.core
    core.reset_rows(np.array([1]))
    after = sim.get_param("body_mass")
    np.testing.assert_array_equal(after[0], before[0])
    assert np.any(after[1] != before[1])


def test_snapshot_restores_the_robots():
    vec = gym.make_vec(HUMANOID, num_envs=2, autoreset_mode=AutoresetMode.DISABLED, randomize=True)
    vec.reset(seed=8)
    snap = vec.unwrapped.snapshot() if hasattr(vec, "unwrapped") else vec.snapshot()
    action = np.zeros((2, *vec.single_action_space.shape))
    first = [vec.step(action)[0] for _ in range(3)]
    vec.reset(seed=99)  # other robots
    (vec.unwrapped if hasattr(vec, "unwrapped") else vec).restore(snap)
    again = [vec.step(action)[0] for _ in range(3)]
    np.testing.assert_array_equal(np.array(first), np.array(again))


def test_bad_keywords_and_draws_are_refused():
    with pytest.raises(ArgumentTypeError, match="randomize must be True or False"):
        gym.make(QUAD, randomize="yes")
    with pytest.raises(InvalidArgumentError, match="randomize_scale"):
        gym.make(QUAD, randomize=True, randomize_scale=3.0)
    with pytest.raises(InvalidArgumentError, match="kind must be one of"):
        Draw("body_mass", "multiply", 0.9, 1.1)
    with pytest.raises(InvalidArgumentError, match="low <= high"):
        Draw("body_mass", "scale", 1.1, 0.9)
    env = gym.make(QUAD)
    physics = env.unwrapped.physics
    with pytest.raises(InvalidArgumentError, match="no body named 'tail'"):
        Randomization(
            (Draw("body_mass", "add", 0.0, 1.0, elements=("tail",)),), physics.mj_model, physics.model
        )
    with pytest.raises(InvalidArgumentError, match="column 3 out of range"):
        Randomization((Draw("geom_friction", "set", 0.4, 1.0, column=3),), physics.mj_model, physics.model)


@pytest.mark.parametrize("env_id", [QUAD, HUMANOID, HOPPER])
def test_scale_zero_steps_bit_for_bit_as_the_nominal_robot(env_id):
    """randomize_scale=0 draws every value at the model's own, so the rows keep the model's
    compiled constants (not a recomputation an ulp away) and step exactly as without it."""
    nominal = gym.make(env_id)
    zero = gym.make(env_id, randomize=True, randomize_scale=0.0)
    a, _ = nominal.reset(seed=4)
    b, _ = zero.reset(seed=4)
    rng = np.random.default_rng(1)
    for _ in range(50):
        np.testing.assert_array_equal(a, b)
        action = rng.uniform(-1.0, 1.0, nominal.action_space.shape)
        a, b = nominal.step(action)[0], zero.step(action)[0]
    assert _sim(zero)._bound.model_table[0] == _sim(zero)._bound.model_address  # the shared record


@pytest.mark.parametrize("env_id", [QUAD, HUMANOID])
def test_randomized_envs_pickle(env_id):
    env = gym.make(env_id, randomize=True)
    env.reset(seed=6)
    env.step(np.zeros(env.action_space.shape))
    copy = pickle.loads(pickle.dumps(env))
    vec = gym.make_vec(env_id, num_envs=2, randomize=True)
    vec.reset(seed=6)
    vcopy = pickle.loads(pickle.dumps(vec))
    rng = np.random.default_rng(2)
    for _ in range(5):
        action = rng.uniform(-1.0, 1.0, env.action_space.shape)
        np.testing.assert_array_equal(env.step(action)[0], copy.step(action)[0])
        actions = rng.uniform(-1.0, 1.0, vec.action_space.shape)
        np.testing.assert_array_equal(vec.step(actions)[0], vcopy.step(actions)[0])


@pytest.mark.parametrize(
    ("env_id", "declared"),
    [(QUAD, 2.0), (HUMANOID, 1.6), *((f"RoboDyn/{name}-v5", 2.0) for name in LOCOMOTION_PORTS)],
)
def test_every_draw_at_the_largest_allowed_scale_is_a_valid_robot(env_id, declared):
    """The declared upper bound of randomize_scale is one at which no draw can leave its
    parameter's range; 2,000 draws there stay inside the computed ranges and pass the
    engine's own checks."""
    env = gym.make(env_id)
    task, physics = env.unwrapped.task, env.unwrapped.physics
    assert type(task).params["randomize_scale"].bounds.high == declared
    r = Randomization(task.randomization, physics.mj_model, physics.model, declared)
    assert r.invalid_draw(declared) == "" and r.max_scale() >= declared
    ranges = r.ranges(declared)
    rng = np.random.default_rng(0)
    for _ in range(2000):
        drawn = r.draw(rng)
        for name, value in drawn.items():
            lo, hi = ranges[name]
            assert np.all((lo <= value) & (value <= hi)), name
            robodyn.engine.params.check(physics.model, name, np.array([0]), value[None])


def test_a_scale_that_could_draw_an_invalid_robot_is_refused_by_name():
    physics = gym.make(HUMANOID).unwrapped.physics
    draws = (Draw("geom_friction", "set", 0.4, 1.0, elements=("floor",), column=0, shared=True),)
    r = Randomization(draws, physics.mj_model, physics.model, 1.0)
    assert abs(r.max_scale() - 1.0 / 0.6) < 1e-8  # 1 + s (0.4 - 1) >= 0
    with pytest.raises(
        InvalidArgumentError,
        match=r"randomize_scale=1.7 could draw geom_friction column 0 of geom 0 \(floor\) down to -0.02 "
        r"\(allowed: non-negative\); with these draws randomize_scale must be at most 1.66667",
    ):
        Randomization(draws, physics.mj_model, physics.model, 1.7)
    trunk_mass = (Draw("body_mass", "add", -100.0, 0.0, elements=("torso",)),)
    with pytest.raises(InvalidArgumentError, match=r"body_mass of body \d+ \(torso\) down to"):
        Randomization(trunk_mass, physics.mj_model, physics.model, 1.0)
