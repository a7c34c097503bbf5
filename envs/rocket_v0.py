"""RoboDyn/Rocket-v0: land on a pad under gimballed thrust that cannot be switched off."""

from __future__ import annotations

import numpy as np

from robodyn.envs.tuning import Tuning
from robogym.actuation import Actuation
from robogym.checks import NON_NEGATIVE, POSITIVE, is_int
from robogym.declare import Obs, Param, State
from robogym.errors import InvalidArgumentError
from robogym.rowwise import row_norm, row_sum_sq
from robogym.task import Task
from robogym.task_envs import task_envs

# the four fixed starts: (x of the base relative to the pad centre, its height above the pad,
# vx, vz), in m and m/s; episode starts are drawn around them
STARTS = np.array(
    [
        [0.0, 50.0, 0.0, -8.0],
        [-15.0, 50.0, 2.0, -6.0],
        [20.0, 60.0, -2.0, -8.0],
        [30.0, 70.0, 0.0, -10.0],
    ]
)
# noise of a randomized start about its fixed start, times reset_noise_scale: x, h, vx, vz, pitch
START_NOISE = np.array([5.0, 5.0, 1.0, 1.0, 0.05])

# a landing (the task's bar for success): vertical speed at touchdown under 0.5 m/s, upright, on the pad
LAND_SPEED = 0.5
LAND_TILT = 0.2
PAD_HALF_WIDTH = 5.0
FLAME_LENGTH = 6.0  # m: the drawn flame at full thrust


def _check_start(name: str, value) -> int | None:
    """None, or the index of a fixed start (0-3)."""
    if value is None:
        return None
    if not is_int(value) or not 0 <= value < len(STARTS):
        raise InvalidArgumentError(f"{name} must be None or one of 0, 1, 2, 3 (a fixed start), got {value!r}")
    return int(value)


