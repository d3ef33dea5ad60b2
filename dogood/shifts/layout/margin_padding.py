"""Margin Padding: white margins around the page, so every word moves (form-attack paper, OCR level transformations)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from pydantic import Field

from dogood.core.document import Document, PageImage
from dogood.core.papers import Cites
from dogood.shifts import params
from dogood.shifts.base import Outcome, Shift
from dogood.shifts.layout._relayout import with_boxes


class MarginPadding(Shift):
    """Margin Padding: white margins around the page, so every word moves (form-attack paper).

    The left and right margins are each a random whole number of pixels from
    1 to ``r`` times the page width, the top and bottom ones from 1 to ``r``
    times the page height (at least 1). The page grows by the margins, the
    image is padded with white (255, grayscale or RGB as the page is; the
    paper pads white, as a scanner does) and every box moves by ``(left,
    top)``. Texts, order and entities are unchanged. Pages without words are
    padded too. Counts: ``eligible`` and ``changed`` (words, all moved), and
    the margins ``margin_left``, ``margin_right``, ``margin_top``, ``margin_bottom`` in pixels.

    Parameters: :class:`MarginPadding.Params`.
    """

    name = "margin_padding"
    reported_counts = ("eligible", "changed", "margin_left", "margin_right", "margin_top", "margin_bottom")
    family = "layout"
    factors = frozenset({"box_position", "geometry"})
    #: Severity levels (:mod:`dogood.shifts.levels`): the largest margin, in page sizes; measured by the mean box
    #: displacement.
    severities: ClassVar[dict[int, dict]] = {1: {"r": 0.05}, 2: {"r": 0.1}, 3: {"r": 0.2}, 4: {"r": 0.3},
                                             5: {"r": 0.5}}
    papers = (Cites("form-attacks", "OCR level transformations: Margin Padding"),)

    class Params(params.Params):
        r: params.Real = Field(0.3, ge=0, description="largest margin as a fraction of the page size (paper: 0.3)")

    def apply(self, doc: Document, rng: np.random.Generator):
        most_x, most_y = max(1, int(self.r * doc.width)), max(1, int(self.r * doc.height))
        left, right = (int(v) for v in rng.integers(1, most_x + 1, size=2))
        top, bottom = (int(v) for v in rng.integers(1, most_y + 1, size=2))
        pixels = doc.image.to_array()
        pad = ((top, bottom), (left, right)) + (((0, 0),) if pixels.ndim == 3 else ())
        image = PageImage.from_array(np.pad(pixels, pad, mode="constant", constant_values=255))
        out = with_boxes(doc, doc.boxes + np.array([left, top, left, top]), image=image)
        n = len(doc.words)
        return Outcome(out, {"eligible": n, "changed": n, "margin_left": left, "margin_right": right,
                             "margin_top": top, "margin_bottom": bottom})
