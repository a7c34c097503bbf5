"""RoboDyn/MJCF-v0: your own robot, any MJCF file the engine loads, as a Gymnasium env.

    env = robogym.make_env("my_robot.xml", frame_skip=5)  # or gym.make("RoboDyn/MJCF-v0", xml_file=...)
    envs = robogym.make_vec_env("my_robot.xml", num_envs=64)  # or gym.make_vec(...)

as Gymnasium's `MujocoEnv(xml_file=...)` makes an env of a file. It is a Task like every
other (`MJCFTask`), so the env is a RoboDynEnv and the vector env the native
RoboDynVectorEnv, with everything they bring (snapshots, pickling, rendering, seeding, bad
input refused). What it makes of the file:

- observation: the model's sensor vector (sensordata, in the order of its `<sensor>`) if
  it has sensors, else qpos and qvel side by side;
- action: every actuator of the model, in [-1, 1] mapped onto its ctrlrange
  (robogym.actuation.Actuation's "ctrl" kind); every actuator needs a ctrlrange;
- reward: `reward_fn(physics, action)`, default 0; termination: `terminated_fn(physics)`,
  default never. `physics` is the task's robogym.physics.Physics (B rows: 1 for a single
  env, num_envs for a vector env): `physics.named.xpos["torso"]` (B, 3),
  `physics.named.sensordata["gyro"]`, `physics.qpos("hinge")` (B,), `physics.sensor(name)`,
  `physics.data.qpos` (B, nq), ..., all at the state after the step; `action` is the (B, k)
  action in [-1, 1] as the env applied it (clipped into the box). reward_fn returns (B,)
  real numbers, terminated_fn (B,) bools: one per row. They are called once when the env
  is built (on the model's initial state, a zero action) and a callable that raises or
  returns anything else is refused then; a wrong result later raises naming it;
- episodes start at the model's qpos0 at rest (MuJoCo's mj_resetData), plus uniform noise
  of half-width `reset_noise_scale` on each slide and hinge joint's position and on every
  velocity; they truncate after `max_episode_steps` (default 1000) env steps of
  `frame_skip` physics steps each.

The id is in Gymnasium's registry (with `spec.max_episode_steps` 1000), not in
`robogym.TASKS`, whose every task the generic checks make without keywords: this one needs
its file.
"""

from __future__ import annotations

import os
from pathlib import Path

import gymnasium as gym
import mujoco
import numpy as np

from robodyn.engine.errors import ModelFileError, RoboDynError
from robogym.actuation import Actuation
from robogym.checks import NON_NEGATIVE, Bounds, check_count
from robogym.declare import Obs, Param
from robogym.errors import ArgumentTypeError, InvalidArgumentError
from robogym.gymshim import with_length
from robogym.registration import register_task
from robogym.task import Task
from robogym.task_envs import env_classes

ENV_ID = "RoboDyn/MJCF-v0"
MAX_EPISODE_STEPS = 1000

_JNT_FREE, _JNT_BALL = int(mujoco.mjtJoint.mjJNT_FREE), int(mujoco.mjtJoint.mjJNT_BALL)
_WIDTHS = {int(mujoco.mjtJoint.mjJNT_FREE): (7, 6), int(mujoco.mjtJoint.mjJNT_BALL): (4, 3)}  # else (1, 1)


def _xml_file(name: str, value) -> str:
    """The absolute path of an existing file (what the task loads), or an error naming it."""
    if value is None:
        raise ArgumentTypeError(f"{ENV_ID} needs {name}=, the path of an MJCF file")
    if not isinstance(value, str | os.PathLike):
        raise ArgumentTypeError(
            f"{name} must be the path of an MJCF file (a str or os.PathLike), "
            f"got {type(value).__name__} {value!r}"
        )
    path = Path(value).expanduser()
    if not path.is_file():
        what = "a directory" if path.is_dir() else "no such file"
        raise ModelFileError(
            f"{name}: no MJCF file at {str(value)!r} ({what}; pass the path of an MJCF file)"
        )
    return str(path.resolve())


def _optional_callable(name: str, value):
    if value is None or callable(value):
        return value
    raise ArgumentTypeError(f"{name} must be None or a callable, got {type(value).__name__} {value!r}")


