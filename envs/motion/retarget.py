"""Retargeting: a robot's joint trajectory from a motion capture, by matching points.

Rotations are not copied from the capture (they mean something only against a rest pose the
two skeletons do not share). Instead sample points s_bk sit on the robot's bodies, the
capture says where each should be (its target t_k), and every frame solves

    E(q) = sum_k w_k |T_b(q) s_bk - t_k|^2                      (points, m^2)
           + kappa sum_j beta(q_j)^2                              (joint limits)
           + sum_i lambda_i (q (-) q_prev)_i^2                       (posture)

over the free base and every joint, by Gauss-Newton with a Levenberg-Marquardt shift on the
engine's point Jacobians (d(T_b s)/dq = jacp of the point), warm-started at the previous
frame's answer. One point on a body fixes its position, two its direction, three its whole
orientation: a body's samples are chosen for what its orientation needs.

Joint limits are a barrier, not a clamp (a clamped coordinate drops out of the solve and
the pose flips between the answers on either side of the wall): for a limited hinge at
distance d from its nearer limit, beta = margin / d - 1 inside `margin` and 0 outside, which
grows without bound at the limit; each step is shortened so that no coordinate covers more
than `FRACTION` of its distance to a limit, so no iterate ever leaves the range. The
posture term is a tie-breaker with a small weight lambda on every dof: it picks, of the poses
the points leave free (the twist of a straight leg), the one nearest the previous frame. A
table may hold a joint the points barely see with a larger weight of its own (`Table.hold`:
the humanoid's ankle rolls, which the two points on each foot see only through the ball's
5 cm below the roll axis, and which otherwise flip from one limit to the other between
frames when the capture's foot turns out).

Targets (`targets`): the scale s is the robot's total length over the capture's total
length, summed over the bones (parent -> child sample pairs) the table links, each capture
length the median over the frames (bone lengths do not change with the pose, so neither
does s; a height would). The tree target walks the table's bones from the root,
t_root = s c_root, t_child = t_parent + L_bone u, with u the capture's bone direction and
L_bone the robot's bone length: every target is then reachable by the robot's own
proportions. The position target is s c. They are blended,
t = (1 - position_pull) tree + position_pull (s c): 0 keeps the robot's proportions, 1 puts
every point where the (scaled) performer's was.
"""

from __future__ import annotations

import os
import warnings
import xml.etree.ElementTree as ET
from dataclasses import dataclass

import mujoco
import numpy as np

from robodyn import engine
from robodyn.engine.ik import quat_mul
from robodyn.envs.motion.capture import Capture
from robogym.errors import InvalidArgumentError

FRACTION = 0.5  # the most of its distance to a limit a coordinate may cover in one step


@dataclass(frozen=True)
class Sample:
    """A robot point and the capture joint it follows: `point` (3,) in `body`'s frame; the
    bone from `parent` (another sample's joint; None for the root) to this one."""

    joint: str
    body: str
    point: tuple[float, float, float]
    parent: str | None
    weight: float = 1.0


@dataclass(frozen=True)
class Table:
    """The correspondence of a robot model and a capture skeleton: samples in tree order
    (every parent before its children; exactly one root)."""

    model: str  # an MJCF path
    samples: tuple[Sample, ...]
    hold: tuple[tuple[str, float], ...] = ()  # (joint, posture weight added to lambda)

    def __post_init__(self):
        seen: set[str] = set()
        roots = [s.joint for s in self.samples if s.parent is None]
        if len(roots) != 1:
            raise InvalidArgumentError(f"a correspondence table needs one root, got {roots}")
        for s in self.samples:
            if s.joint in seen:
                raise InvalidArgumentError(f"capture joint {s.joint!r} appears twice in the table")
            if s.parent is not None and s.parent not in seen:
                raise InvalidArgumentError(f"sample {s.joint!r}: its parent {s.parent!r} must come before it")
            seen.add(s.joint)

    def index(self) -> dict[str, int]:
        """Each capture joint's position among the samples."""
        return {s.joint: k for k, s in enumerate(self.samples)}

    def without(self, joints) -> Table:
        """The table less the samples of `joints` (their children hang from their parents)."""
        drop = set(joints)
        parent = {s.joint: s.parent for s in self.samples}

        def up(j):
            while j in drop:
                j = parent[j]
            return j

        kept = tuple(
            Sample(s.joint, s.body, s.point, None if s.parent is None else up(s.parent), s.weight)
            for s in self.samples
            if s.joint not in drop
        )
        return Table(self.model, kept, self.hold)


