"""Oracle tests: whole trajectories under each integrator against MuJoCo 4's mj_step.

1. Trajectories. For every gymnasium model (through `without_contacts`), the double pendulum
   and every `assets/tests/integ_*.xml` model, under each of Euler, RK4, implicit and
   implicitfast (set by editing <option integrator=...> in the XML text): N_STATES random
   states with random constant controls are stepped NSTEP times in one batched Simulator and,
   state by state, with mujoco.mj_step. qpos and qvel are compared after every step with
   `rel_err` at TOL = 1e-8; the number of compared (state, step) pairs is asserted.

   The integ_* models exercise what the gym models do not: joint damping (Euler's implicit
   damping path), velocity-dependent actuators (qDeriv of implicit/implicitfast), fixed
   tendons with damping (one tree, and two trees), ball joints, standalone free bodies
   (implicitfast's local 6x6 solve with the gyroscopic derivative) and free bodies with
   children (jointed, and welded).

2. Energy. The double pendulum of assets/double_pendulum.xml released from horizontal, 10 s,
   each integrator at dt = 1, 2, 5 ms: our energy error (percent of the releasable energy)
   equals MuJoCo's, and both equal the recorded table SEED_TABLE (MuJoCo's numbers).
   The pendulum has no springs: Simulator.energy() with springs on every joint type and on
   tendons is compared with mjData.energy at random states (test_spring_energy_matches_mujoco).

"""

from __future__ import annotations

import functools
import xml.etree.ElementTree as ET
from pathlib import Path

import mujoco
import numpy as np
import pytest

from robodyn import engine
from tests.helpers import (
    ASSETS,
    GYM_ASSETS,
    gym_model_paths,
    load_pair,
    random_states,
    rel_err,
    report,
    without_contacts,
)

INTEGRATORS = ("Euler", "RK4", "implicit", "implicitfast")
NSTEP = 500
N_STATES = 3
TOL = 1e-8
N_ENERGY = 40  # random states per model for the spring energy
VEL = 2.0  # random qvel in [-VEL, VEL] for every model

# Controls are drawn across ctrlrange; for these models only a fraction of it. With contacts
# disabled their actuators (gear 100-150 on light limbs) spin the free-flying legs up until
# the integration itself blows up: from the same states MuJoCo's own Euler reaches |qvel| ~
# 1e7 and flags mjWARN_BADQACC at step 118-133 on ant, |qvel| ~ 1e3 on walker2d, and the
# inverted double pendulum (a chaotic system) amplifies 1e-16 rounding differences past 1e-8
# after ~280 steps under implicit. A trajectory that is numerically meaningless in MuJoCo
# itself tests nothing, so these run at 10% of their control range; velocities stay at VEL.
# At that scale the worst error over all NSTEP steps is < 1e-12 on these models.
CTRL_SCALE = {
    "ant.xml": 0.1,
    "walker2d.xml": 0.1,
    "walker2d_v5.xml": 0.1,
    "inverted_double_pendulum.xml": 0.1,
}

# --- the models --------------------------------------------------------------------------------
MODEL_PATHS: dict[str, Path] = {p.name: p for p in gym_model_paths()}
MODEL_PATHS["double_pendulum.xml"] = ASSETS / "double_pendulum.xml"
INTEG_MODELS = sorted((ASSETS / "tests").glob("integ_*.xml"))
MODEL_PATHS.update({p.name: p for p in INTEG_MODELS})

# models with fluid forces: the engine refuses implicit/implicitfast for them
FLUID_MODELS = ("swimmer.xml",)


def _cases():
    for name in MODEL_PATHS:
        for integrator in INTEGRATORS:
            if name in FLUID_MODELS and integrator in ("implicit", "implicitfast"):
                continue  # refused at load: test_fluid_model_refuses_implicit
            yield pytest.param(name, integrator, id=f"{Path(name).stem}-{integrator}")


def with_option(text: str, **attrs: str) -> str:
    """MJCF text with attributes set on <option> (created if missing)."""
    root = ET.fromstring(text)
    option = root.find("option")
    if option is None:
        option = ET.Element("option")
        root.insert(0, option)
    for key, value in attrs.items():
        option.set(key, value)
    return ET.tostring(root, encoding="unicode")


def model_text(name: str, integrator: str) -> str:
    path = MODEL_PATHS[name]
    text = without_contacts(path) if path.parent == GYM_ASSETS else path.read_text()
    return with_option(text, integrator=integrator)


