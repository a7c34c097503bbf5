"""Row-wise sums whose result for one row never depends on the rows around it.

A task's reward for environment i must be the same number, to the last bit, whether the
environment runs alone or as row i of a batch (tests compare the two exactly). NumPy's
`np.sum(x, axis=1)` does not promise that: it sums a contiguous row pairwise, in blocks of
eight, but when the rows are not contiguous (a Fortran-ordered or transposed array, which a
user's action can be, and element-wise operations keep that layout) it adds column by column
across the batch instead, so the two orders round differently once a row has eight or more
numbers. These helpers always add column by column, left to right.
"""

from __future__ import annotations

import numpy as np


def row_sum(x: np.ndarray) -> np.ndarray:
    """(B,) x[:, 0] + x[:, 1] + ... + x[:, k-1] of x (B, k), added left to right."""
    out = np.array(x[:, 0], dtype=np.float64)
    for j in range(1, x.shape[1]):
        out += x[:, j]
    return out


def row_sum_sq(x: np.ndarray) -> np.ndarray:
    """(B,) sum_j x[:, j]^2 of x (B, k), added left to right."""
    return row_sum(np.square(x))


def row_mean_sq(x: np.ndarray) -> np.ndarray:
    """(B,) mean_j x[:, j]^2 of x (B, k)."""
    return row_sum_sq(x) / x.shape[1]


def row_norm(x: np.ndarray) -> np.ndarray:
    """(B,) Euclidean norm of each row of x (B, k)."""
    return np.sqrt(row_sum_sq(x))
