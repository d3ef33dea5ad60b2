"""Paper texture: the sheet's fibres and grain showing under the print, darker where the paper is."""

from __future__ import annotations

from typing import Any, ClassVar

import cv2
import numpy as np
from pydantic import Field

from dogood.core.document import Document
from dogood.core.papers import Cites
from dogood.shifts import params
from dogood.shifts.base import Shift
from dogood.shifts.image._pixels import darken, pixel_outcome

#: Fibres per megapixel in the pool every page draws; a level keeps the first ``strength`` share of them, so the
#: levels of one config show more of the same fibres. Few: on real scans (FUNSD's pages, RVL-CDIP's) thin dark
#: structures cover under a thousandth of the blank paper (``bench/measure_paper_texture.py``).
MAX_FIBRES = 5
#: Points along one fibre (a smooth random walk).
FIBRE_POINTS = 24
#: Darkness levels fibres are sorted into (one ``cv2.polylines`` call each).
FIBRE_SHADES = 4
#: The grain's depth at full strength (its standard deviation, a share of the paper's brightness): about 3 grey
#: levels on white, as the grainiest real scans show (their 99th percentile is 12, their median 1).
GRAIN_DEPTH = 0.012
#: Grain scales (Gaussian sigmas in pixels) and their weights, summed into one field of unit spread.
GRAIN = ((0.7, 0.5), (3.0, 0.3), (12.0, 0.2))


