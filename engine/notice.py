"""Telling the user about a cold compile: a notice before it starts, progress while it lasts.

A first run compiles the engine's kernels for the units a model uses (seconds each on two
cores); `compiling(labels)` wraps that compilation. It prints one line saying what is
compiled, about how long it takes and that later runs load it from the cache, then reports
progress (numba's compile events: functions done and the one in progress) until it ends.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time

from numba.core import event

# Seconds a cold compile of each unit or entry took on this project's 2-core machine, idle,
# on 2026-12-01 (`python -m benchmarks.bench_step --cold` measures them; kernels shared by
# several units are counted with the first); the notice sums them.
COMPILE_SECONDS = {
    "forward.forward": 15.0,
    "forward.forward_posvel": 2.5,  # after forward (a PD drive's two halves)
    "forward.forward_acc": 1.0,
    "tendon.spatial_tendons": 7.0,
    "sensors.sensors": 3.5,
    "sensors.sensors_posvel": 3.5,  # a step that ends with mj_step1 (observe_end="posvel")
    "sensors.rne_post": 4.0,
    "sensors.ray_sensors": 6.0,
    "collision_driver.collision": 14.5,
    "collision_driver.collision_convex": 15.5,  # a model gets one of the two
    "collision_driver.convex_pair": 103.0,  # GJK/EPA, meshes
    "collision_driver.hfield_pair": 121.0,  # GJK/EPA on a height field's prisms
    "constraint.make_constraint": 12.0,
    "constraint.reference_constraint": 2.5,
    "solver.fwd_constraint_newton": 37.5,
    "solver.fwd_constraint_pgs": 35.0,  # a model gets one of the two
    "solver.noslip_pass": 14.0,
    "drive.pd_drive_unit": 1.0,  # a Simulator.drive call's (engine.control.PDDrive)
    "drive.acceleration_drive_unit": 1.0,  # engine.control.AccelerationDrive's
    "integrate.euler": 1.5,
    "integrate.rk4": 2.5,
    "integrate.implicit": 6.5,
    "step.run_rows": 12.5,
    "setconst.set_const_rows": 10.5,  # a row's own parameters (engine.params)
}
DEFAULT_SECONDS = 0.5  # a driver entry


def expected_range(seconds: float, processes: int = 1) -> tuple[float, float]:
    """(low, high): how long a compile that took `seconds` on idle cores (COMPILE_SECONDS)
    may take now. low is the idle time; high scales it by how many runnable processes each
    core has, the system's 1-minute load average plus this compile's own processes over the
    cores, and by at least 1.5 (run-to-run spread): on a machine shared with other work a
    compile has taken up to 3.5x its idle time."""
    cores = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # no load average on this platform
        load = 0.0
    return seconds, seconds * max(1.5, (load + processes) / cores)


@contextlib.contextmanager
def compiling(labels: list[str], stream=None, processes: int = 1, seconds: float | None = None):
    """Around the compilation of `labels` (units and entries, "module.function"): when
    there is anything to compile, say so first, then show progress until it is done.
    `processes` > 1: the work is shared by that many worker processes (engine.compile_workers),
    `seconds` their estimate."""
    if not labels:
        yield
        return
    stream = stream or sys.stderr
    if seconds is None:
        seconds = sum(COMPILE_SECONDS.get(label, DEFAULT_SECONDS) for label in labels)
    names = ", ".join(label.split(".")[-1] for label in labels)
    where = f" in {processes} processes" if processes > 1 else ""
    low, high = expected_range(seconds, processes)
    print(
        f"robodyn: compiling the engine's kernels for this model ({names}){where}, about "
        f"{low:.0f}-{high:.0f} s (the low end on idle cores), once; later runs load them from the cache",
        file=stream,
        flush=True,
    )
    progress = _Progress(stream, processes)
    start = time.perf_counter()
    with event.install_listener("numba:compile", progress):
        progress.start()
        try:
            yield
        finally:
            progress.stop()
    print(f"robodyn: compiled in {time.perf_counter() - start:.0f} s", file=stream, flush=True)


@contextlib.contextmanager
def waiting(labels: list[str], stream=None):
    """Around a wait for another process that is compiling `labels` into the same cache."""
    stream = stream or sys.stderr
    names = ", ".join(label.split(".")[-1] for label in labels)
    print(
        f"robodyn: waiting for another process compiling {names} into the same cache", file=stream, flush=True
    )
    start = time.perf_counter()
    yield
    print(f"robodyn: waited {time.perf_counter() - start:.0f} s", file=stream, flush=True)


class _Progress(event.Listener):
    """Counts numba's compile events and reports them: in place every half second on a
    terminal, one line every 15 s otherwise (a log)."""

    def __init__(self, stream, processes: int = 1):
        self.stream = stream
        self.processes = processes
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.count = 0
        self.current = ""
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="robodyn-compile-progress", daemon=True)
        self._start = time.perf_counter()

    def on_start(self, ev):
        dispatcher = ev.data.get("dispatcher")
        self.current = getattr(getattr(dispatcher, "py_func", None), "__qualname__", "")

    def on_end(self, ev):
        self.count += 1

    def start(self):
        self._start = time.perf_counter()
        self._thread.start()

    def stop(self):
        self._done.set()
        self._thread.join()
        if self.tty:
            print(file=self.stream, flush=True)

    def _line(self) -> str:
        elapsed = time.perf_counter() - self._start
        if self.processes > 1 and self.count == 0:  # the workers compile; this process waits
            return f"robodyn: compiling ... {elapsed:4.0f} s, in {self.processes} processes"
        return f"robodyn: compiling ... {elapsed:4.0f} s, {self.count} functions done ({self.current})"

    def _run(self):
        period = 0.5 if self.tty else 15.0
        while not self._done.wait(period):
            if self.tty:
                print("\r" + self._line().ljust(100), end="", file=self.stream, flush=True)
            else:
                print(self._line(), file=self.stream, flush=True)
