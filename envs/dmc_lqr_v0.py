"""dm_control's lqr domain (dm_control/suite/lqr.py): a chain of bodies sliding on springs, the
first few driven by motors, to be brought to rest at the origin (a linear-quadratic regulator
problem), with 2 bodies and 1 motor (lqr_2_1) or 6 bodies and 2 motors (lqr_6_2), as
RoboDyn/dmc-lqr-<task>-v0."""

from __future__ import annotations

import math
from xml.etree import ElementTree

import numpy as np

from robogym.dmc_task import DmcTask, Key, dmc_doc, register_dmc

STIFFNESS_RANGE = (15.0, 25.0)  # each joint's stiffness is uniform in it (N/m), dm_control's _make_model
DAMPING_RANGE = (0.0, 0.0)  # each joint's damping is uniform in it (N s/m): drawn, always 0
CONTROL_COST_COEF = 0.1  # the control's weight in the cost (dm_control's _CONTROL_COST_COEF)
TERMINAL_TOL = 1e-6  # the episode terminates when the state's norm falls below this


class Lqr(DmcTask):
    """The lqr chain's readouts (dm_control's lqr.Physics) and its LQRLevel task, for a chain
    of `n_bodies` bodies, each on a slide joint along y with a spring, the first
    `n_actuators` driven by a motor. dm_control builds the model in Python from lqr.xml
    (edit_model does the same), drawing each joint's stiffness and damping from the task's
    RandomState as it builds it, once per environment: here the row's own parameters, drawn
    by initialize_environment when the row's RandomState is seeded."""

    domain = "lqr"
    model_name = "lqr.xml"
    builds_model = True
    timestep = 0.03
    time_limit = math.inf
    render_camera = "cam0"
    n_bodies = 2
    n_actuators = 1

    @classmethod
    def joint_names(cls) -> tuple[str, ...]:
        return tuple(f"joint_{i}" for i in range(cls.n_bodies))

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.observation = (
            Key("position", lambda t: t.physics.named.qpos.all, cls.joint_names(), doc="qpos"),
            Key("velocity", lambda t: t.physics.named.qvel.all, cls.joint_names(), doc="qvel"),
        )

    def edit_model(self, mjcf: ElementTree.Element) -> None:
        """dm_control's _make_model: n_bodies bodies chained below the world body, each 0.25 m
        along x from its parent (the first also 0.1 m up) with a slide joint (its stiffness
        and damping here the ranges' midpoints, placeholders: every row has its own, drawn by
        initialize_environment), a sphere and a site; a motor on each of the first
        n_actuators joints; a spatial tendon between consecutive sites (drawn only)."""
        parent = mjcf.find("./worldbody")
        actuator = ElementTree.SubElement(mjcf, "actuator")
        tendon = ElementTree.SubElement(mjcf, "tendon")
        stiffness, damping = (repr(sum(r) / 2) for r in (STIFFNESS_RANGE, DAMPING_RANGE))
        for i in range(self.n_bodies):
            body = ElementTree.SubElement(
                parent, "body", {"name": f"body_{i}", "pos": ".25 0 .1" if i == 0 else ".25 0 0"}
            )
            ElementTree.SubElement(
                body, "joint", {"name": f"joint_{i}", "stiffness": stiffness, "damping": damping}
            )
            ElementTree.SubElement(body, "geom", {"name": f"geom_{i}"})
            ElementTree.SubElement(body, "site", {"name": f"site_{i}"})
            if i < self.n_actuators:
                ElementTree.SubElement(actuator, "motor", {"name": f"motor_{i}", "joint": f"joint_{i}"})
            if i < self.n_bodies - 1:
                spatial = ElementTree.SubElement(tendon, "spatial", {"name": f"tendon_{i}"})
                ElementTree.SubElement(spatial, "site", {"site": f"site_{i}"})
                ElementTree.SubElement(spatial, "site", {"site": f"site_{i + 1}"})
            parent = body

    # --- readouts ---------------------------------------------------------------------------
    def state_norm(self) -> np.ndarray:
        """(B,) |(qpos, qvel, act)|, the norm of the physics state (dm_control's state_norm)."""
        named = self.physics.named
        state = np.concatenate([named.qpos.all, named.qvel.all, named.act.all], axis=1)
        return np.sqrt(np.einsum("ij,ij->i", state, state))

    # --- environment and episode ---------------------------------------------------------------
    def initialize_environment(self, row, random) -> dict[str, dict[str, float]]:
        """Each joint's stiffness uniform in [15, 25] N/m and its damping uniform in [0, 0]
        (a draw, always 0), joint by joint in the chain's order, stiffness first, as
        dm_control's _make_body draws them when it builds the model."""
        stiffness, damping = {}, {}
        for name in self.joint_names():
            stiffness[name] = random.uniform(*STIFFNESS_RANGE)
            damping[name] = random.uniform(*DAMPING_RANGE)
        return {"jnt_stiffness": stiffness, "dof_damping": damping}

    def initialize_episode(self, row, random) -> None:
        """The positions uniform on the sphere of radius sqrt(2) (a normalized N(0, I) draw),
        at rest."""
        unit = random.randn(self.physics.named.qpos.all.shape[1])
        self.physics.named.qpos.all[row] = np.sqrt(2) * unit / np.linalg.norm(unit)

    def get_reward(self):
        """1 - (|qpos|^2 / 2 + 0.1 |ctrl|^2 / 2): dm_control's quadratic cost, negated and
        shifted by 1."""
        position, control = self.physics.named.qpos.all, self.control()
        state_cost = 0.5 * np.einsum("ij,ij->i", position, position)
        control_cost = 0.5 * np.einsum("ij,ij->i", control, control) * CONTROL_COST_COEF
        return 1 - (state_cost + control_cost), {"state_cost": state_cost, "control_cost": control_cost}

    def get_termination(self) -> np.ndarray:
        """The state's norm below 1e-6 (dm_control's discount 0)."""
        return self.state_norm() < TERMINAL_TOL


