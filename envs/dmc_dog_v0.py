"""dm_control's dog domain (dm_control/suite/dog.py): a muscular dog model stands, walks,
trots, runs, or fetches a thrown ball, as RoboDyn/dmc-dog-<task>-v0."""

from __future__ import annotations

from xml.etree import ElementTree

import numpy as np

from robogym.dmc_task import XMAT, DmcTask, Key, dmc_doc, register_dmc, remove_elements, tolerance
from robogym.errors import InvalidArgumentError

WALK_SPEED, TROT_SPEED, RUN_SPEED = 1.0, 3.0, 9.0  # m/s: Move's reward is 1 from these
STAND_HEIGHT_FRACTION = 0.9  # standing: the torso and pelvis at least this x their reset heights
MIN_UPRIGHT_COSINE = float(np.cos(np.deg2rad(30)))  # upright: local z within 30 degrees of world z
UPRIGHT_BODIES = ("skull", "torso", "pelvis")
INERTIAL = ("accelerometer", "velocimeter", "gyro")  # at the head site
TOUCH = ("palm_L", "palm_R", "sole_L", "sole_R")
FORCES = ("foot_L", "foot_R", "hand_L", "hand_R")  # force sensors at the feet's and hands' anchors
ROOT_SPEED = 2.0  # the root's x, y and yaw velocities start at this x N(0, 1)
BALL_RADIUS_FRACTION = 0.75  # fetch: the ball starts this x the floor's half-size from the centre
BALL_HEIGHT, BALL_SPEED, BALL_AIM = 3.0, 5.0, 0.05  # fetch: the throw's draws (module docstring)
# the walls, the ball, the target and the cameras that follow them, which Stand and Move remove
FETCH_ONLY = {
    ("body", "ball"),
    ("geom", "target"),
    ("camera", "ball"),
    ("camera", "head"),
    *(("geom", f"wall_{w}") for w in ("px", "nx", "py", "ny")),
}
# dog.xml's <size njmax="900" nconmax="300">: the engine gives each contact the rows of the
# widest (condim 6, 10 pyramid edges), so 900 rows would hold 75 contacts; rows for all 300
CAPACITY = {"nconmax": 300, "nefcmax": 10**6}
NHINGE, NMUSCLE = 73, 38  # dog.xml's hinge joints and actuators (bind checks them)


