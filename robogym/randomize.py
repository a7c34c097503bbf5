"""Randomized physics: each environment of a batch its own robot, drawn at every reset.

Policies meant to leave simulation are trained on physics that varies from episode to
episode (domain randomization: MuJoCo Playground's `randomize.py` for its Go1 and G1, Isaac
Lab's reset events). A task declares what varies as a tuple of `Draw`s; the env draws them
for each environment it resets, from that environment's own generator, after the task's
own reset draws, and gives the row those parameters with engine.Simulator.set_params. So
row i of a vector env is the robot a single env seeded `seed + i` gets, and turning
randomization on changes none of the episode's other draws (the episodes after it draw from
a generator that has moved on).

A Draw names one engine parameter (engine.params.PARAMS), the elements it applies to (by
name; None: every element but the world body) and the column (None: all), and how a value
x is drawn from the nominal one x0 (the model's):

    kind "scale":  x = x0 * U(low, high)
    kind "add":    x = x0 + U(low, high)
    kind "set":    x = U(low, high)

one draw for all the elements (shared=True) or one for each element and column. Draws act in
order, each on what the ones before left (a mass scaled, then a kilogram added). `scale` (a
task keyword argument) moves every value towards the nominal model or away from it:
x <- x0 + scale (x - x0), so 0 is the nominal robot and 1 the declared ranges.

The parameters persist in the physics (and its snapshot) until the row's next reset.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from robogym.errors import InvalidArgumentError

KINDS = ("scale", "add", "set")

# which MuJoCo object a parameter's first axis counts (opt_gravity has none)
_OBJECTS = {
    "body": mujoco.mjtObj.mjOBJ_BODY,
    "geom": mujoco.mjtObj.mjOBJ_GEOM,
    "dof": mujoco.mjtObj.mjOBJ_JOINT,  # a dof is named by its joint
    "jnt": mujoco.mjtObj.mjOBJ_JOINT,
    "actuator": mujoco.mjtObj.mjOBJ_ACTUATOR,
}


@dataclass(frozen=True)
class Draw:
    """One randomized parameter: see the module docstring."""

    param: str  # an engine.params.PARAMS name, e.g. "body_mass"
    kind: str  # "scale", "add" or "set"
    low: float
    high: float
    elements: tuple[str, ...] | None = None  # element names; None: all (but the world body)
    column: int | None = None  # e.g. 0: sliding friction; None: every column
    shared: bool = False  # one draw for every element (True) or one per element

    def __post_init__(self):
        if self.kind not in KINDS:
            raise InvalidArgumentError(f"Draw {self.param}: kind must be one of {KINDS}, got {self.kind!r}")
        if not (np.isfinite(self.low) and np.isfinite(self.high) and self.low <= self.high):
            raise InvalidArgumentError(
                f"Draw {self.param}: needs finite low <= high, got {self.low}, {self.high}"
            )


class Randomization:
    """A task's Draws resolved against a model: `apply(sim, rows, rngs)` at reset."""

    def __init__(self, draws: tuple[Draw, ...], mj_model: mujoco.MjModel, model, scale: float = 1.0):
        self.draws = tuple(draws)
        self.scale = float(scale)
        self.params = tuple(dict.fromkeys(d.param for d in self.draws))  # in declaration order
        self.nominal = {name: np.asarray(getattr(model, name), dtype=np.float64) for name in self.params}
        self._index = [_indices(d, mj_model, model) for d in self.draws]

    def draw(self, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """One environment's parameters: {name: value of the field's shape}. The Draws act in
        their order, each on the value the ones before it left (a mass scaled, then a kilogram
        added); each draws one number, or one per element and column (shared=False)."""
        out = {name: self.nominal[name].copy() for name in self.params}
        for d, (elements, columns) in zip(self.draws, self._index, strict=True):
            u = rng.uniform(d.low, d.high, size=1 if d.shared else (len(elements), len(columns)))
            value = out[d.param]
            for k, e in enumerate(elements):
                for j, c in enumerate(columns):
                    ui = u[0] if d.shared else u[k, j]
                    at = (e,) if c is None else (e, c)
                    before = value[at]
                    x = {"scale": before * ui, "add": before + ui, "set": ui}[d.kind]
                    value[at] = before + self.scale * (x - before)
        return out

    def apply(self, sim, rows: np.ndarray, rngs: list[np.random.Generator]) -> None:
        """Draw each row's parameters from its generator and give them to the rows."""
        values = [self.draw(rng) for rng in rngs]
        sim.set_params(rows, {name: np.stack([v[name] for v in values]) for name in self.params})


def _indices(d: Draw, mj_model: mujoco.MjModel, model) -> tuple[list, list]:
    """(element indices along the field's first axis, column indices or [None])."""
    shape = np.shape(getattr(model, d.param))
    if d.param == "opt_gravity":
        if d.elements is not None:
            raise InvalidArgumentError("Draw opt_gravity: gravity has no elements; use column")
        return [slice(None)] if d.column is None else [d.column], [None]
    kind = d.param.split("_", 1)[0]
    if d.elements is None:
        elements = list(range(1 if kind == "body" else 0, shape[0]))
    else:
        elements = [_element(mj_model, d.param, kind, name) for name in d.elements]
    if len(shape) == 1:
        if d.column is not None:
            raise InvalidArgumentError(f"Draw {d.param}: the field has no columns, got column={d.column}")
        return elements, [None]
    if d.column is not None and not 0 <= d.column < shape[1]:
        raise InvalidArgumentError(f"Draw {d.param}: column {d.column} out of range (0..{shape[1] - 1})")
    return elements, list(range(shape[1])) if d.column is None else [d.column]


def _element(mj_model: mujoco.MjModel, param: str, kind: str, name: str) -> int:
    """Index along `param`'s first axis of the element called `name`."""
    i = mujoco.mj_name2id(mj_model, _OBJECTS[kind], name)
    if i < 0:
        raise InvalidArgumentError(f"Draw {param}: the model has no {kind} named {name!r}")
    if kind == "dof":
        if mj_model.jnt_type[i] in (mujoco.mjtJoint.mjJNT_FREE, mujoco.mjtJoint.mjJNT_BALL):
            raise InvalidArgumentError(
                f"Draw {param}: joint {name!r} has several dofs; name a hinge or slide"
            )
        return int(mj_model.jnt_dofadr[i])
    return i


def legged(floor: str, contacts: tuple[str, ...], trunk: str) -> tuple[Draw, ...]:
    """MuJoCo Playground's randomization of its Go1 and G1 (`randomize.py`), for a legged
    robot on a floor, in this order:

    - contact friction U(0.4, 1.0), one draw given to the floor and to every geom in
      `contacts` (MuJoCo mixes a pair's friction by maximum, so all of them carry it);
    - every body's mass x U(0.9, 1.1), one draw each; then the trunk's mass + U(-1, 1) kg;
    - the trunk's centre of mass + U(-0.05, 0.05) m along each of its axes;
    - every dof's armature x U(1.0, 1.05);
    - every dof's damping x U(0.9, 1.1) (Playground scales the joints' dry friction, which
      our robots model as viscous damping instead).
    """
    return (
        Draw("geom_friction", "set", 0.4, 1.0, elements=(floor, *contacts), column=0, shared=True),
        Draw("body_mass", "scale", 0.9, 1.1),
        Draw("body_mass", "add", -1.0, 1.0, elements=(trunk,)),
        Draw("body_ipos", "add", -0.05, 0.05, elements=(trunk,)),
        Draw("dof_armature", "scale", 1.0, 1.05),
        Draw("dof_damping", "scale", 0.9, 1.1),
    )
