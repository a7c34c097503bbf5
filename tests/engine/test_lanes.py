"""engine.vec and engine.lanes: eight rows a vector, bit for bit the per-row engine.

- every F64x8 operation gives each lane the bits numba's scalar operation gives it
  (special values included: signed zeros, infinities, NaN, subnormals);
- the lane stages (kinematics ... bias force, and the M^-1 solve) give every row of a batch
  the bits the per-row kernels give it, on gymnasium's humanoid and ant, dm_control's
  humanoid and a model with every joint type and frame kind, at states that take each
  per-row branch (identity quaternions, zero angles and velocities, unnormalized and
  collapsed quaternions);
- the compiled lane stages are vector code of the host's widest vectors, with no scalar
  arithmetic and no gathers;
- what the lanes do not handle is refused with a message.
"""

import math
import re
import warnings

import mujoco
import numpy as np
import pytest
from llvmlite import binding as llvm
from numba import njit

from benchmarks.bench_step import model_sources
from robodyn import engine
from robodyn.engine import lanes
from robodyn.engine.com_pos import com_pos
from robodyn.engine.com_vel import com_vel
from robodyn.engine.crb import crb
from robodyn.engine.factor import factor_m, solve_ld
from robodyn.engine.jit import JIT_OPTIONS
from robodyn.engine.kinematics import kinematics
from robodyn.engine.ptr import data_at, model_at
from robodyn.engine.rne import bias
from robodyn.engine.vec import lane, select, splat, vload, vstore

# ---- F64x8 against the scalar operations ------------------------------------------------------


@njit(**JIT_OPTIONS)
def _vector_ops(a, b, out, mask):
    x = vload(a)
    y = vload(b)
    r = (
        x + y, x - y, x * y, x / y, -x, abs(x), math.sqrt(x), math.sin(x), math.cos(x),
        x + 2.5, 2.5 - x, x * 3.0, 1.0 / x, select(x < y, x, y), select(x == y, 1.0, y),
        splat(7.0) + x,
    )  # fmt: skip
    for k in range(len(r)):
        vstore(out[k], r[k])
    m = (x < y, x <= y, x > y, x >= y, x == y, x != y, (x < y) & (x > 0.0), (x < y) | (x > 0.0))
    for k in range(len(m)):
        vstore(mask[k], select(m[k], 1.0, 0.0))
    out[len(r), 3] = lane(x * y, 3)


@njit(**JIT_OPTIONS)
def _scalar_ops(a, b, out, mask):
    for k in range(a.shape[0]):
        x = a[k]
        y = b[k]
        r = (
            x + y, x - y, x * y, x / y, -x, abs(x), math.sqrt(x), math.sin(x), math.cos(x),
            x + 2.5, 2.5 - x, x * 3.0, 1.0 / x, x if x < y else y, 1.0 if x == y else y,
            7.0 + x,
        )  # fmt: skip
        for i in range(len(r)):
            out[i, k] = r[i]
        m = (x < y, x <= y, x > y, x >= y, x == y, x != y, x < y and x > 0.0, x < y or x > 0.0)
        for i in range(len(m)):
            mask[i, k] = 1.0 if m[i] else 0.0
    out[len(r), 3] = a[3] * b[3]


def _bits(x):
    return np.ascontiguousarray(x).view(np.int64)


def test_every_f64x8_operation_is_the_scalar_one_in_each_lane():
    rng = np.random.default_rng(3)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -1.0, 1.0])
    cases = [(special, special[::-1].copy()), (special, special.copy())]
    for _ in range(50):
        a = rng.standard_normal(8) * 10.0 ** rng.uniform(-8, 8, 8)
        b = rng.standard_normal(8) * 10.0 ** rng.uniform(-8, 8, 8)
        b[rng.integers(8)] = a[rng.integers(8)]  # some equal pairs for ==, !=, <=
        cases.append((np.abs(a), b))  # sqrt of positives, of the rest below
        cases.append((a, b))
    for a, b in cases:
        got, want = np.zeros((17, 8)), np.zeros((17, 8))
        got_m, want_m = np.zeros((8, 8)), np.zeros((8, 8))
        with np.errstate(all="ignore"):
            _vector_ops(a, b, got, got_m)
            _scalar_ops(a, b, want, want_m)
        # NaN results compare by being NaN (their payload bits are not specified)
        nan = np.isnan(want)
        assert np.array_equal(np.isnan(got), nan), (a, b)
        assert np.array_equal(_bits(np.where(nan, 0.0, got)), _bits(np.where(nan, 0.0, want))), (a, b)
        assert np.array_equal(got_m, want_m), (a, b)


# ---- the lane stages against the per-row kernels ---------------------------------------------

