"""Benchmarks: RoboDyn's batched step against MuJoCo (see benchmarks/README.md)."""