class Stand(DmcTask):
    """The dog's readouts (dm_control's dog.Physics) and its Stand task: the torso and the
    pelvis at 0.9 of their heights at the reset pose, head, torso and pelvis upright, the soles
    and palms pressing with the body's weight. The model is dog.xml with the floor sized for
    the task (15 s at the task's speed; 10 m for fetch) and, but for Fetch, without the walls,
    the ball and the target. Every episode starts with every actuator's activation uniform
    in its range; the first observation comes from a forward pass without actuation
    (dm_control's reset), so its accelerometer and force sensors read no muscle forces."""

    domain = "dog"
    task = "stand"
    model_name = "dog.xml"
    builds_model = True
    capacity = CAPACITY
    timestep = 0.005
    control_timestep = 0.015
    time_limit = 15.0
    render_camera = "x-axis"
    floor_size = WALK_SPEED * 15.0  # (m) the floor's half-size
    with_ball = False
    observation = (
        Key(
            "joint_angles",
            lambda t: t.hinges(t.physics.named.qpos),
            tuple(map(str, range(NHINGE))),
            doc="every hinge's angle, in the model's joint order (rad)",
        ),
        Key(
            "joint_velocites",  # (sic: dm_control's key)
            lambda t: t.hinges(t.physics.named.qvel),
            tuple(map(str, range(NHINGE))),
            doc="every hinge's velocity (rad/s)",
        ),
        Key(
            "torso_pelvis_height",
            lambda t: t.torso_pelvis_height(),
            ("torso", "pelvis"),
            doc="the torso's and the pelvis' heights (m)",
        ),
        Key(
            "z_projection",
            lambda t: t.z_projection(),
            tuple(f"{b}.{c}" for b in UPRIGHT_BODIES for c in ("zx", "zy", "zz")),
            doc="the third row of the skull's, torso's and pelvis' frames",
        ),
        Key(
            "torso_com_velocity",
            lambda t: t.torso_com_velocity(),
            ("x", "y", "z"),
            doc="the torso subtree's centre-of-mass velocity in the torso frame (m/s)",
        ),
        Key(
            "inertial_sensors",
            lambda t: t.physics.named.sensordata[list(INERTIAL)],
            tuple(f"{s}.{c}" for s in INERTIAL for c in "xyz"),
            doc="the head's accelerometer, velocimeter and gyro",
        ),
        Key(
            "foot_forces",
            lambda t: t.physics.named.sensordata[list(FORCES)],
            tuple(f"{s}.{c}" for s in FORCES for c in "xyz"),
            doc="the force sensors at the feet and hands (N)",
        ),
        Key(
            "touch_sensors",
            lambda t: t.physics.named.sensordata[list(TOUCH)],
            TOUCH,
            doc="the palms' and soles' touch sensors (N)",
        ),
        Key(
            "actuator_state",
            lambda t: t.physics.named.act.all,
            tuple(map(str, range(NMUSCLE))),
            doc="the muscles' activations, in the model's actuator order",
        ),
    )

    def edit_model(self, mjcf: ElementTree.Element) -> None:
        """dm_control's make_model: the floor floor_size x floor_size x 0.1; without with_ball,
        the ball, the target, their cameras and the walls removed."""
        size = f"{self.floor_size:g}"
        next(g for g in mjcf.iter("geom") if g.get("name") == "floor").set("size", f"{size} {size} .1")
        if not self.with_ball:
            remove_elements(mjcf, FETCH_ONLY)

    def bind(self, physics) -> None:
        """The hinges, and the constants Stand's initialize_episode measures: the torso's and
        the pelvis' standing heights (0.9 x theirs at the reset pose) and the body's weight."""
        super().bind(physics)
        self.hinge_names = physics.joint_names("hinge")
        nu, na = physics.named_model.actuator_ctrlrange.all.shape[0], physics.named.act.all.shape[1]
        if (len(self.hinge_names), nu, na) != (NHINGE, NMUSCLE, NMUSCLE):
            raise InvalidArgumentError(
                f"{self.model_name}: {len(self.hinge_names)} named hinges, {nu} actuators and {na} "
                f"activations; the dog's observation is declared for {NHINGE}, {NMUSCLE} and {NMUSCLE}"
            )
        qpos0 = physics.named_model.qpos0.all
        self.stand_height = (
            physics.body_positions(qpos0, ["torso", "pelvis"])[0, :, 2] * STAND_HEIGHT_FRACTION
        )
        self.body_weight = physics.gravity * physics.named_model.body_subtreemass["torso"]

    # --- readouts ---------------------------------------------------------------------------
    def hinges(self, field) -> np.ndarray:
        """(B, 73) every hinge's entry of the named field (qpos, qvel), in the model's order."""
        return field[self.hinge_names]

    def torso_pelvis_height(self) -> np.ndarray:
        """(B, 2) the torso's and the pelvis' z."""
        return self.physics.named.xpos[["torso", "pelvis"]][:, :, 2]

    def z_projection(self) -> np.ndarray:
        """(B, 9) the frames' zx, zy, zz of the skull, the torso and the pelvis."""
        xmat = self.physics.named.xmat[list(UPRIGHT_BODIES)]
        return xmat[:, :, XMAT["zx"] :].reshape(-1, 9)

    def upright(self) -> np.ndarray:
        """(B, 3) the zz of the skull, the torso and the pelvis."""
        return self.physics.named.xmat[list(UPRIGHT_BODIES)][:, :, XMAT["zz"]]

    def in_frame(self, v: np.ndarray, frame: np.ndarray) -> np.ndarray:
        """(B, 3) world vectors v (B, 3) in frames (B, 9) (v R, R the row-major matrix)."""
        return np.einsum("bi,bij->bj", v, frame.reshape(-1, 3, 3))

    def torso_com_velocity(self) -> np.ndarray:
        """(B, 3) the torso_linvel sensor (the torso subtree's com velocity) in the torso frame."""
        named = self.physics.named
        return self.in_frame(named.sensordata["torso_linvel"], named.xmat["torso"])

    # --- episode ------------------------------------------------------------------------------
    def initialize_episode(self, row, random) -> None:
        """A uniformly random heading; the root's x, y and yaw velocities 2 N(0, 1); every
        activation uniform in its actuator's ctrlrange, actuator by actuator."""
        named = self.physics.named
        azimuth = random.uniform(0, 2 * np.pi)
        named.qpos["root"][row, 3:] = np.cos(azimuth / 2), 0.0, 0.0, np.sin(azimuth / 2)
        qvel = named.qvel.all
        qvel[row, 0] = ROOT_SPEED * random.randn()
        qvel[row, 1] = ROOT_SPEED * random.randn()
        qvel[row, 5] = ROOT_SPEED * random.randn()
        act = named.act.all
        for a, ctrlrange in enumerate(self.physics.named_model.actuator_ctrlrange.all):
            act[row, a] = random.uniform(*ctrlrange)

    # --- reward -------------------------------------------------------------------------------
    def standing(self) -> dict[str, np.ndarray]:
        """Stand's factors: torso and pelvis (gaussian tolerances of their heights, 1 from
        their standing heights), upright (linear, per body: 1 within 30 degrees of vertical, 0
        upside down) and touch (linear in the touch sensors' sum: 1 from the body's weight,
        0.9 at 0)."""
        height = self.torso_pelvis_height()
        torso_h, pelvis_h = self.stand_height
        upright = tolerance(self.upright(), (MIN_UPRIGHT_COSINE, np.inf), MIN_UPRIGHT_COSINE + 1, "linear", 0)
        touch = self.physics.named.sensordata[list(TOUCH)].sum(axis=1)
        return {
            "torso": tolerance(height[:, 0], (torso_h, np.inf), torso_h),
            "pelvis": tolerance(height[:, 1], (pelvis_h, np.inf), pelvis_h),
            "upright_skull": upright[:, 0],
            "upright_torso": upright[:, 1],
            "upright_pelvis": upright[:, 2],
            "touch": tolerance(touch, (self.body_weight, np.inf), self.body_weight, "linear", 0.9),
        }

    def get_reward(self):
        factors = self.standing()
        return _product(factors), factors


