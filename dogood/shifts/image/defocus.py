"""Defocus: the page seen through a lens focused off the paper, each point spread over a small disc."""

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


def disc_kernel(radius: float, supersample: int = 8) -> np.ndarray:
    """A normalised disc (pillbox) of ``radius`` pixels, each cell weighted by the share of it inside the disc
    (sampled ``supersample`` times a side), so fractional radii grow the blur smoothly."""
    half = int(math.ceil(radius))
    size = 2 * half + 1
    offsets = (np.arange(size * supersample) + 0.5) / supersample - half - 0.5
    inside = (offsets[None, :] ** 2 + offsets[:, None] ** 2) <= radius * radius
    cover = inside.reshape(size, supersample, size, supersample).mean(axis=(1, 3))
    return cover / cover.sum()


class Defocus(Shift):
    """Blur the page as an out-of-focus lens does: every pixel spread evenly over a disc, words kept in place.

    The point spread function of a defocused lens is a disc (a pillbox), not a Gaussian: edges lose their
    sharpness evenly out to ``radius`` pixels. The kernel is a disc of that radius, its edge cells weighted by
    their area inside it (:func:`disc_kernel`), applied with OpenCV's ``filter2D`` (borders replicated). Nothing is
    drawn: the blur is the same on every page. Pixel-only and centred: words, boxes, entities and the label are
    kept exactly; a grey page stays grey.

    Inspired by RoDLA's defocus (``perturbation/blur.py``, ``apply_defocus``: ``cv2.GaussianBlur`` with kernel size
    and sigma 1, 3 and 5 at levels 1-3). Differences: a disc, the shape of defocus, where RoDLA's truncated
    Gaussians are nearly 3x3 and 5x5 box filters; five levels (radius 0.6, 1, 1.5, 2, 2.5 pixels: RoDLA's levels
    2 and 3 are about radius 1 and 2), where RoDLA's level 1 (a 1x1 kernel) leaves the page unchanged. Written
    with numpy (the kernel) and OpenCV (the filter): ImageNet-C's defocus kernel is the same idea, but its code is
    not a maintained library.

    Counts: ``words``, ``pixels_changed``.
    """

    name = "defocus"
    family = "image"
    factors: ClassVar[frozenset[str]] = frozenset({"ink", "background", "quality"})
    papers = (Cites("rodla", "blur group: defocus",
                    inspired_by="a disc point spread function instead of a small Gaussian; five radii, the first "
                                "already a blur (RoDLA's level 1 is the identity)"),
              Cites("imagenet-c", "defocus blur", inspired_by="a disc kernel, sized for ~100 dpi document scans"))
    reported_counts = ("words", "pixels_changed")
    counts_help = {**Shift.counts_help, "pixels_changed": "pixels whose grey level moved by more than 32"}
    #: Levels 1-5: the disc's radius in pixels. Measured by the ink's contrast lost in the words' boxes.
    severities: ClassVar[dict[int, dict[str, Any]]] = {
        1: {"radius": 0.6}, 2: {"radius": 1.0}, 3: {"radius": 1.5}, 4: {"radius": 2.0}, 5: {"radius": 2.5}}

    class Params(params.Params):
        radius: params.Real = Field(2.0, gt=0, le=50, description="radius of the blur disc, in pixels")

    def apply(self, doc: Document, rng: np.random.Generator):
        return pixel_outcome(doc, filtered(doc.image.to_array(), disc_kernel(self.radius)))
