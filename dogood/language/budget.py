"""How many words a text shift changes: exactly ``round(fraction * n)``, drawn in a random order.

Do-GOOD (section 3.2) and the TextAttack augmenters change a fixed fraction
of a document's words (the paper: 10%); the form-attack paper selects each
background word with probability p, and Moradi & Samwald perturb samples.
Every text shift here draws the expected number exactly: the candidates are
tried in the order of ``rng.permutation``, a candidate that cannot change is
counted ``unchangeable`` and the next one takes its place, so the measured
``changed / eligible`` meets the knob whenever enough candidates can change.
No randomness is drawn when the budget is zero.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Protocol

import numpy as np

from dogood.core.document import Document
from dogood.language.selection import eligible_words


def check_fraction(value: float, name: str = "fraction") -> float:
    """``value`` as a float; ``ValueError`` (``"p must be in [0, 1], got 2"``) unless it is in [0, 1]."""
    if not 0.0 <= float(value) <= 1.0:
        raise ValueError(f"{name} must be in [0, 1], got {value}")
    return float(value)


def budget(fraction: float, n: int) -> int:
    """The number of changes asked of ``n`` candidates: ``round(fraction * n)``."""
    return int(round(fraction * n))


def draw_until(rng: np.random.Generator, n: int, target: int, attempt: Callable[[int], bool],
               reached: Callable[[], bool]) -> int:
    """Try candidates ``0..n-1`` in a random order until ``reached()``; how many attempts failed.

    ``attempt(k)`` tries candidate ``k`` and says whether it changed anything;
    nothing is drawn when ``target`` is zero.
    """
    unchangeable = 0
    if target:
        for k in rng.permutation(n):
            if not attempt(int(k)):
                unchangeable += 1
                continue
            if reached():
                break
    return unchangeable


class Guard(Protocol):
    """What a shift that redraws its words asks before changing one (:class:`dogood.page.render.Redraw`)."""

    def kept(self, i: int) -> str | None: ...

    def fits(self, i: int, text: str) -> bool: ...


def change_words(
    doc: Document,
    rng: np.random.Generator,
    fraction: float,
    change: Callable[[int, np.random.Generator], str | None],
    words: Sequence[int],
    guard: Guard | None = None,
) -> tuple[dict[int, str], dict[str, int]]:
    """Change ``round(fraction * len(words))`` of ``words`` (indices), drawn in a random order.

    ``change(word_index, rng)`` returns the new text, or ``None`` when the
    word cannot change (a blank text or the old one count as ``None``).
    With a ``guard`` (a shift that redraws its words), a word the guard keeps
    as printed, or whose new text it cannot draw, cannot change either (the
    guard counts why). Returns ``{word index: new text}`` and the counts
    ``eligible``, ``changed``, ``unchangeable``.
    """
    target = budget(check_fraction(fraction), len(words))
    changes: dict[int, str] = {}

    def attempt(k: int) -> bool:
        index = words[k]
        if guard is not None and guard.kept(index) is not None:
            return False
        new = change(index, rng)
        if new is None or new == doc.words[index].text or not new.strip():
            return False
        if guard is not None and not guard.fits(index, new):
            return False
        changes[index] = new
        return True

    unchangeable = draw_until(rng, len(words), target, attempt, lambda: len(changes) == target)
    return changes, {"eligible": len(words), "changed": len(changes), "unchangeable": unchangeable}


def change_fraction(
    doc: Document,
    rng: np.random.Generator,
    fraction: float,
    change: Callable[[int, np.random.Generator], str | None],
    labels: Collection[str] | None = None,
    guard: Guard | None = None,
) -> tuple[dict[int, str], dict[str, int]]:
    """:func:`change_words` over the eligible words (:func:`~dogood.language.selection.eligible_words` of ``labels``)."""
    return change_words(doc, rng, fraction, change, eligible_words(doc, labels), guard)