class Move(Stand):
    """Stand's factors times forward: a linear tolerance of the torso's forward com velocity,
    1 from move_speed to twice it, rescaled to [0.2, 1]."""

    move_speed = WALK_SPEED

    def get_reward(self):
        factors = self.standing()
        v = self.move_speed
        forward = tolerance(self.torso_com_velocity()[:, 0], (v, 2 * v), max(1.0, v), "linear", 0)
        factors["forward"] = (4 * forward + 1) / 5
        return _product(factors), factors


class Walk(Move):
    task = "walk"
    move_speed = WALK_SPEED
    floor_size = WALK_SPEED * 15.0


class Trot(Move):
    task = "trot"
    move_speed = TROT_SPEED
    floor_size = TROT_SPEED * 15.0


class Run(Move):
    task = "run"
    move_speed = RUN_SPEED
    floor_size = RUN_SPEED * 15.0


class Fetch(Stand):
    """Stand's factors times reach (the mouth to the ball) and fetch (the ball to the target
    at the centre), on the 10 m floor with the walls, the ball and the target."""

    task = "fetch"
    floor_size = 10.0
    with_ball = True
    observation = (
        *Stand.observation,
        Key(
            "ball_state",
            lambda t: t.ball_in_head_frame(),
            tuple(f"{q}.{c}" for q in ("pos", "vel") for c in "xyz"),
            doc="the ball's position and velocity from the head's, in the head site's frame",
        ),
        Key(
            "target_position",
            lambda t: t.in_head_frame(
                t.physics.named.geom_xpos["target"] - t.physics.named.site_xpos["head"]
            ),
            ("x", "y", "z"),
            doc="the target from the head, in the head site's frame (m)",
        ),
    )

    def bind(self, physics) -> None:
        super().bind(physics)
        named_model = physics.named_model
        self.head_body = int(named_model.site_bodyid["head"])
        self.ball_body = int(named_model.geom_bodyid["ball"])

    def in_head_frame(self, v: np.ndarray) -> np.ndarray:
        return self.in_frame(v, self.physics.named.site_xmat["head"])

    def point_velocity(self, body: int, point: np.ndarray) -> np.ndarray:
        """(B, 3) the world velocity of a point (B, 3) moving with `body` (MuJoCo's
        mj_objectVelocity, world frame): the body's cvel, taken about its tree's subtree
        centre of mass, moved to the point: v - (point - com) x w."""
        named, root = self.physics.named, int(self.physics.named_model.body_rootid.all[body])
        cvel = named.cvel.all[:, body]
        return cvel[:, 3:] - np.cross(point - named.subtree_com.all[:, root], cvel[:, :3])

    def ball_in_head_frame(self) -> np.ndarray:
        """(B, 6) the ball geom's position and velocity relative to the head site's, in the
        head site's frame."""
        named = self.physics.named
        head, ball = named.site_xpos["head"], named.geom_xpos["ball"]
        relative = self.point_velocity(self.ball_body, ball) - self.point_velocity(self.head_body, head)
        return np.concatenate([self.in_head_frame(ball - head), self.in_head_frame(relative)], axis=1)

    def initialize_episode(self, row, random) -> None:
        """Stand's start, then the ball 0.75 x the floor's half-size from the centre at a
        uniform azimuth, 5 cm up, thrown towards the centre (its direction's x and y nudged by
        0.05 N(0, 1)) at a horizontal speed uniform in [0, 5] m/s and upward as if to reach a
        height uniform in [0, 3] m (v = sqrt(2 g h))."""
        super().initialize_episode(row, random)
        named = self.physics.named
        radius = BALL_RADIUS_FRACTION * self.physics.named_model.geom_size["floor"][0]
        azimuth = random.uniform(0, 2 * np.pi)
        named.qpos["ball_root"][row, :3] = radius * np.sin(azimuth), radius * np.cos(azimuth), 0.05
        height = random.uniform(0, BALL_HEIGHT)
        up = np.sqrt(2 * self.physics.gravity * height)
        speed = random.uniform(0, BALL_SPEED)
        direction = np.array(
            (-np.sin(azimuth) + BALL_AIM * random.randn(), -np.cos(azimuth) + BALL_AIM * random.randn())
        )
        named.qvel["ball_root"][row, :3] = *(speed * direction), up

    def get_reward(self):
        named, named_model = self.physics.named, self.physics.named_model
        factors = self.standing()
        ball = named.geom_xpos["ball"]
        mouth = 0.5 * (
            np.linalg.norm(ball - named.site_xpos["upper_bite"], axis=1)
            + np.linalg.norm(ball - named.site_xpos["lower_bite"], axis=1)
        )
        reach = tolerance(mouth, (0, named_model.site_size["upper_bite"][0]), 2.0, "reciprocal")
        reach = (6 * reach + 1) / 7
        target_radius = named_model.geom_size["target"][0]
        to_target = np.linalg.norm(ball - named.geom_xpos["target"], axis=1)
        near = tolerance(to_target, (0, target_radius), named_model.geom_size["floor"][0], "reciprocal")
        factors["reach_ball"] = np.where(to_target < 2 * target_radius, 1.0, reach)  # let go once fetched
        factors["fetch_ball"] = (near + 1) / 2
        return _product(factors), factors


