"""Bad input to engine.Simulator and the drives: every call is refused with an error that
names the argument, and changes nothing (tests/adversarial/refuse.py checks every array
reachable from the simulator, scratch space included, bit for bit).

The physics' own refusals (a state that blows up) are in tests/engine/test_simulator.py;
here each case is an input a user typed.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import robodyn.engine.params
from robodyn import engine
from robodyn.engine.control import AccelerationDrive, PDDrive
from tests.adversarial.refuse import assert_refused
from tests.helpers import ASSETS

PENDULUM = ASSETS / "double_pendulum.xml"  # nq = nv = nu = 2, 3 bodies
CRANE = ASSETS / "crane.xml"


@pytest.fixture(scope="module")
def sim():
    s = engine.Simulator(engine.load_mjcf(PENDULUM), batch=3, nthread=1)
    s.data.qpos[:] = [[0.1, 0.2], [0.3, -0.1], [-0.2, 0.5]]
    s.data.qvel[:] = 0.5
    s.step(4)
    return s


@pytest.fixture(scope="module")
def other_model():
    return engine.load_mjcf(CRANE)


# --- the constructor -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"batch": 0}, ValueError, r"batch must be >= 1, got 0"),
        ({"batch": -4}, ValueError, r"batch must be >= 1, got -4"),
        ({"batch": 2.7}, TypeError, r"batch must be an int, got float"),
        ({"batch": "8"}, TypeError, r"batch must be an int, got str"),
        ({"batch": True}, TypeError, r"batch must be an int, got bool"),
        ({"batch": None}, TypeError, r"batch must be an int, got NoneType"),
        ({"nthread": 0}, ValueError, r"nthread must be an int >= 1, got 0"),
        ({"nthread": -3}, ValueError, r"nthread must be an int >= 1, got -3"),
        ({"nthread": 1.5}, ValueError, r"nthread must be an int >= 1, got 1.5"),
        ({"nthread": "2"}, ValueError, r"nthread must be an int >= 1, got '2'"),
        ({"nthread": False}, ValueError, r"nthread must be an int >= 1, got False"),
        ({"on_bad": "ignore"}, ValueError, r"on_bad must be one of \('raise', 'reset'\), got 'ignore'"),
        ({"on_bad": None}, ValueError, r"on_bad must be one of"),
        # more than the machine's memory: refused before numpy tries (and fails) to allocate
        (
            {"batch": 10**12},
            MemoryError,
            r"Data for batch=1000000000000 needs .* GiB .* but this machine has .* GiB of memory; "
            r"at most about \d+ environments",
        ),
    ],
)
def test_constructor_refuses(kwargs, error, match):
    model = engine.load_mjcf(PENDULUM)
    refused = assert_refused(lambda: engine.Simulator(model, **kwargs), error, match, model, kwargs)
    if error is MemoryError:
        assert isinstance(refused.value, engine.DataSizeError)


@pytest.mark.parametrize("model", [None, "assets/crane.xml", {"nq": 2}, 3])
def test_constructor_refuses_what_is_not_a_model(model):
    match = r"Simulator needs an engine.Model \(from engine.load_mjcf\)"
    assert_refused(lambda: engine.Simulator(model), TypeError, match, model)


def test_model_and_data_cannot_be_replaced(sim):
    other = engine.load_mjcf(PENDULUM)
    assert_refused(lambda: setattr(sim, "model", other), AttributeError, "Simulator.model is fixed", sim)
    data = engine.make_data(sim.model, 3)
    assert_refused(lambda: setattr(sim, "data", data), AttributeError, "write into its arrays", sim)


# --- step, rollout, forward ------------------------------------------------------------------
@pytest.mark.parametrize("nstep", [0, -1, 2.9, "3", True, None, np.float64(2.0), [1, 2]])
def test_step_refuses_bad_nstep(sim, nstep):
    assert_refused(lambda: sim.step(nstep), ValueError, r"nstep must be an int >= 1, got", sim)


@pytest.mark.parametrize(
    ("ctrl", "error", "match"),
    [
        (np.zeros((3, 5, 3)), ValueError, r"ctrl must have shape \(3, T, 2\) or \(T, 2\), got \(3, 5, 3\)"),
        (np.zeros((2, 5, 2)), ValueError, r"ctrl must have shape \(3, T, 2\)"),
        (np.zeros((3, 0, 2)), ValueError, r"ctrl must have shape"),
        (np.zeros(2), ValueError, r"ctrl must have shape"),
        (np.zeros((4, 5, 3, 2)), ValueError, r"ctrl must have shape"),
        (np.full((5, 2), np.nan), ValueError, r"ctrl contains NaN or inf"),
        (np.full((3, 5, 2), -np.inf), ValueError, r"ctrl contains NaN or inf"),
        ([["0.5", "0.1"]], TypeError, r"ctrl must hold real numbers, got dtype <U3"),
        (np.ones((5, 2)) * (1 + 2j), TypeError, r"ctrl must hold real numbers, got dtype complex128"),
        (np.ones((5, 2), dtype=bool), TypeError, r"ctrl must hold real numbers, got dtype bool"),
        ([[0.1, 0.2], [0.3]], ValueError, r"ctrl must be an array of numbers"),
        (None, TypeError, r"ctrl must hold real numbers, got dtype object"),
    ],
)
def test_rollout_refuses_bad_controls(sim, ctrl, error, match):
    assert_refused(lambda: sim.rollout(ctrl), error, match, sim)


@pytest.mark.parametrize(
    ("rows", "error", "match"),
    [
        ([3], IndexError, r"rows \[3\] out of range for batch 3"),
        ([-1], IndexError, r"rows \[-1\] out of range for batch 3"),
        ([0.5], TypeError, r"rows must be row indices \(ints\) or a boolean mask"),
        (["1"], TypeError, r"rows must be row indices"),
        ([[0, 1]], TypeError, r"rows must be row indices"),
        (np.ones(4, dtype=bool), ValueError, r"a boolean row mask must have shape \(3,\), got \(4,\)"),
    ],
)
def test_forward_refuses_bad_rows(sim, rows, error, match):
    assert_refused(lambda: sim.forward(rows), error, match, sim)


# --- snapshot and restore --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("rows", "error", "match"),
    [
        ([5], IndexError, r"out of range for batch 3"),
        ([0, -2], IndexError, r"out of range for batch 3"),
        (1.0, TypeError, r"rows must be row indices"),
        (np.zeros(2, dtype=bool), ValueError, r"boolean row mask must have shape \(3,\)"),
    ],
)
def test_snapshot_refuses_bad_rows(sim, rows, error, match):
    assert_refused(lambda: sim.snapshot(rows), error, match, sim)


def _tampered(snap, **fields):
    return snap._replace(fields={**snap.fields, **fields})


@pytest.mark.parametrize(
    ("make", "error", "match"),
    [
        (lambda s: None, TypeError, r"restore needs a Snapshot from Simulator.snapshot, got NoneType"),
        (lambda s: s.snapshot().fields, TypeError, r"restore needs a Snapshot.*got dict"),
        (lambda s: tuple(s.snapshot()), TypeError, r"restore needs a Snapshot.*got tuple"),
        (lambda s: s.snapshot()._replace(model_digest="0" * 32), ValueError, r"different model"),
        (
            lambda s: _tampered(s.snapshot(), qpos=np.zeros((3, 3))),
            ValueError,
            r"field qpos must be float64 of shape \(3, 2\)",
        ),
        (
            lambda s: _tampered(s.snapshot(), qvel=np.zeros((3, 2), np.float32)),
            ValueError,
            r"field qvel must be float64",
        ),
        (
            lambda s: _tampered(s.snapshot(), time=[0.0, 0.0, 0.0]),
            ValueError,
            r"field time must be float64 of shape \(3,\)",
        ),
        (
            lambda s: _tampered(s.snapshot(), eq_active=np.zeros((3, 1), np.int64)),
            ValueError,
            r"field eq_active must be int32",
        ),
        (
            lambda s: _tampered(s.snapshot(), qvel=np.full((3, 2), np.nan)),
            ValueError,
            r"field qvel holds NaN, inf",
        ),
        (
            lambda s: _tampered(s.snapshot(), qpos=np.full((3, 2), 1e11)),
            ValueError,
            r"field qpos holds NaN, inf or a value beyond 1e10",
        ),
        (lambda s: s.snapshot()._replace(fields={}), ValueError, r"snapshot fields must be exactly"),
        (
            lambda s: s.snapshot()._replace(fields={**s.snapshot().fields, "extra": 1}),
            ValueError,
            r"fields must be exactly",
        ),
        (
            lambda s: s.snapshot()._replace(rows=np.array([0, 1, 7])),
            IndexError,
            r"rows \[7\] out of range for batch 3",
        ),
        (lambda s: s.snapshot()._replace(rows=np.array([0, 0, 1])), ValueError, r"name a row twice"),
    ],
)
def test_restore_refuses_bad_snapshots(sim, make, error, match):
    snap = make(sim)
    assert_refused(lambda: sim.restore(snap), error, match, sim)


@pytest.mark.parametrize(
    ("rows", "error", "match"),
    [
        ([0, 1], ValueError, r"snapshot holds 3 rows, cannot restore into 2"),
        ([0, 1, 1], ValueError, r"name a row twice"),
        ([0, 1, 3], IndexError, r"out of range for batch 3"),
        (np.array([True, False, True]), ValueError, r"snapshot holds 3 rows, cannot restore into 2"),
    ],
)
def test_restore_refuses_bad_target_rows(sim, rows, error, match):
    snap = sim.snapshot()
    assert_refused(lambda: sim.restore(snap, rows=rows), error, match, sim)


def test_restore_refuses_a_snapshot_of_another_model(sim, other_model):
    snap = engine.Simulator(other_model, batch=3).snapshot()
    assert_refused(lambda: sim.restore(snap), ValueError, r"taken from a different model", sim)


# --- queries -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda s: s.jacobian(3), IndexError, r"body 3 out of range \(model has 3 bodies\)"),
        (lambda s: s.jacobian(-1), IndexError, r"body -1 out of range"),
        (lambda s: s.jacobian(1.0), TypeError, r"body must be an int body id, got float"),
        (lambda s: s.jacobian("link1"), TypeError, r"body must be an int body id, got str"),
        (
            lambda s: s.jacobian(1, point=[0, 0]),
            ValueError,
            r"point must have shape \(3,\) or \(3, 3\), got \(2,\)",
        ),
        (lambda s: s.jacobian(1, point=[0, np.nan, 0]), ValueError, r"point contains NaN or inf"),
        (lambda s: s.jacobian(1, point=["a", "b", "c"]), TypeError, r"point must hold real numbers"),
        (lambda s: s.jacobian(1, row=3), IndexError, r"row 3 out of range for batch 3"),
        (lambda s: s.jacobian(1, row=1.0), IndexError, r"row 1.0 out of range"),
        (
            lambda s: s.apply_force(1, [1, 0]),
            ValueError,
            r"force must have shape \(3,\) or \(3, 3\), got \(2,\)",
        ),
        (lambda s: s.apply_force(1, [1, 0, np.inf]), ValueError, r"force contains NaN or inf"),
        (
            lambda s: s.apply_force(1, [1, 0, 0], torque=[0, 0, 1j]),
            TypeError,
            r"torque must hold real numbers",
        ),
        (lambda s: s.apply_force(1, [1, 0, 0], point=np.zeros((2, 3))), ValueError, r"point must have shape"),
        (lambda s: s.apply_force(9, [1, 0, 0]), IndexError, r"body 9 out of range"),
        (lambda s: s.integrate_pos([0, 0, 0], [0, 0], 0.1), ValueError, r"qpos must have shape \(N, 2\)"),
        (lambda s: s.integrate_pos([0, 0], [0, 0, 0], 0.1), ValueError, r"qvel must have shape \(1, 2\)"),
        (lambda s: s.integrate_pos([0, 0], [0, np.nan], 0.1), ValueError, r"qvel contains NaN or inf"),
        (lambda s: s.integrate_pos([0, 0], [0, 0], np.nan), ValueError, r"dt must be finite, got nan"),
        (lambda s: s.integrate_pos([0, 0], [0, 0], "0.1"), TypeError, r"dt must be a real number, got str"),
        (
            lambda s: s.differentiate_pos([0, 0], [0, 1], 0.0),
            ValueError,
            r"dt must be finite and > 0, got 0.0",
        ),
        (lambda s: s.differentiate_pos([0, 0], [0, 1], -0.1), ValueError, r"dt must be finite and > 0"),
        (
            lambda s: s.differentiate_pos([0, 0], [0, 1], np.inf),
            ValueError,
            r"dt must be finite and > 0, got inf",
        ),
        (
            lambda s: s.differentiate_pos([[0, 0]], [[0, 1], [1, 1]], 0.1),
            ValueError,
            r"qpos2 must have shape \(1, 2\)",
        ),
    ],
)
def test_queries_refuse_bad_arguments(sim, call, error, match):
    assert_refused(lambda: call(sim), error, match, sim)


# --- drives ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def crane():
    model = engine.load_mjcf(CRANE)
    return engine.Simulator(model, batch=2, nthread=1), AccelerationDrive(model, 0)


@pytest.mark.parametrize(
    ("command", "nstep", "match"),
    [
        ([[np.nan], [0.0]], 5, r"command contains NaN or inf; nothing was stepped"),
        ([[np.inf], [0.0]], 1, r"command contains NaN or inf"),
        ([0.1, 0.2, 0.3], 1, r"command must have shape \(2,\) or \(2, 1\), got \(3,\)"),
        ([[0.1], [0.2]], 0, r"nstep must be an int >= 1, got 0"),
        ([[0.1], [0.2]], 2.5, r"nstep must be an int >= 1, got 2.5"),
    ],
)
def test_acceleration_drive_refuses_bad_commands(crane, command, nstep, match):
    sim, drive = crane
    assert_refused(lambda: drive.step(sim, command, nstep), ValueError, match, sim)


def test_a_drive_for_another_model_is_refused(crane, sim):
    _, drive = crane
    assert_refused(lambda: drive.step(sim, [[0.1]] * 3, 1), ValueError, r"was made for another model", sim)


@pytest.mark.parametrize(
    ("args", "error", "match"),
    [
        (([0, 1], [1.0, -1.0], [0.1, 0.1]), ValueError, r"kp and kd must be finite and >= 0"),
        (([0, 1], [1.0, np.nan], [0.1, 0.1]), ValueError, r"kp and kd must be finite and >= 0"),
        (([0, 0], [1.0, 1.0], [0.1, 0.1]), ValueError, r"two actuators drive the same dof"),
        (([5], [1.0], [0.1]), IndexError, r"actuator 5 out of range \(model has 2\)"),
        (([0.5], [1.0], [0.1]), TypeError, r"actuator must be an int, got float"),
        (([], [], []), ValueError, r"needs at least one actuator"),
    ],
)
def test_pd_drive_refuses_bad_gains_and_actuators(sim, args, error, match):
    assert_refused(lambda: PDDrive(sim.model, *args), error, match, sim.model, args)


# --- per-row physical parameters ---------------------------------------------------------------
@pytest.fixture(scope="module")
def quad():
    """Two quadrupeds on the floor, row 1 with damping of its own."""
    model = engine.load_mjcf(ASSETS / "quadruped.xml")
    s = engine.Simulator(model, batch=2, nthread=1)
    s.set_param("dof_damping", [1], model.dof_damping[None] * 1.5)
    s.step(3)
    return s


def _masses(model, value):
    """One row of body masses: `value` for every body but the world."""
    m = np.full((1, model.nbody), value, dtype=np.float64)
    m[0, 0] = 0.0
    return m


def _inertias(model, value):
    i = np.full((1, model.nbody, 3), value, dtype=np.float64)
    i[0, 0] = 0.0
    return i


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda s: s.set_param("body_mass", [], np.zeros((0, s.model.nbody))), ValueError,
         r"set_param: rows must name at least one row, got \[\]"),
        (lambda s: s.set_param("body_mass", np.array([], dtype=int), np.zeros((0, s.model.nbody))),
         ValueError, r"set_param: rows must name at least one row"),
        (lambda s: s.set_params([], {"body_mass": np.zeros((0, s.model.nbody))}), ValueError,
         r"set_params: rows must name at least one row"),
        (lambda s: s.set_param("body_mass", np.array([2**64 - 1], dtype=np.uint64), s.model.body_mass[None]),
         IndexError, r"rows \[18446744073709551615\] out of range for batch 2"),
        (lambda s: s.set_param("body_mass", [0], _masses(s.model, 5e-324)), ValueError,
         r"body_mass for row 0: body 1 has 5e-324: above 0 it must be at least 1e-15"),
        (lambda s: s.set_param("body_mass", [0], _masses(s.model, 1e11)), ValueError,
         r"body_mass for row 0: body 1 has 100000000000.0: at most 1e\+10"),
        (lambda s: s.set_param("body_inertia", [1], _inertias(s.model, 1e308)), ValueError,
         r"body_inertia for row 1: body 1 has \[1e\+308, 1e\+308, 1e\+308\]: at most 1e\+10"),
        (lambda s: s.set_param("body_inertia", [1], _inertias(s.model, 1e-300)), ValueError,
         r"body_inertia for row 1: body 1 .* above 0 it must be at least 1e-15"),
        (lambda s: s.set_param("dof_damping", [0], np.full((1, s.model.nv), np.nan)), ValueError,
         r"dof_damping for row 0: it is not finite"),
        (lambda s: s.set_param("mass", [0], [[1.0]]), ValueError, r"unknown parameter 'mass'"),
    ],
)  # fmt: skip
def test_set_param_refuses_bad_rows_and_values(quad, call, error, match):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy overflow warning leaks out of the checks
        assert_refused(lambda: call(quad), error, match, quad)


def test_restore_carries_per_row_parameters_bit_for_bit(quad):
    """A snapshot with per-row parameters restores the rows' constants as they were: the
    following steps repeat bit for bit (rows whose masses are the model's keep its own
    compiled constants, not a recomputation one ulp away)."""
    snap = quad.snapshot()
    quad.step(200)
    first = quad.data.qpos.copy()
    quad.restore(snap)
    quad.step(200)
    np.testing.assert_array_equal(quad.data.qpos, first)
    for name in robodyn.engine.params.DERIVED:
        np.testing.assert_array_equal(quad.get_param(name)[1], getattr(quad.model, name), err_msg=name)
    quad.restore(snap)
