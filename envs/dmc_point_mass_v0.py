"""dm_control's point_mass domain (dm_control/suite/point_mass.py): bring a mass on a plane to
a target, as RoboDyn/dmc-point_mass-easy-v0."""

from __future__ import annotations

import numpy as np

from robogym.dmc_task import DmcTask, Key, dmc_doc, register_dmc, tolerance


class PointMass(DmcTask):
    """The point mass's readouts (dm_control's point_mass.Physics) and its easy task (the
    actuators drive x and y themselves; the hard task's random gains are not benchmarked)."""

    domain = "point_mass"
    task = "easy"
    model_name = "point_mass.xml"
    timestep = 0.02
    time_limit = 20.0
    render_camera = "fixed"
    observation = (
        Key("position", lambda t: t.physics.named.qpos.all, ("root_x", "root_y"), doc="qpos"),
        Key("velocity", lambda t: t.physics.named.qvel.all, ("root_x", "root_y"), doc="qvel"),
    )

    def mass_to_target(self) -> np.ndarray:
        """(B, 3) from the mass to the target, in the world frame."""
        xpos = self.physics.named.geom_xpos
        return xpos["target"] - xpos["pointmass"]

    def initialize_episode(self, row, random) -> None:
        """The mass uniform in its joints' ranges, at rest."""
        self.randomize_limited_and_rotational_joints(row, random)

    def get_reward(self):
        target_size = self.physics.named_model.geom_size["target"][0]
        distance = np.linalg.norm(self.mass_to_target(), axis=1)
        near_target = tolerance(distance, bounds=(0, target_size), margin=target_size)
        control = tolerance(self.control(), margin=1, value_at_margin=0, sigmoid_kind="quadratic").mean(
            axis=1
        )
        small_control = (control + 4) / 5
        return near_target * small_control, {"near_target": near_target, "small_control": small_control}


DmcPointMassEasyEnv, DmcPointMassEasyVectorEnv = register_dmc(
    PointMass,
    module=__name__,
    summary="dm_control's point_mass-easy: bring a point mass to the target",
    doc=dmc_doc(
        PointMass,
        description="Bring a mass sliding on a plane to the target at the centre.",
        action="`Box(-1, 1, (2,), float64)`: the forces along x and y (through two tendons).",
        rewards=(
            "near_target (1 inside the target, a gaussian tolerance of the distance one target "
            "radius out) x small_control ((4 + the mean quadratic tolerance of the action) / 5)."
        ),
        start="The mass uniform in its joints' ranges (+-0.3 m), at rest.",
    ),
)
