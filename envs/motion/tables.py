"""Correspondence tables: which capture joint each robot sample point follows.

HUMANOID: RoboDyn's humanoid (assets/humanoid.xml) and a capture skeleton with the joint
names of the common motion-capture rigs (Hips, Spine, Neck, Head, Left/RightArm,
ForeArm, Hand, UpLeg, Leg, Foot, ToeBase: the names of the holosoma-retargeting captures,
envs/motion/holosoma.py). Every sample sits at the joint centre the capture joint marks:
the hips' centre 7 cm under the pelvis origin, the abdomen at the torso's origin, the base
of the neck 0.36 m up the torso, the head's centre, the shoulders, elbows, wrists (the
forearm's end), hips, knees, ankles, and the ball of each foot. The torso carries three
(neck and both shoulders) and so its whole orientation; the pelvis carries three (its
centre, both hips). A foot carries two (ankle and ball), which see its roll only through
the ball's 5 cm below the roll axis: the table holds the ankle rolls with a posture weight
of ANKLE_HOLD (m^2 per rad^2; without it, on the climbing captures a roll flips from one
limit to the other within a frame, 0.6 rad, where the capture's bones turn at most 0.15 rad
per frame).
"""

from __future__ import annotations

from robodyn.envs.motion.retarget import Sample, Table
from robogym.errors import InvalidArgumentError
from robogym.physics import asset_path

ORIGIN = (0.0, 0.0, 0.0)
# a side's limbs: (capture joint, robot body, point in the body, parent joint), with {c} the
# capture's side prefix (Left, Right) and {s} the robot's (left, right)
HUMANOID_LIMBS = (
    ("{c}UpLeg", "{s}_thigh", ORIGIN, "Hips"),
    ("{c}Leg", "{s}_shin", ORIGIN, "{c}UpLeg"),
    ("{c}Foot", "{s}_foot", ORIGIN, "{c}Leg"),
    ("{c}ToeBase", "{s}_foot", (0.12, 0.0, -0.05), "{c}Foot"),
    ("{c}Arm", "{s}_upper_arm", ORIGIN, "Neck"),
    ("{c}ForeArm", "{s}_forearm", ORIGIN, "{c}Arm"),
    ("{c}Hand", "{s}_forearm", (0.0, 0.0, -0.265), "{c}ForeArm"),
)
G1_LIMBS = (
    ("{c}UpLeg", "{s}_hip_pitch_link", ORIGIN, "Hips"),
    ("{c}Leg", "{s}_knee_link", ORIGIN, "{c}UpLeg"),
    ("{c}Foot", "{s}_ankle_pitch_link", ORIGIN, "{c}Leg"),
    ("{c}ToeBase", "{s}_ankle_roll_sphere_5_link", ORIGIN, "{c}Foot"),
    ("{c}Arm", "{s}_shoulder_roll_link", ORIGIN, "Neck"),
    ("{c}ForeArm", "{s}_elbow_link", ORIGIN, "{c}Arm"),
    ("{c}Hand", "{s}_wrist_pitch_link", ORIGIN, "{c}ForeArm"),
    ("{c}HandMiddle3", "{s}_rubber_hand_link", ORIGIN, "{c}Hand"),
)


def _limbs(rows, side: str) -> tuple[Sample, ...]:
    """The samples of `rows` for one side ("left" or "right")."""
    c = side.capitalize()
    return tuple(Sample(j.format(c=c), b.format(s=side), p, parent.format(c=c)) for j, b, p, parent in rows)


ANKLE_HOLD = 1e-2


def humanoid_table() -> Table:
    return Table(
        str(asset_path("humanoid.xml")),
        (
            Sample("Hips", "pelvis", (0.0, 0.0, -0.07), None),
            Sample("Spine", "torso", (0.0, 0.0, 0.0), "Hips"),
            Sample("Neck", "torso", (0.0, 0.0, 0.36), "Spine"),
            Sample("Head", "head", (0.0, 0.0, 0.11), "Neck"),
            *_limbs(HUMANOID_LIMBS, "left"),
            *_limbs(HUMANOID_LIMBS, "right"),
        ),
        hold=(("left_ankle_x", ANKLE_HOLD), ("right_ankle_x", ANKLE_HOLD)),
    )


def g1_table(model: str) -> Table:
    """Unitree G1 (holosoma-retargeting's models/g1/g1_29dof.xml: holosoma.g1_model()) and the
    same capture skeleton, the hand's middle finger too (the G1 has a wrist of three joints).
    Samples sit at the body origins of the joints they stand for, as the package's own
    mocap-to-G1 table pairs them (hips, knees, ankles, the toe sphere, shoulders, elbows, the
    hands), plus the hips' centre 0.103 m under the pelvis and the neck and head on the torso
    (measured on the model at rest). The ankle and wrist rolls are held, as the humanoid's
    ankles are."""
    return Table(
        str(model),
        (
            Sample("Hips", "pelvis", (0.0, 0.0, -0.103), None),
            Sample("Spine", "torso_link", (0.0, 0.0, 0.0), "Hips"),
            Sample("Neck", "torso_link", (0.004, 0.0, 0.28), "Spine"),
            Sample("Head", "torso_link", (0.004, 0.0, 0.40), "Neck"),
            *_limbs(G1_LIMBS, "left"),
            *_limbs(G1_LIMBS, "right"),
        ),
        hold=tuple(
            (f"{side}_{joint}_roll_joint", ANKLE_HOLD)
            for side in ("left", "right")
            for joint in ("ankle", "wrist")
        ),
    )


ROBOTS = ("humanoid", "g1")


def robot_table(robot: str) -> Table:
    """The table of `robot`: "humanoid" (assets/humanoid.xml) or "g1" (holosoma's G1, read
    from the fetched wheel)."""
    if robot == "humanoid":
        return humanoid_table()
    if robot == "g1":
        from robodyn.envs.motion import holosoma

        return g1_table(holosoma.g1_model())
    raise InvalidArgumentError(f"robot must be one of {ROBOTS}, got {robot!r}")