ALL_JOINTS = """
<mujoco>
  <option gravity="0.3 -0.2 -9.81" integrator="{integrator}" timestep="0.004">
    <flag contact="disable"/>
  </option>
  <worldbody>
    <body name="free" pos="0.1 0.2 1.0" quat="0.9 0.1 0.3 0.2">
      <freejoint/>
      <geom type="box" size="0.1 0.2 0.05" pos="0.05 0 0" euler="10 20 30" mass="2"/>
      <site name="s0" pos="0.1 0.1 0"/>
      <body name="ball" pos="0.3 0 0" euler="5 -10 15">
        <joint name="ball" type="ball" pos="0.02 0.01 0" damping="0.1" armature="0.01"/>
        <geom type="capsule" size="0.04" fromto="0 0 0 0.3 0.1 0" mass="1"/>
        <body name="slide" pos="0.3 0.1 0">
          <joint name="slide" type="slide" axis="0.3 0.4 0.5" pos="0 0.1 0" stiffness="3" springref="0.1"/>
          <geom type="sphere" size="0.05" pos="0.02 0 0.01" mass="0.5"/>
          <body name="hinge" pos="0 0 -0.2" quat="0.7 0 0.7 0">
            <joint name="h1" type="hinge" axis="0 1 0.2" pos="0.01 0 0.02" stiffness="2" damping="0.3"/>
            <joint name="h2" type="hinge" axis="1 0 0" ref="0.3"/>
            <geom type="box" size="0.05 0.05 0.1" mass="0.7"/>
            <site name="s1" pos="0 0 0.1" euler="0 30 0"/>
          </body>
        </body>
      </body>
    </body>
    <body name="fixed" pos="0 1 0.5" euler="0 0 45">
      <geom type="sphere" size="0.1" pos="0.1 0 0"/>
      <body name="arm" pos="0.2 0 0">
        <joint name="h3" type="hinge" axis="0 0 1" damping="0.05"/>
        <geom type="cylinder" size="0.03 0.2" mass="0.4" euler="90 0 0"/>
      </body>
    </body>
  </worldbody>
  <tendon>
    <fixed name="t"><joint joint="h1" coef="0.5"/><joint joint="slide" coef="-1"/></fixed>
  </tendon>
  <actuator>
    <motor joint="h1" gear="2" ctrlrange="-1 1" ctrllimited="true"/>
    <position joint="h2" kp="10" forcerange="-3 3" forcelimited="true"/>
    <velocity joint="h3" kv="2"/>
    <motor tendon="t" gear="1.5"/>
    <general joint="slide" gaintype="affine" gainprm="1 0.2 0.1" biastype="affine" biasprm="0.1 -0.3 -0.2"/>
  </actuator>
</mujoco>
"""


@njit(**JIT_OPTIONS)
def _rows(table, data_address):
    """The per-row kernels the lane stages stand for, in lanes.STAGES's order."""
    d = data_at(data_address)
    for b in range(table.shape[0]):
        m = model_at(table[b])
        kinematics(m, d, b)
        com_pos(m, d, b)
        crb(m, d, b)
        factor_m(m, d, b)
        com_vel(m, d, b)
        bias(m, d, b)


@njit(**JIT_OPTIONS)
def _solve_rows(table, data_address, x):
    d = data_at(data_address)
    for b in range(table.shape[0]):
        solve_ld(x[b], d.qLD[b], d.qLDiagInv[b], model_at(table[b]))


@njit(**JIT_OPTIONS)
def _solve_blocks(model_address, A, x):
    m = model_at(model_address)
    for k in range(x.shape[0]):
        L = lanes.block(A, k)
        lanes.solve_lanes(m, L.qLD, L.qLDiagInv, x[k])


def _states(mj, batch, rng):
    """Random states of `batch` rows, with rows that take every per-row branch: qpos0 itself
    (identity quaternions where qpos0 has them, zero hinge angles), zero velocities,
    quaternions scaled off unit length, a collapsed (zero) quaternion."""
    qpos = np.empty((batch, mj.nq))
    for b in range(batch):
        q = mj.qpos0.copy()
        mujoco.mj_integratePos(mj, q, rng.uniform(-0.8, 0.8, mj.nv), 1.0)
        qpos[b] = q
    qvel = rng.uniform(-2.0, 2.0, (batch, mj.nv))
    qpos[0] = mj.qpos0
    qvel[0] = 0.0
    qvel[1, ::2] = 0.0
    quat_adr = [
        mj.jnt_qposadr[j] + (3 if mj.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE else 0)
        for j in range(mj.njnt)
        if mj.jnt_type[j] in (mujoco.mjtJoint.mjJNT_FREE, mujoco.mjtJoint.mjJNT_BALL)
    ]
    for a in quat_adr:
        qpos[2, a : a + 4] *= 1.5
        qpos[3, a : a + 4] = 0.0
        qpos[4, a : a + 4] = (1.0, 0.0, 0.0, 0.0)
    return qpos, qvel


