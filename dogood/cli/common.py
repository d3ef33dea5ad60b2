"""What the ``dogood`` commands share: messages, argument types and option groups."""

from __future__ import annotations

import argparse
import sys


def say(message: str) -> None:
    print(message.encode("utf-8", "backslashreplace").decode("utf-8"), file=sys.stderr)


def fail(message: str) -> int:
    say(f"dogood: error: {message}")
    return 1


def os_message(exc: OSError) -> str:
    names = [n for n in (exc.filename, exc.filename2) if n is not None]
    if names and exc.strerror:
        return f"{' -> '.join(map(str, names))}: {exc.strerror}"
    text = str(exc) or type(exc).__name__
    return text.splitlines()[0] if text.strip() else type(exc).__name__


def hub_error(exc: Exception) -> str | None:
    """A one-line message for a Hugging Face Hub or network failure, else ``None``."""
    try:
        from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled
    except ImportError:  # pragma: no cover
        return None
    if isinstance(exc, (HfHubHTTPError, OfflineModeIsEnabled)):
        first = (str(exc).splitlines() or [type(exc).__name__])[0]
        return f"the Hugging Face Hub: {first}"
    return None


def count(value: str) -> int:
    """An argparse type: a whole number of at least 1 (else a usage error, exit 2)."""
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {n}")
    return n


def config_options(p: argparse.ArgumentParser, which: str, set_help: str) -> None:
    """``--config``, ``--exclude-config`` and ``--set``, the same for ``build`` and ``push``."""
    p.add_argument("--config", action="append", dest="configs", metavar="NAME",
                   help=f"{which}: a name, a glob (ms_*) or a comma list (repeatable)")
    p.add_argument("--exclude-config", action="append", dest="exclude_configs", metavar="NAME",
                   help="leave these configs out: a name, a glob or a comma list (repeatable)")
    p.add_argument("--set", action="append", dest="overrides", metavar="CONFIG.PARAM=VALUE", default=[],
                   help=set_help)


class Renamed(argparse.Action):
    """``--id`` of show/preview, renamed ``--doc``: a usage error that says so (``--id`` is eval's ID dataset)."""

    def __call__(self, parser, namespace, values, option_string=None):
        parser.error(f"{option_string} is now --doc: pass the document id as --doc {values or 'ID'} "
                     "(--id names the in-distribution dataset of `dogood eval`)")


def version() -> str:
    from dogood.version import __version__

    return __version__
