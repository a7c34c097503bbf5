"""Gymnasium's MuJoCo v5 tasks on RoboDyn (envs/*_v5.py) against Gymnasium's own envs, the
oracle: the same seed and the same actions give the same observations, rewards,
terminations, truncations and `info` terms, step for step, episodes and resets included.

Each port runs beside its Gymnasium env (MuJoCo 4.0.0's physics) for several seeds: 1,000
steps of actions drawn from the action space (resetting both when an episode ends, each
from its own continuing generator, as a training loop does), then 100 steps at the bounds
(every control at its low or its high end, alternating per actuator and step).

Two comparisons:
- step by step: before each step our env's state (qpos, qvel, act, the solver's warm start)
  is set to Gymnasium's, so each step is compared from the same state over the whole run:
  observation, reward and every shared `info` term to TOL, terminated and truncated equal;
- free running, for the horizon HORIZON gives (the whole run, unless chaos cuts it): both
  envs run on their own, so rounding differences (the engine equals MuJoCo's step to about
  1e-15 on these models, tests/engine) accumulate. Under random actions HalfCheetah is
  chaotic in MuJoCo itself: nudging one of Gymnasium's own initial velocities by 1e-14
  separates two Gymnasium runs past 1e-8 within 21 to 47 steps, as far as ours separates
  from Gymnasium's, so its free-running horizon is 15 steps; likewise Ant (a 1e-15 nudge:
  past 1e-8 after 85 to 90 steps, ours after 76 to 90; horizon 60) and HumanoidStandup
  (nudged: 475 to 918 steps, ours 363 to 882; horizon 200). Pusher runs whole, to FREE_TOL:
  its drift is its convex collider's last bits, not chaos (the comment at FREE_TOL).
TOL (absolute, on numbers of order 1 to 100) is far below any physical difference. Each test
prints its worst differences.

The native vector env is compared with Gymnasium's own vectorization of its env
(`gym.make_vec(..., vectorization_mode="sync")`, env i seeded seed + i) in both autoreset
modes, each step from the same state, with episodes cut at 40 steps so that rows restart:
row i of ours equals env i of theirs. A step can fall on a branch of MuJoCo's PGS solver
that rounding decides: HumanoidStandup's momentum restart, whose test sums terms that are
zero in exact arithmetic, flips MuJoCo's own step by 6.3e-7 under a one-ulp nudge of its
input (tests/engine/test_rk4_pgs_warmstart.py). Free running that is one more source of
drift; in the vector test a step may exceed TOL only where Gymnasium's own step from the
same state nudged by an ulp moves by at least a twentieth as much, at most 1 % of steps
(seen: 1 of 900, 2.2e-5 off, Gymnasium's own moving 2.9e-5).
"""

from __future__ import annotations

import dataclasses

import gymnasium as gym
import mujoco
import numpy as np
import pytest

import robogym  # noqa: F401  (registers RoboDyn/*)
from robogym.registration import TASKS

# every port (a task module envs/*_v5.py): RoboDyn's id -> Gymnasium's
PORTS = {
    t.id: t.id.removeprefix("RoboDyn/")
    for t in TASKS
    if t.entry_point.startswith("robodyn.envs.") and t.id.endswith("-v5")
}
SEEDS = (0, 1, 2)
STEPS = 1000
BOUND_STEPS = 100
TOL = 1e-8
STATE = ("qpos", "qvel", "act", "qacc_warmstart")  # what a step starts from
# A step of the vector test may differ by more than TOL only where MuJoCo's own step is on a
# knife edge (HumanoidStandup's PGS restart: module docstring): Gymnasium's own step from
# the same state with some entries one ulp away moves by at least 1 / KNIFE_FACTOR as much
# (of N_NUDGES draws), and such steps are at most KNIFE_SHARE of all
N_NUDGES = 16
KNIFE_FACTOR = 20
KNIFE_SHARE = 0.01
# free-running steps a port stays within TOL of Gymnasium's env (module docstring)
HORIZON = {"RoboDyn/HalfCheetah-v5": 15, "RoboDyn/Ant-v5": 60, "RoboDyn/HumanoidStandup-v5": 200}
# free-running tolerance of a port whose drift is not chaos but its convex collider: Pusher's
# wrist capsules push its cylinder through GJK/EPA, whose last bits differ from the MuJoCo
# binary's, and the 1,000-times heavier object of v5 pushes the arm back, so the difference
# grows within a 100-step episode (seen 2.2e-8; Gymnasium against itself nudged by 1e-15
# reaches 7.4e-9; tests/engine/test_collision_multi.py holds the trajectories to 1e-6)
FREE_TOL = {"RoboDyn/Pusher-v5": 1e-7}


