"""The page turned by a small angle, the canvas grown around it, every word box carried through the turn."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import cv2
import numpy as np
from pydantic import Field

from dogood.core.document import Document, PageImage, Word
from dogood.core.papers import Cites
from dogood.page.affine import CANVASES, affine_boxes, affine_ink_boxes, rotation, warp_page
from dogood.page.quads import affine_quads, clip_quads, quad_tuples
from dogood.page.warp import ink_mask
from dogood.shifts import params
from dogood.shifts.base import Outcome, Shift
from dogood.shifts.image._pixels import paper_tone

FILLS = ("paper", "black", "white")
INTERPOLATIONS = {"linear": cv2.INTER_LINEAR, "cubic": cv2.INTER_CUBIC}


class RotatePage(Shift):
    """Turn the page by a random angle; the canvas grows around it and every word box is re-projected.

    The angle's size is drawn in ``[min_angle, max_angle]`` degrees and its sign by a coin, both before anything
    else, so the five levels of one config turn a page the same way, each further. With ``canvas: grow`` (the
    default) the canvas grows to the turned page's bounds; the corners it uncovers are filled with the page's own
    paper colour (the median of the pixels above Otsu's threshold), or black or white (``fill``). Each word box
    becomes the bounds of its turned outline (:func:`dogood.page.affine.affine_boxes`, outward-rounded), so it
    still holds all of its word's ink, with its margins turned along rather than re-fitted to the ink. Texts,
    word order, entities, links, the label and QA are kept; a grey page stays grey.

    Inspired by RoDLA's rotation (``perturbation/spatial.py``, ``apply_rotation``: an integer angle from {-5..5},
    ±{5..10} or ±{10..15} degrees at its levels 1-3, through detectron2's ``RotationTransform`` with the canvas
    expanded). Differences: five levels (1-3, 3-6, 6-9, 9-12, 12-15 degrees, continuous), so level 1 never draws
    0 degrees (RoDLA's level 1 is the identity one time in 11); the corners are paper-coloured, not black, unless
    ``fill: black``; boxes are the turned outlines' bounds on the grown canvas, where detectron2 clips them to
    the *original* page size (RoDLA's rotated boxes are cut at the right and bottom); seeded per document; bicubic
    resampling by default (Tesseract reads these ~100 dpi scans better than after bilinear blur).

    With quads asked for (``quads: true``), each word's quad is its four corners turned exactly
    (:func:`dogood.page.quads.affine_quads`).

    Counts: ``words``, ``angle_centidegrees`` (the size of the angle drawn, in 1/100 degree) and, with
    ``reproject: ink``, ``no_ink`` (words whose box held no ink: their outline's bounds); tallies: ``direction``
    (``clockwise`` or ``counter-clockwise``: with the angle, each page's turn can be undone).
    """

    name = "rotate"
    family = "image"
    factors: ClassVar[frozenset[str]] = frozenset({"geometry", "box_position", "box_size", "ink", "background",
                                                   "quality"})
    papers = (Cites("rodla", "spatial transformation group: rotation",
                    inspired_by="five continuous angle ranges, never zero; paper-coloured corners; boxes bounded on "
                                "the grown canvas instead of clipped to the original page; seeded"),)
    reported_counts = ("words", "angle_centidegrees", "no_ink")
    counts_help = {**Shift.counts_help, "angle_centidegrees": "the size of the angle drawn, in 1/100 degree "
                                                            "(over the documents: the mean angle)"}
    tallies_help: ClassVar[dict[str, str]] = {"direction": "pages turned clockwise or counter-clockwise"}
    #: Levels 1-5: the angle's range in degrees. Measured by the words' mean box displacement (the card's).
    severities: ClassVar[dict[int, dict[str, Any]]] = {
        1: {"min_angle": 1.0, "max_angle": 3.0}, 2: {"min_angle": 3.0, "max_angle": 6.0},
        3: {"min_angle": 6.0, "max_angle": 9.0}, 4: {"min_angle": 9.0, "max_angle": 12.0},
        5: {"min_angle": 12.0, "max_angle": 15.0}}

    class Params(params.Params):
        min_angle: params.Real = Field(6.0, ge=0, le=45, description="smallest angle, in degrees")
        max_angle: params.Real = Field(9.0, ge=0, le=45, description="largest angle, in degrees (the sign is a "
                                                                     "coin flip)")
        fill: Literal[FILLS] = Field("paper", description="what fills the uncovered corners: the page's paper "
                                                          "colour, black (as RoDLA) or white")
        canvas: Literal[CANVASES] = Field("grow", description="grow: the canvas grows around the turned page; "
                                                              "page: the page keeps its size, the turned page "
                                                              "shrinks to fit")
        interpolation: Literal[tuple(INTERPOLATIONS)] = Field("cubic", description="pixel interpolation")
        reproject: Literal["box", "ink"] = Field("box", description="box: each box becomes its turned outline's "
                                                                    "bounds (its margins kept); ink: the bounds of "
                                                                    "its turned ink (tight, as OCR draws boxes)")

    def setup(self) -> None:
        if self.min_angle > self.max_angle:
            raise ValueError(f"min_angle ({self.min_angle:g}) is larger than max_angle ({self.max_angle:g})")

    def draw_angle(self, rng: np.random.Generator) -> float:
        """The signed angle, in degrees: a sign and a place in the range, drawn in that order."""
        sign = 1.0 if rng.integers(2) else -1.0
        return sign * (self.min_angle + rng.random() * (self.max_angle - self.min_angle))

    def apply(self, doc: Document, rng: np.random.Generator):
        angle = self.draw_angle(rng)
        pixels = doc.image.to_array()
        fill = paper_tone(pixels) if self.fill == "paper" else (0 if self.fill == "black" else 255)
        matrix, size = rotation((doc.width, doc.height), angle, self.canvas)
        turned = warp_page(pixels, matrix, size, fill, INTERPOLATIONS[self.interpolation])
        counts = {"words": len(doc.words), "angle_centidegrees": int(round(abs(angle) * 100))}
        if self.reproject == "ink" and doc.words:
            boxes, counts["no_ink"] = affine_ink_boxes(doc.boxes, matrix, size, ink_mask(pixels, doc.boxes))
        else:
            boxes = affine_boxes(doc.boxes, matrix, size)
        quads = quad_tuples(clip_quads(affine_quads(doc.quads, matrix), size)) if doc.has_quads else None
        words = tuple(Word(w.text, tuple(int(v) for v in b), None if quads is None else quads[i])
                      for i, (w, b) in enumerate(zip(doc.words, boxes)))
        out = doc.replace(image=PageImage.from_array(turned), words=words)
        return Outcome(out, counts, {"direction": {"counter-clockwise" if angle > 0 else "clockwise": 1}})
