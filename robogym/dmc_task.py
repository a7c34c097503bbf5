"""dm_control's suite as tasks: the base of RoboDyn's `RoboDyn/dmc-<domain>-<task>-v0` envs
(envs/dmc_*_v0.py, one file per domain holding its tasks, as dm_control/suite/*.py do), so
that each task declares only what its dm_control task adds.

What every task shares with dm_control's `control.Environment` and `suite.base.Task`
(dm_control 1.0, rl/control.py and suite/base.py):

- the model is the suite's own MJCF, read from the installed dm_control package
  (dm_control/suite/<domain>.xml with its common/ assets, never copied; dm_control itself is
  never imported here: `find_spec` locates its folder, and without it a task raises
  MissingFileError saying `pip install "robodyn[dmc]"`); where dm_control builds the model
  in Python from a suite file (the swimmer's chain of links, the manipulator without the
  props its task does not use), the task edits the same file the same way (`edit_model`)
  and loads the result from a cache folder (`built_model`);
- the action is the actuators' controls themselves, bounded by their ctrlranges, an
  actuator without one by +-mjMAXVAL (1e10) (dm_control's `action_spec`; `data.ctrl =
  action`);
- a control step is `control_timestep` seconds: n_sub_steps = control_timestep / timestep
  physics steps (an integer multiple, as dm_control's compute_n_steps requires); afterwards
  the positions and velocities and everything derived from them belong to the final state,
  as after dm_control's legacy step (mj_step2, mj_step, mj_step1), and so do the reward and
  the observation; the acceleration stage (actuator forces, qacc, the touch sensors), which
  mj_step1 does not recompute, keeps the last physics step's start (the engine's
  `observe_end="posvel"`, which ends the steps with mj_step1's stages alone);
- an episode lasts `time_limit` seconds, ceil(time_limit / control_timestep) control steps,
  and ends by truncation (no benchmark task terminates); a task without a time limit
  (`time_limit = inf`, lqr) is registered without an episode length (max_episode_steps
  None: never truncated unless gym.make's max_episode_steps sets one), and a task ends
  its episode where `get_termination` says so (dm_control's discount 0: `terminated`);
- the reward is dm_control's, built from `tolerance` (dm_control's rewards.tolerance,
  re-implemented here elementwise over a batch), reported in `info` as `reward_task` with
  the task's factors beside it;
- the observation is dm_control's OrderedDict flattened key by key in its order into a Box
  (`observation_slices()` gives each key's columns and `split_observation` the dict back),
  or with `dict_observation=True` a Dict space of dm_control's keys in its order, each a
  Box of dm_control's shape (`output_space`, `output_observation`: the env keeps the flat
  rows and builds the dict where it hands an observation out);
- the first observation comes from a forward pass with actuation disabled, as dm_control's
  `Physics.after_reset` runs it (`with model.disable("actuation")`): the acceleration
  stage's sensors read the state without actuator forces (where activations or position
  servos start away from rest, as the dog's do, their accelerometer and force readings
  differ by that); the first step then recomputes the actuation, as dm_control's mj_step2
  does;
- every episode starts from mj_resetData's state and the task's `initialize_episode`,
  drawing from a `numpy.random.RandomState` per environment exactly as dm_control's task
  draws from its `random`, in the same order. A generator just seeded with s (a
  `reset(seed=s)`, or row i of a vector env reset with seed s - i) starts
  `RandomState(s)`, so RoboDyn's seed s gives dm_control's `suite.load(domain, task,
  task_kwargs={"random": s})`; later episodes continue that RandomState as dm_control's env
  does (one draw from the env's own generator marks it used). The RandomState is task
  state: snapshots and pickles carry it;
- where dm_control's builder draws model parameters from the task's RandomState when it
  builds the environment (lqr: each joint's stiffness and damping), the task draws them in
  `initialize_environment(row, random)`, called only on a just-seeded RandomState, before
  that episode's `initialize_episode` continues the same RandomState, as dm_control's
  builder draws before its first episode; the values become the row's own model parameters
  (engine.params, `Simulator.set_params`; the model file holds a placeholder), which later
  episodes of that seeding keep, as dm_control's env keeps its model. The physics' snapshot
  carries them.
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
import os
import tempfile
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree

import mujoco
import numpy as np
from gymnasium import spaces

from robogym.actuation import Actuation
from robogym.declare import Obs, Param, State
from robogym.errors import InvalidArgumentError, MissingFileError
from robogym.task import Task
from robogym.task_envs import task_envs
from robogym.user_cache import user_cache

JNT_FREE, JNT_BALL = int(mujoco.mjtJoint.mjJNT_FREE), int(mujoco.mjtJoint.mjJNT_BALL)
JNT_SLIDE, JNT_HINGE = int(mujoco.mjtJoint.mjJNT_SLIDE), int(mujoco.mjtJoint.mjJNT_HINGE)
MAX_DRAWS = 10_000  # collision-free initial states drawn at most (draw_until_free)
# dm_control's column names of a 3x3 frame (xmat, geom_xmat, site_xmat), row-major
XMAT = {c: i for i, c in enumerate(("xx", "xy", "xz", "yx", "yy", "yz", "zx", "zy", "zz"))}


INSTALL = 'pip install "robodyn[dmc]"'  # what installs dm_control beside RoboDyn


def _dm_control_dir() -> Path | None:
    """The installed dm_control package's folder, found without importing it; None if absent."""
    spec = importlib.util.find_spec("dm_control")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def suite_model(name: str) -> str:
    """The absolute path of a model of dm_control's suite in the installed dm_control package
    (dm_control/suite/<name>), found without importing dm_control."""
    root = _dm_control_dir()
    if root is None:
        raise MissingFileError(
            f"RoboDyn's dmc-* tasks read dm_control's models ({name}) from the installed dm_control "
            f"package, which is not installed: {INSTALL}"
        )
    path = root / "suite" / name
    if not path.is_file():
        raise MissingFileError(f"the installed dm_control package has no suite model {name} ({path})")
    return str(path)


