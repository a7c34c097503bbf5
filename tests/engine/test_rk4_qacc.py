"""Oracle test: what an RK4 mj_step leaves in data.qacc, act_dot and qacc_warmstart.

MuJoCo 4.0.0's RK4 step (mj_RungeKutta, then mj_advance) leaves, found against the installed
package with a Python replica of the four stages (bit for bit on a hinge/slide model):

- qacc: the tableau's weighted stage average (F0 + 2 F1 + 2 F2 + F3) / 6, the acceleration
  the velocity was advanced with (not the last stage's forward pass);
- qacc_warmstart: the last stage's qacc (mj_advance copies d->qacc before it is replaced);
- act_dot: the last stage's act_dot (not the weighted average act was advanced with).

Models: assets/tests/smooth_fluid.xml (RK4 as written: a free body and a ball joint, so the
Munthe-Kaas orientation correction), assets/tests/integ_activation.xml with integrator="RK4"
(activation dynamics of every kind, so act and act_dot), and gymnasium's reacher.xml and
inverted_pendulum.xml (RK4 as shipped, read from the installed package, contacts as shipped).
N_STATES random states per model are stepped NSTEP times in one batched Simulator and,
state by state, with mujoco.mj_step; after every step qpos, qvel, act, qacc, act_dot and
qacc_warmstart are compared with `rel_err` at TOL.
"""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np
import pytest

from robodyn import engine
from tests.helpers import ASSETS, GYM_ASSETS, load_pair, random_states, rel_err, report, with_options

NSTEP = 20
N_STATES = 3
TOL = 1e-9
FIELDS = ("qpos", "qvel", "act", "qacc", "act_dot", "qacc_warmstart")

MODELS = {
    "smooth_fluid": ASSETS / "tests" / "smooth_fluid.xml",
    "integ_activation": ASSETS / "tests" / "integ_activation.xml",
    "reacher": GYM_ASSETS / "reacher.xml",
    "inverted_pendulum": GYM_ASSETS / "inverted_pendulum.xml",
}


def _text(path: Path) -> str:
    return with_options(path, integrator="RK4")


@pytest.mark.parametrize("name", list(MODELS))
def test_rk4_step_leaves_mujocos_qacc(name):
    model, mj = load_pair(_text(MODELS[name]))
    assert int(mj.opt.integrator) == int(mujoco.mjtIntegrator.mjINT_RK4) == model.opt_integrator
    qpos0, qvel0, ctrl = random_states(mj, N_STATES, seed=5, vel=1.0)
    act0 = np.random.default_rng(6).uniform(-0.3, 0.3, (N_STATES, mj.na))

    sim = engine.Simulator(model, batch=N_STATES)
    sim.data.qpos[:] = qpos0
    sim.data.qvel[:] = qvel0
    sim.data.ctrl[:] = ctrl
    sim.data.act[:] = act0
    size = {"qpos": mj.nq, "act": mj.na, "act_dot": mj.na}
    ours = {f: np.empty((NSTEP, N_STATES, size.get(f, mj.nv))) for f in FIELDS}
    for k in range(NSTEP):
        sim.step()
        for f in FIELDS:
            ours[f][k] = getattr(sim.data, f)

    d = mujoco.MjData(mj)
    ref = {f: np.empty_like(v) for f, v in ours.items()}
    for r in range(N_STATES):
        mujoco.mj_resetData(mj, d)
        d.qpos[:] = qpos0[r]
        d.qvel[:] = qvel0[r]
        d.ctrl[:] = ctrl[r]
        d.act[:] = act0[r]
        for k in range(NSTEP):
            mujoco.mj_step(mj, d)
            for f in FIELDS:
                ref[f][k, r] = getattr(d, f)
        assert d.warning[mujoco.mjtWarning.mjWARN_BADQACC].number == 0

    worst = {}
    for f in FIELDS:
        errs = [rel_err(ours[f][k, r], ref[f][k, r]) for k in range(NSTEP) for r in range(N_STATES)]
        assert len(errs) == NSTEP * N_STATES
        worst[f] = max(errs)
        report(f"{name} RK4 {f}, {NSTEP} steps x {N_STATES} states", worst[f], TOL, len(errs))
    bad = {f: f"{e:.3e}" for f, e in worst.items() if e > TOL}
    assert not bad, f"{name}: worst rel_err above {TOL:.0e}: {bad} (all: {worst})"
