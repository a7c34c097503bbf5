"""Motion captures and retargeting: captures as data (capture.py, holosoma.py), a robot's
joint trajectory from a capture by matching points (retarget.py, with the correspondence
tables of tables.py), how good the result is (metrics.py), and a result made into a clip a
task plays (clip.py: on the floor, feet flat, resampled at the control rate)."""

from robodyn.envs.motion.capture import Box, Capture, load_capture
from robodyn.envs.motion.retarget import Result, Settings, retarget
from robodyn.envs.motion.tables import humanoid_table

__all__ = ["Box", "Capture", "Result", "Settings", "humanoid_table", "load_capture", "retarget"]
