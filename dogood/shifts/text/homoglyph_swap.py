"""Homoglyph word swap: one character of a word becomes a look-alike from another script."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from dogood.core.papers import Cites
from dogood.language.chars import pick
from dogood.language.lexicons import import_textattack
from dogood.shifts.text._word_swap import WordSwapShift

#: One look-alike per ASCII letter and digit, each a Unicode confusable of it (``confusables.txt``)
#: or one that NFKC folds back to it. Mostly Cyrillic, Greek and Armenian letters; mathematical
#: monospace and fullwidth forms where no letter looks alike. Never ASCII.
HOMOGLYPHS = {
    "a": "\u0430", "b": "\u042c", "c": "\u0441", "d": "\u0501", "e": "\u0435", "f": "\U0001d68f",
    "g": "\u0261", "h": "\u04bb", "i": "\u0456", "j": "\u0458", "k": "\U0001d694", "l": "\u217c",
    "m": "\uff4d", "n": "\u0578", "o": "\u043e", "p": "\u0440", "q": "\u051b", "r": "\u0433",
    "s": "\u0455", "t": "\U0001d69d", "u": "\u057d", "v": "\u0475", "w": "\u051d", "x": "\u0445",
    "y": "\u0443", "z": "\u1d22",
    "A": "\u0410", "B": "\u0412", "C": "\u0421", "D": "\u216e", "E": "\u0415", "F": "\u03dc",
    "G": "\u050c", "H": "\u041d", "I": "\u2160", "J": "\u0408", "K": "\u041a", "L": "\u216c",
    "M": "\u041c", "N": "\u039d", "O": "\u041e", "P": "\u0420", "Q": "\uff31", "R": "\u01a6",
    "S": "\u0405", "T": "\u0422", "U": "\u054d", "V": "\u0474", "W": "\u051c", "X": "\u0425",
    "Y": "\u04ae", "Z": "\u0396",
    "0": "\U0001d7f6", "1": "\U0001d7f7", "2": "\u01a7", "3": "\u0417", "4": "\u13ce",
    "5": "\u01bc", "6": "\u0431", "7": "\U0001d7fd", "8": "\u0222", "9": "\u09ed",
}


@lru_cache(maxsize=1)
def _transformation():
    """TextAttack's ``WordSwapHomoglyphSwap`` with dogood's table, all candidates per word.

    textattack 0.3.11 reads ``shared/intentional_homoglyphs.txt`` in its
    constructor, a file its wheel does not ship (that table only serves its
    differential-evolution search). The subclass skips that read and sets the
    character table itself; ``_get_replacement_words`` is TextAttack's.
    """
    import_textattack()
    from textattack.transformations import WordSwapHomoglyphSwap
    from textattack.transformations.word_swaps.word_swap import WordSwap

    class _HomoglyphSwap(WordSwapHomoglyphSwap):
        def __init__(self):
            WordSwap.__init__(self)
            self.homos = dict(HOMOGLYPHS)
            self.homos_intentional = {}
            self.random_one = False  # every position: dogood picks one with its own generator

    return _HomoglyphSwap()


@lru_cache(maxsize=1)
def _textattack_homoglyphs():
    """TextAttack's own ``WordSwapHomoglyphSwap()`` with its own table, as Do-GOOD's scripts built it (``style:
    repo``). textattack 0.3.11's constructor sets the table, then fails to read a file its wheel lacks (the
    intentional homoglyphs of its differential-evolution search, which a word swap never uses): that read's
    failure is ignored."""
    import_textattack()
    from textattack.transformations import CompositeTransformation, WordSwapHomoglyphSwap

    swap = WordSwapHomoglyphSwap.__new__(WordSwapHomoglyphSwap)
    try:
        WordSwapHomoglyphSwap.__init__(swap)
    except OSError:
        if not getattr(swap, "homos", None):
            raise
        swap.random_one = False
    return CompositeTransformation([swap])


class HomoglyphSwap(WordSwapShift):
    """Replace one character of a fraction of words by a look-alike (Do-GOOD 3.2, Word Swap 2; Table 4 "Homoglyph").

    TextAttack's ``WordSwapHomoglyphSwap`` (Morris et al. 2020; Boucher et al.
    2021) lists every way of replacing one character of the word by its
    homoglyph; one is drawn with the shift's generator. The look-alikes are
    non-ASCII (:data:`HOMOGLYPHS`: Cyrillic ``а`` for ``a``...), so the
    word reads the same while a tokenizer sees a different string. Keeps
    boxes, labels, entities and the word count; punctuation around a word is
    kept (``"Date:"`` -> ``"Dаte:"``). Words with no ASCII letter or digit,
    non-Latin words and words over 64 characters are left unchanged and counted
    as ``unchangeable``.

    Parameters: :class:`HomoglyphSwap.Params`.
    """

    name = "homoglyph_swap"
    requires = ("module:textattack[text]",)
    reported_counts = ("eligible", "changed", "unchangeable")
    papers = (Cites("do-good", "3.2, Word Swap 2; Table 4"), Cites("textattack"))
    cue_figures = {"word_style": ("funsd-t's config with render: true, FUNSD test, 50 pages "
                                  "(bench/measure_word_cue.py; the redraw before issue 40: 0.88)", {0: 0.58})}

    def repo_transformation(self, rng: np.random.Generator):
        return _textattack_homoglyphs()

    def repo_differences(self, schema: str) -> str:
        return ("TextAttack's own homoglyph table (lower-case letters, digits, '-' and \"'\"; upper-case letters "
                "stay) rather than dogood's; the words are the source's words (the LayoutLMv3 FUNSD script attacks "
                "each word's first BPE piece).")

    def swap(self, core: str, rng: np.random.Generator) -> str | None:
        return pick(_transformation()._get_replacement_words(core), rng)
