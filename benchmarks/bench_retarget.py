"""Retargeting the five real climbing captures onto the humanoid or the G1: quality and speed.

    python -m benchmarks.bench_retarget                         # all five, whole, position_pull 0.3
    python -m benchmarks.bench_retarget --robot g1              # onto holosoma's Unitree G1
    python -m benchmarks.bench_retarget --captures mocap_climb_seq_1 --stop 20 --json out.json

The captures are holosoma-retargeting's (envs/motion/holosoma.py; fetched once into the user
cache, about 100 MB). For each: the measured scale, the residual per linked point (mean and
worst, cm), the largest frame-to-frame joint step against the capture's own largest bone
rotation per frame, foot skating of the robot and of the capture (cm/s), the share of frames
the robot penetrates the floor or a box (envs/motion/metrics.py), and the wall time per frame.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from robodyn.envs.motion import holosoma, metrics
from robodyn.envs.motion.retarget import capture_points, retarget
from robodyn.envs.motion.tables import robot_table


def run(name: str, stop: float | None, pull: float, robot: str) -> dict:
    capture = holosoma.load(name)
    if stop is not None:
        capture = capture.segment(0.0, min(stop, capture.duration))
    t0 = time.perf_counter()
    result = retarget(capture, robot_table(robot), position_pull=pull)
    seconds = time.perf_counter() - t0
    row = metrics.report(result, capture_points(capture, result.table), capture.fps, holosoma.boxes(name))
    row.update(
        capture=name, seconds=seconds, ms_per_frame=1000 * seconds / capture.frames, dropped=result.dropped
    )
    return row


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--captures", default=None, help="comma-separated capture names (default: all)")
    p.add_argument("--stop", type=float, default=None, help="use the first STOP seconds of each")
    p.add_argument("--position-pull", type=float, default=0.3)
    p.add_argument("--robot", choices=("humanoid", "g1"), default="humanoid")
    p.add_argument("--json", type=Path, default=None, help="also write the rows here")
    args = p.parse_args(argv)
    holosoma.fetch()
    names = args.captures.split(",") if args.captures else holosoma.capture_names()
    rows = []
    print(
        "capture            frames  scale  resid mean/worst cm  step rad (capture)  skate cm/s (capture)",
        end="",
    )
    print("  penetr.  ms/frame")
    for name in names:
        r = run(name, args.stop, args.position_pull, args.robot)
        rows.append(r)
        resid = f"{r['residual_mean_cm']:8.2f} / {r['residual_worst_cm']:5.2f}"
        step = f"{r['largest_joint_step_rad']:.3f} ({r['capture_largest_bone_rotation_rad']:.3f})"
        skate = f"{100 * r['foot_skating_m_per_s']:5.2f} ({100 * r['capture_foot_skating_m_per_s']:.2f})"
        print(
            f"{name:18s} {r['frames']:6d}  {r['scale']:.3f}  {resid}     {step}      {skate}"
            f"         {100 * r['penetrating_frames']:5.1f} %  {r['ms_per_frame']:6.1f}",
            flush=True,
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
