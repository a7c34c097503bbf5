"""RoboDynEnv: one environment of a task as a gymnasium.Env.

It runs the same batched machinery as the vector env with a batch of one, so a single env
and row i of a vector env follow the same code path, episode length included: the env
truncates its own episodes after `max_episode_steps` steps and refuses step() before
reset(), so everything a rollout depends on lives in the env and its `snapshot()` covers
it. RoboDyn tasks are registered without Gymnasium's TimeLimit, OrderEnforcing and
PassiveEnvChecker (see robogym/registration.py), so `gym.make` returns the env itself and
`env.snapshot()` / `env.restore(snap)` work on it; the spec still states the length
(`env.spec.max_episode_steps`, robogym.gymshim.EpisodeSpec).

A wrapper put around the env later (Gymnasium's TimeLimit from `gym.make(id,
max_episode_steps=N)`, its checker from `disable_env_checker=False`, or the user's own)
keeps state of its own: `robogym.snapshot(env)` / `robogym.restore(env, snap)` take and
restore snapshots through Gymnasium's TimeLimit, OrderEnforcing and PassiveEnvChecker, and
refuse any other wrapper, whose state they cannot save.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import gymnasium as gym
import numpy as np

from robogym.checks import check_count, check_dtype, check_seed
from robogym.core import EnvCore, EnvFace, EnvSnapshot, held_wrappers
from robogym.errors import ArgumentTypeError, InvalidArgumentError, ResetNeededError, SnapshotError
from robogym.gymshim import (
    WRAPPER_STATE,
    make_max_episode_steps,
    make_spec,
    prime_checker,
    seeding,
    set_seeding,
)
from robogym.registration import registered_max_episode_steps
from robogym.render import RENDER_MODES, VIEW_KEYWORDS, EnvFrames, RenderModes
from robogym.task import Task

# the keywords of RoboDynEnv itself; every other keyword is the task's
ENV_KEYWORDS = ("max_episode_steps", "render_mode", "width", "height", *VIEW_KEYWORDS, "dtype")


class RoboDynEnv(EnvFace, gym.Env):
    """A Gymnasium Env running `task_class` on the RoboDyn engine (subclasses set it)."""

    task_class: type[Task] = Task
    metadata = {"render_modes": RenderModes(RENDER_MODES), "render_fps": 20}

    def __init__(
        self,
        max_episode_steps: int | None = None,
        render_mode: str | None = None,
        width: int | None = None,
        height: int | None = None,
        camera_id: int | None = None,
        camera_name: str | None = None,
        default_camera_config: dict | None = None,
        max_geom: int = 1000,
        visual_options: dict | None = None,
        dtype=np.float64,
        **task_kwargs,
    ):
        if max_episode_steps is not None:
            check_count("max_episode_steps", max_episode_steps)
        dtype = check_dtype("dtype", dtype)
        self.task_class.check_parameters(task_kwargs, ENV_KEYWORDS, type(self).__name__)
        self.task = self.task_class(**task_kwargs)
        self._task_kwargs = dict(task_kwargs)
        self.core = EnvCore(self.task, num_envs=1, nthread=1, dtype=dtype)
        self.action_space = self.core.action_space
        self.observation_space = self.task.output_space(self.core.observation_space)
        self.metadata = dict(self.metadata, render_fps=int(round(1.0 / self.core.dt)))
        self.render_mode = render_mode
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
        self._obs = np.zeros(self.core.observation_space.shape)  # observe()'s row, float64
        self._started = False  # reset() was called: step() and snapshot() need it
        if max_episode_steps is None:  # the length of the spec gym.make is making, else the registry's
            spec = make_spec()
            if spec is not None:
                max_episode_steps = spec.max_episode_steps
                if max_episode_steps is not None:
                    check_count("the spec's max_episode_steps", max_episode_steps)
            else:
                max_episode_steps = registered_max_episode_steps(type(self))
        made_with = make_max_episode_steps()  # gym.make(id, max_episode_steps=N) wins
        if made_with is not None:
            if made_with != -1:
                check_count("max_episode_steps", made_with)
            max_episode_steps = None if made_with == -1 else made_with
        # episodes truncate after this many steps (None: never)
        self.max_episode_steps = None if max_episode_steps is None else int(max_episode_steps)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """A new episode; `seed` (None or an int >= 0) reseeds the env's random generator.
        RoboDyn's single envs take no reset options: `options` must be None or empty."""
        seed = check_seed("seed", seed)  # a numpy integer becomes the int Gymnasium's seeding takes
        check_options(options, ())
        before = seeding(self)
        try:
            with self.core.all_or_nothing(np.array([0]), "reset"):
                super().reset(seed=seed)
                self.core.rngs[0] = self.np_random
                self.core.reset_rows(np.array([0]))
        except BaseException:
            set_seeding(self, before)
            raise
        self._obs = self.task.observe()[0]
        self._started = True
        return self._shown(self._obs), self._info(self.task.metrics())

    def step(self, action):
        if not self._started:
            raise ResetNeededError("call reset() before step(): the env has no episode yet")
        a = self.core.check_actions(action, batched=False)
        obs, reward, terminated, info = self.core.step(a)
        self._obs = obs[0]
        term = bool(terminated[0])
        # as Gymnasium's TimeLimit: truncated at the limit, whether or not the step also terminated
        limit = self.max_episode_steps
        truncated = limit is not None and bool(self.core.elapsed[0] >= limit)
        return self._shown(self._obs), float(reward[0]), term, truncated, self._info(info)

    def _shown(self, obs: np.ndarray):
        """An observation as the env hands it out: a new array in the env's dtype, or what the
        task makes of it (Task.output_observation)."""
        return self.task.output_observation(obs.astype(self.core.dtype))

    @staticmethod
    def _info(info: dict) -> dict:
        """The single env's info: a float for each (1,) term, row 0's (new) array for a term
        with more axes (Gymnasium's Humanoid reports tendon_length, an array)."""
        return {
            k: float(v[0]) if np.ndim(v) == 1 else np.array(v[0], dtype=np.float64) for k, v in info.items()
        }

    # --- snapshot / restore ---------------------------------------------------------------------
    def snapshot(self) -> EnvSnapshot:
        """Everything the rest of the episode depends on (physics, RNG, step count and so
        the truncation, task state). A wrapper's state is not in it: robogym.snapshot(env)
        covers Gymnasium's TimeLimit and OrderEnforcing around the env."""
        if not self._started:
            raise ResetNeededError("call reset() before snapshot(): the env has no episode yet")
        return self.core.snapshot(np.array([0]), "env", {"obs": self._obs[None]})

    def restore(self, snap: EnvSnapshot) -> None:
        """Return to a snapshot of this task: the same actions then give the same rewards. The
        snapshot is checked whole first; one that does not fit is refused and nothing changes.
        A snapshot taken by robogym.snapshot through wrappers holds their counters too:
        restore it with robogym.restore on the same wrapped env."""
        if isinstance(snap, EnvSnapshot) and (names := held_wrappers(snap)) is not None:
            raise SnapshotError(
                f"snapshot holds the state of the wrappers {names} too: restore it with "
                "robogym.restore(env, snap) on the wrapped env, not env.unwrapped.restore"
            )
        self._restore(snap)

    def _restore(self, snap: EnvSnapshot) -> None:
        """restore without the wrappers' check (robogym.restore writes their part)."""
        self.core.restore(
            snap, np.array([0]), "env", {"obs": (np.float64, self.core.observation_space.shape)}
        )
        self.np_random = self.core.rngs[0]  # Gymnasium's setter: the restored generator's seed is unknown
        self._obs = np.array(snap.extra["obs"][0])
        self._started = True

    # --- rendering -----------------------------------------------------------------------------
    def render(self):
        if not self._started:  # as Gymnasium's OrderEnforcing refuses it
            raise ResetNeededError("call reset() before render(): the env has no episode yet")
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='rgb_array' to make()")
            return None
        return self._frames.frame(0)

    def close(self):
        self._frames.close()

    # --- pickling: rebuild from the constructor arguments, then restore the state ----------
    def __getstate__(self):
        return {
            "kwargs": dict(
                self._task_kwargs,
                max_episode_steps=self.max_episode_steps,
                render_mode=self.render_mode,
                **self._frames.keywords(),
                dtype=self.core.dtype.name,
            ),
            "snapshot": self.snapshot() if self._started else None,  # an env never reset has none
            "spec": self.spec,
        }

    def __setstate__(self, state):
        self.__init__(**state["kwargs"])
        if state["snapshot"] is not None:
            self.restore(state["snapshot"])
        self.spec = state["spec"]


