"""Oracle tests of mesh geoms (engine/collision_mesh.py; the convex collider and multi-contact
search of engine/collision_convex.py and engine/collision_multi.py): MuJoCo 4.0.0 collides a
mesh as its convex hull, with its plane-convex collider against a plane and GJK/EPA plus the
multi-contact search (mesh polygons as faces) against everything else.

`assets/tests/collision_mesh.xml`: a tetrahedron and an octahedron (searched vertex by
vertex), a hexagonal prism and a dodecahedron (hill-climbed on the hull graph), and a
non-convex vertex set whose hull is a cube (with a margin and a gap), free-floating, against
a floor, a sphere, a capsule, an ellipsoid, a cylinder, a box and each other.

1. Random poses at three spreads (deep, shallow, within margin, apart) and resting poses (a
   polygon or box face laid on a polygon, a face or the floor, tilted 0-10 degrees across
   the 5.1 degree alignment tolerance, 8 mm in to 6 mm apart), on MuJoCo's own geom poses,
   with `ccd_tolerance` 1e-9 (60 iterations): count, order and geoms exactly mj_collision's,
   dist, pos and frame to 1e-9 (the errors are rounding, ~1e-12), but that, as in
   test_collision_multi, the two contacts of an edge clipped at one end may come in the other
   order after EPA (a choice between crossing points 1e-17 apart).
2. The same random poses at MuJoCo's default ccd_tolerance (1e-6): GJK and EPA stop within
   it; where a hull has coplanar vertices (the dodecahedron's pentagons) EPA's support along
   a face normal is a near tie that the last bits of EPA's direction decide, and our EPA
   reproduces the binary's to ~1e-12, not bit for bit (test_collision_convex). So a few
   pairs (printed; at most 2 %) end on another EPA face: their contacts differ by less than
   10 ccd_tolerance when the counts agree, or the multi-contact search finds another count.
   Every other pair matches to 1e-9.
3. Through our own kinematics: our contacts against MuJoCo's collider given our geom poses.
4. 200-step trajectories of the bodies dropped in stacks of two onto the floor and onto each
   other, with gravity and MuJoCo's default collider options, against mj_step: qpos to 3e-6
   and qvel to 1e-5 (relative), contact counts equal. These trajectories genuinely drift:
   at the default ccd_tolerance our EPA ends up to ~6e-7 from the binary's (2.), and that
   enters every step (worst seen qpos 2.9e-7, qvel 7.0e-7).
"""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from robodyn import engine
from robodyn.engine.types import GEOM_BOX, GEOM_CAPSULE, GEOM_CYLINDER, GEOM_MESH, GEOM_PLANE
from tests.engine import test_collision_multi as multi
from tests.engine.test_collision import random_poses
from tests.engine.test_collision_multi import _err, _mat_to_quat, _quat_to_mat
from tests.helpers import ASSETS, rel_err, report

MESHES = ASSETS / "tests" / "collision_mesh.xml"
TOL = 1e-9  # contact dist (m), pos (m), frame
N_POSES = 300  # random poses per spread
N_RESTING = 500
TIGHT = '<option gravity="0 0 0" ccd_tolerance="1e-9" ccd_iterations="60"/>'
PAIR_NAMES = {
    (GEOM_PLANE, GEOM_MESH): "plane:mesh",
    (2, GEOM_MESH): "sphere:mesh",
    (GEOM_CAPSULE, GEOM_MESH): "capsule:mesh",
    (4, GEOM_MESH): "ellipsoid:mesh",
    (GEOM_CYLINDER, GEOM_MESH): "cylinder:mesh",
    (GEOM_BOX, GEOM_MESH): "box:mesh",
    (GEOM_MESH, GEOM_MESH): "mesh:mesh",
}


def _xml(tight: bool) -> str:
    text = MESHES.read_text()
    return text.replace('<option gravity="0 0 0"/>', TIGHT) if tight else text


