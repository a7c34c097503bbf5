"""Sampling-based MPC: plans scored by rolling the task itself out, many at once.

Every control tick, for each env row b:
  1. the row's state (physics, task state, random generators: `env.snapshot`) is copied into
     `samples` rows of a private planning env of the same task, and the task hides from
     those copies what the agent cannot know ahead (Task.hide_future: the scheduled pushes)
     (rollout.TaskRollouts; or, with `rollouts=ModelRollouts(...)`, the row's state is read
     for a planning model and a cost: an iLQR MPC's own, mpc.model_rollouts);
  2. candidate plans are the row's nominal plan and samples - 1 perturbations of it: a plan
     is `knots` control values spread evenly over `horizon` control steps, read between knots
     by linear interpolation (`interpolation="linear"`) or held (`"zero"`), and a
     perturbation adds Gaussian noise of std `noise` (action units) to every knot, clipped
     to the action box; the last candidate is the plan of zeros (`zero_candidate`);
  3. all B x samples candidates run `horizon` steps in one batched call per step, each
     scored by its return over the horizon, sum_t gamma^t r_t, with the task's own reward,
     counted until the candidate's episode terminates (after that it earns nothing, as in
     the episode's own return), or by -cost on a planning model (envs/baselines/rollout.py);
  4. the nominal becomes the best candidate (`update="best"`: predictive sampling, Howell
     et al., "Predictive Sampling: Real-time Behaviour Synthesis with MuJoCo", 2022) or the
     return-weighted average of all of them (`update="mppi"`: w_i = exp((J_i - max J) /
     (temperature * (max J - min J))), the weights of model-predictive path integral
     control, Williams et al., 2017, with the temperature relative to the spread of returns
     so that it means the same on every task); steps 2-4 repeat `iterations` times;
  5. the env gets the nominal's first action; at the next tick the nominal is shifted one
     control step (read at t + 1, the last knot held past the end) and planned again.

With `replan_every` k > 1, the rows plan every k-th tick and follow their plan in between.
Everything is deterministic given `seed` (each row draws its noise from its own generator,
seeded with (seed, row), so row b acts as a single env planning with the same seed would),
and planning never writes the env: it reads one snapshot per tick.

The plans use privileged state (the exact robot, its exact state); the cost is wall time:
samples x horizon x iterations env steps per control step and row, measured in `stats()`.
"""

from __future__ import annotations

import time

import numpy as np

from robodyn.envs.baselines.rollout import TaskRollouts
from robogym.errors import InvalidArgumentError

UPDATES = ("best", "mppi")
INTERPOLATIONS = ("linear", "zero")


class Spline:
    """Control sequences of `horizon` steps given by `knots` values each: knot j sits at
    control step j (horizon - 1) / (knots - 1) (one knot: constant), read in between by
    linear interpolation or the last knot's value held (zero-order hold)."""

    def __init__(self, horizon: int, knots: int, interpolation: str):
        self.horizon, self.knots, self.interpolation = horizon, knots, interpolation
        self.times = np.linspace(0.0, horizon - 1.0, knots) if knots > 1 else np.zeros(1)
        self.steps = self.weights(np.arange(horizon, dtype=np.float64))  # (horizon, knots)
        self.shifted = self.weights(self.times + 1.0)  # (knots, knots): read one step later

    def weights(self, t: np.ndarray) -> np.ndarray:
        """(len(t), knots) W with values at times t = W @ knot values (times past the last
        knot hold it)."""
        W = np.zeros((len(t), self.knots))
        if self.knots == 1:
            W[:, 0] = 1.0
            return W
        span = self.times[1] - self.times[0]
        s = np.clip(t / span, 0.0, self.knots - 1.0)
        j = np.minimum(np.floor(s).astype(np.int64), self.knots - 2)
        frac = s - j
        if self.interpolation == "zero":
            j, frac = np.where(frac >= 1.0, j + 1, j), np.zeros_like(frac)
            j = np.minimum(j, self.knots - 1)
            W[np.arange(len(t)), j] = 1.0
            return W
        W[np.arange(len(t)), j] = 1.0 - frac
        W[np.arange(len(t)), j + 1] += frac
        return W

    def controls(self, knots: np.ndarray) -> np.ndarray:
        """(..., knots, m) -> (..., horizon, m): the control at every step of the horizon."""
        return self.steps @ knots

    def shift(self, knots: np.ndarray) -> np.ndarray:
        """(..., knots, m) -> the knots of the same plan started one control step later."""
        return self.shifted @ knots


