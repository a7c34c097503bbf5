"""dm_control's humanoid domain (dm_control/suite/humanoid.py): a 3-D humanoid of 21 joints
stands, walks or runs (observing features of its state), or runs observing its state itself,
as RoboDyn/dmc-humanoid-<task>-v0. Its base, Humanoid, also serves the humanoid_CMU domain
(envs/dmc_humanoid_cmu_v0.py), dm_control's same task on another model."""

from __future__ import annotations

import numpy as np

from robogym.dmc_task import XMAT, DmcTask, Key, dmc_doc, register_dmc, tolerance

STAND_HEIGHT = 1.4  # the head's height (m) for the full standing reward
WALK_SPEED, RUN_SPEED = 1, 10  # m/s
EXTREMITIES = ("left_hand", "left_foot", "right_hand", "right_foot")
TORSO_Z = [XMAT["zx"], XMAT["zy"], XMAT["zz"]]
XY = [0, 1]
JOINTS = (
    *("abdomen_z", "abdomen_y", "abdomen_x"),
    *(
        f"{side}_{j}"
        for side in ("right", "left")
        for j in ("hip_x", "hip_z", "hip_y", "knee", "ankle_y", "ankle_x")
    ),
    *(f"{side}_{j}" for side in ("right", "left") for j in ("shoulder1", "shoulder2", "elbow")),
)
ROOT_DOFS = ("root.x", "root.y", "root.z", "root.wx", "root.wy", "root.wz")
ROOT_QPOS = ("root.x", "root.y", "root.z", "root.qw", "root.qx", "root.qy", "root.qz")


class Humanoid(DmcTask):
    """The humanoid's readouts (dm_control's humanoid.Physics) and its task, whose tasks
    differ in `move_speed` (0: stand) and in the observation: features of the state (the
    benchmark tasks) or, with `pure_state`, the state itself, qpos and qvel (run_pure_state).

    A model declares what the task reads by name: `torso_body`, the body whose frame the
    extremities are measured in and whose frame's z row is observed, its subtree linear
    velocity sensor `<torso_body>_subtreelinvel` the mass centre's velocity;
    `upright_column`, the entry of that z row that reads 1 upright; `extremity_bodies`, the
    hands and feet (left first); `joints`, the hinge joints in the model's order (qpos and
    qvel after the root's); for the documentation, `robot` and `upright_doc`. The
    observation follows from these (__init_subclass__)."""

    domain = "humanoid"
    model_name = "humanoid.xml"
    timestep = 0.005
    control_timestep = 0.025
    time_limit = 25.0
    render_camera = "back"
    move_speed = 0.0
    pure_state = False
    torso_body = "torso"
    upright_column = "zz"
    extremity_bodies = EXTREMITIES
    joints = JOINTS
    robot = "a 3-D humanoid"  # the documentation's name of the model
    upright_doc = "the torso's zz"  # the documentation's name of the upright measure

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.pure_state:
            cls.observation = (
                Key("position", lambda t: t.physics.named.qpos.all, (*ROOT_QPOS, *cls.joints), doc="qpos"),
                Key("velocity", lambda t: t.physics.named.qvel.all, (*ROOT_DOFS, *cls.joints), doc="qvel"),
            )
            return
        cls.observation = (
            Key(
                "joint_angles",
                lambda t: t.physics.named.qpos.all[:, 7:],
                cls.joints,
                doc="qpos without the root's",
            ),
            Key("head_height", lambda t: t.head_height(), doc="the head's height (m)"),
            Key(
                "extremities",
                lambda t: t.extremities(),
                tuple(f"{e}.{c}" for e in cls.extremity_bodies for c in "xyz"),
                doc=f"the hands and feet from the {cls.torso_body}, in its frame (m)",
            ),
            Key(
                "torso_vertical",
                lambda t: t.physics.named.xmat[t.torso_body][:, TORSO_Z],
                ("zx", "zy", "zz"),
                doc=f"the {cls.torso_body} frame's z row",
            ),
            Key(
                "com_velocity",
                lambda t: t.center_of_mass_velocity(),
                ("x", "y", "z"),
                doc=f"the velocity of the {cls.torso_body}'s subtree mass centre (m/s)",
            ),
            Key("velocity", lambda t: t.physics.named.qvel.all, (*ROOT_DOFS, *cls.joints), doc="qvel"),
        )

    def head_height(self) -> np.ndarray:
        """(B,) the head's height z (m)."""
        return self.physics.named.xpos["head"][:, 2]

    def torso_upright(self) -> np.ndarray:
        """(B,) entry upright_column of the torso frame's z row: 1 upright."""
        return self.physics.named.xmat[self.torso_body][:, XMAT[self.upright_column]]

    def center_of_mass_velocity(self) -> np.ndarray:
        """(B, 3) the linear velocity of the torso's subtree mass centre (its sensor)."""
        return self.physics.named.sensordata[f"{self.torso_body}_subtreelinvel"]

    def extremities(self) -> np.ndarray:
        """(B, 12) each hand and foot from the torso, in the torso's frame (left first): each
        extremity e, R^T (x_e - x_torso), R the torso's xmat."""
        named = self.physics.named
        frame = named.xmat[self.torso_body].reshape(-1, 3, 3)
        out = [
            np.einsum("bi,bij->bj", named.xpos[e] - named.xpos[self.torso_body], frame)
            for e in self.extremity_bodies
        ]
        return np.concatenate(out, axis=1)

    def initialize_episode(self, row, random) -> None:
        """randomize_limited_and_rotational_joints drawn again while anything touches."""
        self.draw_until_free(row, lambda: self.randomize_limited_and_rotational_joints(row, random))

    def get_reward(self):
        standing = tolerance(self.head_height(), (STAND_HEIGHT, np.inf), STAND_HEIGHT / 4)
        upright = tolerance(self.torso_upright(), (0.9, np.inf), 1.9, "linear", 0)
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


