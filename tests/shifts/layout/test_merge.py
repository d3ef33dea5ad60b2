"""Merge by dilation (Do-GOOD Algorithm 1): hand-made cases and real FUNSD pages."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dogood.core.document import Document, Entity, PageImage, Word
from dogood.shifts import MergeBoxes, make_shift
from dogood.shifts.layout.merge import merge_boxes, merge_boxes_repo


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


# -- rule: repo (Do-GOOD's code) -----------------------------------------------------------------------------
def repo_merge_loop(boxes, dx, dy, width, height):
    """Do-GOOD's merge loop (MAEHCM/Do-GOOD ``merge_layout.py``; ``aug_layout`` of test/dic/demo_cdip_v1.py),
    transcribed from a reading of it for this test, not from dogood's code: a flag array ``flag[x][y]`` starts
    unmarked; the first box starts group 0; each later box looks at ``flag`` at its corners (x0, y0), (x0, y1),
    (x1, y0), (x1, y1) in that order, starts a new group when none is marked, else joins the first marked one's
    group; then every box writes its group over the slice ``flag[x0 - dx : x1 + dx, y0 - dy : y1 + dy]``. The
    array is padded on every side (the repo's has the page's size, so a slice near the left or top edge starts
    negative and marks nothing, and a corner on the right or bottom edge raises IndexError). Returns the group of
    each box, numbered in order of creation (the repo's ``temp_box`` lists)."""
    unmarked = -1
    pad_x, pad_y = dx + 1, dy + 1
    flag = np.full((width + 2 * pad_x + 1, height + 2 * pad_y + 1), unmarked, dtype=np.int64)
    group = []
    idx = 0
    for i, box in enumerate(boxes):
        x1, y1, x2, y2 = (int(v) for v in box)
        x1, y1, x2, y2 = x1 + pad_x, y1 + pad_y, x2 + pad_x, y2 + pad_y
        if i == 0:
            g = idx
        else:
            corners = [flag[x1][y1], flag[x1][y2], flag[x2][y1], flag[x2][y2]]
            marked = [c for c in corners if c != unmarked]
            if marked:
                g = int(marked[0])
            else:
                idx += 1
                g = idx
        group.append(g)
        flag[x1 - dx : x2 + dx, y1 - dy : y2 + dy] = g
    return group


def _entity_unit_boxes(doc):
    """The repo's FUNSD units: each entity's non-blank words' union (its segment box), entities without one left
    out, in document order."""
    out = []
    for ent in doc.entities:
        ids = [i for i in ent.word_ids if doc.words[i].text.strip()]
        if ids:
            b = doc.boxes[ids]
            out.append([b[:, 0].min(), b[:, 1].min(), b[:, 2].max(), b[:, 3].max()])
    return np.array(out, dtype=np.int64)


@pytest.mark.parametrize("lam", [(0, 0), (10, 5), (70, 30)])
def test_rule_repo_groups_equal_the_repos_loop_on_every_funsd_test_page(funsd_test, lam):
    pages = 0
    for doc_id in funsd_test.ids():
        doc = funsd_test.load(doc_id)
        units = _entity_unit_boxes(doc)
        group, merged = merge_boxes_repo(units, *lam)
        assert group.tolist() == repo_merge_loop(units, lam[0], lam[1], doc.width, doc.height), doc_id
        for g in range(len(merged)):  # each group's box is the union of its own members
            members = units[group == g]
            assert merged[g].tolist() == [*members[:, :2].min(0), *members[:, 2:].max(0)]
        pages += 1
    assert pages == 50


def test_rule_repo_on_funsd_test_changes_an_eighth_of_the_token_boxes_at_lambda_0(funsd_test):
    from dogood.core.schema import token_boxes, token_index

    shift = MergeBoxes(lambda_x=0, lambda_y=0, level="entity", rule="repo")
    tokens = changed = 0
    for doc_id in funsd_test.ids():
        doc = funsd_test.load(doc_id)
        out = shift(doc, 0)
        index = token_index(doc)
        before, after = token_boxes(doc, "segment", index), token_boxes(out, "segment", index)
        tokens += len(index)
        changed += sum(a != b for a, b in zip(before, after))
        # every new segment box encloses the old one: groups only grow
        assert all(b[0] <= a[0] and b[1] <= a[1] and b[2] >= a[2] and b[3] >= a[3] for a, b in zip(before, after))
    assert tokens == 8707
    assert changed == 1077  # 12.4%; dogood's rule (closed boxes, merged until stable): 1,766 (20.3%)


def test_rule_repo_corner_inside_half_open_region():
    # the second box's top-left corner lies on the first box's right edge: outside [0, 10) at lambda 0
    assert merge_boxes_repo([(0, 0, 10, 10), (10, 0, 20, 10)], 0, 0)[0].tolist() == [0, 1]
    # one pixel further in, it is inside and joins
    assert merge_boxes_repo([(0, 0, 10, 10), (9, 0, 20, 10)], 0, 0)[0].tolist() == [0, 0]
    # dilated by 1 the region is [-1, 11): x = 10 is in
    assert merge_boxes_repo([(0, 0, 10, 10), (10, 0, 20, 10)], 1, 0)[0].tolist() == [0, 0]
    # dogood's closed boxes merge the touching pair at lambda 0
    assert merge_boxes([(0, 0, 10, 10), (10, 0, 20, 10)], 0, 0)[0].tolist() == [0, 0]


def test_rule_repo_one_pass_first_corner_and_last_mark_win():
    # A and B stay apart; C's top-left corner is in A's region, its top-right in B's: it joins A, B stays apart
    a, b, c = (0, 0, 10, 10), (30, 0, 40, 10), (5, 5, 35, 15)
    group, merged = merge_boxes_repo([a, b, c], 0, 0)
    assert group.tolist() == [0, 1, 0]
    assert merged.tolist() == [[0, 0, 35, 15], [30, 0, 40, 10]]
    # where regions overlap, the box marked last owns the place: E joins B (its corner (110, 0)) and marks over part
    # of A's region; D's first corner lies in both A's and E's regions and joins E's group
    a, b, e, d = (10, 10, 30, 30), (100, 0, 120, 30), (0, 0, 110, 15), (12, 11, 14, 13)
    assert merge_boxes_repo([a, b, e, d], 0, 0)[0].tolist() == [0, 1, 1, 1]
    assert merge_boxes_repo([a, b, d], 0, 0)[0].tolist() == [0, 1, 0]


def test_rule_repo_marks_regions_at_the_left_edge_and_takes_boxes_at_the_right_edge():
    # the repo's slice flag[-5:...] marks nothing: the second box would start a group of its own there
    doc = doc_with([(0, 40, 20, 50), (22, 40, 60, 50), (150, 40, 200, 50)], size=(200, 100))
    out = MergeBoxes(lambda_x=5, lambda_y=2, level="word", rule="repo")(doc, 0)
    assert [w.box for w in out.words] == [(0, 40, 60, 50), (0, 40, 60, 50), (150, 40, 200, 50)]


def test_rule_repo_in_0_1000_units():
    # a 2000 px wide page: 70 units are 140 px
    boxes = [(100, 100, 300, 130), (430, 100, 600, 130), (800, 100, 900, 130)]
    doc = doc_with(boxes, size=(2000, 1000))
    near = MergeBoxes(lambda_x=70, lambda_y=30, level="word", rule="repo", units="normalized")(doc, 0)
    assert [w.box for w in near.words] == [(100, 100, 600, 130)] * 2 + [(800, 100, 900, 130)]
    pixels = MergeBoxes(lambda_x=70, lambda_y=30, level="word", rule="repo")(doc, 0)
    assert [w.box for w in pixels.words] == boxes


def test_entity_units_leave_blank_words_out():
    # entity 0: a word and a blank word far below it; entity 1 loose nearby. At lambda 0 nothing touches, so the
    # token keeps its segment box (the blank word's box used to widen the unit, so the token's box changed)
    words = (Word("Date", (10, 10, 50, 20)), Word(" ", (10, 80, 60, 90)), Word("Name", (100, 10, 150, 20)))
    doc = Document("d", page(), words, (Entity(0, "question", (0, 1)), Entity(1, "answer", (2,))))
    for rule in ("dogood", "repo"):
        out = MergeBoxes(lambda_x=0, lambda_y=0, level="entity", rule=rule)(doc, 0)
        assert out.words[0].box == (10, 10, 50, 20) and out.words[2].box == (100, 10, 150, 20)


def test_blank_only_entities_bridge_nothing():
    words = (Word("A", (10, 10, 40, 20)), Word(" ", (40, 10, 100, 20)), Word("B", (100, 10, 130, 20)))
    doc = Document("d", page(), words, (Entity(0, "question", (0,)), Entity(1, "other", (1,)),
                                        Entity(2, "answer", (2,))))
    out = MergeBoxes(lambda_x=0, lambda_y=0, level="entity")(doc, 0)
    assert out.words[0].box == (10, 10, 40, 20) and out.words[2].box == (100, 10, 130, 20)


def test_rule_and_units_keep_old_configs_seeds():
    old = MergeBoxes(lambda_x=10, lambda_y=5, level="entity")
    assert "rule" not in old.recorded_params() and "units" not in old.recorded_params()
    assert MergeBoxes(lambda_x=10, lambda_y=5, level="entity", rule="repo").recorded_params()["rule"] == "repo"
