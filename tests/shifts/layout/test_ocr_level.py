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


@pytest.mark.parametrize("name", ALL)
def test_every_shift_keeps_boxes_inside_the_page(name, pages):
    params = {"delta": 2.0} if name in ("center_shift", "box_stretch") else {}
    for seed, doc in enumerate(pages[:4] + [edge_form(), swap_form()]):
        out, counts = run(name, doc, seed, **params)
        assert boxes_inside(out), name
        assert all(v >= 0 for v in counts.values())
        assert out.image.to_array().ndim == doc.image.to_array().ndim


@pytest.mark.parametrize("name", [n for n in ALL if n != "neighbor_bg_drop"])
def test_same_seed_same_output_other_seed_other_output(name, pages):
    doc = pages[8]  # its largest group of same-shaped key-value pairs has 5 (a pair of 2 can only swap)
    shift = make_shift({"shift": name})
    a, b, c = shift(doc, 7), shift(doc, 7), shift(doc, 8)
    assert a.words == b.words and a.entities == b.entities and a.image == b.image
    assert a.words != c.words or a.image != c.image
    assert a.provenance[-1].shift == name and a.provenance[-1].skipped is None


def test_neighbor_bg_drop_is_deterministic(pages):
    a, b = run("neighbor_bg_drop", pages[0], 1)[0], run("neighbor_bg_drop", pages[0], 2)[0]
    assert a.words == b.words and len(a.words) < len(pages[0].words)


@pytest.mark.parametrize("name", [n for n in ALL if n != "margin_padding"])
def test_pages_without_words_are_skipped(name):
    empty = Document("empty", noise_page())
    out = make_shift({"shift": name})(empty, 0)
    assert out.provenance[-1].skipped == "no words" and out.image is empty.image


@pytest.mark.parametrize("spec, message", [
    ({"shift": "center_shift", "delta": -0.1}, "parameter delta must be ≥ 0, got -0.1"),
    ({"shift": "box_stretch", "delta": float("nan")}, "parameter delta must be a number, got nan"),
    ({"shift": "margin_padding", "r": -1}, "parameter r must be ≥ 0, got -1"),
    ({"shift": "bg_drop", "p": 1.5}, r"parameter p must be in \[0, 1\], got 1.5"),
    ({"shift": "neighbor_shuffle", "n": -1}, "parameter n must be ≥ 0, got -1"),
    ({"shift": "neighbor_shuffle", "n": 1.5}, "parameter n must be an integer, got 1.5"),
    ({"shift": "neighbor_bg_drop", "r": -0.5}, "parameter r must be ≥ 0, got -0.5"),
    ({"shift": "value_location_augment", "swap": True}, "no parameter swap"),
])
def test_bad_parameters_are_refused(spec, message):
    with pytest.raises(RecipeError, match=message):
        make_shift(spec)


@pytest.mark.parametrize("name", ["bg_drop", "neighbor_bg_drop"])
def test_the_drops_take_the_team_names_and_their_old_ones(name):
    """``fraction`` and ``render``, as every shift calls them; the form-attack names ``p`` and ``erase`` still read."""
    share = {"fraction": 0.3} if name == "bg_drop" else {}
    old = {"p": 0.3} if name == "bg_drop" else {}
    new = make_shift({"shift": name, **share, "render": True})
    assert make_shift({"shift": name, **old, "erase": True}).params() == new.params()
    assert new.render is True and set(new.params()) >= {"render"} and "erase" not in new.params()
    if name == "bg_drop":
        assert new.fraction == 0.3 and "p" not in new.params()
        with pytest.raises(RecipeError, match="parameter fraction must be in"):
            make_shift({"shift": name, "fraction": 2})


@pytest.mark.parametrize("name", ORDER)
def test_reading_order_shifts_change_only_the_order(name, pages):
    moved = 0
    for seed, doc in enumerate(pages):
        out, counts = run(name, doc, seed)
        assert pairs_of(out) == pairs_of(doc) and out.image is doc.image
        assert Counter(zip(out.words, labels_of(out))) == Counter(zip(doc.words, labels_of(doc)))
        before = {e.id: [doc.words[i] for i in e.word_ids] for e in doc.entities}
        assert {e.id: [out.words[i] for i in e.word_ids] for e in out.entities} == before
        assert [(e.id, e.label, e.links) for e in out.entities] == [(e.id, e.label, e.links) for e in doc.entities]
        in_place = [i for i, (a, b) in enumerate(zip(doc.words, out.words)) if a == b]
        near = value_neighbours(doc)
        values = {i for e in doc.entities if e.label == "answer" for i in e.word_ids}
        if name == "neighbor_shuffle":
            fixed = set(range(len(doc.words))) - near
        elif name == "non_neighbor_shuffle":
            fixed = near | values
        else:
            fixed = set()
        assert fixed <= set(in_place)
        movers = set(range(len(doc.words))) - fixed
        assert counts["eligible"] == len(movers) and counts["changed"] == len(doc.words) - len(in_place)
        assert Counter(out.words[i] for i in movers) == Counter(doc.words[i] for i in movers)  # among their own places
        moved += counts["changed"]
    assert moved > 100
