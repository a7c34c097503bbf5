"""Oracle tests: the engine's smooth dynamics against MuJoCo, stage by stage, state by state.

For every gymnasium model (loaded through `without_contacts`, never copied) and every
`assets/tests/smooth_*.xml` model, N_STATES random states are set into one batched
Simulator and, one by one, into MuJoCo. Each quantity of mj_forward is compared field by
field; then the Jacobians (mj_jac), J^T f (mj_applyFT) and inverse dynamics (mj_inverse).

Inputs go beyond random_states: controls are scaled by 1.5 so that ctrlrange clamping (and
through it forcerange clamping) is exercised, and every state carries random qfrc_applied
and xfrc_applied so that qfrc_smooth / qacc see them.

Errors are `rel_err` per state (max |ours - ref| / max(1, max |ref|)); each test reports the
worst over the states and asserts it compared at least N_STATES of them.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import NamedTuple

import mujoco
import numpy as np
import pytest

from robodyn import engine
from tests.helpers import ASSETS, gym_model_paths, load_pair, random_states, rel_err, report, without_contacts

N_STATES = 100
TOL_POS = 1e-10  # positions, orientations, inertias, Jacobians, M and its factor, forces
TOL_ACC = 1e-8  # accelerations (a solve with M)

TEST_MODELS = sorted((ASSETS / "tests").glob("smooth_*.xml"))
MODEL_PATHS: dict[str, Path] = {p.name: p for p in gym_model_paths()}
MODEL_PATHS.update({p.name: p for p in TEST_MODELS})
MODEL_NAMES = list(MODEL_PATHS)


def _source(name: str) -> str | Path:
    path = MODEL_PATHS[name]
    return path if path.parent == ASSETS / "tests" else without_contacts(path)


class Case(NamedTuple):
    """One model, N_STATES random inputs, our forward outputs and MuJoCo's, per state."""

    model: engine.Model
    mj: mujoco.MjModel
    qpos: np.ndarray
    qvel: np.ndarray
    ctrl: np.ndarray
    qfrc_applied: np.ndarray
    xfrc_applied: np.ndarray
    ours: dict[str, np.ndarray]  # field -> (N, ...) after Simulator.forward()
    ref: dict[str, np.ndarray]  # field -> (N, ...) after mujoco.mj_forward, state by state


def _inputs(mj: mujoco.MjModel, n: int, seed: int):
    qpos, qvel, ctrl = random_states(mj, n, seed=seed)
    rng = np.random.default_rng(seed + 1000)
    ctrl = 1.5 * ctrl  # a third of the range lies outside ctrlrange: clamping is exercised
    qfrc_applied = rng.normal(0.0, 1.0, (n, mj.nv))
    xfrc_applied = rng.normal(0.0, 0.5, (n, mj.nbody, 6))
    xfrc_applied[:, 0] = 0.0  # MuJoCo ignores forces on the world body
    return qpos, qvel, ctrl, qfrc_applied, xfrc_applied


def new_sim(model: engine.Model, case: Case) -> engine.Simulator:
    """A Simulator with one row per state of `case`, inputs set, not yet forwarded."""
    sim = engine.Simulator(model, batch=len(case.qpos))
    d = sim.data
    d.qpos[:] = case.qpos
    d.qvel[:] = case.qvel
    d.ctrl[:] = case.ctrl
    d.qfrc_applied[:] = case.qfrc_applied
    d.xfrc_applied[:] = case.xfrc_applied
    return sim


def set_mj_state(mj: mujoco.MjModel, d: mujoco.MjData, case: Case, i: int) -> None:
    d.qpos[:] = case.qpos[i]
    d.qvel[:] = case.qvel[i]
    d.ctrl[:] = case.ctrl[i]
    d.qfrc_applied[:] = case.qfrc_applied[i]
    d.xfrc_applied[:] = case.xfrc_applied[i]


def _sparse_dense(vals, rownnz, rowadr, colind, nrow, ncol) -> np.ndarray:
    out = np.zeros((nrow, ncol))
    if nrow and ncol:
        mujoco.mju_sparse2dense(out, np.asarray(vals, dtype=float), rownnz, rowadr, colind)
    return out