def kinematic_mjcf(path: str) -> str:
    """The MJCF text of the model at `path` for kinematics alone: its mesh, texture and asset
    folders made absolute (so the text loads from anywhere), what only drives it removed
    (<actuator>, <sensor>, joints' actuatorfrcrange and actuatorfrclimited, which the engine
    would refuse where it does not simulate them), and contacts and constraints off."""
    root = ET.parse(path).getroot()
    folder = os.path.dirname(os.path.abspath(path))
    for compiler in root.iter("compiler"):
        for key in ("meshdir", "texturedir", "assetdir"):
            if compiler.get(key) is not None:
                compiler.set(key, os.path.join(folder, compiler.get(key)))
        if compiler.get("meshdir") is None and compiler.get("assetdir") is None:
            compiler.set("meshdir", folder)
    for tag in ("actuator", "sensor"):
        for element in root.findall(tag):
            root.remove(element)
    for element in root.iter():
        for key in ("actuatorfrcrange", "actuatorfrclimited"):
            element.attrib.pop(key, None)
    return engine.without_contacts(ET.tostring(root, encoding="unicode"))


class Robot:
    """The table's model on the engine (kinematics only: kinematic_mjcf) with B rows: sample
    positions and their Jacobians at any qpos."""

    def __init__(self, table: Table, batch: int = 1):
        text = kinematic_mjcf(table.model)
        self.mj = mujoco.MjModel.from_xml_string(text)
        self.sim = engine.Simulator(engine.load_mjcf(text), batch=batch, nthread=1)
        m = self.mj
        if m.njnt == 0 or m.jnt_type[0] != mujoco.mjtJoint.mjJNT_FREE:
            raise InvalidArgumentError("retargeting needs a robot whose first joint is a free base")
        self.bodies = np.array([self._id(mujoco.mjtObj.mjOBJ_BODY, s.body) for s in table.samples])
        self.points = np.array([s.point for s in table.samples], dtype=np.float64)
        self.weights = np.array([s.weight for s in table.samples], dtype=np.float64)
        hinge = (m.jnt_type == mujoco.mjtJoint.mjJNT_HINGE) & (m.jnt_limited == 1)
        self.limited_qpos = m.jnt_qposadr[hinge]
        self.limited_dof = m.jnt_dofadr[hinge]
        self.range = m.jnt_range[hinge]
        self.nq, self.nv = m.nq, m.nv
        self.hold = np.zeros(m.nv)  # the table's extra posture weight per dof
        for joint, weight in table.hold:
            self.hold[m.jnt_dofadr[self._id(mujoco.mjtObj.mjOBJ_JOINT, joint)]] += weight

    def _id(self, kind, name: str) -> int:
        i = mujoco.mj_name2id(self.mj, kind, name)
        if i < 0:
            what = "body" if kind == mujoco.mjtObj.mjOBJ_BODY else "joint"
            raise InvalidArgumentError(f"the robot model has no {what} {name!r}")
        return i

    def positions(self, qpos: np.ndarray) -> np.ndarray:
        """(B, K, 3) world positions of the samples at qpos (B, nq): x_b + R_b s."""
        d = self.sim.data
        d.qpos[:] = qpos
        d.qvel[:] = 0.0
        self.sim.forward()
        R = d.xmat[:, self.bodies].reshape(len(qpos), -1, 3, 3)
        return d.xpos[:, self.bodies] + np.einsum("bkij,kj->bki", R, self.points)

    def jacobians(self, p: np.ndarray) -> np.ndarray:
        """(B, 3K, nv) the point Jacobians of the samples at their positions p (B, K, 3), at
        the last positions() call."""
        J = [self.sim.jacobian(int(b), point=p[:, k])[0] for k, b in enumerate(self.bodies)]
        return np.concatenate(J, axis=1)

    def rest(self, rows: int, margin: float = 0.0) -> np.ndarray:
        """(rows, nq) the model's qpos0, every limited hinge moved `margin` inside its range
        (where the range allows; else to its middle)."""
        q = np.repeat(self.mj.qpos0[None], rows, axis=0)
        lo, hi = self.range[:, 0] + margin, self.range[:, 1] - margin
        mid = 0.5 * (self.range[:, 0] + self.range[:, 1])
        x = np.clip(q[:, self.limited_qpos], lo, hi)
        q[:, self.limited_qpos] = np.where(lo <= hi, x, mid)
        return q


