"""Oracle tests of the collision stage (engine/collision_driver.py, collision_primitive.py).

States where things touch come from MuJoCo itself: rollouts (mj_step, contacts on) of
gymnasium's ant, humanoid, hopper, walker2d and half_cheetah dropped onto the floor, random
poses of the same models near the floor, and random poses of our models
`assets/tests/collision_*.xml`, which cover every primitive pair we collide (with deep
penetration, margins and gaps), the pair filters and the parameter mixing. Constructed
states add exactly parallel capsules and deep penetration. Our Model is loaded from
`without_contacts(xml)`, so that forward() computes the kinematics and nothing else,
MuJoCo's from the original xml; ours runs forward() then collision(), MuJoCo
mj_kinematics then mj_collision. (forward() and step() of a model with contacts enabled
run the same collision stage themselves; test_constraint checks its contacts there.)

Contacts are compared in order, contact i to contact i: count and geoms exactly, then
position, frame (normal first) and distance to TOL_GEOM, and every contact parameter to
TOL_PARAM. Why 1e-9 is defensible: geom poses agree with MuJoCo's to ~1e-16 (the same
kinematics; test_smooth checks them to 1e-10) and every collider here repeats MuJoCo's
arithmetic, so in general position the errors are ~1e-16 in positions and distances and
~1e-14 in frames (a tangent hint nearly parallel to the normal is orthogonalized by
dividing by the sine of their angle). The worst, ~2e-11, comes from nearly degenerate
poses (a cylinder tilted 1e-6 rad from flat on a plane touches at the rim point in the
direction of its tilt, which a 1e-16 pose difference moves by radius * 1e-16 / tilt).
"""

from __future__ import annotations

import functools
import importlib.util
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import mujoco
import numpy as np
import pytest

from robodyn import engine
from robodyn.engine.binding import units_for
from robodyn.engine.collision_driver import collision, collision_convex
from robodyn.engine.types import (
    GEOM_BOX,
    GEOM_CAPSULE,
    GEOM_CYLINDER,
    GEOM_ELLIPSOID,
    GEOM_PLANE,
    GEOM_SPHERE,
)
from robogym.dmc_task import built_model, remove_elements
from tests.helpers import ASSETS, GYM_ASSETS, report, without_contacts

DMC_SUITE = Path(importlib.util.find_spec("dm_control").submodule_search_locations[0]) / "suite"

TOL_GEOM = 1e-9  # contact position (m), frame, distance (m)
TOL_PARAM = 1e-12  # includemargin, friction, solref, solreffriction, solimp (copied or mixed)
N_ROLLOUT = 100  # states with contacts sampled from rollouts, per gymnasium model
N_RANDOM = 100  # random poses per gymnasium model
N_PRIMITIVE = 400  # random poses of collision_primitives.xml
N_FILTER = 300  # random poses of collision_filters.xml (and each of its variants)

GYM_MODELS = ["ant.xml", "humanoid.xml", "hopper.xml", "walker2d.xml", "half_cheetah.xml"]
PRIMITIVES = ASSETS / "tests" / "collision_primitives.xml"
FILTERS = ASSETS / "tests" / "collision_filters.xml"
PARALLEL = ASSETS / "tests" / "collision_parallel.xml"

FLOAT_FIELDS = {
    "pos": TOL_GEOM,
    "frame": TOL_GEOM,
    "dist": TOL_GEOM,
    "includemargin": TOL_PARAM,
    "friction": TOL_PARAM,
    "solref": TOL_PARAM,
    "solreffriction": TOL_PARAM,
    "solimp": TOL_PARAM,
}
INT_FIELDS = ("geom", "dim", "exclude")


# ---- reading contacts -------------------------------------------------------------------------


def mj_contacts(d: mujoco.MjData) -> dict[str, np.ndarray]:
    """MuJoCo's contacts 0..ncon-1 as arrays, our field names without the contact_ prefix."""
    n = d.ncon
    c = d.contact
    out = {name: np.array(getattr(c, name)[:n]) for name in (*FLOAT_FIELDS, *INT_FIELDS)}
    out["frame"] = out["frame"].reshape(n, 9)
    return out


def mj_collide(mj: mujoco.MjModel, d: mujoco.MjData, qpos: np.ndarray) -> dict[str, np.ndarray]:
    """MuJoCo's contacts at qpos: mj_kinematics then mj_collision on d."""
    d.qpos[:] = qpos
    mujoco.mj_kinematics(mj, d)
    mujoco.mj_collision(mj, d)
    return mj_contacts(d)


def our_contacts(data: engine.Data, i: int) -> dict[str, np.ndarray]:
    """Row i's contacts 0..ncon-1."""
    n = int(data.ncon[i])
    return {name: np.array(getattr(data, f"contact_{name}")[i, :n]) for name in (*FLOAT_FIELDS, *INT_FIELDS)}


