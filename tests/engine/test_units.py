"""Which separately compiled units a model runs (engine.binding.units_for).

A unit is compiled only for the models that call it, so that a new user's first run compiles
only what the model uses: the one solver it names (Newton or PGS), the noslip pass only with
noslip_iterations > 0, the spatial tendons' path and wrapping code only with a spatial
tendon, cacc / cfrc_int (mj_rnePostConstraint) only for sensors that read them, and the
convex collider's pair units (convex_pair, hfield_pair) only for the pairs that need them. The
physics through each unit is compared with MuJoCo in the tests of its stage (test_solver,
test_noslip, test_tendon_spatial, test_sensors); here: that the right unit is chosen, and
that the Model record a Simulator runs with points at it and at nothing else.
"""

import numpy as np

from robodyn import engine
from robodyn.engine.binding import units_for
from robodyn.engine.collision_driver import collision, collision_convex, convex_pair, hfield_pair
from robodyn.engine.ptr import MODEL_PTR, PAIR_SIGNATURE, UNITS
from robodyn.engine.sensors import rne_post
from robodyn.engine.solver import fwd_constraint_newton, fwd_constraint_pgs, noslip_pass
from robodyn.engine.tendon import spatial_tendons
from tests.helpers import ASSETS, with_options, without_contacts

QUADRUPED = ASSETS / "quadruped.xml"


def test_solver_unit_is_the_model_s_solver():
    assert units_for(engine.load_mjcf(QUADRUPED))["solver"] is fwd_constraint_newton
    pgs = units_for(engine.load_mjcf(with_options(QUADRUPED, solver="PGS")))
    assert pgs["solver"] is fwd_constraint_pgs
    assert fwd_constraint_newton not in pgs.values()


def test_noslip_unit_only_with_noslip_iterations():
    assert "noslip" not in units_for(engine.load_mjcf(QUADRUPED))
    for solver in ("Newton", "PGS"):
        units = units_for(engine.load_mjcf(with_options(QUADRUPED, solver=solver, noslip_iterations=3)))
        assert units["noslip"] is noslip_pass


def test_spatial_tendon_unit_only_with_a_spatial_tendon():
    for name in ("tendon_spatial.xml", "tendon_wrap.xml"):
        assert units_for(engine.load_mjcf(ASSETS / "tests" / name))["tendon"] is spatial_tendons
    fixed = engine.load_mjcf(ASSETS / "tests" / "constraint_equality.xml")
    assert fixed.ntendon > 0
    assert "tendon" not in units_for(fixed)


def test_rne_post_unit_only_for_sensors_that_read_it():
    # the quadruped's accelerometer reads cacc; the crane's sensors read positions and velocities
    assert units_for(engine.load_mjcf(QUADRUPED))["rne_post"] is rne_post
    crane = engine.load_mjcf(ASSETS / "crane.xml")
    assert crane.nsensor > 0 and "rne_post" not in units_for(crane)


def test_record_points_at_the_chosen_units_only():
    """The bound Model record holds the address of each chosen unit and 0 in every other slot
    (0: never called)."""
    model = engine.load_mjcf(ASSETS / "crane.xml")
    sim = engine.Simulator(model)
    chosen = units_for(model)
    record = sim._bound.model_record
    for slot in UNITS:
        word = int(record[MODEL_PTR.offsets[f"unit_{slot}"][0]])
        assert (word != 0) == (slot in chosen), slot


def test_pair_units_only_for_their_pairs():
    """collision_convex reaches the convex collider through pair units: convex_pair for a
    model with a convex pair, hfield_pair for one with a height field; a model whose pairs
    all have closed-form colliders runs `collision` and neither."""
    convex = units_for(engine.load_mjcf(ASSETS / "tests" / "collision_convex.xml"))
    assert convex["collision"] is collision_convex and convex["convex_pair"] is convex_pair
    assert "hfield_pair" not in convex
    hfield = units_for(engine.load_mjcf(ASSETS / "tests" / "collision_hfield.xml"))
    assert hfield["collision"] is collision_convex and hfield["hfield_pair"] is hfield_pair
    assert "convex_pair" not in hfield
    closed = units_for(engine.load_mjcf(QUADRUPED))
    assert closed["collision"] is collision and not {"convex_pair", "hfield_pair"} & set(closed)


def test_collision_pass_sets_the_pair_units_it_calls():
    """Simulator.collision() runs whatever the disable flags say: on a model whose contacts
    are disabled (no collision units in its record) it compiles and sets the pair unit its
    pairs need, and only that one."""
    model = engine.load_mjcf(without_contacts(ASSETS / "tests" / "collision_hfield.xml"))
    sim = engine.Simulator(model)
    record = sim._bound.model_record

    def word(slot):
        return int(record[MODEL_PTR.offsets[f"unit_{slot}"][0]])

    assert word("collision") == word("hfield_pair") == word("convex_pair") == 0
    sim.forward()
    sim.collision()
    assert word("hfield_pair") == hfield_pair.address(PAIR_SIGNATURE)
    assert word("convex_pair") == 0


def test_drive_units_are_set_when_a_simulator_first_drives():
    """The step driver holds no drive code: a drive's job unit is compiled and set in the
    Model records (the shared one and a row's own) the first time a Simulator drives, and a
    Simulator that never drives leaves both slots 0."""
    from robodyn.engine.control import AccelerationDrive, PDDrive
    from robodyn.engine.drive import acceleration_drive_unit, pd_drive_unit

    model = engine.load_mjcf(without_contacts(ASSETS / "crane.xml"))
    sim = engine.Simulator(model, batch=2)
    sim.set_param("dof_damping", [1], [np.asarray(model.dof_damping) + 0.1])  # row 1's own record
    records = (sim._bound.model_record, sim._bound.row_records[1])

    def words(slot):
        return [int(r[MODEL_PTR.offsets[f"unit_{slot}"][0]]) for r in records]

    assert words("drive_pd") == words("drive_acceleration") == [0, 0]
    PDDrive(model, [0], 10.0, 1.0).step(sim, np.zeros((2, 1)), nstep=2)
    assert words("drive_pd") == [pd_drive_unit.address(PAIR_SIGNATURE)] * 2
    assert words("drive_acceleration") == [0, 0]
    AccelerationDrive(model, 0).step(sim, np.zeros((2, 1)), nstep=2)
    assert words("drive_acceleration") == [acceleration_drive_unit.address(PAIR_SIGNATURE)] * 2
