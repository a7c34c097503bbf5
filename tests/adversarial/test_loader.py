"""Bad input to engine.load_mjcf and engine.make_data: hostile MJCF documents and files,
features the engine does not simulate, values it cannot simulate, bad buffer sizes and
bad arguments. Every case is refused with one exception type whose message names the
element, attribute or argument (and MuJoCo's own message where MuJoCo's compiler refused
it), and a simulator that was running beforehand is bit-identical afterwards
(tests/adversarial/refuse.py).

The error types (engine.errors): ModelError (a ValueError) for a model or a value that
cannot be loaded, UnsupportedModelError (a ModelError) for a feature the engine does not
simulate, ModelFileError (a ModelError and a FileNotFoundError) for a path that names no
file, ModelArgumentError (a TypeError) for an argument of the wrong kind.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import mujoco
import numpy as np
import pytest

from robodyn import engine
from robodyn.engine.capacity import DEFAULT_NCONMAX
from robodyn.engine.errors import MemoryWarning, ModelArgumentError, ModelError, ModelFileError
from tests.adversarial.refuse import Files, assert_refused
from tests.engine.test_collision import CONE
from tests.helpers import ASSETS, with_options

PENDULUM = ASSETS / "double_pendulum.xml"
STACK = ASSETS / "tests" / "constraint_stack.xml"  # 4 free boxes on a floor, 64 possible contacts

# one limited hinge arm with a sphere over a floor; each case below changes one thing
ARM = """
<mujoco model="arm">
  {head}
  <option {option}>
    <flag {flag}/>
  </option>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 0.1" {floor}/>
    <body name="arm" pos="{pos}" {body}>
      <joint name="hinge" type="hinge" axis="0 1 0" range="{range}" {joint}/>
      <geom name="ball" type="sphere" size="{size}" {geom}/>
      <site name="tip" pos="0.1 0 0" {site}/>
    </body>
  </worldbody>
  {tail}
