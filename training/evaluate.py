"""Vectorized evaluation of a policy on a RoboDyn task.

`evaluate(env_id, policy, episodes, num_envs, seed)` runs `episodes` episodes on one
RoboDynVectorEnv of n = min(num_envs, episodes) rows with autoreset DISABLED, in blocks
(`episode_blocks`): block b holds episodes b n .. b n + n - 1, row r of block b runs episode
b n + r from seed + b n + r, and every row starts the block together (`run_block`). A row
whose episode ends before the others is restarted unseeded (`reset(options={"reset_mask":
...})`, the row's own generator) and idles, its results dropped, until the block ends; the
last block's rows past the final episode run spare episodes, dropped too. The policy is told
which rows restarted (`policy.reset(env, rows)`, every row at a block's start).

So a block is the same computation wherever and whenever it runs: the same episodes on the
same rows from the same seeds, every row reset and the policy reset on every row at its
start. A block run in another process (training.distributed spreads the blocks over Ray
workers) gives bit for bit the episodes it gives here, even for a policy whose rows share
arithmetic (a torch network rounds a row's float32 sums differently at another position in
the batch, or in a batch of other rows). For a policy that treats rows independently the
per-episode results do not depend on num_envs either.

Policies follow the baselines' protocol (`envs.baselines.Policy`):

    class Policy:
        def reset(self, env, rows: np.ndarray) -> None: ...  # rows whose episodes (re)started
        def act(self, env, obs: np.ndarray) -> np.ndarray: ...  # (num_envs, action_dim)

A policy with randomness of its own may also define `seed_rows(rows, seeds)`: evaluation
calls it before `reset` with the seed of each restarted row's episode (None for a row that
idles), so it can draw per episode (RandomPolicy does).

`make_policy` builds one from a name: "random", a baseline of envs.baselines ("pd",
"mpc"), or the path of a stable-baselines3 .zip (PPO, SAC, ...; acts deterministically).
"""

from __future__ import annotations

import functools
import pickle
import re
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import mujoco
import numpy as np
from gymnasium.vector import AutoresetMode

from robodyn.engine.errors import RoboDynError
from robodyn.envs.baselines import BASELINES, Policy, make_baseline, task_baselines
from robodyn.training import jsonio
from robodyn.training.residual import ResidualError, ResidualPolicy
from robogym import registration
from robogym.errors import InvalidArgumentError

SB3_ALGOS = ("PPO", "SAC", "TD3", "A2C", "DDPG")


class PolicyError(RoboDynError, ValueError):
    """A policy name or file that cannot be turned into a policy."""


class EvaluationError(RoboDynError, ValueError):
    """Arguments of evaluate() it refuses before running anything (episodes, rows, seed)."""


# What loading a file that is not a (complete) stable-baselines3 model of the algorithm tried
# raises, inside SB3, zipfile, pickle and torch: a corrupt, truncated or foreign file, or a
# model of another algorithm. Anything else is a bug and propagates.
MODEL_LOAD_ERRORS = (
    zipfile.BadZipFile,
    pickle.UnpicklingError,
    EOFError,
    OSError,
    ValueError,
    KeyError,
    TypeError,
    AttributeError,
    AssertionError,
    RuntimeError,
)