def check_options(options, known: tuple[str, ...]) -> dict:
    """Reset options as a new dict: None or a dict whose keys are all in `known`."""
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise ArgumentTypeError(f"options must be a dict or None, got {type(options).__name__} {options!r}")
    unknown = [k for k in options if k not in known]
    if unknown:
        valid = ", ".join(known) if known else "none (a single RoboDyn env takes no reset options)"
        raise InvalidArgumentError(f"unknown reset option {unknown[0]!r}; the options are: {valid}")
    return dict(options)


# --- snapshots through wrappers ------------------------------------------------------------------
def _chain(env) -> list[gym.Wrapper]:
    """The wrappers around a RoboDyn env, outermost first; refuses one whose state a
    snapshot cannot hold, and an env that is no RoboDyn env."""
    chain = []
    while isinstance(env, gym.Wrapper):
        name = type(env).__name__
        if name not in WRAPPER_STATE or type(env).__module__.split(".")[0] != "gymnasium":
            raise SnapshotError(
                f"cannot snapshot through the wrapper {name}: its state is unknown (a snapshot covers "
                f"Gymnasium's {', '.join(WRAPPER_STATE)} only)"
            )
        chain.append(env)
        env = env.env
    if not isinstance(env, RoboDynEnv):
        raise ArgumentTypeError(
            f"robogym.snapshot needs a RoboDyn env (wrapped or not), got {type(env).__name__}"
        )
    return chain


