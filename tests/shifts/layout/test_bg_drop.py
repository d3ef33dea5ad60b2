"""Form-attack OCR-level and layout shifts on real FUNSD pages and hand-made forms: what moves, what never does."""

from __future__ import annotations

import numpy as np
import pytest
from ocr_level_checks import KEY_VALUE, kept_indices, labels_of, run, swap_form

from dogood.core.document import Entity
from dogood.core.schema import iob_tags
from dogood.language.selection import background_words
from dogood.page.render import reach


@pytest.mark.parametrize("p", [0.1, 0.13, 0.5])
def test_bg_drop_drops_exactly_p_of_the_background(p, pages):
    for seed, doc in enumerate(pages):
        out, counts = run("bg_drop", doc, seed, fraction=p)
        background = background_words(doc)
        kept = kept_indices(doc, out)
        dropped = sorted(set(range(len(doc.words))) - set(kept))
        assert len(dropped) == round(p * len(background)) == counts["changed"]
        assert counts["eligible"] == len(background) and set(dropped) <= set(background)
        before = labels_of(doc)
        assert not any(before[i] in KEY_VALUE for i in dropped)
        assert labels_of(out) == [before[i] for i in kept]  # every surviving word keeps its entity label
        old_tags = dict(zip(*iob_tags(doc)))
        for j, tag in zip(*iob_tags(out)):
            if before[kept[j]] in KEY_VALUE:
                assert tag == old_tags[kept[j]]  # key and value entities are whole: their tags do not change
            else:  # a header that lost its first word starts with B- at its next one
                assert tag[2:] == old_tags[kept[j]][2:]
        ids = {e.id for e in out.entities}
        assert all(a in ids and b in ids for e in out.entities for a, b in e.links)
        assert all(e.word_ids for e in out.entities)
        assert out.image is doc.image


def test_bg_drop_removes_emptied_entities_and_their_links():
    doc = swap_form()
    out, counts = run("bg_drop", doc, 0, fraction=1.0)
    assert counts == {"eligible": 2, "changed": 2}
    assert [w.text for w in out.words] == [w.text for w in doc.words if w.text not in ("FORM", "note")]
    assert 10 not in {e.id for e in out.entities}
    assert [e for e in out.entities if e.label != "header"] == [
        Entity(e.id, e.label, e.word_ids, e.links) for e in doc.entities if e.label != "header"]


@pytest.mark.parametrize("name", ["bg_drop", "neighbor_bg_drop"])
def test_render_inpaints_only_the_dropped_words(name, pages):
    doc = pages[0]
    out, counts = run(name, doc, 0, fraction=0.3, render=True) if name == "bg_drop" else run(name, doc, 0, render=True)
    plain, _ = run(name, doc, 0, fraction=0.3) if name == "bg_drop" else run(name, doc, 0)
    assert plain.words == out.words and plain.image is doc.image
    dropped = sorted(set(range(len(doc.words))) - set(kept_indices(doc, out)))
    assert dropped and len(dropped) == counts["changed"]
    before, after = doc.image.to_array(), out.image.to_array()
    mask = np.zeros(before.shape, dtype=bool)
    grown = np.zeros(before.shape, dtype=bool)
    for i in dropped:  # strokes that a tight box cuts are erased whole, up to reach beyond it
        x0, y0, x1, y1 = doc.words[i].box
        mask[y0:y1, x0:x1] = True
        grow = reach((x0, y0, x1, y1))
        grown[max(0, y0 - grow):y1 + grow, max(0, x0 - grow):x1 + grow] = True
    assert np.array_equal(before[~grown], after[~grown])
    others = np.zeros(before.shape, dtype=bool)
    for i in kept_indices(doc, out):
        x0, y0, x1, y1 = doc.words[i].box
        others[y0:y1, x0:x1] = True
    others &= ~mask
    assert np.array_equal(before[others], after[others])  # never a kept word's pixel
    assert (after[mask] < 100).sum() < (before[mask] < 100).sum() // 4  # the ink is gone
