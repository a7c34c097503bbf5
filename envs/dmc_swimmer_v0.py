"""dm_control's swimmer domain (dm_control/suite/swimmer.py): a chain of links in a viscous
fluid swims its nose to a target, with 6 links (swimmer6) or 15 (swimmer15), as
RoboDyn/dmc-swimmer-<task>-v0."""

from __future__ import annotations

from xml.etree import ElementTree

import numpy as np

from robogym.declare import State
from robogym.dmc_task import DmcTask, Key, dmc_doc, register_dmc, tolerance

P_CLOSE_TARGET = 0.2  # probability of a target near the centre
CLOSE_BOX, FAR_BOX = 0.3, 2.0  # the target's x and y are uniform in [-box, box] (m)
TARGET_Z = 0.05  # the target's height (m), the model's
# each velocimeter + gyro pair of sensordata (after the 12 columns of the frame sensors): the
# body's local x and y velocity and its rotation rate about z
FRAME_SENSORS = 12
VX_VY_WZ = [0, 1, 5]


class Swimmer(DmcTask):
    """The swimmer's readouts (dm_control's swimmer.Physics) and its task, for a chain of
    `n_links` bodies. dm_control builds the model in Python from swimmer.xml (edit_model
    does the same) and moves the target geom (on the world body, without contacts: the model
    disables them) each episode; here its x-y is task state, which the renderer draws it at."""

    domain = "swimmer"
    model_name = "swimmer.xml"
    builds_model = True
    timestep = 0.002
    control_timestep = 0.03
    time_limit = 30.0
    render_camera = "tracking1"
    n_links = 3
    target = State("the target's x-y (m), drawn each episode", shape=(2,), reset=None)

    @classmethod
    def joint_names(cls) -> tuple[str, ...]:
        return tuple(f"joint_{i}" for i in range(cls.n_links - 1))

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.observation = (
            Key(
                "joints", lambda t: t.physics.named.qpos.all[:, 3:], cls.joint_names(), doc="the joint angles"
            ),
            Key(
                "to_target",
                lambda t: t.nose_to_target(),
                ("x", "y"),
                doc="from the nose to the target, in the head's frame (m)",
            ),
            Key(
                "body_velocities",
                lambda t: t.body_velocities(),
                tuple(
                    f"{b}.{c}"
                    for b in ("head", *(f"segment_{i}" for i in range(cls.n_links - 1)))
                    for c in ("vx", "vy", "wz")
                ),
                doc="each body's local x, y velocity and z rotation rate",
            ),
        )

    def edit_model(self, mjcf: ElementTree.Element) -> None:
        """dm_control's _make_model: n_links - 1 segments chained below the head, each with a
        hinge of range +-360/n_links degrees, its motor, a velocimeter and a gyro; the
        tracking cameras moved away by n_links / 6."""
        n = self.n_links
        parent = mjcf.find("./worldbody/body")
        actuator = ElementTree.SubElement(mjcf, "actuator")
        sensor = ElementTree.SubElement(mjcf, "sensor")
        limit = 360.0 / n
        for i in range(n - 1):
            child = ElementTree.SubElement(parent, "body", {"name": f"segment_{i}", "pos": "0 .1 0"})
            ElementTree.SubElement(child, "geom", {"class": "visual", "name": f"visual_{i}"})
            ElementTree.SubElement(child, "geom", {"class": "inertial", "name": f"inertial_{i}"})
            ElementTree.SubElement(child, "site", {"name": f"site_{i}"})
            ElementTree.SubElement(child, "joint", {"name": f"joint_{i}", "range": f"{-limit} {limit}"})
            ElementTree.SubElement(actuator, "motor", {"name": f"motor_{i}", "joint": f"joint_{i}"})
            ElementTree.SubElement(sensor, "velocimeter", {"name": f"velocimeter_{i}", "site": f"site_{i}"})
            ElementTree.SubElement(sensor, "gyro", {"name": f"gyro_{i}", "site": f"site_{i}"})
            parent = child
        scale = n / 6.0
        for camera in mjcf.findall("./worldbody/body/camera"):
            if camera.get("mode") == "trackcom":
                pos = [str(float(x) * scale) for x in camera.get("pos").split(" ")]
                camera.set("pos", " ".join(pos))

    def nose_to_target(self) -> np.ndarray:
        """(B, 2) from the nose to the target, in the head's frame: x, y (m)."""
        named = self.physics.named
        target = np.concatenate([self.target, np.full((self.physics.batch, 1), TARGET_Z)], axis=1)
        world = target - named.geom_xpos["nose"]
        head = named.xmat["head"].reshape(-1, 3, 3)
        return np.einsum("bi,bij->bj", world, head)[:, :2]

    def body_velocities(self) -> np.ndarray:
        """(B, 3 n_links) each body's local x, y velocity and z rotation rate."""
        sensors = self.physics.named.sensordata.all[:, FRAME_SENSORS:]
        return sensors.reshape(self.physics.batch, -1, 6)[:, :, VX_VY_WZ].reshape(self.physics.batch, -1)

    def initialize_episode(self, row, random) -> None:
        """The joints uniform in their ranges, the heading uniform in [-pi, pi); the target
        uniform in a square of half-side 0.3 m (probability 0.2) or 2 m."""
        self.randomize_limited_and_rotational_joints(row, random)
        box = CLOSE_BOX if random.rand() < P_CLOSE_TARGET else FAR_BOX
        self.target[row] = random.uniform(-box, box, size=2)

    def get_reward(self):
        size = self.physics.named_model.geom_size["target"][0]
        distance = np.linalg.norm(self.nose_to_target(), axis=1)
        return tolerance(distance, (0, size), 5 * size, "long_tail"), {"distance": distance}

    def decorate_frame(self, mj_model, row: int) -> None:
        mj_model.geom_pos[self.physics.geom_id("target"), :2] = self.target[row]
        mj_model.light_pos[mj_model.light("target_light").id, :2] = self.target[row]


class Swimmer6(Swimmer):
    task = "swimmer6"
    n_links = 6


class Swimmer15(Swimmer):
    task = "swimmer15"
    n_links = 15


def _doc(task_class) -> str:
    n = task_class.n_links
    return dmc_doc(
        task_class,
        description=(
            f"Swim a planar chain of {n} links (a head and {n - 1} segments) through a viscous fluid "
            "until its nose reaches a target."
        ),
        action=f"`Box(-1, 1, ({n - 1},), float64)`: the motors of the {n - 1} joints.",
        rewards=(
            "A long-tail tolerance of the nose's distance to the target: 1 within the target's radius "
            "(0.1 m), 0.1 at five radii beyond it."
        ),
        start=(
            "The joints uniform in their ranges, the heading uniform in [-pi, pi), at rest; the target "
            "uniform in a square of half-side 0.3 m (probability 0.2) or 2 m."
        ),
    )


DmcSwimmerSwimmer6Env, DmcSwimmerSwimmer6VectorEnv = register_dmc(
    Swimmer6,
    module=__name__,
    summary="dm_control's swimmer-swimmer6: a 6-link swimmer reaches a target",
    doc=_doc(Swimmer6),
)
DmcSwimmerSwimmer15Env, DmcSwimmerSwimmer15VectorEnv = register_dmc(
    Swimmer15,
    module=__name__,
    summary="dm_control's swimmer-swimmer15: a 15-link swimmer reaches a target",
    doc=_doc(Swimmer15),
)
