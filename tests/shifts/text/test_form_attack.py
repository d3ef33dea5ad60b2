"""Form-attack text shifts on real FUNSD pages and hand-made forms: what changes, what never does."""

from __future__ import annotations

import numpy as np
import pytest
from form_attack_checks import ALL, changed_words, random_forms
from hypothesis import given, settings
from hypothesis import strategies as st

from dogood.core.document import Document, PageImage, Word
from dogood.core.schema import iob_tags
from dogood.language.words import MAX_WORD_LENGTH
from dogood.page.render import print_kinds, reach
from dogood.shifts import (
    BackgroundAdversarial,
    BackgroundSynonym,
    BackgroundTypo,
    KeyDrop,
    SkipDocument,
    ValueTextAugment,
    make_shift,
)


def test_bad_words_are_left_alone_and_counted():
    words = [Word(t, (10 * i, 0, 10 * i + 8, 10)) for i, t in enumerate(["", "---", "日本語", "1,234.56", "x" * (MAX_WORD_LENGTH + 1), "ok"])]
    doc = Document("bad", PageImage.from_array(np.full((20, 100), 255, np.uint8)), tuple(words))
    out, counts, _ = BackgroundTypo(p=1.0).apply(doc, np.random.default_rng(0))
    assert changed_words(doc, out) == [5]
    assert counts == {"eligible": 5, "changed": 1, "unchangeable": 4}
    out, counts, _ = BackgroundSynonym(p=1.0).apply(doc, np.random.default_rng(0))
    assert changed_words(doc, out) == [5] and counts["unchangeable"] == 4  # "ok" -> "fine"...
    empty = Document("empty", doc.image)
    for shift in (BackgroundTypo(), BackgroundSynonym(), BackgroundAdversarial(), ValueTextAugment(), KeyDrop()):
        with pytest.raises(SkipDocument):
            shift.apply(empty, np.random.default_rng(0))
        assert shift(empty, 1).provenance[-1].skipped == "no words"


@pytest.mark.parametrize("cls", ALL)
def test_same_seed_same_output(cls, pages):
    doc = pages[1]
    shift = make_shift({"shift": cls.name, "p": 0.5})
    a, b, c = shift(doc, 7), shift(doc, 7), shift(doc, 8)
    assert a.words == b.words and a.entities == b.entities
    assert a.words != c.words
    assert a.provenance[-1].params["fraction"] == 0.5 and a.provenance[-1].counts["eligible"] > 0
    with pytest.raises(Exception, match="p must be in"):
        make_shift({"shift": cls.name, "p": 1.5})


@pytest.mark.parametrize("cls", [BackgroundTypo, ValueTextAugment])
def test_render_changes_pixels_inside_changed_boxes_only(cls, pages):
    doc = pages[0]
    out, _, _ = cls(p=0.5, render=True).apply(doc, np.random.default_rng(0))
    before, after = doc.image.to_array(), out.image.to_array()
    idx = changed_words(doc, out)
    assert idx
    mask = np.zeros(before.shape, dtype=bool)
    others = np.zeros(before.shape, dtype=bool)
    for i, word in enumerate(doc.words):
        x0, y0, x1, y1 = word.box
        others[y0:y1, x0:x1] = i not in idx
    for i in idx:  # strokes that a tight box cuts are erased (and drawn) up to reach beyond it
        x0, y0, x1, y1 = doc.words[i].box
        grow = reach((x0, y0, x1, y1))
        mask[max(0, y0 - grow):y1 + grow, max(0, x0 - grow):x1 + grow] = True
    for i in idx:
        x0, y0, x1, y1 = doc.words[i].box
        others[y0:y1, x0:x1] = False
    assert np.array_equal(before[~mask], after[~mask])
    assert np.array_equal(before[others], after[others])  # never another word's pixel
    assert not np.array_equal(before[mask], after[mask])
    plain, _, _ = cls(p=0.5).apply(doc, np.random.default_rng(0))
    assert plain.image is doc.image and [w.box for w in plain.words] == [w.box for w in out.words]
    # with render, only words whose print can be redrawn change (handwriting is left as written, and tallied)
    assert all(kind.reason is None for kind in print_kinds(doc, idx, doc).values())
    assert changed_words(doc, plain) != idx


@settings(max_examples=40, deadline=None)
@given(doc=random_forms(), seed=st.integers(0, 2**32 - 1), p=st.sampled_from([0.0, 0.5, 1.0]))
def test_text_shifts_keep_boxes_labels_and_never_crash(doc, seed, p):
    for cls in ALL:
        out = cls(p=p)(doc, seed)
        record = out.provenance[-1]
        if not doc.words:
            assert record.skipped == "no words" and out.words == doc.words
            continue
        assert record.skipped is None and record.counts["changed"] <= record.counts["eligible"]
        if cls is KeyDrop:
            assert len(out.words) == len(doc.words) - record.counts["dropped"]
            continue
        assert [w.box for w in out.words] == [w.box for w in doc.words]
        assert out.entities == doc.entities and iob_tags(out) == iob_tags(doc)
        assert len(changed_words(doc, out)) <= (record.counts["changed"] if cls is not ValueTextAugment else len(doc.words))
        if p == 0.0:
            assert out.words == doc.words
