"""dm_control's manipulator domain (dm_control/suite/manipulator.py): a planar arm with a
two-finger hand brings a ball to a target, as RoboDyn/dmc-manipulator-bring_ball-v0."""

from __future__ import annotations

from xml.etree import ElementTree

import numpy as np

from robogym.declare import State
from robogym.dmc_task import XMAT, DmcTask, Key, dmc_doc, register_dmc, tolerance

CLOSE = 0.01  # (m) a distance below which two things are close
P_IN_HAND, P_IN_TARGET = 0.1, 0.1  # probabilities of the ball starting in the hand, in the target
ARM_JOINTS = (
    "arm_root",
    "arm_shoulder",
    "arm_elbow",
    "arm_wrist",
    "finger",
    "fingertip",
    "thumb",
    "thumbtip",
)
TOUCH_SENSORS = ("palm_touch", "finger_touch", "thumb_touch", "fingertip_touch", "thumbtip_touch")
PROPS = ("ball", "target_ball", "cup", "peg", "target_peg", "slot")  # the bodies of every task's props
X_Z, QW_QY = [0, 2], [0, 2]
TARGET_X, TARGET_Z = (-0.4, 0.4), (0.1, 0.4)  # (m) the target's box
BALL_X, BALL_Z, BALL_VX = (-0.5, 0.5), (0.0, 0.7), (-5.0, 5.0)  # a ball placed uniformly: m, m, m/s


def _pose_2d(t, body: str) -> np.ndarray:
    """(B, 4) a body's x, z and orientation quaternion's w, y (dm_control's body_2d_pose)."""
    named = t.physics.named
    return np.concatenate([named.xpos[body][:, X_Z], named.xquat[body][:, QW_QY]], axis=1)


