"""Spatial tendons through sites and pulleys against MuJoCo 4.0.0 (wrapping geoms:
test_tendon_wrap.py).

tendon_spatial.xml: a "cable" through five sites on a free-floating arm (two of them on one
body, so one segment has length but no moment), limited, with stiffness, damping and a
motor, a "tether" from the hand to a world site with a length range, and a "hoist" of two
branches joined by a pulley of divisor 2 (its branches' lengths and Jacobians halved). At 100 random
states: ten_length, ten_J, ten_velocity, the tendon sensors, qfrc_passive, qfrc_actuator
and the constrained qacc (the tendon limit rows included) to 1e-10; 200-step trajectories
under random controls to 1e-9; and analytically the tether's length is the distance of its
two sites and its Jacobian the derivative of that length (central differences of qpos).
"""

from __future__ import annotations

import mujoco
import numpy as np

from robodyn import engine
from tests.helpers import ASSETS, random_states, rel_err, report, trajectory_errors

SPATIAL = ASSETS / "tests" / "tendon_spatial.xml"
N = 100
TOL = 1e-10


def _batch(mj, qpos, qvel, ctrl):
    sim = engine.Simulator(engine.load_mjcf(SPATIAL), batch=len(qpos))
    sim.data.qpos[:], sim.data.qvel[:], sim.data.ctrl[:] = qpos, qvel, ctrl
    sim.forward()
    return sim


def test_forward_matches_mujoco():
    mj = mujoco.MjModel.from_xml_path(str(SPATIAL))
    qpos, qvel, ctrl = random_states(mj, N, seed=3)
    sim = _batch(mj, qpos, qvel, ctrl)
    d = mujoco.MjData(mj)
    fields = ("ten_length", "ten_velocity", "sensordata", "qfrc_passive", "qfrc_actuator", "qacc")
    worst = dict.fromkeys((*fields, "ten_J", "wrap_xpos"), 0.0)
    limits = 0
    J = np.zeros((mj.ntendon, mj.nv))
    for i in range(N):
        d.qpos[:], d.qvel[:], d.ctrl[:] = qpos[i], qvel[i], ctrl[i]
        mujoco.mj_forward(mj, d)
        for f in fields:
            worst[f] = max(worst[f], rel_err(getattr(sim.data, f)[i], getattr(d, f)))
        mujoco.mju_sparse2dense(J, d.ten_J, mj.ten_J_rownnz, mj.ten_J_rowadr, mj.ten_J_colind)
        worst["ten_J"] = max(worst["ten_J"], rel_err(sim.data.ten_J[i], J))
        # the paths (sites, and the pulley as object -2 at the origin)
        assert np.array_equal(sim.data.ten_wrapadr[i], d.ten_wrapadr)
        assert np.array_equal(sim.data.ten_wrapnum[i], d.ten_wrapnum)
        assert np.array_equal(sim.data.wrap_obj[i], d.wrap_obj)
        worst["wrap_xpos"] = max(worst["wrap_xpos"], rel_err(sim.data.wrap_xpos[i], d.wrap_xpos))
        limits += int(np.sum(d.efc_type[: d.nefc] == mujoco.mjtConstraint.mjCNSTR_LIMIT_TENDON))
    for f, err in worst.items():
        report(f"tendon_spatial {f}", err, TOL, N)
    assert limits >= 30  # the tendons' limits are in play, not only their lengths
    for f, err in worst.items():
        assert err <= TOL, f"{f} off MuJoCo by {err:.3e}"


def test_trajectories_match_mujoco():
    mj = mujoco.MjModel.from_xml_path(str(SPATIAL))
    qpos, qvel, ctrl = random_states(mj, 6, seed=5, vel=1.0)
    states = {"qpos": qpos, "qvel": qvel, "ctrl": ctrl, "qacc_warmstart": np.zeros_like(qvel)}
    controls = np.random.default_rng(2).uniform(-1.0, 1.0, (200, 6, mj.nu))
    worst = max(trajectory_errors(SPATIAL.read_text(), states, 200, controls))
    report("tendon_spatial 200-step trajectories (qpos, qvel)", worst, 1e-9, 6)
    assert worst <= 1e-9


def test_tether_is_the_distance_and_its_jacobian_the_derivative():
    mj = mujoco.MjModel.from_xml_path(str(SPATIAL))
    qpos, qvel, ctrl = random_states(mj, 20, seed=8)
    sim = _batch(mj, qpos, qvel, ctrl)
    hand, anchor = mj.site("h0").id, mj.site("anchor").id
    dist = np.linalg.norm(sim.data.site_xpos[:, hand] - sim.data.site_xpos[:, anchor], axis=1)
    worst_len = float(np.max(np.abs(sim.data.ten_length[:, 1] - dist)))
    # d length / d qpos along each dof: step qpos by h along the dof (mj_integratePos)
    h = 1e-6
    worst_J = 0.0
    probe = engine.Simulator(engine.load_mjcf(SPATIAL), batch=1)
    for i in range(5):
        for v in range(mj.nv):
            lengths = []
            for sign in (1.0, -1.0):
                q = qpos[i].copy()
                dq = np.zeros(mj.nv)
                dq[v] = sign * h
                mujoco.mj_integratePos(mj, q, dq, 1.0)
                probe.data.qpos[0] = q
                probe.forward()
                lengths.append(probe.data.ten_length[0, 1])
            fd = (lengths[0] - lengths[1]) / (2 * h)
            worst_J = max(worst_J, abs(fd - sim.data.ten_J[i, 1, v]))
    report("tendon_spatial tether length vs |x_hand - x_anchor|", worst_len, 1e-14, 20)
    report("tendon_spatial tether ten_J vs central differences", worst_J, 1e-7, 5 * mj.nv)
    assert worst_len <= 1e-14 and worst_J <= 1e-7


def test_pulley_halves_its_second_branch():
    """The hoist's length is |x_u1 - x_b0| + |x_h0 - x_l0| / 2 (sites of its two branches)."""
    mj = mujoco.MjModel.from_xml_path(str(SPATIAL))
    qpos, qvel, ctrl = random_states(mj, 20, seed=9)
    sim = _batch(mj, qpos, qvel, ctrl)
    x = sim.data.site_xpos
    site = {name: mj.site(name).id for name in ("b0", "u1", "l0", "h0")}
    expected = np.linalg.norm(x[:, site["u1"]] - x[:, site["b0"]], axis=1) + 0.5 * np.linalg.norm(
        x[:, site["h0"]] - x[:, site["l0"]], axis=1
    )
    worst = float(np.max(np.abs(sim.data.ten_length[:, 2] - expected)))
    report("tendon_spatial hoist length vs its branches", worst, 1e-14, 20)
    assert worst <= 1e-14
