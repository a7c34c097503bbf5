"""Every RoboDyn task, registered under the `RoboDyn/` namespace with string entry points
(nothing is imported until an env is made).

A task's entry also declares what the tools above it need to know about it, so that they
work on any task without a list of tasks of their own:
- `baselines`: name -> "module:factory", factory(env, **kwargs) -> a Policy for a vector
  env of the task (`envs.baselines.make_baseline` looks them up here);
- `scenarios`: name -> env keywords of a fixed evaluation scenario (e.g. the crane's
  "fixed": no reset noise, the 10 m move every time);
- `tuning`: baseline name -> Tuning, how `robodyn tune` sweeps that baseline's gain to
  bracket its best setting; the result is stored with the command that made it
  (envs/baselines/tuned/), and the baseline's factory reads its default gains from there.
"""

from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass, field

import gymnasium as gym

from robogym.errors import UnknownNameError


@dataclass(frozen=True)
class Tuning:
    """A gain sweep of one baseline on one fixed scenario (training.experiments.tune).

    `parameter` runs over a geometric grid from `start` to `stop` in `points` points,
    crossed with every combination of `cross` (other parameters' values). A setting counts
    if its final `require` metric is below `require_below`; among those the best has the
    least final `minimize` metric. The grid is extended past an end while the best sits
    there (so a worse or failing setting lies on both sides of it: the trend reversed), then
    refined with `refine` points between the best's neighbours. The best values are stored
    to `digits` significant figures, about what the refined grid resolves. Each setting runs
    `episodes` episodes of the scenario, seeded consecutively (for a scenario whose start
    follows the episode's seed, such as the rocket's four fixed starts, every start once),
    and its metrics are their means.
    """

    parameter: str
    start: float
    stop: float
    points: int
    scenario: str
    minimize: str
    require: str
    require_below: float
    cross: tuple = ()  # ((name, (value, ...)), ...)
    refine: int = 17
    max_extensions: int = 4
    digits: int = 3
    episodes: int = 1


@dataclass(frozen=True)
class TaskEntry:
    """One registered task. `max_episode_steps` is the episode length: gym.make and
    gym.make_vec hand it to the env's constructor (the spec's kwargs), and the env truncates
    its episodes itself; it is read here, before any task module is imported."""

    id: str
    entry_point: str  # single gymnasium.Env
    vector_entry_point: str  # native RoboDynVectorEnv
    max_episode_steps: int
    summary: str
    baselines: dict = field(default_factory=dict)  # name -> "module:factory"
    scenarios: dict = field(default_factory=dict)  # name -> env keywords
    tuning: dict = field(default_factory=dict)  # baseline name -> Tuning


TASKS = (
    TaskEntry(
        id="RoboDyn/Crane-v0",
        entry_point="envs.crane_v0:CraneEnv",
        vector_entry_point="envs.crane_v0:CraneVectorEnv",
        max_episode_steps=400,
        summary="trolley + payload on a 3 m cable: move 10 m, arrive still (acceleration drive)",
        baselines={"pd": "envs.baselines.crane:crane_pd", "mpc": "envs.baselines.crane:crane_mpc"},
        scenarios={"fixed": {"reset_noise_scale": 0.0}},
        tuning={
            "pd": Tuning(
                parameter="omega",
                start=0.25,
                stop=4.0,
                points=25,
                cross=(("zeta", (1.0, 0.7)),),
                scenario="fixed",
                minimize="swing_amplitude",
                require="position_error",
                require_below=0.05,
            )
        },
    ),
    TaskEntry(
        id="RoboDyn/Tracking-v0",
        entry_point="envs.tracking_v0:TrackingEnv",
        vector_entry_point="envs.tracking_v0:TrackingVectorEnv",
        max_episode_steps=400,
        summary="5-segment 1.9 m arm, 6 kg gripper, 400 N m motors: follow a target round a tilted circle",
        baselines={
            "pd": "envs.baselines.tracking:tracking_pd",
            "mpc": "envs.baselines.tracking:tracking_mpc",
            "mpc_nopreview": "envs.baselines.tracking:tracking_mpc_nopreview",
        },
        scenarios={"fixed": {"reset_noise_scale": 0.0}},
        tuning={
            "pd": Tuning(
                parameter="omega",
                start=8.0,
                stop=256.0,
                points=21,
                cross=(("zeta", (1.0, 0.7, 0.5, 0.35, 0.25, 0.15, 0.1, 0.05)),),
                scenario="fixed",
                minimize="rms_error",
                require="overspeed",
                require_below=0.5,
            )
        },
    ),
    TaskEntry(
        id="RoboDyn/Rocket-v0",
        entry_point="envs.rocket_v0:RocketEnv",
        vector_entry_point="envs.rocket_v0:RocketVectorEnv",
        max_episode_steps=400,
        summary="lander under gimballed thrust in [0.4 W, 2 W]: touch down softly on the pad (ctrl)",
        baselines={"pd": "envs.baselines.rocket:rocket_pd", "mpc": "envs.baselines.rocket:rocket_mpc"},
        scenarios={"fixed": {"reset_noise_scale": 0.0}},
        tuning={
            # the lateral loop's omega, on the four fixed starts: the best lands nearest the
            # pad's centre on average, among those touching down under 1 m/s on average
            "pd": Tuning(
                parameter="omega",
                start=0.05,
                stop=3.2,
                points=13,
                scenario="fixed",
                minimize="pad_distance",
                require="touchdown_speed",
                require_below=1.0,
                episodes=4,
            )
        },
    ),
    TaskEntry(
        id="RoboDyn/Humanoid-v0",
        entry_point="envs.humanoid_v0:HumanoidEnv",
        vector_entry_point="envs.humanoid_v0:HumanoidVectorEnv",
        max_episode_steps=1000,
        summary="1.65 m, 55 kg humanoid on a free base: stay standing 20 s under pushes (pd_target)",
        baselines={"pd": "envs.baselines.humanoid:humanoid_pd"},
        scenarios={"fixed": {"reset_noise_scale": 0.0}, "no_push": {"push_magnitude": 0.0}},
    ),
    TaskEntry(
        id="RoboDyn/Quadruped-v0",
        entry_point="envs.quadruped_v0:QuadrupedEnv",
        vector_entry_point="envs.quadruped_v0:QuadrupedVectorEnv",
        max_episode_steps=1000,
        summary="Go1-sized quadruped on a floor: walk at a commanded forward speed and yaw rate (pd_target)",
        baselines={"pd": "envs.baselines.quadruped:quadruped_pd"},
        scenarios={
            "fixed": {"reset_noise_scale": 0.0, "command": (0.5, 0.0)},
            "stand": {"reset_noise_scale": 0.0, "command": (0.0, 0.0)},
        },
    ),
)