def mj_model(source: Path | str) -> mujoco.MjModel:
    return mujoco.MjModel.from_xml_path(str(source))


class Comparison:
    """Worst error per field over many states, contacts compared one to one."""

    def __init__(self, label: str):
        self.label = label
        self.worst = dict.fromkeys(FLOAT_FIELDS, 0.0)
        self.where = {}
        self.nstate = 0
        self.ncon = 0
        self.pair_types: dict[tuple[int, int], int] = {}

    def add(self, mj: mujoco.MjModel, ref: dict, ours: dict, state: int) -> None:
        n = len(ref["dist"])
        assert len(ours["dist"]) == n, (
            f"{self.label} state {state}: {len(ours['dist'])} contacts, MuJoCo {n}\n"
            f"ours geoms {ours['geom'].tolist()}\nMuJoCo geoms {ref['geom'].tolist()}"
        )
        for name in INT_FIELDS:
            assert np.array_equal(ours[name], ref[name]), (
                f"{self.label} state {state}: contact {name} {ours[name].tolist()} "
                f"vs MuJoCo {ref[name].tolist()}"
            )
        for name in FLOAT_FIELDS:
            if n:
                err = float(np.max(np.abs(ours[name] - ref[name])))
                if err > self.worst[name]:
                    self.worst[name] = err
                    self.where[name] = state
        for g1, g2 in ref["geom"]:
            key = (int(mj.geom_type[g1]), int(mj.geom_type[g2]))
            self.pair_types[key] = self.pair_types.get(key, 0) + 1
        self.nstate += 1
        self.ncon += n

    def check(self, min_states: int, min_contacts: int) -> None:
        for name, tol in FLOAT_FIELDS.items():
            report(f"{self.label} contact {name}", self.worst[name], tol, self.ncon)
        assert self.nstate >= min_states, f"{self.label}: compared {self.nstate} states < {min_states}"
        assert self.ncon >= min_contacts, f"{self.label}: compared {self.ncon} contacts < {min_contacts}"
        for name, tol in FLOAT_FIELDS.items():
            assert self.worst[name] <= tol, (
                f"{self.label}: contact {name} off MuJoCo by {self.worst[name]:.3e} > {tol:.0e} "
                f"(state {self.where.get(name)})"
            )


def compare_states(label: str, ours_source, mj: mujoco.MjModel, qpos: np.ndarray) -> Comparison:
    """Collide every qpos in one batched Simulator and, one by one, in MuJoCo."""
    model = engine.load_mjcf(ours_source)
    sim = engine.Simulator(model, batch=len(qpos))
    sim.data.qpos[:] = qpos
    sim.forward()
    sim.collision()
    return compare_contacts(label, mj, sim.data, qpos)


def compare_contacts(label: str, mj: mujoco.MjModel, data: engine.Data, qpos: np.ndarray) -> Comparison:
    """Row i's contacts in `data` against MuJoCo's at qpos[i], one to one."""
    d = mujoco.MjData(mj)
    result = Comparison(label)
    for i in range(len(qpos)):
        result.add(mj, mj_collide(mj, d, qpos[i]), our_contacts(data, i), i)
    return result


# ---- state sampling ---------------------------------------------------------------------------


def _random_quat(rng: np.random.Generator, n: int) -> np.ndarray:
    q = rng.normal(size=(n, 4))
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def rollout_states(mj: mujoco.MjModel, n: int, seed: int, every: int = 7) -> np.ndarray:
    """n qpos with at least one contact from MuJoCo rollouts (contacts on): the robot
    starts above the floor at a random height, tilt and velocity and is driven by random
    controls; every `every` steps a touching state is kept."""
    rng = np.random.default_rng(seed)
    d = mujoco.MjData(mj)
    free = mj.njnt > 0 and mj.jnt_type[0] == mujoco.mjtJoint.mjJNT_FREE
    out = []
    for _ in range(1000):
        mujoco.mj_resetData(mj, d)
        if free:
            d.qpos[2] += rng.uniform(0.0, 0.6)
            d.qpos[3:7] = _random_quat(rng, 1)[0]
        else:  # planar robots: root slide z and hinge
            d.qpos[:] += rng.uniform(-0.3, 0.3, mj.nq)
            d.qpos[1] += rng.uniform(0.0, 0.5)
        d.qvel[:] = rng.normal(0.0, 1.0, mj.nv)
        for t in range(300):
            d.ctrl[:] = rng.uniform(-1.0, 1.0, mj.nu)
            mujoco.mj_step(mj, d)
            if t % every == 0 and d.ncon > 0:
                out.append(d.qpos.copy())
                if len(out) == n:
                    return np.array(out)
    raise AssertionError(f"rollouts found only {len(out)} touching states")


