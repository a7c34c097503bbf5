"""Tuned gains of the baselines: the stored output of `robodyn tune TASK BASELINE`.

A baseline whose gains are tuned (its task declares an envs.tuning.Tuning) reads
its defaults from envs/baselines/tuned/<task>.<baseline>.json, which `robodyn tune` writes
together with the command that made it, the sweep it ran and when. Nothing here tunes: the
sweep is training.experiments.tune, one layer up.
"""

from __future__ import annotations

import json
from pathlib import Path

from robogym.errors import MissingFileError

TUNED_DIR = Path(__file__).resolve().parent / "tuned"


def tuned_path(task_id: str, baseline: str) -> Path:
    """Where the tuned gains of `baseline` on `task_id` are stored ("RoboDyn/Crane-v0", "pd"
    -> tuned/RoboDyn-Crane-v0.pd.json)."""
    return TUNED_DIR / f"{task_id.replace('/', '-')}.{baseline}.json"


def tuned_parameters(task_id: str, baseline: str) -> dict[str, float]:
    """{parameter: value} of the stored tuning; FileNotFoundError saying how to make it."""
    path = tuned_path(task_id, baseline)
    if not path.is_file():
        raise MissingFileError(
            f"no tuned gains for the {baseline!r} baseline of {task_id} ({path}): "
            f"run `robodyn tune {task_id} {baseline}`"
        )
    return dict(json.loads(path.read_text())["parameters"])
