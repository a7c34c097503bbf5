"""Forward dynamics of one environment: only sequences the stages (MuJoCo's mj_forward).

position:     kinematics -> com_pos -> tendon -> crb -> factor -> collision -> constraint
              rows -> transmission
velocity:     tendon/actuator velocity -> com_vel -> passive -> constraint reference -> rne
acceleration: actuation -> qfrc_smooth -> qacc_smooth = M^-1 qfrc_smooth -> constraint
              solver (qacc, qfrc_constraint)
sensors:      a unit of its own (engine.sensors), read after the acceleration stage

Collision, the constraint rows and the solver are separately compiled units, called
through their addresses in the Model record (`m.unit_*`); a model that has no contacts or
constraints has no rows, never calls them, and never compiles them.
"""

from robodyn.engine.actuation import actuation, actuator_velocity, transmission
from robodyn.engine.com_pos import com_pos
from robodyn.engine.com_vel import com_vel
from robodyn.engine.crb import crb
from robodyn.engine.factor import factor_m, solve_ld
from robodyn.engine.jacobian import apply_ft
from robodyn.engine.jit import kernel, unit
from robodyn.engine.kinematics import kinematics
from robodyn.engine.passive import passive
from robodyn.engine.ptr import call_unit
from robodyn.engine.rne import bias
from robodyn.engine.tendon import tendon, tendon_velocity


@kernel
def fwd_position(m, d, b):
    """Everything that depends on qpos only."""
    kinematics(m, d, b)
    com_pos(m, d, b)
    tendon(m, d, b)
    crb(m, d, b)
    factor_m(m, d, b)
    # engine.binding sets the unit addresses: collision when contacts are enabled and some
    # geom pair can collide, the constraint units when the model can have rows (nefcmax > 0)
    if m.unit_collision != 0:
        call_unit(m.unit_collision, m, d, b)
    else:
        d.ncon[b] = 0
        d.contact_lost[b] = 0
    if m.unit_make_constraint != 0:
        call_unit(m.unit_make_constraint, m, d, b)
    else:
        d.nefc[b] = 0
        d.ne[b] = 0
        d.nf[b] = 0
        d.nl[b] = 0
    transmission(m, d, b)


@kernel
def fwd_velocity(m, d, b):
    """Everything that depends on qpos and qvel."""
    tendon_velocity(m, d, b)
    actuator_velocity(m, d, b)
    com_vel(m, d, b)
    passive(m, d, b)
    if d.nefc[b] > 0:
        call_unit(m.unit_reference_constraint, m, d, b)
    bias(m, d, b)


@kernel
def smooth_acceleration(m, d, b):
    """qfrc_smooth = passive - bias + applied + actuator + J^T xfrc;  qacc_smooth =
    M^-1 qfrc_smooth (MuJoCo's mj_fwdAcceleration)."""
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


@kernel
def fwd_acceleration(m, d, b):
    """smooth_acceleration, then the constraint solver gives qacc and qfrc_constraint
    (mj_fwdConstraint; qacc = qacc_smooth without rows)."""
    smooth_acceleration(m, d, b)
    acc = d.qacc_smooth[b]
    if d.nefc[b] > 0:
        call_unit(m.unit_solver, m, d, b)
    else:
        for i in range(m.nv):
            d.qfrc_constraint[b, i] = 0.0
            d.qacc[b, i] = acc[i]
        d.solver_niter[b] = 0
        d.solver_improvement[b] = 0.0
        d.solver_gradient[b] = 0.0
        d.solver_converged[b] = 1
        d.nisland[b] = 0  # no rows, no islands (mj_island)
        d.nidof[b] = 0
        for k in range(m.ntree):
            d.island_niter[b, k] = 0
            d.island_converged[b, k] = 1
            d.noslip_niter[b, k] = 0
            d.noslip_improvement[b, k] = 0.0


@unit
def forward(m, d, b):
    """Forward dynamics of row b up to qacc (mj_forward without the sensors): the position,
    velocity, actuation and acceleration stages in one compiled function."""
    fwd_position(m, d, b)
    fwd_velocity(m, d, b)
    actuation(m, d, b)
    fwd_acceleration(m, d, b)


@unit
def forward_posvel(m, d, b):
    """The position and velocity stages of row b (MuJoCo's mj_step1 without the sensors):
    everything that depends on qpos and qvel, not on the controls. A drive that sets the
    controls from the state (engine.drive's PD) acts after it, then forward_acc. Compiled only
    for simulators that run such a drive: `forward`, the two fused, is faster (measured on the
    crane: 253 against 331 ns a pass)."""
    fwd_position(m, d, b)
    fwd_velocity(m, d, b)


@unit
def forward_acc(m, d, b):
    """The actuation and acceleration stages of row b (the forward part of mj_step2):
    actuator forces from ctrl, qacc_smooth, and the constraint solver's qacc."""
    actuation(m, d, b)
    fwd_acceleration(m, d, b)