# --- 1. trajectories ---------------------------------------------------------------------------
def _max_rel_per_row(ours: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """rel_err of each (step, state) pair, vectorised: (NSTEP, N) from (NSTEP, N, n)."""
    if ref.shape[-1] == 0:
        return np.zeros(ref.shape[:2])
    return np.max(np.abs(ours - ref), axis=-1) / np.maximum(1.0, np.max(np.abs(ref), axis=-1))


@pytest.mark.parametrize(("name", "integrator"), list(_cases()))
def test_trajectory_matches_mujoco(name, integrator):
    text = model_text(name, integrator)
    model, mj = load_pair(text)
    assert model.opt_integrator == int(mj.opt.integrator) == INTEGRATORS.index(integrator)
    qpos0, qvel0, ctrl = random_states(mj, N_STATES, seed=11, vel=VEL)
    ctrl = ctrl * CTRL_SCALE.get(name, 1.0)

    # ours: all states in one batch, one compiled call per step
    sim = engine.Simulator(model, batch=N_STATES)
    sim.data.qpos[:] = qpos0
    sim.data.qvel[:] = qvel0
    sim.data.ctrl[:] = ctrl
    ours_q = np.empty((NSTEP, N_STATES, mj.nq))
    ours_v = np.empty((NSTEP, N_STATES, mj.nv))
    for k in range(NSTEP):
        sim.step()
        ours_q[k] = sim.data.qpos
        ours_v[k] = sim.data.qvel

    # MuJoCo: state by state
    d = mujoco.MjData(mj)
    ref_q = np.empty_like(ours_q)
    ref_v = np.empty_like(ours_v)
    for r in range(N_STATES):
        mujoco.mj_resetData(mj, d)
        d.qpos[:] = qpos0[r]
        d.qvel[:] = qvel0[r]
        d.ctrl[:] = ctrl[r]
        for k in range(NSTEP):
            mujoco.mj_step(mj, d)
            ref_q[k, r] = d.qpos
            ref_v[k, r] = d.qvel
        # a reset by MuJoCo (bad qacc) would make the comparison meaningless
        assert d.warning[mujoco.mjtWarning.mjWARN_BADQACC].number == 0, f"MuJoCo diverged, state {r}"
    assert np.all(np.isfinite(ref_q)) and np.all(np.isfinite(ref_v))
    np.testing.assert_allclose(sim.data.time, NSTEP * mj.opt.timestep, rtol=1e-12)

    err = np.maximum(_max_rel_per_row(ours_q, ref_q), _max_rel_per_row(ours_v, ref_v))
    compared = err.size
    assert compared == NSTEP * N_STATES
    worst = float(err.max())
    k, r = np.unravel_index(int(np.argmax(err)), err.shape)  # err[k, r] is rel_err of that pair
    assert worst == max(rel_err(ours_q[k, r], ref_q[k, r]), rel_err(ours_v[k, r], ref_v[k, r]))
    report(f"{Path(name).stem} {integrator} qpos+qvel, {NSTEP} steps", worst, TOL, compared)
    if worst > TOL:
        k, r = np.unravel_index(int(np.argmax(err > TOL)), err.shape)
        eq = _max_rel_per_row(ours_q, ref_q)[k, r]
        ev = _max_rel_per_row(ours_v, ref_v)[k, r]
        pytest.fail(
            f"{name} {integrator}: first error > {TOL:.0e} at step {k + 1}, state {r}: "
            f"qpos {eq:.3e}, qvel {ev:.3e}; worst {worst:.3e} "
            f"(ours qvel {ours_v[k, r].tolist()}, MuJoCo {ref_v[k, r].tolist()})"
        )


@pytest.mark.parametrize("integrator", ["implicit", "implicitfast"])
@pytest.mark.parametrize("name", FLUID_MODELS)
def test_fluid_model_refuses_implicit(name, integrator):
    text = model_text(name, integrator)
    mj = mujoco.MjModel.from_xml_string(text)
    assert mj.opt.density > 0 or mj.opt.viscosity > 0
    with pytest.raises(engine.UnsupportedModelError, match="density/viscosity"):
        engine.load_mjcf(text)


# --- 2. the double pendulum's energy ------------------------------------------------------------
PENDULUM = ASSETS / "double_pendulum.xml"
ENERGY_DT = (0.001, 0.002, 0.005)
ENERGY_SECONDS = 10.0

# MuJoCo's energy error for this pendulum, which ours must equal (both are measured below):
# max |E(t) - E0| in percent of the releasable energy. implicitfast equals Euler in every cell:
# with no damping the only velocity-dependent force is Coriolis, which implicitfast drops.
SEED_TABLE = {
    ("Euler", 0.001): 6.984,
    ("Euler", 0.002): 14.357,
    ("Euler", 0.005): 41.123,
    ("RK4", 0.001): 0.000,
    ("RK4", 0.002): 0.000,
    ("RK4", 0.005): 0.000,
    ("implicit", 0.001): 6.007,
    ("implicit", 0.002): 11.352,
    ("implicit", 0.005): 24.317,
    ("implicitfast", 0.001): 6.984,
    ("implicitfast", 0.002): 14.357,
    ("implicitfast", 0.005): 41.123,
}


# ... and the signed change at the last sample, E(10 s - dt) - E0, in the same units.
SEED_FINAL = {
    ("Euler", 0.001): 6.984,
    ("Euler", 0.002): 14.355,
    ("Euler", 0.005): 39.316,
    ("RK4", 0.001): -0.000,
    ("RK4", 0.002): -0.000,
    ("RK4", 0.005): -0.000,
    ("implicit", 0.001): -6.007,
    ("implicit", 0.002): -11.352,
    ("implicit", 0.005): -24.317,
    ("implicitfast", 0.001): 6.984,
    ("implicitfast", 0.002): 14.355,
    ("implicitfast", 0.005): 39.316,
}


def _pendulum_text(integrator: str, dt: float) -> str:
    root = ET.fromstring(with_option(PENDULUM.read_text(), integrator=integrator, timestep=repr(dt)))
    root.find("option").find("flag").set("energy", "enable")
    return ET.tostring(root, encoding="unicode")


@functools.cache
def releasable_energy() -> float:
    """Potential energy released from horizontal (qpos = 0) to hanging straight down:
    m1 g 0.2 + m2 g 0.55 = 4.65975 J (4.660 J to three decimals)."""
    mj = mujoco.MjModel.from_xml_string(_pendulum_text("Euler", 0.002))
    d = mujoco.MjData(mj)
    pot = []
    for q in ([0.0, 0.0], [np.pi / 2, 0.0]):  # +pi/2 about +y turns +x into -z
        d.qpos[:] = q
        mujoco.mj_forward(mj, d)
        pot.append(float(d.energy[0]))
    return pot[0] - pot[1]


@functools.cache
def energy_curves(integrator: str, dt: float) -> tuple[np.ndarray, np.ndarray]:
    """(ours, MuJoCo's) total energy E_k of the states k = 0 .. N (t = k dt, N dt = 10 s).

    Both are read after a forward pass at the state itself: MuJoCo's d.energy after
    mj_forward (energy flag enabled), ours forward() + energy(). Not d.energy after mj_step:
    for Euler and implicit that is the energy of the state the step started from, but for RK4
    MuJoCo's stage evaluations recompute it (mj_fwdPosition clears flg_energypos), so after
    an RK4 step d.energy belongs to the last RK stage (q0 (+) h v2, v0 + h a2), not to a state
    of the trajectory (1e-7 J off at 1 ms).
    """
    text = _pendulum_text(integrator, dt)
    model, mj = load_pair(text)
    n = int(round(ENERGY_SECONDS / dt))

    d = mujoco.MjData(mj)  # released from horizontal: qpos = 0, qvel = 0
    ref = np.empty(n + 1)
    for k in range(n + 1):
        if k:
            mujoco.mj_step(mj, d)
        mujoco.mj_forward(mj, d)
        ref[k] = d.energy.sum()
    assert d.time == pytest.approx(ENERGY_SECONDS)

    sim = engine.Simulator(model, batch=1)
    ours = np.empty(n + 1)
    for k in range(n + 1):
        if k:
            sim.step()
        sim.forward()
        ours[k] = sim.energy()[0].sum()
    assert sim.data.time[0] == pytest.approx(ENERGY_SECONDS)
    return ours, ref


def energy_error(E: np.ndarray, include_final: bool = False) -> float:
    """max_k |E_k - E_0| in percent of the releasable energy.

    SEED_TABLE samples E as MuJoCo's d.energy after each mj_step, i.e. (Euler, implicit) the
    states at t = 0 .. 10 s - dt, and divides by the exact releasable energy 4.65975 J: that
    reproduces all twelve of its cells. Dividing by the rounded 4.660 J instead gives 14.356 for
    Euler at 2 ms; adding the state at t = 10 s changes only cells where the maximum is last.
    """
    samples = E if include_final else E[:-1]
    return 100.0 * float(np.max(np.abs(samples - samples[0]))) / releasable_energy()


def final_change(E: np.ndarray) -> float:
    """E(10 s - dt) - E0 in percent of the releasable energy (the last sample SEED_TABLE uses)."""
    return 100.0 * float(E[-2] - E[0]) / releasable_energy()


def test_releasable_energy():
    assert f"{releasable_energy():.3f}" == "4.660"
    assert releasable_energy() == pytest.approx(9.81 * (1.0 * 0.2 + 0.5 * 0.55), rel=1e-12)


@pytest.mark.parametrize("dt", ENERGY_DT, ids=lambda dt: f"{dt * 1e3:g}ms")
@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_pendulum_energy_matches_mujoco(integrator, dt):
    ours, ref = energy_curves(integrator, dt)
    assert len(ours) == len(ref) == int(round(ENERGY_SECONDS / dt)) + 1
    worst = float(np.max(np.abs(ours - ref)))
    report(f"pendulum energy {integrator} {dt * 1e3:g} ms, |E_ours - E_mujoco| (J)", worst, 1e-9, len(ref))
    assert worst < 1e-9
    for include_final in (False, True):
        e_ours = energy_error(ours, include_final)
        e_ref = energy_error(ref, include_final)
        assert abs(e_ours - e_ref) < 1e-9, (integrator, dt, e_ours, e_ref)
        assert f"{e_ours:.3f}" == f"{e_ref:.3f}"
    # the recorded number (max over t = 0 .. 10 s - dt), cell by cell
    assert f"{energy_error(ref):.3f}" == f"{SEED_TABLE[integrator, dt]:.3f}"
    assert f"{energy_error(ours):.3f}" == f"{SEED_TABLE[integrator, dt]:.3f}"
    assert f"{final_change(ours):+.3f}" == f"{final_change(ref):+.3f}" == f"{SEED_FINAL[integrator, dt]:+.3f}"


def test_pendulum_energy_table():
    """Print the whole table (ours / MuJoCo) and check its headline numbers."""
    lines = [
        "energy error over 10 s, % of the releasable 4.660 J: max |E(t) - E0| ours / MuJoCo "
        "[final E - E0, MuJoCo]",
        f"{'integrator':14s}" + "".join(f"{f'{dt * 1e3:g} ms':>34s}" for dt in ENERGY_DT),
    ]
    for integrator in INTEGRATORS:
        cells = []
        for dt in ENERGY_DT:
            ours, ref = energy_curves(integrator, dt)
            cells.append(f"{energy_error(ours):.3f} / {energy_error(ref):.3f} [{final_change(ref):+.3f}]")
        lines.append(f"{integrator:14s}" + "".join(f"{c:>34s}" for c in cells))
    print("\n" + "\n".join(lines))
    # Euler gains 14.357 % at 2 ms, implicit loses 11.352 %, RK4 stays at 0.000 %
    assert f"{energy_error(energy_curves('Euler', 0.002)[0]):.3f}" == "14.357"
    assert f"{energy_error(energy_curves('implicit', 0.002)[0]):.3f}" == "11.352"
    ours, _ = energy_curves("implicit", 0.002)
    assert ours[-2] < ours[0]  # implicit dissipates
    ours, _ = energy_curves("Euler", 0.002)
    assert ours[-2] > ours[0]  # Euler gains
    # implicitfast == Euler bit for bit here: the only velocity-dependent force is Coriolis
    for dt in ENERGY_DT:
        np.testing.assert_array_equal(energy_curves("implicitfast", dt)[0], energy_curves("Euler", dt)[0])


@pytest.mark.parametrize(
    "name", ["smooth_free.xml", "smooth_tree.xml", "sensors.xml", "integ_tendon.xml", "tendon_spatial.xml"]
)
def test_spring_energy_matches_mujoco(name):
    """Simulator.energy() with springs on free, ball, hinge and slide joints and on fixed and
    spatial tendons against MuJoCo's mjData.energy after mj_forward (energy flag on), at
    N_ENERGY random states whose ball and free quaternions have random lengths (mj_energyPos
    reads qpos as it is; the forward pass normalizes its own copies), relative to max(1, |E|)."""
    text = ET.tostring(_with_energy_flag(ASSETS / "tests" / name), encoding="unicode")
    model, mj = load_pair(text)
    qpos, qvel, _ = random_states(mj, N_ENERGY, seed=5)
    rng = np.random.default_rng(6)
    for j in range(mj.njnt):
        a = mj.jnt_qposadr[j] + (3 if mj.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE else 0)
        if mj.jnt_type[j] in (mujoco.mjtJoint.mjJNT_FREE, mujoco.mjtJoint.mjJNT_BALL):
            qpos[:, a : a + 4] *= rng.uniform(0.5, 2.0, (N_ENERGY, 1))
    sim = engine.Simulator(model, batch=N_ENERGY)
    sim.data.qpos[:] = qpos
    sim.data.qvel[:] = qvel
    sim.forward()
    ours = sim.energy()
    d = mujoco.MjData(mj)
    worst = 0.0
    for i in range(N_ENERGY):
        d.qpos[:] = qpos[i]
        d.qvel[:] = qvel[i]
        mujoco.mj_forward(mj, d)
        worst = max(worst, rel_err(ours[i], d.energy))
    report(f"{name} energy (springs, unnormalized quaternions) vs mjData.energy", worst, 1e-12, N_ENERGY)
    assert worst < 1e-12


def _with_energy_flag(path: Path) -> ET.Element:
    root = ET.parse(path).getroot()
    option = root.find("option")
    if option is None:
        option = ET.Element("option")
        root.insert(0, option)
    flag = option.find("flag")
    if flag is None:
        flag = ET.SubElement(option, "flag")
    flag.set("energy", "enable")
    return root


# --- position integration and its inverse on the joint manifold ---------------------------------
@pytest.mark.parametrize("name", ["integ_free.xml", "integ_ball.xml"])
def test_integrate_and_differentiate_pos_match_mujoco(name):
    """Simulator.integrate_pos / differentiate_pos against mj_integratePos /
    mj_differentiatePos on free and ball joints (quaternions) and hinges, 60 random pairs,
    and the round trip integrate(q1, differentiate(q1, q2, dt), dt) = q2 (up to q ~ -q)."""
    model, mj = load_pair(ASSETS / "tests" / name)
    sim = engine.Simulator(model, batch=1)
    rng = np.random.default_rng(4)
    n = 60
    q1 = np.tile(mj.qpos0, (n, 1))
    q2 = q1.copy()
    for i in range(n):
        mujoco.mj_integratePos(mj, q1[i], rng.normal(size=mj.nv), 1.0)
        mujoco.mj_integratePos(mj, q2[i], rng.normal(size=mj.nv), 1.0)
    v = rng.normal(size=(n, mj.nv))
    ours_q = sim.integrate_pos(q1, v, 0.3)
    ours_v = sim.differentiate_pos(q1, q2, 0.7)
    back = sim.integrate_pos(q1, ours_v, 0.7)
    worst_q = worst_v = worst_round = 0.0
    for i in range(n):
        ref = q1[i].copy()
        mujoco.mj_integratePos(mj, ref, v[i], 0.3)
        worst_q = max(worst_q, float(np.max(np.abs(ref - ours_q[i]))))
        ref_v = np.zeros(mj.nv)
        mujoco.mj_differentiatePos(mj, ref_v, 0.7, q1[i], q2[i])
        worst_v = max(worst_v, rel_err(ours_v[i], ref_v))
        ref_back = np.zeros(mj.nv)
        mujoco.mj_differentiatePos(mj, ref_back, 1.0, q2[i], back[i])  # q ~ -q agree
        worst_round = max(worst_round, float(np.max(np.abs(ref_back))))
    report(f"{name} integrate_pos vs mj_integratePos", worst_q, 1e-12, n)
    report(f"{name} differentiate_pos vs mj_differentiatePos", worst_v, 1e-12, n)
    report(f"{name} integrate(differentiate) round trip (rotation vector)", worst_round, 1e-12, n)
    assert worst_q < 1e-12 and worst_v < 1e-12 and worst_round < 1e-12
    np.testing.assert_array_equal(sim.data.qpos, np.tile(mj.qpos0, (1, 1)))  # state untouched
    with pytest.raises(ValueError, match=r"qvel must have shape \(60, "):
        sim.integrate_pos(q1, v[:5], 0.1)
    with pytest.raises(ValueError, match="NaN or inf"):
        sim.differentiate_pos(q1, np.full_like(q1, np.nan), 0.1)