class MJCFTask(Task):
    """Any MJCF file as a task: its sensors (or qpos and qvel) observed, its actuators in
    [-1, 1] acting, reward and termination from the optional callables (module docstring)."""

    xml_file = Param(
        None, "the MJCF file to simulate (required)", convert=_xml_file, allowed="path of an MJCF file"
    )
    frame_skip = Param(1, "physics steps (of the model's timestep) per env step", Bounds(1))
    reset_noise_scale = Param(
        0.0,
        "half-width of the uniform noise on slide and hinge positions and every velocity at reset",
        NON_NEGATIVE,
    )
    reward_fn = Param(
        None,
        "reward_fn(physics, action) -> (B,) floats; None: reward 0",
        convert=_optional_callable,
        allowed="None or a callable",
    )
    terminated_fn = Param(
        None,
        "terminated_fn(physics) -> (B,) bools; None: never terminates",
        convert=_optional_callable,
        allowed="None or a callable",
    )

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.model_file = self.xml_file  # an absolute path: EnvCore loads it as it is

    def bind(self, physics) -> None:
        super().bind(physics)
        mj = physics.mj_model
        where = self.xml_file
        if mj.nu == 0:
            raise InvalidArgumentError(
                f"{where} has no actuators: {ENV_ID}'s action drives the model's actuators "
                "(add an <actuator> element with a ctrlrange)"
            )
        for a in range(mj.nu):
            if not physics.model.actuator_ctrllimited[a]:
                name = mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_ACTUATOR, a) or f"#{a}"
                raise InvalidArgumentError(
                    f"{where}: actuator {name} has no ctrlrange; {ENV_ID} maps each action "
                    "component in [-1, 1] onto its actuator's ctrlrange (give it ctrlrange=)"
                )
        try:
            self._actuation = Actuation(
                physics.model, "ctrl", _driven_dofs(mj), -1.0, 1.0, actuators=list(range(mj.nu))
            )
        except RoboDynError as e:
            raise type(e)(f"{where}: {e}") from e
        self._parts = None if physics.sensor_names() else _state_parts(mj)
        self._scalar_qpos = np.array(
            [
                int(mj.jnt_qposadr[j])
                for j in range(mj.njnt)
                if int(mj.jnt_type[j]) not in (_JNT_FREE, _JNT_BALL)
            ],
            dtype=np.int64,
        )
        self._try_callables()

    def actuation(self) -> Actuation:
        return self._actuation

    def observation_parts(self) -> tuple[Obs, ...]:
        return self._parts if self._parts is not None else super().observation_parts()

    def reset_rows(self, rows, rngs) -> None:
        s = self.reset_noise_scale
        if s == 0.0:
            return
        d, nv, at = self.physics.data, self.physics.mj_model.nv, self._scalar_qpos
        for r, rng in zip(rows, rngs, strict=True):
            d.qpos[r, at] += rng.uniform(-s, s, size=len(at))
            d.qvel[r] += rng.uniform(-s, s, size=nv)

    def reward(self, action):
        if self.reward_fn is None:
            return np.zeros(self.physics.batch), {}
        return self._rows("reward_fn", self.reward_fn(self.physics, action), "f"), {}

    def terminated(self) -> np.ndarray:
        if self.terminated_fn is None:
            return np.zeros(self.physics.batch, dtype=bool)
        return self._rows("terminated_fn", self.terminated_fn(self.physics), "b")

    def _rows(self, name: str, value, kind: str) -> np.ndarray:
        """A callable's result as (B,) float64 (kind "f": finite real numbers) or bool (kind
        "b"), or InvalidArgumentError saying what it returned."""
        B = self.physics.batch
        want = f"({B},) {'finite real numbers' if kind == 'f' else 'bools'}, one per row"
        try:
            a = np.asarray(value)
        except Exception:  # a ragged list, an object numpy cannot hold
            a = np.asarray(None)
        ok = a.shape == (B,) and (
            (kind == "f" and a.dtype.kind in "iuf" and bool(np.all(np.isfinite(a))))
            or (kind == "b" and a.dtype == np.bool_)
        )
        if not ok:
            got = f"{a.dtype} of shape {a.shape}" if a.dtype != object else repr(value)
            raise InvalidArgumentError(f"{name} must return {want}, got {got}: {value!r}"[:400])
        return np.array(a, dtype=np.float64 if kind == "f" else bool)

    def _try_callables(self) -> None:
        """Call reward_fn and terminated_fn once on the model's initial state (forward pass
        done) with a zero action, so one that fails or returns the wrong thing is refused
        when the env is built; the state is reset again before any episode."""
        if self.reward_fn is None and self.terminated_fn is None:
            return
        p = self.physics
        p.reset_data()
        p.forward()
        zero = np.zeros((p.batch, self.physics.mj_model.nu))
        for name, call in (
            ("reward_fn", lambda: self.reward(zero)),
            ("terminated_fn", self.terminated),
        ):
            try:
                call()
            except InvalidArgumentError:
                raise
            except Exception as e:
                raise InvalidArgumentError(
                    f"{name} raised {type(e).__name__} when called on {Path(self.xml_file).name}'s "
                    f"initial state: {e}"
                ) from e


