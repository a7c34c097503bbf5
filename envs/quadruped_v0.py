"""RoboDyn/Quadruped-v0: a Go1-sized quadruped walks at a commanded velocity."""

from __future__ import annotations

import numpy as np

from robogym.actuation import Actuation
from robogym.checks import NON_NEGATIVE, POSITIVE, Bounds, is_real
from robogym.declare import Obs, Param, State
from robogym.errors import ArgumentTypeError, InvalidArgumentError
from robogym.randomize import legged, randomize_params
from robogym.rotations import to_heading_frame
from robogym.rowwise import row_sum_sq
from robogym.sensor_model import sensor_params
from robogym.task import Task
from robogym.task_envs import task_envs

LEGS = ("FR", "FL", "RR", "RL")  # front/rear, right/left
JOINTS = tuple(f"{leg}_{part}" for leg in LEGS for part in ("hip", "thigh", "calf"))  # = the motors
FEET = tuple(f"{leg}_foot" for leg in LEGS)  # sites at the foot spheres' centres
TRUNK = "trunk"  # the trunk's geom: its touching the floor is a fall
JOINT_NOISE = 0.1  # rad: uniform joint-angle noise about the home pose at reset, times reset_noise_scale
# the sensor noise at sensor_noise = 1 (MuJoCo Playground's Go1 joystick task: its noise
# scales, at its noise level 1): gyro (rad/s), gravity direction, joint angle (rad), joint rate (rad/s)
NOISE_GYRO, NOISE_GRAVITY, NOISE_ANGLE, NOISE_RATE = 0.2, 0.05, 0.03, 1.5
SUCCESS_VELOCITY_ERROR = 0.15  # m/s: the task's bar for success on velocity_error
# planning_reward's costs (per control step): the trunk's height off home's (1/m^2), its tilt
# (the world's up axis off the trunk's z, squared), the hips' angles off home (1/rad^2), and a
# fall (once, on the step it happens)
PLAN_HEIGHT_WEIGHT, PLAN_TILT_WEIGHT, PLAN_HIP_WEIGHT = 50.0, 50.0, 5.0
PLAN_FALL_COST = 100.0


def _check_command(name: str, command) -> tuple[float, float] | None:
    """None (drawn per episode) or a fixed (forward speed m/s, yaw rate rad/s), both finite."""
    if command is None:
        return None
    if isinstance(command, str) or not hasattr(command, "__len__") or len(command) != 2:
        raise ArgumentTypeError(f"{name} must be None or (forward speed, yaw rate), got {command!r}")
    if not all(is_real(x) for x in command):
        raise ArgumentTypeError(f"{name} must hold two real numbers (m/s, rad/s), got {command!r}")
    if not all(np.isfinite(float(x)) for x in command):
        raise InvalidArgumentError(f"{name} must be finite, got {command!r}")
    return (float(command[0]), float(command[1]))


