"""`robodyn play`: where no display exists, or MuJoCo's viewer does not start, exit code 2 and
a message naming the `robodyn eval ... --video` command instead; the engine's state pushed
into an MjData (push_state) is the engine's, with MuJoCo's derived quantities for it; and the
play loop, on a stand-in viewer, shows every state of the episode evaluation runs."""

from __future__ import annotations

import contextlib
import shlex
import sys

import gymnasium as gym
import mujoco
import mujoco.viewer
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from robodyn.training.cli import _parser, main, play, push_state
from robodyn.training.evaluate import evaluate, make_policy

ENV_ID = "RoboDyn/Crane-v0"


class StandInViewer:
    """A passive viewer's interface (lock, sync, is_running, the context manager) without a
    window: each sync() records the MjData's qpos and the engine's row 0 qpos of `env`."""

    def __init__(self, env, data, frames: int | None = None):
        self.env, self.data, self.frames = env, data, frames
        self.synced: list[tuple[np.ndarray, np.ndarray]] = []
        self.locked = False

    @contextlib.contextmanager
    def lock(self):
        self.locked = True
        yield
        self.locked = False

    def sync(self):
        assert not self.locked
        self.synced.append((self.data.qpos.copy(), self.env.unwrapped.physics.data.qpos[0].copy()))

    def is_running(self):
        return self.frames is None or len(self.synced) < self.frames

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def no_display(monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setattr(sys, "platform", "linux")


def test_without_a_display_it_exits_2_naming_the_video_command(monkeypatch, capsys):
    no_display(monkeypatch)
    started = []
    monkeypatch.setattr(mujoco.viewer, "launch_passive", lambda *a, **k: started.append(1))
    assert main(["play", ENV_ID, "--policy", "pd", "--seed", "5", "--fixed"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("robodyn: error: robodyn play needs a display") and err.count("\n") == 1
    assert "neither DISPLAY nor WAYLAND_DISPLAY is set" in err and not started
    command = err.split("`")[1]
    assert command == f"robodyn eval {ENV_ID} --policy pd --episodes 1 --record 1 --seed 5 --fixed --video"
    assert "runs/eval-Crane-v0/episodes.mp4" in err
    args = _parser().parse_args(shlex.split(command)[1:])  # a command robodyn takes
    assert args.video and args.policy == ["pd"] and args.fixed and args.seed == 5
    # the arguments are checked first: a bad policy is reported as such, not as the display
    assert main(["play", ENV_ID, "--policy", "nope"]) == 2
    assert "unknown policy 'nope'" in capsys.readouterr().err


def test_a_viewer_that_does_not_start_exits_2_naming_the_video_command(monkeypatch, capsys):
    monkeypatch.setenv("DISPLAY", ":99")

    def fail(*args, **kwargs):
        raise RuntimeError("glfw: failed to open the display")

    monkeypatch.setattr(mujoco.viewer, "launch_passive", fail)
    assert main(["play", ENV_ID]) == 2
    err = capsys.readouterr().err
    assert "the viewer did not start (RuntimeError: glfw: failed to open the display)" in err
    assert f"`robodyn eval {ENV_ID} --policy random --episodes 1 --record 1 --seed 0 --video`" in err


def test_push_state_copies_the_engines_row_and_runs_mj_forward():
    env = gym.make_vec(ENV_ID, num_envs=3, autoreset_mode=AutoresetMode.DISABLED)
    obs, _ = env.reset(seed=[0, 1, 2])
    rng = np.random.default_rng(0)
    for _ in range(30):
        obs, *_ = env.step(rng.uniform(-1, 1, (3, 1)))
    physics = env.unwrapped.physics
    data = mujoco.MjData(physics.mj_model)
    for row in (2, 0):
        push_state(env, data, row)
        np.testing.assert_array_equal(data.qpos, physics.data.qpos[row])
        np.testing.assert_array_equal(data.qvel, physics.data.qvel[row])
        # mj_forward ran: MuJoCo's sensors for the pushed state are the env's observation of
        # that row (Crane-v0 observes its 7 sensors), and the body poses are the engine's
        np.testing.assert_allclose(data.sensordata, obs[row], rtol=0, atol=1e-9)
        np.testing.assert_allclose(data.xpos, physics.data.xpos[row], rtol=0, atol=1e-9)
    assert not np.array_equal(physics.data.qpos[0], physics.data.qpos[2])  # the rows differ
    env.close()


def test_play_shows_every_state_of_the_episode_evaluation_runs():
    env = gym.make_vec(ENV_ID, num_envs=1, autoreset_mode=AutoresetMode.DISABLED)
    _, policy = make_policy("pd", env, 0)
    data = mujoco.MjData(env.unwrapped.physics.mj_model)
    viewer = StandInViewer(env, data)
    printed = []
    assert (
        play(env, policy, viewer, data, seed=4, episodes=1, speed=1e6, out=lambda t, **k: printed.append(t))
        == 1
    )
    env.close()
    assert len(viewer.synced) == 401  # the reset state and 400 steps
    for shown, engine in viewer.synced:
        np.testing.assert_array_equal(shown, engine)
    assert len({tuple(q) for q, _ in viewer.synced}) > 300  # it moved
    want = evaluate(ENV_ID, "pd", episodes=1, num_envs=1, seed=4, record=0).episodes[0]
    assert len(printed) == 1 and printed[0].startswith("episode 1 (seed 4): ")
    assert f"return {want['return']:.2f}, {want['length']} steps" in printed[0]
    assert f"position_error {want['final']['position_error']:.4g}" in printed[0]
    assert printed[0].endswith("no success")  # the PD leaves the load swinging (README)


def test_play_command_with_a_viewer(monkeypatch, capsys):
    """The command itself, its viewer a stand-in: two episodes of the fixed scenario."""
    monkeypatch.setenv("DISPLAY", ":0")
    viewers = []

    def launch(model, data, **kwargs):
        viewers.append(StandInViewer(envs[-1], data))
        return viewers[-1]

    envs = []
    real_make_vec = gym.make_vec
    monkeypatch.setattr(gym, "make_vec", lambda *a, **k: envs.append(real_make_vec(*a, **k)) or envs[-1])
    monkeypatch.setattr(mujoco.viewer, "launch_passive", launch)
    assert main(["play", ENV_ID, "--policy", "pd", "--fixed", "--episodes", "2", "--speed", "1e6"]) == 0
    out = capsys.readouterr().out
    assert "playing pd on RoboDyn/Crane-v0 in MuJoCo's viewer" in out and "2 episodes played" in out
    assert "episode 1 (seed 0)" in out and "episode 2 (seed 1)" in out
    assert len(viewers[0].synced) == 2 * 401  # each episode's reset state and its 400 steps
    with pytest.raises(SystemExit) as exit:  # argparse's refusal: one line, exit code 2
        main(["play", ENV_ID, "--speed", "0"])
    assert exit.value.code == 2
    assert "--speed: must be a finite number > 0" in capsys.readouterr().err


@pytest.mark.parametrize("flag", ["--episodes", "--speed"])
def test_play_options_show_their_defaults(flag):
    text = " ".join(_parser()._subparsers._group_actions[0].choices["play"].format_help().split())
    assert "default" in text.split(flag, 2)[-1].split(" --")[0]
