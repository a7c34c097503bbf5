"""Shared test helpers: MuJoCo's models from site-packages, random states, error reports."""

from __future__ import annotations

from pathlib import Path

import gymnasium
import mujoco
import numpy as np

from robodyn import engine
from robodyn.engine.loader import without_contacts  # noqa: F401  (re-exported for the tests)

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
    print(f"[oracle] {label}: worst {worst:.3e} (tolerance {tol:.3g}) over {count} cases")


STATE = ("qpos", "qvel", "ctrl", "qacc_warmstart")


def rollout_states(
    mj: mujoco.MjModel, n: int, seed: int, every: int = 7, touching: bool = True, vel: float = 1.0
) -> dict[str, np.ndarray]:
    """n states (qpos, qvel, ctrl, qacc_warmstart) along MuJoCo rollouts (mj_step, the
    model's own options) with random controls. A robot with a free root starts above the
    floor at a random height and tilt ("dropped on the floor"); any other model starts from
    a random perturbation of qpos0. Every `every` steps a state is kept (if `touching`,
    only when MuJoCo found a contact). The state is what the next mj_step starts from."""
    rng = np.random.default_rng(seed)
    d = mujoco.MjData(mj)
    free = mj.njnt > 0 and mj.jnt_type[0] == mujoco.mjtJoint.mjJNT_FREE
    out: dict[str, list] = {k: [] for k in STATE}
    for _ in range(1000):
        mujoco.mj_resetData(mj, d)
        if free:
            d.qpos[2] += rng.uniform(0.0, 0.6)
            q = rng.normal(size=4)
            d.qpos[3:7] = q / np.linalg.norm(q)
        else:
            d.qpos[:] += rng.uniform(-0.3, 0.3, mj.nq)
            if mj.ngeom and mj.geom_type[0] == mujoco.mjtGeom.mjGEOM_PLANE and mj.nq > 1:
                d.qpos[1] += rng.uniform(0.0, 0.5)  # planar robots: rootz
        d.qvel[:] = rng.normal(0.0, vel, mj.nv)
        for t in range(300):
            d.ctrl[:] = rng.uniform(-1.0, 1.0, mj.nu)
            mujoco.mj_step(mj, d)
            if t % every == 0 and (d.ncon > 0 or not touching):
                for k in STATE:
                    out[k].append(getattr(d, k).copy())
                if len(out["qpos"]) == n:
                    return {k: np.array(v) for k, v in out.items()}
    raise AssertionError(f"rollouts found only {len(out['qpos'])} states")


def set_state(sim, states: dict[str, np.ndarray], mjd: mujoco.MjData | None = None, i: int | None = None):
    """Write states into every row of sim.data (i is None) or row i of them into MuJoCo's mjd."""
    if mjd is None:
        for k in STATE:
            getattr(sim.data, k)[:] = states[k]
        return
    for k in STATE:
        getattr(mjd, k)[:] = states[k][i]


def with_options(source: Path | str, flags: dict[str, str] | None = None, **options) -> str:
    """The MJCF text of `source` (a path or an MJCF string) with <option> attributes set
    (e.g. solver="Newton", tolerance="1e-15") and <option><flag> attributes `flags`."""
    import xml.etree.ElementTree as ET

    text = str(source)
    root = ET.fromstring(text) if text.lstrip().startswith("<") else ET.parse(text).getroot()
    option = root.find("option")
    if option is None:
        option = ET.Element("option")
        root.insert(0, option)
    for key, value in options.items():
        option.set(key, str(value))
    if flags:
        flag = option.find("flag")
        if flag is None:
            flag = ET.SubElement(option, "flag")
        for key, value in flags.items():
            flag.set(key, value)
    return ET.tostring(root, encoding="unicode")


def mj_efc_J(mj: mujoco.MjModel, d: mujoco.MjData) -> np.ndarray:
    """(nefc, nv) dense constraint Jacobian of MuJoCo's rows, whichever way MuJoCo stores
    it (dense, or sparse for nv >= 60 with the default jacobian="auto")."""
    n = d.nefc
    if not mujoco.mj_isSparse(mj):
        return np.array(d.efc_J).reshape(-1, mj.nv)[:n].copy()
    out = np.zeros((n, mj.nv))
    if n:
        mujoco.mju_sparse2dense(out, d.efc_J, d.efc_J_rownnz[:n], d.efc_J_rowadr[:n], d.efc_J_colind)
    return out


def trajectory_errors(text: str, states: dict, steps: int, ctrl=None, on_step=None) -> tuple[float, float]:
    """(worst qpos, worst qvel rel_err) of `steps` steps of the MJCF `text` from `states` in one
    batched Simulator against mj_step on one MjData per state; ctrl (steps, n, nu), if
    given, is written before every step in both; on_step(d), if given, sees each MjData
    after each of its steps."""
    mj = mujoco.MjModel.from_xml_string(text)
    n = len(states["qpos"])
    sim = engine.Simulator(engine.load_mjcf(text), batch=n)
    set_state(sim, states)
    datas = []
    for i in range(n):
        d = mujoco.MjData(mj)
        set_state(None, states, d, i)
        datas.append(d)
    worst_q = worst_v = 0.0
    for t in range(steps):
        if ctrl is not None:
            sim.data.ctrl[:] = ctrl[t]
        sim.step(1)
        for i, d in enumerate(datas):
            if ctrl is not None:
                d.ctrl[:] = ctrl[t, i]
            mujoco.mj_step(mj, d)
            if on_step is not None:
                on_step(d)
            worst_q = max(worst_q, rel_err(sim.data.qpos[i], d.qpos))
            worst_v = max(worst_v, rel_err(sim.data.qvel[i], d.qvel))
    return worst_q, worst_v
