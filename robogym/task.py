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

from typing import Any

import numpy as np
from gymnasium import spaces

from robogym.actuation import Actuation
from robogym.declare import Obs, Param, State, declared, parameter_table
from robogym.errors import ArgumentTypeError
from robogym.physics import Physics
from robogym.randomize import Randomization
from robogym.sensor_model import SensorModel


class Task:
    """Base class of a task. Subclasses set the class attributes, declare their parameters
    (robogym.declare.Param) and state (robogym.declare.State), and override the methods
    marked "override"."""

    model_file: str = ""  # MJCF file in assets/
    frame_skip: int = 1  # physics steps per env step
    # every episode starts from mj_resetData's state, or this keyframe's, before reset_rows
    reset_keyframe: str | None = None
    # MuJoCo disable flags (Simulator.forward's names) of the forward pass that ends a reset,
    # which computes the first observation (dm_control's tasks: ("actuation",))
    reset_disable: tuple[str, ...] = ()
    # the engine's contact and constraint-row capacities per environment, load_mjcf's
    # {"nconmax": ..., "nefcmax": ...}; None: those the model's <size> gives
    capacity: dict | None = None
    render_camera: str | None = None  # camera name in the MJCF; None: the free camera
    # the free camera placed as Gymnasium's renderer places it, then these MjvCamera attributes
    # set (an env's default_camera_config keyword replaces them); None: MuJoCo's default
    default_camera_config: dict | None = None
    render_size = (640, 480)  # the frame's default width and height
    action_dtype = None  # the action space's dtype; None: the env's dtype keyword's
    # physics drawn anew for each episode (robogym.randomize.Draw), when the task declares the
    # `randomize` parameters (robogym.randomize.randomize_params) and randomize is True
    randomization: tuple = ()
    # the observation's named parts (robogym.declare.Obs), side by side; none declared: the
    # model's sensor vector
    observation: tuple[Obs, ...] = ()
    # filled from the declarations when a subclass is defined (robogym.declare.declared)
    params: dict[str, Param] = {}
    states: dict[str, State] = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.params = declared(cls, Param)
        cls.states = declared(cls, State)

    def __init__(self, **kwargs):
        """Every declared parameter from `kwargs` (checked) or its default, as an attribute of
        its name; then the task's own cross-parameter rules (check)."""
        for name, value in self.check_parameters(kwargs).items():
            setattr(self, name, value)
        self.check()

    def check(self) -> None:  # override
        """Refuse a combination of parameters that is invalid though each is valid alone (an
        InvalidArgumentError naming them); the parameters are attributes by now."""

    # --- parameters ------------------------------------------------------------------------------
    @classmethod
    def parameter_names(cls) -> list[str]:
        """The task's keyword parameters, in their declared order."""
        return list(cls.params)

    @classmethod
    def check_parameters(cls, params: dict, others: tuple[str, ...] = (), owner: str | None = None) -> dict:
        """{name: value} of every declared parameter: the checked value of `params` where it
        gives one, else the default. A keyword that is neither a parameter nor in `others`
        (the env's own keywords) raises ArgumentTypeError naming it and listing the valid ones
        (`owner`: who was given it, by default the task class); a bad value the error its
        Param raises (robogym.declare.Param.check)."""
        unknown = [k for k in params if k not in cls.params and k not in others]
        if unknown:
            valid = ", ".join([*cls.params, *others])
            raise ArgumentTypeError(
                f"{owner or cls.__name__} got an unknown keyword {unknown[0]!r}; "
                f"the valid keywords are: {valid}"
            )
        return {name: p.check(name, params.get(name, p.default)) for name, p in cls.params.items()}

    @classmethod
    def parameter_table(cls) -> str:
        """The parameters as a Markdown table (the env's documentation shows it)."""
        return parameter_table(cls.params)

    def parameter_values(self) -> dict:
        """{name: value} of this task's parameters."""
        return {name: getattr(self, name) for name in self.params}

    def bind(self, physics: Physics) -> None:
        """Look up names once the model is loaded (override to cache ids; call this)."""
        self.physics = physics
        self.randomizer = None  # applied by the env after reset_rows (robogym.randomize)
        if getattr(self, "randomize", False) and self.randomization:
            model = physics.model
            self.randomizer = Randomization(self.randomization, physics.mj_model, model, self.randomize_scale)

    # --- state -------------------------------------------------------------------------------------
    def allocate_state(self) -> None:
        """Every declared State as a (B, *shape) array attribute of its name, at its reset
        value (after bind: a shape may depend on the model); and, for a task that declares
        the sensor keywords (robogym.sensor_model.sensor_params), its sensor model over the
        observation's sensor parts."""
        B = self.physics.batch
        for name, st in self.states.items():
            shape = st.shape(self) if callable(st.shape) else st.shape
            setattr(self, name, np.full((B, *shape), 0 if st.reset is None else st.reset, dtype=st.dtype))
        self.sensors = None
        if "sensor_noise" in self.params:
            parts = [p for p in self.observation_parts() if p.sensor]
            unit = np.concatenate([np.full(len(p.component_names()), p.noise) for p in parts])
            scale = np.asarray(self.sensor_noise, dtype=np.float64)
            if scale.shape in ((), unit.shape):  # else SensorModel names the length it needs
                scale = scale * unit
            self.sensors = SensorModel(B, len(unit), scale, self.sensor_noise_kind, self.observation_delay)
            self.hold_state("sensor_", self.sensors)

    def reset_state(self, rows: np.ndarray) -> None:
        """Rows start an episode: every State with a reset value goes back to it."""
        for name, st in self.states.items():
            if st.reset is not None:
                getattr(self, name)[rows] = st.reset

    def hold_state(self, prefix: str, holder) -> None:
        """An object that keeps per-environment state of its own (a SensorModel, an
        IntervalEvents) and hands it out with get_state(prefix) / set_state(state, rows,
        prefix): snapshots carry it under names starting with `prefix`."""
        self.__dict__.setdefault("_holders", {})[prefix] = holder

    @property
    def holders(self) -> dict[str, Any]:
        """{prefix: holder} of hold_state."""
        return self.__dict__.get("_holders", {})

    # --- spaces --------------------------------------------------------------------------
    def actuation(self) -> Actuation:  # override
        """How an action reaches the model (built in bind, from the physics' names)."""
        raise NotImplementedError

    def action_space(self) -> spaces.Box:
        a = self.actuation()
        return spaces.Box(low=a.low.astype(np.float64), high=a.high.astype(np.float64), dtype=np.float64)

    def observation_parts(self) -> tuple[Obs, ...]:
        """The declared observation, or by default the model's sensor vector as one part."""
        if self.observation:
            return self.observation
        parts = self.__dict__.get("_default_parts")
        if parts is None:  # made once: the sensor names are the model's
            names = tuple(self.physics.sensor_names())
            parts = self._default_parts = (Obs("sensordata", _sensordata, names=names),)
        return parts

    def observation_space(self) -> spaces.Box:
        n = len(self.observation_names())
        return spaces.Box(low=-np.inf, high=np.inf, shape=(n,), dtype=np.float64)

    def output_space(self, flat: spaces.Box) -> spaces.Space:
        """The observation space the env shows, given the flat Box of observe()'s rows in the
        env's dtype: by default that Box (a task that hands out a Dict overrides this and
        output_observation together)."""
        return flat

    def output_observation(self, obs: np.ndarray):
        """Observations (..., n) of observe()'s layout (new arrays, in the env's dtype) as the
        env hands them out, an element of output_space (batched in a vector env): by default
        themselves. The env keeps, snapshots and pickles the flat rows; this runs only where it
        returns them."""
        return obs

    def observation_names(self) -> list[str]:
        """A name for every observation component, part by part."""
        return [name for part in self.observation_parts() for name in part.component_names()]

    # --- episode ---------------------------------------------------------------------------
    def reset_rows(self, rows: np.ndarray, rngs: list[np.random.Generator]) -> None:  # override
        """Write the initial state of environments `rows`, drawing from rngs[i] for rows[i]."""
        raise NotImplementedError

    def hide_future(self, rows: np.ndarray) -> None:  # override where the task schedules events
        """Make `rows`, a planner's copies of real environments, blind to what an agent cannot
        know ahead: a task whose snapshot carries a schedule of future disturbances (pushes
        drawn at reset) cancels them here, so that a plan cannot brace for them. By default
        nothing is hidden."""

    def planning_reward(self, reward: np.ndarray) -> np.ndarray:  # override to shape plans
        """(B,) what a planner maximises at each step of its rollouts, given the step's
        reward (B,): by default the reward itself. A task whose reward leaves out what a
        short-sighted plan needs to stay out of trouble (a height to keep) adds it here."""
        return reward

    def apply_action(self, action: np.ndarray) -> None:
        """Advance every environment by frame_skip physics steps under action (B, k), through
        the task's actuation (a task that keeps track of its actions extends this)."""
        self.step_physics(action, self.frame_skip)

    def step_physics(self, action: np.ndarray, nstep: int, default: np.ndarray | None = None) -> None:
        """nstep physics steps of every environment under action (B, k), through the task's
        actuation; for "pd_target", `default` (B, k) centres each row's targets in place of
        the actuation's default pose (Actuation.apply)."""
        if default is None:
            self.actuation().apply(self.physics.sim, action, nstep)
        else:
            self.actuation().apply(self.physics.sim, action, nstep, default=default)

    def sensor_observation(self) -> np.ndarray:
        """(B, n) the observation's sensor parts side by side, noise-free and undelayed (a new
        array)."""
        return np.concatenate([_columns(p.read(self)) for p in self.observation_parts() if p.sensor], axis=1)

    def observe(self) -> np.ndarray:
        """(B, nobs) the observation now, a new array (the env hands it out and overwrites the
        rows it resets): the declared parts side by side, the sensor parts through the
        sensor model if the task has one."""
        parts = self.observation_parts()
        if self.sensors is None:
            if len(parts) == 1:
                return np.array(_columns(parts[0].read(self)))
            return np.concatenate([_columns(p.read(self)) for p in parts], axis=1)
        seen = self.sensors.observe(self.sensor_observation())
        out, at = [], 0
        for p in parts:
            if p.sensor:
                n = len(p.component_names())
                out.append(seen[:, at : at + n])
                at += n
            else:
                out.append(_columns(p.read(self)))
        return np.concatenate(out, axis=1)

    # --- what the env calls ---------------------------------------------------------------------------
    def start_episodes(self, rows: np.ndarray, rngs: list[np.random.Generator]) -> None:
        """Rows start an episode: the declared State to its reset values, the task's own
        reset_rows, then the sensor model's seeds (last, so that turning noise on changes no
        other draw)."""
        self.reset_state(rows)
        self.reset_rows(rows, rngs)
        if self.sensors is not None:
            self.sensors.reset(rows, rngs)

    def act(self, action: np.ndarray) -> None:
        """One control step: the observation the policy was shown enters the sensor model's
        delay line, then the task's apply_action runs the physics."""
        if self.sensors is not None:
            self.sensors.record(self.sensor_observation())
        self.apply_action(action)

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
        """Every declared State and the held objects' state, by name (the arrays themselves)."""
        state = {name: getattr(self, name) for name in self.states}
        for prefix, holder in self.holders.items():
            state.update(holder.get_state(prefix))
        return state

    def set_state(self, state: dict[str, np.ndarray], rows: np.ndarray) -> None:
        """Write back, into `rows`, what get_state gave for those rows."""
        for name in self.states:
            if name in state:
                getattr(self, name)[rows] = state[name]
        for prefix, holder in self.holders.items():
            holder.set_state(state, rows, prefix)


def _columns(values: np.ndarray) -> np.ndarray:
    """A part's values as (B, n) columns ((B,) becomes one column)."""
    return values[:, None] if values.ndim == 1 else values


def _sensordata(task) -> np.ndarray:
    """The whole sensor vector, (B, nsensordata): the default observation."""
    return task.physics.named.sensordata.all
