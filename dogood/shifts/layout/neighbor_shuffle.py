"""Neighbor Shuffle: the values' neighbour words shuffled among their own places (form-attack paper)."""

from __future__ import annotations

from typing import ClassVar

from dogood.core.papers import Cites
from dogood.shifts.layout._bases import ZONE_LEVELS, ZoneShuffle


class NeighborShuffle(ZoneShuffle):
    """Neighbor Shuffle: the values' neighbour words shuffled among their own places (form-attack paper).

    Neighbours (:func:`~dogood.language.selection.value_neighbours`): words
    overlapping a value's box grown by ``r`` of the page width/height, and
    the ``n`` token words before and after each value in the word order.
    The paper shuffles "each value's neighbors and keeps the order of the
    rest": we shuffle the union of all values' neighbours among the places
    they hold (neighbour sets of nearby values overlap, so one shuffle over
    the union is the well-defined reading), and every other word, the value
    words included, keeps its place. Only the order changes: texts, boxes,
    pixels and entity membership stay. Counts: ``eligible`` (neighbour
    words), ``changed`` (words whose place changed), ``neighbours``.

    Parameters: :class:`NeighborShuffle.Params`.
    """

    name = "neighbor_shuffle"
    reported_counts = ("eligible", "changed", "neighbours")
    neighbours_move = True
    #: Severity levels (:mod:`dogood.shifts.levels`): the neighbour zone grows (:data:`ZONE_LEVELS`, level 3 the
    #: paper's); measured by the share of words reordered.
    severities: ClassVar[dict[int, dict]] = ZONE_LEVELS
    papers = (Cites("form-attacks", "OCR level transformations: Neighbor Shuffle and Non-neighbor Shuffle",
                    inspired_by="a neighbour is any word overlapping the value's grown box (the paper asks IoU > 0.5 "
                                "with the zone) or near it in the word order (the paper: Tesseract's reading order); "
                                "the union of all values' neighbours is shuffled at once"),)
