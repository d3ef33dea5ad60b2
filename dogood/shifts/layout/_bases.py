"""Base classes the layout shifts share (machinery, no shift): box jitter, and the neighbour-zone shuffle.

They live in the shifts package, not in :mod:`dogood.shifts.layout._relayout`, because they
are :class:`~dogood.shifts.base.Shift` classes: a module outside the package
that imports the base would be half-loaded when ``dogood.shifts`` imports
the shifts.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from pydantic import Field

from dogood.core.document import Document
from dogood.language.selection import value_neighbours
from dogood.shifts import params
from dogood.shifts.base import Outcome, Shift, SkipDocument
from dogood.shifts.layout._relayout import changed_boxes, shuffle_among, with_boxes


class BoxJitter(Shift):
    """Base of Center Shift and Box Stretch: every word box moves by normal draws scaled by its size.

    A subclass implements :meth:`jitter`. Counts: ``eligible`` (words),
    ``changed`` (boxes that changed), ``clipped`` (boxes that reached past the
    page edge). Word boxes only (``box_level: word``): a segment box, the
    union of its jittered words, would hide most of the jitter the paper
    applied to OCR word boxes.
    """

    family = "layout"
    box_levels = {"word": "each token gets its own jittered box (the paper's LayoutLM took word boxes)"}
    #: Severity levels (:mod:`dogood.shifts.levels`): the moves' standard deviation, in box sizes; measured by the
    #: mean box displacement.
    severities: ClassVar[dict[int, dict]] = {1: {"delta": 0.05}, 2: {"delta": 0.1}, 3: {"delta": 0.2},
                                             4: {"delta": 0.4}, 5: {"delta": 0.8}}

    class Params(params.Params):
        delta: params.Real = Field(0.1, ge=0, description="standard deviation of the moves, as a fraction of the box "
                                                          "size (the paper gives none; 0.1 is a moderate choice)")

    def jitter(self, doc: Document, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """The new ``(n, 4)`` boxes, and which of them reached past the page edge before they were brought back."""
        raise NotImplementedError

    def apply(self, doc: Document, rng: np.random.Generator):
        if not doc.words:
            raise SkipDocument("no words")
        new, clipped = self.jitter(doc, rng)
        counts = {"eligible": len(doc.words), "changed": changed_boxes(doc.boxes, new), "clipped": int(clipped.sum())}
        return Outcome(with_boxes(doc, new), counts)


#: Severity levels of the neighbour zone (:mod:`dogood.shifts.levels`): ``r`` and ``n`` grow together, level 3 the
#: paper's (0.02, 2). Each level's zone holds the previous level's, so the neighbours are a growing set: Neighbor
#: Shuffle and Neighbor BG Drop act on more words per level, Non-neighbor Shuffle takes the levels in reverse.
ZONE_LEVELS: dict[int, dict] = {1: {"r": 0.0, "n": 1}, 2: {"r": 0.01, "n": 2}, 3: {"r": 0.02, "n": 2},
                                4: {"r": 0.04, "n": 4}, 5: {"r": 0.08, "n": 8}}


class NeighbourZone(params.Params):
    """The parameters of a value's neighbour zone (:func:`~dogood.language.selection.value_neighbours`)."""

    value_labels: params.Names = Field(("answer",), description="entity labels that are values")
    r: params.Real = Field(0.02, ge=0, description="neighbour zone growth, as a fraction of the page width/height "
                                                   "on each side (paper: 0.02)")
    n: params.Integer = Field(2, ge=0, description="reading-order neighbours on each side of a value (paper: 2)")


class ZoneShuffle(Shift):
    """Base of Neighbor and Non-neighbor Shuffle: shuffle the neighbours of values, or the other words.

    A subclass sets ``neighbours_move``: ``True`` shuffles the values'
    neighbours among their places, ``False`` every word that is neither a
    value nor a neighbour. Counts: ``eligible``, ``changed``, ``neighbours``.
    """

    family = "layout"
    neighbours_move: bool
    factors = frozenset({"word_order"})
    Params = NeighbourZone
    label_params = ("value_labels",)

    def apply(self, doc: Document, rng: np.random.Generator):
        if not doc.words:
            raise SkipDocument("no words")
        near = value_neighbours(doc, self.value_labels, self.r, self.n)
        if self.neighbours_move:
            movers = near
        else:
            values = {i for e in doc.entities if e.label in self.value_labels for i in e.word_ids}
            movers = set(range(len(doc.words))) - near - values
        out, counts = shuffle_among(doc, rng, movers)
        counts["neighbours"] = len(near)
        return Outcome(out, counts)
