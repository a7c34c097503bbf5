"""Fuzzing the loader: random mutations of valid MJCF models never crash the process.

Each mutant is one of our models (assets/*.xml) or one of gymnasium's shipped models (read
from site-packages, never copied) with one to three random mutations: an attribute set to
NaN, +-inf, a negative, zero, huge or tiny number, garbage text, the wrong number of
values, or its own numbers negated or scaled by 1e6; an attribute deleted; an element
deleted; an element duplicated. A mutant must either load, and then a Simulator on it
steps 10 steps or raises a RoboDynError, or be refused with a RoboDynError (a plain
ValueError or TypeError is a finding, not a refusal). Anything else fails the test, and so
does a crash of the process: the mutants run in a subprocess, which reports each mutant
before it tries it, so a segfault names the mutant that caused it (its MJCF is left in a
file named in the failure).

The seed and the number of mutants are fixed (N_MUTANTS, after a warm-up that builds a
Simulator on every base model, so compiling the engine's kernels is not counted), so every
run tries the same mutants; the test asserts that all of them ran and prints how many
loaded and stepped, loaded and were refused while stepping, or were refused at load, and
how long they took (2,000 took about 20 s on the 2-core machine shared with other work).
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import time
import traceback
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from tests.helpers import ASSETS, GYM_ASSETS, REPO

SEED = 20261130
N_MUTANTS = 2000  # about 20 s on the project's 2-core machine (2,074 ran in 20 s when chosen)
GYM_MODELS = (
    "ant.xml",
    "hopper.xml",
    "half_cheetah.xml",
    "walker2d.xml",
    "inverted_double_pendulum.xml",
    "reacher.xml",
)
VALUES = (
    "nan",
    "inf",
    "-inf",
    "-1",
    "0",
    "-0.5",
    "1e308",
    "-1e308",
    "1e-300",
    "garbage",
    "",
    "1 2",
    "nan nan nan nan",
)


def base_models() -> dict[str, str]:
    """{name: MJCF text} of the models the mutants start from."""
    paths = sorted(ASSETS.glob("*.xml")) + [GYM_ASSETS / name for name in GYM_MODELS]
    return {p.name: p.read_text() for p in paths}


def mutate(text: str, rng: np.random.Generator) -> tuple[str, list[str]]:
    """(the mutated MJCF, a description of each mutation): 1 to 3 random mutations."""
    root = ET.fromstring(text)
    done = []
    for _ in range(int(rng.integers(1, 4))):
        parents = {child: parent for parent in root.iter() for child in parent}
        elements = list(parents)
        element = elements[int(rng.integers(len(elements)))]
        kind = rng.choice(["value", "value", "value", "own", "drop_attribute", "drop_element", "duplicate"])
        names = sorted(element.attrib)
        if kind in ("value", "own", "drop_attribute") and not names:
            kind = "duplicate"
        if kind == "value":
            name = names[int(rng.integers(len(names)))]
            element.set(name, str(rng.choice(VALUES)))
            done.append(f"<{element.tag} {name}={element.get(name)!r}>")
        elif kind == "own":
            name = names[int(rng.integers(len(names)))]
            try:
                numbers = [float(x) for x in element.get(name).split()]
            except ValueError:
                numbers = [1.0]
            factor = -1.0 if rng.random() < 0.5 else 1e6
            element.set(name, " ".join(repr(x * factor) for x in numbers))
            done.append(f"<{element.tag} {name}={element.get(name)!r}>")
        elif kind == "drop_attribute":
            name = names[int(rng.integers(len(names)))]
            del element.attrib[name]
            done.append(f"<{element.tag}> without {name}")
        elif kind == "drop_element":
            parents[element].remove(element)
            done.append(f"without <{element.tag} {element.attrib}>")
        else:
            parent = parents[element]
            parent.insert(list(parent).index(element) + 1, copy.deepcopy(element))
            done.append(f"<{element.tag} {element.attrib}> twice")
    return ET.tostring(root, encoding="unicode"), done


def _try(text: str) -> tuple[str, str]:
    """(outcome, detail) of one mutant: "stepped", "refused_at_step", "refused_at_load",
    or "wrong_error" with the traceback."""
    from robodyn import engine

    try:
        model = engine.load_mjcf(text)
    except engine.RoboDynError as e:
        return "refused_at_load", f"{type(e).__name__}: {str(e)[:160]}"
    except Exception:
        return "wrong_error", "load_mjcf: " + traceback.format_exc()
    try:
        sim = engine.Simulator(model, batch=2, nthread=1)
        sim.step(10)
    except engine.RoboDynError as e:
        return "refused_at_step", f"{type(e).__name__}: {str(e)[:160]}"
    except Exception:
        return "wrong_error", "Simulator: " + traceback.format_exc()
    return "stepped", ""


def worker(seed: int, count: int, current: str) -> None:
    """Run `count` mutants, one JSON line per event on stdout: a "start" line before each
    mutant, a "result" line after it, then a "done" line with the mutants' time. Each
    mutant's MJCF is written to the file `current` before it is tried, so it survives a
    crash."""
    from robodyn import engine
    from robodyn.engine.errors import MemoryWarning

    warnings.simplefilter("ignore")
    # a mutant asking for a huge buffer is refused by the warning, not by running out of memory
    warnings.simplefilter("error", MemoryWarning)
    models = base_models()
    for text in models.values():  # warm-up: compile the kernels the base models use
        engine.Simulator(engine.load_mjcf(text), batch=2, nthread=1).step(1)
    rng = np.random.default_rng(seed)
    names = sorted(models)
    start = time.perf_counter()
    for i in range(count):
        name = names[int(rng.integers(len(names)))]
        text, mutations = mutate(models[name], rng)
        Path(current).write_text(text)
        print(json.dumps({"event": "start", "i": i, "model": name, "mutations": mutations}), flush=True)
        outcome, detail = _try(text)
        print(json.dumps({"event": "result", "i": i, "outcome": outcome, "detail": detail}), flush=True)
    print(json.dumps({"event": "done", "seconds": time.perf_counter() - start}), flush=True)


def test_mutated_models_never_crash(tmp_path: Path):
    current = tmp_path / "mutant.xml"
    code = "from tests.adversarial.test_fuzz_loader import worker; " + (
        f"worker({SEED}, {N_MUTANTS}, {str(current)!r})"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=1200
    )
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    starts = {e["i"]: e for e in events if e["event"] == "start"}
    results = {e["i"]: e for e in events if e["event"] == "result"}
    counts = {k: 0 for k in ("stepped", "refused_at_step", "refused_at_load", "wrong_error")}
    for result in results.values():
        counts[result["outcome"]] += 1
    seconds = next((e["seconds"] for e in events if e["event"] == "done"), float("nan"))
    print(f"[fuzz] seed {SEED}: {len(results)} mutants in {seconds:.1f} s: {counts}")
    unfinished = sorted(set(starts) - set(results))
    if unfinished:  # the process died inside a mutant
        last = starts[unfinished[0]]
        raise AssertionError(
            f"the process died (exit {proc.returncode}) on mutant {last['i']} of {last['model']}: "
            f"{last['mutations']}; its MJCF is in {current}\n{proc.stderr[-3000:]}"
        )
    assert proc.returncode == 0, f"the fuzz worker failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
    wrong = [(starts[i], r) for i, r in results.items() if r["outcome"] == "wrong_error"]
    for start, result in wrong[:3]:
        print(f"[fuzz] mutant {start['i']} of {start['model']} {start['mutations']}:\n{result['detail']}")
    assert not wrong, f"{len(wrong)} mutants raised something other than RoboDynError/ValueError/TypeError"
    assert len(results) == N_MUTANTS and sorted(results) == list(range(N_MUTANTS)), len(results)
    assert counts["stepped"] > 0 and counts["refused_at_load"] > 0, counts
