"""The user cache: where RoboDyn keeps what it builds or downloads once (dm_control's suite
models built in Python, the motion-capture wheel)."""

from __future__ import annotations

import os
from pathlib import Path


def user_cache() -> Path:
    """$ROBODYN_CACHE_DIR, else $XDG_CACHE_HOME/robodyn, else ~/.cache/robodyn (the XDG Base
    Directory convention)."""
    root = os.environ.get("ROBODYN_CACHE_DIR")
    if root:
        return Path(root)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "robodyn"
