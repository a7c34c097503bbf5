"""Every RoboDyn task, registered under the `RoboDyn/` namespace with string entry points
(nothing is imported until an env is made)."""

from __future__ import annotations

from dataclasses import dataclass

import gymnasium as gym


@dataclass(frozen=True)
class TaskEntry:
    """One registered task. `max_episode_steps` is the episode length Gymnasium applies: the
    TimeLimit of gym.make and the truncation gym.make_vec hands the native vector env; it is
    read here, before any task module is imported."""

    id: str
    entry_point: str  # single gymnasium.Env
    vector_entry_point: str  # native RoboDynVectorEnv
    max_episode_steps: int
    summary: str


TASKS = (
    TaskEntry(
        id="RoboDyn/Crane-v0",
        entry_point="envs.crane_v0:CraneEnv",
        vector_entry_point="envs.crane_v0:CraneVectorEnv",
        max_episode_steps=400,
        summary="trolley + payload on a 3 m cable: move 10 m, arrive still (acceleration drive)",
    ),
)


def register_all() -> None:
    """Register every task with Gymnasium (idempotent)."""
    for t in TASKS:
        if t.id in gym.registry:
            continue
        gym.register(
            id=t.id,
            entry_point=t.entry_point,
            vector_entry_point=t.vector_entry_point,
            max_episode_steps=t.max_episode_steps,
        )