class RocketTask(Task):
    """Physics readouts, reward, termination and reset distribution of the lander (the
    env classes below carry the task's documentation)."""

    model_file = "rocket.xml"
    frame_skip = 5  # 0.01 s physics steps, 20 Hz control
    render_camera = "side"
    profile_weight = Param(2.0, "weight of |v - v_ref| in the shaping potential", NON_NEGATIVE)
    tilt_weight = Param(2.0, "weight of (pitch / tilt_scale)^2 in the shaping potential", NON_NEGATIVE)
    control_weight = Param(0.01, "weight of reward_control", NON_NEGATIVE)
    landing_bonus = Param(200.0, "reward_landing for a perfect touchdown", NON_NEGATIVE)
    crash_penalty = Param(100.0, "reward_crash: hull contact, tipping over, leaving the arena", NON_NEGATIVE)
    impact_weight = Param(20.0, "weight of the touchdown speed in reward_impact", NON_NEGATIVE)
    time_weight = Param(0.05, "reward_time: the cost of every step", NON_NEGATIVE)
    landing_speed_scale = Param(0.5, "touchdown speed scale of reward_landing (m/s)", POSITIVE)
    profile_accel = Param(1.0, "the descent profile's vertical deceleration (m/s^2)", POSITIVE)
    lateral_accel = Param(2.0, "the descent profile's lateral deceleration (m/s^2)", POSITIVE)
    touchdown_velocity = Param(0.1, "the descent profile's speed at the pad (m/s)", NON_NEGATIVE)
    tilt_scale = Param(0.3, "pitch scale of the shaping potential (rad)", POSITIVE)
    max_tilt = Param(1.0, "|pitch| beyond which the vehicle has tipped over (rad)", POSITIVE)
    arena_half_width = Param(80.0, "|x| beyond which the vehicle has left the arena (m)", POSITIVE)
    arena_height = Param(150.0, "height beyond which the vehicle has left the arena (m)", POSITIVE)
    reset_noise_scale = Param(
        1.0, "scales the noise about the fixed starts (0: the starts exactly)", NON_NEGATIVE
    )
    start = Param(None, "a fixed start for every episode; None: drawn per episode", convert=_check_start,
                  allowed="None, 0, 1, 2 or 3")  # fmt: skip
    # the observation: position and velocity relative to the pad, attitude, thrust, gimbal
    observation = (
        Obs("x", lambda t: t.position()[:, 0]),
        Obs("height", lambda t: t.position()[:, 1]),
        Obs("vx", lambda t: t.velocity()[:, 0]),
        Obs("vz", lambda t: t.velocity()[:, 1]),
        Obs("sin_pitch", lambda t: np.sin(t.pitch())),
        Obs("cos_pitch", lambda t: np.cos(t.pitch())),
        Obs("pitch_rate", lambda t: t.pitch_rate()),
        Obs("thrust_over_weight", lambda t: t.thrust() / t.weight),
        Obs("gimbal", lambda t: t.gimbal()),
    )
    # task state: this step's action, and what its physics steps met: a contact (touched),
    # the hull in contact, the vertical speed at the first contact; the shaping potential at
    # the step's start
    action = State("this step's action", shape=(2,))
    touched = State("the vehicle touched the ground or the pad during this step", dtype=bool, reset=False)
    hull_touched = State("the hull touched during this step", dtype=bool, reset=False)
    touch_speed = State("the vertical speed the first contact met (m/s)")
    potential_before = State("the shaping potential at the step's start")

    def bind(self, physics) -> None:
        super().bind(physics)
        self._actuation = Actuation.ctrl(physics, ["thrust", "gimbal"])
        constants = physics.named_model
        self.weight = float(constants.body_subtreemass["world"]) * physics.gravity  # W (N)
        self.thrust_range = constants.actuator_ctrlrange["thrust"].copy()  # [0.4 W, 2.0 W]
        self.gimbal_range = constants.actuator_ctrlrange["gimbal"].copy()
        self._position = physics.sensor("position")  # (B, 3) base relative to the pad top
        self._velocity = physics.sensor("velocity")
        self._pitch = physics.sensor("pitch")[:, 0]
        self._pitch_rate = physics.sensor("pitch_rate")[:, 0]
        self._thrust = physics.sensor("thrust")[:, 0]
        self._gimbal = physics.sensor("gimbal")[:, 0]
        self._flame = physics.geom_id("flame")  # the drawn flame (decorate_frame)
        flame_pos, flame_size = constants.geom_pos["flame"], constants.geom_size["flame"]
        self._flame_top = float(flame_pos[2] + flame_size[1])  # where the flame leaves the nozzle
        # slide z of the vehicle when its base is level with the pad's top
        self._height_offset = float(physics.site_offset("pad")[2] - physics.site_offset("base")[2])

    # --- readouts ((B,) views or new arrays of the current state) ----------------------------------
    def position(self) -> np.ndarray:
        """(B, 2) base (between the feet) relative to the pad top centre: (x, height) in m."""
        return self._position[:, 0::2]

    def velocity(self) -> np.ndarray:
        """(B, 2) base velocity (vx, vz) in m/s."""
        return self._velocity[:, 0::2]

    def pitch(self) -> np.ndarray:
        """(B,) attitude from upright (rad), positive with the nose towards +x."""
        return self._pitch

    def pitch_rate(self) -> np.ndarray:
        return self._pitch_rate

    def thrust(self) -> np.ndarray:
        """(B,) the engine's thrust (N): the actuator force, in [0.4 W, 2.0 W]."""
        return self._thrust

    def gimbal(self) -> np.ndarray:
        """(B,) nozzle angle (rad), positive pointing the thrust towards +x at the base."""
        return self._gimbal

    def touching(self) -> np.ndarray:
        """(B,) bool: the vehicle touches the ground or the pad (any contact)."""
        return self.physics.any_contact()

    def hull_contact(self) -> np.ndarray:
        """(B,) bool: the hull (not a foot) touches the ground or the pad."""
        return self.physics.touching("hull")

    def descent_profile(self, position: np.ndarray) -> np.ndarray:
        """(..., 2) the reference velocity at `position` (..., 2) = (x, height): on each axis
        the fastest approach from which a constant deceleration a still stops the vehicle at
        the pad, v = -sign(e) sqrt(2 a |e|), with a = lateral_accel for x and profile_accel
        for the height (smaller, so the vehicle is over the pad before it is down); the
        vertical one less touchdown_velocity, so that it arrives rather than hovers."""
        a = np.array([self.lateral_accel, self.profile_accel])
        v = -np.sign(position) * np.sqrt(2.0 * a * np.abs(position))
        v[..., 1] -= self.touchdown_velocity
        return v

    # --- the task -----------------------------------------------------------------------------
    def actuation(self) -> Actuation:
        return self._actuation

    def start_index(self, rng: np.random.Generator) -> int:
        """Which fixed start an episode begins near: the `start` keyword if given; with
        reset_noise_scale = 0 (the fixed scenario) the episode's seed mod 4, so episodes
        seeded s, s+1, s+2, s+3 run the four; otherwise drawn from the episode's generator."""
        if self.start is not None:
            return self.start
        if self.reset_noise_scale == 0.0:
            return int(rng.bit_generator.seed_seq.entropy % len(STARTS))
        return int(rng.integers(len(STARTS)))

    def decorate_frame(self, mj_model, row: int) -> None:
        """The flame's length follows the thrust: FLAME_LENGTH at 2 W, down to 0.2 of it at
        0.4 W, hanging from the nozzle's exit (the capsule's half-length and centre)."""
        fraction = float(self._thrust[row]) / float(self.thrust_range[1])
        half = 0.5 * FLAME_LENGTH * fraction
        mj_model.geom_size[self._flame, 1] = half
        mj_model.geom_pos[self._flame, 2] = self._flame_top - half

    def reset_rows(self, rows, rngs) -> None:
        p = self.physics
        s = self.reset_noise_scale
        for r, rng in zip(rows, rngs, strict=True):
            x, h, vx, vz = STARTS[self.start_index(rng)]
            noise = START_NOISE * s * rng.uniform(-1.0, 1.0, size=5)
            p.set_qpos("x", x + noise[0], [r])
            p.set_qpos("z", h + noise[1] + self._height_offset, [r])
            p.set_qpos("pitch", noise[4], [r])
            p.set_qpos("gimbal", 0.0, [r])
            p.set_qvel("x", vx + noise[2], [r])
            p.set_qvel("z", vz + noise[3], [r])
            p.set_qvel("pitch", 0.0, [r])
            p.set_qvel("gimbal", 0.0, [r])

    def potential(self) -> np.ndarray:
        """(B,) the shaping potential of the current state: -profile_weight |v - v_ref(p)|
        - tilt_weight (pitch / tilt_scale)^2 (0 on the profile, upright)."""
        p, v = self.position(), self.velocity()
        dv = v - self.descent_profile(p)
        tilt = self._pitch / self.tilt_scale
        return -self.profile_weight * row_norm(dv) - self.tilt_weight * tilt * tilt

    def apply_action(self, action: np.ndarray) -> None:
        """frame_skip physics steps under `action`, one at a time, so that the first contact
        is seen at the physics step it happens (a foot can touch and bounce off within one
        control step): touchdown, its speed and hull contact are recorded per row."""
        self.potential_before[:] = self.potential()
        self.action[:] = action
        self.touched[:] = False
        self.hull_touched[:] = False
        for _ in range(self.frame_skip):
            self.step_physics(action, 1)
            touching = self.touching()
            first = touching & ~self.touched
            # contacts found at this state have not pushed yet: the speed they meet
            self.touch_speed[first] = np.abs(self._velocity[first, 2])
            self.touched |= touching
            self.hull_touched |= self.hull_contact()

    def reward(self, action):
        return self.evaluate(action)[0], {}

    def terminated(self) -> np.ndarray:
        return self.evaluate(self.action)[1]

    def metrics(self) -> dict[str, np.ndarray]:
        return {k: v for k, v in self.evaluate(self.action)[2].items() if not k.startswith("reward_")}

    def evaluate(self, action):
        """Reward, termination and info (reward terms, then metrics) after a step."""
        p, v, pitch = self.position(), self.velocity(), self._pitch
        touching = self.touched
        crashed = self.hull_touched
        tilt = np.abs(pitch)
        pad_distance = np.abs(p[:, 0])
        # at a touchdown: the vertical speed the first contact met; else the current one
        speed = np.where(touching, self.touch_speed, np.abs(v[:, 1]))
        tipped = tilt > self.max_tilt
        outside = (np.abs(p[:, 0]) > self.arena_half_width) | (p[:, 1] > self.arena_height)
        success = (
            touching & ~crashed & (speed < LAND_SPEED) & (tilt < LAND_TILT) & (pad_distance < PAD_HALF_WIDTH)
        )
        terminated = touching | tipped | outside
        a = self.action
        terms = {
            "reward_shaping": self.potential() - self.potential_before,
            "reward_control": -self.control_weight * row_sum_sq(a),
            "reward_time": np.full(len(a), -self.time_weight),
            "reward_landing": self.landing_bonus
            * touching
            * ~crashed
            * np.exp(
                -((speed / self.landing_speed_scale) ** 2)
                - (tilt / LAND_TILT) ** 2
                - (pad_distance / PAD_HALF_WIDTH) ** 2
            ),
            "reward_impact": -self.impact_weight * touching * speed,
            "reward_crash": -self.crash_penalty * (crashed | tipped | outside),
        }
        reward = sum(terms.values())
        info = dict(terms)
        info["touchdown_speed"] = speed
        info["tilt"] = tilt
        info["pad_distance"] = pad_distance
        info["success"] = success.astype(np.float64)
        return reward, terminated, info


