"""dm_control's manipulator domain (dm_control/suite/manipulator.py): a planar arm with a
two-finger hand brings a ball or a peg to a target, in the open or into a receptacle (a cup,
a slot), as RoboDyn/dmc-manipulator-<task>-v0."""

from __future__ import annotations

from xml.etree import ElementTree

import numpy as np

from robogym.declare import State
from robogym.dmc_task import XMAT, DmcTask, Key, dmc_doc, register_dmc, remove_elements, tolerance

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
TARGET_ANGLE = np.pi  # the target's angle is uniform in +-this (rad) ...
RECEPTACLE_ANGLE = np.pi / 3  # ... or, with a receptacle at the target, in +-this
BALL_X, BALL_Z, BALL_VX = (-0.5, 0.5), (0.0, 0.7), (-5.0, 5.0)  # a ball placed uniformly: m, m, m/s


# the observation keys of the arm and hand, which begin the manipulator's and the stacker's observations
ARM_KEYS = (
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
        lambda t: t.pose_2d(["hand"]),
        ("x", "z", "qw", "qy"),
        doc="the hand's x, z and quaternion w, y",
    ),
)


class PlanarArm(DmcTask):
    """The planar four-joint arm with a two-finger hand of the manipulator and stacker
    domains (manipulator.xml, stacker.xml; dm_control's manipulator.Physics and
    stacker.Physics): both domains' timing (0.001 s physics steps, 0.01 s control steps, 10
    s episodes), a model dm_control builds from the suite file (edit_model), the arm's
    readouts, the keys that begin both observations (ARM_KEYS) and the arm's part of both
    initial-state draws."""

    builds_model = True
    timestep = 0.001
    control_timestep = 0.01
    time_limit = 10.0
    render_camera = "fixed"

    def bounded_joint_pos(self) -> np.ndarray:
        """(B, 16) sin and cos of each arm joint, joint by joint."""
        q = self.physics.named.qpos[list(ARM_JOINTS)]
        return np.stack([np.sin(q), np.cos(q)], axis=2).reshape(len(q), -1)

    def touch(self) -> np.ndarray:
        """(B, 5) log(1 + each touch sensor)."""
        return np.log1p(self.physics.named.sensordata[list(TOUCH_SENSORS)])

    def pose_2d(self, bodies: list[str]) -> np.ndarray:
        """(B, 4 len(bodies)) each body's x, z and orientation quaternion's w, y, body by body
        (dm_control's body_2d_pose)."""
        named = self.physics.named
        return np.concatenate(
            [np.concatenate([named.xpos[b][:, X_Z], named.xquat[b][:, QW_QY]], axis=1) for b in bodies],
            axis=1,
        )

    def arm_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """(low, high), (8,) each: the bounds of each arm joint's uniform draw, its range
        where it is limited, else [-pi, pi] (the root)."""
        named_model = self.physics.named_model
        limited = named_model.jnt_limited[list(ARM_JOINTS)].astype(bool)
        ranges = named_model.jnt_range[list(ARM_JOINTS)]
        return np.where(limited, ranges[:, 0], -np.pi), np.where(limited, ranges[:, 1], np.pi)

    def draw_arm(self, row: int, random: np.random.RandomState, low: np.ndarray, high: np.ndarray) -> None:
        """Row `row`'s arm joints uniform in [low, high] (one draw of all, dm_control's), the
        finger then at the thumb's angle."""
        qpos = self.physics.named.qpos
        for joint, angle in zip(ARM_JOINTS, random.uniform(low, high), strict=True):
            qpos[joint][row] = angle
        qpos["finger"][row] = qpos["thumb"][row]


