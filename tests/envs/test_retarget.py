"""envs/motion: captures, the holosoma-retargeting reader and retargeting onto the humanoid.

Oracles: a capture made from the humanoid's own forward kinematics along a known joint
trajectory (the robot's sample points, named as the capture's joints) must retarget back to
that trajectory; the same capture scaled by 1.3 must give the same joint angles (the scale
comes from bone lengths); a capture that asks for joints beyond their range (its forward
kinematics with knees and elbows bent backwards) must never get them. The reader is run on
a wheel-shaped zip written here, with the package's layout, so no download is needed.
"""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest

from robodyn.envs.motion import holosoma
from robodyn.envs.motion.capture import load_capture
from robodyn.envs.motion.clip import load_clip
from robodyn.envs.motion.retarget import Robot, Sample, Table, retarget
from robodyn.envs.motion.tables import humanoid_table
from robogym.errors import InvalidArgumentError
from robogym.physics import Physics, asset_path
from tests.helpers import report

FPS = 30.0


def known_trajectory(robot: Robot, T: int = 45, seed: int = 0, depth: float = 0.5) -> np.ndarray:
    """(T, nq): the base walking 0.3 m/s ahead while turning 0.4 rad/s and bobbing; every
    limited hinge a sinusoid (0.3-0.8 Hz, random phase) about the middle of its range,
    `depth` of the way to its limits, except the joints the table holds (the ankle rolls,
    which its posture weight keeps where they were), held still at a random angle."""
    t = np.arange(T) / FPS
    rng = np.random.default_rng(seed)
    q = np.repeat(robot.rest(1), T, axis=0)
    mid = robot.range.mean(axis=1)
    half = 0.5 * (robot.range[:, 1] - robot.range[:, 0])
    phase, freq = rng.uniform(0, 2 * np.pi, len(mid)), rng.uniform(0.3, 0.8, len(mid))
    q[:, robot.limited_qpos] = mid + depth * half * np.sin(2 * np.pi * freq * t[:, None] + phase)
    held = robot.hold[robot.limited_dof] > 0
    q[:, robot.limited_qpos[held]] = (mid + depth * half * np.sin(phase))[held]
    q[:, 0], q[:, 1], q[:, 2] = 0.3 * t, 0.1 * np.sin(t), 1.0 + 0.03 * np.sin(3 * t)
    yaw = 0.4 * t
    q[:, 3], q[:, 6] = np.cos(yaw / 2), np.sin(yaw / 2)
    return q


def fk_capture(robot: Robot, table: Table, q: np.ndarray, scale: float = 1.0):
    """The robot's sample points along q, as a capture named with the table's joints."""
    P = np.stack([robot.positions(q[i : i + 1])[0] for i in range(len(q))])
    return load_capture(scale * P, [s.joint for s in table.samples], FPS)


def test_a_capture_of_the_robot_itself_retargets_back_to_its_trajectory():
    """(a) at the same proportions every joint within 1e-6 rad of the trajectory the capture
    was made from, the base within 1e-6 m; (b) the capture scaled by 1.3 gives the same
    joint angles (its measured scale is 1 / 1.3)."""
    table = humanoid_table()
    robot = Robot(table)
    q = known_trajectory(robot)
    same = retarget(fk_capture(robot, table, q), table)
    joint_err = np.abs(same.qpos[0, :, 7:] - q[:, 7:]).max()
    base_err = np.abs(same.qpos[0, :, :3] - q[:, :3]).max()
    report("retarget: the robot's own capture, joint angles", joint_err, 1e-6, q.size)
    report("retarget: the robot's own capture, base position (m)", base_err, 1e-6, len(q))
    assert same.scale[0] == pytest.approx(1.0, abs=1e-12)
    assert same.dropped == []
    assert joint_err < 1e-6 and base_err < 1e-6

    bigger = retarget(fk_capture(robot, table, q, scale=1.3), table)
    diff = np.abs(bigger.qpos[0, :, 7:] - same.qpos[0, :, 7:]).max()
    report("retarget: the capture scaled by 1.3 against the original, joint angles", diff, 1e-9, q.size)
    assert bigger.scale[0] == pytest.approx(1 / 1.3, rel=1e-12)
    assert diff < 1e-9