# --- policies ----------------------------------------------------------------------------------
class RandomPolicy:
    """Uniform actions over the action box. A row told its episode's seed s (`seed_rows`,
    which evaluation calls) draws from a generator of its own, the first child of
    SeedSequence(s), a stream apart from the env's default_rng(s): episode k's actions then
    depend on its seed alone, not on the rows beside it or on how many ran before. Other rows
    draw, in row order, from the policy's generator seeded with `seed`."""

    def __init__(self, seed: int | None = None):
        self.rng = np.random.default_rng(seed)
        self.row_rngs: dict[int, np.random.Generator] = {}  # row -> its episode's generator

    def seed_rows(self, rows: np.ndarray, seeds: list[int | None]) -> None:
        """Give each of `rows` the generator of its episode's seed (None: the shared one)."""
        for r, s in zip(np.asarray(rows).tolist(), seeds, strict=True):
            if s is None:
                self.row_rngs.pop(r, None)
            else:
                self.row_rngs[r] = np.random.default_rng(np.random.SeedSequence(s).spawn(1)[0])

    def reset(self, env, rows: np.ndarray) -> None:
        pass

    def act(self, env, obs: np.ndarray) -> np.ndarray:
        space = env.single_action_space
        if not self.row_rngs:
            return self.rng.uniform(space.low, space.high, size=(env.num_envs, *space.shape))
        out = np.empty((env.num_envs, *space.shape))
        for r in range(env.num_envs):
            out[r] = self.row_rngs.get(r, self.rng).uniform(space.low, space.high)
        return out


class SB3Policy:
    """A trained stable-baselines3 model acting deterministically; `obs_normalizer` (a
    VecNormalize with the training statistics) normalizes observations first."""

    def __init__(self, model, obs_normalizer=None, name: str = "sb3", residual: dict | None = None):
        self.model = model
        self.obs_normalizer = obs_normalizer
        self.name = name  # the label evaluate() gives its results
        self.residual = residual  # {"base": baseline name, "scale": s} for a residual learner

    def reset(self, env, rows: np.ndarray) -> None:
        pass

    def act(self, env, obs: np.ndarray) -> np.ndarray:
        if self.obs_normalizer is not None:
            obs = self.obs_normalizer.normalize_obs(obs)
        action, _ = self.model.predict(obs, deterministic=True)
        return action


def acting_policy(policy: SB3Policy):
    """What acts for a trained model: the model itself or, for a residual learner (a
    correction to a baseline), the sum it was trained on (training.residual.ResidualPolicy)."""
    if policy.residual is None:
        return policy
    return ResidualPolicy(policy.residual["base"], policy, policy.residual["scale"], policy.name)


def load_sb3_policy(path: str | Path) -> SB3Policy:
    """Load a stable-baselines3 model zip. The algorithm comes from the sidecar JSON that
    training.train writes beside it (<name>.json, which also names the VecNormalize
    statistics); without one, each algorithm of SB3_ALGOS is tried in turn. A PolicyError
    names the file for a missing, corrupt or foreign model, sidecar or statistics file."""
    path = _model_file(path)
    meta = read_model_meta(path)
    normalizer = None
    if meta.get("vecnormalize"):  # the small file first: a missing one is the likelier mistake
        normalizer = load_vecnormalize(path, meta["vecnormalize"])
        normalizer.training = False
    model = load_sb3_model(path, [meta["algo"].upper()] if meta.get("algo") else list(SB3_ALGOS))
    return SB3Policy(model, normalizer, name=path.stem, residual=meta.get("residual"))


def _model_file(path: str | Path) -> Path:
    """`path` as an existing regular file, else a PolicyError saying what it is instead."""
    path = Path(path)
    if path.is_dir():
        raise PolicyError(f"policy {str(path)!r} is a directory, not a model .zip")
    if not path.is_file():
        raise PolicyError(f"policy file {str(path)!r} does not exist")
    return path