</mujoco>
"""


def arm(**parts) -> str:
    """The ARM document with the given parts filled in (the rest empty; pos, range and
    size replace the body's, joint's and geom's own)."""
    keys = ("head", "option", "flag", "floor", "body", "joint", "geom", "site", "tail")
    values = {"pos": "0 0 0.5", "range": "-1 1", "size": "0.1", **{k: "" for k in keys}}
    return ARM.format(**{**values, **parts})


def chain(n: int) -> str:
    """n hinged capsules in a chain over a floor, every pair of links free to collide."""
    links = "".join(
        f'<body name="l{i}" pos="0.1 0 0"><joint type="hinge" axis="0 0 1" range="-1 1"/>'
        '<geom type="capsule" fromto="0 0 0 0.1 0 0" size="0.02"/>'
        for i in range(n)
    )
    return (
        '<mujoco><option><flag filterparent="disable"/></option><worldbody>'
        f'<geom type="plane" size="5 5 0.1"/>{links}{"</body>" * n}</worldbody></mujoco>'
    )


MOTOR = '<actuator><motor name="drive" joint="hinge" {}/></actuator>'
TENDON = '<tendon><fixed name="couple" {}><joint joint="hinge" coef="{}"/></fixed></tendon>'


@pytest.fixture(scope="module")
def sim():
    """A running simulator: every refused load must leave it bit-identical."""
    s = engine.Simulator(engine.load_mjcf(PENDULUM), batch=2, nthread=1)
    s.data.qpos[:] = [[0.1, 0.2], [0.3, -0.1]]
    s.step(3)
    return s


def test_the_template_loads():
    """ARM as is loads (contacts, a limit), so each refusal below is due to its one change."""
    model = engine.load_mjcf(arm())
    assert model.nv == 1 and model.nconmax > 0 and model.nefcmax == 2 + 4 * model.nconmax


# --- features the engine does not simulate -----------------------------------------------------
UNSUPPORTED = [
    ("override_flag", arm(flag='override="enable"'), r'<option><flag override="enable">.*energy'),
    ("fwdinv_flag", arm(flag='fwdinv="enable"'), r'<flag fwdinv="enable">'),
    ("invdiscrete_flag", arm(flag='invdiscrete="enable"'), r'<flag invdiscrete="enable">'),
    ("two_flags", arm(flag='override="enable" fwdinv="enable"'), r'override="enable" fwdinv="enable"'),
    ("cg_solver", arm(option='solver="CG"'), r'<option solver="CG">'),
    (
        "mixed_solreffriction",
        arm(joint='frictionloss="0.1" solreffriction="0.02 -1"'),
        r"<joint frictionloss> 'hinge'.*solref",
    ),
    ("gravcomp", arm(body='gravcomp="1"'), r"<body gravcomp> 'arm'"),
    ("adhesion", arm(geom='adhesion="1"'), r"<geom adhesion> 'ball'"),
    (
        "muscle",
        arm(tail='<actuator><muscle name="biceps" joint="hinge"/></actuator>'),
        r"<actuator> 'biceps'",
    ),
    (
        "user_dynamics",
        arm(tail='<actuator><general name="lag" joint="hinge" dyntype="user"/></actuator>'),
        r"<actuator> 'lag'.*activation dynamics user",
    ),
    (
        "rangefinder_near_mesh",
        arm(
            head='<asset><mesh name="tet" vertex="0 0 0  1 0 0  0 1 0  0 0 1"/></asset>',
            tail='<worldbody><geom name="rock" type="mesh" mesh="tet" pos="1 1 0" contype="0" '
            'conaffinity="0"/></worldbody><sensor><rangefinder name="lidar" site="tip"/></sensor>',
        ),
        r"<rangefinder> 'lidar'.*'rock' \(mesh\)",
    ),
    (
        "large_mesh_capsule_pair",
        arm(
            head=f'<asset><mesh name="cone" vertex="{CONE}"/></asset>',
            tail='<worldbody><geom name="rock" type="mesh" mesh="cone" pos="1 0 0.2"/>'
            '<body name="stick" pos="1 0 0.6"><freejoint/><geom name="stick" type="capsule" size="0.05 0.1"/>'
            "</body></worldbody>",
        ),
        r"<geom> '\w+' \(\w+\) and <geom> 'rock' \(mesh\): .*hull vertex in 24 polygons",
    ),
    ("actuator_group_disable", arm(option='actuatorgroupdisable="1"'), r"<option actuatorgroupdisable>"),
    (
        "implicit_with_fluid",
        arm(option='integrator="implicit" density="1.2"'),
        r'<option density/viscosity> with integrator="implicit',
    ),
]


@pytest.mark.parametrize(("xml", "match"), [pytest.param(x, m, id=i) for i, x, m in UNSUPPORTED])
def test_unsupported_feature_is_refused(sim, xml, match):
    assert_refused(lambda: engine.load_mjcf(xml), engine.UnsupportedModelError, match, sim)


def test_unsupported_is_a_model_error():
    assert issubclass(engine.UnsupportedModelError, ModelError)
    assert issubclass(ModelError, ValueError) and issubclass(ModelError, engine.RoboDynError)


def test_energy_flag_is_allowed():
    """The one enable flag the engine honours still loads."""
    engine.load_mjcf(arm(flag='energy="enable"'))


def test_mocap_body_loads():
    """A mocap body (once refused) loads: its mocap id is MuJoCo's, and every row of a new
    Data holds it at its body_pos/body_quat, as a new MjData does (tests/engine/test_mocap.py
    compares its physics with MuJoCo's)."""
    target = '<body name="target" mocap="true" pos="0.3 0 0.2" euler="0 0 40"><geom size="0.05"/></body>'
    xml = arm(tail=f"<worldbody>{target}</worldbody>")
    model, mj = engine.load_mjcf(xml), mujoco.MjModel.from_xml_string(xml)
    assert model.nmocap == mj.nmocap == 1
    np.testing.assert_array_equal(model.body_mocapid, mj.body_mocapid)
    data, mjd = engine.make_data(model, 3), mujoco.MjData(mj)
    np.testing.assert_array_equal(data.mocap_pos, np.broadcast_to(mjd.mocap_pos, (3, 1, 3)))
    np.testing.assert_array_equal(data.mocap_quat, np.broadcast_to(mjd.mocap_quat, (3, 1, 4)))


# --- option values MuJoCo compiles but the engine cannot simulate ------------------------------
OPTIONS = [
    ('timestep="0"', r'<option timestep="0">: timestep must be > 0'),
    ('timestep="-0.01"', r'<option timestep="-0.01">: timestep must be > 0'),
    ('timestep="nan"', r'<option timestep="nan">: timestep must be finite'),
    ('timestep="inf"', r'<option timestep="inf">: timestep must be finite'),
    ('gravity="0 0 nan"', r'<option gravity="0 0 nan">: gravity must be finite'),
    ('gravity="0 -inf 0"', r'<option gravity="0 -inf 0">'),
    ('wind="nan 0 0"', r'<option wind="nan 0 0">: wind must be finite'),
    ('magnetic="0 inf 0"', r"<option magnetic=.*magnetic must be finite"),
    ('density="nan"', r'<option density="nan">'),
    ('density="-1"', r'<option density="-1">: density must be >= 0'),
    ('viscosity="-0.5"', r'<option viscosity="-0.5">: viscosity must be >= 0'),
    ('viscosity="inf"', r'<option viscosity="inf">'),
    ('impratio="0"', r'<option impratio="0">: impratio must be > 0'),
    ('impratio="-1"', r'<option impratio="-1">: impratio must be > 0'),
    ('impratio="nan"', r'<option impratio="nan">'),
    ('tolerance="-1e-8"', r'<option tolerance="-1e-08">: tolerance must be >= 0'),
    ('tolerance="nan"', r'<option tolerance="nan">'),
    ('ls_tolerance="-0.01"', r'<option ls_tolerance="-0.01">: ls_tolerance must be >= 0'),
    ('iterations="-1"', r'<option iterations="-1">: iterations must be >= 0'),
    ('ls_iterations="-5"', r'<option ls_iterations="-5">: ls_iterations must be >= 0'),
    ('noslip_iterations="-2"', r'<option noslip_iterations="-2">: noslip_iterations must be >= 0'),
    ('noslip_tolerance="-1e-6"', r'<option noslip_tolerance="-1e-06">: noslip_tolerance must be >= 0'),
    ('noslip_tolerance="nan"', r'<option noslip_tolerance="nan">'),
    ('o_margin="nan"', r'<option o_margin="nan">'),
]


@pytest.mark.parametrize(("option", "match"), OPTIONS)
def test_bad_option_is_refused(sim, option, match):
    xml = arm(option=option)
    assert_refused(lambda: engine.load_mjcf(xml), ModelError, match, sim)


# --- numbers in the model the engine cannot simulate -------------------------------------------
NUMBERS = [
    ("joint_ref", {"joint": 'ref="nan"'}, r"<joint ref> 'hinge': qpos0 = nan is not finite"),
    ("joint_springref", {"joint": 'springref="inf"'}, r"<joint springref> 'hinge'"),
    ("joint_stiffness", {"joint": 'stiffness="nan"'}, r"<joint stiffness> 'hinge'"),
    ("joint_damping_nan", {"joint": 'damping="nan"'}, r"<joint damping> 'hinge'"),
    (
        "joint_damping_negative",
        {"joint": 'damping="-1"'},
        r"<joint damping> 'hinge': dof_damping must be >= 0",
    ),
    ("joint_armature", {"joint": 'armature="-0.1"'}, r"<joint armature> 'hinge': dof_armature must be >= 0"),
    ("joint_range_nan", {"joint": 'limited="true"', "range": "nan 1"}, r"<joint range> 'hinge'"),
    ("joint_margin", {"joint": 'margin="inf"'}, r"<joint margin> 'hinge'"),
    ("joint_solref", {"joint": 'solreflimit="nan 1"'}, r"<joint solref> 'hinge'"),
    ("body_quat", {"body": 'quat="nan 0 0 1"'}, r"<body quat> 'arm'"),
    ("body_euler", {"body": 'euler="nan 0 0"'}, r"<body quat> 'arm'"),
    ("body_pos_inf", {"pos": "inf 0 0.5"}, r"<body pos> 'arm'"),
    (
        "mocap_pos_inf",
        {"tail": '<worldbody><body name="target" mocap="true" pos="0 -inf 0"/></worldbody>'},
        r"<body pos> 'target'",
    ),
    ("geom_friction", {"geom": 'friction="nan 0.005 0.0001"'}, r"<geom friction> 'ball'"),
    ("geom_margin", {"geom": 'margin="nan"'}, r"<geom margin> 'ball'"),
    ("geom_solimp", {"geom": 'solimp="nan 0.95 0.001"'}, r"<geom solimp> 'ball'"),
    ("geom_solref", {"geom": 'solref="inf 1"'}, r"<geom solref> 'ball'"),
    ("site_pos", {"site": 'quat="nan 0 0 1"'}, r"<site quat> 'tip'"),
    ("motor_gear", {"tail": MOTOR.format('gear="nan"')}, r"<actuator gear> 'drive'"),
    ("motor_ctrlrange", {"tail": MOTOR.format('ctrlrange="nan 1"')}, r"<actuator ctrlrange> 'drive'"),
    ("tendon_coef", {"tail": TENDON.format("", "nan")}, r"<tendon> 'couple' coef"),
    ("tendon_damping", {"tail": TENDON.format('damping="-2"', "1")}, r"<tendon damping> 'couple'.*>= 0"),
    (
        "sensor_cutoff",
        {"tail": '<sensor><jointpos name="angle" joint="hinge" cutoff="nan"/></sensor>'},
        r"<sensor cutoff> 'angle'",
    ),
]


@pytest.mark.parametrize(("parts", "match"), [pytest.param(p, m, id=i) for i, p, m in NUMBERS])
def test_bad_number_is_refused(sim, parts, match):
    xml = arm(**parts)
    assert_refused(lambda: engine.load_mjcf(xml), ModelError, match, sim)


def test_infinite_ranges_mean_no_bound():
    """+-inf in a range is no bound, as in MuJoCo (NaN there is refused above)."""
    model = engine.load_mjcf(arm(tail=MOTOR.format('ctrllimited="true" ctrlrange="-inf inf"')))
    assert np.isinf(model.actuator_ctrlrange).all()


# --- what MuJoCo's compiler refuses: its message, as a ModelError ------------------------------
COMPILER = [
    ("unknown_element", arm(tail="<gizmo/>"), r"MuJoCo could not compile.*unrecognized element.*'gizmo'"),
    ("unknown_attribute", arm(geom='typo="1"'), r"unrecognized attribute: 'typo'.*Element 'geom'"),
    ("negative_size", arm(size="-0.1"), r"size 0 must be positive in geom.*'ball'"),
    ("negative_mass", arm(geom='mass="-1"'), r"mass, inertia or density are negative in geom.*'ball'"),
    ("reversed_range", arm(range="1 -1", joint='limited="true"'), r"range.*in joint.*'hinge'"),
    ("zero_quaternion", arm(body='quat="0 0 0 0"'), r"zero quaternion.*Element 'body'"),
    ("zero_axis", arm().replace('axis="0 1 0"', 'axis="0 0 0"'), r"axis too small in joint"),
    ("bad_keyword", arm().replace('type="hinge"', 'type="spiral"'), r"invalid keyword: 'spiral'.*'joint'"),
    (
        "mocap_with_joint",
        arm(tail='<worldbody><body name="target" mocap="true"><joint type="slide"/></body></worldbody>'),
        r"mocap body 'target' is not a fixed child of world",
    ),
    (
        "mocap_not_child_of_world",
        arm(tail='<worldbody><body name="holder"><body name="target" mocap="true"/></body></worldbody>'),
        r"mocap body 'target' is not a fixed child of world",
    ),
    ("bad_number", arm(option='timestep="fast"'), r"bad format in attribute 'timestep'.*'option'"),
    ("short_vector", arm(option='gravity="0 0"'), r"attribute 'gravity' does not have enough data"),
    ("overflowing_number", arm(option='gravity="0 0 1e400"'), r"too large in attribute 'gravity'"),
    ("unknown_target", arm(tail=MOTOR.format("").replace("hinge", "nowhere")), r"'nowhere'"),
    ("missing_include", arm(tail='<include file="/no/such/part.xml"/>'), r"'/no/such/part.xml'.*'include'"),
    ("truncated_xml", arm()[:120], r"MuJoCo could not compile the MJCF document: XML parse error"),
    ("not_mjcf", "<html><body/></html>", r"Unrecognized XML model type: 'html'"),
    ("nconmax_below_minus_one", arm(head='<size nconmax="-3"/>'), r"nconmax must be >= -1.*'size'"),
    ("nconmax_not_int", arm(head='<size nconmax="1.5"/>'), r"attribute 'nconmax'.*'size'"),
    ("njmax_not_int", arm(head='<size njmax="lots"/>'), r"attribute 'njmax'.*'size'"),
    ("memory_garbage", arm(head='<size memory="lots"/>'), r"attribute 'memory'.*'size'"),
    ("memory_for_mujoco", arm(head='<size memory="100"/>'), r"out of memory.*increase <size memory"),
    ("memory_and_njmax", arm(head='<size memory="1M" njmax="10"/>'), r"'memory', 'njmax'.*'size'"),
]


@pytest.mark.parametrize(("xml", "match"), [pytest.param(x, m, id=i) for i, x, m in COMPILER])
def test_compiler_error_is_a_model_error(sim, xml, match):
    assert_refused(lambda: engine.load_mjcf(xml), ModelError, match, sim)


# --- buffer sizes ------------------------------------------------------------------------------
SIZES = [
    (
        "njmax_too_small",
        arm(head='<size njmax="1"/>'),
        r'<size njmax="1"> cannot hold the model\'s 2 equality',
    ),
    (
        "memory_too_small",
        chain(50).replace("<mujoco>", '<mujoco><size memory="20K"/>'),
        r'<size memory="20480"> .*cannot hold the model\'s 100 equality and limit rows.*raise memory',
    ),
]


@pytest.mark.parametrize(("xml", "match"), [pytest.param(x, m, id=i) for i, x, m in SIZES])
def test_too_small_size_is_refused(sim, xml, match):
    assert_refused(lambda: engine.load_mjcf(xml), ModelError, match, sim)


KEYWORDS = [
    ({"nconmax": -2}, ModelError, r"nconmax must be an int in \[0, 2\*\*31 - 1\].*got -2"),
    ({"nconmax": 2**31}, ModelError, r"nconmax must be an int in \[0, 2\*\*31 - 1\].*got 2147483648"),
    ({"nefcmax": -7}, ModelError, r"nefcmax must be an int in \[0, 2\*\*31 - 1\].*got -7"),
    ({"nefcmax": 1}, ModelError, r"nefcmax=1 cannot hold the model's 2 equality and limit rows.*>= 2"),
    ({"nconmax": 1.5}, ModelArgumentError, r"nconmax must be an int >= 0.*got float 1.5"),
    ({"nconmax": True}, ModelArgumentError, r"nconmax must be an int >= 0.*got bool True"),
    ({"nconmax": "8"}, ModelArgumentError, r"nconmax must be an int >= 0.*got str '8'"),
    ({"nefcmax": [10]}, ModelArgumentError, r"nefcmax must be an int >= 0.*got list"),
    ({"nefcmax": np.float64(10)}, ModelArgumentError, r"nefcmax must be an int >= 0.*got float64"),
]


@pytest.mark.parametrize(("kwargs", "error", "match"), KEYWORDS)
def test_bad_capacity_keyword_is_refused(sim, kwargs, error, match):
    xml = arm()
    assert_refused(lambda: engine.load_mjcf(xml, **kwargs), error, match, sim)


def test_capacity_keywords_take_ints_and_minus_one():
    """numpy ints are ints; -1 (MuJoCo's "default") and None give the defaults."""
    xml = arm()
    default = engine.load_mjcf(xml)
    assert engine.load_mjcf(xml, nconmax=-1, nefcmax=-1)[:2] == default[:2]
    small = engine.load_mjcf(xml, nconmax=np.int64(1))
    assert (small.nconmax, small.nefcmax) == (1, 2 + 4)


# --- sources: paths, documents, encodings ------------------------------------------------------
class _BadPath:
    """An os.PathLike whose __fspath__ returns neither str nor bytes."""

    def __fspath__(self):
        return 42


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:
    """A folder holding a sub-folder, an empty file, a UTF-16 file, a binary file and a
    symbolic link that points to itself."""
    tmp = tmp_path_factory.mktemp("sources")
    (tmp / "models").mkdir()
    (tmp / "empty.xml").write_text("")
    (tmp / "utf16.xml").write_text(arm(), encoding="utf-16")
    (tmp / "garbage.xml").write_bytes(bytes(range(256)))
    (tmp / "loop.xml").symlink_to(tmp / "loop.xml")
    return tmp


# (id, source made from the `files` folder, error, message)
SOURCES = [
    (
        "none",
        lambda d: None,
        ModelArgumentError,
        r"source must be a path \(str or os.PathLike\).*got NoneType",
    ),
    ("int", lambda d: 3, ModelArgumentError, r"source must be a path.*got int"),
    ("float", lambda d: 2.5, ModelArgumentError, r"source must be a path.*got float"),
    ("list", lambda d: [arm()], ModelArgumentError, r"source must be a path.*got list"),
    ("bytes", lambda d: arm().encode(), ModelArgumentError, r"got bytes: decode an MJCF document first"),
    ("bytearray", lambda d: bytearray(b"<mujoco/>"), ModelArgumentError, r"got bytearray"),
    ("bad_pathlike", lambda d: _BadPath(), ModelArgumentError, r"source _BadPath is not a valid os.PathLike"),
    ("empty", lambda d: "", ModelError, r"source is an empty string"),
    ("white_space", lambda d: " \n\t", ModelError, r"source is an empty string"),
    ("only_bom", lambda d: "\ufeff", ModelError, r"source is an empty string"),
    ("missing_str", lambda d: str(d / "missing.xml"), ModelFileError, r"no MJCF file at '.*missing.xml'"),
    ("missing_path", lambda d: d / "missing.xml", ModelFileError, r"no MJCF file at '.*missing.xml'"),
    (
        "folder_str",
        lambda d: str(d / "models"),
        ModelFileError,
        r"'.*models' is a directory, not an MJCF file",
    ),
    ("folder_path", lambda d: d / "models", ModelFileError, r"'.*models' is a directory, not an MJCF file"),
    ("symlink_loop", lambda d: d / "loop.xml", ModelFileError, r"no MJCF file at '.*loop.xml'"),
    ("nul_in_path", lambda d: "model\x00.xml", ModelFileError, r"a path cannot contain a NUL character"),
    (
        "text_before_tag",
        lambda d: "x<mujoco/>",
        ModelFileError,
        r"no MJCF file at 'x<mujoco/>'.*starting with '<'",
    ),
    (
        "empty_file",
        lambda d: d / "empty.xml",
        ModelError,
        r"MuJoCo could not compile the MJCF file '.*empty.xml'",
    ),
    (
        "utf16_file",
        lambda d: d / "utf16.xml",
        ModelError,
        r"MuJoCo could not compile the MJCF file '.*utf16.xml'",
    ),
    (
        "binary_file",
        lambda d: d / "garbage.xml",
        ModelError,
        r"could not compile the MJCF file '.*garbage.xml'",
    ),
]


@pytest.mark.parametrize(("make", "error", "match"), [pytest.param(m, e, r, id=i) for i, m, e, r in SOURCES])
def test_bad_source_is_refused(sim, files, make, error, match):
    """Every bad source raises its one type, naming the source; without_contacts, which
    reads the source the same way, refuses it alike (it parses files itself, so MuJoCo's
    messages are not its)."""
    source = make(files)
    assert_refused(lambda: engine.load_mjcf(source), error, match, sim)
    if error is not ModelError or "empty string" in match:
        assert_refused(lambda: engine.without_contacts(source), error, match, sim)


def test_missing_file_is_a_file_not_found_error(tmp_path):
    assert_refused(
        lambda: engine.load_mjcf(tmp_path / "nothing.xml"), FileNotFoundError, "nothing.xml", Files(tmp_path)
    )


def test_byte_order_mark_is_a_document_not_a_path(tmp_path):
    """A document (and a file) starting with a byte-order mark loads like one without."""
    plain = engine.load_mjcf(arm())
    marked = engine.load_mjcf("\ufeff" + arm())
    assert engine.model.model_digest(marked) == engine.model.model_digest(plain)
    path = tmp_path / "marked.xml"
    path.write_text("\ufeff" + arm(), encoding="utf-8")
    assert engine.model.model_digest(engine.load_mjcf(path)) == engine.model.model_digest(plain)
    assert engine.model.model_digest(engine.load_mjcf(str(path))) == engine.model.model_digest(plain)


# --- make_data -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("batch", "error", "match"),
    [
        (0, ValueError, r"batch must be >= 1, got 0"),
        (-3, ValueError, r"batch must be >= 1, got -3"),
        (2.5, TypeError, r"batch must be an int, got float"),
        ("2", TypeError, r"batch must be an int, got str"),
        (True, TypeError, r"batch must be an int, got bool"),
        (None, TypeError, r"batch must be an int, got NoneType"),
    ],
)
def test_make_data_refuses_bad_batch(sim, batch, error, match):
    assert_refused(lambda: engine.make_data(sim.model, batch), error, match, sim)


