"""The check every adversarial case makes: the call raises the expected type, the message
names the problem, and the state it was given is bit-identical afterwards."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import numpy as np
import pytest

from robodyn.engine.errors import RoboDynError


def arrays_of(obj, depth: int = 10) -> dict:
    """Every numpy array reachable from obj through attributes, NamedTuple fields, dicts,
    lists and tuples (up to `depth` levels), copied, keyed by its path: a fingerprint of
    the state a refused call must leave alone."""
    out: dict = {}
    _collect(obj, "", depth, out, set())
    return out


class Files:
    """The files under a directory as state: every file's bytes and every directory, by
    relative path, read afresh each time arrays_of collects it (for calls that must leave
    the disk alone)."""

    def __init__(self, root: Path):
        self.root = Path(root)

    def fingerprint(self) -> dict:
        return {
            str(p.relative_to(self.root)): (p.read_bytes() if p.is_file() else None)
            for p in sorted(self.root.rglob("*"))
        }


def _collect(obj, path: str, depth: int, out: dict, seen: set) -> None:
    if isinstance(obj, Files):
        out[path] = obj.fingerprint()
        return
    if isinstance(obj, np.ndarray):
        out[path] = obj.copy()
        return
    if isinstance(obj, np.random.Generator):
        out[path] = copy.deepcopy(obj.bit_generator.state)
        return
    if isinstance(obj, np.generic | int | float | str | bool | bytes) or obj is None:
        out[path] = copy.copy(obj)
        return
    if depth < 0 or id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, dict):
        items = obj.items()
    elif hasattr(obj, "_asdict"):
        items = obj._asdict().items()
    elif isinstance(obj, list | tuple):
        items = enumerate(obj)
    elif hasattr(obj, "__dict__") or hasattr(type(obj), "__slots__"):
        slots = [n for k in type(obj).__mro__ for n in getattr(k, "__slots__", ())]
        items = [*getattr(obj, "__dict__", {}).items(), *((n, getattr(obj, n, None)) for n in slots)]
    else:
        return
    for key, value in items:
        _collect(value, f"{path}.{key}", depth - 1, out, seen)


# not state of the env: gymnasium's PassiveEnvChecker marks its first checked call, and a
# Simulator's job record (engine.job) describes the last compiled call it made
_NOT_STATE = r"\.checked_(step|reset|render)$|\.sim\._job\."


def assert_same(before: dict, after: dict, ignore: str | None = None) -> None:
    """Every array and scalar in `before` is bit-identical in `after` (NaN equals NaN),
    except those whose path matches the regular expression `ignore`."""
    assert before.keys() == after.keys(), f"state changed shape: {before.keys() ^ after.keys()}"
    for key, value in before.items():
        if re.search(_NOT_STATE, key) or (ignore is not None and re.search(ignore, key)):
            continue
        other = after[key]
        if isinstance(value, np.ndarray):
            same = value.shape == other.shape and value.dtype == other.dtype
            same = same and value.tobytes() == other.tobytes()
        else:
            same = value == other or (value != value and other != other)
        assert same, f"state {key} changed although the call was refused"


def assert_refused(call, error, match: str, *states, depth: int = 10, ignore: str | None = None):
    """call() raises `error` with a message matching `match` (a regular expression, case
    insensitive) and leaves every object in `states` bit-identical (paths matching `ignore`
    excepted, e.g. work arrays a kernel wrote before it refused). The exception must be a
    RoboDynError (what a user catches to handle every refusal) as well as `error` (usually
    the built-in ValueError, TypeError or IndexError it also derives from); a warning
    turned into an error (`error` a Warning subclass) is a warning, not a refusal, and is
    exempt. At least one state must be given: a refusal that changes nothing is checked,
    not assumed. Returns the ExceptionInfo."""
    assert states, "assert_refused needs the state the refused call must leave alone"
    before = [arrays_of(s, depth) for s in states]
    with pytest.raises(error) as info:
        call()
    if not issubclass(error, Warning):
        assert isinstance(info.value, RoboDynError), (
            f"{type(info.value).__name__} is not a RoboDynError: {info.value}"
        )
    assert re.search(match, str(info.value), re.IGNORECASE), (
        f"message {str(info.value)!r} does not match {match!r}"
    )
    for s, b in zip(states, before, strict=True):
        assert_same(b, arrays_of(s, depth), ignore)
    return info
