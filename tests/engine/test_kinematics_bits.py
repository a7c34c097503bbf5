"""Forward kinematics equals MuJoCo's mj_kinematics bit for bit: every body's, joint's,
inertial frame's, geom's and site's world pose (xpos, xquat, xmat, xanchor, xaxis, xipos,
ximat, geom_xpos/xmat, site_xpos/xmat), on every model that ships with gymnasium and in
dm_control's suite, at random states. The engine evaluates MuJoCo's formulas in the order
the MuJoCo 4.0.0 binary does (engine.spatial, tests/engine/test_spatial.py) and copies the
frames MuJoCo copies (geom/site/body_sameframe), so nothing is left to rounding: a decision
that rests on a pose (a contact at distance 0, a rejection-sampled initial state) is
MuJoCo's."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from robodyn import engine
from tests.engine.test_dm_control import GENTLE, LOAD, SUITE, _gentle_states
from tests.engine.test_dm_control import _models as suite_models
from tests.helpers import gym_model_paths, random_states

FIELDS = (
    "xpos",
    "xquat",
    "xmat",
    "xanchor",
    "xaxis",
    "xipos",
    "ximat",
    "geom_xpos",
    "geom_xmat",
    "site_xpos",
    "site_xmat",
)
N_STATES = 50
PATHS = {
    **{f"gymnasium/{p.name}": p for p in gym_model_paths()},
    **{f"suite/{n}": SUITE / n for n in suite_models()},
}


@pytest.mark.parametrize("name", list(PATHS))
def test_kinematics_is_mujocos_bit_for_bit(name):
    path = PATHS[name]
    model = engine.load_mjcf(path, **LOAD.get(path.name, {}))
    mj = mujoco.MjModel.from_xml_path(str(path))
    states = _gentle_states if path.name in GENTLE and name.startswith("suite") else random_states
    qpos, _, _ = states(mj, N_STATES, seed=sum(map(ord, name)))
    sim = engine.Simulator(model, batch=N_STATES, nthread=1)
    sim.data.qpos[:] = qpos
    sim.forward()  # its first stage is the kinematics
    d = mujoco.MjData(mj)
    differ = dict.fromkeys(FIELDS, 0)
    numbers = 0
    for i in range(N_STATES):
        d.qpos[:] = qpos[i]
        mujoco.mj_kinematics(mj, d)
        for key in FIELDS:
            ours, theirs = getattr(sim.data, key)[i].reshape(-1), getattr(d, key).reshape(-1)
            differ[key] += int(np.sum(ours.view(np.int64) != theirs.view(np.int64)))
            numbers += ours.size
    print(f"[kinematics] {name}: {sum(differ.values())} of {numbers} numbers differ from mj_kinematics' bits")
    assert not any(differ.values()), differ
