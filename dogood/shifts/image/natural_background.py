"""Text on a natural photo: Do-GOOD's natural image shift (section 3.1, RVL-CDIP-I1)."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

import cv2
import numpy as np
from pydantic import Field, Strict

from dogood.page.photos import photo_credits
from dogood.core.document import PageImage
from dogood.page.ink import InkMatte, composite, gray, ink_matte
from dogood.core.papers import Cites
from dogood.shifts.resources import resource
from dogood.shifts import params
from dogood.shifts.base import Outcome, Shift

#: COCO licence ids without "NoDerivs": a background swap makes a derivative image.
DERIVATIVE_LICENSES = (1, 2, 4, 5, 7)


class NaturalBackground(Shift):
    """Replace the page background with an MSCOCO photo, keeping the text ink (Do-GOOD 3.1, I1).

    Do-GOOD (section 3.1) builds I1 in two stages: (1) the text pixels are
    located with an OCR tool's boxes and separated from the rest, which is
    background; (2) a randomly chosen MSCOCO photo, resized to the page, takes
    the background's place and the text pixels are put on it.

    What the shift keeps: the words, their boxes, the entities and the label
    (exactly: no text pixel moves), and the ink itself (full-coverage ink
    pixels keep the page's exact value). What it changes: only the
    background. It adds no cue the original lacks: no ink is cut at a word
    box (a rule, a check box or a hatched header bar that a word touches is
    carried whole, as the page shows it; ink that touches no word goes whole
    with the background), and nothing in the background traces the word
    boxes or the text lines (see the guard below and
    :mod:`dogood.measures.halo`, which tests for box edges).

    Where dogood differs from the paper:

    - Stage 1 uses a soft matte (:func:`dogood.page.ink.ink_matte`: Otsu in
      tiles of the page, alpha solved from paper and ink tone, so
      anti-aliased edges and ink tone survive) and takes each stroke whole:
      ``region="words"`` carries every stroke that reaches into a word box
      (:func:`dogood.page.ink.connected_strokes`), ``region="page"`` all the
      page's ink. Do-GOOD took every non-white pixel inside an OCR box, which
      leaves stubs of rules and hard-edged pieces of shaded bars at the
      boxes' edges.
    - Stage 2 draws one photo per document with the document's generator
      (Do-GOOD took photos in directory order), from COCO photos whose
      licence allows derivatives, and by default scales it to *cover* the
      page (cropped at a random offset) instead of stretching it. The photo
      and the crop are drawn before anything else, so the severity levels
      of a config (seeded alike: :attr:`dogood.shifts.base.Shift.draw_key`)
      put a page on the same photo at the same place and differ in the
      guard's strength alone.
    - A readability guard, which the paper does not have: where a word's ink
      would not stand out from the photo, the photo is faded towards white
      (under dark ink; towards black under light ink) until the ink stands
      ``min_contrast`` grey levels plus one standard deviation of the
      photo's texture away from the photo's mean around the word. The fade
      is one smooth field over the region where the text sits (each word's
      need spread seven word heights and feathered by two,
      :func:`readability_guard`): it follows neither the word boxes nor the
      text lines, has no edge, and pixels farther than :func:`guard_reach`
      from every word box are the photo's exactly. Busy or dark photos thus
      still carry legible text; plain light ones are left untouched.
      ``min_contrast=0`` gives the paper's behaviour.

    The page becomes RGB.

    Parameters: :class:`NaturalBackground.Params`.

    Counts: ``words``, ``ink_words`` (ink found in the box), ``no_ink``,
    ``guarded`` (words the guard faded the photo around), ``short`` (guarded
    words still short of the target: ink too light to reach it on any
    photo); tallies, per document: ``photo`` (the COCO id) and ``licence``
    (its name), summed in the card.
    """

    name = "natural_background"
    requires = ("coco",)
    reported_counts = ("words", "ink_words", "no_ink", "guarded", "short")
    family = "image"
    min_side = 4  # OpenCV (or augraphy) fails on smaller pages: such a page is skipped, recorded
    factors = frozenset({"ink", "background"})
    #: Severity levels (:mod:`dogood.shifts.levels`): the readability guard's target, level 5 without the guard (the
    #: paper's); measured by the photo's contrast under the ink, and the ink's against the photo. Chosen so that
    #: Tesseract's recall steps down evenly on FUNSD test (``bench/measure_natural.py``); level 3 is the default.
    severities: ClassVar[dict[int, dict]] = {1: {"min_contrast": 150}, 2: {"min_contrast": 120},
                                             3: {"min_contrast": 95}, 4: {"min_contrast": 75}, 5: {"min_contrast": 0}}
    papers = (Cites("do-good", "3.1 (RVL-CDIP-I1, natural images)",
                    inspired_by="a soft ink matte of whole strokes (those that reach into a word box) instead of "
                                "every non-white pixel in an OCR box, one photo drawn per document from "
                                "derivative-friendly licences, scaled to cover the page, and a readability guard "
                                "(a smooth fade of the photo where the text sits) the paper does not have"),
              Cites("coco"))
    tallies_help: ClassVar[dict[str, str]] = {
        "photo": "the COCO image id of the photo behind each page (pages per photo)",
        "licence": "the Flickr licence of those photos (pages per licence)",
    }
    counts_help = {
        **Shift.counts_help,
        "ink_words": "words whose box held ink, composited on the photo",
        "no_ink": "words whose box held no ink (nothing to composite)",
        "guarded": "words around which the readability guard faded the photo",
        "short": "guarded words whose ink still falls short of the guard's contrast target (ink too light or too "
                 "dark to reach it on any photo)",
    }

    path_params = ("annotations",)  # a file or folder this machine reads (recorded by name and content hash)

    class Params(params.Params):
        region: Literal["words", "page"] = Field("words", description=(
            "words: the ink of the words, each stroke that reaches into a word box whole (a rule or shaded bar "
            "a word touches is kept entire; logos, stamps and rules that touch no word go with the background, "
            "as in Do-GOOD); page: all foreground ink"))
        fit: Literal["cover", "stretch"] = Field("cover", description=(
            "cover: scale the photo to cover the page, keeping its aspect, and crop at a random offset; "
            "stretch: resize to the page, as Do-GOOD did"))
        min_contrast: params.Integer = Field(95, ge=0, le=255, description="the readability guard's target (grey "
                                                                          "levels); 0 turns the guard off")
        licenses: params.Integers = Field(DERIVATIVE_LICENSES, description="COCO licence ids the photos may carry "
                                                                           "(default: all but NoDerivs, 3 and 6)")
        min_size: params.Integer = Field(256, description="shortest side, in pixels, of the photos drawn")
        categories: params.OptionalNames = Field(None, description="COCO category names; only photos showing one "
                                                                   "of them are drawn (null: any)")
        annotations: Annotated[Annotated[str, Strict()] | tuple[Annotated[str, Strict()], ...] | None,
                               params.Expect("null, a path or a list of paths")] = Field(
            None, description="COCO annotation file(s) of the pool (null: the shared data's, else COCO 2017 val, "
                              "downloaded once; only drawn photos are fetched)")
        encoding: Literal["jpeg", "png"] = Field("jpeg", description="how the new page is stored (jpeg: quality "
                                                                     "95, like the photos)")

    def setup(self) -> None:
        self.categories = self.categories or None

    # -- the photo pool -------------------------------------------------------
    @property
    def pool(self):
        """The COCO photo pool, the resource ``coco-photos`` (:mod:`dogood.shifts.resources`; cached per process)."""
        return resource("coco-photos", annotations=self.annotations, licenses=self.licenses, min_size=self.min_size,
                        categories=self.categories)

    def prepare(self) -> None:
        """Read the COCO annotation file(s) once (downloading them on first use)."""
        self.pool  # noqa: B018 - cached per process

    def card_notes(self, schema: str = "funsd") -> list[str]:
        d = self.pool.describe()
        files = ", ".join(f"`{f['name']}` (sha256 `{f['sha256'][:12]}…`)" for f in d["files"])
        licences = ", ".join(f"{name} {n}" for name, n in d["licenses"].items())
        return [
            f"`natural_background`: one MSCOCO 2017 photo per document, drawn with the document's seed from "
            f"{d['photos']} photos of {files} (licences: {licences}; NoDerivs licences "
            f"{'excluded' if not {3, 6} & set(self.licenses) else 'allowed'}). The photos used and their "
            "licences are tallied below (`natural_background: photo`, `natural_background: licence`); each keeps its own Flickr licence; the COCO annotations that list them are CC BY 4.0.",
            "The shift keeps the source's words and boxes, exact since no text pixel moves.",
        ]

    def credits(self, tallies: dict[str, dict[str, int]]) -> list[dict]:
        """Each COCO photo the build used: its COCO id, Flickr page, licence, and whether it is ShareAlike."""
        return photo_credits(self.pool, tallies.get("photo", {}))

    # -- the shift ----------------------------------------------------------------
    def apply(self, doc, rng):
        # every draw first (the photo and where it is cropped), so the levels of a config, seeded alike
        # (Shift.draw_key), put the page on the same photo at the same place and differ in the guard alone
        pool = self.pool
        photo = pool.choose(rng)
        background = fit_photo(pool.load(photo), doc.width, doc.height, self.fit, rng)
        pixels = doc.image.to_array()
        boxes = doc.boxes
        matte = ink_matte(pixels, boxes, region=MATTE_REGION[self.region])
        guarded = short = 0
        if self.min_contrast and len(boxes):
            background, guarded = readability_guard(background, matte, boxes, self.min_contrast)
            if guarded:
                short = int((guard_needs(background, boxes, matte.level, matte.has_ink, self.min_contrast)[1]
                             > SHORT_WEIGHT).sum())
        out = composite(background, matte)
        n_ink = int(matte.has_ink.sum())
        counts = {"words": len(doc.words), "ink_words": n_ink, "no_ink": len(doc.words) - n_ink, "guarded": guarded,
                  "short": short}
        tallies = {"photo": {str(photo.id): 1}, "licence": {photo.license_name: 1}}
        return Outcome(doc.replace(image=PageImage.from_array(out, encoding=self.encoding)), counts, tallies)


#: The ink each ``region`` takes (:func:`dogood.page.ink.ink_matte`): ``words``, every stroke that reaches into a
#: word box, whole; ``page``, all foreground ink.
MATTE_REGION = {"words": "connected", "page": "page"}

#: A word still needing more than this weight after the guard counts as ``short`` (its ink cannot reach the
#: target contrast on any photo: light grey ink against white).
SHORT_WEIGHT = 0.02


def fit_photo(photo: np.ndarray, width: int, height: int, fit: str, rng: np.random.Generator) -> np.ndarray:
    """An RGB ``height x width`` background from ``photo``: covered and cropped at a random offset, or stretched."""
    ph, pw = photo.shape[:2]
    if fit == "stretch":
        scale_x, scale_y = width / pw, height / ph
        interp = cv2.INTER_AREA if scale_x * scale_y < 1 else cv2.INTER_LINEAR
        return cv2.resize(photo, (width, height), interpolation=interp)
    scale = max(width / pw, height / ph)
    sw, sh = max(width, int(np.ceil(pw * scale))), max(height, int(np.ceil(ph * scale)))
    interp = cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR
    big = cv2.resize(photo, (sw, sh), interpolation=interp)
    x0 = int(rng.integers(0, sw - width + 1))
    y0 = int(rng.integers(0, sh - height + 1))
    return np.ascontiguousarray(big[y0 : y0 + height, x0 : x0 + width])


def guard_needs(background: np.ndarray, boxes: np.ndarray, ink_level: np.ndarray, has_ink: np.ndarray,
                min_contrast: float) -> tuple[np.ndarray, np.ndarray]:
    """Per word, ``(dark, weight)``: whether its ink is dark, and the least weight ``w`` that moves the photo
    under it (statistics over the box grown by half its height, or its width if less: a line of text set
    upright) far enough from the ink to read
    (see :func:`readability_guard`); 0 for words without ink or that read already."""
    h, w = background.shape[:2]
    luma = gray(background)
    grow = np.maximum(np.minimum(boxes[:, 3] - boxes[:, 1], boxes[:, 2] - boxes[:, 0]) // 2, 2)  # half a line
    gx0, gy0 = np.clip(boxes[:, 0] - grow, 0, w - 1), np.clip(boxes[:, 1] - grow, 0, h - 1)
    gx1, gy1 = np.clip(boxes[:, 2] + grow, gx0 + 1, w), np.clip(boxes[:, 3] + grow, gy0 + 1, h)
    mean = np.zeros(len(boxes))
    std = np.zeros(len(boxes))
    for i in np.flatnonzero(has_ink).tolist():
        m, sd = cv2.meanStdDev(luma[gy0[i] : gy1[i], gx0[i] : gx1[i]])
        mean[i], std[i] = m[0, 0], sd[0, 0]
    ink = ink_level.astype(np.float64)
    dark = ink < 128  # dark ink wants a light photo; light ink a dark one
    # distance the photo must gain away from the ink, and how far it can go
    gap = np.where(dark, mean - ink, ink - mean)
    room = np.where(dark, 255 - mean, mean)
    need = min_contrast + std - gap
    weight = np.clip(need / np.maximum(room + std, 1e-6), 0, 1)
    weight[~has_ink | (need <= 0)] = 0
    return dark, weight


def readability_guard(
    background: np.ndarray, matte: InkMatte, boxes: np.ndarray, min_contrast: int
) -> tuple[np.ndarray, int]:
    """Fade the photo towards white (under dark ink; towards black under light ink) over the region where words
    would not read: the whole region, not the text lines.

    For each word with ink, ``mean`` and ``std`` are the photo's luminance
    statistics over the word box grown by half a line (:func:`guard_needs`). The photo must
    move towards white (black) by the least weight ``w`` for which
    ``|mean' - ink| >= min_contrast + std'``, where ``mean' = mean + w (255 - mean)``
    and ``std' = (1 - w) std`` (:func:`guard_needs`).

    The weights make one smooth field, :func:`guard_field`, at 1/8 of the
    page's size: each word's ``w`` painted over its box, spread by a disc
    of :data:`GUARD_DILATE` median word heights (a grey-level dilation: the
    largest need within reach wins, so every word gets at least its own)
    and feathered by a Gaussian of :data:`GUARD_FEATHER` word heights.
    Lines, blocks and the gaps between them merge into one region a
    dozen word heights larger than the text around it, with no edge,
    kink or 1/255 step (brought back to the page's size by cubic
    interpolation and applied in floating point): a part of the photo
    faded where the text sits, like a lighter patch of the photo, neither
    a box nor a line shape (:mod:`dogood.measures.halo` tests for boxes).
    Pixels farther than :func:`guard_reach` from every word box are left
    exactly as they were. Returns the new background and how many words
    needed the guard.
    """
    boxes = np.asarray(boxes, np.int64).reshape(-1, 4)
    dark, weight = guard_needs(background, boxes, matte.level, matte.has_ink, min_contrast)
    todo = np.flatnonzero(weight > 0)
    if not len(todo):
        return background, 0
    h, w = background.shape[:2]
    out = background
    for lighten in (True, False):
        idx = todo[dark[todo] == lighten]
        if not len(idx):
            continue
        field = guard_field((h, w), boxes, weight, idx, boxes[matte.has_ink])
        full = cv2.resize(field, (w, h), interpolation=cv2.INTER_CUBIC)  # smooth: no kinks at the cells' edges
        np.clip(full, 0, 1, out=full)
        towards = np.full_like(out, 255 if lighten else 0)  # white, or black
        out = cv2.blendLinear(out, towards, 1 - full, full)  # out (1 - w) + towards w, rounded
    return out, int(len(todo))


def guard_field(shape: tuple[int, int], boxes: np.ndarray, weight: np.ndarray, idx: np.ndarray,
                scale_boxes: np.ndarray) -> np.ndarray:
    """The guard's weights at 1/:data:`GUARD_SCALE` of the page's size (float32, 0 to 1): words ``idx``'s
    ``weight`` painted over their boxes (a little more, so the feather takes nothing off a word's own),
    dilated by a disc and feathered by a Gaussian sized from ``scale_boxes``' median height
    (:func:`_guard_kernel`)."""
    h, w = shape
    f = GUARD_SCALE
    sh, sw = -(-h // f), -(-w // f)
    radius, sigma = _guard_kernel(scale_boxes)
    painted = np.zeros((sh, sw), np.float32)
    x0, y0 = boxes[:, 0].clip(0, w) // f, boxes[:, 1].clip(0, h) // f
    x1, y1 = -(-boxes[:, 2].clip(0, w) // f), -(-boxes[:, 3].clip(0, h) // f)  # the boxes, in cells
    for i in idx.tolist():
        region = painted[y0[i] : max(y1[i], y0[i] + 1), x0[i] : max(x1[i], x0[i] + 1)]
        np.maximum(region, min(float(weight[i]) * _FEATHER_LOSS, 1.0), out=region)
    disc = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * radius + 1, 2 * radius + 1))
    spread = cv2.dilate(painted, disc, borderType=cv2.BORDER_CONSTANT, borderValue=0)
    return np.minimum(cv2.GaussianBlur(spread, (0, 0), sigma, borderType=cv2.BORDER_REPLICATE), 1.0)


def _guard_kernel(boxes: np.ndarray) -> tuple[int, float]:
    """The guard's dilation radius and Gaussian sigma, in cells of :data:`GUARD_SCALE` pixels, from the words'
    median height."""
    height = float(np.median(boxes[:, 3] - boxes[:, 1])) if len(boxes) else 10.0
    sigma = max(GUARD_FEATHER * height / GUARD_SCALE, 0.5)
    return int(np.ceil(GUARD_DILATE * height / GUARD_SCALE)), sigma


def guard_reach(boxes: np.ndarray, has_ink: np.ndarray | None = None) -> int:
    """Pixels farther than this (in x or in y) from every word box are never changed by
    :func:`readability_guard`."""
    boxes = np.asarray(boxes, np.int64).reshape(-1, 4)
    if has_ink is not None:
        boxes = boxes[np.asarray(has_ink, bool)]
    radius, sigma = _guard_kernel(boxes)
    half = (int(round(sigma * 8 + 1)) | 1) // 2  # OpenCV's float Gaussian kernel: 4 sigma each side
    return (radius + half + 4) * GUARD_SCALE  # a cell to round the box out, two of cubic interpolation, one spare


#: The guard lays, dilates and blurs its weights at 1/8 of the page's size (they are smooth at a larger scale).
GUARD_SCALE = 8

#: The guard's dilation, in median word heights: wider than the gaps between lines and between blocks, and
#: than three sigmas of the feather plus the half line around a word its statistics are taken over.
GUARD_DILATE = 7.0

#: The guard's Gaussian feather, in median word heights.
GUARD_FEATHER = 2.0

#: What the words' weights are raised by, so the feather takes nothing off a word's own: a word's box grown
#: by half a line lies at least 3 sigma inside the plateau of its weight, which holds 1 - exp(-9/2) of a 2-D
#: Gaussian's mass.
_FEATHER_LOSS = 1 / (1 - np.exp(-4.5))
