"""Activation dynamics (dyntype integrator, filter, filterexact) against MuJoCo 4.0.0.

The model, assets/tests/integ_activation.xml, has ten actuators on two kinematic trees:
eight with an activation each (integrator, filter and filterexact; some actlimited, some
actearly, some with an affine gain whose velocity term multiplies act, one force-limited
that saturates, one on a fixed tendon) and two stateless ones among them, so actuator ids
and act addresses differ. Checks, each against MuJoCo on the same MjModel and state:

1. Forward at N_STATES random states (random qpos, qvel, act across and beyond actrange,
   ctrl across and beyond ctrlrange): act_dot, actuator_force and qfrc_actuator to TOL
   (1e-12, rel_err), qacc to TOL_QACC.
2. The implicit integrators' velocity derivative: qDeriv after one implicitfast step (the
   actuator and damper terms alone) to TOL at the same states: gainprm[2] multiplies act,
   or with actearly the next activation, where a stateless actuator's multiplies ctrl.
3. NSTEP-step trajectories under each of the four integrators with controls that vary every
   step: qpos, qvel and act after every step to TOL_TRAJ (1e-10, the trajectory tolerance
   of tests/README.md: 200 steps of a damped chain leave a few ulps of rounding, seen
   <= 1e-13); also through mujoco.rollout, whose state carries act.
4. Analytic, no oracle: under constant ctrl u a filterexact activation follows
   u + (act0 - u) exp(-n h / tau) and a filter u + (act0 - u) (1 - h / tau)^n to rounding
   (Euler, implicit, implicitfast); RK4 carries act in its stages, which for this linear
   ODE gives the closed forms with the RK4 growth factor; an integrator ramps by h u a
   step until it clamps at actrange, then stays there exactly.
5. Actuation disabled: act and act_dot do not change, as in MuJoCo; a bad control zeroes
   every control, act_dot included; a NaN act is not checked by mj_checkPos/Vel in MuJoCo
   4.0.0: it makes qacc bad, and the row is reset (on_bad="reset", as mj_step) or the
   error names act (on_bad="raise").
6. snapshot/restore carries act bit for bit; the loader copies MuJoCo's activation fields
   and refuses what the engine does not simulate, by actuator name.

(dm_control's quadruped.xml, whose actuators are dyntype filter, is not checked here: the
dm_control package is not installed in this environment, and this suite reads such models
only from an installed package.)
"""

from __future__ import annotations

import functools
import math

import mujoco
import mujoco.rollout
import numpy as np
import pytest

from robodyn import engine
from robodyn.engine import types as T
from robodyn.engine.control import PDDrive
from tests.helpers import ASSETS, random_states, rel_err, report, with_options

PATH = ASSETS / "tests" / "integ_activation.xml"
INTEGRATORS = ("Euler", "RK4", "implicit", "implicitfast")
N_STATES = 100
TOL = 1e-12
TOL_QACC = 1e-10
NSTEP = 200
N_TRAJ = 4
TOL_TRAJ = 1e-10
TOL_ANALYTIC = 1e-13


@functools.cache
def _pair(integrator: str = "Euler", actuation: str = "enable"):
    text = with_options(PATH, flags={"actuation": actuation}, integrator=integrator)
    return engine.load_mjcf(text), mujoco.MjModel.from_xml_string(text)


def _id(mj: mujoco.MjModel, name: str) -> int:
    return mj.actuator(name).id


def _random_act(mj: mujoco.MjModel, n: int, rng: np.random.Generator) -> np.ndarray:
    """(n, na) activations across each actrange and half its width beyond (else [-1.5, 1.5])."""
    act = np.zeros((n, mj.na))
    for a in range(mj.nu):
        adr = mj.actuator_actadr[a]
        if adr < 0:
            continue
        lo, hi = mj.actuator_actrange[a] if mj.actuator_actlimited[a] else (-1.0, 1.0)
        w = hi - lo
        act[:, adr] = rng.uniform(lo - 0.5 * w, hi + 0.5 * w, n)
    return act


