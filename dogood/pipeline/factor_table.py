"""The card's factor table: per config, each factor's measured change beside what the config's shifts declare.

A build measures every factor (:mod:`dogood.measures.factors`) of every config against the source, per document,
summed into its statistics (``stats[config][split]["factors"]``). Here the splits are added up, each factor's share
is set beside the union of what the config's steps declare (:meth:`dogood.shifts.base.Shift.declared_factors`),
and a factor measured beyond its tolerance that no step declares becomes a warning: printed by the build and
stated in the card. Box position and box size are also measured on the ``bboxes`` column as built (segment or word
level, :func:`dogood.measures.factors.column_factors`): the card shows that share, what a user reading the column
sees, with the record's word-level share beside it; the declared-against-measured check reads the record's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from dogood.measures.factors import (
    COLUMN_FACTORS,
    FACTORS,
    TOLERANCE,
    shares,
    undeclared,
)
from dogood.pipeline.stats import add


def declared_factors(steps: Iterable[Any]) -> frozenset[str]:
    """What a chain may change: the union of its steps' declarations. A step is a shift, a recipe entry
    (``{shift: NAME, ...}``) or a recorded step (``{"shift": NAME, "params": {...}}``); a shift this dogood does
    not know declares nothing."""
    from dogood.shifts import SHIFTS
    from dogood.shifts.base import Shift, make_shift

    out: set[str] = set()
    for step in steps:
        if isinstance(step, Shift):
            out |= step.declared_factors()
            continue
        name = step.get("shift")
        spec = {"shift": name, **step["params"]} if "params" in step else dict(step)
        try:
            out |= make_shift(spec).declared_factors()
        except Exception:  # a recorded parameter this version no longer takes: the class's own declaration
            if name in SHIFTS:
                out |= SHIFTS[name].factors
    return frozenset(out)


def config_factors(by_split: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """A config's factor counts added up over its splits."""
    total: dict[str, Any] = {}
    for s in by_split.values():
        add(total, s.get("factors") or {})
    return total


def factor_rows(steps: Mapping[str, Iterable[Any]], stats: Mapping[str, Mapping[str, Mapping[str, Any]]]
                ) -> list[dict[str, Any]]:
    """One row per config whose statistics hold factors: ``config``, ``cells`` (one per factor, in
    :data:`FACTORS` order: ``share`` or ``None``, ``declared``, ``beyond`` its tolerance) and ``undeclared``
    (the factors measured beyond tolerance that no step declares)."""
    rows = []
    for config, chain in steps.items():
        counts = config_factors(stats.get(config, {}))
        if not counts:
            continue
        declared = declared_factors(chain)
        measured = shares(counts)
        column = shares(counts["bboxes"], COLUMN_FACTORS) if counts.get("bboxes") else {}
        cells = [{"factor": name, "share": measured[name], "declared": name in declared,
                  "beyond": measured[name] is not None and measured[name] > TOLERANCE[name],
                  **({"column": column[name]} if column.get(name) is not None else {})} for name in FACTORS]
        rows.append({"config": config, "cells": cells, "undeclared": undeclared(counts, declared)})
    return rows


def cell_text(cell: Mapping[str, Any]) -> str:
    """A table cell: the share in percent, ``✓`` when declared, bold with ``⚠`` when beyond tolerance and not
    declared; ``–`` when nothing was measured. A box factor measured on the ``bboxes`` column shows that share
    first and the record's in brackets (``24.6% ✓ (record 92.1%)``)."""
    share = cell["share"]
    if share is None:
        return "–" + (" ✓" if cell["declared"] else "")
    text = f"{100 * share:.1f}%"
    if "column" in cell:
        shown = f"{100 * cell['column']:.1f}%"
        mark = " ✓" if cell["declared"] else (" ⚠" if cell["beyond"] else "")
        out = f"{shown}{mark} (record {text})"
        return f"**{out}**" if mark == " ⚠" else out
    if cell["declared"]:
        return f"{text} ✓"
    return f"**{text} ⚠**" if cell["beyond"] else text


def warnings(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """One line per config with undeclared changes: the factors, their shares and tolerances."""
    out = []
    for row in rows:
        if not row["undeclared"]:
            continue
        cells = {c["factor"]: c for c in row["cells"]}
        what = ", ".join(f"{name} ({100 * cells[name]['share']:.1f}% measured, tolerance "
                         f"{100 * TOLERANCE[name]:g}%)" for name in row["undeclared"])
        out.append(f"config {row['config']!r} changed what none of its shifts declares: {what}")
    return out
