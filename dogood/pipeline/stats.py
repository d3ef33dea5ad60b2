"""A build's statistics: counted per document by the workers, summed per shard and per split for the card."""

from __future__ import annotations

import difflib
from collections import Counter
from typing import Any

from dogood.document import Document
from dogood.schema import FUNSD_NER_TAGS, RVL_CDIP_CLASSES


def document_stats(original: Document, shifted: Document, row: dict[str, Any], schema: str) -> dict[str, Any]:
    """Per-document counts that the card sums: words, tokens, changes, labels, skips."""
    box_changed, text_changed, removed = word_changes(original.words, shifted.words)
    if schema == "funsd":
        labels = Counter(FUNSD_NER_TAGS[t] for t in row["ner_tags"])
    elif schema == "rvl_cdip":
        labels = Counter([RVL_CDIP_CLASSES[row["label"]]])
    else:
        labels = Counter({"questions": len(shifted.qa)})
    skips = Counter(f"{r.shift}: {r.skipped}" for r in shifted.provenance if r.skipped)
    shift_counts: Counter[str] = Counter()
    for r in shifted.provenance:
        for key, n in r.counts.items():
            shift_counts[f"{r.shift}: {key}"] += n
    return {
        "documents": 1,
        "words": len(shifted.words),
        "tokens": len(row["tokens"]),
        "source_words": len(original.words),
        "box_changed": box_changed,
        "text_changed": text_changed,
        "words_removed": removed,
        "labels": labels,
        "skips": skips,
        "shift_counts": shift_counts,
    }


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
    matcher = difflib.SequenceMatcher(None, [w.text for w in before], [w.text for w in after], autojunk=False)
    boxes = texts = removed = 0
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            boxes += sum(before[i].box != after[j].box for i, j in zip(range(i1, i2), range(j1, j2)))
        else:
            texts += j2 - j1
            removed += max(0, (i2 - i1) - (j2 - j1))
    return boxes, texts, removed


def add_stats(total: dict[str, Any], one: dict[str, Any]) -> None:
    """Add the statistics ``one`` into ``total``: counts are summed, Counters merged."""
    for key, value in one.items():
        if isinstance(value, Counter):
            total.setdefault(key, Counter()).update(value)
        else:
            total[key] = total.get(key, 0) + value


def as_counters(stats: dict[str, Any]) -> dict[str, Any]:
    """A shard record's statistics with the per-name tallies as Counters again (for :func:`add_stats`)."""
    return {k: Counter(v) if isinstance(v, dict) else v for k, v in stats.items()}


def split_tallies(shift_counts: dict[str, int]) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
    """Plain counts, and tallies of per-document values: a count key ``name=value`` (e.g.
    ``natural_background: photo=397133``) becomes ``tallies["natural_background: photo"]["397133"]``."""
    plain: dict[str, int] = {}
    tallies: dict[str, dict[str, int]] = {}
    for key, n in sorted(shift_counts.items()):
        name, eq, value = key.partition("=")
        if eq:
            tallies.setdefault(name, {})[value] = n
        else:
            plain[key] = n
    return plain, tallies