def random_poses(mj: mujoco.MjModel, n: int, seed: int, spread: float, height: tuple[float, float]):
    """n qpos: free bodies at random positions (xy in [-spread, spread], z in `height`)
    and orientations, hinge and slide joints uniform in [-1.5, 1.5] about qpos0."""
    rng = np.random.default_rng(seed)
    qpos = np.tile(mj.qpos0, (n, 1))
    for j in range(mj.njnt):
        a = mj.jnt_qposadr[j]
        if mj.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            qpos[:, a : a + 2] = rng.uniform(-spread, spread, (n, 2))
            qpos[:, a + 2] = rng.uniform(*height, n)
            qpos[:, a + 3 : a + 7] = _random_quat(rng, n)
        elif mj.jnt_type[j] == mujoco.mjtJoint.mjJNT_BALL:
            qpos[:, a : a + 4] = _random_quat(rng, n)
        else:
            qpos[:, a] += rng.uniform(-1.5, 1.5, n)
    return qpos


# ---- gymnasium models -------------------------------------------------------------------------


@functools.cache
def _gym(name: str) -> tuple[str, mujoco.MjModel]:
    path = GYM_ASSETS / name
    return without_contacts(path), mj_model(path)


@pytest.mark.parametrize("name", GYM_MODELS)
def test_gym_rollout_contacts(name: str):
    """Touching states of MuJoCo rollouts of a gymnasium robot dropped on the floor."""
    ours, mj = _gym(name)
    qpos = rollout_states(mj, N_ROLLOUT, seed=sum(map(ord, name)))
    result = compare_states(f"{name} rollout", ours, mj, qpos)
    result.check(N_ROLLOUT, N_ROLLOUT)


@pytest.mark.parametrize("name", GYM_MODELS)
def test_gym_random_pose_contacts(name: str):
    """Random joint angles with the root near the floor: self-contacts between limbs."""
    ours, mj = _gym(name)
    d = mujoco.MjData(mj)
    mujoco.mj_forward(mj, d)
    free = mj.jnt_type[0] == mujoco.mjtJoint.mjJNT_FREE
    if free:
        qpos = random_poses(mj, N_RANDOM, seed=3, spread=0.2, height=(0.0, float(d.qpos[2])))
    else:
        qpos = random_poses(mj, N_RANDOM, seed=3, spread=0.0, height=(0.0, 0.0))
        qpos[:, 1] = np.random.default_rng(4).uniform(-0.3, 0.3, N_RANDOM)  # rootz
    result = compare_states(f"{name} random pose", ours, mj, qpos)
    result.check(N_RANDOM, N_RANDOM)


# ---- our models: every primitive pair, filters and parameters -----------------------------------

SUPPORTED_PAIRS = [
    (GEOM_PLANE, GEOM_SPHERE),
    (GEOM_PLANE, GEOM_CAPSULE),
    (GEOM_PLANE, GEOM_CYLINDER),
    (GEOM_PLANE, GEOM_BOX),
    (GEOM_SPHERE, GEOM_SPHERE),
    (GEOM_SPHERE, GEOM_CAPSULE),
    (GEOM_SPHERE, GEOM_CYLINDER),
    (GEOM_SPHERE, GEOM_BOX),
    (GEOM_CAPSULE, GEOM_CAPSULE),
    (GEOM_CAPSULE, GEOM_BOX),
    (GEOM_BOX, GEOM_BOX),
]


def test_every_primitive_pair():
    """Random, often deeply overlapping poses of collision_primitives.xml: each of the
    eleven primitive pairs must produce contacts, all equal to MuJoCo's."""
    mj = mj_model(PRIMITIVES)
    qpos = random_poses(mj, N_PRIMITIVE, seed=0, spread=0.2, height=(-0.1, 0.25))
    result = compare_states("collision_primitives", without_contacts(PRIMITIVES), mj, qpos)
    result.check(N_PRIMITIVE, 20 * N_PRIMITIVE)
    for pair in SUPPORTED_PAIRS:
        assert result.pair_types.get(pair, 0) >= 50, (
            f"pair types {pair}: only {result.pair_types.get(pair, 0)}"
        )


def _cube_rotations() -> np.ndarray:
    """The 24 rotations that map the coordinate axes onto themselves, as quaternions."""
    quats = []
    for perm in itertools.permutations(range(3)):
        for signs in itertools.product((1.0, -1.0), repeat=3):
            mat = np.zeros((3, 3))
            for row, (col, sign) in enumerate(zip(perm, signs, strict=True)):
                mat[row, col] = sign
            if np.linalg.det(mat) > 0:
                q = np.zeros(4)
                mujoco.mju_mat2Quat(q, mat.reshape(-1))
                quats.append(q)
    return np.array(quats)


ELLIPSOID = ASSETS / "tests" / "collision_ellipsoid.xml"


