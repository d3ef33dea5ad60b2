"""What the TextAttack word-swap shifts' tests share (test_word_swap.py, test_homoglyph_swap.py, test_embedding_swap.py, test_number_swap.py, test_char_deletion.py): imports, data and fixtures."""

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

#: Everything above, private helpers too, for the test files that import it with *.
__all__ = [name for name in dir() if not name.startswith("__")]
