"""engine.load_mjcf: refusals of unsupported features, what it copies (mocap bodies), path vs
string loading, M's sparsity.

No numba kernel runs here: loading a model is pure Python (MuJoCo's compiler + copies).
"""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np
import pytest

import robodyn.engine.capacity
from robodyn import engine
from tests.helpers import ASSETS, gym_model_paths, with_options, without_contacts

GYM = {p.name: p for p in gym_model_paths()}
TEST_MODELS = {p.name: p for p in sorted((ASSETS / "tests").glob("smooth_*.xml"))}
assert TEST_MODELS, "expected assets/tests/smooth_*.xml"

# --- refusals --------------------------------------------------------------------------------

BASE = """
<mujoco model="refusal">
  <option {option}>
    <flag {flags}/>
  </option>
  <worldbody>
    <body name="link" pos="0 0 1" {body}>
      <joint name="hinge" type="hinge" axis="0 1 0" range="-1 1"/>
      <geom name="rod" type="capsule" fromto="0 0 0 0.3 0 0" size="0.02"/>
      <site name="s0" pos="0 0 0"/>
      <body name="ball_body" pos="0.3 0 0">
        <joint name="ballj" type="ball"/>
        <geom type="sphere" size="0.05"/>
        <site name="s1" pos="0.05 0 0"/>
      </body>
    </body>
    {world}
  </worldbody>
  {extra}
</mujoco>
"""
DISABLED = 'contact="disable" constraint="disable"'


def _xml(option="", flags=DISABLED, body="", world="", extra="") -> str:
    return BASE.format(option=option, flags=flags, body=body, world=world, extra=extra)


# (id, MJCF, substrings the message must contain: the element and what is refused)
REFUSALS = [
    (
        "mixed_solreffriction",
        _xml(flags="", extra='<default><joint frictionloss="0.1" solreffriction="0.02 -1"/></default>'),
        ["frictionloss", "'hinge'", "solref"],
    ),
    ("cg_solver", _xml(flags="", option='solver="CG"'), ['solver="CG"']),
    (
        "mixed_solref",
        _xml(flags="", extra='<default><joint solreflimit="0.02 -1"/></default>'),
        ["solref", "'hinge'"],
    ),
    (
        "rangefinder_near_mesh",
        _xml(
            world='<geom name="rock" type="mesh" mesh="tet" pos="1 0 0"/>',
            extra='<asset><mesh name="tet" vertex="0 0 0  1 0 0  0 1 0  0 0 1"/></asset>'
            '<sensor><rangefinder name="ranger" site="s1"/></sensor>',
        ),
        ["<rangefinder>", "'ranger'", "'rock' (mesh)"],
    ),
    (
        "user_dynamics",
        _xml(extra='<actuator><general name="custom" joint="hinge" dyntype="user"/></actuator>'),
        ["<actuator>", "'custom'", "activation dynamics user"],
    ),
    (
        "muscle",
        _xml(extra='<actuator><muscle name="biceps" joint="hinge"/></actuator>'),
        ["<actuator>", "'biceps'"],
    ),
    (
        "slidercrank_transmission",
        _xml(
            extra='<actuator><general name="crank" cranksite="s0" slidersite="s1" cranklength="0.1"/>'
            "</actuator>"
        ),
        ["<actuator>", "'crank'", "slidercrank transmission"],
    ),
    (
        "jointinparent_transmission",
        _xml(extra='<actuator><general name="parent" jointinparent="hinge"/></actuator>'),
        ["<actuator>", "'parent'", "jointinparent transmission"],
    ),
    (
        "body_transmission",
        _xml(extra='<actuator><adhesion name="stick" body="link" ctrlrange="0 1"/></actuator>'),
        ["<actuator>", "'stick'", "body transmission"],
    ),
    (
        "ball_joint_motor",
        _xml(extra='<actuator><motor name="twist" joint="ballj" gear="1 0 0"/></actuator>'),
        ["<actuator>", "'twist'", "ball"],
    ),
    ("gravcomp", _xml(body='gravcomp="1"'), ["gravcomp", "'link'"]),
    (
        "implicit_with_fluid",
        _xml(option='integrator="implicit" density="1.2"'),
        ["<option", "implicit"],
    ),
    (
        "implicitfast_with_viscosity",
        _xml(option='integrator="implicitfast" viscosity="0.01"'),
        ["<option", "implicit"],
    ),
]