def test_plane_ellipsoid():
    """collision_ellipsoid.xml in random poses (three ellipsoids of different shapes, one
    with a margin and a gap, over a floor and a tilted wall): contacts equal MuJoCo's."""
    mj = mj_model(ELLIPSOID)
    qpos = random_poses(mj, 300, seed=1, spread=0.2, height=(-0.1, 0.25))
    result = compare_states("collision_ellipsoid", without_contacts(ELLIPSOID), mj, qpos)
    result.check(300, 300)
    assert result.pair_types.get((GEOM_PLANE, GEOM_ELLIPSOID), 0) >= 300


def test_ellipsoid_rests_on_its_semi_axis():
    """An ellipsoid with semi-axes (a, b, c) whose axis k points up, its centre at height h,
    touches the floor at its lowest point: distance h - size[k], contact below the centre
    at height (h - size[k]) / 2 (midway between the surfaces), normal +z. Analytic."""
    text = ELLIPSOID.read_text()
    mj = mj_model(ELLIPSOID)
    qpos = np.tile(mj.qpos0, (3, 1))
    h = 0.04  # below every semi-axis: each orientation overlaps the floor
    # body "long" (a, b, c) = (0.2, 0.05, 0.08): axis z up, x up (turn about y), y up (about x)
    s = np.sqrt(0.5)
    quats = [(1.0, 0.0, 0.0, 0.0), (s, 0.0, s, 0.0), (s, s, 0.0, 0.0)]
    for row, q in enumerate(quats):
        qpos[row, 0:3] = (-0.8, 0.3, h)  # on the wall's open side, clear of it
        qpos[row, 3:7] = q
        qpos[row, 7:10] = (-0.8, -0.5, 2.0)  # the others out of reach
        qpos[row, 14:17] = (-0.8, 0.8, 2.0)
    sim = engine.Simulator(engine.load_mjcf(without_contacts(text)), batch=3)
    sim.data.qpos[:] = qpos
    sim.forward()
    sim.collision()
    for row, up in enumerate((0.08, 0.2, 0.05)):
        assert sim.data.ncon[row] == 1 and sorted(sim.data.contact_geom[row, 0]) == [0, 2]  # floor, long
        assert sim.data.contact_dist[row, 0] == pytest.approx(h - up, abs=1e-15)
        np.testing.assert_allclose(sim.data.contact_pos[row, 0], (-0.8, 0.3, (h - up) / 2), atol=1e-15)
        np.testing.assert_allclose(sim.data.contact_frame[row, 0, :3], (0.0, 0.0, 1.0), atol=0)


def test_aligned_primitives():
    """collision_primitives.xml with every body axis-aligned (faces, edges and axes exactly
    parallel) or tilted from that by 1e-6 to 1e-3 rad: the degenerate branches (parallel
    capsules, capsules along box faces, parallel box faces, disks flat on a plane).

    Tilts between 1e-15 and 1e-6 rad are left out on purpose: there a contact point is
    ill-conditioned (a cylinder almost flat on a plane touches at the rim point in the
    direction of its tilt; a rounding difference of 1e-16 in the geom pose moves that
    point by ~radius * 1e-16 / tilt), so no two implementations agree to 1e-9."""
    mj = mj_model(PRIMITIVES)
    rng = np.random.default_rng(2)
    quats = _cube_rotations()
    qpos = random_poses(mj, N_PRIMITIVE, seed=2, spread=0.2, height=(-0.1, 0.25))
    for j in range(mj.njnt):
        a = mj.jnt_qposadr[j]
        for i in range(N_PRIMITIVE):
            q = quats[rng.integers(len(quats))].copy()
            if rng.uniform() < 0.5:
                tilt = 10 ** rng.uniform(-6, -3)
                axis = rng.normal(size=3)
                dq = np.r_[np.cos(tilt / 2), np.sin(tilt / 2) * axis / np.linalg.norm(axis)]
                mujoco.mju_mulQuat(q, q.copy(), dq)
            qpos[i, a + 3 : a + 7] = q
    result = compare_states("collision_primitives aligned", without_contacts(PRIMITIVES), mj, qpos)
    result.check(N_PRIMITIVE, 20 * N_PRIMITIVE)
    for pair in SUPPORTED_PAIRS:
        count = result.pair_types.get(pair, 0)
        assert count >= 20, f"pair types {pair}: only {count} contacts"


def _variant(path: Path, **flags: str) -> str:
    """The MJCF text of `path` with <option><flag name="value"/> set."""
    text = path.read_text()
    attrs = " ".join(f'{k}="{v}"' for k, v in flags.items())
    return text.replace("<worldbody>", f"<option><flag {attrs}/></option>\n  <worldbody>", 1)


