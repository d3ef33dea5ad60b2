"""Editing a document's words while its entities, labels, links and pixels stay consistent.

Text shifts change, delete, add and reorder words; these functions do the
bookkeeping once: entity word ids are renumbered, a deleted word leaves its
entity (an entity left with no words goes, with the links to it), an added
word joins the entity of the word it follows, right after it, so IOB tags
stay ``B-`` then ``I-``. Boxes are never invented here: the caller gives them
(:func:`box_beside` places a repeated word next to its twin). With a shift's
``render`` knob, :func:`with_texts`, :func:`without_words` and
:func:`apply_edits` also redraw the page (:func:`dogood.page.render.render_words`,
imported only then): changed words in their boxes, deleted words erased.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from dogood.core.boxes import Box
from dogood.core.document import Document, Entity, Word


def replace_texts(doc: Document, texts: Mapping[int, str]) -> Document:
    """``doc`` with the text of word ``i`` replaced by ``texts[i]``; boxes, entities and labels unchanged."""
    if not texts:
        return doc
    words = list(doc.words)
    for i, text in texts.items():
        words[i] = Word(text, words[i].box, words[i].quad)
    return doc.replace(words=tuple(words))


def delete_words(doc: Document, indices: Iterable[int]) -> Document:
    """``doc`` without the words at ``indices``; each leaves with its box and its place in its entity.

    Entities left without words are removed, and so are the links to them.
    """
    gone = set(indices)
    if not gone:
        return doc
    new_index: dict[int, int] = {}
    words = []
    for i, w in enumerate(doc.words):
        if i not in gone:
            new_index[i] = len(words)
            words.append(w)
    entities = []
    for ent in doc.entities:
        ids = tuple(new_index[i] for i in ent.word_ids if i in new_index)
        if ent.word_ids and not ids:
            continue
        entities.append(Entity(ent.id, ent.label, ids, ent.links))
    kept = {e.id for e in entities}
    entities = [Entity(e.id, e.label, e.word_ids, tuple(l for l in e.links if l[0] in kept and l[1] in kept)) for e in entities]
    return doc.replace(words=tuple(words), entities=tuple(entities))


def insert_words(doc: Document, inserts: Mapping[int, Sequence[Word]]) -> Document:
    """``doc`` with ``inserts[i]`` (new words) placed right after word ``i``, in its entity.

    The new words follow word ``i`` in the word list and in its entity's
    word ids, so they take its entity's label (as ``I-`` tags). Key ``-1``
    inserts at the very start, in no entity.
    """
    if not any(inserts.values()):
        return doc
    new_index: dict[int, int] = {}
    added: dict[int, list[int]] = {}
    words: list[Word] = list(inserts.get(-1, ()))
    for i, w in enumerate(doc.words):
        new_index[i] = len(words)
        words.append(w)
        extra = inserts.get(i, ())
        added[i] = list(range(len(words), len(words) + len(extra)))
        words.extend(extra)
    entities = []
    for ent in doc.entities:
        ids: list[int] = []
        for i in ent.word_ids:
            ids.append(new_index[i])
            ids.extend(added[i])
        entities.append(Entity(ent.id, ent.label, tuple(ids), ent.links))
    return doc.replace(words=tuple(words), entities=tuple(entities))


def reorder_words(doc: Document, order: Sequence[int]) -> Document:
    """``doc`` with its words in ``order`` (a permutation of word indices); only the order changes.

    Entities keep their words (renumbered), in the entities' own order, so
    their labels and IOB tags stay with the same words.
    """
    if sorted(order) != list(range(len(doc.words))):
        raise ValueError(f"document {doc.id!r}: order must be a permutation of its {len(doc.words)} word indices")
    new_index = {old: new for new, old in enumerate(order)}
    words = tuple(doc.words[i] for i in order)
    entities = tuple(Entity(e.id, e.label, tuple(new_index[i] for i in e.word_ids), e.links) for e in doc.entities)
    return doc.replace(words=words, entities=entities)


def box_beside(box: Box, width: int, page_width: int, gap: int = 2) -> Box:
    """A box of ``width`` pixels on the line of ``box``: just right of it, or left of it at the page edge.

    Used for a word that is repeated or inserted next to its twin (Moradi &
    Samwald's word repetition). The result always lies inside the page.
    """
    x0, y0, x1, y1 = box
    width = max(0, min(width, page_width))
    if x1 + gap + width <= page_width:
        return (x1 + gap, y0, x1 + gap + width, y1)
    if x0 - gap - width >= 0:
        return (x0 - gap - width, y0, x0 - gap, y1)
    return (page_width - width, y0, page_width, y1)


# -- whole edits, and the pixels --------------------------------------------------------------------------------------

def redraw_guard(doc: Document, render: bool):
    """With ``render``, what redrawing ``doc``'s words can do (:class:`dogood.page.render.Redraw`: the words it keeps
    as printed, the new texts that fit), for a shift to ask before it picks a word; else ``None``."""
    if not render:
        return None
    from dogood.page.render import Redraw

    return Redraw(doc)


def kept_tallies(guard) -> dict[str, dict[str, int]]:
    """The words a :func:`redraw_guard` kept, by reason, as an outcome's tallies (``{}`` without a guard)."""
    return guard.tallies() if guard is not None else {}