def test_refusal_base_model_loads():
    """The template loads as is (with constraints and contacts enabled too), so each refusal
    below is due to its one added feature."""
    model = engine.load_mjcf(_xml())
    assert model.nbody == 3 and model.nv == 4
    model = engine.load_mjcf(_xml(flags="", world='<geom name="floor" type="plane" size="1 1 0.1"/>'))
    assert model.nefcmax == 2 + model.nconmax * 4  # the hinge's two limit sides, pyramids


def test_friction_loss_rows_are_sized():
    """Joint and tendon frictionloss load (one friction row per dof and tendon with a
    nonzero bound: the rows the constraint stage can write are counted in nefcmax), and
    <flag frictionloss="disable"> removes them."""
    friction = (
        '<default><joint frictionloss="0.1"/></default>'
        '<tendon><fixed name="t" frictionloss="0.2"><joint joint="hinge" coef="1"/></fixed></tendon>'
    )
    plain = engine.load_mjcf(_xml(flags=""))
    model = engine.load_mjcf(_xml(flags="", extra=friction))
    assert model.nefcmax == plain.nefcmax + model.nv + 1
    assert np.all(model.dof_frictionloss == 0.1) and model.tendon_frictionloss[0] == 0.2
    off = engine.load_mjcf(_xml(flags='frictionloss="disable"', extra=friction))
    assert off.nefcmax == plain.nefcmax


def test_disabled_features_are_not_refused():
    """A feature refused for the constraint stage loads when its flag disables it, as
    MuJoCo then ignores it: frictionloss, limits, equalities, or all constraints."""
    friction = '<default><joint frictionloss="0.1"/></default>'
    engine.load_mjcf(_xml(flags='frictionloss="disable"', extra=friction))
    engine.load_mjcf(_xml(flags='limit="disable"', extra='<default><joint range="0 1"/></default>'))
    options = 'cone="elliptic" solver="CG"'
    model = engine.load_mjcf(_xml(flags='constraint="disable"', option=options, extra=friction))
    assert model.nefcmax == 0


SKIN = """
<mujoco>
  <worldbody>
    <geom type="plane" size="2 2 0.1"/>
    <body name="a" pos="0 0 0.5">
      <freejoint/>
      <geom type="box" size="0.1 0.1 0.1"/>
      <body name="b" pos="0.25 0 0">
        <joint type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.04"/>
      </body>
    </body>
  </worldbody>
  {skin}
</mujoco>
"""
SLEEVE = """
  <deformable>
    <skin name="sleeve" inflate="0.01" vertex="0 0 0.6  0.2 0 0.6  0.4 0 0.6  0.2 0.1 0.6"
          face="0 1 3  1 2 3">
      <bone body="a" bindpos="0 0 0.5" bindquat="1 0 0 0" vertid="0 1 3" vertweight="1 0.5 0.5"/>
      <bone body="b" bindpos="0.25 0 0.5" bindquat="1 0 0 0" vertid="1 2 3" vertweight="0.5 1 0.5"/>
    </skin>
  </deformable>
"""


def test_skin_is_accepted_and_has_no_physics():
    """A <skin> (a mesh MuJoCo deforms with its bones' poses to draw it) loads, and the
    engine copies none of it: the Model equals the one without it, field for field. MuJoCo's
    physics is the same bit for bit with and without it (a box and a hinged capsule dropped
    on the floor, 300 steps: qpos, qvel, qacc, efc_force)."""
    with_skin, bare = SKIN.format(skin=SLEEVE), SKIN.format(skin="")
    ours = engine.load_mjcf(with_skin), engine.load_mjcf(bare)
    for name in engine.Model._fields:
        a, b = (getattr(m, name) for m in ours)
        assert np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b, name
    models = [mujoco.MjModel.from_xml_string(x) for x in (with_skin, bare)]
    assert (models[0].nskin, models[1].nskin) == (1, 0)
    datas = [mujoco.MjData(m) for m in models]
    touching = 0
    for _ in range(300):
        for m, d in zip(models, datas, strict=True):
            d.qvel[5] = 1.0 if d.time < 0.1 else d.qvel[5]  # a spin, so the capsule swings
            mujoco.mj_step(m, d)
        a, b = datas
        for field in ("qpos", "qvel", "qacc"):
            np.testing.assert_array_equal(getattr(a, field), getattr(b, field), err_msg=field)
        np.testing.assert_array_equal(a.efc_force[: a.nefc], b.efc_force[: b.nefc])
        touching += a.ncon > 0
    assert touching > 100  # it lands and rests on the floor


