"""dm_control's suite as the oracle of RoboDyn's `RoboDyn/dmc-*` tasks, on the MuJoCo the
engine is checked against.

dm_control 1.0.x builds its named indexer (`physics.named.model.<field>[name]`) over every
field of its own list of MjModel and MjData arrays, and MuJoCo 4.0.0 has removed some of
them (`flex_vertedge`, ...), so `Physics` fails to build: `getattr(model, field)` raises.
`load` puts a proxy between dm_control's `struct_indexer` and the struct, on which a field
the struct lacks reads as None, which the indexer skips (it skips every attribute that is
not an array); every field that exists is the struct's own array, so dm_control's physics,
task code and named access are untouched. The patch is made here, in the tests only:
robogym and envs never import dm_control.
"""

from __future__ import annotations

import functools
import os
import sys

import numpy as np


class _LenientStruct:
    """A MuJoCo struct whose missing attributes read as None (dm_control's indexer skips
    them); every other attribute is the struct's own."""

    __slots__ = ("_struct",)

    def __init__(self, struct):
        object.__setattr__(self, "_struct", struct)

    def __getattr__(self, name):
        return getattr(self._struct, name, None)


@functools.cache
def _patched():
    """dm_control's suite, its struct indexer patched once (see the module docstring)."""
    if sys.platform.startswith("linux"):  # dm_control's renderer: headless EGL, as robogym's
        os.environ.setdefault("MUJOCO_GL", "egl")
    from dm_control.mujoco import index

    original = index.struct_indexer
    if not getattr(original, "_lenient", False):

        def lenient(struct, struct_name, size_to_axis_indexer):
            return original(_LenientStruct(struct), struct_name, size_to_axis_indexer)

        lenient._lenient = True
        index.struct_indexer = lenient
    from dm_control import suite

    return suite


def suite():
    """The dm_control.suite module, loadable on this MuJoCo."""
    return _patched()


def load(domain: str, task: str, seed: int, **task_kwargs):
    """dm_control's env of a task, its RandomState seeded with `seed` (as RoboDyn's
    `reset(seed=seed)` is)."""
    return _patched().load(domain, task, task_kwargs={"random": seed, **task_kwargs})


def flat(observation) -> np.ndarray:
    """dm_control's observation (an OrderedDict of arrays) flattened key by key, in its
    order (dm_control's own flatten_observation, without the dict around it)."""
    return np.concatenate([np.asarray(v, dtype=np.float64).ravel() for v in observation.values()])
