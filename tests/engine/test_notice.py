"""The compile notice gives a range: the measured idle time, and the same scaled by how busy
the machine's cores are now (so a notice on a machine shared with other work does not
promise the idle time)."""

from __future__ import annotations

import io

from robodyn.engine import notice


def _machine(monkeypatch, load: float, cores: int) -> None:
    monkeypatch.setattr(notice.os, "getloadavg", lambda: (load, load, load))
    monkeypatch.setattr(notice.os, "cpu_count", lambda: cores)


def test_idle_cores_give_the_measured_time_and_its_spread(monkeypatch):
    _machine(monkeypatch, load=0.0, cores=2)
    assert notice.expected_range(20.0, processes=1) == (20.0, 30.0)


def test_busy_cores_stretch_the_high_end(monkeypatch):
    # two other jobs running on two cores, the compile's own two worker processes beside them:
    # each core has two runnable processes, so the compile can take twice its idle time
    _machine(monkeypatch, load=2.0, cores=2)
    assert notice.expected_range(38.0, processes=2) == (38.0, 76.0)
    _machine(monkeypatch, load=6.0, cores=2)
    assert notice.expected_range(38.0, processes=1) == (38.0, 133.0)


def test_the_notice_states_the_range(monkeypatch):
    _machine(monkeypatch, load=3.0, cores=2)
    out = io.StringIO()
    with notice.compiling(["forward.forward", "step.run_rows"], stream=out):
        pass
    seconds = notice.COMPILE_SECONDS["forward.forward"] + notice.COMPILE_SECONDS["step.run_rows"]
    first = out.getvalue().splitlines()[0]
    assert f"about {seconds:.0f}-{seconds * 2:.0f} s (the low end on idle cores)" in first, first
