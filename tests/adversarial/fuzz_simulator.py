"""Random calls into engine.Simulator with random arguments, well-formed and hostile.

    python -m tests.adversarial.fuzz_simulator --seed 0 --calls 3000

Each call either works or raises a RoboDynError (the error a user catches) whose message
names the call's argument (`NAMES`: each operation's arguments; a plain ValueError, TypeError
or IndexError, such as numpy's "index out of bounds", is a finding, not a refusal). A
refused argument leaves every array of the simulator's Data, and every row's physical
parameters, bit-identical; a refused physics step (NonFiniteError, ContactOverflowError) is
the physics' answer to a poisoned state or parameter, after which the state is put back from
a clean snapshot. Besides the Simulator's calls, per-row parameters (set_param, set_params,
get_param: hostile names, rows and values, and plausible ones) and the sensor model's noise
and delay keywords (robogym.SensorModel) are drawn. Anything else, an unexpected exception
type, a message that names none of the arguments, a warning other than PhysicsWarning, a
changed state after a refusal, is a finding: it is printed with the call that caused it and
the process exits with status 1. A crash of the process (a segfault
in a compiled kernel) shows as a signal in the exit status; tests/adversarial/
test_fuzz_simulator.py runs this module in a subprocess for that reason.

The last line printed is a JSON summary: calls made, accepted, refused per error type, and
accepted and refused per operation.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import traceback
import warnings
from collections import Counter

import numpy as np

from robodyn import engine
from robodyn.engine.errors import PhysicsWarning, RoboDynError
from robodyn.engine.params import DERIVED, PARAMS
from robogym.sensor_model import SensorModel
from tests.helpers import ASSETS, GYM_ASSETS

MODELS = {
    "double_pendulum": ASSETS / "double_pendulum.xml",  # hinges, no contacts
    "crane": ASSETS / "crane.xml",  # slide + hinge, sensors
    "hopper": GYM_ASSETS / "hopper.xml",  # contacts with the floor, joint limits
    "ant": GYM_ASSETS / "ant.xml",  # a free joint (quaternion), contacts, Newton
}
BATCH = 3
PHYSICS_ERRORS = (engine.NonFiniteError, engine.ContactOverflowError)
PARAM_WORDS = "|".join(["parameter", "rows?", "values", "set_params?", *PARAMS])
# what the message of a refused call must name (a regular expression over its arguments);
# None: the call takes no argument a user could get wrong, so it must never be refused
NAMES = {
    "step": r"nstep",
    "forward": r"\brows?\b|row mask",
    "rollout": r"ctrl",
    "snapshot": r"\brows?\b|row mask",
    "restore": r"snapshot|\brows?\b|row mask",
    "jacobian": r"body|point|\brow\b",
    "apply_force": r"body|force|torque|point",
    "integrate_pos": r"qpos|qvel|\bdt\b",
    "differentiate_pos": r"qpos1|qpos2|\bdt\b",
    "nthread": r"nthread",
    "on_bad": r"on_bad",
    "queries": None,
    "poison": None,
    "set_param": PARAM_WORDS,
    "set_params": PARAM_WORDS,
    "get_param": r"parameter|\brows?\b|row mask",
    "sensor_model": r"noise|delay",
}
STATE = ("qpos", "qvel", "ctrl", "qfrc_applied", "xfrc_applied", "act")


class Finding(Exception):
    """Something the fuzzer must report: the simulator broke its contract."""


class Values:
    """Random argument values: half well-formed for the call, half hostile."""

    def __init__(self, rng: np.random.Generator, sim: engine.Simulator):
        self.rng = rng
        self.sim = sim

    def pick(self, options):
        return options[self.rng.integers(len(options))]

    def scalar(self, huge: bool = True):
        """A hostile scalar; `huge=False` leaves out the valid huge ints (10**12 steps would
        run for days, which is not a refusal)."""
        return self.pick(
            [-1, 0, 1, 2, 3, -(10**12), np.int32(2), True, False, 0.0, -0.5, 2.9,
             np.nan, np.inf, -np.inf, 1e300, "1", "a", None, b"x", 1j, [], {}, object()]
            + ([10**12] if huge else [])
        )  # fmt: skip

    def array(self, shape):
        """An array of `shape` with a random dtype and random, sometimes bad, values."""
        kind = self.rng.integers(8)
        if kind == 0:
            return np.full(shape, "0.5")
        if kind == 1:
            return np.ones(shape, dtype=complex)
        if kind == 2:
            return np.ones(shape, dtype=bool)
        if kind == 3:
            return np.zeros(shape, dtype=object)
        a = self.rng.normal(size=shape)
        if kind == 4 and a.size:
            a.flat[self.rng.integers(a.size)] = self.pick([np.nan, np.inf, -np.inf, 1e300])
        if kind == 5:
            return a.astype(np.float32)
        if kind == 6:
            return a.tolist()
        return a

    def shape(self, *good):
        """`good` most of the time, otherwise a near miss: a dimension more or less, or off by one."""
        r = self.rng.integers(6)
        if r < 3:
            return good
        if r == 3:
            return good[:-1]
        if r == 4:
            return (*good, 1)
        i = self.rng.integers(len(good)) if good else 0
        return tuple(n + (1 if j == i else 0) for j, n in enumerate(good))

    def arg(self, *good_shape):
        """A value for an array argument of `good_shape`: sometimes a scalar, else an array."""
        if self.rng.random() < 0.15:
            return self.scalar()
        shape = self.shape(*good_shape)
        return self.rng.normal(size=shape) if self.rng.random() < 0.5 else self.array(shape)

    def count(self, good, huge: bool = True):
        return good if self.rng.random() < 0.5 else self.scalar(huge)

    def rows(self):
        r = self.rng.integers(5)
        if r == 0:
            return None
        if r == 1:
            return self.rng.choice(BATCH, size=self.rng.integers(1, BATCH + 1), replace=False)
        if r == 2:
            return self.rng.random(BATCH) < 0.5
        return self.scalar() if r == 3 else self.array(self.shape(BATCH))


def data_arrays(sim: engine.Simulator) -> dict[str, np.ndarray]:
    """Every Data array, and every row's parameters and derived constants, copied."""
    out = {f"data.{k}": v.copy() for k, v in sim.data._asdict().items() if isinstance(v, np.ndarray)}
    out.update((f"param {n}", sim.get_param(n)) for n in (*PARAMS, *DERIVED))
    return out


