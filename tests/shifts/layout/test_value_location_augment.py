"""Form-attack OCR-level and layout shifts on real FUNSD pages and hand-made forms: what moves, what never does."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from ocr_level_checks import noise_page, run, swap_form

from dogood.core.document import Document, PageImage, Word
from dogood.shifts import SkipDocument, make_shift
from dogood.shifts.layout._relayout import key_value_pairs


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
