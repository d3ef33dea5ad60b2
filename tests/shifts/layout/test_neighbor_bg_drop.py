"""Form-attack OCR-level and layout shifts on real FUNSD pages and hand-made forms: what moves, what never does."""

from __future__ import annotations

from ocr_level_checks import KEY_VALUE, kept_indices, labels_of, run

from dogood.language.selection import background_words, value_neighbours


def test_neighbor_bg_drop_drops_the_background_neighbours_only(pages):
    total = 0
    for doc in pages:
        out, counts = run("neighbor_bg_drop", doc)
        dropped = set(range(len(doc.words))) - set(kept_indices(doc, out))
        near = value_neighbours(doc, ("answer",), 0.02, 2)
        assert dropped == near & set(background_words(doc))
        assert counts["changed"] == len(dropped) and counts["neighbours"] == len(near)
        assert not any(labels_of(doc)[i] in KEY_VALUE for i in dropped)
        total += len(dropped)
    assert total > 50
