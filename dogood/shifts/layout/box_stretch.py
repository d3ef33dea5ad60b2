"""Box Stretch: each of a word box's four coordinates moves on its own (form-attack paper, OCR level transformations)."""

from __future__ import annotations

import numpy as np

from dogood.core.document import Document
from dogood.core.papers import Cites
from dogood.shifts.layout._bases import BoxJitter


def _span(lo: np.ndarray, hi: np.ndarray, page: int, least: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ordered, inside ``[0, page]``, at least ``least`` pixels long (1 for boxes that had a size)."""
    lo, hi = np.clip(np.minimum(lo, hi), 0, page), np.clip(np.maximum(lo, hi), 0, page)
    short = hi - lo < least
    hi = np.where(short, np.minimum(lo + least, page), hi)
    lo = np.where(short, hi - least, lo)
    return lo, hi


class BoxStretch(BoxJitter):
    """Box Stretch: each of a word box's four coordinates moves on its own (form-attack paper).

    ``x0`` and ``x1`` move by ``N(0, delta) * box width``, ``y0`` and ``y1``
    by ``N(0, delta) * box height`` (four independent draws, rounded to whole
    pixels), so boxes grow, shrink and shift. Sides that cross are swapped, a
    box that had a size keeps at least 1 pixel per side, and every box is
    clipped to the page. Texts, order, entities and pixels are unchanged.
    Counts: ``eligible`` (words), ``changed`` (boxes that changed),
    ``clipped`` (boxes that reached past the page edge). Word boxes only
    (``box_level: word``), see :class:`~dogood.shifts.layout._bases.BoxJitter`.

    Parameters: :class:`BoxStretch.Params` (``delta``: of each coordinate's move).
    """

    name = "box_stretch"
    factors = frozenset({"box_position", "box_size"})
    reported_counts = ("eligible", "changed", "clipped")
    papers = (Cites("form-attacks", "OCR level transformations: Center Shift and Box Stretch"),)

    def jitter(self, doc: Document, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        b = doc.boxes
        w, h = b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]
        raw = b + np.rint(rng.normal(0.0, self.delta, size=b.shape) * np.stack([w, h, w, h], axis=1)).astype(np.int64)
        x0, x1 = _span(raw[:, 0], raw[:, 2], doc.width, (w > 0).astype(np.int64))
        y0, y1 = _span(raw[:, 1], raw[:, 3], doc.height, (h > 0).astype(np.int64))
        page = np.array([doc.width, doc.height, doc.width, doc.height])
        return np.stack([x0, y0, x1, y1], axis=1), ((raw < 0) | (raw > page)).any(axis=1)
