"""Engine invariants, no oracle: the engine checked against itself and against physics.

- M is symmetric positive definite, depends on qpos (and only on qpos);
- M rebuilt column by column from recursive Newton-Euler with unit accelerations equals
  the composite-rigid-body M, and is zero outside the dof-ancestor pattern;
- L^T D L reassembled from qLD equals M, in dense form, with L inside that pattern;
- inverse dynamics of the forward acceleration returns the forces that were applied;
- Jacobians equal central differences of the engine's own kinematics (quaternion joints
  perturbed in the tangent space with mujoco.mj_integratePos, which is pure math), and
  J qvel equals the point velocity read from cvel;
- analytic cases: free fall (and Euler's equations for the spin), a lever arm.

Every loop counts the cases it compared and asserts the count.
"""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np
import pytest
from numba import njit

from robodyn import engine
from robodyn.engine.rne import rne
from tests.helpers import ASSETS, gym_model_paths, load_pair, random_states, rel_err, report, without_contacts

N_STATES = 100
N_FD_STATES = 8  # states for the finite-difference Jacobians (each needs 2 nv extra rows)

MODEL_PATHS: dict[str, Path] = {p.name: p for p in gym_model_paths()}
MODEL_PATHS.update({p.name: p for p in sorted((ASSETS / "tests").glob("smooth_*.xml"))})
MODELS = [pytest.param(name, id=name) for name in MODEL_PATHS]


def _pair(name: str) -> tuple[engine.Model, mujoco.MjModel]:
    path = MODEL_PATHS[name]
    return load_pair(path if path.parent == ASSETS / "tests" else without_contacts(path))


def _sim(model: engine.Model, qpos, qvel=None, ctrl=None) -> engine.Simulator:
    sim = engine.Simulator(model, batch=len(qpos))
    sim.data.qpos[:] = qpos
    if qvel is not None:
        sim.data.qvel[:] = qvel
    if ctrl is not None:
        sim.data.ctrl[:] = ctrl
    return sim


def _ancestor_pattern(mj: mujoco.MjModel) -> list[list[int]]:
    """Row i of M's lower triangle: the dofs moving a body on i's chain to the world,
    ascending, then i. Built from the body tree (not from dof_parentid)."""
    rows = []
    for i in range(mj.nv):
        bi = mj.dof_bodyid[i]
        chain = set()
        b = bi
        while b > 0:
            chain.add(b)
            b = mj.body_parentid[b]
        rows.append([j for j in range(i + 1) if mj.dof_bodyid[j] in chain])
    return rows