def cache_dir() -> Path:
    """Where RoboDyn writes the suite models it builds: the user cache's dmc/ folder
    (robogym.user_cache: $ROBODYN_CACHE_DIR, else $XDG_CACHE_HOME/robodyn, else
    ~/.cache/robodyn)."""
    return user_cache() / "dmc"


def built_model(suite_file: str, name: str, edit) -> str:
    """The path of a model dm_control builds in Python from a suite file (the swimmer's
    segments, the manipulator without its unused props): the suite file's MJCF parsed,
    `edit(root)` changing it in place as dm_control's builder does, its includes and asset
    folders pointed at the installed package's files (common/*.xml, the dog's meshes; read
    where they are, never copied), written
    to cache_dir() as <name>-<digest of the text>.xml (once: a file of that digest is that
    model; written whole, then renamed, so a concurrent reader never sees part of it)."""
    root = ElementTree.parse(suite_file).getroot()
    edit(root)
    folder = Path(suite_file).parent
    for include in root.iter("include"):
        include.set("file", str((folder / include.get("file")).resolve()))
    for compiler in root.iter("compiler"):  # the dog's meshes, skin and textures, where they are
        for folder_attr in ("meshdir", "texturedir", "assetdir"):
            if compiler.get(folder_attr):
                compiler.set(folder_attr, str((folder / compiler.get(folder_attr)).resolve()) + os.sep)
    text = ElementTree.tostring(root, encoding="unicode")
    path = cache_dir() / f"{name}-{hashlib.sha256(text.encode()).hexdigest()[:16]}.xml"
    if path.is_file():
        return str(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, suffix=".tmp", delete=False) as f:
            f.write(text)
        os.replace(f.name, path)
    except OSError as e:
        raise MissingFileError(
            f"cannot write the built model {path.name} to {path.parent} ({e}); set ROBODYN_CACHE_DIR "
            "to a writable folder"
        ) from None
    return str(path)


def remove_elements(mjcf: ElementTree.Element, unused: set[tuple[str, str]]) -> None:
    """Remove from an MJCF tree (its root element), in place, every element whose (tag,
    name) is in `unused`, with all it holds: the props, boxes or geoms a dm_control builder
    deletes from its suite file (an edit_model's step)."""
    for parent in list(mjcf.iter()):
        for child in list(parent):
            if (child.tag, child.get("name")) in unused:
                parent.remove(child)


# --- dm_control's tolerance, elementwise ---------------------------------------------------------
SIGMOIDS = (
    "gaussian",
    "hyperbolic",
    "long_tail",
    "reciprocal",
    "cosine",
    "linear",
    "quadratic",
    "tanh_squared",
)


