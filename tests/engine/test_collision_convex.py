"""Oracle and analytic tests of the convex collider (engine/collision_convex.py): the geom
pairs with a sphere or an ellipsoid that MuJoCo hands to its general convex solver.

1. Random poses of `assets/tests/collision_convex.xml` (sphere, capsule, two ellipsoids,
   two cylinders, a box; every pair with an ellipsoid can collide, one ellipsoid and one
   cylinder with a margin and a gap), collided on MuJoCo's own geom poses: contacts against
   mj_collision one to one (count, order, geoms exactly; dist, pos, frame to 1e-9), over
   poses that penetrate deeply (EPA), touch lightly (GJK on the shrunk shapes), lie within
   the margin (dist > 0) or are apart (no contact on either side). The collider repeats
   MuJoCo 4.0.0's iterations; the errors are rounding, ~1e-12. Through our own kinematics
   (poses off by ~1e-16) the witness points of slowly converging GJK/EPA runs agree to
   ~1e-6 (test_pipeline_matches_mujoco says why).
2. Analytic: ellipsoids on an ellipsoid and on a box, and an ellipsoid against a cylinder's
   side, at known separations and overlaps along principal axes: the distance to
   ccd_tolerance (GJK and EPA stop there), the normal along the axis, the position midway.
3. The loader: the pairs MuJoCo follows with its multi-contact search (capsule : cylinder,
   cylinder : cylinder, cylinder : box; their contacts are tested in
   test_collision_multi.py) load with room for 2 or 4 contacts, and so do mesh pairs (their
   contacts in test_collision_mesh.py) but those of a mesh too large for the multi-contact
   search, refused by name, as is MuJoCo's libccd path (`<flag nativeccd="disable">`); `multiccd="disable"`
   loads (one contact either way for the pairs here) and still matches MuJoCo.
"""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from robodyn import engine
from robodyn.engine.types import (
    GEOM_BOX,
    GEOM_CAPSULE,
    GEOM_CYLINDER,
    GEOM_ELLIPSOID,
    GEOM_SPHERE,
)
from tests.engine.test_collision import (
    Comparison,
    compare_contacts,
    mj_collide,
    mj_model,
    our_contacts,
    random_poses,
)
from tests.helpers import ASSETS, report, without_contacts

CONVEX = ASSETS / "tests" / "collision_convex.xml"
N_POSES = 400  # random poses per spread
PAIRS = [
    (GEOM_SPHERE, GEOM_ELLIPSOID),
    (GEOM_CAPSULE, GEOM_ELLIPSOID),
    (GEOM_ELLIPSOID, GEOM_ELLIPSOID),
    (GEOM_ELLIPSOID, GEOM_CYLINDER),
    (GEOM_ELLIPSOID, GEOM_BOX),
]


def _mj_and_poses(xml, n: int, spread: float, seed: int):
    mj = mj_model(xml) if not isinstance(xml, str) else mujoco.MjModel.from_xml_string(xml)
    return mj, random_poses(mj, n, seed=seed, spread=spread, height=(0.45, 0.55))


def compare_on_mujoco_poses(label: str, xml, mj: mujoco.MjModel, qpos: np.ndarray, as_is=False) -> Comparison:
    """Our collision stage run on MuJoCo's own geom poses (mj_kinematics copied into Data),
    contacts compared one to one with mj_collision's: the collider alone. `xml` is loaded
    without contacts (forward() then computes poses only), or `as_is` (a file with includes)."""
    model = engine.load_mjcf(xml if as_is else without_contacts(xml))
    sim = engine.Simulator(model, batch=len(qpos))
    sim.data.qpos[:] = qpos
    sim.forward()
    d = mujoco.MjData(mj)
    for i in range(len(qpos)):
        d.qpos[:] = qpos[i]
        mujoco.mj_kinematics(mj, d)
        sim.data.geom_xpos[i] = d.geom_xpos
        sim.data.geom_xmat[i] = d.geom_xmat.reshape(-1, 9)
    sim.collision()
    return compare_contacts(label, mj, sim.data, qpos)


