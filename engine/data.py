"""engine.Data: every changing quantity, one row per environment, allocated once.

Each array has a leading batch dimension B; dtype and shape are declared with the field
(`engine.fields`), and `make_data` allocates from those declarations. Names and meanings
follow `mjdata.h`. Fields are grouped by the stage that writes them. The `scratch_*`
arrays are per-row work space for kernels, so nothing allocates while stepping.
"""

from __future__ import annotations

import os
import warnings
from typing import NamedTuple

import numpy as np

from robodyn.engine import fields
from robodyn.engine.capacity import efc_rows_needed, efc_widths
from robodyn.engine.errors import (
    ArgumentTypeError,
    DataSizeError,
    InvalidArgumentError,
    MemoryWarning,
    ModelError,
)
from robodyn.engine.fields import (  # noqa: F401 (the names the declarations use)
    B,
    dim_size,
    f64,
    i32,
    na,
    nbody,
    nccdface,
    nccdobj,
    nccdpoly,
    nccdvert,
    nconmax,
    nefcdof,
    nefcmax,
    nefctreedof,
    neq,
    ngeom,
    njnt,
    nM,
    nmocap,
    npgs,
    npgsar,
    nq,
    nsensordata,
    nsite,
    ntendon,
    ntree,
    nu,
    nv,
    nwrap,
)
from robodyn.engine.model import Model
from robodyn.engine.sizes import BOXBOX_WORK, CON_MAX, CON_WIDTH  # noqa: F401 (in declarations)
from robodyn.engine.sizes import FACE_WIDTH as CCD_FACE_WIDTH  # noqa: F401
from robodyn.engine.sizes import FACEID_WIDTH as CCD_FACEID_WIDTH  # noqa: F401
from robodyn.engine.sizes import LIST_ROWS as CCD_LIST_ROWS  # noqa: F401
from robodyn.engine.sizes import SIMPLEX_ROWS as CCD_SIMPLEX_ROWS  # noqa: F401
from robodyn.engine.sizes import VERT_WIDTH as CCD_VERT_WIDTH  # noqa: F401
from robodyn.engine.types import NWARN  # noqa: F401 (in declarations)


