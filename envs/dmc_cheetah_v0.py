"""dm_control's cheetah domain (dm_control/suite/cheetah.py): a planar biped runs forward, as
RoboDyn/dmc-cheetah-run-v0."""

from __future__ import annotations

import numpy as np

from robogym.dmc_task import DmcTask, Key, dmc_doc, register_dmc, tolerance

RUN_SPEED = 10  # m/s for the full reward
JOINTS = ("rootx", "rootz", "rooty", "bthigh", "bshin", "bfoot", "fthigh", "fshin", "ffoot")
SETTLE_STEPS = 200  # physics steps the random pose falls before the episode


class Cheetah(DmcTask):
    """The cheetah's readouts (dm_control's cheetah.Physics) and its run task."""

    domain = "cheetah"
    task = "run"
    model_name = "cheetah.xml"
    timestep = 0.01
    time_limit = 10.0
    render_camera = "side"
    observation = (
        Key("position", lambda t: t.physics.named.qpos.all[:, 1:], JOINTS[1:], doc="qpos without x"),
        Key("velocity", lambda t: t.physics.named.qvel.all, JOINTS, doc="qvel"),
    )

    def speed(self) -> np.ndarray:
        """(B,) the forward velocity of the torso's subtree mass centre (m/s)."""
        return self.physics.named.sensordata["torso_subtreelinvel"][:, 0]

    def initialize_episode(self, row, random) -> None:
        """The limited joints uniform in their ranges, then 200 physics steps of falling."""
        limited = self.physics.named_model.jnt_limited.all == 1
        low, high = self.physics.named_model.jnt_range.all[limited].T
        self.physics.named.qpos.all[row, limited] = random.uniform(low, high)  # nq == njnt here
        self.settle(row, SETTLE_STEPS)

    def get_reward(self):
        return tolerance(self.speed(), (RUN_SPEED, np.inf), RUN_SPEED, "linear", value_at_margin=0), {}


DmcCheetahRunEnv, DmcCheetahRunVectorEnv = register_dmc(
    Cheetah,
    module=__name__,
    summary="dm_control's cheetah-run: run forward",
    doc=dmc_doc(
        Cheetah,
        description="Make a planar cheetah (two legs of three joints) run forward.",
        action="`Box(-1, 1, (6,), float64)`: the back and front thigh, shin and foot motors.",
        rewards="The forward speed over 10 m/s, linearly from 0 at rest (a linear tolerance, margin 10 m/s).",
        start=(
            "The leg joints uniform in their ranges, then 200 physics steps (2 s) of falling to the floor "
            "without control (dm_control's settling, its first step from the reset pose's forward pass)."
        ),
    ),
)