def load_sb3_model(path: Path, algos: list[str], **load_kwargs):
    """The model in `path`, loaded by the first algorithm of `algos` (SB3 class names) that
    reads it (`load_kwargs` go to its load); a PolicyError with each algorithm's refusal."""
    import stable_baselines3

    errors = []
    for name in algos:
        try:
            return getattr(stable_baselines3, name).load(path, device="cpu", **load_kwargs)
        except MODEL_LOAD_ERRORS as e:  # each algorithm refuses the others' files differently
            errors.append(f"{name}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
    raise PolicyError(f"{str(path)!r} is not a stable-baselines3 model zip ({'; '.join(errors)})")


def load_vecnormalize(model_path: Path, name: str):
    """The VecNormalize statistics `name`, a file beside the model (its sidecar names it)."""
    from stable_baselines3.common.vec_env import VecNormalize

    stats = Path(model_path).parent / name
    if not stats.is_file():
        raise PolicyError(
            f"{str(model_path)!r} was trained with VecNormalize, and its statistics {str(stats)!r} "
            "(named by its sidecar JSON) are missing: copy them beside the model"
        )
    try:
        with open(stats, "rb") as f:
            normalizer = pickle.load(f)
    except MODEL_LOAD_ERRORS as e:
        raise PolicyError(f"cannot read the VecNormalize statistics {str(stats)!r}: {e}") from None
    if not isinstance(normalizer, VecNormalize):
        raise PolicyError(f"{str(stats)!r} holds a {type(normalizer).__name__}, not VecNormalize statistics")
    return normalizer


def read_model_meta(path: Path) -> dict:
    """The sidecar JSON of a model zip; for a CheckpointCallback snapshot <prefix>_<N>_steps.zip,
    the run's sidecar <prefix>.json beside it (algorithm, env, residual; training.train writes it
    when the run starts) and the VecNormalize statistics saved with the snapshot,
    <prefix>_vecnormalize_<N>_steps.pkl.
    A PolicyError names a sidecar that is not JSON or not a sidecar (algo and env_id strings,
    vecnormalize a file name or null)."""
    path = Path(path)
    sidecar = path.with_suffix(".json")
    if sidecar.is_file():
        return _read_sidecar(sidecar, path)
    m = re.fullmatch(r"(.*)_(\d+)_steps", path.stem)
    if not m:
        return {}
    run = path.parent / f"{m.group(1)}.json"  # what training.train writes beside its checkpoints
    meta = _read_sidecar(run, path) if run.is_file() else {}
    stats = path.parent / f"{m.group(1)}_vecnormalize_{m.group(2)}_steps.pkl"
    meta["vecnormalize"] = stats.name if stats.is_file() else None
    return meta


def model_files(path: str | Path) -> list[Path]:
    """Every file loading the model `path` reads: the .zip, its sidecar (for a checkpoint, the
    run's sidecar beside it) and the VecNormalize statistics the sidecar names, each of them
    there. What a copy of the model elsewhere (a Ray worker's disk) needs, under the same
    names. A PolicyError as load_sb3_policy raises it for a missing model or a bad sidecar."""
    path = _model_file(path)
    meta = read_model_meta(path)
    files = [path]
    sidecar = path.with_suffix(".json")
    m = re.fullmatch(r"(.*)_(\d+)_steps", path.stem)
    if not sidecar.is_file() and m:
        sidecar = path.parent / f"{m.group(1)}.json"
    if sidecar.is_file():
        files.append(sidecar)
    if meta.get("vecnormalize"):
        stats = path.parent / meta["vecnormalize"]
        if not stats.is_file():
            load_vecnormalize(path, meta["vecnormalize"])  # raises, naming the missing file
        files.append(stats)
    return files


def _read_sidecar(sidecar: Path, model: Path) -> dict:
    """The checked JSON object in `sidecar`, the sidecar of `model`; a PolicyError if not."""
    try:
        meta = jsonio.loads(sidecar.read_text())
    except (OSError, UnicodeDecodeError, jsonio.JSONInputError) as e:
        raise PolicyError(f"cannot read the sidecar {str(sidecar)!r} of {model.name}: {e}") from None
    _check_meta(meta, sidecar)
    return meta


def _check_meta(meta, sidecar: Path) -> None:
    """A PolicyError unless `meta` (a sidecar's JSON) is an object whose algo, env_id and
    vecnormalize entries, where present, are what training.train writes."""
    where = f"the sidecar {str(sidecar)!r}"
    if not isinstance(meta, dict):
        raise PolicyError(f"{where} holds a {type(meta).__name__}, not a JSON object")
    algo = meta.get("algo")
    if algo is not None and (not isinstance(algo, str) or algo.upper() not in SB3_ALGOS):
        raise PolicyError(f"{where} names the algorithm {algo!r}; known: {', '.join(SB3_ALGOS)}")
    env_id = meta.get("env_id")
    if env_id is not None and not isinstance(env_id, str):
        raise PolicyError(f"{where}: env_id must be a string, got {env_id!r}")
    stats = meta.get("vecnormalize")
    if stats is not None and (not isinstance(stats, str) or not stats or Path(stats).name != stats):
        raise PolicyError(
            f"{where}: vecnormalize must be a file name beside the model or null, got {stats!r}"
        )
    residual = meta.get("residual")
    if residual is not None:
        ok = isinstance(residual, dict) and set(residual) == {"base", "scale"}
        ok = ok and isinstance(residual["base"], str) and isinstance(residual["scale"], int | float)
        if not ok or isinstance(residual["scale"], bool) or not residual["scale"] > 0:
            raise PolicyError(
                f'{where}: residual must be null or {{"base": a baseline name, "scale": a positive '
                f"number}}, got {residual!r}"
            )


def make_policy(spec, env, seed: int | None = None) -> tuple[str, Policy]:
    """(label, policy) for a policy object, a callable env -> policy (made for this env),
    "random", a baseline name or an SB3 .zip path."""
    if hasattr(spec, "act") and hasattr(spec, "reset"):
        return getattr(spec, "name", type(spec).__name__), spec
    if callable(spec):
        policy = spec(env)
        return getattr(policy, "name", type(policy).__name__), policy
    if not isinstance(spec, (str, Path)):
        raise PolicyError(f"a policy is a name, a .zip path or an object with reset/act, got {spec!r}")
    spec = str(spec)
    if spec == "random":
        return "random", RandomPolicy(seed)
    if spec.endswith(".zip"):
        policy = load_sb3_policy(spec)
        for what, mine, theirs in (
            ("observations", env.single_observation_space, policy.model.observation_space),
            ("actions", env.single_action_space, policy.model.action_space),
        ):
            if getattr(theirs, "shape", None) != mine.shape:
                raise PolicyError(
                    f"{spec!r} was trained on {what} of shape {getattr(theirs, 'shape', theirs)}; this "
                    f"env's are {mine.shape} (a policy of another task?)"
                )
        policy = acting_policy(policy)
        if isinstance(policy, ResidualPolicy):
            try:
                policy.base_for(env)  # the task must have that baseline
            except ResidualError as e:
                raise PolicyError(f"{spec!r} is a residual: {e}") from None
        return policy.name, policy
    entry = registration.entry_of(env)
    declared = BASELINES if entry is None else task_baselines(entry)
    if spec not in declared:
        known = ", ".join(["random", *declared, "FILE.zip"])
        raise PolicyError(f"unknown policy {spec!r}; choose one of {known}")
    try:
        return spec, make_baseline(spec, env)
    except ValueError as e:  # e.g. a task without that baseline
        raise PolicyError(str(e)) from None


# --- names of observation and action components ------------------------------------------------
def observation_names(vec_env) -> list[str]:
    """A name for every observation component, from the task's observation_names() (by
    default the model's sensor names); a ValueError if their number is not the observation's."""
    task = vec_env.unwrapped.task
    names = list(task.observation_names())
    n = int(np.prod(vec_env.single_observation_space.shape))
    if len(names) != n:
        raise InvalidArgumentError(
            f"{type(task).__name__}.observation_names() gives {len(names)} names for {n} observation "
            "components: a task whose observe() is not the sensor vector names its own components"
        )
    return names


def action_names(vec_env) -> list[str]:
    """A name for every action component: the joint of the dof it drives (the task's
    actuation mask), or the actuator's name where it drives no single dof, named in the model."""
    actuation = vec_env.unwrapped.task.actuation()
    mj = vec_env.unwrapped.physics.mj_model
    names = []
    for j, dof in enumerate(actuation.dofs.tolist()):
        if dof == -1:
            a = int(actuation.actuators[j])
            names.append(mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_ACTUATOR, a) or f"actuator {a}")
        else:
            names.append(
                mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_JOINT, int(mj.dof_jntid[dof])) or f"dof {dof}"
            )
    return names


