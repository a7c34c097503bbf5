"""Gymnasium's MujocoEnv as a task: the base of RoboDyn's ports of Gymnasium's MuJoCo v5
tasks (envs/*_v5.py), so that each port declares only what its Gymnasium env adds.

What every port shares with `gymnasium.envs.mujoco.MujocoEnv` (Gymnasium 1.x,
gymnasium/envs/mujoco/mujoco_env.py):

- `xml_file`: a bare file name is read from the installed Gymnasium's model folder
  (gymnasium/envs/mujoco/assets, never copied); a path starting with '.', '/' or '~' is a
  file of the user's own (MujocoEnv's expand_model_path);
- `frame_skip` physics steps per env step: dt = timestep * frame_skip;
- the action is the actuators' controls themselves, bounded by their ctrlranges, in a
  float32 Box (Actuation.raw_ctrl; MujocoEnv._set_action_space);
- a step is mj_step's: `data.ctrl = action`, frame_skip physics steps, after which the
  derived quantities (xpos, cinert, cvel, qfrc_actuator, sensordata, ...) belong to the
  start of the last physics step, as after mj_step; a task that reads contact forces sets
  `rne_post` and gets mj_rnePostConstraint's cfrc_ext after each step, as MujocoEnv calls it;
- frames are 480 x 480 from the free camera as Gymnasium's MujocoRenderer places it (the
  median of the geoms' positions in the first frame, the model's extent, then the port's
  DEFAULT_CAMERA_CONFIG); an env's rendering keywords are MujocoEnv's (robogym/render.py).
  Gymnasium draws the geoms where the last physics step began (mj_step's derived
  quantities); RoboDyn draws them at the env's current qpos;
- an episode starts from mj_resetData's state at init_qpos (the model's qpos0) and
  init_qvel (zero), where cfrc_ext is zero; the port draws its noise from the episode's
  generator (row r's is Gymnasium's `np_random` of the same seed) in Gymnasium's order, and
  the env's forward pass follows, as set_state's mj_forward does.
"""

from __future__ import annotations

import os
from pathlib import Path

import gymnasium
import numpy as np

from robodyn.engine.errors import ModelFileError
from robogym.actuation import Actuation
from robogym.checks import NON_NEGATIVE, Bounds, is_real
from robogym.declare import Param, State
from robogym.errors import ArgumentTypeError, InvalidArgumentError
from robogym.task import Task

# the MuJoCo models that ship with the installed Gymnasium
GYMNASIUM_ASSETS = Path(gymnasium.__file__).resolve().parent / "envs" / "mujoco" / "assets"


def gymnasium_model(name: str, value) -> str:
    """The absolute path of the model `value` names, as MujocoEnv's expand_model_path finds
    it: a path starting with '.' or '/' as it is, one starting with '~' expanded, a bare
    name in Gymnasium's model folder; an error naming it if no such file exists."""
    if not isinstance(value, str | os.PathLike):
        raise ArgumentTypeError(f"{name} must be a file name or path (a str), got {type(value).__name__}")
    text = os.fspath(value)
    if text.startswith((".", "/")):
        path = Path(text)
    elif text.startswith("~"):
        path = Path(text).expanduser()
    else:
        path = GYMNASIUM_ASSETS / text
    if not path.is_file():
        raise ModelFileError(f"{name}: no MJCF file at {str(path)!r}")
    return str(path.resolve())


def xml_file_param(default: str) -> Param:
    """The `xml_file` keyword of a port, defaulting to its Gymnasium model."""
    return Param(
        default,
        "MJCF file: a name in Gymnasium's model folder, or a path of your own ('.', '/' or '~')",
        convert=gymnasium_model,
        allowed="an MJCF file",
    )


def frame_skip_param(default: int) -> Param:
    return Param(default, "physics steps per env step", Bounds(1))


def reset_noise_param(default: float) -> Param:
    return Param(default, "scale of the random perturbation of the initial state", NON_NEGATIVE)


