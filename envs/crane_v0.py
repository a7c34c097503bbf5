"""RoboDyn/Crane-v0: carry a hanging payload 10 m and arrive with it still (seed 000 §41)."""

from __future__ import annotations

import numpy as np

from engine.control import AccelerationDrive
from robogym.env import RoboDynEnv
from robogym.task import Actuation, Task
from robogym.vector_env import RoboDynVectorEnv


class CraneTask(Task):
    """Physics readouts, reward, termination and reset distribution of the crane."""

    model_file = "crane.xml"
    frame_skip = 5  # 0.01 s physics steps, 20 Hz control
    max_episode_steps = 400  # 20 s
    render_camera = "side"

    def __init__(
        self,
        move_distance: float = 10.0,
        max_accel: float = 1.0,
        position_weight: float = 1.0,
        still_weight: float = 1.0,
        control_weight: float = 0.05,
        position_scale: float = 3.0,
        swing_scale: float = 0.05,
        rail_limit: float = 15.0,
        reset_noise_scale: float = 1.0,
    ):
        if max_accel <= 0:
            raise ValueError(f"max_accel must be positive, got {max_accel}")
        if not 0 < move_distance < rail_limit:
            raise ValueError(f"move_distance must lie in (0, rail_limit={rail_limit}), got {move_distance}")
        self.move_distance = float(move_distance)
        self.max_accel = float(max_accel)
        self.position_weight = float(position_weight)
        self.still_weight = float(still_weight)
        self.control_weight = float(control_weight)
        self.position_scale = float(position_scale)
        self.swing_scale = float(swing_scale)
        self.rail_limit = float(rail_limit)
        self.reset_noise_scale = float(reset_noise_scale)

    def bind(self, physics) -> None:
        super().bind(physics)
        self._drive = AccelerationDrive(physics.model, physics.actuator_id("drive"))
        self._trolley_dof = physics.joint_dof("trolley")
        mj = physics.mj_model
        self._cable = float(np.linalg.norm(mj.site_pos[mj.site("payload").id]))

    # --- readouts -------------------------------------------------------------------------------
    @property
    def cable_length(self) -> float:
        return self._cable

    def trolley_position(self) -> np.ndarray:
        """(B,) trolley x relative to the target (m)."""
        return self.physics.sensor("trolley_pos")[:, 0]

    def trolley_velocity(self) -> np.ndarray:
        return self.physics.sensor("trolley_vel")[:, 0]

    def swing_angle(self) -> np.ndarray:
        """(B,) cable angle from vertical (rad), positive with the payload towards +x."""
        return self.physics.sensor("swing_angle")[:, 0]

    def swing_rate(self) -> np.ndarray:
        return self.physics.sensor("swing_rate")[:, 0]

    def payload_offset(self) -> np.ndarray:
        """(B,) payload x relative to the target (m)."""
        return self.physics.sensor("payload_pos")[:, 0]

    def swing_amplitude(self) -> np.ndarray:
        """(B,) the angle the payload would swing out to if the trolley stopped now (rad):
        energy conservation gives cos(A) = cos(theta) - L theta_dot^2 / (2 g)."""
        th, w = self.swing_angle(), self.swing_rate()
        c = np.cos(th) - self._cable * w * w / (2.0 * self.physics.gravity)
        return np.arccos(np.clip(c, -1.0, 1.0))

    # --- the task -------------------------------------------------------------------------------
    def actuation(self) -> Actuation:
        return Actuation(
            dofs=np.array([self._trolley_dof]),
            kind="acceleration",
            low=np.array([-self.max_accel]),
            high=np.array([self.max_accel]),
        )

    def reset_rows(self, rows, rngs) -> None:
        d = self.physics.data
        s = self.reset_noise_scale
        for r, rng in zip(rows, rngs, strict=True):
            u = rng.uniform(-1.0, 1.0, size=4)
            d.qpos[r] = (-self.move_distance + 2.0 * s * u[0], 0.05 * s * u[1])
            d.qvel[r] = (0.05 * s * u[2], 0.05 * s * u[3])

    def apply_action(self, action: np.ndarray) -> None:
        self._drive.step(self.physics.sim, action[:, 0], self.frame_skip)

    def reward(self, action):
        near = np.exp(-np.abs(self.payload_offset()) / self.position_scale)
        still = np.exp(-self.swing_amplitude() / self.swing_scale)
        terms = {
            "reward_position": self.position_weight * near,
            "reward_still": self.still_weight * near * still,
            "reward_control": -self.control_weight * (action[:, 0] / self.max_accel) ** 2,
        }
        reward = terms["reward_position"] + terms["reward_still"] + terms["reward_control"]
        return reward, terms

    def terminated(self) -> np.ndarray:
        return np.abs(self.trolley_position()) > self.rail_limit

    def metrics(self) -> dict[str, np.ndarray]:
        return {
            "position_error": np.abs(self.trolley_position()),
            "payload_error": np.abs(self.payload_offset()),
            "swing_amplitude": self.swing_amplitude(),
        }


