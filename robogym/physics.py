"""Physics: one engine Simulator of a task's model, read by name.

Tasks never index raw arrays: they ask for `physics.sensor("swing_angle")` or
`physics.qpos("trolley")`, and get (B, ...) views of the engine's batched Data (dm_control's
Physics/Task split). MuJoCo's compiled model supplies the names; the engine supplies the
numbers.
"""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np

import engine

ASSETS = Path(__file__).resolve().parent.parent / "assets"


def asset_path(name: str) -> Path:
    """Absolute path of a model file in the project's assets/ directory."""
    path = ASSETS / name
    if not path.is_file():
        raise FileNotFoundError(f"no asset {name!r} in {ASSETS}")
    return path


class Physics:
    """B environments of one MJCF model: engine state plus name lookups.

    physics.sim       engine.Simulator (batched state in physics.sim.data)
    physics.mj_model  mujoco.MjModel of the same file (names, rendering)
    """

    def __init__(self, model_path: str | Path, batch: int, nthread: int | None = None):
        self.model_path = str(model_path)
        self.mj_model = mujoco.MjModel.from_xml_path(self.model_path)
        self.model = engine.load_mjcf(self.model_path)
        self.sim = engine.Simulator(self.model, batch=batch, nthread=nthread)
        self.batch = int(batch)
        self._sensor_slices: dict[str, slice] = {}
        self.gravity = float(np.linalg.norm(self.model.opt_gravity))  # |g| (m/s^2)

    @property
    def data(self) -> engine.Data:
        return self.sim.data

    @property
    def timestep(self) -> float:
        return float(self.model.opt_timestep)

    # --- name lookups --------------------------------------------------------------------
    def _id(self, objtype: mujoco.mjtObj, name: str) -> int:
        i = mujoco.mj_name2id(self.mj_model, objtype, name)
        if i < 0:
            kind = objtype.name.removeprefix("mjOBJ_").lower()
            raise KeyError(f"model {Path(self.model_path).name} has no {kind} named {name!r}")
        return int(i)

    def joint_dof(self, joint: str) -> int:
        return int(self.mj_model.jnt_dofadr[self._id(mujoco.mjtObj.mjOBJ_JOINT, joint)])

    def joint_qposadr(self, joint: str) -> int:
        return int(self.mj_model.jnt_qposadr[self._id(mujoco.mjtObj.mjOBJ_JOINT, joint)])

    def actuator_id(self, name: str) -> int:
        return self._id(mujoco.mjtObj.mjOBJ_ACTUATOR, name)

    def sensor_slice(self, name: str) -> slice:
        s = self._sensor_slices.get(name)
        if s is None:
            i = self._id(mujoco.mjtObj.mjOBJ_SENSOR, name)
            adr = int(self.mj_model.sensor_adr[i])
            s = self._sensor_slices[name] = slice(adr, adr + int(self.mj_model.sensor_dim[i]))
        return s

    # --- readouts ((B, ...) views of the current state) -----------------------------------
    def sensor(self, name: str) -> np.ndarray:
        """(B, dim) sensor values at the last forward pass."""
        return self.data.sensordata[:, self.sensor_slice(name)]

    def qpos(self, joint: str) -> np.ndarray:
        """(B,) position of a 1-dof joint."""
        return self.data.qpos[:, self.joint_qposadr(joint)]

    def qvel(self, joint: str) -> np.ndarray:
        """(B,) velocity of a 1-dof joint."""
        return self.data.qvel[:, self.joint_dof(joint)]