class PairResult:
    """Contacts compared pair by pair (a geom pair's contacts in MuJoCo's order): per pair
    type the number of pairs, their contact counts and the worst error; pairs that differ
    are kept in `diverged` (label, state, geoms, counts, error)."""

    def __init__(self, label: str):
        self.label = label
        self.worst: dict[str, float] = {}
        self.npairs: dict[str, int] = {}
        self.sizes: dict[str, dict[int, int]] = {}
        self.diverged: list[tuple] = []
        self.nstate = 0
        self.swapped = 0

    def add(self, mj: mujoco.MjModel, ref: dict, ours: dict, state: int) -> None:
        self.nstate += 1
        order_ref = [tuple(g) for g in ref["geom"].tolist()]
        order_ours = [tuple(g) for g in ours["geom"].tolist()]
        # the pairs come in the same order (a pair's contacts are contiguous)
        assert list(dict.fromkeys(order_ref)) == list(dict.fromkeys(order_ours)), (
            f"{self.label} state {state}: pairs {order_ours} vs MuJoCo {order_ref}"
        )
        for g in dict.fromkeys(order_ref):
            a = [k for k, h in enumerate(order_ref) if h == g]
            b = [k for k, h in enumerate(order_ours) if h == g]
            name = PAIR_NAMES[(int(mj.geom_type[g[0]]), int(mj.geom_type[g[1]]))]
            self.npairs[name] = self.npairs.get(name, 0) + 1
            sizes = self.sizes.setdefault(name, {})
            sizes[len(a)] = sizes.get(len(a), 0) + 1
            err = _err(ours, ref, b, a) if len(a) == len(b) else np.inf
            if err > TOL and len(a) == len(b) == 2 and _err(ours, ref, b, a[::-1]) <= TOL:
                self.swapped += 1  # see test_collision_multi.Result
                err = _err(ours, ref, b, a[::-1])
            if err > TOL:
                self.diverged.append((state, g, len(a), len(b), err))
                continue
            self.worst[name] = max(self.worst.get(name, 0.0), err)

    def report(self) -> None:
        for name in sorted(self.npairs):
            report(f"{self.label} {name} dist/pos/frame", self.worst.get(name, 0.0), TOL, self.npairs[name])
            print(f"[mesh] {self.label} {name}: touching pairs by contact count {self.sizes[name]}")
        print(
            f"[mesh] {self.label}: {self.swapped} pairs of two in the other order, "
            f"{len(self.diverged)} pairs off by more than {TOL}: {self.diverged[:8]}"
        )


def compare(label: str, xml: str, qpos: np.ndarray, poses: str = "mujoco") -> PairResult:
    """Our collision stage against mj_collision at each qpos, both on MuJoCo's geom poses or
    both on ours (test_collision_multi.compare, contacts counted per pair type)."""
    return multi.compare(label, xml, mujoco.MjModel.from_xml_string(xml), qpos, poses, kind=PairResult)


def _check_all_pair_types(result: PairResult, least: int, swaps: int) -> None:
    """Every pair type touched at least `least` times, and at most `swaps` pairs of two in the
    other order (after EPA, see test_collision_multi.Result; the caller states the count seen)."""
    twos = sum(s.get(2, 0) for s in result.sizes.values())
    print(f"[mesh] {result.label}: {result.swapped} of {twos} pairs of two in the other order (bar {swaps})")
    assert result.swapped <= swaps, (result.swapped, twos)
    for name in PAIR_NAMES.values():
        assert result.npairs.get(name, 0) >= least, f"{name}: {result.npairs.get(name, 0)} pairs"


# ---- resting poses ----------------------------------------------------------------------------------


def _hull(mj: mujoco.MjModel, g: int) -> np.ndarray:
    k = mj.geom_dataid[g]
    return np.asarray(mj.mesh_vert[mj.mesh_vertadr[k] : mj.mesh_vertadr[k] + mj.mesh_vertnum[k]], dtype=float)


def _extent(mj: mujoco.MjModel, g: int, rot: np.ndarray, u: np.ndarray) -> float:
    """How far geom g (orientation rot) reaches from its centre along the unit direction u."""
    loc = rot.T @ u
    size = mj.geom_size[g]
    t = mj.geom_type[g]
    if t == GEOM_MESH:
        return float(np.max(_hull(mj, g) @ loc))
    if t == GEOM_BOX:
        return float(np.abs(loc) @ size)
    if t == GEOM_CYLINDER:
        return float(size[0] * np.hypot(loc[0], loc[1]) + size[1] * abs(loc[2]))
    if t == GEOM_CAPSULE:
        return float(size[0] + size[1] * abs(loc[2]))
    if t == 4:  # ellipsoid
        return float(np.linalg.norm(size * loc))
    return float(size[0])  # sphere


