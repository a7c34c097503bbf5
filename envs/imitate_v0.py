"""RoboDyn/Imitate-v0: the humanoid performs a human walk, retargeted from a motion capture."""

from __future__ import annotations

import numpy as np

from robodyn.envs.humanoid_v0 import JOINTS, joint_targets
from robodyn.envs.motion.clip import load_clip, resample, velocities
from robogym.actuation import Actuation
from robogym.checks import NON_NEGATIVE, POSITIVE
from robogym.declare import Obs, Param, State
from robogym.physics import asset_path
from robogym.rotations import quat_conj, quat_mul, rotation_angle, to_heading_frame
from robogym.rowwise import row_sum_sq
from robogym.task import Task
from robogym.task_envs import task_envs

CLIP = "imitate_walk.npz"  # in assets/: envs/motion/clip.py says how it was made
# DeepMimic's reward scales (Peng et al. 2018, "DeepMimic", eqs. 6-9): pose, velocity,
# end effectors (m^-2), root (m^-2)
POSE_SCALE, VELOCITY_SCALE, END_SCALE, ROOT_SCALE = 2.0, 0.1, 40.0, 10.0
LOOKAHEAD = (1, 2)  # the reference frames the observation shows, in control steps ahead
HAND_TIP = np.array([0.0, 0.0, -0.265])  # the forearm capsule's far end, forearm frame
SOLES = ("left_sole", "right_sole")
FOREARMS = ("left_forearm", "right_forearm")
BODY_SENSORS = ("up", "gyro", "velocimeter")  # the torso's, 3 each


def _sensor(*names: str):
    return lambda task: task.physics.named.sensordata[list(names)]


def _reference_names() -> tuple[str, ...]:
    per = (
        *(f"{j}_pos" for j in JOINTS),
        "base_dx",
        "base_dy",
        "base_dz",
        "base_qw",
        "base_qx",
        "base_qy",
        "base_qz",
    )
    return tuple(f"ref{k}_{n}" for k in LOOKAHEAD for n in per)