def sigmoid(x: np.ndarray, value_at_1: float, kind: str) -> np.ndarray:
    """A function of the distance x (in margins) out of the bounds: 1 at x = 0, value_at_1 at
    |x| = 1, decreasing in |x| (dm_control's rewards._sigmoids, the same arithmetic):

        gaussian      exp(-(x s)^2 / 2),        s = sqrt(-2 ln v)
        hyperbolic    1 / cosh(x s),            s = arccosh(1 / v)
        long_tail     1 / ((x s)^2 + 1),        s = sqrt(1 / v - 1)
        reciprocal    1 / (|x| s + 1),          s = 1 / v - 1
        cosine        (1 + cos(pi x s)) / 2 where |x s| < 1, else 0,   s = arccos(2 v - 1) / pi
        linear        1 - x s where |x s| < 1, else 0,                  s = 1 - v
        quadratic     1 - (x s)^2 where |x s| < 1, else 0,              s = sqrt(1 - v)
        tanh_squared  1 - tanh(x s)^2,          s = arctanh(sqrt(1 - v))

    v = value_at_1 in (0, 1), or [0, 1) for cosine, linear and quadratic."""
    if kind not in SIGMOIDS:
        raise InvalidArgumentError(f"sigmoid must be one of {SIGMOIDS}, got {kind!r}")
    floor_ok = kind in ("cosine", "linear", "quadratic")
    if not ((0 <= value_at_1 < 1) if floor_ok else (0 < value_at_1 < 1)):
        raise InvalidArgumentError(
            f"value_at_1 of a {kind} sigmoid must be in {'[0, 1)' if floor_ok else '(0, 1)'}"
        )
    v = value_at_1
    if kind == "gaussian":
        s = np.sqrt(-2 * np.log(v))
        return np.exp(-0.5 * (x * s) ** 2)
    if kind == "hyperbolic":
        return 1 / np.cosh(x * np.arccosh(1 / v))
    if kind == "long_tail":
        s = np.sqrt(1 / v - 1)
        return 1 / ((x * s) ** 2 + 1)
    if kind == "reciprocal":
        return 1 / (abs(x) * (1 / v - 1) + 1)
    if kind == "tanh_squared":
        return 1 - np.tanh(x * np.arctanh(np.sqrt(1 - v))) ** 2
    scaled = x * {"cosine": np.arccos(2 * v - 1) / np.pi, "linear": 1 - v, "quadratic": np.sqrt(1 - v)}[kind]
    inside = abs(scaled) < 1
    if kind == "cosine":
        with np.errstate(invalid="ignore"):  # cos of an infinite distance, masked out
            return np.where(inside, (1 + np.cos(np.pi * scaled)) / 2, 0.0)
    if kind == "linear":
        return np.where(inside, 1 - scaled, 0.0)
    return np.where(inside, 1 - scaled**2, 0.0)


def tolerance(
    x, bounds=(0.0, 0.0), margin: float = 0.0, sigmoid_kind: str = "gaussian", value_at_margin: float = 0.1
) -> np.ndarray:
    """1 where lower <= x <= upper, else sigmoid(d / margin) of the distance d to the nearer
    bound (0 when margin is 0), elementwise over an array of any shape (dm_control's
    rewards.tolerance, batched): a soft indicator of x in [lower, upper] that reads
    value_at_margin one margin out."""
    lower, upper = bounds
    if lower > upper:
        raise InvalidArgumentError(f"tolerance bounds must have lower <= upper, got {bounds}")
    if margin < 0:
        raise InvalidArgumentError(f"tolerance margin must be >= 0, got {margin}")
    x = np.asarray(x, dtype=np.float64)
    in_bounds = (lower <= x) & (x <= upper)
    if margin == 0:
        return np.where(in_bounds, 1.0, 0.0)
    d = np.where(x < lower, lower - x, x - upper) / margin
    return np.where(in_bounds, 1.0, sigmoid(d, value_at_margin, sigmoid_kind))


# --- the task -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Key(Obs):
    """One key of dm_control's observation dict: `read(task)` (B,) or (B, n), its components
    named `key[c]`, a line saying what it is (the env's documentation shows it), and the
    shape dm_control gives its value (`shape`; by default () for one unnamed component, else
    (n,)), which the Dict observation keeps."""

    doc: str = ""
    shape: tuple[int, ...] | None = None

    def value_shape(self) -> tuple[int, ...]:
        """The shape of the key's value in dm_control's observation dict (one environment)."""
        if self.shape is not None:
            return tuple(self.shape)
        return () if not self.components and self.names is None else (len(self.component_names()),)


