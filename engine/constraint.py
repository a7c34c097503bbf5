"""Stage 10, constraints: the rows of the constraint problem of one environment (MuJoCo's
mj_makeConstraint, mj_referenceConstraint in engine_core_constraint.c).

Each active constraint contributes rows i of a Jacobian J (nefc x nv) and a violation
efc_pos, in MuJoCo's order: equalities (connect 3 rows, weld 6, joint 1, tendon 1), then
friction loss (dofs, then tendons), then limits (joints, then tendons; lower side before
upper), then contacts (in contact order).

Row i holds efc_J_rownnz[i] entries, J[i, efc_J_colind[i, t]] = efc_J[i, t], columns
ascending, values of 0 included; J is 0 at every other dof. Following <option jacobian>
(engine.capacity.dense_jacobian; "auto": dense below 60 dofs under PGS), the rows are either
- compact (Model.efc_dense 0), MuJoCo's sparse rows: the dofs that can move the row's
  bodies (mj_mergeChain). A row of a constraint between bodies b1 and b2 lists the dofs
  of both dof chains (the dofs of a body's weld root and its ancestors); a contact leaves
  out the chains' common ancestors, whose columns J_p(b2, p) - J_p(b1, p) vanish. The rows
  of one constraint share their columns. Or
- dense (efc_dense 1): every row is built compact, then spread over all nv dofs
  (columns 0..nv-1), so the solvers' loops over it are plain vector loops.
Model.nefcdof, the widest row the model can make (nv when dense), is the width of efc_J
(engine.capacity.efc_widths); dense_efc_J expands the rows.

- connect:  pos = p1 - p2 (the two anchors, world), J = J_p(body1, p1) - J_p(body2, p2).
- weld: connect's three rows, then three rotation rows: with q = q1 * relpose and
  the error quaternion e = q2^-1 * q, pos = torquescale * e_xyz and column k of J is
  0.5 * torquescale * (q2^-1 * (0, jr_k) * q)_xyz, jr = J_r(body1) - J_r(body2).
- joint:  pos = q1 - ref1 - (c0 + c1 x + c2 x^2 + c3 x^3 + c4 x^4), x = q2 - ref2
  (refs are qpos0), J = e_dof1 - p'(x) e_dof2; without a second joint, q1 - ref1 - c0.
  A tendon equality is the same with tendon lengths (refs tendon_length0) and ten_J rows.
- friction loss (a dof or tendon with frictionloss f):  J = e_dof or the tendon's ten_J
  row, pos = margin = 0, K = 0; the solvers bound its force to [-f, f].
- limit (hinge, slide, tendon):  dist = lower side: value - range[0], upper side:
  range[1] - value; a row exists while dist < margin (both can); J = +-(dvalue/dqvel).
  A ball joint has one row: dist = max(range) - angle, J = -axis on its three dofs.
- contact:  with jd = J_p(body2, p) - J_p(body1, p) and jr = J_r(body2) - J_r(body1) at the
  contact point and the frame rows n, t1, t2, let J_0 = n^T jd, J_1 = t1^T jd,
  J_2 = t2^T jd, and for condim 4 and 6 J_3 = n^T jr (spin), J_4 = t1^T jr, J_5 = t2^T jr
  (rolling). condim 1 gives the row J_0; the pyramidal cone the 2 (condim - 1) edges
  J_0 +- mu_k J_k, pos = dist for all; the elliptic cone the condim rows J_k themselves,
  pos = dist on the normal row and 0 on the others.

Regularization (mj_makeImpedance), from solref = (timeconst, dampratio) or the direct
form (-stiffness, -damping) and solimp = (d0, dwidth, width, midpoint, power):
    imp = d0 + y(|pos - margin| / width) (dwidth - d0), y the two-piece power sigmoid
    R = max(mjMINVAL, (1 - imp) / imp * diagA),  diagA from MuJoCo's invweight0 tables
    K = 1 / (dwidth^2 timeconst^2 dampratio^2), B = 2 / (dwidth timeconst)
        (direct form: K = stiffness / dwidth^2, B = damping / dwidth)
    aref = -B vel - K imp (pos - margin),  vel = J qvel
(connect and weld take imp from the norm of their 3 or 6 violations; a pyramid shares one
R = 2 mu^2 R_normal / impratio over its edges; an elliptic contact's friction rows have
R_1 = R_normal / impratio and R_k mu_k^2 = R_1 mu_1^2, K = 0 and their solreffriction).
For connect and weld, aref also subtracts (dJ/dt) qvel, as the MuJoCo 4.0.0 binary does.
"""

import math

import numpy as np

from robodyn.engine import types as T
from robodyn.engine.errors import InvalidArgumentError
from robodyn.engine.jacobian import jac_dif_pair, jac_dot_vel
from robodyn.engine.jit import kernel, u, unit
from robodyn.engine.simd import dot_lanes
from robodyn.engine.spatial import mv3, normalize3, qderiv, qmul, qmul_axis, qnormalized, scl3
from robodyn.engine.types import MINVAL

MINIMP = 0.0001  # mjMINIMP: smallest impedance
MAXIMP = 0.9999  # mjMAXIMP: largest impedance


@kernel
def dot(a, b, n):
    """a[:n] . b[:n] summed in MuJoCo's order (mju_dot: four partial sums s_k over i = k mod
    4, the multiples of four in one vector's lanes (engine.simd), then the rest)."""
    i = n - n % 4
    s0, s1, s2, s3 = dot_lanes(a, b, i)
    res = (s0 + s2) + (s1 + s3)
    r = n - i
    if r == 3:
        res += a[i] * b[i] + a[i + 1] * b[i + 1] + a[i + 2] * b[i + 2]
    elif r == 2:
        res += a[i] * b[i] + a[i + 1] * b[i + 1]
    elif r == 1:
        res += a[i] * b[i]
    return res


