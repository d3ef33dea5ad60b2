"""Form-attack OCR-level and layout shifts on real FUNSD pages and hand-made forms: what moves, what never does."""

from __future__ import annotations

from ocr_level_checks import noise_page, pairs_of, run

from dogood.core.document import Document, Entity, Word


def test_neighbour_shuffle_leaves_a_page_without_values_alone():
    doc = Document("novalues", noise_page(), (Word("a", (0, 0, 5, 5)), Word("b", (10, 0, 15, 5))),
                   (Entity(0, "question", (0,)),))
    out, counts = run("neighbor_shuffle", doc)
    assert out is doc and counts == {"eligible": 0, "changed": 0, "neighbours": 0}
    out, counts = run("non_neighbor_shuffle", doc, 3)
    assert counts["eligible"] == 2 and pairs_of(out) == pairs_of(doc)
