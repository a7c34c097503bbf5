"""What picking the actions of one vector step costs PPO during collection, by part.

    python -m benchmarks.bench_policy                       # RoboDyn/Quadruped-v0, 64 envs
    python -m benchmarks.bench_policy --env RoboDyn/Crane-v0 --num-envs 64,256,1024

Each row builds the env and the model as `robodyn train ENV` does (bench_train.build under the
algorithm keywords and VecNormalize the task declares), resets the env and times, on that
observation batch, what SB3's PPO.collect_rollouts does with it every vector step (under
torch.no_grad(), on the CPU):

  to_tensor  obs_as_tensor(obs): torch.as_tensor, which shares the array's memory
  networks   the policy's feature extractor, mlp_extractor, action_net and value_net
  forward    policy(obs_tensor) whole: the networks, then the Gaussian's sample and log-prob
  to_numpy   actions.cpu().numpy()
  f64 cast   forward with the batch as float64 (what an env without VecNormalize hands SB3)
             minus forward: the policy's float32 cast of the observations (preprocess_obs)

Each number is the median over --repeats of the mean over --calls calls, in microseconds per
vector step (all rows of the batch at once). The header states torch's threads and the
observations' dtype, and whether to_tensor shared their memory.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np
import torch
from stable_baselines3.common.utils import obs_as_tensor

from benchmarks.args import counts
from benchmarks.bench_train import apply_common_args, build
from robodyn.training.cli import _count
from robogym.registration import training_settings

PARTS = ("to_tensor", "networks", "forward", "to_numpy", "f64 cast")


def per_call_us(fn, calls: int, repeats: int) -> float:
    """Median over `repeats` of the mean microseconds of `calls` calls of fn() (after `calls`
    untimed calls)."""
    with torch.no_grad():
        for _ in range(calls):
            fn()
        means = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            means.append((time.perf_counter() - t0) / calls * 1e6)
    return statistics.median(means)


def measure(env_id: str, num_envs: int, calls: int, repeats: int, seed: int = 0) -> dict:
    """One row: the parts of one action pick on num_envs rows (see the module's docstring)."""
    task = training_settings(env_id, "ppo")
    env, model, _ = build(env_id, "ppo", num_envs, seed, bool(task.get("vecnormalize")), None,
                          task.get("algo_kwargs", {}))  # fmt: skip
    try:
        obs = env.reset()
    finally:
        env.close()
    policy, device = model.policy, model.device
    x = obs_as_tensor(obs, device)
    x64 = obs_as_tensor(np.asarray(obs, dtype=np.float64), device)
    with torch.no_grad():
        actions = policy(x)[0]

    def networks():
        pi, vf = policy.mlp_extractor(policy.extract_features(x))
        return policy.action_net(pi), policy.value_net(vf)

    us = {
        "to_tensor": per_call_us(lambda: obs_as_tensor(obs, device), calls, repeats),
        "networks": per_call_us(networks, calls, repeats),
        "forward": per_call_us(lambda: policy(x), calls, repeats),
        "to_numpy": per_call_us(lambda: actions.cpu().numpy(), calls, repeats),
    }
    us["f64 cast"] = per_call_us(lambda: policy(x64), calls, repeats) - us["forward"]
    return {
        "num_envs": num_envs,
        "obs_dtype": str(obs.dtype),
        "obs_shape": list(obs.shape),
        "shares_memory": bool(np.shares_memory(x.numpy(), obs)),
        "us": us,
    }


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--env", default="RoboDyn/Quadruped-v0", help="a registered task id")
    p.add_argument("--num-envs", type=counts, default=[64], help="comma-separated, e.g. 64,256")
    p.add_argument("--calls", type=_count(1), default=2000, help="calls per repeat")
    p.add_argument("--repeats", type=_count(1), default=5)
    p.add_argument("--torch-threads", type=_count(1), help="torch.set_num_threads (default: torch's own)")
    p.add_argument("--json", help="also write every number to this file")
    args = p.parse_args(argv)
    apply_common_args(p, args)
    print(f"PPO's action pick on {args.env} (the task's settings), torch threads {torch.get_num_threads()}; "
          f"us per vector step, median of {args.repeats} x {args.calls} calls", flush=True)  # fmt: skip
    print(f"{'num_envs':>8} {'obs':>8} {'shared':>6}" + "".join(f"{p:>10}" for p in PARTS), flush=True)
    rows = []
    for n in args.num_envs:
        r = measure(args.env, n, args.calls, args.repeats)
        rows.append(r)
        cells = "".join(f"{r['us'][p]:>10.1f}" for p in PARTS)
        print(f"{n:>8,} {r['obs_dtype']:>8} {'yes' if r['shares_memory'] else 'no':>6}" + cells, flush=True)
    out = {"env_id": args.env, "torch_threads": torch.get_num_threads(), "parts": list(PARTS), "rows": rows}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return out


if __name__ == "__main__":
    main()
