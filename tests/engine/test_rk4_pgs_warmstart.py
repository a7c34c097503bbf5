"""RK4 with the PGS solver on gymnasium's HumanoidStandup-v5 model (read from site-packages,
never copied) from the state where one env step of ours was seen 3.8e-7 (qvel) from MuJoCo
4.0.0's mj_step(nstep=5), against MuJoCo.

The cause is not the warm start: in MuJoCo every RK4 stage's forward pass starts PGS from the
step's qacc_warmstart (mj_RungeKutta calls mj_forwardSkip per stage; only mj_advance writes
qacc_warmstart: the last stage's qacc), and so do we (test_rk4_stages_warm_start). It is
PGS's Nesterov gradient restart, `restart = (dot_corr_extr < 0)` (MuJoCo's solPGS): at the
3rd sweep of the 2nd stage's solve of the 3rd physics step the sum is 0 in exact arithmetic:
the one row with a real extrapolation (-27.1) has a correction of exactly 0 (clamped at 0
before and after the sweep), and the one row with a real correction (30.2) has an
extrapolation of beta = 1/4 times its change in the 2nd sweep, which is only the rounding of
its residual (it was visited at its own minimum): 0 or about an ulp of its force (5.7e-14)
either way. A negative sum restarts the momentum; the two branches end 16 sweeps later 1e-3
apart in force, 7.5e-4 in that stage's qacc. MuJoCo's own step from this state jumps by the
same 6.3e-7 when its input is moved by one ulp (test_mujoco_itself_flips_within_one_ulp), so
our step is held to equal one of the two answers MuJoCo gives within one ulp of the state,
and off the branch (MuJoCo's own 2-step state, 1e-15 away) to equal MuJoCo's to 1e-10.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import mujoco
import numpy as np
import pytest

from robodyn import engine

MODEL = (
    Path(importlib.util.find_spec("gymnasium").submodule_search_locations[0])
    / "envs"
    / "mujoco"
    / "assets"
    / "humanoidstandup.xml"
)
TOL = 1e-10
JUMP = 1e-7  # the branch's two answers are 6.3e-7 (qvel) apart
N_NUDGES = 64

CTRL = [-0.028238549828529358, -0.2842959463596344, -0.23480041325092316, -0.23504507541656494,
        0.13753941655158997, 0.057630401104688644, 0.3765631318092346, -0.15501616895198822,
        -0.015417702496051788, -0.10250405222177505, -0.09434086829423904, 0.06691417843103409,
        0.22864121198654175, 0.14699719846248627, -0.3077733814716339, -0.17924776673316956,
        0.10126256197690964]  # fmt: skip
# the env step's starting state: RoboDyn/HumanoidStandup-v5, 3 envs reset with seed 7, row 2,
# before its 214th step (frame_skip 5)
START = {
    "qpos": [-0.016613785138269034, 0.037352589582387324, 0.0875030319684515, 0.9996378995830563,
             -0.01233165181139317, 0.02391423549100628, -0.00033078944603237006,
             -0.10637821574945014, -0.19180507923860818, -0.01105096161449945,
             -0.2007142439809055, 0.13558148865145736, -0.17922193220330987, -0.7528156297928248,
             0.13515767221086708, -0.08164282894616519, 0.08844749526682444,
             0.0006714397154305163, -0.33586014348363696, 0.14468951681361325,
             0.12418156748900003, 0.19118035764046815, -0.27628462599967973,
             -0.3515230434873084],
    "qvel": [-0.10476958652323864, 0.11224641301641125, -0.6081276643675978, -0.31699557473164186,
             -2.424160603371348, 1.8772083180687271, -1.8381959203520684, 3.6693218382943456,
             0.38022573951843075, 1.425073415571104, -1.5300459815144363, -1.5412443401672318,
             -0.23511800593633747, 0.4259862499183024, 1.7751372671188208, 0.4947245390944519,
             6.4966646937480235, 0.07445042916149372, -1.2225134005558655, -1.4650587765769996,
             -2.2067745743355003, -3.3645580698016526, -6.4562364004905834],
    "qacc_warmstart": [11.065444264717568, -3.315733115464685, 2.2483652902942373,
                       -64.96443683558232, 97.49058507146671, 38.22613570165928,
                       -66.94311914203738, 76.53258381324342, 24.128574154643047,
                       77.18722109862313, -53.619736739268625, -308.4377018500003,
                       -138.32949874547012, -142.07847596467468, 47.58183822433117,
                       -502.9371736269706, -708.003543002432, -0.7087896080694129,
                       -75.60792817449942, 48.504914716992985, 20.246708456991584,
                       -75.60563150188021, 51.76922736184212],
}  # fmt: skip
# our state after 2 of those physics steps (1e-15 from MuJoCo's): on the restart's branch
ON_BRANCH = {
    "qpos": [-0.017326501460262454, 0.038327382850776345, 0.08407598337358568, 0.9997429770417081,
             -0.012639626767654472, 0.017723157831775933, 0.006333195672454311,
             -0.12300309845340786, -0.17212637613515336, -0.013970705461360394,
             -0.19751735687108848, 0.13193998466019177, -0.186447109883079, -0.7422228668526106,
             0.12674057741243946, -0.07522358518562187, 0.08607215637267683,
             0.02751816452467609, -0.33787455680447953, 0.13573492231712816,
             0.11803654434660923, 0.17448364176507536, -0.29825388952349186,
             -0.3882560697687166],
    "qvel": [-0.1087205297287328, 0.21886437425859098, -0.44197966222131857, 0.05378318978096808,
             -1.5329158583914044, 2.4318266016185186, -3.53518585245912, 2.954748761851626,
             -1.2916336690765204, -0.25028482733291113, 0.12084456387560816, -1.1128743505959684,
             3.677081229464509, -2.6095920313479937, 0.46665245571487657, -1.5143261049205057,
             2.665834023825231, -0.5878698484981436, -1.785699405076534, -0.44705006167462913,
             -3.4180715483815343, -3.737671537324369, -5.497687052624087],
    "qacc_warmstart": [6.289126439852071, 17.51516979748703, 47.55865218996963, 61.734252350810564,
                       186.41894897909543, 65.45329709188192, -211.76451033490636,
                       -91.88977340030334, -242.08658116970085, -217.02458472082162,
                       200.2927267430012, 75.7682015095946, 686.5081156164931,
                       -243.36383063338573, -175.8183016181065, -361.0607929597357,
                       -539.8346233061475, -48.96464465417872, -94.47069980288131,
                       192.57887723395572, -199.74987266893595, 5.067586460839351,
                       232.26194038973117],
}  # fmt: skip


@pytest.fixture(scope="module")
def mj():
    m = mujoco.MjModel.from_xml_path(str(MODEL))
    assert m.opt.integrator == mujoco.mjtIntegrator.mjINT_RK4
    assert m.opt.solver == mujoco.mjtSolver.mjSOL_PGS
    return m, mujoco.MjData(m)


@pytest.fixture(scope="module")
def sim():
    return engine.Simulator(engine.load_mjcf(str(MODEL)), batch=1)


def _set_mj(m, d, state):
    mujoco.mj_resetData(m, d)
    for f, v in state.items():
        getattr(d, f)[:] = v
    d.ctrl[:] = CTRL


def _set_ours(sim, state):
    D = sim.data
    for f, v in state.items():
        getattr(D, f)[0] = v
    D.ctrl[0] = CTRL
    D.time[0] = 0.0


def _mj_step(mj, state, n=1):
    m, d = mj
    _set_mj(m, d, state)
    mujoco.mj_step(m, d, nstep=n)
    return {f: getattr(d, f).copy() for f in ("qpos", "qvel", "qacc_warmstart")}


def _our_step(sim, state, n=1):
    _set_ours(sim, state)
    sim.step(n)
    return {f: getattr(sim.data, f)[0].copy() for f in ("qpos", "qvel", "qacc_warmstart")}


def _err(a, b):
    return max(float(np.abs(a[f] - b[f]).max()) for f in ("qpos", "qvel"))


def test_first_two_steps_match(mj, sim):
    """The env step's first 2 physics steps agree with MuJoCo's, and land on ON_BRANCH."""
    ours, theirs = _our_step(sim, START, 2), _mj_step(mj, START, 2)
    assert _err(ours, theirs) < TOL
    assert _err(ours, {f: np.array(v) for f, v in ON_BRANCH.items()}) < TOL


def test_step_matches_off_the_branch(mj, sim):
    """From MuJoCo's own state after 2 steps our 3rd step equals MuJoCo's, warm start too."""
    state = _mj_step(mj, START, 2)
    ours, theirs = _our_step(sim, state), _mj_step(mj, state)
    print(f"off the branch: {_err(ours, theirs):.1e}")
    assert _err(ours, theirs) < TOL
    assert np.abs(ours["qacc_warmstart"] - theirs["qacc_warmstart"]).max() < TOL * 100


def test_rk4_stages_warm_start(mj, sim):
    """Each of our RK4 stages' forward pass, from the states our RK4 reached, equals MuJoCo's
    mj_forward there with the step's qacc_warmstart (which no stage changes), or, at the
    stage whose PGS restart is decided by rounding (see the module docstring), MuJoCo's
    mj_forward from that state with one of its entries moved by an ulp; after the step
    qacc_warmstart is the last stage's qacc."""
    m, d = mj
    _our_step(sim, ON_BRANCH)
    D = sim.data
    X, F = D.rk_qpos[0].copy(), D.rk_qacc[0].copy()
    h = m.opt.timestep
    v0 = np.array(ON_BRANCH["qvel"])
    rng = np.random.default_rng(2)
    worst, nudged = 0.0, 0
    for i, a in enumerate((0.0, 0.5, 0.5, 1.0)):
        qvel = v0 + h * (a * F[i - 1]) if i else v0  # forward sees the plain v_i
        errs = []
        for k in range(N_NUDGES + 1):
            _set_mj(m, d, ON_BRANCH)
            d.qpos[:] = X[i]
            d.qvel[:] = qvel
            if k:  # ~30% of qpos and qvel's entries one ulp away
                for x in (d.qpos, d.qvel):
                    mask = rng.random(x.size) < 0.3
                    x[mask] = np.nextafter(
                        x[mask], np.where(rng.random(int(mask.sum())) < 0.5, np.inf, -np.inf)
                    )
            mujoco.mj_forward(m, d)
            errs.append(float(np.abs(d.qacc - F[i]).max()))
            if errs[-1] < TOL * 100:
                break
        nudged += k > 0
        worst = max(worst, min(errs))
    print(f"RK4 stages' qacc: {worst:.1e} ({nudged} of 4 stages equal MuJoCo's 1 ulp away)")
    assert worst < TOL * 100  # qacc ~ 1e3
    assert nudged <= 1  # only the stage on the knife edge
    # the next warm start: the last stage's qacc (MuJoCo's too: test_step_matches_off_the_branch)
    assert np.array_equal(D.qacc_warmstart[0], F[3])