def _real_range(name: str, value) -> tuple[float, float]:
    """(low, high) of two real numbers, low <= high (either may be infinite)."""
    if not (isinstance(value, tuple | list | np.ndarray) and len(value) == 2 and all(map(is_real, value))):
        raise ArgumentTypeError(f"{name} must be a pair (low, high) of real numbers, got {value!r}")
    low, high = float(value[0]), float(value[1])
    if np.isnan(low) or np.isnan(high) or low > high:
        raise InvalidArgumentError(f"{name} must be (low, high) with low <= high, got {value!r}")
    return low, high


def range_param(default: tuple[float, float], doc: str) -> Param:
    """A (low, high) keyword, such as healthy_z_range."""
    return Param(default, doc, convert=_real_range, allowed="(low, high), low <= high")


class MujocoTask(Task):
    """A task as Gymnasium's MujocoEnv runs one (module docstring). A port declares
    `xml_file`, `frame_skip` and `reset_noise_scale` (with the helpers above) and its other
    keywords, its observation, reward, termination and reset noise."""

    action_dtype = np.float32  # MujocoEnv's action space is float32
    render_size = (480, 480)  # MujocoEnv's DEFAULT_SIZE
    # the free camera as MujocoRenderer places it; a port sets its Gymnasium env's
    # DEFAULT_CAMERA_CONFIG (the env's default_camera_config keyword replaces it)
    default_camera_config: dict = {}
    rne_post = False  # True: cfrc_ext (mj_rnePostConstraint) after every step

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.model_file = self.xml_file  # an absolute path: the env loads it as it is

    def bind(self, physics) -> None:
        super().bind(physics)
        self._actuation = Actuation.raw_ctrl(physics)
        self.init_qpos = physics.model.qpos0.copy()  # MujocoEnv's init_qpos: qpos after MjData()
        self.init_qvel = np.zeros(physics.model.nv)

    def actuation(self) -> Actuation:
        return self._actuation

    @property
    def dt(self) -> float:
        """Seconds per env step: timestep * frame_skip (MujocoEnv.dt)."""
        return self.physics.timestep * self.frame_skip

    # --- the state as MujocoEnv reads it ----------------------------------------------------
    def qpos(self) -> np.ndarray:
        """(B, nq) every row's qpos (a view)."""
        return self.physics.named.qpos.all

    def qvel(self) -> np.ndarray:
        """(B, nv) every row's qvel (a view)."""
        return self.physics.named.qvel.all

    def state_vector(self) -> np.ndarray:
        """(B, nq + nv): qpos and qvel side by side (MujocoEnv.state_vector)."""
        return np.concatenate([self.qpos(), self.qvel()], axis=1)

    def set_qpos_qvel(self, row: int, qpos: np.ndarray, qvel: np.ndarray) -> None:
        """Row `row`'s qpos and qvel (MujocoEnv.set_state; the env's forward pass follows)."""
        self.qpos()[row] = qpos
        self.qvel()[row] = qvel

    def noise(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """Uniform noise of half-width reset_noise_scale, `size` draws (Gymnasium's
        `np_random.uniform(low=-scale, high=scale, size=size)`)."""
        return rng.uniform(low=-self.reset_noise_scale, high=self.reset_noise_scale, size=size)

    @staticmethod
    def control_cost(weight: float, action: np.ndarray) -> np.ndarray:
        """(B,) weight * |action|^2 in Gymnasium's arithmetic: its actions are float32, so the
        squares, their sum and the product with the (Python float) weight are float32 too."""
        return (weight * np.sum(np.square(action.astype(np.float32)), axis=1)).astype(np.float64)

    def terminated(self) -> np.ndarray:
        """A port with a `terminate_when_unhealthy` keyword ends its episode when `is_healthy`
        says no and that keyword is True (Gymnasium's locomotion tasks); others never do,
        unless they override this."""
        if "terminate_when_unhealthy" in self.params:
            return ~self.is_healthy() & self.terminate_when_unhealthy
        return super().terminated()

    # --- stepping ---------------------------------------------------------------------------
    def step_physics(self, action: np.ndarray, nstep: int) -> None:
        """mj_step's frame_skip steps (derived quantities of the last step's start), then
        mj_rnePostConstraint for a task that reads cfrc_ext."""
        self._actuation.apply(self.physics.sim, action, nstep, observe_end=False)
        if self.rne_post:
            self.physics.sim.rne_post()

    def reset_rows(self, rows: np.ndarray, rngs: list[np.random.Generator]) -> None:
        """Each row from init_qpos and init_qvel plus the port's noise (reset_model), with
        cfrc_ext zero as mj_resetData leaves it."""
        if self.rne_post:
            self.physics.named.cfrc_ext.all[rows] = 0.0
        for r, rng in zip(rows, rngs, strict=True):
            self.reset_model(int(r), rng)

    def reset_model(self, row: int, rng: np.random.Generator) -> None:  # override
        """Row `row`'s initial qpos and qvel, drawn from `rng` as the Gymnasium env's
        reset_model draws from its np_random."""
        raise NotImplementedError

    def reset_uniform(self, row: int, rng: np.random.Generator) -> None:
        """Row `row` at init_qpos + u and init_qvel + v, u then v uniform in
        +-reset_noise_scale (`noise`): the reset_model of Gymnasium's Hopper, Walker2d,
        Humanoid and HumanoidStandup, among others."""
        qpos = self.init_qpos + self.noise(rng, self.init_qpos.size)
        qvel = self.init_qvel + self.noise(rng, self.init_qvel.size)
        self.set_qpos_qvel(row, qpos, qvel)


class PlanarTask(MujocoTask):
    """A port whose qpos starts with its root's planar position and whose reward tracks it
    (Hopper, Walker2d, HalfCheetah: x; Swimmer: x and y): qpos[:tracked] at the start of each
    step, kept as task state, and their velocity over the step (Gymnasium's
    (x_after - x_before) / dt); and Gymnasium's observation of these tasks, qpos without its
    first `tracked` entries (with exclude_current_positions_from_observation) then qvel,
    clipped to +-qvel_clip where Gymnasium clips it. A port declares
    exclude_current_positions_from_observation."""

    tracked = 1  # qpos[:tracked]: the coordinates whose velocity the task reads
    qvel_clip: float | None = None  # Hopper and Walker2d observe qvel clipped to +-10
    pos_before = State(
        "the tracked qpos at the start of the step (for the velocity)",
        shape=lambda task: (task.tracked,),
        reset=None,
    )

    def _skipped(self) -> int:
        return self.tracked if self.exclude_current_positions_from_observation else 0

    def observation_names(self) -> list[str]:
        nq, nv = self.init_qpos.size, self.init_qvel.size
        return [f"qpos[{i}]" for i in range(self._skipped(), nq)] + [f"qvel[{i}]" for i in range(nv)]

    def observe(self) -> np.ndarray:
        qvel = (
            self.qvel() if self.qvel_clip is None else np.clip(self.qvel(), -self.qvel_clip, self.qvel_clip)
        )
        return np.concatenate([self.qpos()[:, self._skipped() :], qvel], axis=1)

    def apply_action(self, action: np.ndarray) -> None:
        self.pos_before[:] = self.qpos()[:, : self.tracked]
        super().apply_action(action)

    def velocity(self) -> np.ndarray:
        """(B, tracked) the tracked coordinates' velocity over the last step."""
        return (self.qpos()[:, : self.tracked] - self.pos_before) / self.dt

    def set_qpos_qvel(self, row: int, qpos: np.ndarray, qvel: np.ndarray) -> None:
        super().set_qpos_qvel(row, qpos, qvel)
        self.pos_before[row] = qpos[: self.tracked]  # a velocity of 0 until the first step


class PlanarWalkerTask(PlanarTask):
    """Gymnasium's planar walkers, Hopper and Walker2d: qvel observed clipped to +-10; healthy
    while the torso's height z (qpos[1]) and angle (qpos[2]) lie strictly inside
    healthy_z_range and healthy_angle_range (a port may add conditions: is_healthy); the
    reward forward + survive - ctrl_cost, forward = forward_reward_weight * x velocity,
    survive = healthy_reward while healthy, ctrl_cost = ctrl_cost_weight * |action|^2 (in
    float32, control_cost), added in Gymnasium's order so that the reward is exactly the
    sum of the terms; each episode from reset_uniform. A port declares the keywords these
    read (forward_reward_weight, ctrl_cost_weight, healthy_reward, healthy_z_range,
    healthy_angle_range, reset_noise_scale), terminate_when_unhealthy and
    exclude_current_positions_from_observation itself, in its Gymnasium env's order (a
    base's declarations would come first in the documentation's table)."""

    qvel_clip = 10

    def is_healthy(self) -> np.ndarray:
        """(B,) bool: the torso's height z and angle strictly inside their ranges."""
        q = self.qpos()
        zlo, zhi = self.healthy_z_range
        alo, ahi = self.healthy_angle_range
        return (zlo < q[:, 1]) & (q[:, 1] < zhi) & (alo < q[:, 2]) & (q[:, 2] < ahi)

    def reward(self, action):
        """(forward + survive - ctrl_cost, {reward_forward, reward_survive, reward_ctrl}), (B,)
        each (class docstring)."""
        forward = self.forward_reward_weight * self.velocity()[:, 0]
        survive = self.is_healthy() * self.healthy_reward
        ctrl_cost = self.control_cost(self.ctrl_cost_weight, action)
        # Gymnasium's order of addition: (forward + survive) - ctrl_cost, the terms' sum exactly
        terms = {"reward_forward": forward, "reward_survive": survive, "reward_ctrl": -ctrl_cost}
        return forward + survive - ctrl_cost, terms

    def metrics(self) -> dict[str, np.ndarray]:
        """Gymnasium's info of these tasks: x, the height z from its initial value, the x
        velocity."""
        q = self.qpos()
        return {
            "x_position": q[:, 0],
            "z_distance_from_origin": q[:, 1] - self.init_qpos[1],
            "x_velocity": self.velocity()[:, 0],
        }

    def reset_model(self, row, rng) -> None:
        self.reset_uniform(row, rng)


class TrackedXYTask(MujocoTask):
    """A port whose reward tracks the x-y of a point Gymnasium reads from the derived
    quantities (Ant: its main body's xpos; Humanoid: the mass centre of the xipos): as
    Gymnasium reads it before and after each step, the x-y the last step left is kept as task
    state (a snapshot carries it; a restore recomputes the derived quantities from the state,
    so reading them again would differ), and the first step of an episode reads it fresh.
    `xy_velocity` is (x-y after - x-y before) / dt. A port defines `tracked_xy`."""

    xy_velocity = State("the tracked point's x-y velocity over the last step", shape=(2,))
    xy_before = State("the tracked point's x-y after the last step", shape=(2,), reset=None)
    xy_before_set = State("xy_before holds a step's x-y (else: read it fresh, at reset)", dtype=bool)

    def tracked_xy(self) -> np.ndarray:  # override
        """(B, 2) the tracked point's x and y now (a new array)."""
        raise NotImplementedError

    def xy_metrics(self) -> dict[str, np.ndarray]:
        """Gymnasium's position and velocity info of these tasks: the root's x, y and distance
        from the origin (qpos), the tracked point's x and y velocities."""
        q = self.qpos()
        return {
            "x_position": q[:, 0],
            "y_position": q[:, 1],
            "distance_from_origin": np.sqrt(q[:, 0] * q[:, 0] + q[:, 1] * q[:, 1]),
            "x_velocity": self.xy_velocity[:, 0],
            "y_velocity": self.xy_velocity[:, 1],
        }

    def locomotion_reward(self, survive: np.ndarray, ctrl_cost: np.ndarray, contact_cost: np.ndarray):
        """(reward, terms) of Gymnasium's Ant and Humanoid: forward (the tracked point's x
        velocity, weighted) + survive - ctrl_cost - contact_cost, added term by term so that
        the reward is exactly the sum of the terms."""
        forward = self.forward_reward_weight * self.xy_velocity[:, 0]
        terms = {
            "reward_forward": forward,
            "reward_survive": survive,
            "reward_ctrl": -ctrl_cost,
            "reward_contact": -contact_cost,
        }
        return forward + survive - ctrl_cost - contact_cost, terms

    def apply_action(self, action: np.ndarray) -> None:
        before = np.where(self.xy_before_set[:, None], self.xy_before, self.tracked_xy())
        super().apply_action(action)
        self.xy_before[:] = self.tracked_xy()
        self.xy_before_set[:] = True
        self.xy_velocity[:] = (self.xy_before - before) / self.dt