def unchanged(before: dict, sim: engine.Simulator) -> str | None:
    """The first array that differs bit for bit from `before`, or None."""
    for k, v in data_arrays(sim).items():
        if v.tobytes() != before[k].tobytes():
            return k
    return None


def poison(v: Values, sim: engine.Simulator) -> None:
    """Write one bad (or merely large) value into one element of a state field."""
    field = getattr(sim.data, v.pick(STATE))
    if field.size:
        field.flat[v.rng.integers(field.size)] = v.pick([np.nan, np.inf, -np.inf, 1e12, -1e11, 1e9])
    sim.step(int(v.rng.integers(1, 4)))


def mutated_snapshot(v: Values, sim: engine.Simulator):
    snap = sim.snapshot(v.rows() if v.rng.random() < 0.3 else None)
    r = v.rng.integers(5)
    if r == 0:
        name = v.pick(list(snap.fields))
        fields = dict(snap.fields)
        fields[name] = v.array(v.shape(*snap.fields[name].shape))
        snap = snap._replace(fields=fields)
    elif r == 1:
        snap = snap._replace(rows=v.rows())
    elif r == 2:
        snap = snap._replace(model_digest=v.pick(["", "0" * 32, None, 3]))
    elif r == 3:
        snap = v.scalar()
    return snap


def param_values(v: Values, sim: engine.Simulator, name: str, k: int):
    """Values for k rows of parameter `name`: plausible (the model's, scaled by 0.5-1.5) or
    hostile (an array of another dtype, shape or with bad values, a scalar)."""
    shape = np.shape(getattr(sim.model, name))
    r = v.rng.random()
    if r < 0.5:
        base = np.asarray(getattr(sim.model, name), dtype=np.float64)
        return base[None] * v.rng.uniform(0.5, 1.5, size=(k, *shape))
    if r < 0.6:
        return np.zeros((k, *shape))
    return v.arg(k, *shape)


def param_name(v: Values) -> str:
    return (
        v.pick([*PARAMS, "body_invweight0", "qpos", "", "BODY_MASS"])
        if v.rng.random() < 0.3
        else v.pick(list(PARAMS))
    )


def set_param(v: Values, sim: engine.Simulator) -> None:
    rows = v.rows()
    k = BATCH if rows is None else int(np.size(rows)) if np.ndim(rows) else 1
    if isinstance(rows, np.ndarray) and rows.dtype == bool:
        k = int(rows.sum())
    name = param_name(v)
    values = param_values(v, sim, name, max(k, 1)) if name in PARAMS else v.arg(k, 3)
    sim.set_param(name, rows, values)


def set_params(v: Values, sim: engine.Simulator) -> None:
    k = int(v.rng.integers(1, BATCH + 1))
    rows = v.rng.choice(BATCH, size=k, replace=False)
    names = {param_name(v) for _ in range(int(v.rng.integers(1, 4)))}
    values = {n: (param_values(v, sim, n, k) if n in PARAMS else v.arg(k)) for n in names}
    sim.set_params(
        rows if v.rng.random() < 0.9 else v.rows(), values if v.rng.random() < 0.95 else list(values)
    )


