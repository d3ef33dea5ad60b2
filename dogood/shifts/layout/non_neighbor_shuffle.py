"""Non-neighbor Shuffle: the words that are neither values nor their neighbours, shuffled (form-attack paper)."""

from __future__ import annotations

from typing import ClassVar

from dogood.core.papers import Cites
from dogood.shifts.layout._bases import ZONE_LEVELS, ZoneShuffle


class NonNeighborShuffle(ZoneShuffle):
    """Non-neighbor Shuffle: the words that are neither values nor their neighbours, shuffled (form-attack paper).

    The opposite of :class:`~dogood.shifts.layout.neighbor_shuffle.NeighborShuffle`: value words and their
    neighbours keep their places in the word sequence, and all other words
    are shuffled among the places they hold. Only the order changes.
    Counts: ``eligible`` (non-neighbour, non-value words), ``changed``,
    ``neighbours``.

    Parameters: :class:`NonNeighborShuffle.Params`.
    """

    name = "non_neighbor_shuffle"
    reported_counts = ("eligible", "changed", "neighbours")
    neighbours_move = False
    #: Severity levels (:mod:`dogood.shifts.levels`): the neighbour zone shrinks (:data:`ZONE_LEVELS` in reverse,
    #: level 3 the paper's), so more words are shuffled; measured by the share of words reordered.
    severities: ClassVar[dict[int, dict]] = {6 - level: values for level, values in ZONE_LEVELS.items()}
    papers = (Cites("form-attacks", "OCR level transformations: Neighbor Shuffle and Non-neighbor Shuffle",
                    inspired_by="a neighbour is any word overlapping the value's grown box (the paper asks IoU > 0.5 "
                                "with the zone) or near it in the word order (the paper: Tesseract's reading order)"),)
