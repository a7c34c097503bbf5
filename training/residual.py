"""Residual policies: a learner corrects a baseline instead of replacing it.

The env a learner trains on runs the baseline in the loop and adds the learner's action to
the baseline's command,

    env action = clip(base(state) + scale * a, low, high),    a in [-1, 1]^k,

so the learner starts from the baseline's behaviour (a = 0) and learns only what the
baseline lacks (residual policy learning: Silver et al. 2018, "Residual Policy Learning",
arXiv:1812.06298; Johannink et al. 2019, "Residual Reinforcement Learning for Robot
Control", ICRA). The saved policy is the pair: training.train records the baseline's name
and the scale in the model's sidecar JSON, and training.evaluate rebuilds the same sum
(ResidualPolicy) when it loads the model.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from robodyn.engine.errors import RoboDynError


class ResidualError(RoboDynError, ValueError):
    """A residual setting or action refused before anything steps."""


def check_scale(scale) -> float:
    """`scale` as a positive finite float, else a ResidualError."""
    try:
        value = float(scale)
    except (TypeError, ValueError):
        raise ResidualError(f"residual scale must be a number, got {scale!r}") from None
    if not np.isfinite(value) or value <= 0:
        raise ResidualError(f"residual scale must be positive and finite, got {scale!r}")
    return value


def combine(base_action: np.ndarray, residual: np.ndarray, scale: float, space) -> np.ndarray:
    """clip(base + scale * residual) to the action box `space` (a Box)."""
    return np.clip(base_action + scale * residual, space.low, space.high)


class ResidualVectorEnv(gym.vector.VectorWrapper):
    """A RoboDyn vector env whose action is a correction to baseline `base` (a name the task
    declares, e.g. "pd"): step(a) sends clip(base(state) + scale * a) to the env. The
    action space is [-1, 1]^k; everything else (observations, rewards, info, autoreset) is
    the env's own."""

    def __init__(self, env: gym.vector.VectorEnv, base: str, scale: float = 1.0):
        super().__init__(env)
        from robodyn.envs.baselines import make_baseline

        self.scale = check_scale(scale)
        self.base_name = base
        try:
            self.base = make_baseline(base, env.unwrapped)
        except ValueError as e:
            raise ResidualError(f"residual baseline: {e}") from None
        space = env.unwrapped.single_action_space
        k = space.shape
        self._space = space
        self.single_action_space = gym.spaces.Box(-1.0, 1.0, shape=k, dtype=np.float64)
        self.action_space = gym.spaces.Box(-1.0, 1.0, shape=(env.num_envs, *k), dtype=np.float64)
        self._obs: np.ndarray | None = None

    def reset(self, *, seed=None, options=None):
        obs, info = self.env.reset(seed=seed, options=options)
        self.base.reset(self.env.unwrapped, np.arange(self.num_envs))
        self._obs = obs
        return obs, info

    def step(self, actions):
        if self._obs is None:
            raise ResidualError("step() before reset(): the baseline has no state to act on")
        a = np.asarray(actions, dtype=np.float64)
        if a.shape != self.action_space.shape or not np.all(np.isfinite(a)):
            raise ResidualError(
                f"residual actions must be finite, of shape {self.action_space.shape}; got shape {a.shape}"
            )
        env = self.env.unwrapped
        total = combine(self.base.act(env, self._obs), a, self.scale, self._space)
        obs, reward, terminated, truncated, info = self.env.step(total)
        done = np.flatnonzero(np.logical_or(terminated, truncated))
        if len(done):
            self.base.reset(env, done)
        self._obs = obs
        return obs, reward, terminated, truncated, info


class ResidualPolicy:
    """A trained residual `learner` (a policy over [-1, 1]^k) on top of the baseline named
    `base`: act = clip(base.act + scale * learner.act), the sum the learner was trained on.
    The baseline is built for the env it acts on (and rebuilt for another env)."""

    def __init__(self, base: str, learner, scale: float, name: str):
        self.base_name = base
        self.learner = learner
        self.scale = check_scale(scale)
        self.name = name
        self._base = None
        self._env = None

    def base_for(self, env):
        """The baseline policy for `env`; a ResidualError if its task has no such baseline."""
        if self._env is not env:
            from robodyn.envs.baselines import make_baseline

            try:
                self._base = make_baseline(self.base_name, env)
            except ValueError as e:
                raise ResidualError(f"residual baseline: {e}") from None
            self._env = env
        return self._base

    def reset(self, env, rows: np.ndarray) -> None:
        self.base_for(env).reset(env, rows)
        self.learner.reset(env, rows)

    def act(self, env, obs: np.ndarray) -> np.ndarray:
        base = self.base_for(env).act(env, obs)
        return combine(base, self.learner.act(env, obs), self.scale, env.single_action_space)
