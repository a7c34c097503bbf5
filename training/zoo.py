"""The RL Zoo's tuned PPO hyperparameters for Gymnasium's MuJoCo tasks, for their RoboDyn ports.

`robodyn train RoboDyn/Hopper-v5 --algo ppo --hyperparams zoo` trains with the settings the RL
Baselines3 Zoo publishes for the same task, so a RoboDyn run can be set beside the Zoo's
results and beside a run on Gymnasium's own env. Source: rl-baselines3-zoo,
hyperparams/ppo.yml (https://github.com/DLR-RM/rl-baselines3-zoo/blob/master/hyperparams/ppo.yml,
read at commit 00128b5d46d497b772f3bd891ae9f520919e8971), whose entries name the older
MuJoCo versions of the tasks (Hopper-v3, Reacher-v2, ...): the v5 tasks keep their model,
observation and reward. The Zoo's benchmark (its benchmark.md) reports PPO on Hopper-v3 at a
mean return of 2410 +- 10 (150,000 evaluation steps, 1M training steps).

Each entry: `n_envs`, `n_timesteps` (the Zoo's budget), `normalize` (VecNormalize of
observations and rewards) and the PPO keywords. `policy_kwargs`' activation is named
("relu"), so the sidecar stays JSON; training.train turns it into torch's class.
"""

from __future__ import annotations

from robodyn.engine.errors import RoboDynError


class ZooError(RoboDynError, ValueError):
    """No Zoo settings for this task or algorithm."""


# the policy the Zoo's tuned MuJoCo entries share
_TUNED_POLICY = {
    "log_std_init": -2,
    "ortho_init": False,
    "activation_fn": "relu",
    "net_arch": {"pi": [256, 256], "vf": [256, 256]},
}