@kernel
def dot_sparse(vals, ind, x, n):
    """vals[:n] . x[ind[:n]] in MuJoCo's order (mju_dotSparse: four partial sums, then the
    rest); vals a compact row, ind its columns."""
    s0 = s1 = s2 = s3 = 0.0
    i = 0
    while i <= n - 4:
        s0 += vals[i] * x[u(ind[i])]
        s1 += vals[i + 1] * x[u(ind[i + 1])]
        s2 += vals[i + 2] * x[u(ind[i + 2])]
        s3 += vals[i + 3] * x[u(ind[i + 3])]
        i += 4
    res = (s0 + s2) + (s1 + s3)
    while i < n:
        res += vals[i] * x[u(ind[i])]
        i += 1
    return res


@kernel
def dot_row(m, d, b, i, x):
    """J_i . x (x: nv): a plain dot product when row i stores every dof (its columns are
    then 0..nv-1), else over its entries."""
    n = d.efc_J_rownnz[b, i]
    if n == m.nv:
        return dot(d.efc_J[b, i], x, n)
    return dot_sparse(d.efc_J[b, i], d.efc_J_colind[b, i], x, n)


@kernel
def rows_of_contact(condim):
    """Constraint rows of one contact in the pyramidal cone: 1 for condim 1, else 2 (condim - 1)
    pyramid edges."""
    return 1 if condim == 1 else 2 * (condim - 1)


@kernel
def contact_rows(m, condim):
    """Constraint rows of one contact of model m: condim rows in the elliptic cone (the
    normal, then the friction directions), else rows_of_contact."""
    if condim > 1 and m.opt_cone == T.CONE_ELLIPTIC:
        return condim
    return rows_of_contact(condim)


# ---- instantiation -------------------------------------------------------------------------------


@kernel
def _commit(m, d, b, size, ctype, cid, check_empty, frictionloss=0.0):
    """Count rows nefc..nefc+size-1 (J and pos already written) as constraint rows, with
    the force bound `frictionloss` (friction rows; 0 for the others).

    As in MuJoCo's dense mode, an equality or limit whose rows are all zero adds nothing
    (the stored entries are every entry that can be nonzero).
    """
    r = d.nefc[b]
    if check_empty:
        empty = True
        for k in range(r, r + size):
            for t in range(d.efc_J_rownnz[b, k]):
                if d.efc_J[b, k, t] != 0.0:
                    empty = False
        if empty:
            return
    for k in range(r, r + size):
        d.efc_type[b, k] = ctype
        d.efc_id[b, k] = cid
        d.efc_frictionloss[b, k] = frictionloss
    d.nefc[b] = r + size
    if ctype == T.CNSTR_EQUALITY:
        d.ne[b] += size
    elif ctype == T.CNSTR_FRICTION_DOF or ctype == T.CNSTR_FRICTION_TENDON:
        d.nf[b] += size
    elif ctype == T.CNSTR_LIMIT_JOINT or ctype == T.CNSTR_LIMIT_TENDON:
        d.nl[b] += size


@kernel
def _share_chain(d, b, r, size, n):
    """Rows r+1..r+size-1 get row r's n columns (the rows of one constraint share a chain)."""
    d.efc_J_rownnz[b, r] = n
    for k in range(r + 1, r + size):
        d.efc_J_rownnz[b, k] = n
        for t in range(n):
            d.efc_J_colind[b, k, t] = d.efc_J_colind[b, r, t]


@kernel
def eq_anchors(m, d, b, i):
    """World anchors (p1, p2) and bodies of connect/weld equality i (mj_equalityAnchors).

    Body semantics: connect anchors are eq_data[0:3] on body1 and eq_data[3:6] on body2;
    weld uses eq_data[3:6] on body1 and eq_data[0:3] on body2. Site semantics: the sites.
    """
    o1 = m.eq_obj1id[i]
    o2 = m.eq_obj2id[i]
    if m.eq_objtype[i] == T.OBJ_BODY:
        data = m.eq_data[i]
        s1 = 0 if m.eq_type[i] == T.EQ_CONNECT else 3
        a1 = mv3(d.xmat[b, o1], data[s1 : s1 + 3])
        a2 = mv3(d.xmat[b, o2], data[3 - s1 : 6 - s1])
        x1 = d.xpos[b, o1]
        x2 = d.xpos[b, o2]
        p1 = (a1[0] + x1[0], a1[1] + x1[1], a1[2] + x1[2])
        p2 = (a2[0] + x2[0], a2[1] + x2[1], a2[2] + x2[2])
        return p1, p2, o1, o2
    x1 = d.site_xpos[b, o1]
    x2 = d.site_xpos[b, o2]
    return (x1[0], x1[1], x1[2]), (x2[0], x2[1], x2[2]), m.site_bodyid[o1], m.site_bodyid[o2]


@kernel
def weld_quats(m, d, b, i, body1, body2):
    """(q, q2inv) of weld i: q = q1 * relpose (body) or q1 * site_quat1; q2inv the
    conjugate of q2 (or of q2 * site_quat2)."""
    if m.eq_objtype[i] == T.OBJ_BODY:
        data = m.eq_data[i]
        q = qmul(d.xquat[b, body1], data[6:10])
        q2 = d.xquat[b, body2]
        return q, (q2[0], -q2[1], -q2[2], -q2[3])
    q = qmul(d.xquat[b, body1], m.site_quat[m.eq_obj1id[i]])
    q2 = qmul(d.xquat[b, body2], m.site_quat[m.eq_obj2id[i]])
    return q, (q2[0], -q2[1], -q2[2], -q2[3])


