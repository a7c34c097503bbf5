"""training/plots.py's trajectory plot draws at most MAX_PANELS panels: every changing signal
when they fit (the crane), else the task's declared key signals, else its metrics and its
first observation and action components (the humanoid: 77 signals, 12 panels)."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

import robogym  # noqa: F401 (registers the tasks)
from robodyn.training import plots
from robodyn.training.evaluate import EvalResults, Trajectory

T = 50
DT = 0.02


def _results(env_id, obs_names, action_names, metric_names, policy="pd"):
    """EvalResults of one recorded episode whose every signal changes over time."""
    t = np.arange(T + 1) * DT
    rng = np.random.default_rng(0)
    traj = Trajectory(
        episode=0,
        time=t,
        obs=rng.normal(size=(T + 1, len(obs_names))),
        actions=rng.normal(size=(T, len(action_names))),
        rewards=np.ones(T),
        metrics={m: rng.random(T + 1) for m in metric_names},
    )
    return EvalResults(
        env_id=env_id,
        policy=policy,
        env_kwargs={},
        seed=0,
        num_envs=1,
        episodes=[],
        trajectories=[traj],
        obs_names=list(obs_names),
        action_names=list(action_names),
        metric_names=list(metric_names),
        seconds=0.0,
    )


def _humanoid_names():
    """The humanoid's own names, read from its env (52 observation components, 21 actions)."""
    import gymnasium as gym

    from robodyn.training.evaluate import EnvLayout

    env = gym.make_vec("RoboDyn/HumanoidPush-v0", num_envs=1)
    try:
        layout = EnvLayout.of(env)
    finally:
        env.close()
    return layout.obs_names, layout.action_names, layout.metric_names


@pytest.fixture
def captured(monkeypatch):
    """The figure plot_trajectories saves, kept for inspection."""
    figs = []
    save = plots._save

    def keep(fig, path):
        figs.append(fig)
        return save(fig, path)

    monkeypatch.setattr(plots, "_save", keep)
    return figs


def _titles(fig):
    return [ax.get_title() for ax in fig.axes if ax.axison]


def test_the_humanoid_plot_has_at_most_twelve_panels(captured, tmp_path):
    obs, act, met = _humanoid_names()
    assert len(obs) + len(act) + len(met) > 70  # the plot that was 1650 x 8008 px
    results = [_results("RoboDyn/HumanoidPush-v0", obs, act, met, p) for p in ("pd", "ppo")]
    path = plots.plot_trajectories(results, tmp_path / "trajectories.png")
    titles = _titles(captured[-1])
    assert 0 < len(titles) <= plots.MAX_PANELS
    declared = plots.key_signals("RoboDyn/HumanoidPush-v0")
    if declared is None:  # the default: every metric, then observations and actions in turn
        assert titles[: len(met)] == met
        assert obs[0] in titles and f"action: {act[0]}" in titles
    else:
        assert set(titles) <= {*obs, *met, *(f"action: {a}" for a in act)}
    width, height = Image.open(path).size
    assert height <= 1400, f"the humanoid's plot is {width} x {height} px"
    assert "12 of its 77 changing signals" in captured[-1].get_suptitle()


def test_a_plot_that_fits_keeps_every_changing_signal(captured, tmp_path):
    obs = ["trolley_pos", "swing_angle", "trolley_vel", "swing_rate"]
    res = _results("RoboDyn/Crane-v0", obs, ["trolley"], ["position_error", "swing_amplitude"])
    res.trajectories[0].obs[:, 3] = 0.5  # a constant component is left out, as before
    plots.plot_trajectories([res], tmp_path / "t.png")
    titles = _titles(captured[-1])
    expected = ["trolley_pos", "swing_angle", "trolley_vel", "position_error", "swing_amplitude"]
    assert titles == [*expected, "action: trolley"]
    assert "changing signals" not in captured[-1].get_suptitle()


def test_declared_key_signals_are_drawn_in_their_order():
    panels = [("obs", f"o{i}", []) for i in range(20)] + [("metric", "o3", []), ("metric", "m0", [])]
    panels += [("action", "action: a0", []), ("action", "action: a1", [])]
    got = plots.select_panels(panels, ("a1", "o7", "m0", "nope", "o7"))
    assert [p[1] for p in got] == ["action: a1", "o7", "m0"]
    # without a declaration: the metrics, then observations and actions in turn; a metric
    # named as an observation component (o3) is drawn once as each
    got = plots.select_panels(panels)
    assert [p[:2] for p in got] == [
        ("metric", "o3"),
        ("metric", "m0"),
        ("obs", "o0"),
        ("action", "action: a0"),
        ("obs", "o1"),
        ("action", "action: a1"),
        *[("obs", f"o{i}") for i in range(2, 8)],
    ]
    assert len(got) == plots.MAX_PANELS


def test_key_signals_of_a_task_class(monkeypatch):
    from robodyn.envs.crane_v0 import CraneTask

    assert plots.key_signals("RoboDyn/NoSuchTask-v0") is None
    monkeypatch.setattr(CraneTask, "key_signals", ("swing_angle", "trolley"), raising=False)
    assert plots.key_signals("RoboDyn/Crane-v0") == ("swing_angle", "trolley")
