"""Motion blur: the page smeared along one random direction, as a camera or scanner that shook would smear it."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
from pydantic import Field

from dogood.core.document import Document
from dogood.core.papers import Cites
from dogood.shifts import params
from dogood.shifts.base import Shift
from dogood.shifts.image._pixels import filtered, pixel_outcome


def line_kernel(length: float, angle: float, samples_per_pixel: int = 16) -> np.ndarray:
    """A normalised motion-blur kernel: a segment of ``length`` pixels through the kernel's centre at ``angle``
    radians, anti-aliased by splatting points along it bilinearly onto the grid (sub-pixel lengths and any
    direction; the kernel's centre of mass is its centre, so the page does not move)."""
    size = 2 * int(math.ceil(length / 2)) + 3  # odd, with a pixel to spare on each side for the splat
    centre = (size - 1) / 2
    n = max(2, int(math.ceil(length * samples_per_pixel)))
    t = (np.arange(n) + 0.5) / n - 0.5
    xs = centre + t * length * math.cos(angle)
    ys = centre + t * length * math.sin(angle)
    x0, y0 = np.floor(xs).astype(int), np.floor(ys).astype(int)
    fx, fy = xs - x0, ys - y0
    kernel = np.zeros((size, size), np.float64)
    for dx, dy, w in ((0, 0, (1 - fx) * (1 - fy)), (1, 0, fx * (1 - fy)), (0, 1, (1 - fx) * fy), (1, 1, fx * fy)):
        np.add.at(kernel, (y0 + dy, x0 + dx), w)
    return kernel / kernel.sum()


class MotionBlur(Shift):
    """Blur the page along one straight direction drawn per page (vibration, camera shake), words kept in place.

    The kernel is a segment ``length`` pixels long through its centre, in a direction drawn uniformly over all
    directions (:func:`line_kernel`, anti-aliased), applied with OpenCV's ``filter2D`` (borders replicated). The
    direction is the only draw, made before anything else, so the levels of one config smear a page the same way,
    each further. Pixel-only and centred: words, boxes, entities and the label are kept exactly; a grey page stays
    grey.

    Inspired by RoDLA's vibration (``perturbation/blur.py``, ``apply_vibration``: a horizontal line kernel of 3, 9
    or 15 pixels at levels 1-3, turned by ``cv2.warpAffine`` by an angle in [-45, 45] degrees). Differences: five
    levels (3, 6, 9, 12, 15 pixels: RoDLA's three at 1, 3 and 5); any direction, not only within 45 degrees of
    horizontal; the segment is splatted at sub-pixel precision, where turning a pixel row with bilinear
    interpolation shortens and thins the line at oblique angles; borders replicated rather than reflected; seeded.
    Written with numpy (the kernel) and OpenCV (the filter): OpenCV has no motion-blur kernel, and imgaug's or
    albumentations' would add a dependency for a dozen lines.

    Counts: ``words``, ``pixels_changed``.
    """

    name = "motion_blur"
    family = "image"
    factors: ClassVar[frozenset[str]] = frozenset({"ink", "background", "quality"})
    papers = (Cites("rodla", "blur group: vibration",
                    inspired_by="five kernel lengths (RoDLA's 3, 9, 15 px at levels 1, 3, 5), any direction, a "
                                "sub-pixel anti-aliased segment, seeded"),)
    reported_counts = ("words", "pixels_changed")
    counts_help = {**Shift.counts_help, "pixels_changed": "pixels whose grey level moved by more than 32"}
    #: Levels 1-5: the smear's length in pixels. Measured by the ink's contrast lost in the words' boxes.
    severities: ClassVar[dict[int, dict[str, Any]]] = {level: {"length": 3.0 * level} for level in range(1, 6)}

    class Params(params.Params):
        length: params.Real = Field(9.0, gt=0, le=100, description="length of the smear, in pixels")

    def apply(self, doc: Document, rng: np.random.Generator):
        angle = rng.uniform(0.0, math.pi)
        pixels = doc.image.to_array()
        return pixel_outcome(doc, filtered(pixels, line_kernel(self.length, angle)))
