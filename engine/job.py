"""The job record: what one call of the batched driver (engine.step.run_rows) does.

A call's arguments are the rows' Model records, the Data record and one Job record, a
third word record laid out like the other two (engine.ptr): compiled code reads
`job.nstep` or `job.target[b]` from it. The Python side (`engine.binding.JobRecord`) keeps
one per Simulator and writes only the words a call changes, so a plain step writes three
integers and a drive's step points the record at its command array.

    kind    JOB_FORWARD, JOB_STEP or JOB_ROLLOUT
    nstep   steps per row (JOB_STEP, JOB_ROLLOUT: the length of the control sequence)
    flags   engine.types STEP_* bits (observe the end state, reset bad rows, gravity
            compensation for a PD drive)
    drive   DRIVE_NONE, DRIVE_ACCELERATION or DRIVE_PD (JOB_STEP)
    rows    (B,) uint8: 1 for each row the call runs
    index   (k, 2) int32: the driven (dof, actuator) pairs of a drive
    gain    (k, 2): each driven dof's (kp, kd)
    target  (B, k): each row's drive commands
    ctrl    (B, T, nu): a rollout's controls; qpos, qvel, act, sensordata (B, T, ...) its records

A field a job does not use is never read (`drive` and the drive arrays only with JOB_STEP,
the rollout arrays only with JOB_ROLLOUT).
"""

from llvmlite import ir
from numba import types
from numba.core import ir_utils
from numba.extending import intrinsic

from robodyn.engine.ptr import StructPtr, points_outside

JOB_FORWARD = 0
JOB_STEP = 1
JOB_ROLLOUT = 2

_F64_3 = types.Array(types.float64, 3, "C")

JOB_PTR = StructPtr(
    "Job",
    (
        ("kind", types.int64),
        ("nstep", types.int64),
        ("flags", types.int64),
        ("drive", types.int64),
        ("rows", types.Array(types.uint8, 1, "C")),
        ("index", types.Array(types.int32, 2, "C")),
        ("gain", types.Array(types.float64, 2, "C")),
        ("target", types.Array(types.float64, 2, "C")),
        ("ctrl", _F64_3),
        ("qpos", _F64_3),
        ("qvel", _F64_3),
        ("act", _F64_3),
        ("sensordata", _F64_3),
    ),
)


@intrinsic
def job_at(typingctx, address):
    """The Job record at `address` (an int from engine.binding.JobRecord) as a JobPtr."""

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], ir.IntType(64).as_pointer())

    return JOB_PTR(types.intp), codegen


@intrinsic
def job_address(typingctx, job):
    """The address of the Job record `job` points at (for a job unit, engine.jit.job_unit)."""
    if job != JOB_PTR:
        return None

    def codegen(context, builder, signature, args):
        return builder.ptrtoint(args[0], ir.IntType(64))

    return types.int64(JOB_PTR), codegen


# a rollout writes its records through the Job record: those stores are never dead code
ir_utils.alias_func_extensions[("job_at", __name__)] = points_outside
