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


def test_number_swap_fraction_is_capped_by_the_numbers_on_the_page(funsd_test):
    shift = NumberSwap(fraction=0.1)
    rich = np.zeros(2, dtype=int)
    for k, doc_id in enumerate(funsd_test.ids()):
        doc = funsd_test.load(doc_id)
        out = shift(doc, seed=k)
        counts = out.provenance[-1].counts
        target = round(0.1 * counts["eligible"])
        numbers = sum(bool(re.search(r"(?<![^\W_])\d+(?![^\W_])", w.text)) for w in doc.words)
        assert counts["changed"] <= target
        if numbers >= 2 * target:
            assert counts["changed"] == target
            rich += (counts["changed"], counts["eligible"])
    assert rich[1] > 1000 and abs(rich[0] / rich[1] - 0.1) <= 0.02


def test_number_swap_changes_numbers_only(funsd_test):
    from word2number import w2n

    seen = 0
    for k, doc_id in enumerate(funsd_test.ids()[:20]):
        doc = funsd_test.load(doc_id)
        out = NumberSwap(fraction=0.3)(doc, seed=k)
        for i in changed(doc, out):
            old, new = doc.words[i].text, out.words[i].text
            if re.search(r"\d", old):
                assert re.search(r"\d", new)
                # only one digit run changed; separators and letters stay
                assert re.sub(r"\d+", "#", old) == re.sub(r"\d+", "#", new)
                assert sum(a != b for a, b in zip(re.findall(r"\d+", old), re.findall(r"\d+", new))) == 1
                seen += 1
            else:
                assert w2n.word_to_num(split_word(old)[1].lower()) != w2n.word_to_num(split_word(new)[1].lower())
    assert seen > 100


def test_number_swap_word_cases():
    shift, rng = NumberSwap(), np.random.default_rng(0)
    assert shift.change_word("05", rng) in {f"{v:02d}" for v in range(1, 11)} - {"05"}
    assert shift.change_word("(212)", rng).startswith("(")
    for word in ("A221", "2", "0", "phone", "☐", "12345678901234567890123"):
        assert shift.change_word(word, rng) is None
    date = shift.change_word("12/05/98", rng)
    assert re.fullmatch(r"\d+/\d+/\d+", date) and date != "12/05/98"
    assert shift.change_word("Twenty", rng)[0].isupper()
    assert NumberSwap(number_words=False).change_word("twenty", rng) is None
