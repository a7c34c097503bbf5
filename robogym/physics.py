"""Physics: one engine Simulator of a task's model, read by name.

Tasks never index raw arrays: they ask for `physics.named.sensordata["swing_angle"]`,
`physics.named.xpos["torso"]` or `physics.qpos("trolley")`, and get (B, ...) views of the
engine's batched Data (dm_control's Physics/Task split; robogym.named). MuJoCo's compiled
model supplies the names; the engine supplies the numbers. What a task needs beyond reading
and writing state goes through methods here too: a forward pass of some rows, contact
queries by geom, a keyframe, kinematics of poses the env's rows are not in, and inverse
kinematics (tests/robogym/test_task_rules.py checks that the tasks use nothing else).
"""

from __future__ import annotations

import copy
from pathlib import Path

import mujoco
import numpy as np

from robodyn import assets, engine
from robodyn.engine.ik import ik
from robodyn.engine.loader import load_with_mujoco
from robogym.errors import InvalidArgumentError, MissingFileError, UnknownNameError
from robogym.named import named_data, named_model

# the MJCF models: assets/ in the repository, installed as the package robodyn.assets
ASSETS = Path(assets.__file__).resolve().parent


def asset_path(name: str) -> Path:
    """Absolute path of a model file among the project's MJCF assets (the robodyn.assets
    package: assets/ in the repository, package data in an installed wheel)."""
    path = ASSETS / name
    if not path.is_file():
        raise MissingFileError(f"no asset {name!r} in {ASSETS}")
    return path