def sensor_model(v: Values) -> None:
    """A SensorModel with random noise and delay keywords; one that is made must keep finite
    observations finite."""
    n = int(v.rng.integers(1, 6))
    scale = v.pick([0.0, 0.01, 1.0, 1e10, 1e11, 1e308, -0.1, np.nan, np.inf, [0.1] * n, [0.1] * (n + 1)])
    kind = v.pick(["uniform", "gaussian", "normal", None, 1, np.array(["uniform"])])
    delay = v.pick([0, 1, 3, 1000, 1001, 10**9, 2**62, -1, 2.0, True, None, "2"])
    model = SensorModel(BATCH, n, scale, kind, delay)
    model.reset(np.arange(BATCH), [np.random.default_rng(i) for i in range(BATCH)])
    raw = v.rng.normal(size=(BATCH, n)) * 1e9
    for _ in range(3):
        seen = model.observe(raw)
        model.record(raw)
        if not np.all(np.isfinite(seen)):
            raise Finding(
                f"SensorModel({scale!r}, {kind!r}, {delay!r}) made an observation that is not finite"
            )


def operations(v: Values, sim: engine.Simulator) -> dict:
    m = sim.model

    def body():
        return v.count(int(v.rng.integers(m.nbody)))

    return {
        "step": lambda: sim.step(v.count(int(v.rng.integers(1, 5)), huge=False)),
        "forward": lambda: sim.forward(v.rows()),
        "rollout": lambda: sim.rollout(v.arg(BATCH, int(v.rng.integers(1, 4)), m.nu)),
        "snapshot": lambda: sim.snapshot(v.rows()),
        "restore": lambda: sim.restore(mutated_snapshot(v, sim), v.rows() if v.rng.random() < 0.3 else None),
        "jacobian": lambda: sim.jacobian(body(), v.arg(3), v.count(0)),
        "apply_force": lambda: sim.apply_force(body(), v.arg(3), v.arg(3), v.arg(3)),
        "integrate_pos": lambda: sim.integrate_pos(v.arg(2, m.nq), v.arg(2, m.nv), v.count(0.01)),
        "differentiate_pos": lambda: sim.differentiate_pos(v.arg(2, m.nq), v.arg(2, m.nq), v.count(0.01)),
        "nthread": lambda: setattr(sim, "nthread", v.count(int(v.rng.integers(1, 3)))),
        "on_bad": lambda: setattr(sim, "on_bad", v.pick(["raise", "reset", "ignore", None, 1])),
        "queries": lambda: (sim.energy(), sim.inverse(), sim.full_mass_matrix(), sim.contact_force()),
        "poison": lambda: poison(v, sim),
        "set_param": lambda: set_param(v, sim),
        "set_params": lambda: set_params(v, sim),
        "get_param": lambda: sim.get_param(param_name(v), v.rows() if v.rng.random() < 0.5 else None),
        "sensor_model": lambda: sensor_model(v),
    }  # fmt: skip


def fuzz(name: str, calls: int, seed: int, counts: Counter) -> None:
    sim = engine.Simulator(engine.load_mjcf(MODELS[name]), batch=BATCH, nthread=1)
    sim.forward()
    clean = sim.snapshot()
    rng = np.random.default_rng(seed)
    v = Values(rng, sim)
    ops = operations(v, sim)
    names = sorted(ops)
    for i in range(calls):
        op = names[rng.integers(len(names))]
        before = data_arrays(sim)
        try:
            ops[op]()
            counts["accepted"] += 1
            counts[f"accepted {op}"] += 1
        except PHYSICS_ERRORS as e:
            counts[type(e).__name__] += 1
            sim.restore(clean)
            continue
        except RoboDynError as e:
            counts[type(e).__name__] += 1
            counts[f"refused {op}"] += 1
            if NAMES[op] is None or not re.search(NAMES[op], str(e)):
                raise Finding(f"{name} call {i} {op}: refused naming none of its arguments: {e!r}") from e
            if op != "poison" and (field := unchanged(before, sim)) is not None:
                raise Finding(f"{name} call {i} {op}: refused ({e!r}) but changed {field}") from e
        except Exception as e:
            raise Finding(f"{name} call {i} {op}: unexpected {type(e).__name__}: {e}") from e
        if not all(np.isfinite(getattr(sim.data, f)).all() for f in STATE):
            sim.restore(clean)  # a poison the physics answered with a warning; start clean


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--calls", type=int, default=3000, help="calls per model")
    args = p.parse_args(argv)
    counts: Counter = Counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            warnings.simplefilter("ignore", PhysicsWarning)
            for k, name in enumerate(MODELS):
                fuzz(name, args.calls, args.seed + k, counts)
    except Finding:
        traceback.print_exc()
        return 1
    print(json.dumps({"calls": args.calls * len(MODELS), **counts}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