class Manipulator(DmcTask):
    """The manipulator's readouts (dm_control's manipulator.Physics) and its Bring task with the
    ball prop, fully observable. dm_control builds the model from manipulator.xml without the
    props this task does not use (edit_model does the same) and moves the target body (a ghost:
    it has no contacts) each episode; here its x, z and angle are task state, which the
    observation and the reward read and the renderer draws it at. The touch sensors, of
    MuJoCo's acceleration stage, keep their values of the last physics step's start, as after
    dm_control's step."""

    domain = "manipulator"
    task = "bring_ball"
    model_name = "manipulator.xml"
    builds_model = True
    props = ("ball", "target_ball")
    timestep = 0.001
    control_timestep = 0.01
    time_limit = 10.0
    render_camera = "fixed"
    target = State(
        "the target's x, z (m) and angle about y (rad), drawn each episode", shape=(3,), reset=None
    )
    observation = (
        Key(
            "arm_pos",
            lambda t: t.bounded_joint_pos(),
            tuple(f"{j}.{f}" for j in ARM_JOINTS for f in ("sin", "cos")),
            doc="the arm's and hand's joint angles, as sine and cosine",
            shape=(len(ARM_JOINTS), 2),
        ),
        Key("arm_vel", lambda t: t.physics.named.qvel[list(ARM_JOINTS)], ARM_JOINTS, doc="their velocities"),
        Key("touch", lambda t: t.touch(), TOUCH_SENSORS, doc="log(1 + touch sensors)"),
        Key(
            "hand_pos",
            lambda t: _pose_2d(t, "hand"),
            ("x", "z", "qw", "qy"),
            doc="the hand's x, z and quaternion w, y",
        ),
        Key(
            "object_pos",
            lambda t: _pose_2d(t, "ball"),
            ("x", "z", "qw", "qy"),
            doc="the ball's x, z and quaternion w, y",
        ),
        Key(
            "object_vel",
            lambda t: t.physics.named.qvel[["ball_x", "ball_z", "ball_y"]],
            ("x", "z", "y"),
            doc="the ball's joint velocities",
        ),
        Key(
            "target_pos",
            lambda t: t.target_pose(),
            ("x", "z", "qw", "qy"),
            doc="the target's x, z and quaternion w, y",
        ),
    )

    def edit_model(self, mjcf: ElementTree.Element) -> None:
        """dm_control's make_model: every prop body but this task's removed."""
        for parent in list(mjcf.iter()):
            for child in list(parent):
                if child.tag == "body" and child.get("name") in PROPS and child.get("name") not in self.props:
                    parent.remove(child)

    def bounded_joint_pos(self) -> np.ndarray:
        """(B, 16) sin and cos of each arm joint, joint by joint."""
        q = self.physics.named.qpos[list(ARM_JOINTS)]
        return np.stack([np.sin(q), np.cos(q)], axis=2).reshape(len(q), -1)

    def touch(self) -> np.ndarray:
        return np.log1p(self.physics.named.sensordata[list(TOUCH_SENSORS)])

    def target_pose(self) -> np.ndarray:
        """(B, 4) the target's x, z and quaternion w, y (a rotation by its angle about y)."""
        half = self.target[:, 2] / 2
        return np.stack([self.target[:, 0], self.target[:, 1], np.cos(half), np.sin(half)], axis=1)

    def ball_to_target(self) -> np.ndarray:
        """(B,) the distance from the ball's site to the target's (at the target body's origin)."""
        y = self.physics.named_model.body_pos["target_ball"][1]
        target = np.stack([self.target[:, 0], np.full(len(self.target), y), self.target[:, 1]], axis=1)
        return np.linalg.norm(self.physics.named.site_xpos["ball"] - target, axis=1)

    def initialize_episode(self, row, random) -> None:
        """A collision-free draw (dm_control's rejection loop, the same draws): the arm's joints
        uniform in their ranges (the unlimited root in [-pi, pi)), the finger as the thumb; the
        target uniform in its box at a uniform angle; the ball in the hand, in the target, or
        uniform with a random horizontal velocity."""
        qpos, qvel = self.physics.named.qpos, self.physics.named.qvel
        limited = self.physics.named_model.jnt_limited[list(ARM_JOINTS)].astype(bool)
        ranges = self.physics.named_model.jnt_range[list(ARM_JOINTS)]
        low, high = np.where(limited, ranges[:, 0], -np.pi), np.where(limited, ranges[:, 1], np.pi)

        def draw() -> None:
            angles = random.uniform(low, high)
            for joint, angle in zip(ARM_JOINTS, angles, strict=True):
                qpos[joint][row] = angle
            qpos["finger"][row] = qpos["thumb"][row]
            x, z = random.uniform(*TARGET_X), random.uniform(*TARGET_Z)
            angle = random.uniform(-np.pi, np.pi)
            self.target[row] = x, z, angle
            start = random.choice(
                ["in_hand", "in_target", "uniform"], p=[P_IN_HAND, P_IN_TARGET, 1 - P_IN_HAND - P_IN_TARGET]
            )
            if start == "in_hand":
                self.physics.forward([row])
                named = self.physics.named
                x, z = named.site_xpos["grasp"][row, X_Z]
                grasp = named.site_xmat["grasp"][row, [XMAT["xx"], XMAT["zx"]]]
                angle = np.pi - np.arctan2(grasp[1], grasp[0])
            elif start == "uniform":
                x, z, angle = random.uniform(*BALL_X), random.uniform(*BALL_Z), random.uniform(0, 2 * np.pi)
                qvel["ball_x"][row] = random.uniform(*BALL_VX)
            qpos["ball_x"][row], qpos["ball_z"][row], qpos["ball_y"][row] = x, z, angle

        self.draw_until_free(row, draw)

    def get_reward(self):
        distance = self.ball_to_target()
        return tolerance(distance, (0, CLOSE), 2 * CLOSE), {"distance": distance}

    def decorate_frame(self, mj_model, row: int) -> None:
        b = self.physics.body_id("target_ball")
        x, z, angle = self.target[row]
        mj_model.body_pos[b, X_Z] = x, z
        mj_model.body_quat[b, QW_QY] = np.cos(angle / 2), np.sin(angle / 2)


DmcManipulatorBringBallEnv, DmcManipulatorBringBallVectorEnv = register_dmc(
    Manipulator,
    module=__name__,
    summary="dm_control's manipulator-bring_ball: bring a ball to a target with a planar arm",
    doc=dmc_doc(
        Manipulator,
        description="Bring a ball to a target with a planar four-joint arm and its two-finger hand.",
        action=(
            "`Box(-1, 1, (5,), float64)`: the root, shoulder, elbow and wrist motors and the grasp (a "
            "tendon of both fingers)."
        ),
        rewards="A gaussian tolerance of the ball's distance to the target: 1 within 1 cm, 0.1 at 3 cm.",
        start=(
            "Drawn again while anything touches (dm_control's rejection sampling, the same draws): the arm's "
            "joints uniform in their ranges, the root in [-pi, pi), the finger as the thumb; the target "
            "uniform in x in [-0.4, 0.4] m, z in [0.1, 0.4] m, at a uniform angle; the ball in the hand "
            "(probability 0.1), in the target (0.1), or else uniform in x in [-0.5, 0.5] m, z in [0, 0.7] "
            "m, at a uniform angle, moving at a uniform x velocity in [-5, 5] m/s."
        ),
    ),
)
