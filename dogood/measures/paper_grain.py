"""How grainy a page's paper looks: grain contrast and fibre density in its blank areas.

What ``paper_texture`` (:mod:`dogood.shifts.image.paper_texture`) adds is held against what real scans show
(``bench/measure_paper_texture.py``: the blank areas of FUNSD's and RVL-CDIP's pages). Blank areas
(:func:`blank_tiles`) are taken on the source page, so a shifted page is measured where its source had no ink:

- ``contrast``: the standard deviation of the grey levels once the page's slow variation is taken off (the page
  minus its Gaussian blur of sigma :data:`GRAIN_SIGMA`): the paper's grain, in grey levels;
- ``fibres``: the share of blank pixels on a thin dark structure (a black top-hat 5 pixels wide of
  :data:`FIBRE_LEVELS` or more): fibres, hairs, specks.

Written here: a few OpenCV filters, no library measures paper grain.
"""

from __future__ import annotations

from typing import NamedTuple

import cv2
import numpy as np

#: Blank tiles' side, in pixels.
TILE = 32
#: A tile is blank when nothing in it (or 4 pixels around) is this much darker than a 15-pixel closing, and its
#: mean grey is above :data:`LIGHT`.
INK_LEVELS = 60
LIGHT = 150
#: The scale (Gaussian sigma, pixels) of the slow variation taken off before the grain is measured.
GRAIN_SIGMA = 6
#: Grey levels of the black top-hat from which a pixel lies on a thin dark structure.
FIBRE_LEVELS = 12


class Grain(NamedTuple):
    """A page's paper grain over its blank area: ``contrast`` (grey levels), ``fibres`` (share of blank pixels),
    ``blank`` (share of the page measured)."""

    contrast: float
    fibres: float
    blank: float


def _luma(pixels: np.ndarray) -> np.ndarray:
    return pixels if pixels.ndim == 2 else cv2.cvtColor(pixels, cv2.COLOR_RGB2GRAY)


def blank_tiles(pixels: np.ndarray) -> np.ndarray:
    """Boolean ``HxW`` mask of a page's blank :data:`TILE`-pixel tiles (see the module doc)."""
    luma = _luma(pixels)
    h, w = luma.shape
    closed = cv2.morphologyEx(luma, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_RECT, (15, 15)))
    ink = cv2.dilate((cv2.subtract(closed, luma) >= INK_LEVELS).astype(np.uint8), np.ones((9, 9), np.uint8))
    rows, cols = h // TILE, w // TILE
    if not rows or not cols:
        return np.zeros((h, w), bool)
    cut = (slice(0, rows * TILE), slice(0, cols * TILE))
    inked = ink[cut].reshape(rows, TILE, cols, TILE).max(axis=(1, 3)) > 0
    light = luma[cut].reshape(rows, TILE, cols, TILE).mean(axis=(1, 3)) > LIGHT
    out = np.zeros((h, w), bool)
    out[cut] = np.repeat(np.repeat(~inked & light, TILE, axis=0), TILE, axis=1)
    return out


def paper_grain(pixels: np.ndarray, blank: np.ndarray | None = None) -> Grain:
    """The :class:`Grain` of ``pixels`` over ``blank`` (default: the page's own :func:`blank_tiles`); zeros where
    nothing is blank."""
    luma = _luma(pixels)
    blank = blank_tiles(luma) if blank is None else blank
    if not blank.any():
        return Grain(0.0, 0.0, 0.0)
    f = luma.astype(np.float32)
    grain = f - cv2.GaussianBlur(f, (0, 0), GRAIN_SIGMA)
    closed = cv2.morphologyEx(luma, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_RECT, (5, 5)))
    tophat = cv2.subtract(closed, luma)
    return Grain(float(grain[blank].std()), float((tophat[blank] >= FIBRE_LEVELS).mean()), float(blank.mean()))