def _bound_action(space, t: int) -> np.ndarray:
    """Every control at its low or high end, alternating per actuator and step."""
    pick = (np.arange(space.shape[0]) + t) % 2 == 0
    return np.where(pick, space.low, space.high).astype(space.dtype)


def _compare(ours: dict, theirs: dict, where: str) -> float:
    """The worst difference between the info terms both envs report; equal keys checked."""
    shared = set(ours) & set(theirs)
    assert shared, f"{where}: no info key in common ({sorted(ours)} vs {sorted(theirs)})"
    missing = {k for k in theirs if not k.startswith("_")} - set(ours)
    assert not missing, f"{where}: Gymnasium's info keys {sorted(missing)} are missing"
    worst = 0.0
    for k in shared:
        worst = max(worst, float(np.max(np.abs(np.asarray(ours[k], float) - np.asarray(theirs[k], float)))))
    return worst


def _sync(ours, theirs) -> None:
    """Our env's state := Gymnasium's: qpos, qvel, act and the solver's warm start."""
    d, mj = ours.unwrapped.physics.sim.data, theirs.unwrapped.data
    for name in ("qpos", "qvel", "act", "qacc_warmstart"):
        getattr(d, name)[0] = getattr(mj, name)


def _run(env_id: str, steps: int, sync: bool) -> tuple[float, float, float, int, int]:
    """Both envs over `steps` steps a seed (random actions, then at the bounds); (worst
    |obs|, |reward|, |info| differences, episodes ended, steps compared)."""
    theirs_id = PORTS[env_id]
    worst_obs = worst_reward = worst_info = 0.0
    episodes = compared = 0
    for seed in SEEDS:
        ours, theirs = gym.make(env_id), gym.make(theirs_id)
        assert ours.action_space == theirs.action_space
        assert ours.observation_space == theirs.observation_space
        assert ours.spec.max_episode_steps == theirs.spec.max_episode_steps
        o1, i1 = ours.reset(seed=seed)
        o2, i2 = theirs.reset(seed=seed)
        worst_obs = max(worst_obs, np.max(np.abs(o1 - o2)))
        theirs.action_space.seed(seed)
        random_steps = steps * STEPS // (STEPS + BOUND_STEPS)
        for t in range(steps):
            a = theirs.action_space.sample() if t < random_steps else _bound_action(theirs.action_space, t)
            if sync:
                _sync(ours, theirs)
            o1, r1, term1, trunc1, i1 = ours.step(a)
            o2, r2, term2, trunc2, i2 = theirs.step(a)
            where = f"{env_id} seed {seed} step {t}"
            assert (term1, trunc1) == (term2, trunc2), f"{where}: terminated/truncated differ"
            worst_obs = max(worst_obs, np.max(np.abs(o1 - o2)))
            worst_reward = max(worst_reward, abs(r1 - r2))
            worst_info = max(worst_info, _compare(i1, i2, where))
            compared += 1
            if term1 or trunc1:
                episodes += 1
                o1, _ = ours.reset()
                o2, _ = theirs.reset()
                worst_obs = max(worst_obs, np.max(np.abs(o1 - o2)))
    return worst_obs, worst_reward, worst_info, episodes, compared


@pytest.mark.parametrize("env_id", sorted(PORTS))
def test_every_step_equals_gymnasiums_from_the_same_state(env_id):
    worst_obs, worst_reward, worst_info, episodes, compared = _run(env_id, STEPS + BOUND_STEPS, sync=True)
    assert compared == len(SEEDS) * (STEPS + BOUND_STEPS)
    print(
        f"\n{env_id}, step by step: {len(SEEDS)} seeds, {STEPS + BOUND_STEPS} steps each, {episodes} "
        f"episodes ended; worst |obs| {worst_obs:.1e}, |reward| {worst_reward:.1e}, |info| {worst_info:.1e}"
    )
    assert worst_obs <= TOL and worst_reward <= TOL and worst_info <= TOL


