"""The baseline of RoboDyn/Imitate-v0: the PD on the reference alone (`pd`).

The task's action is the joints' position targets about the next reference frame
(`pd_target`), so the zero action plays the retargeted clip through the PD without any
correction: the robot's joints follow the reference, but nothing keeps its balance, and it
falls within a few steps of the walk.
"""

from __future__ import annotations

from robodyn.envs.baselines.quadruped import HoldHome


def imitate_pd(env) -> HoldHome:
    """The zero action (targets at the reference pose) for every env."""
    return HoldHome(env)
