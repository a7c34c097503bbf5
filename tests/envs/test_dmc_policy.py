"""The shipped PPO policy on dm_control's cartpole-swingup (training/policies/
dmc_cartpole_swingup_ppo.zip) against the numbers training/README.md and README.md give
for it, measured as `robodyn eval RoboDyn/dmc-cartpole-swingup-v0 --episodes 64
--num-envs 64` measures them (training.evaluate, deterministic actions, seeds 0..63).

- The READMEs' figure: a mean return of 723.5 over those 64 episodes. Asserted within 1 %:
  the policy runs in float32 through torch, whose kernels round differently on other CPUs,
  and a swing-up that leaves the pole a few steps earlier or later moves an episode's return
  by a few units (the 64 returns' standard error is 0.4).
- The published range it is set against: CleanRL's PPO (`ppo_continuous_action.py`, 8M
  steps, 10 seeds) reports 640.86 +- 11.44 and, in its RPO comparison, 590.21 +- 16.72 on
  `dm_control/cartpole-swingup-v0` (docs/rl-algorithms/ppo.md and rpo.md in
  github.com/vwxyzjn/cleanrl). Every one of our 64 episodes is asserted above the lower of
  the two means, and the mean above the higher.
"""

from __future__ import annotations

import json

import numpy as np

import robogym  # noqa: F401  (registers RoboDyn/ ids)
from robodyn.training.cli import SAVED_POLICIES
from robodyn.training.evaluate import evaluate
from robogym.registration import training_settings

TASK_ID = "RoboDyn/dmc-cartpole-swingup-v0"
PPO = str(SAVED_POLICIES / "dmc_cartpole_swingup_ppo.zip")
README_MEAN = 723.5  # training/README.md, README.md
CLEANRL_PPO = (590.21, 640.86)  # CleanRL's two published PPO means at 8M steps


def test_shipped_ppo_returns_the_readmes_and_the_published_range():
    res = evaluate(TASK_ID, PPO, episodes=64, num_envs=64, seed=0, record=0)
    returns = np.array([e["return"] for e in res.episodes])
    print(
        f"dmc_cartpole_swingup_ppo, 64 episodes: mean return {returns.mean():.2f} "
        f"(min {returns.min():.2f}, max {returns.max():.2f}); README {README_MEAN}, "
        f"CleanRL's PPO {CLEANRL_PPO[0]} and {CLEANRL_PPO[1]}"
    )
    assert len(returns) == 64 and all(e["length"] == 1000 for e in res.episodes)
    assert abs(returns.mean() - README_MEAN) <= 0.01 * README_MEAN
    assert returns.min() > CLEANRL_PPO[0]
    assert returns.mean() > CLEANRL_PPO[1]


def test_the_shipped_policys_settings_are_the_tasks_defaults():
    """`robodyn train RoboDyn/dmc-cartpole-swingup-v0` with nothing else trains with the
    settings the shipped policy was trained with (the task's registration declares them)."""
    meta = json.loads((SAVED_POLICIES / "dmc_cartpole_swingup_ppo.json").read_text())
    declared = training_settings(TASK_ID, "ppo")
    assert declared["num_envs"] == meta["num_envs"] and declared["timesteps"] == meta["total_timesteps"]
    assert declared["vecnormalize"] is True and meta["vecnormalize"] is not None
    assert declared["algo_kwargs"] == meta["algo_kwargs_given"]
    for key, value in declared["algo_kwargs"].items():
        assert meta["algo_kwargs"][key] == value, key
