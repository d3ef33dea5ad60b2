"""The base of Neighbor and Non-neighbor Shuffle (machinery, no shift): the neighbour zone and the shuffle.

It lives in the shifts package, not in :mod:`dogood.layout`, because it is a
:class:`~dogood.shifts.base.Shift`: a module outside the package that imports
the base would be half-loaded when ``dogood.shifts`` imports the shifts.
"""

from __future__ import annotations

import numpy as np
from pydantic import Field

from dogood.document import Document
from dogood.layout import shuffle_among
from dogood.shifts import params
from dogood.shifts.base import Outcome, Shift, SkipDocument
from dogood.shifts.form_text import value_neighbours


class NeighbourZone(params.Params):
    """The parameters of a value's neighbour zone (:func:`~dogood.shifts.form_text.value_neighbours`)."""

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
    Params = NeighbourZone

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