# --- results -----------------------------------------------------------------------------------
@dataclass
class Trajectory:
    """One recorded episode: T steps of dt seconds."""

    episode: int
    time: np.ndarray  # (T+1,) s
    obs: np.ndarray  # (T+1, nobs), from the reset observation on
    actions: np.ndarray  # (T, nact) as the policy returned them
    rewards: np.ndarray  # (T,)
    metrics: dict[str, np.ndarray]  # name -> (T+1,), task metrics from the reset on


@dataclass
class EvalResults:
    """Per-episode outcomes of one policy, plus the first few episodes' trajectories."""

    env_id: str
    policy: str
    env_kwargs: dict
    seed: int | None
    num_envs: int
    episodes: list[dict]  # {"episode", "seed", "return", "length", "terminated", "truncated", "final": {...}}
    trajectories: list[Trajectory]
    obs_names: list[str]
    action_names: list[str]
    metric_names: list[str]
    seconds: float

    def successes(self) -> np.ndarray | None:
        """(episodes,) bool from the task's final `success` metric, or None if it reports none."""
        if self.episodes and "success" in self.episodes[0]["final"]:
            return np.array([bool(e["final"]["success"]) for e in self.episodes])
        return None

    def summary(self) -> dict[str, Any]:
        ret = np.array([e["return"] for e in self.episodes])
        out: dict[str, Any] = {
            "policy": self.policy,
            "episodes": len(self.episodes),
            "mean_return": float(ret.mean()),
            "std_return": float(ret.std()),
            "mean_length": float(np.mean([e["length"] for e in self.episodes])),
            "terminated": int(sum(e["terminated"] for e in self.episodes)),
        }
        for k in self.metric_names:
            v = np.array([e["final"][k] for e in self.episodes])
            out[f"final_{k}_mean"] = float(v.mean())
            out[f"final_{k}_max"] = float(v.max())
        s = self.successes()
        out["success_rate"] = None if s is None else float(s.mean())
        out["seconds"] = self.seconds
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "env_id": self.env_id,
            "policy": self.policy,
            "env_kwargs": self.env_kwargs,
            "seed": self.seed,
            "num_envs": self.num_envs,
            "summary": self.summary(),
            "episodes": self.episodes,
        }