@pytest.mark.parametrize(("xml", "needles"), [pytest.param(x, n, id=i) for i, x, n in REFUSALS])
def test_refusal(xml: str, needles: list[str]):
    mujoco.MjModel.from_xml_string(xml)  # MuJoCo itself compiles it: the refusal is ours
    with pytest.raises(engine.UnsupportedModelError) as info:
        engine.load_mjcf(xml)
    message = str(info.value)
    print(f"[refusal] {message}")
    for needle in needles:
        assert needle.lower() in message.lower(), f"message {message!r} does not mention {needle!r}"


def test_refusal_is_a_value_error():
    assert issubclass(engine.UnsupportedModelError, ValueError)


def test_mocap_bodies_are_copied():
    """Mocap bodies load (no longer refused): nmocap and body_mocapid are MuJoCo's, with
    -1 for every other body, and the Data of the model holds each at its body_pos/body_quat."""
    targets = (
        '<body name="target" mocap="true" pos="1 0 0"><geom type="sphere" size="0.1"/></body>'
        '<body name="marker" mocap="true" pos="0 1 2" quat="0 1 1 0"/>'
    )
    xml = _xml(world=targets)
    model, mj = engine.load_mjcf(xml), mujoco.MjModel.from_xml_string(xml)
    assert model.nmocap == mj.nmocap == 2
    np.testing.assert_array_equal(model.body_mocapid, mj.body_mocapid)
    assert sorted(model.body_mocapid[model.body_mocapid >= 0]) == [0, 1]
    data = engine.make_data(model, 2)
    for name in ("target", "marker"):
        b = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_BODY, name)
        k = model.body_mocapid[b]
        np.testing.assert_array_equal(data.mocap_pos[:, k], [mj.body_pos[b]] * 2)
        np.testing.assert_array_equal(data.mocap_quat[:, k], [mj.body_quat[b]] * 2)


# --- path vs string --------------------------------------------------------------------------


def _assert_models_equal(a: engine.Model, b: engine.Model, what: str) -> None:
    for field in engine.Model._fields:
        x, y = getattr(a, field), getattr(b, field)
        if isinstance(x, np.ndarray):
            assert isinstance(y, np.ndarray) and x.dtype == y.dtype, f"{what}: {field} dtype"
            assert x.shape == y.shape and np.array_equal(x, y), f"{what}: {field} differs"
        else:
            assert type(x) is type(y) and x == y, f"{what}: {field}: {x!r} vs {y!r}"


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(p, id=p.name)
        for p in [*GYM.values(), *TEST_MODELS.values(), ASSETS / "double_pendulum.xml"]
    ],
)
def test_path_and_string_give_identical_arrays(path: Path, tmp_path: Path):
    if path in GYM.values():
        text = without_contacts(path)
        path = tmp_path / path.name  # the contact-free copy, for the path loader only
        path.write_text(text)
    else:
        text = path.read_text()
    from_path = engine.load_mjcf(path)
    from_str_path = engine.load_mjcf(str(path))
    from_text = engine.load_mjcf(text)
    _assert_models_equal(from_path, from_text, f"{path.name} path vs string")
    _assert_models_equal(from_str_path, from_text, f"{path.name} str(path) vs string")


def test_missing_path_raises_file_not_found(tmp_path: Path):
    missing = tmp_path / "no_such_model.xml"
    with pytest.raises(FileNotFoundError, match="no_such_model.xml"):
        engine.load_mjcf(missing)
    with pytest.raises(FileNotFoundError):
        engine.load_mjcf(str(missing))