@pytest.mark.parametrize(("spread", "seed"), [(0.08, 0), (0.12, 1), (0.2, 2)])
def test_collider_matches_mujoco(spread: float, seed: int):
    """Deep, shallow, within-margin and separated poses, on MuJoCo's geom poses: contacts
    equal mj_collision's (count, order, geoms exactly; dist, pos, frame to 1e-9)."""
    mj, qpos = _mj_and_poses(CONVEX, N_POSES, spread, seed)
    result = compare_on_mujoco_poses(f"collision_convex spread {spread}", CONVEX, mj, qpos)
    result.check(N_POSES, N_POSES)
    for pair in PAIRS:
        assert result.pair_types.get(pair, 0) >= 100, f"pair types {pair}: {result.pair_types.get(pair, 0)}"
    # the poses cover every regime: deep and shallow penetration, margin-only contacts
    d = mujoco.MjData(mj)
    dists = []
    for q in qpos:
        dists.extend(mj_collide(mj, d, q)["dist"])
    dists = np.array(dists)
    print(
        f"[convex] spread {spread}: {len(dists)} contacts, dist in [{dists.min():.3g}, {dists.max():.3g}], "
        f"{np.sum(dists > 0)} within the margin, {np.sum(dists < -0.05)} deeper than 5 cm"
    )
    assert np.sum(dists > 0) >= 10 and np.sum(dists < -0.05) >= 10 and np.sum(dists > -0.01) >= 50


TOL_PIPELINE = {"dist": 1e-9, "pos": 1e-9, "frame": 1e-9}


def test_pipeline_matches_mujoco():
    """The same through our own kinematics, whose geom poses are MuJoCo's bit for bit
    (test_kinematics_bits.py), so the contacts meet the tolerance of MuJoCo's own poses (seen:
    dist 0, pos 9.5e-13, frame 7.6e-13). While the poses differed by ~1e-16, GJK and EPA,
    which stop within ccd_tolerance of their bounds, moved slowly converging contacts by up
    to 6e-7 in pos and 2e-5 in the normal."""
    mj, qpos = _mj_and_poses(CONVEX, N_POSES, 0.1, 3)
    sim = engine.Simulator(engine.load_mjcf(without_contacts(CONVEX)), batch=len(qpos))
    sim.data.qpos[:] = qpos
    sim.forward()
    sim.collision()
    d = mujoco.MjData(mj)
    worst = dict.fromkeys(TOL_PIPELINE, 0.0)
    ncon = 0
    for i in range(len(qpos)):
        ref, ours = mj_collide(mj, d, qpos[i]), our_contacts(sim.data, i)
        assert len(ours["dist"]) == d.ncon and np.array_equal(ours["geom"], ref["geom"]), f"state {i}"
        for name in TOL_PIPELINE:
            if d.ncon:
                worst[name] = max(worst[name], float(np.max(np.abs(ours[name] - ref[name]))))
        ncon += d.ncon
    for name, tol in TOL_PIPELINE.items():
        report(f"collision_convex through our kinematics, contact {name}", worst[name], tol, ncon)
    for name, tol in TOL_PIPELINE.items():
        assert worst[name] <= tol


def test_dm_control_humanoid_CMU_on_mujoco_poses():
    """dm_control's humanoid_CMU (83 of its candidate pairs, capsules and spheres against
    its two ellipsoids, go through this collider) at 100 random states, on MuJoCo's geom
    poses: every contact equal to MuJoCo's to 1e-9 (test_dm_control compares it through our
    kinematics)."""
    import importlib.util
    from pathlib import Path

    from tests.helpers import random_states

    suite = Path(importlib.util.find_spec("dm_control").submodule_search_locations[0]) / "suite"
    path = suite / "humanoid_CMU.xml"
    mj = mj_model(path)
    qpos, _, _ = random_states(mj, 100, seed=11)
    result = compare_on_mujoco_poses("humanoid_CMU", path, mj, qpos, as_is=True)
    result.check(100, 100)
    convex = sum(result.pair_types.get(pair, 0) for pair in PAIRS)
    print(f"[convex] humanoid_CMU: {convex} of {result.ncon} contacts from the convex collider")
    assert convex >= 5


# ---- analytic cases ----------------------------------------------------------------------------

_TWO = """
<mujoco>
  <option gravity="0 0 0"/>
  <worldbody>
    <body name="a" pos="0 0 0"><freejoint/>
      <geom name="a" type="{type_a}" size="{size_a}" margin="{margin}" {euler_a}/>
    </body>
    <body name="b" pos="{x} 0 0"><freejoint/>
      <geom name="b" type="{type_b}" size="{size_b}" {euler_b}/>
    </body>
  </worldbody>
</mujoco>
"""

