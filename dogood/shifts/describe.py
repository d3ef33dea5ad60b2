"""What each shift is, from its declarations: ``dogood describe``, the shift table of the documentation.

Everything here is read from the shift classes (``name``, ``family``, the
docstring's first line, :meth:`Shift.describe`, ``box_levels``,
``counts_help``, ``tallies_help``, ``papers``) and :data:`dogood.core.papers.CITATIONS`;
nothing names a shift or a paper. ``python -m dogood.shifts.describe`` (or
``dogood describe --markdown``) prints the shift table, which the documentation's
shift index shows (:mod:`dogood.share.docs_pages`).
"""

from __future__ import annotations

import argparse
import inspect
import re
import sys
from collections.abc import Iterable

from dogood.core.papers import CITATIONS, Citation
from dogood.shifts import SHIFTS, Shift

_FAMILIES = ("image", "text", "layout")


def summary(cls: type[Shift]) -> str:
    """The first paragraph of a shift's docstring, on one line."""
    paragraph = " ".join(inspect.cleandoc(cls.__doc__ or "").split("\n\n")[0].split())
    return paragraph


def short_name(citation: Citation) -> str:
    """A paper as text cites it: ``Do-GOOD (He et al. 2023)``, ``Moradi and Samwald 2021``."""
    authors = [a.strip() for a in re.split(r",\s*|\s+and\s+", citation.authors) if a.strip()]
    surnames = [a.split()[-1] for a in authors]
    who = surnames[0] if len(surnames) == 1 else " and ".join(surnames) if len(surnames) == 2 else f"{surnames[0]} et al."
    acronym = citation.title.split(":")[0] if ":" in citation.title else ""
    return f"{acronym} ({who} {citation.year})" if acronym and len(acronym.split()) <= 3 else f"{who} {citation.year}"


def cited_keys(shifts: Iterable[type[Shift]]) -> list[str]:
    """The papers to cite for these shifts: Do-GOOD first, then each shift's, in :data:`CITATIONS` order."""
    keys = {"do-good"} | {c.key for cls in shifts for c in cls.papers}
    return [k for k in CITATIONS if k in keys]


def inspired_lines(shifts: Iterable[type[Shift]]) -> list[str]:
    """One line per paper a shift follows only in idea: "`shift` is inspired by <paper>: <difference>"."""
    return [f"`{cls.name}` is inspired by {short_name(c.citation)}: {c.inspired_by}"
            for cls in shifts for c in cls.papers if c.inspired_by]


