"""Key Drop (form-attack paper): key entities vanish from the OCR words."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from pydantic import AliasChoices, Field

from dogood.core.document import Document
from dogood.core.papers import Cites
from dogood.language.edits import without_words
from dogood.shifts import params
from dogood.shifts.base import Outcome, Shift, SkipDocument


class KeyDrop(Shift):
    """Key Drop: key entities vanish from the OCR words, as if OCR missed them (Xue et al. 2021).

    Keys on FUNSD are ``question`` entities. Each key entity is selected with
    probability ``fraction`` (the paper drops keys without a probability: ``fraction=1``)
    and all its words are deleted with their boxes
    (:func:`dogood.language.edits.delete_words`); the emptied entity goes, and
    so do the links to and from it. Other words, entities, boxes and IOB
    tags are unchanged. Counts: ``eligible`` and ``changed`` key entities,
    ``dropped`` words, ``unchangeable`` (selected keys that had no words).

    Parameters: :class:`KeyDrop.Params`.
    """

    name = "key_drop"
    reported_counts = ("eligible", "changed", "dropped", "unchangeable")
    family = "text"
    factors = frozenset({"word_set"})
    papers = (Cites("form-attacks", "form-level transformations, Background manipulation: Key Drop"),)

    label_params = ("labels",)
    #: Severity levels (:mod:`dogood.shifts.levels`): the share of key entities dropped, level 5 the paper's (all);
    #: measured by the share of words dropped.
    severities: ClassVar[dict[int, dict]] = {1: {"fraction": 0.1}, 2: {"fraction": 0.25}, 3: {"fraction": 0.5},
                                             4: {"fraction": 0.75}, 5: {"fraction": 1.0}}

    class Params(params.Params):
        fraction: params.Real = Field(1.0, ge=0, le=1, validation_alias=AliasChoices("fraction", "p"),
                                      description="probability that a key entity is dropped (paper: all, 1.0)")
        labels: params.Names = Field(("question",), description="entity labels that are keys")
        render: params.Flag = Field(False, description="also erase the dropped words from the page image")

    def apply(self, doc: Document, rng: np.random.Generator) -> Outcome:
        if not doc.words:
            raise SkipDocument("no words")
        keys = [e for e in doc.entities if e.label in self.labels]
        picked = [e for e, u in zip(keys, rng.random(len(keys))) if u < self.fraction]
        dropped = sorted({i for e in picked for i in e.word_ids})
        counts = {"eligible": len(keys), "changed": sum(1 for e in picked if e.word_ids),
                  "unchangeable": sum(1 for e in picked if not e.word_ids), "dropped": len(dropped)}
        return Outcome(without_words(doc, dropped, self.render), counts)
