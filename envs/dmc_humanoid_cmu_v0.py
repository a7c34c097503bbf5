"""dm_control's humanoid_CMU domain (dm_control/suite/humanoid_CMU.py): the CMU motion-capture
humanoid (56 hinge joints) stands, walks or runs, as RoboDyn/dmc-humanoid_CMU-<task>-v0."""

from __future__ import annotations

import numpy as np

from robogym.dmc_task import XMAT, DmcTask, Key, dmc_doc, register_dmc, tolerance

STAND_HEIGHT = 1.4  # the head's height (m) for the full standing reward
WALK_SPEED, RUN_SPEED = 1, 10  # m/s
EXTREMITIES = ("lhand", "lfoot", "rhand", "rfoot")
THORAX_Z = [XMAT["zx"], XMAT["zy"], XMAT["zz"]]
XY = [0, 1]
# the hinge joints in the model's order (qpos and qvel after the root's)
JOINTS = (
    *("lfemurrz", "lfemurry", "lfemurrx", "ltibiarx", "lfootrz", "lfootrx", "ltoesrx"),
    *("rfemurrz", "rfemurry", "rfemurrx", "rtibiarx", "rfootrz", "rfootrx", "rtoesrx"),
    *("lowerbackrz", "lowerbackry", "lowerbackrx", "upperbackrz", "upperbackry", "upperbackrx"),
    *("thoraxrz", "thoraxry", "thoraxrx", "lowerneckrz", "lowerneckry", "lowerneckrx"),
    *("upperneckrz", "upperneckry", "upperneckrx", "headrz", "headry", "headrx"),
    *("lclaviclerz", "lclaviclery", "lhumerusrz", "lhumerusry", "lhumerusrx", "lradiusrx", "lwristry"),
    *("lhandrz", "lhandrx", "lfingersrx", "lthumbrz", "lthumbrx"),
    *("rclaviclerz", "rclaviclery", "rhumerusrz", "rhumerusry", "rhumerusrx", "rradiusrx", "rwristry"),
    *("rhandrz", "rhandrx", "rfingersrx", "rthumbrz", "rthumbrx"),
)
ROOT_DOFS = ("root.x", "root.y", "root.z", "root.wx", "root.wy", "root.wz")


class HumanoidCMU(DmcTask):
    """The CMU humanoid's readouts (dm_control's humanoid_CMU.Physics) and its task, whose
    three tasks differ in `move_speed` (0: stand). The thorax plays the torso's part: its
    frame's zy is the upright measure (the model's thorax has its long axis along y)."""

    domain = "humanoid_CMU"
    model_name = "humanoid_CMU.xml"
    timestep = 0.002
    control_timestep = 0.02
    time_limit = 20.0
    render_camera = "back"
    move_speed = 0.0
    observation = (
        Key("joint_angles", lambda t: t.physics.named.qpos.all[:, 7:], JOINTS, doc="qpos without the root's"),
        Key("head_height", lambda t: t.head_height(), doc="the head's height (m)"),
        Key(
            "extremities",
            lambda t: t.extremities(),
            tuple(f"{e}.{c}" for e in EXTREMITIES for c in "xyz"),
            doc="the hands and feet from the thorax, in its frame (m)",
        ),
        Key(
            "torso_vertical",
            lambda t: t.physics.named.xmat["thorax"][:, THORAX_Z],
            ("zx", "zy", "zz"),
            doc="the thorax frame's z row",
        ),
        Key(
            "com_velocity",
            lambda t: t.center_of_mass_velocity(),
            ("x", "y", "z"),
            doc="the velocity of the thorax's subtree mass centre (m/s)",
        ),
        Key("velocity", lambda t: t.physics.named.qvel.all, (*ROOT_DOFS, *JOINTS), doc="qvel"),
    )

    def head_height(self) -> np.ndarray:
        return self.physics.named.xpos["head"][:, 2]

    def thorax_upright(self) -> np.ndarray:
        """(B,) the thorax frame's zy: 1 upright."""
        return self.physics.named.xmat["thorax"][:, XMAT["zy"]]

    def center_of_mass_velocity(self) -> np.ndarray:
        return self.physics.named.sensordata["thorax_subtreelinvel"]

    def extremities(self) -> np.ndarray:
        """(B, 12) each hand and foot from the thorax, in the thorax's frame (left first)."""
        named = self.physics.named
        thorax = named.xmat["thorax"].reshape(-1, 3, 3)
        out = [np.einsum("bi,bij->bj", named.xpos[e] - named.xpos["thorax"], thorax) for e in EXTREMITIES]
        return np.concatenate(out, axis=1)

    def initialize_episode(self, row, random) -> None:
        """randomize_limited_and_rotational_joints drawn again while anything touches."""
        self.draw_until_free(row, lambda: self.randomize_limited_and_rotational_joints(row, random))

    def get_reward(self):
        standing = tolerance(self.head_height(), (STAND_HEIGHT, np.inf), STAND_HEIGHT / 4)
        upright = tolerance(self.thorax_upright(), (0.9, np.inf), 1.9, "linear", 0)
        small_control = (
            4 + tolerance(self.control(), margin=1, sigmoid_kind="quadratic", value_at_margin=0).mean(axis=1)
        ) / 5
        horizontal = self.center_of_mass_velocity()[:, XY]
        factors = {"standing": standing, "upright": upright, "small_control": small_control}
        if self.move_speed == 0:
            dont_move = tolerance(horizontal, margin=2).mean(axis=1)
            return small_control * (standing * upright) * dont_move, {**factors, "dont_move": dont_move}
        speed = np.linalg.norm(horizontal, axis=1)
        move = (5 * tolerance(speed, (self.move_speed, np.inf), self.move_speed, "linear", 0) + 1) / 6
        return small_control * (standing * upright) * move, {**factors, "move": move}


