"""SB3VecEnv: a RoboDyn vector env as a stable-baselines3 VecEnv, so SB3 trains on the
batched engine directly (no DummyVecEnv of single envs).

SB3's VecEnv contract differs from Gymnasium's VectorEnv in three ways, all handled here:

- step returns (obs, rewards (float32), dones = terminated | truncated, infos), where
  infos is a list of one dict per environment;
- an environment whose episode ends is reset in the same step: obs[i] is already the new
  episode's first observation, infos[i]["terminal_observation"] holds the last one, and
  infos[i]["TimeLimit.truncated"] says the episode was cut by the time limit, not ended by
  the task (SB3 bootstraps the value of truncated episodes);
- seeds and reset options are stored by `seed()` / `set_options()` and used at the next
  `reset()`.

That is Gymnasium's SAME_STEP autoreset, so the adapter requires a vector env built with
autoreset_mode=SAME_STEP (`make_sb3_env` builds one). infos[i] carries every reward term
and task metric of row i at that step (for an ending episode, the values of its last step),
and "episode" = {"r", "l", "t", and the final metrics} when wrapped in SB3's VecMonitor, as
`make_sb3_env` does by default.

The rows of a RoboDyn vector env share one Python object, so get_attr returns that
object's attribute once per requested index, env_method calls the (batched) method once,
and set_attr only sets attributes for all environments at once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.vec_env import VecEnv, VecMonitor
from stable_baselines3.common.vec_env.base_vec_env import VecEnvIndices, VecEnvObs, VecEnvStepReturn

from robogym.errors import InvalidArgumentError

_FINAL_KEYS = ("final_obs", "final_info", "_final_obs", "_final_info")


class SB3VecEnv(VecEnv):
    """stable-baselines3 VecEnv over a Gymnasium VectorEnv in SAME_STEP autoreset mode
    (a RoboDynVectorEnv from `gym.make_vec(id, num_envs, autoreset_mode="SameStep")`)."""

    def __init__(self, vec_env: gym.vector.VectorEnv):
        mode = vec_env.metadata.get("autoreset_mode", AutoresetMode.NEXT_STEP)
        if AutoresetMode(mode) != AutoresetMode.SAME_STEP:
            raise InvalidArgumentError(
                "SB3VecEnv needs a vector env with autoreset_mode=SAME_STEP (SB3 resets in the same step), "
                f"got {AutoresetMode(mode).name}: make it with gym.make_vec(id, num_envs, "
                "autoreset_mode='SameStep') or use robogym.sb3.make_sb3_env"
            )
        self.vec_env = vec_env
        self._actions: np.ndarray | None = None
        super().__init__(vec_env.num_envs, vec_env.single_observation_space, vec_env.single_action_space)

    @property
    def spec(self):
        return getattr(self.vec_env, "spec", None)

    # --- reset / step ----------------------------------------------------------------------------
    def reset(self) -> VecEnvObs:
        seed = None if all(s is None for s in self._seeds) else list(self._seeds)
        obs, info = self.vec_env.reset(seed=seed, options=self._shared_options())
        self.reset_infos = self._split_info(info)
        self._reset_seeds()
        self._reset_options()
        return obs

    def _shared_options(self) -> dict | None:
        """The vector env takes one options dict for all rows: SB3's per-env options must agree."""
        if not any(self._options):
            return None
        first = self._options[0]
        if any(o != first for o in self._options[1:]):
            raise InvalidArgumentError(
                "the rows of a RoboDyn vector env reset with one options dict; got different ones"
            )
        return dict(first)

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions)

    def step_wait(self) -> VecEnvStepReturn:
        if self._actions is None:
            raise RuntimeError("step_wait() called without step_async()")
        obs, reward, terminated, truncated, info = self.vec_env.step(self._actions)
        self._actions = None
        dones = np.logical_or(terminated, truncated)
        infos = self._split_info(info)
        if dones.any():
            final_obs = info["final_obs"]
            final_info = self._split_info(info["final_info"])
            for i in np.flatnonzero(dones):
                infos[i] = final_info[i]
                infos[i]["terminal_observation"] = final_obs[i]  # an array, or a dict of them
        cut = np.logical_and(truncated, np.logical_not(terminated)).tolist()
        for row, value in zip(infos, cut, strict=True):
            row["TimeLimit.truncated"] = value
        return obs, np.asarray(reward, dtype=np.float32), dones, infos

    def _split_info(self, info: dict) -> list[dict[str, Any]]:
        """Gymnasium's dict of (num_envs,) arrays with "_key" masks -> one dict per row.

        A row's scalar becomes a Python scalar (what `.item()` gives); a 1-D numeric array is
        converted once with `tolist()`, which is several times faster than a call per row
        and is called on every step of a training run."""
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for key, value in info.items():
            if key.startswith("_") or key in _FINAL_KEYS:
                continue
            mask = info.get("_" + key)
            rows = range(self.num_envs) if mask is None or np.all(mask) else np.flatnonzero(mask).tolist()
            if isinstance(value, np.ndarray) and value.ndim == 1 and value.dtype.kind in "biuf":
                values = value.tolist()
                for i in rows:
                    infos[i][key] = values[i]
            else:
                for i in rows:
                    v = value[i]
                    infos[i][key] = v.item() if isinstance(v, np.generic) else v
        return infos

    def close(self) -> None:
        self.vec_env.close()

    # --- attributes and methods (shared by every row) ----------------------------------------------
    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        value = getattr(self.vec_env, attr_name)
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        if sorted(self._get_indices(indices)) != list(range(self.num_envs)):
            raise InvalidArgumentError(
                f"the rows of a RoboDyn vector env share one object: set_attr({attr_name!r}) can only set it "
                "for all environments (indices=None)"
            )
        setattr(self.vec_env, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices: VecEnvIndices = None, **method_kwargs):
        """Calls the vector env's (batched) method once; its result is returned for each index."""
        result = getattr(self.vec_env, method_name)(*method_args, **method_kwargs)
        return [result for _ in self._get_indices(indices)]

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper], indices: VecEnvIndices = None) -> list[bool]:
        """The rows are not single envs, so no single-env wrapper (e.g. SB3's Monitor) wraps them."""
        return [False for _ in self._get_indices(indices)]

    # --- rendering ---------------------------------------------------------------------------------
    def get_images(self) -> Sequence[np.ndarray | None]:
        if self.render_mode != "rgb_array":
            return [None] * self.num_envs
        return list(self.vec_env.render())


