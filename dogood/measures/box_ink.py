"""Does each word box still hold its own ink after a pixel-only shift? A per-word pixel check.

For each word, the *ink* is the pixels of its box darker than the box's Otsu
threshold before the shift (at least :data:`MIN_INK` of them, and darker
than mid-grey). After the shift:

- ``kept``: the share of that ink still darker than the paper around it
  (the box's non-ink pixels after the shift, their median less 16 grey
  levels): the word's ink is still there to read;
- ``offset``: the shift ``(dx, dy)``, within ``±reach`` pixels, at which the
  most of the word's ink pattern is dark after the shift (``(0, 0)`` unless
  another offset beats it by more than 0.01): ``(0, 0)`` when the ink did
  not move.

:func:`looseness` gives each box's looseness: its area over the area of the bounding box of the ink inside it
(the annotation's box convention; a warp that keeps the convention keeps each word's looseness).

Written by hand: no library measures whether ink stayed within its boxes.
"""

from __future__ import annotations

from typing import NamedTuple

import cv2
import numpy as np

#: Words with fewer ink pixels than this are not checked (``kept`` is NaN).
MIN_INK = 8


class BoxInk(NamedTuple):
    """Per word: ``kept`` (share of its ink still dark; NaN without ink) and ``offset`` (``dx, dy``)."""

    kept: np.ndarray
    offset: np.ndarray

    @property
    def has_ink(self) -> np.ndarray:
        return ~np.isnan(self.kept)


def _gray(pixels: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(pixels, cv2.COLOR_RGB2GRAY) if pixels.ndim == 3 else pixels


def box_ink(before: np.ndarray, after: np.ndarray, boxes: np.ndarray, reach: int = 3) -> BoxInk:
    """The per-word check of the module docstring for pages ``before`` and ``after`` (same size) and pixel boxes."""
    g0, g1 = _gray(before), _gray(after)
    if g0.shape != g1.shape:
        raise ValueError(f"the pages differ in size: {g0.shape} and {g1.shape}")
    h, w = g0.shape
    boxes = np.asarray(boxes, np.int64).reshape(-1, 4)
    kept = np.full(len(boxes), np.nan)
    offset = np.zeros((len(boxes), 2), np.int64)
    for i, (x0, y0, x1, y1) in enumerate(boxes.tolist()):
        x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
        if x1 - x0 < 2 or y1 - y0 < 2:
            continue
        crop0, crop1 = g0[y0:y1, x0:x1], g1[y0:y1, x0:x1]
        threshold, _ = cv2.threshold(crop0, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
        ink = (crop0 < threshold) & (crop0 < 128)
        if ink.sum() < MIN_INK or (~ink).sum() == 0:
            continue
        paper = float(np.median(crop1[~ink])) - 16
        kept[i] = float((crop1[ink] < paper).mean())
        # the offset at which most of the ink is still dark (ties and near-ties, within 0.01, go to no offset)
        ys, xs = np.nonzero(ink)
        ys, xs = ys + y0, xs + x0
        best, best_share = (0, 0), kept[i] + 0.01
        for dy in range(-reach, reach + 1):
            for dx in range(-reach, reach + 1):
                if dx or dy:
                    share = float((g1[np.clip(ys + dy, 0, h - 1), np.clip(xs + dx, 0, w - 1)] < paper).mean())
                    if share > best_share:
                        best, best_share = (dx, dy), share
        offset[i] = best
    return BoxInk(kept, offset)


def looseness(pixels: np.ndarray, boxes) -> np.ndarray:
    """Per box, its area over the area of the bounding box of the ink inside it (ink: the cores of the page's ink
    matte within the boxes, :func:`dogood.page.warp.ink_mask`); NaN for a box without ink or without area."""
    from dogood.page.warp import ink_bounds, ink_mask

    boxes = np.asarray(boxes, np.int64).reshape(-1, 4)
    out = np.full(len(boxes), np.nan)
    if not len(boxes):
        return out
    bounds = ink_bounds(ink_mask(pixels, boxes), boxes).astype(np.float64)
    area = ((boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])).astype(np.float64)
    ink = (bounds[:, 2] - bounds[:, 0]) * (bounds[:, 3] - bounds[:, 1])
    ok = (bounds[:, 0] >= 0) & (ink > 0) & (area > 0)
    out[ok] = area[ok] / ink[ok]
    return out
