"""RoboDyn/HumanoidPush-v0: a floating-base humanoid stays standing while it is pushed."""

from __future__ import annotations

import numpy as np

from robogym.actuation import Actuation
from robogym.checks import NON_NEGATIVE, POSITIVE, Bounds
from robogym.declare import Obs, Param, State
from robogym.errors import InvalidArgumentError
from robogym.events import IntervalEvents
from robogym.randomize import legged, randomize_params
from robogym.rowwise import row_sum_sq
from robogym.sensor_model import sensor_params
from robogym.task import Task
from robogym.task_envs import task_envs

# the 21 hinges in the model's order, which is also the motors' (ctrl[i] drives qpos[7 + i])
ARM = ("shoulder_y", "shoulder_x", "elbow")
LEG = ("hip_z", "hip_x", "hip_y", "knee", "ankle_y", "ankle_x")
JOINTS = (
    "abdomen_z",
    "abdomen_y",
    "abdomen_x",
    *(f"{side}_{j}" for side in ("left", "right") for j in ARM),
    *(f"{side}_{j}" for side in ("left", "right") for j in LEG),
)
# joint PD gains (N m / rad, N m s / rad): the gains that keep assets/humanoid.xml standing
# 20 s without gravity compensation (tests/engine/test_model_humanoid.py); arms a fifth
KP_BODY, KD_BODY = 1000.0, 20.0
KP_ARM, KD_ARM = 200.0, 4.0
JOINT_NOISE = 0.05  # rad: the joint-angle noise of a start, times reset_noise_scale
VELOCITY_NOISE = 0.1  # rad/s: the joint-rate noise of a start, times reset_noise_scale
SOLE_DEPTH = 1e-4  # m: a randomized start's lowest sole corner is this far into the floor
FEET = ("left_foot", "right_foot")
# the observed sensors (assets/humanoid.xml's names), with the head's height between them
BODY_SENSORS = ("up", "gyro", "velocimeter")  # the torso's, 3 each


def joint_targets(physics, scale: float, default: np.ndarray) -> Actuation:
    """The humanoid's `pd_target` actuation of its 21 hinges (JOINTS): targets default + scale
    a, with the gains KP_BODY / KD_BODY (arms KP_ARM / KD_ARM)."""
    arm = np.array([j.split("_", 1)[-1] in ARM for j in JOINTS])
    kp, kd = np.where(arm, KP_ARM, KP_BODY), np.where(arm, KD_ARM, KD_BODY)
    return Actuation.pd_target(physics, list(JOINTS), kp=kp, kd=kd, scale=scale, default=default)


def _sensor(*names: str):
    """A readout of the named sensors, side by side: (B, n)."""
    return lambda task: task.physics.named.sensordata[list(names)]


