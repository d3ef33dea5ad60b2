"""Neighbor BG Drop: every background word that neighbours a value vanishes (form-attack paper)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from pydantic import AliasChoices, Field

from dogood.core.document import Document
from dogood.core.papers import Cites
from dogood.language.selection import BACKGROUND_LABELS, background_words, value_neighbours
from dogood.shifts import params
from dogood.shifts.base import Outcome, Shift, SkipDocument
from dogood.shifts.layout._bases import ZONE_LEVELS, NeighbourZone
from dogood.shifts.layout._relayout import drop_words


class NeighborBackgroundDrop(Shift):
    """Neighbor BG Drop: every background word that neighbours a value vanishes (form-attack paper).

    Neighbours as in :class:`~dogood.shifts.layout.neighbor_shuffle.NeighborShuffle` (value box grown by ``r`` of
    the page, plus ``n`` words on each side in the word order); of them, the
    background token words (``other``/``header`` entity words and words in
    no entity) are all deleted with their boxes. Keys and values stay, even
    when they neighbour a value. No randomness. ``render`` as in
    :class:`~dogood.shifts.layout.bg_drop.BackgroundDrop`. Counts: ``eligible`` (background words),
    ``changed`` (dropped), ``neighbours`` (neighbour words of any label).

    Parameters: :class:`NeighborBackgroundDrop.Params`.
    """

    name = "neighbor_bg_drop"
    reported_counts = ("eligible", "changed", "neighbours")
    family = "layout"
    factors = frozenset({"word_set"})
    papers = (Cites("form-attacks", "Background manipulation: Neighbor BG Drop",
                    inspired_by="a neighbour is any word overlapping the value's grown box (the paper asks IoU > 0.5 "
                                "with the zone) or near it in the word order (the paper: Tesseract's reading order)"),)

    label_params = ("value_labels",)
    #: Severity levels (:mod:`dogood.shifts.levels`): the neighbour zone grows (:data:`ZONE_LEVELS`, level 3 the
    #: paper's); measured by the share of words dropped.
    severities: ClassVar[dict[int, dict]] = ZONE_LEVELS

    class Params(params.Params):
        labels: params.Names = Field(BACKGROUND_LABELS, description="entity labels whose words are background "
                                                                    "(words in no entity always are)")
        value_labels: params.Names = NeighbourZone.model_fields["value_labels"]
        r: params.Real = NeighbourZone.model_fields["r"]
        n: params.Integer = NeighbourZone.model_fields["n"]
        render: params.Flag = Field(False, validation_alias=AliasChoices("render", "erase"),
                                    description="also erase the dropped words from the image (false: words only)")

    def apply(self, doc: Document, rng: np.random.Generator):
        if not doc.words:
            raise SkipDocument("no words")
        near = value_neighbours(doc, self.value_labels, self.r, self.n)
        background = background_words(doc, self.labels)
        dropped = [i for i in background if i in near]
        counts = {"eligible": len(background), "changed": len(dropped), "neighbours": len(near)}
        return Outcome(drop_words(doc, dropped, self.render), counts)