class ImitateTask(Task):
    """The reference clip, its readouts against the robot's state, reward, termination and
    reset distribution of the imitation task (the env classes below carry its documentation)."""

    model_file = "humanoid.xml"
    frame_skip = 10  # 2 ms physics steps, 0.02 s control steps (50 Hz)
    render_camera = "side"
    pose_weight = Param(0.65, "weight of reward_pose", NON_NEGATIVE)
    velocity_weight = Param(0.1, "weight of reward_velocity", NON_NEGATIVE)
    end_effector_weight = Param(0.15, "weight of reward_end_effector", NON_NEGATIVE)
    root_weight = Param(0.1, "weight of reward_root", NON_NEGATIVE)
    action_scale = Param(
        0.5, "an action of +-1 moves a joint target this far from the reference (rad)", POSITIVE
    )
    max_root_error = Param(
        0.3, "the base farther than this from the reference's ends the episode (m)", POSITIVE
    )
    max_joint_error = Param(0.5, "a mean hinge error above this ends the episode (rad)", POSITIVE)
    success_joint_error = Param(
        0.15, "success: the clip completed with the episode's joint_error at most this (rad)", POSITIVE
    )
    random_start = Param(True, "reference state initialization: start at a random frame (False: the first)")
    observation = (
        *(Obs(s, _sensor(s), ("0", "1", "2")) for s in BODY_SENSORS),
        Obs("base_height", lambda t: t.physics.named.qpos["root"][:, 2]),
        Obs("joint_angles", _sensor(*(f"{j}_pos" for j in JOINTS)), names=tuple(f"{j}_pos" for j in JOINTS)),
        Obs("joint_rates", _sensor(*(f"{j}_vel" for j in JOINTS)), names=tuple(f"{j}_vel" for j in JOINTS)),
        Obs("phase", lambda t: t.phase(), sensor=False),
        Obs("reference", lambda t: t.lookahead(), names=_reference_names(), sensor=False),
    )
    start = State("the clip frame the episode started at", dtype=np.int64, reset=None)
    error_sum = State("the episode's sums of the steps' joint_error and root_error", shape=(2,))
    completed = State("1.0 once the episode reached the clip's end without failing")

    def bind(self, physics) -> None:
        super().bind(physics)
        clip = load_clip(asset_path(CLIP), physics.named.qpos.all.shape[1])
        self.clip_source = clip.source
        self.control_dt = physics.timestep * self.frame_skip
        self.ref_qpos = resample(clip, self.control_dt)  # (K + 1, nq), the clip at 50 Hz
        self.ref_qvel = velocities(self.ref_qpos, self.control_dt, physics.scratch(1))
        self.steps = len(self.ref_qpos) - 1  # K: the clip's control steps
        self._hinge_q = physics.named.qpos.columns(JOINTS)
        self._hinge_v = physics.named.qvel.columns(JOINTS)
        ref = self.ref_qpos
        hands = physics.body_points(ref, FOREARMS, [HAND_TIP, HAND_TIP])
        self.ref_ends = np.concatenate([hands, physics.site_positions(ref, SOLES)], axis=1)  # (K + 1, 4, 3)
        self._actuation = joint_targets(physics, self.action_scale, self.ref_qpos[0, self._hinge_q])

    def end_positions(self) -> np.ndarray:
        """(B, 4, 3) the hands (the forearms' far ends) and the soles, world frame."""
        named = self.physics.named
        rot = named.xmat[list(FOREARMS)].reshape(-1, 2, 3, 3)
        hands = named.xpos[list(FOREARMS)] + rot @ HAND_TIP
        return np.concatenate([hands, named.site_xpos[list(SOLES)]], axis=1)

    # --- the clip's time --------------------------------------------------------------------------
    def frame(self) -> np.ndarray:
        """(B,) the clip frame (control step) each row is at: its start plus its steps."""
        return self.start + self.elapsed

    def phase(self) -> np.ndarray:
        """(B,) how far through the clip each row is, 0 at its first frame, 1 at its last."""
        return self.frame() / self.steps

    def lookahead(self) -> np.ndarray:
        """(B, 56) for each of the reference frames LOOKAHEAD steps ahead (the clip's last where
        it ends sooner): its 21 hinge angles, its base position less the robot's in the
        robot's heading frame (rotated by minus the base's yaw), and the rotation from the
        robot's base to the reference's (w >= 0)."""
        base, quat = self.base_pose()
        ahead = np.minimum(self.frame()[:, None] + np.asarray(LOOKAHEAD), self.steps)
        ref = self.ref_qpos[ahead]  # (B, K, nq)
        local = to_heading_frame(quat[:, None], ref[..., 0:3] - base[:, None])
        rel = quat_mul(quat_conj(quat)[:, None], ref[..., 3:7])
        rel = np.where(rel[..., :1] < 0.0, -rel, rel)
        return np.concatenate([ref[..., self._hinge_q], local, rel], axis=2).reshape(len(base), -1)

    # --- readouts ---------------------------------------------------------------------------------
    def base_pose(self) -> tuple[np.ndarray, np.ndarray]:
        """(B, 3) position and (B, 4) quaternion of the base (pelvis), views into qpos."""
        return self.physics.free_pose("root")

    def errors(self) -> dict[str, np.ndarray]:
        """The robot against the reference frame it is at: joint (B, 21) hinge angle errors
        (rad), base_angle (B,) the base's rotation error (rad), velocity (B, 21) hinge rate
        errors (rad/s), ends (B,) the summed squared errors of the end effectors relative to
        the base (m^2), root (B,) the base's distance (m)."""
        p = self.physics
        k = self.frame()
        ref, ref_v = self.ref_qpos[k], self.ref_qvel[k]
        qpos, qvel = p.named.qpos.all, p.named.qvel.all
        base, quat = self.base_pose()
        ends = self.end_positions() - base[:, None]
        ref_ends = self.ref_ends[k] - ref[:, None, 0:3]
        return {
            "joint": ref[:, self._hinge_q] - qpos[:, self._hinge_q],
            "base_angle": rotation_angle(ref[:, 3:7], quat),
            "velocity": ref_v[:, self._hinge_v] - qvel[:, self._hinge_v],
            "ends": np.sum((ref_ends - ends) ** 2, axis=(1, 2)),
            "root": np.linalg.norm(ref[:, 0:3] - base, axis=1),
        }

    # --- spaces and episodes ----------------------------------------------------------------------
    def actuation(self) -> Actuation:
        return self._actuation

    def reset_rows(self, rows, rngs) -> None:
        """Reference state initialization: the robot in the reference's pose and velocity at
        a frame drawn uniformly from frames 0 to K - 1 of the resampled clip (every frame but
        its last, K = self.steps), or its first frame with random_start=False."""
        p = self.physics
        for r, rng in zip(rows, rngs, strict=True):
            k = int(rng.integers(0, self.steps)) if self.random_start else 0
            self.start[r] = k
            p.named.qpos.all[r] = self.ref_qpos[k]
            p.named.qvel.all[r] = self.ref_qvel[k]

    def apply_action(self, action: np.ndarray) -> None:
        """frame_skip physics steps under PD targets about the next reference frame:
        q* = reference hinge angles + action_scale * action."""
        centre = self.ref_qpos[np.minimum(self.frame() + 1, self.steps)][:, self._hinge_q]
        self.step_physics(action, self.frame_skip, default=centre)

    # --- reward, termination, metrics ---------------------------------------------------------------
    def evaluate(self, action):
        """DeepMimic's reward terms (each in info), termination and the metrics, from one
        comparison with the reference."""
        e = self.errors()
        terms = {
            "reward_pose": self.pose_weight
            * np.exp(-POSE_SCALE * (row_sum_sq(e["joint"]) + e["base_angle"] ** 2)),
            "reward_velocity": self.velocity_weight * np.exp(-VELOCITY_SCALE * row_sum_sq(e["velocity"])),
            "reward_end_effector": self.end_effector_weight * np.exp(-END_SCALE * e["ends"]),
            "reward_root": self.root_weight * np.exp(-ROOT_SCALE * e["root"] ** 2),
        }
        reward = (
            terms["reward_pose"]
            + terms["reward_velocity"]
            + terms["reward_end_effector"]
            + terms["reward_root"]
        )
        joint_error = np.mean(np.abs(e["joint"]), axis=1)
        failed = (e["root"] > self.max_root_error) | (joint_error > self.max_joint_error)
        finished = self.frame() >= self.steps
        self.error_sum[:, 0] += joint_error
        self.error_sum[:, 1] += e["root"]
        self.completed[:] = finished & ~failed
        info = {k: np.array(v, dtype=np.float64) for k, v in terms.items()}
        info.update(self.metrics())
        return np.array(reward, dtype=np.float64), failed | finished, info

    def metrics(self) -> dict[str, np.ndarray]:
        """joint_error (rad) and root_error (m), the means over the episode's steps so far;
        completed; success (completed with joint_error <= success_joint_error); phase. Read
        from the task state the last step left (new arrays)."""
        n = np.maximum(self.elapsed, 1)
        joint_error = self.error_sum[:, 0] / n
        success = (self.completed > 0.0) & (joint_error <= self.success_joint_error)
        return {
            "joint_error": joint_error,
            "root_error": self.error_sum[:, 1] / n,
            "completed": self.completed.copy(),
            "success": success.astype(np.float64),
            "phase": self.phase().astype(np.float64),
        }


