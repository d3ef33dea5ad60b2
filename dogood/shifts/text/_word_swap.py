"""What the Do-GOOD word swaps share (section 3.2, after TextAttack's augmenters): one word in, one word out.

TextAttack's transformations act on a whole ``AttackedText`` and draw
randomness from Python's ``random`` and numpy's global state. dogood asks a
transformation for *all* candidates of one word (``_get_replacement_words``,
deterministic) and picks one with the shift's ``numpy.random.Generator``
(:func:`dogood.language.chars.pick`), so output depends only on the seed.
:class:`WordSwapShift` does the rest: it splits a word into leading
punctuation, core and trailing punctuation (``"Date:"`` -> ``"Date"`` +
``":"``), swaps the core only, keeps one word in and one word out (boxes and
labels stay), and leaves unchanged, and counts, words it cannot change:
blank, no letter or digit, a non-Latin script, longer than
:attr:`WordSwapShift.max_word_length`, or no candidate.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from pydantic import Field

from dogood.core.document import Document
from dogood.shifts import params
from dogood.shifts.base import KEPT_HELP, Outcome, Shift
from dogood.language.budget import change_fraction
from dogood.language.edits import kept_tallies, redraw_guard, with_texts
from dogood.language.lexicons import import_textattack
from dogood.language.words import MAX_WORD_LENGTH, is_latin, split_word


class WordSwapShift(Shift):
    """Base of the word swaps: change ``fraction`` of the eligible words, one word at a time.

    Subclasses set ``name``, extend :class:`WordSwapShift.Params` with their
    own parameters and implement :meth:`swap`. :meth:`prepare` imports
    TextAttack (quietly, offline) unless ``uses_textattack`` is false.
    """

    family = "text"
    tallies_help: ClassVar[dict[str, str]] = {"kept": KEPT_HELP}
    factors = frozenset({"text"})
    max_word_length: ClassVar[int] = MAX_WORD_LENGTH
    uses_textattack: ClassVar[bool] = True
    #: Severity levels (:mod:`dogood.shifts.levels`): the share of eligible words changed; measured by the share of
    #: words whose text changed.
    severities: ClassVar[dict[int, dict]] = {1: {"fraction": 0.05}, 2: {"fraction": 0.1}, 3: {"fraction": 0.2},
                                             4: {"fraction": 0.3}, 5: {"fraction": 0.5}}

    class Params(params.Params):
        fraction: params.Real = Field(0.1, ge=0, le=1, description="share of the eligible words changed (paper: 0.1)")
        labels: params.OptionalNames = Field(None, description="entity labels whose words are eligible (null: all words)")
        render: params.Flag = Field(False, description="redraw the changed words in the page image (false: text only)")

    def prepare(self) -> None:
        if self.uses_textattack:
            import_textattack()

    def swap(self, core: str, rng: np.random.Generator) -> str | None:
        """The new text of a word core (Latin, non-empty), or ``None`` when it cannot change."""
        raise NotImplementedError

    def change_word(self, text: str, rng: np.random.Generator) -> str | None:
        """The new text of a whole word (punctuation kept), or ``None`` when it cannot change."""
        if len(text) > self.max_word_length:
            return None
        lead, core, trail = split_word(text)
        if not core or not is_latin(core, ascii_digits=True):
            return None
        new = self.swap(core, rng)
        if not new or new == core:
            return None
        return lead + new + trail

    def apply(self, doc: Document, rng: np.random.Generator) -> Outcome:
        self.prepare()
        guard = redraw_guard(doc, self.render)
        changes, counts = change_fraction(
            doc, rng, self.fraction, lambda i, r: self.change_word(doc.words[i].text, r), self.labels, guard
        )
        return Outcome(with_texts(doc, changes, self.render), counts, kept_tallies(guard))
