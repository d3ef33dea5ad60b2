"""What the form-attack paper's background text shifts share: background words, a share ``fraction`` of them changed.

Xue et al. (2021), form-level transformations, "Background manipulation":
BG Typo, BG Synonyms and BG Adversarial select each background word with
probability p and replace it. Here ``round(fraction * n)`` of the ``n``
eligible background words change (:mod:`dogood.language.budget`), so the measured
share meets ``fraction`` (the paper's p; ``p`` is still accepted); background on FUNSD is :func:`dogood.language.selection.background_words`.
Like the paper, these shifts change the OCR words only (boxes, labels, IOB
tags and links stay); with ``render=True`` the changed words are also redrawn
in the page image. Words longer than :data:`dogood.language.words.MAX_WORD_LENGTH` characters are
left alone and counted ``unchangeable``, with words the shift cannot change.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

import numpy as np
from pydantic import AliasChoices, Field

from dogood.core.document import Document
from dogood.language.budget import change_words
from dogood.language.edits import kept_tallies, redraw_guard, with_texts
from dogood.language.selection import BACKGROUND_LABELS, background_words
from dogood.language.words import MAX_WORD_LENGTH
from dogood.shifts import params
from dogood.shifts.base import KEPT_HELP, Outcome, Shift, SkipDocument


class BackgroundWordShift(Shift):
    """Base of BG Typo, BG Synonyms and BG Adversarial: change a share ``fraction`` of the background words.

    A subclass sets ``name`` and implements :meth:`change`; one with more
    candidates' bookkeeping (BG Adversarial: protected words, and with
    ``render`` values the page's print spells) overrides :meth:`apply`.
    """

    family = "text"
    tallies_help: ClassVar[dict[str, str]] = {"kept": KEPT_HELP}
    factors = frozenset({"text"})
    #: ``render: true`` redraws words: a build tests them for the redrawn-word cue (:mod:`dogood.measures.word_style`).
    render_cues = frozenset({"word_style"})
    max_word_length: ClassVar[int] = MAX_WORD_LENGTH
    #: Severity levels (:mod:`dogood.shifts.levels`): the share of background words changed; measured by the share
    #: of words whose text changed.
    severities: ClassVar[dict[int, dict]] = {1: {"fraction": 0.05}, 2: {"fraction": 0.1}, 3: {"fraction": 0.2},
                                             4: {"fraction": 0.3}, 5: {"fraction": 0.5}}

    class Params(params.Params):
        fraction: params.Real = Field(0.1, ge=0, le=1, validation_alias=AliasChoices("fraction", "p"), description=(
            "share of the background words changed (paper: p, each selected with probability 0.1)"))
        labels: params.Names = Field(BACKGROUND_LABELS, description=(
            "entity labels whose words are background (words in no entity always are)"))
        render: params.Flag = Field(False, description="also redraw the changed words in the page image (the paper "
                                                       "changes the OCR text only)")

    def change(self, word: str, rng: np.random.Generator) -> str | None:
        """The new text of a background word, or ``None`` when it cannot change."""
        raise NotImplementedError

    def change_some(self, doc: Document, rng: np.random.Generator, words: Sequence[int],
                    change: Callable[[str, np.random.Generator], str | None], guard=None
                    ) -> tuple[dict[int, str], dict[str, int]]:
        """Change ``round(fraction * len(words))`` of ``words`` with ``change(old text, rng)``; changes and counts
        (``guard``: :func:`~dogood.language.edits.redraw_guard`, with ``render``)."""
        def one(i: int, r: np.random.Generator) -> str | None:
            old = doc.words[i].text
            return change(old, r) if len(old) <= self.max_word_length else None

        return change_words(doc, rng, self.fraction, one, words, guard)

    def apply(self, doc: Document, rng: np.random.Generator) -> Outcome:
        if not doc.words:
            raise SkipDocument("no words")
        self.prepare()
        guard = redraw_guard(doc, self.render)
        changes, counts = self.change_some(doc, rng, background_words(doc, self.labels), self.change, guard)
        return Outcome(with_texts(doc, changes, self.render), counts, kept_tallies(guard))