class Manipulator(PlanarArm):
    """The manipulator's readouts (dm_control's manipulator.Physics) and its Bring task, fully
    observable, whose tasks differ in the prop (`use_peg`: the peg, else the ball) and in
    `insert` (a receptacle, the slot or the cup, placed at the target). dm_control builds the
    model from manipulator.xml without the props the task does not use (edit_model does the
    same) and moves the target body (a ghost: it has no contacts) each episode; here its x, z
    and angle are task state, which the observation and the reward read and the renderer
    draws it at. The receptacle, which the arm and the prop collide with, dm_control moves
    by editing the model too; here it is a mocap body (the model's one change from
    dm_control's, with the same geoms at the same pose and the same contacts: see
    edit_model) and each row's mocap pose is the target's. The touch sensors, of MuJoCo's
    acceleration stage, keep their values of the last physics step's start, as after
    dm_control's step."""

    domain = "manipulator"
    model_name = "manipulator.xml"
    use_peg = False
    insert = False
    target = State(
        "the target's x, z (m) and angle about y (rad), drawn each episode", shape=(3,), reset=None
    )

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.prop = "peg" if cls.use_peg else "ball"
        cls.target_body = f"target_{cls.prop}"
        cls.receptacle = ("slot" if cls.use_peg else "cup") if cls.insert else None
        cls.props = tuple(p for p in (cls.prop, cls.target_body, cls.receptacle) if p)
        cls.prop_joints = tuple(f"{cls.prop}_{c}" for c in "xzy")
        cls.observation = (
            *ARM_KEYS,
            Key(
                "object_pos",
                lambda t: t.pose_2d([t.prop]),
                ("x", "z", "qw", "qy"),
                doc=f"the {cls.prop}'s x, z and quaternion w, y",
            ),
            Key(
                "object_vel",
                lambda t: t.physics.named.qvel[list(t.prop_joints)],
                ("x", "z", "y"),
                doc=f"the {cls.prop}'s joint velocities",
            ),
            Key(
                "target_pos",
                lambda t: t.target_pose(),
                ("x", "z", "qw", "qy"),
                doc="the target's x, z and quaternion w, y",
            ),
        )

    def edit_model(self, mjcf: ElementTree.Element) -> None:
        """dm_control's make_model: every prop body but this task's removed. With a receptacle,
        also our one change: the receptacle made a mocap body, whose pose each row sets where
        dm_control edits the model's body_pos and body_quat, and its contacts with the world
        body's geoms (the floor, the walls) excluded, as MuJoCo leaves out the contacts of two
        bodies welded to the world, which the receptacle is in dm_control's model: so it
        collides with the arm and the prop alone, as there."""
        remove_elements(mjcf, {("body", p) for p in PROPS if p not in self.props})
        if self.receptacle:
            next(b for b in mjcf.iter("body") if b.get("name") == self.receptacle).set("mocap", "true")
            contact = ElementTree.SubElement(mjcf, "contact")
            ElementTree.SubElement(contact, "exclude", {"body1": "world", "body2": self.receptacle})

    def target_pose(self) -> np.ndarray:
        """(B, 4) the target's x, z and quaternion w, y (a rotation by its angle about y)."""
        half = self.target[:, 2] / 2
        return np.stack([self.target[:, 0], self.target[:, 1], np.cos(half), np.sin(half)], axis=1)

    def target_site(self, site: str) -> np.ndarray:
        """(B, 3) a site of the target body in the world frame: the body at (x, y0, z) (y0 the
        model's), turned by the angle a about y, R = [[cos a, 0, sin a], [0, 1, 0], [-sin a,
        0, cos a]], so the site is at (x, y0, z) + R p (p its position in the body)."""
        px, py, pz = self.physics.named_model.site_pos[site]
        y0 = self.physics.named_model.body_pos[self.target_body][1]
        x, z, angle = self.target[:, 0], self.target[:, 1], self.target[:, 2]
        c, s = np.cos(angle), np.sin(angle)
        return np.stack([x + c * px + s * pz, np.full(len(x), y0 + py), z - s * px + c * pz], axis=1)

    def site_distance(self, site: str, target_site: str) -> np.ndarray:
        """(B,) the distance from a site of the arm or the prop to a site of the target."""
        return np.linalg.norm(self.physics.named.site_xpos[site] - self.target_site(target_site), axis=1)

    def hand_distance(self, prop_site: str, hand_site: str) -> np.ndarray:
        """(B,) the distance between a site of the prop and one of the hand."""
        xpos = self.physics.named.site_xpos
        return np.linalg.norm(xpos[prop_site] - xpos[hand_site], axis=1)

    def initialize_episode(self, row, random) -> None:
        """A collision-free draw (dm_control's rejection loop, the same draws): the arm's joints
        uniform in their ranges (the unlimited root in [-pi, pi)), the finger as the thumb; the
        target uniform in its box at a uniform angle (within +-pi/3 with a receptacle, which
        is placed there too); the prop in the hand, in the target, or uniform with a random
        horizontal velocity."""
        qpos, qvel = self.physics.named.qpos, self.physics.named.qvel
        low, high = self.arm_bounds()
        bound = RECEPTACLE_ANGLE if self.insert else TARGET_ANGLE
        x_joint, z_joint, angle_joint = self.prop_joints

        def draw() -> None:
            self.draw_arm(row, random, low, high)
            x, z = random.uniform(*TARGET_X), random.uniform(*TARGET_Z)
            angle = random.uniform(-bound, bound)
            self.target[row] = x, z, angle
            if self.receptacle:
                pos, quat = self.physics.mocap_pose(self.receptacle)
                pos[row, X_Z] = x, z
                quat[row, QW_QY] = np.cos(angle / 2), np.sin(angle / 2)
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
                qvel[x_joint][row] = random.uniform(*BALL_VX)
            qpos[x_joint][row], qpos[z_joint][row], qpos[angle_joint][row] = x, z, angle

        self.draw_until_free(row, draw)

    def close(self, distance: np.ndarray) -> np.ndarray:
        """1 within CLOSE, a gaussian tolerance reading 0.1 at 3 CLOSE."""
        return tolerance(distance, (0, CLOSE), 2 * CLOSE)

    def get_reward(self):
        if not self.use_peg:
            distance = self.site_distance("ball", "target_ball")
            return self.close(distance), {"distance": distance}
        grasping = (
            self.close(self.hand_distance("peg_grasp", "grasp"))
            + self.close(self.hand_distance("peg_pinch", "pinch"))
        ) / 2
        bringing = (
            self.close(self.site_distance("peg", "target_peg"))
            + self.close(self.site_distance("peg_tip", "target_peg_tip"))
        ) / 2
        return np.maximum(bringing, grasping / 3), {"grasping": grasping, "bringing": bringing}

    def decorate_frame(self, mj_model, row: int) -> None:
        b = self.physics.body_id(self.target_body)
        x, z, angle = self.target[row]
        mj_model.body_pos[b, X_Z] = x, z
        mj_model.body_quat[b, QW_QY] = np.cos(angle / 2), np.sin(angle / 2)