def test_no_joint_ever_leaves_its_range():
    """(c) a capture of the robot with every hinge swept 1.4 times as far as its range allows
    (knees and elbows bent backwards): no frame of the answer has a joint outside its range,
    and the limited joints the capture pushed out of range end up near their limits."""
    table = humanoid_table()
    robot = Robot(table)
    q = known_trajectory(robot, depth=1.4, seed=1)
    beyond = (q[:, robot.limited_qpos] < robot.range[:, 0]) | (q[:, robot.limited_qpos] > robot.range[:, 1])
    assert beyond.mean() > 0.2, "the capture asks for many out-of-range joints"
    res = retarget(fk_capture(robot, table, q), table)
    x = res.qpos[0][:, robot.limited_qpos]
    outside = np.maximum(robot.range[:, 0] - x, x - robot.range[:, 1]).max()
    print(
        f"[retarget] out-of-range requests {beyond.sum()} of {beyond.size}; worst excursion {outside:.3e} rad"
    )
    assert outside < 0, "every joint strictly inside its range on every frame"
    # asked for less than its lower limit, a joint mostly stays within 0.3 rad of that limit
    below = q[:, robot.limited_qpos] < robot.range[:, 0]
    assert np.mean((x - robot.range[:, 0])[below] < 0.3) > 0.5


def test_a_wrong_correspondence_is_dropped_with_a_warning():
    """A table whose Head sample sits on the right foot misses its target by a metre at the
    first frame: it is dropped, with a warning naming it, and the rest fit."""
    table = humanoid_table()
    robot = Robot(table)
    q = known_trajectory(robot, T=5)
    capture = fk_capture(robot, table, q)
    wrong = Table(
        table.model,
        tuple(
            Sample(s.joint, "right_foot", s.point, s.parent) if s.joint == "Head" else s
            for s in table.samples
        ),
    )
    with pytest.warns(UserWarning, match="'Head' misses its target by"):
        res = retarget(capture, wrong)
    assert res.dropped == ["Head"]
    assert "Head" not in [s.joint for s in res.table.samples]
    assert res.residual.max() < 1e-4


def test_load_capture_refuses_bad_input():
    good = np.zeros((4, 2, 3))
    for args, message in (
        ((np.zeros((4, 2)), ["a", "b"], 30), r"shape \(T, J, 3\), got \(4, 2\)"),
        ((np.zeros((4, 2, 2)), ["a", "b"], 30), r"shape \(T, J, 3\)"),
        ((good, ["a"], 30), "1 joint names for 2 joints"),
        ((good, ["a", "a"], 30), "repeated: a"),
        ((good, ["a", "b"], 0), "fps must be a finite number > 0"),
        ((good, ["a", "b"], "30"), "fps must be a finite number > 0"),
        ((np.full((4, 2, 3), "x"), ["a", "b"], 30), "must be numbers"),
    ):
        with pytest.raises(InvalidArgumentError, match=message):
            load_capture(*args)
    nan = good.copy()
    nan[2, 1, 0] = np.nan
    nan[3, 0, 2] = np.inf
    with pytest.raises(InvalidArgumentError, match="2 frames hold a NaN or an infinity: frames 2, 3"):
        load_capture(nan, ["a", "b"], 30)
    capture = load_capture(good, ["a", "b"], 30)
    with pytest.raises(InvalidArgumentError, match="the capture has no joint 'c'; its joints: a, b"):
        capture.joint("c")
    with pytest.raises(InvalidArgumentError, match="the capture has no joint named Hips, Spine"):
        retarget(capture, humanoid_table())
    with pytest.raises(InvalidArgumentError, match="position_pull must be in"):
        retarget(capture, humanoid_table(), position_pull=1.5)


def fake_wheel(path, frames: int = 3) -> np.ndarray:
    """A zip with the wheel's layout: the joint list in config_types/data_type.py, one
    capture, one box mesh."""
    positions = np.arange(frames * 2 * 3, dtype=np.float32).reshape(frames, 2, 3)
    buf = io.BytesIO()
    np.save(buf, positions)
    root = "holosoma_retargeting/"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(
            root + "config_types/data_type.py", 'X = 1\nMOCAP_DEMO_JOINTS = [\n    "Hips",\n    "Head",\n]\n'
        )
        z.writestr(
            root + "demo_data/climb/mocap_climb_seq_7/mocap_climb_seq_7_joint_positions_f0-2.npy",
            buf.getvalue(),
        )
        # a 2 x 1 x 0.4 m box turned 30 degrees about the vertical, its footprint centred on (2, 1)
        c, s = np.cos(np.pi / 6), np.sin(np.pi / 6)
        corners = [(x, y, h) for x in (-1.0, 1.0) for y in (-0.5, 0.5) for h in (0.0, 0.4)]
        obj = "".join(f"v {2 + c * x - s * y} {1 + s * x + c * y} {h}\n" for x, y, h in corners)
        z.writestr(root + "demo_data/climb/mocap_climb_seq_7/box_models/box1.obj", obj + "f 1 2 3\n")
    return positions


