"""RoboDyn/Tracking-v0: a five-segment arm follows a target moving round a tilted circle."""

from __future__ import annotations

import math

import numpy as np

from robodyn.envs.tuning import Tuning
from robogym.actuation import Actuation
from robogym.checks import NON_NEGATIVE, POSITIVE, Bounds
from robogym.declare import Obs, Param, State
from robogym.errors import InvalidArgumentError
from robogym.rotations import quat_from_axis_angle, quat_mul, quat_rotate
from robogym.rowwise import row_mean_sq, row_norm
from robogym.task import Task
from robogym.task_envs import task_envs

JOINTS = ("yaw", "shoulder", "elbow", "wrist_pitch", "wrist_roll")  # the motors' joints, in order
HAND = "hand"  # the body whose frame is the tool point (site "grip") and must match the target
TARGET = "target"  # the mocap body the task moves
CENTER = np.array([1.1, 0.0, 0.6])  # centre of the circle (m, world; the arm's base is the origin)
APPROACH_PITCH = 0.5  # rad: the approach axis (the hand's x) points away from the base, this far down
TWIST = 0.5  # the hand rolls about its approach axis by TWIST sin(phase) (rad)
IK_SEED = (0.0, 0.5, -1.2, 0.2, 0.0)  # the elbow-up guess an episode's first reference is solved from
PREVIEW = 0.3  # s: how far ahead the task keeps the joint reference (MPC's horizon)
OBS_PREVIEW = (0.1, 0.2, 0.3)  # s ahead: the target poses and joint references in the observation
REACH_MARGIN = 0.05  # m: the circle must stay this far inside the arm's reach (and off the yaw axis)
JOINT_NOISE = 0.05  # rad: joint-angle noise at reset, times reset_noise_scale


_AHEAD = ["", *(f"+{t:g}s" for t in OBS_PREVIEW)]
_PREVIEW_NAMES = {
    "target": tuple(
        name
        for a in _AHEAD
        for name in [f"target_pos{a}[{c}]" for c in "xyz"] + [f"target_quat{a}[{c}]" for c in "wxyz"]
    ),
    "q_ref": tuple(f"q_ref{a}[{j}]" for a in _AHEAD for j in JOINTS),
}


