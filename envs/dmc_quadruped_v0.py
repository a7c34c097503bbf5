"""dm_control's quadruped domain (dm_control/suite/quadruped.py): a four-legged robot walks or
runs forward on flat ground, escapes a bumpy bowl of terrain, or fetches a ball to the arena's
centre, as RoboDyn/dmc-quadruped-<task>-v0."""

from __future__ import annotations

from xml.etree import ElementTree

import numpy as np

from robogym.dmc_task import XMAT, DmcTask, Key, dmc_doc, register_dmc, tolerance
from robogym.errors import InvalidArgumentError

WALK_SPEED, RUN_SPEED = 0.5, 5.0  # m/s
LIFT_STEP = 0.01  # (m) the reset raises the body by this until nothing touches
MAX_LIFTS = 10_000  # dm_control's limit on those raises
LEGS = ("front_left", "front_right", "back_right", "back_left")  # the model's order
HINGES = tuple(f"{j}_{leg}" for leg in LEGS for j in ("yaw", "pitch", "knee", "ankle"))
ACTUATORS = tuple(f"{a}_{leg}" for leg in LEGS for a in ("yaw", "lift", "extend"))
IMU = ("imu_accel", "imu_gyro")  # the accelerometer and the gyro, in the model's order
FORCE_TORQUE = (*(f"force_toe_{leg}" for leg in LEGS), *(f"torque_toe_{leg}" for leg in LEGS))
WALLS = ("wall_px", "wall_py", "wall_nx", "wall_ny")
SPAWN = 0.9  # fetch: the robot and the ball start uniform in +-this x the floor's half-size
BALL_HEIGHT = 2.0  # (m) fetch: the ball's starting height
BALL_SPEED = 5.0  # fetch: the ball's horizontal velocity is this x N(0, I_2) (m/s)
ESCAPE_FLOOR = 40.0  # (m) escape: the floor's half-size
TERRAIN_SMOOTHNESS = 0.15  # escape: the bumps' heights are uniform in [this, 1] (1: flat)
TERRAIN_BUMP_SCALE = 2.0  # (m) escape: the bumps' spacing
ESCAPE_UPRIGHT = 20.0  # (deg) escape: upright reward 1 within this tilt
RANGEFINDERS = tuple(f"rf_{i}{j}" for i in range(4) for j in range(5))  # escape's, the model's order


