"""Moradi & Samwald (2021) character- and word-level perturbations: hand-made cases and real FUNSD pages."""

from __future__ import annotations

from perturbation_checks import assert_iob_consistent, changed_pairs, form, texts

from dogood.core.schema import iob_tags
from dogood.language.lexicons import first_sense_synonyms as synonyms
from dogood.language.words import split_word
from dogood.shifts.text.word_perturbation import WordPerturbation


def _originals(doc, out):
    """Indices in ``out`` of the original words (repetition keeps them in order; copies have new boxes)."""
    keep, j = set(), 0
    for i, w in enumerate(out.words):
        if j < len(doc.words) and w == doc.words[j]:
            keep.add(i)
            j += 1
    assert j == len(doc.words)
    return keep


def test_word_deletion_keeps_entities_tags_and_links(funsd_docs):
    shift = WordPerturbation(kind="deletion", per_sample=2, fraction=1.0)
    for doc in funsd_docs[:5]:
        out = shift(doc, 2)
        counts = out.provenance[-1].counts
        assert len(out.words) == len(doc.words) - counts["deleted"] and counts["deleted"] > 0
        assert [(e.id, e.label, e.links) for e in out.entities] == [(e.id, e.label, e.links) for e in doc.entities]
        for before, after in zip(doc.entities, out.entities):
            assert 0 <= len(before.word_ids) - len(after.word_ids) <= 2 and (after.word_ids or not before.word_ids)
            old = [doc.words[i].text for i in before.word_ids]
            new = [out.words[i].text for i in after.word_ids]
            it = iter(old)
            assert all(t in it for t in new)  # what is left is the entity's words, in order
        assert_iob_consistent(out)
        assert len(iob_tags(out)[0]) == len(iob_tags(doc)[0]) - counts["deleted"]


def test_word_repetition_by_hand_gets_i_tag_and_a_box_beside_its_twin():
    doc = form(("question", "Name:"), ("answer", "John"))
    out = WordPerturbation(kind="repetition", fraction=1.0)(doc, 0)
    assert texts(out) == ["Name:", "Name:", "John", "John"]
    assert iob_tags(out)[1] == ["B-QUESTION", "I-QUESTION", "B-ANSWER", "I-ANSWER"]
    assert out.words[1].box == (5 + 30 + 2, 10, 5 + 30 + 2 + 30, 20)
    assert out.entities[0].links == out.entities[1].links == ((0, 1),)


def test_word_repetition_on_funsd(funsd_docs):
    shift = WordPerturbation(kind="repetition", per_sample=2, fraction=1.0)
    for doc in funsd_docs[:5]:
        out = shift(doc, 4)
        counts = out.provenance[-1].counts
        assert len(out.words) == len(doc.words) + counts["added"] and counts["added"] > 0
        owner = out.word_entity()
        copies = [i for i in range(len(out.words)) if i not in _originals(doc, out)]
        assert len(copies) == counts["added"]
        for i in copies:  # each copy follows its twin, in its entity, on its line, just beside it
            twin, copy = out.words[i - 1], out.words[i]
            assert copy.text == twin.text and owner[i] is owner[i - 1] is not None
            (tx0, ty0, tx1, ty1), (cx0, cy0, cx1, cy1) = twin.box, copy.box
            assert (cy0, cy1) == (ty0, ty1) and cx1 - cx0 == tx1 - tx0
            assert cx0 == tx1 + 2 or cx1 == tx0 - 2
        assert all(0 <= b[0] <= b[2] <= out.width and 0 <= b[1] <= b[3] <= out.height for b in out.boxes.tolist())
        assert [(e.id, e.label, e.links) for e in out.entities] == [(e.id, e.label, e.links) for e in doc.entities]
        assert_iob_consistent(out)


def test_synonyms_come_from_wordnet(funsd_docs, wordnet):
    wn = wordnet
    shift = WordPerturbation(kind="synonym", per_sample=2, fraction=1.0)
    seen = 0
    for doc in funsd_docs[:4]:
        out = shift(doc, 9)
        for old, new in changed_pairs(doc, out):
            (p0, c0, s0), (p1, c1, s1) = split_word(old), split_word(new)
            assert (p0, s0) == (p1, s1)
            assert set(wn.synsets(c0.lower())) & set(wn.synsets(c1.lower())), (old, new)
            assert c1 == c1.upper() if (c0.isupper() and len(c0) > 1) else c1[1:] == c1[1:].lower()
            seen += 1
    assert seen > 20
    assert "big" in synonyms("large") and synonyms("the") == () and synonyms("12") == ()


def test_negation_adds_and_removes_not():
    doc = form(("question", "This is required"), ("answer", "Do not write"), ("other", "ISN'T it"))
    out = WordPerturbation(kind="negation", fraction=1.0)(doc, 0)
    assert texts(out) == ["This", "is", "not", "required", "Do", "write", "IS", "it"]
    is_box, not_box = out.words[1].box, out.words[2].box
    assert not_box[0] == is_box[2] + 2 and not_box[2] - not_box[0] == round(12 * 3 / 2)
    assert out.entities[0].word_ids == (0, 1, 2, 3)
    assert out.provenance[-1].counts["added"] == 1 and out.provenance[-1].counts["deleted"] == 1
    assert_iob_consistent(out)


def test_verb_number_and_tense_by_hand(wordnet):
    doc = form(("question", "It requires"), ("answer", "They are"), ("other", "She wrote"), ("header", "Forms"))
    spv = WordPerturbation(kind="singular_plural_verb", fraction=1.0)(doc, 0)
    assert texts(spv) == ["It", "require", "They", "is", "She", "wrote", "Forms"]
    tense = WordPerturbation(kind="verb_tense", fraction=1.0)(doc, 0)
    assert texts(tense) == ["It", "required", "They", "were", "She", "writes", "Forms"]
    assert tense.provenance[-1].counts["unchangeable"] == 1  # "Forms" is a noun too: left alone


def test_word_order_moves_texts_over_the_same_boxes(funsd_docs):
    shift = WordPerturbation(kind="word_order", span=3, fraction=1.0)
    for doc in funsd_docs[:5]:
        out = shift(doc, 8)
        assert [w.box for w in out.words] == [w.box for w in doc.words] and out.entities == doc.entities
        for ent in doc.entities:
            tokens = [i for i in ent.word_ids if doc.words[i].text.strip()]
            old = [doc.words[i].text for i in tokens]
            new = [out.words[i].text for i in tokens]
            assert sorted(old) == sorted(new)
            moved = [j for j, (a, b) in enumerate(zip(old, new)) if a != b]
            assert not moved or moved[-1] - moved[0] < 3  # one window of 3 consecutive token words
        assert out.provenance[-1].counts["changed"] == sum(a != b for a, b in zip(texts(doc), texts(out)))