def test_make_data_refuses_what_is_not_a_model(sim):
    assert_refused(lambda: engine.make_data({"nq": 2}, 1), TypeError, r"make_data needs an engine.Model", sim)


def test_make_data_refuses_rows_too_few_for_the_contacts(sim):
    """A Model edited to fewer constraint rows than its contacts can fill is refused before
    any memory is written (the constraint stage has no bounds checks)."""
    model = engine.load_mjcf(arm())
    edited = model._replace(nefcmax=model.nefcmax - 1)
    match = rf"model.nefcmax={edited.nefcmax} cannot hold the {model.nefcmax} constraint rows"
    assert_refused(lambda: engine.make_data(edited, 1), ModelError, match, sim, edited)


@pytest.mark.parametrize("field", ["nefcdof", "nefctreedof"])
def test_make_data_refuses_rows_too_narrow(sim, field):
    """A Model edited to narrower constraint rows than its widest row is refused before
    any memory is written (the constraint stage writes a row's columns without checks)."""
    model = engine.load_mjcf(arm())
    edited = model._replace(**{field: getattr(model, field) - 1})
    match = rf"model.nefcdof={edited.nefcdof}, nefctreedof={edited.nefctreedof} cannot hold constraint rows"
    assert_refused(lambda: engine.make_data(edited, 1), ModelError, match, sim, edited)