_DOC = """
## Description

The humanoid of RoboDyn/HumanoidPush-v0 (assets/humanoid.xml: 1.65 m, 55 kg, a free base on
the pelvis, 21 hinges, box feet) performs a human walk: 6 s of a real motion capture (the
performer steps off a box, stands, then walks 1.1 m in three steps, turning), retargeted to
the humanoid by RoboDyn's own retargeting (envs/motion/retarget.py) and put on the floor
(envs/motion/clip.py). The clip ships as assets/imitate_walk.npz (181 frames at 30 fps);
its source is holosoma-retargeting 0.1.0 (Apache-2.0), demo_data/climb/mocap_climb_seq_1,
seconds 64.5 to 70.5, made by

    robodyn data fetch
    robodyn retarget mocap_climb_seq_1 --start 64.5 --stop 70.5 --clip assets/imitate_walk.npz

The task resamples it at the control rate (50 Hz: 301 reference frames, 300 steps; linear in
positions and angles, slerp of the base's orientation; velocities by central differences).
The free base is never actuated: the robot moves itself through its joints and the floor, as
DeepMimic's characters do (Peng et al. 2018).

## Action Space

`Box(-1, 1, (21,), float64)`: joint position targets about the next reference frame
(`pd_target` about a moving pose), q*_j = reference_j + action_scale * a_j (action_scale =
0.5 rad), run by the same PD as RoboDyn/HumanoidPush-v0's every 2 ms physics step (kp = 1000
N m/rad, kd = 20 N m s/rad, arms 200 and 4, the motors' torque limits). The zero action
plays the reference through the PD alone (the `pd` baseline), which falls: a policy must add
what keeps the robot balanced.

## Observation Space

`Box(-inf, inf, (109,), float64)`:

| Num | Observation (`observation_names`) | Unit |
|-----|-----------------------------------|------|
| 0-8 | `up`, `gyro`, `velocimeter` of the torso (as RoboDyn/HumanoidPush-v0) | , rad/s, m/s |
| 9 | `base_height`: the pelvis' height | m |
| 10-30 | `<joint>_pos`: the 21 hinge angles | rad |
| 31-51 | `<joint>_vel`: the 21 hinge rates | rad/s |
| 52 | `phase`: how far through the clip, 0 at its first frame, 1 at its last | |
| 53-73 | `ref1_<joint>_pos`: the reference's 21 hinge angles one step ahead | rad |
| 74-76 | `ref1_base_dx`, `_dy`, `_dz`: its base less the robot's, robot's heading frame | m |
| 77-80 | `ref1_base_qw` ... `_qz`: the rotation from the robot's base to its (w >= 0) | |
| 81-108 | `ref2_*`: the same two steps ahead (the clip's last frame where it ends sooner) | |

## Rewards

DeepMimic's imitation reward (Peng et al. 2018, eqs. 5-9), each term in `info`, the reward
exactly their sum (at most 1 per step):

- `reward_pose` = 0.65 exp(-2 (sum_j (q^_j - q_j)^2 + theta^2)): the 21 hinge angles and the
  base's rotation angle theta against the reference
- `reward_velocity` = 0.1 exp(-0.1 sum_j (qdot^_j - qdot_j)^2): the hinge rates
- `reward_end_effector` = 0.15 exp(-40 sum_e |(p^_e - p^_base) - (p_e - p_base)|^2): the hands
  (the forearms' far ends) and the soles, relative to the base
- `reward_root` = 0.1 exp(-10 |p^_base - p_base|^2): the base's position

The weights are keywords (`pose_weight`, ...); the scales are DeepMimic's.

## Starting State

Reference state initialization (DeepMimic): the robot in the reference's pose and velocity
at a clip frame drawn uniformly from its first 300 (`random_start=False`: the first frame,
the `start` scenario). The episode's clip time starts there.

## Episode End

- Termination, failed: the base more than max_root_error = 0.3 m from the reference's, or the
  hinges' mean absolute error above max_joint_error = 0.5 rad (the pose drifted too far).
- Termination, completed: the clip's last frame reached (a frame's step compares the robot
  with that frame, so the last step is judged like any other; a failure there is a failure).
- Truncation: `max_episode_steps` = 300, the clip's steps (6 s at 50 Hz), so only an episode
  that starts at the first frame meets it, on the step that also completes the clip.

`info` reports the metrics `joint_error` (rad: the mean over the episode's steps so far of
the hinges' mean absolute error), `root_error` (m: the same for the base's distance),
`completed` (1.0 on the step that reaches the clip's end without failing), `success` (1.0
when it completed with a joint_error of at most success_joint_error = 0.15 rad: the success
rate `robodyn eval` reports) and `phase`.

## Arguments

{arguments}

## Version History

- v0: initial version.
"""


ImitateEnv, ImitateVectorEnv = task_envs(
    ImitateTask,
    "RoboDyn/Imitate-v0",
    _DOC,
    module=__name__,
    max_episode_steps=300,
    summary="the humanoid performs 6 s of a human walk retargeted from motion capture (DeepMimic reward)",
    baselines={"pd": "robodyn.envs.baselines.imitate:imitate_pd"},
    scenarios={"start": {"random_start": False}},
    # `robodyn train RoboDyn/Imitate-v0`: the settings of training/policies/imitate_ppo (its
    # run's 2M-step checkpoint; 415 s of training on two cores): a 1 s discount horizon at 50 Hz,
    # per-step Gaussian exploration of 0.068 rad of joint target, two 256-unit layers
    training={
        "ppo": {
            "timesteps": 2_000_000,
            "num_envs": 64,
            "vecnormalize": True,
            "algo_kwargs": {
                "gamma": 0.98,
                "gae_lambda": 0.95,
                "use_sde": False,
                "policy_kwargs": {"log_std_init": -2.0, "net_arch": [256, 256]},
            },
        }
    },
)
