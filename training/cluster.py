"""Ray, the optional extra behind `robodyn eval --ray` and `robodyn sweep --ray`.

Ray is not a dependency of robodyn: `pip install -e ".[ray]"` adds it. `import_ray()` imports
it, or raises RayMissingError saying how to install it; nothing else in the package imports
Ray at module level, so every command without `--ray` runs where Ray is not installed.

`connected(address)` gives a connected Ray for the duration of a `with` block:

- a driver already connected (`ray.init` called before, as a test or a notebook does) is
  used as it is, and left connected;
- otherwise `ray.init(address)`: None follows Ray's own resolution (the RAY_ADDRESS
  environment variable, else the cluster `ray start` last started on this machine, else a
  new local instance with every core), "auto" an existing cluster only, "local" always a new
  local instance, "HOST:PORT" a cluster's head node and "ray://HOST:10001" Ray Client; the
  connection is closed at the end of the block (a local instance started here stops).

Every node of a cluster needs robodyn installed (the same version as the driver): workers
import the tasks, the engine and the policies' code from their own installation, and compile
or load the engine's kernels on their own disk.
"""

from __future__ import annotations

import logging
import os
import socket
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

from robodyn.engine.errors import RoboDynError

INSTALL = 'pip install -e ".[ray]"'


class RayMissingError(RoboDynError, ImportError):
    """Ray is not installed (the `ray` extra)."""


class ClusterError(RoboDynError, ConnectionError):
    """No connection to the Ray cluster named."""


class WorkerLostError(RoboDynError, RuntimeError):
    """Work that lost its Ray worker (process or node) as often as it may be started, or a
    worker that could not start."""


def import_ray():
    """The ray module; a RayMissingError saying how to install it where it is not installed."""
    try:
        import ray
    except ImportError as e:
        raise RayMissingError(
            f"--ray needs Ray, an optional extra of robodyn: install it with {INSTALL} "
            f"(or pip install 'ray>=2.9') ({e})"
        ) from None
    return ray


@contextmanager
def connected(address: str | None = None) -> Iterator:
    """The ray module, connected to the cluster at `address` for the block (module docstring);
    a ClusterError if Ray cannot connect there."""
    ray = import_ray()
    if ray.is_initialized():
        yield ray
        return
    check_reachable(address if address is not None else os.environ.get("RAY_ADDRESS"))
    with _stderr_kept() as kept:  # Ray's core logs a warning a second while it retries
        try:
            ray.init(address=address, logging_level=logging.WARNING)
        except (ConnectionError, ValueError, RuntimeError, TimeoutError) as e:
            where = f"the Ray cluster at {address!r}" if address else "Ray (its default address)"
            raise ClusterError(f"cannot connect to {where}: {e}") from None
        kept.release()  # connected: what Ray printed is shown after all
    try:
        yield ray
    finally:
        ray.shutdown()


class _KeptStderr:
    """What the process wrote to its stderr (fd 2) inside a `_stderr_kept` block."""

    def __init__(self, file):
        self.file = file
        self.show = False

    def release(self) -> None:
        """Write what was kept to stderr when the block ends (otherwise it is dropped)."""
        self.show = True


@contextmanager
def _stderr_kept() -> Iterator[_KeptStderr]:
    """Keep what is written to file descriptor 2 (also by C++ code, such as Ray's core
    worker) inside the block in a temporary file; it reaches stderr only if the block calls
    release(). Without a usable fd 2 (captured by a test runner) the block runs as it is."""
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError, AttributeError):
        yield _KeptStderr(None)
        return
    with tempfile.TemporaryFile() as tmp:
        kept = _KeptStderr(tmp)
        os.dup2(tmp.fileno(), 2)
        try:
            yield kept
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            if kept.show:
                tmp.seek(0)
                sys.stderr.write(tmp.read().decode(errors="replace"))


REACH_TIMEOUT = 3.0  # s: how long a head node may take to accept a connection


def check_reachable(address: str | None, timeout: float = REACH_TIMEOUT) -> None:
    """A ClusterError, quickly and quietly, when nothing accepts a connection at the host and
    port of `address` ("HOST:PORT" or "ray://HOST:PORT"; "auto", "local" and None are Ray's
    to resolve): Ray itself retries for tens of seconds and logs a page of warnings first."""
    if not address or address in ("auto", "local"):
        return
    hostport = address.removeprefix("ray://")
    host, sep, port = hostport.rpartition(":")
    if not sep or not port.isdigit() or not host:
        raise ClusterError(
            f"cannot connect to the Ray cluster at {address!r}: expected HOST:PORT or ray://HOST:PORT"
        )
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            pass
    except OSError as e:
        raise ClusterError(
            f"cannot connect to the Ray cluster at {address!r}: nothing accepted a connection at "
            f"{host}:{port} within {timeout:g} s ({e.strerror or e})"
        ) from None


def cluster_cpus(ray) -> int:
    """The CPUs of the connected cluster (at least 1)."""
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def lost_worker_errors(ray) -> tuple[type[BaseException], ...]:
    """What ray.get raises when the worker that ran a task, its process or its node is gone
    (an actor killed, a worker process crashed, a node lost with the results it held); an
    error the task itself raised is none of these, and propagates."""
    e = ray.exceptions
    return (e.RayActorError, e.WorkerCrashedError, e.NodeDiedError, e.ObjectLostError)
