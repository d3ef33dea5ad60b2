"""How a report prints its numbers: every score already in percent, every change signed (negative: worse)."""

from __future__ import annotations

import math
from typing import Any


def bad(x: Any) -> bool:
    """Nothing to print: ``None`` or NaN."""
    return x is None or (isinstance(x, float) and math.isnan(x))


def fmt_pct(x: Any) -> str:
    """A score in percent: ``56.92``; ``–`` for none."""
    return "–" if bad(x) else f"{float(x):.2f}"


def fmt_change(x: Any) -> str:
    """A change in points: ``-3.50``, ``+0.00``."""
    return "–" if bad(x) else f"{float(x) + 0.0:+.2f}"


def fmt_rel(x: Any) -> str:
    """A relative change in percent: ``-6.2%``."""
    return "–" if bad(x) else f"{float(x) + 0.0:+.1f}%"


def fmt_ci(ci: Any, signed: bool = False) -> str:
    """`` [low, high]`` (signed for a change), or nothing without an interval."""
    if not ci or bad(ci[0]) or bad(ci[1]):
        return ""
    f = fmt_change if signed else fmt_pct
    return f" [{f(ci[0])}, {f(ci[1])}]"


def fmt_ratio(x: Any) -> str:
    """A ratio (CE, RD): ``0.871``."""
    return "–" if bad(x) else f"{float(x):.3f}"


def fmt_ratio_ci(ci: Any) -> str:
    return f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci and not bad(ci[0]) and not bad(ci[1]) else ""


def fmt_cell(x: Any, kind: str) -> str:
    """A table cell of a task column: ``pct``, ``int`` or ``num``."""
    if bad(x):
        return "–"
    if kind == "int":
        return str(int(x))
    if kind == "num":
        return f"{float(x):.3f}"
    return fmt_pct(x)


def csv_number(x: Any) -> str:
    """A CSV cell: the number as Python writes it, empty for none."""
    if bad(x):
        return ""
    if isinstance(x, bool):
        return str(x).lower()
    if isinstance(x, int):
        return str(x)
    return repr(float(x))


def report_row(report: dict, row: dict) -> tuple[float | None, float | None, str | None]:
    """``(score, change, note)`` of a ``report.json`` row as the report prints them (percent; change negative when
    worse), for the gallery and the card; a report of a dogood version before one scale (fractions, ``drop``
    positive for a loss) is read as it meant."""
    value, note = row.get("value"), row.get("note")
    if report.get("scale") == "percent":
        return value, row.get("change"), note
    drop = row.get("drop")
    return (None if value is None else 100.0 * value), (None if drop is None else -100.0 * drop), note
