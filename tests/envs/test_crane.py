"""RoboDyn/Crane-v0: the shipped PPO policy (training/policies/crane_ppo.zip) against the
numbers the READMEs give for it, measured the way they were: with training.evaluate's
`evaluate`, which `robodyn eval` runs (the task's baselines, its linearization and the MPC's
bar are in tests/envs/test_baselines.py).

- README.md, "The main job": `robodyn eval RoboDyn/Crane-v0 --fixed` (its defaults: 10
  episodes on 8 envs from seed 0, the fixed 10 m move) gives crane_ppo a final position
  error of 4.8 cm (the task's bar: 5 cm), a residual swing of 2.4e-6 rad (bar 0.02 rad) and
  100 % success.
- training/README.md, "The shipped crane policy": over 64 random starts (`--episodes 64
  --num-envs 64 --seed 1000`) PPO succeeds in all, error 4.8 cm, swing 2.7e-6 rad (means).

Each number is asserted to the digits the README prints (2.4e-6 means [2.35e-6, 2.45e-6)),
and every episode must meet the task's own success bars (envs/crane_v0.py: ARRIVE_ERROR,
ARRIVE_SWING). The crane has no contacts and the runs are deterministic (the same numbers
with 1 or 2 torch threads), so a change in a printed digit means the README is out of date.
"""

from __future__ import annotations

import numpy as np

import robogym  # noqa: F401  (registers RoboDyn/ ids)
from robodyn.envs.crane_v0 import ARRIVE_ERROR, ARRIVE_SWING
from robodyn.training.cli import SAVED_POLICIES
from robodyn.training.evaluate import evaluate
from robogym import registration

TASK_ID = "RoboDyn/Crane-v0"
PPO = str(SAVED_POLICIES / "crane_ppo.zip")


def _finals(res, name: str) -> np.ndarray:
    return np.array([e["final"][name] for e in res.episodes])


def _printed(value: float, printed: float, digits: int) -> bool:
    """Whether `value` prints as `printed` with `digits` significant digits."""
    return float(f"{value:.{digits}g}") == printed


def test_shipped_ppo_on_the_fixed_move_is_the_readmes():
    """README.md's table for `robodyn eval RoboDyn/Crane-v0 --fixed`: 4.8 cm, 2.4e-6 rad, 100 %."""
    fixed = registration.entry(TASK_ID).scenarios["fixed"]
    res = evaluate(TASK_ID, PPO, episodes=10, num_envs=8, seed=0, env_kwargs=fixed, record=0)
    error, swing, success = (_finals(res, k) for k in ("position_error", "swing_amplitude", "success"))
    print(
        f"crane_ppo, fixed move, {len(res.episodes)} episodes: final position_error {error.mean():.5f} m "
        f"(max {error.max():.5f}), swing {swing.mean():.4e} rad (max {swing.max():.4e}), "
        f"success {success.mean():.0%}"
    )
    assert len(res.episodes) == 10
    assert np.all(success == 1.0)
    assert np.all(error < ARRIVE_ERROR) and np.all(swing < ARRIVE_SWING)  # the task's bars
    assert _printed(error.mean(), 0.048, 2) and _printed(error.max(), 0.048, 2)  # "4.8 cm"
    assert _printed(swing.mean(), 2.4e-6, 2) and _printed(swing.max(), 2.4e-6, 2)  # "2.4e-6 rad"


def test_shipped_ppo_on_64_random_starts_is_the_readmes():
    """training/README.md: 64 random starts seeded 1000..1063, every one a success, position
    error 4.8 cm and residual swing 2.7e-6 rad on average."""
    res = evaluate(TASK_ID, PPO, episodes=64, num_envs=64, seed=1000, record=0)
    error, swing, success = (_finals(res, k) for k in ("position_error", "swing_amplitude", "success"))
    print(
        f"crane_ppo, 64 random starts: final position_error {error.mean():.5f} m (max {error.max():.5f}), "
        f"swing {swing.mean():.4e} rad (max {swing.max():.4e}), success {int(success.sum())} of 64"
    )
    assert len(res.episodes) == 64
    assert np.all(success == 1.0)
    assert _printed(error.mean(), 0.048, 2)
    assert _printed(swing.mean(), 2.7e-6, 2)
