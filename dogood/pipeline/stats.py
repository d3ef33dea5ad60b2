"""The statistics a data card states: counted per document, added up per config and split, read back.

One document's statistics (:func:`document_stats`) are plain numbers and
mappings, so adding them up (:func:`add`) is the same for a shard, a split
or a whole build, and a shard record or ``dogood_build.json`` holds them as
they are. What each shift did is kept per shift name::

    "shifts": {"natural_background": {"counts": {"words": 120, ...},
                                      "tallies": {"photo": {"397133": 1}, ...}}}

from the :class:`~dogood.core.document.ShiftRecord` of each applied step
(``counts`` and ``tallies``), so nothing is parsed back out of strings.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from dogood.core.document import Document, ShiftRecord
from dogood.core.schema import FUNSD_NER_TAGS, RVL_CDIP_CLASSES, ner_tag_names
from dogood.measures.factors import COLUMN_FACTORS, FACTORS, SourcePage, measure_factors

#: The totals every config and split states, present (zero) even when nothing was counted.
TOTALS = ("documents", "words", "source_words", "tokens", "box_changed", "text_changed", "words_removed")


def document_stats(original: Document, shifted: Document, row: dict[str, Any], schema: str,
                   entity_labels: tuple[str, ...] | None = None, measure: bool = False,
                   source_page: SourcePage | None = None, box_level: str | None = None) -> dict[str, Any]:
    """One document's statistics: words, tokens, changes, labels, skips, what each shift did and what changed,
    factor by factor (``factors``: :func:`dogood.measures.factors.measure_factors`).

    ``entity_labels``: FUNSD-style data's labels, which name ``ner_tags`` (default FUNSD's). ``measure``: also
    the measured effects of a severity config (``effects``: :func:`dogood.measures.effects.effects`).
    ``source_page``: the source's :class:`~dogood.measures.factors.SourcePage`, shared by a document's configs.
    ``box_level``: the convention the row's ``bboxes`` were written in; the box factors are then measured on that
    column too (``factors["bboxes"]``)."""
    box_changed, text_changed, removed = word_changes(original.words, shifted.words)
    if schema == "funsd":
        names = FUNSD_NER_TAGS if entity_labels is None else ner_tag_names(entity_labels)
        labels = Counter(names[t] for t in row["ner_tags"])
    elif schema == "rvl_cdip":
        labels = Counter([RVL_CDIP_CLASSES[row["label"]]])
    else:
        labels = Counter({"questions": len(shifted.qa)})
    out = {
        "documents": 1,
        "words": len(shifted.words),
        "tokens": len(row["tokens"]),
        "source_words": len(original.words),
        "box_changed": box_changed,
        "text_changed": text_changed,
        "words_removed": removed,
        "labels": dict(labels),
        "skips": dict(Counter(f"{r.shift}: {r.skipped}" for r in shifted.provenance if r.skipped)),
        "shifts": shift_stats(shifted.provenance),
        "factors": measure_factors(original, shifted, source_page,
                                   bboxes=column_boxes(original, row, box_level) if box_level else None),
    }
    if measure:
        from dogood.measures.effects import effects

        out["effects"] = effects(original, shifted, text_changed)
    return out


def column_boxes(original: Document, row: dict[str, Any], box_level: str) -> tuple | None:
    """The ``bboxes`` the source's row has at ``box_level`` and the shifted ``row``'s; ``None`` for a row without
    ``bboxes``."""
    from dogood.core.boxes import normalize_boxes
    from dogood.core.schema import token_boxes

    after = row.get("bboxes")
    if after is None:
        return None
    return normalize_boxes(token_boxes(original, box_level), original.width, original.height), after


def shift_stats(provenance: Iterable[ShiftRecord]) -> dict[str, dict[str, dict[str, Any]]]:
    """What the applied shifts did, per shift name: ``{"counts": {...}, "tallies": {name: {value: n}}}``.

    Counts and tallies are taken as the provenance stores them
    (:meth:`ShiftRecord.counts_json`), so the card states exactly what the
    rows' provenance says (a shift that still reports a tally as a
    ``name=value`` count is read as a tally too).
    """
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for record in provenance:
        counts, tallies = ShiftRecord.counts_from_json(record.counts_json())
        add(out.setdefault(record.shift, {"counts": {}, "tallies": {}}), {"counts": counts, "tallies": tallies})
    return out


def word_changes(before, after) -> tuple[int, int, int]:
    """(output words with a new box, output words with new text, source words with no counterpart).

    Lists of equal length are compared position by position (nothing is
    removed). When a shift added or removed words (``reocr`` reads a page
    anew), the texts are aligned with ``difflib``: an output word in a
    replaced or inserted run has new text, a source word in a replaced or
    deleted run beyond the output's side is removed, and aligned words count
    a changed box. So the first two never exceed the output's word count.
    """
    if len(before) == len(after):
        return (sum(a.box != b.box for a, b in zip(before, after)),
                sum(a.text != b.text for a, b in zip(before, after)), 0)
    import difflib

    matcher = difflib.SequenceMatcher(None, [w.text for w in before], [w.text for w in after], autojunk=False)
    boxes = texts = removed = 0
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            boxes += sum(before[i].box != after[j].box for i, j in zip(range(i1, i2), range(j1, j2)))
        else:
            texts += j2 - j1
            removed += max(0, (i2 - i1) - (j2 - j1))
    return boxes, texts, removed


def add(total: dict[str, Any], one: Mapping[str, Any]) -> dict[str, Any]:
    """Add ``one``'s statistics into ``total`` (numbers summed, mappings merged key by key); returns ``total``."""
    for key, value in one.items():
        if isinstance(value, Mapping):
            add(total.setdefault(key, {}), value)
        else:
            total[key] = total.get(key, 0) + value
    return total


