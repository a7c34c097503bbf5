"""The errors the Gymnasium face raises on purpose. Each derives from engine.RoboDynError and
from the built-in type that says what went wrong (ValueError for a bad value, TypeError for
the wrong kind of value), so `except ValueError` and `except RoboDynError` both catch them.
Whenever one is raised, nothing was changed."""

from __future__ import annotations

import gymnasium as gym

from engine.errors import RoboDynError


class InvalidArgumentError(RoboDynError, ValueError):
    """An argument of the right kind with a value outside its allowed range."""


class ArgumentTypeError(RoboDynError, TypeError):
    """An argument of the wrong kind (a float where an int belongs, a str for a number)."""


class InvalidActionError(RoboDynError, ValueError):
    """An action of the wrong shape, type or with NaN/inf; nothing was changed."""


class ActionTypeError(InvalidActionError, TypeError):
    """An action that is not made of real numbers (strings, complex numbers, bools, objects)."""


class SnapshotError(RoboDynError, ValueError):
    """A snapshot that cannot be restored into this env (another task, model, parameter set,
    kind of env, wrapper stack or number of environments, or a tampered one)."""


class ResetNeededError(RoboDynError, gym.error.ResetNeeded):
    """step() or snapshot() before the first reset() (Gymnasium's OrderEnforcing raises its
    parent, gymnasium.error.ResetNeeded, for the same mistake)."""
