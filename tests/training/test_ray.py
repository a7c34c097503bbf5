"""Evaluation and training sweeps on Ray (training.distributed, training.sweep, `--ray`), on a
local Ray instance of 2 CPUs this module starts once: the distributed evaluation equals the
local one episode by episode, bit for bit (returns, metrics, trajectories, the printed table);
a worker killed in the middle of a block has that block run again by a new worker, and the
result still equals the local one; a two-seed sweep of a few thousand steps runs end to end;
without Ray the commands say how to install it."""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import sys
import threading
import time

import numpy as np
import pytest
import ray

import robodyn.training.sweep
from robodyn.training.cli import SAVED_POLICIES, main
from robodyn.training.cluster import ClusterError, _stderr_kept, check_reachable
from robodyn.training.distributed import RayEvaluator
from robodyn.training.evaluate import evaluate
from robodyn.training.sweep import train_and_evaluate

ENV_ID = "RoboDyn/Crane-v0"
CRANE_PPO = str(SAVED_POLICIES / "crane_ppo.zip")


@pytest.fixture(scope="module")
def local_ray():
    """A new local Ray instance (never another session's cluster) for this module's tests."""
    ray.init(address="local", num_cpus=2, include_dashboard=False, logging_level=logging.WARNING)
    yield ray
    ray.shutdown()


def test_eval_on_ray_equals_the_local_eval(local_ray, tmp_path, capsys):
    """`robodyn eval --ray` writes the local command's results episode by episode, bit for bit:
    10 episodes of 3 rows (4 blocks, the last one short) on 2 workers, for the PD, the random
    policy (its own randomness per episode) and the shipped PPO (a torch network)."""
    argv = ["eval", ENV_ID, "--policy", "pd", "--policy", "random", "--policy", CRANE_PPO]
    argv += ["--episodes", "10", "--num-envs", "3", "--seed", "4", "--record", "4"]
    assert main([*argv, "--out", str(tmp_path / "here")]) == 0
    here_out = capsys.readouterr().out
    assert main([*argv, "--out", str(tmp_path / "ray"), "--ray"]) == 0
    ray_out = capsys.readouterr().out
    assert "starting 2 Ray workers, 3 envs each" in ray_out and "4 blocks of 3 envs" in ray_out

    table = lambda text: text[text.index("policy ") : text.index("(final metrics")]  # noqa: E731
    assert table(ray_out) == table(here_out)
    here, there = (json.loads((tmp_path / d / "results.json").read_text()) for d in ("here", "ray"))
    assert there["ray"] == {"address": None, "workers": 2, "reruns": 0}
    assert list(there["policies"]) == list(here["policies"]) == ["pd", "random", "crane_ppo"]
    for name, res in here["policies"].items():
        assert [e["seed"] for e in res["episodes"]] == [4 + k for k in range(10)]
        assert there["policies"][name]["episodes"] == res["episodes"], name
        assert len({e["return"] for e in res["episodes"]}) == 10  # the starts really differ
    a, b = (np.load(tmp_path / d / "trajectories.npz") for d in ("here", "ray"))
    # 4 recorded episodes of 3 policies: time, obs, actions, rewards and the crane's 4 metrics
    assert sorted(a.files) == sorted(b.files) and len(a.files) == 3 * 4 * 8
    for key in a.files:
        assert np.array_equal(a[key], b[key]), key
    for png in ("trajectories.png", "metrics.png", "final_metrics.png"):
        assert (tmp_path / "ray" / png).stat().st_size > 20_000


