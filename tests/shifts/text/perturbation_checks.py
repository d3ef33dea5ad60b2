"""Helpers the Moradi & Samwald perturbation shifts' tests share (test_word_perturbation.py,
test_char_perturbation.py, test_samples.py): hand-made one-line forms and checks of their tags and changed words.
The ``wordnet`` and ``funsd_docs`` fixtures are in tests/shifts/text/conftest.py."""

from __future__ import annotations

import numpy as np

from dogood.core.document import Document, Entity, PageImage, Word
from dogood.core.schema import iob_tags


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
