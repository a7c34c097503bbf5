"""robogym.rowwise: a row's sum is the same number alone or inside any batch, whatever the
array's memory layout (C order, Fortran order, a strided view), and it is the sum (checked
against math.fsum to a few ulps)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from robogym.rowwise import row_mean_sq, row_norm, row_sum, row_sum_sq


def _layouts(x: np.ndarray):
    yield "C", np.ascontiguousarray(x)
    yield "F", np.asfortranarray(x)
    wide = np.zeros((x.shape[0], 2 * x.shape[1]))
    wide[:, ::2] = x
    yield "strided", wide[:, ::2]


@pytest.mark.parametrize("k", [1, 3, 7, 8, 12, 21, 45])
@pytest.mark.parametrize("fn", [row_sum, row_sum_sq, row_mean_sq, row_norm])
def test_a_row_reduces_the_same_alone_and_in_any_batch_layout(fn, k):
    rng = np.random.default_rng(k)
    x = rng.standard_normal((64, k)) * 10.0 ** rng.uniform(-6, 6, (64, k))
    alone = np.array([fn(x[i : i + 1].copy())[0] for i in range(64)])
    for name, arr in _layouts(x):
        got = fn(arr)
        assert got.shape == (64,) and got.dtype == np.float64
        assert np.array_equal(got, alone), f"{fn.__name__}, k={k}, {name} layout: rows differ from alone"


def test_values_are_the_sums():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 21))
    exact = np.array([math.fsum(r) for r in x])
    exact_sq = np.array([math.fsum(r * r) for r in x])
    scale = np.array([math.fsum(np.abs(r)) for r in x])
    assert np.all(np.abs(row_sum(x) - exact) <= 32 * np.finfo(float).eps * scale)
    assert np.allclose(row_sum_sq(x), exact_sq, rtol=1e-14, atol=0)
    assert np.allclose(row_mean_sq(x), exact_sq / 21, rtol=1e-14, atol=0)
    assert np.allclose(row_norm(x), np.sqrt(exact_sq), rtol=1e-14, atol=0)
