"""dm_control's reacher domain (dm_control/suite/reacher.py): bring the tip of a two-link
planar arm to a random target, a big one (easy) or a small one (hard), as
RoboDyn/dmc-reacher-<task>-v0."""

from __future__ import annotations

import numpy as np

from robogym.declare import State
from robogym.dmc_task import DmcTask, Key, dmc_doc, register_dmc, tolerance

BIG_TARGET, SMALL_TARGET = 0.05, 0.015  # the target's radius (m), easy and hard


class Reacher(DmcTask):
    """The reacher's readouts (dm_control's reacher.Physics) and its task. dm_control moves
    the target geom (on the world body, without contacts) each episode; here its x-y is task
    state, which the renderer draws it at."""

    domain = "reacher"
    model_name = "reacher.xml"
    timestep = 0.02
    time_limit = 20.0
    render_camera = "fixed"
    target_size = BIG_TARGET
    target = State("the target's x-y (m), drawn each episode", shape=(2,), reset=None)
    observation = (
        Key("position", lambda t: t.physics.named.qpos.all, ("shoulder", "wrist"), doc="qpos"),
        Key("to_target", lambda t: t.finger_to_target(), ("x", "y"), doc="from the finger to the target (m)"),
        Key("velocity", lambda t: t.physics.named.qvel.all, ("shoulder", "wrist"), doc="qvel"),
    )

    def finger_to_target(self) -> np.ndarray:
        """(B, 2) the x-y from the finger to the target (m)."""
        return self.target - self.physics.named.geom_xpos["finger"][:, :2]

    def initialize_episode(self, row, random) -> None:
        """The arm at random angles (shoulder in [-pi, pi), wrist in its range), at rest; the
        target at a uniform angle and a radius uniform in [0.05, 0.2] m."""
        self.randomize_limited_and_rotational_joints(row, random)
        angle = random.uniform(0, 2 * np.pi)
        radius = random.uniform(0.05, 0.20)
        self.target[row] = radius * np.sin(angle), radius * np.cos(angle)

    def get_reward(self):
        finger = self.physics.named_model.geom_size["finger"][0]
        radii = np.array([self.target_size, finger]).sum()
        distance = np.linalg.norm(self.finger_to_target(), axis=1)
        return tolerance(distance, (0, radii)), {"distance": distance}

    def decorate_frame(self, mj_model, row: int) -> None:
        g = self.physics.geom_id("target")
        mj_model.geom_pos[g, :2] = self.target[row]
        mj_model.geom_size[g, 0] = self.target_size


class Easy(Reacher):
    task = "easy"


class Hard(Reacher):
    task = "hard"
    target_size = SMALL_TARGET


def _doc(task_class, size: str) -> str:
    return dmc_doc(
        task_class,
        description=f"Bring the fingertip of a two-link planar arm into a {size} target.",
        action="`Box(-1, 1, (2,), float64)`: the shoulder's and the wrist's motors.",
        rewards="1 while the fingertip touches the target (centres within the radii's sum), else 0.",
        start=(
            "The shoulder uniform in [-pi, pi), the wrist uniform in its range, at rest; the target "
            "at a uniform angle, 0.05 to 0.2 m from the centre."
        ),
    )


DmcReacherEasyEnv, DmcReacherEasyVectorEnv = register_dmc(
    Easy,
    module=__name__,
    summary="dm_control's reacher-easy: bring the fingertip to a big target",
    doc=_doc(Easy, "big (0.05 m)"),
)
DmcReacherHardEnv, DmcReacherHardVectorEnv = register_dmc(
    Hard,
    module=__name__,
    summary="dm_control's reacher-hard: bring the fingertip to a small target",
    doc=_doc(Hard, "small (0.015 m)"),
)