@kernel
def instantiate_equality(m, d, b):
    """Rows of the active connect, weld and joint equalities (mj_instantiateEquality)."""
    Jd = d.scratch_jac[b]
    for i in range(m.neq):
        if not d.eq_active[b, i]:
            continue
        r = d.nefc[b]
        etype = m.eq_type[i]
        if etype == T.EQ_CONNECT or etype == T.EQ_WELD:
            p1, p2, body1, body2 = eq_anchors(m, d, b, i)
            # Jd <- J(body1, p1) - J(body2, p2) on the merged chain (colind of row r)
            n = jac_dif_pair(m, d, b, p2, body2, p1, body1, False, d.efc_J_colind[b, r], Jd[0:3], Jd[3:6])
            size = 3 if etype == T.EQ_CONNECT else 6
            _share_chain(d, b, r, size, n)
            for k in range(3):
                d.efc_pos[b, r + k] = p1[k] - p2[k]
                d.efc_margin[b, r + k] = 0.0
                for t in range(n):
                    d.efc_J[b, r + k, t] = Jd[k, t]
            if etype == T.EQ_CONNECT:
                _commit(m, d, b, 3, T.CNSTR_EQUALITY, i, True)
                continue
            ts = m.eq_data[i, 10]  # torquescale
            q, q2inv = weld_quats(m, d, b, i, body1, body2)
            e = qmul(q2inv, q)
            for k in range(3):
                d.efc_pos[b, r + 3 + k] = e[1 + k] * ts
                d.efc_margin[b, r + 3 + k] = 0.0
            for t in range(n):
                # jr = J_r(body1) - J_r(body2); column: 0.5 (q2^-1 * (0, jr) * q)_xyz
                u = qmul(qmul_axis(q2inv, Jd[3, t], Jd[4, t], Jd[5, t]), q)
                for k in range(3):
                    d.efc_J[b, r + 3 + k, t] = 0.5 * u[1 + k] * ts
            _commit(m, d, b, 6, T.CNSTR_EQUALITY, i, True)
        elif etype == T.EQ_JOINT:
            j1 = m.eq_obj1id[i]
            j2 = m.eq_obj2id[i]
            dof1 = m.jnt_dofadr[j1]
            a1 = m.jnt_qposadr[j1]
            data = m.eq_data[i]
            row = d.efc_J[b, r]
            col = d.efc_J_colind[b, r]
            n = 1
            col[0] = dof1
            row[0] = 1.0
            if j2 >= 0:
                a2 = m.jnt_qposadr[j2]
                poly, deriv = _quartic(data, d.qpos[b, a2] - m.qpos0[a2])
                pos = d.qpos[b, a1] - m.qpos0[a1] - data[0] - poly
                # J = e_dof1 - p'(x) e_dof2, columns ascending
                dof2 = m.jnt_dofadr[j2]
                if dof2 == dof1:
                    row[0] += -deriv
                else:
                    n = 2
                    k = 1 if dof2 > dof1 else 0
                    col[1 - k] = dof1
                    row[1 - k] = 1.0
                    col[k] = dof2
                    row[k] = -deriv
            else:
                pos = d.qpos[b, a1] - m.qpos0[a1] - data[0]
            d.efc_J_rownnz[b, r] = n
            d.efc_pos[b, r] = pos
            d.efc_margin[b, r] = 0.0
            _commit(m, d, b, 1, T.CNSTR_EQUALITY, i, True)
        elif etype == T.EQ_TENDON:
            _tendon_equality(m, d, b, i)


@kernel
def _quartic(data, x):
    """(p(x), p'(x)) of an equality's polynomial p(x) = data1 x + data2 x^2 + data3 x^3 +
    data4 x^4, in MuJoCo's order of operations."""
    poly = data[1] * x + data[2] * x * x + data[3] * x * x * x + data[4] * x * x * x * x
    return poly, data[1] + 2 * data[2] * x + 3 * data[3] * x * x + 4 * data[4] * x * x * x


@kernel
def _tendon_equality(m, d, b, i):
    """The row of tendon equality i (mj_instantiateEquality, mjEQ_TENDON): with
    x = ten_length(t2) - length0(t2) and p(x) = data1 x + ... + data4 x^4,
    pos = ten_length(t1) - length0(t1) - data0 - p(x) and J = J_t1 - p'(x) J_t2 on the
    union of the two tendons' dofs (ascending); one tendon: pos = ten_length - length0 -
    data0, J = J_t1."""
    t1 = m.eq_obj1id[i]
    t2 = m.eq_obj2id[i]
    data = m.eq_data[i]
    r = d.nefc[b]
    row = d.efc_J[b, r]
    col = d.efc_J_colind[b, r]
    deriv = 0.0
    pos = d.ten_length[b, t1] - m.tendon_length0[t1] - data[0]
    if t2 >= 0:
        poly, deriv = _quartic(data, d.ten_length[b, t2] - m.tendon_length0[t2])
        pos -= poly
    # merge the two ascending dof lists
    a1, n1 = m.ten_J_rowadr[t1], m.ten_J_rownnz[t1]
    a2, n2 = (m.ten_J_rowadr[t2], m.ten_J_rownnz[t2]) if t2 >= 0 else (0, 0)
    p1 = 0
    p2 = 0
    n = 0
    while p1 < n1 or p2 < n2:
        c1 = m.ten_J_colind[a1 + p1] if p1 < n1 else m.nv
        c2 = m.ten_J_colind[a2 + p2] if p2 < n2 else m.nv
        dof = min(c1, c2)
        v = 0.0
        if c1 == dof:
            v = d.ten_J[b, t1, dof]
            p1 += 1
        if c2 == dof:
            v += d.ten_J[b, t2, dof] * -deriv
            p2 += 1
        col[n] = dof
        row[n] = v
        n += 1
    d.efc_J_rownnz[b, r] = n
    d.efc_pos[b, r] = pos
    d.efc_margin[b, r] = 0.0
    _commit(m, d, b, 1, T.CNSTR_EQUALITY, i, True)