class Physics:
    """B environments of one MJCF model: engine state plus name lookups.

    physics.sim       engine.Simulator (batched state in physics.sim.data)
    physics.mj_model  mujoco.MjModel of the same file (names, rendering)
    """

    def __init__(
        self,
        model_path: str | Path,
        batch: int,
        nthread: int | None = None,
        nconmax: int | None = None,
        nefcmax: int | None = None,
    ):
        self.model_path = str(model_path)
        # one compilation of the MJCF; the engine's Model shares arrays with the MjModel it was
        # compiled from, so names and drawing use a copy (a renderer's drawing-only changes,
        # Task.decorate_frame, must never reach the physics)
        self.model, compiled = load_with_mujoco(self.model_path, nconmax, nefcmax)
        self.mj_model = copy.copy(compiled)
        self.sim = engine.Simulator(self.model, batch=batch, nthread=nthread)
        self.batch = int(batch)
        self._sensor_slices: dict[str, slice] = {}
        self.gravity = float(np.linalg.norm(self.model.opt_gravity))  # |g| (m/s^2)
        self.named = named_data(self.mj_model, self.sim.data)  # (B, ...) views by name
        self.named_model = named_model(self.mj_model, self.model)  # the model's constants by name
        self._scratch: dict[int, engine.Simulator] = {}  # batch -> a Simulator apart from the env's

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
            raise UnknownNameError(f"model {Path(self.model_path).name} has no {kind} named {name!r}")
        return int(i)

    def joint_dof(self, joint: str) -> int:
        return int(self.mj_model.jnt_dofadr[self._id(mujoco.mjtObj.mjOBJ_JOINT, joint)])

    def joint_qposadr(self, joint: str) -> int:
        return int(self.mj_model.jnt_qposadr[self._id(mujoco.mjtObj.mjOBJ_JOINT, joint)])

    def body_id(self, name: str) -> int:
        return self._id(mujoco.mjtObj.mjOBJ_BODY, name)

    def geom_id(self, name: str) -> int:
        return self._id(mujoco.mjtObj.mjOBJ_GEOM, name)

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
        """(B,) position of a slide or hinge joint (a view: writing into it moves the joint)."""
        return self.data.qpos[:, self._one_dof(joint)[0]]

    def qvel(self, joint: str) -> np.ndarray:
        """(B,) velocity of a slide or hinge joint (a view)."""
        return self.data.qvel[:, self._one_dof(joint)[1]]

    def set_qpos(self, joint: str, value, rows=None) -> None:
        """Write a slide or hinge joint's position in `rows` (all by default)."""
        self.data.qpos[_rows(rows), self._one_dof(joint)[0]] = value

    def set_qvel(self, joint: str, value, rows=None) -> None:
        """Write a slide or hinge joint's velocity in `rows` (all by default)."""
        self.data.qvel[_rows(rows), self._one_dof(joint)[1]] = value

    def free_pose(self, joint: str) -> tuple[np.ndarray, np.ndarray]:
        """(pos (B, 3), quat (B, 4) as w, x, y, z) of a free joint: views into qpos."""
        adr = self._free(joint)[0]
        return self.data.qpos[:, adr : adr + 3], self.data.qpos[:, adr + 3 : adr + 7]

    def set_free_pose(self, joint: str, pos, quat, rows=None) -> None:
        """Write a free joint's position and orientation (a quaternion w, x, y, z, normalized
        here; a zero quaternion is an error) in `rows` (all by default)."""
        quat = np.asarray(quat, dtype=np.float64)
        norm = np.linalg.norm(quat, axis=-1, keepdims=True)
        if np.any(~np.isfinite(norm)) or np.any(norm == 0.0):
            raise InvalidArgumentError(
                f"joint {joint!r}: the quaternion must be finite and non-zero, got {quat}"
            )
        adr = self._free(joint)[0]
        r = _rows(rows)
        self.data.qpos[r, adr : adr + 3] = pos
        self.data.qpos[r, adr + 3 : adr + 7] = quat / norm

    def free_velocity(self, joint: str) -> tuple[np.ndarray, np.ndarray]:
        """(linear (B, 3) in the world frame, angular (B, 3) in the body frame) of a free
        joint, MuJoCo's convention: views into qvel."""
        dof = self._free(joint)[1]
        return self.data.qvel[:, dof : dof + 3], self.data.qvel[:, dof + 3 : dof + 6]

    def set_free_velocity(self, joint: str, linear, angular, rows=None) -> None:
        """Write a free joint's velocity (as free_velocity returns it) in `rows`."""
        dof = self._free(joint)[1]
        r = _rows(rows)
        self.data.qvel[r, dof : dof + 3] = linear
        self.data.qvel[r, dof + 3 : dof + 6] = angular

    def mocap_pose(self, body: str) -> tuple[np.ndarray, np.ndarray]:
        """(pos (B, 3), quat (B, 4) as w, x, y, z) of a mocap body: views into mocap_pos and
        mocap_quat (writing into them moves the body at the next forward pass or step)."""
        k = self._mocap(body)
        return self.data.mocap_pos[:, k], self.data.mocap_quat[:, k]

    def set_mocap_pose(self, body: str, pos, quat=None, rows=None) -> None:
        """Write a mocap body's position (world frame) and, if given, orientation (a
        quaternion w, x, y, z; the kinematics normalize it, a zero one is the identity, as
        in MuJoCo) in `rows` (all by default). Non-finite values are refused before anything
        is written."""
        k = self._mocap(body)
        r = _rows(rows)
        pos = np.asarray(pos, dtype=np.float64)
        quat = None if quat is None else np.asarray(quat, dtype=np.float64)
        for name, value in (("pos", pos), ("quat", quat)):
            if value is not None and not np.all(np.isfinite(value)):
                raise InvalidArgumentError(f"mocap body {body!r}: {name} must be finite, got {value}")
        self.data.mocap_pos[r, k] = pos
        if quat is not None:
            self.data.mocap_quat[r, k] = quat

    def set_hfield(self, name: str, elevations, rows=None) -> None:
        """Give `rows` (all by default) their own terrain in the height field `name`:
        `elevations` (nrow, ncol), or one per row (len(rows), nrow, ncol), fractions of the
        field's height, grid row by grid row (MuJoCo's hfield_data, which a task writes into
        its MjModel; engine.params rounds them to float32 as MuJoCo stores them). The rows'
        other height fields keep what they hold. Not finite: ParamError, nothing changed."""
        m = self.model
        h = self._id(mujoco.mjtObj.mjOBJ_HFIELD, name)
        nrow, ncol, adr = int(m.hfield_nrow[h]), int(m.hfield_ncol[h]), int(m.hfield_adr[h])
        r = np.arange(self.batch)[_rows(rows)]
        elevations = np.asarray(elevations, dtype=np.float64)
        if elevations.shape not in ((nrow, ncol), (len(r), nrow, ncol)):
            raise InvalidArgumentError(
                f"height field {name!r}: elevations must have shape {(nrow, ncol)} or "
                f"{(len(r), nrow, ncol)}, got {elevations.shape}"
            )
        data = self.sim.get_param("hfield_data", r)
        grid = np.broadcast_to(elevations, (len(r), nrow, ncol))
        data[:, adr : adr + nrow * ncol] = grid.reshape(len(r), -1)
        self.sim.set_params(r, {"hfield_data": data})

    def reset_data(self, rows=None, keyframe: str | None = None) -> None:
        """`rows` (all by default) as MuJoCo's mj_resetData leaves them (mj_resetDataKeyframe
        with `keyframe`): qpos at the model's qpos0 (the keyframe's qpos), zero velocity,
        activations, controls, applied forces and solver warm start (the keyframe's act and
        ctrl), time 0, every equality at its declared activity, every mocap body at its
        declared pose (the keyframe's)."""
        d, m, r = self.data, self.model, _rows(rows)
        d.qpos[r] = m.qpos0
        for name in ("qvel", "act", "ctrl", "qfrc_applied", "xfrc_applied", "qacc_warmstart", "time"):
            getattr(d, name)[r] = 0.0
        d.eq_active[r] = m.eq_active0
        self.reset_mocap(rows)
        if keyframe is not None:
            k = self._id(mujoco.mjtObj.mjOBJ_KEY, keyframe)
            mj = self.mj_model
            d.qpos[r] = mj.key_qpos[k]
            d.qvel[r] = mj.key_qvel[k]
            d.act[r] = mj.key_act[k]
            d.ctrl[r] = mj.key_ctrl[k]
            d.mocap_pos[r] = mj.key_mpos[k].reshape(-1, 3)
            d.mocap_quat[r] = mj.key_mquat[k].reshape(-1, 4)
            d.time[r] = mj.key_time[k]

    def reset_mocap(self, rows=None) -> None:
        """Every mocap body of `rows` (all by default) back at its body_pos/body_quat, the
        pose the model declares (as MuJoCo's mj_resetData)."""
        m = self.model
        r = _rows(rows)
        for b in np.flatnonzero(m.body_mocapid >= 0):
            k = m.body_mocapid[b]
            self.data.mocap_pos[r, k] = m.body_pos[b]
            self.data.mocap_quat[r, k] = m.body_quat[b]

    def site_pos(self, site: str) -> np.ndarray:
        """(B, 3) world position of a site at the last forward pass."""
        return self.data.site_xpos[:, self._id(mujoco.mjtObj.mjOBJ_SITE, site)]

    def body_pos(self, body: str) -> np.ndarray:
        """(B, 3) world position of a body's frame at the last forward pass."""
        return self.data.xpos[:, self._id(mujoco.mjtObj.mjOBJ_BODY, body)]

    def site_offset(self, site: str) -> np.ndarray:
        """(3,) a site's position in its body's frame (a model constant)."""
        return self.model.site_pos[self._id(mujoco.mjtObj.mjOBJ_SITE, site)].copy()

    # --- computations beyond reading the state -------------------------------------------------
    def forward(self, rows=None) -> None:
        """Recompute the derived quantities of `rows` (all by default) from their state."""
        self.sim.forward(rows)

    def touching(self, geom: str) -> np.ndarray:
        """(B,) bool: a contact of the last forward pass involves the geom `geom`."""
        g = self.geom_id(geom)
        d = self.data
        live = np.arange(d.contact_geom.shape[1])[None, :] < d.ncon[:, None]
        return np.any(live & np.any(d.contact_geom == g, axis=2), axis=1)

    def any_contact(self) -> np.ndarray:
        """(B,) bool: the last forward pass found a contact."""
        return self.data.ncon > 0

    def keyframe(self, name: str) -> np.ndarray:
        """(nq,) the qpos of the model's keyframe `name` (a copy)."""
        k = self._id(mujoco.mjtObj.mjOBJ_KEY, name)
        return self.mj_model.key_qpos[k].copy()

    def scratch(self, batch: int = 1) -> engine.Simulator:
        """A Simulator of the same model with `batch` rows, apart from the env's (one per
        batch size, made once): for kinematics and planning that must not touch the env's
        rows."""
        sim = self._scratch.get(batch)
        if sim is None:
            sim = self._scratch[batch] = engine.Simulator(self.model, batch=batch, nthread=1)
        return sim

    def site_positions(self, qpos: np.ndarray, sites) -> np.ndarray:
        """(N, len(sites), 3) world positions of `sites` with the model at each of the N
        poses `qpos` (N, nq), from a forward pass of a scratch Simulator."""
        ids = [self._id(mujoco.mjtObj.mjOBJ_SITE, s) for s in sites]
        return self._posed(qpos).site_xpos[:, ids].copy()

    def body_positions(self, qpos: np.ndarray, bodies) -> np.ndarray:
        """(N, len(bodies), 3) world positions of the frames of `bodies` (xpos) with the
        model at each of the N poses `qpos` (N, nq), as site_positions."""
        ids = [self.body_id(b) for b in bodies]
        return self._posed(qpos).xpos[:, ids].copy()

    def body_points(self, qpos: np.ndarray, bodies, offsets) -> np.ndarray:
        """(N, len(bodies), 3) world positions of points fixed in the frames of `bodies`, at
        `offsets` (len(bodies), 3) in each body's frame (xpos + xmat offset), with the model
        at each of the N poses `qpos` (N, nq), as site_positions."""
        ids = [self.body_id(b) for b in bodies]
        d = self._posed(qpos)
        rot = d.xmat[:, ids].reshape(-1, len(ids), 3, 3)
        return d.xpos[:, ids] + np.einsum("nbij,bj->nbi", rot, np.asarray(offsets, dtype=np.float64))

    def geom_frames(self, geoms, qpos: np.ndarray | None = None, rows=None) -> tuple[np.ndarray, np.ndarray]:
        """The world frames of the geoms named in `geoms`: centres (N, G, 3) and rotations
        (N, G, 9, row-major, columns the geom's axes) of the env's `rows` (all rows when None)
        as the last forward pass left them, or, given qpos (N, nq), with the model at those
        poses (as site_positions)."""
        ids = [self.geom_id(g) for g in geoms]
        if qpos is not None:
            d = self._posed(qpos)
            return d.geom_xpos[:, ids].copy(), d.geom_xmat[:, ids].copy()
        r = slice(None) if rows is None else rows
        return self.data.geom_xpos[r][:, ids], self.data.geom_xmat[r][:, ids]

    def lowest_box_corner(self, boxes, qpos: np.ndarray | None = None, rows=None) -> np.ndarray:
        """(N,) the lowest world z of the corners of the box geoms `boxes` (their model sizes),
        for the rows or poses geom_frames takes: a box's centre height less
        sum_i |R[2, i]| h_i over its half sizes h_i and axes R[:, i], the lowest box's."""
        xpos, xmat = self.geom_frames(boxes, qpos, rows)
        size = self.named_model.geom_size[list(boxes)]  # (G, 3) half sizes
        low = xpos[..., 2] - np.sum(np.abs(xmat[..., 6:9]) * size, axis=-1)
        return low.min(axis=1)

    def _posed(self, qpos: np.ndarray) -> engine.Data:
        """The Data of a scratch Simulator after a forward pass at the poses qpos (N, nq)."""
        qpos = np.atleast_2d(qpos)
        sim = self.scratch(len(qpos))
        sim.data.qpos[:] = qpos
        sim.forward()
        return sim.data

    def solve_ik(self, body: str, pos, quat, qpos, max_iter: int = 200) -> np.ndarray:
        """(N, nq) joint positions that put `body`'s frame at the poses (pos (N, 3), quat
        (N, 4)), from the starts `qpos` (N, nq): damped least squares on the engine's
        Jacobians (engine.ik), on a scratch Simulator."""
        qpos = np.atleast_2d(qpos)
        return ik(self.scratch(len(qpos)), self.body_id(body), pos, quat, qpos=qpos, max_iter=max_iter).qpos

    def joint_names(self, kind: str | None = None) -> list[str]:
        """The names of the model's named joints, in its order (what named.qpos and
        named.qvel take); with `kind` ("free", "ball", "slide" or "hinge") those of that type
        only."""
        types = {"free": 0, "ball": 1, "slide": 2, "hinge": 3}
        if kind is not None and kind not in types:
            raise InvalidArgumentError(f"joint kind {kind!r}: one of {', '.join(types)}")
        mj = self.mj_model
        names = [mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_JOINT, j) for j in range(mj.njnt)]
        wanted = [kind is None or int(t) == types[kind] for t in mj.jnt_type]
        return [n for n, w in zip(names, wanted, strict=True) if n and w]

    def sensor_names(self) -> list[str]:
        """A name for every entry of the sensor vector: the sensor's name, with [i] for
        each component of a sensor with more than one."""
        names = []
        for i in range(self.mj_model.nsensor):
            name = mujoco.mj_id2name(self.mj_model, mujoco.mjtObj.mjOBJ_SENSOR, i) or f"sensor{i}"
            dim = int(self.mj_model.sensor_dim[i])
            names.extend([name] if dim == 1 else [f"{name}[{k}]" for k in range(dim)])
        return names

    # --- joint lookups with their type checked ------------------------------------------------
    def _joint(self, joint: str) -> tuple[int, int]:
        j = self._id(mujoco.mjtObj.mjOBJ_JOINT, joint)
        return j, int(self.mj_model.jnt_type[j])

    def _one_dof(self, joint: str) -> tuple[int, int]:
        """(qpos address, dof) of a slide or hinge joint."""
        j, jtype = self._joint(joint)
        if jtype not in (mujoco.mjtJoint.mjJNT_SLIDE, mujoco.mjtJoint.mjJNT_HINGE):
            kind = mujoco.mjtJoint(jtype).name.removeprefix("mjJNT_").lower()
            raise InvalidArgumentError(
                f"joint {joint!r} is a {kind} joint, not a slide or hinge (see free_pose)"
            )
        return int(self.mj_model.jnt_qposadr[j]), int(self.mj_model.jnt_dofadr[j])

    def _mocap(self, body: str) -> int:
        """Row of mocap_pos/mocap_quat that poses a mocap body."""
        k = int(self.model.body_mocapid[self._id(mujoco.mjtObj.mjOBJ_BODY, body)])
        if k < 0:
            raise InvalidArgumentError(f'body {body!r} is not a mocap body (<body mocap="true">)')
        return k

    def _free(self, joint: str) -> tuple[int, int]:
        """(qpos address, dof address) of a free joint."""
        j, jtype = self._joint(joint)
        if jtype != mujoco.mjtJoint.mjJNT_FREE:
            raise InvalidArgumentError(f"joint {joint!r} is not a free joint")
        return int(self.mj_model.jnt_qposadr[j]), int(self.mj_model.jnt_dofadr[j])


def _rows(rows):
    """A row selection for numpy indexing: every row when None."""
    return slice(None) if rows is None else np.asarray(rows)