class TrackingTask(Task):
    """The target's motion, its joint-space reference (IK), reward, metrics and resets."""

    model_file = "tracking_arm.xml"
    frame_skip = 5  # 2 ms physics steps, 100 Hz control
    render_camera = "side"
    speed = Param(1.0, "the target's speed along the circle (m/s)", POSITIVE)
    tilt = Param(
        0.5, "the circle's plane, tilted from the vertical about y (rad)", Bounds(-math.pi / 2, math.pi / 2)
    )
    radius = Param(0.25, "the circle's radius (m)", POSITIVE)
    tracking_weight = Param(1.0, "weight of reward_tracking", NON_NEGATIVE)
    control_weight = Param(0.05, "weight of reward_control", NON_NEGATIVE)
    tracking_scale = Param(0.1, "joint-space error scale of reward_tracking (rad)", POSITIVE)
    max_joint_speed = Param(30.0, "a joint faster than this ends the episode (rad/s)", POSITIVE)
    reset_noise_scale = Param(
        1.0, "scales the start's phase and joint noise (0: the fixed start)", NON_NEGATIVE
    )
    # the observation: joint angles and rates, the target's pose now and OBS_PREVIEW ahead, the
    # joint reference now and OBS_PREVIEW ahead
    observation = (
        Obs("q", lambda t: t.joint_positions(), JOINTS),
        Obs("qdot", lambda t: t.joint_velocities(), JOINTS),
        Obs("target", lambda t: t.target_preview(), names=_PREVIEW_NAMES["target"]),
        Obs("q_ref", lambda t: t.reference_preview(), names=_PREVIEW_NAMES["q_ref"]),
    )
    # task state: the target's phase now; the joint reference q*(t + (j - 1) dt) at knots
    # j = 0 .. horizon + 2 (one behind, now, and the preview, so central differences give q*'
    # at every knot up to the horizon); the running sum of squared errors
    phase = State("the target's phase on the circle (rad)")
    q_ref = State("the joint reference at the knots", shape=lambda task: (task.horizon + 3, len(JOINTS)))
    sq_error_sum = State("sum over the episode's steps of the squared joint-space RMS error")

    def bind(self, physics) -> None:
        super().bind(physics)
        self._check_reach(physics)  # the circle against the arm's lengths: needs the model
        self._actuation = Actuation.ctrl(physics, JOINTS)
        self._dt = physics.timestep * self.frame_skip
        self._rate = self.speed / self.radius  # phase rate (rad/s)
        self._horizon = int(round(PREVIEW / self._dt))  # knots of the preview
        self._obs_knots = [int(round(t / self._dt)) for t in OBS_PREVIEW]
        # readouts: the jointpos and jointvel sensors of the joints, in JOINTS' order
        self._angle_sensors = [f"{j}_pos" for j in JOINTS]
        self._rate_sensors = [f"{j}_vel" for j in JOINTS]

    def _check_reach(self, physics) -> None:
        """The circle must keep the wrist inside the shoulder-elbow reach with REACH_MARGIN to
        spare (the gripper's approach fixes where the wrist is), and off the yaw axis."""
        names = ("column", "upper_arm", "forearm", "wrist", "gripper", HAND)
        offset = {n: physics.named_model.body_pos[n] for n in names}
        shoulder_z = float(offset["column"][2] + offset["upper_arm"][2])
        upper, fore = float(np.linalg.norm(offset["forearm"])), float(np.linalg.norm(offset["wrist"]))
        tool = float(np.linalg.norm(offset["gripper"]) + np.linalg.norm(offset[HAND]))
        pos, quat = self.target_pose(np.linspace(0.0, 2.0 * np.pi, 361))
        wrist = pos - tool * quat_rotate(quat, np.array([1.0, 0.0, 0.0]))
        reach = np.hypot(np.hypot(wrist[:, 0], wrist[:, 1]), wrist[:, 2] - shoulder_z)
        lo, hi = abs(upper - fore) + REACH_MARGIN, upper + fore - REACH_MARGIN
        off_axis = np.hypot(pos[:, 0], pos[:, 1]).min()
        if reach.min() < lo or reach.max() > hi or off_axis < REACH_MARGIN:
            raise InvalidArgumentError(
                f"the circle (radius={self.radius:g} m, tilt={self.tilt:g} rad, centre {CENTER.tolist()}) "
                f"leaves the arm's reach: the wrist would be {reach.min():.3f} to {reach.max():.3f} m from "
                f"the shoulder, which reaches {lo:.3f} to {hi:.3f} m with a {REACH_MARGIN} m margin"
            )

    # --- the target ------------------------------------------------------------------------------
    def target_pose(self, phase) -> tuple[np.ndarray, np.ndarray]:
        """(pos (..., 3), quat (..., 4)) of the target at `phase` (...,): on the circle of centre
        CENTER and `radius` in the plane spanned by y and the vertical tilted by `tilt` about y
        (towards +x), p = c + r (cos(phase) y + sin(phase) (sin(tilt), 0, cos(tilt))), the hand
        approaching along its x axis, away from the base and APPROACH_PITCH below horizontal,
        rolled by TWIST sin(phase): R = Rz(atan2(p_y, p_x)) Ry(APPROACH_PITCH) Rx(TWIST sin(phase))."""
        phase = np.asarray(phase, dtype=np.float64)
        c, s = np.cos(phase)[..., None], np.sin(phase)[..., None]
        up = np.array([math.sin(self.tilt), 0.0, math.cos(self.tilt)])
        pos = CENTER + self.radius * (c * np.array([0.0, 1.0, 0.0]) + s * up)
        yaw = quat_from_axis_angle([0.0, 0.0, 1.0], np.arctan2(pos[..., 1], pos[..., 0]))
        pitch = quat_from_axis_angle([0.0, 1.0, 0.0], np.full(phase.shape, APPROACH_PITCH))
        roll = quat_from_axis_angle([1.0, 0.0, 0.0], TWIST * np.sin(phase))
        return pos, quat_mul(quat_mul(yaw, pitch), roll)

    def solve_reference(self, phase: np.ndarray, seed: np.ndarray) -> np.ndarray:
        """(N, 5) joint reference q* of the target at `phase` (N,): damped least-squares IK of
        the hand's pose (engine.ik, position and orientation, every joint) from `seed` (N, 5)."""
        pos, quat = self.target_pose(phase)
        return self.physics.solve_ik(HAND, pos, quat, seed, max_iter=200)

    # --- readouts ((B, ...) arrays of the current state) -------------------------------------------
    @property
    def dt(self) -> float:
        return self._dt

    @property
    def horizon(self) -> int:
        """Knots of the preview the task keeps (PREVIEW / dt)."""
        return self._horizon

    def joint_positions(self) -> np.ndarray:
        """(B, 5) joint angles (rad), in JOINTS' order (the jointpos sensors)."""
        return self.physics.named.sensordata[self._angle_sensors]

    def joint_velocities(self) -> np.ndarray:
        """(B, 5) joint rates (rad/s), in JOINTS' order (the jointvel sensors)."""
        return self.physics.named.sensordata[self._rate_sensors]

    def reference_positions(self) -> np.ndarray:
        """(B, 5) the joint reference now, q*(t) (a view)."""
        return self.q_ref[:, 1]

    def reference(self, knots: int) -> np.ndarray:
        """(B, knots + 1, 10) the reference state (q*, q*') at t, t + dt, ..., t + knots dt
        (knots <= horizon), q*' by central differences of the IK solutions."""
        if not 0 <= knots <= self._horizon:
            raise InvalidArgumentError(f"the task previews {self._horizon} knots, asked for {knots}")
        q = self.q_ref[:, 1 : knots + 2]
        v = (self.q_ref[:, 2 : knots + 3] - self.q_ref[:, : knots + 1]) / (2.0 * self._dt)
        return np.concatenate([q, v], axis=2)

    def tracking_error(self) -> np.ndarray:
        """(B,) joint-space RMS error now, sqrt(mean_j (q_j - q*_j)^2) (rad)."""
        e = self.joint_positions() - self.q_ref[:, 1]
        return np.sqrt(row_mean_sq(e))

    def hand_error(self) -> np.ndarray:
        """(B,) distance from the tool point to the target (m)."""
        pos, _ = self.target_pose(self.phase)
        return row_norm(self.physics.named.xpos[HAND] - pos)

    # --- the task -------------------------------------------------------------------------------
    def actuation(self) -> Actuation:
        return self._actuation

    def reset_rows(self, rows, rngs) -> None:
        s = self.reset_noise_scale
        draws = np.array([rng.uniform(-1.0, 1.0, size=1 + len(JOINTS)) for rng in rngs])
        phase = math.pi * s * draws[:, 0]
        q = np.zeros((len(rows), self.q_ref.shape[1], len(JOINTS)))
        seed = np.broadcast_to(np.asarray(IK_SEED, dtype=np.float64), (len(rows), len(JOINTS)))
        for j in range(q.shape[1]):  # knot j is t = (j - 1) dt, each solved from the one before
            q[:, j] = self.solve_reference(phase + (j - 1) * self._rate * self._dt, seed)
            seed = q[:, j]
        self.phase[rows] = phase
        self.q_ref[rows] = q
        named = self.physics.named
        named.qpos.all[rows] = q[:, 1] + JOINT_NOISE * s * draws[:, 1:]  # the joints are the whole state
        named.qvel.all[rows] = 0.0
        pos, quat = self.target_pose(phase)
        self.physics.set_mocap_pose(TARGET, pos, quat, rows)

    def apply_action(self, action: np.ndarray) -> None:
        """Move the target to where it will be at the end of the step, run the physics, then
        shift the joint reference one knot and solve the new last knot from the one before."""
        step = self._rate * self._dt
        pos, quat = self.target_pose(self.phase + step)
        self.physics.set_mocap_pose(TARGET, pos, quat)
        super().apply_action(action)
        self.phase += step
        self.q_ref[:, :-1] = self.q_ref[:, 1:]
        last = self.phase + (self.q_ref.shape[1] - 2) * step
        self.q_ref[:, -1] = self.solve_reference(last, self.q_ref[:, -2])
        e = self.joint_positions() - self.q_ref[:, 1]
        self.sq_error_sum += row_mean_sq(e)

    def target_preview(self) -> np.ndarray:
        """(B, 28) the target's pose (position, quaternion w, x, y, z) now and OBS_PREVIEW ahead."""
        knots = [0, *self._obs_knots]
        pos, quat = self.target_pose(self.phase[:, None] + self._rate * self._dt * np.array(knots))
        return np.concatenate([pos, quat], axis=2).reshape(len(self.phase), -1)

    def reference_preview(self) -> np.ndarray:
        """(B, 20) the joint reference now and OBS_PREVIEW ahead."""
        knots = [0, *self._obs_knots]
        return self.q_ref[:, [k + 1 for k in knots]].reshape(len(self.phase), -1)

    def reward(self, action):
        return self._reward_terms(self.tracking_error(), action)

    def _reward_terms(self, error, action) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """(reward, terms) from the joint-space RMS error now (B,) and the action (B, 5)."""
        a = np.asarray(action, dtype=np.float64)
        terms = {
            "reward_tracking": self.tracking_weight * np.exp(-((error / self.tracking_scale) ** 2)),
            "reward_control": -self.control_weight * row_mean_sq(a),
        }
        return sum(terms.values()), terms

    def terminated(self) -> np.ndarray:
        """(B,) a joint turns faster than max_joint_speed: the arm is out of control (a safety
        stop; it also keeps a flailing arm far from the speeds at which 2 ms Euler steps of the
        spinning chain blow up, over 100 rad/s)."""
        return np.max(np.abs(self.joint_velocities()), axis=1) > self.max_joint_speed

    def metrics(self) -> dict[str, np.ndarray]:
        return self._metrics(self.tracking_error(), self.terminated())

    def _metrics(self, error, overspeed) -> dict[str, np.ndarray]:
        """rms_error over the episode's steps so far (at reset: the error now), the error now,
        the tool point's distance to the target, and whether the episode ended on overspeed;
        every array new."""
        started = self.elapsed > 0
        rms = np.where(started, np.sqrt(self.sq_error_sum / np.where(started, self.elapsed, 1)), error)
        return {
            "rms_error": rms,
            "tracking_error": error.copy(),
            "hand_error": self.hand_error(),
            "overspeed": overspeed.astype(np.float64),
        }

    def evaluate(self, action):
        error = self.tracking_error()
        terminated = self.terminated()
        reward, info = self._reward_terms(error, action)
        info.update(self._metrics(error, terminated))
        return reward, terminated, info