class Quadruped(DmcTask):
    """The quadruped's readouts (dm_control's quadruped.Physics) and its Move task, whose walk
    and run differ in `desired_speed` and the floor's size. dm_control builds the model from
    quadruped.xml without the walls, the ball, the target, the terrain and the rangefinders,
    the floor sized for the task (edit_model does the same; Fetch keeps the walls, the ball and
    the target). The accelerometer and the force
    and torque sensors, of MuJoCo's acceleration stage, keep their values of the last physics
    step's start, as after dm_control's step. dm_control's reset forward pass runs without
    actuation; at the reset pose (every hinge at 0, the activations 0) the position servos'
    force is 0 with it too, so the first observation is the same."""

    domain = "quadruped"
    model_name = "quadruped.xml"
    builds_model = True
    timestep = 0.005
    control_timestep = 0.02
    time_limit = 20.0
    render_camera = "x"
    desired_speed = WALK_SPEED
    walls_and_ball = False
    terrain = False  # the height field and the rangefinders kept (escape)
    observation = (
        Key(
            "egocentric_state",
            lambda t: t.egocentric_state(),
            (*(f"{j}.q" for j in HINGES), *(f"{j}.qd" for j in HINGES), *(f"{a}.act" for a in ACTUATORS)),
            doc="the hinge joints' angles and velocities, the actuators' activations",
        ),
        Key(
            "torso_velocity",
            lambda t: t.physics.named.sensordata["velocimeter"],
            ("x", "y", "z"),
            doc="the torso's velocity in its frame (m/s)",
        ),
        Key("torso_upright", lambda t: t.torso_upright(), doc="the torso frame's zz"),
        Key(
            "imu",
            lambda t: t.physics.named.sensordata[list(IMU)],
            tuple(f"{s}.{c}" for s in IMU for c in "xyz"),
            doc="the accelerometer and the gyro",
        ),
        Key(
            "force_torque",
            lambda t: np.arcsinh(t.physics.named.sensordata[list(FORCE_TORQUE)]),
            tuple(f"{s}.{c}" for s in FORCE_TORQUE for c in "xyz"),
            doc="arcsinh of the toes' force and torque sensors",
        ),
    )

    def floor_size(self) -> float:
        """(m) the floor's half-size dm_control builds the model with (walk and run)."""
        return self.time_limit * self.desired_speed

    def edit_model(self, mjcf: ElementTree.Element) -> None:
        """dm_control's make_model: without walls_and_ball, the floor floor_size() x
        floor_size() and the walls, the ball and the target site removed; without terrain,
        the terrain geom and the rangefinder sensors removed."""
        unused = set() if self.terrain else {("geom", "terrain")}
        if not self.walls_and_ball:
            size = self.floor_size()
            next(g for g in mjcf.iter("geom") if g.get("name") == "floor").set(
                "size", f"{size:g} {size:g} .5"
            )
            unused |= {("geom", w) for w in WALLS} | {("body", "ball"), ("site", "target")}
        for parent in list(mjcf.iter()):
            for child in list(parent):
                rangefinder = child.tag == "rangefinder" and not self.terrain
                if (child.tag, child.get("name")) in unused or rangefinder:
                    parent.remove(child)

    # --- readouts ---------------------------------------------------------------------------
    def egocentric_state(self) -> np.ndarray:
        """(B, 44) the hinges' qpos and qvel, and the activations."""
        named = self.physics.named
        return np.concatenate([named.qpos[list(HINGES)], named.qvel[list(HINGES)], named.act.all], axis=1)

    def torso_upright(self) -> np.ndarray:
        """(B,) the torso frame's zz: 1 upright."""
        return self.physics.named.xmat["torso"][:, XMAT["zz"]]

    def in_torso_frame(self, v: np.ndarray) -> np.ndarray:
        """(B, 3) world-frame vectors (B, 3) in the torso's frame (v R, R its xmat)."""
        return np.einsum("bi,bij->bj", v, self.physics.named.xmat["torso"].reshape(-1, 3, 3))

    # --- episode ------------------------------------------------------------------------------
    def initialize_episode(self, row, random) -> None:
        """A uniformly random orientation (a normalized N(0, I_4) quaternion) at x = y = 0, at
        the lowest height, from 0 in steps of 1 cm, at which nothing touches."""
        orientation = random.randn(4)
        orientation /= np.linalg.norm(orientation)
        self.lift_until_free(row, orientation)

    def lift_until_free(self, row: int, orientation: np.ndarray, x: float = 0.0, y: float = 0.0) -> None:
        """dm_control's _find_non_contacting_height for row `row`: the root at (x, y, z) with
        `orientation`, z = 0, 0.01, 0.02, ... (summed as dm_control sums it) until the row
        touches nothing."""
        root = self.physics.named.qpos["root"]
        z = 0.0
        for _ in range(MAX_LIFTS):
            root[row, :3] = x, y, z
            root[row, 3:] = orientation
            touching = self.penetrating(row)
            z += LIFT_STEP
            if not touching:
                return
        raise InvalidArgumentError(f"{type(self).__name__}: no contact-free height in {MAX_LIFTS} raises")

    def get_reward(self):
        upright = tolerance(self.torso_upright(), (1.0, np.inf), 2.0, "linear", 0)
        speed = self.physics.named.sensordata["velocimeter"][:, 0]
        move = tolerance(speed, (self.desired_speed, np.inf), self.desired_speed, "linear", 0.5)
        return upright * move, {"upright": upright, "move": move}


