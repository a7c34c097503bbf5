"""dm_control's finger domain (dm_control/suite/finger.py): a planar two-joint finger spins a
body on a hinge (spin) or turns it to a target angle (turn_easy, turn_hard), as
RoboDyn/dmc-finger-<task>-v0."""

from __future__ import annotations

import mujoco
import numpy as np

from robogym.declare import State
from robogym.dmc_task import DmcTask, Key, dmc_doc, register_dmc
from robogym.errors import InvalidArgumentError

EASY_TARGET_SIZE, HARD_TARGET_SIZE = 0.07, 0.03  # the target's radius (m)
SPIN_VELOCITY = 15.0  # rad/s the spinner must turn at (clockwise) to be rewarded
MAX_ATTEMPTS = 1000  # collision-free poses tried (dm_control's limit)
X_Z = [0, 2]


def _site(mj_model, name: str) -> int:
    """The id of a site of the model the renderer draws."""
    return mujoco.mj_name2id(mj_model, mujoco.mjtObj.mjOBJ_SITE, name)


class Finger(DmcTask):
    """The finger's readouts (dm_control's finger.Physics: every observation a function of
    its sensors) shared by Spin and Turn. The touch sensors, of MuJoCo's acceleration stage,
    keep their values of the last physics step's start, as after dm_control's step."""

    domain = "finger"
    model_name = "finger.xml"
    timestep = 0.01
    control_timestep = 0.02
    time_limit = 20.0
    render_camera = "cam0"
    observation = (
        Key(
            "position",
            lambda t: t.bounded_position(),
            ("proximal", "distal", "tip.x", "tip.z"),
            doc="the finger's joint angles, the tip's x, z from the hinge",
        ),
        Key(
            "velocity",
            lambda t: t.physics.named.sensordata[["proximal_velocity", "distal_velocity", "hinge_velocity"]],
            ("proximal", "distal", "hinge"),
            doc="the finger's and the spinner's joint velocities",
        ),
        Key("touch", lambda t: t.touch(), ("top", "bottom"), doc="log(1 + touch sensors)"),
    )

    def touch(self) -> np.ndarray:
        """(B, 2) log(1 + the touch sensors' normal forces)."""
        return np.log1p(self.physics.named.sensordata[["touchtop", "touchbottom"]])

    def hinge_velocity(self) -> np.ndarray:
        return self.physics.named.sensordata["hinge_velocity"]

    def tip_position(self) -> np.ndarray:
        """(B, 2) the tip's x, z relative to the hinge."""
        sensors = self.physics.named.sensordata
        return sensors["tip"][:, X_Z] - sensors["spinner"][:, X_Z]

    def bounded_position(self) -> np.ndarray:
        return np.concatenate(
            [self.physics.named.sensordata[["proximal", "distal"]], self.tip_position()], axis=1
        )

    def set_random_joint_angles(self, row: int, random) -> None:
        """Random joint angles (randomize_limited_and_rotational_joints), drawn again while
        anything touches (at most MAX_ATTEMPTS times, as dm_control)."""
        for _ in range(MAX_ATTEMPTS):
            self.randomize_limited_and_rotational_joints(row, random)
            if not self.penetrating(row):
                return
        raise InvalidArgumentError(f"no collision-free finger pose in {MAX_ATTEMPTS} draws")


class Spin(Finger):
    """Spin the body: dm_control lowers the hinge's damping to 0.03 for this task."""

    task = "spin"
    model_overrides = {"dof_damping": {"hinge": 0.03}}

    def initialize_episode(self, row, random) -> None:
        self.set_random_joint_angles(row, random)

    def get_reward(self):
        return (self.hinge_velocity() <= -SPIN_VELOCITY).astype(np.float64), {}

    def decorate_frame(self, mj_model, row: int) -> None:
        for site in ("target", "tip"):  # dm_control hides them in this task
            mj_model.site_rgba[_site(mj_model, site), 3] = 0


class Turn(Finger):
    """Turn the body until its tip is in the target, at a random angle on the tip's circle:
    dm_control moves the target site (on the world body) each episode; here its x, z is task
    state, which the renderer draws it at."""

    target_size = EASY_TARGET_SIZE
    target = State("the target's x, z in the world (m), drawn each episode", shape=(2,), reset=None)
    observation = (
        *Finger.observation,
        Key(
            "target_position",
            lambda t: t.target_position(),
            ("x", "z"),
            doc="the target's x, z from the hinge",
        ),
        Key("dist_to_target", lambda t: t.dist_to_target(), doc="from the tip to the target's surface (m)"),
    )

    def target_position(self) -> np.ndarray:
        """(B, 2) the target's x, z relative to the hinge."""
        return self.target - self.physics.named.sensordata["spinner"][:, X_Z]

    def dist_to_target(self) -> np.ndarray:
        """(B,) the signed distance from the tip to the target's surface (negative inside)."""
        return np.linalg.norm(self.target_position() - self.tip_position(), axis=1) - self.target_size

    def initialize_episode(self, row, random) -> None:
        angle = random.uniform(-np.pi, np.pi)
        self.physics.forward([row])  # the hinge's anchor, at the reset pose
        hinge = self.physics.named.xanchor["hinge"][row, X_Z]
        radius = self.physics.named_model.geom_size["cap1"].sum()
        self.target[row] = hinge[0] + radius * np.sin(angle), hinge[1] + radius * np.cos(angle)
        self.set_random_joint_angles(row, random)

    def get_reward(self):
        return (self.dist_to_target() <= 0).astype(np.float64), {}

    def decorate_frame(self, mj_model, row: int) -> None:
        s = _site(mj_model, "target")
        mj_model.site_pos[s, X_Z] = self.target[row]
        mj_model.site_size[s, 0] = self.target_size


class TurnEasy(Turn):
    task = "turn_easy"


class TurnHard(Turn):
    task = "turn_hard"
    target_size = HARD_TARGET_SIZE


_ACTION = "`Box(-1, 1, (2,), float64)`: the proximal and distal joints' motors."
_POSE = (
    "The finger's joints uniform in their ranges and the spinner uniform in [-pi, pi), drawn "
    "again while anything touches (dm_control's rejection sampling, the same draws); at rest."
)


def _turn_doc(task_class, size: str) -> str:
    return dmc_doc(
        task_class,
        description=f"Turn a body on a hinge with a planar finger until its tip is inside a {size} target.",
        action=_ACTION,
        rewards="1 while the body's tip is inside the target, else 0.",
        start=f"The target at a uniform angle on the tip's circle. {_POSE}",
    )


DmcFingerSpinEnv, DmcFingerSpinVectorEnv = register_dmc(
    Spin,
    module=__name__,
    summary="dm_control's finger-spin: spin the body on its hinge",
    doc=dmc_doc(
        Spin,
        description="Spin a body on a hinge (damping 0.03) with a planar two-joint finger.",
        action=_ACTION,
        rewards="1 while the body turns clockwise at 15 rad/s or more, else 0.",
        start=_POSE,
    ),
)
DmcFingerTurnEasyEnv, DmcFingerTurnEasyVectorEnv = register_dmc(
    TurnEasy,
    module=__name__,
    summary="dm_control's finger-turn_easy: turn the body's tip into a big target",
    doc=_turn_doc(TurnEasy, "big (0.07 m)"),
)
DmcFingerTurnHardEnv, DmcFingerTurnHardVectorEnv = register_dmc(
    TurnHard,
    module=__name__,
    summary="dm_control's finger-turn_hard: turn the body's tip into a small target",
    doc=_turn_doc(TurnHard, "small (0.03 m)"),
)