class Stand(HumanoidCMU):
    task = "stand"


class Walk(HumanoidCMU):
    task = "walk"
    move_speed = WALK_SPEED


class Run(HumanoidCMU):
    task = "run"
    move_speed = RUN_SPEED


_REWARD = (
    "small_control standing upright {last}: standing a gaussian tolerance of the head's height (1 above "
    "1.4 m, 0.1 at 1.05 m), upright a linear tolerance of the thorax frame's zy (1 above 0.9, 0 at -1), "
    "small_control (4 + the mean of a quadratic tolerance of each control, 1 at 0, 0 at 1) / 5, {what}."
)


def _doc(task_class, what: str, last: str, term: str) -> str:
    return dmc_doc(
        task_class,
        description=f"Make the CMU humanoid (56 hinge joints) {what}.",
        action="`Box(-1, 1, (56,), float64)`: the joints' motors.",
        rewards=_REWARD.format(last=last, what=term),
        start=(
            "The limited joints uniform in their ranges, the root's orientation a random quaternion of "
            "positive components (dm_control's draw), at rest; drawn again while anything touches "
            "(dm_control's rejection sampling, the same draws)."
        ),
    )


def _moving(speed: str) -> str:
    return (
        f"move (5 m + 1) / 6: m a linear tolerance of the horizontal speed of the mass centre (1 above "
        f"{speed} m/s, 0 at rest)"
    )


DmcHumanoidCmuStandEnv, DmcHumanoidCmuStandVectorEnv = register_dmc(
    Stand,
    module=__name__,
    summary="dm_control's humanoid_CMU-stand: stand up and stay still",
    doc=_doc(
        Stand,
        "stand up and stay still",
        "dont_move",
        "dont_move the mean of a gaussian tolerance of the mass centre's x and y velocity (1 at 0, 0.1 at "
        "2 m/s)",
    ),
)
DmcHumanoidCmuWalkEnv, DmcHumanoidCmuWalkVectorEnv = register_dmc(
    Walk,
    module=__name__,
    summary="dm_control's humanoid_CMU-walk: walk at 1 m/s",
    doc=_doc(Walk, "walk at 1 m/s or more", "move", _moving("1")),
)
DmcHumanoidCmuRunEnv, DmcHumanoidCmuRunVectorEnv = register_dmc(
    Run,
    module=__name__,
    summary="dm_control's humanoid_CMU-run: run at 10 m/s",
    doc=_doc(Run, "run at 10 m/s or more", "move", _moving("10")),
)