def shift_classes(names: Iterable[str]) -> list[type[Shift]]:
    """The registered shift classes of ``names``, once each, in first-seen order (unknown names left out)."""
    return [SHIFTS[n] for n in dict.fromkeys(names) if n in SHIFTS]


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[k]) for r in rows) for k in range(len(rows[0]))]
    return ["  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]


def describe_shift(name: str) -> str:
    """``dogood describe NAME``: name, family, summary, parameters, box conventions, counts and papers."""
    cls = SHIFTS[name]
    lines = [f"{cls.name} ({cls.family} shift)", summary(cls), "", "Parameters:"]
    rows = cls.describe()
    if rows:
        head = ["name", "type", "default", "range", "description", "old names"]
        lines += _table([head] + [[r["name"], r["type"], r["default"], r["range"] or "-", r["description"] or "-",
                                   r["aliases"] or "-"] for r in rows])
    else:
        lines.append("  none")
    if cls.severities:
        from dogood.shifts.levels import level_rows

        lines += ["", "Severity levels (a recipe's `severities: [1, 2, 3, 4, 5]` makes `<config>@<level>` configs):"]
        lines += [f"  {level}: {values}" for level, values in level_rows(cls)]
    from dogood.measures.factors import FACTOR_HELP

    lines += ["", "Factors (what it may change; every build measures them all and warns of undeclared changes):"]
    lines += [f"  {name}: {FACTOR_HELP[name]}" for name in in_factor_order(cls.factors)]
    lines += [f"  {line}" for line in _parameter_factors(cls)]
    lines += _cue_lines(cls)
    lines += ["", "Boxes (the `bboxes` conventions it can be written with):"]
    lines += [f"  {level}: {what}" for level, what in cls.box_levels.items()]
    lines += ["", "Counts (what it reports per document, summed per config in the data card):"]
    lines += [f"  {key}: {cls.counts_help.get(key, '')}" for key in cls.reported_counts] or ["  none"]
    if cls.tallies_help:
        lines += ["", "Tallies (values it reports per document, counted per config in the data card):"]
        lines += [f"  {key}: {meaning}" for key, meaning in cls.tallies_help.items()]
    needs = cls.requires or cls().requirements()
    lines += ["", "Needs (beyond dogood's own dependencies; `dogood plan RECIPE` checks them):"]
    lines += [f"  {n}" for n in needs] or ["  nothing"]
    lines += ["", "Papers:"]
    for c in cls.papers:
        lines.append(f"  - {c.citation.markdown()}" + (f" Section {c.section}." if c.section else ""))
        if c.inspired_by:
            lines.append(f"    Inspired by {short_name(c.citation)}: {c.inspired_by}")
    if not cls.papers:
        lines.append("  none declared")
    return "\n".join(lines) + "\n"


def _cue_lines(cls) -> list[str]:
    """The cue tests every build runs on the shift's configs (:mod:`dogood.measures.cues`), with the figures of
    its reference build (:attr:`Shift.cue_figures`)."""
    from dogood.measures.cues import CUES

    names = [name for name in CUES if name in cls.cues | cls.render_cues]
    if not names:
        return []
    lines = ["", "Cues (every build tests its configs for them on its own pages: a classifier's cross-validated "
                 "AUROC, 0.5 = no cue; the card shows it):"]
    for name in names:
        when = " (with render: true)" if name not in cls.cues else ""
        lines.append(f"  {name}{when}: {CUES[name].what}")
        if name in cls.cue_figures:
            where, figures = cls.cue_figures[name]
            shown = ", ".join(f"level {k} {v:.2f}" if k else f"defaults {v:.2f}" for k, v in figures.items())
            lines.append(f"    {where}: {shown}")
    return lines


def in_factor_order(names) -> list[str]:
    """``names`` in :data:`dogood.measures.factors.FACTORS` order."""
    from dogood.measures.factors import FACTORS

    return [name for name in FACTORS if name in names]


def _parameter_factors(cls) -> list[str]:
    """What parameter values change in a shift's declared factors: ``render: true``, each ``kind`` where the shift
    declares factors by kind, and what the shift states itself (``factor_notes``)."""
    out = []
    if "render" in cls.Params.model_fields and cls.render_factors - cls.factors:
        out.append(f"with render: true, also {', '.join(in_factor_order(cls.render_factors - cls.factors))}")
    for kind, names in getattr(cls, "kind_factors", {}).items():
        out.append(f"kind {kind}: {', '.join(in_factor_order(names))}")
    out += list(getattr(cls, "factor_notes", ()))
    return out


def shift_list() -> str:
    """``dogood describe``: every shift with its family and summary."""
    return "\n".join(_table([[c.name, c.family, summary(c)] for c in shipped_shifts()])) + "\n"


def shipped_shifts() -> list[type[Shift]]:
    """The shifts dogood ships (defined under :mod:`dogood.shifts`; not those a test or a user registered),
    by family then name."""
    shipped = [c for c in SHIFTS.values() if c.__module__.split(".")[:2] == ["dogood", "shifts"]]
    return sorted(shipped, key=lambda c: (_family_rank(c.family), c.name))


def _family_rank(family: str) -> int:
    return _FAMILIES.index(family) if family in _FAMILIES else len(_FAMILIES)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def shift_table_markdown() -> str:
    """The shift table: one row per shift, with family, parameters and defaults, and papers."""
    lines = ["| shift | family | parameters (default) | papers |", "|---|---|---|---|"]
    for cls in shipped_shifts():
        params = ", ".join(f"`{r['name']}={r['default']}`" for r in cls.describe()) or "none"
        papers = "; ".join(short_name(c.citation) + (f" {c.section}" if c.section else "")
                           + (" (inspired by)" if c.inspired_by else "") for c in cls.papers) or "–"
        lines.append(f"| `{cls.name}` | {cls.family} | {_cell(params)} | {_cell(papers)} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dogood.shifts.describe", description=__doc__.splitlines()[0])
    parser.parse_args(argv)
    sys.stdout.write(shift_table_markdown())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
