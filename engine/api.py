"""Thin typed wrappers: check shapes once in Python, then call one compiled batch kernel.

These are what `Simulator` calls; they take a Model and a Data and work on every row.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from engine import types as T
from engine.collision_driver import GEOM_TYPE_NAMES, collision_rows
from engine.data import Data
from engine.factor import mul_m
from engine.forward import fwd_position, fwd_velocity
from engine.jacobian import apply_ft, jac
from engine.jit import entry
from engine.model import Model, UnsupportedModelError
from engine.rne import rne
from engine.spatial import sub_quat
from engine.step import forward_rows, step_rows


def check(m: Model, d: Data) -> None:
    B = d.qpos.shape[0]
    for name, shape in (("qpos", (B, m.nq)), ("qvel", (B, m.nv)), ("ctrl", (B, m.nu)), ("qacc", (B, m.nv))):
        arr = getattr(d, name)
        if arr.shape != shape or arr.dtype != np.float64 or not arr.flags.c_contiguous:
            raise ValueError(f"data.{name} must be a C-contiguous float64 array of shape {shape}")


_POOLS: dict[int, ThreadPoolExecutor] = {}


def default_threads(batch: int) -> int:
    """Threads used for a batch by default: one per core, none for small batches."""
    return 1 if batch < 8 else max(1, min(os.cpu_count() or 1, batch))


def run_rows(kernel, m: Model, d: Data, nthread: int, *args) -> None:
    """kernel(m, d, lo, hi, *args) over the batch split into nthread contiguous ranges.

    The kernels release the GIL and rows share nothing, so the ranges run truly in parallel.
    """
    B = d.qpos.shape[0]
    nthread = max(1, min(int(nthread), B))
    if nthread == 1:
        kernel(m, d, 0, B, *args)
        return
    pool = _POOLS.get(nthread)
    if pool is None:
        pool = _POOLS[nthread] = ThreadPoolExecutor(max_workers=nthread, thread_name_prefix="robodyn")
    bounds = np.linspace(0, B, nthread + 1).astype(int)
    ranges = zip(bounds[:-1], bounds[1:], strict=True)
    futures = [pool.submit(kernel, m, d, int(lo), int(hi), *args) for lo, hi in ranges]
    for f in futures:
        f.result()


class ContactOverflowError(RuntimeError):
    """More contacts than a row's contact buffer holds (Model.nconmax)."""


def collision(m: Model, d: Data, nthread: int = 1) -> None:
    """mj_collision for every row, at the geom poses of the last forward() (kinematics).

    Fills d.ncon and d.contact_*. Runs whether or not the model disables contacts (it
    reads geometry only). Raises UnsupportedModelError if the model has geom pairs that
    can collide but no collider here, and ContactOverflowError naming the row if a row
    found more contacts than nconmax (the first nconmax are kept).
    """
    check(m, d)
    if len(m.cpair_refused):
        names = [[GEOM_TYPE_NAMES[int(m.geom_type[g])] for g in pair] for pair in m.cpair_refused[:4]]
        pairs = ", ".join(
            f"geoms {g1} and {g2} ({t1}-{t2})"
            for (g1, g2), (t1, t2) in zip(m.cpair_refused, names, strict=False)
        )
        raise UnsupportedModelError(f"collision: {pairs} can collide, but that type pair is not implemented")
    run_rows(collision_rows, m, d, nthread)
    lost = np.flatnonzero(d.contact_lost)
    if len(lost):
        row = int(lost[0])
        found = int(d.ncon[row] + d.contact_lost[row])
        raise ContactOverflowError(
            f"row {row} has {found} contacts but the contact buffer holds nconmax={m.nconmax}; "
            f"{len(lost)} row(s) overflowed and kept only the first nconmax contacts. "
            "Load the model with a larger engine.load_mjcf(..., nconmax=...)"
        )


def forward(m: Model, d: Data, nthread: int = 1) -> None:
    """mj_forward for every row."""
    check(m, d)
    run_rows(forward_rows, m, d, nthread)


def step(m: Model, d: Data, nstep: int = 1, nthread: int = 1) -> None:
    """nstep mj_steps for every row."""
    check(m, d)
    run_rows(step_rows, m, d, nthread, int(nstep))


@entry
def _inverse_batch(m, d):
    for b in range(d.qpos.shape[0]):
        fwd_position(m, d, b)
        fwd_velocity(m, d, b)
        work = d.scratch_body[b]
        out = d.qfrc_inverse[b]
        rne(m, d, b, False, d.qacc[b], out, work[0], work[1], work[2])
        ma = d.scratch_v[b, 0]
        mul_m(ma, d.qM[b], d.qacc[b], m)
        for i in range(m.nv):
            out[i] += ma[i] - d.qfrc_passive[b, i] - d.qfrc_constraint[b, i]


def inverse(m: Model, d: Data) -> None:
    """mj_inverse for every row: qfrc_inverse = M qacc + c(q, v) - qfrc_passive - qfrc_constraint."""
    check(m, d)
    _inverse_batch(m, d)


@entry
def _full_m_batch(m, d, out):
    for b in range(d.qpos.shape[0]):
        for i in range(m.nv):
            start = m.M_rowadr[i]
            for t in range(m.M_rownnz[i]):
                j = m.M_colind[start + t]
                out[b, i, j] = d.qM[b, start + t]
                out[b, j, i] = d.qM[b, start + t]


