"""Videos and stills of a task, drawn by robogym.render.Renderer from the engine's states.

A video shows one tile per policy, side by side, each named in its corner; the recorded
episodes play one after another, episode k of every policy together. A policy whose
episode k is shorter, or that has no episode k, holds its last frame until the longest one
ends, so the video has sum over k of max over policies of T_k frames (T_k: the states of
episode k, reset state included).

    write_video(path, mj_model, camera, {"pd": [qpos0, qpos1], "mpc": [...]}, fps=20)
    write_eval_video(path, [pd_results, mpc_results])  # from training.evaluate's EvalResults
    write_still("RoboDyn/Crane-v0", "docs/crane.png")  # the still a task's docstring links

The file is an MP4 (H.264 through the ffmpeg binary that the imageio-ffmpeg package ships) or,
where that is not installed, a GIF (Pillow); the suffix of the returned path says which.

`training.evaluate` records each episode's seed, observations and actions, not its qpos:
`recorded_qpos` replays the recorded actions on a fresh one-row env from the episode's seed
(the engine is deterministic and its rows independent, so this is the evaluated episode, not
a new one) and checks the replayed observations against the recorded ones.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import gymnasium as gym
import mujoco
import numpy as np
from gymnasium.vector import AutoresetMode

import robogym  # noqa: F401 (registers the RoboDyn/ tasks)
from robogym.errors import InvalidArgumentError, UnknownNameError
from robogym.render import Renderer, View, check_frame_size

FORMATS = ("auto", "mp4", "gif")
REPLAY_TOL = 1e-6  # max |replayed - recorded| observation, relative to 1 + |recorded|


# --- encoders --------------------------------------------------------------------------------------
def mp4_encoder() -> str | None:
    """Path of the ffmpeg binary that writes MP4s (imageio-ffmpeg's), or None if there is none."""
    try:
        import imageio_ffmpeg

        return imageio_ffmpeg.get_ffmpeg_exe()
    except (ImportError, RuntimeError):
        return None


def _resolve_format(fmt: str) -> str:
    if fmt not in FORMATS:
        raise InvalidArgumentError(f"format must be one of {FORMATS}, got {fmt!r}")
    if fmt == "gif":
        return "gif"
    if mp4_encoder() is not None:
        return "mp4"
    if fmt == "mp4":
        raise RuntimeError(
            "no MP4 encoder: install imageio-ffmpeg (pip install imageio-ffmpeg), or write a GIF"
        )
    warnings.warn("no MP4 encoder (imageio-ffmpeg is not installed): writing a GIF", stacklevel=3)
    return "gif"


def _write_mp4(path: Path, frames: Iterator[np.ndarray], size: tuple[int, int], fps: float) -> None:
    import imageio_ffmpeg

    writer = imageio_ffmpeg.write_frames(
        str(path), size, fps=fps, codec="libx264", pix_fmt_out="yuv420p", macro_block_size=1
    )
    writer.send(None)  # start ffmpeg
    try:
        for frame in frames:
            writer.send(np.ascontiguousarray(frame))
    finally:
        writer.close()


def _write_gif(path: Path, frames: Iterator[np.ndarray], fps: float) -> None:
    """Pillow's GIF writer, fed lazily: it keeps one palette image (a byte per pixel) per frame.
    Pillow stores a run of identical frames as one frame shown as long (a GIF may decode to
    fewer frames than were written, never to a different timing)."""
    from PIL import Image

    first = Image.fromarray(next(frames))
    first.save(
        path,
        format="GIF",
        save_all=True,
        append_images=(Image.fromarray(f) for f in frames),
        duration=round(1000.0 / fps),  # ms per frame (GIF stores hundredths of a second)
        loop=0,
    )


# --- videos ----------------------------------------------------------------------------------------
def _check_episodes(
    episodes: Mapping[str, Sequence[np.ndarray]], nq: int, nmocap: int = 0
) -> dict[str, list[np.ndarray]]:
    """Every episode a (T >= 1, nq) qpos array, or (T >= 1, nq + 7 nmocap) with the mocap poses."""
    if not episodes:
        raise InvalidArgumentError("no policy to draw: episodes is empty")
    widths = {nq, nq + 7 * nmocap}
    want = f"nq={nq}" + (f" or nq + 7 nmocap={nq + 7 * nmocap}" if nmocap else "")
    out = {}
    for name, eps in episodes.items():
        eps = [np.asarray(q, dtype=np.float64) for q in eps]
        if not eps:
            raise InvalidArgumentError(f"policy {name!r} has no episode to draw")
        for k, q in enumerate(eps):
            if q.ndim != 2 or q.shape[0] < 1 or q.shape[1] not in widths:
                raise InvalidArgumentError(
                    f"episode {k} of {name!r} has shape {q.shape}; expected (T >= 1, {want})"
                )
        out[str(name)] = eps
    return out


def _render_state(renderer: Renderer, state: np.ndarray, label: str) -> np.ndarray:
    """A frame of one recorded state: qpos, then (if present) every mocap body's pos and quat."""
    m = renderer.model
    if len(state) == m.nq:
        return renderer.render(state, label=label)
    pos = state[m.nq : m.nq + 3 * m.nmocap]
    return renderer.render(state[: m.nq], label=label, mocap_pos=pos, mocap_quat=state[m.nq + 3 * m.nmocap :])


def _frames(
    renderer: Renderer, episodes: dict[str, list[np.ndarray]], pad: tuple[int, int]
) -> Iterator[np.ndarray]:
    """The video's frames: per episode k, max_p T_pk frames of the policies' tiles side by side."""
    last: dict[str, np.ndarray] = {}
    for k in range(max(len(eps) for eps in episodes.values())):
        steps = max(len(eps[k]) for eps in episodes.values() if k < len(eps))
        for t in range(steps):
            for name, eps in episodes.items():
                if k < len(eps) and t < len(eps[k]):
                    last[name] = _render_state(renderer, eps[k][t], name)
            frame = np.concatenate([last[name] for name in episodes], axis=1)
            yield np.pad(frame, ((0, pad[0]), (0, pad[1]), (0, 0))) if any(pad) else frame


def write_video(
    path: str | Path,
    mj_model: mujoco.MjModel,
    camera: str | View | None,
    episodes: Mapping[str, Sequence[np.ndarray]],
    fps: float,
    width: int = 320,
    height: int = 240,
    format: str = "auto",
) -> Path:
    """Write the episodes of every policy as one video; return the file written.

    episodes: policy name -> list of (T, nq) qpos arrays, one per episode, drawn in order; for a
    model with mocap bodies (T, nq + 7 nmocap): qpos, then every mocap body's position (3 each),
    then their quaternions (4 each), as recorded_qpos gives them (without: drawn at rest).
    camera: a camera of mj_model by name, or a robogym.render.View (None: MuJoCo's free
    camera). Each tile is width x height
    (at most the model's offscreen buffer); the frame is len(episodes) tiles wide, padded
    by a black pixel row/column to even sides (H.264's 4:2:0 needs them).
    format: "mp4", "gif", or "auto" (MP4 when imageio-ffmpeg is installed, else a GIF with
    a warning); `path`'s suffix is replaced by the format's. Parent folders are created.
    """
    if fps <= 0:
        raise InvalidArgumentError(f"fps must be positive, got {fps}")
    check_frame_size(mj_model, width, height)
    episodes = _check_episodes(episodes, mj_model.nq, mj_model.nmocap)
    if isinstance(camera, str) and mujoco.mj_name2id(mj_model, mujoco.mjtObj.mjOBJ_CAMERA, camera) < 0:
        raise UnknownNameError(f"model has no camera named {camera!r}")
    fmt = _resolve_format(format)
    path = Path(path).with_suffix("." + fmt)
    path.parent.mkdir(parents=True, exist_ok=True)

    full_w, full_h = width * len(episodes), height
    pad = (full_h % 2, full_w % 2)  # rows, columns
    renderer = Renderer(mj_model, width, height, camera=camera)
    try:
        frames = _frames(renderer, episodes, pad)
        if fmt == "mp4":
            _write_mp4(path, frames, (full_w + pad[1], full_h + pad[0]), fps)
        else:
            _write_gif(path, frames, fps)
    except BaseException:
        path.unlink(missing_ok=True)  # no half-written video
        raise
    finally:
        renderer.close()
    return path


# --- from training.evaluate's results ----------------------------------------------------------
def _one_row_env(env_id: str, env_kwargs: dict):
    return gym.make_vec(env_id, num_envs=1, autoreset_mode=AutoresetMode.DISABLED, **env_kwargs)


def recorded_qpos(results) -> list[np.ndarray]:
    """(T+1, nq) qpos of each recorded episode of an EvalResults, reset state first (for a model
    with mocap bodies, (T+1, nq + 7 nmocap): qpos, mocap_pos, mocap_quat, as a task moved them).

    Replays the recorded actions on a one-row env from the episode's seed (seed + episode,
    as training.evaluate starts it) and refuses a replay whose observations leave the
    recorded ones (a task that is not deterministic given its seed and actions)."""
    if results.seed is None:
        raise InvalidArgumentError(f"{results.policy}: episodes evaluated without a seed cannot be replayed")
    env = _one_row_env(results.env_id, results.env_kwargs)
    try:
        data = env.unwrapped.physics.data
        out = []
        for traj in results.trajectories:
            obs, _ = env.reset(seed=[int(results.seed) + traj.episode])
            replay_obs = [obs[0].copy()]
            qpos = [_state(data)]
            for action in traj.actions:
                obs, *_ = env.step(action[None])
                replay_obs.append(obs[0].copy())
                qpos.append(_state(data))
            err = np.abs(np.array(replay_obs, dtype=np.float64) - traj.obs) / (1.0 + np.abs(traj.obs))
            if err.max() > REPLAY_TOL:
                raise RuntimeError(
                    f"{results.policy}, episode {traj.episode}: replaying the recorded actions leaves the "
                    f"recorded observations (relative error {err.max():.2e}); the video would not show it"
                )
            out.append(np.array(qpos))
        return out
    finally:
        env.close()


def _state(data) -> np.ndarray:
    """Row 0's qpos, followed by its mocap bodies' positions and quaternions (if any)."""
    return np.concatenate([data.qpos[0], data.mocap_pos[0].ravel(), data.mocap_quat[0].ravel()])


def write_eval_video(
    path: str | Path,
    results: Sequence,
    width: int = 320,
    height: int = 240,
    fps: float | None = None,
    format: str = "auto",
) -> Path:
    """The video of `robodyn eval --video`: the recorded episodes of each EvalResults (one per
    policy, same task), one tile per policy, from the task's camera, in real time unless `fps`
    says otherwise. Returns the file written (its suffix: .mp4 or .gif)."""
    if not results:
        raise InvalidArgumentError("no evaluation results to draw")
    env_ids = {r.env_id for r in results}
    if len(env_ids) != 1:
        raise InvalidArgumentError(f"one video shows one task; got results of {sorted(env_ids)}")
    for r in results:
        if not r.trajectories:
            raise InvalidArgumentError(f"{r.policy}: no recorded episode to draw (evaluate with record >= 1)")
        if r.seed is None:
            raise InvalidArgumentError(f"{r.policy}: episodes evaluated without a seed cannot be replayed")
    env = _one_row_env(results[0].env_id, results[0].env_kwargs)
    try:
        mj_model = env.unwrapped.physics.mj_model
        camera = View.of(mj_model, env.unwrapped.task)  # the task's own view, as its env draws it
        fps = float(env.unwrapped.metadata["render_fps"]) if fps is None else float(fps)
    finally:
        env.close()
    check_frame_size(mj_model, width, height)
    fmt = _resolve_format(format)  # refuse a missing encoder before the replays
    episodes: dict[str, list[np.ndarray]] = {}
    for r in results:
        name = r.policy
        n = 2
        while name in episodes:  # two policies of the same name (e.g. a.zip from two folders)
            name, n = f"{r.policy} ({n})", n + 1
        episodes[name] = recorded_qpos(r)
    return write_video(path, mj_model, camera, episodes, fps, width, height, fmt)


# --- stills --------------------------------------------------------------------------------------
def render_still(
    task_id: str, seed: int = 0, width: int = 640, height: int = 480, env_kwargs: dict | None = None
) -> np.ndarray:
    """(height, width, 3) uint8 frame of a task's reset state (from `seed`) from its camera."""
    env = gym.make(task_id, render_mode="rgb_array", width=width, height=height, **(env_kwargs or {}))
    try:
        env.reset(seed=seed)
        return env.render()
    finally:
        env.close()


def write_still(task_id: str, path: str | Path, **kwargs) -> Path:
    """Write render_still(task_id, **kwargs) as a PNG (the image a task's docstring links):
    python -c "from training.video import write_still; write_still('RoboDyn/Crane-v0', 'docs/crane.png')"
    """
    from PIL import Image

    path = Path(path)
    if path.suffix.lower() != ".png":
        raise InvalidArgumentError(f"a still is a .png, got {str(path)!r}")
    frame = render_still(task_id, **kwargs)
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(frame).save(path)
    return path