def test_the_holosoma_reader_on_a_wheel_shaped_zip(tmp_path, monkeypatch):
    wheel = tmp_path / holosoma.WHEEL
    positions = fake_wheel(wheel)
    assert holosoma.joint_names(wheel) == ("Hips", "Head")
    assert holosoma.capture_names(wheel) == ["mocap_climb_seq_7"]
    c = holosoma.load("mocap_climb_seq_7", wheel)
    np.testing.assert_array_equal(c.positions, positions.astype(np.float64))
    assert c.fps == 30.0 and c.names == ("Hips", "Head") and "Apache-2.0" in c.source
    (box,) = holosoma.boxes("mocap_climb_seq_7", wheel)
    np.testing.assert_allclose(box.centre, [2, 1, 0.2], atol=1e-12)
    np.testing.assert_allclose(sorted(box.half), [0.2, 0.5, 1.0], atol=1e-12)
    # along the box's long axis (30 degrees), 0.9 m from its centre: inside, 0.1 m from the end face
    along = np.array([2 + 0.9 * np.cos(np.pi / 6), 1 + 0.9 * np.sin(np.pi / 6)])
    assert box.depth(np.array([*along, 0.2])) == pytest.approx(0.1, abs=1e-12)
    assert box.top(along) == pytest.approx(0.4, abs=1e-12)
    assert box.top(np.array([2.0, 2.0])) == -np.inf  # 1 m across its 0.5 m half width
    assert box.scaled(2.0).depth(np.array([4.0, 2.0, 0.4])) == pytest.approx(0.4, abs=1e-12)
    with pytest.raises(InvalidArgumentError, match="no capture 'seq_0'"):
        holosoma.load("seq_0", wheel)
    monkeypatch.setenv("ROBODYN_CACHE_DIR", str(tmp_path / "empty"))
    assert holosoma.wheel_path() == tmp_path / "empty" / holosoma.WHEEL
    with pytest.raises(InvalidArgumentError, match="robodyn data fetch"):
        holosoma.capture_names()


def test_the_retarget_command_on_a_npy_capture(tmp_path, capsys, monkeypatch):
    """`robodyn retarget FILE.npy --names ... --fps ...` writes the trajectory, its metrics and
    the side-by-side video; `robodyn data list` without the wheel says how to fetch it."""
    from robodyn.training.cli import main

    table = humanoid_table()
    robot = Robot(table)
    q = known_trajectory(robot, T=6)
    capture = fk_capture(robot, table, q)
    path = tmp_path / "walk.npy"
    np.save(path, capture.positions)
    out = tmp_path / "out"
    argv = [
        "retarget",
        str(path),
        "--names",
        ",".join(capture.names),
        "--fps",
        "30",
        "--out",
        str(out),
        "--video",
    ]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "residual per point: mean 0.00 cm" in printed and "retarget.mp4" in printed
    saved = np.load(out / "retarget.npz")
    np.testing.assert_allclose(saved["qpos"][:, 7:], q[:, 7:], atol=1e-6)
    assert saved["fps"] == 30.0 and (out / "retarget.mp4").stat().st_size > 0
    assert (out / "metrics.json").read_text().count("residual_worst_cm") == 1

    # --clip: the same motion on the floor, saved as a clip a task plays
    clip_path = tmp_path / "walk_clip.npz"
    names = ",".join(capture.names)
    argv = [
        "retarget",
        str(path),
        "--names",
        names,
        "--fps",
        "30",
        "--out",
        str(out),
        "--clip",
        str(clip_path),
    ]
    assert main(argv) == 0
    clip = load_clip(clip_path, robot.nq)
    physics = Physics(asset_path("humanoid.xml"), batch=1)
    np.testing.assert_allclose(
        physics.lowest_box_corner(("left_foot", "right_foot"), qpos=clip.qpos), 0.0, atol=1e-12
    )
    ankles = physics.named.qpos.columns([f"{s}_ankle_{a}" for s in ("left", "right") for a in "yx"])
    others = np.setdiff1d(np.arange(3, robot.nq), ankles)  # flatten_feet turns the ankles only
    np.testing.assert_array_equal(clip.qpos[:, others], np.load(out / "retarget.npz")["qpos"][:, others])
    assert clip.fps == 30.0 and clip.source == str(path)
    assert main([*argv[:-2], "--robot", "g1", "--clip", str(clip_path)]) == 2
    assert "--clip writes a clip of RoboDyn's humanoid" in capsys.readouterr().err

    assert main(["retarget", str(path), "--out", str(out)]) == 2
    assert "a .npy capture needs --names" in capsys.readouterr().err
    monkeypatch.setenv("ROBODYN_CACHE_DIR", str(tmp_path / "empty"))
    assert main(["data", "list"]) == 2
    assert "run `robodyn data fetch`" in capsys.readouterr().err
