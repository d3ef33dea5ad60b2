"""``dogood describe``: what a shift does, from its declarations."""

from __future__ import annotations

import sys

from dogood.cli.common import say


def add_parser(sub) -> None:
    p = sub.add_parser("describe", help="what a shift does: parameters, box conventions, counts, papers "
                                        "(no shift: list them all)")
    p.add_argument("shift", nargs="?", help="a shift's recipe name, e.g. char_deletion")
    p.add_argument("--markdown", action="store_true", help="print the README's shift table (Markdown)")
    p.set_defaults(func=cmd_describe)


def cmd_describe(args) -> int:
    from dogood.shifts import SHIFTS
    from dogood.shifts.describe import describe_shift, shift_list, shift_table_markdown

    if args.markdown:
        sys.stdout.write(shift_table_markdown())
    elif args.shift is None:
        sys.stdout.write(shift_list())
    elif args.shift not in SHIFTS:
        say(f"dogood: error: unknown shift {args.shift!r}; known shifts: {', '.join(sorted(SHIFTS))}")
        return 2
    else:
        sys.stdout.write(describe_shift(args.shift))
    return 0