class Lqr21(Lqr):
    """Two bodies, the first driven."""

    task = "lqr_2_1"


class Lqr62(Lqr):
    """Six bodies, the first two driven."""

    task = "lqr_6_2"
    n_bodies = 6
    n_actuators = 2


_REWARDS = (
    "1 - (state_cost + control_cost): state_cost = |qpos|^2 / 2, control_cost = 0.1 |action|^2 / 2 "
    "(dm_control's quadratic cost)."
)
_START = (
    "Each joint's stiffness uniform in [15, 25] N/m (and its damping uniform in [0, 0]), drawn when the "
    "environment is seeded and kept by the episodes that follow, as dm_control draws them once when it "
    "builds the model; each episode the positions uniform on the sphere of radius sqrt(2), at rest."
)
_TERMINATION = "Terminates when |(qpos, qvel)| falls below 1e-6 (dm_control's discount 0)"


def _doc(task_class, what: str, action: str) -> str:
    return dmc_doc(
        task_class,
        description=what,
        action=action,
        rewards=_REWARDS,
        start=_START,
        reward_range="At most 1, unbounded below",
        termination=_TERMINATION,
    )


DmcLqrLqr21Env, DmcLqrLqr21VectorEnv = register_dmc(
    Lqr21,
    module=__name__,
    summary="dm_control's lqr-lqr_2_1: bring two sprung bodies to rest, one driven",
    doc=_doc(
        Lqr21,
        "Bring a chain of two bodies sliding on springs to rest at the origin by driving the first.",
        "`Box(-1e+10, 1e+10, (1,), float64)`: the force of the motor on the first joint (N); the motor "
        "has no ctrlrange, and the box is dm_control's action_spec, +-mjMAXVAL.",
    ),
)
DmcLqrLqr62Env, DmcLqrLqr62VectorEnv = register_dmc(
    Lqr62,
    module=__name__,
    summary="dm_control's lqr-lqr_6_2: bring six sprung bodies to rest, two driven",
    doc=_doc(
        Lqr62,
        "Bring a chain of six bodies sliding on springs to rest at the origin by driving the first two.",
        "`Box(-1e+10, 1e+10, (2,), float64)`: the forces of the motors on the first two joints (N); the "
        "motors have no ctrlrange, and the box is dm_control's action_spec, +-mjMAXVAL.",
    ),
)
