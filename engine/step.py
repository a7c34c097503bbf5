"""Batched drivers: one compiled call advances a range of rows of the batch.

Entry points take a half-open row range [lo, hi) and release the GIL, so the Python layer
can run disjoint ranges on several threads at once (rows never share state). We do not
use numba's `prange` here: compiling a parallel loop around the whole pipeline took over
ten minutes, against about one for the serial kernel.

A row whose acceleration is not finite, or that found more contacts than its buffer holds,
is flagged in `d.status` and not advanced, so the Python layer can raise with the row, the
step and the reason while its state is intact.
"""

import math

from engine import types as T
from engine.forward import forward_row
from engine.integrate import euler, implicit, rk4
from engine.jit import entry, stage


@stage
def acc_ok(m, d, b):
    """True if the forward pass of row b can be integrated: every contact fit in the
    buffer (contact_lost == 0) and qacc is finite."""
    if d.contact_lost[b] > 0:
        return False
    for i in range(m.nv):
        if not math.isfinite(d.qacc[b, i]):
            return False
    return True


@stage
def integrate_row(m, d, b):
    """Advance row b by one timestep with the model's integrator (after forward_row)."""
    integ = m.opt_integrator
    if integ == T.INT_EULER:
        euler(m, d, b)
    elif integ == T.INT_RK4:
        rk4(m, d, b)
    else:
        implicit(m, d, b)


@stage
def step_row(m, d, b):
    """mj_step for row b: forward, check, integrate. Returns False (and does not integrate)
    if qacc is not finite or the contact buffer overflowed.

    Inlined into step_rows (`@stage`): a kernel call flattens Model and Data (~270 arrays)
    into its arguments, so one call per step (forward_row) is what a step can afford;
    as a second call, it slowed the double pendulum's step from 1.6 to 3.4 us."""
    forward_row(m, d, b, True)
    if not acc_ok(m, d, b):
        return False
    integrate_row(m, d, b)
    return True


@entry
def forward_rows(m, d, lo, hi):
    """forward_row for rows lo..hi-1."""
    for b in range(lo, hi):
        forward_row(m, d, b, True)
        d.status[b] = 0 if acc_ok(m, d, b) else 1


@entry
def step_rows(m, d, lo, hi, nstep):
    """nstep steps of rows lo..hi-1; a row stops before its first failed step (non-finite
    qacc or contact overflow)."""
    for b in range(lo, hi):
        d.status[b] = 0
        for k in range(nstep):
            if not step_row(m, d, b):
                d.status[b] = k + 1  # 1-based index of the failed step within this call
                break
