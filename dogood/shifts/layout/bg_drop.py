"""BG Drop: background words vanish with their boxes, as if OCR missed them (form-attack paper)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from pydantic import AliasChoices, Field

from dogood.core.document import Document
from dogood.core.papers import Cites
from dogood.language.selection import BACKGROUND_LABELS, background_words
from dogood.shifts import params
from dogood.shifts.base import Outcome, Shift, SkipDocument
from dogood.shifts.layout._relayout import drop_words


class BackgroundDrop(Shift):
    """BG Drop: background words vanish with their boxes, as if OCR missed them (form-attack paper).

    The paper removes each background word with probability ``p``; like
    :func:`~dogood.language.budget.change_words` we drop exactly
    ``round(fraction * n)`` of the ``n`` background token words, drawn in
    random order, so the measured share is ``fraction`` (the paper's ``p``). Background on FUNSD: words of
    ``other`` and ``header`` entities and words in no entity; key
    (``question``) and value (``answer``) words are never dropped. An entity
    left without words goes, with its links
    (:func:`~dogood.language.edits.delete_words`). By default the pixels stay
    (OCR missed a word that is on the page); ``render=True`` inpaints the
    dropped words' ink (:func:`dogood.page.render.render_words` with blank text),
    so image and words agree. Counts: ``eligible`` (background words),
    ``changed`` (words dropped).

    Parameters: :class:`BackgroundDrop.Params`.
    """

    name = "bg_drop"
    reported_counts = ("eligible", "changed")
    family = "layout"
    factors = frozenset({"word_set"})
    #: Severity levels (:mod:`dogood.shifts.levels`): the share of background words dropped, level 1 the paper's p;
    #: measured by the share of all words dropped.
    severities: ClassVar[dict[int, dict]] = {1: {"fraction": 0.1}, 2: {"fraction": 0.2}, 3: {"fraction": 0.4},
                                             4: {"fraction": 0.6}, 5: {"fraction": 0.8}}
    papers = (Cites("form-attacks", "Background manipulation: BG Drop",
                    inspired_by="exactly round(fraction * n) of the n background words are dropped (the paper drops "
                                "each with probability p)"),)

    class Params(params.Params):
        fraction: params.Real = Field(0.1, ge=0, le=1, validation_alias=AliasChoices("fraction", "p"),
                                      description="share of the background words dropped (the paper's p: 0.1; 0.13 "
                                                  "to match Neighbor BG Drop's count)")
        labels: params.Names = Field(BACKGROUND_LABELS, description="entity labels whose words are background "
                                                                    "(words in no entity always are)")
        render: params.Flag = Field(False, validation_alias=AliasChoices("render", "erase"),
                                    description="also erase the dropped words from the image (false: words only)")

    def apply(self, doc: Document, rng: np.random.Generator):
        if not doc.words:
            raise SkipDocument("no words")
        background = background_words(doc, self.labels)
        target = int(round(self.fraction * len(background)))
        dropped = sorted(background[int(j)] for j in rng.permutation(len(background))[:target])
        return Outcome(drop_words(doc, dropped, self.render), {"eligible": len(background), "changed": len(dropped)})