def _states(n: int, seed: int):
    """(qpos, qvel, act, ctrl): random states, controls 1.5x their range (clamping acts)."""
    _, mj = _pair()
    qpos, qvel, ctrl = random_states(mj, n, seed=seed)
    return qpos, qvel, _random_act(mj, n, np.random.default_rng(seed + 1)), 1.5 * ctrl


def _set(d, qpos, qvel, act, ctrl) -> None:
    d.qpos[:], d.qvel[:], d.act[:], d.ctrl[:] = qpos, qvel, act, ctrl


# --- the loader -------------------------------------------------------------------------------------
def test_loader_copies_the_activation_fields():
    model, mj = _pair()
    assert model.na == mj.na == 8
    for name in ("dyntype", "actadr", "actnum", "actlimited", "actearly"):
        np.testing.assert_array_equal(getattr(model, f"actuator_{name}"), getattr(mj, f"actuator_{name}"))
    np.testing.assert_array_equal(model.actuator_actrange, mj.actuator_actrange)
    np.testing.assert_array_equal(model.actuator_dynprm[:, 0], mj.actuator_dynprm[:, 0])
    # what the model claims to exercise
    assert set(model.actuator_dyntype) == {T.DYN_NONE, T.DYN_INTEGRATOR, T.DYN_FILTER, T.DYN_FILTEREXACT}
    assert model.actuator_actadr[0] == -1 and model.actuator_actadr[6] == -1
    stateful = model.actuator_actadr >= 0
    assert np.any(model.actuator_actearly[stateful]) and not np.all(model.actuator_actearly[stateful])
    assert np.any(model.actuator_actlimited[stateful]) and not np.all(model.actuator_actlimited[stateful])
    gainvel = stateful & (model.actuator_gaintype == T.GAIN_AFFINE) & (model.actuator_gainprm[:, 2] != 0)
    early = model.actuator_actearly == 1
    assert np.any(gainvel & early) and np.any(gainvel & ~early)


