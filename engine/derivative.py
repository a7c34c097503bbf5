"""Velocity derivatives of the smooth force, for the implicit integrators.

qDeriv = d(qfrc_smooth)/d(qvel) = d(qfrc_actuator)/dv + d(qfrc_passive)/dv - d(qfrc_bias)/dv

- actuators (affine gain/bias): moment^T (gainprm[2] x + biasprm[2]) moment, skipped while
  the force sits on a forcerange limit (MuJoCo's mjd_actuator_vel). x is the gain's input
  as the forward pass takes it, but unclamped: ctrl for a stateless actuator (MuJoCo reads
  d->ctrl here, not the ctrlrange-clamped copy), act for a stateful one, or with actearly
  the next activation (act_dot reads ctrl and act, not qvel: no other term)
- dampers: -diag(dof_damping) and -damping_t ten_J^T ten_J per tendon (mjd_passive_vel)
- only pairs of dofs on one ancestor chain are kept (Model.D_mask, MuJoCo's D pattern): a
  tendon or actuator coupling two branches or two trees gets no cross term, as in MuJoCo
- bias (implicit only): c(q, v) - g(q) is a quadratic form B(v, v) in v, so its derivative
  column j is exactly 2 B(v, e_j) = [c(v + s e_j) - c(v - s e_j)] / (2 s) for any s: central
  differencing of a quadratic has no truncation error. We evaluate RNE twice per column with
  gravity off; the result is the analytic derivative up to rounding.
"""

from robodyn.engine import types as T
from robodyn.engine.actuation import next_activation
from robodyn.engine.com_vel import com_vel_at
from robodyn.engine.jit import kernel
from robodyn.engine.rne import rne_at


@kernel
def smooth_vel(m, d, b, flg_bias):
    """qDeriv of row b; the bias derivative only if flg_bias (implicit, not implicitfast)."""
    nv = m.nv
    D = d.qDeriv[b]
    for i in range(nv):
        for j in range(nv):
            D[i, j] = 0.0
    if not (m.opt_disableflags & T.DSBL_ACTUATION):
        for a in range(m.nu):
            if m.actuator_forcelimited[a]:
                f = d.actuator_force[b, a]
                if f <= m.actuator_forcerange[a, 0] or f >= m.actuator_forcerange[a, 1]:
                    continue
            bias_vel = 0.0
            if m.actuator_biastype[a] == T.BIAS_AFFINE:
                bias_vel = m.actuator_biasprm[a, 2]
            if m.actuator_gaintype[a] == T.GAIN_AFFINE:
                gain_vel = m.actuator_gainprm[a, 2]
                if gain_vel != 0.0:
                    adr = m.actuator_actadr[a]
                    if adr < 0:
                        x = d.ctrl[b, a]
                    elif m.actuator_actearly[a]:
                        x = next_activation(m, d, b, a, d.act_dot[b, adr])
                    else:
                        x = d.act[b, adr]
                    bias_vel += gain_vel * x
            if bias_vel != 0.0:
                mom = d.actuator_moment[b, a]
                for i in range(nv):
                    if mom[i] != 0.0:
                        for j in range(nv):
                            if m.D_mask[i, j]:
                                D[i, j] += mom[i] * bias_vel * mom[j]
    if not (m.opt_disableflags & T.DSBL_DAMPER):
        for i in range(nv):
            D[i, i] -= m.dof_damping[i]
        for t in range(m.ntendon):
            c = m.tendon_damping[t]
            if c != 0.0:
                J = d.ten_J[b, t]
                for i in range(nv):
                    if J[i] != 0.0:
                        for j in range(nv):
                            if m.D_mask[i, j]:
                                D[i, j] -= c * J[i] * J[j]
    if flg_bias:
        bias_vel_columns(m, d, b, 0, nv)


@kernel
def bias_vel_columns(m, d, b, col0, ncol):
    """qDeriv[:, col0:col0+ncol] -= d(qfrc_bias)/d(qvel) for those columns, at row b's state."""
    nv = m.nv
    qvel = d.qvel[b]
    vp = d.scratch_v[b, 4]
    cp = d.scratch_v[b, 1]
    cm = d.scratch_v[b, 2]
    work = d.scratch_body[b]
    cvel = d.scratch_cvel[b]
    cdof_dot = d.scratch_cdof_dot[b]
    s = 1.0
    for i in range(nv):
        s = max(s, abs(qvel[i]))
    for j in range(col0, col0 + ncol):
        for i in range(nv):
            vp[i] = qvel[i]
        vp[j] = qvel[j] + s
        com_vel_at(m, d, b, vp, cvel, cdof_dot)
        rne_at(m, d, b, vp, cvel, cdof_dot, False, False, vp, cp, work[0], work[1])
        vp[j] = qvel[j] - s
        com_vel_at(m, d, b, vp, cvel, cdof_dot)
        rne_at(m, d, b, vp, cvel, cdof_dot, False, False, vp, cm, work[0], work[1])
        for i in range(nv):
            d.qDeriv[b, i, j] -= (cp[i] - cm[i]) / (2.0 * s)
