"""Threads sharing one Simulator (tests/engine/threads_one_simulator.py) in subprocesses, so
that memory corruption in a compiled kernel fails this test instead of killing pytest.

Unserialized, two threads stepping one quadruped Simulator ended off the one-thread
trajectory or with spurious contact overflows in every run of that script, and crashed the
process in some; serialized, every state must be one the single-threaded trajectory passes
through, bit for bit. A race shows only sometimes, so the script runs several times."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.helpers import REPO

RUNS = 3  # processes
ROUNDS = 2  # rounds of the four concurrent patterns in each


def test_threads_sharing_one_simulator_are_serialized():
    for run in range(RUNS):
        proc = subprocess.run(
            [sys.executable, "-m", "tests.engine.threads_one_simulator", "--rounds", str(ROUNDS)],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert proc.returncode == 0, (
            f"run {run}: exit status {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
        )
        summary = json.loads(proc.stdout.strip().splitlines()[-1])
        print(f"run {run}:", summary)
        # 4 patterns per round, plus every snapshot taken beside the stepping thread restored
        assert summary["rounds"] == ROUNDS and summary["states_compared"] >= 4 * ROUNDS + 1
