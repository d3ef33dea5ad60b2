"""Fixtures the text shifts' tests share: FUNSD forms, WordNet, counter-fitted GloVe vectors.

Helpers these tests call directly are in modules beside this file, named for what they hold:
``form_attack_checks`` (FormAttack's shifts), ``perturbation_checks`` (Moradi & Samwald's perturbations),
``word_swap_checks`` (TextAttack's word swaps; importing it skips a module where TextAttack cannot be used), and
``tests/paper_style_checks.py`` (``style: paper``).
"""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="module")
def funsd_docs(funsd_test):
    """The first 10 FUNSD test forms."""
    return [funsd_test.load(i) for i in funsd_test.ids()[:10]]


@pytest.fixture(scope="session")
def docs(funsd_test):
    """The first 10 FUNSD test forms, loaded once per session (the word swaps' tests)."""
    return [funsd_test.load(i) for i in funsd_test.ids()[:10]]


@pytest.fixture(scope="session")
def vectors(data_dir):
    """Counter-fitted GloVe, the first ``word_swap_checks.VOCAB`` words."""
    from word_swap_checks import VOCAB

    from dogood.language.embeddings import counter_fitted_glove

    return counter_fitted_glove(VOCAB)


@pytest.fixture(scope="module")
def wordnet():
    """NLTK's WordNet (``NLTK_DATA`` or ``$DOGOOD_DATA_DIR/nltk_data``), with lemminflect and NLTK's stopwords;
    skipped when missing, except on CI."""
    from dogood.core.errors import SourceError
    from dogood.language.lexicons import require, wordnet

    try:
        require("synonym", "lemminflect", "wordnet", "stopwords")
    except SourceError as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(str(exc))
    return wordnet()