# --- sparsity of M ---------------------------------------------------------------------------

# MuJoCo 4 compresses M's pattern for "simple" bodies (dof_simplenum > 0: bodies whose
# block of M is diagonal, e.g. slide joints along orthogonal axes on a body hanging from the
# world): it drops those known-zero off-diagonal entries (mjModel.nC < nM), while we keep
# the full dof-ancestor pattern (our nM = MuJoCo's nM). Values still agree (test_smooth
# compares M and qLD densely); only the packed layouts differ.
# test_m_sparsity_equals_mujoco covers the models without simple dofs exactly; the others
# are covered by test_m_sparsity_contains_mujoco below.


def _mj(path: Path) -> mujoco.MjModel:
    if path.name in GYM:
        return mujoco.MjModel.from_xml_string(without_contacts(path))
    return mujoco.MjModel.from_xml_path(str(path))


def _without_simple_dofs():
    out = []
    for name, path in [*GYM.items(), *TEST_MODELS.items()]:
        if not np.any(_mj(path).dof_simplenum):
            out.append(pytest.param(path, id=name))
    assert len(out) >= 12, "most models have no simple dofs; the exact comparison must cover them"
    return out


@pytest.mark.parametrize("path", _without_simple_dofs())
def test_m_sparsity_equals_mujoco(path: Path):
    """Without simple dofs, Model.M_rowadr / M_rownnz / M_colind equal mjModel's exactly."""
    mj = _mj(path)
    model = engine.load_mjcf(without_contacts(path) if path.name in GYM else path)
    print(f"[sparsity] {path.name}: ours nM={model.nM}, MuJoCo nM={mj.nM} nC={mj.nC}")
    assert model.nM == mj.nC
    assert np.array_equal(model.M_rownnz, mj.M_rownnz)
    assert np.array_equal(model.M_rowadr, mj.M_rowadr)
    assert np.array_equal(model.M_colind, mj.M_colind)


@pytest.mark.parametrize("path", [pytest.param(p, id=n) for n, p in [*GYM.items(), *TEST_MODELS.items()]])
def test_m_sparsity_contains_mujoco(path: Path):
    """Every model: our pattern holds every entry of MuJoCo's, our nM is MuJoCo's nM (the
    uncompressed count), and the rows MuJoCo keeps whole are identical to ours."""
    mj = _mj(path)
    model = engine.load_mjcf(without_contacts(path) if path.name in GYM else path)
    assert model.nM == mj.nM
    for i in range(mj.nv):
        ours = list(model.M_colind[model.M_rowadr[i] : model.M_rowadr[i] + model.M_rownnz[i]])
        theirs = list(mj.M_colind[mj.M_rowadr[i] : mj.M_rowadr[i] + mj.M_rownnz[i]])
        assert set(theirs) <= set(ours) and ours[-1] == theirs[-1] == i, f"row {i}: {ours} vs {theirs}"
        if mj.dof_simplenum[i] == 0:
            assert ours == theirs, f"row {i} (not simple): {ours} vs MuJoCo {theirs}"


# --- contact and constraint buffers ----------------------------------------------------------

STACK = ASSETS / "tests" / "constraint_stack.xml"  # 4 free boxes on a floor: 64 possible contacts


def _stack(size: str = "") -> str:
    """constraint_stack.xml with `size` (a <size .../> element) as its first child."""
    text = STACK.read_text()
    head, rest = text.split("<mujoco", 1)
    tag, body = rest.split(">", 1)
    return f"{head}<mujoco{tag}>{size}{body}"


def test_default_capacity_is_the_worst_case_up_to_a_cap():
    """By default nconmax is every contact the candidate pairs can produce, at most
    DEFAULT_NCONMAX, and nefcmax the rows those contacts can need (no equalities or limits
    here; 4 rows a pyramid)."""
    model = engine.load_mjcf(STACK)
    assert model.nconmax == 64 <= robodyn.engine.capacity.DEFAULT_NCONMAX
    assert model.nefcmax == 4 * 64
    assert robodyn.engine.capacity.efc_rows_needed(model) == model.nefcmax


