"""dm_control's ball_in_cup domain (dm_control/suite/ball_in_cup.py): swing a ball on a string
into the cup that holds it, as RoboDyn/dmc-ball_in_cup-catch-v0."""

from __future__ import annotations

import numpy as np

from robogym.dmc_task import DmcTask, Key, dmc_doc, register_dmc
from robogym.errors import InvalidArgumentError

MAX_ATTEMPTS = 100_000  # collision-free ball positions tried before giving up (dm_control: no limit)
X_Z = [0, 2]


class BallInCup(DmcTask):
    """The ball-in-cup's readouts (dm_control's ball_in_cup.Physics) and its catch task."""

    domain = "ball_in_cup"
    task = "catch"
    model_name = "ball_in_cup.xml"
    timestep = 0.002
    control_timestep = 0.02
    time_limit = 20.0
    render_camera = "cam0"
    qpos_names = ("cup_x", "cup_z", "ball_x", "ball_z")
    observation = (
        Key(
            "position",
            lambda t: t.physics.named.qpos.all,
            qpos_names,
            doc="qpos: the cup's, then the ball's x, z",
        ),
        Key("velocity", lambda t: t.physics.named.qvel.all, qpos_names, doc="qvel"),
    )

    def ball_to_target(self) -> np.ndarray:
        """(B, 2) the x, z from the ball to the target site inside the cup."""
        return self.physics.named.site_xpos["target"][:, X_Z] - self.physics.named.xpos["ball"][:, X_Z]

    def in_target(self) -> np.ndarray:
        """(B,) 1.0 with the whole ball inside the target box, else 0.0."""
        target = self.physics.named_model.site_size["target"][X_Z]
        ball = self.physics.named_model.geom_size["ball"][0]
        return np.all(abs(self.ball_to_target()) < target - ball, axis=1).astype(np.float64)

    def initialize_episode(self, row, random) -> None:
        """The ball uniform in x in [-0.2, 0.2], z in [0.2, 0.5] m, drawn again while it touches
        anything; the cup at the origin; at rest."""
        qpos = self.physics.named.qpos
        for _ in range(MAX_ATTEMPTS):
            qpos["ball_x"][row] = random.uniform(-0.2, 0.2)
            qpos["ball_z"][row] = random.uniform(0.2, 0.5)
            if not self.penetrating(row):
                return
        raise InvalidArgumentError(f"no collision-free ball position in {MAX_ATTEMPTS} draws")

    def get_reward(self):
        return self.in_target(), {}


DmcBallInCupCatchEnv, DmcBallInCupCatchVectorEnv = register_dmc(
    BallInCup,
    module=__name__,
    summary="dm_control's ball_in_cup-catch: swing the ball into the cup",
    doc=dmc_doc(
        BallInCup,
        description="Move a cup in its plane so that the ball tied to it by a string lands inside it.",
        action="`Box(-1, 1, (2,), float64)`: the cup's x and z motors.",
        rewards="1 while the ball is inside the cup (the target box), else 0.",
        start=(
            "The cup at the origin; the ball uniform in x in [-0.2, 0.2] m and z in [0.2, 0.5] m, drawn "
            "again while it touches anything (dm_control's rejection sampling, the same draws); at rest."
        ),
    ),
)
