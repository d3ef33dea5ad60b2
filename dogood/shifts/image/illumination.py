"""Uneven illumination: a bright (glare) or dark patch with a soft edge somewhere on the page."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import cv2
import numpy as np
from pydantic import Field

from dogood.core.document import Document
from dogood.core.papers import Cites
from dogood.shifts import params
from dogood.shifts.base import Outcome, Shift
from dogood.shifts.image._pixels import darken, lighten, pixel_outcome, smooth_mask

KINDS = ("dark", "bright")
#: Vertices of a patch's outline (a star-shaped polygon: never self-intersecting).
VERTICES = 12


class Illumination(Shift):
    """Light the page unevenly: one patch, brighter (glare) or darker, with a soft edge, words kept in place.

    Drawn per page, before anything else: the kind (``kinds``: ``dark`` or ``bright``), the patch's centre
    (anywhere on the page), its radius (15-40% of the page's diagonal), an outline of :data:`VERTICES` points at
    random distances (60-100% of the radius) in order of angle around the centre (star-shaped, so it never crosses
    itself) and the softness of its edge (a Gaussian of 15-35% of the radius). A level sets only ``strength``: a
    dark patch multiplies the light by ``1 - strength`` at its core, a bright one moves every pixel ``strength`` of
    the way to white, ink and paper alike, so the print under glare fades but is never wiped out (at ``strength``
    0.75, black ink is still 64 grey levels darker than the paper). The levels of one config light the same patch,
    each more. The mask is drawn at a quarter of the page's size with OpenCV and upsampled. Pixel-only: words,
    boxes, entities and the label are kept exactly; a grey page stays grey.

    Inspired by RoDLA's illumination (``perturbation/inconsistency.py``, ``apply_illumination``: a polygon of five
    random points, often self-intersecting, blurred with a 50-pixel Gaussian; a coin picks brightness x51/x102/x153
    or x1/2, x1/4, x1/6 inside it at levels 1-3). Differences: RoDLA's bright branch saturates every pixel of 5 or
    more to white, erasing the text in the region at every level alike; here glare grows with the level and leaves
    the ink readable. The patch's outline cannot cross itself and its edge scales with its size. Five strengths,
    0.15 to 0.75 (RoDLA's dark branch: 0.5, 0.75, 0.83); seeded. Written with OpenCV (polygon, blur, resize): augraphy's
    ``LightingGradient`` lights the whole page in a gradient and ``ReflectedLight`` only brightens, both from the
    global random state.

    Counts: ``words``, ``pixels_changed``, ``patch`` (pixels at least half inside the patch); tallies: ``kind``.
    """

    name = "illumination"
    family = "image"
    factors: ClassVar[frozenset[str]] = frozenset({"ink", "background", "quality"})
    papers = (Cites("rodla", "inconsistency distortion group: illumination",
                    inspired_by="a star-shaped patch whose glare or shade grows with the level and never erases the "
                                "text; five strengths sharing one patch; seeded"),)
    reported_counts = ("words", "pixels_changed", "patch")
    counts_help = {**Shift.counts_help, "pixels_changed": "pixels whose grey level moved by more than 32",
                   "patch": "pixels at least half inside the lit or shaded patch"}
    tallies_help: ClassVar[dict[str, str]] = {"kind": "pages with a dark or a bright patch"}
    #: Levels 1-5: ``strength`` 0.15 ... 0.75. Measured by the ink's contrast lost in the words' boxes.
    severities: ClassVar[dict[int, dict[str, Any]]] = {level: {"strength": round(0.15 * level, 2)}
                                                       for level in range(1, 6)}

    class Params(params.Params):
        strength: params.Real = Field(0.45, gt=0, le=1, description="at the patch's core: the share of light a "
                                                                    "dark patch takes away, or of the way to white "
                                                                    "a bright one goes")
        kinds: params.Names = Field(KINDS, description="which patches may be drawn: dark, bright")

    def setup(self) -> None:
        if not self.kinds or any(k not in KINDS for k in self.kinds):
            raise ValueError(f"kinds must be among {', '.join(KINDS)}, got {list(self.kinds)}")

    def patch(self, rng: np.random.Generator, size: tuple[int, int]) -> tuple[str, np.ndarray]:
        """The kind and the HxW float32 mask (1 at the core) for a ``(width, height)`` page; fixed draw order."""
        width, height = size
        kind = self.kinds[int(rng.integers(len(self.kinds)))]
        centre = rng.uniform([0.0, 0.0], [width - 1.0, height - 1.0])
        radius = rng.uniform(0.15, 0.4) * math.hypot(width, height)
        angles = np.sort(rng.uniform(0.0, 2 * math.pi, VERTICES))
        reach = radius * rng.uniform(0.6, 1.0, VERTICES)
        softness = radius * rng.uniform(0.15, 0.35)
        outline = centre + np.stack([np.cos(angles), np.sin(angles)], axis=1) * reach[:, None]

        def draw(canvas: np.ndarray, scale: int) -> None:
            cv2.fillPoly(canvas, [np.round(outline / scale * 16).astype(np.int32)], 255, cv2.LINE_AA, 4)

        return kind, smooth_mask(size, draw, scale=4, blur=softness)

    def apply(self, doc: Document, rng: np.random.Generator):
        kind, mask = self.patch(rng, (doc.width, doc.height))
        pixels = doc.image.to_array()
        out = darken(pixels, self.strength * mask) if kind == "dark" else lighten(pixels, self.strength * mask)
        result = pixel_outcome(doc, out, {"patch": int(np.count_nonzero(mask >= 0.5))})
        return Outcome(result.doc, result.counts, {"kind": {kind: 1}})