@pytest.mark.parametrize(
    "flags",
    [{}, {"filterparent": "disable"}, {"midphase": "disable"}],
    ids=["default", "filterparent-disabled", "midphase-disabled"],
)
def test_filters_and_parameters(flags):
    """collision_filters.xml in random poses: pair filters, explicit pairs, excludes,
    contact order and parameter mixing, as MuJoCo (also with filterparent or the mid
    phase disabled, which change the pair set and the order)."""
    text = _variant(FILTERS, **flags) if flags else FILTERS.read_text()
    mj = mujoco.MjModel.from_xml_string(text)
    qpos = random_poses(mj, N_FILTER, seed=1, spread=0.15, height=(0.0, 0.3))
    label = "collision_filters " + (" ".join(f"{k}={v}" for k, v in flags.items()) or "default")
    result = compare_states(label, without_contacts(text), mj, qpos)
    result.check(N_FILTER, 5 * N_FILTER)


def test_filter_rules_explicitly():
    """The filters' individual rules, read off the candidate pairs (ours) and checked
    against MuJoCo's contacts in one crowded pose."""
    model = engine.load_mjcf(without_contacts(FILTERS))
    mj = mj_model(FILTERS)
    gid = {mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_GEOM, g): g for g in range(mj.ngeom)}
    pairs = {tuple(sorted(p)) for p in model.cpair_geom.tolist()}

    def has(a: str, b: str) -> bool:
        return tuple(sorted((gid[a], gid[b]))) in pairs

    assert not has("arm", "hand")  # welded together (hand has no joint)
    assert not has("torso_capsule", "arm")  # parent and child
    assert not has("torso_capsule", "hand")  # parent of hand's weld body
    assert has("torso_capsule", "finger")  # grandchild: not filtered
    assert has("arm", "torso_sphere")  # explicit pair overrides the parent filter
    assert not has("other_box", "ball") and not has("other_capsule", "ball")  # <exclude>
    assert not has("torso_box", "floor") and has("torso_box", "other_box")  # bitmasks
    floor_box = {gid["floor"], gid["other_box"]}
    ipair = [
        int(model.cpair_ipair[i]) for i, p in enumerate(model.cpair_geom.tolist()) if set(p) == floor_box
    ]
    explicit = [i for i in range(mj.npair) if {int(mj.pair_geom1[i]), int(mj.pair_geom2[i])} == floor_box]
    assert ipair == explicit and len(explicit) == 1  # the explicit pair replaces the filters' own


# ---- parallel capsules and deep penetration: where iterative colliders (GJK/EPA) fail ---------


GAPS = (0.01, -1e-4, -0.01, -0.05, -0.049, -0.098)  # surface gaps; -0.098: coincident axes


def _parallel_states(mj: mujoco.MjModel, rng: np.random.Generator):
    """Two capsules with exactly the same orientation (random axis), the second offset
    sideways so that their surfaces are `gap` apart and along the axis by up to a bit
    more than their half-lengths together. Returns (qpos, gap, axial offset) per state."""
    a1, a2 = mj.jnt_qposadr[0], mj.jnt_qposadr[1]
    r1, r2 = mj.geom_size[1, 0], mj.geom_size[2, 0]
    reach = mj.geom_size[1, 1] + mj.geom_size[2, 1]
    states, gaps, offsets = [], [], []
    for gap in GAPS:
        for _ in range(25):
            q = _random_quat(rng, 1)[0]
            mat = np.zeros(9)
            mujoco.mju_quat2Mat(mat, q)
            frame = mat.reshape(3, 3)
            angle = rng.uniform(0, 2 * np.pi)
            side = frame[:, 0] * np.cos(angle) + frame[:, 1] * np.sin(angle)
            offset = rng.uniform(-1.2, 1.2) * reach
            qpos = mj.qpos0.copy()
            center = np.array([0.0, 0.0, rng.uniform(0.3, 0.8)])  # above the floor box
            qpos[a1 : a1 + 3] = center
            qpos[a1 + 3 : a1 + 7] = q
            qpos[a2 : a2 + 3] = center + (gap + r1 + r2) * side + offset * frame[:, 2]
            qpos[a2 + 3 : a2 + 7] = q
            states.append(qpos)
            gaps.append(gap)
            offsets.append(offset)
    return np.array(states), np.array(gaps), np.array(offsets)


def _collide(source, qpos: np.ndarray) -> engine.Simulator:
    sim = engine.Simulator(engine.load_mjcf(source), batch=len(qpos))
    sim.data.qpos[:] = qpos
    sim.forward()
    sim.collision()
    return sim


