"""dm_control's pendulum domain (dm_control/suite/pendulum.py): swing a pole up and hold it
within 8 degrees of upright, as RoboDyn/dmc-pendulum-swingup-v0."""

from __future__ import annotations

import numpy as np

from robogym.dmc_task import XMAT, DmcTask, Key, dmc_doc, register_dmc, tolerance

ANGLE_BOUND = 8  # degrees from upright that earn the reward
COSINE_BOUND = np.cos(np.deg2rad(ANGLE_BOUND))


class Pendulum(DmcTask):
    """The pendulum's readouts (dm_control's pendulum.Physics) and its SwingUp task."""

    domain = "pendulum"
    task = "swingup"
    model_name = "pendulum.xml"
    timestep = 0.02
    time_limit = 20.0
    render_camera = "fixed"
    observation = (
        Key(
            "orientation",
            lambda t: t.physics.named.xmat["pole"][:, [XMAT["zz"], XMAT["xz"]]],
            ("zz", "xz"),
            doc="the pole's cos and sin (its frame's zz and xz)",
        ),
        Key("velocity", lambda t: t.physics.named.qvel[["hinge"]], ("hinge",), doc="the pole's rate"),
    )

    def pole_vertical(self) -> np.ndarray:
        """(B,) the pole frame's zz: the cosine of its angle from upright."""
        return self.physics.named.xmat["pole"][:, XMAT["zz"]]

    def initialize_episode(self, row, random) -> None:
        """The pole at a uniform angle in [-pi, pi), at rest."""
        self.physics.named.qpos["hinge"][row] = random.uniform(-np.pi, np.pi)

    def get_reward(self):
        return tolerance(self.pole_vertical(), (COSINE_BOUND, 1)), {}


DmcPendulumSwingupEnv, DmcPendulumSwingupVectorEnv = register_dmc(
    Pendulum,
    module=__name__,
    summary="dm_control's pendulum-swingup: swing a pole up and hold it upright",
    doc=dmc_doc(
        Pendulum,
        description="Swing a torque-limited pendulum up from any angle and hold it upright.",
        action="`Box(-1, 1, (1,), float64)`: the hinge's motor.",
        rewards="1 while the pole is within 8 degrees of upright, else 0.",
        start="The pole at a uniform angle in [-pi, pi), at rest.",
    ),
)