def test_a_killed_worker_loses_nothing(local_ray):
    """A worker process killed (SIGKILL) in the middle of a block: a new worker takes its
    place and runs the block from its start; the merged result equals the local run's, every
    episode once. MPC, whose blocks last long enough to be caught running."""
    local = evaluate(ENV_ID, "mpc", episodes=8, num_envs=3, seed=20, record=2)
    killed = []
    with RayEvaluator(ENV_ID, num_envs=3, workers=2) as pool:
        before = pool.describe()  # both warm: the engine's kernels loaded once per worker

        def kill_a_running_worker(done: int, total: int) -> None:
            if not killed:
                slot, episodes = pool.in_flight()[-1]  # sent just now: surely not finished
                time.sleep(0.2)  # let it get going
                os.kill(before[slot]["pid"], signal.SIGKILL)
                killed.append((slot, episodes))

        distributed = pool.evaluate("mpc", episodes=8, seed=20, record=2, progress=kill_a_running_worker)
        after = pool.describe()
        assert pool.reruns == 1
    slot, episodes = killed[0]
    assert after[slot]["pid"] != before[slot]["pid"]  # a new worker in its slot
    assert [e["episode"] for e in distributed.episodes] == list(range(8))
    assert distributed.episodes == local.episodes
    for a, b in zip(distributed.trajectories, local.trajectories, strict=True):
        assert np.array_equal(a.obs, b.obs) and np.array_equal(a.actions, b.actions)


def test_sweep_on_ray_end_to_end(local_ray, tmp_path, capsys, monkeypatch):
    """`robodyn sweep --ray`: two seeds of 2,048 PPO steps, each run trained and evaluated as a
    Ray task, its directory as `robodyn train` and `robodyn eval` write them, the summary and
    the table with the mean and spread across seeds. The first attempt at seed 1 has its
    worker process die half a second into it (os._exit from a timer, wrapped around the run
    by this test): the run starts again and leaves one training behind, not two."""
    killed = tmp_path / "killed"

    def dies_once(config, run, nthread=None):
        if run.seed == 1 and not killed.exists():
            killed.touch()
            threading.Timer(0.5, os._exit, args=(1,)).start()  # the worker process dies mid-run
        return train_and_evaluate(config, run, nthread)

    monkeypatch.setattr(robodyn.training.sweep, "train_and_evaluate", dies_once)
    out = tmp_path / "sweep"
    argv = ["sweep", "Crane-v0", "--algo", "ppo", "--seeds", "0..1", "--timesteps", "2048"]
    argv += ["--num-envs", "4", "--checkpoint-every", "1024", "--vecnormalize", "--out", str(out)]
    argv += ["--set", "n_epochs=2", "--algo-kwargs", '{"n_steps": 256, "batch_size": 256}']
    argv += ["--eval-episodes", "4", "--eval-num-envs", "4", "--eval-seed", "100", "--ray"]
    assert main(argv) == 0
    printed = capsys.readouterr().out

    summary = json.loads((out / "sweep.json").read_text())
    assert summary["seeds"] == [0, 1] and summary["grid"] == {"n_epochs": [2]}
    assert killed.exists() and summary["ray"] == {"address": None, "cpus_per_run": 1, "reruns": 1}
    assert "run n_epochs=2-seed1: its worker died (WorkerCrashedError); starting it again" in printed
    assert summary["config"]["algo_kwargs"] == {"n_steps": 256, "batch_size": 256}
    runs = summary["runs"]
    assert [r["name"] for r in runs] == ["n_epochs=2-seed0", "n_epochs=2-seed1"]
    for r in runs:
        run = out / r["name"]
        meta = json.loads((run / "ppo.json").read_text())
        assert meta["timesteps"] == r["timesteps"] == 2048 and meta["seed"] == r["seed"]
        assert sorted(p.name for p in (run / "checkpoints").glob("*.zip")) == [
            "ppo_1024_steps.zip",
            "ppo_2048_steps.zip",
        ]
        assert len(list((run / "tb").rglob("events.out.tfevents.*"))) == 1  # one training, once
        # the run's evaluation is `robodyn eval`'s document, and a local evaluation repeats it
        doc = json.loads((run / "eval" / "results.json").read_text())
        assert doc["seed"] == 100 and list(doc["policies"]) == ["ppo"]
        again = evaluate(ENV_ID, str(run / "ppo.zip"), episodes=4, num_envs=4, seed=100, record=0)
        assert doc["policies"]["ppo"]["episodes"] == again.episodes
        assert r["mean_return"] == pytest.approx(np.mean([e["return"] for e in again.episodes]), rel=1e-12)
    # two seeds, two different trainings
    assert runs[0]["mean_return"] != runs[1]["mean_return"]
    group = summary["across_seeds"][0]
    returns = [r["mean_return"] for r in runs]
    assert group["seeds"] == [0, 1] and group["mean_return"]["mean"] == pytest.approx(np.mean(returns))
    assert group["mean_return"]["std"] == pytest.approx(np.std(returns, ddof=1))
    assert "across seeds (mean ± sample std [min, max]):" in printed
    mean, std = np.mean(returns), np.std(returns, ddof=1)
    assert f"{mean:.2f} ± {std:.2f} [{min(returns):.2f}, {max(returns):.2f}]" in printed
    for r in runs:
        assert r["name"] in printed and f"{r['mean_return']:.2f} ± {r['std_return']:.2f}" in printed