class Data(NamedTuple):
    """Batched simulation state and derived quantities (MuJoCo's field names)."""

    # state and inputs
    time: f64[B]  # simulation time
    qpos: f64[B, nq]  # generalized positions
    qvel: f64[B, nv]  # generalized velocities
    act: f64[B, na]  # actuator activations (actuator_actadr says whose)
    ctrl: f64[B, nu]  # controls
    qfrc_applied: f64[B, nv]  # user-applied generalized forces
    xfrc_applied: f64[B, nbody, 6]  # user-applied Cartesian force:torque at body com
    eq_active: i32[B, neq]  # 1: the equality constraint is enforced
    mocap_pos: f64[B, nmocap, 3]  # mocap body positions (world frame; a mocap body is a child of the world)
    mocap_quat: f64[B, nmocap, 4]  # mocap body orientations (kinematics uses them normalized)
    qacc_warmstart: f64[B, nv]  # qacc of the last step: the constraint solver's warm start

    # kinematics
    xpos: f64[B, nbody, 3]  # body frame origins
    xquat: f64[B, nbody, 4]  # body frame orientations
    xmat: f64[B, nbody, 9]  # body frame orientations, row-major
    xipos: f64[B, nbody, 3]  # body centres of mass
    ximat: f64[B, nbody, 9]  # principal axes of inertia
    xanchor: f64[B, njnt, 3]  # joint anchors
    xaxis: f64[B, njnt, 3]  # joint axes
    geom_xpos: f64[B, ngeom, 3]  # geom positions
    geom_xmat: f64[B, ngeom, 9]  # geom orientations
    site_xpos: f64[B, nsite, 3]  # site positions
    site_xmat: f64[B, nsite, 9]  # site orientations

    # collision (contacts 0..ncon-1 of each row are valid)
    ncon: i32[B]  # number of contacts
    contact_dist: f64[B, nconmax]  # signed distance between the surfaces (< 0: overlap)
    contact_pos: f64[B, nconmax, 3]  # position, midway between the surfaces
    contact_frame: f64[B, nconmax, 9]  # rows: normal (geom1 -> geom2), tangent, tangent
    contact_includemargin: f64[B, nconmax]  # a constraint acts if dist < includemargin
    contact_friction: f64[B, nconmax, 5]  # tangent1, tangent2, spin, roll1, roll2
    contact_solref: f64[B, nconmax, 2]  # solver reference: normal direction
    contact_solreffriction: f64[B, nconmax, 2]  # solver reference: friction directions
    contact_solimp: f64[B, nconmax, 5]  # solver impedance
    contact_mu: f64[B, nconmax]  # friction of the regularized cone (constraint stage)
    contact_dim: i32[B, nconmax]  # contact dimensionality
    contact_geom: i32[B, nconmax, 2]  # geom ids, geom_type[0] <= geom_type[1]
    contact_exclude: i32[B, nconmax]  # 1: in the gap, no constraint
    contact_lost: i32[B]  # contacts found that did not fit in nconmax
    contact_efc_address: i32[B, nconmax]  # first efc row of the contact, -1 if none

    # constraints (rows 0..nefc-1 of each row are valid: equalities, then limits, then contacts)
    nefc: i32[B]  # number of constraint rows
    ne: i32[B]  # number of equality rows (the first ne)
    nf: i32[B]  # number of friction-loss rows (after the equality rows)
    nl: i32[B]  # number of limit rows (after the friction rows)
    efc_type: i32[B, nefcmax]  # CNSTR_* type of the row
    efc_id: i32[B, nefcmax]  # equality, joint, tendon or contact id of the row
    efc_J: f64[B, nefcmax, nefcdof]  # constraint Jacobian, compact: J[i, efc_J_colind[i, t]]
    efc_J_colind: i32[B, nefcmax, nefcdof]  # dof of each entry, ascending (MuJoCo's merged chain)
    efc_J_rownnz: i32[B, nefcmax]  # entries of the row: every dof of its chain, even where J is 0
    efc_pos: f64[B, nefcmax]  # constraint violation (distance, < 0 penetrating)
    efc_margin: f64[B, nefcmax]  # inclusion margin
    efc_frictionloss: f64[B, nefcmax]  # a friction row's force bound (0 on other rows)
    efc_diagA: f64[B, nefcmax]  # approximation of diag(J M^-1 J^T), made consistent with R
    efc_R: f64[B, nefcmax]  # regularizer: (1 - imp) / imp * diagA
    efc_D: f64[B, nefcmax]  # 1 / R
    efc_KBIP: f64[B, nefcmax, 4]  # stiffness K, damping B, impedance I and dI/dpos
    efc_vel: f64[B, nefcmax]  # J qvel
    efc_aref: f64[B, nefcmax]  # reference acceleration -B vel - K I (pos - margin)
    efc_b: f64[B, nefcmax]  # J qacc_smooth - aref
    efc_force: f64[B, nefcmax]  # constraint force of the row (solver output)
    efc_state: i32[B, nefcmax]  # CNSTRSTATE_* at the solution (friction rows: _LINEARNEG/POS too)

    # constraint islands (engine.island, MuJoCo's mj_island): trees coupled by rows; islands
    # 0..nisland-1 are numbered by their smallest tree; nisland = 0 when islands are disabled
    # or there are no rows (then the solver solves all rows at once, and the island_* and
    # map_* arrays hold one island of every tree, dof and row)
    nisland: i32[B]  # number of islands
    nidof: i32[B]  # dofs in some island (the others have no rows: qacc = qacc_smooth)
    tree_island: i32[B, ntree]  # island of the tree, -1 if no row touches it
    island_ntree: i32[B, ntree]  # trees of the island
    island_itreeadr: i32[B, ntree]  # the island's first entry in map_itree2tree
    map_itree2tree: i32[B, ntree]  # trees island by island (ascending), then the others
    dof_island: i32[B, nv]  # island of the dof, -1 if none
    island_nv: i32[B, ntree]  # dofs of the island
    island_idofadr: i32[B, ntree]  # the island's first entry in map_idof2dof
    island_dofadr: i32[B, ntree]  # the island's first dof
    map_dof2idof: i32[B, nv]  # position of the dof in map_idof2dof
    map_idof2dof: i32[B, nv]  # dofs island by island (ascending), then the dofs in no island
    efc_island: i32[B, nefcmax]  # island of the row
    island_ne: i32[B, ntree]  # equality rows of the island
    island_nf: i32[B, ntree]  # friction-loss rows of the island
    island_nefc: i32[B, ntree]  # rows of the island
    island_iefcadr: i32[B, ntree]  # the island's first entry in map_iefc2efc
    map_efc2iefc: i32[B, nefcmax]  # position of the row in map_iefc2efc
    map_iefc2efc: i32[B, nefcmax]  # rows island by island, each island's in ascending order

    # constraint solver report (of the last forward)
    solver_niter: i32[B]  # iterations, summed over the islands
    solver_improvement: f64[B]  # scaled cost improvement of the last iteration (largest over islands)
    solver_gradient: f64[B]  # scaled gradient norm at the solution (Newton, largest over islands; 0 for PGS)
    solver_converged: i32[B]  # 1: every island's solution passes the tolerance test, 0: not
    island_niter: i32[B, ntree]  # iterations of each island (MuJoCo's solver_niter; [0] when nisland = 0)
    island_converged: i32[B, ntree]  # 1: the island's solution passes the tolerance test
    noslip_niter: i32[B, ntree]  # sweeps of the noslip pass on each island (in island_niter too)
    noslip_improvement: f64[B, ntree]  # scaled improvement of each island's last noslip sweep

    # com_pos
    subtree_com: f64[B, nbody, 3]  # centre of mass of each subtree
    cinert: f64[B, nbody, 10]  # body inertia about its tree's subtree_com
    cdof: f64[B, nv, 6]  # dof motion axes, com-based

    # tendons and transmission
    ten_length: f64[B, ntendon]  # tendon lengths
    ten_velocity: f64[B, ntendon]  # tendon velocities
    ten_J: f64[B, ntendon, nv]  # tendon Jacobians
    ten_wrapadr: i32[B, ntendon]  # a spatial tendon's first path point in wrap_obj, wrap_xpos
    ten_wrapnum: i32[B, ntendon]  # its path points (0 for a fixed tendon)
    wrap_obj: i32[B, nwrap, 2]  # path points, two a row: -1 site, -2 pulley, else the wrapped geom
    wrap_xpos: f64[B, nwrap, 6]  # their positions (world frame; a pulley's is 0), two a row
    actuator_length: f64[B, nu]  # actuator lengths
    actuator_velocity: f64[B, nu]  # actuator velocities
    actuator_moment: f64[B, nu, nv]  # actuator moment arms (dense)

    # crb and factor
    crb: f64[B, nbody, 10]  # composite inertia of each subtree
    qM: f64[B, nM]  # lower-triangular M, rows as in M_rowadr / M_colind
    qLD: f64[B, nM]  # L^T D L factor of M in the same layout (D on the diagonal)
    qLDiagInv: f64[B, nv]  # 1 / D

    # com_vel, passive, rne, actuation
    cvel: f64[B, nbody, 6]  # body velocities, com-based
    cdof_dot: f64[B, nv, 6]  # time derivative of cdof
    qfrc_spring: f64[B, nv]  # joint and tendon springs
    qfrc_damper: f64[B, nv]  # joint and tendon dampers
    qfrc_fluid: f64[B, nv]  # fluid (viscosity, drag) forces
    qfrc_passive: f64[B, nv]  # spring + damper + fluid
    qfrc_bias: f64[B, nv]  # c(q, v): Coriolis, centrifugal and gravity
    actuator_force: f64[B, nu]  # scalar force of each actuator
    act_dot: f64[B, na]  # time derivative of act (activation dynamics)
    qfrc_actuator: f64[B, nv]  # actuator forces in joint space

    # acceleration
    qfrc_smooth: f64[B, nv]  # passive - bias + applied + actuator
    qacc_smooth: f64[B, nv]  # M^-1 qfrc_smooth
    qfrc_constraint: f64[B, nv]  # constraint forces (zero until constraints exist)
    qacc: f64[B, nv]  # acceleration
    qfrc_inverse: f64[B, nv]  # output of inverse dynamics

    # post-acceleration (accelerometer) and sensors
    cacc: f64[B, nbody, 6]  # body accelerations, com-based
    cfrc_int: f64[B, nbody, 6]  # interaction forces with the parent
    cfrc_ext: f64[B, nbody, 6]  # external forces (zero until contacts exist)
    subtree_linvel: f64[B, nbody, 3]  # linear velocity of each subtree com
    subtree_angmom: f64[B, nbody, 3]  # angular momentum of each subtree about its com
    sensordata: f64[B, nsensordata]  # sensor readings

    # integrator work space
    qH: f64[B, nM]  # M + h diag(damping) or M - h qDeriv, factored in place
    qHDiagInv: f64[B, nv]  # 1 / D of qH
    qDeriv: f64[B, nv, nv]  # d(qfrc_smooth)/d(qvel) (implicit integrators)
    qLU: f64[B, nv, nv]  # dense LU of M - h qDeriv (implicit)
    rk_qpos: f64[B, 4, nq]  # RK4 stage positions
    rk_qvel: f64[B, 4, nv]  # RK4 stage velocities
    rk_qacc: f64[B, 4, nv]  # RK4 stage accelerations
    rk_act: f64[B, 4, na]  # RK4 stage activations
    rk_act_dot: f64[B, 4, na]  # RK4 stage activation derivatives
    scratch_act: f64[B, na]  # work space (RK4's weighted act_dot)
    scratch_qpos: f64[B, nq]  # work space
    scratch_sensor: f64[B, nsensordata]  # touch readings kept across a position-velocity sensor pass
    scratch_v: f64[B, 6, nv]  # work space
    scratch_body: f64[B, 3, nbody, 6]  # work space for RNE-like passes
    scratch_jac: f64[B, 6, nv]  # work space for Jacobians
    scratch_chain: i32[B, nv]  # work space: the dofs of a Jacobian difference (spatial tendons)
    scratch_cvel: f64[B, nbody, 6]  # cvel at a perturbed velocity (derivatives)
    scratch_cdof_dot: f64[B, nv, 6]  # cdof_dot at a perturbed velocity
    scratch_con: f64[B, CON_MAX, CON_WIDTH]  # contacts of one geom pair (collision_primitive)
    scratch_boxbox: f64[B, *BOXBOX_WORK]  # box-box clipping polygons
    scratch_ccd_obj: f64[B, 2, nccdobj]  # convex collider: the two geoms (collision_convex), mesh hulls
    scratch_ccd_simplex: f64[B, CCD_SIMPLEX_ROWS, CCD_VERT_WIDTH]  # GJK simplex, EPA polytope centre
    scratch_ccd_vert: f64[B, nccdvert, CCD_VERT_WIDTH]  # EPA polytope vertices (A - B point, on A, on B)
    scratch_ccd_face: f64[B, nccdface, CCD_FACE_WIDTH]  # EPA faces: origin's projection, its squared norm
    scratch_ccd_faceid: i32[B, nccdface, CCD_FACEID_WIDTH]  # EPA faces: vertices, neighbours, map index
    scratch_ccd_list: i32[B, CCD_LIST_ROWS, nccdface]  # EPA face map, horizon, search stack, counts
    scratch_ccd_poly: f64[B, nccdpoly, 3]  # multi-contact search: normals, edges, faces, polygons
    scratch_jac2: f64[B, 6, nv]  # second Jacobian work space (constraint rows)
    scratch_efc: f64[B, 5, nefcmax]  # solver work space: Jaref, Jv, quadratic coefficients
    scratch_efc_int: i32[B, nefcmax]  # solver: PGS visiting order; Newton: states before an iteration
    scratch_efc_Y: f64[B, npgs, nefctreedof]  # PGS: rows Y_i = M^-1 J_i^T on the trees J_i touches
    scratch_efc_Y_colind: i32[B, npgs, nefctreedof]  # PGS: dof of each entry of Y_i, ascending
    scratch_efc_Y_rownnz: i32[B, npgs]  # PGS: entries of Y_i (the dofs of those trees)
    scratch_efc_AR: f64[B, npgs, 6]  # PGS, elliptic contact rows i..: [i+j, k] = (J M^-1 J^T + R)[i+j, i+k]
    scratch_pgs_AR: f64[B, npgsar, npgsar]  # PGS: an island's AR = J M^-1 J^T + R (rows by island position)
    scratch_pgs_block: f64[B, 20, 6]  # PGS cone update: vectors (rows 0-7), QCQP A (8-13), factor (14-19)
    scratch_nv: f64[B, 10, nv]  # solver: Ma, Mv, grad, Mgrad, search, x, island qacc, qfrc_smooth, -, J^T f
    scratch_H: f64[B, nv, nv]  # Newton: Hessian M + J^T D J, Cholesky factor in place
    scratch_Hcone: f64[B, nv, nv]  # Newton, elliptic cones: the factor with the cones' Hessians added
    scratch_tree: i32[B, ntree]  # islands: the union-find parent of each tree
    scratch_idof: i32[B, 2, nv]  # solver: [0] a dof's index in the island solved (-1: outside), [1] a row's
    scratch_row: f64[B, nv]  # solver: a row of J on the island's dofs (values for scratch_idof[1])
    scratch_iefc: i32[B, nefcmax]  # solver: 0..nefc-1, the rows in their own order
    scratch_cone: f64[B, 7, 6]  # elliptic cones: a contact's cone Hessian or its factor (rows 0-5), U (row 6)

    # the position and velocity stages a posvel-ended step left (engine.step.step_row): the
    # inputs of Data they read, as they read them, so that the next posvel-ended call's first
    # step can reuse them instead of recomputing them on the same state (mj_step2 after mj_step1)
    posvel_current: i32[B]  # 1: the last call ended with them; no step, forward or reset since
    posvel_qpos: f64[B, nq]  # qpos they read
    posvel_qvel: f64[B, nv]  # qvel they read
    posvel_mocap_pos: f64[B, nmocap, 3]  # mocap_pos they read
    posvel_mocap_quat: f64[B, nmocap, 4]  # mocap_quat they read
    posvel_eq_active: i32[B, neq]  # eq_active they read
    posvel_reused: i32[B]  # steps that reused them (a count; wraps past 2**31)

    status: i32[B]  # 0 ok, k > 0: step k of the last call failed (bad state or qacc, overflow)
    warning: i32[B, NWARN]  # how often each WARN_* happened to the row (engine.types)
    warning_info: i32[B, NWARN]  # the dof or actuator of the last time each happened
    warned: i32[B]  # warnings the last call counted for the row