# (name, geom a, geom b, extent of a along +x, extent of b along -x)
ANALYTIC = [
    (
        "ellipsoid-ellipsoid",
        ("ellipsoid", "0.1 0.05 0.07", ""),
        ("ellipsoid", "0.06 0.09 0.04", ""),
        0.1,
        0.06,
    ),
    ("ellipsoid-box", ("ellipsoid", "0.1 0.05 0.07", ""), ("box", "0.06 0.05 0.04", ""), 0.1, 0.06),
    ("ellipsoid-cylinder side", ("ellipsoid", "0.05 0.1 0.07", ""), ("cylinder", "0.04 0.1", ""), 0.05, 0.04),
    ("sphere-ellipsoid", ("sphere", "0.05", ""), ("ellipsoid", "0.07 0.03 0.05", ""), 0.05, 0.07),
]


# EPA on curved shapes stops after ccd_iterations (35) with a face of the polytope, not the
# surface: MuJoCo's own penetration contacts are off the exact ones by up to ~5e-5 in depth
# and ~0.05 in the normal (two ellipsoids overlapping 3 mm along x: normal 2.7 degrees off)
TOL_EPA = {"dist": 1e-4, "normal": 0.06, "pos": 1e-3}
TOL_GJK = {"dist": 1e-5, "normal": 1e-4, "pos": 1e-5}


CASES = [
    pytest.param(*case, gap, id=f"{case[0]}-{gap}")
    for case in ANALYTIC
    for gap in (0.01, 0.002, -0.003, -0.02)
]


@pytest.mark.parametrize(("name", "a", "b", "ra", "rb", "gap"), CASES)
def test_known_separation(name, a, b, ra, rb, gap):
    """Geom b at x = ra + rb + gap on the +x side of geom a, both axis-aligned: one contact
    with dist = gap (within the 0.02 margin when apart), normal +x, pos at x = ra + gap/2;
    to GJK's accuracy when apart (and for a sphere, shrunk to its centre), to EPA's when
    they overlap; and equal to MuJoCo's to rounding on MuJoCo's poses (the ellipsoid 3 mm
    into the cylinder's side: GJK stops on a triangle, and EPA starts from 4.0.0's polytope3)."""
    xml = _TWO.format(
        type_a=a[0],
        size_a=a[1],
        euler_a=a[2],
        type_b=b[0],
        size_b=b[1],
        euler_b=b[2],
        margin=0.02,
        x=ra + rb + gap,
    )
    sim = engine.Simulator(engine.load_mjcf(without_contacts(xml)), batch=1)
    sim.forward()
    sim.collision()
    data = sim.data
    assert data.ncon[0] == 1, f"{name} gap {gap}: {data.ncon[0]} contacts"
    geoms = list(data.contact_geom[0, 0])
    sign = 1.0 if geoms == [0, 1] else -1.0  # the normal points from geom1 to geom2
    err = {
        "dist": abs(data.contact_dist[0, 0] - gap),
        "normal": float(np.max(np.abs(data.contact_frame[0, 0, :3] - sign * np.array([1.0, 0.0, 0.0])))),
        "pos": float(np.max(np.abs(data.contact_pos[0, 0] - [ra + gap / 2, 0.0, 0.0]))),
    }
    tol = TOL_GJK if gap > 0 or a[0] == "sphere" else TOL_EPA
    for key, value in err.items():
        report(f"{name} gap {gap} {key}", value, tol[key], 1)
    assert all(err[key] <= tol[key] for key in err), err
    result = compare_on_mujoco_poses(name, xml, mujoco.MjModel.from_xml_string(xml), sim.data.qpos.copy())
    result.check(1, 1)


# ---- the loader ----------------------------------------------------------------------------------

_PAIR = """
<mujoco>
  <option><flag {flags}/></option>
  <worldbody>
    <body name="a"><freejoint/><geom name="first" type="{t1}" size="{s1}"/></body>
    <body name="b" pos="0 0 0.3"><freejoint/><geom name="second" type="{t2}" size="{s2}" {extra}/></body>
  </worldbody>
  {assets}
</mujoco>
"""
_SIZES = {
    "capsule": "0.05 0.1",
    "cylinder": "0.05 0.1",
    "box": "0.05 0.05 0.05",
    "ellipsoid": "0.1 0.05 0.07",
}


@pytest.mark.parametrize(
    ("t1", "t2", "maxcon"), [("capsule", "cylinder", 2), ("cylinder", "cylinder", 4), ("cylinder", "box", 4)]
)
def test_multicontact_pairs_load(t1, t2, maxcon):
    """The pairs MuJoCo 4.0.0 follows with its multi-contact search load, with room for its
    2 or 4 contacts (1 with multiccd disabled); tests/engine/test_collision_multi.py
    compares their contacts with MuJoCo's."""
    xml = _PAIR.format(flags="", t1=t1, s1=_SIZES[t1], t2=t2, s2=_SIZES[t2], extra="", assets="")
    assert engine.load_mjcf(xml).cpair_maxcon.tolist() == [maxcon]
    xml = _PAIR.format(
        flags='multiccd="disable"', t1=t1, s1=_SIZES[t1], t2=t2, s2=_SIZES[t2], extra="", assets=""
    )
    assert engine.load_mjcf(xml).cpair_maxcon.tolist() == [1]


