"""A cast shadow: something between the light and the page darkens part of it, up to a soft, wavy edge."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import cv2
import numpy as np
from pydantic import Field

from dogood.core.document import Document
from dogood.core.papers import Cites
from dogood.shifts import params
from dogood.shifts.base import Shift
from dogood.shifts.image._pixels import darken, pixel_outcome

#: Grid spacing (pixels) on which the shadow is computed before bilinear upsampling: its edge is soft at that scale.
STEP = 8


class Shadow(Shift):
    """Cast a shadow across the page from one side, with a soft, slightly wavy edge; words kept in place.

    Drawn per page, before anything else: the side the shadow comes from (its direction, within 30 degrees of
    one of the four sides), how far in its edge reaches (20-65% of the page across that direction), a gentle wave
    of the edge (two sine terms of up to 3% of the page), the width of the penumbra (2-8% of the page) and a falloff
    inside (the shadow deepens by up to a quarter further from its edge). A level sets only ``strength``: the share
    of light taken away in the umbra, multiplied into paper and ink alike. The levels of one config cast the same
    shadow, each darker. The shadow is computed on a grid every :data:`STEP` pixels and upsampled with OpenCV.
    Pixel-only: words, boxes, entities and the label are kept exactly; a grey page stays grey.

    RoDLA has no shadow of its own; the nearest is the dark branch of its ``apply_illumination``
    (``perturbation/inconsistency.py``: a random five-point polygon, blurred, its light multiplied by 1/2, 1/4 or
    1/6 at levels 1-3, i.e. strengths 0.5, 0.75, 0.83), which inspired this shift. Differences: the shape of a cast
    shadow, one soft edge across the page rather than a patch; five strengths, 0.15 to 0.75; seeded. Written with
    numpy and OpenCV: augraphy's ``ShadowCast`` has the shape, but blurs a full-size mask with a 101-301 pixel
    Gaussian (about 1.2 s a FUNSD page here) and draws from the global random state.

    Counts: ``words``, ``pixels_changed``, ``shaded`` (pixels in the umbra: darkened by at least half the
    strength).
    """

    name = "shadow"
    family = "image"
    factors: ClassVar[frozenset[str]] = frozenset({"ink", "background", "quality"})
    papers = (Cites("rodla", "inconsistency distortion group: illumination, dark branch",
                    inspired_by="a shadow cast from one side with a soft wavy edge, where RoDLA darkens a random "
                                "polygon; five strengths sharing one shadow; seeded"),)
    reported_counts = ("words", "pixels_changed", "shaded")
    counts_help = {**Shift.counts_help, "pixels_changed": "pixels whose grey level moved by more than 32",
                   "shaded": "pixels darkened by at least half the strength"}
    #: Levels 1-5: ``strength`` 0.15 ... 0.75. Measured by the ink's contrast lost in the words' boxes.
    severities: ClassVar[dict[int, dict[str, Any]]] = {level: {"strength": round(0.15 * level, 2)}
                                                       for level in range(1, 6)}

    class Params(params.Params):
        strength: params.Real = Field(0.45, gt=0, le=1, description="the share of light the shadow takes away "
                                                                    "in its umbra")

    def shade(self, rng: np.random.Generator, size: tuple[int, int]) -> np.ndarray:
        """The HxW float32 shadow (1 in the deepest umbra) for a ``(width, height)`` page; fixed draw order."""
        width, height = size
        direction = rng.integers(4) * math.pi / 2 + rng.uniform(-math.pi / 6, math.pi / 6)
        normal = np.array([math.cos(direction), math.sin(direction)])  # points into the shadow
        along = np.array([-normal[1], normal[0]])
        reach = rng.uniform(0.2, 0.65)
        waves = rng.uniform(0.0, 0.03, 2) * max(size)
        periods = rng.uniform(0.4, 1.2, 2) * max(size)
        phases = rng.uniform(0.0, 2 * math.pi, 2)
        penumbra = rng.uniform(0.02, 0.08) * max(size)
        falloff = rng.uniform(0.0, 0.25)

        gw, gh = width // STEP + 2, height // STEP + 2
        xs, ys = np.meshgrid(np.arange(gw) * STEP, np.arange(gh) * STEP)
        points = np.stack([xs, ys], axis=-1).astype(np.float64)
        corners = np.array([[0, 0], [width, 0], [0, height], [width, height]], np.float64)
        depth = corners @ normal
        far, near = depth.max(), depth.min()  # the shadow comes in from the far side (largest depth)
        edge = far - reach * (far - near)
        t = points @ along
        wave = sum(a * np.sin(2 * math.pi * t / p + f) for a, p, f in zip(waves, periods, phases))
        inside = points @ normal - edge + wave  # > 0 in the shadow
        soft = 1.0 / (1.0 + np.exp(-np.clip(inside / (penumbra / 4.0), -30, 30)))
        deeper = 1.0 - falloff + falloff * np.clip(inside / max(far - near, 1.0), 0.0, 1.0) * 4.0
        coarse = (soft * np.clip(deeper, 0.0, 1.0)).astype(np.float32)
        return cv2.resize(coarse, (gw * STEP, gh * STEP), interpolation=cv2.INTER_LINEAR)[:height, :width]

    def apply(self, doc: Document, rng: np.random.Generator):
        mask = self.shade(rng, (doc.width, doc.height))
        out = darken(doc.image.to_array(), self.strength * mask)
        return pixel_outcome(doc, out, {"shaded": int(np.count_nonzero(mask >= 0.5))})
