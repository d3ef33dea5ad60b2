"""Center Shift: every word box moves, keeping its size (form-attack paper, OCR level transformations)."""

from __future__ import annotations

import numpy as np

from dogood.core.document import Document
from dogood.core.papers import Cites
from dogood.shifts.layout._bases import BoxJitter


class CenterShift(BoxJitter):
    """Center Shift: every word box moves, keeping its size (form-attack paper, OCR location jitter).

    The centre moves by ``dx = N(0, delta) * box width`` and ``dy = N(0,
    delta) * box height``, rounded to whole pixels. A box pushed past the
    page edge is slid back inside with its size kept (always possible: it
    came from inside the page), so it ends flush with the edge. Texts,
    order, entities and pixels are unchanged: the paper alters OCR locations
    only. Counts: ``eligible`` (words), ``changed`` (boxes that moved),
    ``clipped`` (boxes slid back inside the page). Word boxes only
    (``box_level: word``), see :class:`~dogood.shifts.layout._bases.BoxJitter`.

    Parameters: :class:`CenterShift.Params` (``delta``: of the centre's move).
    """

    name = "center_shift"
    factors = frozenset({"box_position"})
    reported_counts = ("eligible", "changed", "clipped")
    papers = (Cites("form-attacks", "OCR level transformations: Center Shift and Box Stretch"),)

    def jitter(self, doc: Document, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        b = doc.boxes
        size = np.stack([b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]], axis=1)
        moved = b[:, :2] + np.rint(rng.normal(0.0, self.delta, size=(len(b), 2)) * size).astype(np.int64)
        top_left = np.clip(moved, 0, np.array([doc.width, doc.height]) - size)
        return np.concatenate([top_left, top_left + size], axis=1), (top_left != moved).any(axis=1)