def test_commands_without_ray_say_how_to_install_it(tmp_path, monkeypatch, capsys):
    """Where Ray is not installed (its import fails), `--ray` is refused with the install
    command, exit code 2, before anything is written; without --ray nothing needs Ray."""
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now raises ImportError
    out = tmp_path / "out"
    for argv in (
        ["eval", ENV_ID, "--policy", "pd", "--episodes", "1", "--ray"],
        ["sweep", ENV_ID, "--seeds", "0..1", "--timesteps", "64", "--ray", "auto"],
    ):
        assert main([*argv, "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("robodyn: error: --ray needs Ray") and 'pip install -e ".[ray]"' in err
        assert err.count("\n") == 1 and not out.exists()
    assert main(["eval", ENV_ID, "--policy", "pd", "--episodes", "1", "--workers", "2"]) == 2
    assert "--workers only applies with --ray" in capsys.readouterr().err
    argv = ["eval", ENV_ID, "--policy", "pd", "--episodes", "1", "--record", "0", "--out", str(out)]
    assert main(argv) == 0 and (out / "results.json").is_file()


def test_more_workers_than_the_cluster_holds_is_refused(local_ray, tmp_path, capsys):
    """Workers beyond the cluster's CPUs would wait for room forever: refused before any work."""
    argv = ["eval", ENV_ID, "--policy", "pd", "--episodes", "8", "--num-envs", "2"]
    assert main([*argv, "--out", str(tmp_path / "o"), "--ray", "--workers", "3"]) == 2
    assert "--workers 3: the Ray cluster has 2 CPUs, one per worker" in capsys.readouterr().err
    with pytest.raises(ValueError, match="3 workers of 1 CPUs do not fit the cluster's 2 CPUs"):
        RayEvaluator(ENV_ID, num_envs=2, workers=3)
    assert not (tmp_path / "o").exists()


def test_an_address_nobody_listens_at_is_refused_before_ray_starts():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens there once the socket is closed
    with pytest.raises(ClusterError, match=rf"'127\.0\.0\.1:{port}': nothing accepted a connection"):
        check_reachable(f"127.0.0.1:{port}")
    with pytest.raises(ClusterError, match=r"expected HOST:PORT or ray://HOST:PORT"):
        check_reachable("headnode")
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        check_reachable(f"ray://127.0.0.1:{listening.getsockname()[1]}")  # something answers: Ray's turn
    for resolved_by_ray in (None, "", "auto", "local"):
        check_reachable(resolved_by_ray)


@pytest.mark.parametrize("release", [False, True])
def test_what_ray_writes_to_stderr_while_connecting_is_shown_only_if_it_connects(capfd, release):
    with _stderr_kept() as kept:
        os.write(2, b"a warning from C++ code\n")
        if release:
            kept.release()
    assert ("a warning from C++ code" in capfd.readouterr().err) == release
