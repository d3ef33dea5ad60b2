"""Number word swap: a number in a word becomes another number of similar size."""

from __future__ import annotations

import re
from functools import lru_cache

import numpy as np
from pydantic import Field

from dogood.core.papers import Cites
from dogood.language.lexicons import import_textattack
from dogood.language.words import case_like
from dogood.shifts import params
from dogood.shifts.text._word_swap import WordSwapShift

#: A number inside a word: digits not glued to letters ("12/05/98" has three, "A221" none),
#: as TextAttack's tokenizer splits words at punctuation.
_NUMBER = re.compile(r"(?<![^\W_])\d+(?![^\W_])")
#: Digit runs longer than this are identifiers (account numbers...), not quantities: left unchanged.
MAX_DIGITS = 18
_WORD_TRIES = 64


@lru_cache(maxsize=None)
def _transformation(max_change: float):
    """TextAttack's ``WordSwapChangeNumber`` whose ``_alter_number`` returns the whole range it draws from.

    TextAttack draws ``n`` integers from ``[max(x - c, 1), x + c)``, ``c = |int(x * max_change)| + 1``,
    with numpy's global state, and leaves 0, 2 and 4 alone; here the range itself comes back and the
    shift draws from it with its own generator.
    """
    import_textattack()
    from textattack.transformations import WordSwapChangeNumber

    class _AllNumbers(WordSwapChangeNumber):
        def _alter_number(self, num):
            num = int(num)
            if num in (0, 2, 4):
                return range(0)
            change = abs(int(num * self.max_change)) + 1
            if num >= 0:
                return range(max(num - change, 1), num + change)
            return range(num - change, min(0, num + change))

    return _AllNumbers(max_change=max_change)


@lru_cache(maxsize=None)
def _textattack_numbers(max_change: float):
    """TextAttack's ``WordSwapChangeNumber`` as Do-GOOD's scripts built it (``style: repo``): three values drawn
    from the same range (``n=3``), with the generator bound to ``rng`` instead of numpy's global state."""
    import_textattack()
    from textattack.transformations import CompositeTransformation, WordSwapChangeNumber

    class _Seeded(WordSwapChangeNumber):
        rng: np.random.Generator | None = None

        def _alter_number(self, num):
            if num in (0, 2, 4):
                return []
            change = abs(int(num * self.max_change)) + 1
            low, high = (max(num - change, 1), num + change) if num >= 0 else (num - change, min(0, num + change))
            return self.rng.integers(int(low), int(high), self.n).tolist()

    swap = _Seeded(max_change=max_change)
    return swap, CompositeTransformation([swap])


def _draw(values: range, exclude: int, rng: np.random.Generator) -> int | None:
    """A value of ``values`` other than ``exclude``, uniformly, or ``None``."""
    size = len(values) - (exclude in values)
    if size <= 0:
        return None
    k = int(rng.integers(size))
    value = values[k]
    if exclude in values and value >= exclude:
        value += 1
    return value


class NumberSwap(WordSwapShift):
    """Change the number in a fraction of words (Do-GOOD 3.2, Word Swap 3; Table 4 "Change number").

    TextAttack's ``WordSwapChangeNumber`` (Morris et al. 2020) replaces a
    number ``x`` by one drawn uniformly from ``[max(x - c, 1), x + c)`` with
    ``c = |int(x * max_change)| + 1`` (never ``x`` itself; 0, 2 and 4 are
    left alone, as in TextAttack), and a number word ("twenty") by another
    number word. Only words holding a number change; the draw of words to
    change still covers all eligible words, as TextAttack's augmenter's
    fraction of words does, so a page with few numbers gets fewer changes
    (the others count as ``unchangeable``).

    Numbers with separators change one of their parts, as TextAttack's
    tokenizer splits them: ``"12/05/98"`` -> ``"12/09/98"``, ``"1,234.56"`` ->
    ``"1,234.71"``; zero padding is kept (``"05"`` -> ``"09"``); punctuation
    around a word is kept (``"(212)"`` -> ``"(187)"``). Digits glued to
    letters (``"A221"``), runs over 18 digits, non-Latin and over-long words
    are left unchanged. Number words become single words only
    (``"twenty"`` -> ``"thirty-one"``, never ``"one hundred and five"``), in
    the word's case. Keeps boxes, labels, entities and the word count.

    Parameters: :class:`NumberSwap.Params`.
    """

    name = "number_swap"
    requires = ("module:textattack[text]",)
    reported_counts = ("eligible", "changed", "unchangeable")
    papers = (Cites("do-good", "3.2, Word Swap 3; Table 4"), Cites("textattack"))
    cue_figures = {"word_style": ("funsd-t's config with render: true, FUNSD test, 50 pages "
                                  "(bench/measure_word_cue.py; the redraw before issue 40: 0.84)", {0: 0.57})}

    class Params(WordSwapShift.Params):
        max_change: params.Real = Field(1.0, gt=0, description="how far a number may move, relative to its size "
                                                               "(TextAttack's default: 1.0)")
        number_words: params.Flag = Field(True, description="also change spelled-out numbers (\"twenty\"), as "
                                                            "TextAttack does")

    def repo_transformation(self, rng: np.random.Generator):
        swap, transformation = _textattack_numbers(self.max_change)
        swap.rng = rng
        return transformation

    def repo_differences(self, schema: str) -> str:
        return ("a draw equal to the number leaves the word unchanged, as in the scripts (TextAttack compares the "
                "new number with the word's text, never equal); the words are the source's words (the LayoutLMv3 "
                "FUNSD script attacks each word's first BPE piece).")

    def swap(self, core: str, rng: np.random.Generator) -> str | None:
        transformation = _transformation(self.max_change)
        if any("0" <= ch <= "9" for ch in core):
            options = []
            for m in _NUMBER.finditer(core):
                if len(m.group()) <= MAX_DIGITS:
                    values = transformation._alter_number(int(m.group()))
                    if len(values) - (int(m.group()) in values) > 0:
                        options.append((m, values))
            if not options:
                return None
            m, values = options[int(rng.integers(len(options)))]
            digits = m.group()
            value = _draw(values, int(digits), rng)
            text = str(value).zfill(len(digits)) if digits.startswith("0") and len(digits) > 1 else str(value)
            return core[: m.start()] + text + core[m.end() :]
        if not self.number_words or not core.replace("-", "").isalpha():
            return None
        return self._swap_number_word(core, transformation, rng)

    def _swap_number_word(self, core: str, transformation, rng: np.random.Generator) -> str | None:
        from num2words import num2words
        from word2number import w2n

        lower = core.lower()
        if not any(word in lower for word in _number_words()):
            return None
        try:
            value = w2n.word_to_num(lower)
        except (ValueError, IndexError):
            return None
        values = transformation._alter_number(value)
        for _ in range(_WORD_TRIES):  # a bounded number of draws keeps "million" cheap
            new = _draw(values, value, rng)
            if new is None:
                return None
            text = num2words(new)
            if " " not in text:
                return case_like(text, core)
        return None


@lru_cache(maxsize=1)
def _number_words() -> tuple[str, ...]:
    """TextAttack's list of number words, less the joiners "point" and "and" that are no number alone."""
    from textattack.transformations.word_swaps.word_swap_change_number import STR_NUM

    return tuple(w for w in STR_NUM if w not in ("point", "and"))
