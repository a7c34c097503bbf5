"""RoboDyn's Gymnasium face. Importing it registers every task under `RoboDyn/`:

import gymnasium as gym
import robogym

env = gym.make("RoboDyn/Crane-v0")  # or gym.make("robogym:RoboDyn/Crane-v0")
envs = gym.make_vec("RoboDyn/Crane-v0", num_envs=64)  # the native batched RoboDynVectorEnv
"""

from engine.errors import PhysicsWarning, RoboDynError
from robogym.core import EnvSnapshot, InvalidActionError
from robogym.env import RoboDynEnv
from robogym.registration import TASKS, register_all
from robogym.task import Actuation, Task
from robogym.vector_env import RoboDynVectorEnv

register_all()

__all__ = [
    "TASKS",
    "Actuation",
    "EnvSnapshot",
    "InvalidActionError",
    "PhysicsWarning",
    "RoboDynError",
    "RoboDynEnv",
    "RoboDynVectorEnv",
    "Task",
]
