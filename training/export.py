"""Export a trained stable-baselines3 policy to ONNX: raw observation in, deterministic action out.

    from robodyn.training.export import export_onnx
    path = export_onnx("training/policies/crane_ppo.zip")  # -> training/policies/crane_ppo.onnx

or `robodyn export training/policies/crane_ppo.zip --onnx [--out FILE]`.

The ONNX graph computes what evaluation does with the model (training.evaluate.SB3Policy):

1. the saved VecNormalize observation statistics, folded in as constants:
   clip((obs - mean) / sqrt(var + epsilon), -clip_obs, clip_obs), in the observation's own
   dtype (float64 for RoboDyn's tasks, as VecNormalize computes it in numpy);
2. the cast to float32 and the policy's features extractor and actor network;
3. the deterministic action SB3's `predict(obs, deterministic=True)` returns: the mean action
   of a Gaussian (PPO, A2C, gSDE included), tanh of it for a squashed policy (SAC; TD3 and
   DDPG squash in their actor), then, as `predict` does, the squashed action rescaled from
   [-1, 1] to the action box, or an unsquashed one clipped to it.

Input `obs` (batch, obs_dim), output `action` (batch, action_dim) float32; the batch size
is free. The file's metadata (`metadata_props`) names the env, the algorithm, the source
model and the action bounds.

Exported: PPO, A2C, SAC, TD3 and DDPG models with a Box observation and a Box action space.
Refused with an ExportError: a missing file, a file that is not a stable-baselines3 model
zip, another algorithm or policy class, other spaces, and a residual policy (its action is a
correction to a baseline the network does not contain).
"""

from __future__ import annotations

import json
import warnings
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from robodyn.engine.errors import RoboDynError
from robodyn.training.evaluate import PolicyError, load_sb3_policy, read_model_meta

# the policy classes whose deterministic action export knows how to compute, by the module
# stable-baselines3 defines them in (the zip's "data" names it), with the algorithms using them
POLICY_MODULES = {
    "stable_baselines3.common.policies": ("PPO", "A2C"),  # ActorCriticPolicy and its Cnn/MultiInput kin
    "stable_baselines3.sac.policies": ("SAC",),
    "stable_baselines3.td3.policies": ("TD3", "DDPG"),
}
SUPPORTED = "PPO, A2C, SAC, TD3, DDPG with Box observations and actions"
OPSET = 17


class ExportError(RoboDynError, ValueError):
    """A model file export_onnx refuses: missing, not an SB3 zip, an unsupported algorithm."""


