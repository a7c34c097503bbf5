"""Stage 13, sensors: the observation vector `sensordata` (MuJoCo's mj_sensor*)."""

from engine import types as T
from engine.jit import kernel


@kernel
def sensors(m, d, b):
    """sensordata of row b."""
    out = d.sensordata[b]
    for s in range(m.nsensor):
        adr = m.sensor_adr[s]
        oid = m.sensor_objid[s]
        st = m.sensor_type[s]
        if st == T.SENS_JOINTPOS:
            out[adr] = d.qpos[b, m.jnt_qposadr[oid]]
        elif st == T.SENS_JOINTVEL:
            out[adr] = d.qvel[b, m.jnt_dofadr[oid]]
        elif st == T.SENS_ACTUATORFRC:
            out[adr] = d.actuator_force[b, oid]
