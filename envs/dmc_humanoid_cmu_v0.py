"""dm_control's humanoid_CMU domain (dm_control/suite/humanoid_CMU.py): the CMU motion-capture
humanoid (56 hinge joints) stands, walks or runs, as RoboDyn/dmc-humanoid_CMU-<task>-v0: the
humanoid domain's task (envs/dmc_humanoid_v0.py) on the CMU model."""

from __future__ import annotations

from robodyn.envs.dmc_humanoid_v0 import RUN_SPEED, WALK_SPEED, Humanoid, humanoid_doc
from robogym.dmc_task import register_dmc

# the hinge joints in the model's order (qpos and qvel after the root's)
JOINTS = (
    *("lfemurrz", "lfemurry", "lfemurrx", "ltibiarx", "lfootrz", "lfootrx", "ltoesrx"),
    *("rfemurrz", "rfemurry", "rfemurrx", "rtibiarx", "rfootrz", "rfootrx", "rtoesrx"),
    *("lowerbackrz", "lowerbackry", "lowerbackrx", "upperbackrz", "upperbackry", "upperbackrx"),
    *("thoraxrz", "thoraxry", "thoraxrx", "lowerneckrz", "lowerneckry", "lowerneckrx"),
    *("upperneckrz", "upperneckry", "upperneckrx", "headrz", "headry", "headrx"),
    *("lclaviclerz", "lclaviclery", "lhumerusrz", "lhumerusry", "lhumerusrx", "lradiusrx", "lwristry"),
    *("lhandrz", "lhandrx", "lfingersrx", "lthumbrz", "lthumbrx"),
    *("rclaviclerz", "rclaviclery", "rhumerusrz", "rhumerusry", "rhumerusrx", "rradiusrx", "rwristry"),
    *("rhandrz", "rhandrx", "rfingersrx", "rthumbrz", "rthumbrx"),
)


class HumanoidCMU(Humanoid):
    """The CMU humanoid's readouts (dm_control's humanoid_CMU.Physics) and its task, whose
    three tasks differ in `move_speed` (0: stand). The thorax plays the torso's part: its
    frame's zy is the upright measure (the model's thorax has its long axis along y)."""

    domain = "humanoid_CMU"
    model_name = "humanoid_CMU.xml"
    timestep = 0.002
    control_timestep = 0.02
    time_limit = 20.0
    torso_body = "thorax"
    upright_column = "zy"
    extremity_bodies = ("lhand", "lfoot", "rhand", "rfoot")
    joints = JOINTS
    robot = "the CMU humanoid"
    upright_doc = "the thorax frame's zy"


class Stand(HumanoidCMU):
    task = "stand"


class Walk(HumanoidCMU):
    task = "walk"
    move_speed = WALK_SPEED


class Run(HumanoidCMU):
    task = "run"
    move_speed = RUN_SPEED


DmcHumanoidCmuStandEnv, DmcHumanoidCmuStandVectorEnv = register_dmc(
    Stand,
    module=__name__,
    summary="dm_control's humanoid_CMU-stand: stand up and stay still",
    doc=humanoid_doc(Stand, "stand up and stay still"),
)
DmcHumanoidCmuWalkEnv, DmcHumanoidCmuWalkVectorEnv = register_dmc(
    Walk,
    module=__name__,
    summary="dm_control's humanoid_CMU-walk: walk at 1 m/s",
    doc=humanoid_doc(Walk, "walk at 1 m/s or more"),
)
DmcHumanoidCmuRunEnv, DmcHumanoidCmuRunVectorEnv = register_dmc(
    Run,
    module=__name__,
    summary="dm_control's humanoid_CMU-run: run at 10 m/s",
    doc=humanoid_doc(Run, "run at 10 m/s or more"),
)