class QuadrupedTask(Task):
    """Command, observation, reward, termination, metrics and resets of the walking task (the
    env classes below carry the task's documentation)."""

    model_file = "quadruped.xml"
    frame_skip = 10  # 2 ms physics steps, 50 Hz control (Playground's Go1: 0.004 s x 5)
    render_camera = "side"
    randomization = legged("floor", (TRUNK, *(f"{leg}_foot" for leg in LEGS)), "trunk")  # with randomize=True
    tracking_weight = Param(1.0, "weight of reward_tracking", NON_NEGATIVE)
    yaw_tracking_weight = Param(0.5, "weight of reward_yaw_tracking", NON_NEGATIVE)
    tracking_sigma = Param(0.25, "the tracking terms' kernel width ((m/s)^2, (rad/s)^2)", POSITIVE)
    vertical_velocity_weight = Param(0.5, "weight of reward_vertical_velocity", NON_NEGATIVE)
    roll_pitch_rate_weight = Param(0.05, "weight of reward_roll_pitch_rate", NON_NEGATIVE)
    orientation_weight = Param(5.0, "weight of reward_orientation", NON_NEGATIVE)
    torque_weight = Param(0.0002, "weight of reward_torque", NON_NEGATIVE)
    action_rate_weight = Param(0.01, "weight of reward_action_rate", NON_NEGATIVE)
    termination_penalty = Param(1.0, "reward_termination at a fall", NON_NEGATIVE)
    kp = Param(35.0, "the joint PD's stiffness (N m / rad)", POSITIVE)
    kd = Param(0.5, "the joint PD's damping (N m s / rad)", NON_NEGATIVE)
    action_scale = Param(0.5, "an action of +-1 moves a joint target this far from home (rad)", POSITIVE)
    max_forward_speed = Param(1.0, "commanded forward speeds are drawn in [0, this] (m/s)", NON_NEGATIVE)
    max_yaw_rate = Param(0.5, "commanded yaw rates are drawn in [-this, this] (rad/s)", NON_NEGATIVE)
    command = Param(None, "a fixed (forward speed, yaw rate) for every episode; None: drawn per episode",
                    convert=_check_command, allowed="None or two finite numbers (m/s, rad/s)")  # fmt: skip
    min_upright = Param(0.0, "the trunk's up axis z below this is a fall", Bounds(-1.0, 1.0))
    reset_noise_scale = Param(1.0, "scales the start's joint noise (0: the home pose)", NON_NEGATIVE)
    sensor_noise, sensor_noise_kind, observation_delay = sensor_params(
        "the observation noise's level: the sensor components get noise of this times "
        "Playground's 0.2 rad/s (gyro), 0.05 (gravity), 0.03 rad (angles), 1.5 rad/s (rates)"
    )
    # off in v0 so that the task table's numbers are those of the robot in assets/; at scale 2
    # the floor friction's draw U(0.4, 1) about its 0.8 reaches 0
    randomize, randomize_scale = randomize_params(2.0)
    # the observation: what the trunk's IMU and the joint encoders measure (with the sensor
    # model's noise, at sensor_noise = 1 Playground's scales, and delay), then the last action
    # and the command, seen as they are
    observation = (
        Obs("gyro", lambda t: t.gyro(), tuple("xyz"), noise=NOISE_GYRO),
        Obs("gravity", lambda t: -t.up(), tuple("xyz"), noise=NOISE_GRAVITY),
        Obs("q", lambda t: t.joint_angles() - t.home, JOINTS, noise=NOISE_ANGLE),
        Obs("qdot", lambda t: t.joint_rates(), JOINTS, noise=NOISE_RATE),
        Obs("last_action", lambda t: t.action, JOINTS, sensor=False),
        Obs("command", lambda t: t.commands, ("vx", "vy", "yaw_rate"), sensor=False),
    )
    # task state
    commands = State("the episode's command (vx, vy, yaw rate)", shape=(3,), reset=None)
    action = State("the last action", shape=(len(JOINTS),))
    prev_action = State("the action before it", shape=(len(JOINTS),))
    sq_error_sum = State("sum over the episode's steps of |v_xy - command_xy|^2")
    fallen = State("the robot has fallen this episode", dtype=bool, reset=False)

    def bind(self, physics) -> None:
        super().bind(physics)
        home = physics.keyframe("home")
        self._home_qpos = home
        self._joint_qpos = physics.named.qpos.columns(JOINTS)  # the joints' entries of a qpos vector
        self.home = home[self._joint_qpos]  # (12,) the home pose's joint angles, the actions' origin
        self._actuation = Actuation.pd_target(
            physics, JOINTS, kp=self.kp, kd=self.kd, scale=self.action_scale, default=self.home
        )
        self._joint_range = physics.named_model.jnt_range[JOINTS]  # (12, 2)
        self._gyro = physics.named.sensordata["trunk_gyro"]  # (B, 3) trunk frame
        self._up = physics.named.sensordata["up"]  # (B, 3) the world's up axis in the trunk frame
        self._trunk_pos, self._trunk_quat = physics.free_pose("root")
        self._trunk_linvel = physics.free_velocity("root")[0]  # (B, 3) world frame
        self._home_foot_z = self._lowest_foot(home)

    # --- readouts (the current state, (B, ...)) -----------------------------------------------------
    def gyro(self) -> np.ndarray:
        """(B, 3) the trunk's angular velocity in its own frame (rad/s)."""
        return self._gyro

    def up(self) -> np.ndarray:
        """(B, 3) the world's up axis in the trunk frame (minus the gravity direction); its z
        is 1 standing upright and negative upside down."""
        return self._up

    def joint_angles(self) -> np.ndarray:
        """(B, 12) the joints' angles (rad), in JOINTS' order (their jointpos sensors)."""
        return self.physics.named.sensordata[[f"{j}_pos" for j in JOINTS]]

    def joint_rates(self) -> np.ndarray:
        """(B, 12) the joints' rates (rad/s), in JOINTS' order (their jointvel sensors)."""
        return self.physics.named.sensordata[[f"{j}_vel" for j in JOINTS]]

    def heading_velocity(self) -> np.ndarray:
        """(B, 2) the trunk's horizontal velocity in its heading frame (the world frame turned
        by the trunk's yaw): (forward, leftward), m/s."""
        return to_heading_frame(self._trunk_quat, self._trunk_linvel[:, :2])

    def vertical_velocity(self) -> np.ndarray:
        return self._trunk_linvel[:, 2]

    def height(self) -> np.ndarray:
        """(B,) the trunk's height above the floor (its frame's origin, m)."""
        return self._trunk_pos[:, 2]

    def joint_torque(self) -> np.ndarray:
        """(B, 12) the motors' torques at the last physics step (N m, within their limits)."""
        return self.physics.named.actuator_force[JOINTS]  # the motors are named as their joints

    def trunk_contact(self) -> np.ndarray:
        """(B,) bool: the trunk touches the floor."""
        return self.physics.touching(TRUNK)

    def down(self) -> np.ndarray:
        """(B,) bool: the trunk has flipped (up z < min_upright) or touches the floor."""
        return (self._up[:, 2] < self.min_upright) | self.trunk_contact()

    def velocity_error(self) -> np.ndarray:
        """(B,) RMS over the episode's steps so far of |v_xy - command_xy| (m/s), v_xy the
        heading-frame horizontal velocity after each step; 0 before the first step."""
        return np.sqrt(self.sq_error_sum / np.maximum(self.elapsed, 1))

    # --- the task ---------------------------------------------------------------------------------
    def actuation(self) -> Actuation:
        return self._actuation

    def _lowest_foot(self, qpos: np.ndarray) -> float:
        """The lowest foot centre's height (m) with the robot at `qpos` (the env's rows are
        left alone)."""
        return float(self.physics.site_positions(qpos, FEET)[0, :, 2].min())

    def reset_rows(self, rows, rngs) -> None:
        p = self.physics
        for r, rng in zip(rows, rngs, strict=True):
            if self.command is None:
                vx = rng.uniform(0.0, self.max_forward_speed)
                yaw_rate = rng.uniform(-self.max_yaw_rate, self.max_yaw_rate)
            else:
                vx, yaw_rate = self.command
            self.commands[r] = (vx, 0.0, yaw_rate)
            qpos = self._home_qpos.copy()
            noise = self.reset_noise_scale * JOINT_NOISE * rng.uniform(-1.0, 1.0, size=12)
            qpos[self._joint_qpos] = np.clip(self.home + noise, *self._joint_range.T)
            if self.reset_noise_scale > 0.0:  # the lowest foot where it is at home: on the floor
                qpos[2] += self._home_foot_z - self._lowest_foot(qpos)
            p.named.qpos.all[r] = qpos
            p.named.qvel.all[r] = 0.0

    def planning_reward(self, reward: np.ndarray) -> np.ndarray:
        """The reward less the costs a short plan needs, which the reward leaves out or weighs
        lightly (MuJoCo MPC's quadruped cost holds a body height, an upright trunk and a
        posture the same way):

            reward - PLAN_HEIGHT_WEIGHT (z - z_home)^2 - PLAN_TILT_WEIGHT (u_x^2 + u_y^2)
                   - PLAN_HIP_WEIGHT sum_legs (q_hip - q_hip,home)^2 - PLAN_FALL_COST [fell]

        z the trunk's height, u the world's up axis in the trunk frame. Without the height term
        a plan that looks a fraction of a second ahead walks lower and lower until the trunk
        touches the floor; without the tilt and hip terms plans that pitch the trunk or splay
        the hips score as well as level ones until, past the horizon, the robot falls. Without
        the fall cost a plan that falls stops paying its costs there (a candidate earns
        nothing after its episode ends), so where every plan pays more in costs than it
        earns, falling early scores best."""
        dz = self.height() - self._home_qpos[2]
        u = self.up()
        hips = self.joint_angles()[:, 0::3] - self._home_qpos[7::3]
        cost = PLAN_HEIGHT_WEIGHT * dz * dz + PLAN_TILT_WEIGHT * (u[:, 0] ** 2 + u[:, 1] ** 2)
        cost = cost + PLAN_HIP_WEIGHT * np.sum(hips * hips, axis=1)
        return reward - cost - PLAN_FALL_COST * self.fallen

    def apply_action(self, action) -> None:
        """The observation shown this step enters the sensor model's delay line, the PD runs
        frame_skip physics steps towards home + action_scale * action, and the step's velocity
        error and fall are recorded."""
        self.prev_action[:] = self.action
        self.action[:] = action
        super().apply_action(action)
        dv = self.heading_velocity() - self.commands[:, :2]
        self.sq_error_sum += row_sum_sq(dv)
        self.fallen |= self.down()

    def reward(self, action):
        return self._terms()

    def terminated(self) -> np.ndarray:
        return self.fallen.copy()

    def metrics(self) -> dict[str, np.ndarray]:
        error = self.velocity_error()
        return {
            "velocity_error": error,
            "fallen": self.fallen.astype(np.float64),
            "success": (~self.fallen & (error < SUCCESS_VELOCITY_ERROR)).astype(np.float64),
        }

    def _terms(self) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        c = self.commands
        dv = self.heading_velocity() - c[:, :2]
        dyaw = self._gyro[:, 2] - c[:, 2]
        vz = self.vertical_velocity()
        w_xy, up_xy = self._gyro[:, :2], self._up[:, :2]
        tau = self.joint_torque()
        da = self.action - self.prev_action
        terms = {
            "reward_tracking": self.tracking_weight * np.exp(-row_sum_sq(dv) / self.tracking_sigma),
            "reward_yaw_tracking": self.yaw_tracking_weight * np.exp(-dyaw * dyaw / self.tracking_sigma),
            "reward_vertical_velocity": -self.vertical_velocity_weight * vz * vz,
            "reward_roll_pitch_rate": -self.roll_pitch_rate_weight * row_sum_sq(w_xy),
            "reward_orientation": -self.orientation_weight * row_sum_sq(up_xy),
            "reward_torque": -self.torque_weight * row_sum_sq(tau),
            "reward_action_rate": -self.action_rate_weight * row_sum_sq(da),
            "reward_termination": -self.termination_penalty * self.fallen,
        }
        return sum(terms.values()), terms

    def evaluate(self, action):
        reward, terms = self._terms()
        info = dict(terms)
        info.update(self.metrics())
        return reward, self.fallen.copy(), info


