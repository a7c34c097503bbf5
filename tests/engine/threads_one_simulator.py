"""Threads sharing one Simulator, run as a script in a subprocess by test_threads.py (a
memory corruption would kill the process, which the test sees in its exit status).

    python -m tests.engine.threads_one_simulator --rounds 2

Each round, on the quadruped (contacts, Newton) with batch 8 and nthread 1:
- two threads each call step(1) STEPS times: the final state equals STEPS * 2 steps of one
  thread, bit for bit (each call steps the whole batch, so any serial order gives it);
- one thread steps STEPS times while another restores the starting snapshot, calls
  forward() or takes snapshots: the final state equals one state of the reference trajectory
  from the start (restore puts the start back; forward and snapshot change no state), bit
  for bit, and a snapshot taken mid-way restores to a state on that trajectory too.
Prints one JSON line with what was compared and exits 0, or exits 1 naming the mismatch.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading

import numpy as np

from robodyn import engine
from tests.helpers import ASSETS

STEPS = 400
BATCH = 8


def state(sim) -> bytes:
    d = sim.data
    return b"".join(np.ascontiguousarray(a).tobytes() for a in (d.qpos, d.qvel, d.act, d.time))


def run_threads(*targets) -> list[BaseException]:
    errors: list[BaseException] = []

    def guard(fn):
        try:
            fn()
        except BaseException as e:  # reported by the caller
            errors.append(e)

    threads = [threading.Thread(target=guard, args=(t,)) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=2)
    args = p.parse_args(argv)
    model = engine.load_mjcf(ASSETS / "quadruped.xml")
    sim = engine.Simulator(model, batch=BATCH, nthread=1)
    rng = np.random.default_rng(0)
    sim.data.qpos[:, 2] += rng.uniform(0.0, 0.1, BATCH)  # rows apart: dropped from other heights
    sim.forward()
    start = sim.snapshot()
    # the reference trajectory, one thread: every state it passes through
    trajectory = {state(sim): 0}
    for k in range(1, 2 * STEPS + 1):
        sim.step(1)
        trajectory[state(sim)] = k
    end = state(sim)

    def steps():
        for _ in range(STEPS):
            sim.step(1)

    def restores():
        for _ in range(STEPS // 4):
            sim.restore(start)

    def forwards():
        for _ in range(STEPS // 2):
            sim.forward()

    snaps = []

    def snapshots():
        for _ in range(STEPS // 8):
            snaps.append(sim.snapshot())

    compared = 0
    for r in range(args.rounds):
        sim.restore(start)
        if errors := run_threads(steps, steps):
            return fail(f"round {r}, two threads stepping: {errors[0]!r}")
        if state(sim) != end:
            return fail(f"round {r}: two threads of {STEPS} steps did not end where {2 * STEPS} steps do")
        compared += 1
        for other in (restores, forwards, snapshots):
            sim.restore(start)
            snaps.clear()
            if errors := run_threads(steps, other):
                return fail(f"round {r}, stepping beside {other.__name__}: {errors[0]!r}")
            if state(sim) not in trajectory:
                return fail(f"round {r}, stepping beside {other.__name__}: a state off the trajectory")
            compared += 1
            for snap in snaps:
                sim.restore(snap)
                if state(sim) not in trajectory:
                    return fail(f"round {r}: a snapshot taken beside stepping restores off the trajectory")
                compared += 1
    print(json.dumps({"rounds": args.rounds, "states_compared": compared, "steps_per_thread": STEPS}))
    return 0


def fail(message: str) -> int:
    print(message, file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
