"""`robodyn data` and `robodyn retarget`: real motion captures, and a robot's motion from them.

    robodyn data fetch                      # the holosoma-retargeting wheel, once, into the user cache
    robodyn data list                       # its captures: frames, seconds, boxes, source
    robodyn retarget mocap_climb_seq_1 --robot humanoid --stop 20 --video

`retarget` writes to --out (default runs/retarget-<capture>): retarget.npz (qpos (T, nq) at the
capture's frame rate, the scale, the targets, the residuals, the table's joints, the source),
metrics.json (envs/motion/metrics.py) and, with --video, capture and robot side by side.
With --clip PATH (the humanoid only) it also writes the motion as a clip a task plays
(envs/motion/clip.py: each frame's feet put on the floor, the start above the origin):

    robodyn retarget mocap_climb_seq_1 --start 64.5 --stop 70.5 --clip assets/imitate_walk.npz
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import mujoco
import numpy as np

from robodyn.training.cli_error import CLIError
from robogym.errors import InvalidArgumentError


def add_parsers(sub, positive) -> None:
    """The `data` and `retarget` subcommands, on training.cli's subparsers."""
    s = sub.add_parser("data", help="fetch and list the real motion captures (holosoma-retargeting's)")
    s.add_argument(
        "action", choices=("fetch", "list"), help="fetch: download once into the cache; list: show"
    )
    s.set_defaults(func=cmd_data)

    s = sub.add_parser(
        "retarget", help="a robot's joint trajectory from a motion capture, by matching points"
    )
    s.add_argument(
        "capture", help="a capture of `robodyn data list`, or a .npy file (T, J, 3) with --names and --fps"
    )
    s.add_argument(
        "--robot",
        choices=("humanoid", "g1"),
        default="humanoid",
        help="RoboDyn's humanoid, or holosoma's Unitree G1 (read from the fetched wheel)",
    )
    s.add_argument("--names", default=None, help="a .npy capture's J joint names, comma-separated")
    s.add_argument("--fps", type=positive, default=None, help="a .npy capture's frame rate")
    s.add_argument("--start", type=float, default=0.0, help="first second of the capture to use")
    s.add_argument("--stop", type=positive, default=None, help="last second to use (default: its end)")
    s.add_argument(
        "--position-pull",
        type=float,
        default=0.3,
        help="0: targets along the capture's bones at the robot's lengths; 1: the scaled capture's positions",
    )
    s.add_argument(
        "--posture", type=float, default=None, help="weight of the pull towards the previous frame"
    )
    s.add_argument("--video", action="store_true", help="also write the capture and the robot side by side")
    s.add_argument(
        "--out", type=Path, default=None, help="output directory (default runs/retarget-<capture>)"
    )
    s.add_argument(
        "--clip",
        type=Path,
        default=None,
        help="also write the motion on the floor as a clip (.npz) a task plays (the humanoid only)",
    )
    s.set_defaults(func=cmd_retarget)


def cmd_data(args) -> int:
    from robodyn.envs.motion import holosoma

    if args.action == "fetch":
        try:
            print(holosoma.fetch())
        except RuntimeError as e:
            raise CLIError(str(e)) from None
        return 0
    try:
        names = holosoma.capture_names()
    except InvalidArgumentError as e:
        raise CLIError(str(e)) from None
    print(f"{'capture':20s} {'frames':>6s} {'seconds':>8s} {'joints':>6s} {'boxes':>5s}  source")
    for name in names:
        c = holosoma.load(name)
        boxes = len(holosoma.boxes(name))
        print(f"{name:20s} {c.frames:6d} {c.duration:8.1f} {len(c.names):6d} {boxes:5d}  {c.source}")
    return 0


def _capture(args):
    """The Capture and its boxes that args name (a holosoma capture, or a .npy file)."""
    from robodyn.envs.motion import holosoma
    from robodyn.envs.motion.capture import load_capture

    if args.capture.endswith(".npy"):
        if args.names is None or args.fps is None:
            raise CLIError("a .npy capture needs --names (its joints, comma-separated) and --fps")
        capture, boxes = load_capture(args.capture, args.names.split(","), args.fps), []
    else:
        if args.names is not None or args.fps is not None:
            raise CLIError("--names and --fps are for a .npy capture; a listed capture has its own")
        known = holosoma.capture_names()
        if args.capture not in known:
            raise CLIError(f"unknown capture {args.capture!r}; `robodyn data list` shows: {', '.join(known)}")
        capture, boxes = holosoma.load(args.capture), holosoma.boxes(args.capture)
    if args.start != 0.0 or args.stop is not None:
        capture = capture.segment(args.start, capture.duration if args.stop is None else args.stop)
    return capture, boxes


def cmd_retarget(args) -> int:
    from robodyn.envs.motion import metrics
    from robodyn.envs.motion.retarget import Settings, capture_points, retarget
    from robodyn.envs.motion.tables import robot_table

    if args.clip is not None and args.robot != "humanoid":
        raise CLIError("--clip writes a clip of RoboDyn's humanoid; drop --robot g1")
    try:
        capture, boxes = _capture(args)
        table = robot_table(args.robot)
        settings = Settings() if args.posture is None else Settings(posture=args.posture)
        what = f"{capture.frames} frames ({capture.duration:.1f} s) of {capture.source}"
        print(f"retargeting {what} to the {args.robot} ...")
        result = retarget(
            capture, table, args.position_pull, settings, log=lambda line: print(line, flush=True)
        )
        report = metrics.report(result, capture_points(capture, result.table), capture.fps, boxes)
    except InvalidArgumentError as e:
        raise CLIError(str(e)) from None
    name = Path(args.capture).stem
    out = args.out or Path("runs") / f"retarget-{name}"
    out.mkdir(parents=True, exist_ok=True)
    np.savez(
        out / "retarget.npz",
        qpos=result.qpos[0],
        fps=capture.fps,
        scale=result.scale[0],
        targets=result.targets[0],
        residual=result.residual[0],
        joints=np.array([s.joint for s in result.table.samples]),
        source=capture.source,
    )
    (out / "metrics.json").write_text(json.dumps(report, indent=2) + "\n")
    _print_report(report)
    written = [out / "retarget.npz", out / "metrics.json"]
    if args.video:
        written.append(write_video(out / "retarget.mp4", capture, result, boxes))
    if args.clip is not None:
        written.append(write_clip(args.clip, result.qpos[0], capture))
    print("wrote " + ", ".join(str(p) for p in written))
    return 0