def results_document(
    env_id: str, env_kwargs: dict, episodes: int, num_envs: int, seed: int | None, results, specs
) -> dict[str, Any]:
    """The document `robodyn eval` writes as results.json: the run's settings and, by policy
    label, each EvalResults' JSON with the spec it was given (`results` and `specs` in the
    same order)."""
    return {
        "env_id": env_id,
        "env_kwargs": env_kwargs,
        "episodes": episodes,
        "num_envs": num_envs,
        "seed": seed,
        "policies": {
            r.policy: dict(r.to_json(), spec=str(spec)) for r, spec in zip(results, specs, strict=True)
        },
    }


# --- the evaluation loop -----------------------------------------------------------------------
def episode_blocks(episodes: int, num_envs: int) -> list[range]:
    """The blocks an evaluation of `episodes` episodes on n = min(num_envs, episodes) rows runs:
    block b is range(b n, min(b n + n, episodes)). The one partition every evaluation uses,
    in one process or spread over many."""
    check_evaluation(episodes, num_envs, None)
    n = min(num_envs, episodes)
    return [range(start, min(start + n, episodes)) for start in range(0, episodes, n)]


def episode_seed(seed: int | None, k: int) -> int | None:
    """The seed episode k starts from: seed + k (None: fresh entropy, nothing reproducible)."""
    return None if seed is None else int(seed) + k


