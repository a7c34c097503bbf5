"""The Simulator fuzzer (tests/adversarial/fuzz_simulator.py) in a subprocess, so that a crash
of a compiled kernel fails this test instead of killing pytest: a fixed seed and a fixed
number of calls per model (about 10 s once the kernels are cached). Every refusal must be a
RoboDynError naming the call's argument; every operation must have been accepted and
(where it takes an argument) refused at least once."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.adversarial.fuzz_simulator import NAMES
from tests.helpers import REPO

CALLS = 2000  # per model; four models


def test_random_calls_never_crash_and_refuse_cleanly():
    proc = subprocess.run(
        [sys.executable, "-m", "tests.adversarial.fuzz_simulator", "--seed", "0", "--calls", str(CALLS)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, f"fuzzer exit status {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    print("simulator fuzz:", summary)
    assert summary["calls"] == 4 * CALLS
    refused = summary["calls"] - summary["accepted"]
    # both sides exercised: well-formed calls ran, hostile ones were refused, poisons were caught
    assert summary["accepted"] > CALLS // 2 and refused > CALLS // 2
    assert summary.get("NonFiniteError", 0) > 10
    # every operation ran both ways (those without a user argument only ran)
    for op, names in NAMES.items():
        assert summary.get(f"accepted {op}", 0) > 0, op
        assert (summary.get(f"refused {op}", 0) > 0) == (names is not None), op
