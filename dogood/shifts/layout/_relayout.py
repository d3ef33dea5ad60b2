"""What the layout shifts share: new boxes, reading-order shuffles, value neighbour zones, word drops, moved pixels.

Machinery for :mod:`dogood.shifts.layout` (the form-attack OCR-level shifts of
Xue et al. 2021: Center Shift, Box Stretch, Margin Padding, the shuffles, the
background drops, Value Location Augment). No shift lives here.

Roles on FUNSD, as in :mod:`dogood.language.selection`: keys are ``question``
entities, values ``answer`` entities, background the words of ``header`` and
``other`` entities and words in no entity. Neighbours of a value come from
:func:`~dogood.language.selection.value_neighbours` (any overlap with the value
box grown by ``r`` of the page size, where the paper asks IoU > 0.5, which a
word seldom reaches against a zone larger than itself; plus the ``n`` token
words before and after the value in the word order, standing in for the
paper's Tesseract reading order).

Nothing here imports :mod:`dogood.shifts` at import time (the shifts import
this module while ``dogood.shifts`` loads); the base classes (box jitter,
zone shuffle), which are :class:`~dogood.shifts.base.Shift` classes, are in
:mod:`dogood.shifts.layout._bases`.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from dogood.core.document import Document


def with_boxes(doc: Document, boxes: np.ndarray, **changes) -> Document:
    """``doc`` with word ``i`` given box ``boxes[i]`` (texts kept) and the other ``changes`` made."""
    words = tuple(w.moved(tuple(int(v) for v in b)) for w, b in zip(doc.words, boxes))
    return doc.replace(words=words, **changes)


def changed_boxes(old: np.ndarray, new: np.ndarray) -> int:
    """How many rows of ``new`` differ from ``old``."""
    return int((old != new).any(axis=1).sum())


# -- reading order -----------------------------------------------------------------------------------------------------

def shuffle_among(doc: Document, rng: np.random.Generator, indices: Sequence[int]) -> tuple[Document, dict[str, int]]:
    """``doc`` with the words at ``indices`` shuffled among those places; every other word keeps its place."""
    from dogood.language.edits import reorder_words

    places = sorted(indices)
    order = np.arange(len(doc.words))
    order[places] = rng.permutation(places) if places else order[places]
    moved = int((order != np.arange(len(order))).sum())
    return (reorder_words(doc, order.tolist()) if moved else doc), {"eligible": len(places), "changed": moved}


# -- background drop ---------------------------------------------------------------------------------------------------

def drop_words(doc: Document, dropped: list[int], render: bool) -> Document:
    """``doc`` without words ``dropped``; with ``render``, their ink is inpainted away first."""
    from dogood.language.edits import delete_words, replace_texts

    out = doc
    if render and dropped:
        from dogood.page.render import render_words

        blank = replace_texts(doc, {i: "" for i in dropped})
        out = doc.replace(image=render_words(blank, dropped, original=doc).image)
    return delete_words(out, dropped)


# -- value location ----------------------------------------------------------------------------------------------------

def key_value_pairs(doc: Document, key_labels: Sequence[str] = ("question",),
                    value_labels: Sequence[str] = ("answer",)) -> list[tuple[int, int]]:
    """``(key entity index, value entity index)`` of the one-to-one key-value pairs, in document order.

    A pair is a key entity and a value entity, both with words, linked to
    each other and to no other value/key: a key with several answers (a
    table row) or an answer shared by several keys has no single location to
    trade, and is left out.
    """
    where = {e.id: k for k, e in enumerate(doc.entities)}
    ents = doc.entities
    links = set()
    for e in ents:
        for a, b in e.links:
            if a in where and b in where:
                ka, kb = where[a], where[b]
                if ents[ka].label in value_labels and ents[kb].label in key_labels:
                    ka, kb = kb, ka
                key, value = ents[ka], ents[kb]
                if key.label in key_labels and value.label in value_labels and key.word_ids and value.word_ids:
                    links.add((ka, kb))
    keys = [k for k, _ in links]
    values = [v for _, v in links]
    return sorted((k, v) for k, v in links if keys.count(k) == 1 and values.count(v) == 1)


def derangement(m: int, rng: np.random.Generator) -> np.ndarray:
    """A random permutation of ``range(m)`` with no fixed point (``m >= 2``), by rejection (about e draws)."""
    while True:
        perm = rng.permutation(m)
        if not (perm == np.arange(m)).any():
            return perm


def paste_words(pixels: np.ndarray, source: np.ndarray, moves: Sequence[tuple[Sequence[int], Sequence[int]]]) -> None:
    """Copy each ``(old box, new box)`` crop of ``source`` into ``pixels`` (in place), resized to the new box."""
    for (ox0, oy0, ox1, oy1), (nx0, ny0, nx1, ny1) in moves:
        if ox1 <= ox0 or oy1 <= oy0 or nx1 <= nx0 or ny1 <= ny0:
            continue
        crop = source[oy0:oy1, ox0:ox1]
        size = (nx1 - nx0, ny1 - ny0)
        if crop.shape[1::-1] != size:
            shrink = size[0] * size[1] < crop.shape[0] * crop.shape[1]
            how = cv2.INTER_AREA if shrink else cv2.INTER_LINEAR
            crop = cv2.resize(np.ascontiguousarray(crop), size, interpolation=how)
        pixels[ny0:ny1, nx0:nx1] = crop
