"""RoboDynEnv: one environment of a task as a gymnasium.Env.

It runs the same batched machinery as the vector env with a batch of one, so a single env
and row i of a vector env follow the same code path. Episode length is left to Gymnasium's
TimeLimit wrapper (`max_episode_steps` in the registration), as for Gymnasium's own MuJoCo
environments.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from robogym.core import EnvCore, EnvSnapshot
from robogym.render import EnvFrames
from robogym.task import Task


class RoboDynEnv(gym.Env):
    """A Gymnasium Env running `task_class` on the RoboDyn engine (subclasses set it)."""

    task_class: type[Task] = Task
    metadata = {"render_modes": ["rgb_array"], "render_fps": 20}

    def __init__(self, render_mode: str | None = None, width: int = 640, height: int = 480, **task_kwargs):
        self.task = self.task_class(**task_kwargs)
        self._task_kwargs = dict(task_kwargs)
        self.core = EnvCore(self.task, num_envs=1, nthread=1)
        self.action_space = self.core.action_space
        self.observation_space = self.core.observation_space
        self.metadata = dict(self.metadata, render_fps=int(round(1.0 / self.core.dt)))
        self.render_mode = render_mode
        modes = self.metadata["render_modes"]
        self._frames = EnvFrames(self.physics, render_mode, modes, width, height, self.task.render_camera)
        self._obs = np.zeros(self.observation_space.shape)

    @property
    def physics(self):
        return self.core.physics

    @property
    def dt(self) -> float:
        """Seconds of simulated time per env step."""
        return self.core.dt

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self.core.rngs[0] = self.np_random
        self.core.reset_rows(np.array([0]))
        self._obs = self.task.observe()[0]
        return self._obs.copy(), self._info(self.task.metrics())

    def step(self, action):
        a = self.core.check_actions(action, batched=False)
        obs, reward, terminated, info = self.core.step(a)
        self._obs = obs[0]
        return self._obs.copy(), float(reward[0]), bool(terminated[0]), False, self._info(info)

    @staticmethod
    def _info(info: dict) -> dict:
        return {k: float(v[0]) for k, v in info.items()}

    # --- snapshot / restore ---------------------------------------------------------------------
    def snapshot(self) -> EnvSnapshot:
        """Everything the rest of the episode depends on (physics, RNG, step count, task)."""
        return self.core.snapshot(np.array([0]), {"obs": self._obs[None]})

    def restore(self, snap: EnvSnapshot) -> None:
        """Return to a snapshot of this task: the same actions then give the same rewards."""
        if isinstance(snap, EnvSnapshot) and len(snap.elapsed) != 1:
            raise ValueError(f"snapshot holds {len(snap.elapsed)} environments; a single env restores one")
        self.core.restore(snap, np.array([0]))
        self._np_random = self.core.rngs[0]
        self._obs = np.array(snap.extra["obs"][0])

    # --- rendering -----------------------------------------------------------------------------
    def render(self):
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='rgb_array' to make()")
            return None
        return self._frames.frame(0)

    def close(self):
        self._frames.close()

    # --- pickling: rebuild from the constructor arguments, then restore the state ----------
    def __getstate__(self):
        w, h = self._frames.size
        return {
            "kwargs": dict(self._task_kwargs, render_mode=self.render_mode, width=w, height=h),
            "snapshot": self.snapshot(),
            "spec": self.spec,
        }

    def __setstate__(self, state):
        self.__init__(**state["kwargs"])
        self.restore(state["snapshot"])
        self.spec = state["spec"]
