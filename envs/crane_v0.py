"""RoboDyn/Crane-v0: carry a hanging payload 10 m and arrive with it still."""

from __future__ import annotations

import numpy as np

from robodyn.envs.tuning import Tuning
from robogym.actuation import Actuation
from robogym.checks import NON_NEGATIVE, POSITIVE
from robogym.declare import Param, State
from robogym.errors import InvalidArgumentError
from robogym.task import Task
from robogym.task_envs import task_envs

# success at the end of an episode (the task's acceptance test): the trolley within 5 cm of the
# target and the residual swing under 0.02 rad
ARRIVE_ERROR = 0.05
ARRIVE_SWING = 0.02


class CraneTask(Task):
    """Physics readouts, reward, termination and reset distribution of the crane."""

    model_file = "crane.xml"
    frame_skip = 5  # 0.01 s physics steps, 20 Hz control
    render_camera = "side"
    move_distance = Param(10.0, "the payload starts this far from the target, on -x (m)", POSITIVE)
    max_accel = Param(1.0, "the largest commanded trolley acceleration (m/s^2)", POSITIVE)
    position_weight = Param(1.0, "weight of reward_position", NON_NEGATIVE)
    arrive_weight = Param(1.0, "weight of reward_arrive", NON_NEGATIVE)
    control_weight = Param(0.05, "weight of reward_control", NON_NEGATIVE)
    jerk_weight = Param(0.05, "weight of reward_jerk", NON_NEGATIVE)
    rail_penalty = Param(50.0, "reward_rail when the trolley leaves the rail", NON_NEGATIVE)
    position_scale = Param(3.0, "length scale of reward_position (m)", POSITIVE)
    arrive_scale = Param(0.25, "length scale of reward_arrive (m)", POSITIVE)
    swing_scale = Param(0.05, "swing amplitude scale of reward_arrive (rad)", POSITIVE)
    speed_scale = Param(0.1, "trolley speed scale of reward_arrive (m/s)", POSITIVE)
    rail_limit = Param(15.0, "the rail's half length: beyond it the episode terminates (m)", POSITIVE)
    reset_noise_scale = Param(1.0, "scales the reset distribution's noise (0: the fixed start)", NON_NEGATIVE)
    # task state: the commanded acceleration of this step and of the last one
    action = State("this step's commanded acceleration (m/s^2)")
    prev_action = State("the last step's commanded acceleration (m/s^2)")

    def check(self) -> None:
        if not self.move_distance < self.rail_limit:
            raise InvalidArgumentError(
                f"move_distance must lie in (0, rail_limit={self.rail_limit:g}), got {self.move_distance!r}"
            )

    def bind(self, physics) -> None:
        super().bind(physics)
        self._actuation = Actuation.acceleration(physics, "drive", self.max_accel)
        self._cable = float(np.linalg.norm(physics.site_offset("payload")))
        self._two_g = 2.0 * physics.gravity
        # the readouts as (B,) views into the engine's sensordata, found by name once: the
        # engine writes that array in place, so the views always show the current state
        self._trolley_pos = physics.sensor("trolley_pos")[:, 0]
        self._trolley_vel = physics.sensor("trolley_vel")[:, 0]
        self._swing_angle = physics.sensor("swing_angle")[:, 0]
        self._swing_rate = physics.sensor("swing_rate")[:, 0]
        self._payload_x = physics.sensor("payload_pos")[:, 0]

    # --- readouts ((B,) views of the current state) ---------------------------------------------
    @property
    def cable_length(self) -> float:
        return self._cable

    def trolley_position(self) -> np.ndarray:
        """(B,) trolley x relative to the target (m)."""
        return self._trolley_pos

    def trolley_velocity(self) -> np.ndarray:
        return self._trolley_vel

    def swing_angle(self) -> np.ndarray:
        """(B,) cable angle from vertical (rad), positive with the payload towards +x."""
        return self._swing_angle

    def swing_rate(self) -> np.ndarray:
        return self._swing_rate

    def payload_offset(self) -> np.ndarray:
        """(B,) payload x relative to the target (m)."""
        return self._payload_x

    def swing_amplitude(self) -> np.ndarray:
        """(B,) the angle the payload would swing out to if the trolley stopped now (rad):
        energy conservation gives cos(A) = cos(theta) - L theta_dot^2 / (2 g)."""
        w = self._swing_rate
        c = np.cos(self._swing_angle)
        c -= self._cable * w * w / self._two_g
        # clip into [-1, 1] in place (what np.clip computes, without its wrapper's cost)
        np.maximum(c, -1.0, out=c)
        np.minimum(c, 1.0, out=c)
        return np.arccos(c, out=c)

    # --- the task -------------------------------------------------------------------------------
    def actuation(self) -> Actuation:
        return self._actuation

    def reset_rows(self, rows, rngs) -> None:
        p = self.physics
        s = self.reset_noise_scale
        for r, rng in zip(rows, rngs, strict=True):
            u = rng.uniform(-1.0, 1.0, size=4)
            p.set_qpos("trolley", -self.move_distance + 2.0 * s * u[0], [r])
            p.set_qpos("swing", 0.05 * s * u[1], [r])
            p.set_qvel("trolley", 0.05 * s * u[2], [r])
            p.set_qvel("swing", 0.05 * s * u[3], [r])

    def apply_action(self, action: np.ndarray) -> None:
        self.prev_action[:] = self.action
        self.action[:] = action[:, 0]
        super().apply_action(action)

    def reward(self, action):
        return self._reward_terms(np.abs(self._payload_x), self.swing_amplitude(), self.terminated())

    def _reward_terms(self, e, swing, terminated) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """(reward, terms) from the payload's distance to the target e = |payload x|, the
        swing amplitude and the termination flags (each (B,)); every term a new array."""
        # x / -s is -x / s bit for bit (division rounds symmetrically), one array operation fewer
        still = np.exp(swing / -self.swing_scale) * np.exp(np.abs(self._trolley_vel) / -self.speed_scale)
        a = self.action / self.max_accel
        da = (self.action - self.prev_action) / self.max_accel
        terms = {
            "reward_position": self.position_weight * np.exp(e / -self.position_scale),
            "reward_arrive": self.arrive_weight * np.exp(-((e / self.arrive_scale) ** 2)) * still,
            "reward_control": -self.control_weight * a * a,
            "reward_jerk": -self.jerk_weight * da * da,
            "reward_rail": -self.rail_penalty * terminated,
        }
        reward = sum(terms.values())
        return reward, terms

    def terminated(self) -> np.ndarray:
        return np.abs(self._trolley_pos) > self.rail_limit

    def metrics(self) -> dict[str, np.ndarray]:
        return self._metrics(np.abs(self._trolley_pos), np.abs(self._payload_x), self.swing_amplitude())

    @staticmethod
    def _metrics(position_error, payload_error, swing) -> dict[str, np.ndarray]:
        """The task's metrics from |trolley x|, |payload x| and the swing amplitude (each
        (B,), returned in the dict as they are)."""
        return {
            "position_error": position_error,
            "payload_error": payload_error,
            "swing_amplitude": swing,
            "success": ((position_error < ARRIVE_ERROR) & (swing < ARRIVE_SWING)).astype(np.float64),
        }

    def evaluate(self, action):
        """Reward, termination and metrics after a step, each readout and the swing
        amplitude computed once (the same values as reward, terminated and metrics give)."""
        position_error = np.abs(self._trolley_pos)
        payload_error = np.abs(self._payload_x)
        swing = self.swing_amplitude()
        terminated = position_error > self.rail_limit
        reward, info = self._reward_terms(payload_error, swing, terminated)
        info.update(self._metrics(position_error, payload_error, swing))
        return reward, terminated, info


