"""dm_control's acrobot domain (dm_control/suite/acrobot.py): swing a two-link pendulum driven
at its elbow up to a target, with a smooth and a sparse reward, as
RoboDyn/dmc-acrobot-<task>-v0."""

from __future__ import annotations

import numpy as np

from robogym.dmc_task import XMAT, DmcTask, Key, dmc_doc, register_dmc, tolerance

ARMS = ["upper_arm", "lower_arm"]


class Acrobot(DmcTask):
    """The acrobot's readouts (dm_control's acrobot.Physics) and its Balance task."""

    domain = "acrobot"
    model_name = "acrobot.xml"
    timestep = 0.01
    time_limit = 10.0
    render_camera = "fixed"
    sparse = False
    observation = (
        Key(
            "orientations",
            lambda t: t.orientations(),
            ("upper_arm.xz", "lower_arm.xz", "upper_arm.zz", "lower_arm.zz"),
            doc="the arms' frames' xz (sines), then zz (cosines)",
        ),
        Key("velocity", lambda t: t.physics.named.qvel.all, ("shoulder", "elbow"), doc="qvel"),
    )

    def orientations(self) -> np.ndarray:
        """(B, 4) the arms' xz entries (horizontal), then their zz entries (vertical)."""
        xmat = self.physics.named.xmat[ARMS]
        return np.concatenate([xmat[:, :, XMAT["xz"]], xmat[:, :, XMAT["zz"]]], axis=1)

    def to_target(self) -> np.ndarray:
        """(B,) the distance from the tip to the target (m)."""
        site = self.physics.named.site_xpos
        return np.linalg.norm(site["target"] - site["tip"], axis=1)

    def initialize_episode(self, row, random) -> None:
        """Shoulder and elbow uniform in [-pi, pi), at rest."""
        self.physics.named.qpos[["shoulder", "elbow"], [row]] = random.uniform(-np.pi, np.pi, 2)

    def get_reward(self):
        radius = self.physics.named_model.site_size["target"][0]
        return tolerance(self.to_target(), bounds=(0, radius), margin=0 if self.sparse else 1), {}


class Swingup(Acrobot):
    task = "swingup"


class SwingupSparse(Acrobot):
    task = "swingup_sparse"
    sparse = True


def _doc(task_class, rewards: str) -> str:
    return dmc_doc(
        task_class,
        description=(
            "Swing a double pendulum, driven at its elbow only, up until its tip reaches the target."
        ),
        action="`Box(-1, 1, (1,), float64)`: the elbow's motor.",
        rewards=rewards,
        start="Shoulder and elbow uniform in [-pi, pi), at rest.",
    )


DmcAcrobotSwingupEnv, DmcAcrobotSwingupVectorEnv = register_dmc(
    Swingup,
    module=__name__,
    summary="dm_control's acrobot-swingup: swing the tip up to the target",
    doc=_doc(
        Swingup,
        "1 with the tip inside the target, a gaussian tolerance of the distance (margin 1 m) outside.",
    ),
)
DmcAcrobotSwingupSparseEnv, DmcAcrobotSwingupSparseVectorEnv = register_dmc(
    SwingupSparse,
    module=__name__,
    summary="dm_control's acrobot-swingup_sparse: swing the tip up to the target, sparse reward",
    doc=_doc(SwingupSparse, "1 with the tip inside the target, else 0."),
)
