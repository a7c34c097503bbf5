"""Strict JSON in and out: what `robodyn` writes parses with any JSON reader, and what a user
types as JSON (--env-kwargs, --algo-kwargs) is JSON.

Python's json module writes a non-finite float as the bare word NaN or Infinity, which is
not JSON (RFC 8259 has no such numbers; a strict reader, e.g. JavaScript's JSON.parse or
jq, refuses the whole file), and reads those words back, and "1e400" as inf. Here:

- `dumps(doc)` writes NaN and +-inf as null (the value is unknown, not a number), numpy
  scalars and arrays as plain numbers and lists, and refuses anything else that is not
  JSON (json.dumps with allow_nan=False, after that explicit conversion);
- `loads(text, what)` refuses NaN, Infinity, numbers that overflow to inf and repeated
  keys of one object, with a JSONInputError naming `what` and the problem.
"""

from __future__ import annotations

import json
import math
from pathlib import PurePath

import numpy as np

from robodyn.engine.errors import RoboDynError
from robogym.errors import ArgumentTypeError


class JSONInputError(RoboDynError, ValueError):
    """Text given as JSON that is not strict JSON (or not the kind of value wanted)."""


def plain(obj):
    """`obj` with every non-finite float replaced by None, numpy scalars and arrays by Python
    numbers and lists, tuples by lists and paths by strings (dict keys must be strings)."""
    if isinstance(obj, dict):
        for k in obj:
            if not isinstance(k, str):
                raise ArgumentTypeError(f"JSON object keys are strings, got {k!r}")
        return {k: plain(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [plain(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return [plain(v) for v in obj.tolist()]
    if isinstance(obj, bool | np.bool_):
        return bool(obj)
    if isinstance(obj, int | np.integer):
        return int(obj)
    if isinstance(obj, float | np.floating):
        return float(obj) if math.isfinite(obj) else None
    if isinstance(obj, PurePath):
        return str(obj)
    if obj is None or isinstance(obj, str):
        return obj
    raise ArgumentTypeError(f"{type(obj).__name__} {obj!r} is not JSON serializable")


def dumps(doc, indent: int | None = 2) -> str:
    """Strict JSON text of `doc` (see the module docstring), with a final newline."""
    return json.dumps(plain(doc), indent=indent, allow_nan=False) + "\n"


def loads(text: str, what: str | None = None):
    """The value strict JSON `text` holds; a JSONInputError for text that is not JSON, a NaN
    or infinite number, or an object with a repeated key, its message led by `what` (e.g.
    "--env-kwargs") where given."""
    lead = f"{what}: " if what else ""

    def refuse_constant(word: str):
        raise JSONInputError(f"{lead}{word} is not a JSON number (JSON numbers are finite)")

    def finite(number: str) -> float:
        x = float(number)
        if not math.isfinite(x):
            raise JSONInputError(f"{lead}the number {number} overflows a float64")
        return x

    def unique_keys(pairs: list) -> dict:
        out: dict = {}
        for k, v in pairs:
            if k in out:
                raise JSONInputError(f"{lead}the key {k!r} appears twice")
            out[k] = v
        return out

    if not isinstance(text, str):
        raise ArgumentTypeError(f"{lead}JSON text must be a str, got {type(text).__name__}")
    try:
        return json.loads(
            text, parse_constant=refuse_constant, parse_float=finite, object_pairs_hook=unique_keys
        )
    except JSONInputError:
        raise
    except ValueError as e:  # JSONDecodeError, or an integer of more digits than int() converts
        raise JSONInputError(f"{lead}not valid JSON ({e}): {_clip(text)}") from None
    except RecursionError:
        raise JSONInputError(f"{lead}JSON nested too deeply: {_clip(text)}") from None


def loads_object(text: str, what: str | None = None) -> dict:
    """loads(text, what), which must be a JSON object ({"name": value, ...})."""
    value = loads(text, what)
    if not isinstance(value, dict):
        lead = f"{what}: " if what else ""
        raise JSONInputError(
            f"{lead}must be a JSON object of keywords, e.g. '{{\"name\": 1.0}}', got a "
            f"{_json_type(value)}: {_clip(text)}"
        )
    return value


def _json_type(value) -> str:
    """The JSON name of a parsed value's kind: object, list, string, boolean, number, null."""
    return {list: "list", str: "string", bool: "boolean", int: "number", float: "number"}.get(
        type(value), "null"
    )


def _clip(text: str, n: int = 60) -> str:
    """`text` on one line (runs of white space made one space), cut to n characters, quoted."""
    text = " ".join(text.split())
    return repr(text if len(text) <= n else text[: n - 3] + "...")
