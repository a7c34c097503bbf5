"""dm_control's fish domain (dm_control/suite/fish.py): a fish in a fluid without gravity turns
upright (upright) or swims its mouth to a target (swim), as RoboDyn/dmc-fish-<task>-v0."""

from __future__ import annotations

import numpy as np

from robogym.declare import State
from robogym.dmc_task import XMAT, DmcTask, Key, dmc_doc, register_dmc, tolerance

JOINTS = ("tail1", "tail_twist", "tail2", "finright_roll", "finright_pitch", "finleft_roll", "finleft_pitch")
JOINT_RANGE = 0.2  # each joint's initial angle is uniform in [-0.2, 0.2] (rad)
TARGET_LOW, TARGET_HIGH = (-0.4, -0.4, 0.1), (0.4, 0.4, 0.3)  # the swim target's box (m)
DOFS = ("x", "y", "z", "wx", "wy", "wz", *JOINTS)
JOINT_ANGLES = Key(
    "joint_angles", lambda t: t.physics.named.qpos[list(JOINTS)], JOINTS, doc="the tail's and fins' angles"
)
UPRIGHT = Key("upright", lambda t: t.torso_upright(), doc="the torso frame's zz (1 upright)")
VELOCITY = Key("velocity", lambda t: t.physics.named.qvel.all, DOFS, doc="qvel")


class Fish(DmcTask):
    """The fish's readouts (dm_control's fish.Physics) shared by Upright and Swim."""

    domain = "fish"
    model_name = "fish.xml"
    timestep = 0.004
    control_timestep = 0.04
    time_limit = 40.0
    render_camera = "tracking_top"

    def torso_upright(self) -> np.ndarray:
        return self.physics.named.xmat["torso"][:, XMAT["zz"]]

    def randomize_pose(self, row: int, random) -> None:
        """The orientation uniform (a normalized Gaussian quaternion), every joint uniform in
        [-0.2, 0.2] rad; the position and velocity of the reset."""
        quat = random.randn(4)
        self.physics.named.qpos["root"][row, 3:7] = quat / np.linalg.norm(quat)
        for joint in JOINTS:
            self.physics.named.qpos[joint][row] = random.uniform(-JOINT_RANGE, JOINT_RANGE)


class Upright(Fish):
    task = "upright"
    observation = (JOINT_ANGLES, UPRIGHT, VELOCITY)

    def initialize_episode(self, row, random) -> None:
        self.randomize_pose(row, random)

    def get_reward(self):
        return tolerance(self.torso_upright(), (1, 1), 1), {}

    def decorate_frame(self, mj_model, row: int) -> None:
        mj_model.geom_rgba[self.physics.geom_id("target"), 3] = 0  # dm_control hides it in this task


class Swim(Fish):
    """Swim to a target: dm_control moves the target geom (on the world body; the model has no
    contacts) each episode; here its position is task state, which the renderer draws it at."""

    task = "swim"
    target = State("the target's position (m), drawn each episode", shape=(3,), reset=None)
    observation = (
        JOINT_ANGLES,
        UPRIGHT,
        Key(
            "target",
            lambda t: t.mouth_to_target(),
            ("x", "y", "z"),
            doc="from the mouth to the target, in the mouth's frame (m)",
        ),
        VELOCITY,
    )

    def mouth_to_target(self) -> np.ndarray:
        """(B, 3) from the mouth to the target, in the mouth's frame (m)."""
        named = self.physics.named
        world = self.target - named.geom_xpos["mouth"]
        return np.einsum("bi,bij->bj", world, named.geom_xmat["mouth"].reshape(-1, 3, 3))

    def initialize_episode(self, row, random) -> None:
        self.randomize_pose(row, random)
        self.target[row] = [
            random.uniform(low, high) for low, high in zip(TARGET_LOW, TARGET_HIGH, strict=True)
        ]

    def get_reward(self):
        radii = self.physics.named_model.geom_size[["mouth", "target"]][:, 0].sum()
        distance = np.linalg.norm(self.mouth_to_target(), axis=1)
        in_target = tolerance(distance, (0, radii), 2 * radii)
        is_upright = (self.torso_upright() + 1) / 2
        return (7 * in_target + is_upright) / 8, {"in_target": in_target, "is_upright": is_upright}

    def decorate_frame(self, mj_model, row: int) -> None:
        mj_model.geom_pos[self.physics.geom_id("target")] = self.target[row]


_ACTION = (
    "`Box(-1, 1, (5,), float64)`: position targets of the tail, its twist, the fins' flap (a tendon of "
    "both fins' roll), and each fin's pitch."
)
_POSE = "The orientation uniform, the tail and fin joints uniform in [-0.2, 0.2] rad, at rest."

DmcFishUprightEnv, DmcFishUprightVectorEnv = register_dmc(
    Upright,
    module=__name__,
    summary="dm_control's fish-upright: turn the fish upright",
    doc=dmc_doc(
        Upright,
        description="Turn a fish floating in a fluid without gravity upright.",
        action=_ACTION,
        rewards="A gaussian tolerance of the torso's zz: 1 upright, 0.1 on its side.",
        start=_POSE,
    ),
)
DmcFishSwimEnv, DmcFishSwimVectorEnv = register_dmc(
    Swim,
    module=__name__,
    summary="dm_control's fish-swim: swim the fish's mouth to a target",
    doc=dmc_doc(
        Swim,
        description="Swim a fish through a fluid without gravity until its mouth reaches a target.",
        action=_ACTION,
        rewards=(
            "(7 in_target + is_upright) / 8: in_target a gaussian tolerance of the mouth's distance to the "
            "target (1 within the radii's sum, 0.1 one more sum beyond), is_upright (1 + the torso's zz) / 2."
        ),
        start=f"{_POSE} The target uniform in x, y in [-0.4, 0.4] m, z in [0.1, 0.3] m.",
    ),
)