# --- targets ------------------------------------------------------------------------------------
def bone_lengths(robot: Robot, table: Table) -> np.ndarray:
    """(K,) each sample's distance from its parent's at the robot's rest pose (0 for the
    root); pose-invariant when the two samples share a body or the child's body hangs from
    the parent's at the child's sample."""
    p = robot.positions(robot.rest(robot.sim.batch))[0]
    index = table.index()
    return np.array(
        [
            0.0 if s.parent is None else np.linalg.norm(p[k] - p[index[s.parent]])
            for k, s in enumerate(table.samples)
        ]
    )


def capture_points(capture: Capture, table: Table) -> np.ndarray:
    """(T, K, 3) the capture's positions of the table's joints, in table order."""
    missing = [s.joint for s in table.samples if s.joint not in capture.index]
    if missing:
        raise InvalidArgumentError(
            f"the capture has no joint named {', '.join(missing)} (the table needs them)"
        )
    return capture.positions[:, [capture.index[s.joint] for s in table.samples]]


def measure_scale(table: Table, c: np.ndarray, lengths: np.ndarray) -> float:
    """s = sum of the robot's bone lengths / sum of the capture's (each the median over the
    frames of c (T, K, 3)), over the table's bones."""
    index = table.index()
    capture_total = 0.0
    for k, s in enumerate(table.samples):
        if s.parent is not None:
            capture_total += np.median(np.linalg.norm(c[:, k] - c[:, index[s.parent]], axis=1))
    if capture_total <= 0:
        raise InvalidArgumentError("the capture's linked bones have no length: cannot measure a scale")
    return float(lengths.sum() / capture_total)


def targets(
    table: Table, c: np.ndarray, lengths: np.ndarray, scale: float, position_pull: float
) -> np.ndarray:
    """(T, K, 3) t = (1 - position_pull) tree + position_pull s c (module docstring)."""
    index = table.index()
    tree = np.empty_like(c)
    for k, s in enumerate(table.samples):
        if s.parent is None:
            tree[:, k] = scale * c[:, k]
            continue
        j = index[s.parent]
        bone = c[:, k] - c[:, j]
        norm = np.linalg.norm(bone, axis=1, keepdims=True)
        # a zero-length capture bone (two joints at one place) has no direction: keep its scaled length
        u = np.where(norm > 0, bone / np.where(norm > 0, norm, 1.0), 0.0)
        tree[:, k] = tree[:, j] + lengths[k] * u
    return (1.0 - position_pull) * tree + position_pull * scale * c


# --- the per-frame solve --------------------------------------------------------------------------
@dataclass(frozen=True)
class Settings:
    """posture: lambda (m^2 per rad^2); barrier: kappa (m^2); margin: the barrier's reach
    (rad); tol: a frame stops when its largest step component is below it; max_iter: steps
    per frame (the first frame gets ten times as many).

    The posture term's bias on a pose the points determine is about lambda dq / sigma^2
    (dq the frame's motion, sigma^2 the points' weakest hold on it: about 2.5e-3 m^2 for a
    foot's roll, whose ball sits 5 cm off the roll axis), so the default 1e-9 leaves an
    exact capture exact (tests/envs/test_retarget.py); a larger lambda steadies what the
    points barely see (a foot's roll, a straight leg's twist) at the price of that bias."""

    posture: float = 1e-9
    barrier: float = 1e-3
    margin: float = 0.1
    tol: float = 1e-10
    max_iter: int = 30


