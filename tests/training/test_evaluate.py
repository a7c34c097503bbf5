"""training.evaluate's blocks: the partition of the episodes, and that a block gives the same
episodes wherever and whenever it runs (what lets training.distributed spread the blocks over
processes), for the policies whose rows share arithmetic: an SB3 network (torch may round a
row's float32 sums differently at another place in the batch: on this project's machine the
shipped crane PPO does at a batch of 5) and the random policy (one generator for every row
before)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from robodyn.training.cli import SAVED_POLICIES
from robodyn.training.evaluate import (
    BlockResult,
    EnvLayout,
    EvaluationError,
    RandomPolicy,
    episode_blocks,
    evaluate,
    load_sb3_policy,
    make_policy,
    merge_blocks,
    model_files,
    run_block,
)

ENV_ID = "RoboDyn/Crane-v0"
CRANE_PPO = SAVED_POLICIES / "crane_ppo.zip"


def test_blocks_partition_the_episodes():
    assert episode_blocks(10, 4) == [range(0, 4), range(4, 8), range(8, 10)]
    assert episode_blocks(3, 8) == [range(0, 3)]  # n = min(num_envs, episodes)
    assert episode_blocks(8, 8) == [range(0, 8)]
    for episodes, num_envs in ((1, 1), (17, 5), (64, 64), (65, 64)):
        blocks = episode_blocks(episodes, num_envs)
        assert [k for b in blocks for k in b] == list(range(episodes))
        assert all(len(b) == min(num_envs, episodes) for b in blocks[:-1])


@pytest.mark.parametrize("spec", ["random", str(CRANE_PPO)])
def test_a_block_gives_the_same_episodes_wherever_it_runs(spec):
    """Blocks run on one env in reverse order (another history for every row and for the
    policy) give exactly evaluate's episodes and trajectories, at a batch of 5 where torch's
    rounding depends on the row."""
    kwargs = {"max_episode_steps": 60}
    ref = evaluate(ENV_ID, spec, episodes=12, num_envs=5, seed=3, env_kwargs=kwargs, record=7)
    env = gym.make_vec(ENV_ID, num_envs=5, autoreset_mode=AutoresetMode.DISABLED, **kwargs)
    label, pol = make_policy(spec, env, 3)
    parts = [run_block(env, pol, block, 3, 7) for block in reversed(episode_blocks(12, 5))]
    got = merge_blocks(ENV_ID, label, kwargs, 3, 5, _layout(ref), parts, 0.0)
    env.close()
    assert [e["seed"] for e in got.episodes] == [3 + k for k in range(12)]
    assert got.episodes == ref.episodes
    assert [t.episode for t in got.trajectories] == list(range(7))
    for a, b in zip(got.trajectories, ref.trajectories, strict=True):
        assert np.array_equal(a.obs, b.obs) and np.array_equal(a.actions, b.actions)
        assert np.array_equal(a.rewards, b.rewards)


def test_random_policy_draws_per_episode():
    """The random policy's episode k depends on seed + k alone: the same with 1, 3 or 8 rows."""
    runs = [evaluate(ENV_ID, "random", episodes=8, num_envs=n, seed=11, record=0) for n in (1, 3, 8)]
    assert runs[0].episodes == runs[1].episodes == runs[2].episodes
    assert len({e["return"] for e in runs[0].episodes}) == 8
    # outside evaluation (no episode seeds), it draws a whole batch from its own generator
    env = gym.make_vec(ENV_ID, num_envs=3)
    a, b = RandomPolicy(5).act(env, None), np.random.default_rng(5).uniform(-1.0, 1.0, size=(3, 1))
    env.close()
    assert np.array_equal(a, b)


def test_idle_and_spare_rows_are_dropped():
    """Episodes that end early idle their row until the block ends; the last block's spare rows
    run episodes past the last, and neither shows in the results."""
    kwargs = {"max_episode_steps": 30}
    res = evaluate(ENV_ID, "pd", episodes=5, num_envs=3, seed=0, env_kwargs=kwargs)
    assert [e["episode"] for e in res.episodes] == [0, 1, 2, 3, 4]
    assert [e["length"] for e in res.episodes] == [30] * 5
    with pytest.raises(ValueError, match="episode 2 came back from two blocks"):
        merge_blocks(
            ENV_ID, "pd", kwargs, 0, 3, _layout(res), [_part(res, [0, 1, 2]), _part(res, [2, 3, 4])], 0.0
        )
    with pytest.raises(ValueError, match=r"episodes \[3\] are missing"):
        merge_blocks(ENV_ID, "pd", kwargs, 0, 3, _layout(res), [_part(res, [0, 1, 2]), _part(res, [4])], 0.0)


def _part(res, ks) -> BlockResult:
    """A BlockResult holding episodes `ks` of `res`."""
    return BlockResult({k: res.episodes[k] for k in ks}, [])


def _layout(res) -> EnvLayout:
    """The names `res` carries."""
    return EnvLayout(res.obs_names, res.action_names, res.metric_names)


def test_model_files_are_what_loading_reads(tmp_path):
    files = model_files(CRANE_PPO)
    assert [p.name for p in files] == ["crane_ppo.zip", "crane_ppo.json", "crane_ppo_vecnormalize.pkl"]
    copy = tmp_path / "elsewhere"
    copy.mkdir()
    for p in files:
        (copy / p.name).write_bytes(p.read_bytes())
    assert load_sb3_policy(copy / "crane_ppo.zip").obs_normalizer is not None


def test_a_task_without_a_time_limit_needs_one():
    """dm_control's lqr ends its episodes only at rest: evaluating it without
    max_episode_steps is refused by name (it could run forever), and with one it runs."""
    with pytest.raises(EvaluationError, match="lqr_2_1-v0 has no time limit"):
        evaluate("RoboDyn/dmc-lqr-lqr_2_1-v0", "random", episodes=1, num_envs=1, record=0)
    res = evaluate(
        "RoboDyn/dmc-lqr-lqr_2_1-v0",
        "random",
        episodes=2,
        num_envs=2,
        record=0,
        env_kwargs={"max_episode_steps": 20},
    )
    assert [e["length"] for e in res.episodes] == [20, 20]
    assert all(e["truncated"] and not e["terminated"] for e in res.episodes)