@kernel
def _tendon_row(m, d, b, r, t, sign):
    """Row r's Jacobian <- sign * tendon t's row of ten_J, on the tendon's dofs (ten_J_colind)."""
    adr = m.ten_J_rowadr[t]
    n = m.ten_J_rownnz[t]
    d.efc_J_rownnz[b, r] = n
    for k in range(n):
        dof = m.ten_J_colind[adr + k]
        d.efc_J_colind[b, r, k] = dof
        d.efc_J[b, r, k] = sign * d.ten_J[b, t, dof]


@kernel
def instantiate_friction(m, d, b):
    """One row per dof and per tendon with frictionloss > 0 (mj_instantiateFriction): J the
    unit row of the dof, or the tendon's row of ten_J; pos = margin = 0; its force is
    bounded by the frictionloss (the solvers' friction rows)."""
    for i in range(m.nv):
        f = m.dof_frictionloss[i]
        if f == 0.0:  # as MuJoCo: only nonzero values (the loader refuses negative ones)
            continue
        r = d.nefc[b]
        d.efc_J_rownnz[b, r] = 1
        d.efc_J_colind[b, r, 0] = i
        d.efc_J[b, r, 0] = 1.0
        d.efc_pos[b, r] = 0.0
        d.efc_margin[b, r] = 0.0
        _commit(m, d, b, 1, T.CNSTR_FRICTION_DOF, i, True, f)
    for t in range(m.ntendon):
        f = m.tendon_frictionloss[t]
        if not f > 0.0:
            continue
        r = d.nefc[b]
        _tendon_row(m, d, b, r, t, 1.0)
        d.efc_pos[b, r] = 0.0
        d.efc_margin[b, r] = 0.0
        _commit(m, d, b, 1, T.CNSTR_FRICTION_TENDON, t, True, f)


@kernel
def _limit_row(m, d, b, dist, margin, ctype, cid):
    d.efc_pos[b, d.nefc[b]] = dist
    d.efc_margin[b, d.nefc[b]] = margin
    _commit(m, d, b, 1, ctype, cid, True)


@kernel
def ball_angle_axis(q):
    """(rotation angle in [0, pi], unit axis (3-tuple)) of the ball joint quaternion q
    (normalized first; MuJoCo's mju_quat2Vel with dt = 1, then mju_normalize3): the angle
    2 atan2(|v|, w), taken the short way round, along the axis v / |v|."""
    w, x, y, z = qnormalized(q)
    a, s = normalize3((x, y, z))
    speed = 2 * math.atan2(s, w)
    if speed > math.pi:
        speed -= 2 * math.pi
    u, angle = normalize3(scl3(a, speed))
    return angle, u


@kernel
def _ball_limit(m, d, b, j):
    """The one row of ball joint j's limit when the rotation angle comes within the margin
    of the range's larger end: dist = max(range) - angle, J = -axis on the joint's three
    dofs (mj_instantiateLimit)."""
    adr = m.jnt_qposadr[j]
    angle, axis = ball_angle_axis(d.qpos[b, adr : adr + 4])
    dist = max(m.jnt_range[j, 0], m.jnt_range[j, 1]) - angle
    margin = m.jnt_margin[j]
    if dist < margin:
        r = d.nefc[b]
        d.efc_J_rownnz[b, r] = 3
        for k in range(3):
            d.efc_J_colind[b, r, k] = m.jnt_dofadr[j] + k
            d.efc_J[b, r, k] = -axis[k]
        _limit_row(m, d, b, dist, margin, T.CNSTR_LIMIT_JOINT, j)


