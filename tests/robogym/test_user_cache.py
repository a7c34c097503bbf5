"""One user cache for everything RoboDyn builds or downloads once: dm_control's suite models
built in Python (robogym.dmc_task) and the motion-capture wheel (robodyn.envs.motion.holosoma)
both live under $ROBODYN_CACHE_DIR, else $XDG_CACHE_HOME/robodyn, else ~/.cache/robodyn."""

from __future__ import annotations

from pathlib import Path

from robodyn.envs.motion import holosoma
from robogym import dmc_task
from robogym.user_cache import user_cache


def test_both_caches_follow_one_variable_then_xdg_then_home(tmp_path, monkeypatch):
    monkeypatch.setenv("ROBODYN_CACHE_DIR", str(tmp_path / "mine"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert user_cache() == tmp_path / "mine"
    assert dmc_task.cache_dir() == tmp_path / "mine" / "dmc"
    assert holosoma.wheel_path() == tmp_path / "mine" / holosoma.WHEEL

    monkeypatch.setenv("ROBODYN_CACHE_DIR", "")  # empty counts as unset, as XDG's variables do
    assert dmc_task.cache_dir() == tmp_path / "xdg" / "robodyn" / "dmc"
    assert holosoma.cache_dir() == tmp_path / "xdg" / "robodyn"

    monkeypatch.delenv("ROBODYN_CACHE_DIR")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert user_cache() == Path(tmp_path / "home" / ".cache" / "robodyn")
    assert holosoma.cache_dir() == dmc_task.cache_dir().parent
