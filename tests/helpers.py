"""Shared test helpers: MuJoCo's models from site-packages, random states, error reports."""

from __future__ import annotations

from pathlib import Path

import gymnasium
import mujoco
import numpy as np

import engine
from engine.model import without_contacts  # noqa: F401  (re-exported for the tests)

REPO = Path(__file__).resolve().parents[1]
ASSETS = REPO / "assets"
GYM_ASSETS = Path(gymnasium.__file__).parent / "envs" / "mujoco" / "assets"


def gym_model_paths() -> list[Path]:
    """Every MJCF model that ships inside the installed gymnasium package (never copied)."""
    paths = sorted(GYM_ASSETS.glob("*.xml"))
    assert len(paths) >= 10, f"expected gymnasium's MuJoCo models in {GYM_ASSETS}, found {len(paths)}"
    return paths


def load_pair(source: Path | str) -> tuple[engine.Model, mujoco.MjModel]:
    """(our Model, MuJoCo's MjModel) compiled from the same MJCF path or text."""
    text = str(source)
    if not text.lstrip().startswith("<"):
        text = Path(source).read_text()
    return engine.load_mjcf(text), mujoco.MjModel.from_xml_string(text)


def random_states(mj: mujoco.MjModel, n: int, seed: int = 0, vel: float = 2.0):
    """n random (qpos, qvel, ctrl): joints sampled around qpos0 (quaternions uniform),
    velocities in [-vel, vel], controls across ctrlrange (or [-1, 1])."""
    rng = np.random.default_rng(seed)
    qpos = np.tile(mj.qpos0, (n, 1))
    for j in range(mj.njnt):
        a = mj.jnt_qposadr[j]
        t = mj.jnt_type[j]
        if t == mujoco.mjtJoint.mjJNT_FREE:
            qpos[:, a : a + 3] += rng.uniform(-1, 1, (n, 3))
            q = rng.normal(size=(n, 4))
            qpos[:, a + 3 : a + 7] = q / np.linalg.norm(q, axis=1, keepdims=True)
        elif t == mujoco.mjtJoint.mjJNT_BALL:
            q = rng.normal(size=(n, 4))
            qpos[:, a : a + 4] = q / np.linalg.norm(q, axis=1, keepdims=True)
        else:
            qpos[:, a] += rng.uniform(-1.5, 1.5, n)
    qvel = rng.uniform(-vel, vel, (n, mj.nv))
    lo = np.where(mj.actuator_ctrllimited, mj.actuator_ctrlrange[:, 0], -1.0)
    hi = np.where(mj.actuator_ctrllimited, mj.actuator_ctrlrange[:, 1], 1.0)
    ctrl = rng.uniform(lo, hi, (n, mj.nu)) if mj.nu else np.zeros((n, 0))
    return qpos, qvel, ctrl


def rel_err(ours: np.ndarray, ref: np.ndarray) -> float:
    """max |ours - ref| / max(1, max |ref|): relative for large values, absolute near zero."""
    ours = np.asarray(ours, dtype=float)
    ref = np.asarray(ref, dtype=float)
    if ref.size == 0:
        return 0.0
    return float(np.max(np.abs(ours - ref)) / max(1.0, float(np.max(np.abs(ref)))))


def report(label: str, worst: float, tol: float, count: int) -> None:
    """Print the worst error seen (pytest -s shows it; -rA keeps it in the summary)."""
    print(f"[oracle] {label}: worst {worst:.3e} (tolerance {tol:.0e}) over {count} cases")
