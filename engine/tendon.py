"""Tendons (MuJoCo's mj_tendon). A fixed tendon's length is a linear combination of joint
coordinates:

    ten_length_t = sum_k coef_k qpos[joint_k],   ten_J[t, dof_k] += coef_k,
    ten_velocity_t = ten_J[t] . qvel

The Jacobian is constant but is written per row so that the transmission and passive
stages read one place. A spatial tendon through sites s_0 .. s_n (no wrapping geoms) is
the polyline through them:

    ten_length = sum_k |x_k+1 - x_k| / D,
    ten_J += u_k^T (J_p(body_k+1, x_k+1) - J_p(body_k, x_k)) / D,  u_k = (x_k+1 - x_k) / |.|

for each segment whose two sites are on different bodies (world-frame point Jacobians),
and ten_velocity = ten_J qvel. D is 1 until a pulley, which starts a new branch and sets D
to its divisor for the segments after it.
"""

import math

from engine import types as T
from engine.constraint import dot
from engine.jacobian import jac_dif_pair
from engine.jit import kernel


@kernel
def _spatial(m, d, b, t):
    """ten_length and ten_J of spatial tendon t (sites only), ten_J already zero."""
    adr = m.tendon_adr[t]
    chain = d.scratch_chain[b]
    jacp = d.scratch_jac[b, 0:3]
    jacr = d.scratch_jac[b, 3:6]
    length = 0.0
    divisor = 1.0
    for w in range(adr, adr + m.tendon_num[t] - 1):
        if m.wrap_type[w] == T.WRAP_PULLEY or m.wrap_type[w + 1] == T.WRAP_PULLEY:
            if m.wrap_type[w] == T.WRAP_PULLEY:
                divisor = m.wrap_prm[w]
            continue
        s0 = m.wrap_objid[w]
        s1 = m.wrap_objid[w + 1]
        x0 = d.site_xpos[b, s0]
        x1 = d.site_xpos[b, s1]
        dx = x1[0] - x0[0]
        dy = x1[1] - x0[1]
        dz = x1[2] - x0[2]
        norm = math.sqrt(dx * dx + dy * dy + dz * dz)
        length += norm / divisor
        b0 = m.site_bodyid[s0]
        b1 = m.site_bodyid[s1]
        if b0 == b1:
            continue
        if norm >= 1e-15:  # mju_normalize3: a collapsed segment's direction is (1, 0, 0)
            inv = 1 / norm
            dx, dy, dz = dx * inv, dy * inv, dz * inv
        else:
            dx, dy, dz = 1.0, 0.0, 0.0
        n = jac_dif_pair(m, d, b, x0, b0, x1, b1, False, chain, jacp, jacr)
        scale = 1 / divisor
        for k in range(n):
            d.ten_J[b, t, chain[k]] += (jacp[0, k] * dx + jacp[1, k] * dy + jacp[2, k] * dz) * scale
    d.ten_length[b, t] = length


@kernel
def tendon(m, d, b):
    """ten_length and ten_J of row b."""
    for t in range(m.ntendon):
        length = 0.0
        for v in range(m.nv):
            d.ten_J[b, t, v] = 0.0
        if m.wrap_type[m.tendon_adr[t]] == T.WRAP_SITE:
            _spatial(m, d, b, t)
            continue
        for w in range(m.tendon_adr[t], m.tendon_adr[t] + m.tendon_num[t]):
            j = m.wrap_objid[w]
            coef = m.wrap_prm[w]
            length += coef * d.qpos[b, m.jnt_qposadr[j]]
            d.ten_J[b, t, m.jnt_dofadr[j]] += coef
        d.ten_length[b, t] = length


@kernel
def tendon_velocity(m, d, b):
    """ten_velocity = ten_J qvel for row b."""
    for t in range(m.ntendon):
        if m.wrap_type[m.tendon_adr[t]] == T.WRAP_SITE:
            d.ten_velocity[b, t] = dot(d.ten_J[b, t], d.qvel[b], m.nv)
            continue
        v = 0.0
        for w in range(m.tendon_adr[t], m.tendon_adr[t] + m.tendon_num[t]):
            dof = m.jnt_dofadr[m.wrap_objid[w]]
            v += m.wrap_prm[w] * d.qvel[b, dof]
        d.ten_velocity[b, t] = v