def _limit_terms(robot: Robot, q: np.ndarray, st: Settings):
    """Barrier residuals (B, 2L) and their derivatives along each limited dof (B, 2L): for
    d = q - lo and hi - q, r = sqrt(kappa) (margin / d - 1) where d < margin."""
    x = q[:, robot.limited_qpos]
    d = np.concatenate([x - robot.range[:, 0], robot.range[:, 1] - x], axis=1)
    sign = np.concatenate([np.ones_like(x), -np.ones_like(x)], axis=1)
    inside = d < st.margin
    k = np.sqrt(st.barrier)
    safe = np.maximum(d, 1e-300)
    r = np.where(inside, k * (st.margin / safe - 1.0), 0.0)
    dr = np.where(inside, -k * st.margin / (safe * safe) * sign, 0.0)
    return r, dr


def _energy(robot, q, t, q_prev, st, lam) -> np.ndarray:
    e = robot.positions(q) - t
    r, _ = _limit_terms(robot, q, st)
    dp = robot.sim.differentiate_pos(q_prev, q, 1.0)
    return (
        np.einsum("k,bk->b", robot.weights, np.sum(e * e, axis=2))
        + np.sum(r * r, axis=1)
        + np.sum(lam * dp * dp, axis=1)
    )


def _max_step(robot: Robot, q: np.ndarray, dq: np.ndarray) -> np.ndarray:
    """(B,) the largest alpha <= 1 with which no limited coordinate covers more than FRACTION
    of its distance to the limit it moves towards."""
    x = q[:, robot.limited_qpos]
    v = dq[:, robot.limited_dof]
    room = np.where(v < 0, x - robot.range[:, 0], robot.range[:, 1] - x)
    with np.errstate(divide="ignore"):
        a = np.where(v != 0, FRACTION * room / np.abs(v), np.inf)
    return np.minimum(1.0, a.min(axis=1, initial=np.inf))


def solve_frame(
    robot: Robot,
    t: np.ndarray,
    q: np.ndarray,
    q_prev: np.ndarray,
    st: Settings,
    max_iter: int,
    hold: bool = True,
):
    """Minimise E over qpos for B rows from q (B, nq), targets t (B, K, 3), the posture term
    about q_prev (B, nq) with the table's held joints (`hold`; the first frame, with no frame
    before it, has none). Returns the qpos (B, nq) and the iterations taken (B,)."""
    lam = st.posture + (robot.hold if hold else np.zeros(robot.nv))
    B = len(q)
    w = np.repeat(robot.weights, 3)
    mu = np.full(B, 1e-6)
    E = _energy(robot, q, t, q_prev, st, lam)
    its = np.zeros(B, dtype=np.int64)
    active = np.ones(B, dtype=bool)
    for _ in range(max_iter):
        if not active.any():
            break
        p = robot.positions(q)
        J = robot.jacobians(p)  # (B, 3K, nv)
        e = (p - t).reshape(B, -1)
        r, dr = _limit_terms(robot, q, st)
        dp = robot.sim.differentiate_pos(q_prev, q, 1.0)
        H = np.einsum("bki,k,bkj->bij", J, w, J) + np.diag(lam)
        g = np.einsum("bki,k,bk->bi", J, w, e) + lam * dp
        dofs = np.concatenate([robot.limited_dof, robot.limited_dof])
        Hd = np.zeros((B, robot.nv))
        np.add.at(Hd.T, dofs, (dr * dr).T)
        gd = np.zeros((B, robot.nv))
        np.add.at(gd.T, dofs, (dr * r).T)
        H[:, np.arange(robot.nv), np.arange(robot.nv)] += Hd
        g += gd
        H[:, np.arange(robot.nv), np.arange(robot.nv)] += mu[:, None]
        dq = -np.linalg.solve(H, g[:, :, None])[:, :, 0]
        dq *= _max_step(robot, q, dq)[:, None]
        q_new = robot.sim.integrate_pos(q, dq, 1.0)
        E_new = _energy(robot, q_new, t, q_prev, st, lam)
        better = active & (E_new <= E)
        q[better], E[better] = q_new[better], E_new[better]
        mu = np.where(better, np.maximum(mu / 10, 1e-12), mu * 10)
        its[active] += 1
        small = np.max(np.abs(dq), axis=1) <= st.tol
        active &= ~(small | (mu > 1e6))
    return q, its


@dataclass
class Result:
    """qpos: (B, T, nq); targets: (B, T, K, 3); residual: (B, T, K) |point - target| (m);
    scale: (B,); iterations: (B, T); dropped: the capture joints dropped (missed at the
    first frame); table: the table used."""

    qpos: np.ndarray
    targets: np.ndarray
    residual: np.ndarray
    scale: np.ndarray
    iterations: np.ndarray
    dropped: list
    table: Table


