"""The base every error and warning RoboDyn raises on purpose derives from.

Each concrete error also derives from the built-in type that says what went wrong
(ValueError for bad input, TypeError for the wrong kind of input, FloatingPointError for
a state that blew up), so `except ValueError` keeps working and `except RoboDynError`
catches everything RoboDyn refused.
"""


class RoboDynError(Exception):
    """Something RoboDyn refused or could not do; the message names what and why."""


class PhysicsWarning(RuntimeWarning):
    """The physics met a state or input MuJoCo warns about (mjWARN_*): a control or an
    acceleration that is NaN or too large. The message names the row and what was done."""