def test_mesh_pairs_load():
    """Mesh pairs load with MuJoCo 4.0.0's contact counts (1 with an ellipsoid, 4 with a box,
    1 with multiccd disabled); a mesh whose hull vertex lies in more polygons than the
    multi-contact search holds is refused by name for the pairs that need it
    (tests/engine/test_collision_mesh.py compares mesh contacts with MuJoCo's)."""
    tet = '<asset><mesh name="tet" vertex="0 0 0  0.1 0 0  0 0.1 0  0 0 0.1"/></asset>'
    for t1, maxcon in (("ellipsoid", 1), ("box", 4)):
        for flags, n in (("", maxcon), ('multiccd="disable"', 1)):
            xml = _PAIR.format(
                flags=flags, t1=t1, s1=_SIZES[t1], t2="mesh", s2="", extra='mesh="tet"', assets=tet
            )
            assert engine.load_mjcf(xml).cpair_maxcon.tolist() == [n]
    from tests.engine.test_collision import CONE

    cone = f'<asset><mesh name="tet" vertex="{CONE}"/></asset>'
    xml = _PAIR.format(
        flags="", t1="box", s1=_SIZES["box"], t2="mesh", s2="", extra='mesh="tet"', assets=cone
    )
    with pytest.raises(engine.UnsupportedModelError, match=r"'second' \(mesh\).*hull vertex in 24 polygons"):
        engine.load_mjcf(xml)


def test_libccd_path_refused():
    xml = _PAIR.format(
        flags='nativeccd="disable"',
        t1="ellipsoid",
        s1=_SIZES["ellipsoid"],
        t2="box",
        s2=_SIZES["box"],
        extra="",
        assets="",
    )
    with pytest.raises(engine.UnsupportedModelError, match=r'nativeccd="disable".*ellipsoid-box'):
        engine.load_mjcf(xml)


def test_multiccd_disabled_matches_mujoco():
    """Without multi-CCD MuJoCo still returns one contact for these pairs: same contacts."""
    xml = CONVEX.read_text().replace(
        '<option gravity="0 0 0"/>', '<option gravity="0 0 0"><flag multiccd="disable"/></option>'
    )
    mj, qpos = _mj_and_poses(xml, N_POSES, 0.1, 6)
    compare_on_mujoco_poses("multiccd disabled", xml, mj, qpos).check(N_POSES, N_POSES)


def test_ccd_options_are_copied():
    options = '<option gravity="0 0 0" ccd_iterations="12" ccd_tolerance="1e-4"/>'
    model = engine.load_mjcf(CONVEX.read_text().replace('<option gravity="0 0 0"/>', options))
    assert model.opt_ccd_iterations == 12 and model.opt_ccd_tolerance == 1e-4
    xml = CONVEX.read_text().replace(
        '<option gravity="0 0 0"/>', '<option gravity="0 0 0" ccd_iterations="12"/>'
    )
    mj, qpos = _mj_and_poses(xml, N_POSES, 0.1, 6)  # fewer GJK and EPA iterations: still MuJoCo's contacts
    compare_on_mujoco_poses("ccd_iterations 12", xml, mj, qpos).check(N_POSES, N_POSES)


def test_epa_from_a_triangle():
    """When GJK stops on a triangle within ccd_tolerance of the origin, MuJoCo 4.0.0's
    polytope3 (not the source's: the segment between the two normal supports must pass
    through the triangle, else the hexahedron is reordered or becomes a tetrahedron) starts
    EPA: this state (a sphere deep in the ellipsoid with a margin) takes that path, and a
    looser ccd_tolerance, which stops GJK on triangles more often, still matches MuJoCo."""
    mj, qpos = _mj_and_poses(CONVEX, N_POSES, 0.1, 5)
    compare_on_mujoco_poses("polytope3 case", CONVEX, mj, qpos[268:269]).check(1, 1)
    xml = CONVEX.read_text().replace(
        '<option gravity="0 0 0"/>', '<option gravity="0 0 0" ccd_tolerance="1e-4"/>'
    )
    mj, qpos = _mj_and_poses(xml, N_POSES, 0.1, 5)
    compare_on_mujoco_poses("ccd_tolerance 1e-4", xml, mj, qpos).check(N_POSES, N_POSES)