# what the six stages kinematics ... bias write
STAGE_OUTPUTS = (
    "xpos", "xquat", "xmat", "xipos", "ximat", "xanchor", "xaxis", "geom_xpos", "geom_xmat",
    "site_xpos", "site_xmat", "subtree_com", "cinert", "cdof", "crb", "qM", "qLD", "qLDiagInv",
    "cvel", "cdof_dot", "qfrc_bias",
)  # fmt: skip


def _compare(xml: str, batch: int = 16, seed: int = 0) -> int:
    """Run the lane stages and the per-row kernels on the same random states; assert every
    field is bit-equal and return the number of values compared."""
    mj = mujoco.MjModel.from_xml_string(xml)
    sim = engine.Simulator(engine.load_mjcf(xml), batch=batch, nthread=1)
    qpos, qvel = _states(mj, batch, np.random.default_rng(seed))
    sim.data.qpos[:] = qpos
    sim.data.qvel[:] = qvel
    A = lanes.from_simulator(sim, whole_step=False)
    for name in STAGE_OUTPUTS:
        getattr(A, name)[:] = np.nan  # what the lanes do not write stays NaN
    bound = sim._bound
    _rows(bound.model_table, bound.data_address)
    lanes.run(bound.model_address, A, 0, 5, 1)
    compared = 0
    for name in STAGE_OUTPUTS:
        got = lanes.from_lanes(getattr(A, name))
        want = np.asarray(getattr(sim.data, name))
        assert not np.isnan(want).any(), name
        assert np.array_equal(_bits(got), _bits(want)), f"{name}: worst {np.max(np.abs(got - want)):.3e}"
        compared += want.size
    # the solve: x = M^-1 y with each row's factor, y with zeros (the per-row skip)
    y = np.random.default_rng(seed + 1).standard_normal((batch, mj.nv))
    y[:, ::3] = 0.0
    y[0] = -0.0
    want = y.copy()
    _solve_rows(bound.model_table, bound.data_address, want)
    got = lanes.to_lanes(y)
    _solve_blocks(bound.model_address, A, got)
    assert np.array_equal(_bits(lanes.from_lanes(got)), _bits(want)), "solve"
    return compared + want.size


@pytest.mark.parametrize("name", ["humanoid", "ant_floor", "dmc_humanoid", "all_joints"])
def test_lane_stages_equal_the_per_row_kernels_bit_for_bit(name):
    xml = ALL_JOINTS.format(integrator="Euler") if name == "all_joints" else model_sources()[name]
    compared = _compare(xml)
    print(f"{name}: {compared} values bit-equal to the per-row kernels")


def test_to_lanes_and_back_are_inverse():
    x = np.arange(16 * 5 * 3, dtype=float).reshape(16, 5, 3)
    lx = lanes.to_lanes(x)
    assert lx.shape == (2, 5, 3, 8)
    assert lx[1, 4, 2, 3] == x[11, 4, 2]
    assert np.array_equal(lanes.from_lanes(lx), x)


# ---- whole steps against Simulator.step ------------------------------------------------------


