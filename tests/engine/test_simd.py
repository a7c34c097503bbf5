"""engine.simd.dot_lanes: the four partial sums of MuJoCo's mju_dot in one vector's lanes,
bit for bit the sums of the scalar loop it replaced (engine.constraint.dot)."""

import numpy as np
from numba import njit

from robodyn.engine.constraint import dot


@njit
def _dot(a, b, n):
    return dot(a, b, n)


def _mujoco_order(a, b, n):
    """mju_dot's order in plain Python floats: s_k over i = k mod 4 for the multiples of four,
    (s0 + s2) + (s1 + s3), then the remaining one to three products added left to right."""
    s = [0.0, 0.0, 0.0, 0.0]
    i = 0
    while i <= n - 4:
        for k in range(4):
            s[k] += float(a[i + k]) * float(b[i + k])
        i += 4
    res = (s[0] + s[2]) + (s[1] + s[3])
    tail = 0.0
    for k in range(n - i):
        tail = float(a[i + k]) * float(b[i + k]) if k == 0 else tail + float(a[i + k]) * float(b[i + k])
    return res + tail if n - i else res


def test_dot_equals_mujoco_order_bit_for_bit():
    rng = np.random.default_rng(7)
    worst = 0
    for n in range(0, 41):
        for _ in range(20):
            # magnitudes spread over 12 decades, so any change of order would change bits
            a = rng.standard_normal(n + 3) * 10.0 ** rng.uniform(-6, 6, n + 3)
            b = rng.standard_normal(n + 3) * 10.0 ** rng.uniform(-6, 6, n + 3)
            want = _mujoco_order(a, b, n)
            got = _dot(a, b, n)  # contiguous: vector loads
            assert got == want or (np.isnan(got) and np.isnan(want)), (n, got, want)
            wide = np.zeros((n + 3, 2))
            wide[:, 1] = a
            strided = _dot(wide[:, 1], b, n)  # strided: element loads into the lanes
            assert strided == want, (n, strided, want)
            worst = max(worst, n)
    print(f"dot: 41 lengths x 20 draws, contiguous and strided, bit-equal to mju_dot's order (n <= {worst})")
