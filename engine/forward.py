"""Forward dynamics of one environment: only sequences the stages (MuJoCo's mj_forward).

position:     kinematics -> com_pos -> tendon -> crb -> factor -> collision -> constraint
              rows -> transmission
velocity:     tendon/actuator velocity -> com_vel -> passive -> constraint reference -> rne
acceleration: actuation -> qfrc_smooth -> qacc_smooth = M^-1 qfrc_smooth -> constraint
              solver (qacc, qfrc_constraint)
sensors:      read after the acceleration stage
"""

from engine import types as T
from engine.actuation import actuation, actuator_velocity, transmission
from engine.collision_driver import collision
from engine.com_pos import com_pos
from engine.com_vel import com_vel
from engine.constraint import make_constraint, reference_constraint
from engine.crb import crb
from engine.factor import factor_m, solve_ld
from engine.jacobian import apply_ft
from engine.jit import kernel, stage
from engine.kinematics import kinematics
from engine.passive import passive
from engine.rne import bias
from engine.sensors import sensors
from engine.solver import fwd_constraint
from engine.tendon import tendon, tendon_velocity


@stage
def fwd_position(m, d, b):
    """Everything that depends on qpos only."""
    kinematics(m, d, b)
    com_pos(m, d, b)
    tendon(m, d, b)
    crb(m, d, b)
    factor_m(m, d, b)
    if m.opt_disableflags & (T.DSBL_CONSTRAINT | T.DSBL_CONTACT):
        d.ncon[b] = 0
        d.contact_lost[b] = 0
    else:
        collision(m, d, b)
    # the constraint stages are kernel calls, which cost a few hundred ns each in argument
    # passing alone: a model that can have no constraint rows skips them
    if m.nefcmax > 0:
        make_constraint(m, d, b)
    else:
        d.nefc[b] = 0
        d.ne[b] = 0
        d.nl[b] = 0
    transmission(m, d, b)


@stage
def fwd_velocity(m, d, b):
    """Everything that depends on qpos and qvel."""
    tendon_velocity(m, d, b)
    actuator_velocity(m, d, b)
    com_vel(m, d, b)
    passive(m, d, b)
    if d.nefc[b] > 0:
        reference_constraint(m, d, b)
    bias(m, d, b)


@stage
def fwd_acceleration(m, d, b):
    """qfrc_smooth = passive - bias + applied + actuator + J^T xfrc;  qacc_smooth =
    M^-1 qfrc_smooth; then the constraint solver gives qacc and qfrc_constraint."""
    f = d.qfrc_smooth[b]
    for i in range(m.nv):
        f[i] = d.qfrc_passive[b, i] - d.qfrc_bias[b, i] + d.qfrc_applied[b, i] + d.qfrc_actuator[b, i]
    for i in range(1, m.nbody):
        x = d.xfrc_applied[b, i]
        if x[0] != 0 or x[1] != 0 or x[2] != 0 or x[3] != 0 or x[4] != 0 or x[5] != 0:
            apply_ft(m, d, b, x[0:3], x[3:6], d.xipos[b, i], i, f)
    acc = d.qacc_smooth[b]
    for i in range(m.nv):
        acc[i] = f[i]
    solve_ld(acc, d.qLD[b], d.qLDiagInv[b], m)
    if d.nefc[b] > 0:
        fwd_constraint(m, d, b)
    else:
        for i in range(m.nv):
            d.qfrc_constraint[b, i] = 0.0
            d.qacc[b, i] = acc[i]
        d.solver_niter[b] = 0
        d.solver_improvement[b] = 0.0
        d.solver_gradient[b] = 0.0
        d.solver_converged[b] = 1


@kernel
def forward_row(m, d, b, flg_sensors):
    """Full forward dynamics of row b; sensors only if flg_sensors."""
    fwd_position(m, d, b)
    fwd_velocity(m, d, b)
    actuation(m, d, b)
    fwd_acceleration(m, d, b)
    if flg_sensors and not (m.opt_disableflags & T.DSBL_SENSOR):
        sensors(m, d, b)