def test_make_data_refuses_dense_flag_on_compact_rows(sim):
    """A Model loaded with compact rows (jacobian="sparse") and edited to say its rows are
    dense (which the constraint stage would write nv wide) is refused the same way."""
    model = engine.load_mjcf(with_options(STACK, jacobian="sparse"))
    assert model.efc_dense == 0 and 0 < model.nefcdof < model.nv
    edited = model._replace(efc_dense=1)
    match = rf"model.nefcdof={model.nefcdof}, nefctreedof={model.nefctreedof} cannot hold constraint rows"
    assert_refused(lambda: engine.make_data(edited, 1), ModelError, match, sim, edited)


def test_large_data_warns_before_allocating(sim):
    """The 200-link self-colliding chain with its worst-case contact buffer (39,802 contacts,
    406 MiB per row) warns with the size, the largest arrays and how to shrink it; with
    the warning turned into an error nothing is allocated. A contact of the last link with
    the floor moves every one of the 200 hinges, so its compact efc_J rows are nv wide
    (nefcdof = nv = 200) and the column indices add half again to the values."""
    worst = engine.load_mjcf(chain(200), nconmax=39802)
    assert worst.nefcdof == worst.nv == 200
    with warnings.catch_warnings():
        warnings.simplefilter("error", MemoryWarning)
        match = (
            r"batch=8 needs 3244\.\d MiB \(405\.5 MiB per environment, nconmax=39802, "
            r"nefcmax=159608, nv=200, nefcdof=200\).*efc_J \(nefcmax=159608, nefcdof=200\) 243\.5 MiB, "
            r"efc_J_colind \(nefcmax=159608, nefcdof=200\) 121\.8 MiB.*nconmax=.*<size memory"
        )
        assert_refused(lambda: engine.make_data(worst, 8), MemoryWarning, match, sim)