def with_texts(doc: Document, texts: Mapping[int, str], render: bool = False) -> Document:
    """:func:`replace_texts`, and with ``render`` the changed words redrawn in their boxes."""
    out = replace_texts(doc, texts)
    if render and texts:
        from dogood.page.render import render_words

        out = render_words(out, sorted(texts), original=doc)
    return out


def erased(doc: Document, indices: Sequence[int], fit: bool = True) -> Document:
    """``doc`` with the ink of words ``indices`` erased from its image (words unchanged).

    ``fit``: the erased boxes are fitted to the print of the words as ``doc`` shows them (``render_words``'s
    ``original``).
    """
    from dogood.page.render import render_words

    blank = replace_texts(doc, {i: "" for i in indices})
    return doc.replace(image=render_words(blank, sorted(indices), original=doc if fit else None).image)


def without_words(doc: Document, indices: Iterable[int], render: bool = False) -> Document:
    """:func:`delete_words`, and with ``render`` their ink erased from the page first."""
    gone = sorted(set(indices))
    if render and gone:
        doc = erased(doc, gone)
    return delete_words(doc, gone)


@dataclass
class Edits:
    """Word edits collected over a document, applied at once by :func:`apply_edits`.

    ``replace``: new text per word index; ``insert``: new words placed right
    after a word (in its entity); ``delete``: word indices removed.
    """

    replace: dict[int, str] = field(default_factory=dict)
    insert: dict[int, list[Word]] = field(default_factory=dict)
    delete: set[int] = field(default_factory=set)

    def touched(self) -> set[int]:
        return set(self.replace) | set(self.insert) | self.delete


def apply_edits(doc: Document, edits: Edits) -> tuple[Document, list[int]]:
    """``doc`` with ``edits`` applied, and the indices (in the new document) of words with new text."""
    out = replace_texts(doc, edits.replace)
    out = insert_words(out, edits.insert)
    position = []  # index of each old word after the insertions
    new_words: list[int] = []
    pos = len(edits.insert.get(-1, ()))
    for i in range(len(doc.words)):
        position.append(pos)
        extra = len(edits.insert.get(i, ()))
        new_words.extend(range(pos + 1, pos + 1 + extra))
        pos += 1 + extra
    gone = sorted(position[i] for i in edits.delete)
    out = delete_words(out, gone)
    changed = sorted([position[i] for i in edits.replace if i not in edits.delete] + new_words)
    shift = np.searchsorted(np.array(gone, dtype=np.int64), np.array(changed, dtype=np.int64))
    return out, [int(c - s) for c, s in zip(changed, shift)]


def redraw_edits(out: Document, original: Document, edits: Edits, changed: list[int]) -> Document:
    """Make ``out``'s page agree with its words after :func:`apply_edits`: deleted words erased (as blank text
    in ``original``), then the words with new text (``changed``, indices in ``out``) drawn in their boxes."""
    if not (changed or edits.delete):
        return out
    from dogood.page.render import render_words

    if edits.delete:
        out = out.replace(image=erased(original, sorted(edits.delete), fit=False).image)
    if not changed:
        return out
    same_words = len(out.words) == len(original.words)  # render_words compares with original word by word
    return render_words(out, changed, original=original if same_words else None)