DATA_SPECS = fields.field_specs(Data)


MEMORY_WARN_ROW = 64 * 2**20
"""make_data warns (MemoryWarning) when one environment's Data exceeds this many bytes..."""
MEMORY_WARN_TOTAL = 4 * 2**30
"""...or the whole batch's Data exceeds this many."""


def data_bytes(m: Model, batch: int) -> dict[str, int]:
    """{field: bytes} of a Data for `batch` environments of `m`, from the declarations."""
    sizes = {}
    for name, spec in DATA_SPECS.items():
        n = np.dtype(spec.dtype).itemsize
        for dim in spec.dims:
            n *= batch if dim is fields.B else dim_size(m, dim)
        sizes[name] = n
    return sizes


def physical_memory() -> int | None:
    """Bytes of physical memory of this machine (None where the OS does not say)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def _too_big(m: Model, batch: int, sizes: dict[str, int]) -> str | None:
    """The DataSizeError message when Data cannot fit in physical memory, else None."""
    total = sum(sizes.values())
    memory = physical_memory()
    if memory is None or total <= memory:
        return None
    gib = 2**30
    fit = max(0, memory // max(1, total // batch))
    return (
        f"engine.make_data: Data for batch={batch} needs {total / gib:.1f} GiB "
        f"({total / batch / 2**20:.2f} MiB per environment) but this machine has {memory / gib:.1f} GiB "
        f"of memory; at most about {fit} environments of this model fit"
    )


def _memory_warning(m: Model, batch: int, sizes: dict[str, int]) -> str | None:
    """The MemoryWarning message when Data is over a threshold: the size in MiB, the
    arrays that dominate it and how to shrink it; None when it is not."""
    total = sum(sizes.values())
    if total / batch <= MEMORY_WARN_ROW and total <= MEMORY_WARN_TOTAL:
        return None
    mib = 2**20
    largest = sorted(sizes, key=sizes.get, reverse=True)[:3]
    shapes = {
        name: ", ".join(
            f"{dim}={dim_size(m, dim)}" if isinstance(dim, fields.Dim) else str(dim)
            for dim in DATA_SPECS[name].dims[1:]
        )
        for name in largest
    }
    top = ", ".join(f"{name} ({shapes[name]}) {sizes[name] / batch / mib:.1f} MiB" for name in largest)
    return (
        f"engine.make_data: Data for batch={batch} needs {total / mib:.1f} MiB "
        f"({total / batch / mib:.1f} MiB per environment, nconmax={m.nconmax}, nefcmax={m.nefcmax}, "
        f"nv={m.nv}, nefcdof={m.nefcdof}); per environment the largest arrays are {top}. "
        "To shrink it, load the model "
        "with smaller contact and constraint buffers (engine.load_mjcf(..., nconmax=..., nefcmax=...) "
        'or <size nconmax="..." njmax="..."> or <size memory="..."> in the MJCF), or use a smaller batch'
    )


def make_data(m: Model, batch: int) -> Data:
    """Allocate a Data for `batch` environments, each at the model's reference pose qpos0:
    every field as declared above, zero, except qpos (qpos0), eq_active (eq_active0),
    mocap_pos/mocap_quat (each mocap body's body_pos/body_quat, as mj_resetData) and
    contact_efc_address (-1: no rows).

    Raises TypeError for a batch that is not an int, ValueError for batch < 1, and
    ModelError when m.nefcmax cannot hold the rows m.nconmax contacts, the equalities and
    the limits can need, or m.nefcdof / m.nefctreedof the widest row (a Model edited by
    hand: the constraint stage writes rows without bounds checks). Raises DataSizeError
    when Data would exceed the machine's physical memory. Warns with MemoryWarning, before
    allocating, when Data exceeds MEMORY_WARN_ROW bytes per environment or
    MEMORY_WARN_TOTAL in all."""
    if not isinstance(m, Model):
        raise ArgumentTypeError(
            f"make_data needs an engine.Model (from engine.load_mjcf), got {type(m).__name__}"
        )
    if isinstance(batch, bool) or not isinstance(batch, int | np.integer):
        raise ArgumentTypeError(f"batch must be an int, got {type(batch).__name__}")
    if batch < 1:
        raise InvalidArgumentError(f"batch must be >= 1, got {batch}")
    B = int(batch)
    need = efc_rows_needed(m)
    if m.nefcmax < need:
        raise ModelError(
            f"model.nefcmax={m.nefcmax} cannot hold the {need} constraint rows the model can need "
            f"(equalities, both sides of every limit, nconmax={m.nconmax} contacts); load the model "
            "with engine.load_mjcf, which sizes them together, instead of editing the Model"
        )
    ten_J = (m.ten_J_rownnz, m.ten_J_rowadr, m.ten_J_colind)
    widths = efc_widths(m, m.cpair_geom, ten_J, bool(m.efc_dense))
    if m.nefcdof < widths[0] or m.nefctreedof < widths[1]:
        raise ModelError(
            f"model.nefcdof={m.nefcdof}, nefctreedof={m.nefctreedof} cannot hold constraint rows "
            f"{widths[0]} dofs wide on trees of {widths[1]} dofs; load the model with engine.load_mjcf, "
            "which sizes them, instead of editing the Model"
        )
    sizes = data_bytes(m, B)
    refusal = _too_big(m, B, sizes)
    if refusal is not None:
        raise DataSizeError(refusal)
    message = _memory_warning(m, B, sizes)
    if message is not None:
        warnings.warn(message, MemoryWarning, stacklevel=2)
    arrays = {}
    for name, spec in DATA_SPECS.items():
        shape = tuple(B if dim is fields.B else dim_size(m, dim) for dim in spec.dims)
        arrays[name] = np.zeros(shape, dtype=spec.dtype)
    arrays["qpos"][:] = m.qpos0
    arrays["eq_active"][:] = m.eq_active0
    mocap = m.body_mocapid >= 0
    arrays["mocap_pos"][:, m.body_mocapid[mocap]] = m.body_pos[mocap]
    arrays["mocap_quat"][:, m.body_mocapid[mocap]] = m.body_quat[mocap]
    arrays["contact_efc_address"][:] = -1
    return Data(**arrays)


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
    "mocap_pos",
    "mocap_quat",
    "qacc_warmstart",
)
