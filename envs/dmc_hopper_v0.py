"""dm_control's hopper domain (dm_control/suite/hopper.py): a planar one-legged hopper stands
or hops forward, as RoboDyn/dmc-hopper-<task>-v0."""

from __future__ import annotations

import numpy as np

from robogym.dmc_task import DmcTask, Key, dmc_doc, register_dmc, tolerance

STAND_HEIGHT = 0.6  # the torso's height over the foot (m) for the standing reward
HOP_SPEED = 2  # m/s
JOINTS = ("rootx", "rootz", "rooty", "waist", "hip", "knee", "ankle")


class Hopper(DmcTask):
    """The hopper's readouts (dm_control's hopper.Physics) and its task, whose benchmark tasks
    differ in `hopping`. The touch sensors, of MuJoCo's acceleration stage, keep their values
    of the last physics step's start, as after dm_control's step."""

    domain = "hopper"
    model_name = "hopper.xml"
    timestep = 0.005
    control_timestep = 0.02
    time_limit = 20.0
    render_camera = "cam0"
    hopping = False
    observation = (
        Key("position", lambda t: t.physics.named.qpos.all[:, 1:], JOINTS[1:], doc="qpos without x"),
        Key("velocity", lambda t: t.physics.named.qvel.all, JOINTS, doc="qvel"),
        Key("touch", lambda t: t.touch(), ("toe", "heel"), doc="log(1 + the foot's touch sensors)"),
    )

    def height(self) -> np.ndarray:
        """(B,) the torso's mass centre over the foot's (m)."""
        xipos = self.physics.named.xipos
        return xipos["torso"][:, 2] - xipos["foot"][:, 2]

    def speed(self) -> np.ndarray:
        """(B,) the forward velocity of the torso's subtree mass centre (m/s)."""
        return self.physics.named.sensordata["torso_subtreelinvel"][:, 0]

    def touch(self) -> np.ndarray:
        return np.log1p(self.physics.named.sensordata[["touch_toe", "touch_heel"]])

    def initialize_episode(self, row, random) -> None:
        """The limited joints uniform in their ranges, the torso's angle uniform in [-pi, pi)."""
        self.randomize_limited_and_rotational_joints(row, random)

    def get_reward(self):
        standing = tolerance(self.height(), (STAND_HEIGHT, 2))
        if self.hopping:
            hopping = tolerance(self.speed(), (HOP_SPEED, np.inf), HOP_SPEED / 2, "linear", 0.5)
            return standing * hopping, {"standing": standing, "hopping": hopping}
        control = tolerance(self.control(), margin=1, value_at_margin=0, sigmoid_kind="quadratic").mean(
            axis=1
        )
        small_control = (control + 4) / 5
        return standing * small_control, {"standing": standing, "small_control": small_control}


class Stand(Hopper):
    task = "stand"


class Hop(Hopper):
    task = "hop"
    hopping = True


def _doc(task_class, what: str, rewards: str) -> str:
    return dmc_doc(
        task_class,
        description=f"Make a planar one-legged hopper {what}.",
        action="`Box(-1, 1, (4,), float64)`: the waist, hip, knee and ankle motors.",
        rewards=rewards,
        start="The leg joints uniform in their ranges, the torso's angle uniform in [-pi, pi), at rest.",
    )


_STANDING = "standing (1 while the torso is 0.6 to 2 m over the foot, else 0)"
DmcHopperStandEnv, DmcHopperStandVectorEnv = register_dmc(
    Stand,
    module=__name__,
    summary="dm_control's hopper-stand: stand upright",
    doc=_doc(
        Stand,
        "stand upright",
        f"{_STANDING} x small_control ((4 + the mean quadratic tolerance of the action) / 5).",
    ),
)
DmcHopperHopEnv, DmcHopperHopVectorEnv = register_dmc(
    Hop,
    module=__name__,
    summary="dm_control's hopper-hop: hop forward at 2 m/s",
    doc=_doc(
        Hop,
        "hop forward at 2 m/s or more",
        f"{_STANDING} x hopping (a linear tolerance of the forward speed: 1 above 2 m/s, 0.5 at 1 m/s).",
    ),
)
