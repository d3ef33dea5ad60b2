"""Moradi & Samwald (2021) character- and word-level perturbations: hand-made cases and real FUNSD pages."""

from __future__ import annotations

import os

import numpy as np

import pytest

from hypothesis import given, settings

from hypothesis import strategies as st

from dogood.core.document import Document, Entity, PageImage, Word

from dogood.core.errors import RecipeError

from dogood.core.schema import iob_tags

from dogood.shifts import make_shift

from dogood.shifts.text.char_perturbation import CharPerturbation

from dogood.shifts.text.word_perturbation import WORD_KINDS, WordPerturbation

from dogood.language.chars import CHAR_KINDS, KEYBOARD_NEIGHBOURS, MISSPELLINGS

from dogood.language.edits import Edits, apply_edits

from dogood.language.lexicons import first_sense_synonyms as synonyms

from dogood.language.selection import text_samples

from dogood.language.words import MAX_WORD_LENGTH, core_problem, split_word

def page(w=400, h=100):
    return PageImage.from_array(np.full((h, w), 255, np.uint8))

def form(*entities, size=(400, 100)):
    """A document from ``(label, "text of words")`` pairs, one line each, linked question -> answer."""
    words, ents = [], []
    for k, (label, text) in enumerate(entities):
        ids = []
        x = 5
        for t in text.split(" "):
            width = 6 * max(len(t), 1)
            words.append(Word(t, (x, 10 + 12 * k, x + width, 20 + 12 * k)))
            ids.append(len(words) - 1)
            x += width + 4
        ents.append(Entity(k, label, tuple(ids)))
    links = tuple((a.id, b.id) for a, b in zip(ents, ents[1:]) if a.label == "question" and b.label == "answer")
    ents = [Entity(e.id, e.label, e.word_ids, tuple(l for l in links if e.id in l)) for e in ents]
    return Document("hand", page(*size), tuple(words), tuple(ents))

def texts(doc):
    return [w.text for w in doc.words]

def assert_iob_consistent(doc):
    """Every labelled entity's tokens are tagged B-LABEL then I-LABEL."""
    index, tags = iob_tags(doc)
    tag_of = dict(zip(index, tags))
    for ent in doc.entities:
        toks = [tag_of[i] for i in ent.word_ids if i in tag_of]
        if ent.label == "other":
            assert set(toks) <= {"O"}
        elif toks:
            lab = ent.label.upper()
            assert toks == [f"B-{lab}"] + [f"I-{lab}"] * (len(toks) - 1)

def changed_pairs(before, after):
    """(old text, new text) of words whose text changed (same word count)."""
    assert len(before.words) == len(after.words)
    return [(a.text, b.text) for a, b in zip(before.words, after.words) if a.text != b.text]

@pytest.fixture(scope="module")
def wordnet():
    """NLTK's WordNet (``NLTK_DATA`` or ``$DOGOOD_DATA_DIR/nltk_data``); skipped when missing, except on CI."""
    from dogood.core.errors import SourceError
    from dogood.language.lexicons import require, wordnet

    try:
        require("synonym", "lemminflect", "wordnet", "stopwords")
    except SourceError as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(str(exc))
    return wordnet()

@pytest.fixture(scope="module")
def funsd_docs(funsd_test):
    return [funsd_test.load(i) for i in funsd_test.ids()[:10]]

def _obeys(kind, old, new):
    """Whether ``new`` is one ``kind`` perturbation of the core ``old``."""
    n = len(old)
    if kind == "deletion":
        return any(new == old[:p] + old[p + 1:] for p in range(1, n - 1))
    if kind == "insertion":
        return len(new) == n + 1 and new[0] == old[0] and new[-1] == old[-1] and any(
            new[:p] + new[p + 1:] == old for p in range(1, n))
    if kind == "repetition":
        return any(new == old[: p + 1] + old[p] + old[p + 1:] for p in range(1, n - 1))
    if kind == "swap":
        diff = [j for j in range(n) if len(new) == n and new[j] != old[j]]
        return len(new) == n and len(diff) == 2 and diff[1] == diff[0] + 1 and (
            new[diff[0]], new[diff[1]]) == (old[diff[1]], old[diff[0]])
    if kind == "replacement":
        diff = [j for j in range(n) if len(new) == n and new[j] != old[j]]
        return len(new) == n and len(diff) == 1 and (
            new[diff[0]].lower() in KEYBOARD_NEIGHBOURS[old[diff[0]].lower()]
            and new[diff[0]].isupper() == old[diff[0]].isupper())
    if kind == "letter_case":
        return new != old and new.lower() == old.lower() and new in (old.swapcase(), old[0].swapcase() + old[1:])
    if kind == "misspelling":
        return new.lower() in MISSPELLINGS[old.lower()]
    raise AssertionError(kind)

_WORDS = st.sampled_from(["is", "not", "n't", "Isn't", "requires", "wrote", "large", "Name:", "(see", "", " ",
                          "12", "Ω", "COMMITTEE", "a"]) | st.text(max_size=12)

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
