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
    background. In particular the background carries no trace of the word
    *boxes*: nothing in it is box-shaped (see the guard below and
    :mod:`dogood.measures.halo`, which tests for it).

    Where dogood differs from the paper:

    - Stage 1 uses a soft matte (:func:`dogood.page.ink.ink_matte`: Otsu within
      each word box, alpha solved from paper and ink tone, so anti-aliased
      edges and ink tone survive); Do-GOOD took every non-white pixel inside
      an OCR box.
    - Stage 2 draws one photo per document with the document's generator
      (Do-GOOD took photos in directory order), from COCO photos whose
      licence allows derivatives, and by default scales it to *cover* the
      page (cropped at a random offset) instead of stretching it.
    - A readability guard, which the paper does not have: where a word's ink
      would not stand out from the photo, the photo is lightened (under dark
      ink; darkened under light ink) until the ink stands ``min_contrast``
      grey levels plus one standard deviation of the photo's texture away
      from the photo's mean around the word. The change is laid on the ink
      (dilated from the ink matte by three word heights, feathered by a
      Gaussian one word height wide), so it is a soft cloud that follows
      the text lines; it has no edge at or near any word box (on the 50
      FUNSD test pages the box-edge statistic of :mod:`dogood.measures.halo` at the
      word boxes matches random rectangles; the guard before it drew a pale
      rectangle under every word), and pixels farther than
      :func:`guard_reach` from the ink are the photo's exactly. Busy or dark
      photos thus still carry legible text; plain light ones are left
      untouched. ``min_contrast=0`` gives the paper's behaviour.

    The page becomes RGB.

    Parameters: :class:`NaturalBackground.Params`.

    Counts: ``words``, ``ink_words`` (ink found in the box), ``no_ink``,
    ``guarded`` (words the guard lightened or darkened under); tallies, per
    document: ``photo`` (the COCO id) and ``licence`` (its name), summed in the card.
    """

    name = "natural_background"
    family = "image"
    factors = frozenset({"ink", "background"})
    #: Severity levels (:mod:`dogood.shifts.levels`): the readability guard's target, level 5 without the guard (the
    #: paper's); measured by the photo's contrast under the ink, and the ink's against the photo.
    severities: ClassVar[dict[int, dict]] = {1: {"min_contrast": 150}, 2: {"min_contrast": 100},
                                             3: {"min_contrast": 60}, 4: {"min_contrast": 30}, 5: {"min_contrast": 0}}
    papers = (Cites("do-good", "3.1 (RVL-CDIP-I1, natural images)",
                    inspired_by="a soft ink matte instead of every non-white pixel in an OCR box, one photo drawn per "
                                "document from derivative-friendly licences, scaled to cover the page, and a "
                                "readability guard the paper does not have"),
              Cites("coco"))
    tallies_help: ClassVar[dict[str, str]] = {
        "photo": "the COCO image id of the photo behind each page (pages per photo)",
        "licence": "the Flickr licence of those photos (pages per licence)",
    }
    counts_help = {
        **Shift.counts_help,
        "ink_words": "words whose box held ink, composited on the photo",
        "no_ink": "words whose box held no ink (nothing to composite)",
        "guarded": "words under which the readability guard lightened or darkened the photo",
    }

    class Params(params.Params):
        region: Literal["words", "page"] = Field("words", description=(
            "words: ink inside word boxes (rules and logos outside them go with the background, as in Do-GOOD); "
            "page: all foreground ink"))
        fit: Literal["cover", "stretch"] = Field("cover", description=(
            "cover: scale the photo to cover the page, keeping its aspect, and crop at a random offset; "
            "stretch: resize to the page, as Do-GOOD did"))
        min_contrast: params.Integer = Field(60, ge=0, le=255, description="the readability guard's target (grey "
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
        pixels = doc.image.to_array()
        boxes = doc.boxes
        matte = ink_matte(pixels, boxes, region=self.region)
        pool = self.pool
        photo = pool.choose(rng)
        background = fit_photo(pool.load(photo), doc.width, doc.height, self.fit, rng)
        guarded = 0
        if self.min_contrast and len(boxes):
            background, guarded = readability_guard(background, matte, boxes, self.min_contrast)
        out = composite(background, matte)
        n_ink = int(matte.has_ink.sum())
        counts = {"words": len(doc.words), "ink_words": n_ink, "no_ink": len(doc.words) - n_ink, "guarded": guarded}
        tallies = {"photo": {str(photo.id): 1}, "licence": {photo.license_name: 1}}
        return Outcome(doc.replace(image=PageImage.from_array(out, encoding=self.encoding)), counts, tallies)


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
    under it (statistics over the box grown by half its height) far enough from the ink to read
    (see :func:`readability_guard`); 0 for words without ink or that read already."""
    h, w = background.shape[:2]
    luma = gray(background)
    grow = np.maximum((boxes[:, 3] - boxes[:, 1]) // 2, 2)
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
    """Lighten (under dark ink) or darken (under light ink) the photo around the ink of words that would not read.

    For each word with ink, ``mean`` and ``std`` are the photo's luminance
    statistics over the word box grown by half its height. The photo must
    move towards white (black) by the least weight ``w`` for which
    ``|mean' - ink| >= min_contrast + std'``, where ``mean' = mean + w (255 - mean)``
    and ``std' = (1 - w) std``.

    The weight is laid on the ink, never on the box, at 1/4 of the page's
    size, as the product of two smooth maps:

    - *where*: the ink of the words (of this ink polarity), dilated by a disc
      of radius ``3 sigma`` (:data:`GUARD_DILATE`; the gaps between letters
      and lines close) and feathered by a Gaussian of ``sigma`` = one median
      word height (:data:`GUARD_FEATHER`): a soft cloud that follows the
      text, whose edge lies three word heights from the ink;
    - *how much*: the words' weights, carried by their ink pixels and
      averaged over ``2 sigma`` (a normalised convolution; unguarded words
      weigh 0), so neighbouring words blend instead of meeting at a step.

    Where a word then gets less than its ``w`` on its ink, its weight is
    raised once (up to 2x). The map is brought back to the page's size by
    cubic interpolation and applied in floating point, so it has no kink
    or 1/255 step either. Nothing in it is aligned with a word box
    (:mod:`dogood.measures.halo` tests for that); pixels farther than
    :func:`guard_reach` from every ink pixel are left exactly as they were.
    Returns the new background and how many words were guarded.
    """
    h, w = background.shape[:2]
    boxes = np.asarray(boxes, np.int64).reshape(-1, 4)
    has_ink, ink_level = matte.has_ink, matte.level
    dark, weight = guard_needs(background, boxes, ink_level, has_ink, min_contrast)
    todo = np.flatnonzero(weight > 0)
    if not len(todo):
        return background, 0
    # the weights are smooth: laid, dilated and blurred at 1/f of the page's size
    f = _GUARD_SCALE
    sh, sw = (h + f - 1) // f, (w + f - 1) // f
    radius, sigma = _guard_kernel(boxes[has_ink], f)
    # which low-resolution cells hold ink
    rows, cols = np.divmod(matte.index, w)
    ink_cells = np.zeros((sh, sw), np.float32)
    ink_cells[rows // f, cols // f] = 1
    x0, y0 = boxes[:, 0].clip(0, w) // f, boxes[:, 1].clip(0, h) // f
    x1, y1 = -(-boxes[:, 2].clip(0, w) // f), -(-boxes[:, 3].clip(0, h) // f)  # the boxes, in cells
    cells = (x0, y0, x1, y1)
    out = background
    for lighten in (True, False):
        idx = todo[dark[todo] == lighten]
        if not len(idx):
            continue
        peers = np.flatnonzero(has_ink & (dark == lighten))  # the words of this ink, guarded or not
        ink_here = ink_cells * _paint(np.ones(len(peers)), peers, cells, ink_cells.shape)
        # where: a cloud that follows the ink (dilated by a disc, so the gaps between letters and lines
        # close: the cells within ``radius`` of ink, by a distance transform), feathered
        distance = cv2.distanceTransform((ink_here == 0).astype(np.uint8), cv2.DIST_L2, cv2.DIST_MASK_PRECISE)
        near = (distance <= radius).astype(np.float32)
        cover = cv2.GaussianBlur(near, (0, 0), sigma, borderType=cv2.BORDER_REPLICATE)
        # how much: the words' weights spread along their ink and averaged over 2 sigma (words beside
        # each other blend; unguarded words weigh 0)
        spread = cv2.GaussianBlur(ink_here, (0, 0), 2 * sigma, borderType=cv2.BORDER_REPLICATE)
        target = weight[peers]

        def weights(t):
            level = cv2.GaussianBlur(ink_here * _paint(t, peers, cells, ink_cells.shape), (0, 0), 2 * sigma,
                                     borderType=cv2.BORDER_REPLICATE)
            return np.minimum(cover * np.divide(level, spread, out=np.zeros_like(level), where=spread > 1e-6), 1)

        wmap = weights(target)
        # the blend and the feather take a little off where a word needs more than its neighbours: lay more, once
        got = _mean_on_ink(wmap, ink_cells, [c[peers] for c in cells])
        boost = np.where(target > 0, np.clip(target / np.maximum(got, 1e-6), 1, 2), 1)
        if (boost > 1.01).any():
            wmap = weights(np.minimum(target * boost, 1))
        # back to the page's size, smoothly (cubic: no kinks at the cells' edges) and in float (no 1/255 steps)
        full = cv2.resize(wmap, (w, h), interpolation=cv2.INTER_CUBIC)
        np.clip(full, 0, 1, out=full)
        towards = np.full_like(out, 255 if lighten else 0)  # white, or black
        out = cv2.blendLinear(out, towards, 1 - full, full)  # out (1 - w) + towards w, rounded
    return out, int(len(todo))


def _paint(values, idx, cells, shape) -> np.ndarray:
    """A low-resolution map with ``values[k]`` over the cells of box ``idx[k]`` (the largest where boxes overlap)."""
    x0, y0, x1, y1 = cells
    out = np.zeros(shape, np.float32)
    for i, v in zip(idx.tolist(), np.asarray(values, np.float32).tolist()):
        region = out[y0[i] : y1[i], x0[i] : x1[i]]
        np.maximum(region, v, out=region)
    return out


def _mean_on_ink(wmap, ink_cells, cells) -> np.ndarray:
    """Per box (in cells), the mean of ``wmap`` over its ink cells (1 where it has none)."""
    x0, y0, x1, y1 = cells
    total = cv2.integral(wmap * ink_cells, sdepth=cv2.CV_64F)
    count = cv2.integral(ink_cells, sdepth=cv2.CV_64F)

    def box_sum(t):
        return t[y1, x1] - t[y0, x1] - t[y1, x0] + t[y0, x0]

    n = box_sum(count)
    return np.where(n > 0, box_sum(total) / np.maximum(n, 1), 1.0)


def _guard_kernel(boxes: np.ndarray, f: int) -> tuple[int, float]:
    """The guard's dilation radius and Gaussian sigma, in cells of ``f`` pixels, from the words' median height."""
    height = float(np.median(boxes[:, 3] - boxes[:, 1])) if len(boxes) else 10.0
    sigma = max(GUARD_FEATHER * height / f, 0.5)
    return int(np.ceil(GUARD_DILATE * sigma)), sigma


def guard_reach(boxes: np.ndarray, has_ink: np.ndarray | None = None) -> int:
    """Pixels farther than this from every ink pixel are never changed by :func:`readability_guard`."""
    boxes = np.asarray(boxes, np.int64).reshape(-1, 4)
    if has_ink is not None:
        boxes = boxes[np.asarray(has_ink, bool)]
    f = _GUARD_SCALE
    radius, sigma = _guard_kernel(boxes, f)
    half = (int(round(sigma * 8 + 1)) | 1) // 2  # OpenCV's float Gaussian kernel: 4 sigma each side
    return (radius + half + 3) * f  # and two cells of cubic interpolation, one of rounding


#: The guard lays, dilates and blurs its weights at 1/4 of the page's size (they are smooth).
_GUARD_SCALE = 4

#: The guard's Gaussian feather, in median word heights.
GUARD_FEATHER = 1.0

#: The guard's dilation of the ink, in sigmas of its feather.
GUARD_DILATE = 3.0