_DOC = """
## Description

A Go1-sized quadruped (assets/quadruped.xml: 12.7 kg, a 5.2 kg trunk on a free joint, three
torque-limited hinges per leg: hip abduction, hip, knee) walks on a flat floor at a velocity
commanded per episode: a forward speed and a yaw rate, drawn at reset. The task follows MuJoCo
Playground's Go1 joystick task: its PD gains, action scale, reward
terms and weights, noise scales and fall condition, with the differences stated below.

## Action Space

`Box(-1, 1, (12,), float64)`: joint position targets about the home pose, in the motor order
FR, FL, RR, RL x hip, thigh, calf. A `pd_target` actuation (robogym.actuation): at every
2 ms physics step each joint's motor gives

    tau = clamp(kp (home + action_scale * a - q) - kd qdot, +-tau_max)

with kp = 35 N m/rad, kd = 0.5 N m s/rad, action_scale = 0.5 rad (Playground's Go1), clamped
to the motors' limits (23.7 N m at hip and thigh, 35.55 N m at the knee). The free base is
never actuated. The zero action holds the home pose.

## Observation Space

`Box(-inf, inf, (45,), float64)` (`task.observation_names()` names every component):

| Num | Observation | Name | Unit |
|-----|-------------|------|------|
| 0-2 | trunk angular velocity in the trunk frame (sensor `trunk_gyro`) | gyro[x..z] | rad/s |
| 3-5 | gravity direction in the trunk frame: -(sensor `up`), (0, 0, -1) upright | gravity[x..z] | |
| 6-17 | joint angles minus the home pose's (sensors `<joint>_pos`) | q[joint] | rad |
| 18-29 | joint rates (sensors `<joint>_vel`) | qdot[joint] | rad/s |
| 30-41 | the last action (0 after a reset) | last_action[joint] | |
| 42-44 | the command: forward speed, lateral speed (always 0 in v0), yaw rate | command[...] | m/s, rad/s |

Sensor `up` is the world's z axis in the trunk frame (framezaxis of the world, reference the
site `imu`). Components 0-29 are the model's sensor readings; the last action and the command are not
physics: they are appended to the sensor readings, as Playground does, and see no sensor
noise and no delay. Playground's Go1 observation also has the trunk's linear velocity; this
one does not (a real robot has no such sensor).

## Rewards

With `v` the trunk's horizontal velocity in its heading frame (the world frame turned by the
trunk's yaw), `c` the command, `w` the gyro, `u` the world's up axis in the trunk frame,
`tau` the motors' torques at the step's last physics step, `a` the action and `a'` the one
before:

- `reward_tracking` = tracking_weight * exp(-|v - (c_vx, c_vy)|^2 / tracking_sigma)
- `reward_yaw_tracking` = yaw_tracking_weight * exp(-(w_z - c_yaw)^2 / tracking_sigma)
- `reward_vertical_velocity` = -vertical_velocity_weight * v_z^2  (v_z in the world frame)
- `reward_roll_pitch_rate` = -roll_pitch_rate_weight * (w_x^2 + w_y^2)
- `reward_orientation` = -orientation_weight * (u_x^2 + u_y^2)  (0 upright)
- `reward_torque` = -torque_weight * |tau|^2
- `reward_action_rate` = -action_rate_weight * |a - a'|^2
- `reward_termination` = -termination_penalty at a fall

(the weights' defaults are Playground's: the Arguments table)

The reward is exactly their sum; each term is in `info`. Playground's weights, its other
shaping terms (feet air time, clearance, slip, pose, joint limits, energy) left out;
Playground scales the sum by the control step and clips it at 0, this task does neither (so
that the reward is the sum of its terms).

## Starting State

The home keyframe (standing, hips 0, thighs 0.9, knees -1.8 rad) with uniform joint noise of
+-0.1 rad * reset_noise_scale (clipped to the joint ranges), the trunk upright at rest and
raised or lowered so that its lowest foot is as high as at home (on the floor). The command
(vx, 0, yaw rate) is drawn from the episode's generator: vx uniform in [0, max_forward_speed]
= [0, 1] m/s, yaw rate uniform in [-max_yaw_rate, max_yaw_rate] = [-0.5, 0.5] rad/s; or fixed by
the `command` keyword, (vx, yaw rate). The `fixed` scenario: no joint noise, command (0.5, 0):
0.5 m/s straight ahead; the `stand` scenario: no joint noise, command (0, 0).

## Episode End

- Termination (a fall): the trunk flips (the up axis's z in the trunk frame below
  min_upright = 0, Playground's condition) or the trunk touches the floor, at the end of a
  control step.
- Truncation: `max_episode_steps` = 1000 steps (20 s at 50 Hz; 10 physics steps of 2 ms).

`info` reports the metrics `velocity_error` (the RMS over the episode's steps so far of
|v - (c_vx, c_vy)|, the horizontal velocity error against the command, m/s), `fallen` (1.0
after a fall) and `success` (1.0 when not fallen and velocity_error < 0.15 m/s).

## Arguments

{arguments}

The sensor model (robogym.SensorModel: noise and delay, seeded per episode) is part of the
snapshot. With `randomize=True` each episode is a robot drawn as MuJoCo Playground draws its
Go1 and G1 (robogym.randomize.legged): contact friction U(0.4, 1.0), link masses x U(0.9,
1.1), trunk mass + U(-1, 1) kg and centre of mass + U(-0.05, 0.05) m, armature x U(1.0,
1.05), joint damping x U(0.9, 1.1), drawn from the episode's generator after its other draws
and held in the physics and its snapshot; off by default, so that the task table's numbers
are those of the robot in assets/. Episodes last 1,000 steps (20 s).

## Version History

- v0: initial version.
"""


