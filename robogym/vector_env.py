"""RoboDynVectorEnv: a native gymnasium.vector.VectorEnv that steps every environment in
one engine call.

`gym.make_vec("RoboDyn/Crane-v0", num_envs=64)` returns it (the registration's
vector_entry_point), not a Sync/Async wrapper around 64 single envs. Gymnasium 1.x
semantics:

- autoreset_mode (metadata["autoreset_mode"], a constructor keyword):
  NEXT_STEP (default): the step after an episode ends resets that environment; its action
  is ignored, it returns the first observation, reward 0, terminated and truncated False.
  SAME_STEP: an environment that ends is reset in the same step; the returned observation
  is the new episode's first, and info["final_obs"], info["final_info"] hold the last ones.
  DISABLED: nothing resets by itself; call reset(options={"reset_mask": mask}). Stepping an
  environment whose episode ended without resetting it raises.
- reset(seed=s) seeds environment i with s + i (a list gives one seed each); seed=None
  draws fresh entropy.
- Truncation after max_episode_steps env steps (also on a step that terminates, as Gymnasium's
  TimeLimit reports it): the argument, else the registration's
  (robogym.registration; none for a task registered nowhere).
- info holds every reward term and task metric as (num_envs,) arrays, each with its
  "_name" mask, as Gymnasium's vector envs do.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from robogym.checks import check_count, check_dtype, check_seed, is_int
from robogym.core import EnvCore, EnvFace, EnvSnapshot
from robogym.env import check_options
from robogym.errors import ArgumentTypeError, InvalidArgumentError, ResetNeededError
from robogym.gymshim import seeding, set_seeding
from robogym.registration import registered_max_episode_steps
from robogym.render import RENDER_MODES, VIEW_KEYWORDS, EnvFrames, RenderModes
from robogym.task import Task


def _autoreset_mode(mode) -> AutoresetMode:
    """An AutoresetMode from the enum itself, its value ("NextStep") or its name ("NEXT_STEP")."""
    if isinstance(mode, AutoresetMode):
        return mode
    names = ", ".join(m.name for m in AutoresetMode)
    if not isinstance(mode, str):
        raise ArgumentTypeError(
            f"autoreset_mode must be one of {names} (or an AutoresetMode), got {type(mode).__name__} {mode!r}"
        )
    key = mode.replace("_", "").lower()
    for m in AutoresetMode:
        if key in (m.value.lower(), m.name.replace("_", "").lower()):
            return m
    raise InvalidArgumentError(f"autoreset_mode must be one of {names} (or an AutoresetMode), got {mode!r}")


# the keywords of RoboDynVectorEnv itself; every other keyword is the task's
VECTOR_KEYWORDS = (
    "num_envs",
    "autoreset_mode",
    "max_episode_steps",
    "render_mode",
    "width",
    "height",
    *VIEW_KEYWORDS,
    "nthread",
    "dtype",
)
RESET_OPTIONS = ("reset_mask",)


class RoboDynVectorEnv(EnvFace, VectorEnv):
    """num_envs environments of `task_class` (subclasses set it), stepped as one batch."""

    task_class: type[Task] = Task
    metadata = {
        "render_modes": RenderModes(RENDER_MODES),
        "render_fps": 20,
        "autoreset_mode": AutoresetMode.NEXT_STEP,
    }

    def __init__(
        self,
        num_envs: int = 1,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        max_episode_steps: int | None = None,
        render_mode: str | None = None,
        width: int | None = None,
        height: int | None = None,
        camera_id: int | None = None,
        camera_name: str | None = None,
        default_camera_config: dict | None = None,
        max_geom: int = 1000,
        visual_options: dict | None = None,
        nthread: int | None = None,
        dtype=np.float64,
        **task_kwargs,
    ):
        self.autoreset_mode = _autoreset_mode(autoreset_mode)
        check_count("num_envs", num_envs)
        if max_episode_steps is not None:
            check_count("max_episode_steps", max_episode_steps)
        dtype = check_dtype("dtype", dtype)
        self.task_class.check_parameters(task_kwargs, VECTOR_KEYWORDS, type(self).__name__)
        self.task = self.task_class(**task_kwargs)
        self._task_kwargs = dict(task_kwargs)
        self.core = EnvCore(self.task, num_envs=num_envs, nthread=nthread, dtype=dtype)
        self.num_envs = self.core.num_envs
        if max_episode_steps is None:
            max_episode_steps = registered_max_episode_steps(type(self))
        self.max_episode_steps = None if max_episode_steps is None else int(max_episode_steps)
        self.single_action_space = self.core.action_space
        self.single_observation_space = self.task.output_space(self.core.observation_space)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.render_mode = render_mode
        self.metadata = dict(
            self.metadata, autoreset_mode=self.autoreset_mode, render_fps=int(round(1.0 / self.core.dt))
        )
        modes = self.metadata["render_modes"]
        self._frames = EnvFrames(
            self.physics,
            self.task,
            render_mode,
            modes,
            width,
            height,
            camera_id=camera_id,
            camera_name=camera_name,
            default_camera_config=default_camera_config,
            max_geom=max_geom,
            visual_options=visual_options,
        )
        self._nthread = nthread
        self._obs = np.zeros((self.num_envs, *self.core.observation_space.shape))  # observe()'s, float64
        self._done = np.zeros(self.num_envs, dtype=bool)  # episode ended at the last step
        self._all_rows = np.ones(self.num_envs, dtype=bool)  # the info mask when every row reports
        self._every_row = np.arange(self.num_envs)
        self._started = False

    # --- reset ---------------------------------------------------------------------------------
    def reset(self, *, seed: int | list | None = None, options: dict[str, Any] | None = None):
        """New episodes for every environment, or for those of options["reset_mask"] (a bool
        array of shape (num_envs,)). seed: None (fresh entropy on the first reset, the
        environments' own generators afterwards), an int s >= 0 (environment i gets s + i) or a
        list of num_envs entries, each an int >= 0 or None. Every argument is checked before
        anything is reseeded or reset."""
        options = check_options(options, RESET_OPTIONS)
        mask = options.pop("reset_mask", None)
        if mask is None:
            rows = np.arange(self.num_envs)
        else:
            mask = self._check_mask(mask)
            rows = np.flatnonzero(mask)
        seeds = self._seeds(seed, rows)
        before = seeding(self)
        try:
            with self.core.all_or_nothing(rows, "reset"):
                if seed is not None or not self._started:
                    if is_int(seed) or seed is None:
                        set_seeding(self, gym.utils.seeding.np_random(None if seed is None else int(seed)))
                    self.core.seed_rows(rows, seeds)
                self.core.reset_rows(rows)
        except BaseException:
            set_seeding(self, before)
            raise
        self._started = True
        self._done[rows] = False
        self._obs[rows] = self.task.observe()[rows]
        info = self._batch_info(self.task.metrics(), rows)
        return self._shown(self._obs), info

    def _check_mask(self, mask) -> np.ndarray:
        want = f"a bool numpy array of shape ({self.num_envs},)"
        if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_:
            raise ArgumentTypeError(f"options['reset_mask'] must be {want}, got {mask!r}")
        if mask.shape != (self.num_envs,):
            raise InvalidArgumentError(f"options['reset_mask'] must be {want}, got shape {mask.shape}")
        if not mask.any():
            raise InvalidArgumentError("options['reset_mask'] must select at least one environment")
        return mask

    def _seeds(self, seed, rows: np.ndarray) -> list:
        """The seed of each of `rows` (None: fresh entropy), `seed` checked whole first."""
        if seed is None:
            return [None] * len(rows)
        if is_int(seed):
            return [check_seed("seed", seed) + int(r) for r in rows]
        if not (isinstance(seed, list | tuple) or (isinstance(seed, np.ndarray) and seed.ndim == 1)):
            raise ArgumentTypeError(
                f"seed must be None, an int >= 0 or a list of num_envs={self.num_envs} such seeds, "
                f"got {type(seed).__name__} {seed!r}"
            )
        seeds = list(seed)
        if len(seeds) != self.num_envs:
            raise InvalidArgumentError(
                f"a list of seeds must have num_envs={self.num_envs} entries, got {len(seeds)}"
            )
        checked = [check_seed(f"seed of environment {i}", s) for i, s in enumerate(seeds)]
        return [checked[r] for r in rows]

    # --- step ----------------------------------------------------------------------------------
    def step(self, actions):
        if not self._started:
            raise ResetNeededError("call reset() before step(): the environments have no episode yet")
        a = self.core.check_actions(actions, batched=True)
        restart = None  # NEXT_STEP: the rows whose episode ended at the last step
        if np.count_nonzero(self._done):
            if self.autoreset_mode != AutoresetMode.NEXT_STEP:
                rows = np.flatnonzero(self._done).tolist()
                why = (
                    "autoreset is DISABLED"
                    if self.autoreset_mode == AutoresetMode.DISABLED
                    else "their autoreset failed"
                )
                raise ResetNeededError(
                    f"environments {rows[:8]} ended and {why}: reset them with "
                    "reset(options={'reset_mask': mask}) before stepping"
                )
            restart = np.flatnonzero(self._done)
        undo = None if restart is None else self.core.undo_point(self._every_row)
        obs, reward, terminated, info = self.core.step(a)
        if self.max_episode_steps is None:
            truncated = np.zeros(self.num_envs, dtype=bool)
        else:
            truncated = self.core.elapsed >= self.max_episode_steps
        if restart is not None:
            try:
                self._restart(restart, obs, reward, terminated, truncated, info)
            except BaseException as e:
                self.core.roll_back(undo)
                e.add_note("the step was undone: every environment is as before this step() call")
                raise
        done = terminated | truncated
        out_info = self._every_row_info(info)
        if self.autoreset_mode == AutoresetMode.SAME_STEP and np.count_nonzero(done):
            rows = np.flatnonzero(done)
            final_obs = np.full(self.num_envs, None, dtype=object)
            for r in rows:
                final_obs[r] = self._shown(obs[r])
            out_info["final_obs"] = final_obs
            out_info["_final_obs"] = done.copy()
            out_info["final_info"] = self._batch_info(info, rows)
            out_info["_final_info"] = done.copy()
            try:
                self.core.reset_rows(rows)
            except BaseException as e:
                self._done, self._obs = done, obs  # stepped; the ended rows wait for reset()
                e.add_note(
                    f"this step was applied; environments {rows.tolist()[:8]} ended and stay at their "
                    "episode's end: reset them with reset(options={'reset_mask': mask})"
                )
                raise
            obs[rows] = self.task.observe()[rows]
            self._done[:] = False
        else:
            self._done = done
        self._obs = obs
        return self._shown(obs), reward, terminated, truncated, out_info

    def _shown(self, obs: np.ndarray):
        """Observations as the env hands them out: new arrays in the env's dtype, or what the
        task makes of them (Task.output_observation)."""
        return self.task.output_observation(obs.astype(self.core.dtype))

    def _restart(self, rows, obs, reward, terminated, truncated, info) -> None:
        """NEXT_STEP's reset of `rows` (their action was ignored): in place, each row of the
        step's outputs becomes the new episode's first (reward 0, not done, reset metrics)."""
        self.core.reset_rows(rows)
        obs[rows] = self.task.observe()[rows]
        reward[rows] = 0.0
        terminated[rows] = False
        truncated[rows] = False
        reset_info = self.task.metrics()
        for k, v in info.items():
            v[rows] = reset_info[k][rows] if k in reset_info else 0.0

    def _every_row_info(self, info: dict) -> dict:
        """Gymnasium's vector info when every row reports: info's own arrays (new each step,
        see Task.evaluate), each with an all-True "_name" mask of its own."""
        out = {}
        for k, v in info.items():
            out[k] = v
            out["_" + k] = self._all_rows.copy()
        return out

    def _batch_info(self, info: dict, rows: np.ndarray) -> dict:
        """Gymnasium's vector info for `rows`: each value (num_envs, ...) float64, 0 outside
        rows, with a "_name" mask of rows; every array new."""
        mask = np.zeros(self.num_envs, dtype=bool)
        mask[rows] = True
        out = {}
        for k, v in info.items():
            v = np.asarray(v, dtype=np.float64)
            out[k] = np.where(mask.reshape(-1, *(1,) * (v.ndim - 1)), v, 0.0)
            out["_" + k] = mask.copy()
        return out

    # --- snapshot / restore ---------------------------------------------------------------------
    def snapshot(self, rows=None) -> EnvSnapshot:
        """Everything the following steps of `rows` (default all; indices, each once) depend
        on: physics, each environment's RNG, step counters, task state, autoreset flags, last
        observation."""
        if not self._started:
            raise ResetNeededError("call reset() before snapshot(): the environments have no episode yet")
        idx = np.arange(self.num_envs) if rows is None else self.core.check_rows(rows, "snapshot rows")
        return self.core.snapshot(idx, "vector", {"obs": self._obs[idx], "done": self._done[idx]})

    def restore(self, snap: EnvSnapshot, rows=None) -> None:
        """Write a snapshot of this vector env's task back into `rows` (default: the rows it
        was taken from). It is checked whole first (kind, task, parameters, model digest,
        shapes, rows); one that does not fit is refused and nothing changes. An env never
        reset takes only a snapshot of all its rows (the others would have no episode)."""
        if not self._started and isinstance(snap, EnvSnapshot):
            k = len(getattr(snap.physics, "rows", ()))
            if k != self.num_envs:
                raise ResetNeededError(
                    f"this env was never reset: restoring {k} of its {self.num_envs} environments would "
                    "leave the others without an episode; reset() first or restore a snapshot of all of them"
                )
        extra = {"obs": (np.float64, self.core.observation_space.shape), "done": (np.bool_, ())}
        idx = self.core.restore(snap, rows, "vector", extra)
        self._obs[idx] = snap.extra["obs"]
        self._done[idx] = snap.extra["done"]
        self._started = True

    # --- rendering -----------------------------------------------------------------------------
    def render(self):
        """A tuple of num_envs rgb frames (as Gymnasium's SyncVectorEnv returns)."""
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='rgb_array'")
            return None
        return tuple(self._frames.frame(i) for i in range(self.num_envs))

    def close_extras(self, **kwargs):
        self._frames.close()

    # --- pickling -------------------------------------------------------------------------------
    def __getstate__(self):
        kwargs = dict(
            self._task_kwargs,
            num_envs=self.num_envs,
            autoreset_mode=self.autoreset_mode,
            max_episode_steps=self.max_episode_steps,
            render_mode=self.render_mode,
            **self._frames.keywords(),
            nthread=self._nthread,
            dtype=self.core.dtype.name,
        )
        snap = self.snapshot() if self._started else None  # an env never reset has none
        return {"kwargs": kwargs, "snapshot": snap, "started": self._started, "spec": self.spec}

    def __setstate__(self, state):
        self.__init__(**state["kwargs"])
        if state["snapshot"] is not None:
            self.restore(state["snapshot"])
        self._started = state["started"]
        self.spec = state["spec"]