class Fetch(Quadruped):
    """Bring the ball to the arena's centre: dm_control's Fetch task, on the model with the
    walls, the ball and the target."""

    task = "fetch"
    walls_and_ball = True
    observation = (
        *Quadruped.observation,
        Key(
            "ball_state",
            lambda t: t.ball_state(),
            tuple(f"{q}.{c}" for q in ("pos", "vel", "angvel") for c in "xyz"),
            doc="the ball's position and velocity from the torso's, its angular velocity; in the torso frame",
        ),
        Key(
            "target_position",
            lambda t: t.in_torso_frame(t.physics.named.site_xpos["target"] - t.physics.named.xpos["torso"]),
            ("x", "y", "z"),
            doc="the target from the torso, in its frame (m)",
        ),
    )

    def ball_state(self) -> np.ndarray:
        """(B, 9) the ball's position and linear velocity relative to the torso's and its
        angular velocity (the free joint's), each in the torso frame."""
        named = self.physics.named
        ball, root = named.qvel["ball_root"], named.qvel["root"]
        parts = (named.xpos["ball"] - named.xpos["torso"], ball[:, :3] - root[:, :3], ball[:, 3:])
        return np.concatenate([self.in_torso_frame(v) for v in parts], axis=1)

    def initialize_episode(self, row, random) -> None:
        """The robot at a uniform heading, uniform in x and y within 0.9 of the floor's
        half-size, at the lowest contact-free height; the ball uniform there too, 2 m up,
        thrown at 5 N(0, I_2) m/s horizontally."""
        azimuth = random.uniform(0, 2 * np.pi)
        orientation = np.array((np.cos(azimuth / 2), 0, 0, np.sin(azimuth / 2)))
        radius = SPAWN * self.physics.named_model.geom_size["floor"][0]
        x, y = random.uniform(-radius, radius, size=(2,))
        self.lift_until_free(row, orientation, x, y)
        ball_qpos, ball_qvel = self.physics.named.qpos["ball_root"], self.physics.named.qvel["ball_root"]
        ball_qpos[row, :2] = random.uniform(-radius, radius, size=(2,))
        ball_qpos[row, 2] = BALL_HEIGHT
        ball_qvel[row, :2] = BALL_SPEED * random.randn(2)

    def get_reward(self):
        named, named_model = self.physics.named, self.physics.named_model
        arena = named_model.geom_size["floor"][0] * np.sqrt(2)
        reach_radius = named_model.site_size["workspace"][0] + named_model.geom_size["ball"][0]
        to_ball = np.linalg.norm((named.site_xpos["workspace"] - named.xpos["ball"])[:, :2], axis=1)
        reach = tolerance(to_ball, (0, reach_radius), arena, "linear", 0)
        to_target = np.linalg.norm((named.site_xpos["target"] - named.xpos["ball"])[:, :2], axis=1)
        fetch = tolerance(to_target, (0, named_model.site_size["target"][0]), arena, "linear", 0)
        upright = tolerance(self.torso_upright(), (1.0, np.inf), 2.0, "linear", 0)
        reward = upright * reach * (0.5 + 0.5 * fetch)
        return reward, {"upright": upright, "reach": reach, "fetch": fetch}


class Escape(Quadruped):
    """Climb out of a bowl of bumpy terrain: dm_control's Escape task, on the model with the
    height field (30 m square, 5 m high, 201 x 201 elevations) and the 20 rangefinders, a 40
    m floor. dm_control writes each episode's terrain into the model's hfield_data; here it
    is the row's own (Physics.set_hfield, a per-row parameter of the engine), drawn from the
    row's RandomState in dm_control's order and kept until the row's next episode."""

    task = "escape"
    terrain = True
    observation = (
        *Quadruped.observation,
        Key(
            "origin",
            lambda t: t.in_torso_frame(-t.physics.named.xpos["torso"]),
            ("x", "y", "z"),
            doc="the world origin from the torso, in its frame (m)",
        ),
        Key(
            "rangefinder",
            lambda t: t.rangefinder(),
            RANGEFINDERS,
            doc="tanh of the 20 rangefinders' distances (m), 1 where a ray meets nothing",
        ),
    )

    def floor_size(self) -> float:
        return ESCAPE_FLOOR

    def rangefinder(self) -> np.ndarray:
        """(B, 20) tanh of each rangefinder's reading, 1 for no intersection (-1)."""
        r = self.physics.named.sensordata[list(RANGEFINDERS)]
        return np.where(r == -1.0, 1.0, np.tanh(r))

    def terrain_elevations(self, random: np.random.RandomState) -> np.ndarray:
        """(nrow, ncol) a bowl (0.5 - cos(2 pi r) / 2 of the distance r from the centre in
        half-sizes, clipped to [0.04, 1]) times smooth random bumps (uniform in
        [TERRAIN_SMOOTHNESS, 1] every TERRAIN_BUMP_SCALE m, upsampled by scipy's cubic-spline
        zoom), as dm_control's Escape draws them."""
        from scipy import ndimage  # the dmc extra installs it, as dm_control, beside which it runs

        named_model = self.physics.named_model
        res = int(named_model.hfield_nrow["terrain"])
        row_grid, col_grid = np.ogrid[-1 : 1 : res * 1j, -1 : 1 : res * 1j]
        radius = np.clip(np.sqrt(col_grid**2 + row_grid**2), 0.04, 1)
        bowl = 0.5 - np.cos(2 * np.pi * radius) / 2
        bump_res = int(2 * named_model.hfield_size["terrain"][0] / TERRAIN_BUMP_SCALE)
        bumps = random.uniform(TERRAIN_SMOOTHNESS, 1, (bump_res, bump_res))
        return bowl * ndimage.zoom(bumps, res / float(bump_res))

    def initialize_episode(self, row, random) -> None:
        """The row's terrain drawn anew, then a uniformly random orientation at x = y = 0 at
        the lowest contact-free height."""
        self.physics.set_hfield("terrain", self.terrain_elevations(random), rows=[row])
        orientation = random.randn(4)
        orientation /= np.linalg.norm(orientation)
        self.lift_until_free(row, orientation)

    def get_reward(self):
        deviation = np.cos(np.deg2rad(ESCAPE_UPRIGHT))
        upright = tolerance(self.torso_upright(), (deviation, np.inf), 1 + deviation, "linear", 0)
        terrain = self.physics.named_model.hfield_size["terrain"][0]
        distance = np.linalg.norm(self.physics.named.site_xpos["workspace"], axis=1)
        escape = tolerance(distance, (terrain, np.inf), terrain, "linear", 0)
        return upright * escape, {"upright": upright, "escape": escape}


