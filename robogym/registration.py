"""The mechanism by which tasks register themselves (the list of tasks lives with the tasks).

A task's own module declares its entry and registers it when imported:

    register(TaskEntry(id="RoboDyn/Crane-v0", entry_point=f"{__name__}:CraneEnv", ...))

`register` puts the task in Gymnasium's registry with string entry points and adds its entry
to `TASKS`, which the tools above read, so that they work on any task without a list of
their own: `baselines` (name -> "module:factory", factory(env, **kwargs) -> a Policy for a
vector env of the task; `envs.baselines.make_baseline` looks them up here), `scenarios`
(name -> env keywords of a fixed evaluation scenario, e.g. the crane's "fixed": no reset
noise), `tuning` (baseline name -> how `robodyn tune` sweeps that baseline's gain;
training.experiments reads it) and `training` (algorithm -> the task's own settings for
`robodyn train` where they differ from its general defaults: TRAINING_KEYS; training.train
reads them).

Importing robogym imports every package that declares tasks under the entry-point group
`robodyn.tasks` (Python package metadata: RoboDyn's own tasks are the `envs` package's, and
a user's package can declare its own), so `gym.make("RoboDyn/...")` works after `import
robogym` without robogym naming a module above it.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from dataclasses import dataclass, field

import gymnasium as gym

from robogym.errors import InvalidArgumentError, UnknownNameError
from robogym.gymshim import register_with_length

ENTRY_POINT_GROUP = "robodyn.tasks"


@dataclass(frozen=True)
class TaskEntry:
    """One registered task. `max_episode_steps` is the episode length: the registered spec's
    `max_episode_steps` (register_task), which the env reads and truncates its episodes by
    itself (None: a task without a time limit, never truncated unless the env is made with
    one)."""

    id: str
    entry_point: str  # single gymnasium.Env, "module:class"
    vector_entry_point: str  # native RoboDynVectorEnv, "module:class"
    max_episode_steps: int | None
    summary: str
    baselines: dict = field(default_factory=dict)  # name -> "module:factory"
    scenarios: dict = field(default_factory=dict)  # name -> env keywords
    tuning: dict = field(default_factory=dict)  # baseline name -> its gain sweep (envs.tuning.Tuning)
    training: dict = field(default_factory=dict)  # "ppo"/"sac" -> {key of TRAINING_KEYS: value}


# what a task may declare for `robodyn train`, per algorithm: its step budget, the rows of its
# vector env, whether VecNormalize wraps it, and keywords of the algorithm's constructor
TRAINING_KEYS = ("timesteps", "num_envs", "vecnormalize", "algo_kwargs")
TRAINING_ALGOS = ("ppo", "sac")


def check_training(task_id: str, training: dict) -> dict:
    """A task's declared training settings, checked: algorithm names of TRAINING_ALGOS,
    each a dict of TRAINING_KEYS (counts at least 1, vecnormalize a bool, algo_kwargs a
    dict); an InvalidArgumentError naming the task and the entry otherwise."""
    for algo, settings in training.items():
        where = f"task {task_id!r}: training[{algo!r}]"
        if algo not in TRAINING_ALGOS:
            raise InvalidArgumentError(f"{where}: the algorithm must be one of {TRAINING_ALGOS}")
        if not isinstance(settings, dict):
            raise InvalidArgumentError(f"{where} must be a dict of {TRAINING_KEYS}, got {settings!r}")
        for key, value in settings.items():
            if key not in TRAINING_KEYS:
                raise InvalidArgumentError(f"{where}: unknown key {key!r}; known: {', '.join(TRAINING_KEYS)}")
            ok = {
                "timesteps": isinstance(value, int) and not isinstance(value, bool) and value >= 1,
                "num_envs": isinstance(value, int) and not isinstance(value, bool) and value >= 1,
                "vecnormalize": isinstance(value, bool),
                "algo_kwargs": isinstance(value, dict),
            }[key]
            if not ok:
                raise InvalidArgumentError(f"{where}[{key!r}]: invalid value {value!r}")
    return {algo: dict(settings) for algo, settings in training.items()}


# every registered task, in registration order (a live list: register appends to it)
TASKS: list[TaskEntry] = []


def register(entry: TaskEntry) -> None:
    """Register a task with Gymnasium (register_task) and add its entry to TASKS; registering
    the same entry again changes nothing, another entry under a registered id is refused."""
    for known in TASKS:
        if known.id == entry.id:
            if known != entry:
                raise InvalidArgumentError(f"task {entry.id!r} is registered already, with another entry")
            return
    register_task(entry.id, entry.entry_point, entry.vector_entry_point, entry.max_episode_steps)
    TASKS.append(entry)


def register_task(id: str, entry_point: str, vector_entry_point: str, max_episode_steps: int | None) -> None:
    """Register a RoboDyn task with Gymnasium (idempotent).

    The spec states the episode length, `gym.spec(id).max_episode_steps`, as libraries read
    it, and the env owns it: it truncates its own episodes and refuses step() before
    reset(), so Gymnasium's TimeLimit, OrderEnforcing and PassiveEnvChecker are left out and
    gym.make returns the env itself, whose snapshot() covers everything a rollout depends
    on, its step count included. The spec is a robogym.gymshim.EpisodeSpec, whose length
    gym.make does not turn into a TimeLimit (a second step counter beside the env's, out of
    its snapshot's reach); gym.make_vec hands it to the native vector env. (An outermost
    wrapper through the spec's additional_wrappers would have kept Gymnasium's wrappers, but
    gymnasium.make_vec refuses a vector entry point when a spec has additional_wrappers,
    and the native vector env is the point of RoboDyn.)
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
    )
    register_with_length(id, max_episode_steps)


def discover_tasks() -> None:
    """Import every package the installed distributions declare under the entry-point group
    `robodyn.tasks`; each registers its tasks when imported."""
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        ep.load()


def entry(task_id: str) -> TaskEntry:
    """The TaskEntry of a registered RoboDyn task id; KeyError naming the known ids."""
    for t in TASKS:
        if t.id == task_id:
            return t
    raise UnknownNameError(f"no RoboDyn task {task_id!r}; registered: {', '.join(t.id for t in TASKS)}")


def training_settings(task_id: str, algo: str) -> dict:
    """The settings a registered task declares for training with `algo` ({} for a task that
    declares none, or an id that is not a RoboDyn task)."""
    for t in TASKS:
        if t.id == task_id:
            return dict(t.training.get(algo, {}))
    return {}


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


def registered_max_episode_steps(env_class: type) -> int | None:
    """The episode length Gymnasium's registry holds for the spec whose entry point or vector
    entry point is `env_class` (a task registered outside TASKS too): a max_episode_steps in
    the spec's kwargs, else the spec's own (register_task's); None if it has neither."""
    path = f"{env_class.__module__}:{env_class.__qualname__}"
    for spec in gym.registry.values():
        if path in (spec.entry_point, spec.vector_entry_point):
            return spec.kwargs.get("max_episode_steps", spec.max_episode_steps)
    return None
