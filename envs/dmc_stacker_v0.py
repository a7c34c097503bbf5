"""dm_control's stacker domain (dm_control/suite/stacker.py): the manipulator's planar arm
stacks two or four boxes so that one reaches a target, as RoboDyn/dmc-stacker-<task>-v0."""

from __future__ import annotations

from xml.etree import ElementTree

import numpy as np

from robodyn.envs.dmc_manipulator_v0 import ARM_KEYS, X_Z, PlanarArm
from robogym.declare import State
from robogym.dmc_task import Key, dmc_doc, register_dmc, remove_elements, tolerance

MODEL_BOXES = 4  # the boxes stacker.xml holds, box0 to box3
CLOSE = 0.01  # (m) the margin of the hand's distance from the target
HAND_FAR = 0.1  # (m) the hand counts as far from the target beyond this
TARGET_X = (-0.37, 0.37)  # (m) the target's x range
BOX_X, BOX_Z, BOX_ANGLE = (0.1, 0.3), (0.0, 0.7), (0.0, 2 * np.pi)  # each box placed uniformly: m, m, rad


class Stacker(PlanarArm):
    """The stacker's readouts (dm_control's stacker.Physics) and its Stack task, fully
    observable, for `n_boxes` boxes. dm_control builds the model from stacker.xml without
    the boxes past n_boxes (edit_model does the same) and moves the target body (a ghost: it
    has no contacts) each episode; here its x and z are task state, which the observation
    and the reward read and the renderer draws it at. The touch sensors, of MuJoCo's
    acceleration stage, keep their values of the last physics step's start, as after
    dm_control's step."""

    domain = "stacker"
    model_name = "stacker.xml"
    n_boxes = MODEL_BOXES
    target = State("the target's x and z (m), drawn each episode", shape=(2,), reset=None)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.boxes = tuple(f"box{b}" for b in range(cls.n_boxes))
        cls.box_joints = tuple(f"{b}_{c}" for b in cls.boxes for c in "xyz")
        cls.observation = (
            *ARM_KEYS,
            Key(
                "box_pos",
                lambda t: t.pose_2d(list(t.boxes)),
                tuple(f"{b}.{c}" for b in cls.boxes for c in ("x", "z", "qw", "qy")),
                doc="each box's x, z and quaternion w, y",
                shape=(cls.n_boxes, 4),
            ),
            Key(
                "box_vel",
                lambda t: t.physics.named.qvel[list(t.box_joints)],
                cls.box_joints,
                doc="each box's joint velocities (x, the hinge y, z)",
            ),
            Key("target_pos", lambda t: t.target, ("x", "z"), doc="the target's x and z"),
        )

    def edit_model(self, mjcf: ElementTree.Element) -> None:
        """dm_control's make_model: the boxes past n_boxes removed."""
        remove_elements(mjcf, {("body", f"box{b}") for b in range(self.n_boxes, MODEL_BOXES)})

    # --- readouts ---------------------------------------------------------------------------
    def target_position(self) -> np.ndarray:
        """(B, 3) the target's site (at its body's origin) in the world frame; y the model's."""
        y = self.physics.named_model.body_pos["target"][1]
        return np.stack([self.target[:, 0], np.full(len(self.target), y), self.target[:, 1]], axis=1)

    def distance_to_target(self, site: str) -> np.ndarray:
        """(B,) a site's distance to the target's."""
        return np.linalg.norm(self.physics.named.site_xpos[site] - self.target_position(), axis=1)

    # --- episode ------------------------------------------------------------------------------
    def initialize_episode(self, row, random) -> None:
        """A collision-free draw (dm_control's rejection loop, the same draws): the arm's joints
        uniform in their ranges (the unlimited root in [-pi, pi)), the finger as the thumb; the
        target at the height of box 1, 3, ... (2 k + 1 box half-sizes, k uniform below
        n_boxes), x uniform in +-0.37 m; each box uniform in x in [0.1, 0.3] m, z in [0, 0.7]
        m, at a uniform angle, at rest."""
        qpos = self.physics.named.qpos
        low, high = self.arm_bounds()
        box_size = self.physics.named_model.geom_size["target"][0]

        def draw() -> None:
            self.draw_arm(row, random, low, high)
            height = 2 * random.randint(self.n_boxes) + 1
            self.target[row, 1] = box_size * height
            self.target[row, 0] = random.uniform(*TARGET_X)
            for box in self.boxes:
                qpos[f"{box}_x"][row] = random.uniform(*BOX_X)
                qpos[f"{box}_z"][row] = random.uniform(*BOX_Z)
                qpos[f"{box}_y"][row] = random.uniform(*BOX_ANGLE)

        self.draw_until_free(row, draw)

    def get_reward(self):
        box_size = self.physics.named_model.geom_size["target"][0]
        nearest = np.min(np.stack([self.distance_to_target(b) for b in self.boxes], axis=1), axis=1)
        box_is_close = tolerance(nearest, margin=2 * box_size)
        hand_is_far = tolerance(self.distance_to_target("grasp"), bounds=(HAND_FAR, np.inf), margin=CLOSE)
        return box_is_close * hand_is_far, {"box_is_close": box_is_close, "hand_is_far": hand_is_far}

    def decorate_frame(self, mj_model, row: int) -> None:
        mj_model.body_pos[self.physics.body_id("target"), X_Z] = self.target[row]


class Stack2(Stacker):
    task = "stack_2"
    n_boxes = 2


class Stack4(Stacker):
    task = "stack_4"
    n_boxes = 4


def _doc(task_class) -> str:
    n = task_class.n_boxes
    return dmc_doc(
        task_class,
        description=(
            f"Stack {n} boxes with a planar four-joint arm and its two-finger hand so that a box reaches "
            "the target, and take the hand away from it."
        ),
        action=(
            "`Box(-1, 1, (5,), float64)`: the root, shoulder, elbow and wrist motors and the grasp (a "
            "tendon of both fingers)."
        ),
        rewards=(
            "box_is_close (a gaussian tolerance of the nearest box's distance to the target: 1 at 0, 0.1 "
            "at 4.4 cm) x hand_is_far (1 with the hand's grasp point 10 cm or more from the target, a "
            "gaussian tolerance reading 0.1 at 9 cm)."
        ),
        start=(
            "Drawn again while anything touches (dm_control's rejection sampling, the same draws): the arm's "
            "joints uniform in their ranges, the root in [-pi, pi), the finger as the thumb; the target at "
            f"the height of box 1, 3, ... (k uniform in 0..{n - 1}, at (2 k + 1) x 2.2 cm), x uniform in "
            "[-0.37, 0.37] m; each box uniform in x in [0.1, 0.3] m, z in [0, 0.7] m, at a uniform angle, "
            "at rest."
        ),
    )


DmcStackerStack2Env, DmcStackerStack2VectorEnv = register_dmc(
    Stack2,
    module=__name__,
    summary="dm_control's stacker-stack_2: stack two boxes to reach a target with a planar arm",
    doc=_doc(Stack2),
)
DmcStackerStack4Env, DmcStackerStack4VectorEnv = register_dmc(
    Stack4,
    module=__name__,
    summary="dm_control's stacker-stack_4: stack four boxes to reach a target with a planar arm",
    doc=_doc(Stack4),
)