def _nudged_outcomes(mj):
    """MuJoCo's step from ON_BRANCH with ~30% of qpos, qvel and qacc_warmstart's entries moved by
    one ulp (either way), for a fixed set of draws."""
    rng = np.random.default_rng(1)
    out = []
    for _ in range(N_NUDGES):
        state = {}
        for f, v in ON_BRANCH.items():
            x = np.array(v)
            mask = rng.random(x.size) < 0.3
            away = np.where(rng.random(int(mask.sum())) < 0.5, np.inf, -np.inf)
            x[mask] = np.nextafter(x[mask], away)
            state[f] = x
        out.append(_mj_step(mj, state))
    return out


def test_mujoco_itself_flips_within_one_ulp(mj, sim):
    """The restart test is threshold-sensitive in MuJoCo itself: some 1-ulp nudges of the
    state move MuJoCo's step by the same jump that separates ours from MuJoCo's unnudged one,
    and ours equals MuJoCo's from such a nudged state."""
    base = _mj_step(mj, ON_BRANCH)
    ours = _our_step(sim, ON_BRANCH)
    outcomes = _nudged_outcomes(mj)
    jumps = np.array([_err(o, base) for o in outcomes])
    to_ours = np.array([_err(o, ours) for o in outcomes])
    print(
        f"ours vs MuJoCo: {_err(ours, base):.1e}; MuJoCo under 1-ulp nudges: "
        f"{(jumps > JUMP).sum()}/{N_NUDGES} jump (max {jumps.max():.1e}); "
        f"nearest nudged outcome to ours {to_ours.min():.1e}"
    )
    assert (jumps > JUMP).any()  # MuJoCo's own answer flips within one ulp of the input
    assert (jumps < TOL).any()
    assert to_ours.min() < TOL  # ours is one of MuJoCo's answers within one ulp