class HumanoidTask(Task):
    """Physics readouts, pushes, reward, termination and reset distribution of the standing
    humanoid (the env classes below carry the task's documentation)."""

    model_file = "humanoid.xml"
    frame_skip = 10  # 2 ms physics steps, 0.02 s control steps (50 Hz)
    render_camera = "side"
    randomization = legged("floor", FEET, "torso")  # with randomize=True
    upright_weight = Param(1.0, "weight of reward_upright", NON_NEGATIVE)
    height_weight = Param(1.0, "weight of reward_height", NON_NEGATIVE)
    still_weight = Param(1.0, "weight of reward_still", NON_NEGATIVE)
    control_weight = Param(0.01, "weight of reward_control", NON_NEGATIVE)
    stand_height = Param(1.4, "head height that earns the whole reward_height (m)", POSITIVE)
    min_head_height = Param(1.0, "the head below this ends the episode (m)", POSITIVE)
    velocity_scale = Param(0.5, "torso speed scale of reward_still (m/s)", POSITIVE)
    action_scale = Param(0.5, "an action of +-1 moves a joint target this far from home (rad)", POSITIVE)
    push_magnitude = Param(0.3, "the pushes' horizontal velocity kick (m/s; 0: no pushes)", NON_NEGATIVE)
    push_interval = Param(4.0, "mean time between pushes (s)", POSITIVE)
    push_jitter = Param(
        0.5,
        "the gaps between pushes vary by this fraction of push_interval",
        Bounds(0.0, 1.0, high_open=True),
    )
    reset_noise_scale = Param(
        1.0, "scales the start's joint noise (0: the home keyframe at rest)", NON_NEGATIVE
    )
    sensor_noise, sensor_noise_kind, observation_delay = sensor_params(
        "the observation noise's scale, one number or one per component (52)", per_component=True
    )
    # Off in v0 so that the task table's numbers are those of the robot in assets/; beyond a
    # scale of 5/3 the floor friction's draw U(0.4, 1) about 1.0 could go negative
    randomize, randomize_scale = randomize_params(1.6)
    # the observation: the sensors in the model's order, the head's height in place of its
    # world position (the policy sees no absolute x, y), all through the sensor model
    observation = (
        *(Obs(s, _sensor(s), ("0", "1", "2")) for s in BODY_SENSORS),
        Obs("head_height", lambda t: t.head_height()),
        Obs("joint_angles", _sensor(*(f"{j}_pos" for j in JOINTS)), names=tuple(f"{j}_pos" for j in JOINTS)),
        Obs("joint_rates", _sensor(*(f"{j}_vel" for j in JOINTS)), names=tuple(f"{j}_vel" for j in JOINTS)),
    )
    # task state: the last push's kick (the push schedule and the sensor model hold their own)
    push_velocity = State("the last push's velocity kick (m/s, world)", shape=(3,))

    def check(self) -> None:
        if not self.stand_height > self.min_head_height:
            raise InvalidArgumentError(
                f"stand_height ({self.stand_height}) must be above min_head_height ({self.min_head_height})"
            )

    def bind(self, physics) -> None:
        super().bind(physics)
        self._joint_qpos = physics.named.qpos.columns(JOINTS)  # the hinges' entries of a qpos vector
        self._actuation = joint_targets(physics, self.action_scale, self.home[self._joint_qpos])
        self._range = physics.named_model.jnt_range[JOINTS]  # (21, 2)
        sensors = physics.named.sensordata
        self._up = sensors["up"]
        self._velocimeter = sensors["velocimeter"]
        self._head = sensors["head_pos"]
        self.control_dt = physics.timestep * self.frame_skip
        B = physics.batch
        self._push_schedule = IntervalEvents(B, self.push_interval, self.push_jitter, self.control_dt)
        self.hold_state("push_", self._push_schedule)

    @property
    def home(self) -> np.ndarray:
        """(nq,) the model's `home` keyframe: standing, knees bent, soles flat on the floor."""
        return self.physics.keyframe("home")

    # --- readouts ((B, ...) views or new arrays of the current state) ----------------------------
    def head_height(self) -> np.ndarray:
        """(B,) height of the head site above the floor (m); 1.514 at home."""
        return self._head[:, 2]

    def upright(self) -> np.ndarray:
        """(B,) cosine of the torso's tilt: the z component of the world's up axis in the
        torso's frame (1 upright, 0 lying, -1 upside down)."""
        return self._up[:, 2]

    def torso_velocity(self) -> np.ndarray:
        """(B, 3) the torso's linear velocity in its own frame (m/s)."""
        return self._velocimeter

    def joint_angles(self) -> np.ndarray:
        """(B, 21) the hinges' angles (rad), in the order of JOINTS."""
        return self.physics.named.qpos[JOINTS]

    def base_velocity(self) -> np.ndarray:
        """(B, 3) the pelvis' linear velocity in the world frame (m/s), a view into qvel."""
        return self.physics.free_velocity("root")[0]

    def standing(self) -> np.ndarray:
        """(B,) bool: the head is at or above min_head_height."""
        return self.head_height() >= self.min_head_height

    # --- spaces -----------------------------------------------------------------------------------
    def actuation(self) -> Actuation:
        return self._actuation

    # --- episodes ---------------------------------------------------------------------------------
    def reset_rows(self, rows, rngs) -> None:
        """Home, the hinges moved by uniform noise (JOINT_NOISE rad and VELOCITY_NOISE rad/s,
        times reset_noise_scale, kept inside their ranges), the base lowered or raised so the
        lowest sole corner is SOLE_DEPTH into the floor; with reset_noise_scale = 0 exactly
        the home keyframe at rest. Then the push schedule's seed, then the sensor noise's."""
        p = self.physics
        qpos, qvel = p.named.qpos, p.named.qvel
        s = self.reset_noise_scale
        home = self.home
        lo, hi = self._range[:, 0], self._range[:, 1]
        for r, rng in zip(rows, rngs, strict=True):
            qpos.all[r] = home
            qvel.all[r] = 0.0
            if s > 0.0:
                q = home[self._joint_qpos] + s * JOINT_NOISE * rng.uniform(-1.0, 1.0, len(JOINTS))
                qpos[JOINTS, r] = np.clip(q, lo, hi)
                qvel[JOINTS, r] = s * VELOCITY_NOISE * rng.uniform(-1.0, 1.0, len(JOINTS))
        if s > 0.0:
            p.forward(rows)
            qpos["root"][rows, 2] -= p.lowest_box_corner(FEET, rows=rows) + SOLE_DEPTH
        self._push_schedule.reset(rows, rngs)

    def hide_future(self, rows) -> None:
        """A planner's copies get no push: their schedules' next push is never due."""
        self._push_schedule.next[rows] = -1

    @property
    def pushes(self) -> np.ndarray:
        """(B,) pushes received since the reset."""
        return self._push_schedule.count

    def apply_action(self, action: np.ndarray) -> None:
        """The observation shown this step enters the delay line; a row whose push is due
        gets its kick (push_magnitude m/s added to the base's horizontal velocity, in the
        direction drawn for it); then frame_skip physics steps under the PD targets."""
        if self.push_magnitude > 0.0:
            for r, rng in self._push_schedule.fire(self.elapsed):
                angle = rng.uniform(0.0, 2.0 * np.pi)
                kick = self.push_magnitude * np.array([np.cos(angle), np.sin(angle), 0.0])
                self.base_velocity()[r] += kick
                self.push_velocity[r] = kick
        self.step_physics(action, self.frame_skip)

    # --- reward, termination, metrics ---------------------------------------------------------------
    def reward(self, action):
        """dm_control's humanoid `stand` terms, added rather than multiplied (each in info)."""
        h = self.head_height()
        v = self.torso_velocity()
        terms = {
            # dm_control: tolerance(upright, bounds=(0.9, inf), margin=1.9, linear)
            "reward_upright": self.upright_weight * np.clip((self.upright() + 1.0) / 1.9, 0.0, 1.0),
            # dm_control: tolerance(head height, bounds=(stand_height, inf), linear), here with
            # the margin reaching 0 at the termination height
            "reward_height": self.height_weight
            * np.clip((h - self.min_head_height) / (self.stand_height - self.min_head_height), 0.0, 1.0),
            "reward_still": self.still_weight * np.exp(-row_sum_sq(v) / self.velocity_scale**2),
            "reward_control": -self.control_weight * row_sum_sq(action),
        }
        reward = (
            terms["reward_upright"] + terms["reward_height"] + terms["reward_still"] + terms["reward_control"]
        )
        return reward, terms

    def terminated(self) -> np.ndarray:
        return ~self.standing()

    def metrics(self) -> dict[str, np.ndarray]:
        """success (standing), pushes (received), pushes_survived (received, less the last
        one once the robot has fallen: a push counts as survived when the robot still stands
        at the next push or at the episode's end), head_height (m)."""
        fallen = ~self.standing()
        blamed = fallen & (self.pushes > 0)
        return {
            "success": (~fallen).astype(np.float64),
            "pushes": self.pushes.astype(np.float64),
            "pushes_survived": (self.pushes - blamed).astype(np.float64),
            "head_height": self.head_height().copy(),
        }