def grain_field(rng: np.random.Generator, size: tuple[int, int]) -> np.ndarray:
    """HxW float32 multi-scale grain of zero mean and unit standard deviation: white noise smoothed at each scale
    of :data:`GRAIN` (coarse scales drawn small and upsampled: cheap), each normalised, weighted and summed."""
    width, height = size
    total = np.zeros((height, width), np.float32)
    for sigma, weight in GRAIN:
        step = max(1, int(sigma // 2))
        small = rng.standard_normal((height // step + 2, width // step + 2)).astype(np.float32)
        small = cv2.GaussianBlur(small, (0, 0), max(sigma / step, 0.5))
        field = cv2.resize(small, ((width // step + 2) * step, (height // step + 2) * step),
                           interpolation=cv2.INTER_LINEAR)[:height, :width]
        total += weight * (field - field.mean()) / max(float(field.std()), 1e-6)
    return total / max(float(total.std()), 1e-6)


def fibre_paths(rng: np.random.Generator, size: tuple[int, int], count: int) -> tuple[np.ndarray, np.ndarray]:
    """``count`` fibres: ``(count, FIBRE_POINTS, 2)`` points of smooth random walks (20-150 pixels long, heading
    drifting a little at each step) and a shade in [0, 1) each."""
    width, height = size
    starts = rng.uniform([0.0, 0.0], [width, height], size=(count, 1, 2))
    heading = rng.uniform(0.0, 2 * np.pi, size=(count, 1)) + np.cumsum(
        rng.normal(0.0, 0.12, size=(count, FIBRE_POINTS - 1)), axis=1)
    length = rng.uniform(20.0, 150.0, size=(count, 1))
    shade = rng.random(count)
    steps = (length / (FIBRE_POINTS - 1))[..., None] * np.stack([np.cos(heading), np.sin(heading)], axis=-1)
    points = np.concatenate([starts, starts + np.cumsum(steps, axis=1)], axis=1)
    return points, shade


def fibre_field(size: tuple[int, int], points: np.ndarray, shade: np.ndarray) -> np.ndarray:
    """HxW float32 in [0, 1]: the fibres drawn one pixel wide, anti-aliased, each at ``0.4 + 0.6 * shade`` of full
    darkness (:data:`FIBRE_SHADES` levels; where fibres cross, the darker one shows)."""
    width, height = size
    out = np.zeros((height, width), np.uint8)
    level = np.minimum((shade * FIBRE_SHADES).astype(int), FIBRE_SHADES - 1)
    for k in range(FIBRE_SHADES):
        chosen = points[level == k]
        if not len(chosen):
            continue
        layer = np.zeros_like(out)
        value = int(round(255 * (0.4 + 0.6 * (k + 0.5) / FIBRE_SHADES)))
        cv2.polylines(layer, list(np.round(chosen * 16).astype(np.int32)), False, value, 1, cv2.LINE_AA, 4)
        np.maximum(out, layer, out=out)
    return out.astype(np.float32) / 255.0


class PaperTexture(Shift):
    """Give the page the texture of real paper: grain and fibres that darken the sheet under the print.

    Drawn per page, before anything else: a multi-scale grain field (:func:`grain_field`: smoothed white noise at
    0.7, 3 and 12 pixels) and a pool of :data:`MAX_FIBRES` fibres per megapixel (:func:`fibre_paths`: smooth
    random walks 20-150 pixels long, each with a shade). A level sets ``strength`` in (0, 1]: the page keeps the
    first ``strength`` share of the fibres and is darkened by ``strength`` times (an overall tint of 6%, grain of
    :data:`GRAIN_DEPTH` standard deviation, cut at two, and fibres of up to 18%), multiplied into the page like
    light the paper absorbs, so ink stays as dark as it was and only the paper takes the texture. Level 5 stays
    within what real paper shows in scans (``bench/measure_paper_texture.py``: grain contrast and the share of
    blank paper on thin dark structures, against the blank areas of FUNSD's and RVL-CDIP's pages); dogood
    before issue 40 drew 2,000 fibres per megapixel and grain of 3%, hair-like strands hundreds of times denser
    than any real page's. The levels of one config show
    the same fibres and grain, each more. Pixel-only: words, boxes, entities and the label are kept exactly; a grey
    page stays grey.

    Inspired by RoDLA's texture (``perturbation/noise.py``, ``apply_texture``: ocrodeg's ``make_fibrous_image``
    with 300, 900 or 1500 fibres about 250 pixels long, and ``make_multiscale_noise`` for the ink, blended through
    ``autoinvert``). Differences: RoDLA *re-renders* the page, so the paper becomes 75-100% grey with fibres, the
    ink noisy grey of 0-50%, and the page's own tones are lost; here the texture is multiplied into the page and ink
    keeps its tone. Five levels with nested fibres and one grain field; seeded; vectorised (RoDLA's pure-Python
    fibre loop takes 0.4-1.7 s a page). Written with numpy and OpenCV: ocrodeg is not on PyPI; augraphy's
    ``NoiseTexturize`` and ``BrightnessTexturize`` draw from the global random state, have no fibres and no knob
    that nests across levels.

    Counts: ``words``, ``pixels_changed``, ``fibres``.
    """

    name = "paper_texture"
    family = "image"
    factors: ClassVar[frozenset[str]] = frozenset({"ink", "background", "quality"})
    papers = (Cites("rodla", "noise group: texture",
                    inspired_by="fibres and grain multiplied into the page, so the print keeps its tones (RoDLA "
                                "re-renders the whole page); five levels sharing one texture; seeded"),)
    reported_counts = ("words", "pixels_changed", "fibres")
    counts_help = {**Shift.counts_help, "pixels_changed": "pixels whose grey level moved by more than 32",
                   "fibres": "fibres drawn"}
    #: Levels 1-5: ``strength`` 0.2 ... 1.0. Measured by the ink's contrast lost in the words' boxes.
    severities: ClassVar[dict[int, dict[str, Any]]] = {level: {"strength": round(0.2 * level, 1)}
                                                       for level in range(1, 6)}

    class Params(params.Params):
        strength: params.Real = Field(0.6, gt=0, le=1, description="how much texture: the share of fibres kept and "
                                                                   "the depth of grain, tint and fibres")

    def apply(self, doc: Document, rng: np.random.Generator):
        size = (doc.width, doc.height)
        grain = grain_field(rng, size)
        pool = int(round(MAX_FIBRES * doc.width * doc.height / 1e6))
        points, shade = fibre_paths(rng, size, pool)
        keep = int(round(self.strength * pool))
        fibres = fibre_field(size, points[:keep], shade[:keep])
        amount = self.strength * (0.06 + GRAIN_DEPTH * np.clip(grain, -2.0, 2.0) + 0.18 * fibres)
        out = darken(doc.image.to_array(), amount)
        return pixel_outcome(doc, out, {"fibres": keep})
