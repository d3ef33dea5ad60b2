"""Form-attack OCR-level and layout shifts on real FUNSD pages and hand-made forms: what moves, what never does."""

from __future__ import annotations

from collections import Counter

import pytest
from ocr_level_checks import ALL, ORDER, boxes_inside, edge_form, labels_of, noise_page, pairs_of, run, swap_form

from dogood.core.document import Document
from dogood.core.errors import RecipeError
from dogood.language.selection import value_neighbours
from dogood.shifts import make_shift


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