_DOC = """
## Description

A 1.65 m, 55 kg humanoid (assets/humanoid.xml: a free base on the pelvis, 21 hinges driven by
torque motors, box feet on a floor) stands in its home pose and must stay standing for 20 s
while it is pushed: every few seconds its pelvis gets a horizontal velocity kick in a random
direction (MuJoCo Playground's G1 tasks push the same way, adding to the base's velocity).
The free base is never actuated: the robot keeps its balance through its joints alone.

## Action Space

`Box(-1, 1, (21,), float64)`: joint position targets about the home pose (`pd_target`,
MuJoCo Playground's and Isaac Lab's action for legged robots), q*_j = home_j + action_scale *
a_j (action_scale = 0.5 rad). A PD runs every 2 ms physics step, tau = clamp(kp (q* - q) -
kd qdot, the motor's torque limit), with kp = 1000 N m/rad, kd = 20 N m s/rad (arms 200 and
4), and no gravity compensation (the joint-space g(q) of a floating-base robot standing on
its feet is not the load its joints carry; tests/engine/test_model_humanoid.py). The zero
action holds the home pose.

| Num | Joint (motor) | torque limit (N m) |
|-----|---------------|--------------------|
| 0-2 | abdomen_z, abdomen_y, abdomen_x | 80, 100, 100 |
| 3-5 | left_shoulder_y, left_shoulder_x, left_elbow | 40, 40, 30 |
| 6-8 | right_shoulder_y, right_shoulder_x, right_elbow | 40, 40, 30 |
| 9-14 | left_hip_z, hip_x, hip_y, knee, ankle_y, ankle_x | 100, 120, 150, 150, 80, 50 |
| 15-20 | right_hip_z, ..., right_ankle_x (as the left) | 100, 120, 150, 150, 80, 50 |

## Observation Space

`Box(-inf, inf, (52,), float64)`: the model's sensor vector (in the order of its `<sensor>`)
less the head's horizontal position, which would tell the policy where in the world it
stands (Gymnasium's Humanoid-v5 leaves out the base's x, y; dm_control observes the head's
height only). No last action (the policy knows what it did; a frame-stacking wrapper adds it).

| Num | Observation (`observation_names`) | Unit |
|-----|-----------------------------------|------|
| 0-2 | `up[0..2]`: the world's up axis in the torso's frame, (0, 0, 1) upright (Playground: -gravity) | |
| 3-5 | `gyro[0..2]`: the torso's angular velocity, torso frame | rad/s |
| 6-8 | `velocimeter[0..2]`: the torso's linear velocity, torso frame | m/s |
| 9 | `head_height`: the head site's height above the floor | m |
| 10-30 | `<joint>_pos`: the 21 hinge angles, in the action's order | rad |
| 31-51 | `<joint>_vel`: the 21 hinge rates, in the action's order | rad/s |

With `sensor_noise` > 0 every component gets additive noise (uniform in [-s, s], or
`sensor_noise_kind="gaussian"`: normal with deviation s; one number or 52), and with
`observation_delay` = k the policy sees the observation of k control steps ago
(robogym.SensorModel, seeded per environment, carried by snapshots). Both off by default;
neither changes the physics.

## Rewards

dm_control's humanoid `stand` terms, added (not multiplied) so that each is in `info` and
the reward is exactly their sum:

- `reward_upright` = upright_weight * clip((cos(tilt) + 1) / 1.9, 0, 1): 1 within 25 degrees
  of upright (dm_control's tolerance with bounds (0.9, inf), margin 1.9)
- `reward_height` = height_weight * clip((h - min_head_height) / (stand_height -
  min_head_height), 0, 1), h the head's height: 1 above stand_height = 1.4 m (dm_control's
  stand height), 0 at the termination height
- `reward_still` = still_weight * exp(-|v|^2 / velocity_scale^2), v the torso's velocity
  (velocity_scale = 0.5 m/s): little motion
- `reward_control` = -control_weight * |a|^2 (control_weight = 0.01): small control

## Starting State

The home keyframe (standing, knees bent 0.4 rad, head at 1.514 m), every hinge moved by
uniform noise of 0.05 rad * reset_noise_scale (kept inside its range) and given a rate of up
to 0.1 rad/s * reset_noise_scale, the base raised or lowered so that the lowest sole corner
is 0.1 mm into the floor, at rest. With reset_noise_scale = 0 (the `fixed` scenario) exactly
the home keyframe.

Pushes: the k-th push comes push_interval * U(1 - push_jitter, 1 + push_jitter) after the
previous one (or the reset; default 4 s +- 50 %, so 2-6 s apart and 3-7 pushes in 20 s) and
adds push_magnitude m/s (default 0.3) to the pelvis' horizontal velocity, in a direction
uniform in [0, 2 pi), at the start of a control step. The schedule and the directions are
drawn from a generator seeded by (a seed drawn from the episode's generator at reset, k): the
seed, the next push's step, the count and the last push are task state, so a snapshot
carries the schedule and a restored episode is pushed at the same steps the same way. The
seed is drawn whatever push_magnitude is, so the start of a seeded episode does not depend
on it; push_magnitude = 0 disables pushes (the `no_push` scenario). The default 0.3 m/s
is set so that holding home (the `pd` baseline) survives about half the schedules (9-10 of
16 episodes; every one without pushes, none at 0.5 m/s): a learned policy has room to do
better.

## Episode End

- Termination: the head drops below min_head_height = 1.0 m (dm_control and Gymnasium end a
  humanoid's episode on a height too).
- Truncation: `max_episode_steps` = 1000 steps (20 s at 50 Hz; 10 physics steps of 2 ms).

`info` reports the metrics `success` (1.0 while standing: at the end of an episode, 1.0 if it
was not terminated), `pushes` (pushes received), `pushes_survived` (pushes after which the
robot still stood at the next push or at the episode's end: the pushes received, less the
last one if it fell; a fall before the first push blames none) and `head_height` (m).

## Arguments

{arguments}

With `randomize=True` each episode is a robot drawn as MuJoCo Playground draws its Go1 and
G1 (robogym.randomize.legged): contact friction U(0.4, 1.0), link masses x U(0.9, 1.1),
torso mass + U(-1, 1) kg and centre of mass + U(-0.05, 0.05) m, armature x U(1.0, 1.05),
joint damping x U(0.9, 1.1), drawn from the episode's generator after its other draws and
held in the physics and its snapshot; off by default, so that the task table's numbers are
those of the robot in assets/. stand_height must be above min_head_height. Episodes last
1,000 steps (20 s).

## Version History

- v0: initial version.
"""


