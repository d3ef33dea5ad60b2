"""Shifts: image, text and layout distribution shifts on :class:`~dogood.document.Document`.

One shift per module; each registers itself under its ``name`` for recipes.
"""

from dogood.shifts.base import SHIFTS, Shift, SkipDocument, make_shift
from dogood.shifts.merge import MergeBoxes

__all__ = ["SHIFTS", "Shift", "SkipDocument", "make_shift", "MergeBoxes"]