def _face_normals(mj: mujoco.MjModel, g: int) -> np.ndarray:
    """Outward face normals in the geom frame: a mesh's polygons, else the 6 axis directions."""
    if mj.geom_type[g] == GEOM_MESH:
        k = mj.geom_dataid[g]
        return np.asarray(mj.mesh_polynormal[mj.mesh_polyadr[k] : mj.mesh_polyadr[k] + mj.mesh_polynum[k]])
    return np.vstack([np.eye(3), -np.eye(3)])


def _rotation_to(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A rotation taking unit vector a to unit vector b."""
    v = np.cross(a, b)
    c = float(a @ b)
    if np.linalg.norm(v) < 1e-12:
        if c > 0:
            return np.eye(3)
        p = np.array([1.0, 0.0, 0.0]) if abs(a[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
        v = np.cross(a, p)
        v /= np.linalg.norm(v)
        return 2 * np.outer(v, v) - np.eye(3)
    k = np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])
    return np.eye(3) + k + k @ k / (1 + c)


def _axis_angle(axis: np.ndarray, angle: float) -> np.ndarray:
    q = np.zeros(4)
    mujoco.mju_axisAngle2Quat(q, axis / np.linalg.norm(axis), angle)
    return _quat_to_mat(q)


def _place(mj: mujoco.MjModel, qpos: np.ndarray, g: int, pos: np.ndarray, rot: np.ndarray) -> None:
    """Set geom g's free body so that the geom sits at (pos, rot) (the mesh geoms are offset
    from their bodies by the compiler's centring)."""
    grot = _quat_to_mat(mj.geom_quat[g])
    brot = rot @ grot.T
    bpos = pos - brot @ mj.geom_pos[g]
    adr = mj.jnt_qposadr[mj.body_jntadr[mj.geom_bodyid[g]]]
    qpos[adr : adr + 3] = bpos
    qpos[adr + 3 : adr + 7] = _mat_to_quat(brot)


def resting_poses(mj: mujoco.MjModel, n: int, seed: int) -> np.ndarray:
    """n qpos, each laying geom b on geom a (a mesh on anything, or anything on a mesh, or a
    mesh on the floor): a face of b (a polygon or a box or cylinder face) turned against a
    face of a (or the floor), spun about it at random, tilted by up to 3 or 10 degrees,
    offset sideways by up to 3 cm, at the sum of the two extents minus a depth in [-6, 8]
    mm; the other bodies parked far apart."""
    rng = np.random.default_rng(seed)
    free = [g for g in range(mj.ngeom) if mj.body_jntnum[mj.geom_bodyid[g]] == 1]
    meshes = [g for g in free if mj.geom_type[g] == GEOM_MESH]
    floor = [g for g in range(mj.ngeom) if mj.geom_type[g] == GEOM_PLANE][0]
    qpos = np.tile(mj.qpos0, (n, 1))
    for i in range(n):
        for k, g in enumerate(free):
            _place(mj, qpos[i], g, np.array([0.5 * k, 3.0, 3.0]), np.eye(3))
        b = meshes[rng.integers(len(meshes))]
        a = [x for x in [floor, *free] if x != b][rng.integers(len(free))]
        tilt = 3.0 if rng.uniform() < 0.5 else 10.0
        if a == floor:
            rot_a, pos_a, u, reach_a = np.eye(3), np.zeros(3), np.array([0.0, 0.0, 1.0]), 0.0
        else:
            rot_a = _quat_to_mat(_unit(rng.normal(size=4)))
            na = _face_normals(mj, a)
            u = rot_a @ na[rng.integers(len(na))]
            pos_a = np.array([0.0, 0.0, 1.0])
            reach_a = _extent(mj, a, rot_a, u)
        nb = _face_normals(mj, b)
        rot_b = _rotation_to(nb[rng.integers(len(nb))], -u)
        rot_b = _axis_angle(u, rng.uniform(0, 2 * np.pi)) @ rot_b
        rot_b = _axis_angle(_unit(rng.normal(size=3)), np.radians(rng.uniform(0.0, tilt))) @ rot_b
        side = rng.normal(size=3)
        side -= (side @ u) * u
        side *= rng.uniform(0.0, 0.03) / np.linalg.norm(side)
        reach = reach_a + _extent(mj, b, rot_b, -u)
        pos_b = pos_a + u * (reach - rng.uniform(-0.006, 0.008)) + side
        if a != floor:
            _place(mj, qpos[i], a, pos_a, rot_a)
        _place(mj, qpos[i], b, pos_b, rot_b)
    return qpos


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


# ---- oracle tests -------------------------------------------------------------------------------


@pytest.mark.parametrize(("spread", "height", "seed"), [(0.08, (0.0, 0.1), 0), (0.12, (0.02, 0.15), 1)])
def test_random_poses_match_mujoco(spread, height, seed):
    """Deep, shallow, within-margin and separated poses (the floor in reach), ccd_tolerance
    1e-9, on MuJoCo's geom poses: every pair's contacts equal mj_collision's (count, order,
    geoms exactly; dist, pos, frame to 1e-9)."""
    xml = _xml(tight=True)
    mj = mujoco.MjModel.from_xml_string(xml)
    qpos = random_poses(mj, N_POSES, seed=seed, spread=spread, height=height)
    result = compare(f"collision_mesh spread {spread}", xml, qpos)
    assert result.nstate == N_POSES
    assert not result.diverged, result.diverged[:4]
    _check_all_pair_types(result, 100, swaps=10)  # seen 5 of 1,217 and 2 of 648 pairs of two
    assert sum(result.sizes["mesh:mesh"].get(k, 0) for k in (2, 3, 4)) >= 20, result.sizes["mesh:mesh"]
    assert result.sizes["plane:mesh"].get(4, 0) >= 10, result.sizes["plane:mesh"]


@pytest.mark.parametrize("seed", [0, 1])
def test_resting_poses_match_mujoco(seed):
    """Faces laid on faces and on the floor, tilted across the alignment tolerance: the
    multi-contact search on mesh polygons and the plane-mesh polygon contacts equal
    mj_collision's (count, order, geoms exactly; dist, pos, frame to 1e-9)."""
    xml = _xml(tight=True)
    mj = mujoco.MjModel.from_xml_string(xml)
    qpos = resting_poses(mj, N_RESTING, seed)
    result = compare(f"collision_mesh resting {seed}", xml, qpos)
    assert not result.diverged, result.diverged[:4]
    _check_all_pair_types(result, 10, swaps=3)  # seen 1 of 81 and 0 of 69 pairs of two
    multi = sum(
        n for name, s in result.sizes.items() for k, n in s.items() if k >= 2 and name != "plane:mesh"
    )
    assert multi >= 100, result.sizes
    assert result.sizes["plane:mesh"].get(4, 0) >= 10, result.sizes["plane:mesh"]


def test_default_tolerance_matches_mujoco():
    """MuJoCo's default ccd_tolerance (1e-6): every pair matches to 1e-9 but at most 2 %,
    which end on another EPA face (module docstring, 2): those differ by less than 10
    ccd_tolerance, or in their count."""
    xml = _xml(tight=False)
    mj = mujoco.MjModel.from_xml_string(xml)
    qpos = np.concatenate(
        [
            random_poses(mj, N_POSES, seed=5, spread=0.08, height=(0.0, 0.1)),
            resting_poses(mj, N_RESTING, seed=5),
        ]
    )
    result = compare("collision_mesh default ccd_tolerance", xml, qpos)
    total = sum(result.npairs.values())
    same_count = [x for x in result.diverged if x[2] == x[3]]
    print(
        f"[mesh] default ccd_tolerance: {len(result.diverged)} of {total} pairs end on another EPA face, "
        f"{len(result.diverged) - len(same_count)} of them with another count"
    )
    assert len(result.diverged) <= 0.02 * total
    twos = sum(s.get(2, 0) for s in result.sizes.values())
    print(f"[mesh] default ccd_tolerance: {result.swapped} of {twos} pairs of two in the other order")
    assert result.swapped <= 30, (result.swapped, twos)  # seen 15 of 1,328
    assert all(x[4] < 10 * mj.opt.ccd_tolerance for x in same_count), same_count


def test_pipeline_matches_mujoco():
    """Random and resting poses through our own kinematics: our contacts equal MuJoCo's
    collider's on the same geom poses (ours agree with MuJoCo's to ~2e-16)."""
    xml = _xml(tight=True)
    mj = mujoco.MjModel.from_xml_string(xml)
    qpos = np.concatenate(
        [
            random_poses(mj, N_POSES, seed=3, spread=0.1, height=(0.0, 0.12)),
            resting_poses(mj, N_RESTING, seed=3),
        ]
    )
    result = compare("collision_mesh through our kinematics", xml, qpos, poses="ours")
    assert not result.diverged, result.diverged[:4]
    _check_all_pair_types(result, 50, swaps=25)  # seen 13 of 912 pairs of two


# ---- trajectories ----------------------------------------------------------------------------------

N_TRAJ = 8
STEPS = 200
# Relative to max(1, |x|). MuJoCo's default ccd_tolerance (1e-6) lets EPA stop up to ~6e-7
# from the binary's answer (test_default_tolerance_matches_mujoco), and that enters each step,
# so these trajectories drift far above rounding: worst seen qpos 2.9e-7, qvel 7.0e-7; the
# bars are about 10x and 14x those.
TOL_TRAJ = 3e-6  # qpos
TOL_TRAJ_VEL = 1e-5  # qvel


def drop_poses(mj: mujoco.MjModel, n: int, seed: int) -> np.ndarray:
    """n qpos with the free bodies in stacks of two 15 cm apart (the tetrahedron over the
    prism, the octahedron over the dodecahedron, the sphere over the dented cube, the
    capsule over the box, the ellipsoid over the cylinder), the lower 7-10 cm, the upper
    20-25 cm above the floor, offset up to 2 cm sideways, at random orientations."""
    rng = np.random.default_rng(seed)
    stacks = [
        ("tet", "prism"),
        ("oct", "dodeca"),
        ("sphere", "dented"),
        ("capsule", "box"),
        ("ellipsoid", "cylinder"),
    ]
    qpos = np.tile(mj.qpos0, (n, 1))
    for i in range(n):
        for k, (upper, lower) in enumerate(stacks):
            for name, z in ((lower, (0.07, 0.1)), (upper, (0.2, 0.25))):
                g = mj.geom(name).id
                pos = np.array([0.15 * k, 0.0, 0.0]) + np.append(rng.uniform(-0.02, 0.02, 2), rng.uniform(*z))
                _place(mj, qpos[i], g, pos, _quat_to_mat(_unit(rng.normal(size=4))))
    return qpos


def test_dropped_meshes_trajectories():
    """The meshes (and the primitives) dropped in stacks of two onto the floor and onto each
    other under gravity, 200 steps against mj_step, MuJoCo's default collider options."""
    xml = MESHES.read_text().replace('<option gravity="0 0 0"/>', '<option timestep="0.002"/>')
    mj = mujoco.MjModel.from_xml_string(xml)
    qpos = drop_poses(mj, N_TRAJ, seed=7)
    sim = engine.Simulator(engine.load_mjcf(xml), batch=N_TRAJ)
    sim.data.qpos[:] = qpos
    datas = []
    for i in range(N_TRAJ):
        d = mujoco.MjData(mj)
        d.qpos[:] = qpos[i]
        datas.append(d)
    worst_q = worst_v = 0.0
    ncon_equal = mesh_mesh = on_floor = 0
    for _ in range(STEPS):
        sim.step()
        for i, d in enumerate(datas):
            mujoco.mj_step(mj, d)
            worst_q = max(worst_q, rel_err(sim.data.qpos[i], d.qpos))
            worst_v = max(worst_v, rel_err(sim.data.qvel[i], d.qvel))
            ncon_equal += int(sim.data.ncon[i]) == d.ncon
            assert int(sim.data.ncon[i]) == d.ncon, (i, int(sim.data.ncon[i]), d.ncon)
            types = [tuple(mj.geom_type[d.contact.geom[c]]) for c in range(d.ncon)]
            mesh_mesh += (GEOM_MESH, GEOM_MESH) in types
            on_floor += (GEOM_PLANE, GEOM_MESH) in types
    report(f"dropped meshes {STEPS}-step trajectories qpos", worst_q, TOL_TRAJ, N_TRAJ)
    report(f"dropped meshes {STEPS}-step trajectories qvel", worst_v, TOL_TRAJ_VEL, N_TRAJ)
    print(
        f"[mesh] trajectories: contact counts equal in {ncon_equal} of {N_TRAJ * STEPS} row-steps, "
        f"mesh on mesh in {mesh_mesh}, mesh on the floor in {on_floor}"
    )
    assert on_floor >= N_TRAJ * STEPS // 2 and mesh_mesh >= 50, (on_floor, mesh_mesh)
    assert worst_q <= TOL_TRAJ
    assert worst_v <= TOL_TRAJ_VEL