def _mt_state(shape: tuple) -> State:
    return State("the environment's RandomState (MT19937), dm_control's task.random", shape, reset=None)


class DmcTask(Task):
    """A task of dm_control's suite (module docstring). A domain's base declares `domain`,
    `model_name` (a file in dm_control/suite), `control_timestep` (None: the model's
    timestep) and its observation keys (`observation`, a tuple of Key); each task declares
    `task`, `time_limit`, and defines `initialize_episode` and `get_reward`."""

    domain: str = ""
    task: str = ""
    model_name: str = ""
    control_timestep: float | None = None  # seconds per env step; None: one physics step
    timestep: float = 0.0  # the model's physics timestep (the registered episode length needs it)
    time_limit: float = 0.0  # seconds per episode (math.inf: no time limit)
    builds_model: bool = False  # the model is model_name changed by edit_model (built_model)
    # model parameters the task changes for every episode alike, {field: {name: value}} (a
    # field of engine.params.PARAMS, named by its object): every row gets them at bind
    model_overrides: dict[str, dict[str, float]] = {}
    reset_disable = ("actuation",)  # dm_control's after_reset: a forward pass without actuation
    dict_observation = Param(
        False,
        "observations as a Dict of dm_control's keys, each a Box of dm_control's shape (False: the keys "
        "flattened into one Box, in dm_control's order)",
    )
    # the RandomState of each environment, MT19937's state in numpy's terms
    random_key = _mt_state((624,))
    random_pos = _mt_state(())
    random_has_gauss = _mt_state(())
    random_gauss = _mt_state(())

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        path = suite_model(self.model_name)
        if self.builds_model:
            path = built_model(path, f"{self.domain}-{self.task}", self.edit_model)
        self.model_file = path  # an absolute path: the env loads it as it is

    def edit_model(self, mjcf: ElementTree.Element) -> None:  # override where builds_model
        """Change the suite file's MJCF (its root element) in place, as dm_control's Python
        builder of this task's model does (see built_model)."""
        raise NotImplementedError

    @classmethod
    def episode_steps(cls) -> int | None:
        """Control steps per episode: dm_control's step limit time_limit / control_timestep,
        reached when the step count is >= it; None without a time limit (time_limit inf)."""
        if math.isinf(cls.time_limit):
            return None
        return math.ceil(cls.time_limit / cls.control_step())

    @classmethod
    def control_step(cls) -> float:
        """Seconds per env step, as dm_control computes it: timestep * n_sub_steps."""
        return cls.timestep * cls.n_sub_steps(cls.timestep)

    @classmethod
    def n_sub_steps(cls, timestep: float) -> int:
        """Physics steps per control step (dm_control's compute_n_steps): control_timestep
        must be an integer multiple of the physics timestep, within 1e-8."""
        if cls.control_timestep is None:
            return 1
        ratio = cls.control_timestep / timestep
        if cls.control_timestep < timestep or abs(ratio - round(ratio)) > 1e-8:
            raise InvalidArgumentError(
                f"control timestep {cls.control_timestep} s is no integer multiple of the physics "
                f"timestep {timestep} s"
            )
        return int(round(ratio))

    @classmethod
    def observation_slices(cls) -> dict[str, slice]:
        """{dm_control key: its columns of the flat observation}, in dm_control's order."""
        out, at = {}, 0
        for key in cls.observation:
            n = len(key.component_names())
            out[key.name] = slice(at, at + n)
            at += n
        return out

    @classmethod
    def split_observation(cls, obs: np.ndarray) -> dict[str, np.ndarray]:
        """A flat observation (..., n) as dm_control's dict of keys (views of its columns)."""
        return {k: obs[..., s] for k, s in cls.observation_slices().items()}

    def output_space(self, flat: spaces.Box) -> spaces.Space:
        """With dict_observation, a Dict of dm_control's keys in its order, each a Box of the
        key's shape in the flat Box's dtype; else the flat Box."""
        if not self.dict_observation:
            return flat
        return spaces.Dict(
            OrderedDict(
                (key.name, spaces.Box(-np.inf, np.inf, key.value_shape(), flat.dtype))
                for key in self.observation
            )
        )

    def output_observation(self, obs: np.ndarray):
        """With dict_observation, flat observations (..., n) as {key: (..., *its shape)} in
        dm_control's order; else `obs` itself."""
        if not self.dict_observation:
            return obs
        lead, slices = obs.shape[:-1], self.observation_slices()
        return {
            key.name: obs[..., slices[key.name]].reshape((*lead, *key.value_shape()))
            for key in self.observation
        }

    def bind(self, physics) -> None:
        super().bind(physics)
        if physics.timestep != self.timestep:
            raise InvalidArgumentError(
                f"{self.model_name}: the model's timestep is {physics.timestep} s, the task "
                f"declares {self.timestep} s"
            )
        self.frame_skip = self.n_sub_steps(physics.timestep)
        self._actuation = Actuation.raw_ctrl(physics, unlimited=mujoco.mjMAXVAL)
        if self.model_overrides:
            self._set_named_params(np.arange(physics.batch), self.model_overrides)

    def _set_named_params(self, rows: np.ndarray, values: dict[str, dict[str, float]]) -> None:
        """Give `rows` the parameters {field: {object name: value}} (fields of
        engine.params.PARAMS), each row's other entries of those fields as they are."""
        physics, own = self.physics, {}
        for field, named in values.items():
            value = physics.sim.get_param(field)[rows]
            for name, v in named.items():
                value[:, getattr(physics.named_model, field).columns([name])] = v
            own[field] = value
        physics.sim.set_params(rows, own)

    def actuation(self) -> Actuation:
        return self._actuation

    # --- stepping -----------------------------------------------------------------------------
    def step_physics(self, action: np.ndarray, nstep: int) -> None:
        """nstep physics steps under ctrl = action, ended as dm_control ends them: the
        position and velocity stages of the final state, the acceleration stage of the last
        step's start (module docstring)."""
        self._actuation.apply(self.physics.sim, action, nstep, observe_end="posvel")

    # --- episodes -----------------------------------------------------------------------------
    def reset_rows(self, rows: np.ndarray, rngs: list[np.random.Generator]) -> None:
        """Each row's episode drawn by initialize_episode from the row's RandomState; on a
        just-seeded one, initialize_environment's draws first (module docstring)."""
        for r, rng in zip(rows, rngs, strict=True):
            random, fresh = self._random_state(int(r), rng)
            if fresh:
                params = self.initialize_environment(int(r), random)
                if params:
                    self._set_named_params(np.array([r]), params)
            self.initialize_episode(int(r), random)
            _, key, pos, has_gauss, gauss = random.get_state(legacy=True)
            self.random_key[r], self.random_pos[r] = key, pos
            self.random_has_gauss[r], self.random_gauss[r] = has_gauss, gauss

    def _random_state(self, row: int, rng: np.random.Generator) -> tuple[np.random.RandomState, bool]:
        """(the row's RandomState for this episode, whether it was just seeded):
        RandomState(s) if `rng` was just seeded with s (nothing drawn from it since), else the
        one the row's last episode left."""
        bits = rng.bit_generator
        seeds = getattr(bits, "seed_seq", None)
        fresh = isinstance(seeds, np.random.SeedSequence) and bits.state == type(bits)(seeds).state
        if fresh:
            rng.random()  # used now: the next episode continues this RandomState
            s = seeds.entropy
            if isinstance(s, int) and 0 <= s < 2**32 and not seeds.spawn_key:
                return np.random.RandomState(s), True
            return np.random.RandomState(np.random.MT19937(seeds)), True
        random = np.random.RandomState(0)
        random.set_state(
            (
                "MT19937",
                self.random_key[row],
                int(self.random_pos[row]),
                int(self.random_has_gauss[row]),
                float(self.random_gauss[row]),
            )
        )
        return random, False

    def initialize_environment(self, row: int, random: np.random.RandomState) -> dict[str, dict[str, float]]:
        """Row `row`'s own model parameters, drawn from its just-seeded `random` as dm_control's
        builder draws them when it builds the environment, in the same order, before the first
        episode's initialize_episode continues `random`: {field of engine.params.PARAMS:
        {object name: value}} (as model_overrides), which the row keeps until its next
        seeding. Called only on a just-seeded RandomState; by default nothing is drawn ({})."""
        return {}

    def initialize_episode(self, row: int, random: np.random.RandomState) -> None:  # override
        """Row `row`'s initial state, drawn from `random` as dm_control's task draws it."""
        raise NotImplementedError

    # --- reward -----------------------------------------------------------------------------------
    def get_reward(self) -> tuple[np.ndarray, dict[str, np.ndarray]]:  # override
        """(reward (B,), {factor name: (B,)}): dm_control's reward of the state after the
        step, and the factors it is made of (reported in info beside it)."""
        raise NotImplementedError

    def reward(self, action):
        r, _ = self.get_reward()
        return r, {"reward_task": r}

    def metrics(self) -> dict[str, np.ndarray]:
        return self.get_reward()[1]

    def get_termination(self) -> np.ndarray:  # override where the task terminates
        """(B,) bool: the state after the step ends the episode (dm_control's get_termination
        returning a discount); by default never."""
        return np.zeros(self.physics.batch, dtype=bool)

    def evaluate(self, action: np.ndarray):
        """reward_task (dm_control's reward) and its factors, computed once; terminated as
        get_termination says."""
        r, factors = self.get_reward()
        info = {"reward_task": np.array(r, dtype=np.float64)}
        info.update((k, np.array(v, dtype=np.float64)) for k, v in factors.items())
        return np.array(r, dtype=np.float64), np.array(self.get_termination(), dtype=bool), info

    def randomize_limited_and_rotational_joints(self, row: int, random: np.random.RandomState) -> None:
        """dm_control's randomizers.randomize_limited_and_rotational_joints for row `row`, joint
        by joint in the model's order: a limited hinge or slide uniform in its range, a
        limited ball joint a rotation about a random axis by up to its range's upper end, an
        unlimited hinge uniform in [-pi, pi], an unlimited ball joint uniform on the unit
        3-sphere, a free joint's orientation `rand(4)` normalized (as dm_control draws it: a
        quadrant of the sphere); a free joint's position stays."""
        mj, qpos = self.physics.mj_model, self.physics.named.qpos.all
        for j in range(mj.njnt):
            kind, adr = int(mj.jnt_type[j]), int(mj.jnt_qposadr[j])
            low, high = mj.jnt_range[j]
            if mj.jnt_limited[j]:
                if kind in (JNT_HINGE, JNT_SLIDE):
                    qpos[row, adr] = random.uniform(low, high)
                elif kind == JNT_BALL:
                    axis = random.randn(3)
                    axis /= np.linalg.norm(axis)
                    angle = random.rand() * high
                    quat = np.zeros(4)
                    mujoco.mju_axisAngle2Quat(quat, axis, angle)
                    qpos[row, adr : adr + 4] = quat
            elif kind == JNT_HINGE:
                qpos[row, adr] = random.uniform(-np.pi, np.pi)
            elif kind == JNT_BALL:
                quat = random.randn(4)
                quat /= np.linalg.norm(quat)
                qpos[row, adr : adr + 4] = quat
            elif kind == JNT_FREE:
                quat = random.rand(4)
                quat /= np.linalg.norm(quat)
                qpos[row, adr + 3 : adr + 7] = quat

    def settle(self, row: int, nstep: int) -> None:
        """dm_control's `physics.step(nstep)` inside initialize_episode (the cheetah lets its
        random pose fall for 200 steps), for row `row`, on a scratch Simulator apart from the
        env's rows: its legacy step begins with mj_step2 on the derived quantities of the last
        forward pass, reset_context's at the reset pose (qpos0 at rest), so the first step's
        velocity is the reset pose's (one step from it) while its position integrates from the
        drawn pose, qpos + h qvel (slide and hinge joints only); then nstep - 1 steps. The
        row's qpos, qvel, act and solver warm start become the settled ones; its time stays 0
        (dm_control sets it back)."""
        physics, mj = self.physics, self.physics.mj_model
        if any(int(t) not in (JNT_HINGE, JNT_SLIDE) for t in mj.jnt_type):
            raise InvalidArgumentError("settle integrates slide and hinge joints only")
        sim = physics.scratch(1)
        d, row_qpos = sim.data, physics.named.qpos.all[row].copy()
        for name in ("qvel", "act", "ctrl", "qfrc_applied", "xfrc_applied", "qacc_warmstart", "time"):
            getattr(d, name)[0] = 0.0
        d.qpos[0] = physics.model.qpos0
        sim.step(1)
        d.qpos[0] = row_qpos + physics.timestep * d.qvel[0]
        if nstep > 1:
            sim.step(nstep - 1)
        for name in ("qpos", "qvel", "act", "qacc_warmstart"):
            getattr(physics.data, name)[row] = getattr(d, name)[0]

    def draw_until_free(self, row: int, draw, max_draws: int = MAX_DRAWS) -> None:
        """`draw()` (which writes row `row`'s state) again while the row touches anything, as
        dm_control's tasks loop `while penetrating` (they draw without limit; after
        `max_draws` draws this raises instead of looping on)."""
        for _ in range(max_draws):
            draw()
            if not self.penetrating(row):
                return
        raise InvalidArgumentError(
            f"{type(self).__name__}: no collision-free initial state in {max_draws} draws"
        )

    def penetrating(self, row: int) -> bool:
        """Row `row` touches anything at its current state (a forward pass of the row first):
        dm_control's `physics.after_reset(); physics.data.ncon > 0`."""
        self.physics.forward([row])
        return bool(self.physics.any_contact()[row])

    # --- readouts dm_control's tasks share ------------------------------------------------------
    def control(self) -> np.ndarray:
        """(B, nu) the controls (dm_control's physics.control())."""
        return self.physics.named.ctrl.all


