"""RoboDyn's tasks: importing this package registers each of them (its module declares its
entry; robogym.registration), in the order `robodyn list` shows them. `import robogym`
imports it through the `robodyn.tasks` entry point that pyproject.toml declares."""

import importlib

TASK_MODULES = ("crane_v0", "tracking_v0", "rocket_v0", "humanoid_v0", "quadruped_v0")

for _module in TASK_MODULES:
    importlib.import_module(f"{__name__}.{_module}")  # registers its task
