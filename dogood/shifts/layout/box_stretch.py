"""Box Stretch: each of a word box's four coordinates moves on its own (form-attack paper, OCR level transformations)."""

from __future__ import annotations

import numpy as np
from pydantic import Field

from dogood.document import Document
from dogood.layout import changed_boxes, with_boxes
from dogood.papers import Cites
from dogood.shifts import params
from dogood.shifts.base import Outcome, Shift, SkipDocument


def _span(lo: np.ndarray, hi: np.ndarray, page: int, least: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ordered, inside ``[0, page]``, at least ``least`` pixels long (1 for boxes that had a size)."""
    lo, hi = np.clip(np.minimum(lo, hi), 0, page), np.clip(np.maximum(lo, hi), 0, page)
    short = hi - lo < least
    hi = np.where(short, np.minimum(lo + least, page), hi)
    lo = np.where(short, hi - least, lo)
    return lo, hi


class BoxStretch(Shift):
    """Box Stretch: each of a word box's four coordinates moves on its own (form-attack paper).

    ``x0`` and ``x1`` move by ``N(0, delta) * box width``, ``y0`` and ``y1``
    by ``N(0, delta) * box height`` (four independent draws, rounded to whole
    pixels), so boxes grow, shrink and shift. Sides that cross are swapped, a
    box that had a size keeps at least 1 pixel per side, and every box is
    clipped to the page. Texts, order, entities and pixels are unchanged.
    Counts: ``eligible`` (words), ``changed`` (boxes that changed),
    ``clipped`` (boxes that reached past the page edge). Word boxes only
    (``box_level: word``), as :class:`~dogood.shifts.layout.center_shift.CenterShift`.

    Parameters: :class:`BoxStretch.Params`.
    """

    name = "box_stretch"
    family = "layout"
    papers = (Cites("form-attacks", "OCR level transformations: Center Shift and Box Stretch"),)
    box_levels = {"word": "each token gets its own jittered box (the paper's LayoutLM took word boxes)"}

    class Params(params.Params):
        delta: params.Real = Field(0.1, ge=0, description="standard deviation of each coordinate's move, as a "
                                                          "fraction of the box size (the paper gives none)")

    def apply(self, doc: Document, rng: np.random.Generator):
        if not doc.words:
            raise SkipDocument("no words")
        b = doc.boxes
        w, h = b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]
        raw = b + np.rint(rng.normal(0.0, self.delta, size=b.shape) * np.stack([w, h, w, h], axis=1)).astype(np.int64)
        x0, x1 = _span(raw[:, 0], raw[:, 2], doc.width, (w > 0).astype(np.int64))
        y0, y1 = _span(raw[:, 1], raw[:, 3], doc.height, (h > 0).astype(np.int64))
        new = np.stack([x0, y0, x1, y1], axis=1)
        page = np.array([doc.width, doc.height, doc.width, doc.height])
        outside = ((raw < 0) | (raw > page)).any(axis=1)
        counts = {"eligible": len(b), "changed": changed_boxes(b, new), "clipped": int(outside.sum())}
        return Outcome(with_boxes(doc, new), counts)