class SamplingPlanner:
    """Sampling-based MPC over the rows of a RoboDynVectorEnv (Policy protocol: reset, act);
    see the module docstring.

    samples: candidate plans per row and iteration (the nominal among them), >= 2
    horizon: control steps planned ahead; knots: a plan's control values (<= horizon)
    noise: the perturbations' std in action units (a scalar or one per action component)
    update: "best" (predictive sampling) or "mppi" (return-weighted average, `temperature`)
    iterations: sample-and-update rounds per planning tick; replan_every: plan every k ticks
    gamma: the task return's discount; seed: the noise's seed
    zero_candidate: the last candidate of every round is the plan of zeros (for a task whose
        zero action holds a pose, the fallback of doing nothing) instead of a noisy one
    prior: None, or an open-loop schedule the plans are offsets from: prior(env, steps) with
        steps (B, n) env step counts (since each row's reset) returns the (B, n, m) actions
        the schedule gives there (a gait's clock); the env gets clip(prior + plan)
    rollouts: what scores the candidates (envs/baselines/rollout.py): by default the task's
        own return on copies of the env (TaskRollouts, discounted by gamma); a ModelRollouts
        plans on a model and a cost instead (gamma must then stay 1)
    """

    name = "sampling"  # its label in an evaluation

    def __init__(
        self,
        env,
        samples: int = 32,
        horizon: int = 25,
        knots: int = 4,
        noise=0.2,
        update: str = "best",
        temperature: float = 0.1,
        iterations: int = 1,
        replan_every: int = 1,
        gamma: float = 1.0,
        interpolation: str = "linear",
        seed: int = 0,
        prior=None,
        zero_candidate: bool = True,
        rollouts=None,
    ):
        _check_int("samples", samples, 2)
        _check_int("horizon", horizon, 1)
        _check_int("knots", knots, 1)
        _check_int("iterations", iterations, 1)
        _check_int("replan_every", replan_every, 1)
        if knots > horizon:
            raise InvalidArgumentError(
                f"knots={knots} exceeds the horizon {horizon} (a knot per step at most)"
            )
        if replan_every > horizon:
            raise InvalidArgumentError(f"replan_every={replan_every} exceeds the horizon {horizon}")
        if update not in UPDATES:
            raise InvalidArgumentError(f"update must be one of {UPDATES}, got {update!r}")
        if interpolation not in INTERPOLATIONS:
            raise InvalidArgumentError(
                f"interpolation must be one of {INTERPOLATIONS}, got {interpolation!r}"
            )
        if not (np.isfinite(temperature) and temperature > 0):
            raise InvalidArgumentError(f"temperature must be finite and > 0, got {temperature!r}")
        space = env.single_action_space
        self.lo, self.hi = np.asarray(space.low, dtype=np.float64), np.asarray(space.high, dtype=np.float64)
        m = self.lo.shape[0]
        noise = np.broadcast_to(np.asarray(noise, dtype=np.float64), (m,)).copy()
        if not np.all(np.isfinite(noise) & (noise >= 0)):
            raise InvalidArgumentError(f"noise must be finite and >= 0, got {noise.tolist()}")
        self.samples, self.horizon, self.iterations = int(samples), int(horizon), int(iterations)
        self.replan_every, self.update, self.temperature = int(replan_every), update, float(temperature)
        self.noise = noise
        self.spline = Spline(self.horizon, int(knots), interpolation)
        B = env.num_envs
        self.nominal = np.zeros((B, int(knots), m))
        self.fresh = np.ones(B, dtype=bool)  # no plan yet: start from the zero plan
        self.age = np.zeros(B, dtype=np.int64)  # ticks since the row last planned
        self.rngs = [np.random.default_rng([int(seed), b]) for b in range(B)]
        self.prior = prior
        self.zero_candidate = bool(zero_candidate)
        if rollouts is None:
            rollouts = TaskRollouts(env, self.samples, gamma)
        elif gamma != 1.0:
            raise InvalidArgumentError(
                "gamma discounts the task's return; a ModelRollouts scores by its cost"
            )
        if rollouts.horizon not in (None, self.horizon):
            raise InvalidArgumentError(
                f"horizon={self.horizon}, but the rollouts' cost is written for {rollouts.horizon} steps"
            )
        self.rollouts = rollouts
        self.plan_seconds = 0.0  # wall time spent planning
        self.ticks = 0  # act() calls
        self.last_returns: np.ndarray | None = None  # (B, samples) of the last iteration

    # --- Policy protocol -----------------------------------------------------------------------
    def reset(self, env, rows: np.ndarray) -> None:
        """The rows start new episodes: their next act() plans from the zero plan."""
        rows = np.asarray(rows, dtype=np.int64)
        self.fresh[rows] = True
        self.nominal[rows] = 0.0

    def act(self, env, obs: np.ndarray) -> np.ndarray:
        """(B, m) actions: every row's nominal plan at its current step, after planning the
        rows whose turn it is."""
        t0 = time.perf_counter()
        due = self.fresh | (self.age >= self.replan_every)
        # a plan made earlier moves on one control step; a fresh row starts from zero
        self.nominal[~self.fresh] = self.spline.shift(self.nominal[~self.fresh])
        if np.any(due):
            self._plan(env, due)
            self.age[due] = 0
            self.fresh[due] = False
        self.age += 1
        self.ticks += 1
        self.plan_seconds += time.perf_counter() - t0
        u = self.nominal[:, 0]
        if self.prior is not None:
            u = u + self._prior(env, 1)[:, 0]
        return np.clip(u, self.lo, self.hi)

    def _prior(self, env, n: int) -> np.ndarray:
        """(B, n, m) the prior's actions for the next n control steps of every row."""
        return np.asarray(self.prior(env, env.task.elapsed[:, None] + np.arange(n)), dtype=np.float64)

    def stats(self) -> dict:
        """Planning cost so far: ticks, wall seconds, seconds per control step, and the
        real-time factor (control time covered per second of planning, for the whole batch)."""
        per_tick = self.plan_seconds / max(self.ticks, 1)
        return {
            "ticks": self.ticks,
            "plan_seconds": self.plan_seconds,
            "seconds_per_step": per_tick,
            "env_steps_per_tick": self.samples * self.horizon * self.iterations,
        }

    # --- planning ------------------------------------------------------------------------------
    def _plan(self, env, due: np.ndarray) -> None:
        """Improve the nominal plans of the `due` rows by `iterations` rounds of sampling.
        Every row is rolled out (splitting the batch costs more than it saves); the other
        rows' candidates are all their nominal, and their plans are kept as they are."""
        self.rollouts.begin(env)
        nominal = self.nominal.copy()
        for _ in range(self.iterations):
            candidates = self._candidates(nominal, due)  # (B, S, knots, m)
            returns = self._returns(env, candidates)  # (B, S)
            nominal = self._update(candidates, returns)
            self.last_returns = returns
        self.nominal[due] = nominal[due]

    def _candidates(self, nominal: np.ndarray, due: np.ndarray) -> np.ndarray:
        """(B, S, knots, m): each row's nominal, then for a due row S - 1 copies with noise
        from its own generator, clipped to the box (widened by its width with a prior)."""
        B, K, m = nominal.shape
        c = np.repeat(nominal[:, None], self.samples, axis=1)
        for b in np.flatnonzero(due):
            c[b, 1:] += self.rngs[b].standard_normal((self.samples - 1, K, m)) * self.noise
        if self.zero_candidate:  # the plan of zeros: the prior alone, or the action 0
            c[due, -1] = 0.0
        # a plan offsets the prior, so it may reach the box's width past either side of it
        width = 0.0 if self.prior is None else self.hi - self.lo
        return np.clip(c, self.lo - width, self.hi + width)

    def _returns(self, env, candidates: np.ndarray) -> np.ndarray:
        """(B, S) returns of the candidates (knots) over the horizon, each from its row's state
        at the last rollouts.begin: their controls (plus the prior), clipped to the box, rolled
        out by self.rollouts."""
        B, S, K, m = candidates.shape
        u = self.spline.controls(candidates)  # (B, S, horizon, m)
        if self.prior is not None:
            u = u + self._prior(env, self.horizon)[:, None]
        return self.rollouts.returns(env, np.clip(u, self.lo, self.hi))

    def _update(self, candidates: np.ndarray, returns: np.ndarray) -> np.ndarray:
        """(B, knots, m): the best candidate, or the return-weighted average (mppi)."""
        if self.update == "best":
            return candidates[np.arange(len(returns)), np.argmax(returns, axis=1)]
        top = returns.max(axis=1, keepdims=True)
        spread = np.maximum(top - returns.min(axis=1, keepdims=True), 1e-12)
        w = np.exp((returns - top) / (self.temperature * spread))
        w /= w.sum(axis=1, keepdims=True)
        return np.einsum("bs,bskm->bkm", w, candidates)


def _check_int(name: str, value, least: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < least:
        raise InvalidArgumentError(f"{name} must be an integer >= {least}, got {value!r}")


def sampling_planner(env, samples: int = 32, **kwargs) -> SamplingPlanner:
    """The sampling planner with its default settings on any task (the generic `sampling`
    baseline; kwargs: SamplingPlanner's)."""
    return SamplingPlanner(env, samples=samples, **kwargs)