@pytest.mark.parametrize(
    ("size", "kwargs", "nconmax", "nefcmax"),
    [
        ('<size nconmax="5"/>', {}, 5, 20),  # MJCF nconmax
        ('<size nconmax="5"/>', {"nconmax": 7}, 7, 28),  # the keyword wins
        ('<size njmax="21"/>', {}, 5, 20),  # rows for 5 contacts (a 21st could never be filled)
        ('<size njmax="10000"/>', {}, 64, 256),  # more rows than can be filled: capped
        ('<size nconmax="10" njmax="20"/>', {}, 5, 20),  # nconmax shrinks to the rows
        ("", {"nefcmax": 0}, 0, 0),  # no rows: every contact overflows
        ('<size njmax="8"/>', {"nefcmax": -1}, 2, 8),  # -1: the MJCF's value
    ],
)
def test_capacity_from_size_and_keywords(size, kwargs, nconmax, nefcmax):
    model = engine.load_mjcf(_stack(size), **kwargs)
    assert (model.nconmax, model.nefcmax) == (nconmax, nefcmax)
    assert robodyn.engine.capacity.efc_rows_needed(model) <= model.nefcmax


@pytest.mark.parametrize("memory", ["16K", "64K", "1M"])
def test_capacity_from_memory(memory):
    """<size memory>: the contact and constraint arrays of one row fit in it, with as many
    contacts as fit (at most the worst case) and their rows."""
    model = engine.load_mjcf(_stack(f'<size memory="{memory}"/>'))
    budget = int(memory[:-1]) * {"K": 2**10, "M": 2**20}[memory[-1]]
    per_row = engine.data.data_bytes(model, 1)
    used = sum(v for k, v in per_row.items() if k.startswith(("contact_", "efc_", "scratch_efc")))
    used -= per_row["contact_lost"]  # one per row, not per contact
    print(f"[memory] {memory}: nconmax={model.nconmax} nefcmax={model.nefcmax} uses {used} of {budget} bytes")
    assert used <= budget and model.nefcmax == 4 * model.nconmax
    assert model.nconmax == 64 or used > budget / 2  # every possible contact, or most of the budget


def test_capacity_with_constraints_disabled():
    """No constraint rows at all when constraints are off, whatever njmax says."""
    text = _stack('<size njmax="50"/>').replace(
        "<option", '<option><flag constraint="disable"/></option><option', 1
    )
    model = engine.load_mjcf(text)
    assert model.nefcmax == 0


# --- widths of the compact constraint rows -----------------------------------------------------

PILE = ASSETS / "tests" / "constraint_pile.xml"  # 40 free bodies, nv = 240
EQUALITY = ASSETS / "tests" / "constraint_equality.xml"  # connect, weld, joint, tendon limit


def _chain(mj: mujoco.MjModel, body: int) -> list[int]:
    """Dofs that move `body`, walked up dof_parentid from its weld root's last dof."""
    w = mj.body_weldid[body]
    k = mj.body_dofadr[w] + mj.body_dofnum[w] - 1 if mj.body_dofnum[w] else -1
    out = []
    while k >= 0:
        out.append(int(k))
        k = mj.dof_parentid[k]
    return out


def _widths_by_walking(mj: mujoco.MjModel, model: engine.Model) -> tuple[int, int]:
    """(nefcdof, nefctreedof) from every row the model can make, chain by chain in Python
    (no masks, no matrix product): contacts of the candidate pairs without the common
    dofs, connect/weld with them, joint equalities, joint and tendon limits."""
    rows = []
    for g1, g2 in model.cpair_geom:
        c1, c2 = (set(_chain(mj, mj.geom_bodyid[g])) for g in (g1, g2))
        rows.append(c1 ^ c2)
    for i in range(mj.neq):
        o1, o2 = int(mj.eq_obj1id[i]), int(mj.eq_obj2id[i])
        if mj.eq_type[i] == mujoco.mjtEq.mjEQ_JOINT:
            rows.append({int(mj.jnt_dofadr[j]) for j in (o1, o2) if j >= 0})
            continue
        if mj.eq_objtype[i] == mujoco.mjtObj.mjOBJ_SITE:
            o1, o2 = int(mj.site_bodyid[o1]), int(mj.site_bodyid[o2])
        rows.append(set(_chain(mj, o1)) | set(_chain(mj, o2)))
    rows += [{int(mj.jnt_dofadr[j])} for j in range(mj.njnt) if mj.jnt_limited[j]]
    for t in range(mj.ntendon):
        if mj.tendon_limited[t]:
            rows.append(
                {
                    int(mj.jnt_dofadr[mj.wrap_objid[w]])
                    for w in range(mj.tendon_adr[t], mj.tendon_adr[t] + mj.tendon_num[t])
                }
            )
    width = max((len(r) for r in rows), default=0)
    trees = [{int(mj.dof_treeid[k]) for k in r} for r in rows]
    tree_width = max((sum(int(mj.tree_dofnum[t]) for t in ts) for ts in trees), default=0)
    return width, tree_width


