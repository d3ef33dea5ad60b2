"""The ``dogood`` command: list, build, show and preview recipes; describe shifts; train the baseline; evaluate models.

Exit codes: 0 success, 1 bad input or a failed build (the message names the
file or document), 2 wrong usage, 130 interrupted (Ctrl-C).

Every foreseeable failure (bad input, a file that cannot be read or written,
the Hub or the network) prints one line ``dogood: error: ...`` naming the
file, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from dogood.cli.common import fail, hub_error, os_message, say, version
from dogood.core.errors import DogoodError

#: The command modules, in the order ``dogood --help`` lists them; each has ``add_parser(sub)``.
COMMANDS = ("list_command", "describe_command", "plan_command", "build_command", "look_command", "train_command", "eval_command",
            "gallery_command", "export_command", "push_command")


def main(argv: list[str] | None = None) -> int:
    for stream in (sys.stdout, sys.stderr):  # a file name that is not UTF-8 is printed escaped, not a crash
        try:
            stream.reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError):
            pass
    parser = make_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        code = args.func(args) or 0
        sys.stdout.flush()  # here, not at exit: a reader that left is seen while it can still be handled
        return code
    except BrokenPipeError:  # `dogood list | head`: the reader left; end quietly, as a pipe's writer does
        _quiet_stdout()
        return 0
    except DogoodError as exc:
        return fail(str(exc))
    except KeyboardInterrupt:
        say(f"dogood: interrupted{INTERRUPTED.get(args.command, '')}")
        return 130
    except RecursionError:
        return fail("the input is nested too deeply to read")
    except UnicodeError as exc:
        what = getattr(exc, "object", None)
        what = f": {what[:200]!r}" if isinstance(what, (str, bytes)) else f" ({exc})"
        return fail(f"text or a file name that is not valid UTF-8{what}")
    except OSError as exc:  # files, folders, and the Hub or the network (requests' errors are OSErrors)
        return fail(os_message(exc))
    except Exception as exc:
        hub = hub_error(exc)
        if hub is None:
            raise  # a bug: keep the traceback
        return fail(hub)


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's last flush finds no closed pipe to complain about."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


#: What is true after Ctrl-C, per command; other commands write nothing that needs saying.
INTERRUPTED = {
    "build": "; no dataset folder was written (run the same command again to resume: finished shards are kept)",
    "push": "; run the same command again to resume (finished build shards are kept; files already on the "
                "Hub are not sent again)",
    "eval": "; no report was written (an earlier report in the --out folder is left as it was)",
    "train-baseline": "; no model file was written (an earlier one is left as it was)",
}


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dogood", description="Turn document-AI datasets into out-of-distribution benchmark datasets."
    )
    parser.add_argument("--version", action="version", version=f"dogood {version()}")
    sub = parser.add_subparsers(metavar="COMMAND", dest="command")
    for name in COMMANDS:
        importlib.import_module(f"dogood.cli.{name}").add_parser(sub)
    return parser
