"""Motion captures as data: world joint positions over time, with their names and frame rate.

A Capture is the common form every capture format is read into: positions (T, J, 3) of J
named joints over T frames, in metres, in a world frame whose z axis points up, sampled at
`fps` frames per second. Any format that can be turned into world joint positions (BVH after
its forward kinematics, a marker set, a dataset's npy files) is added by writing a reader that
returns one; `load_capture` checks what a reader hands over.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from robogym.errors import InvalidArgumentError


@dataclass(frozen=True)
class Capture:
    """positions: (T, J, 3) float64, metres, world frame, z up; names: the J joint names;
    fps: frames per second; source: where it came from (a path, a package and its licence)."""

    positions: np.ndarray
    names: tuple[str, ...]
    fps: float
    source: str = ""
    index: dict = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "index", {n: i for i, n in enumerate(self.names)})

    @property
    def frames(self) -> int:
        return self.positions.shape[0]

    @property
    def duration(self) -> float:
        """Seconds from the first frame to the last."""
        return (self.frames - 1) / self.fps

    def joint(self, name: str) -> np.ndarray:
        """(T, 3) the positions of joint `name`."""
        if name not in self.index:
            raise InvalidArgumentError(
                f"the capture has no joint {name!r}; its joints: {', '.join(self.names)}"
            )
        return self.positions[:, self.index[name]]

    def segment(self, start: float, stop: float) -> Capture:
        """The frames from `start` to `stop` seconds (both measured from the first frame)."""
        if not (0 <= start < stop):
            raise InvalidArgumentError(f"a segment needs 0 <= start < stop, got {start}, {stop}")
        a, b = int(round(start * self.fps)), int(round(stop * self.fps)) + 1
        if b > self.frames:
            raise InvalidArgumentError(
                f"the capture lasts {self.duration:.2f} s; a segment to {stop} s is past its end"
            )
        return Capture(self.positions[a:b], self.names, self.fps, f"{self.source} [{start:g} s, {stop:g} s]")


def load_capture(positions, names: Sequence[str], fps: float, source: str = "") -> Capture:
    """A Capture from world joint positions: `positions` an array (T, J, 3) or the path of a
    .npy file holding one, `names` the J joint names (distinct), `fps` > 0. Refuses, naming
    the problem: another shape, a names list of another length or with repeats, frames with
    a NaN or an infinity (their indices), a non-positive or non-finite fps."""
    if isinstance(positions, str | Path):
        path = Path(positions)
        if not path.is_file():
            raise InvalidArgumentError(f"capture file {str(path)!r} does not exist")
        source = source or str(path)
        positions = np.load(path, allow_pickle=False)
    p = np.asarray(positions)
    if p.ndim != 3 or p.shape[2] != 3 or p.shape[0] < 1 or p.shape[1] < 1:
        raise InvalidArgumentError(f"a capture's positions must have shape (T, J, 3), got {p.shape}")
    if not np.issubdtype(p.dtype, np.number):
        raise InvalidArgumentError(f"a capture's positions must be numbers, got dtype {p.dtype}")
    names = tuple(str(n) for n in names)
    if len(names) != p.shape[1]:
        raise InvalidArgumentError(f"{len(names)} joint names for {p.shape[1]} joints in the positions")
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise InvalidArgumentError(f"joint names must be distinct; repeated: {', '.join(repeated)}")
    p = p.astype(np.float64)
    bad = np.flatnonzero(~np.all(np.isfinite(p), axis=(1, 2)))
    if len(bad):
        shown = ", ".join(str(i) for i in bad[:10]) + (" ..." if len(bad) > 10 else "")
        raise InvalidArgumentError(f"{len(bad)} frames hold a NaN or an infinity: frames {shown}")
    if (
        isinstance(fps, bool)
        or not isinstance(fps, int | float | np.integer | np.floating)
        or not (np.isfinite(fps) and fps > 0)
    ):
        raise InvalidArgumentError(f"fps must be a finite number > 0, got {fps!r}")
    return Capture(p, names, float(fps), source)


@dataclass(frozen=True)
class Box:
    """A box in the capture's world (an obstacle the performer climbs): centre (3,), axes
    (3, 3) its unit edge directions as rows, half (3,) its half extents along them (m)."""

    centre: np.ndarray
    axes: np.ndarray
    half: np.ndarray

    @classmethod
    def from_vertices(cls, vertices) -> Box:
        """The box with these eight corners: its edges from the first corner are, in turn, the
        shortest vector to another corner square to the edges found before."""
        v = np.asarray(vertices, dtype=np.float64)
        if v.shape != (8, 3):
            raise InvalidArgumentError(f"a box needs 8 vertices (8, 3), got {v.shape}")
        vectors = v[1:] - v[0]
        length = np.linalg.norm(vectors, axis=1)
        if np.any(length == 0):
            raise InvalidArgumentError("a box's vertices repeat a corner")
        unit = vectors / length[:, None]
        edges: list[int] = []
        for _ in range(3):  # the shortest vector square to the edges found so far is the next edge
            square = np.all(np.abs(unit @ unit[edges].T) < 1e-6, axis=1) if edges else np.ones(7, dtype=bool)
            square[edges] = False
            if not square.any():
                raise InvalidArgumentError("the 8 vertices are not the corners of a box")
            edges.append(int(np.flatnonzero(square)[np.argmin(length[square])]))
        edges_ = np.array(edges)
        return cls(v.mean(axis=0), unit[edges_], 0.5 * length[edges_])

    def scaled(self, s: float) -> Box:
        """The box with every length multiplied by s about the world origin."""
        return Box(s * self.centre, self.axes, s * self.half)

    def depth(self, points: np.ndarray) -> np.ndarray:
        """(...,) how deep points (..., 3) are inside (> 0) or outside (< 0, the largest
        distance past a face) the box."""
        local = (points - self.centre) @ self.axes.T
        return np.min(self.half - np.abs(local), axis=-1)

    def top(self, xy: np.ndarray) -> np.ndarray:
        """(...,) the height of the box's top above points xy (..., 2) inside its footprint,
        -inf outside (a box standing upright: its vertical axis among its axes)."""
        up = int(np.argmax(np.abs(self.axes[:, 2])))
        flat = [i for i in range(3) if i != up]
        local = (xy - self.centre[:2]) @ self.axes[flat][:, :2].T
        inside = np.all(np.abs(local) <= self.half[flat], axis=-1)
        return np.where(inside, self.centre[2] + self.half[up] * abs(self.axes[up, 2]), -np.inf)
