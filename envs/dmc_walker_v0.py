"""dm_control's walker domain (dm_control/suite/walker.py): a planar biped stands, walks or
runs, as RoboDyn/dmc-walker-<task>-v0."""

from __future__ import annotations

import numpy as np

from robogym.dmc_task import XMAT, DmcTask, Key, dmc_doc, register_dmc, tolerance

STAND_HEIGHT = 1.2  # the torso's height (m) for the full standing reward
WALK_SPEED, RUN_SPEED = 1, 8  # m/s
BODIES = ("torso", "right_thigh", "right_leg", "right_foot", "left_thigh", "left_leg", "left_foot")
JOINTS = (
    "rootz",
    "rootx",
    "rooty",
    "right_hip",
    "right_knee",
    "right_ankle",
    "left_hip",
    "left_knee",
    "left_ankle",
)
XX_XZ = [XMAT["xx"], XMAT["xz"]]


class Walker(DmcTask):
    """The walker's readouts (dm_control's walker.Physics) and its PlanarWalker task, whose
    benchmark tasks differ in `move_speed` (0: stand)."""

    domain = "walker"
    model_name = "walker.xml"
    timestep = 0.0025
    control_timestep = 0.025
    time_limit = 25.0
    render_camera = "side"
    move_speed = 0.0
    observation = (
        Key(
            "orientations",
            lambda t: t.physics.named.xmat.all[:, 1:][:, :, XX_XZ].reshape(t.physics.batch, -1),
            tuple(f"{b}.{c}" for b in BODIES for c in ("xx", "xz")),
            doc="each body's frame xx and xz (the cosine and sine of its angle)",
        ),
        Key("height", lambda t: t.torso_height(), doc="the torso's height (m)"),
        Key("velocity", lambda t: t.physics.named.qvel.all, JOINTS, doc="qvel"),
    )

    def torso_upright(self) -> np.ndarray:
        """(B,) the torso frame's zz: 1 upright."""
        return self.physics.named.xmat["torso"][:, XMAT["zz"]]

    def torso_height(self) -> np.ndarray:
        return self.physics.named.xpos["torso"][:, 2]

    def horizontal_velocity(self) -> np.ndarray:
        """(B,) the forward velocity of the torso's subtree mass centre (m/s)."""
        return self.physics.named.sensordata["torso_subtreelinvel"][:, 0]

    def initialize_episode(self, row, random) -> None:
        """The limited joints uniform in their ranges, the torso's angle uniform in [-pi, pi)."""
        self.randomize_limited_and_rotational_joints(row, random)

    def get_reward(self):
        standing = tolerance(self.torso_height(), (STAND_HEIGHT, np.inf), STAND_HEIGHT / 2)
        upright = (1 + self.torso_upright()) / 2
        stand_reward = (3 * standing + upright) / 4
        factors = {"standing": standing, "upright": upright}
        if self.move_speed == 0:
            return stand_reward, factors
        move = tolerance(
            self.horizontal_velocity(), (self.move_speed, np.inf), self.move_speed / 2, "linear", 0.5
        )
        return stand_reward * (5 * move + 1) / 6, {**factors, "move": move}


class Stand(Walker):
    task = "stand"


class Walk(Walker):
    task = "walk"
    move_speed = WALK_SPEED


class Run(Walker):
    task = "run"
    move_speed = RUN_SPEED


_STAND = (
    "stand_reward = (3 standing + upright) / 4: standing a gaussian tolerance of the torso's height "
    "(1 above 1.2 m, margin 0.6 m), upright (1 + the torso's zz) / 2"
)


def _doc(task_class, what: str, rewards: str) -> str:
    return dmc_doc(
        task_class,
        description=f"Make a planar biped (two legs of three joints) {what}.",
        action="`Box(-1, 1, (6,), float64)`: the right and left hip, knee and ankle motors.",
        rewards=rewards,
        start="The leg joints uniform in their ranges, the torso's angle uniform in [-pi, pi), at rest.",
    )


def _moving(speed: str) -> str:
    return (
        f"{_STAND}, times (5 move + 1) / 6: move a linear tolerance of the forward speed (1 above {speed} "
        "m/s, 0.5 at half of it)."
    )


DmcWalkerStandEnv, DmcWalkerStandVectorEnv = register_dmc(
    Stand,
    module=__name__,
    summary="dm_control's walker-stand: stand up and stay upright",
    doc=_doc(Stand, "stand up and stay upright", f"{_STAND}."),
)
DmcWalkerWalkEnv, DmcWalkerWalkVectorEnv = register_dmc(
    Walk,
    module=__name__,
    summary="dm_control's walker-walk: walk forward at 1 m/s",
    doc=_doc(Walk, "walk forward at 1 m/s or more", _moving("1")),
)
DmcWalkerRunEnv, DmcWalkerRunVectorEnv = register_dmc(
    Run,
    module=__name__,
    summary="dm_control's walker-run: run forward at 8 m/s",
    doc=_doc(Run, "run forward at 8 m/s or more", _moving("8")),
)