def _product(factors: dict[str, np.ndarray]) -> np.ndarray:
    """(B,) the product of the factors (B,), in their order (dm_control's np.prod of them)."""
    return np.prod(np.stack(list(factors.values()), axis=1), axis=1)


ACTION = "`Box(-1, 1, (38,), float64)`: the muscles' controls (first-order filtered into their activations)."
STAND_REWARD = (
    "torso and pelvis (gaussian tolerances of their heights, 1 from 0.9 x their heights at the reset pose) "
    "x upright (per skull, torso and pelvis: linear, 1 within 30 degrees of vertical, 0 upside down) x "
    "touch (linear in the palms' and soles' touch sensors: 1 from the body's weight, 0.9 at 0)"
)
START = (
    "The reset pose at a uniform heading, the root's x, y and yaw velocities 2 N(0, 1), every muscle's "
    "activation uniform in [-1, 1]"
)


def _move_doc(task_class) -> str:
    v = task_class.move_speed
    return dmc_doc(
        task_class,
        description=f"Make a dog model move forward at {v:g} m/s or more.",
        action=ACTION,
        rewards=(
            f"{STAND_REWARD} x forward (linear in the torso's forward com velocity: 1 from {v:g} to "
            f"{2 * v:g} m/s, rescaled to [0.2, 1])."
        ),
        start=f"{START}.",
    )


DmcDogStandEnv, DmcDogStandVectorEnv = register_dmc(
    Stand,
    module=__name__,
    summary="dm_control's dog-stand: stand up and stay upright",
    doc=dmc_doc(
        Stand,
        description="Make a dog model stand upright on its four feet.",
        action=ACTION,
        rewards=f"{STAND_REWARD}.",
        start=f"{START}.",
    ),
)
DmcDogWalkEnv, DmcDogWalkVectorEnv = register_dmc(
    Walk, module=__name__, summary="dm_control's dog-walk: walk forward at 1 m/s", doc=_move_doc(Walk)
)
DmcDogTrotEnv, DmcDogTrotVectorEnv = register_dmc(
    Trot, module=__name__, summary="dm_control's dog-trot: trot forward at 3 m/s", doc=_move_doc(Trot)
)
DmcDogRunEnv, DmcDogRunVectorEnv = register_dmc(
    Run, module=__name__, summary="dm_control's dog-run: run forward at 9 m/s", doc=_move_doc(Run)
)
DmcDogFetchEnv, DmcDogFetchVectorEnv = register_dmc(
    Fetch,
    module=__name__,
    summary="dm_control's dog-fetch: bring a thrown ball to the arena's centre",
    doc=dmc_doc(
        Fetch,
        description="Make a dog model catch a thrown ball in its mouth and bring it to the target.",
        action=ACTION,
        rewards=(
            f"{STAND_REWARD} x reach (reciprocal in the mouth's distance to the ball, rescaled to [1/7, 1]; "
            "1 once the ball is within twice the target's radius of it) x fetch (reciprocal in the ball's "
            "distance to the target, rescaled to [0.5, 1])."
        ),
        start=(
            f"{START}; the ball 7.5 m from the centre, thrown towards it at up to 5 m/s horizontally and "
            "upward as if to rise up to 3 m."
        ),
    ),
)
