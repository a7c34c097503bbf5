"""Real human motion captures, read from the `holosoma-retargeting` package (Apache-2.0, on
the Python package index) without installing it or copying anything of it here.

Its wheel ships five climbing captures as world joint positions: demo_data/climb/
mocap_climb_seq_<k>/mocap_climb_seq_<k>_joint_positions_f<a>-<b>.npy, arrays (T, 53, 3) in
metres, z up, 2,303-3,011 frames each; the 53 joint names are the list MOCAP_DEMO_JOINTS of
its config_types/data_type.py (read from the wheel, not copied); the frame rate is the
package's stated input rate, 30 fps (`input_fps` of its config_types/data_conversion.py).
Each sequence also has the boxes it climbs (box_models/box<i>.obj, at capture scale) and the
package has a Unitree G1 model (models/g1/).

`fetch()` downloads the pinned wheel once (`pip download --no-deps`, checked against its
sha256) into the user cache: $ROBODYN_CACHE_DIR, else $XDG_CACHE_HOME/robodyn, else
~/.cache/robodyn. Everything else reads the wheel in place (a zip) or from `wheel=`.
"""

from __future__ import annotations

import ast
import hashlib
import io
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np

from robodyn.envs.motion.capture import Box, Capture, load_capture
from robogym.errors import InvalidArgumentError
from robogym.user_cache import user_cache

PACKAGE, VERSION = "holosoma-retargeting", "0.1.0"
WHEEL = "holosoma_retargeting-0.1.0-py3-none-any.whl"
SHA256 = "3dcdcc06c6705c091478808024298dfcc684d9eb49e890cc6b11fc03fa246cb4"
LICENSE = "Apache-2.0"
FPS = 30.0  # the package's stated input frame rate (config_types/data_conversion.py)
ROOT = "holosoma_retargeting/"
CAPTURE = re.compile(
    r"holosoma_retargeting/demo_data/climb/(mocap_climb_seq_\d+)/\1_joint_positions_f\d+-\d+\.npy"
)


def cache_dir() -> Path:
    """Where fetched data lives: the user cache (robogym.user_cache: $ROBODYN_CACHE_DIR, else
    $XDG_CACHE_HOME/robodyn, else ~/.cache/robodyn)."""
    return user_cache()


def wheel_path() -> Path:
    return cache_dir() / WHEEL


def fetch(log=print) -> Path:
    """The wheel's path in the cache, downloading it first if it is not there (about 100 MB,
    once). Raises RuntimeError if pip fails or the file's sha256 is not the pinned one."""
    path = wheel_path()
    if path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    log(f"fetching {PACKAGE}=={VERSION} (about 100 MB, once) into {path.parent} ...")
    with tempfile.TemporaryDirectory(dir=path.parent) as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
        cmd += [f"{PACKAGE}=={VERSION}", "-d", tmp]
        done = subprocess.run(cmd, capture_output=True, text=True)
        got = Path(tmp) / WHEEL
        if done.returncode != 0 or not got.is_file():
            raise RuntimeError(f"pip could not download {PACKAGE}=={VERSION}:\n{done.stderr[-2000:]}")
        digest = _sha256(got)
        if digest != SHA256:
            raise RuntimeError(f"{WHEEL} has sha256 {digest}, not the pinned {SHA256}")
        got.replace(path)
    log(f"saved {path}")
    return path


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _open(wheel) -> zipfile.ZipFile:
    path = Path(wheel) if wheel is not None else wheel_path()
    if not path.is_file():
        raise InvalidArgumentError(
            f"{str(path)!r} is not there: run `robodyn data fetch` (or holosoma.fetch()) first"
        )
    return zipfile.ZipFile(path)


def joint_names(wheel=None) -> tuple[str, ...]:
    """The 53 names of the captures' joints: MOCAP_DEMO_JOINTS of the wheel's
    config_types/data_type.py, read as a literal (the module is never imported)."""
    with _open(wheel) as z:
        tree = ast.parse(z.read(ROOT + "config_types/data_type.py").decode())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            getattr(t, "id", None) == "MOCAP_DEMO_JOINTS" for t in node.targets
        ):
            return tuple(ast.literal_eval(node.value))
    raise RuntimeError("the wheel's config_types/data_type.py has no MOCAP_DEMO_JOINTS")


def capture_names(wheel=None) -> list[str]:
    """The climbing captures in the wheel: mocap_climb_seq_0 ... mocap_climb_seq_4."""
    with _open(wheel) as z:
        return sorted(m.group(1) for m in map(CAPTURE.fullmatch, z.namelist()) if m)


def load(name: str, wheel=None) -> Capture:
    """The capture `name` (one of capture_names()) as a Capture at 30 fps."""
    names = joint_names(wheel)
    with _open(wheel) as z:
        members = {m.group(1): m.group(0) for m in map(CAPTURE.fullmatch, z.namelist()) if m}
        if name not in members:
            raise InvalidArgumentError(
                f"no capture {name!r} in {WHEEL}; its captures: {', '.join(sorted(members))}"
            )
        positions = np.load(io.BytesIO(z.read(members[name])), allow_pickle=False)
    source = f"{PACKAGE} {VERSION} ({LICENSE}): {members[name].removeprefix(ROOT)}"
    return load_capture(positions, names, FPS, source)


def boxes(name: str, wheel=None) -> list[Box]:
    """The boxes capture `name` climbs (m, capture frame): one Box per box_models/box<i>.obj,
    from its eight vertices."""
    prefix = f"{ROOT}demo_data/climb/{name}/box_models/"
    out = []
    with _open(wheel) as z:
        files = sorted(n for n in z.namelist() if n.startswith(prefix) and n.endswith(".obj"))
        if not files:
            raise InvalidArgumentError(f"no boxes for {name!r} in {WHEEL}")
        for f in files:
            lines = z.read(f).decode().splitlines()
            out.append(
                Box.from_vertices(
                    [[float(x) for x in line.split()[1:4]] for line in lines if line.startswith("v ")]
                )
            )
    return out


def g1_model(wheel=None) -> Path:
    """The path of the package's Unitree G1 model (models/g1/g1_29dof.xml, 29 joints and a
    free base), with its meshes extracted from the wheel once into the cache."""
    folder = cache_dir() / "holosoma_g1"
    path = folder / "g1_29dof.xml"
    if not path.is_file():
        prefix = ROOT + "models/g1/"
        with _open(wheel) as z:
            for member in z.namelist():
                if member.startswith(prefix) and not member.endswith("/"):
                    target = folder / member.removeprefix(prefix)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(z.read(member))
    return path
