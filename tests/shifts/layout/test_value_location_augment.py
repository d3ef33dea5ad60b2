"""Form-attack OCR-level and layout shifts on real FUNSD pages and hand-made forms: what moves, what never does."""

from __future__ import annotations

from collections import Counter

import numpy as np

import pytest

from dogood.core.document import Document, Entity, PageImage, Word

from dogood.core.errors import RecipeError

from dogood.core.schema import iob_tags

from dogood.shifts import SkipDocument, make_shift

from dogood.language.selection import background_words, value_neighbours

from dogood.shifts.layout._relayout import key_value_pairs

ALL = ["center_shift", "box_stretch", "margin_padding", "global_shuffle", "neighbor_shuffle", "non_neighbor_shuffle",
       "bg_drop", "neighbor_bg_drop", "value_location_augment"]

ORDER = ["global_shuffle", "neighbor_shuffle", "non_neighbor_shuffle"]

KEY_VALUE = {"question", "answer"}

@pytest.fixture(scope="module")
def pages(funsd_test):
    return [funsd_test.load(i) for i in funsd_test.ids()[:10]]

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

def _overlap(a, b):
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


@pytest.mark.parametrize("rgb", [False, True])
def test_value_location_augment_swaps_same_shaped_pairs_with_their_pixels(rgb):
    doc = swap_form(rgb=rgb)
    assert len(key_value_pairs(doc)) == 3  # Cc: has two answers: no one-to-one pair
    out, counts = run("value_location_augment", doc, 0)
    assert counts == {"pairs": 3, "eligible": 2, "moved": 2, "changed": 6}
    swapped = {0: 3, 3: 0, 1: 4, 4: 1, 2: 5, 5: 2}
    for i, (a, b) in enumerate(zip(doc.words, out.words)):
        assert b.text == a.text
        assert b.box == (doc.words[swapped[i]].box if i in swapped else a.box)
    assert out.entities == doc.entities
    before, after = doc.image.to_array(), out.image.to_array()
    mask = np.zeros(before.shape[:2], dtype=bool)
    for i in swapped:
        ox0, oy0, ox1, oy1 = doc.words[i].box
        nx0, ny0, nx1, ny1 = out.words[i].box
        assert np.array_equal(after[ny0:ny1, nx0:nx1], before[oy0:oy1, ox0:ox1])
        mask[ny0:ny1, nx0:nx1] = True
    assert np.array_equal(after[~mask], before[~mask])
    boxes_only, counts2 = run("value_location_augment", doc, 0, move_pixels=False)
    assert boxes_only.words == out.words and boxes_only.image is doc.image and counts2 == counts


def test_value_location_augment_resizes_crops_into_other_sized_boxes():
    ramp = np.tile(np.arange(300).clip(0, 255).astype(np.uint8), (200, 1))  # grey level = x
    words = list(swap_form().words)
    words[3] = Word("Fax:", (100, 120, 160, 140))  # wider and taller than "Date:"'s (10, 10, 50, 25)
    doc = swap_form().replace(words=tuple(words), image=PageImage.from_array(ramp))
    out, _ = run("value_location_augment", doc, 0)
    assert out.words[0].box == (100, 120, 160, 140) and out.words[3].box == (10, 10, 50, 25)
    after = out.image.to_array().astype(int)
    for region, lo, hi in ((after[120:140, 100:160], 10, 49), (after[10:25, 10:50], 100, 159)):
        assert (region == region[0]).all() and (np.diff(region[0]) >= 0).all()  # the crop, stretched or squeezed
        assert abs(region[0, 0] - lo) <= 1 and abs(region[0, -1] - hi) <= 1


def test_value_location_augment_on_funsd_trades_boxes_within_groups(pages):
    pairs = eligible = 0
    for seed, doc in enumerate(pages):
        out, counts = run("value_location_augment", doc, seed)
        assert [w.text for w in out.words] == [w.text for w in doc.words] and out.entities == doc.entities
        assert Counter(w.box for w in out.words) == Counter(w.box for w in doc.words)
        ents = doc.entities
        found = key_value_pairs(doc)
        shape = Counter((len(ents[k].word_ids), len(ents[v].word_ids)) for k, v in found)
        movable = {i for k, v in found if shape[len(ents[k].word_ids), len(ents[v].word_ids)] >= 2
                   for i in ents[k].word_ids + ents[v].word_ids}
        moved = {i for i, (a, b) in enumerate(zip(doc.words, out.words)) if a.box != b.box}
        assert moved <= movable
        assert counts["pairs"] == len(found) and counts["eligible"] == counts["moved"]
        assert counts["eligible"] == sum(n for n in shape.values() if n >= 2)
        if counts["moved"]:  # every moved word shows its own pixels in its new box (resized when sizes differ)
            before, after = doc.image.to_array(), out.image.to_array()
            for i in moved:
                ox0, oy0, ox1, oy1 = doc.words[i].box
                nx0, ny0, nx1, ny1 = out.words[i].box
                if (ox1 - ox0, oy1 - oy0) == (nx1 - nx0, ny1 - ny0) and not any(
                        j != i and j in moved and _overlap(out.words[j].box, out.words[i].box) for j in moved):
                    assert np.array_equal(after[ny0:ny1, nx0:nx1], before[oy0:oy1, ox0:ox1])
        pairs += counts["pairs"]
        eligible += counts["eligible"]
    assert pairs > 50 and eligible > 20


def test_value_location_augment_leaves_lone_shapes_alone():
    doc = swap_form()
    doc = doc.replace(entities=tuple(e for e in doc.entities if e.id not in (3, 4)))  # Date: is now alone
    out, counts = run("value_location_augment", doc, 0)
    assert out is doc and counts == {"pairs": 2, "eligible": 0, "moved": 0, "changed": 0}
    with pytest.raises(SkipDocument):
        make_shift({"shift": "value_location_augment"}).apply(Document("e", noise_page()), np.random.default_rng(0))