def test_default_buffers_of_a_long_chain_are_bounded():
    """By default the chain gets DEFAULT_NCONMAX contacts: 5.2 MiB per row, no warning."""
    model = engine.load_mjcf(chain(200))
    assert model.nconmax == DEFAULT_NCONMAX and model.nefcmax == 2 * 200 + 4 * DEFAULT_NCONMAX
    per_row = sum(engine.data.data_bytes(model, 1).values())
    print(f"[buffers] 200-link chain: {per_row / 2**20:.1f} MiB per row by default")
    assert per_row < 6 * 2**20
    with warnings.catch_warnings():
        warnings.simplefilter("error", MemoryWarning)
        engine.make_data(model, 64)


# --- a smaller nefcmax cannot overrun the rows at run time ---------------------------------------
def test_rows_capped_by_nefcmax_overflow_as_contacts():
    """With nefcmax below what the default nconmax needs, nconmax shrinks to the contacts
    whose rows fit: a row finding more raises ContactOverflowError naming it and is not
    advanced, and the other row steps."""
    model = engine.load_mjcf(STACK, nefcmax=20)
    assert (model.nconmax, model.nefcmax) == (5, 20)
    sim = engine.Simulator(model, batch=2)
    z = sim.data.qpos.reshape(2, 4, 7)[:, :, 2]
    z[0] = [0.099, 0.298, 0.497, 0.696]  # row 0: every box pressed into the next
    z[1] = [0.2, 0.5, 0.8, 1.1]  # row 1: apart
    before = sim.data.qpos.copy()
    with pytest.raises(engine.ContactOverflowError, match=r"row 0 has \d+ contacts.*nconmax=5"):
        sim.step()
    np.testing.assert_array_equal(sim.data.qpos[0], before[0])
    assert sim.data.nefc.max() <= model.nefcmax


@pytest.mark.parametrize("bad", ["nan", "inf", "-inf"])
def test_a_height_field_elevation_that_is_not_finite_names_its_element(sim, bad):
    xml = f"""<mujoco><asset>
      <hfield name="terrain" nrow="2" ncol="3" size="1 1 0.5 0.1" elevation="0 1 {bad} 0.5 0.2 0.1"/>
    </asset><worldbody><geom type="hfield" hfield="terrain"/>
      <body pos="0 0 1"><freejoint/><geom type="sphere" size="0.1"/></body>
    </worldbody></mujoco>"""
    match = (
        r"<hfield elevation> 'terrain' \(hfield_data row \d, column \d; .*\): hfield_data = nan is not finite"
    )
    assert_refused(lambda: engine.load_mjcf(xml), ModelError, match, sim, xml)