# field -> how to read it from our Data (after forward) and from MjData (after mj_forward)
_DIRECT = (
    "xpos xquat xmat xipos ximat xanchor xaxis geom_xpos geom_xmat site_xpos site_xmat "
    "subtree_com cinert cdof crb cvel cdof_dot qLDiagInv "
    "ten_length ten_velocity actuator_length actuator_velocity actuator_force qfrc_actuator "
    "qfrc_bias qfrc_spring qfrc_damper qfrc_fluid qfrc_passive qfrc_smooth qacc_smooth qacc"
).split()

FIELD_TOL = {name: TOL_POS for name in _DIRECT}
FIELD_TOL.update(M=TOL_POS, qLD=TOL_POS, ten_J=TOL_POS, actuator_moment=TOL_POS)
FIELD_TOL.update(qacc_smooth=TOL_ACC, qacc=TOL_ACC)


def _mj_fields(mj: mujoco.MjModel, d: mujoco.MjData) -> dict[str, np.ndarray]:
    out = {name: np.array(getattr(d, name), dtype=float).reshape(getattr(d, name).shape) for name in _DIRECT}
    M = np.zeros((mj.nv, mj.nv))
    mujoco.mj_fullM(mj, d, M)
    out["M"] = M
    out["qLD"] = _sparse_dense(d.qLD, mj.M_rownnz, mj.M_rowadr, mj.M_colind, mj.nv, mj.nv)
    out["ten_J"] = _sparse_dense(
        d.ten_J, mj.ten_J_rownnz, mj.ten_J_rowadr, mj.ten_J_colind, mj.ntendon, mj.nv
    )
    out["actuator_moment"] = _sparse_dense(
        d.actuator_moment, d.moment_rownnz, d.moment_rowadr, d.moment_colind, mj.nu, mj.nv
    )
    return out


@functools.cache
def get_case(name: str) -> Case:
    """Forward N_STATES random states of model `name` through both engines (cached)."""
    model, mj = load_pair(_source(name))
    qpos, qvel, ctrl, qfrc_applied, xfrc_applied = _inputs(mj, N_STATES, seed=sum(map(ord, name)))
    case = Case(model, mj, qpos, qvel, ctrl, qfrc_applied, xfrc_applied, {}, {})
    sim = new_sim(model, case)
    sim.forward()
    for name_ in _DIRECT:
        case.ours[name_] = np.array(getattr(sim.data, name_))
    case.ours["M"] = sim.full_mass_matrix()
    # qLD in dense form (L strictly below the diagonal, D on it): MuJoCo 4 drops from its
    # pattern the known-zero entries of "simple" bodies, so the packed layouts can differ
    m = model
    case.ours["qLD"] = np.stack(
        [_sparse_dense(row, m.M_rownnz, m.M_rowadr, m.M_colind, m.nv, m.nv) for row in sim.data.qLD]
    )
    case.ours["ten_J"] = np.array(sim.data.ten_J)
    case.ours["actuator_moment"] = np.array(sim.data.actuator_moment)

    d = mujoco.MjData(mj)
    refs = []
    for i in range(N_STATES):
        set_mj_state(mj, d, case, i)
        mujoco.mj_forward(mj, d)
        refs.append(_mj_fields(mj, d))
    for key in refs[0]:
        case.ref[key] = np.stack([r[key] for r in refs])
    return case


def _field_size(mj: mujoco.MjModel, d: mujoco.MjData, field: str) -> int:
    if field == "M":
        return mj.nv * mj.nv
    if field == "qLD":
        return mj.nv * mj.nv
    if field == "actuator_moment":
        return mj.nu * mj.nv
    if field == "ten_J":
        return mj.ntendon * mj.nv
    return np.asarray(getattr(d, field)).size


def _mj_model(name: str) -> mujoco.MjModel:
    source = _source(name)
    if isinstance(source, Path):
        return mujoco.MjModel.from_xml_path(str(source))
    return mujoco.MjModel.from_xml_string(source)