def test_parallel_capsules():
    """Exactly parallel capsules (the singular segment-segment case): MuJoCo's contacts,
    which are two -- the ends of the overlapping span -- whenever the spans overlap and
    the surfaces do, at every overlap down to coincident axes; none when they are apart."""
    mj = mj_model(PARALLEL)
    qpos, gaps, offsets = _parallel_states(mj, np.random.default_rng(5))
    result = compare_states("parallel capsules", without_contacts(PARALLEL), mj, qpos)
    result.check(len(qpos), len(qpos))
    sim = _collide(without_contacts(PARALLEL), qpos)
    reach = mj.geom_size[1, 1] + mj.geom_size[2, 1]
    overlapping = 0
    for i in range(len(qpos)):
        geoms = sim.data.contact_geom[i, : sim.data.ncon[i]].tolist()
        between = sum(1 for g in geoms if sorted(g) == [1, 2])
        if gaps[i] > 0:
            assert between == 0, f"state {i}: capsules {gaps[i]} apart report {between} contacts"
        elif abs(offsets[i]) < reach - 1e-3:
            assert between == 2, f"state {i}: gap {gaps[i]}, offset {offsets[i]:.3f}: {between} contacts"
            overlapping += 1
    assert overlapping >= 80


def test_deep_penetration():
    """A horizontal capsule lowered into a thick floor box (an iterative EPA can report the escape
    out through the box's side instead, metres deep, with a sideways normal): at every depth
    to 45 cm the contact depth equals the depth of its lowest point, and the normal points
    straight down from the capsule into the box, never out through a side."""
    mj = mj_model(PARALLEL)
    depths = np.linspace(0.0, 0.45, 46)
    a = mj.jnt_qposadr[0]
    radius = mj.geom_size[1, 0]
    top = mj.geom_pos[0, 2] + mj.geom_size[0, 2]  # the floor box's top face
    qpos = np.tile(mj.qpos0, (len(depths), 1))
    qpos[:, a : a + 3] = 0.0
    qpos[:, a + 2] = top + radius - depths  # lowest point at -depth
    qpos[:, a + 3 : a + 7] = [np.cos(np.pi / 4), np.sin(np.pi / 4), 0.0, 0.0]  # axis along y
    qpos[:, mj.jnt_qposadr[1] + 2] = 5.0  # the other capsule far above
    result = compare_states("deep penetration", without_contacts(PARALLEL), mj, qpos)
    result.check(len(depths), len(depths))
    sim = _collide(without_contacts(PARALLEL), qpos)
    worst = 0.0
    for i, depth in enumerate(depths):
        n = sim.data.ncon[i]
        assert n >= 1, f"depth {depth}: no contact"
        for k in range(n):
            assert sorted(sim.data.contact_geom[i, k].tolist()) == [0, 1]  # floor box, capsule1
            worst = max(worst, abs(sim.data.contact_dist[i, k] + depth))
            np.testing.assert_allclose(sim.data.contact_frame[i, k, :3], [0.0, 0.0, -1.0], atol=1e-12)
    report("deep penetration |dist + depth|", worst, TOL_GEOM, len(depths))
    assert worst <= TOL_GEOM


# ---- refusals and overflow ----------------------------------------------------------------------

# a cone of 24 facets: its apex lies in 24 hull polygons, more than the multi-contact search
# here holds (sizes.MAXDEG), so its pairs with a capsule, cylinder, box or mesh are
# refused (with a plane, a sphere or an ellipsoid they collide)
CONE = (
    "0 0 0.1 0.05 0 0 0.048296 0.012941 0 0.043301 0.025 0 0.035355 0.035355 0 0.025 0.043301 0 "
    "0.012941 0.048296 0 0 0.05 0 -0.012941 0.048296 0 -0.025 0.043301 0 -0.035355 0.035355 0 "
    "-0.043301 0.025 0 -0.048296 0.012941 0 -0.05 0 0 -0.048296 -0.012941 0 -0.043301 -0.025 0 "
    "-0.035355 -0.035355 0 -0.025 -0.043301 0 -0.012941 -0.048296 0 0 -0.05 0 0.012941 -0.048296 0 "
    "0.025 -0.043301 0 0.035355 -0.035355 0 0.043301 -0.025 0 0.048296 -0.012941 0"
)

_REFUSED = """
<mujoco>
  <asset><mesh name="cone" vertex="CONE"/></asset>
  <worldbody>
    <geom name="floor" type="plane" size="1 1 0.1"/>
    <body name="a"><freejoint/><geom name="stick" type="capsule" size="0.05 0.1"/></body>
    <body name="b"><freejoint/><geom name="{name}" type="{type}" {size} {mask}/></body>
  </worldbody>
</mujoco>
""".replace("CONE", CONE)