def evaluate(
    env_id: str,
    policy,
    episodes: int = 10,
    num_envs: int = 8,
    seed: int | None = 0,
    env_kwargs: dict | None = None,
    record: int = 3,
    progress=None,
    step_progress=None,
) -> EvalResults:
    """Run `episodes` episodes of `policy` (a Policy, "random", "pd", "mpc" or an SB3 .zip
    path) on `num_envs` rows of one vector env, block after block (module docstring); record
    per-step obs/actions/metrics of the first `record` episodes. `progress(done, total)` is
    called as episodes finish; `step_progress(block, blocks, step, max_steps)` after every
    env step: the block's index, the number of blocks, the steps the block has run, and the
    env's episode step limit, the most steps a block runs. A task without a time limit
    (dm_control's lqr) needs env_kwargs["max_episode_steps"], else EvaluationError."""
    check_evaluation(episodes, num_envs, seed)
    env_kwargs = dict(env_kwargs or {})
    env = make_eval_env(env_id, min(num_envs, episodes), env_kwargs)
    try:
        return evaluate_on(env, env_id, policy, episodes, seed, env_kwargs, record, progress, step_progress)
    finally:
        env.close()


def make_eval_env(env_id: str, num_envs: int, env_kwargs: dict):
    """The vector env evaluate() runs its blocks on: `num_envs` rows, autoreset disabled; an
    EvaluationError for a task without a time limit (dm_control's lqr) unless env_kwargs
    give one (an episode that never ends would hang the evaluation)."""
    env = gym.make_vec(env_id, num_envs=num_envs, autoreset_mode=AutoresetMode.DISABLED, **env_kwargs)
    if getattr(env.unwrapped, "max_episode_steps", None) is None:
        env.close()
        raise EvaluationError(
            f"{env_id} has no time limit (its episodes end only when the task says so): give "
            "one, e.g. --env-kwargs '{\"max_episode_steps\": 10000}' (env_kwargs=...)"
        )
    return env


def evaluate_on(
    env,
    env_id: str,
    policy,
    episodes: int,
    seed: int | None,
    env_kwargs: dict,
    record: int = 3,
    progress=None,
    step_progress=None,
) -> EvalResults:
    """evaluate() on a vector env of make_eval_env's, which it leaves open (an evaluation
    repeated during training reuses its env)."""
    n = env.num_envs
    max_steps = env.unwrapped.max_episode_steps
    label, pol = make_policy(policy, env, seed)
    layout = EnvLayout.of(env)
    t0 = time.perf_counter()
    done = []

    def finished(k: int) -> None:
        done.append(k)
        if progress is not None:
            progress(len(done), episodes)

    blocks = episode_blocks(episodes, n)
    parts = []
    for b, block in enumerate(blocks):
        on_step = None
        if step_progress is not None:
            on_step = functools.partial(step_progress, b, len(blocks), max_steps=max_steps)
        parts.append(run_block(env, pol, block, seed, record, finished, on_step))
    return merge_blocks(env_id, label, env_kwargs, seed, n, layout, parts, time.perf_counter() - t0)


GYMNASIUM_PREFIX = "RoboDyn/"


def gymnasium_original(env_id: str) -> str | None:
    """The id of the Gymnasium env a RoboDyn task is a port of (RoboDyn/Hopper-v5 ->
    Hopper-v5, envs/*_v5.py), None for a task of RoboDyn's own."""

    if not env_id.startswith(GYMNASIUM_PREFIX) or not env_id.endswith("-v5"):
        return None
    original = env_id.removeprefix(GYMNASIUM_PREFIX)
    return original if original in gym.registry else None