def _params(fields):
    """(model, field) parameters for every model, skipping fields that are empty there."""
    params = []
    for name in MODEL_NAMES:
        mj = _mj_model(name)
        d = mujoco.MjData(mj)
        for field in fields:
            if _field_size(mj, d, field) == 0:
                continue
            params.append(pytest.param(name, field, id=f"{name}-{field}"))
    return params


def _model_params(check: str):
    out = []
    for name in MODEL_NAMES:
        out.append(pytest.param(name, id=name))
    return out


def _worst(errors: list[float]) -> tuple[float, int]:
    i = int(np.argmax(errors))
    return float(errors[i]), i


def _align_quat(ours: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """ours with each quaternion's sign flipped to match ref (q and -q are one rotation)."""
    sign = np.where(np.sum(ours * ref, axis=-1, keepdims=True) < 0, -1.0, 1.0)
    return ours * sign


@pytest.mark.parametrize(("name", "field"), _params(list(FIELD_TOL)))
def test_forward_field(name: str, field: str):
    """One mj_forward quantity, ours vs MuJoCo, over N_STATES random states."""
    case = get_case(name)
    ours, ref = case.ours[field], case.ref[field]
    assert ours.shape == ref.shape, f"{field}: shape {ours.shape} vs MuJoCo {ref.shape}"
    if field == "xquat":
        ours = _align_quat(ours, ref)
    tol = FIELD_TOL[field]
    errors = [rel_err(ours[i], ref[i]) for i in range(len(ref))]
    worst, i = _worst(errors)
    report(f"{name} {field}", worst, tol, len(errors))
    assert len(errors) >= N_STATES
    assert worst <= tol, (
        f"{name} {field}: state {i}: rel_err {worst:.3e} > {tol:.0e}\n"
        f"qpos={case.qpos[i].tolist()}\nqvel={case.qvel[i].tolist()}\n"
        f"ours={ours[i].tolist()}\nmujoco={ref[i].tolist()}"
    )


@pytest.mark.parametrize("name", _model_params("jacobian"))
def test_jacobian(name: str):
    """sim.jacobian(body, point) vs mj_jac for every body at a random point near it."""
    case = get_case(name)
    mj = case.mj
    sim = new_sim(case.model, case)
    sim.forward()
    d = mujoco.MjData(mj)
    rng = np.random.default_rng(7)
    points = case.ref["xpos"] + rng.uniform(-0.3, 0.3, case.ref["xpos"].shape)  # (N, nbody, 3)
    ours = {}
    for b in range(mj.nbody):
        ours[b] = sim.jacobian(b, points[:, b])
        default = sim.jacobian(b)  # default point: the body origin
        ours[("origin", b)] = default
    worst, where, count = 0.0, None, 0
    jacp = np.zeros((3, mj.nv))
    jacr = np.zeros((3, mj.nv))
    for i in range(N_STATES):
        set_mj_state(mj, d, case, i)
        mujoco.mj_forward(mj, d)
        for b in range(mj.nbody):
            for key, point in ((b, points[i, b]), (("origin", b), d.xpos[b])):
                mujoco.mj_jac(mj, d, jacp, jacr, np.array(point), b)
                op, orr = ours[key]
                err = max(rel_err(op[i], jacp), rel_err(orr[i], jacr))
                if err > worst:
                    worst, where = err, (i, key)
                count += 1
    report(f"{name} jacobian", worst, TOL_POS, count)
    assert count >= N_STATES * mj.nbody * 2
    assert worst <= TOL_POS, f"{name}: worst Jacobian error {worst:.3e} at (state, body) {where}"


@pytest.mark.parametrize("name", _model_params("apply_force"))
def test_apply_force(name: str):
    """sim.apply_force(body, force, torque, point) vs mj_applyFT for every body."""
    case = get_case(name)
    mj = case.mj
    sim = new_sim(case.model, case)
    sim.forward()
    rng = np.random.default_rng(11)
    n = N_STATES
    force = rng.normal(0, 2.0, (mj.nbody, n, 3))
    torque = rng.normal(0, 1.0, (mj.nbody, n, 3))
    points = np.swapaxes(case.ref["xipos"], 0, 1) + rng.uniform(-0.3, 0.3, (mj.nbody, n, 3))
    ours = [sim.apply_force(b, force[b], torque[b], points[b]) for b in range(mj.nbody)]
    ours_com = [sim.apply_force(b, force[b]) for b in range(mj.nbody)]  # default point: xipos
    d = mujoco.MjData(mj)
    worst, where, count = 0.0, None, 0
    for i in range(n):
        set_mj_state(mj, d, case, i)
        mujoco.mj_forward(mj, d)
        for b in range(mj.nbody):
            ref = np.zeros(mj.nv)
            mujoco.mj_applyFT(mj, d, force[b, i], torque[b, i], points[b, i], b, ref)
            ref_com = np.zeros(mj.nv)
            mujoco.mj_applyFT(mj, d, force[b, i], np.zeros(3), d.xipos[b].copy(), b, ref_com)
            err = max(rel_err(ours[b][i], ref), rel_err(ours_com[b][i], ref_com))
            if err > worst:
                worst, where = err, (i, b)
            count += 1
    report(f"{name} apply_force", worst, TOL_POS, count)
    assert count >= N_STATES * mj.nbody
    assert worst <= TOL_POS, f"{name}: worst J^T f error {worst:.3e} at (state, body) {where}"


@pytest.mark.parametrize("name", _model_params("inverse"))
def test_inverse(name: str):
    """sim.inverse() with a random qacc vs mj_inverse's qfrc_inverse."""
    case = get_case(name)
    mj = case.mj
    sim = new_sim(case.model, case)
    qacc = np.random.default_rng(13).uniform(-5.0, 5.0, (N_STATES, mj.nv))
    sim.data.qacc[:] = qacc
    ours = np.array(sim.inverse())
    d = mujoco.MjData(mj)
    errors = []
    for i in range(N_STATES):
        set_mj_state(mj, d, case, i)
        d.qacc[:] = qacc[i]
        mujoco.mj_inverse(mj, d)
        errors.append(rel_err(ours[i], d.qfrc_inverse))
    worst, i = _worst(errors)
    report(f"{name} inverse", worst, TOL_POS, len(errors))
    assert len(errors) >= N_STATES
    assert worst <= TOL_POS, f"{name}: state {i}: qfrc_inverse rel_err {worst:.3e}"


@pytest.mark.parametrize("name", _model_params("reused"))
def test_forward_on_reused_simulator(name: str):
    """forward() on a Simulator that already computed other states (here: the same states
    in another order) must give MuJoCo's M, qLD and qacc: nothing may leak from before."""
    case = get_case(name)
    sim = new_sim(case.model, case)
    order = np.roll(np.arange(N_STATES), 1)
    for field in ("qpos", "qvel", "ctrl", "qfrc_applied", "xfrc_applied"):
        getattr(sim.data, field)[:] = getattr(case, field)[order]
    sim.forward()
    for field in ("qpos", "qvel", "ctrl", "qfrc_applied", "xfrc_applied"):
        getattr(sim.data, field)[:] = getattr(case, field)
    sim.forward()
    m = case.model
    ours = {
        "M": sim.full_mass_matrix(),
        "qLD": np.stack(
            [_sparse_dense(r, m.M_rownnz, m.M_rowadr, m.M_colind, m.nv, m.nv) for r in sim.data.qLD]
        ),
        "qacc": np.array(sim.data.qacc),
    }
    worst, where = 0.0, None
    for field, value in ours.items():
        for i in range(N_STATES):
            err = rel_err(value[i], case.ref[field][i]) / FIELD_TOL[field]
            if err > worst:
                worst, where = err, (field, i)
    report(f"{name} second forward() (error / tolerance)", worst, 1.0, N_STATES)
    assert worst <= 1.0, f"{name}: {where[0]} of state {where[1]} is {worst:.3e} tolerances off MuJoCo"