class BringBall(Manipulator):
    task = "bring_ball"


class BringPeg(Manipulator):
    task = "bring_peg"
    use_peg = True


class InsertBall(Manipulator):
    task = "insert_ball"
    insert = True


class InsertPeg(Manipulator):
    task = "insert_peg"
    use_peg = True
    insert = True


_ACTION = (
    "`Box(-1, 1, (5,), float64)`: the root, shoulder, elbow and wrist motors and the grasp (a tendon of "
    "both fingers)."
)
_BALL_REWARD = "A gaussian tolerance of the ball's distance to the target: 1 within 1 cm, 0.1 at 3 cm."
_PEG_REWARD = (
    "max(bringing, grasping / 3), each term the mean of two close tolerances (gaussian, 1 within 1 cm, 0.1 "
    "at 3 cm) of distances: bringing of the peg's centre and tip to the target's, grasping of the peg's "
    "grasp and pinch points to the hand's."
)


def _start(prop: str, receptacle: str | None) -> str:
    angle = f"within +-pi/3 rad, the {receptacle} placed there" if receptacle else "at a uniform angle"
    return (
        "Drawn again while anything touches (dm_control's rejection sampling, the same draws): the arm's "
        "joints uniform in their ranges, the root in [-pi, pi), the finger as the thumb; the target uniform "
        f"in x in [-0.4, 0.4] m, z in [0.1, 0.4] m, {angle}; the {prop} in the hand (probability 0.1), in "
        "the target (0.1), or else uniform in x in [-0.5, 0.5] m, z in [0, 0.7] m, at a uniform angle, "
        "moving at a uniform x velocity in [-5, 5] m/s."
    )


def _doc(task_class, what: str) -> str:
    prop, receptacle = task_class.prop, task_class.receptacle
    return dmc_doc(
        task_class,
        description=f"{what} with a planar four-joint arm and its two-finger hand.",
        action=_ACTION,
        rewards=_PEG_REWARD if task_class.use_peg else _BALL_REWARD,
        start=_start(prop, receptacle),
    )


DmcManipulatorBringBallEnv, DmcManipulatorBringBallVectorEnv = register_dmc(
    BringBall,
    module=__name__,
    summary="dm_control's manipulator-bring_ball: bring a ball to a target with a planar arm",
    doc=_doc(BringBall, "Bring a ball to a target"),
)
DmcManipulatorBringPegEnv, DmcManipulatorBringPegVectorEnv = register_dmc(
    BringPeg,
    module=__name__,
    summary="dm_control's manipulator-bring_peg: bring a peg to a target pose with a planar arm",
    doc=_doc(BringPeg, "Bring a peg to a target pose"),
)
DmcManipulatorInsertBallEnv, DmcManipulatorInsertBallVectorEnv = register_dmc(
    InsertBall,
    module=__name__,
    summary="dm_control's manipulator-insert_ball: put a ball into a cup with a planar arm",
    doc=_doc(InsertBall, "Put a ball into a cup (the target, inside it)"),
)
DmcManipulatorInsertPegEnv, DmcManipulatorInsertPegVectorEnv = register_dmc(
    InsertPeg,
    module=__name__,
    summary="dm_control's manipulator-insert_peg: put a peg into a slot with a planar arm",
    doc=_doc(InsertPeg, "Put a peg into a slot (the target, inside it)"),
)