_DOC = """
## Description

A gantry crane: a trolley runs on a straight rail and carries a payload hanging from a
3 m cable. The payload starts about `move_distance` = 10 m from the target
(the world origin) and must be brought there and arrive **still**. The trolley's drive
takes an acceleration command, as a real crane's does: `engine.control.AccelerationDrive`
computes the motor force that gives the commanded trolley acceleration from the engine's
mass matrix and bias force, and the payload swings by the full nonlinear dynamics
`theta'' = -(g/L) sin(theta) - (a/L) cos(theta)`. Accelerating forward swings the load
backward; a controller that only looks at the trolley arrives with the load swinging.

![RoboDyn/Crane-v0 at reset, from the "side" camera](../docs/crane.png) (`docs/crane.png`;
`training.video.write_still("RoboDyn/Crane-v0", "docs/crane.png")` redraws it, and `robodyn
eval RoboDyn/Crane-v0 --fixed --video` shows the episodes.)

## Action Space

`Box(-max_accel, max_accel, (1,), float64)`, default max_accel = 1 m/s^2.

| Num | Action | Min | Max | Unit |
|-----|--------|-----|-----|------|
| 0 | commanded trolley acceleration | -max_accel | max_accel | m/s^2 |

Actions outside the box are clipped into it; an action of the wrong shape or with NaN/inf
raises `robogym.InvalidActionError` and changes nothing.

## Observation Space

`Box(-inf, inf, (7,), float64)`: the model's sensor vector (assets/crane.xml).

| Num | Observation | Sensor | Unit |
|-----|-------------|--------|------|
| 0 | trolley position relative to the target | trolley_pos | m |
| 1 | cable angle from vertical, + towards +x | swing_angle | rad |
| 2 | trolley velocity | trolley_vel | m/s |
| 3 | cable angular velocity | swing_rate | rad/s |
| 4-6 | payload position relative to the target (x, y, z) | payload_pos | m |

## Rewards

With `e` the payload's horizontal distance to the target, `v` the trolley velocity, `a` and
`a_prev` this step's and the previous step's commanded acceleration, and `A` the swing
amplitude (the angle the load would swing out to if the trolley stopped:
cos A = cos(theta) - L theta_dot^2 / (2 g)):

- `reward_position` = position_weight * exp(-|e| / position_scale): shaping from afar
- `reward_arrive` = arrive_weight * exp(-(e / arrive_scale)^2) * exp(-A / swing_scale) *
  exp(-|v| / speed_scale): pays only for being at the target, still
- `reward_control` = -control_weight * (a / max_accel)^2
- `reward_jerk` = -jerk_weight * ((a - a_prev) / max_accel)^2
- `reward_rail` = -rail_penalty when the trolley leaves the rail (the episode terminates)

The reward is exactly their sum; each term is in `info`.

## Starting State

Trolley at -move_distance + U(-2, 2) * reset_noise_scale m, cable angle and both
velocities U(-0.05, 0.05) * reset_noise_scale. `reset_noise_scale=0` gives the fixed 10 m
move on which the baselines are compared (`robodyn eval --fixed`, `envs.baselines.crane`).

## Episode End

- Termination: the trolley leaves the rail, |x| > rail_limit (15 m).
- Truncation: `max_episode_steps` = 400 steps (20 s at 20 Hz; 5 physics steps of 0.01 s
  each), counted by the env itself (so its snapshots hold the count).

`info` also reports the task metrics `position_error` (|trolley x|, m), `payload_error`
(|payload x|, m), `swing_amplitude` (A, rad) and `success` (1.0 when position_error < 0.05 m
and swing_amplitude < 0.02 rad, the task's acceptance test); their values at the last step
of an episode are the final position error, the residual swing and the episode's success.

## Arguments

{arguments}

move_distance must also be below rail_limit. Episodes last 400 steps (20 s).

## Version History

- v0: initial version.
"""


