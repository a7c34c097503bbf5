"""MuJoCo's bad-value test and its per-row warning counter, shared by the stages that check.

MuJoCo calls a number bad when it is NaN, inf or larger in magnitude than mjMAXVAL (1e10;
mju_isBad), and counts each kind of warning (mjWARN_BADQPOS, ...) per mjData with the
index it concerns (mj_warning). Here the counts are per row: d.warning[b, kind] and
d.warning_info[b, kind], and d.warned[b] counts the warnings of the current call so that
Python looks at them only when there are some.
"""

from __future__ import annotations

from robodyn.engine import types as T
from robodyn.engine.jit import kernel


@kernel
def is_bad(x):
    """x is NaN, inf or |x| > MAXVAL (MuJoCo's mju_isBad)."""
    return not abs(x) <= T.MAXVAL


@kernel
def first_bad(v, n):
    """The first of v[0..n-1] that is_bad, or -1."""
    for i in range(n):
        if is_bad(v[i]):
            return i
    return -1


@kernel
def warn(d, b, kind, info):
    """Count warning `kind` (WARN_*) for row b, about dof or actuator `info`."""
    d.warning[b, kind] += 1
    d.warning_info[b, kind] = info
    d.warned[b] += 1
