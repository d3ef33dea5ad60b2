"""Form-attack text shifts on real FUNSD pages and hand-made forms: what changes, what never does."""

from __future__ import annotations

import numpy as np
from form_attack_checks import form, labels_of

from dogood.core.schema import iob_tags
from dogood.shifts import KeyDrop


def test_key_drop_removes_question_words_and_their_links(pages):
    for k, doc in enumerate(pages[:5]):
        out, counts, _ = KeyDrop().apply(doc, np.random.default_rng(k))
        kept = [w for w, lab in zip(doc.words, labels_of(doc)) if lab != "question"]
        assert list(out.words) == kept
        assert all(e.label != "question" for e in out.entities)
        ids = {e.id for e in out.entities}
        assert all(a in ids and b in ids for e in out.entities for a, b in e.links)
        assert [e.id for e in out.entities] == [e.id for e in doc.entities if e.label != "question"]
        assert counts["dropped"] == len(doc.words) - len(out.words)
        before = [t for t, lab in zip(iob_tags(doc)[1], (labels_of(doc)[i] for i in iob_tags(doc)[0])) if lab != "question"]
        assert iob_tags(out)[1] == before


def test_key_drop_with_probability():
    doc = form()
    outs = [KeyDrop(p=0.5).apply(doc, np.random.default_rng(s)) for s in range(20)]
    assert {c["changed"] for _, c, _ in outs} == {0, 1, 2}
    for out, c, _ in outs:
        assert len(out.words) == len(doc.words) - c["dropped"] and c["eligible"] == 2


def test_key_drop_render_erases_the_keys(pages):
    doc = pages[0]
    out, counts, _ = KeyDrop(render=True).apply(doc, np.random.default_rng(0))
    before, after = doc.image.to_array(), out.image.to_array()
    for w, lab in zip(doc.words, labels_of(doc)):
        if lab == "question" and w.text.strip():
            x0, y0, x1, y1 = w.box
            assert (after[y0:y1, x0:x1] < 100).sum() < max(3, (before[y0:y1, x0:x1] < 100).sum() // 4)
    assert counts["dropped"] > 0