def _step_both(xml, batch, nstep, seed=0, bad_ctrl_row=None):
    mj = mujoco.MjModel.from_xml_string(xml)
    sim = engine.Simulator(engine.load_mjcf(xml), batch=batch, nthread=1)
    rng = np.random.default_rng(seed)
    qpos, qvel = _states(mj, batch, rng)
    sim.data.qpos[:] = qpos
    sim.data.qvel[:] = qvel
    sim.data.ctrl[:] = rng.uniform(-2.0, 2.0, (batch, mj.nu))  # beyond some ctrlranges
    sim.data.qfrc_applied[:] = rng.normal(0.0, 0.5, (batch, mj.nv))
    if bad_ctrl_row is not None:
        sim.data.ctrl[bad_ctrl_row, 0] = np.nan  # that row's controls all count as 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the bad control's warning
        sim.forward()
    A = lanes.from_simulator(sim)
    status = np.full(batch // 8, -1)
    lanes.step(sim._bound.model_address, A, nstep, status)
    assert np.all(status == 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the bad control's warning
        sim.step(nstep)
    return sim, A


@pytest.mark.parametrize(
    "name, integrator", [("humanoid", None), ("all_joints", "Euler"), ("all_joints", "RK4")]
)
def test_lane_steps_equal_simulator_steps_bit_for_bit(name, integrator):
    """One step: every field the lanes hold equals the per-row step's. Fifty steps: the
    state and qacc still do, bit for bit (the same operations in the same order: nothing
    for chaos to amplify)."""
    xml = model_sources()[name] if integrator is None else ALL_JOINTS.format(integrator=integrator)
    sim, A = _step_both(xml, 16, 1, bad_ctrl_row=5)
    compared = 0
    for field in lanes.FIELDS:
        if field in lanes.WORK:
            continue
        got = lanes.from_lanes(getattr(A, field))
        want = np.ascontiguousarray(getattr(sim.data, field))
        assert np.array_equal(_bits(got), _bits(want)), f"{field}: worst {np.max(np.abs(got - want)):.3e}"
        compared += want.size
    sim, A = _step_both(xml, 16, 50, seed=1)
    for field in ("qpos", "qvel", "qacc", "time"):
        assert np.array_equal(_bits(lanes.from_lanes(getattr(A, field))), _bits(getattr(sim.data, field))), (
            field
        )
    print(f"{name} ({integrator or 'RK4'}): {compared} values bit-equal after a step, the state after 50")


def test_lane_step_stops_a_block_at_a_bad_state():
    xml = ALL_JOINTS.format(integrator="Euler")
    sim = engine.Simulator(engine.load_mjcf(xml), batch=16, nthread=1)
    sim.data.qvel[11, 2] = np.inf
    A = lanes.from_simulator(sim)
    status = np.full(2, -1)
    lanes.step(sim._bound.model_address, A, 3, status)
    assert status.tolist() == [0, 1]  # block 1 (rows 8..15) stopped before its first step
    assert np.array_equal(lanes.from_lanes(A.qpos)[8:], sim.data.qpos[8:])


# ---- the machine code ------------------------------------------------------------------------


def test_lane_stages_compile_to_vector_code():
    """The lane stages, compiled, do their arithmetic in the host's widest vector registers:
    no packed arithmetic in narrower ones (a split or a scalar remainder), no scalar add,
    subtract or multiply (a lane loop left scalar), no gathers. Scalar divisions remain:
    1 / (a model constant), once per block."""
    xml = model_sources()["humanoid"]
    sim = engine.Simulator(engine.load_mjcf(xml), batch=8, nthread=1)
    A = lanes.from_simulator(sim)
    probe = njit(**JIT_OPTIONS)(lanes.run.py_func)  # not cached: its machine code is kept
    probe(sim._bound.model_address, A, 0, len(lanes.STAGES) - 1, 1)  # the stages and forward
    asm = next(iter(probe.inspect_asm().values()))
    wide = "zmm" if "+avx512f" in llvm.get_host_cpu_features().flatten() else "ymm"
    packed = re.findall(r"^\s+v(add|sub|mul|div|sqrt)pd\s+(.*)$", asm, re.M)
    regs = [re.findall(r"%([xyz]mm)\d+", operands)[-1] for _, operands in packed]
    scalar = re.findall(r"^\s+v(add|sub|mul)sd\s", asm, re.M)
    print(f"{len(packed)} packed arithmetic instructions ({wide}), {len(scalar)} scalar")
    assert len(packed) > 500
    assert set(regs) == {wide}
    assert scalar == []
    assert "gather" not in asm


# ---- what is refused ------------------------------------------------------------------------


def test_lanes_refuse_what_they_do_not_handle():
    xml = model_sources()["humanoid"]
    model = engine.load_mjcf(xml)
    with pytest.raises(ValueError, match="multiple of 8"):
        lanes.from_simulator(engine.Simulator(model, batch=12, nthread=1))
    sim = engine.Simulator(model, batch=8, nthread=1)
    sim.set_param("body_mass", [3], [np.asarray(model.body_mass) * 1.1])
    with pytest.raises(ValueError, match="share one model"):
        lanes.from_simulator(sim)
    mocap = '<mujoco><worldbody><body mocap="true"><geom size="0.1"/></body></worldbody></mujoco>'
    with pytest.raises(ValueError, match="mocap"):
        lanes.from_simulator(engine.Simulator(engine.load_mjcf(mocap), batch=8, nthread=1))
    sim = engine.Simulator(engine.load_mjcf(ALL_JOINTS.format(integrator="Euler")), batch=8, nthread=1)
    sim.data.xfrc_applied[2, 3, 0] = 1.0
    with pytest.raises(ValueError, match="xfrc_applied"):
        lanes.from_simulator(sim)
    floor = model_sources()["ant_floor"]  # contacts, joint limits, RK4
    why = lanes.unsupported(engine.load_mjcf(floor))
    assert any("contacts" in w for w in why) and any("constraint rows" in w for w in why)
    implicit = ALL_JOINTS.format(integrator="implicitfast")
    with pytest.raises(ValueError, match="implicit integrators"):
        lanes.check_model(engine.load_mjcf(implicit))