class Stand(Humanoid):
    task = "stand"


class Walk(Humanoid):
    task = "walk"
    move_speed = WALK_SPEED


class Run(Humanoid):
    task = "run"
    move_speed = RUN_SPEED


class RunPureState(Humanoid):
    task = "run_pure_state"
    move_speed = RUN_SPEED
    pure_state = True


def humanoid_doc(task_class: type[Humanoid], what: str) -> str:
    """The env documentation of a humanoid task (of either model): make the robot `what`;
    the reward's last factor, dont_move or move, follows from its move_speed."""
    if task_class.move_speed == 0:
        last = "dont_move"
        term = (
            "dont_move the mean of a gaussian tolerance of the mass centre's x and y velocity (1 at 0, 0.1 "
            "at 2 m/s)"
        )
    else:
        last = "move"
        term = (
            f"move (5 m + 1) / 6: m a linear tolerance of the horizontal speed of the mass centre (1 above "
            f"{task_class.move_speed:g} m/s, 0 at rest)"
        )
    n = len(task_class.joints)
    return dmc_doc(
        task_class,
        description=f"Make {task_class.robot} ({n} hinge joints) {what}.",
        action=f"`Box(-1, 1, ({n},), float64)`: the joints' motors.",
        rewards=(
            f"small_control standing upright {last}: standing a gaussian tolerance of the head's height (1 "
            f"above 1.4 m, 0.1 at 1.05 m), upright a linear tolerance of {task_class.upright_doc} (1 above "
            "0.9, 0 at -1), small_control (4 + the mean of a quadratic tolerance of each control, 1 at 0, 0 "
            f"at 1) / 5, {term}."
        ),
        start=(
            "The limited joints uniform in their ranges, the root's orientation a random quaternion of "
            "positive components (dm_control's draw), at rest; drawn again while anything touches "
            "(dm_control's rejection sampling, the same draws)."
        ),
    )


DmcHumanoidStandEnv, DmcHumanoidStandVectorEnv = register_dmc(
    Stand,
    module=__name__,
    summary="dm_control's humanoid-stand: stand up and stay still",
    doc=humanoid_doc(Stand, "stand up and stay still"),
)
DmcHumanoidWalkEnv, DmcHumanoidWalkVectorEnv = register_dmc(
    Walk,
    module=__name__,
    summary="dm_control's humanoid-walk: walk at 1 m/s",
    doc=humanoid_doc(Walk, "walk at 1 m/s or more"),
)
DmcHumanoidRunEnv, DmcHumanoidRunVectorEnv = register_dmc(
    Run,
    module=__name__,
    summary="dm_control's humanoid-run: run at 10 m/s",
    doc=humanoid_doc(Run, "run at 10 m/s or more"),
)
DmcHumanoidRunPureStateEnv, DmcHumanoidRunPureStateVectorEnv = register_dmc(
    RunPureState,
    module=__name__,
    summary="dm_control's humanoid-run_pure_state: run at 10 m/s, observing qpos and qvel",
    doc=humanoid_doc(RunPureState, "run at 10 m/s or more, observing its state (qpos, qvel) itself"),
)
