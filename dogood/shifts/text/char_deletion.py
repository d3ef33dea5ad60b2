"""Random character deletion: one character of a word goes ("houses" -> "hoses")."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from pydantic import Field

from dogood.core.papers import Cites
from dogood.language.chars import deletions, pick
from dogood.shifts import params
from dogood.shifts.text._word_swap import WordSwapShift


@lru_cache(maxsize=4)
def _textattack_deletion(skip_first: bool, skip_last: bool):
    """TextAttack's ``WordSwapRandomCharacterDeletion``, every position offered (``style: repo`` draws one)."""
    from textattack.transformations import CompositeTransformation, WordSwapRandomCharacterDeletion

    return CompositeTransformation([WordSwapRandomCharacterDeletion(
        random_one=False, skip_first_char=skip_first, skip_last_char=skip_last)])


class CharacterDeletion(WordSwapShift):
    """Delete one character of a fraction of words (Do-GOOD 3.2, Word Swap 4; Table 4 "Character deletion").

    The candidates are those of TextAttack's ``WordSwapRandomCharacterDeletion``
    (Morris et al. 2020): the word with each character deleted in turn
    (:func:`dogood.language.chars.deletions`); one is drawn with the shift's
    generator, so each position is equally likely, as with TextAttack's
    ``random_one``. Punctuation around a word is kept and never deleted
    (``"Date:"`` -> ``"Dte:"``). Keeps boxes, labels, entities and the word
    count. Words whose core is one character, non-Latin words and words over
    64 characters are left unchanged and counted as ``unchangeable``.

    ``style: repo`` (with ``fraction: 1.0``): Do-GOOD's scripts' loop over
    every word (:mod:`dogood.shifts.text._word_swap`), TextAttack's own
    operator: one character of each TextAttack word of the word is deleted,
    punctuation included (``"Date:"`` -> ``"Date"`` is not possible, ``"Dte:"``
    is); stopwords and one-letter words stay. On FUNSD test it changes 6,832
    of 8,707 words (78.5%).

    Parameters: :class:`CharacterDeletion.Params`.
    """

    name = "char_deletion"
    reported_counts = ("eligible", "changed", "unchangeable")
    papers = (Cites("do-good", "3.2, Word Swap 4; Table 4"), Cites("textattack"))
    cue_figures = {"word_style": ("funsd-t's config with render: true, FUNSD test, 50 pages "
                                  "(bench/measure_word_cue.py; the redraw before issue 40: 0.89)", {0: 0.58})}
    uses_textattack = False

    class Params(WordSwapShift.Params):
        skip_first_char: params.Flag = Field(False, description="never delete a word's first character "
                                                                "(TextAttack's default: false)")
        skip_last_char: params.Flag = Field(False, description="never delete a word's last character "
                                                               "(TextAttack's default: false)")

    repo_random_one = True  # the scripts' WordSwapRandomCharacterDeletion() deletes one random position per word

    def repo_transformation(self, rng: np.random.Generator):
        return _textattack_deletion(bool(self.skip_first_char), bool(self.skip_last_char))

    def swap(self, core: str, rng: np.random.Generator) -> str | None:
        return pick(deletions(core, int(self.skip_first_char), len(core) - int(self.skip_last_char)), rng)
