"""What the Moradi & Samwald perturbation shifts' tests share (test_word_perturbation.py, test_char_perturbation.py, test_samples.py): imports, data and fixtures."""

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

#: Everything above, private helpers too, for the test files that import it with *.
__all__ = [name for name in dir() if not name.startswith("__")]