def check_exportable(path: str | Path) -> Path:
    """`path` as an existing stable-baselines3 model zip of a policy class export supports;
    an ExportError saying what it is instead (a missing file, a directory, a file that is not a
    zip or has no SB3 "data" entry, the policy class of another algorithm)."""
    path = Path(path)
    if path.is_dir():
        raise ExportError(f"{str(path)!r} is a directory, not a model .zip")
    if not path.is_file():
        raise ExportError(f"model file {str(path)!r} does not exist")
    try:
        with zipfile.ZipFile(path) as z:
            data = json.loads(z.read("data"))
    except (zipfile.BadZipFile, KeyError, OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ExportError(
            f"{str(path)!r} is not a stable-baselines3 model zip (no readable 'data' entry: {e})"
        ) from None
    policy_class = data.get("policy_class") if isinstance(data, dict) else None
    module = policy_class.get("__module__") if isinstance(policy_class, dict) else None
    if module is None:
        raise ExportError(
            f"{str(path)!r} is not a stable-baselines3 model zip (its data names no policy class)"
        )
    if module not in POLICY_MODULES:
        raise ExportError(
            f"{str(path)!r} holds a policy of {module!r}, which export does not support; "
            f"it exports {SUPPORTED}"
        )
    return path


def _actor_module(model, normalizer):
    """A torch module: raw observation batch -> the deterministic action SB3's predict returns
    for `model` after `normalizer`'s observation normalization (module docstring)."""
    import torch
    from gymnasium import spaces
    from stable_baselines3.common.distributions import (
        DiagGaussianDistribution,
        StateDependentNoiseDistribution,
    )
    from stable_baselines3.common.policies import ActorCriticPolicy, BaseModel

    policy = model.policy
    obs_space, act_space = model.observation_space, model.action_space
    if not isinstance(obs_space, spaces.Box) or not isinstance(act_space, spaces.Box):
        raise ExportError(
            f"export needs Box observation and action spaces, got {type(obs_space).__name__} and "
            f"{type(act_space).__name__}; it exports {SUPPORTED}"
        )
    obs_dtype = torch.float64 if obs_space.dtype == np.float64 else torch.float32

    class DeterministicActor(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.policy = policy
            self.normalize = normalizer is not None and normalizer.norm_obs
            if self.normalize:
                rms = normalizer.obs_rms
                self.register_buffer("mean", torch.as_tensor(np.asarray(rms.mean), dtype=obs_dtype))
                std = np.sqrt(np.asarray(rms.var) + normalizer.epsilon)
                self.register_buffer("std", torch.as_tensor(std, dtype=obs_dtype))
                self.clip_obs = float(normalizer.clip_obs)
            self.register_buffer("low", torch.as_tensor(act_space.low, dtype=torch.float32))
            self.register_buffer("high", torch.as_tensor(act_space.high, dtype=torch.float32))

        def forward(self, obs):
            x = obs
            if self.normalize:  # VecNormalize.normalize_obs, in the observation's dtype
                x = torch.clamp((x - self.mean) / self.std, -self.clip_obs, self.clip_obs)
            x = x.to(torch.float32)  # what predict's obs_as_tensor + preprocess_obs do
            if isinstance(policy, ActorCriticPolicy):  # PPO, A2C: the distribution's mode
                features = BaseModel.extract_features(policy, x, policy.pi_features_extractor)
                action = policy.action_net(policy.mlp_extractor.forward_actor(features))
                dist = policy.action_dist
                if isinstance(dist, StateDependentNoiseDistribution) and dist.bijector is not None:
                    action = torch.tanh(action)
            elif hasattr(policy.actor, "get_action_dist_params"):  # SAC: tanh of the mean
                mean, _, _ = policy.actor.get_action_dist_params(x)
                action = torch.tanh(mean)
            else:  # TD3, DDPG: the actor ends in tanh
                action = policy.actor(x)
            if policy.squash_output:  # BasePolicy.unscale_action: [-1, 1] -> [low, high]
                return self.low + 0.5 * (action + 1.0) * (self.high - self.low)
            return torch.clamp(action, self.low, self.high)  # predict's np.clip

    if isinstance(policy, ActorCriticPolicy):
        if not isinstance(policy.action_dist, DiagGaussianDistribution | StateDependentNoiseDistribution):
            raise ExportError(
                f"export computes a Gaussian policy's mode; this policy's distribution is "
                f"{type(policy.action_dist).__name__}; it exports {SUPPORTED}"
            )
    module = DeterministicActor().eval()
    return module, obs_dtype


@dataclass
class ExportResult:
    """What export_onnx wrote, and how closely the file reproduces SB3's predict."""

    path: Path
    algo: str
    obs_dim: int
    obs_dtype: str  # the input's dtype: the observation space's
    action_dim: int
    normalized: bool  # VecNormalize's observation normalization folded in
    checked: int  # observations the file was run on (onnxruntime) against SB3's predict
    max_error: float  # the largest |ONNX action - predict action| over them


def export_onnx(model_path: str | Path, out: str | Path | None = None, check: int = 256) -> ExportResult:
    """Write the ONNX file computing the deterministic action of the SB3 model `model_path`
    from a raw observation (module docstring), with the VecNormalize statistics its sidecar
    names folded in; `out` defaults to the model's path with the suffix .onnx. Then run it
    with onnxruntime on `check` observations (drawn about the statistics' mean, 3 standard
    deviations wide, so that normalization and action clipping both act) against SB3's
    predict after VecNormalize's normalize_obs; an ExportError, and the file removed, if an
    action differs by more than 1e-5 (relative to the action bounds). An ExportError, before
    anything is written, for a file export refuses."""
    import onnx
    import torch

    path = check_exportable(model_path)
    try:
        meta = read_model_meta(path)
        sb3 = load_sb3_policy(path)
    except PolicyError as e:
        raise ExportError(str(e)) from None
    if sb3.residual is not None:
        raise ExportError(
            f"{str(path)!r} is a residual policy on the baseline {sb3.residual['base']!r} (the env gets "
            f"clip(baseline + {sb3.residual['scale']} * action)): an ONNX file of the network alone "
            "would compute only the correction"
        )
    module, obs_dtype = _actor_module(sb3.model, sb3.obs_normalizer)
    out = Path(out) if out is not None else path.with_suffix(".onnx")
    obs_dim = int(np.prod(sb3.model.observation_space.shape))
    example = torch.zeros((2, obs_dim), dtype=obs_dtype)
    out.parent.mkdir(parents=True, exist_ok=True)
    with torch.no_grad(), warnings.catch_warnings():
        # torch 2.13 (the pinned version) calls its TorchScript exporter legacy and warns so
        warnings.simplefilter("ignore", DeprecationWarning)
        # dynamo=False: the TorchScript exporter traces this small MLP without further
        # dependencies; the dynamo exporter (torch's default since 2.9) needs the onnxscript
        # package, which adds nothing for a fixed graph of Linear, tanh, clamp and arithmetic.
        torch.onnx.export(
            module,
            (example,),
            str(out),
            dynamo=False,
            input_names=["obs"],
            output_names=["action"],
            dynamic_axes={"obs": {0: "batch"}, "action": {0: "batch"}},
            opset_version=OPSET,
        )
    proto = onnx.load(str(out))
    space = sb3.model.action_space
    info = {
        "source": path.name,
        "algo": str(meta.get("algo") or type(sb3.model).__name__).upper(),
        "env_id": str(meta.get("env_id") or ""),
        "vecnormalize": str(meta.get("vecnormalize") or ""),
        "action_low": json.dumps(space.low.tolist()),
        "action_high": json.dumps(space.high.tolist()),
        "computes": "deterministic action of stable-baselines3 predict from the raw observation",
    }
    for key, value in info.items():
        entry = proto.metadata_props.add()
        entry.key, entry.value = key, value
    onnx.checker.check_model(proto)
    onnx.save(proto, str(out))
    result = ExportResult(
        path=out,
        algo=info["algo"],
        obs_dim=obs_dim,
        obs_dtype=str(np.dtype(sb3.model.observation_space.dtype)),
        action_dim=int(np.prod(space.shape)),
        normalized=bool(module.normalize),
        checked=int(check),
        max_error=0.0,
    )
    if check > 0:
        result.max_error = _check_against_predict(out, sb3, check)
        scale = max(1.0, float(np.max(np.abs(np.concatenate([space.low, space.high])))))
        if not result.max_error <= 1e-5 * scale:
            out.unlink()
            raise ExportError(
                f"the ONNX graph of {str(path)!r} differs from SB3's predict by {result.max_error:.3g} "
                f"(a network export cannot trace?); nothing was written. It exports {SUPPORTED}"
            )
    return result


def _check_against_predict(path: Path, sb3, n: int) -> float:
    """max |action of the ONNX file at `path` (onnxruntime) - SB3's predict(normalize_obs(obs),
    deterministic=True)| over n observations drawn about the normalization's mean (3 standard
    deviations wide, or standard normal without statistics)."""
    import onnxruntime

    space = sb3.model.observation_space
    rng = np.random.default_rng(0)
    noise = rng.normal(size=(n, *space.shape)) * 3.0
    norm = sb3.obs_normalizer
    if norm is not None and norm.norm_obs:
        obs = np.asarray(norm.obs_rms.mean) + np.sqrt(np.asarray(norm.obs_rms.var)) * noise
    else:
        obs = noise
    obs = obs.astype(space.dtype)
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    got = session.run(None, {"obs": obs.reshape(n, -1)})[0]
    want = predict_actions(sb3, obs)
    return float(np.max(np.abs(got.astype(np.float64) - want.reshape(n, -1))))


def predict_actions(sb3, obs: np.ndarray) -> np.ndarray:
    """The actions evaluation takes for a batch of raw observations (training.evaluate's
    SB3Policy.act): VecNormalize's normalize_obs, then SB3's predict(deterministic=True)."""
    if sb3.obs_normalizer is not None:
        obs = sb3.obs_normalizer.normalize_obs(obs)
    action, _ = sb3.model.predict(obs, deterministic=True)
    return np.asarray(action, dtype=np.float64)