def evaluate_gymnasium(env_id: str, policy: SB3Policy, episodes: int, seed: int | None = 0,
                       env_kwargs: dict | None = None) -> dict[str, Any]:  # fmt: skip
    """Run `policy` (a trained SB3 model, its VecNormalize statistics applied) on Gymnasium's
    own env of the port `env_id` (MuJoCo's physics, gymnasium.make of the original id with the
    same keywords), episode k from seed + k as evaluate() runs it on RoboDyn: {"env",
    "returns", "lengths", "mean_return", "stderr"} (stderr: the standard error of the mean
    return, std / sqrt(episodes))."""

    original = gymnasium_original(env_id)
    if original is None:
        raise EvaluationError(f"{env_id} is not a port of a Gymnasium task: there is no Gymnasium env to run")
    if policy.residual is not None:
        raise PolicyError("a residual policy adds a RoboDyn baseline's command: it runs on RoboDyn only")
    kwargs = {k: v for k, v in (env_kwargs or {}).items() if k != "dtype"}
    env = gym.make(original, **kwargs)
    returns, lengths = [], []
    for k in range(episodes):
        obs, _ = env.reset(seed=episode_seed(seed, k))
        total, steps, done = 0.0, 0, False
        while not done:
            action = policy.act(env, obs[None])[0]
            obs, reward, terminated, truncated, _ = env.step(action)
            total += float(reward)
            steps += 1
            done = terminated or truncated
        returns.append(total)
        lengths.append(steps)
    env.close()
    r = np.array(returns)
    stderr = float(r.std(ddof=1) / np.sqrt(len(r))) if len(r) > 1 else float("nan")
    return {"env": original, "returns": r, "lengths": np.array(lengths), "mean_return": float(r.mean()),
            "stderr": stderr}  # fmt: skip


def check_evaluation(episodes: int, num_envs: int, seed: int | None) -> None:
    """An EvaluationError for a count below 1 or a negative seed, before anything is built."""
    if episodes < 1 or num_envs < 1:
        raise EvaluationError(f"episodes and num_envs must be >= 1, got {episodes} and {num_envs}")
    if seed is not None and seed < 0:
        raise EvaluationError(f"seed must be >= 0 (or None), got {seed}")


@dataclass
class EnvLayout:
    """The names an evaluation's results carry, read from its vector env."""

    obs_names: list[str]
    action_names: list[str]
    metric_names: list[str]

    @classmethod
    def of(cls, env) -> EnvLayout:
        return cls(observation_names(env), action_names(env), list(env.unwrapped.task.metrics().keys()))


@dataclass
class BlockResult:
    """What one block produced: {episode: outcome} and its recorded trajectories."""

    episodes: dict[int, dict]
    trajectories: list[Trajectory]


def run_block(
    env, pol, block: range, seed: int | None, record: int, finished=None, on_step=None
) -> BlockResult:
    """Run the episodes of `block` (consecutive, at most env.num_envs of them) on `env`, a
    vector env with autoreset DISABLED: every row is reset, row r from the seed of episode
    block.start + r (rows past the block run spare episodes, dropped), and the policy is
    reset on every row; a row whose episode ends restarts unseeded and idles. Episodes below
    `record` are recorded step by step; `finished(k)` is called as episode k ends, and
    `on_step(t)` after the block's t-th env step (t = 1, 2, ...)."""
    n = env.num_envs
    if env.unwrapped.autoreset_mode != AutoresetMode.DISABLED or not 1 <= len(block) <= n:
        raise InvalidArgumentError(
            f"run_block needs a vector env with autoreset DISABLED and a block of 1 to num_envs={n} "
            f"episodes, got {env.unwrapped.autoreset_mode} and {len(block)}"
        )
    metric_names = list(env.unwrapped.task.metrics().keys())
    row_ep = np.arange(block.start, block.start + n)  # episode each row runs, -1 once it idles
    ret = np.zeros(n)
    length = np.zeros(n, dtype=np.int64)
    traj: dict[int, dict[str, list]] = {}
    results: dict[int, dict] = {}

    seeds = [episode_seed(seed, int(k)) for k in row_ep]
    obs, info = env.reset(seed=seeds)
    _seed_policy(pol, np.arange(n), seeds)
    pol.reset(env, np.arange(n))
    recorded = range(block.start, min(block.stop, record))
    _start_records(traj, row_ep, np.arange(n), obs, info, metric_names, recorded)
    steps = 0
    while True:
        action = np.asarray(pol.act(env, obs), dtype=np.float64)
        obs, reward, terminated, truncated, info = env.step(action)
        steps += 1
        ret += reward
        length += 1
        for r in range(n):
            t = traj.get(row_ep[r])
            if t is not None:
                t["obs"].append(obs[r].copy())
                t["actions"].append(action[r].copy())
                t["rewards"].append(float(reward[r]))
                for k in metric_names:
                    t["metrics"][k].append(float(info[k][r]))
        done = np.flatnonzero(terminated | truncated)
        if on_step is not None:
            on_step(steps)
        if len(done) == 0:
            continue
        for r in done:
            k = int(row_ep[r])
            if k not in block:  # a spare or idle row
                continue
            results[k] = {
                "episode": k,
                "seed": episode_seed(seed, k),
                "return": float(ret[r]),
                "length": int(length[r]),
                "terminated": bool(terminated[r]),
                "truncated": bool(truncated[r]),
                "final": {key: float(info[key][r]) for key in info if not key.startswith("_")},
            }
            if finished is not None:
                finished(k)
        if len(results) == len(block):
            break
        mask = np.zeros(n, dtype=bool)
        mask[done] = True
        obs, info = env.reset(options={"reset_mask": mask})  # unseeded: each row's own generator
        row_ep[done] = -1
        ret[done] = 0.0
        length[done] = 0
        _seed_policy(pol, done, [None] * len(done))
        pol.reset(env, done)
    return BlockResult(
        episodes=results, trajectories=[_trajectory(k, traj[k], env.unwrapped.dt) for k in sorted(traj)]
    )


