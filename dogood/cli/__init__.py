"""The ``dogood`` command line: :mod:`dogood.cli.main` and one module per command (``<name>_command.py``)."""

from dogood.cli.main import main

__all__ = ["main"]