# RoboDyn id -> (the Zoo's entry it takes, its settings)
PPO_ZOO = {
    "RoboDyn/Hopper-v5": (
        "Hopper-v3",
        {
            "n_envs": 1,
            "n_timesteps": 1_000_000,
            "normalize": True,
            "algo_kwargs": {
                "batch_size": 32,
                "n_steps": 512,
                "gamma": 0.999,
                "learning_rate": 9.80828e-05,
                "ent_coef": 0.00229519,
                "clip_range": 0.2,
                "n_epochs": 5,
                "gae_lambda": 0.99,
                "max_grad_norm": 0.7,
                "vf_coef": 0.835671,
                "policy_kwargs": _TUNED_POLICY,
            },
        },
    ),
    "RoboDyn/HalfCheetah-v5": (
        "HalfCheetah-v3",
        {
            "n_envs": 1,
            "n_timesteps": 1_000_000,
            "normalize": True,
            "algo_kwargs": {
                "batch_size": 64,
                "n_steps": 512,
                "gamma": 0.98,
                "learning_rate": 2.0633e-05,
                "ent_coef": 0.000401762,
                "clip_range": 0.1,
                "n_epochs": 20,
                "gae_lambda": 0.92,
                "max_grad_norm": 0.8,
                "vf_coef": 0.58096,
                "policy_kwargs": _TUNED_POLICY,
            },
        },
    ),
    "RoboDyn/Walker2d-v5": (
        "Walker2d-v3",
        {
            "n_envs": 1,
            "n_timesteps": 1_000_000,
            "normalize": True,
            "algo_kwargs": {
                "batch_size": 32,
                "n_steps": 512,
                "gamma": 0.99,
                "learning_rate": 5.05041e-05,
                "ent_coef": 0.000585045,
                "clip_range": 0.1,
                "n_epochs": 20,
                "gae_lambda": 0.95,
                "max_grad_norm": 1,
                "vf_coef": 0.871923,
            },
        },
    ),
    "RoboDyn/Humanoid-v5": (
        "Humanoid-v3",
        {
            "n_envs": 1,
            "n_timesteps": 10_000_000,
            "normalize": True,
            "algo_kwargs": {
                "batch_size": 256,
                "n_steps": 512,
                "gamma": 0.95,
                "learning_rate": 3.56987e-05,
                "ent_coef": 0.00238306,
                "clip_range": 0.3,
                "n_epochs": 5,
                "gae_lambda": 0.9,
                "max_grad_norm": 2,
                "vf_coef": 0.431892,
                "policy_kwargs": _TUNED_POLICY,
            },
        },
    ),
    "RoboDyn/HumanoidStandup-v5": (
        "HumanoidStandup-v3",
        {
            "n_envs": 1,
            "n_timesteps": 10_000_000,
            "normalize": True,
            "algo_kwargs": {
                "batch_size": 32,
                "n_steps": 512,
                "gamma": 0.99,
                "learning_rate": 2.55673e-05,
                "ent_coef": 3.62109e-06,
                "clip_range": 0.3,
                "n_epochs": 20,
                "gae_lambda": 0.9,
                "max_grad_norm": 0.7,
                "vf_coef": 0.430793,
                "policy_kwargs": _TUNED_POLICY,
            },
        },
    ),
    "RoboDyn/Ant-v5": (
        "Ant-v3",
        {"n_envs": 1, "n_timesteps": 1_000_000, "normalize": True, "algo_kwargs": {}},
    ),
    "RoboDyn/Swimmer-v5": (
        "Swimmer-v3",
        {"n_envs": 1, "n_timesteps": 1_000_000, "normalize": True, "algo_kwargs": {"gamma": 0.9999}},
    ),
    "RoboDyn/InvertedPendulum-v5": (
        "InvertedPendulum-v3",
        {
            "n_envs": 1,
            "n_timesteps": 1_000_000,
            "normalize": True,
            "algo_kwargs": {
                "batch_size": 64,
                "n_steps": 32,
                "gamma": 0.999,
                "learning_rate": 0.000222425,
                "ent_coef": 1.37976e-07,
                "clip_range": 0.4,
                "n_epochs": 5,
                "gae_lambda": 0.9,
                "max_grad_norm": 0.3,
                "vf_coef": 0.19816,
            },
        },
    ),
    "RoboDyn/InvertedDoublePendulum-v5": (
        "InvertedDoublePendulum-v3",
        {
            "n_envs": 1,
            "n_timesteps": 1_000_000,
            "normalize": True,
            "algo_kwargs": {
                "batch_size": 512,
                "n_steps": 128,
                "gamma": 0.98,
                "learning_rate": 0.000155454,
                "ent_coef": 1.05057e-06,
                "clip_range": 0.4,
                "n_epochs": 10,
                "gae_lambda": 0.8,
                "max_grad_norm": 0.5,
                "vf_coef": 0.695929,
            },
        },
    ),
    "RoboDyn/Reacher-v5": (
        "Reacher-v2",
        {
            "n_envs": 1,
            "n_timesteps": 1_000_000,
            "normalize": True,
            "algo_kwargs": {
                "batch_size": 32,
                "n_steps": 512,
                "gamma": 0.9,
                "learning_rate": 0.000104019,
                "ent_coef": 7.52585e-08,
                "clip_range": 0.3,
                "n_epochs": 5,
                "gae_lambda": 1.0,
                "max_grad_norm": 0.9,
                "vf_coef": 0.950368,
            },
        },
    ),
}


def zoo_settings(env_id: str, algo: str) -> dict:
    """The Zoo's settings for `env_id` (a copy): n_envs, n_timesteps, normalize, algo_kwargs;
    ZooError naming the tasks it has for an algorithm or task it has none for."""
    import copy

    if algo != "ppo" or env_id not in PPO_ZOO:
        have = ", ".join(sorted(PPO_ZOO))
        raise ZooError(f"the RL Zoo's hyperparameters are here for PPO on {have}; not {algo} on {env_id}")
    return copy.deepcopy(PPO_ZOO[env_id][1])
