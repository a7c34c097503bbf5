"""Motion captures and retargeting: captures as data (capture.py, holosoma.py), a robot's
joint trajectory from a capture by matching points (retarget.py, with the correspondence
tables of tables.py), and how good the result is (metrics.py)."""

from robodyn.envs.motion.capture import Box, Capture, load_capture
from robodyn.envs.motion.retarget import Result, Settings, retarget
from robodyn.envs.motion.tables import humanoid_table

__all__ = ["Box", "Capture", "Result", "Settings", "humanoid_table", "load_capture", "retarget"]