CraneEnv, CraneVectorEnv = task_envs(
    CraneTask,
    "RoboDyn/Crane-v0",
    _DOC,
    module=__name__,
    max_episode_steps=400,
    summary="trolley + payload on a 3 m cable: move 10 m, arrive still (acceleration drive)",
    baselines={
        "pd": "robodyn.envs.baselines.crane:crane_pd",
        "mpc": "robodyn.envs.baselines.crane:crane_mpc",
        "mpc_sampling": "robodyn.envs.baselines.mpc:sampling_on_mpc",
    },
    scenarios={"fixed": {"reset_noise_scale": 0.0}},
    tuning={
        "pd": Tuning(
            parameter="omega",
            start=0.25,
            stop=4.0,
            points=25,
            cross=(("zeta", (1.0, 0.7)),),
            scenario="fixed",
            minimize="swing_amplitude",
            require="position_error",
            require_below=0.05,
        )
    },
    # `robodyn train RoboDyn/Crane-v0`: train()'s PPO defaults (gSDE) with VecNormalize and
    # half the epochs (1.6x the steps/s, about the same steps to success), 600k steps, under
    # 30 s of training on two cores to 100 % success (training/README.md)
    training={"ppo": {"timesteps": 600_000, "vecnormalize": True, "algo_kwargs": {"n_epochs": 5}}},
)
