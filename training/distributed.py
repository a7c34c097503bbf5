"""Evaluation spread over Ray workers, episode for episode the same as training.evaluate.

    from robodyn.training.distributed import evaluate_ray
    results = evaluate_ray("RoboDyn/Crane-v0", "pd", episodes=1000, num_envs=64, address="auto")

or `robodyn eval RoboDyn/Crane-v0 --episodes 1000 --num-envs 64 --ray auto`.

training.evaluate runs an evaluation as blocks of num_envs episodes (`episode_blocks`), each
the same computation wherever it runs: the same episodes on the same rows from seeds
seed + k, every row and the policy reset at its start (`run_block`). Here each block is a Ray
task on one of a pool of actors (`EvalWorker`), each actor holding one vector env of num_envs
rows; the driver merges the blocks' episodes into the EvalResults evaluate returns
(`merge_blocks`), so a Ray run and a local run give the same per-episode results, bit for bit:
returns, lengths, final metrics, recorded trajectories.

- An actor builds its env and steps it once when it starts, so the engine's kernels are
  compiled or loaded from the cache once per worker, before it is given any block
  (`RayEvaluator.describe` waits for that).
- An actor keeps its env and the policies it was sent across blocks and evaluations: one
  pool serves every policy of a `robodyn eval`.
- A policy goes to the workers as a name they build (random, a baseline), as the bytes of a
  model's files (an SB3 .zip with its sidecar and statistics: no file system is shared with
  the workers), or as the pickled object.
- A worker that dies (its process killed, its node lost) loses only the block it was
  running: the driver starts a new actor in its place, wherever Ray finds room, and runs the
  block there from its start. A block's episodes are taken from the one run that finished;
  a block that loses its worker `max_attempts` times raises WorkerLostError.
"""

from __future__ import annotations

import hashlib
import os
import socket
import sys
import tempfile
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode

from robodyn.engine.errors import InvalidArgumentError
from robodyn.training.cluster import (
    ClusterError,
    WorkerLostError,
    cluster_cpus,
    connected,
    import_ray,
    lost_worker_errors,
)
from robodyn.training.evaluate import (
    EnvLayout,
    EvalResults,
    check_evaluation,
    episode_blocks,
    make_policy,
    merge_blocks,
    model_files,
    run_block,
)


# --- what the workers are sent -----------------------------------------------------------------
@dataclass
class ShippedPolicy:
    """A policy as the workers receive it. spec: a name the worker builds ("random", a
    baseline), a model's file name (its files' bytes in `files`, by name), or a Policy object
    or factory (pickled). key: the same for the same policy, so a worker builds it once."""

    key: str
    spec: object
    files: dict[str, bytes] = field(default_factory=dict)


def ship_policy(spec) -> ShippedPolicy:
    """`spec` (what evaluate takes) ready to send to the workers: a .zip path becomes the
    bytes of every file loading it reads (training.evaluate.model_files)."""
    if isinstance(spec, str | Path) and str(spec).endswith(".zip"):
        files = {p.name: p.read_bytes() for p in model_files(spec)}
        digest = hashlib.sha256()
        for name in sorted(files):
            digest.update(name.encode() + b"\0" + files[name])
        return ShippedPolicy(f"model:{digest.hexdigest()}", Path(spec).name, files)
    if isinstance(spec, str):
        return ShippedPolicy(f"name:{spec}", spec)
    return ShippedPolicy(f"object:{uuid.uuid4().hex}", spec)