def finish(s: dict[str, Any]) -> dict[str, Any]:
    """A config's and split's added-up statistics as the card and ``dogood_build.json`` state them: every
    total present, labels, skips, counts and tally values sorted."""
    for key in TOTALS:
        s.setdefault(key, 0)
    s["labels"] = dict(sorted(s.get("labels", {}).items()))
    s["skips"] = dict(sorted(s.get("skips", {}).items()))
    if "factors" in s:  # records of builds before the factors have none
        column = s["factors"].get("bboxes")
        s["factors"] = {name: {"changed": s["factors"].get(name, {}).get("changed", 0),
                               "of": s["factors"].get(name, {}).get("of", 0)} for name in FACTORS}
        if column:  # the same, measured on the bboxes column as built (builds before it have none)
            s["factors"]["bboxes"] = {name: {"changed": column.get(name, {}).get("changed", 0),
                                             "of": column.get(name, {}).get("of", 0)} for name in COLUMN_FACTORS}
    s["shifts"] = {name: {"counts": dict(sorted(done.get("counts", {}).items())),
                          "tallies": {t: dict(sorted(v.items())) for t, v in sorted(done.get("tallies", {}).items())}}
                   for name, done in s.get("shifts", {}).items()}
    return s


def from_record(s: Mapping[str, Any]) -> dict[str, Any]:
    """Statistics read back from a shard record or a ``dogood_build.json``, in the shape of :func:`document_stats`.

    Records written before the statistics were kept per shift (flat
    ``shift_counts`` keys ``"shift: count"``, tallies as ``"shift: name"`` or
    ``"shift: name=value"`` keys) are converted.
    """
    out = {k: v for k, v in s.items() if k not in ("shift_counts", "tallies")}
    if "shift_counts" in s or "tallies" in s:
        shifts: dict[str, Any] = {}
        for key, n in (s.get("shift_counts") or {}).items():
            name, _, count = key.partition(": ")
            tally, eq, value = count.partition("=")
            done = {"tallies": {tally: {value: n}}} if eq else {"counts": {count: n}}
            add(shifts.setdefault(name, {"counts": {}, "tallies": {}}), done)
        for key, values in (s.get("tallies") or {}).items():
            name, _, tally = key.partition(": ")
            add(shifts.setdefault(name, {"counts": {}, "tallies": {}}), {"tallies": {tally: values}})
        add(out.setdefault("shifts", {}), shifts)
    return out


def shift_tallies(stats_by_split: Iterable[Mapping[str, Any]], shift: str) -> dict[str, dict[str, int]]:
    """One shift's tallies added up over splits (e.g. every photo ``natural_background`` used)."""
    total: dict[str, Any] = {}
    for s in stats_by_split:
        add(total, (s.get("shifts") or {}).get(shift, {}).get("tallies", {}))
    return total


def credits(chains: Mapping[str, Iterable[Any]], stats: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """Credits of the third-party material a build used (:meth:`Shift.credits` of each shift, from its tallies
    over the config's splits), one per id, sorted by id."""
    found: dict[str, dict[str, Any]] = {}
    for config, chain in chains.items():
        for shift in chain:
            for credit in shift.credits(shift_tallies(stats[config].values(), shift.name)):
                found.setdefault(str(credit["id"]), credit)
    return [found[k] for k in sorted(found, key=lambda k: (len(k), k))]