def _stateful(chain: list) -> list:
    return [w for w in chain if WRAPPER_STATE[type(w).__name__][1]]


def _layout(chain: list) -> list:
    """[(name, settings), ...] of the stateful wrappers of `chain`, outermost first."""
    return [
        (type(w).__name__, {k: getattr(w, k) for k in WRAPPER_STATE[type(w).__name__][0]})
        for w in _stateful(chain)
    ]


def snapshot(env) -> EnvSnapshot:
    """A snapshot of a RoboDyn env as gym.make or the user wrapped it: the env's own (see
    RoboDynEnv.snapshot) plus the state of Gymnasium's TimeLimit (its step count) and
    OrderEnforcing (its reset flag) around it. Any other wrapper is refused (SnapshotError):
    its state could not be restored."""
    chain = _chain(env)
    snap = env.unwrapped.snapshot()
    saved = tuple(
        (name, settings, {k: getattr(w, k) for k in WRAPPER_STATE[name][1]})
        for (name, settings), w in zip(_layout(chain), _stateful(chain), strict=True)
    )
    return dataclasses.replace(snap, wrappers=saved)


def restore(env, snap: EnvSnapshot) -> None:
    """Write back a snapshot that robogym.snapshot took of an env made alike (the same task,
    parameters and wrappers, TimeLimit's max_episode_steps included). Everything is checked
    first; a snapshot that does not fit is refused and nothing changes."""
    chain = _chain(env)
    if not isinstance(snap, EnvSnapshot):
        raise ArgumentTypeError(
            f"restore needs a snapshot taken by a RoboDyn env's snapshot(), got {type(snap).__name__}"
        )
    layout = _layout(chain)
    saved = snap.wrappers
    if not (isinstance(saved, tuple) and all(isinstance(w, tuple) and len(w) == 3 for w in saved)):
        raise SnapshotError(
            f"snapshot's wrapper state must be a tuple of (name, settings, state), got {saved!r}"
        )
    if [(n, s) for n, s, _ in saved] != layout:
        raise SnapshotError(
            f"snapshot was taken through the wrappers {_describe(saved)}; this env has {_describe(layout)}: "
            "refusing to restore it (make the env alike, e.g. the same max_episode_steps)"
        )
    for name, _, state in saved:
        _check_wrapper_state(name, state)
    env.unwrapped._restore(snap)  # checks its own part whole before it writes
    for w, (_, _, state) in zip(_stateful(chain), saved, strict=True):
        for k, v in state.items():
            setattr(w, k, v)
    for w in chain:
        if type(w).__name__ == "PassiveEnvChecker":
            prime_checker(w, env.unwrapped._shown(env.unwrapped._obs))


def _describe(layout) -> str:
    """[TimeLimit(max_episode_steps=400), OrderEnforcing()] for a wrapper layout."""
    parts = []
    for name, settings, *_ in layout:
        items = settings.items() if isinstance(settings, dict) else [("settings", settings)]
        args = ", ".join(f"{k.lstrip('_')}={v!r}" for k, v in items)
        parts.append(f"{name}({args})")
    return "[" + ", ".join(parts) + "]"


def _check_wrapper_state(name: str, state) -> None:
    """A wrapper's saved state holds exactly its attributes, each of the right kind."""
    want = WRAPPER_STATE.get(name, ((), ()))[1]
    if not isinstance(state, dict) or set(state) != set(want):
        raise SnapshotError(f"snapshot's {name} state must hold exactly {list(want)}, got {state!r}")
    if name == "TimeLimit":
        n = state["_elapsed_steps"]
        if n is not None and not (isinstance(n, int) and not isinstance(n, bool) and n >= 0):
            raise SnapshotError(f"snapshot's TimeLimit step count must be an int >= 0 or None, got {n!r}")
    if name == "OrderEnforcing" and not isinstance(state["_has_reset"], bool):
        raise SnapshotError(
            f"snapshot's OrderEnforcing reset flag must be a bool, got {state['_has_reset']!r}"
        )
