"""Fixed tendons: a length that is a linear combination of joint coordinates.

    ten_length_t = sum_k coef_k qpos[joint_k],   ten_J[t, dof_k] += coef_k,
    ten_velocity_t = ten_J[t] . qvel

(MuJoCo's mj_tendon for `<fixed>` tendons.) The Jacobian is constant but is written per
row so that the transmission and passive stages read one place.
"""

from engine.jit import kernel


@kernel
def tendon(m, d, b):
    """ten_length and ten_J of row b."""
    for t in range(m.ntendon):
        length = 0.0
        for v in range(m.nv):
            d.ten_J[b, t, v] = 0.0
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
        v = 0.0
        for w in range(m.tendon_adr[t], m.tendon_adr[t] + m.tendon_num[t]):
            dof = m.jnt_dofadr[m.wrap_objid[w]]
            v += m.wrap_prm[w] * d.qvel[b, dof]
        d.ten_velocity[b, t] = v