def full_mass_matrix(m: Model, d: Data) -> np.ndarray:
    """(B, nv, nv) dense M from the packed lower triangle (mj_fullM)."""
    out = np.zeros((d.qpos.shape[0], m.nv, m.nv))
    _full_m_batch(m, d, out)
    return out


@entry
def _jac_batch(m, d, body, points, jacp, jacr):
    for b in range(d.qpos.shape[0]):
        jac(m, d, b, points[b], body, jacp[b], jacr[b])


def _points(m: Model, d: Data, body: int, point, default: np.ndarray) -> np.ndarray:
    if not 0 <= body < m.nbody:
        raise IndexError(f"body {body} out of range (model has {m.nbody} bodies)")
    B = d.qpos.shape[0]
    if point is None:
        return np.ascontiguousarray(default[:, body])
    p = np.asarray(point, dtype=np.float64)
    if p.shape == (3,):
        return np.ascontiguousarray(np.broadcast_to(p, (B, 3)))
    if p.shape != (B, 3):
        raise ValueError(f"point must have shape (3,) or ({B}, 3), got {p.shape}")
    return np.ascontiguousarray(p)


def jacobian(m: Model, d: Data, body: int, point=None, row=None):
    """(jacp, jacr), each (B, 3, nv) (or (3, nv) for one `row`): point and rotation Jacobians
    of `point` (world; default the body frame origin xpos) on `body` (mj_jac)."""
    points = _points(m, d, body, point, d.xpos)
    B = d.qpos.shape[0]
    jacp = np.zeros((B, 3, m.nv))
    jacr = np.zeros((B, 3, m.nv))
    _jac_batch(m, d, int(body), points, jacp, jacr)
    if row is not None:
        return jacp[row], jacr[row]
    return jacp, jacr


@entry
def _apply_ft_batch(m, d, body, force, torque, points, out):
    for b in range(d.qpos.shape[0]):
        apply_ft(m, d, b, force[b], torque[b], points[b], body, out[b])


def apply_force(m: Model, d: Data, body: int, force, torque=None, point=None) -> np.ndarray:
    """(B, nv) = J^T (force, torque) for a world force/torque at `point` on `body` (mj_applyFT)."""
    B = d.qpos.shape[0]
    points = _points(m, d, body, point, d.xipos)
    f = np.ascontiguousarray(np.broadcast_to(np.asarray(force, dtype=np.float64), (B, 3)))
    t = np.zeros((B, 3)) if torque is None else np.asarray(torque, dtype=np.float64)
    t = np.ascontiguousarray(np.broadcast_to(t, (B, 3)))
    out = np.zeros((B, m.nv))
    _apply_ft_batch(m, d, int(body), f, t, points, out)
    return out


@entry
def _energy_batch(m, d, out):
    for b in range(d.qpos.shape[0]):
        pot = 0.0
        if not (m.opt_disableflags & T.DSBL_GRAVITY):
            for i in range(1, m.nbody):
                for k in range(3):
                    pot -= m.body_mass[i] * m.opt_gravity[k] * d.xipos[b, i, k]
        if not (m.opt_disableflags & T.DSBL_SPRING):
            dif = d.scratch_body[b, 0, 0]
            for j in range(m.njnt):
                k = m.jnt_stiffness[j]
                if k == 0.0:
                    continue
                pa = m.jnt_qposadr[j]
                jtype = m.jnt_type[j]
                if jtype == T.JNT_FREE:
                    x2 = 0.0
                    for t in range(3):
                        x2 += (d.qpos[b, pa + t] - m.qpos_spring[pa + t]) ** 2
                    pot += 0.5 * k * x2
                    pa += 3
                    jtype = T.JNT_BALL
                if jtype == T.JNT_BALL:
                    sub_quat(dif, d.qpos[b, pa : pa + 4], m.qpos_spring[pa : pa + 4])
                    pot += 0.5 * k * (dif[0] ** 2 + dif[1] ** 2 + dif[2] ** 2)
                else:
                    pot += 0.5 * k * (d.qpos[b, pa] - m.qpos_spring[pa]) ** 2
            for t in range(m.ntendon):
                length = d.ten_length[b, t]
                x = 0.0
                if length > m.tendon_lengthspring[t, 1]:
                    x = length - m.tendon_lengthspring[t, 1]
                elif length < m.tendon_lengthspring[t, 0]:
                    x = length - m.tendon_lengthspring[t, 0]
                pot += 0.5 * m.tendon_stiffness[t] * x * x
        mv = d.scratch_v[b, 0]
        mul_m(mv, d.qM[b], d.qvel[b], m)
        kin = 0.0
        for i in range(m.nv):
            kin += 0.5 * d.qvel[b, i] * mv[i]
        out[b, 0] = pot
        out[b, 1] = kin


def energy(m: Model, d: Data) -> np.ndarray:
    """(B, 2): potential (gravity and springs) and kinetic energy 0.5 v^T M v (mj_energyPos/Vel)."""
    out = np.zeros((d.qpos.shape[0], 2))
    _energy_batch(m, d, out)
    return out