def make_sb3_env(
    env_id: str,
    num_envs: int,
    seed: int | None = None,
    monitor: bool = True,
    info_keywords: Sequence[str] | None = None,
    wrap: Callable[[gym.vector.VectorEnv], gym.vector.VectorEnv] | None = None,
    **env_kwargs,
) -> VecEnv:
    """`gym.make_vec(env_id, num_envs, autoreset_mode=SAME_STEP, **env_kwargs)` as an SB3 VecEnv,
    wrapped in VecMonitor (episode returns and lengths, plus `info_keywords` at the episode's
    last step; by default every task metric) unless monitor=False. seed is used at the first
    reset (environment i gets seed + i). `wrap`, if given, wraps the vector env first (e.g.
    training.residual.ResidualVectorEnv)."""
    vec_env = gym.make_vec(env_id, num_envs=num_envs, autoreset_mode=AutoresetMode.SAME_STEP, **env_kwargs)
    if wrap is not None:
        vec_env = wrap(vec_env)
    env: VecEnv = SB3VecEnv(vec_env)
    if seed is not None:
        env.seed(seed)
    if monitor:
        if info_keywords is None:
            info_keywords = task_metric_names(vec_env)
        env = VecMonitor(env, info_keywords=tuple(info_keywords))
    return env


def task_metric_names(vec_env: gym.vector.VectorEnv) -> tuple[str, ...]:
    """Names of the task metrics a RoboDyn env reports in info (empty for other envs)."""
    task = getattr(vec_env.unwrapped, "task", None)
    if task is None or not hasattr(task, "metrics"):
        return ()
    return tuple(task.metrics().keys())