REFUSED = {
    "muscle": ('<muscle name="m" joint="j"/>', "activation dynamics muscle"),
    "user": ('<general name="m" joint="j" dyntype="user"/>', "activation dynamics user"),
    "rotation servo": (
        '<general name="m" site="s" refsite="r" gear="0 0 0 0 0 1" dyntype="filter" dynprm="0.1" '
        'gainprm="2" biastype="affine" biasprm="0 -2 0"/>',
        "rotation servo",
    ),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_loader_refuses_what_it_does_not_simulate(case):
    """Muscles, user dynamics, and a stateful servo with a periodic setpoint (MuJoCo wraps
    its act on the circle) are refused, naming the actuator."""
    actuator, why = REFUSED[case]
    xml = f"""<mujoco><worldbody><site name="r"/><body><joint name="j" axis="0 0 1" range="-1 1"/>
      <geom size="0.1" mass="1"/><site name="s"/></body></worldbody>
      <actuator>{actuator}</actuator></mujoco>"""
    with pytest.raises(engine.UnsupportedModelError, match=rf"<actuator> 'm': .*{why}"):
        engine.load_mjcf(xml)


def test_drives_refuse_an_actuator_with_activation_dynamics():
    """A drive sets a motor's ctrl for this step's force: through an activation it cannot."""
    model, mj = _pair()
    with pytest.raises(ValueError, match="without activation dynamics"):
        PDDrive(model, [_id(mj, "int_sat")], kp=1.0, kd=0.1)
    PDDrive(model, [_id(mj, "motor1")], kp=1.0, kd=0.1)  # the stateless motor is fine


# --- 1. forward ----------------------------------------------------------------------------------------
FIELDS = {"act_dot": TOL, "actuator_force": TOL, "qfrc_actuator": TOL, "qacc": TOL_QACC}


def test_forward_matches_mujoco():
    model, mj = _pair()
    qpos, qvel, act, ctrl = _states(N_STATES, seed=3)
    sim = engine.Simulator(model, batch=N_STATES)
    _set(sim.data, qpos, qvel, act, ctrl)
    sim.forward()
    d = mujoco.MjData(mj)
    worst = dict.fromkeys(FIELDS, 0.0)
    for i in range(N_STATES):
        _set(d, qpos[i], qvel[i], act[i], ctrl[i])
        mujoco.mj_forward(mj, d)
        for f in FIELDS:
            worst[f] = max(worst[f], rel_err(getattr(sim.data, f)[i], getattr(d, f)))
    for f, tol in FIELDS.items():
        report(f"activation forward {f}", worst[f], tol, N_STATES)
    # honesty: the states clamp controls, start outside actrange, and actearly matters
    assert np.any(np.abs(ctrl) > 1.0)
    limited = np.flatnonzero(mj.actuator_actlimited)
    adr = mj.actuator_actadr[limited]
    lo, hi = mj.actuator_actrange[limited].T
    assert np.any((act[:, adr] < lo) | (act[:, adr] > hi))
    early = np.flatnonzero(mj.actuator_actearly)
    assert np.abs(sim.data.act_dot[:, mj.actuator_actadr[early]]).max() * mj.opt.timestep > 1e-2
    bad = {f: worst[f] for f, tol in FIELDS.items() if not worst[f] <= tol}
    assert not bad, f"beyond tolerance: {bad}"


# --- 2. the implicit integrators' velocity derivative --------------------------------------------------
def _mujoco_qderiv(mj: mujoco.MjModel, d: mujoco.MjData) -> np.ndarray:
    out = np.zeros((mj.nv, mj.nv))
    mujoco.mju_sparse2dense(out, d.qDeriv, mj.D_rownnz, mj.D_rowadr, mj.D_colind)
    return out


def test_actuator_velocity_derivative_matches_mujoco():
    """qDeriv as implicitfast forms it (actuators and dampers, no bias term), after one step
    from each state, ours vs MuJoCo's: an affine gain's velocity term times act (or the next
    act with actearly) enters it, as in mjd_actuator_vel."""
    model, mj = _pair("implicitfast")
    qpos, qvel, act, ctrl = _states(N_STATES, seed=5)
    sim = engine.Simulator(model, batch=N_STATES)
    _set(sim.data, qpos, qvel, act, ctrl)
    sim.step()
    d = mujoco.MjData(mj)
    worst = 0.0
    gainvel = (mj.actuator_gaintype == T.GAIN_AFFINE) & (mj.actuator_gainprm[:, 2] != 0)
    gv = mj.actuator_actadr[gainvel & (mj.actuator_actadr >= 0)]
    for i in range(N_STATES):
        _set(d, qpos[i], qvel[i], act[i], ctrl[i])
        mujoco.mj_step(mj, d)
        worst = max(worst, rel_err(sim.data.qDeriv[i], _mujoco_qderiv(mj, d)))
    report("activation qDeriv (implicitfast)", worst, TOL, N_STATES)
    assert len(gv) >= 2 and np.abs(act[:, gv]).max() > 0.5  # the act-dependent terms are there
    assert worst <= TOL


# --- 3. trajectories ----------------------------------------------------------------------------------
def _controls(mj: mujoco.MjModel, rng: np.random.Generator, nstep: int = NSTEP) -> np.ndarray:
    """(N_TRAJ, nstep, nu): a random sine per actuator and state, across ctrlrange (or
    [-1, 1]) and a little beyond."""
    lo = np.where(mj.actuator_ctrllimited, mj.actuator_ctrlrange[:, 0], -1.0)
    hi = np.where(mj.actuator_ctrllimited, mj.actuator_ctrlrange[:, 1], 1.0)
    mid, half = 0.5 * (lo + hi), 0.5 * (hi - lo)
    t = np.arange(nstep) * mj.opt.timestep
    freq = rng.uniform(0.5, 3.0, (N_TRAJ, 1, mj.nu))
    phase = rng.uniform(0, 2 * np.pi, (N_TRAJ, 1, mj.nu))
    return mid + 1.2 * half * np.sin(2 * np.pi * freq * t[None, :, None] + phase)


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_trajectory_matches_mujoco(integrator):
    model, mj = _pair(integrator)
    qpos, qvel, act, _ = _states(N_TRAJ, seed=17)
    ctrl = _controls(mj, np.random.default_rng(23))
    sim = engine.Simulator(model, batch=N_TRAJ)
    _set(sim.data, qpos, qvel, act, sim.data.ctrl)
    out = sim.rollout(ctrl)
    d = mujoco.MjData(mj)
    worst, where, count = 0.0, None, 0
    clamped = 0
    limited = np.flatnonzero(mj.actuator_actlimited)
    for r in range(N_TRAJ):
        mujoco.mj_resetData(mj, d)
        d.qpos[:], d.qvel[:], d.act[:] = qpos[r], qvel[r], act[r]
        for k in range(NSTEP):
            d.ctrl[:] = ctrl[r, k]
            mujoco.mj_step(mj, d)
            e = max(rel_err(getattr(out, f)[r, k], getattr(d, f)) for f in ("qpos", "qvel", "act"))
            if e > worst:
                worst, where = e, (r, k)
            count += 1
            adr = mj.actuator_actadr[limited]
            clamped += int(np.sum(np.isin(d.act[adr], mj.actuator_actrange[limited])))
        assert d.warning[mujoco.mjtWarning.mjWARN_BADQACC].number == 0
    assert count == N_TRAJ * NSTEP
    assert clamped > 0  # some activation sat on its actrange
    np.testing.assert_array_equal(out.act[:, -1], sim.data.act)
    report(f"activation trajectory {integrator}, {NSTEP} steps", worst, TOL_TRAJ, count)
    assert worst <= TOL_TRAJ, f"{integrator}: rel_err {worst:.3e} at (state, step) {where}"


def test_rollout_matches_mujoco_rollout():
    """mujoco.rollout's full physics state holds act: ours agrees along NSTEP steps."""
    model, mj = _pair("RK4")
    qpos, qvel, act, _ = _states(N_TRAJ, seed=29)
    ctrl = _controls(mj, np.random.default_rng(31))
    sim = engine.Simulator(model, batch=N_TRAJ)
    _set(sim.data, qpos, qvel, act, sim.data.ctrl)
    d = mujoco.MjData(mj)
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    init = np.empty((N_TRAJ, mujoco.mj_stateSize(mj, spec)))
    for b in range(N_TRAJ):
        d.qpos[:], d.qvel[:], d.act[:] = qpos[b], qvel[b], act[b]
        mujoco.mj_getState(mj, d, init[b], spec)
    ref, _ = mujoco.rollout.rollout(mj, d, init, ctrl)
    out = sim.rollout(ctrl)
    start = 1 + mj.nq + mj.nv
    worst = max(
        rel_err(out.qpos, ref[:, :, 1 : 1 + mj.nq]),
        rel_err(out.qvel, ref[:, :, 1 + mj.nq : start]),
        rel_err(out.act, ref[:, :, start : start + mj.na]),
    )
    report("activation rollout vs mujoco.rollout (RK4)", worst, TOL_TRAJ, N_TRAJ * NSTEP)
    assert worst <= TOL_TRAJ


# --- 4. analytic ---------------------------------------------------------------------------------------
# (actuator, constant ctrl, act0): inside ctrlrange, and for actlimited ones inside actrange
FILTERS = {
    "filt_servo": (0.7, -0.6),
    "filt_tendon": (0.6, -0.4),
    "filt_gainvel": (-0.9, 0.8),
    "fexact_early": (0.9, -0.4),
    "fexact_lim": (0.5, -0.2),
}
RAMPS = {"int_sat": (0.8, -0.3), "int_servo": (8.0, -0.5), "int_early": (-2.5, 0.4)}


def _rk4_factor(z: float) -> float:
    """RK4's weighted slope of x' = (u - x) / tau over one step, as a multiple of the
    first slope: 1 - z/2 + z^2/6 - z^3/24, z = h / tau (stages in closed form)."""
    return 1.0 - z / 2.0 + z * z / 6.0 - z**3 / 24.0


def _expected_filter(integrator, dyntype, u, act0, z, n):
    """act after n steps of constant u from act0 (z = h / tau)."""
    e0 = act0 - u
    if integrator == "RK4":
        p = _rk4_factor(z)
        if dyntype == T.DYN_FILTEREXACT:  # weighted slope, then the exact update
            return u + e0 * (1.0 - p * (1.0 - math.exp(-z))) ** n
        return u + e0 * (1.0 - z * p) ** n
    if dyntype == T.DYN_FILTEREXACT:
        return u + e0 * math.exp(-n * z)
    return u + e0 * (1.0 - z) ** n


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_analytic_activation_under_constant_control(integrator):
    model, mj = _pair(integrator)
    h = mj.opt.timestep
    sim = engine.Simulator(model, batch=1)
    ctrl = np.zeros(mj.nu)
    for name, (u, act0) in {**FILTERS, **RAMPS}.items():
        a = _id(mj, name)
        ctrl[a] = u
        sim.data.act[0, mj.actuator_actadr[a]] = act0
    out = sim.rollout(np.tile(ctrl, (NSTEP, 1)))
    n = np.arange(1, NSTEP + 1)
    worst = 0.0
    for name, (u, act0) in FILTERS.items():
        a = _id(mj, name)
        z = h / mj.actuator_dynprm[a, 0]
        expect = np.array([_expected_filter(integrator, mj.actuator_dyntype[a], u, act0, z, k) for k in n])
        got = out.act[0, :, mj.actuator_actadr[a]]
        worst = max(worst, float(np.max(np.abs(got - expect))))
        assert abs(got[-1] - u) < 0.5 * abs(act0 - u)  # it moved most of the way
    clamped_steps = 0
    for name, (u, act0) in RAMPS.items():
        a = _id(mj, name)
        got = out.act[0, :, mj.actuator_actadr[a]]
        ramp = act0 + n * h * u
        if mj.actuator_actlimited[a]:
            lo, hi = mj.actuator_actrange[a]
            at = hi if u > 0 else lo
            clamp = (ramp >= hi) | (ramp <= lo)
            assert clamp.any() and not clamp.all()  # it ramps, then clamps
            np.testing.assert_array_equal(got[clamp], at)  # exactly on the bound from then on
            clamped_steps += int(clamp.sum())
            ramp, got = ramp[~clamp], got[~clamp]
        worst = max(worst, float(np.max(np.abs(got - ramp))))
    assert clamped_steps > 0
    report(f"activation analytic (filters, ramps) {integrator}", worst, TOL_ANALYTIC, NSTEP * len(FILTERS))
    assert worst <= TOL_ANALYTIC


# --- 5. disabled actuation, bad controls, bad activations ------------------------------------------------
@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_disabled_actuation_freezes_act_as_mujoco(integrator):
    """<flag actuation="disable">: no force, act and act_dot untouched by forward and by the
    integrator (RK4 included), qpos and qvel as MuJoCo's."""
    model, mj = _pair(integrator, "disable")
    qpos, qvel, act, ctrl = _states(3, seed=41)
    sim = engine.Simulator(model, batch=3)
    _set(sim.data, qpos, qvel, act, ctrl)
    sim.data.act_dot[:] = 0.25
    sim.step(50)
    np.testing.assert_array_equal(sim.data.act, act)
    np.testing.assert_array_equal(sim.data.act_dot, 0.25)
    assert np.all(sim.data.actuator_force == 0.0)
    d = mujoco.MjData(mj)
    worst = 0.0
    for i in range(3):
        mujoco.mj_resetData(mj, d)
        _set(d, qpos[i], qvel[i], act[i], ctrl[i])
        d.act_dot[:] = 0.25
        for _ in range(50):
            mujoco.mj_step(mj, d)
        np.testing.assert_array_equal(d.act, act[i])
        np.testing.assert_array_equal(d.act_dot, 0.25)
        worst = max(worst, rel_err(sim.data.qpos[i], d.qpos), rel_err(sim.data.qvel[i], d.qvel))
    report(f"activation disabled {integrator}", worst, TOL_TRAJ, 3)
    assert worst <= TOL_TRAJ


def test_reset_clears_act_and_act_dot_as_mj_resetData():
    """A bad qvel with on_bad="reset": the row restarts from mj_resetData's state, act and
    act_dot zero (with actuation disabled no forward pass rewrites act_dot), as MuJoCo."""
    model, mj = _pair("Euler", "disable")
    qpos, qvel, act, ctrl = _states(1, seed=45)
    qvel[0, 1] = np.nan
    sim = engine.Simulator(model, batch=1, on_bad="reset")
    _set(sim.data, qpos, qvel, act, ctrl)
    sim.data.act_dot[:] = 0.25
    with pytest.warns(engine.PhysicsWarning, match=r"qvel was NaN"):
        sim.step()
    d = mujoco.MjData(mj)
    _set(d, qpos[0], qvel[0], act[0], ctrl[0])
    d.act_dot[:] = 0.25
    mujoco.mj_step(mj, d)
    assert d.warning[mujoco.mjtWarning.mjWARN_BADQVEL].number == 1 == sim.data.warning[0, T.WARN_BADQVEL]
    for name in ("act", "act_dot"):
        np.testing.assert_array_equal(getattr(d, name), 0.0)
        np.testing.assert_array_equal(getattr(sim.data, name)[0], 0.0)
    for name in ("qpos", "qvel", "time"):
        assert rel_err(getattr(sim.data, name)[0], getattr(d, name)) <= TOL, name


def test_bad_control_zeroes_the_activation_inputs_as_mujoco():
    """A NaN control: every control is taken as 0, so act_dot = 0 (integrator) or -act / tau
    (filters), and the warning is counted, as MuJoCo does."""
    model, mj = _pair()
    qpos, qvel, act, ctrl = _states(2, seed=43)
    ctrl[1, 3] = np.nan
    sim = engine.Simulator(model, batch=2)
    _set(sim.data, qpos, qvel, act, ctrl)
    with pytest.warns(engine.PhysicsWarning, match=r"ctrl was NaN"):
        sim.step()
    d = mujoco.MjData(mj)
    _set(d, qpos[1], qvel[1], act[1], ctrl[1])
    mujoco.mj_step(mj, d)
    assert d.warning[mujoco.mjtWarning.mjWARN_BADCTRL].number == 1 == sim.data.warning[1, T.WARN_BADCTRL]
    tau = np.maximum(mj.actuator_dynprm[:, 0], 1e-15)
    stateful = np.flatnonzero(mj.actuator_actadr >= 0)
    adr = mj.actuator_actadr[stateful]
    expect = np.where(mj.actuator_dyntype[stateful] == T.DYN_INTEGRATOR, 0.0, -act[1, adr] / tau[stateful])
    np.testing.assert_array_equal(sim.data.act_dot[1, adr], expect)
    np.testing.assert_array_equal(sim.data.act_dot[1], d.act_dot)
    for name in ("qpos", "qvel", "act"):
        assert rel_err(getattr(sim.data, name)[1], getattr(d, name)) <= TOL


def test_nan_act_resets_the_row_as_mujoco():
    """MuJoCo 4.0.0 does not check act (mj_checkPos/Vel read qpos and qvel only): a NaN act
    makes the force and qacc NaN, mj_checkAcc resets the data and the step runs from the
    initial state. on_bad="reset" does the same; the other row is untouched."""
    model, mj = _pair()
    qpos, qvel, act, ctrl = _states(2, seed=47)
    act[0, 2] = np.nan
    sim = engine.Simulator(model, batch=2, on_bad="reset")
    ref = engine.Simulator(model, batch=2)
    _set(sim.data, qpos, qvel, act, ctrl)
    _set(ref.data, qpos, qvel, act, ctrl)
    ref.data.act[0, 2] = 0.0
    with pytest.warns(engine.PhysicsWarning, match=r"qacc was NaN.* in row 0 "):
        sim.step()
    d = mujoco.MjData(mj)
    _set(d, qpos[0], qvel[0], act[0], ctrl[0])
    mujoco.mj_step(mj, d)
    assert d.warning[mujoco.mjtWarning.mjWARN_BADQACC].number == 1 == sim.data.warning[0, T.WARN_BADQACC]
    assert d.warning[mujoco.mjtWarning.mjWARN_BADQPOS].number == 0 == sim.data.warning[0, T.WARN_BADQPOS]
    for name in ("qpos", "qvel", "act", "time"):
        assert rel_err(getattr(sim.data, name)[0], getattr(d, name)) <= TOL, name
    ref.step()
    for name in ("qpos", "qvel", "act"):
        np.testing.assert_array_equal(getattr(sim.data, name)[1], getattr(ref.data, name)[1])


def test_nan_act_raises_naming_act():
    """on_bad="raise": the row is not advanced and the error names act, the bad input."""
    model, _ = _pair()
    qpos, qvel, act, ctrl = _states(2, seed=53)
    act[1, 5] = np.inf
    sim = engine.Simulator(model, batch=2)
    _set(sim.data, qpos, qvel, act, ctrl)
    with pytest.raises(engine.NonFiniteError, match=r"act\[5\] = inf in row 1 at step 1"):
        sim.step()
    np.testing.assert_array_equal(sim.data.act[1], act[1])
    np.testing.assert_array_equal(sim.data.qpos[1], qpos[1])
    assert sim.data.time[1] == 0.0 and sim.data.time[0] > 0.0


# --- 6. snapshot / restore ------------------------------------------------------------------------------
@pytest.mark.parametrize("integrator", ["RK4", "implicit"])
def test_snapshot_restore_carries_act_bit_for_bit(integrator):
    model, mj = _pair(integrator)
    qpos, qvel, act, _ = _states(3, seed=59)
    ctrl = _controls(mj, np.random.default_rng(61), 60)[:3]
    sim = engine.Simulator(model, batch=3)
    _set(sim.data, qpos, qvel, act, sim.data.ctrl)
    sim.rollout(ctrl[:, :10])
    snap = sim.snapshot()
    assert np.array_equal(snap.fields["act"], sim.data.act) and np.abs(snap.fields["act"]).max() > 0.1
    first = sim.rollout(ctrl[:, 10:])
    assert not np.array_equal(first.act[:, -1], snap.fields["act"])  # act moved
    sim.restore(snap)
    np.testing.assert_array_equal(sim.data.act, snap.fields["act"])
    again = sim.rollout(ctrl[:, 10:])
    for name in ("qpos", "qvel", "act"):
        np.testing.assert_array_equal(getattr(again, name), getattr(first, name))
    # a row's snapshot restored into another row continues as that row did
    one = sim.snapshot(rows=[0])
    sim.restore(one, rows=[2])
    np.testing.assert_array_equal(sim.data.act[2], sim.data.act[0])
    out = sim.rollout(np.repeat(ctrl[:1, 10:20], 3, axis=0))
    np.testing.assert_array_equal(out.act[2], out.act[0])
