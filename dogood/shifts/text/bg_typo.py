"""BG Typo (form-attack paper): OCR-style typos in background words."""

from __future__ import annotations

import numpy as np

from dogood.core.papers import Cites
from dogood.language.chars import typo
from dogood.language.values import separated_number
from dogood.language.words import is_latin
from dogood.shifts.text._form_attack import BackgroundWordShift


class BackgroundTypo(BackgroundWordShift):
    """BG Typo: a share ``fraction`` of the background words get one OCR-style typo (Xue et al. 2021).

    Background on FUNSD: words of ``other`` and ``header`` entities and words
    in no entity; keys (``question``) and values (``answer``) are never
    touched. A typo (:func:`dogood.language.chars.typo`) swaps two adjacent
    characters (edit distance 2), or deletes, adds or replaces one (distance
    1, the replacement half the time an OCR confusion such as ``0``/``O``).
    Unchangeable (counted): punctuation-only words, non-Latin words, numbers
    with separators (a typo there could silently make another valid value),
    words over 64 characters. Keeps boxes, labels and links.

    Parameters: :class:`BackgroundTypo.Params`.
    """

    name = "bg_typo"
    reported_counts = ("eligible", "changed", "unchangeable")
    papers = (Cites("form-attacks", "form-level transformations, Background manipulation: BG Typo; "
                                    "parameters in Implementation Details"),)

    def change(self, word: str, rng: np.random.Generator) -> str | None:
        if not is_latin(word) or separated_number(word):
            return None
        out = typo(word, rng)
        return out[0] if out else None
