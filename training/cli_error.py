"""The usage error of the `robodyn` command (training/cli.py prints it as one line,
`robodyn: error: ...`, and exits with 2), in a module of its own so that the command's
other modules (training/retarget_cli.py) raise it without importing the command."""

from robodyn.engine.errors import RoboDynError


class CLIError(RoboDynError, ValueError):
    """A usage error reported as `robodyn: error: ...` with exit code 2."""