def retarget(
    captures,
    table: Table,
    position_pull: float = 0.3,
    settings: Settings | None = None,
    miss: float = 0.15,
    log=None,
) -> Result:
    """Retarget one Capture or a list of them (the same frame count; solved together, a row
    each) to table's robot. Frame 0 starts from the rest pose moved to the first targets'
    root and heading; while the worst sample's residual there exceeds `miss` metres, it is
    taken for a wrong correspondence, dropped with a warning, and frame 0 solved again. Every later frame
    starts from the previous answer. log: called with a progress line every 10 % of frames."""
    caps = [captures] if isinstance(captures, Capture) else list(captures)
    if not caps or len({c.frames for c in caps}) != 1:
        raise InvalidArgumentError("retarget takes one capture or captures of the same frame count")
    if not (0.0 <= position_pull <= 1.0):
        raise InvalidArgumentError(f"position_pull must be in [0, 1], got {position_pull!r}")
    st = settings or Settings()
    dropped: list[str] = []
    while True:
        robot = Robot(table, batch=len(caps))
        lengths = bone_lengths(robot, table)
        c = np.stack([capture_points(cap, table) for cap in caps])  # (B, T, K, 3)
        scale = np.array([measure_scale(table, cb, lengths) for cb in c])
        t = np.stack([targets(table, c[b], lengths, scale[b], position_pull) for b in range(len(caps))])
        q0 = _initial_pose(robot, table, t[:, 0], st.margin)
        q0, _ = solve_frame(robot, t[:, 0], q0, q0.copy(), st, 10 * st.max_iter, hold=False)
        miss_k = np.max(np.linalg.norm(robot.positions(q0) - t[:, 0], axis=2), axis=0)
        miss_k[[s.parent is None for s in table.samples]] = 0.0  # the root stays
        worst = int(np.argmax(miss_k))
        if miss_k[worst] <= miss:
            break
        # one wrong sample drags its neighbours off too: drop the worst, then look again
        joint = table.samples[worst].joint
        warnings.warn(
            f"retarget: {joint!r} misses its target by {miss_k[worst]:.3f} m at the first frame; dropped",
            stacklevel=2,
        )
        dropped.append(joint)
        table = table.without([joint])
    B, T = len(caps), caps[0].frames
    qpos = np.empty((B, T, robot.nq))
    iterations = np.zeros((B, T), dtype=np.int64)
    qpos[:, 0] = q0
    q = q0.copy()
    for i in range(1, T):
        q, iterations[:, i] = solve_frame(robot, t[:, i], q.copy(), q.copy(), st, st.max_iter)
        qpos[:, i] = q
        if log is not None and i % max(T // 10, 1) == 0:
            log(f"  frame {i}/{T}")
    residual = np.stack(
        [np.linalg.norm(robot.positions(qpos[:, i]) - t[:, i], axis=2) for i in range(T)], axis=1
    )
    return Result(qpos, t, residual, scale, iterations, dropped, table)


def _initial_pose(robot: Robot, table: Table, t0: np.ndarray, margin: float) -> np.ndarray:
    """(B, nq) the rest pose (every limited hinge a margin inside its range) turned about the
    vertical to the targets' heading (the yaw that best aligns the samples' horizontal
    positions with the targets', a 2-D Procrustes fit about their centroids) and moved so
    that the root sample sits on its target."""
    B = len(t0)
    q = robot.rest(B, margin)
    p = robot.positions(q)
    a = p[..., :2] - p[..., :2].mean(axis=1, keepdims=True)
    b = t0[..., :2] - t0[..., :2].mean(axis=1, keepdims=True)
    yaw = np.arctan2(
        np.sum(a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0], axis=1), np.sum(a * b, axis=(1, 2))
    )
    turn = np.stack([np.cos(yaw / 2), np.zeros(B), np.zeros(B), np.sin(yaw / 2)], axis=1)
    q[:, 3:7] = quat_mul(turn, q[:, 3:7])
    p = robot.positions(q)
    root = next(k for k, s in enumerate(table.samples) if s.parent is None)
    q[:, 0:3] += t0[:, root] - p[:, root]
    return q
