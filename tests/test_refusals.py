"""Every refusal in the four layers is a RoboDynError: no module raises a bare built-in error
type a user would get for bad input (ValueError, TypeError, IndexError, KeyError,
FileNotFoundError, AttributeError). Each layer raises its own subclasses instead (engine.errors,
robogym.errors, and the training module's own), which also derive from the built-in type, so
`except ValueError` and `except RoboDynError` both catch them. tests/adversarial/refuse.py
checks the same for every case a test provokes; this test reads every `raise` statement,
including those no test reaches."""

from __future__ import annotations

import ast

from tests.helpers import REPO

LAYERS = ("engine", "robogym", "envs", "training")
BUILTIN = {"ValueError", "TypeError", "IndexError", "KeyError", "FileNotFoundError", "AttributeError"}
# raises that are no refusal of a user's input, each with its reason
NOT_REFUSALS = {
    # a field declared wrongly in engine/fields.py's own declarations: a bug in RoboDyn, raised at import
    ("engine/fields.py", "TypeError"),
    # Bound is private (Simulator._bound); the Simulator refuses replacing its model or data itself
    ("engine/binding.py", "AttributeError"),
    # a Param declared with a default it cannot check: a bug in a task's declaration, at import
    ("robogym/declare.py", "TypeError"),
    # Named.__getattr__ on a private name: Python's attribute protocol (copy and pickle probe them)
    ("robogym/named.py", "AttributeError"),
    # a module's __getattr__ for a name it does not have: Python's attribute protocol
    ("envs/baselines/__init__.py", "AttributeError"),
}


def _raised_builtins(path) -> list[tuple[int, str]]:
    """(line, name) of every `raise Name(...)` or `raise Name` of a built-in error type."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Raise) and node.exc is not None:
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(exc, ast.Name) and exc.id in BUILTIN:
                found.append((node.lineno, exc.id))
    return found


def test_no_layer_refuses_with_a_bare_builtin_error():
    offenders = []
    modules = 0
    for layer in LAYERS:
        for path in sorted((REPO / layer).rglob("*.py")):
            modules += 1
            rel = path.relative_to(REPO).as_posix()
            offenders += [f"{rel}:{line} raises {name}" for line, name in _raised_builtins(path)
                          if (rel, name) not in NOT_REFUSALS]  # fmt: skip
    assert modules >= 90  # every module of the four layers was read (95 today)
    assert not offenders, "raise a RoboDynError subclass instead:\n" + "\n".join(offenders)


def test_the_exceptions_listed_are_still_raised():
    """An entry of NOT_REFUSALS that no longer matches anything is stale: remove it."""
    for rel, name in NOT_REFUSALS:
        assert name in {n for _, n in _raised_builtins(REPO / rel)}, (rel, name)