def _dense_factor(model: engine.Model, qLD: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(L, D) from one row of qLD: L unit lower-triangular, D diagonal."""
    nv = model.nv
    L = np.eye(nv)
    D = np.zeros(nv)
    for i in range(nv):
        adr = model.M_rowadr[i]
        n = model.M_rownnz[i]
        cols = model.M_colind[adr : adr + n]
        assert cols[-1] == i, f"row {i} of the pattern must end with the diagonal"
        L[i, cols[:-1]] = qLD[adr : adr + n - 1]
        D[i] = qLD[adr + n - 1]
    return L, D


# --- mass matrix -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", MODELS)
def test_mass_matrix_spd_and_configuration_dependent(name: str):
    model, mj = _pair(name)
    qpos, qvel, _ = random_states(mj, N_STATES, seed=1)
    sim = _sim(model, qpos, qvel)
    sim.forward()
    M = sim.full_mass_matrix()
    count, worst_asym, min_ratio = 0, 0.0, np.inf
    for s in range(N_STATES):
        worst_asym = max(worst_asym, rel_err(M[s], M[s].T))
        eig = np.linalg.eigvalsh(M[s])
        min_ratio = min(min_ratio, eig[0] / eig[-1])
        np.linalg.cholesky(M[s])  # raises unless positive definite
        count += 1
    spread = float(np.max(np.abs(M - M[0])) / np.max(np.abs(M[0])))
    report(f"{name} M asymmetry", worst_asym, 0.0, count)
    print(f"    min eig/max eig {min_ratio:.3e}, spread over qpos {spread:.3e}")
    assert count == N_STATES
    assert worst_asym == 0.0
    assert min_ratio > 1e-12
    assert spread > 1e-8, f"{name}: M does not change with the configuration"


@pytest.mark.parametrize("name", MODELS)
def test_mass_matrix_depends_on_qpos_only(name: str):
    """M (and its factor) at a qpos is the same whatever the velocity, controls and applied
    forces, and whatever the Simulator computed before: a second forward() on a reused
    Simulator must give bit for bit the M of the first."""
    model, mj = _pair(name)
    qpos, qvel, ctrl = random_states(mj, N_STATES, seed=1)
    sim = _sim(model, qpos, qvel, ctrl)
    sim.forward()
    M = sim.full_mass_matrix()
    qLD = sim.data.qLD.copy()
    sim.data.qvel[:] = -3.0 * qvel
    sim.data.ctrl[:] = -ctrl
    sim.data.qfrc_applied[:] = 1.0
    sim.forward()
    M2 = sim.full_mass_matrix()
    worst, count = 0.0, 0
    for s in range(N_STATES):
        worst = max(worst, rel_err(M2[s], M[s]), rel_err(sim.data.qLD[s], qLD[s]))
        count += 1
    report(f"{name} M after a second forward()", worst, 0.0, count)
    assert count == N_STATES
    assert worst == 0.0, f"{name}: M changed on the second forward() by up to {worst:.3e} (relative)"


@njit(cache=False)
def _rne_columns(m, d, out):
    """out[b, :, j] = RNE(qacc = e_j) - RNE(qacc = 0) at row b's position and velocity."""
    nv = m.nv
    base = np.zeros(nv)
    col = np.zeros(nv)
    e = np.zeros(nv)
    for b in range(d.qpos.shape[0]):
        work = d.scratch_body[b]
        rne(m, d, b, False, e, base, work[0], work[1])
        for j in range(nv):
            e[j] = 1.0
            rne(m, d, b, True, e, col, work[0], work[1])
            e[j] = 0.0
            for i in range(nv):
                out[b, i, j] = col[i] - base[i]


@pytest.mark.parametrize("name", MODELS)
def test_mass_matrix_from_rne(name: str):
    """RNE with unit accelerations rebuilds CRB's M (qvel = 0: the bias is gravity alone,
    and subtracting the qacc = 0 result cancels it; RNE carries no passive forces). Entries
    of the RNE matrix outside the dof-ancestor pattern vanish: the pattern loses nothing."""
    model, mj = _pair(name)
    qpos, _, _ = random_states(mj, N_STATES, seed=2)
    sim = _sim(model, qpos)  # qvel = 0
    sim.forward()
    M = sim.full_mass_matrix()
    armature = np.diag(np.asarray(model.dof_armature))  # rotor inertia: in M, not in the bodies
    cols = np.zeros((N_STATES, model.nv, model.nv))
    _rne_columns(model, sim.data, cols)
    outside = np.ones((model.nv, model.nv), dtype=bool)
    for i, row in enumerate(_ancestor_pattern(mj)):
        outside[i, row] = False
        outside[row, i] = False
    worst, worst_out, count = 0.0, 0.0, 0
    for s in range(N_STATES):
        worst = max(worst, rel_err(cols[s] + armature, M[s]))
        worst_out = max(worst_out, float(np.max(np.abs(cols[s][outside]), initial=0.0)))
        count += 1
    report(f"{name} M from RNE", worst, 1e-12, count)
    print(f"    largest RNE entry outside the pattern: {worst_out:.3e}")
    assert count == N_STATES
    assert worst <= 1e-12
    assert worst_out <= 1e-12


@pytest.mark.parametrize("name", MODELS)
def test_mass_matrix_from_inverse(name: str):
    """sim.inverse() is linear in qacc with matrix M: at qvel = 0, inverse(e_j) - inverse(0)
    (gravity, springs and wind-driven fluid forces cancel) is column j of M."""
    model, mj = _pair(name)
    nv = model.nv
    qpos, _, _ = random_states(mj, 10, seed=3)
    rows = np.repeat(qpos, nv + 1, axis=0)  # per state: qacc = 0, e_0, ..., e_{nv-1}
    sim = _sim(model, rows)
    for s in range(len(qpos)):
        sim.data.qacc[s * (nv + 1) + 1 : (s + 1) * (nv + 1)] = np.eye(nv)
    tau = np.array(sim.inverse()).reshape(len(qpos), nv + 1, nv)
    M = sim.full_mass_matrix()[:: nv + 1]
    worst, count = 0.0, 0
    for s in range(len(qpos)):
        cols = (tau[s, 1:] - tau[s, 0]).T
        worst = max(worst, rel_err(cols, M[s]))
        count += 1
    report(f"{name} M from inverse()", worst, 1e-12, count)
    assert count == len(qpos)
    assert worst <= 1e-12


@pytest.mark.parametrize("name", MODELS)
def test_factor_reassembles_M(name: str):
    """L^T D L from qLD equals M (dense), 1/D is qLDiagInv, and M's packed pattern is exactly
    the dof-ancestor pattern of the body tree (closed under the factorization: no fill-in)."""
    model, mj = _pair(name)
    pattern = _ancestor_pattern(mj)
    for i, row in enumerate(pattern):
        adr, n = model.M_rowadr[i], model.M_rownnz[i]
        assert list(model.M_colind[adr : adr + n]) == row, f"row {i} of M's pattern"
    assert model.nM == sum(len(r) for r in pattern)
    qpos, _, _ = random_states(mj, N_STATES, seed=4)
    sim = _sim(model, qpos)
    sim.forward()
    M = sim.full_mass_matrix()
    worst, worst_inv, count = 0.0, 0.0, 0
    for s in range(N_STATES):
        L, D = _dense_factor(model, sim.data.qLD[s])
        worst = max(worst, rel_err(L.T @ np.diag(D) @ L, M[s]))
        worst_inv = max(worst_inv, float(np.max(np.abs(sim.data.qLDiagInv[s] * D - 1.0))))
        count += 1
    report(f"{name} L^T D L", worst, 1e-12, count)
    assert count == N_STATES
    assert worst <= 1e-12
    assert worst_inv <= 1e-14


# --- forward / inverse -----------------------------------------------------------------------


@pytest.mark.parametrize("name", MODELS)
def test_forward_inverse_round_trip(name: str):
    """inverse(forward qacc) = qfrc_applied + qfrc_actuator + J^T xfrc_applied."""
    model, mj = _pair(name)
    qpos, qvel, ctrl = random_states(mj, N_STATES, seed=5)
    rng = np.random.default_rng(5)
    sim = _sim(model, qpos, qvel, 1.5 * ctrl)
    sim.data.qfrc_applied[:] = rng.normal(0, 1.0, (N_STATES, model.nv))
    xfrc = rng.normal(0, 0.5, (N_STATES, model.nbody, 6))
    xfrc[:, 0] = 0.0
    sim.data.xfrc_applied[:] = xfrc
    sim.forward()
    expected = sim.data.qfrc_applied + sim.data.qfrc_actuator
    for b in range(1, model.nbody):
        expected = expected + sim.apply_force(b, xfrc[:, b, :3], xfrc[:, b, 3:])
    # inverse() on the same Simulator, reading the qacc forward() left in data
    qacc = sim.data.qacc.copy()
    tau = np.array(sim.inverse())
    assert np.array_equal(sim.data.qacc, qacc)
    worst, count = 0.0, 0
    for s in range(N_STATES):
        worst = max(worst, rel_err(tau[s], expected[s]))
        count += 1
    report(f"{name} inverse(forward)", worst, 1e-10, count)
    assert count == N_STATES
    assert worst <= 1e-10


# --- Jacobians -------------------------------------------------------------------------------


def _points(mj: mujoco.MjModel, data) -> list[tuple[int, str, np.ndarray, np.ndarray]]:
    """(body, label, positions (B, 3), frame matrices (B, 9)) of every body origin, body com
    and site, read from a forwarded Data."""
    out = []
    for b in range(1, mj.nbody):
        out.append((b, f"body {b} origin", data.xpos[:, b], data.xmat[:, b]))
        out.append((b, f"body {b} com", data.xipos[:, b], data.ximat[:, b]))
    for k in range(mj.nsite):
        out.append((int(mj.site_bodyid[k]), f"site {k}", data.site_xpos[:, k], data.site_xmat[:, k]))
    return out


@pytest.mark.parametrize("name", MODELS)
def test_jacobian_finite_differences(name: str):
    """jacp, jacr at body origins, coms and sites = central differences of the engine's own
    positions and orientations, each dof perturbed by +-h in the tangent space."""
    model, mj = _pair(name)
    nv, S, h = model.nv, N_FD_STATES, 1e-6
    qpos, _, _ = random_states(mj, S, seed=6)
    rows = []  # per state: the state, then (+h, -h) along each dof
    for s in range(S):
        rows.append(qpos[s])
        for k in range(nv):
            for sign in (1.0, -1.0):
                q = qpos[s].copy()
                dv = np.zeros(nv)
                dv[k] = 1.0
                mujoco.mj_integratePos(mj, q, dv, sign * h)
                rows.append(q)
    sim = _sim(model, np.array(rows))
    sim.forward()
    stride = 2 * nv + 1
    base = np.arange(S) * stride
    worst_p, worst_r, count = 0.0, 0.0, 0
    for body, _label, pos, mat in _points(mj, sim.data):
        jacp, jacr = sim.jacobian(body, np.ascontiguousarray(pos))
        for s in range(S):
            b0 = base[s]
            plus = b0 + 1 + 2 * np.arange(nv)
            minus = plus + 1
            fd_p = ((pos[plus] - pos[minus]) / (2 * h)).T  # (3, nv)
            R0 = mat[b0].reshape(3, 3)
            fd_r = np.zeros((3, nv))
            for k in range(nv):
                W = (mat[plus[k]] - mat[minus[k]]).reshape(3, 3) / (2 * h) @ R0.T
                fd_r[:, k] = 0.5 * np.array([W[2, 1] - W[1, 2], W[0, 2] - W[2, 0], W[1, 0] - W[0, 1]])
            worst_p = max(worst_p, rel_err(jacp[b0], fd_p))
            worst_r = max(worst_r, rel_err(jacr[b0], fd_r))
            count += 1
    expected = S * (2 * (mj.nbody - 1) + mj.nsite)
    report(f"{name} jacp vs finite differences", worst_p, 1e-7, count)
    report(f"{name} jacr vs finite differences", worst_r, 1e-7, count)
    assert count == expected
    assert worst_p <= 1e-7
    assert worst_r <= 1e-7


@pytest.mark.parametrize("name", MODELS)
def test_jacobian_times_qvel_is_point_velocity(name: str):
    """jacp qvel = cvel_lin + cvel_ang x (p - subtree_com[root]) and jacr qvel = cvel_ang."""
    model, mj = _pair(name)
    qpos, qvel, _ = random_states(mj, N_STATES, seed=7)
    sim = _sim(model, qpos, qvel)
    sim.forward()
    d = sim.data
    worst, count = 0.0, 0
    for body, _label, pos, _mat in _points(mj, d):
        jacp, jacr = sim.jacobian(body, np.ascontiguousarray(pos))
        root = model.body_rootid[body]
        ang = d.cvel[:, body, :3]
        lin = d.cvel[:, body, 3:] + np.cross(ang, pos - d.subtree_com[:, root])
        vp = np.einsum("bij,bj->bi", jacp, d.qvel)
        vr = np.einsum("bij,bj->bi", jacr, d.qvel)
        for s in range(N_STATES):
            worst = max(worst, rel_err(vp[s], lin[s]), rel_err(vr[s], ang[s]))
            count += 1
    report(f"{name} J qvel vs cvel", worst, 1e-12, count)
    assert count == N_STATES * (2 * (mj.nbody - 1) + mj.nsite)
    assert worst <= 1e-12


# --- analytic cases --------------------------------------------------------------------------

FREE_BODY = """
<mujoco model="free_fall">
  <option gravity="0.3 -0.2 -9.81"><flag contact="disable" constraint="disable"/></option>
  <worldbody>
    <body name="brick" pos="0 0 1">
      <freejoint/>
      <inertial pos="0 0 0" mass="2.5" diaginertia="0.1 0.2 0.25"/>
    </body>
  </worldbody>
</mujoco>
"""


def test_free_fall():
    """A free body with its com at the joint: qacc_lin = g whatever it does, and the spin
    obeys Euler's equations in the body frame, I dw/dt = -w x I w."""
    model = engine.load_mjcf(FREE_BODY)
    mj = mujoco.MjModel.from_xml_string(FREE_BODY)
    qpos, qvel, _ = random_states(mj, N_STATES, seed=8, vel=3.0)
    sim = _sim(model, qpos, qvel)
    sim.forward()
    g = np.array([0.3, -0.2, -9.81])
    inertia = np.array([0.1, 0.2, 0.25])
    worst, count = 0.0, 0
    for s in range(N_STATES):
        w = qvel[s, 3:]
        wdot = -np.cross(w, inertia * w) / inertia
        worst = max(worst, rel_err(sim.data.qacc[s, :3], g), rel_err(sim.data.qacc[s, 3:], wdot))
        count += 1
    report("free fall", worst, 1e-12, count)
    assert count == N_STATES
    assert worst <= 1e-12


LEVER = """
<mujoco model="lever">
  <option><flag contact="disable" constraint="disable"/></option>
  <worldbody>
    <body name="upper" pos="0 0 2">
      <joint name="shoulder" type="hinge" axis="0 -1 0"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.7" size="0.02"/>
      <body name="lower" pos="0 0 -0.7">
        <joint name="elbow" type="hinge" axis="0 -1 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.4" size="0.02"/>
        <site name="tip" pos="0 0 -0.4"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def test_lever_arm():
    """A 2-link arm hanging straight down (0.7 m and 0.4 m), 1 N sideways at the tip: joint
    torques are 1 N times the lever lengths, 1.1 and 0.4 N m. At random angles the torque
    of each joint is ((tip - anchor) x F) . axis; a force on the upper link spares the elbow."""
    model = engine.load_mjcf(LEVER)
    mj = mujoco.MjModel.from_xml_string(LEVER)
    qpos, _, _ = random_states(mj, N_STATES, seed=9)
    qpos[0] = 0.0  # the first state hangs straight down
    sim = _sim(model, qpos)
    sim.forward()
    tip = sim.data.site_xpos[:, 0]
    force = np.array([1.0, 0.0, 0.0])
    tau = sim.apply_force(2, force, point=tip)
    assert rel_err(tau[0], [1.1, 0.4]) <= 1e-14, tau[0]
    worst, count = 0.0, 0
    for s in range(N_STATES):
        expected = [
            np.dot(np.cross(tip[s] - sim.data.xanchor[s, j], force), sim.data.xaxis[s, j]) for j in (0, 1)
        ]
        worst = max(worst, rel_err(tau[s], expected))
        count += 1
    mid = sim.data.xpos[:, 1] + 0.5 * (sim.data.xpos[:, 2] - sim.data.xpos[:, 1])
    tau_upper = sim.apply_force(1, force, point=mid)
    for s in range(N_STATES):
        expected = [np.dot(np.cross(mid[s] - sim.data.xanchor[s, 0], force), sim.data.xaxis[s, 0]), 0.0]
        worst = max(worst, rel_err(tau_upper[s], expected))
        count += 1
    report("lever arm", worst, 1e-14, count)
    assert count == 2 * N_STATES
    assert worst <= 1e-14
