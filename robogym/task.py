"""Task base: what a RoboDyn task defines, kept apart from the Gymnasium plumbing.

A task says which model it runs (`model_file` in assets/), how an action drives it
(`actuation`: a robogym.actuation.Actuation, which `apply_action` applies), what is
observed (`observe`, by default the model's sensor vector, named by `observation_names`),
what is rewarded (`reward`, every term returned by name), when an episode ends
(`terminated`), how episodes start (`reset_rows`, one generator per environment) and what
is measured (`metrics`). Every method works on a whole batch: arrays are (B, ...).
`evaluate` gathers reward, termination and metrics after a step, the one call the env
makes per step; a task overrides it to compute what they share once.

`robogym.RoboDynEnv` and `robogym.RoboDynVectorEnv` turn a task into a Gymnasium Env or a
native VectorEnv; the baselines (envs/baselines) read `actuation` and the task's named
readouts, never raw indices.
"""

from __future__ import annotations

import inspect

import numpy as np
from gymnasium import spaces

from robogym.actuation import Actuation
from robogym.checks import Bounds, check_real, is_real
from robogym.errors import ArgumentTypeError
from robogym.physics import Physics
from robogym.randomize import Randomization


class Task:
    """Base class of a task. Subclasses set the class attributes and override the methods
    marked "override"."""

    model_file: str = ""  # MJCF file in assets/
    frame_skip: int = 1  # physics steps per env step
    render_camera: str | None = None  # camera name in the MJCF
    # the allowed range of numeric __init__ parameters (a numeric one not listed: any finite value)
    parameter_bounds: dict[str, Bounds] = {}
    # numeric parameters that take one number or one per component (a 1-d sequence), each in
    # its bounds (the task checks the length once it knows the number of components)
    per_component_parameters: tuple[str, ...] = ()
    # physics drawn anew for each episode (robogym.randomize.Draw), when the task's `randomize`
    # keyword (check_randomize) turns it on
    randomization: tuple = ()
    randomize: bool = False
    randomize_scale: float = 1.0

    # --- parameters ------------------------------------------------------------------------------
    @classmethod
    def parameter_names(cls) -> list[str]:
        """The keyword parameters of the task's __init__, in order."""
        sig = inspect.signature(cls.__init__)
        kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        return [p.name for p in list(sig.parameters.values())[1:] if p.kind in kinds]

    @classmethod
    def check_parameters(cls, params: dict, others: tuple[str, ...] = (), owner: str | None = None) -> None:
        """Refuse task parameters a user typed wrong, before anything is built: a keyword that is
        neither a parameter of __init__ nor in `others` (the env's own keywords) raises
        ArgumentTypeError naming it and listing the valid ones (`owner`: who was given it, by
        default the task class); a numeric parameter (a number
        by default, or in parameter_bounds) must be a finite real number inside its bounds
        (ArgumentTypeError for the wrong kind, InvalidArgumentError naming the range)."""
        names = cls.parameter_names()
        unknown = [k for k in params if k not in names and k not in others]
        if unknown:
            valid = ", ".join([*names, *others])
            raise ArgumentTypeError(
                f"{owner or cls.__name__} got an unknown keyword {unknown[0]!r}; "
                f"the valid keywords are: {valid}"
            )
        defaults = {
            p.name: p.default for p in inspect.signature(cls.__init__).parameters.values() if p.name in names
        }
        for name, value in params.items():
            if name not in defaults:
                continue
            bounds = cls.parameter_bounds.get(name, Bounds())
            if name in cls.per_component_parameters and _is_sequence(value):
                for i, v in enumerate(value):
                    check_real(f"{name}[{i}]", v, bounds)
            elif name in cls.parameter_bounds or is_real(defaults[name]):
                check_real(name, value, bounds)

    def check_randomize(self, randomize, randomize_scale) -> None:
        """Keep the `randomize` (a bool) and `randomize_scale` keywords of a task that declares
        a randomization; ArgumentTypeError if randomize is not a bool."""
        if not isinstance(randomize, bool | np.bool_):
            raise ArgumentTypeError(f"randomize must be True or False, got {randomize!r}")
        self.randomize = bool(randomize)
        self.randomize_scale = float(randomize_scale)

    def bind(self, physics: Physics) -> None:
        """Look up names once the model is loaded (override to cache ids; call this)."""
        self.physics = physics
        self.randomizer = None  # applied by the env after reset_rows (robogym.randomize)
        if self.randomize and self.randomization:
            model = physics.model
            self.randomizer = Randomization(self.randomization, physics.mj_model, model, self.randomize_scale)

    # --- spaces --------------------------------------------------------------------------
    def actuation(self) -> Actuation:  # override
        """How an action reaches the model (built in bind, from the physics' names)."""
        raise NotImplementedError

    def action_space(self) -> spaces.Box:
        a = self.actuation()
        return spaces.Box(low=a.low.astype(np.float64), high=a.high.astype(np.float64), dtype=np.float64)

    def observation_space(self) -> spaces.Box:
        n = self.physics.model.nsensordata
        return spaces.Box(low=-np.inf, high=np.inf, shape=(n,), dtype=np.float64)

    def observation_names(self) -> list[str]:
        """A name for every observation component: by default the sensor vector's (a task
        whose observe() differs overrides this too)."""
        return self.physics.sensor_names()

    # --- episode ---------------------------------------------------------------------------
    def reset_rows(self, rows: np.ndarray, rngs: list[np.random.Generator]) -> None:  # override
        """Write the initial state of environments `rows`, drawing from rngs[i] for rows[i]."""
        raise NotImplementedError

    def apply_action(self, action: np.ndarray) -> None:
        """Advance every environment by frame_skip physics steps under action (B, k), through
        the task's actuation (a task that keeps track of its actions extends this)."""
        self.actuation().apply(self.physics.sim, action, self.frame_skip)

    def observe(self) -> np.ndarray:
        """(B, nobs) observation after forward: the model's sensor vector, as a new array
        (the env hands it out and overwrites the rows it resets)."""
        return self.physics.data.sensordata.copy()

    def reward(self, action: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:  # override
        """(reward (B,), {term name: (B,)}) with reward exactly the sum of the terms."""
        raise NotImplementedError

    def terminated(self) -> np.ndarray:
        """(B,) bool: the episode reached a terminal state."""
        return np.zeros(self.physics.batch, dtype=bool)

    def metrics(self) -> dict[str, np.ndarray]:
        """{name: (B,)} task measurements reported in info (not rewarded)."""
        return {}

    def evaluate(self, action: np.ndarray) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """After a step under action (B, k): (reward (B,) float64, terminated (B,) bool,
        info {name: (B,) float64}: every reward term, then every metric).

        Every returned array is new: the env hands them to the user, who may keep or modify
        them. This default copies what reward, terminated and metrics return; a task
        overrides it to compute the quantities they share once.
        """
        reward, terms = self.reward(action)
        info = {k: np.array(v, dtype=np.float64) for k, v in terms.items()}
        info.update((k, np.array(v, dtype=np.float64)) for k, v in self.metrics().items())
        return np.array(reward, dtype=np.float64), np.array(self.terminated(), dtype=bool), info

    # --- drawing -------------------------------------------------------------------------------
    def decorate_frame(self, mj_model, row: int) -> None:
        """Change drawing-only values of `mj_model` (the MuJoCo model the renderer draws, never
        the engine's) for environment `row` before its frame is drawn, e.g. a geom scaled
        from an actuator's force. Default: nothing."""

    # --- task state (beyond physics) for snapshot/restore ----------------------------------
    def get_state(self) -> dict[str, np.ndarray]:
        return {}

    def set_state(self, state: dict[str, np.ndarray], rows: np.ndarray) -> None:
        for name, value in state.items():
            getattr(self, name)[rows] = value


def _is_sequence(value) -> bool:
    """A list, a tuple or a 1-d numpy array (what a per-component parameter may be)."""
    return isinstance(value, list | tuple) or (isinstance(value, np.ndarray) and value.ndim == 1)
