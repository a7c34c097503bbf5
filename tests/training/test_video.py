"""training/video.py on tiny frames: the video file is written and decodes to the expected
frames (MP4, and the GIF fallback), its frames show the engine's state, the evaluation's
recorded episodes replay exactly, and the crane's scene has a sky, not a black void."""

from __future__ import annotations

import dataclasses

import imageio.v3 as iio
import mujoco
import numpy as np
import pytest

from robodyn.training import video
from robodyn.training.evaluate import evaluate
from robogym.physics import asset_path

ENV_ID = "RoboDyn/Crane-v0"
W, H = 64, 48  # one tile


@pytest.fixture(scope="module")
def crane():
    return mujoco.MjModel.from_xml_path(str(asset_path("crane.xml")))


def _episode(x0: float, steps: int) -> np.ndarray:
    """(steps, 2) crane qpos: the trolley moving 1 m per frame from x0, the cable swinging."""
    t = np.arange(steps)
    return np.stack([x0 + t, 0.3 * np.sin(t)], axis=1)


EPISODES = {"pd": [_episode(-10.0, 5), _episode(-4.0, 3)], "mpc": [_episode(-8.0, 4)]}
FRAMES = max(5, 4) + 3  # per episode k: the longest of the policies' episodes k


def test_mp4_is_written_and_decodes_to_one_tile_per_policy(crane, tmp_path):
    if video.mp4_encoder() is None:
        pytest.fail("no MP4 encoder: imageio-ffmpeg belongs to the dev extras")
    path = video.write_video(
        tmp_path / "sub" / "episodes.gif", crane, "side", EPISODES, fps=20, width=W, height=H
    )
    assert path == tmp_path / "sub" / "episodes.mp4"  # the suffix says what was written
    frames = iio.imread(path)
    assert frames.shape == (FRAMES, H, 2 * W, 3)


def test_gif_when_no_mp4_encoder(crane, tmp_path, monkeypatch):
    path = video.write_video(
        tmp_path / "a.mp4", crane, "side", EPISODES, fps=20, width=W, height=H, format="gif"
    )
    assert path.suffix == ".gif"
    assert iio.imread(path).shape == (FRAMES, H, 2 * W, 3)

    monkeypatch.setattr(video, "mp4_encoder", lambda: None)
    with pytest.warns(UserWarning, match="GIF"):
        path = video.write_video(tmp_path / "b.mp4", crane, "side", EPISODES, fps=20, width=W, height=H)
    assert path == tmp_path / "b.gif"
    assert iio.imread(path).shape == (FRAMES, H, 2 * W, 3)
    with pytest.raises(RuntimeError, match="imageio-ffmpeg"):
        video.write_video(
            tmp_path / "c.mp4", crane, "side", EPISODES, fps=20, width=W, height=H, format="mp4"
        )
    assert not (tmp_path / "c.mp4").exists()


def test_frames_show_the_engine_state(crane, tmp_path):
    # two one-frame episodes: the trolley at -10 m, then at -3 m with the cable swung
    states = {"pd": [np.array([[-10.0, 0.0]]), np.array([[-3.0, 0.6]])]}
    path = video.write_video(
        tmp_path / "v", crane, "side", states, fps=20, width=160, height=120, format="gif"
    )
    frames = iio.imread(path).astype(float)
    assert frames.shape == (2, 120, 160, 3)
    changed = np.abs(frames[1] - frames[0]).max(axis=2) > 40
    assert changed.mean() > 0.002, "the trolley and the payload should have moved"


def test_bad_input_is_refused_before_any_file(crane, tmp_path):
    with pytest.raises(ValueError, match="shape"):
        video.write_video(
            tmp_path / "v", crane, "side", {"pd": [np.zeros((3, 5))]}, fps=20, width=W, height=H
        )
    with pytest.raises(ValueError, match="offscreen buffer"):
        video.write_video(tmp_path / "v", crane, "side", EPISODES, fps=20, width=4000, height=H)
    with pytest.raises(KeyError, match="camera"):
        video.write_video(tmp_path / "v", crane, "nope", EPISODES, fps=20, width=W, height=H)
    with pytest.raises(ValueError, match="format"):
        video.write_video(tmp_path / "v", crane, "side", EPISODES, fps=20, width=W, height=H, format="avi")
    assert list(tmp_path.iterdir()) == []


def test_eval_video_replays_the_recorded_episodes(tmp_path):
    kwargs = {"max_episode_steps": 4}
    results = [
        evaluate(ENV_ID, p, episodes=3, num_envs=2, seed=1, record=2, env_kwargs=kwargs)
        for p in ("pd", "random")
    ]
    qpos = video.recorded_qpos(results[0])  # checks every replayed observation against the recorded one
    assert [q.shape for q in qpos] == [(5, 2), (5, 2)]
    path = video.write_eval_video(tmp_path / "eval", results, width=W, height=H, format="gif")
    assert iio.imread(path).shape == (10, H, 2 * W, 3)

    traj = results[0].trajectories[1]
    tampered = dataclasses.replace(traj, obs=traj.obs + 0.1)
    bad = dataclasses.replace(results[0], trajectories=[tampered])
    with pytest.raises(RuntimeError, match="replaying"):
        video.recorded_qpos(bad)
    with pytest.raises(ValueError, match="seed"):
        video.write_eval_video(
            tmp_path / "x", [dataclasses.replace(results[0], seed=None)], width=W, height=H
        )


def test_crane_scene_has_a_sky(tmp_path):
    frame = video.render_still(ENV_ID, width=W, height=H)
    assert frame.shape == (H, W, 3)
    top = frame[: H // 4].astype(float)
    assert top.mean() > 40, "the top of the frame should show the skybox, not a black void"
    path = video.write_still(ENV_ID, tmp_path / "crane.png", width=W, height=H)
    np.testing.assert_array_equal(iio.imread(path), frame)
