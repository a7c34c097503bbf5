"""The base every error and warning RoboDyn raises on purpose derives from.

Each concrete error also derives from the built-in type that says what went wrong
(ValueError for bad input, TypeError for the wrong kind of input, FloatingPointError for
a state that blew up), so `except ValueError` keeps working and `except RoboDynError`
catches everything RoboDyn refused.
"""


class RoboDynError(Exception):
    """Something RoboDyn refused or could not do; the message names what and why."""


class InvalidArgumentError(RoboDynError, ValueError):
    """An argument of the right kind with a value outside its allowed range (a shape, a
    count, a NaN); the message names the argument and what it must be."""


class ArgumentTypeError(RoboDynError, TypeError):
    """An argument of the wrong kind (a float where an int belongs, a str for a number, an
    object that is not the engine's Model or Snapshot)."""


class IndexOutOfRangeError(RoboDynError, IndexError):
    """An index outside its range: a row of the batch, a body, an actuator; the message
    gives the index and the range."""


class ModelError(RoboDynError, ValueError):
    """An MJCF model that cannot be loaded: MuJoCo's compiler refused it (the message
    carries MuJoCo's), a value is out of the range the engine can simulate (NaN or inf, a
    timestep <= 0, negative armature, ...), or a load argument has a bad value (nconmax=-5).
    The message names the element, attribute or argument and the allowed range."""


class UnsupportedModelError(ModelError):
    """Raised at load when an MJCF model uses a feature the engine does not simulate."""


class ModelFileError(ModelError, FileNotFoundError):
    """A path given to the loader that names no MJCF file (missing, or a directory)."""


class ModelArgumentError(RoboDynError, TypeError):
    """The loader was given an argument of the wrong kind: a source that is neither a path
    (str or os.PathLike) nor an MJCF document (a str), or a capacity that is not an int."""


class DataSizeError(RoboDynError, MemoryError):
    """Data for the requested batch cannot fit in this machine's memory
    (engine.data.make_data refuses before allocating); the message gives the size, the
    memory there is, and how to make it smaller."""


class PhysicsWarning(RuntimeWarning):
    """The physics met a state or input MuJoCo warns about (mjWARN_*): a control or an
    acceleration that is NaN or too large. The message names the row and what was done."""


class MemoryWarning(RuntimeWarning):
    """Data about to be allocated is large (engine.data.make_data): the message gives the
    size, the arrays that dominate it and how to make it smaller."""