@pytest.mark.parametrize("env_id", sorted(PORTS))
def test_free_running_equals_gymnasium_over_its_horizon(env_id):
    steps = HORIZON.get(env_id, STEPS + BOUND_STEPS)
    worst_obs, worst_reward, worst_info, episodes, compared = _run(env_id, steps, sync=False)
    assert compared == len(SEEDS) * steps
    print(
        f"\n{env_id}, free running: {len(SEEDS)} seeds, {steps} steps each, {episodes} episodes ended; "
        f"worst |obs| {worst_obs:.1e}, |reward| {worst_reward:.1e}, |info| {worst_info:.1e}"
    )
    tol = FREE_TOL.get(env_id, TOL)
    assert worst_obs <= tol and worst_reward <= tol and worst_info <= tol


@pytest.mark.parametrize("mode", ["NextStep", "SameStep"])
@pytest.mark.parametrize("env_id", sorted(PORTS))
def test_vector_rows_equal_gymnasium_envs(env_id, mode):
    """Row i of the native vector env against env i of Gymnasium's sync vector env, each step
    from the same state (every row set to its Gymnasium env's before the step), episodes cut
    at 40 steps so that rows restart, in both autoreset modes."""
    n, seed, steps, limit = 3, 7, 300, 40
    kwargs = {"autoreset_mode": gym.vector.AutoresetMode(mode)}
    # the native vector env takes its keywords as make_vec's; Gymnasium's through its spec
    ours = gym.make_vec(env_id, num_envs=n, max_episode_steps=limit, **kwargs)
    spec = dataclasses.replace(gym.spec(PORTS[env_id]), max_episode_steps=limit)
    theirs = gym.make_vec(spec, num_envs=n, vectorization_mode="sync", vector_kwargs=kwargs)
    o1, _ = ours.reset(seed=seed)
    o2, _ = theirs.reset(seed=seed)
    worst = np.max(np.abs(o1 - o2))
    theirs.action_space.seed(seed)
    d = ours.unwrapped.physics.sim.data
    ended = compared = 0
    flips = []  # (step, row, our difference, Gymnasium's own under 1-ulp nudges)
    for t in range(steps):
        before = []
        for i, env in enumerate(theirs.envs):
            before.append({name: np.copy(getattr(env.unwrapped.data, name)) for name in STATE})
            for name in STATE:
                getattr(d, name)[i] = before[i][name]
        a = theirs.action_space.sample()
        o1, r1, term1, trunc1, _ = ours.step(a)
        o2, r2, term2, trunc2, _ = theirs.step(a)
        assert np.array_equal(term1, term2) and np.array_equal(trunc1, trunc2), f"{mode} step {t}"
        for i, env in enumerate(theirs.envs):
            err = max(np.max(np.abs(o1[i] - o2[i])), abs(r1[i] - r2[i]))
            if err > TOL and not (term1[i] or trunc1[i]):
                flips.append((t, i, err, _own_spread(env, before[i], a[i], o2[i])))
            else:
                worst = max(worst, err)
        ended += int(np.sum(term1 | trunc1))
        compared += len(o1)
    assert compared == n * steps
    print(f"\n{env_id} x{n} ({mode}, episodes of at most {limit} steps): {ended} ended; worst {worst:.1e}")
    for t, i, err, spread in flips:
        print(f"  step {t} row {i}: ours {err:.1e} off; Gymnasium's own under 1-ulp nudges {spread:.1e}")
    assert worst <= TOL and ended >= n * (steps // limit) // 2
    assert len(flips) <= KNIFE_SHARE * compared
    assert all(spread >= err / KNIFE_FACTOR for _, _, err, spread in flips)


def _own_spread(env, before: dict, action, obs) -> float:
    """How far Gymnasium's own step from the state `before` moves when about 30 % of that
    state's entries move by one ulp: the largest |obs| change over N_NUDGES draws, each
    stepped on a twin MjData (the env's own is left as it is; unnudged, the twin gives the
    env's `obs`)."""
    u = env.unwrapped
    own, rng = u.data, np.random.default_rng(0)
    spread = 0.0
    try:
        for k in range(N_NUDGES + 1):
            u.data = twin = mujoco.MjData(u.model)
            for name, x in before.items():
                x = np.copy(x)
                if k:
                    mask = rng.random(x.size) < 0.3
                    x[mask] = np.nextafter(
                        x[mask], np.where(rng.random(int(mask.sum())) < 0.5, np.inf, -np.inf)
                    )
                getattr(twin, name)[:] = x
            twin.time = own.time - u.dt
            u.do_simulation(action, u.frame_skip)
            out = u._get_obs()
            if k == 0:
                assert np.array_equal(out, obs), "the twin steps as the env"
            spread = max(spread, float(np.max(np.abs(out - obs))))
    finally:
        u.data = own
    return spread