QuadrupedEnv, QuadrupedVectorEnv = task_envs(
    QuadrupedTask,
    "RoboDyn/Quadruped-v0",
    _DOC,
    module=__name__,
    max_episode_steps=1000,
    summary="Go1-sized quadruped on a floor: walk at a commanded forward speed and yaw rate (pd_target)",
    baselines={
        "pd": "robodyn.envs.baselines.quadruped:quadruped_pd",
        "mpc": "robodyn.envs.baselines.quadruped:quadruped_mpc",
    },
    scenarios={
        "fixed": {"reset_noise_scale": 0.0, "command": (0.5, 0.0)},
        "stand": {"reset_noise_scale": 0.0, "command": (0.0, 0.0)},
    },
    # `robodyn train RoboDyn/Quadruped-v0`: 1.2M steps, about 3.5 minutes on two cores to the
    # task's bar. Against the general defaults (gamma 0.995, 128-step rollouts, 3e-4) a shorter
    # discount, 32-step rollouts and twice the learning rate reached it in 0.6x the steps at
    # the same rate (training/README.md, "Time to a trained policy").
    training={
        "ppo": {
            "timesteps": 1_200_000,
            "num_envs": 64,
            "vecnormalize": True,
            "algo_kwargs": {
                "n_steps": 32,
                "batch_size": 1024,
                "n_epochs": 10,
                "gamma": 0.99,
                "learning_rate": 6e-4,
                "use_sde": False,
                "policy_kwargs": {"log_std_init": -1.0},
            },
        }
    },
)
