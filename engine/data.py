"""engine.Data: every changing quantity, one row per environment, allocated once.

Each array has a leading batch dimension B. Names and meanings follow `mjdata.h`; the
shape after B is in the comment. Fields are grouped by the stage that writes them. The
`scratch_*` arrays are per-row work space for kernels, so nothing allocates while stepping.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from engine import types as T
from engine.collision_primitive import BOXBOX_WORK, CON_MAX, CON_WIDTH
from engine.model import Model


class Data(NamedTuple):
    """Batched simulation state and derived quantities (MuJoCo's field names)."""

    # state and inputs
    time: np.ndarray  # (B,) simulation time
    qpos: np.ndarray  # (B, nq) generalized positions
    qvel: np.ndarray  # (B, nv) generalized velocities
    act: np.ndarray  # (B, na) actuator activations (na = 0 for now)
    ctrl: np.ndarray  # (B, nu) controls
    qfrc_applied: np.ndarray  # (B, nv) user-applied generalized forces
    xfrc_applied: np.ndarray  # (B, nbody, 6) user-applied Cartesian force:torque at body com
    eq_active: np.ndarray  # (B, neq) int32 1: the equality constraint is enforced
    qacc_warmstart: np.ndarray  # (B, nv) qacc of the last step: the constraint solver's warm start

    # kinematics
    xpos: np.ndarray  # (B, nbody, 3) body frame origins
    xquat: np.ndarray  # (B, nbody, 4) body frame orientations
    xmat: np.ndarray  # (B, nbody, 9) body frame orientations, row-major
    xipos: np.ndarray  # (B, nbody, 3) body centres of mass
    ximat: np.ndarray  # (B, nbody, 9) principal axes of inertia
    xanchor: np.ndarray  # (B, njnt, 3) joint anchors
    xaxis: np.ndarray  # (B, njnt, 3) joint axes
    geom_xpos: np.ndarray  # (B, ngeom, 3) geom positions
    geom_xmat: np.ndarray  # (B, ngeom, 9) geom orientations
    site_xpos: np.ndarray  # (B, nsite, 3) site positions
    site_xmat: np.ndarray  # (B, nsite, 9) site orientations

    # collision (contacts 0..ncon-1 of each row are valid)
    ncon: np.ndarray  # (B,) int32 number of contacts
    contact_dist: np.ndarray  # (B, nconmax) signed distance between the surfaces (< 0: overlap)
    contact_pos: np.ndarray  # (B, nconmax, 3) position, midway between the surfaces
    contact_frame: np.ndarray  # (B, nconmax, 9) rows: normal (geom1 -> geom2), tangent, tangent
    contact_includemargin: np.ndarray  # (B, nconmax) a constraint acts if dist < includemargin
    contact_friction: np.ndarray  # (B, nconmax, 5) tangent1, tangent2, spin, roll1, roll2
    contact_solref: np.ndarray  # (B, nconmax, 2) solver reference: normal direction
    contact_solreffriction: np.ndarray  # (B, nconmax, 2) solver reference: friction directions
    contact_solimp: np.ndarray  # (B, nconmax, 5) solver impedance
    contact_mu: np.ndarray  # (B, nconmax) friction of the regularized cone (constraint stage)
    contact_dim: np.ndarray  # (B, nconmax) int32 contact dimensionality
    contact_geom: np.ndarray  # (B, nconmax, 2) int32 geom ids, geom_type[0] <= geom_type[1]
    contact_exclude: np.ndarray  # (B, nconmax) int32 1: in the gap, no constraint
    contact_lost: np.ndarray  # (B,) int32 contacts found that did not fit in nconmax
    contact_efc_address: np.ndarray  # (B, nconmax) int32 first efc row of the contact, -1 if none

    # constraints (rows 0..nefc-1 of each row are valid: equalities, then limits, then contacts)
    nefc: np.ndarray  # (B,) int32 number of constraint rows
    ne: np.ndarray  # (B,) int32 number of equality rows (the first ne)
    nl: np.ndarray  # (B,) int32 number of limit rows (after the equality rows)
    efc_type: np.ndarray  # (B, nefcmax) int32 CNSTR_* type of the row
    efc_id: np.ndarray  # (B, nefcmax) int32 equality, joint, tendon or contact id of the row
    efc_J: np.ndarray  # (B, nefcmax, nv) constraint Jacobian (dense rows)
    efc_pos: np.ndarray  # (B, nefcmax) constraint violation (distance, < 0 penetrating)
    efc_margin: np.ndarray  # (B, nefcmax) inclusion margin
    efc_diagA: np.ndarray  # (B, nefcmax) approximation of diag(J M^-1 J^T), made consistent with R
    efc_R: np.ndarray  # (B, nefcmax) regularizer: (1 - imp) / imp * diagA
    efc_D: np.ndarray  # (B, nefcmax) 1 / R
    efc_KBIP: np.ndarray  # (B, nefcmax, 4) stiffness K, damping B, impedance I and dI/dpos
    efc_vel: np.ndarray  # (B, nefcmax) J qvel
    efc_aref: np.ndarray  # (B, nefcmax) reference acceleration -B vel - K I (pos - margin)
    efc_b: np.ndarray  # (B, nefcmax) J qacc_smooth - aref
    efc_force: np.ndarray  # (B, nefcmax) constraint force of the row (solver output)
    efc_state: np.ndarray  # (B, nefcmax) int32 CNSTRSTATE_SATISFIED or _QUADRATIC at the solution

    # constraint solver report (of the last forward, one per row)
    solver_niter: np.ndarray  # (B,) int32 iterations
    solver_improvement: np.ndarray  # (B,) scaled cost improvement of the last iteration
    solver_gradient: np.ndarray  # (B,) scaled gradient norm at the solution (Newton; 0 for PGS)
    solver_converged: np.ndarray  # (B,) int32 1: the solution passes the tolerance test, 0: not

    # com_pos
    subtree_com: np.ndarray  # (B, nbody, 3) centre of mass of each subtree
    cinert: np.ndarray  # (B, nbody, 10) body inertia about its tree's subtree_com
    cdof: np.ndarray  # (B, nv, 6) dof motion axes, com-based

    # tendons and transmission
    ten_length: np.ndarray  # (B, ntendon) tendon lengths
    ten_velocity: np.ndarray  # (B, ntendon) tendon velocities
    ten_J: np.ndarray  # (B, ntendon, nv) tendon Jacobians
    actuator_length: np.ndarray  # (B, nu) actuator lengths
    actuator_velocity: np.ndarray  # (B, nu) actuator velocities
    actuator_moment: np.ndarray  # (B, nu, nv) actuator moment arms (dense)

    # crb and factor
    crb: np.ndarray  # (B, nbody, 10) composite inertia of each subtree
    qM: np.ndarray  # (B, nM) lower-triangular M, rows as in M_rowadr / M_colind
    qLD: np.ndarray  # (B, nM) L^T D L factor of M in the same layout (D on the diagonal)
    qLDiagInv: np.ndarray  # (B, nv) 1 / D

    # com_vel, passive, rne, actuation
    cvel: np.ndarray  # (B, nbody, 6) body velocities, com-based
    cdof_dot: np.ndarray  # (B, nv, 6) time derivative of cdof
    qfrc_spring: np.ndarray  # (B, nv) joint and tendon springs
    qfrc_damper: np.ndarray  # (B, nv) joint and tendon dampers
    qfrc_fluid: np.ndarray  # (B, nv) fluid (viscosity, drag) forces
    qfrc_passive: np.ndarray  # (B, nv) spring + damper + fluid
    qfrc_bias: np.ndarray  # (B, nv) c(q, v): Coriolis, centrifugal and gravity
    actuator_force: np.ndarray  # (B, nu) scalar force of each actuator
    qfrc_actuator: np.ndarray  # (B, nv) actuator forces in joint space

    # acceleration
    qfrc_smooth: np.ndarray  # (B, nv) passive - bias + applied + actuator
    qacc_smooth: np.ndarray  # (B, nv) M^-1 qfrc_smooth
    qfrc_constraint: np.ndarray  # (B, nv) constraint forces (zero until constraints exist)
    qacc: np.ndarray  # (B, nv) acceleration
    qfrc_inverse: np.ndarray  # (B, nv) output of inverse dynamics

    # post-acceleration (accelerometer) and sensors
    cacc: np.ndarray  # (B, nbody, 6) body accelerations, com-based
    cfrc_int: np.ndarray  # (B, nbody, 6) interaction forces with the parent
    cfrc_ext: np.ndarray  # (B, nbody, 6) external forces (zero until contacts exist)
    subtree_linvel: np.ndarray  # (B, nbody, 3) linear velocity of each subtree com
    sensordata: np.ndarray  # (B, nsensordata) sensor readings

    # integrator work space
    qH: np.ndarray  # (B, nM) M + h diag(damping) or M - h qDeriv, factored in place
    qHDiagInv: np.ndarray  # (B, nv) 1 / D of qH
    qDeriv: np.ndarray  # (B, nv, nv) d(qfrc_smooth)/d(qvel) (implicit integrators)
    qLU: np.ndarray  # (B, nv, nv) dense LU of M - h qDeriv (implicit)
    rk_qpos: np.ndarray  # (B, 4, nq) RK4 stage positions
    rk_qvel: np.ndarray  # (B, 4, nv) RK4 stage velocities
    rk_qacc: np.ndarray  # (B, 4, nv) RK4 stage accelerations
    scratch_qpos: np.ndarray  # (B, nq) work space
    scratch_v: np.ndarray  # (B, 6, nv) work space
    scratch_body: np.ndarray  # (B, 3, nbody, 6) work space for RNE-like passes
    scratch_jac: np.ndarray  # (B, 6, nv) work space for Jacobians
    scratch_cvel: np.ndarray  # (B, nbody, 6) cvel at a perturbed velocity (derivatives)
    scratch_cdof_dot: np.ndarray  # (B, nv, 6) cdof_dot at a perturbed velocity
    scratch_con: np.ndarray  # (B, CON_MAX, CON_WIDTH) contacts of one geom pair (collision_primitive)
    scratch_boxbox: np.ndarray  # (B, 3, 12, 3) box-box clipping polygons
    scratch_jac2: np.ndarray  # (B, 6, nv) second Jacobian work space (constraint rows)
    scratch_efc: np.ndarray  # (B, 5, nefcmax) solver work space: Jaref, Jv, quadratic coefficients
    scratch_efc_int: np.ndarray  # (B, nefcmax) int32 solver work space: PGS visiting order
    scratch_efc_nv: np.ndarray  # (B, nefcmax, nv) PGS: rows of M^-1 J^T (0 rows for Newton)
    scratch_nv: np.ndarray  # (B, 6, nv) solver work space: Ma, Mv, grad, Mgrad, search, ...
    scratch_H: np.ndarray  # (B, nv, nv) Newton: Hessian M + J^T D J, Cholesky factor in place
    status: np.ndarray  # (B,) int32: 0 ok, k > 0: step k of the last call failed (non-finite qacc, overflow)


def make_data(m: Model, batch: int) -> Data:
    """Allocate a Data for `batch` environments, each at the model's reference pose qpos0."""
    if batch < 1:
        raise ValueError(f"batch must be >= 1, got {batch}")
    B = int(batch)

    def z(*shape):
        return np.zeros((B, *shape), dtype=np.float64)

    d = Data(
        time=z(),
        qpos=np.ascontiguousarray(np.tile(m.qpos0, (B, 1))),
        qvel=z(m.nv),
        act=z(m.na),
        ctrl=z(m.nu),
        qfrc_applied=z(m.nv),
        xfrc_applied=z(m.nbody, 6),
        eq_active=np.ascontiguousarray(np.tile(m.eq_active0, (B, 1))),
        qacc_warmstart=z(m.nv),
        xpos=z(m.nbody, 3),
        xquat=z(m.nbody, 4),
        xmat=z(m.nbody, 9),
        xipos=z(m.nbody, 3),
        ximat=z(m.nbody, 9),
        xanchor=z(m.njnt, 3),
        xaxis=z(m.njnt, 3),
        geom_xpos=z(m.ngeom, 3),
        geom_xmat=z(m.ngeom, 9),
        site_xpos=z(m.nsite, 3),
        site_xmat=z(m.nsite, 9),
        ncon=np.zeros(B, dtype=np.int32),
        contact_dist=z(m.nconmax),
        contact_pos=z(m.nconmax, 3),
        contact_frame=z(m.nconmax, 9),
        contact_includemargin=z(m.nconmax),
        contact_friction=z(m.nconmax, 5),
        contact_solref=z(m.nconmax, 2),
        contact_solreffriction=z(m.nconmax, 2),
        contact_solimp=z(m.nconmax, 5),
        contact_mu=z(m.nconmax),
        contact_dim=np.zeros((B, m.nconmax), dtype=np.int32),
        contact_geom=np.zeros((B, m.nconmax, 2), dtype=np.int32),
        contact_exclude=np.zeros((B, m.nconmax), dtype=np.int32),
        contact_lost=np.zeros(B, dtype=np.int32),
        contact_efc_address=np.full((B, m.nconmax), -1, dtype=np.int32),
        nefc=np.zeros(B, dtype=np.int32),
        ne=np.zeros(B, dtype=np.int32),
        nl=np.zeros(B, dtype=np.int32),
        efc_type=np.zeros((B, m.nefcmax), dtype=np.int32),
        efc_id=np.zeros((B, m.nefcmax), dtype=np.int32),
        efc_J=z(m.nefcmax, m.nv),
        efc_pos=z(m.nefcmax),
        efc_margin=z(m.nefcmax),
        efc_diagA=z(m.nefcmax),
        efc_R=z(m.nefcmax),
        efc_D=z(m.nefcmax),
        efc_KBIP=z(m.nefcmax, 4),
        efc_vel=z(m.nefcmax),
        efc_aref=z(m.nefcmax),
        efc_b=z(m.nefcmax),
        efc_force=z(m.nefcmax),
        efc_state=np.zeros((B, m.nefcmax), dtype=np.int32),
        solver_niter=np.zeros(B, dtype=np.int32),
        solver_improvement=z(),
        solver_gradient=z(),
        solver_converged=np.zeros(B, dtype=np.int32),
        subtree_com=z(m.nbody, 3),
        cinert=z(m.nbody, 10),
        cdof=z(m.nv, 6),
        ten_length=z(m.ntendon),
        ten_velocity=z(m.ntendon),
        ten_J=z(m.ntendon, m.nv),
        actuator_length=z(m.nu),
        actuator_velocity=z(m.nu),
        actuator_moment=z(m.nu, m.nv),
        crb=z(m.nbody, 10),
        qM=z(m.nM),
        qLD=z(m.nM),
        qLDiagInv=z(m.nv),
        cvel=z(m.nbody, 6),
        cdof_dot=z(m.nv, 6),
        qfrc_spring=z(m.nv),
        qfrc_damper=z(m.nv),
        qfrc_fluid=z(m.nv),
        qfrc_passive=z(m.nv),
        qfrc_bias=z(m.nv),
        actuator_force=z(m.nu),
        qfrc_actuator=z(m.nv),
        qfrc_smooth=z(m.nv),
        qacc_smooth=z(m.nv),
        qfrc_constraint=z(m.nv),
        qacc=z(m.nv),
        qfrc_inverse=z(m.nv),
        cacc=z(m.nbody, 6),
        cfrc_int=z(m.nbody, 6),
        cfrc_ext=z(m.nbody, 6),
        subtree_linvel=z(m.nbody, 3),
        sensordata=z(m.nsensordata),
        qH=z(m.nM),
        qHDiagInv=z(m.nv),
        qDeriv=z(m.nv, m.nv),
        qLU=z(m.nv, m.nv),
        rk_qpos=z(4, m.nq),
        rk_qvel=z(4, m.nv),
        rk_qacc=z(4, m.nv),
        scratch_qpos=z(m.nq),
        scratch_v=z(6, m.nv),
        scratch_body=z(3, m.nbody, 6),
        scratch_jac=z(6, m.nv),
        scratch_cvel=z(m.nbody, 6),
        scratch_cdof_dot=z(m.nv, 6),
        scratch_con=z(CON_MAX, CON_WIDTH),
        scratch_boxbox=z(*BOXBOX_WORK),
        scratch_jac2=z(6, m.nv),
        scratch_efc=z(5, m.nefcmax),
        scratch_efc_int=np.zeros((B, m.nefcmax), dtype=np.int32),
        scratch_efc_nv=z(m.nefcmax if m.opt_solver == T.SOL_PGS else 0, m.nv),
        scratch_nv=z(6, m.nv),
        scratch_H=z(m.nv, m.nv),
        status=np.zeros(B, dtype=np.int32),
    )
    return d


# The state a rollout depends on: what snapshot/restore copy, in this order.
STATE_FIELDS = (
    "time",
    "qpos",
    "qvel",
    "act",
    "ctrl",
    "qfrc_applied",
    "xfrc_applied",
    "eq_active",
    "qacc_warmstart",
)
