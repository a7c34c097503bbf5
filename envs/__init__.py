"""RoboDyn's tasks: importing this package imports every task module in it (a module named
`<task>_v<version>.py`), and each registers its task (robogym.registration); adding a task
is adding its module (and its model in assets/). `import robogym` imports this package
through the `robodyn.tasks` entry point that pyproject.toml declares."""

import importlib
import pkgutil
import re

TASK_MODULE = re.compile(r"[a-z][a-z0-9_]*_v\d+")

for _info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if TASK_MODULE.fullmatch(_info.name):
        importlib.import_module(f"{__name__}.{_info.name}")  # registers its task
