"""IntervalEvents: per-row events every few seconds (pushes, perturbations), seeded per row.

Locomotion suites perturb a robot at random intervals (MuJoCo Playground pushes its G1 and
Go1 every few seconds; Isaac Lab's "interval" events draw each row's next time from a
range). A task that needs such events holds one IntervalEvents and calls it at three
points:

    reset(rows, rngs)         in reset_rows: a schedule seed per row from the row's generator
    fire(steps)               in apply_action, before the physics steps: the rows whose event
                              is due now, each with a generator for the event's own draws
    get_state / set_state     in the task's state, so a snapshot carries the schedule

Event k of a row (k = 0, 1, ...) comes interval * U(1 - jitter, 1 + jitter) seconds after
event k - 1 (or the reset), rounded to whole control steps (at least one). Both that draw
and the event's own (a direction, a magnitude) come from one generator seeded with
(the row's seed, k), the gap first: the schedule is a function of the seed alone, so it
needs no generator state and a snapshot carries it as a few integers, and row i of a
batch gets the schedule a single env seeded the same way gets.
"""

from __future__ import annotations

import numpy as np

from robogym.errors import InvalidArgumentError

STATE = ("seed", "next", "count", "last")


class IntervalEvents:
    """Events for `batch` rows every `interval` s +- `jitter` (a fraction of it, in [0, 1)),
    counted in control steps of `control_dt` s; see the module docstring.

    State, per row: seed (uint64), next (the control step of the next event), count (events
    fired since the reset), last (the control step of the last one, -1 before any)."""

    def __init__(self, batch: int, interval: float, jitter: float, control_dt: float):
        if not (np.isfinite(interval) and interval > 0):
            raise InvalidArgumentError(f"event interval must be finite and > 0 s, got {interval!r}")
        if not (np.isfinite(jitter) and 0.0 <= jitter < 1.0):
            raise InvalidArgumentError(f"event jitter must be in [0, 1), got {jitter!r}")
        self.interval = float(interval)
        self.jitter = float(jitter)
        self.control_dt = float(control_dt)
        self.seed = np.zeros(batch, dtype=np.uint64)
        self.next = np.zeros(batch, dtype=np.int64)
        self.count = np.zeros(batch, dtype=np.int64)
        self.last = np.full(batch, -1, dtype=np.int64)

    def generator(self, row: int, k: int) -> np.random.Generator:
        """The generator of event k of `row`, before any draw: its first draw is the gap."""
        return np.random.default_rng([int(self.seed[row]), int(k)])

    def _gap(self, rng: np.random.Generator) -> int:
        """Control steps from one event to the next: the generator's first draw."""
        seconds = self.interval * rng.uniform(1.0 - self.jitter, 1.0 + self.jitter)
        return max(1, round(seconds / self.control_dt))

    def gap(self, row: int, k: int) -> int:
        """Control steps from event k - 1 (or the reset) to event k of `row`."""
        return self._gap(self.generator(row, k))

    def reset(self, rows, rngs: list[np.random.Generator]) -> None:
        """Rows start an episode: a seed from each row's generator (one draw, always), no
        event yet, the first one scheduled."""
        rows = np.asarray(rows, dtype=np.int64)
        for r, rng in zip(rows, rngs, strict=True):
            self.seed[r] = rng.integers(0, 2**63, dtype=np.uint64)
        self.count[rows] = 0
        self.last[rows] = -1
        for r in rows:
            self.next[r] = self.gap(r, 0)

    def fire(self, steps: np.ndarray) -> list[tuple[int, np.random.Generator]]:
        """The rows whose event is due at their control step `steps` (B,): for each, (row,
        the event's generator after its gap draw, for the caller's own draws); each is
        counted and the row's next event scheduled."""
        fired = []
        for r in np.flatnonzero(steps == self.next):
            k = int(self.count[r])
            rng = self.generator(r, k)
            self._gap(rng)  # the gap to this event was drawn first; the event's draws follow
            self.count[r] = k + 1
            self.last[r] = steps[r]
            self.next[r] += self.gap(r, k + 1)
            fired.append((int(r), rng))
        return fired

    def get_state(self, prefix: str) -> dict[str, np.ndarray]:
        """The per-row state a snapshot carries, keyed `prefix` + name (for Task.get_state)."""
        return {prefix + k: getattr(self, k) for k in STATE}

    def set_state(self, state: dict[str, np.ndarray], rows, prefix: str) -> None:
        """Write back what get_state gave (for Task.set_state); other keys are left alone."""
        for k in STATE:
            if prefix + k in state:
                getattr(self, k)[rows] = state[prefix + k]