def register_task(id: str, entry_point: str, vector_entry_point: str, max_episode_steps: int | None) -> None:
    """Register a RoboDyn task with Gymnasium (idempotent).

    The env owns its episode length (`max_episode_steps` goes into the spec's kwargs, so
    gym.make and gym.make_vec hand it to the env's constructor) and refuses step() before
    reset() itself, and Gymnasium's own TimeLimit, OrderEnforcing and PassiveEnvChecker are
    left out: gym.make returns the env itself, whose snapshot() covers everything a rollout
    depends on. (An outermost wrapper through the spec's additional_wrappers would have
    kept them, but gymnasium.make_vec refuses a vector entry point when a spec has
    additional_wrappers, and the native vector env is the point of RoboDyn.)
    """
    if id in gym.registry:
        return
    gym.register(
        id=id,
        entry_point=entry_point,
        vector_entry_point=vector_entry_point,
        max_episode_steps=None,
        order_enforce=False,
        disable_env_checker=True,
        kwargs={"max_episode_steps": max_episode_steps},
    )


def register_all() -> None:
    """Register every task of TASKS with Gymnasium (idempotent)."""
    for t in TASKS:
        register_task(t.id, t.entry_point, t.vector_entry_point, t.max_episode_steps)


def entry(task_id: str) -> TaskEntry:
    """The TaskEntry of a registered RoboDyn task id; KeyError naming the known ids."""
    for t in TASKS:
        if t.id == task_id:
            return t
    raise UnknownNameError(f"no RoboDyn task {task_id!r}; registered: {', '.join(t.id for t in TASKS)}")


def entry_of(env) -> TaskEntry | None:
    """The TaskEntry of an env (single or vector), by its spec's id, or else by its class
    being one of an entry's entry points; None for a task that is not in TASKS."""
    spec = getattr(env, "spec", None)
    if spec is not None:
        for t in TASKS:
            if t.id == spec.id:
                return t
    cls = type(getattr(env, "unwrapped", env))
    path = f"{cls.__module__}:{cls.__qualname__}"
    for t in TASKS:
        if path in (t.entry_point, t.vector_entry_point):
            return t
    return None


def load(reference: str):
    """The object a "module:name" string names (an entry point), imported now."""
    module, _, name = reference.partition(":")
    return getattr(importlib.import_module(module), name)


def gym_make_max_episode_steps() -> int | None:
    """The `max_episode_steps` argument of the gymnasium.make call that is building an env
    right now; None when no gym.make call is on the stack or it was not given.

    gym.make keeps that argument for the TimeLimit it wraps around the env and never passes
    it to the constructor. A RoboDyn env owns its episode length, so it reads the argument
    from make's frame and ends its episodes at the same step as that TimeLimit (never, for
    gym.make's -1, which adds no TimeLimit); otherwise `gym.make(id, max_episode_steps=1000)`
    would still end every episode at the registered length.
    """
    make_code = gym.envs.registration.make.__code__
    frame = sys._getframe(1)
    for _ in range(8):  # make -> the entry point -> (subclass __init__ chain) -> here
        if frame is None:
            return None
        if frame.f_code is make_code:
            return frame.f_locals.get("max_episode_steps")
        frame = frame.f_back
    return None


def registered_max_episode_steps(env_class: type) -> int | None:
    """The episode length Gymnasium's registry holds for the spec whose entry point or vector
    entry point is `env_class` (a task registered outside TASKS too): the spec's kwargs'
    max_episode_steps (register_task), else the spec's own; None if it has neither."""
    path = f"{env_class.__module__}:{env_class.__qualname__}"
    for spec in gym.registry.values():
        if path in (spec.entry_point, spec.vector_entry_point):
            return spec.kwargs.get("max_episode_steps", spec.max_episode_steps)
    return None
