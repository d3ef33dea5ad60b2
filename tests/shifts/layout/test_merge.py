"""Merge by dilation (Do-GOOD Algorithm 1): hand-made cases and real FUNSD pages."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dogood.core.document import Document, Entity, PageImage, Word
from dogood.shifts import MergeBoxes, make_shift
from dogood.shifts.layout.merge import merge_boxes


def page(w=200, h=100):
    return PageImage.from_array(np.full((h, w), 255, np.uint8))


def doc_with(boxes, labels=None, size=(200, 100)):
    words = [Word(f"w{i}", b) for i, b in enumerate(boxes)]
    labels = (labels or ["question"] * len(boxes))[: len(boxes)]
    entities = [Entity(i, lab, (i,)) for i, lab in enumerate(labels)]
    return Document("d", page(*size), tuple(words), tuple(entities))


def test_far_apart_boxes_stay_apart():
    group, merged = merge_boxes([(0, 0, 10, 10), (50, 0, 60, 10)], 10, 5)
    assert group.tolist() == [0, 1]
    assert merged.tolist() == [[0, 0, 10, 10], [50, 0, 60, 10]]


def test_dilation_threshold_is_inclusive():
    boxes = [(0, 0, 10, 10), (15, 0, 25, 10)]
    # dilated by 5 the first box reaches x=15: closed boxes touch, so they merge
    group, merged = merge_boxes(boxes, 5, 0)
    assert group.tolist() == [0, 0] and merged.tolist() == [[0, 0, 25, 10]]
    # by 4 it reaches x=14 and they stay apart
    group, _ = merge_boxes(boxes, 4, 0)
    assert group.tolist() == [0, 1]


def test_vertical_dilation_uses_lambda_y():
    boxes = [(0, 0, 10, 10), (0, 18, 10, 28)]
    assert merge_boxes(boxes, 100, 7)[0].tolist() == [0, 1]
    assert merge_boxes(boxes, 0, 8)[0].tolist() == [0, 0]


def test_bridging_box_merges_a_chain_transitively():
    # A and C are traversed first and stay apart; B touches both and joins them all.
    a, c, b = (0, 0, 10, 10), (40, 0, 50, 10), (20, 0, 30, 10)
    group, merged = merge_boxes([a, c, b], 10, 0)
    assert group.tolist() == [0, 0, 0]
    assert merged.tolist() == [[0, 0, 50, 10]]


def test_long_chain_in_reading_order():
    boxes = [(20 * i, 0, 20 * i + 15, 10) for i in range(6)]  # gaps of 5 px
    group, merged = merge_boxes(boxes, 5, 0)
    assert group.tolist() == [0] * 6 and merged.tolist() == [[0, 0, 115, 10]]
    group, _ = merge_boxes(boxes, 4, 0)
    assert group.tolist() == list(range(6))


def test_groups_that_grow_into_each_other():
    a, b, c = (0, 0, 10, 30), (20, 0, 30, 10), (12, 25, 40, 30)
    # one pass: C joins A, and the grown group A+C now covers B, which stays apart
    group, merged = merge_boxes([a, b, c], 2, 2, until_stable=False)
    assert group.tolist() == [0, 1, 0]
    assert merged.tolist() == [[0, 0, 40, 30], [20, 0, 30, 10]]
    group, merged = merge_boxes([a, b, c], 2, 2)
    assert group.tolist() == [0, 0, 0] and merged.tolist() == [[0, 0, 40, 30]]


def test_zero_dilation_merges_only_overlapping_or_touching():
    group, _ = merge_boxes([(0, 0, 10, 10), (10, 0, 20, 10), (21, 0, 30, 10)], 0, 0)
    assert group.tolist() == [0, 0, 1]


def test_shift_keeps_text_labels_links_and_pixels():
    doc = doc_with([(0, 0, 10, 10), (15, 0, 25, 10), (100, 50, 120, 60)], ["question", "answer", "other"])
    doc = doc.replace(entities=(Entity(0, "question", (0,), ((0, 1),)), Entity(1, "answer", (1,), ((0, 1),)),
                                Entity(2, "other", (2,))))
    out = MergeBoxes(lambda_x=5, lambda_y=0)(doc, seed=3)
    assert [w.text for w in out.words] == [w.text for w in doc.words]
    assert out.entities == doc.entities
    assert out.image is doc.image
    assert [w.box for w in out.words] == [(0, 0, 25, 10), (0, 0, 25, 10), (100, 50, 120, 60)]
    rec = out.provenance[-1]
    assert rec.shift == "merge" and rec.seed == 3 and rec.skipped is None
    assert rec.params == {"lambda_x": 5, "lambda_y": 0, "level": "word", "until_stable": True}


def test_entity_level_merges_entity_boxes():
    # entity 0 spans two words far apart: at entity level they are one unit with one box
    words = (Word("a", (0, 0, 10, 10)), Word("b", (60, 0, 70, 10)), Word("c", (75, 0, 85, 10)), Word("d", (150, 80, 160, 90)))
    ents = (Entity(0, "question", (0, 1)), Entity(1, "answer", (2,)))
    doc = Document("d", page(), words, ents)
    word_level = MergeBoxes(lambda_x=3, lambda_y=0, level="word")(doc, 0)
    assert [w.box for w in word_level.words] == [(0, 0, 10, 10), (60, 0, 70, 10), (75, 0, 85, 10), (150, 80, 160, 90)]
    ent_level = MergeBoxes(lambda_x=3, lambda_y=0, level="entity")(doc, 0)
    assert [w.box for w in ent_level.words] == [(0, 0, 70, 10)] * 2 + [(75, 0, 85, 10), (150, 80, 160, 90)]
    # with a wider dilation the entity's union box reaches the answer entity
    wider = MergeBoxes(lambda_x=5, lambda_y=0, level="entity")(doc, 0)
    assert [w.box for w in wider.words] == [(0, 0, 85, 10)] * 3 + [(150, 80, 160, 90)]


def test_document_without_words_is_skipped_and_counted():
    doc = Document("empty", page())
    out = MergeBoxes()(doc, 0)
    assert out.words == () and out.provenance[-1].skipped == "no words"


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError):
        MergeBoxes(lambda_x=-1)
    with pytest.raises(ValueError):
        MergeBoxes(level="line")
    from dogood.core.errors import RecipeError

    with pytest.raises(RecipeError, match="has no parameter lambda"):
        make_shift({"shift": "merge", "lambda": 3})


boxes_strategy = st.lists(
    st.tuples(st.integers(0, 190), st.integers(0, 90), st.integers(0, 30), st.integers(0, 15)).map(
        lambda t: (t[0], t[1], min(200, t[0] + t[2]), min(100, t[1] + t[3]))
    ),
    min_size=1,
    max_size=40,
)


@settings(max_examples=150, deadline=None)
@given(boxes=boxes_strategy, lx=st.integers(0, 20), ly=st.integers(0, 10), level=st.sampled_from(["word", "entity"]))
def test_properties_on_random_documents(boxes, lx, ly, level):
    doc = doc_with(boxes, ["question", "answer", "header", "other"] * 10)
    out = MergeBoxes(lambda_x=lx, lambda_y=ly, level=level)(doc, 0)
    assert len(out.words) == len(doc.words)
    assert [w.text for w in out.words] == [w.text for w in doc.words]
    assert out.entities == doc.entities
    new = out.boxes
    old = doc.boxes
    # every new box encloses its word's old box and lies inside the page
    assert (new[:, :2] <= old[:, :2]).all() and (new[:, 2:] >= old[:, 2:]).all()
    assert (new[:, 0] >= 0).all() and (new[:, 2] <= 200).all() and (new[:, 1] >= 0).all() and (new[:, 3] <= 100).all()
    # stable result: distinct merged boxes never touch once dilated
    distinct = np.unique(new, axis=0)
    for i in range(len(distinct)):
        for j in range(len(distinct)):
            if i != j:
                a, b = distinct[i], distinct[j]
                touching = a[0] - lx <= b[2] and b[0] <= a[2] + lx and a[1] - ly <= b[3] and b[1] <= a[3] + ly
                assert not touching
    # same result whatever the seed: merge draws nothing at random
    again = MergeBoxes(lambda_x=lx, lambda_y=ly, level=level)(doc, 12345)
    assert [w.box for w in again.words] == [w.box for w in out.words]


def test_on_real_funsd_pages(funsd_test):
    shift = MergeBoxes(lambda_x=10, lambda_y=5)
    total = changed = 0
    for doc_id in funsd_test.ids():
        doc = funsd_test.load(doc_id)
        out = shift(doc, 0)
        old, new = doc.boxes, out.boxes
        assert (new[:, :2] <= old[:, :2]).all() and (new[:, 2:] >= old[:, 2:]).all()
        assert (new[:, 2] <= doc.width).all() and (new[:, 3] <= doc.height).all()
        assert out.entities == doc.entities and [w.text for w in out.words] == [w.text for w in doc.words]
        # fewer distinct boxes than words: blocks, not words
        assert len(np.unique(new, axis=0)) < len(np.unique(old, axis=0))
        total += len(doc.words)
        changed += int((new != old).any(axis=1).sum())
    assert total == 8973
    assert changed > total // 2