_DOC = """
## Description

A five-segment arm (`assets/tracking_arm.xml`: 1.9 m from its base to the tool point, a 6 kg
gripper, 37.5 kg in all, five hinges each driven by a 400 N m torque motor) must follow a target
(the mocap body "target") that moves round a tilted circle at `speed` m/s: centre (1.1, 0, 0.6)
m, radius `radius`, its plane the vertical plane facing the arm tilted by `tilt` about the y axis.
The target is a pose: the gripper must reach its centre approaching along its x axis, away from
the base and 0.5 rad below horizontal, rolled by 0.5 sin(phase) about that axis.

The task is scored in joint space. The reference at every instant, q*(t), is the damped
least-squares IK solution (`engine.ik`, position and orientation) of the target's pose, each
knot solved from the one before (the first of an episode from an elbow-up guess). The task
keeps q* for the next 0.3 s, one knot per step: the observation shows it 0.1, 0.2 and 0.3 s
ahead, and the MPC baseline reads every knot (`task.reference(knots)`). The target moves at
once from the first step, whatever the arm does.

![RoboDyn/Tracking-v0 from the "side" camera](../docs/tracking.png) (`docs/tracking.png`;
`robodyn eval RoboDyn/Tracking-v0 --fixed --video` shows the episodes.)

## Action Space

`Box(-1, 1, (5,), float64)`: the five motors' commands; each motor's torque is 400 a N m (its
ctrlrange and forcerange are +-400 N m).

| Num | Action | Min | Max | Unit |
|-----|--------|-----|-----|------|
| 0 | yaw torque / 400 | -1 | 1 | 400 N m |
| 1 | shoulder torque / 400 | -1 | 1 | 400 N m |
| 2 | elbow torque / 400 | -1 | 1 | 400 N m |
| 3 | wrist_pitch torque / 400 | -1 | 1 | 400 N m |
| 4 | wrist_roll torque / 400 | -1 | 1 | 400 N m |

Actions outside the box are clipped into it; an action of the wrong shape or with NaN/inf
raises `robogym.InvalidActionError` and changes nothing.

## Observation Space

`Box(-inf, inf, (58,), float64)` (`task.observation_names()` names every component):

| Num | Observation | Unit |
|-----|-------------|------|
| 0-4 | joint angles q: yaw, shoulder, elbow, wrist_pitch, wrist_roll | rad |
| 5-9 | joint rates q' | rad/s |
| 10-12 | target position now (world) | m |
| 13-16 | target orientation now (w, x, y, z) | |
| 17-23 | target position and orientation 0.1 s ahead | m, |
| 24-30 | the same 0.2 s ahead | m, |
| 31-37 | the same 0.3 s ahead | m, |
| 38-42 | joint reference q* now | rad |
| 43-47 | q* 0.1 s ahead | rad |
| 48-52 | q* 0.2 s ahead | rad |
| 53-57 | q* 0.3 s ahead | rad |

## Rewards

With `e` the joint-space RMS error now, sqrt(mean_j (q_j - q*_j)^2), and `a` the action:

- `reward_tracking` = tracking_weight * exp(-(e / tracking_scale)^2)
- `reward_control` = -control_weight * mean_j a_j^2

The reward is exactly their sum; each term is in `info`.

## Starting State

The target at phase pi * reset_noise_scale * U(-1, 1) on its circle; the joints at the
reference q* there plus U(-0.05, 0.05) * reset_noise_scale rad each, at rest.
`reset_noise_scale=0` gives the fixed scenario (phase 0, the arm exactly on the reference) on
which the baselines are compared (`robodyn eval --fixed`, `envs.baselines.tracking`).

## Episode End

- Termination: a joint turns faster than `max_joint_speed` (30 rad/s; the circle needs at most
  2): the arm is out of control (a safety stop, which also keeps a flailing arm from the speeds,
  over 100 rad/s, at which 2 ms Euler steps of the spinning chain blow up). Under uniformly random
  actions almost every episode runs its full length. Nothing else fails: the arm has no joint
  ranges and touches nothing.
- Truncation: `max_episode_steps` = 400 steps (4 s at 100 Hz, 5 physics steps of 2 ms each;
  about 2.5 laps at 1 m/s), counted by the env itself (so its snapshots hold the count).

`info` also reports the task metrics `rms_error` (the joint-space RMS error over the
episode's steps so far, rad: its value at the last step is the episode's score; at reset, the
error then), `tracking_error` (e now, rad) and `hand_error` (the tool point's distance to the
target now, m) and `overspeed` (1.0 when the episode ended on the speed limit).

## Arguments

{arguments}

The circle must also stay inside the arm's reach with 5 cm to spare (the wrist, 0.5 m
behind the tool point along the approach, within 0.15 to 1.05 m of the shoulder). Episodes
last 400 steps (4 s).

## Version History

- v0: initial version.
"""


TrackingEnv, TrackingVectorEnv = task_envs(
    TrackingTask,
    "RoboDyn/Tracking-v0",
    _DOC,
    module=__name__,
    max_episode_steps=400,
    summary="5-segment 1.9 m arm, 6 kg gripper, 400 N m motors: follow a target round a tilted circle",
    baselines={
        "pd": "robodyn.envs.baselines.tracking:tracking_pd",
        "mpc": "robodyn.envs.baselines.tracking:tracking_mpc",
        "mpc_nopreview": "robodyn.envs.baselines.tracking:tracking_mpc_nopreview",
    },
    scenarios={"fixed": {"reset_noise_scale": 0.0}},
    tuning={
        "pd": Tuning(
            parameter="omega",
            start=8.0,
            stop=256.0,
            points=21,
            cross=(("zeta", (1.0, 0.7, 0.5, 0.35, 0.25, 0.15, 0.1, 0.05)),),
            scenario="fixed",
            minimize="rms_error",
            require="overspeed",
            require_below=0.5,
        )
    },
)