# --- the actor ---------------------------------------------------------------------------------
class EvalWorker:
    """The state of one Ray actor (RayEvaluator makes the class remote): vector envs of the
    task by row count, the first built and stepped at once so the engine's kernels are ready
    before any block, and the policies it was sent, built once per env. The engine, and torch
    where a policy uses it, run on `threads` threads (the CPUs Ray gave the actor)."""

    def __init__(self, env_id: str, num_envs: int, env_kwargs: dict, threads: int = 1):
        t0 = time.perf_counter()
        self.env_id = env_id
        self.env_kwargs = {"nthread": threads, **env_kwargs}  # the caller's nthread stands
        self.threads = threads
        self.envs: dict[int, gym.vector.VectorEnv] = {}
        self.policies: dict[tuple, tuple[str, object]] = {}
        self.model_dir = tempfile.TemporaryDirectory(prefix="robodyn-worker-models-")
        env = self._env(num_envs)
        env.reset(seed=0)
        space = env.single_action_space
        env.step(np.tile((space.low + space.high) / 2.0, (env.num_envs, 1)))  # compiles or loads the step
        self.warm_seconds = time.perf_counter() - t0

    def describe(self) -> dict:
        """Where this worker runs and how long its warm-up took (returns once it is warm)."""
        return {"pid": os.getpid(), "host": socket.gethostname(), "warm_seconds": self.warm_seconds}

    def run_block(self, shipped: ShippedPolicy, start: int, stop: int, rows: int, seed, record: int):
        """(label, EnvLayout, BlockResult) of episodes start .. stop - 1 on an env of `rows`
        rows: training.evaluate.run_block, as evaluate runs that block."""
        env = self._env(rows)
        label, pol = self._policy(shipped, env, seed)
        part = run_block(env, pol, range(start, stop), seed, record)
        return label, EnvLayout.of(env), part

    def _env(self, rows: int):
        """The worker's vector env of `rows` rows (autoreset DISABLED), built on first use."""
        if rows not in self.envs:
            self.envs[rows] = gym.make_vec(
                self.env_id, num_envs=rows, autoreset_mode=AutoresetMode.DISABLED, **self.env_kwargs
            )
        return self.envs[rows]

    def _policy(self, shipped: ShippedPolicy, env, seed):
        """(label, policy) of `shipped` for `env`, built the first time (a model's files
        written to this worker's own disk first)."""
        key = (shipped.key, env.num_envs, seed)
        if key not in self.policies:
            spec = shipped.spec
            if shipped.files:
                folder = Path(self.model_dir.name) / shipped.key.replace(":", "-")
                folder.mkdir(exist_ok=True)
                for name, data in shipped.files.items():
                    (folder / name).write_bytes(data)
                spec = str(folder / shipped.spec)
            self.policies[key] = make_policy(spec, env, seed)
            _share_torch_threads(self.threads)
        return self.policies[key]


def _share_torch_threads(threads: int) -> None:
    """Hold torch, if a policy loaded it (an SB3 model), to this worker's CPUs. Its default, a
    thread per core, competes with the other workers and processes on the machine: on this
    project's 2-core machine a block of the crane's PPO (16 rows, 400 steps) in a worker took
    0.86 s on torch's 2 threads against 0.09 s on one, and 20 s against 0.2 s with another
    process busy on a core (its threads wait on each other)."""
    torch = sys.modules.get("torch")
    if torch is not None and torch.get_num_threads() != threads:
        torch.set_num_threads(threads)


