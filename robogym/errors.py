"""The errors the Gymnasium face raises on purpose. Each derives from engine.RoboDynError and
from the built-in type that says what went wrong (ValueError for a bad value, TypeError for
the wrong kind of value), so `except ValueError` and `except RoboDynError` both catch them.
Whenever one is raised, nothing was changed."""

from __future__ import annotations

import gymnasium as gym

from robodyn.engine.errors import (  # noqa: F401 (the engine's argument errors are the face's too)
    ArgumentTypeError,
    IndexOutOfRangeError,
    InvalidArgumentError,
    RoboDynError,
)


class UnknownNameError(RoboDynError, KeyError):
    """A name the model or the registry does not know (a body, joint, actuator, sensor or
    camera of the model; a task id); the message names it and where it was looked for."""

    def __str__(self) -> str:  # the message as written (KeyError's own str quotes it)
        return str(self.args[0]) if self.args else ""


class UnknownFieldError(RoboDynError, AttributeError):
    """A field name that is not one of the engine's (or not one that objects index), asked
    of a named accessor (robogym.named); the message lists the fields there are."""


class MissingFileError(RoboDynError, FileNotFoundError):
    """A file RoboDyn ships or stores that is not there (a task's MJCF asset, a baseline's
    tuned gains); the message says how to make it or where it was looked for."""


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
