"""Helpers the TextAttack word-swap shifts' tests share (test_word_swap.py, test_homoglyph_swap.py,
test_embedding_swap.py, test_number_swap.py, test_char_deletion.py): the shift names, ``make`` and ``changed``.
Importing it skips the importing test module where TextAttack cannot be used (the ``text`` extra, offline, with
NLTK's stopwords). The ``docs`` and ``vectors`` fixtures are in tests/shifts/text/conftest.py."""

from __future__ import annotations

import pytest

pytest.importorskip("textattack", reason="TextAttack's word swaps need the `text` extra")

from dogood.core.errors import SourceError  # noqa: E402
from dogood.language.lexicons import import_textattack  # noqa: E402

try:
    import_textattack()  # quietly, offline; needs NLTK's stopwords (NLTK_DATA or $DOGOOD_DATA_DIR/nltk_data)
except SourceError as exc:
    pytest.skip(f"TextAttack cannot be used here: {exc}", allow_module_level=True)

from dogood.core.document import Document  # noqa: E402
from dogood.shifts import SHIFTS  # noqa: E402

VOCAB = 10_000

NAMES = ("embedding_swap", "homoglyph_swap", "number_swap", "char_deletion")


def make(name: str, **params):
    if name == "embedding_swap":
        params.setdefault("vocab_size", VOCAB)
    return SHIFTS[name](**params)


def changed(before: Document, after: Document) -> list[int]:
    return [i for i, (a, b) in enumerate(zip(before.words, after.words)) if a.text != b.text]
