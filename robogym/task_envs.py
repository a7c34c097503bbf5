"""A task's Gymnasium classes and registration in one declaration:

    CraneEnv, CraneVectorEnv = task_envs(
        CraneTask, "RoboDyn/Crane-v0", _DOC, module=__name__, max_episode_steps=400,
        summary="...", baselines={...}, scenarios={...},
        training={"ppo": {"timesteps": 400_000, "vecnormalize": True}},
    )

makes the single env (RoboDynEnv) and the native vector env (RoboDynVectorEnv) of the task,
named `<Name>Env` and `<Name>VectorEnv` after the id and documented by `doc` (its
`{arguments}` replaced by the table of the task's declared parameters: robogym.declare),
and registers them (robogym.registration.register) under string entry points into `module`,
which must bind the two classes to those names (as the assignment above does), so that
Gymnasium and pickling find them there. `env_classes` makes the two classes alone, for a
task registered some other way (robogym/mjcf_env.py: Gymnasium's registry only, not
`robogym.TASKS`, whose every task is made without keywords by the generic checks).
`training` holds the task's own `robodyn train` settings per algorithm (its step budget,
rows, VecNormalize, algorithm keywords: robogym.registration.TRAINING_KEYS), which the
command uses where its user gives none."""

from __future__ import annotations

from robogym.declare import arguments_section
from robogym.env import RoboDynEnv
from robogym.registration import TaskEntry, check_training, register
from robogym.task import Task
from robogym.vector_env import RoboDynVectorEnv


def task_envs(
    task_class: type[Task],
    env_id: str,
    doc: str,
    *,
    module: str,
    max_episode_steps: int | None,
    summary: str,
    baselines: dict | None = None,
    scenarios: dict | None = None,
    tuning: dict | None = None,
    training: dict | None = None,
    name: str | None = None,
) -> tuple[type[RoboDynEnv], type[RoboDynVectorEnv]]:
    """(single env class, vector env class) of `task_class`, registered as `env_id` (the
    classes named after `name` where given: see env_classes)."""
    single, vector = env_classes(task_class, env_id, doc, module=module, name=name)
    register(
        TaskEntry(
            id=env_id,
            entry_point=f"{module}:{single.__name__}",
            vector_entry_point=f"{module}:{vector.__name__}",
            max_episode_steps=max_episode_steps,
            summary=summary,
            baselines=dict(baselines or {}),
            scenarios=dict(scenarios or {}),
            tuning=dict(tuning or {}),
            training=check_training(env_id, dict(training or {})),
        )
    )
    return single, vector


def env_classes(
    task_class: type[Task], env_id: str, doc: str, *, module: str, name: str | None = None
) -> tuple[type[RoboDynEnv], type[RoboDynVectorEnv]]:
    """(single env class, vector env class) of `task_class`, named after `env_id`
    ("RoboDyn/Crane-v0": CraneEnv, CraneVectorEnv) or after `name` where given (a module
    that registers several tasks whose ids share their first word: "DmcCartpoleSwingup":
    DmcCartpoleSwingupEnv, ...), in `module`, documented by `doc` with its `{arguments}`
    filled in."""
    if name is None:
        name = env_id.rsplit("/", 1)[-1].split("-", 1)[0]  # "RoboDyn/Crane-v0" -> "Crane"
    doc = doc.replace("{arguments}", arguments_section(env_id, task_class.params))
    classes = []
    for base, suffix, what in (
        (RoboDynEnv, "Env", "a single Gymnasium Env"),
        (RoboDynVectorEnv, "VectorEnv", "a native batched VectorEnv"),
    ):
        cls = type(f"{name}{suffix}", (base,), {"task_class": task_class, "__module__": module})
        cls.__doc__ = f"{env_id} as {what}.\n{doc}"
        classes.append(cls)
    return classes[0], classes[1]