@kernel
def instantiate_limit(m, d, b):
    """Rows of active joint and fixed-tendon limits, lower side first (mj_instantiateLimit);
    a ball joint has one row, on its rotation angle."""
    for j in range(m.njnt):
        if not m.jnt_limited[j]:
            continue
        if m.jnt_type[j] == T.JNT_BALL:
            _ball_limit(m, d, b, j)
            continue
        margin = m.jnt_margin[j]
        value = d.qpos[b, m.jnt_qposadr[j]]
        for side in (-1, 1):
            dist = side * (m.jnt_range[j, (side + 1) // 2] - value)
            if dist < margin:
                r = d.nefc[b]
                d.efc_J_rownnz[b, r] = 1
                d.efc_J_colind[b, r, 0] = m.jnt_dofadr[j]
                d.efc_J[b, r, 0] = -float(side)
                _limit_row(m, d, b, dist, margin, T.CNSTR_LIMIT_JOINT, j)
    for t in range(m.ntendon):
        if not m.tendon_limited[t]:
            continue
        margin = m.tendon_margin[t]
        value = d.ten_length[b, t]
        for side in (-1, 1):
            dist = side * (m.tendon_range[t, (side + 1) // 2] - value)
            if dist < margin:
                _tendon_row(m, d, b, d.nefc[b], t, float(-side))
                _limit_row(m, d, b, dist, margin, T.CNSTR_LIMIT_TENDON, t)


@kernel
def instantiate_contact(m, d, b):
    """Rows of the contacts that are not excluded (mj_instantiateContact, pyramidal cone):
    one row for condim 1, else the 2 (condim - 1) pyramid edges J_n +- mu_k J_k over the
    sliding directions (k = 1, 2), then the spin (condim 4 and 6: the relative rotation about
    the normal) and the two rolling directions (condim 6), each with its own friction
    coefficient (contact_friction: slide, slide, spin, roll, roll)."""
    J1 = d.scratch_jac[b]
    J2 = d.scratch_jac2[b]
    for c in range(d.ncon[b]):
        if d.contact_exclude[b, c]:
            d.contact_efc_address[b, c] = -1
            continue
        r = d.nefc[b]
        d.contact_efc_address[b, c] = r
        pos = d.contact_pos[b, c]
        body1 = m.geom_bodyid[d.contact_geom[b, c, 0]]
        body2 = m.geom_bodyid[d.contact_geom[b, c, 1]]
        # J1[0:3] <- jd = J_p(body2) - J_p(body1) on the chains without their common part
        n = jac_dif_pair(m, d, b, pos, body1, pos, body2, True, d.efc_J_colind[b, r], J1[0:3], J1[3:6])
        # J2[k] <- frame row k . jd (k < 3); with torsional and rolling friction (condim 4, 6)
        # J2[3 + k] <- frame row k . jr, jr = J_r(body2) - J_r(body1), the relative rotation
        fr = d.contact_frame[b, c]
        dim = d.contact_dim[b, c]
        for t in range(n):
            x = J1[0, t]
            y = J1[1, t]
            z = J1[2, t]
            for k in range(3):
                J2[k, t] = fr[3 * k] * x + fr[3 * k + 1] * y + fr[3 * k + 2] * z
            x = J1[3, t]
            y = J1[4, t]
            z = J1[5, t]
            for k in range(dim - 3):
                J2[3 + k, t] = fr[3 * k] * x + fr[3 * k + 1] * y + fr[3 * k + 2] * z
        dist = d.contact_dist[b, c]
        margin = d.contact_includemargin[b, c]
        _share_chain(d, b, r, contact_rows(m, dim), n)
        if dim == 1:
            for t in range(n):
                d.efc_J[b, r, t] = J2[0, t]
            d.efc_pos[b, r] = dist
            d.efc_margin[b, r] = margin
            _commit(m, d, b, 1, T.CNSTR_CONTACT_FRICTIONLESS, c, False)
            continue
        if m.opt_cone == T.CONE_ELLIPTIC:
            # the contact frame's rows as they are; pos and margin on the normal row only
            for k in range(dim):
                for t in range(n):
                    d.efc_J[b, r + k, t] = J2[k, t]
                d.efc_pos[b, r + k] = dist if k == 0 else 0.0
                d.efc_margin[b, r + k] = margin if k == 0 else 0.0
            _commit(m, d, b, dim, T.CNSTR_CONTACT_ELLIPTIC, c, False)
            continue
        for k in range(1, dim):
            mu = d.contact_friction[b, c, k - 1]
            rr = d.nefc[b]
            for t in range(n):
                d.efc_J[b, rr, t] = J2[0, t] + mu * J2[k, t]
                d.efc_J[b, rr + 1, t] = J2[0, t] + -mu * J2[k, t]
            for s in range(2):
                d.efc_pos[b, rr + s] = dist
                d.efc_margin[b, rr + s] = margin
            _commit(m, d, b, 2, T.CNSTR_CONTACT_PYRAMIDAL, c, False)


# ---- regularization ------------------------------------------------------------------------------


@kernel
def diag_approx(m, d, b):
    """efc_diagA: MuJoCo's approximation of diag(J M^-1 J^T) from the inverse weights at
    qpos0 (mj_diagApprox): body translation/rotation, dof and tendon tables."""
    weldcnt = 0
    for i in range(d.nefc[b]):
        cid = d.efc_id[b, i]
        ctype = d.efc_type[b, i]
        if ctype == T.CNSTR_EQUALITY:
            etype = m.eq_type[cid]
            if etype == T.EQ_JOINT:
                da = m.dof_invweight0[m.jnt_dofadr[m.eq_obj1id[cid]]]
                if m.eq_obj2id[cid] >= 0:
                    da += m.dof_invweight0[m.jnt_dofadr[m.eq_obj2id[cid]]]
            elif etype == T.EQ_TENDON:
                da = m.tendon_invweight0[m.eq_obj1id[cid]]
                if m.eq_obj2id[cid] >= 0:
                    da += m.tendon_invweight0[m.eq_obj2id[cid]]
            else:
                b1 = m.eq_obj1id[cid]
                b2 = m.eq_obj2id[cid]
                if m.eq_objtype[cid] == T.OBJ_SITE:
                    b1 = m.site_bodyid[b1]
                    b2 = m.site_bodyid[b2]
                if etype == T.EQ_CONNECT:
                    da = m.body_invweight0[b1, 0] + m.body_invweight0[b2, 0]
                else:  # weld: translation rows, then rotation rows
                    rot = 1 if weldcnt > 2 else 0
                    da = m.body_invweight0[b1, rot] + m.body_invweight0[b2, rot]
                    weldcnt = (weldcnt + 1) % 6
        elif ctype == T.CNSTR_FRICTION_DOF:
            da = m.dof_invweight0[cid]
        elif ctype == T.CNSTR_LIMIT_JOINT:
            da = m.dof_invweight0[m.jnt_dofadr[cid]]
        elif ctype == T.CNSTR_LIMIT_TENDON or ctype == T.CNSTR_FRICTION_TENDON:
            da = m.tendon_invweight0[cid]
        else:
            tran = 0.0
            rot = 0.0
            for side in range(2):
                body = m.geom_bodyid[d.contact_geom[b, cid, side]]
                tran += m.body_invweight0[body, 0]
                rot += m.body_invweight0[body, 1]
            if ctype == T.CNSTR_CONTACT_FRICTIONLESS:
                da = tran
            elif ctype == T.CNSTR_CONTACT_ELLIPTIC:  # row j of the contact: translation for j < 3
                da = tran if i - d.contact_efc_address[b, cid] < 3 else rot
            else:
                # pyramid edge pair j: tran + mu_j^2 tran (sliding directions j < 2)
                j = (i - d.contact_efc_address[b, cid]) // 2
                fri = d.contact_friction[b, cid, j]
                da = tran + fri * fri * (tran if j < 2 else rot)
        d.efc_diagA[b, i] = da


@kernel
def _solparam(m, d, b, i):
    """(solref, solimp) of row i as tuples, with MuJoCo's safety clamps (getsolparam)."""
    cid = d.efc_id[b, i]
    ctype = d.efc_type[b, i]
    if ctype == T.CNSTR_EQUALITY:
        ref = m.eq_solref[cid]
        imp = m.eq_solimp[cid]
    elif ctype == T.CNSTR_FRICTION_DOF:
        ref = m.dof_solref[cid]
        imp = m.dof_solimp[cid]
    elif ctype == T.CNSTR_FRICTION_TENDON:
        ref = m.tendon_solref_fri[cid]
        imp = m.tendon_solimp_fri[cid]
    elif ctype == T.CNSTR_LIMIT_JOINT:
        ref = m.jnt_solref[cid]
        imp = m.jnt_solimp[cid]
    elif ctype == T.CNSTR_LIMIT_TENDON:
        ref = m.tendon_solref_lim[cid]
        imp = m.tendon_solimp_lim[cid]
    else:
        ref = d.contact_solref[b, cid]
        imp = d.contact_solimp[b, cid]
    r0 = ref[0]
    r1 = ref[1]
    if (r0 > 0) != (r1 > 0):  # mixed format: MuJoCo's default (the loader refuses these)
        r0 = 0.02
        r1 = 1.0
    if not (m.opt_disableflags & T.DSBL_REFSAFE) and r0 > 0:
        r0 = max(r0, 2 * m.opt_timestep)
    s0 = min(MAXIMP, max(MINIMP, imp[0]))
    s1 = min(MAXIMP, max(MINIMP, imp[1]))
    s2 = max(0.0, imp[2])
    s3 = min(MAXIMP, max(MINIMP, imp[3]))
    s4 = max(1.0, imp[4])
    return (r0, r1), (s0, s1, s2, s3, s4)


@kernel
def _posdim(m, d, b, i):
    """(pos, dim): the violation that sets the impedance of row i and the rows sharing it
    (getposdim): a connect or weld uses the norm of its 3 or 6 rows, a pyramid its edges."""
    ctype = d.efc_type[b, i]
    pos = d.efc_pos[b, i]
    if ctype == T.CNSTR_CONTACT_PYRAMIDAL:
        return pos, rows_of_contact(d.contact_dim[b, d.efc_id[b, i]])
    if ctype == T.CNSTR_CONTACT_ELLIPTIC:
        return pos, d.contact_dim[b, d.efc_id[b, i]]
    if ctype == T.CNSTR_EQUALITY:
        etype = m.eq_type[d.efc_id[b, i]]
        if etype == T.EQ_WELD or etype == T.EQ_CONNECT:
            n = 6 if etype == T.EQ_WELD else 3
            return math.sqrt(dot(d.efc_pos[b, i : i + n], d.efc_pos[b, i : i + n], n)), n
    return pos, 1


@kernel
def _power(a, p):
    if p == 1:
        return a
    if p == 2:
        return a * a
    return a**p


@kernel
def impedance(solimp, pos, margin):
    """(imp, dimp/dpos) of the impedance sigmoid at violation pos (MuJoCo's getimpedance).

    x = |pos - margin| / width; imp = d0 + y(x) (dwidth - d0) with y(x) = a x^p for
    x <= midpoint, 1 - b (1 - x)^p above it (a, b make y continuous at the midpoint).
    """
    d0, d1, width, mid, p = solimp
    if d0 == d1 or width <= MINVAL:
        return 0.5 * (d0 + d1), 0.0
    x = (pos - margin) / width
    sgn = 1.0
    if x < 0:
        x = -x
        sgn = -1.0
    if x >= 1 or x <= 0:
        return (d1 if x >= 1 else d0), 0.0
    if p == 1:
        y = x
        yp = 1.0
    elif x <= mid:
        a = 1 / _power(mid, p - 1)
        y = a * _power(x, p)
        yp = p * a * _power(x, p - 1)
    else:
        c = 1 / _power(1 - mid, p - 1)
        y = 1 - c * _power(1 - x, p)
        yp = p * c * _power(1 - x, p - 1)
    return d0 + y * (d1 - d0), yp * sgn * (d1 - d0) / width


@kernel
def make_impedance(m, d, b):
    """efc_R, efc_D, efc_KBIP and the consistent efc_diagA (mj_makeImpedance); contact_mu."""
    nefc = d.nefc[b]
    R = d.efc_R[b]
    KBIP = d.efc_KBIP[b]
    i = 0
    while i < nefc:
        ref, solimp = _solparam(m, d, b, i)
        pos, dim = _posdim(m, d, b, i)
        imp, impP = impedance(solimp, pos, d.efc_margin[b, i])
        dmax = solimp[1]
        friction = d.efc_type[b, i] in (T.CNSTR_FRICTION_DOF, T.CNSTR_FRICTION_TENDON)
        elliptic = d.efc_type[b, i] == T.CNSTR_CONTACT_ELLIPTIC
        for j in range(i, i + dim):
            R[j] = max(MINVAL, (1 - imp) * d.efc_diagA[b, j] / imp)
            r0 = ref[0]
            r1 = ref[1]
            # an elliptic cone's friction rows take the contact's solreffriction if it is set
            cone_friction = elliptic and j > i
            if cone_friction:
                rf = d.contact_solreffriction[b, d.efc_id[b, i]]
                if rf[0] != 0.0 or rf[1] != 0.0:
                    r0 = rf[0]
                    r1 = rf[1]
            if friction or cone_friction:  # no position error to correct: K = 0
                KBIP[j, 0] = 0.0
            elif r0 > 0:
                KBIP[j, 0] = 1 / max(MINVAL, dmax * dmax * r0 * r0 * r1 * r1)
            else:
                KBIP[j, 0] = -r0 / max(MINVAL, dmax * dmax)
            if r1 > 0:
                KBIP[j, 1] = 2 / max(MINVAL, dmax * r0)
            else:
                KBIP[j, 1] = -r1 / max(MINVAL, dmax)
            KBIP[j, 2] = imp
            KBIP[j, 3] = impP
        i += dim
    # frictional contacts: R[1] = R[0] / impratio and the regularized cone's mu; an elliptic
    # cone's other friction rows get R[j] mu_j^2 = R[1] mu_1^2, a pyramid one R for every
    # edge, matching the friction impedance of the elliptic cone
    i = d.ne[b]
    while i < nefc:
        ctype = d.efc_type[b, i]
        if ctype != T.CNSTR_CONTACT_PYRAMIDAL and ctype != T.CNSTR_CONTACT_ELLIPTIC:
            i += 1
            continue
        c = d.efc_id[b, i]
        fr = d.contact_friction[b, c]
        R[i + 1] = R[i] / max(MINVAL, m.opt_impratio)
        mu = fr[0] * math.sqrt(R[i + 1] / R[i])
        d.contact_mu[b, c] = mu
        dim = d.contact_dim[b, c]
        if ctype == T.CNSTR_CONTACT_ELLIPTIC:
            for j in range(1, dim - 1):
                R[i + j + 1] = R[i + 1] * fr[0] * fr[0] / (fr[j] * fr[j])
            i += dim
            continue
        rpy = 2 * mu * mu * R[i]
        n = rows_of_contact(dim)
        for j in range(i, i + n):
            R[j] = rpy
        i += n
    for j in range(nefc):
        d.efc_D[b, j] = 1 / R[j]
        d.efc_diagA[b, j] = R[j] * KBIP[j, 2] / (1 - KBIP[j, 2])


@unit
def make_constraint(m, d, b):
    """All constraint rows of row b and their regularization (mj_makeConstraint).

    Needs the position stage (kinematics, com_pos, tendon) and collision. Rows never
    exceed Model.nefcmax: it counts every equality, both sides of every limit and nconmax
    contacts of the largest condim.
    """
    d.nefc[b] = 0
    d.ne[b] = 0
    d.nf[b] = 0
    d.nl[b] = 0
    flags = m.opt_disableflags
    if flags & T.DSBL_CONSTRAINT:
        return
    if not (flags & T.DSBL_EQUALITY):
        instantiate_equality(m, d, b)
    if not (flags & T.DSBL_FRICTIONLOSS):
        instantiate_friction(m, d, b)
    if not (flags & T.DSBL_LIMIT):
        instantiate_limit(m, d, b)
    if not (flags & T.DSBL_CONTACT):
        instantiate_contact(m, d, b)
    if d.nefc[b] == 0:
        return
    if m.efc_dense:
        _densify(m, d, b)
    diag_approx(m, d, b)
    make_impedance(m, d, b)


@kernel
def _densify(m, d, b):
    """Every row stored over all nv dofs (Model.efc_dense): entries moved to their
    columns, zeros elsewhere, efc_J_colind[i] = 0..nv-1. The entries are moved last
    first: column col[t] >= t, so no entry is overwritten before it has moved."""
    nv = m.nv
    for i in range(d.nefc[b]):
        row = d.efc_J[b, i]
        col = d.efc_J_colind[b, i]
        n = d.efc_J_rownnz[b, i]
        if n == nv:
            continue
        k = nv - 1
        for t in range(n - 1, -1, -1):
            c = col[t]
            x = row[t]
            while k > c:
                row[k] = 0.0
                k -= 1
            row[c] = x
            k = c - 1
        while k >= 0:
            row[k] = 0.0
            k -= 1
        for k in range(nv):
            col[k] = k
        d.efc_J_rownnz[b, i] = nv


# ---- reference acceleration ----------------------------------------------------------------------


@kernel
def _jdotv(m, d, b):
    """aref -= (dJ/dt) qvel on the connect and weld rows (MuJoCo 4's mj_Jdotv)."""
    row = 0
    ne = d.ne[b]
    while row < ne:
        i = d.efc_id[b, row]
        etype = m.eq_type[i]
        if etype != T.EQ_CONNECT and etype != T.EQ_WELD:
            row += 1
            continue
        p1, p2, body1, body2 = eq_anchors(m, d, b, i)
        jdv1, jrdv1 = jac_dot_vel(m, d, b, p1, body1)
        jdv2, jrdv2 = jac_dot_vel(m, d, b, p2, body2)
        for k in range(3):
            d.efc_aref[b, row + k] -= jdv1[k] - jdv2[k]
        row += 3
        if etype != T.EQ_WELD:
            continue
        # rotation rows: d/dt of 0.5 q2^-1 (J1 - J2) qvel q, three product-rule terms
        ts = m.eq_data[i, 10]
        q, q2inv = weld_quats(m, d, b, i, body1, body2)
        w1 = d.cvel[b, body1]
        w2 = d.cvel[b, body2]
        dw0, dw1, dw2 = w1[0] - w2[0], w1[1] - w2[1], w1[2] - w2[2]
        x1 = d.xquat[b, body1]
        x2 = d.xquat[b, body2]
        q1full = (x1[0], x1[1], x1[2], x1[3])
        q2full = (x2[0], x2[1], x2[2], x2[3])
        if m.eq_objtype[i] == T.OBJ_SITE:
            q1full = qmul(q1full, m.site_quat[m.eq_obj1id[i]])
            q2full = qmul(q2full, m.site_quat[m.eq_obj2id[i]])
        qd1 = qderiv(q1full, w1)
        if m.eq_objtype[i] == T.OBJ_BODY:
            qd1 = qmul(qd1, m.eq_data[i, 6:10])
        qd2 = qderiv(q2full, w2)
        qd2inv = (qd2[0], -qd2[1], -qd2[2], -qd2[3])
        t1 = qmul(qmul_axis(qd2inv, dw0, dw1, dw2), q)
        t2 = qmul(qmul_axis(q2inv, jrdv1[0] - jrdv2[0], jrdv1[1] - jrdv2[1], jrdv1[2] - jrdv2[2]), q)
        t3 = qmul(qmul_axis(q2inv, dw0, dw1, dw2), qd1)
        for k in range(3):
            d.efc_aref[b, row + k] -= 0.5 * (t1[1 + k] + t2[1 + k] + t3[1 + k]) * ts
        row += 3


@unit
def reference_constraint(m, d, b):
    """efc_vel = J qvel and efc_aref = -B vel - K I (pos - margin) (mj_referenceConstraint);
    needs com_vel (cvel, cdof_dot) for the connect/weld correction."""
    qvel = d.qvel[b]
    for i in range(d.nefc[b]):
        vel = dot_row(m, d, b, i, qvel)
        d.efc_vel[b, i] = vel
        k = d.efc_KBIP[b, i]
        d.efc_aref[b, i] = -k[1] * vel - k[0] * k[2] * (d.efc_pos[b, i] - d.efc_margin[b, i])
    if d.ne[b] > 0:
        _jdotv(m, d, b)


# ---- contact forces ------------------------------------------------------------------------------


@kernel
def contact_normal_force(d, b, c):
    """Normal force of contact c (mj_contactForce's first number): the force of its first row
    for condim 1 and in the elliptic cone (whose rows are the contact frame's), the sum of
    its pyramid edge forces otherwise; 0 for a contact without rows."""
    adr = d.contact_efc_address[b, c]
    if adr < 0:
        return 0.0
    dim = d.contact_dim[b, c]
    if dim == 1 or d.efc_type[b, adr] == T.CNSTR_CONTACT_ELLIPTIC:
        return d.efc_force[b, adr]
    s = 0.0
    for k in range(2 * (dim - 1)):
        s += d.efc_force[b, adr + k]
    return s


@kernel
def contact_force(m, d, b, c, out):
    """out (6,) = force:torque of contact c in its frame (normal first) (mj_contactForce):
    an elliptic cone's rows are those components; from pyramid edge forces
    (mju_decodePyramid) f_n = sum of the edges (contact_normal_force),
    f_tk = (f_k+ - f_k-) mu_k. Zero for a contact without rows."""
    for k in range(6):
        out[k] = 0.0
    out[0] = contact_normal_force(d, b, c)
    adr = d.contact_efc_address[b, c]
    dim = d.contact_dim[b, c]
    if adr < 0 or dim == 1:
        return
    if d.efc_type[b, adr] == T.CNSTR_CONTACT_ELLIPTIC:
        for k in range(1, dim):
            out[k] = d.efc_force[b, adr + k]
        return
    for k in range(dim - 1):
        edge = d.efc_force[b, adr + 2 * k] - d.efc_force[b, adr + 2 * k + 1]
        out[k + 1] = edge * d.contact_friction[b, c, k]


# ---- for users and tests -------------------------------------------------------------------------


def dense_efc_J(model, data) -> np.ndarray:
    """(B, nefcmax, nv) dense constraint Jacobian of every row from Data's compact rows:
    J[b, i, efc_J_colind[b, i, t]] = efc_J[b, i, t] for t < efc_J_rownnz[b, i]; zero in
    every other column and in rows i >= nefc[b] (what MuJoCo's dense efc_J, or
    mju_sparse2dense of its sparse one, holds for the first nefc rows)."""
    nv = int(model.nv)
    J = np.asarray(data.efc_J)
    if J.ndim != 3 or J.shape[2] != model.nefcdof:
        raise InvalidArgumentError(
            f"data.efc_J has shape {J.shape}; this model's rows are nefcdof={model.nefcdof} wide"
        )
    batch, rows, width = J.shape
    nnz = np.asarray(data.efc_J_rownnz)
    live = np.arange(rows)[None, :] < np.asarray(data.nefc)[:, None]
    keep = (np.arange(width)[None, None, :] < nnz[:, :, None]) & live[:, :, None]
    b, i, t = np.nonzero(keep)
    out = np.zeros((batch, rows, nv))
    out[b, i, np.asarray(data.efc_J_colind)[b, i, t]] = J[b, i, t]
    return out
