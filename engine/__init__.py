"""RoboDyn's articulated-body engine: MuJoCo's smooth dynamics in numba, batched.

from robodyn import engine
model = engine.load_mjcf("assets/double_pendulum.xml")
sim = engine.Simulator(model, batch=64)
sim.step()
"""

# ruff: noqa: E402  (the cache guard runs before any module with compiled code is imported)
from robodyn.engine import cache

cache.guard()  # before any compiled code is loaded: drop what an edit made stale

from robodyn.engine.api import ContactOverflowError
from robodyn.engine.binding import BindingError
from robodyn.engine.constraint import dense_efc_J
from robodyn.engine.data import Data, make_data
from robodyn.engine.errors import (
    ArgumentTypeError,
    DataSizeError,
    IndexOutOfRangeError,
    InvalidArgumentError,
    MemoryWarning,
    ModelArgumentError,
    ModelError,
    ModelFileError,
    PhysicsWarning,
    RoboDynError,
    UnsupportedModelError,
)
from robodyn.engine.loader import load_mjcf, without_contacts
from robodyn.engine.model import Model
from robodyn.engine.params import ParamError
from robodyn.engine.simulator import NonFiniteError, Rollout, Simulator, Snapshot

__all__ = [
    "ArgumentTypeError",
    "BindingError",
    "ContactOverflowError",
    "Data",
    "DataSizeError",
    "IndexOutOfRangeError",
    "InvalidArgumentError",
    "MemoryWarning",
    "Model",
    "ModelArgumentError",
    "ModelError",
    "ModelFileError",
    "NonFiniteError",
    "ParamError",
    "PhysicsWarning",
    "RoboDynError",
    "Rollout",
    "Simulator",
    "Snapshot",
    "UnsupportedModelError",
    "dense_efc_J",
    "load_mjcf",
    "make_data",
    "without_contacts",
]