_DOC = """
## Description

A gantry crane: a trolley runs on a straight rail and carries a payload hanging from a
3 m cable (seed 000 §41). The payload starts about `move_distance` = 10 m from the target
(the world origin) and must be brought there and arrive **still**. The trolley's drive
takes an acceleration command, as a real crane's does: `engine.control.AccelerationDrive`
computes the motor force that gives the commanded trolley acceleration from the engine's
mass matrix and bias force, and the payload swings by the full nonlinear dynamics
`theta'' = -(g/L) sin(theta) - (a/L) cos(theta)`. Accelerating forward swings the load
backward; a controller that only looks at the trolley arrives with the load swinging.

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

With `e` the payload's horizontal distance to the target and `A` the swing amplitude (the
angle the load would swing out to if the trolley stopped: cos A = cos(theta) -
L theta_dot^2 / (2 g)):

- `reward_position` = position_weight * exp(-|e| / position_scale)
- `reward_still` = still_weight * exp(-|e| / position_scale) * exp(-A / swing_scale):
  stillness pays only near the target
- `reward_control` = -control_weight * (a / max_accel)^2

The reward is exactly their sum; each term is in `info`.

## Starting State

Trolley at -move_distance + U(-2, 2) * reset_noise_scale m, cable angle and both
velocities U(-0.05, 0.05) * reset_noise_scale. `reset_noise_scale=0` gives the fixed 10 m
move of the seed's table.

## Episode End

- Termination: the trolley leaves the rail, |x| > rail_limit (15 m).
- Truncation: 400 steps (20 s at 20 Hz; 5 physics steps of 0.01 s each).

`info` also reports the task metrics `position_error` (|trolley x|, m), `payload_error`
(|payload x|, m) and `swing_amplitude` (A, rad); their values at the last step of an
episode are the final position error and the residual swing.

## Arguments

`gym.make("RoboDyn/Crane-v0", **kwargs)` or `gym.make_vec("RoboDyn/Crane-v0", num_envs=64,
**kwargs)`: move_distance=10.0, max_accel=1.0, position_weight=1.0, still_weight=1.0,
control_weight=0.05, position_scale=3.0, swing_scale=0.05, rail_limit=15.0,
reset_noise_scale=1.0, render_mode=None ("rgb_array"), width=640, height=480. The vector
env also takes autoreset_mode (NEXT_STEP, SAME_STEP, DISABLED) and nthread.

## Version History

- v0: initial version.
"""


class CraneEnv(RoboDynEnv):
    task_class = CraneTask


class CraneVectorEnv(RoboDynVectorEnv):
    task_class = CraneTask


CraneEnv.__doc__ = "RoboDyn/Crane-v0 as a single Gymnasium Env.\n" + _DOC
CraneVectorEnv.__doc__ = "RoboDyn/Crane-v0 as a native batched VectorEnv.\n" + _DOC