# not "Humanoid": Gymnasium takes ids of one namespace and name for versions of one task, and
# RoboDyn/Humanoid-v5 is the port of Gymnasium's Humanoid-v5 (humanoid_v5.py), another task
HumanoidPushEnv, HumanoidPushVectorEnv = task_envs(
    HumanoidTask,
    "RoboDyn/HumanoidPush-v0",
    _DOC,
    module=__name__,
    max_episode_steps=1000,
    summary="1.65 m, 55 kg humanoid on a free base: stay standing 20 s under pushes (pd_target)",
    baselines={
        "pd": "robodyn.envs.baselines.humanoid:humanoid_pd",
        "mpc": "robodyn.envs.baselines.humanoid:humanoid_mpc",
    },
    scenarios={"fixed": {"reset_noise_scale": 0.0}, "no_push": {"push_magnitude": 0.0}},
    # `robodyn train RoboDyn/HumanoidPush-v0`: per-step Gaussian exploration of std exp(-3)
    # in action units (gSDE's larger perturbations of the stiff PD fell within ~70 steps),
    # 24 rollouts of 64 x 128 steps, about a minute on two cores. Its deterministic success
    # under pushes peaks there; longer runs drift down and back (training/README.md).
    training={
        "ppo": {
            "timesteps": 24 * 64 * 128,
            "num_envs": 64,
            "vecnormalize": True,
            "algo_kwargs": {"use_sde": False, "policy_kwargs": {"log_std_init": -3.0}},
        }
    },
)