_DOC = """
## Description

A lander descends under one engine that cannot be switched off: its thrust stays between
0.4 and 2.0 times the vehicle's weight W. The vehicle moves in the vertical x-z plane
(slide x, slide z, hinge pitch) and steers by turning the engine's nozzle on a gimbal
(a hinge with a position servo). The thrust is a MuJoCo `motor` with a site transmission
on the nozzle, so it acts along the nozzle through the gimbal's pivot. The episode starts
near one of four fixed starts, 50-70 m above the pad and up to 30 m to its side,
descending; it ends when the vehicle touches the ground or the pad.

A vehicle that needs less deceleration than 0.4 W provides has one move left: lean over
and spend part of the thrust sideways.

## Action Space

`Box(-1, 1, (2,), float64)`, each component mapped linearly onto its actuator's ctrlrange.

| Num | Action | -1 | +1 | Unit |
|-----|--------|----|----|------|
| 0 | thrust | 0.4 W = 4,120.2 | 2.0 W = 20,601 | N |
| 1 | gimbal angle target | -0.3 | 0.3 | rad |

Actions outside the box are clipped into it, so the thrust never leaves [0.4 W, 2.0 W].

## Observation Space

`Box(-inf, inf, (9,), float64)`, computed from the model's sensors (assets/rocket.xml):

| Num | Observation | Unit |
|-----|-------------|------|
| 0 | x of the base (between the feet) relative to the pad centre | m |
| 1 | height of the base above the pad's top | m |
| 2, 3 | base velocity vx, vz | m/s |
| 4, 5 | sin and cos of the pitch (positive: nose towards +x) | |
| 6 | pitch rate | rad/s |
| 7 | thrust / W | |
| 8 | gimbal angle | rad |

## Rewards

With `v` the base velocity, `v_ref` the descent profile at the base's position, `a` the
action. The profile: on each axis `-sign(e) sqrt(2 A |e|)`, e the lateral offset (A =
lateral_accel, 2 m/s^2) or the height (A = profile_accel, 1 m/s^2, so the vehicle is over
the pad before it is down), the vertical one less touchdown_velocity (0.1 m/s, so that it
arrives rather than hovers): the fastest approach from which that deceleration still stops
the vehicle at the pad, the reference the MPC baseline plans on too.

- `reward_shaping` = Phi(s') - Phi(s), with the potential Phi = -profile_weight |v - v_ref|
  - tilt_weight (pitch / tilt_scale)^2: potential-based shaping (Ng, Harada and Russell,
  1999), which pays for moving towards the profile and upright without paying for a longer
  or a shorter episode (a per-step penalty taught hovering or tipping over on purpose)
- `reward_control` = -control_weight * |a|^2
- `reward_time` = -time_weight on every step (hovering until the episode is truncated costs
  400 time_weight; less than tipping over, so that is never worth it)
- `reward_landing` = at touchdown without the hull touching: landing_bonus *
  exp(-(touchdown_speed / landing_speed_scale)^2 - (tilt / 0.2)^2 - (pad_distance / 5)^2)
- `reward_impact` = at touchdown: -impact_weight * touchdown_speed
- `reward_crash` = -crash_penalty when the hull touches, the vehicle tips over or leaves the arena

The reward is exactly their sum; each term is in `info`.

## Starting State

One of four fixed starts (x, height, vx, vz): (0, 50, 0, -8), (-15, 50, 2, -6),
(20, 60, -2, -8), (30, 70, 0, -10) in m and m/s, upright and at rest in pitch, plus
uniform noise of (5 m, 5 m, 1 m/s, 1 m/s, 0.05 rad in pitch) * reset_noise_scale. The
start is the `start` keyword if given (0-3); otherwise drawn per episode, except with
reset_noise_scale = 0 (the `fixed` scenario), where an episode seeded s starts exactly at
fixed start s mod 4 (`robodyn eval RoboDyn/Rocket-v0 --fixed --episodes 4` runs the four).

## Episode End

- Termination: touchdown (any contact of the vehicle with the ground or the pad), tipping
  over (|pitch| > max_tilt = 1 rad), or leaving the arena (|x| > 80 m or height > 150 m).
- Truncation: `max_episode_steps` = 400 steps (20 s at 20 Hz; 5 physics steps of 0.01 s).

The physics steps of a control step run one at a time, so a touchdown is seen at the
physics step it happens, even when a foot touches and bounces off within the control step.
`info` reports the metrics `touchdown_speed` (|vz| of the base: at a touchdown, the speed
the first contact met, before any contact force acted; before it, the current one),
`tilt` (|pitch|, rad),
`pad_distance` (|x| of the base, m) and `success` (1.0 for a landing: touchdown with the
feet only, touchdown_speed < 0.5 m/s, tilt < 0.2 rad, pad_distance < 5 m).

## Arguments

{arguments}

## Version History

- v0: initial version.
"""


RocketEnv, RocketVectorEnv = task_envs(
    RocketTask,
    "RoboDyn/Rocket-v0",
    _DOC,
    module=__name__,
    max_episode_steps=400,
    summary="lander under gimballed thrust in [0.4 W, 2 W]: touch down softly on the pad (ctrl)",
    baselines={
        "pd": "robodyn.envs.baselines.rocket:rocket_pd",
        "mpc": "robodyn.envs.baselines.rocket:rocket_mpc",
        "mpc_sampling": "robodyn.envs.baselines.mpc:sampling_on_mpc",
    },
    scenarios={"fixed": {"reset_noise_scale": 0.0}},
    tuning={
        # the lateral loop's omega, on the four fixed starts: the best lands nearest the
        # pad's centre on average, among those touching down under 1 m/s on average
        "pd": Tuning(
            parameter="omega",
            start=0.05,
            stop=3.2,
            points=13,
            scenario="fixed",
            minimize="pad_distance",
            require="touchdown_speed",
            require_below=1.0,
            episodes=4,
        )
    },
)
