"""What a task is made of, declared once: its parameters (`Param`) and its per-environment
state (`State`).

A task class lists them as class attributes, in the order its documentation shows them:

    class CraneTask(Task):
        move_distance = Param(10.0, "start distance of the payload from the target (m)", POSITIVE)
        max_accel = Param(1.0, "the drive's acceleration limit (m/s^2)", POSITIVE)
        action = State("the commanded acceleration of this step")

Everything else follows from the declarations: the task's constructor takes each parameter
as a keyword (checked, converted and stored as an attribute of that name), unknown keywords
are refused naming the valid ones, the env's documentation shows the table
`parameter_table()` makes, a snapshot's signature compares the parameters' values, and each
State is allocated with one row per environment when the task is bound, reset at every
episode's start and carried by snapshots. A parameter's rules that involve others (the
crane's move shorter than its rail) go in the task's `check()`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from robogym.checks import Bounds, check_real, is_int, is_real
from robogym.errors import ArgumentTypeError, InvalidArgumentError


@dataclass(frozen=True)
class Param:
    """One keyword parameter of a task: its default, one line of documentation and what it
    may be. The kind follows the default: a bool is True or False; an int (a count) an int
    inside `bounds`; a float a finite real number inside `bounds` (or, with `per_component`,
    also a 1-d sequence of them, stored as a tuple); a str one of `choices`. Any other
    default (None, a tuple) needs `convert`, which checks a value and returns what is
    stored, raising a RoboDynError naming the parameter; `allowed` then says in words what
    it takes (for the documentation's table)."""

    default: Any
    doc: str
    bounds: Bounds | None = None
    choices: tuple[str, ...] | None = None
    per_component: bool = False
    convert: Callable[[str, Any], Any] | None = None
    allowed: str | None = None

    def __post_init__(self):
        d = self.default
        if self.convert is None and self.choices is None and not (isinstance(d, bool) or is_real(d)):
            # a mistake in a task's declaration, raised when its module is imported
            raise TypeError(f"Param({d!r}, ...): a default of {type(d).__name__} needs convert=")

    def check(self, name: str, value):
        """`value` checked and converted to what the task stores, or a RoboDynError naming
        the parameter and what it must be."""
        if self.convert is not None:
            return self.convert(name, value)
        d = self.default
        if self.choices is not None:
            if not isinstance(value, str):
                raise ArgumentTypeError(f"{name} must be one of {self.choices} (a str), got {value!r}")
            if value not in self.choices:
                raise InvalidArgumentError(f"{name} must be one of {self.choices}, got {value!r}")
            return value
        if isinstance(d, bool):
            if not isinstance(value, bool | np.bool_):
                raise ArgumentTypeError(f"{name} must be True or False, got {value!r}")
            return bool(value)
        bounds = self.bounds or Bounds()
        if is_int(d):
            if not is_int(value):
                raise ArgumentTypeError(
                    f"{name} must be an int in {bounds}, got {type(value).__name__} {value!r}"
                )
            if value not in bounds:
                raise InvalidArgumentError(f"{name} must be an int in {bounds}, got {value!r}")
            return int(value)
        if self.per_component and _is_sequence(value):
            return tuple(check_real(f"{name}[{i}]", v, bounds) for i, v in enumerate(value))
        return check_real(name, value, bounds)

    def described(self) -> str:
        """What the parameter takes, in words (the table's 'allowed' column)."""
        if self.allowed is not None:
            return self.allowed
        if self.choices is not None:
            return " or ".join(repr(c) for c in self.choices)
        if isinstance(self.default, bool):
            return "True or False"
        kind = "int" if is_int(self.default) else "real"
        where = f"{kind} in {self.bounds or Bounds()}"
        return where + (", or one per component" if self.per_component else "")


@dataclass(frozen=True)
class State:
    """Per-environment task state: an array of shape (B, *shape) allocated when the task is
    bound, set to `reset` for the environments that start an episode (None: the task's
    reset_rows sets it), and carried by snapshots. `shape` is a tuple, or a function of the
    bound task that returns one (for sizes known once the model is loaded)."""

    doc: str
    shape: tuple | Callable[[Any], tuple] = ()
    dtype: type = np.float64
    reset: Any = 0


@dataclass(frozen=True)
class Obs:
    """One named part of a task's observation: `read(task)` gives its values now, (B,) for one
    component or (B, n). Its components are named `name[c]` for each c of `components`, or
    `name` alone for a one-component part, or as `names` gives them. A `sensor` part is what
    a real robot would measure: the task's sensor model (noise, delay: robogym.SensorModel)
    applies to the sensor parts, with `noise` the part's noise scale at sensor_noise = 1; the
    others (a command, the last action) are seen as they are. The observation is the parts
    side by side, in the order the task declares them."""

    name: str
    read: Callable[[Any], np.ndarray]
    components: tuple[str, ...] = ()
    names: tuple[str, ...] | None = None
    sensor: bool = True
    noise: float = 1.0

    def component_names(self) -> list[str]:
        if self.names is not None:
            return list(self.names)
        if not self.components:
            return [self.name]
        return [f"{self.name}[{c}]" for c in self.components]


def declared(cls: type, kind: type) -> dict[str, Any]:
    """{name: declaration} of the `kind` declarations (Param or State) of `cls` and its bases,
    bases first, each class's in the order it lists them; a subclass's redeclaration of a
    name replaces its base's in place."""
    out: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        for name, value in vars(klass).items():
            if isinstance(value, kind):
                out[name] = value
    return out


def parameter_table(params: dict[str, Param]) -> str:
    """A Markdown table of the parameters: keyword, default, what it takes, meaning."""
    rows = ["| keyword | default | allowed | meaning |", "|---|---|---|---|"]
    for name, p in params.items():
        rows.append(f"| `{name}` | `{p.default!r}` | {p.described()} | {p.doc} |")
    return "\n".join(rows)


def arguments_section(env_id: str, params: dict[str, Param]) -> str:
    """The "Arguments" text of an env's documentation: the task's keywords as a table, then
    the keywords every RoboDyn env takes."""
    return f"""`gym.make("{env_id}", **kwargs)` or `gym.make_vec("{env_id}", num_envs=64, **kwargs)`,
with the task's keywords:

{parameter_table(params)}

and the env's own: render_mode (None or "rgb_array"), width=640 and height=480 (pixels),
dtype (the spaces' float64 or float32: float32 observations are the float64 ones rounded,
for libraries that prefer it; the physics stays float64);
the vector env also takes autoreset_mode (NEXT_STEP, SAME_STEP, DISABLED), nthread and
max_episode_steps (the single env takes the registered episode length; `gym.make`'s own
max_episode_steps argument sets it instead). A value outside what a keyword allows, a
value of the wrong kind or an unknown keyword is refused when the env is built, naming it."""


def _is_sequence(value) -> bool:
    """A list, a tuple or a 1-d numpy array (what a per-component parameter may be)."""
    return isinstance(value, list | tuple) or (isinstance(value, np.ndarray) and value.ndim == 1)
