"""engine.binding: kernels run without bounds checks, so a Model and a Data must be checked
to belong together before any kernel sees them, and must not be swappable afterwards.

Each case below once crashed the process or wrote out of bounds silently; each must now
raise a clear error and leave the process (and the simulator) intact, which the last
assertion of every test checks by stepping again and comparing with a fresh simulator.
"""

from __future__ import annotations

import numpy as np
import pytest

from robodyn import engine
from robodyn.engine import binding
from robodyn.engine.data import DATA_SPECS
from robodyn.engine.model import MODEL_SPECS
from tests.helpers import ASSETS

PENDULUM = ASSETS / "double_pendulum.xml"
SENSORS = ASSETS / "tests" / "sensors.xml"


def _with_one_more(path, tag: str) -> engine.Model:
    """The model of `path` with one more site or body (same nq, nv and nu)."""
    text = path.read_text()
    extra = {
        "site": '<site name="extra_site" pos="0 0 0.1"/>',
        "body": '<body name="extra_body" pos="0 0 2"><geom type="sphere" size="0.05" mass="0.1"/></body>',
    }[tag]
    return engine.load_mjcf(text.replace("<worldbody>", "<worldbody>" + extra, 1))


def _still_works(sim: engine.Simulator) -> None:
    """The simulator steps and agrees with a fresh one on the same model and state."""
    fresh = engine.Simulator(sim.model, batch=sim.batch)
    for name in ("qpos", "qvel", "ctrl"):
        getattr(fresh.data, name)[:] = getattr(sim.data, name)
    sim.step(20)
    fresh.step(20)
    np.testing.assert_array_equal(sim.data.qpos, fresh.data.qpos)


def test_model_and_data_cannot_be_replaced():
    """`sim.model = other` (same nq, nv, nu; one more site, or one more body) and
    `sim.data = sim.data._replace(xpos=small)` are refused; the simulator is unchanged."""
    sim = engine.Simulator(engine.load_mjcf(PENDULUM), batch=2)
    model, data = sim.model, sim.data
    for other in (_with_one_more(PENDULUM, "site"), _with_one_more(PENDULUM, "body")):
        assert (other.nq, other.nv, other.nu) == (model.nq, model.nv, model.nu)
        with pytest.raises(AttributeError, match="fixed when the Simulator is made"):
            sim.model = other
    with pytest.raises(AttributeError, match="fixed when the Simulator is made"):
        sim.data = sim.data._replace(xpos=np.zeros((2, 1, 3)))
    assert sim.model is model and sim.data is data
    _still_works(sim)


def test_bind_refuses_data_of_another_model():
    """A Data made for a model with one more body (or site, or sensor data) cannot be
    bound to the smaller model: the error names the array and the mismatch."""
    model = engine.load_mjcf(PENDULUM)
    for tag in ("body", "site"):
        bigger = _with_one_more(PENDULUM, tag)
        expect = rf"Data\.\w+ has shape .*\(n{tag}\) must be \d+: this array does not belong to this model"
        with pytest.raises(engine.BindingError, match=expect):
            binding.bind(model, engine.make_data(bigger, 2))
    sensors = engine.load_mjcf(SENSORS)
    data = engine.make_data(sensors, 1)
    short = data._replace(sensordata=np.zeros((1, sensors.nsensordata - 1)))
    with pytest.raises(engine.BindingError, match=r"Data\.sensordata has shape"):
        binding.bind(sensors, short)


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d._replace(xpos=np.zeros((2, 1, 3))), r"Data\.xpos has shape"),
        (lambda d: d._replace(qpos=d.qpos.astype(np.float32)), r"Data\.qpos must be a 2-d float64"),
        (lambda d: d._replace(qvel=np.asfortranarray(np.zeros((2, 2)))[:, :1]), r"Data\.qvel"),
        (lambda d: d._replace(qacc=d.qacc[:, ::-1]), r"Data\.qacc must be C-contiguous"),
        (lambda d: d._replace(status=d.status.astype(np.int64)), r"Data\.status must be a 1-d int32"),
        (lambda d: d._replace(ncon=[0, 0]), r"Data\.ncon must be a numpy array"),
        (lambda d: d._replace(time=np.zeros(3)), r"Data\.qpos has shape \(2, 2\), but axis 0 \(B\) must be"),
    ],
)
def test_bind_refuses_inconsistent_data(change, message):
    model = engine.load_mjcf(PENDULUM)
    data = engine.make_data(model, 2)
    with pytest.raises((engine.BindingError, TypeError), match=message):
        binding.bind(model, change(data))


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda m: m._replace(body_pos=np.zeros((m.nbody + 1, 3))), r"Model\.body_pos has shape"),
        (lambda m: m._replace(nbody=m.nbody - 1), r"Model\.body_parentid has shape"),
        (lambda m: m._replace(M_colind=m.M_colind.astype(np.int64)), r"Model\.M_colind must be a 1-d int32"),
        (lambda m: m._replace(nv=-1), r"Model\.nv must be an int >= 0"),
        (lambda m: m._replace(opt_timestep="0.01"), r"Model\.opt_timestep must be a float"),
        (lambda m: m._replace(nM=m.nM + 1), r"Model\.(qM|M_colind|nM)"),
    ],
)
def test_simulator_refuses_inconsistent_model(change, message):
    model = engine.load_mjcf(PENDULUM)
    with pytest.raises(engine.BindingError, match=message):
        engine.Simulator(change(model), batch=1)


def test_declarations_cover_every_field():
    """Every Model and Data field is declared (dtype and shape), so the checks above see
    every array a kernel can index."""
    assert set(MODEL_SPECS) == set(engine.Model._fields)
    assert set(DATA_SPECS) == set(engine.Data._fields)
    model = engine.load_mjcf(SENSORS)
    sizes = binding.check_model(model)
    assert binding.check_data(model, engine.make_data(model, 3), sizes) == 3


def test_a_refused_bind_leaves_a_working_process():
    """After every refusal above, simulators of the same models still step correctly."""
    model = engine.load_mjcf(PENDULUM)
    with pytest.raises(engine.BindingError):
        binding.bind(model, engine.make_data(_with_one_more(PENDULUM, "body"), 2))
    sim = engine.Simulator(model, batch=2)
    sim.data.qvel[:] = [[1.0, -1.0], [0.5, 0.2]]
    _still_works(sim)
