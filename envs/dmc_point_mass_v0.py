"""dm_control's point_mass domain (dm_control/suite/point_mass.py): bring a mass on a plane to
a target, its actuators driving x and y (easy) or two random directions (hard), as
RoboDyn/dmc-point_mass-<task>-v0."""

from __future__ import annotations

import numpy as np

from robogym.declare import State
from robogym.dmc_task import DmcTask, Key, dmc_doc, register_dmc, tolerance

MAX_PARALLEL = 0.9  # hard: |cos| between the two drawn directions must not exceed this
JOINTS = ("root_x", "root_y")
TENDONS = ("t1", "t2")  # the fixed tendons the two motors pull, in the actuators' order


class PointMass(DmcTask):
    """The point mass's readouts (dm_control's point_mass.Physics) and its task; in the easy
    task the actuators drive x and y themselves (the model's fixed tendons t1 = x, t2 = y)."""

    domain = "point_mass"
    task = "easy"
    model_name = "point_mass.xml"
    timestep = 0.02
    time_limit = 20.0
    render_camera = "fixed"
    observation = (
        Key("position", lambda t: t.physics.named.qpos.all, JOINTS, doc="qpos"),
        Key("velocity", lambda t: t.physics.named.qvel.all, JOINTS, doc="qvel"),
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


class Hard(PointMass):
    """The actuators drive random directions: dm_control draws two unit vectors each episode
    (their |cos| at most 0.9) and writes them into the model as the coefficients of the
    fixed tendons the motors pull (wrap_prm), so motor i's generalized force is gear_i c_i
    d_i on (root_x, root_y). The engine has no per-row tendon coefficients, so here the
    directions are task state and the same force is applied as qfrc_applied = sum_i gear_i
    c_i d_i, the motors' own gains zeroed (the controls stay the actions, which the reward
    reads, as dm_control's physics.control())."""

    task = "hard"
    model_overrides = {"actuator_gainprm": dict.fromkeys(TENDONS, 0.0)}
    directions = State(
        "the two actuation directions d_1, d_2 (unit vectors in x-y), drawn each episode", (2, 2), reset=None
    )

    def initialize_episode(self, row, random) -> None:
        """The mass uniform in its joints' ranges, at rest; then d_1 a normalized N(0, I_2)
        draw, and d_2 one drawn again while |d_1 . d_2| > 0.9."""
        super().initialize_episode(row, random)
        first = random.randn(2)
        first /= np.linalg.norm(first)
        while True:
            second = random.randn(2)
            second /= np.linalg.norm(second)
            if abs(np.dot(first, second)) <= MAX_PARALLEL:
                break
        self.directions[row] = first, second

    def step_physics(self, action: np.ndarray, nstep: int) -> None:
        """The motors' force along the row's directions, qfrc_applied[j] = sum_i gear_i a_i
        d_i[j] (held through the nstep physics steps, as the controls are), then the steps."""
        physics = self.physics
        gear = physics.named_model.actuator_gear[list(TENDONS)][:, 0]
        force = np.einsum("bi,bij->bj", gear * np.asarray(action, dtype=np.float64), self.directions)
        physics.named.qfrc_applied[list(JOINTS)] = force
        super().step_physics(action, nstep)


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
DmcPointMassHardEnv, DmcPointMassHardVectorEnv = register_dmc(
    Hard,
    module=__name__,
    summary="dm_control's point_mass-hard: bring a point mass to the target, pushed along random directions",
    doc=dmc_doc(
        Hard,
        description=(
            "Bring a mass sliding on a plane to the target at the centre; each of the two controls pushes "
            "along its own random direction, drawn each episode."
        ),
        action=(
            "`Box(-1, 1, (2,), float64)`: the forces along the episode's two directions (0.1 N x action "
            "each; dm_control's tendons, applied here as qfrc_applied)."
        ),
        rewards=(
            "near_target (1 inside the target, a gaussian tolerance of the distance one target "
            "radius out) x small_control ((4 + the mean quadratic tolerance of the action) / 5)."
        ),
        start=(
            "The mass uniform in its joints' ranges (+-0.3 m), at rest; the first direction a normalized "
            "N(0, I) draw, the second drawn again while the two are within |cos| > 0.9 of parallel."
        ),
    ),
)