@pytest.mark.parametrize(("gtype", "size", "other"), [("mesh", 'mesh="cone"', "capsule")])
def test_uncollidable_geom_refused_by_name(gtype, size, other):
    """A geom pair with no collider here (capsule : a mesh with a vertex in more polygons
    than the multi-contact search holds) is refused at load, naming the geoms and why."""
    xml = _REFUSED.format(name="odd", type=gtype, size=size, mask="")
    with pytest.raises(engine.UnsupportedModelError, match=rf"'odd' \({gtype}\)") as err:
        engine.load_mjcf(xml)
    assert other in str(err.value) and "24 polygons" in str(err.value)
    # it cannot collide with anything: loads, and the rest collides
    quiet = _REFUSED.format(name="odd", type=gtype, size=size, mask='contype="0" conaffinity="0"')
    mj = mujoco.MjModel.from_xml_string(quiet)
    assert mj.ngeom == 3
    model = engine.load_mjcf(quiet)
    assert len(model.cpair_geom) == 1  # floor and stick
    # the plane : cone pair alone loads (no multi-contact search there)
    alone = _REFUSED.format(name="odd", type=gtype, size=size, mask='contype="2" conaffinity="2"')
    alone = alone.replace('<geom name="floor"', '<geom name="floor" contype="3" conaffinity="3"')
    assert len(engine.load_mjcf(alone).cpair_geom) == 2  # floor and stick, floor and cone


def test_uncollidable_geom_with_contacts_disabled():
    """With contacts disabled the model loads (smooth dynamics need no collisions), but
    collision() refuses to run rather than skip the pair silently."""
    xml = _REFUSED.format(name="odd", type="mesh", size='mesh="cone"', mask="")
    xml = xml.replace(
        "<worldbody>", '<option><flag contact="disable" constraint="disable"/></option><worldbody>'
    )
    model = engine.load_mjcf(xml)
    sim = engine.Simulator(model, batch=2)
    sim.forward()
    with pytest.raises(engine.UnsupportedModelError, match="mesh"):
        sim.collision()


def test_contact_overflow_raises():
    """More contacts than nconmax: a clear error naming the row and the capacity; every
    row keeps its first nconmax contacts."""
    mj = mj_model(PRIMITIVES)
    qpos = random_poses(mj, 4, seed=0, spread=0.2, height=(-0.1, 0.25))
    full = _collide(without_contacts(PRIMITIVES), qpos)
    counts = full.data.ncon.copy()
    assert full.model.nconmax >= counts.max() > 3
    small = engine.load_mjcf(without_contacts(PRIMITIVES), nconmax=int(counts.max()) - 1)
    sim = engine.Simulator(small, batch=4)
    sim.data.qpos[:] = qpos
    sim.forward()
    row = int(np.flatnonzero(counts > small.nconmax)[0])
    with pytest.raises(
        engine.ContactOverflowError, match=rf"row {row} has {counts[row]} contacts.*nconmax={small.nconmax}"
    ):
        sim.collision()
    for i in range(4):
        n = min(counts[i], small.nconmax)
        assert sim.data.ncon[i] == n
        np.testing.assert_array_equal(sim.data.contact_geom[i, :n], full.data.contact_geom[i, :n])


def test_collision_unit_follows_the_pair_types():
    """A model whose candidate pairs all have closed-form colliders runs the `collision` unit,
    one with a pair for the convex collider `collision_convex`, one without contacts neither
    (engine.binding.units_for)."""
    closed = engine.load_mjcf(ASSETS / "quadruped.xml")
    assert units_for(closed)["collision"] is collision
    assert units_for(engine.load_mjcf(PRIMITIVES))["collision"] is collision
    convex = engine.load_mjcf(ASSETS / "tests" / "collision_convex.xml")
    assert units_for(convex)["collision"] is collision_convex
    assert "collision" not in units_for(engine.load_mjcf(without_contacts(ASSETS / "quadruped.xml")))


_COMPILE_PROBE = """
import json, time
from numba.core import event
from robodyn.engine.collision_driver import collision
from robodyn.engine.ptr import UNIT_SIGNATURE

class Compiled(event.Listener):
    names = []
    def on_start(self, ev):
        pass
    def on_end(self, ev):
        self.names.append(getattr(getattr(ev.data.get("dispatcher"), "py_func", None), "__module__", "?"))

t = time.perf_counter()
with event.install_listener("numba:compile", Compiled()):
    collision.address(UNIT_SIGNATURE)
print(json.dumps({"s": time.perf_counter() - t, "modules": Compiled.names}))
"""


def test_closed_form_unit_compiles_no_convex_collider(tmp_path):
    """Compiled from an empty cache, the `collision` unit compiles the closed-form colliders
    and none of engine.collision_convex's kernels: GJK/EPA, most of the convex unit's compile
    time, is compiled only for models that have a convex pair."""
    root = str(Path(engine.__file__).parent.parent)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), PYTHONPATH=os.pathsep.join([root, *sys.path]))
    out = subprocess.run(
        [sys.executable, "-c", _COMPILE_PROBE], cwd=root, env=env, capture_output=True, text=True, timeout=900
    )
    assert out.returncode == 0, out.stderr
    probe = json.loads(out.stdout.strip().splitlines()[-1])
    modules = probe["modules"]
    print(f"\ncollision unit, cold: {probe['s']:.0f} s, {len(modules)} functions compiled")
    assert modules.count("robodyn.engine.collision_primitive") >= 10  # it did compile, from scratch
    assert "robodyn.engine.collision_convex" not in modules