class Walk(Quadruped):
    task = "walk"
    desired_speed = WALK_SPEED


class Run(Quadruped):
    task = "run"
    desired_speed = RUN_SPEED


def _doc(task_class) -> str:
    v = task_class.desired_speed
    return dmc_doc(
        task_class,
        description=f"Make a four-legged robot move forward at {v:g} m/s or more.",
        action=(
            "`Box(low, high, (12,), float64)`: per leg the yaw, lift and extend position servos' "
            "controls (filtered, first-order activations), in their ctrlranges."
        ),
        rewards=(
            "upright (a linear tolerance of the torso frame's zz: 1 upright, 0 upside down) x move (a "
            f"linear tolerance of the torso's forward velocity: 1 above {v:g} m/s, 0.5 at rest)."
        ),
        start=(
            "A uniformly random orientation at x = y = 0, at the lowest height (from 0 in 1 cm steps) at "
            "which nothing touches, every joint at 0, at rest."
        ),
    )


DmcQuadrupedWalkEnv, DmcQuadrupedWalkVectorEnv = register_dmc(
    Walk,
    module=__name__,
    summary="dm_control's quadruped-walk: walk forward at 0.5 m/s",
    doc=_doc(Walk),
)
DmcQuadrupedRunEnv, DmcQuadrupedRunVectorEnv = register_dmc(
    Run,
    module=__name__,
    summary="dm_control's quadruped-run: run forward at 5 m/s",
    doc=_doc(Run),
)
DmcQuadrupedFetchEnv, DmcQuadrupedFetchVectorEnv = register_dmc(
    Fetch,
    module=__name__,
    summary="dm_control's quadruped-fetch: bring a ball to the arena's centre",
    doc=dmc_doc(
        Fetch,
        description="Make a four-legged robot reach a thrown ball and bring it to the target at the centre.",
        action=(
            "`Box(low, high, (12,), float64)`: per leg the yaw, lift and extend position servos' "
            "controls (filtered, first-order activations), in their ctrlranges."
        ),
        rewards=(
            "upright (a linear tolerance of the torso frame's zz: 1 upright, 0 upside down) x reach (1 "
            "with the ball within the robot's workspace, linear to 0 an arena's diagonal away) x (0.5 + "
            "0.5 fetch), fetch alike of the ball's horizontal distance to the target."
        ),
        start=(
            "The robot at a uniform heading, uniform in x and y within 0.9 of the floor's half-size, at the "
            "lowest height (from 0 in 1 cm steps) at which nothing touches, every joint at 0; the ball "
            "uniform there too, 2 m up, thrown horizontally at 5 N(0, I) m/s."
        ),
    ),
)
DmcQuadrupedEscapeEnv, DmcQuadrupedEscapeVectorEnv = register_dmc(
    Escape,
    module=__name__,
    summary="dm_control's quadruped-escape: climb out of a bowl of bumpy terrain",
    doc=dmc_doc(
        Escape,
        description=(
            "Make a four-legged robot climb out of a bowl of random bumpy terrain (a height field drawn "
            "anew each episode), seen through 20 rangefinders."
        ),
        action=(
            "`Box(low, high, (12,), float64)`: per leg the yaw, lift and extend position servos' "
            "controls (filtered, first-order activations), in their ctrlranges."
        ),
        rewards=(
            "upright (a linear tolerance of the torso frame's zz: 1 within 20 degrees of upright, 0 upside "
            "down) x escape (a linear tolerance of the workspace site's distance from the origin: 1 beyond "
            "the terrain's 30 m half-size, 0 at the centre)."
        ),
        start=(
            "The terrain: a bowl times smooth random bumps (uniform in [0.15, 1] every 2 m, cubic-spline "
            "upsampled); then a uniformly random orientation at x = y = 0, at the lowest height (from 0 in "
            "1 cm steps) at which nothing touches, every joint at 0, at rest."
        ),
    ),
)
