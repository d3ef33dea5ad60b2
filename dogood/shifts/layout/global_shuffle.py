"""Global Shuffle: the words in a random order (form-attack paper, OCR level transformations)."""

from __future__ import annotations

import numpy as np

from dogood.core.document import Document
from dogood.core.papers import Cites
from dogood.shifts.base import Outcome, Shift, SkipDocument
from dogood.shifts.layout._relayout import shuffle_among


class GlobalShuffle(Shift):
    """Global Shuffle: the words in a random order (form-attack paper, poor reading order).

    Only the order of the word sequence changes (a uniform random
    permutation): texts, boxes and pixels stay, and each entity keeps its
    words (renumbered, in the entity's own order, so IOB tags stay with the
    same words; :func:`~dogood.language.edits.reorder_words`). Counts:
    ``eligible`` (words), ``changed`` (words whose place changed). No parameters, so no severity levels
    (:mod:`dogood.shifts.levels`): every level would reorder all words (about 99% of places change); a share of words
    to shuffle would be a new parameter, changing the seed of every existing config (:func:`dogood.core.seeds.step_key`).
    """

    name = "global_shuffle"
    reported_counts = ("eligible", "changed")
    family = "layout"
    factors = frozenset({"word_order"})
    papers = (Cites("form-attacks", "OCR level transformations: Global Shuffle"),)

    def apply(self, doc: Document, rng: np.random.Generator):
        if not doc.words:
            raise SkipDocument("no words")
        return Outcome(*shuffle_among(doc, rng, range(len(doc.words))))