def _print_report(r: dict) -> None:
    print(f"scale {r['scale']:.4f} (robot / capture bone lengths), {r['frames']} frames")
    print(f"residual per point: mean {r['residual_mean_cm']:.2f} cm, worst {r['residual_worst_cm']:.2f} cm")
    print(
        f"largest joint step per frame {r['largest_joint_step_rad']:.3f} rad "
        f"(the capture's largest bone rotation per frame: {r['capture_largest_bone_rotation_rad']:.3f} rad)"
    )
    if "foot_skating_m_per_s" in r:
        print(
            f"foot skating {100 * r['foot_skating_m_per_s']:.2f} cm/s "
            f"(the capture's own feet: {100 * r['capture_foot_skating_m_per_s']:.2f} cm/s)"
        )
    print(f"frames penetrating the floor or a box: {100 * r['penetrating_frames']:.1f} %")


def write_clip(path: Path, qpos: np.ndarray, capture) -> Path:
    """The humanoid's retargeted qpos (T, nq) on the floor with its feet flat in stance
    (envs/motion/clip.py: ground, flatten_feet, ground again), saved as a clip with the
    capture's frame rate and source."""
    from robodyn.envs.motion.clip import Clip, flatten_feet, ground, save_clip
    from robogym.physics import Physics, asset_path

    physics = Physics(asset_path("humanoid.xml"), batch=1)
    feet = ("left_foot", "right_foot")
    ankles = (("left_ankle_y", "left_ankle_x"), ("right_ankle_y", "right_ankle_x"))
    flat = flatten_feet(ground(qpos, physics, feet), physics, feet, ankles)
    return save_clip(path, Clip(ground(flat, physics, feet), capture.fps, capture.source))


# --- the video -----------------------------------------------------------------------------------
HIDDEN = -100.0  # a height under the floor: what one tile does not show


def scene(table, capture, boxes, scale: float) -> str:
    """The robot's MJCF with, added: a mocap sphere per capture joint, the boxes (scaled), and
    a camera on a mocap body that the video moves with the motion."""
    from robodyn.envs.motion.retarget import kinematic_mjcf

    root = ET.fromstring(kinematic_mjcf(table.model))  # its meshes found from anywhere
    world = root.find("worldbody")
    eye = ET.SubElement(world, "body", name="retarget_eye", mocap="true")
    ET.SubElement(eye, "camera", name="retarget", pos="0 -3.5 0.5", xyaxes="1 0 0 0 0.15 1", fovy="50")
    for j in capture.names:
        body = ET.SubElement(world, "body", name=f"capture_{j}", mocap="true")
        ET.SubElement(
            body, "geom", type="sphere", size="0.025", rgba=".2 .8 .3 1", contype="0", conaffinity="0"
        )
    for i, box in enumerate(boxes):
        b = box.scaled(scale)
        R = b.axes.T  # columns: the box's axes in the world
        quat = np.zeros(4)
        mujoco.mju_mat2Quat(quat, R.reshape(-1))
        ET.SubElement(
            world,
            "geom",
            name=f"box_{i}",
            type="box",
            pos=" ".join(f"{x:.6g}" for x in b.centre),
            quat=" ".join(f"{x:.6g}" for x in quat),
            size=" ".join(f"{x:.6g}" for x in b.half),
            rgba=".5 .55 .6 .6",
            contype="0",
            conaffinity="0",
        )
    return ET.tostring(root, encoding="unicode")


def write_video(path: Path, capture, result, boxes) -> Path:
    """capture | robot: the scaled capture's joints as spheres, and the retargeted robot, with
    the boxes, from a camera that follows the root at the capture's frame rate."""
    from robodyn.training.video import write_video as write

    table = result.table
    scale = float(result.scale[0])
    mj = mujoco.MjModel.from_xml_string(scene(table, capture, boxes, scale))
    qpos = result.qpos[0]
    T, J = len(qpos), len(capture.names)
    eye = np.zeros((T, 3))
    eye[:] = qpos[:, :3]  # the camera follows the base, looking at it from 3.5 m
    joints = scale * capture.positions  # (T, J, 3)
    quats = np.tile([1.0, 0.0, 0.0, 0.0], (T, 1 + J))
    hidden_robot = qpos.copy()
    hidden_robot[:, 2] = HIDDEN
    hidden_joints = np.full_like(joints, HIDDEN)

    def states(q, pts):
        pos = np.concatenate([eye[:, None], pts], axis=1).reshape(T, -1)
        return np.concatenate([q, pos, quats], axis=1)

    episodes = {"capture": [states(hidden_robot, joints)], "robot": [states(qpos, hidden_joints)]}
    print(f"rendering {T} frames ...", file=sys.stderr)
    return write(path, mj, "retarget", episodes, fps=capture.fps)
