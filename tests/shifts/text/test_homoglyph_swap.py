"""TextAttack word swaps (Do-GOOD 3.2, Table 4): embedding, homoglyph, number, character deletion.

Outcomes are checked on real FUNSD test pages: the changed share of eligible
words, what each swap does to a word, that boxes and labels stay, and that the
seed alone decides the output. The counter-fitted embedding is built once per
test session, on GloVe's 10,000 most frequent words, into the session's cache.
"""

from __future__ import annotations

import random

import re

import unicodedata

import numpy as np

import pytest

from hypothesis import given, settings

from hypothesis import strategies as st

from dogood.core.errors import SourceError  # noqa: E402

from dogood.language.lexicons import import_textattack  # noqa: E402

try:
    import_textattack()  # quietly, offline; needs NLTK's stopwords (NLTK_DATA or $DOGOOD_DATA_DIR/nltk_data)
except SourceError as exc:
    pytest.skip(f"TextAttack cannot be used here: {exc}", allow_module_level=True)

from dogood.core.document import Document, Entity, PageImage, Word  # noqa: E402

from dogood.language.embeddings import (  # noqa: E402
    ANTONYM_FILES,
    SYNONYM_FILES,
    counter_fitted_glove,
    glove_vectors,
    WordVectors,
    nearest_neighbours,
    read_pairs,
    save_word_vectors,
    similar_pairs,
)

from dogood.core.paths import cache_dir  # noqa: E402

from dogood.shifts import SHIFTS, make_shift  # noqa: E402

from dogood.language.words import split_word  # noqa: E402

from dogood.shifts.text.char_deletion import CharacterDeletion  # noqa: E402

from dogood.shifts.text.embedding_swap import EmbeddingSwap  # noqa: E402

from dogood.shifts.text.homoglyph_swap import HOMOGLYPHS, HomoglyphSwap  # noqa: E402

from dogood.shifts.text.number_swap import NumberSwap  # noqa: E402

from dogood.language.selection import word_labels  # noqa: E402

VOCAB = 10_000

NAMES = ("embedding_swap", "homoglyph_swap", "number_swap", "char_deletion")

def make(name: str, **params):
    if name == "embedding_swap":
        params.setdefault("vocab_size", VOCAB)
    return SHIFTS[name](**params)

@pytest.fixture(scope="session")
def docs(funsd_test):
    return [funsd_test.load(i) for i in funsd_test.ids()[:10]]

@pytest.fixture(scope="session")
def vectors(data_dir):
    return counter_fitted_glove(VOCAB)

def changed(before: Document, after: Document) -> list[int]:
    return [i for i, (a, b) in enumerate(zip(before.words, after.words)) if a.text != b.text]

def _maps_back(glyph: str, original: str) -> bool:
    """True when NFKC folds ``glyph`` to ``original`` or Unicode lists them as confusable."""
    if unicodedata.normalize("NFKC", glyph) == original:
        return True
    confusables = pytest.importorskip("confusable_homoglyphs.confusables")
    found = confusables.is_confusable(glyph, greedy=True, preferred_aliases=[])
    return bool(found) and original in {h["c"] for h in found[0]["homoglyphs"]}

def _awkward_doc() -> Document:
    texts = ["", "   ", "日本語", "Привет", "☐", "x" * 100, "1,234.56", "12/05/98", "a", ":", "Date:",
             "house", "(212)", "café", "Ünïcode", "TELEPHONE", "co-operate", "42"]
    words = tuple(Word(t, (10 * i, 0, 10 * i + 8, 10)) for i, t in enumerate(texts))
    entities = (Entity(0, "question", tuple(range(0, 9))), Entity(1, "answer", tuple(range(9, len(texts)))))
    return Document("awkward", PageImage.from_array(np.full((20, 400), 255, np.uint8)), words, entities)


def test_homoglyph_table_is_non_ascii_look_alikes():
    assert set(HOMOGLYPHS) == set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
    for plain, glyph in HOMOGLYPHS.items():
        assert len(glyph) == 1 and not glyph.isascii() and _maps_back(glyph, plain), (plain, glyph)


def test_homoglyph_swap_writes_look_alikes(docs):
    for k, doc in enumerate(docs):
        out = HomoglyphSwap(fraction=0.2)(doc, seed=k)
        for i in changed(doc, out):
            old, new = doc.words[i].text, out.words[i].text
            assert old.isascii() and not new.isascii() and len(new) == len(old)
            diff = [(a, b) for a, b in zip(old, new) if a != b]
            assert len(diff) == 1 and _maps_back(diff[0][1], diff[0][0])
