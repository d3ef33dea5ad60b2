"""Center Shift: every word box moves, keeping its size (form-attack paper, OCR level transformations)."""

from __future__ import annotations

import numpy as np
from pydantic import Field

from dogood.document import Document
from dogood.layout import changed_boxes, with_boxes
from dogood.papers import Cites
from dogood.shifts import params
from dogood.shifts.base import Outcome, Shift, SkipDocument


class CenterShift(Shift):
    """Center Shift: every word box moves, keeping its size (form-attack paper, OCR location jitter).

    The centre moves by ``dx = N(0, delta) * box width`` and ``dy = N(0,
    delta) * box height``, rounded to whole pixels. A box pushed past the
    page edge is slid back inside with its size kept (always possible: it
    came from inside the page), so it ends flush with the edge. Texts,
    order, entities and pixels are unchanged: the paper alters OCR locations
    only. Counts: ``eligible`` (words), ``changed`` (boxes that moved),
    ``clipped`` (boxes slid back inside the page). Word boxes only
    (``box_level: word``): a segment box, the union of its jittered words,
    would hide most of the jitter the paper applied to OCR word boxes.

    Parameters: :class:`CenterShift.Params`.
    """

    name = "center_shift"
    family = "layout"
    papers = (Cites("form-attacks", "OCR level transformations: Center Shift and Box Stretch"),)
    box_levels = {"word": "each token gets its own jittered box (the paper's LayoutLM took word boxes)"}

    class Params(params.Params):
        delta: params.Real = Field(0.1, ge=0, description="standard deviation of the shift, as a fraction of the box "
                                                          "size (the paper gives none; 0.1 is a moderate choice)")

    def apply(self, doc: Document, rng: np.random.Generator):
        if not doc.words:
            raise SkipDocument("no words")
        b = doc.boxes
        size = np.stack([b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]], axis=1)
        moved = b[:, :2] + np.rint(rng.normal(0.0, self.delta, size=(len(b), 2)) * size).astype(np.int64)
        top_left = np.clip(moved, 0, np.array([doc.width, doc.height]) - size)
        new = np.concatenate([top_left, top_left + size], axis=1)
        counts = {"eligible": len(b), "changed": changed_boxes(b, new),
                  "clipped": int((top_left != moved).any(axis=1).sum())}
        return Outcome(with_boxes(doc, new), counts)