def _driven_dofs(mj) -> list[int]:
    """The dof each actuator drives, for the actuation mask (what PoseHold and the
    linearization read): a joint transmission's slide or hinge dof; -1 for a tendon or site
    transmission, a ball or free joint, and an actuator on a dof an earlier one drives."""
    dofs, seen = [], set()
    for a in range(mj.nu):
        dof = -1
        if int(mj.actuator_trntype[a]) == int(mujoco.mjtTrn.mjTRN_JOINT):
            j = int(mj.actuator_trnid[a, 0])
            if int(mj.jnt_type[j]) not in (_JNT_FREE, _JNT_BALL):
                dof = int(mj.jnt_dofadr[j])
        dofs.append(-1 if dof in seen else dof)
        seen.add(dof)
    return dofs


def _state_parts(mj) -> tuple[Obs, ...]:
    """qpos and qvel as the observation's parts, each entry named by its joint."""
    qpos, qvel = [], []
    for j in range(mj.njnt):
        name = mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_JOINT, j) or f"joint{j}"
        nq, nv = _WIDTHS.get(int(mj.jnt_type[j]), (1, 1))
        qpos += [f"qpos[{name}]"] if nq == 1 else [f"qpos[{name}][{k}]" for k in range(nq)]
        qvel += [f"qvel[{name}]"] if nv == 1 else [f"qvel[{name}][{k}]" for k in range(nv)]
    return (
        Obs("qpos", lambda t: t.physics.data.qpos, names=tuple(qpos)),
        Obs("qvel", lambda t: t.physics.data.qvel, names=tuple(qvel)),
    )


_DOC = """
## Description

Any MJCF file the engine loads (`xml_file=`), as Gymnasium's `MujocoEnv(xml_file=...)` makes
an env of one: your own robot on RoboDyn's engine. The reward and the termination are yours
to give (`reward_fn`, `terminated_fn`); without them the reward is 0 and episodes only
truncate.

## Action Space

`Box(-1, 1, (nu,), float64)`: one component per actuator of the model, in its order,
mapped onto the actuator's ctrlrange (clipped into the box).

## Observation Space

`Box(-inf, inf, (nsensordata,), float64)`: the model's sensor vector, if it has sensors;
else `(nq + nv,)`: qpos then qvel.

## Rewards

`reward_fn(physics, action)`, (B,) floats, one per row (robogym.physics.Physics after the
step; the action as applied, in [-1, 1]); 0 without it.

## Starting State

The model's qpos0 at rest, plus uniform noise of half-width reset_noise_scale on slide and
hinge positions and every velocity.

## Episode End

Termination where `terminated_fn(physics)` is True (never without it); truncation after
max_episode_steps steps (1000 unless given).

## Arguments

{arguments}

## Version History

- v0: initial version.
"""

MJCFEnv, MJCFVectorEnv = env_classes(MJCFTask, ENV_ID, _DOC, module=__name__)
register_task(ENV_ID, f"{__name__}:MJCFEnv", f"{__name__}:MJCFVectorEnv", MAX_EPISODE_STEPS)


def make_env(xml_file, *, max_episode_steps: int = MAX_EPISODE_STEPS, **kwargs) -> MJCFEnv:
    """A single env of an MJCF file: `gym.make("RoboDyn/MJCF-v0", xml_file=xml_file, ...)`,
    returning the env itself (its `spec.max_episode_steps` is `max_episode_steps`, which it
    truncates at). kwargs: frame_skip, reset_noise_scale, reward_fn, terminated_fn and the
    env's own (render_mode, width, height, dtype); see MJCFEnv's documentation."""
    check_count("max_episode_steps", max_episode_steps)
    return gym.make(with_length(gym.spec(ENV_ID), max_episode_steps), xml_file=xml_file, **kwargs)


def make_vec_env(
    xml_file, num_envs: int, *, max_episode_steps: int = MAX_EPISODE_STEPS, **kwargs
) -> MJCFVectorEnv:
    """The native vector env of an MJCF file, num_envs rows stepped in one engine call:
    `gym.make_vec("RoboDyn/MJCF-v0", num_envs, xml_file=xml_file, ...)`. kwargs as make_env's,
    plus the vector env's own (autoreset_mode, nthread)."""
    check_count("max_episode_steps", max_episode_steps)
    return gym.make_vec(
        ENV_ID, num_envs=num_envs, xml_file=xml_file, max_episode_steps=max_episode_steps, **kwargs
    )