# --- the driver --------------------------------------------------------------------------------
class RayEvaluator:
    """A pool of `workers` Ray actors, each an EvalWorker with one vector env of the task
    (num_envs rows, env_kwargs), for any number of evaluations; a context manager that ends
    the actors. Ray must be connected (training.cluster.connected). Each actor asks Ray for
    `cpus_per_worker` CPUs and steps its env on as many threads (unless env_kwargs set
    nthread). workers: default, and at most, as many as the cluster's CPUs hold."""

    def __init__(
        self,
        env_id: str,
        num_envs: int = 8,
        env_kwargs: dict | None = None,
        workers: int | None = None,
        cpus_per_worker: int = 1,
        max_attempts: int = 3,
    ):
        self.ray = import_ray()
        if not self.ray.is_initialized():
            raise ClusterError("Ray is not connected: use training.cluster.connected(address) first")
        check_evaluation(1, num_envs, None)
        if cpus_per_worker < 1 or max_attempts < 1 or (workers is not None and workers < 1):
            raise InvalidArgumentError(
                f"workers, cpus_per_worker and max_attempts must be >= 1, got {workers}, "
                f"{cpus_per_worker} and {max_attempts}"
            )
        self.env_id = env_id
        self.num_envs = num_envs
        self.env_kwargs = dict(env_kwargs or {})
        self.max_attempts = max_attempts
        self._remote = self.ray.remote(num_cpus=cpus_per_worker, max_restarts=0)(EvalWorker)
        self._start = lambda: self._remote.remote(env_id, num_envs, self.env_kwargs, cpus_per_worker)
        capacity = max(1, cluster_cpus(self.ray) // cpus_per_worker)
        if workers is not None and workers > capacity:
            raise InvalidArgumentError(
                f"{workers} workers of {cpus_per_worker} CPUs do not fit the cluster's "
                f"{cluster_cpus(self.ray)} CPUs: the ones left over would wait for room forever"
            )
        self.actors = [self._start() for _ in range(workers or capacity)]
        self.reruns = 0  # blocks run again after their worker died
        self._running: dict = {}  # ObjectRef -> (actor slot, block index), in submission order
        self._blocks: list[range] = []

    def __enter__(self) -> RayEvaluator:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """End every actor of the pool."""
        for actor in self.actors:
            self.ray.kill(actor)
        self.actors = []

    def describe(self) -> list[dict]:
        """Each actor's pid, host and warm-up time, once every actor is warm; a WorkerLostError
        if one could not start (its env or the engine failed there) or died."""
        try:
            return self.ray.get([a.describe.remote() for a in self.actors])
        except lost_worker_errors(self.ray) as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else ""
            raise WorkerLostError(f"a Ray worker for {self.env_id} did not start or died: {first}") from e

    def in_flight(self) -> list[tuple[int, range]]:
        """(actor slot, episodes) of every block running now, the most recently sent last."""
        return [(slot, self._blocks[b]) for slot, b in self._running.values()]

    def evaluate(self, policy, episodes: int = 10, seed: int | None = 0, record: int = 3, progress=None):
        """training.evaluate.evaluate's EvalResults for `policy` (what evaluate takes; an object
        must pickle), its blocks run on the pool. `progress(done, total)` is called as blocks
        finish, with the episodes done so far."""
        check_evaluation(episodes, self.num_envs, seed)
        n = min(self.num_envs, episodes)
        self._blocks = episode_blocks(episodes, n)
        shipped = self.ray.put(ship_policy(policy))
        t0 = time.perf_counter()
        try:
            outcomes = self._run_blocks(shipped, n, seed, record, progress, episodes)
        finally:
            self._running.clear()  # after an error, what still runs is never read
        label, layout, _ = outcomes[0]
        parts = [part for _, _, part in outcomes]
        return merge_blocks(
            self.env_id, label, self.env_kwargs, seed, n, layout, parts, time.perf_counter() - t0
        )

    def _run_blocks(self, shipped, n, seed, record, progress, episodes) -> list[tuple]:
        """Every block's (label, layout, BlockResult), in block order: each idle actor is sent
        the next block; a block whose actor died goes back to the front of the queue and its
        slot gets a new actor."""
        lost = lost_worker_errors(self.ray)
        queue = deque(range(len(self._blocks)))
        idle = deque(range(len(self.actors)))
        attempts = [0] * len(self._blocks)
        outcomes: dict[int, tuple] = {}
        done = 0

        def send() -> None:
            while queue and idle:
                slot, b = idle.popleft(), queue.popleft()
                block = self._blocks[b]
                ref = self.actors[slot].run_block.remote(shipped, block.start, block.stop, n, seed, record)
                self._running[ref] = (slot, b)

        send()
        while self._running:
            [ref], _ = self.ray.wait(list(self._running), num_returns=1)
            slot, b = self._running.pop(ref)
            idle.append(slot)
            try:
                outcome = self.ray.get(ref)
            except lost as e:
                attempts[b] += 1
                if attempts[b] >= self.max_attempts:
                    block = self._blocks[b]
                    raise WorkerLostError(
                        f"episodes {block.start}..{block.stop - 1} lost their worker {attempts[b]} times "
                        f"(last: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})"
                    ) from None
                self._replace(slot)
                self.reruns += 1
                queue.appendleft(b)
                send()
                continue
            outcomes[b] = outcome
            done += len(self._blocks[b])
            send()  # before progress: the actor just freed is already at work again
            if progress is not None:
                progress(done, episodes)
        return [outcomes[b] for b in range(len(self._blocks))]

    def _replace(self, slot: int) -> None:
        """A new actor in `slot`, the old one ended if it still lives (its late result, if
        any, is never read)."""
        self.ray.kill(self.actors[slot])
        self.actors[slot] = self._start()


def evaluate_ray(
    env_id: str,
    policy,
    episodes: int = 10,
    num_envs: int = 8,
    seed: int | None = 0,
    env_kwargs: dict | None = None,
    record: int = 3,
    progress=None,
    address: str | None = None,
    workers: int | None = None,
) -> EvalResults:
    """training.evaluate.evaluate on Ray (module docstring): connected to `address` (see
    training.cluster.connected), on `workers` actors (default one per CPU, at most one per
    block)."""
    check_evaluation(episodes, num_envs, seed)
    blocks = len(episode_blocks(episodes, num_envs))
    with connected(address) as ray:
        count = min(workers or cluster_cpus(ray), blocks)
        with RayEvaluator(env_id, num_envs, env_kwargs, workers=count) as pool:
            pool.describe()  # every worker warm before the evaluation's clock starts
            return pool.evaluate(policy, episodes, seed, record, progress)
