"""RoboDyn's Gymnasium face. Importing it registers every task under `RoboDyn/` (each task's
module registers itself; robogym.registration finds the packages that declare tasks):

import gymnasium as gym
import robogym

env = gym.make("RoboDyn/Crane-v0")  # or gym.make("robogym:RoboDyn/Crane-v0")
envs = gym.make_vec("RoboDyn/Crane-v0", num_envs=64)  # the native batched RoboDynVectorEnv
snap = env.snapshot(); env.restore(snap)  # both envs; robogym.snapshot(env) through wrappers
mine = robogym.make_env("my_robot.xml")  # any MJCF file: gym.make("RoboDyn/MJCF-v0", xml_file=...)
"""

from robodyn.engine.errors import PhysicsWarning, RoboDynError
from robogym.core import EnvSnapshot
from robogym.env import RoboDynEnv, restore, snapshot
from robogym.errors import (
    ActionTypeError,
    ArgumentTypeError,
    IndexOutOfRangeError,
    InvalidActionError,
    InvalidArgumentError,
    MissingFileError,
    ResetNeededError,
    SnapshotError,
    UnknownNameError,
)
from robogym.mjcf_env import make_env, make_vec_env
from robogym.registration import TASKS, discover_tasks
from robogym.task import Actuation, Task
from robogym.vector_env import RoboDynVectorEnv

discover_tasks()  # imports the packages that declare tasks, each registering its own

__all__ = [
    "TASKS",
    "ActionTypeError",
    "Actuation",
    "ArgumentTypeError",
    "EnvSnapshot",
    "IndexOutOfRangeError",
    "InvalidActionError",
    "InvalidArgumentError",
    "MissingFileError",
    "PhysicsWarning",
    "ResetNeededError",
    "RoboDynEnv",
    "RoboDynError",
    "RoboDynVectorEnv",
    "SnapshotError",
    "Task",
    "UnknownNameError",
    "make_env",
    "make_vec_env",
    "restore",
    "snapshot",
]
