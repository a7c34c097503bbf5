"""Command-line argument types the benchmark scripts share. Nothing here imports the engine,
numba or torch: bench_step parses its arguments before its cold-compile run."""

from __future__ import annotations

import argparse


def counts(text: str) -> list[int]:
    """An argparse type: a comma-separated list of integers >= 1 (batch sizes, env counts)."""
    try:
        values = [int(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a comma-separated list of integers: {text!r}") from None
    if min(values) < 1:
        raise argparse.ArgumentTypeError(f"every value must be >= 1, got {text!r}")
    return values


def count(text: str) -> int:
    """An argparse type: one integer >= 1 (rounds, repeats)."""
    values = counts(text)
    if len(values) != 1:
        raise argparse.ArgumentTypeError(f"one integer >= 1, got {text!r}")
    return values[0]
