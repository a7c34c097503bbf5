"""How `robodyn tune` sweeps a baseline's gain (training.experiments.tune): a task declares one
Tuning per tuned baseline in its registration (robogym.registration.TaskEntry.tuning)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Tuning:
    """A gain sweep of one baseline on one fixed scenario (training.experiments.tune).

    `parameter` runs over a geometric grid from `start` to `stop` in `points` points,
    crossed with every combination of `cross` (other parameters' values). A setting counts
    if its final `require` metric is below `require_below`; among those the best has the
    least final `minimize` metric. The grid is extended past an end while the best sits
    there (so a worse or failing setting lies on both sides of it: the trend reversed), then
    refined with `refine` points between the best's neighbours. The best values are stored
    to `digits` significant figures, about what the refined grid resolves. Each setting runs
    `episodes` episodes of the scenario, seeded consecutively (for a scenario whose start
    follows the episode's seed, such as the rocket's four fixed starts, every start once),
    and its metrics are their means.
    """

    parameter: str
    start: float
    stop: float
    points: int
    scenario: str
    minimize: str
    require: str
    require_below: float
    cross: tuple = ()  # ((name, (value, ...)), ...)
    refine: int = 17
    max_extensions: int = 4
    digits: int = 3
    episodes: int = 1
