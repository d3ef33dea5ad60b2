"""BG Synonyms (form-attack paper): background words become WordNet synonyms."""

from __future__ import annotations

import re

import numpy as np

from dogood.core.papers import Cites
from dogood.language.lexicons import all_sense_synonyms, require
from dogood.language.words import case_like, is_latin
from dogood.shifts.text._form_attack import BackgroundWordShift

#: A word of letters (inner ``-`` or ``'`` allowed) between punctuation: ``"(Date:"``.
_LETTER_WORD = re.compile(r"^(\W*)([^\W\d_]+(?:[-'][^\W\d_]+)*)(\W*)$")


def synonym_of(word: str, rng: np.random.Generator) -> str | None:
    """``word`` with its letters replaced by a random WordNet synonym in the same case, its punctuation kept."""
    m = _LETTER_WORD.match(word)
    if not m or not is_latin(word):
        return None
    options = all_sense_synonyms(m.group(2))
    if not options:
        return None
    pick = options[int(rng.integers(len(options)))]
    return m.group(1) + case_like(pick, m.group(2)) + m.group(3)


class BackgroundSynonym(BackgroundWordShift):
    """BG Synonyms: a share ``fraction`` of the background words become a WordNet synonym (Xue et al. 2021).

    Background on FUNSD: words of ``other`` and ``header`` entities and words
    in no entity; ``question`` (key) and ``answer`` (value) words are never
    touched. The synonym is drawn uniformly from the single-word lemmas of
    all the word's WordNet senses
    (:func:`dogood.language.lexicons.all_sense_synonyms`), in the word's case
    (``DATE`` -> ``ESCORT``), with its surrounding punctuation kept; word
    sense and grammatical number are not matched, as in the TextAttack and
    nlpaug WordNet augmenters. Unchangeable (counted): words with no synonym
    (numbers, names, stopwords, punctuation), non-Latin words, words over 64
    characters. Needs NLTK's ``wordnet`` and ``stopwords`` corpora
    (``$NLTK_DATA`` or ``$DOGOOD_DATA_DIR/nltk_data``).

    Parameters: :class:`BackgroundSynonym.Params`.
    """

    name = "bg_synonym"
    requires = ("nltk:wordnet", "nltk:stopwords")
    reported_counts = ("eligible", "changed", "unchangeable")
    papers = (Cites("form-attacks", "form-level transformations, Background manipulation: BG Synonyms; "
                                    "parameters in Implementation Details"),)

    def prepare(self) -> None:
        require(self.name, "wordnet", "stopwords")

    def change(self, word: str, rng: np.random.Generator) -> str | None:
        return synonym_of(word, rng)
