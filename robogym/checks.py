"""Checks of the arguments a user hands the envs: counts, seeds, real numbers. Each raises
one of robogym.errors' exceptions naming the argument and what it must be, and changes
nothing (callers check before they write)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from robogym.errors import ArgumentTypeError, InvalidArgumentError


def is_int(x) -> bool:
    """x is a Python or numpy integer (a bool is not: True is no count)."""
    return isinstance(x, int | np.integer) and not isinstance(x, bool | np.bool_)


def is_real(x) -> bool:
    """x is a Python or numpy integer or float (not a bool, a str or a complex number)."""
    return is_int(x) or isinstance(x, float | np.floating)


def check_count(name: str, value, low: int = 1) -> int:
    """`value` as an int >= low; ArgumentTypeError for anything but an integer (2.0, "2", True),
    InvalidArgumentError below `low`."""
    if not is_int(value):
        raise ArgumentTypeError(f"{name} must be an int >= {low}, got {type(value).__name__} {value!r}")
    if value < low:
        raise InvalidArgumentError(f"{name} must be an int >= {low}, got {value}")
    return int(value)


def check_seed(name: str, seed) -> int | None:
    """A seed: None or an int >= 0 (what numpy's SeedSequence accepts)."""
    if seed is None:
        return None
    if not is_int(seed):
        raise ArgumentTypeError(f"{name} must be an int >= 0 or None, got {type(seed).__name__} {seed!r}")
    if seed < 0:
        raise InvalidArgumentError(f"{name} must be an int >= 0 or None, got {seed}")
    return int(seed)


@dataclass(frozen=True)
class Bounds:
    """The interval a numeric parameter must lie in: [low, high] with either end open."""

    low: float = -math.inf
    high: float = math.inf
    low_open: bool = False
    high_open: bool = False

    def __contains__(self, x: float) -> bool:
        above = x > self.low if self.low_open else x >= self.low
        below = x < self.high if self.high_open else x <= self.high
        return above and below

    def __str__(self) -> str:
        left = "(" if self.low_open or self.low == -math.inf else "["
        right = ")" if self.high_open or self.high == math.inf else "]"
        return f"{left}{_num(self.low)}, {_num(self.high)}{right}"


def _num(x: float) -> str:
    return "inf" if x == math.inf else "-inf" if x == -math.inf else f"{x:g}"


POSITIVE = Bounds(0.0, math.inf, low_open=True)  # (0, inf)
NON_NEGATIVE = Bounds(0.0)  # [0, inf)


def check_real(name: str, value, bounds: Bounds = Bounds()) -> float:
    """`value` as a finite float inside `bounds`; ArgumentTypeError for what is not a real
    number (a str, a bool, a complex number, None), InvalidArgumentError for NaN, inf or a value
    outside the bounds."""
    if not is_real(value):
        raise ArgumentTypeError(
            f"{name} must be a real number in {bounds}, got {type(value).__name__} {value!r}"
        )
    v = float(value)
    if not math.isfinite(v) or v not in bounds:
        raise InvalidArgumentError(f"{name} must be finite and in {bounds}, got {value!r}")
    return v


DTYPES = ("float64", "float32")


def check_dtype(name: str, value) -> np.dtype:
    """A space dtype: float64 (the engine's) or float32 (a str, a numpy type or a dtype)."""
    try:
        dtype = np.dtype(value)
    except TypeError:
        raise ArgumentTypeError(f"{name} must be one of {DTYPES}, got {value!r}") from None
    if dtype.name not in DTYPES:
        raise InvalidArgumentError(f"{name} must be one of {DTYPES}, got {value!r}")
    return dtype