def register_dmc(
    task_class: type[DmcTask], *, module: str, summary: str, doc: str, training: dict | None = None
):
    """(single env class, vector env class) of a dm_control task, registered as
    RoboDyn/dmc-<domain>-<task>-v0 with dm_control's episode length (None for a task without
    a time limit) and its own `robodyn train` settings where given (task_envs), the classes
    named Dmc<Domain><Task>Env and Dmc<Domain><Task>VectorEnv (the module binds them)."""
    words = f"{task_class.domain}_{task_class.task}".split("_")
    return task_envs(
        task_class,
        f"RoboDyn/dmc-{task_class.domain}-{task_class.task}-v0",
        doc,
        module=module,
        max_episode_steps=task_class.episode_steps(),
        summary=summary,
        training=training,
        name="Dmc" + "".join(w.capitalize() for w in words),
    )


def dmc_doc(
    task_class: type[DmcTask],
    *,
    description: str,
    action: str,
    rewards: str,
    start: str,
    reward_range: str = "In [0, 1]",
    termination: str = "Never terminates",
) -> str:
    """The env documentation of a dm_control task, in the sections every RoboDyn env has: the
    observation's table of dm_control keys and the episode's length come from the task's
    declarations, the rest from the arguments (`action` begins with the action's Box;
    `reward_range` says where the reward lies, `termination` when an episode terminates)."""
    rows = ["| key | columns | shape | what |", "|---|---|---|---|"]
    for key in task_class.observation:
        s = task_class.observation_slices()[key.name]
        rows.append(f"| `{key.name}` | {s.start}:{s.stop} | {key.value_shape()} | {key.doc} |")
    n = sum(len(k.component_names()) for k in task_class.observation)
    step = task_class.control_step()
    steps = task_class.episode_steps()
    if steps is None:
        end = (
            f"{termination}; no time limit (dm_control's time_limit=inf): registered without "
            "max_episode_steps, so never truncated unless `gym.make`'s max_episode_steps sets a limit."
        )
    else:
        end = f"{termination}; truncated after {steps} steps ({task_class.time_limit:g} s)."
    return f"""
## Description

{description}

dm_control's `{task_class.domain}` domain, task `{task_class.task}` (dm_control/suite/
{task_class.domain}.py), on RoboDyn's engine: the suite's own model (read from the installed
dm_control package), its control timestep ({step:g} s, {task_class.n_sub_steps(task_class.timestep)}
physics steps of {task_class.timestep:g} s), reward, observation and initial-state
distribution; `reset(seed=s)` starts the episode dm_control's `suite.load("{task_class.domain}",
"{task_class.task}", task_kwargs={{"random": s}})` starts (tests/envs/test_dmc.py compares
them step by step).

## Action Space

{action}

## Observation Space

`Box(-inf, inf, ({n},), float64)`: dm_control's observation dict flattened key by key, in its
order (`observation_slices()` gives each key's columns):

{chr(10).join(rows)}

With `dict_observation=True`: a `Dict` of these keys in this order, each a
`Box(-inf, inf, shape)` (in the env's dtype) of the shape dm_control gives it.

## Rewards

{rewards} {reward_range}, reported in `info` as `reward_task`, its factors beside it.

## Starting State

{start}

## Episode End

{end}

## Arguments

{{arguments}}

## Version History

- v0: dm_control 1.0's `{task_class.domain}-{task_class.task}`.
"""
