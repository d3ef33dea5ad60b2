"""Helpers the layout shifts' OCR-level tests share (test_value_location_augment.py, test_center_shift.py,
test_bg_drop.py, test_margin_padding.py, test_box_stretch.py, test_ocr_level.py, test_neighbor_bg_drop.py,
test_neighbor_shuffle.py): the shift lists, hand-made forms with edge and swappable words, and checks of what a
shift kept. The ``pages`` fixture is in tests/shifts/conftest.py."""

from __future__ import annotations

from collections import Counter

import numpy as np

from dogood.core.document import Document, Entity, PageImage, Word
from dogood.shifts import make_shift

ALL = ["center_shift", "box_stretch", "margin_padding", "global_shuffle", "neighbor_shuffle", "non_neighbor_shuffle",
       "bg_drop", "neighbor_bg_drop", "value_location_augment"]

ORDER = ["global_shuffle", "neighbor_shuffle", "non_neighbor_shuffle"]

KEY_VALUE = {"question", "answer"}


def run(name, doc, seed=0, **params):
    out, counts, _ = make_shift({"shift": name, **params}).apply(doc, np.random.default_rng(seed))
    return out, counts


def labels_of(doc):
    return [e.label if e is not None else None for e in doc.word_entity()]


def pairs_of(doc):
    return Counter((w.text, w.box) for w in doc.words)


def boxes_inside(doc):
    b = doc.boxes
    return bool(((b[:, 0] >= 0) & (b[:, 1] >= 0) & (b[:, 2] <= doc.width) & (b[:, 3] <= doc.height)
                 & (b[:, 0] <= b[:, 2]) & (b[:, 1] <= b[:, 3])).all())


def kept_indices(before, after):
    """Indices of ``before``'s words that survive in ``after`` (a deletion keeps the order)."""
    kept, j = [], 0
    for i, w in enumerate(before.words):
        if j < len(after.words) and after.words[j] == w:
            kept.append(i)
            j += 1
    assert j == len(after.words), "the output is not a subsequence of the input"
    return kept


def noise_page(width=300, height=200, seed=0, rgb=False):
    shape = (height, width, 3) if rgb else (height, width)
    return PageImage.from_array(np.random.default_rng(seed).integers(0, 256, shape, dtype=np.uint8))


def edge_form():
    """Words flush with every page edge, a tiny word and a zero-width box: clipping must keep them inside."""
    words = [Word("Left", (0, 40, 30, 50)), Word("Right", (270, 40, 300, 50)), Word("Top", (100, 0, 130, 12)),
             Word("Bottom", (100, 188, 150, 200)), Word(".", (150, 100, 151, 101)), Word("|", (160, 100, 160, 110)),
             Word("Name:", (10, 80, 50, 95)), Word("Ann", (60, 80, 90, 95))]
    entities = [Entity(0, "question", (6,), ((0, 1),)), Entity(1, "answer", (7,), ((0, 1),)), Entity(2, "header", (2,))]
    return Document("edges", noise_page(), tuple(words), tuple(entities))


def swap_form(rgb=False):
    """Two key-value pairs of the same shape (1 key word, 2 value words, same box sizes), one of another shape,
    a key with two answers (no one-to-one pair) and background."""
    words = [
        Word("Date:", (10, 10, 50, 25)), Word("May", (60, 10, 90, 25)), Word("1995", (95, 10, 135, 25)),      # 0-2
        Word("Fax:", (10, 120, 50, 135)), Word("614", (160, 150, 190, 165)), Word("466", (195, 150, 235, 165)),  # 3-5
        Word("To:", (10, 60, 40, 75)), Word("Bob", (50, 60, 80, 75)),                                           # 6-7
        Word("Cc:", (150, 10, 180, 25)), Word("Al", (190, 10, 210, 25)), Word("Jo", (220, 10, 240, 25)),       # 8-10
        Word("FORM", (120, 180, 170, 195)), Word("note", (250, 100, 290, 115)),                                # 11-12
    ]
    entities = [
        Entity(1, "question", (0,), ((1, 2),)), Entity(2, "answer", (1, 2), ((1, 2),)),
        Entity(3, "question", (3,), ((3, 4),)), Entity(4, "answer", (4, 5), ((3, 4),)),
        Entity(5, "question", (6,), ((5, 6),)), Entity(6, "answer", (7,), ((5, 6),)),
        Entity(7, "question", (8,), ((7, 8), (7, 9))), Entity(8, "answer", (9,), ((7, 8),)),
        Entity(9, "answer", (10,), ((7, 9),)), Entity(10, "header", (11,)),
    ]
    return Document("swap", noise_page(rgb=rgb), tuple(words), tuple(entities))
