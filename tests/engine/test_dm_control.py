"""The dm_control suite's models (they ship inside the installed `dm_control` package, read
from site-packages, never copied) against MuJoCo 4.0.0, as they ship.

Each model the engine loads is compared with MuJoCo at 100 random states (joints around
qpos0, quaternions uniform, velocities in [-2, 2], controls across their range) in one
batch: body poses, the dense mass matrix, the bias forces, the contacts one to one (count,
geoms, distance, position), the sensors and the constrained acceleration with the model's
own solver settings (the dog's: Newton, then 4 noslip sweeps); and along 200-step
trajectories (qpos, qvel, act) from gentler random states (the dog's 100 states are gentle
ones too: see GENTLE). The dog's <skin> (a mesh drawn over its bones, no physics) is
checked to change nothing in MuJoCo's physics. Every model of the suite loads as it ships
(test_every_model_loads).

Tolerances: kinematics, M and bias are closed-form (1e-10 relative, worst seen ~1e-15);
contacts 1e-9 (m); sensors and qacc 1e-7 relative: the constrained solve stops at the
model's tolerance, and where MuJoCo splits the rows into islands (several separate bodies
in contact) its iterates differ from our single solve within that tolerance; trajectories
1e-6 (the solves' differences grow through contacts over 200 steps). Models with
ellipsoid contacts (MuJoCo's convex collider) have looser ones, CONVEX_TOL, where they are
explained.
"""

from __future__ import annotations

import functools
import importlib.util
import warnings
from pathlib import Path

import mujoco
import numpy as np
import pytest

from robodyn import engine
from robodyn.engine.errors import PhysicsWarning
from tests.helpers import random_states, rel_err, report

SUITE = Path(importlib.util.find_spec("dm_control").submodule_search_locations[0]) / "suite"
N_STATES = 100
STEPS = 200

TOL_EXACT = 1e-10
TOL_CONTACT = 1e-9
TOL_SOLVED = 1e-7
TOL_TRAJ = 1e-6
# Models with contacts from MuJoCo's convex collider (GJK/EPA, engine/collision_convex.py):
# it matches MuJoCo to ~1e-12 on MuJoCo's own geom poses (test_collision_convex), but GJK
# and EPA stop within ccd_tolerance (1e-6) of their bounds, so a rounding difference in
# their own arithmetic (the poses are MuJoCo's bit for bit: test_kinematics_bits.py) can
# move a slowly converging contact within that accuracy
# (humanoid_CMU: contacts 9e-8, qacc 1.3e-6 relative); its trajectories still meet TOL_TRAJ.
# The quadruped's toes against its torso (sphere : ellipsoid) move the same way, and its eyes
# (small cylinders) lying on its terrain press a flat cap on a height-field prism's flat top,
# where EPA's witness point may sit anywhere on the overlap (test_collision_hfield: on the
# same poses ours equal MuJoCo's to 1e-12; 1 ulp apart, seen 7e-7 here, 4.4e-5 there);
# its sensors (touch, rangefinders) and qacc follow (seen 1.8e-5 and 2.2e-6 relative).
# The dog's capsules and ellipsoids equal MuJoCo's contacts at each state (seen 4e-16: several
# of its geoms sit on their body's inertial frame, which both place alike, geom_sameframe),
# but its stiff contacts (solref 0.01: ~1e4 m/s^2 per metre of penetration) and their noslip
# pass amplify rounding along 200 steps to 4.4e-6 relative (seen).
CONVEX_TOL = {
    "humanoid_CMU.xml": {"contact": 1e-6, "sensordata": 1e-5, "qacc": 1e-5},
    "quadruped.xml": {"contact": 1e-4, "sensordata": 1e-4, "qacc": 1e-5},
    "dog.xml": {"trajectory": 1e-5},
}
# Capacities passed to load_mjcf (the MJCF's own <size> otherwise). dog.xml's <size
# nconmax="300" njmax="900"> sizes MuJoCo's arena; its rows reach 1,079 with 217 contacts at
# the states below. The engine sizes each contact's rows for the model's widest (condim 6:
# 10 pyramid edges), so 900 rows would hold only 75 contacts; with nconmax 300 the rows are
# sized to hold 300 (nefcmax clamped to what they can need: 3,146).
LOAD = {"dog.xml": {"nconmax": 300, "nefcmax": 10**6}}
# Models whose uniformly random poses MuJoCo itself cannot simulate as shipped, compared at
# gentle states instead (_gentle_states): the dog's limbs laid through each other make 358
# contacts and 2,028 rows, and mj_forward stops with mj_stackAlloc out of memory.
GENTLE = {"dog.xml"}


def _models() -> list[str]:
    return sorted(p.name for p in SUITE.glob("*.xml"))