# ---- MuJoCo's mid phase: bounding boxes along the bodies' trees --------------------------------

N_SLOT = 1000  # pegs placed in the slot


def _slot_model(midphase: bool) -> str:
    """dm_control's manipulator.xml (read from the installed package) with the peg and the
    slot alone, the slot a mocap body (placed per state), its contacts with the world body
    excluded; with `midphase` False, MuJoCo's mid phase disabled."""

    def edit(root):
        remove_elements(root, {("body", b) for b in ("ball", "target_ball", "cup", "target_peg")})
        next(b for b in root.iter("body") if b.get("name") == "slot").set("mocap", "true")
        contact = ElementTree.SubElement(root, "contact")
        ElementTree.SubElement(contact, "exclude", {"body1": "world", "body2": "slot"})
        if not midphase:
            option = root.find("option")
            if option is None:
                option = ElementTree.SubElement(root, "option")
            flag = option.find("flag")
            if flag is None:
                flag = ElementTree.SubElement(option, "flag")
            flag.set("midphase", "disable")

    name = "test-peg-slot" if midphase else "test-peg-slot-nomidphase"
    return built_model(str(DMC_SUITE / "manipulator.xml"), name, edit)


def _pegs_in_slot(mj: mujoco.MjModel, n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(qpos, mocap_pos, mocap_quat) of n states with the peg resting in the slot, as
    dm_control's insert_peg starts "in the target": the slot at a random x in [-0.4, 0.4],
    z in [0.1, 0.4] and angle about y in +-pi/3, the peg at the same x, z and angle, where
    its guard rests on the slot's walls and its blade's tip on the slot's floor at distance
    0, and the arm turned away."""
    rng = np.random.default_rng(seed)
    x, z = rng.uniform(-0.4, 0.4, n), rng.uniform(0.1, 0.4, n)
    angle = rng.uniform(-np.pi / 3, np.pi / 3, n)
    qpos = np.tile(mj.qpos0, (n, 1))
    for joint, value in (("peg_x", x), ("peg_z", z), ("peg_y", angle), ("arm_root", np.pi)):
        qpos[:, mj.jnt_qposadr[mj.joint(joint).id]] = value
    pos = np.stack([x, np.full(n, mj.body_pos[mj.body("slot").id][1]), z], axis=1)
    quat = np.stack([np.cos(angle / 2), np.zeros(n), np.sin(angle / 2), np.zeros(n)], axis=1)
    return qpos, pos[:, None], quat[:, None]


@pytest.mark.parametrize("midphase", [True, False])
def test_midphase_on_tangent_pegs(midphase):
    """A peg resting in dm_control's slot touches it at distance 0 (the guard on the walls,
    the blade's tip on the floor), where rounding decides whether a pair is a contact: the
    colliders return about -1e-17, and MuJoCo's mid phase (mj_collideTree: the bounding
    boxes of node pairs of the two bodies' trees, then of the two geoms, mj_collideOBB)
    calls some of those pairs apart first. Ours equal MuJoCo's, contact for contact, with
    the mid phase and (as `<flag midphase="disable"/>` asks) without it; the mid phase
    changes MuJoCo's contacts in a large share of these states, so both paths are
    exercised."""
    path = _slot_model(midphase)
    mj = mj_model(path)
    qpos, mocap_pos, mocap_quat = _pegs_in_slot(mj, N_SLOT, seed=0)
    sim = engine.Simulator(engine.load_mjcf(without_contacts(path)), batch=N_SLOT)
    sim.data.qpos[:] = qpos
    sim.data.mocap_pos[:] = mocap_pos
    sim.data.mocap_quat[:] = mocap_quat
    sim.forward()
    sim.collision()
    other = mj_model(_slot_model(not midphase))
    d, d_other = mujoco.MjData(mj), mujoco.MjData(other)
    result = Comparison(f"peg in slot, mid phase {'on' if midphase else 'off'}")
    changed = 0
    for i in range(N_SLOT):
        for data in (d, d_other):
            data.mocap_pos[:] = mocap_pos[i]
            data.mocap_quat[:] = mocap_quat[i]
        ref = mj_collide(mj, d, qpos[i])
        changed += not np.array_equal(ref["geom"], mj_collide(other, d_other, qpos[i])["geom"])
        result.add(mj, ref, our_contacts(sim.data, i), i)
    print(f"[oracle] peg in slot: MuJoCo's mid phase changes the contacts of {changed} of {N_SLOT} states")
    result.check(N_SLOT, 10 * N_SLOT)
    assert changed >= N_SLOT // 10, f"the mid phase changed only {changed} of {N_SLOT} states"
