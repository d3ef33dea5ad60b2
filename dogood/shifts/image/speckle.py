"""Speckle: dark and light blotches and dots scattered over the page, as dust, toner specks and paper flaws leave."""

from __future__ import annotations

from typing import Any, ClassVar

import cv2
import numpy as np
from pydantic import Field

from dogood.core.document import Document
from dogood.core.papers import Cites
from dogood.shifts import params
from dogood.shifts.base import Shift
from dogood.shifts.image._pixels import ink_tone, paper_tone, pixel_outcome

#: The most blotches per megapixel any level may ask for: the pool every page draws, whatever the level, so a
#: lower density keeps a prefix of the same blotches (the levels of one config share their draws).
MAX_DENSITY = 2000
#: The most dots (single-pixel specks) per megapixel for every blotch per megapixel.
DOTS_PER_BLOTCH = 20


#: Discs that make up one blotch (a clump, so its outline is irregular).
PARTS = 3


def blotch_mask(size: tuple[int, int], centres: np.ndarray, radii: np.ndarray) -> np.ndarray:
    """HxW float32 coverage of blotches: each the union of :data:`PARTS` discs (``centres`` ``(n, PARTS, 2)``,
    ``radii`` ``(n, PARTS)``, pixels), drawn anti-aliased at 1/16 pixel, its rim softened by a 0.6-pixel blur."""
    width, height = size
    canvas = np.zeros((height, width), np.uint8)
    for (x, y), r in zip(centres.reshape(-1, 2).tolist(), radii.reshape(-1).tolist()):
        cv2.circle(canvas, (int(round(x * 16)), int(round(y * 16))), int(round(r * 16)), 255, -1, cv2.LINE_AA, 4)
    return cv2.GaussianBlur(canvas, (0, 0), 0.6).astype(np.float32) / 255.0


class Speckle(Shift):
    """Scatter dark and light blotches and dots over the page, as dust, toner specks and paper flaws leave them.

    Drawn per page, before anything else: a pool of :data:`MAX_DENSITY` blotches per megapixel (place, size 1-3.5
    pixels, dark or light; each a clump of three discs, so its outline is irregular), and one uniform draw per
    pixel for the dots. A level keeps the first ``density`` blotches per megapixel of the pool and ``density`` x
    :data:`DOTS_PER_BLOTCH` dots per megapixel (a pixel is a dark dot when its draw is below that share, a light
    one when it is above one less it), so the levels of one config add specks to the same ones. Dark specks take
    the page's ink tone (the median of its darkest pixels), light ones its paper tone, so a light speck punches a
    hole in a stroke and a dark one lands on paper or ink alike. Pixel-only: words, boxes, entities and the label are
    kept exactly; a grey page stays grey.

    Inspired by RoDLA's speckle (``perturbation/noise.py``, ``apply_speckle``: ocrodeg's ``random_blobs`` at
    densities 1, 3 and 5 per 10,000 pixels, one set of white and one of black blobs of size 5, from Python's and
    numpy's global random state). Differences: five densities (100 to 500 blotches per megapixel, RoDLA's three at
    levels 1, 3 and 5), plus single-pixel dots (twenty per blotch); the specks take the page's own ink and paper
    tones rather than pure black and white; nested across levels and seeded. Written with OpenCV (discs, blur) and
    numpy: ocrodeg is not on PyPI, and augraphy's speckle-like augmentations (``DirtyDrum``, ``Stains``) draw from
    the global random state with no density that nests.

    Counts: ``words``, ``pixels_changed``, ``blotches``, ``dots``.
    """

    name = "speckle"
    family = "image"
    factors: ClassVar[frozenset[str]] = frozenset({"ink", "background", "quality"})
    papers = (Cites("rodla", "noise group: speckle",
                    inspired_by="five densities of ragged blotches plus single-pixel dots in the page's own ink and "
                                "paper tones, nested across levels; seeded"),)
    reported_counts = ("words", "pixels_changed", "blotches", "dots")
    counts_help = {**Shift.counts_help, "pixels_changed": "pixels whose grey level moved by more than 32",
                   "blotches": "blotches placed (dark and light)", "dots": "single-pixel dots placed"}
    #: Levels 1-5: blotches per megapixel. Measured by the ink's contrast lost in the words' boxes.
    severities: ClassVar[dict[int, dict[str, Any]]] = {level: {"density": 100.0 * level} for level in range(1, 6)}

    class Params(params.Params):
        density: params.Real = Field(300.0, ge=0, le=MAX_DENSITY, description="blotches per megapixel (dots: 20 "
                                                                              "times as many)")

    def apply(self, doc: Document, rng: np.random.Generator):
        width, height = doc.width, doc.height
        pool = int(round(MAX_DENSITY * width * height / 1e6))
        centres = rng.uniform([0.0, 0.0], [width - 1.0, height - 1.0], size=(pool, 1, 2))
        radii = rng.uniform(1.0, 3.5, size=(pool, 1))
        dark = rng.random(pool) < 0.5
        # the parts of a clump: around its centre, within its radius, each a share of its size
        parts = centres + rng.uniform(-1.0, 1.0, size=(pool, PARTS, 2)) * radii[..., None] * 0.8
        part_radii = radii * rng.uniform(0.35, 0.8, size=(pool, PARTS))
        dots = rng.random((height, width), dtype=np.float32)
        keep = int(round(self.density * width * height / 1e6))
        pixels = doc.image.to_array()
        paper, ink = paper_tone(pixels), ink_tone(pixels)
        share = self.density * DOTS_PER_BLOTCH / 1e6
        dark_cover = blotch_mask((width, height), parts[:keep][dark[:keep]], part_radii[:keep][dark[:keep]])
        light_cover = blotch_mask((width, height), parts[:keep][~dark[:keep]], part_radii[:keep][~dark[:keep]])
        dark_cover = np.maximum(dark_cover, (dots < share).astype(np.float32))
        light_cover = np.maximum(light_cover, (dots > 1.0 - share).astype(np.float32))
        out = pixels.astype(np.float32)
        if out.ndim == 3:
            dark_cover, light_cover = dark_cover[..., None], light_cover[..., None]
        out = out + (np.minimum(out, ink) - out) * dark_cover  # never lighter where a dark speck falls
        out = out + (np.maximum(out, paper) - out) * light_cover  # never darker where a light one falls
        out = np.clip(out + 0.5, 0, 255).astype(np.uint8)
        counts = {"blotches": keep, "dots": int(np.count_nonzero(dots < share) + np.count_nonzero(dots > 1 - share))}
        return pixel_outcome(doc, out, counts)
