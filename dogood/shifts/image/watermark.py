"""A watermark (a word or a round seal) stamped across the page, semi-transparent, under the ink's darkness."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont
from pydantic import Field

from dogood.core.document import Document
from dogood.core.papers import Cites
from dogood.shifts import params
from dogood.shifts.base import Outcome, Shift
from dogood.shifts.image._pixels import pixel_outcome

KINDS = ("text", "logo")
TEXTS = ("CONFIDENTIAL", "DRAFT", "COPY", "SAMPLE", "VOID", "DO NOT COPY", "ORIGINAL", "APPROVED")
#: Ink colours a watermark may take (RGB).
COLORS = {"gray": (110, 110, 110), "red": (205, 35, 35), "blue": (40, 75, 190), "green": (35, 140, 70)}


def text_mask(text: str, length: float, height: float) -> np.ndarray:
    """A float32 coverage mask of ``text`` set in Pillow's built-in FreeType font (Aileron), bold by a stroke,
    about ``length`` pixels wide and at most about ``height`` pixels high."""
    probe = ImageFont.load_default(size=100)
    x0, y0, x1, y1 = probe.getbbox(text)
    size = max(8, int(round(100 * min(length / max(1, x1 - x0), height / max(1, y1 - y0)))))
    font = ImageFont.load_default(size=size)
    stroke = max(1, size // 18)
    x0, y0, x1, y1 = font.getbbox(text, stroke_width=stroke)
    canvas = Image.new("L", (x1 - x0 + 4, y1 - y0 + 4), 0)
    ImageDraw.Draw(canvas).text((2 - x0, 2 - y0), text, font=font, fill=255, stroke_width=stroke, stroke_fill=255)
    return np.asarray(canvas, np.float32) / 255.0


def logo_mask(diameter: float) -> np.ndarray:
    """A float32 coverage mask of a round seal ``diameter`` pixels across: two rings and a five-pointed star."""
    size = int(math.ceil(diameter)) + 4
    shift = 4  # OpenCV's fractional bits: coordinates in 1/16 pixel
    canvas = np.zeros((size, size), np.uint8)
    c = (size - 1) / 2
    r = diameter / 2

    def fixed(v: float) -> int:
        return int(round(v * (1 << shift)))

    centre = (fixed(c), fixed(c))
    cv2.circle(canvas, centre, fixed(r * 0.96), 255, max(1, int(r * 0.07)), cv2.LINE_AA, shift)
    cv2.circle(canvas, centre, fixed(r * 0.78), 255, max(1, int(r * 0.03)), cv2.LINE_AA, shift)
    points = []
    for k in range(10):
        rho = r * (0.55 if k % 2 == 0 else 0.22)
        theta = -math.pi / 2 + k * math.pi / 5
        points.append((fixed(c + rho * math.cos(theta)), fixed(c + rho * math.sin(theta))))
    cv2.fillPoly(canvas, [np.array(points, np.int32)], 255, cv2.LINE_AA, shift)
    return canvas.astype(np.float32) / 255.0


def place(mask: np.ndarray, angle: float, centre: tuple[float, float], size: tuple[int, int]) -> np.ndarray:
    """``mask`` turned by ``angle`` degrees about its centre and put with its centre at ``centre`` on a
    ``(width, height)`` page (what falls off the page is cut), in one ``cv2.warpAffine``."""
    h, w = mask.shape
    matrix = cv2.getRotationMatrix2D(((w - 1) / 2, (h - 1) / 2), angle, 1.0)
    matrix[:, 2] += np.array(centre) - np.array([(w - 1) / 2, (h - 1) / 2])
    return cv2.warpAffine(mask, matrix, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=0)


class Watermark(Shift):
    """Stamp a large word or a round seal across the page in one colour, semi-transparent; words kept in place.

    Drawn per page, before anything else: the kind (``kinds``: a word of ``texts`` or a seal: two rings and a
    star), the word, the colour (``colors``), the angle (a word: 20-60 degrees either way, across the page; a
    seal: any), the place (the page's centre moved by up to 10% of its size) and the size (``size`` times
    0.85-1.15: the word's length as a share of the page's diagonal, its letters at most a quarter of the page's
    shorter side high; the seal's diameter as a share of the shorter side).
    Levels change only ``opacity``, so the levels of one config stamp the same mark, each darker. The word is set
    in Pillow's built-in FreeType font (no font file needed), the seal drawn with OpenCV, both anti-aliased, turned
    and placed with one ``cv2.warpAffine``. The mark is printed *multiplied* with the page, as ink on paper
    combines: the paper under it takes its colour, ink stays as dark as it was (a dark word over a watermark is
    still dark). Words, boxes, entities and the label are kept; a grey page becomes RGB when the colour drawn is
    not grey.

    Inspired by RoDLA's watermark (``perturbation/content.py``, ``add_watermark``: a fixed red sentence in PIL's
    default bitmap font on a canvas of 1/2, 1/4 or 1/6 of the page, upscaled 2-6x with LANCZOS, turned by any
    angle with the corners cut, and alpha-composited at 20%, 60% or 100%). Differences: a real watermark's size,
    across the page and legible, where RoDLA's blurry sentence often lies partly or wholly off the page (7-12% of
    its draws change nothing) and changes 0.4-2% of the pixels; five opacities (0.2 to 0.8) at one drawn shape,
    so the level sets only how dark it is; multiplied, so ink is never painted over (RoDLA's level 3 paints opaque
    red over the text); words or seals in several colours; seeded. Written with Pillow and OpenCV: augraphy's
    ``WaterMark`` has no opacity knob (a fixed 0.5), draws its shape from the global random state and its
    ``obfuscate`` method erases the page under the mark.

    Counts: ``words``, ``pixels_changed``, ``covered`` (pixels the mark covers by half or more); tallies: ``mark``
    (the word stamped, or ``logo``).
    """

    name = "watermark"
    family = "image"
    factors: ClassVar[frozenset[str]] = frozenset({"ink", "background", "quality"})
    papers = (Cites("rodla", "content interference group: watermark",
                    inspired_by="a legible word or seal across the page, printed multiplied so ink stays dark; "
                                "five opacities at one drawn shape; seeded"),)
    reported_counts = ("words", "pixels_changed", "covered")
    counts_help = {**Shift.counts_help, "pixels_changed": "pixels whose grey level moved by more than 32",
                   "covered": "pixels the mark covers by half or more"}
    tallies_help: ClassVar[dict[str, str]] = {"mark": "the word stamped on each page, or logo"}
    #: Levels 1-5: the mark's opacity. Measured by the ink's contrast lost in the words' boxes.
    severities: ClassVar[dict[int, dict[str, Any]]] = {
        1: {"opacity": 0.2}, 2: {"opacity": 0.35}, 3: {"opacity": 0.5}, 4: {"opacity": 0.65}, 5: {"opacity": 0.8}}

    class Params(params.Params):
        opacity: params.Real = Field(0.5, gt=0, le=1, description="how much of the mark's colour the paper under "
                                                                   "it takes (1: all of it)")
        kinds: params.Names = Field(KINDS, description="what may be stamped: text (a word of texts), logo (a round "
                                                       "seal)")
        texts: params.Names = Field(TEXTS, description="the words a text mark is drawn from")
        colors: params.Names = Field(("gray", "red", "blue"), description="the colours a mark is drawn from: "
                                                                          + ", ".join(COLORS))
        size: params.Real = Field(0.7, gt=0, le=1.5, description="a word's length as a share of the page's "
                                                                 "diagonal, a seal's diameter as a share of its "
                                                                 "shorter side (times 0.85-1.15)")

    def setup(self) -> None:
        if not self.kinds or any(k not in KINDS for k in self.kinds):
            raise ValueError(f"kinds must be among {', '.join(KINDS)}, got {list(self.kinds)}")
        if not self.colors or any(c not in COLORS for c in self.colors):
            raise ValueError(f"colors must be among {', '.join(COLORS)}, got {list(self.colors)}")
        if "text" in self.kinds and (not self.texts or not all(t.strip() for t in self.texts)):
            raise ValueError("texts must hold at least one word that is not blank")

    def draw(self, rng: np.random.Generator, size: tuple[int, int]) -> dict[str, Any]:
        """The mark for a ``(width, height)`` page: every draw, in a fixed order, none depending on the opacity."""
        width, height = size
        kind = self.kinds[int(rng.integers(len(self.kinds)))]
        text = self.texts[int(rng.integers(len(self.texts)))] if self.texts else ""
        color = self.colors[int(rng.integers(len(self.colors)))]
        tilt = rng.uniform(20.0, 60.0) * (1.0 if rng.integers(2) else -1.0)
        spin = rng.uniform(0.0, 360.0)
        dx, dy = rng.uniform(-0.1, 0.1, size=2)
        scale = self.size * rng.uniform(0.85, 1.15)
        centre = ((width - 1) / 2 + dx * width, (height - 1) / 2 + dy * height)
        if kind == "text":
            return {"mark": text, "color": color, "centre": centre, "angle": tilt,
                    "mask": text_mask(text, scale * math.hypot(width, height), 0.25 * min(width, height))}
        return {"mark": "logo", "color": color, "centre": centre, "angle": spin,
                "mask": logo_mask(scale * min(width, height))}

    def apply(self, doc: Document, rng: np.random.Generator):
        mark = self.draw(rng, (doc.width, doc.height))
        coverage = place(mark["mask"], mark["angle"], mark["centre"], (doc.width, doc.height))
        pixels = doc.image.to_array()
        color = np.array(COLORS[mark["color"]], np.float32) / 255.0
        grey = bool(np.all(color == color[0]))
        if pixels.ndim == 2 and not grey:
            pixels = cv2.cvtColor(pixels, cv2.COLOR_GRAY2RGB)
        out = np.array(pixels)
        x, y, w, h = cv2.boundingRect((coverage > 0).astype(np.uint8))  # only where the mark lies
        if w and h:
            alpha = self.opacity * coverage[y:y + h, x:x + w]
            if pixels.ndim == 2:
                factor = 1.0 - alpha * (1.0 - color[0])
            else:
                factor = 1.0 - alpha[..., None] * (1.0 - color)
            region = pixels[y:y + h, x:x + w].astype(np.float32) * factor + 0.5
            out[y:y + h, x:x + w] = np.clip(region, 0, 255).astype(np.uint8)
        result = pixel_outcome(doc, out, {"covered": int(np.count_nonzero(coverage >= 0.5))})
        return Outcome(result.doc, result.counts, {"mark": {mark["mark"]: 1}})
