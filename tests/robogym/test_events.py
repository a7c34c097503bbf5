"""robogym.events.IntervalEvents: the schedule is a function of each row's seed alone (the
same in a batch as alone, and after a state round trip), the gaps lie in the configured
range, the events fire exactly at their scheduled steps, and bad settings are refused."""

from __future__ import annotations

import numpy as np
import pytest

from robogym.errors import InvalidArgumentError
from robogym.events import IntervalEvents

DT = 0.02


def _run(events: IntervalEvents, steps: int) -> tuple[list, list]:
    """Fire through `steps` control steps: (the (step, row) of every event, one draw each)."""
    fired, draws = [], []
    counter = np.zeros(len(events.seed), dtype=np.int64)
    for t in range(steps):
        for r, rng in events.fire(counter):
            fired.append((t, r))
            draws.append(rng.uniform())
        counter += 1
    return fired, draws


def test_events_fire_at_the_drawn_gaps_inside_the_range():
    events = IntervalEvents(6, interval=1.0, jitter=0.5, control_dt=DT)
    events.reset(np.arange(6), [np.random.default_rng(s) for s in range(6)])
    fired, _ = _run(events, 1000)
    for r in range(6):
        at = [t for t, row in fired if row == r]
        expected, t, k = [], 0, 0
        while True:
            t += events.gap(r, k)
            if t >= 1000:
                break
            expected.append(t)
            k += 1
        assert at == expected and len(at) >= 13
        gaps = np.diff([0, *at])
        assert gaps.min() >= 25 and gaps.max() <= 75  # 1 s +- 50 % in 0.02 s steps
        assert events.count[r] == len(at) and events.last[r] == at[-1]


def test_a_row_in_a_batch_has_the_schedule_of_a_single_row_with_its_seed():
    batch = IntervalEvents(4, interval=0.5, jitter=0.3, control_dt=DT)
    batch.reset(np.arange(4), [np.random.default_rng(10 + i) for i in range(4)])
    fired, draws = _run(batch, 400)
    for i in range(4):
        alone = IntervalEvents(1, interval=0.5, jitter=0.3, control_dt=DT)
        alone.reset(np.arange(1), [np.random.default_rng(10 + i)])
        f1, d1 = _run(alone, 400)
        mine = [(t, d) for (t, r), d in zip(fired, draws, strict=True) if r == i]
        assert [t for t, _ in mine] == [t for t, _ in f1]
        assert [d for _, d in mine] == d1  # the event's own draws too, bit for bit


def test_state_round_trip_continues_the_same_schedule():
    events = IntervalEvents(3, interval=0.3, jitter=0.5, control_dt=DT)
    events.reset(np.arange(3), [np.random.default_rng(s) for s in (1, 2, 3)])
    counter = np.zeros(3, dtype=np.int64)
    for _ in range(40):
        events.fire(counter)
        counter += 1
    saved = {k: v.copy() for k, v in events.get_state("push_").items()}
    assert set(saved) == {"push_seed", "push_next", "push_count", "push_last"}
    later = []
    c = counter.copy()
    for _ in range(60):
        later += [(int(c[r]), r) for r, _ in events.fire(c)]
        c += 1
    other = IntervalEvents(3, interval=0.3, jitter=0.5, control_dt=DT)
    other.set_state(saved, np.arange(3), "push_")
    again = []
    c = counter.copy()
    for _ in range(60):
        again += [(int(c[r]), r) for r, _ in other.fire(c)]
        c += 1
    assert again == later and len(later) > 5


def test_reset_of_some_rows_leaves_the_others():
    events = IntervalEvents(3, interval=0.3, jitter=0.0, control_dt=DT)
    events.reset(np.arange(3), [np.random.default_rng(s) for s in (1, 2, 3)])
    before = {k: v.copy() for k, v in events.get_state("").items()}
    events.reset(np.array([1]), [np.random.default_rng(99)])
    for k, v in events.get_state("").items():
        assert np.array_equal(v[[0, 2]], before[k][[0, 2]])
    assert events.seed[1] != before["seed"][1]
    assert events.next.tolist() == [15, 15, 15]  # no jitter: 0.3 s = 15 steps


@pytest.mark.parametrize(
    "interval, jitter",
    [(0.0, 0.1), (-1.0, 0.1), (float("nan"), 0.1), (1.0, 1.0), (1.0, -0.1), (1.0, float("inf"))],
)
def test_bad_settings_are_refused(interval, jitter):
    with pytest.raises(InvalidArgumentError):
        IntervalEvents(2, interval=interval, jitter=jitter, control_dt=DT)
