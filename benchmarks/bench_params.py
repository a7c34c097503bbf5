"""What per-row physical parameters cost: stepping a batch whose rows are each their own robot
against the same batch on the model's shared parameters, and the price of drawing new ones.

    python -m benchmarks.bench_params                 # quadruped and humanoid, B = 64, 1 thread
    python -m benchmarks.bench_params --batch 256 --threads 2

For each model, three Simulators of B rows start from the home keyframe: "shared", on the
model's own parameters (every row shares the model's record); "own", every row given the
model's values as parameters of its own (a record each: the same physics, so the ratio is
the cost of the records alone); "drawn", every row's masses, inertias, centres of mass,
armature, damping and friction drawn anew (`draw`: other physics, other contacts and solver
iterations). They step the same zero controls for --steps steps, in turn, --repeat times;
the best time of each is kept. Then `set_params` of all B rows is timed, with and
without the masses (which need engine.setconst's recomputation at qpos0). Run it on an idle
machine: the ratio is the point, and anything else running skews it.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from robodyn import engine
from robogym.physics import asset_path

MODELS = ("quadruped.xml", "humanoid.xml")
KEYS = ("shared", "own", "drawn")
DRAWN = ("body_mass", "body_inertia", "body_ipos", "dof_armature", "dof_damping", "geom_friction")


def draw(model: engine.Model, rows: int, rng: np.random.Generator) -> dict:
    """Each row's parameters: each body's mass and inertia scaled by one U(0.9, 1.1) (so the
    inertia keeps its shape), armature, damping and friction x U(0.9, 1.1), centres of mass
    of the bodies not compiled as simple moved by U(-0.01, 0.01) m."""
    out = {n: np.repeat(np.asarray(getattr(model, n))[None], rows, axis=0) for n in DRAWN}
    body = rng.uniform(0.9, 1.1, (rows, model.nbody))
    out["body_mass"] *= body
    out["body_inertia"] *= body[:, :, None]
    free = np.asarray(model.body_simple) == 0
    out["body_ipos"][:, free] += rng.uniform(-0.01, 0.01, (rows, int(free.sum()), 3))
    for n in ("dof_armature", "dof_damping", "geom_friction"):
        out[n] = out[n] * rng.uniform(0.9, 1.1, out[n].shape)
    return out


def home(sim: engine.Simulator, mj) -> None:
    sim.data.qpos[:] = mj.key_qpos[0] if mj.nkey else sim.model.qpos0
    sim.data.qvel[:] = 0.0
    sim.forward()


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--steps", type=int, default=500)
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args(argv)
    import mujoco

    rng = np.random.default_rng(0)
    print(f"B = {args.batch}, {args.threads} thread(s), {args.steps} steps, best of {args.repeat}")
    print(
        "model      shared (steps/s)  own  (ratio)         drawn (ratio)       set_params: all  "
        "without masses"
    )
    for name in MODELS:
        path = asset_path(name)
        model = engine.load_mjcf(str(path))
        mj = mujoco.MjModel.from_xml_path(str(path))
        sims = {key: engine.Simulator(model, batch=args.batch, nthread=args.threads) for key in KEYS}
        rows = np.arange(args.batch)
        nominal = {n: np.repeat(np.asarray(getattr(model, n))[None], args.batch, axis=0) for n in DRAWN}
        sims["own"].set_params(rows, nominal)
        sims["drawn"].set_params(rows, draw(model, args.batch, rng))
        best = dict.fromkeys(KEYS, np.inf)
        for sim in sims.values():  # warm: compiled, caches loaded
            home(sim, mj)
            sim.step(10)
        for _ in range(args.repeat):
            for key, sim in sims.items():
                home(sim, mj)
                t0 = time.perf_counter()
                sim.step(args.steps)
                best[key] = min(best[key], time.perf_counter() - t0)
        rate = {k: args.batch * args.steps / v for k, v in best.items()}
        own = sims["drawn"]
        values = draw(model, args.batch, rng)
        t0 = time.perf_counter()
        own.set_params(rows, values)
        t_all = time.perf_counter() - t0
        light = {k: v for k, v in values.items() if k in ("dof_damping", "geom_friction")}
        t0 = time.perf_counter()
        own.set_params(rows, light)
        t_light = time.perf_counter() - t0
        ratio = {k: rate[k] / rate["shared"] for k in KEYS}
        own_col = f"{rate['own']:>8,.0f} ({ratio['own']:.3f})"
        drawn_col = f"{rate['drawn']:>8,.0f} ({ratio['drawn']:.3f})"
        print(
            f"{name.removesuffix('.xml'):<10} {rate['shared']:>16,.0f}  {own_col}  {drawn_col}  "
            f"{t_all * 1e3:>12.1f} ms  {t_light * 1e3:>11.2f} ms"
        )


if __name__ == "__main__":
    main()
