"""The demo: a double pendulum released from horizontal, simulated by our engine and by MuJoCo.

    python -m engine.demo

For each of MuJoCo's four integrators it runs 10 s of the double pendulum of
assets/double_pendulum.xml in our engine (all four in one batch each) and in MuJoCo, and
prints: the largest energy error (% of the 4.660 J the pendulum can release), the largest
difference between the two trajectories, and steps per second of a batch of 64 in both engines.
"""

from __future__ import annotations

import argparse
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import mujoco
import numpy as np

from robodyn import engine

ASSET = Path(__file__).resolve().parents[1] / "assets" / "double_pendulum.xml"
RELEASABLE = 1.0 * 9.81 * 0.2 + 0.5 * 9.81 * 0.55  # J: m1 g c1 + m2 g (l1 + c2) = 4.65975
INTEGRATORS = ("Euler", "RK4", "implicit", "implicitfast")


def _xml(integrator: str, timestep: float) -> str:
    root = ET.parse(ASSET).getroot()
    option = root.find("option")
    option.set("integrator", integrator)
    option.set("timestep", repr(timestep))
    return ET.tostring(root, encoding="unicode")


def _energy_mujoco(m: mujoco.MjModel, d: mujoco.MjData, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """MuJoCo's energy (potential + kinetic) at every step, and its trajectory of qpos."""
    energy = np.empty(steps + 1)
    qpos = np.empty((steps + 1, m.nq))
    for k in range(steps + 1):
        mujoco.mj_forward(m, d)
        mujoco.mj_energyPos(m, d)
        mujoco.mj_energyVel(m, d)
        energy[k] = d.energy.sum()
        qpos[k] = d.qpos
        if k < steps:
            mujoco.mj_step(m, d)
    return energy, qpos


def _energy_ours(model: engine.Model, steps: int) -> tuple[np.ndarray, np.ndarray]:
    sim = engine.Simulator(model, batch=1)
    energy = np.empty(steps + 1)
    qpos = np.empty((steps + 1, model.nq))
    for k in range(steps + 1):
        sim.forward()
        energy[k] = sim.energy()[0].sum()
        qpos[k] = sim.data.qpos[0]
        if k < steps:
            sim.step()
    return energy, qpos


def _speed(model: engine.Model, mj: mujoco.MjModel, batch: int, seconds: float) -> tuple[float, float]:
    sim = engine.Simulator(model, batch=batch)
    sim.step(10)  # warm-up (compiled already)
    n = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        sim.step(100)
        n += 100
    ours = batch * n / (time.perf_counter() - t0)
    datas = [mujoco.MjData(mj) for _ in range(batch)]
    n = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for d in datas:
            for _ in range(10):
                mujoco.mj_step(mj, d)
        n += 10
    theirs = batch * n / (time.perf_counter() - t0)
    return ours, theirs


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="simulated time (s)")
    parser.add_argument("--timestep", type=float, default=0.002, help="timestep (s)")
    args = parser.parse_args(argv)
    steps = int(round(args.seconds / args.timestep))

    dt_ms = args.timestep * 1e3
    print(f"RoboDyn engine demo: double pendulum ({ASSET.name}), {args.seconds:g} s at {dt_ms:g} ms")
    t0 = time.perf_counter()
    engine.Simulator(engine.load_mjcf(_xml("Euler", args.timestep)), batch=1).step()
    print(f"engine ready in {time.perf_counter() - t0:.1f} s\n")

    print("max energy error over the run, % of the 4.660 J the pendulum can release (MuJoCo's and ours,")
    print("as tests/engine/test_integrators.py measures them: Euler 14.357%, implicit 11.352%, RK4 0.000%")
    print("at 2 ms), and how far our trajectory is from MuJoCo's:")
    print(f"{'integrator':<13} {'energy err ours':>16} {'energy err MuJoCo':>18} {'max |q_ours - q_mj|':>20}")
    for name in INTEGRATORS:
        xml = _xml(name, args.timestep)
        model = engine.load_mjcf(xml)
        mj = mujoco.MjModel.from_xml_string(xml)
        e_ours, q_ours = _energy_ours(model, steps)
        e_mj, q_mj = _energy_mujoco(mj, mujoco.MjData(mj), steps)
        # sample t = 0 .. T - dt (the state before each step), as tests/engine/test_integrators.py does
        err_ours = 100 * np.max(np.abs(e_ours[:-1] - e_ours[0])) / RELEASABLE
        err_mj = 100 * np.max(np.abs(e_mj[:-1] - e_mj[0])) / RELEASABLE
        dq = np.max(np.abs(q_ours - q_mj))
        print(f"{name:<13} {err_ours:>15.3f}% {err_mj:>17.3f}% {dq:>20.2e}")

    model = engine.load_mjcf(_xml("Euler", args.timestep))
    mj = mujoco.MjModel.from_xml_string(_xml("Euler", args.timestep))
    ours, theirs = _speed(model, mj, 64, 1.0)
    print(
        f"\nbatch of 64, Euler: ours {ours:,.0f} steps/s, MuJoCo mj_step loop {theirs:,.0f} steps/s "
        f"({ours / theirs:.2f}x); see benchmarks/ for the full comparison"
    )


if __name__ == "__main__":
    main()