def test_the_suite_is_there():
    """The installed package holds the suite (a missing dependency fails, never skips)."""
    names = _models()
    assert len(names) >= 19 and {"cheetah.xml", "walker.xml", "quadruped.xml", "dog.xml"} <= set(names)


def test_every_model_loads():
    """Every model of the suite loads as it ships (with LOAD's capacities where given)."""
    for name in _models():
        model = engine.load_mjcf(SUITE / name, **LOAD.get(name, {}))
        mj = mujoco.MjModel.from_xml_path(str(SUITE / name))
        assert (model.nq, model.nv, model.nbody, model.ngeom) == (mj.nq, mj.nv, mj.nbody, mj.ngeom), name


# the frames mj_kinematics places from a body's: copied from the body's or its inertial frame
# where the compiler found them equal within its tolerance (geom_sameframe, site_sameframe,
# body_sameframe), which the dog's geoms fitted to its bones are to ~1e-6
FRAMES = ("xipos", "ximat", "geom_xpos", "geom_xmat", "site_xpos", "site_xmat")


def test_some_models_place_frames_by_their_bodies_frames():
    """The suite's models hold geoms of every kind of mjtSameFrame but the rotation-only ones
    the comparison of FRAMES covers, so copying a frame is tested."""
    kinds = set()
    for name in _models():
        mj = _pair(name)[1]
        kinds |= set(np.unique(mj.geom_sameframe).tolist()) | set(np.unique(mj.site_sameframe).tolist())
    assert {0, 1, 2} <= kinds, kinds


@functools.cache
def _pair(name: str):
    mj = mujoco.MjModel.from_xml_path(str(SUITE / name))
    return engine.load_mjcf(SUITE / name, **LOAD.get(name, {})), mj


@pytest.mark.parametrize("name", _models())
def test_forward_matches_mujoco(name):
    model, mj = _pair(name)
    states = _gentle_states if name in GENTLE else random_states
    qpos, qvel, ctrl = states(mj, N_STATES, seed=sum(map(ord, name)))
    sim = engine.Simulator(model, batch=N_STATES)
    sim.data.qpos[:], sim.data.qvel[:], sim.data.ctrl[:] = qpos, qvel, ctrl
    sim.forward()
    M = sim.full_mass_matrix()
    d = mujoco.MjData(mj)
    worst = dict.fromkeys(("xpos", "xquat", *FRAMES, "M", "qfrc_bias", "contact", "sensordata", "qacc"), 0.0)
    dense = np.zeros((mj.nv, mj.nv))
    ncontact = 0
    for i in range(N_STATES):
        d.qpos[:], d.qvel[:], d.ctrl[:] = qpos[i], qvel[i], ctrl[i]
        mujoco.mj_forward(mj, d)
        mujoco.mj_fullM(mj, d, dense)
        worst["xpos"] = max(worst["xpos"], rel_err(sim.data.xpos[i], d.xpos))
        worst["xquat"] = max(worst["xquat"], rel_err(sim.data.xquat[i], d.xquat))
        for key in FRAMES:  # geoms and sites MuJoCo's compiler put on the body's (inertial) frame too
            ours_frame = getattr(sim.data, key)[i]
            worst[key] = max(worst[key], rel_err(ours_frame, getattr(d, key).reshape(ours_frame.shape)))
        worst["M"] = max(worst["M"], rel_err(M[i], dense))
        worst["qfrc_bias"] = max(worst["qfrc_bias"], rel_err(sim.data.qfrc_bias[i], d.qfrc_bias))
        assert sim.data.ncon[i] == d.ncon, f"{name} state {i}: {sim.data.ncon[i]} contacts, MuJoCo {d.ncon}"
        for c in range(d.ncon):
            assert sorted(sim.data.contact_geom[i, c]) == sorted(d.contact.geom[c]), f"{name} state {i}"
            err = max(
                abs(sim.data.contact_dist[i, c] - d.contact.dist[c]),
                float(np.max(np.abs(sim.data.contact_pos[i, c] - d.contact.pos[c]))),
            )
            worst["contact"] = max(worst["contact"], err)
        ncontact += d.ncon
        if mj.nsensordata:
            worst["sensordata"] = max(worst["sensordata"], rel_err(sim.data.sensordata[i], d.sensordata))
        worst["qacc"] = max(worst["qacc"], rel_err(sim.data.qacc[i], d.qacc))
    tolerances = {
        "contact": TOL_CONTACT,
        "sensordata": TOL_SOLVED,
        "qacc": TOL_SOLVED,
        **{k: v for k, v in CONVEX_TOL.get(name, {}).items() if k != "trajectory"},
    }
    for key, err in worst.items():
        report(f"dm_control {name} {key}", err, tolerances.get(key, TOL_EXACT), N_STATES)
    print(f"[dm_control] {name}: {ncontact} contacts over {N_STATES} states")
    for key, err in worst.items():
        assert err <= tolerances.get(key, TOL_EXACT), f"{name}: {key} off MuJoCo by {err:.3e}"


