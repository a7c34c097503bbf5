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

Every value a Randomization can draw is a valid parameter (engine.params' rules): before any
draw, the range of each drawn value is followed through the Draws by interval arithmetic
(exact here: each Draw uses its own uniform number once) and a scale at which some value could
leave its parameter's valid range (a negative friction, a body losing all its mass) is refused,
naming the parameter, the element and the largest scale that is valid (`max_scale`).

The parameters persist in the physics (and its snapshot) until the row's next reset.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from robodyn.engine.params import PARAMS
from robogym.checks import Bounds
from robogym.declare import Param
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
        if self.param == "hfield_data":
            raise InvalidArgumentError(
                "Draw hfield_data: a terrain is not drawn elevation by elevation; a task writes "
                "each row's terrain with Simulator.set_params at reset"
            )
        if self.kind not in KINDS:
            raise InvalidArgumentError(f"Draw {self.param}: kind must be one of {KINDS}, got {self.kind!r}")
        if not (np.isfinite(self.low) and np.isfinite(self.high) and self.low <= self.high):
            raise InvalidArgumentError(
                f"Draw {self.param}: needs finite low <= high, got {self.low}, {self.high}"
            )


# parameters whose every value must be >= 0 (engine.params.PARAMS), and those that must stay
# > 0 wherever the model's own value is (a body that loses all its mass or inertia can leave
# the mass matrix singular)
_NON_NEGATIVE = {"body_mass", "body_inertia", "geom_friction", "dof_damping", "dof_armature",
                 "dof_frictionloss", "jnt_stiffness"}  # fmt: skip
_POSITIVE_WHERE_NOMINAL_IS = {"body_mass", "body_inertia"}


class Randomization:
    """A task's Draws resolved against a model: `apply(sim, rows, rngs)` at reset. Refuses
    (InvalidArgumentError) a `scale` at which a draw could leave its parameter's valid range."""

    def __init__(self, draws: tuple[Draw, ...], mj_model: mujoco.MjModel, model, scale: float = 1.0):
        self.draws = tuple(draws)
        self.scale = float(scale)
        self.params = tuple(dict.fromkeys(d.param for d in self.draws))  # in declaration order
        self.nominal = {name: np.asarray(getattr(model, name), dtype=np.float64) for name in self.params}
        self._index = [_indices(d, mj_model, model) for d in self.draws]
        self._mj_model = mj_model  # for the names in messages
        problem = self.invalid_draw(self.scale)
        if problem:
            raise InvalidArgumentError(
                f"randomize_scale={scale:g} could draw {problem}; with these draws randomize_scale "
                f"must be at most {self.max_scale():.6g}"
            )

    def __repr__(self) -> str:  # by value: an env's snapshot signature compares it (robogym.core)
        return f"Randomization(draws={self.draws!r}, scale={self.scale!r})"

    def ranges(self, scale: float) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """{name: (low, high)}: every value `draw` can give each parameter at `scale` >= 0,
        the Draws' uniform ranges carried through them by interval arithmetic."""
        out = {name: (self.nominal[name].copy(), self.nominal[name].copy()) for name in self.params}
        for d, (elements, columns) in zip(self.draws, self._index, strict=True):
            lo, hi = out[d.param]
            for e in elements:
                for c in columns:
                    at = (e,) if c is None else (e, c)
                    lo[at], hi[at] = _drawn_range(d, lo[at], hi[at], scale)
        return out

    def invalid_draw(self, scale: float) -> str:
        """What a draw at `scale` could give that its parameter does not allow, or ''."""
        for name, (lo, hi) in self.ranges(scale).items():
            low = lo.reshape(lo.shape[0], -1)
            nominal = self.nominal[name].reshape(low.shape)
            bad = np.zeros(low.shape, dtype=bool)
            if name in _NON_NEGATIVE:
                bad |= low < 0
            if name in _POSITIVE_WHERE_NOMINAL_IS:
                bad |= (nominal > 0) & ~(low > 0)
            if name == "actuator_forcerange":
                bad |= (lo[:, 0] > hi[:, 1])[:, None]
            if np.any(bad):
                e, c = (int(i) for i in np.argwhere(bad)[0])
                column = f" column {c}" if low.shape[1] > 1 else ""
                where = self._element_name(name, e)
                return f"{name}{column} of {where} down to {low[e, c]:.6g} (allowed: {PARAMS[name]})"
        return ""

    def _element_name(self, param: str, i: int) -> str:
        """'geom 3 (floor)', 'dof 7 (joint knee)': element i along `param`'s first axis, named
        as MuJoCo names it."""
        kind = param.split("_", 1)[0]
        if kind not in _OBJECTS:
            return f"component {i}"
        obj = int(self._mj_model.dof_jntid[i]) if kind == "dof" else i
        name = mujoco.mj_id2name(self._mj_model, _OBJECTS[kind], obj)
        if not name:
            return f"{kind} {i}"
        return f"{kind} {i} ({'joint ' if kind == 'dof' else ''}{name})"

    def max_scale(self) -> float:
        """The largest scale (to 1e-9 relative, at most 1e6) whose draws are all valid."""
        lo, hi = 0.0, 1.0
        while not self.invalid_draw(hi):
            if hi >= 1e6:
                return hi
            lo, hi = hi, 2.0 * hi
        while hi - lo > 1e-9 * hi:
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if not self.invalid_draw(mid) else (lo, mid)
        return lo

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


def _drawn_range(d: Draw, lo, hi, scale: float):
    """The range of before + scale (x - before) for `before` in [lo, hi] and x drawn by `d`
    from it (elementwise; lo, hi scalars or arrays): scale: before (1 + scale (u - 1)); add:
    before + scale u; set: (1 - scale) before + scale u; u in [d.low, d.high]."""
    if d.kind == "scale":
        f = (1.0 + scale * (d.low - 1.0), 1.0 + scale * (d.high - 1.0))
        corners = [lo * f[0], lo * f[1], hi * f[0], hi * f[1]]
        return np.minimum.reduce(corners), np.maximum.reduce(corners)
    if d.kind == "add":
        return lo + scale * d.low, hi + scale * d.high
    w = 1.0 - scale  # set
    corners = [
        w * lo + scale * d.low,
        w * hi + scale * d.low,
        w * lo + scale * d.high,
        w * hi + scale * d.high,
    ]
    return np.minimum.reduce(corners), np.maximum.reduce(corners)


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
    friction = Draw("geom_friction", "set", 0.4, 1.0, elements=(floor, *contacts), column=0, shared=True)
    return (friction, *_body_draws(trunk, Draw("body_mass", "add", -1.0, 1.0, elements=(trunk,))))


def locomotion(trunk: str) -> tuple[Draw, ...]:
    """`legged`'s randomization for a model whose nominal values it must keep inside its
    ranges (Gymnasium's locomotion models, whose feet grip at up to 2 and whose trunks weigh
    0.3 to 9 kg), by scaling where `legged` sets or adds:

    - every geom's sliding friction x U(0.6, 1.4), one draw for all (a pair's friction, the
      larger of its two geoms', scales with it);
    - every body's mass x U(0.9, 1.1), one draw each; then the trunk's mass x U(0.8, 1.2);
    - the trunk's centre of mass, every dof's armature and damping as in `legged`.
    """
    friction = Draw("geom_friction", "scale", 0.6, 1.4, column=0, shared=True)
    return (friction, *_body_draws(trunk, Draw("body_mass", "scale", 0.8, 1.2, elements=(trunk,))))


def _body_draws(trunk: str, trunk_mass: Draw) -> tuple[Draw, ...]:
    """The draws `legged` and `locomotion` share, with the trunk's own mass draw."""
    return (
        Draw("body_mass", "scale", 0.9, 1.1),
        trunk_mass,
        Draw("body_ipos", "add", -0.05, 0.05, elements=(trunk,)),
        Draw("dof_armature", "scale", 1.0, 1.05),
        Draw("dof_damping", "scale", 0.9, 1.1),
    )


def randomize_params(max_scale: float) -> tuple[Param, Param]:
    """The `randomize` and `randomize_scale` parameters of a task that declares a
    randomization (`Task.randomization`), for its class body:

        randomize, randomize_scale = randomize_params(2.0)

    `max_scale`: the largest scale at which every draw is a valid robot (the task's test
    checks it with Randomization.invalid_draw)."""
    return (
        Param(False, "draw each episode's physics anew (the task's `randomization`), after its other draws"),
        Param(
            1.0,
            "moves every drawn value towards the nominal robot (0: the nominal robot, bit for bit) or "
            "away from it",
            Bounds(0.0, max_scale),
        ),
    )
