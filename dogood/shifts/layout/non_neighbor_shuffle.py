"""Non-neighbor Shuffle: the words that are neither values nor their neighbours, shuffled (form-attack paper)."""

from __future__ import annotations

from dogood.shifts.layout._bases import ZoneShuffle
from dogood.papers import Cites


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
    neighbours_move = False
    papers = (Cites("form-attacks", "OCR level transformations: Neighbor Shuffle and Non-neighbor Shuffle",
                    inspired_by="a neighbour is any word overlapping the value's grown box (the paper asks IoU > 0.5 "
                                "with the zone) or near it in the word order (the paper: Tesseract's reading order)"),)