def _seed_policy(pol, rows: np.ndarray, seeds: list[int | None]) -> None:
    """Tell a policy that draws per episode (one with seed_rows) its rows' episode seeds."""
    seed_rows = getattr(pol, "seed_rows", None)
    if seed_rows is not None:
        seed_rows(rows, seeds)


def _trajectory(k: int, t: dict[str, list], dt: float) -> Trajectory:
    """Episode k's record (lists of per-step values) as a Trajectory of arrays."""
    steps = len(t["actions"])
    return Trajectory(
        episode=k,
        time=np.arange(steps + 1) * dt,
        obs=np.array(t["obs"]),
        actions=np.array(t["actions"]).reshape(steps, -1),
        rewards=np.array(t["rewards"]),
        metrics={m: np.array(v) for m, v in t["metrics"].items()},
    )


def merge_blocks(env_id, label, env_kwargs, seed, num_envs, layout, parts, seconds) -> EvalResults:
    """One EvalResults from the BlockResults of every block of an evaluation (in any order),
    its episodes in episode order. A ValueError if an episode is missing or appears twice."""
    episodes: dict[int, dict] = {}
    for part in parts:
        for k, outcome in part.episodes.items():
            if k in episodes:
                raise InvalidArgumentError(f"episode {k} came back from two blocks")
            episodes[k] = outcome
    if sorted(episodes) != list(range(len(episodes))):
        missing = sorted(set(range(max(episodes, default=-1) + 1)) - set(episodes))
        raise InvalidArgumentError(f"episodes {missing[:8]} are missing from the blocks' results")
    trajectories = sorted((t for part in parts for t in part.trajectories), key=lambda t: t.episode)
    return EvalResults(
        env_id=env_id,
        policy=label,
        env_kwargs=env_kwargs,
        seed=seed,
        num_envs=num_envs,
        episodes=[episodes[k] for k in range(len(episodes))],
        trajectories=trajectories,
        obs_names=layout.obs_names,
        action_names=layout.action_names,
        metric_names=layout.metric_names,
        seconds=seconds,
    )


def _start_records(traj, row_ep, rows, obs, info, metric_names, recorded: range) -> None:
    """Open a trajectory record, from its reset observation, for each of `rows` whose new
    episode is one of `recorded`."""
    for r in rows:
        k = int(row_ep[r])
        if k in recorded:
            traj[k] = {
                "obs": [obs[r].copy()],
                "actions": [],
                "rewards": [],
                "metrics": {m: [float(info[m][r])] for m in metric_names},
            }