def _gentle_states(mj: mujoco.MjModel, n: int, seed: int):
    """random_states with the hinges and slides moved only a tenth as far from qpos0 and the
    ball joints at qpos0 (a
    random pose of a whole model can start deep in its joint limits, where MuJoCo itself
    meets a bad acceleration within a few steps, as the fish does) and slow velocities."""
    qpos, qvel, ctrl = random_states(mj, n, seed=seed, vel=0.5)
    for j in range(mj.njnt):
        a = mj.jnt_qposadr[j]
        if mj.jnt_type[j] in (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE)):
            qpos[:, a] = mj.qpos0[a] + 0.1 * (qpos[:, a] - mj.qpos0[a])
        elif mj.jnt_type[j] == int(mujoco.mjtJoint.mjJNT_BALL):
            qpos[:, a : a + 4] = mj.qpos0[a : a + 4]
    return qpos, qvel, ctrl


@pytest.mark.parametrize("name", _models())
def test_trajectories_match_mujoco(name):
    model, mj = _pair(name)
    qpos, qvel, ctrl = _gentle_states(mj, 4, seed=7)
    # on_bad="reset": a row whose acceleration goes bad is reset and counted, as mj_step does
    # (the fish in water of density 5000 does that from some of these states, in MuJoCo too)
    sim = engine.Simulator(model, batch=4, on_bad="reset")
    sim.data.qpos[:], sim.data.qvel[:], sim.data.ctrl[:] = qpos, qvel, ctrl
    datas = []
    for i in range(4):
        d = mujoco.MjData(mj)
        d.qpos[:], d.qvel[:], d.ctrl[:] = qpos[i], qvel[i], ctrl[i]
        datas.append(d)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PhysicsWarning)
        sim.step(STEPS)
    worst = 0.0
    for i, d in enumerate(datas):
        mujoco.mj_step(mj, d, STEPS)
        state = (sim.data.qpos[i], sim.data.qvel[i], sim.data.act[i])
        worst = max(worst, *(rel_err(a, b) for a, b in zip(state, (d.qpos, d.qvel, d.act), strict=True)))
    resets = sum(int(d.warning[mujoco.mjtWarning.mjWARN_BADQACC].number) for d in datas)
    ours = int(sim.data.warning[:, engine.types.WARN_BADQACC].sum())
    tol = CONVEX_TOL.get(name, {}).get("trajectory", TOL_TRAJ)
    report(f"dm_control {name} {STEPS}-step trajectories (qpos, qvel, act)", worst, tol, 4)
    print(f"[dm_control] {name}: bad-acceleration resets, ours {ours}, MuJoCo {resets}")
    assert worst <= tol
    assert ours == resets and (len(caught) > 0) == (ours > 0)


def test_dog_skin_changes_no_physics():
    """MuJoCo's <skin> is a mesh it deforms with the bones' poses to draw (mjv_updateScene),
    with no part in the physics: dog.xml as shipped and with its skin deleted (MjSpec) step
    bit for bit alike in MuJoCo (qpos, qvel, act, qacc, efc_force, sensordata over 100 steps
    from 4 gentle states, with controls). The engine accepts a skin and copies none of it
    (no Model field names one); robogym draws frames with MuJoCo's renderer on an MjModel
    of the same file, which draws the skin."""
    spec = mujoco.MjSpec.from_file(str(SUITE / "dog.xml"))
    assert len(spec.skins) == 1
    spec.delete(spec.skins[0])
    bare = spec.compile()
    shipped = mujoco.MjModel.from_xml_path(str(SUITE / "dog.xml"))
    assert shipped.nskin == 1 and bare.nskin == 0
    assert not [f for f in engine.Model._fields if "skin" in f]
    qpos, qvel, ctrl = _gentle_states(shipped, 4, seed=3)
    compared = 0
    for i in range(4):
        datas = [mujoco.MjData(m) for m in (shipped, bare)]
        for d in datas:
            d.qpos[:], d.qvel[:], d.ctrl[:] = qpos[i], qvel[i], ctrl[i]
        for _ in range(100):
            for m, d in zip((shipped, bare), datas, strict=True):
                mujoco.mj_step(m, d)
            a, b = datas
            for field in ("qpos", "qvel", "act", "qacc", "sensordata"):
                np.testing.assert_array_equal(getattr(a, field), getattr(b, field), err_msg=field)
            assert a.nefc == b.nefc
            np.testing.assert_array_equal(a.efc_force[: a.nefc], b.efc_force[: b.nefc])
            compared += 1
    assert compared == 400
