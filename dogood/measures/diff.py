"""What a shift chain changed in a document: words replaced, inserted, deleted or moved, and pixels.

The record keeps no word-by-word correspondence across a chain, so the words
are aligned here: :class:`difflib.SequenceMatcher` over the word texts (text
shifts keep the order of the words they keep), then, inside a span that
differs, words are paired by their box (a text shift keeps a changed word's
box), and the rest by position when both sides have as many words. A kept
word whose box differs is *moved* (layout and image shifts). difflib does the
alignment; only this pairing rule, which no library knows, is written here.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from difflib import SequenceMatcher

import numpy as np

from dogood.core.document import Document

KINDS = ("replaced", "inserted", "deleted", "moved")
ARROW = "\u2192"


@dataclass(frozen=True)
class WordEdit:
    """One word the chain changed: ``old`` (index, text, box) on the original, ``new`` on the shifted copy."""

    kind: str  # one of KINDS
    old_index: int | None
    new_index: int | None
    old_text: str | None
    new_text: str | None
    old_box: tuple[int, int, int, int] | None
    new_box: tuple[int, int, int, int] | None

    @property
    def text_changed(self) -> bool:
        return self.kind != "moved"

    @property
    def moved(self) -> bool:
        return self.old_box is not None and self.new_box is not None and self.old_box != self.new_box

    def line(self) -> str:
        """``word 12 'Date' → 'Day'``, with the boxes when the word moved."""
        where = f"word {self.old_index}" if self.old_index is not None else f"new word {self.new_index}"
        if self.old_index is not None and self.new_index is not None and self.old_index != self.new_index:
            where += f" (now {self.new_index})"
        old = repr(self.old_text) if self.old_text is not None else "(inserted)"
        new = repr(self.new_text) if self.new_text is not None else "(deleted)"
        text = f"{where}: {old} {ARROW} {new}" if self.kind != "moved" else f"{where}: {old}"
        if self.moved:
            text += f"  box {list(self.old_box)} {ARROW} {list(self.new_box)}"
        elif self.kind == "inserted":
            text += f"  at {list(self.new_box)}"
        return text


def word_edits(original: Document, shifted: Document) -> list[WordEdit]:
    """The words ``shifted`` changed relative to ``original``, in reading order of the original."""
    a, b = original.words, shifted.words
    out: list[WordEdit] = []
    inserted_at: dict[int, float] = {}

    def pair(i: int, j: int) -> None:
        kind = "replaced" if a[i].text != b[j].text else "moved"
        if kind == "moved" and tuple(a[i].box) == tuple(b[j].box):
            return
        out.append(WordEdit(kind, i, j, a[i].text, b[j].text, tuple(a[i].box), tuple(b[j].box)))

    matcher = SequenceMatcher(None, [w.text for w in a], [w.text for w in b], autojunk=False)
    for op, i0, i1, j0, j1 in matcher.get_opcodes():
        if op == "equal":
            for i, j in zip(range(i0, i1), range(j0, j1)):
                pair(i, j)
            continue
        olds, news = list(range(i0, i1)), list(range(j0, j1))
        matched: dict[int, int] = {}
        free = list(news)
        for i in olds:  # a text shift keeps a changed word's box
            j = next((j for j in free if tuple(b[j].box) == tuple(a[i].box)), None)
            if j is not None:
                matched[i] = j
                free.remove(j)
        rest = [i for i in olds if i not in matched]
        if len(rest) == len(free):
            matched.update(zip(rest, free))
            free = []
        for i in olds:
            if i in matched:
                pair(i, matched[i])
            else:
                out.append(WordEdit("deleted", i, None, a[i].text, None, tuple(a[i].box), None))
        for j in free:  # sorted where it was inserted: after the original's word i1 - 1
            out.append(WordEdit("inserted", None, j, None, b[j].text, None, tuple(b[j].box)))
            inserted_at[id(out[-1])] = i1 - 0.5
    for ins in [e for e in out if e.kind == "inserted"]:  # a repeated word: the copy in the original's box is it
        twin = next((m for m in out if m.kind == "moved" and m.old_box == ins.new_box and m.old_text == ins.new_text),
                    None)
        if twin is not None:
            copy = WordEdit("inserted", None, twin.new_index, None, twin.new_text, None, twin.new_box)
            inserted_at[id(copy)] = twin.old_index + 0.5
            out[next(k for k, e in enumerate(out) if e is ins)] = copy
            out = [e for e in out if e is not twin]
    out.sort(key=lambda e: (e.old_index if e.old_index is not None else inserted_at[id(e)], e.new_index or 0))
    return out


def changed_pixels(original: Document, shifted: Document) -> float | None:
    """Share of the page's pixels that differ (``None`` when the pages differ in size)."""
    x, y = np.asarray(original.image.to_array()), np.asarray(shifted.image.to_array())
    if x.shape[:2] != y.shape[:2]:
        return None
    if x.ndim != y.ndim:
        x, y = (np.atleast_3d(x).mean(axis=2), np.atleast_3d(y).mean(axis=2))
    diff = x != y
    return float((diff.any(axis=2) if diff.ndim == 3 else diff).mean())


def format_diff(original: Document, shifted: Document, limit: int | None = None) -> str:
    """A readable list of what changed: one ``old → new`` line per word, then the counts and the pixels."""
    edits = word_edits(original, shifted)
    chain = " + ".join(f"{r.shift} {r.params_json()}" for r in shifted.provenance) or "no shift"
    lines = [f"document {shifted.id}: {chain}"]
    shown = edits if limit is None else edits[:limit]
    lines += ["  " + e.line() for e in shown]
    if len(shown) < len(edits):
        lines.append(f"  ... and {len(edits) - len(shown)} more")
    counts = Counter(e.kind for e in edits)
    moved_too = sum(1 for e in edits if e.kind == "replaced" and e.moved)
    summary = ", ".join(f"{counts[k]} {k}" for k in KINDS)
    summary += f" of {len(original.words)} words" + (f" ({moved_too} replaced words also moved)" if moved_too else "")
    if not edits:
        summary = f"words unchanged ({len(original.words)} words, same text and boxes)"
    share = changed_pixels(original, shifted)
    if share is None:
        pixels = f"page {original.width}x{original.height} {ARROW} {shifted.width}x{shifted.height} px"
    else:
        pixels = f"pixels changed in {100 * share:.1f}% of the page"
    lines.append(f"{summary}; {pixels}")
    return "\n".join(lines)