def _self_colliding_chain(n: int) -> str:
    links = "".join(
        '<body pos="0.1 0 0"><joint type="hinge" axis="0 0 1" range="-1 1"/>'
        '<geom type="capsule" fromto="0 0 0 0.1 0 0" size="0.02"/>'
        for _ in range(n)
    )
    return (
        '<mujoco><option><flag filterparent="disable"/></option><worldbody>'
        f'<geom type="plane" size="5 5 0.1"/>{links}{"</body>" * n}</worldbody></mujoco>'
    )


WIDTH_MODELS = {
    "crane.xml": (ASSETS / "crane.xml", (0, 0)),
    "humanoid.xml": (GYM["humanoid.xml"], (13, 23)),
    "ant.xml": (GYM["ant.xml"], (8, 14)),
    "constraint_equality.xml": (EQUALITY, None),
    "constraint_pile.xml": (PILE, (12, 12)),
    "chain of 30": (_self_colliding_chain(30), (30, 30)),
}


@pytest.mark.parametrize("name", list(WIDTH_MODELS))
def test_efc_widths(name: str):
    """With compact rows (jacobian="sparse"), nefcdof / nefctreedof (chain masks and one
    matrix product) equal the widest row and the widest row's trees found by walking every
    possible row's chains; with the default jacobian="auto" the rows are dense (both
    widths nv) where MuJoCo's are (mj_isSparse: below nv 60) and the solver is PGS; the tree
    dof ranges are contiguous and the tendon rows are MuJoCo's."""
    source, expect = WIDTH_MODELS[name]
    text = source if isinstance(source, str) else source.read_text()
    mj = mujoco.MjModel.from_xml_string(text)
    model = engine.load_mjcf(with_options(text, jacobian="sparse"))
    walked = _widths_by_walking(mj, model)
    auto = engine.load_mjcf(text)
    print(
        f"[widths] {name}: nv={model.nv} compact nefcdof={model.nefcdof} "
        f"nefctreedof={model.nefctreedof} (walked {walked}); auto: dense={auto.efc_dense} "
        f"nefcdof={auto.nefcdof} nefctreedof={auto.nefctreedof}"
    )
    assert model.efc_dense == 0
    assert (model.nefcdof, model.nefctreedof) == walked
    if expect is not None:
        assert (model.nefcdof, model.nefctreedof) == expect
    assert auto.efc_dense == int(not mujoco.mj_isSparse(mj) and mj.opt.solver == mujoco.mjtSolver.mjSOL_PGS)
    if auto.efc_dense and walked[0] > 0:
        assert (auto.nefcdof, auto.nefctreedof) == (model.nv, model.nv)
    else:
        assert (auto.nefcdof, auto.nefctreedof) == walked
    assert np.array_equal(model.tree_dofadr, mj.tree_dofadr) and np.array_equal(
        model.tree_dofnum, mj.tree_dofnum
    )
    for t in range(model.ntree):
        span = model.dof_treeid[model.tree_dofadr[t] : model.tree_dofadr[t] + model.tree_dofnum[t]]
        assert np.all(span == t)
    assert np.array_equal(model.ten_J_rownnz, mj.ten_J_rownnz)
    assert np.array_equal(model.ten_J_rowadr, mj.ten_J_rowadr)
    assert np.array_equal(model.ten_J_colind, mj.ten_J_colind)
