"""Text on a natural photo: Do-GOOD's natural image shift (section 3.1, RVL-CDIP-I1)."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

import cv2
import numpy as np
from pydantic import Field, Strict

from dogood.core.document import PageImage
from dogood.core.papers import Cites
from dogood.page.ink import InkMatte, composite, gray, ink_matte
from dogood.page.photos import photo_credits
from dogood.shifts import params
from dogood.shifts.base import Outcome, Shift
from dogood.shifts.resources import resource

#: COCO licence ids without "NoDerivs": a background swap makes a derivative image.
DERIVATIVE_LICENSES = (1, 2, 4, 5, 7)


class NaturalBackground(Shift):
    """Replace the page background with an MSCOCO photo, keeping the text ink (Do-GOOD 3.1, I1).

    Do-GOOD (section 3.1) builds I1 in two stages: (1) the text pixels are
    located with an OCR tool's boxes and separated from the rest, which is
    background; (2) a randomly chosen MSCOCO photo, resized to the page, takes
    the background's place and the text pixels are put on it.

    What the shift keeps: the words, their boxes, the entities and the label
    (exactly: no text pixel moves), and the ink's shape. What it changes: the
    background, everywhere alike, and (``min_contrast``) the tone of the ink of
    words that would not read. It adds no cue the original lacks: no ink is cut
    at a word box (a rule, a check box or a hatched header bar that a word
    touches is carried whole, as the page shows it; ink that touches no word
    goes whole with the background), and nothing in the background depends on
    where the text is (the cue test ``background``,
    :mod:`dogood.measures.cues`, measures it in every build; box edges:
    :mod:`dogood.measures.halo`).

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
      licence allows derivatives (among them, those large enough to cover
      the page scaled by at most ``max_upscale``, when any is: a 640-pixel
      COCO photo behind a 1000-pixel page is upscaled about twice and
      looks soft, and the card counts such pages, ``upscaled``), and by
      default scales it to *cover* the page (cropped at a random offset)
      instead of stretching it. The photo and the crop are drawn before
      anything else, so the severity levels of a config (seeded alike:
      :attr:`dogood.shifts.base.Shift.draw_key`) put a page on the same
      photo at the same place.
    - The photo shows at ``opacity`` over the page's paper tone, the same
      over the whole page (1: the photo as it is, the paper's). At levels 4
      and 5 a photo lighter than ``max_luma`` (its mean luma) is first
      darkened to it by a gamma curve (:func:`darken`; black, white, texture
      and hues kept, as the scene would look exposed darker): a light photo
      (snow, sky) shown as it is leaves the page nearly as it was, so without
      it levels 1 and 5 differed less on light photos than on dark ones. The
      darkening too is the same over the whole page.
    - Readability comes from the ink itself, as in Do-GOOD's paste, where the
      ink keeps its own tone against the photo: a word whose ink would not
      stand ``min_contrast`` grey levels plus one standard deviation of the
      photo's texture away from the photo's mean around it (:func:`word_needs`)
      gets its ink darkened (lightened for light ink) just enough, or, where
      no ink that dark (light) could reach it, light ink on a dark photo (dark
      on a light one), its texture mirrored (:func:`ink_guard`). The photo is
      never changed around the text: the guard of dogood before issue 40 faded
      it over the text's region, a pale field a model could find the words
      by. ``min_contrast=0`` keeps the ink as the page has it (the paper's).

    The page becomes RGB.

    Parameters: :class:`NaturalBackground.Params`.

    Counts: ``words``, ``ink_words`` (ink found in the box), ``no_ink``,
    ``guarded`` (words whose ink was retoned), ``inverted`` (of them, those
    given ink of the opposite polarity), ``short`` (words that needed the guard
    and still fall short of the target), ``upscaled`` (pages whose photo was scaled up more than
    ``max_upscale``: no photo of the pool was large enough), ``darkened`` (pages whose photo was lighter than
    ``max_luma``, counted when it is below 255); tallies, per
    document: ``photo`` (the COCO id) and ``licence`` (its name), summed in
    the card.
    """

    name = "natural_background"
    requires = ("coco",)
    reported_counts = ("words", "ink_words", "no_ink", "guarded", "inverted", "short", "upscaled", "darkened")
    family = "image"
    min_side = 4  # OpenCV (or augraphy) fails on smaller pages: such a page is skipped, recorded
    factors = frozenset({"ink", "background"})
    cues = frozenset({"background"})
    cue_figures = {"background": ("FUNSD test, 50 pages, funsd-c's levels (bench/measure_cues.py; the fade of dogood "
                                  "before issue 40: 0.86 at level 1)", {1: 0.50, 2: 0.50, 3: 0.50, 4: 0.49, 5: 0.50})}
    #: Severity levels (:mod:`dogood.shifts.levels`): how much of the photo shows, how light it may be (levels 4
    #: and 5 darken a lighter photo: the levels then differ as much on light photos as on dark ones), and the
    #: contrast the ink must keep against it; level 5 the photo at full opacity and the ink as it is (the
    #: paper's composite). Measured on FUNSD test (``bench/measure_natural.py``, ``bench/measure_cues.py``,
    #: ``bench/measure_natural_spread.py``); level 3 is the default.
    severities: ClassVar[dict[int, dict]] = {1: {"opacity": 0.3, "max_luma": 255, "min_contrast": 150},
                                             2: {"opacity": 0.43, "max_luma": 255, "min_contrast": 120},
                                             3: {"opacity": 0.5, "max_luma": 255, "min_contrast": 95},
                                             4: {"opacity": 0.65, "max_luma": 130, "min_contrast": 75},
                                             5: {"opacity": 1.0, "max_luma": 95, "min_contrast": 0}}
    papers = (Cites("do-good", "3.1 (RVL-CDIP-I1, natural images)",
                    inspired_by="a soft ink matte of whole strokes (those that reach into a word box) instead of "
                                "every non-white pixel in an OCR box, one photo drawn per document from "
                                "derivative-friendly licences, scaled to cover the page, shown at a level's opacity "
                                "(a light photo darkened at levels 4 and 5), and the ink of words that would not read "
                                "retoned against the photo"),
              Cites("coco"))
    tallies_help: ClassVar[dict[str, str]] = {
        "photo": "the COCO image id of the photo behind each page (pages per photo)",
        "licence": "the Flickr licence of those photos (pages per licence)",
    }
    counts_help = {
        **Shift.counts_help,
        "ink_words": "words whose box held ink, composited on the photo",
        "no_ink": "words whose box held no ink (nothing to composite)",
        "guarded": "words whose ink was darkened or lightened (or inverted) to stand out from the photo",
        "inverted": "guarded words given ink of the opposite polarity (light ink on a dark photo, or dark on light)",
        "short": "words that needed the guard and still fall short of its target (a mid-grey photo, or ink that "
                 "is one stroke with a word that did not need it)",
        "upscaled": "pages whose photo was scaled up more than max_upscale (no photo of the pool large enough)",
        "darkened": "pages whose photo was lighter than max_luma and was darkened to it (a gamma curve)",
    }

    path_params = ("annotations",)  # a file or folder this machine reads (recorded by name and content hash)
    later_params: ClassVar[dict] = {"max_luma": 255}  # added after 1.5.0 of funsd-c: seeds and photos stay

    class Params(params.Params):
        region: Literal["words", "page"] = Field("words", description=(
            "words: the ink of the words, each stroke that reaches into a word box whole (a rule or shaded bar "
            "a word touches is kept entire; logos, stamps and rules that touch no word go with the background, "
            "as in Do-GOOD); page: all foreground ink"))
        fit: Literal["cover", "stretch"] = Field("cover", description=(
            "cover: scale the photo to cover the page, keeping its aspect, and crop at a random offset; "
            "stretch: resize to the page, as Do-GOOD did"))
        opacity: params.Real = Field(0.5, gt=0, le=1, description=(
            "how much of the photo shows over the page's paper tone, the same everywhere (1: the photo as it is)"))
        max_luma: params.Integer = Field(255, ge=1, le=255, description=(
            "the photo's mean luma at most this: a lighter photo is darkened by a gamma curve (black and white "
            "kept, its texture and colours with them) until it is, before the opacity; 255 keeps its exposure"))
        min_contrast: params.Integer = Field(95, ge=0, le=255, description=(
            "the grey levels (plus the photo's texture) a word's ink must stand from the photo around it; its ink "
            "is retoned until it does; 0 keeps the ink as it is"))
        max_upscale: params.Real = Field(1.25, ge=1, description=(
            "draw among the photos large enough to cover the page scaled by at most this much, when the pool "
            "has any (the card counts the pages whose photo had to be scaled more)"))
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
            f"{'excluded' if not {3, 6} & set(self.licenses) else 'allowed'}), among those large enough to "
            f"cover the page scaled by at most {self.max_upscale:g} when any is (the pages whose photo was "
            "scaled more are counted, `natural_background: upscaled`). The photos used and their "
            "licences are tallied below (`natural_background: photo`, `natural_background: licence`); each keeps its own Flickr licence; the COCO annotations that list them are CC BY 4.0.",
            (f"A photo whose mean luma exceeds {self.max_luma} is darkened to it by a gamma curve "
             "(`natural_background: darkened`), alike everywhere. " if self.max_luma < 255 else "")
            + f"The photo shows at opacity {self.opacity:g} over the page's paper, alike everywhere; "
            + (f"a word whose ink stands less than {self.min_contrast} grey levels (plus the photo's texture) from "
               "the photo around it gets its ink darkened, lightened or inverted until it does "
               "(`natural_background: guarded`, `inverted`); nothing around the text is changed."
               if self.min_contrast else "the ink is kept as the page has it."),
            "The shift keeps the source's words and boxes, exact since no text pixel moves.",
        ]

    def credits(self, tallies: dict[str, dict[str, int]]) -> list[dict]:
        """Each COCO photo the build used: its COCO id, Flickr page, licence, and whether it is ShareAlike."""
        return photo_credits(self.pool, tallies.get("photo", {}))

    # -- the shift ----------------------------------------------------------------
    def apply(self, doc, rng):
        # every draw first (the photo and where it is cropped), so the levels of a config, seeded alike
        # (Shift.draw_key), put the page on the same photo at the same place and differ in opacity and guard alone
        pool = self.pool
        photo = pool.choose_fitting(rng, doc.width, doc.height, self.max_upscale)
        scale = photo_scale(photo.width, photo.height, doc.width, doc.height, self.fit)
        background = fit_photo(pool.load(photo), doc.width, doc.height, self.fit, rng)
        pixels = doc.image.to_array()
        darkened = False
        if self.max_luma < 255:
            background, darkened = darken(background, self.max_luma)
        if self.opacity < 1:
            background = fade(background, paper_tone(pixels), self.opacity)
        boxes = doc.boxes
        matte = ink_matte(pixels, boxes, region=MATTE_REGION[self.region])
        guarded = inverted = short = 0
        if self.min_contrast and len(boxes):
            matte, guarded, inverted, short = ink_guard(background, matte, boxes, self.min_contrast)
        out = composite(background, matte)
        n_ink = int(matte.has_ink.sum())
        counts = {"words": len(doc.words), "ink_words": n_ink, "no_ink": len(doc.words) - n_ink, "guarded": guarded,
                  "inverted": inverted, "short": short, "upscaled": int(scale > self.max_upscale + 1e-9)}
        if self.max_luma < 255:  # counted where the step can darken (the rows of steps that cannot stay as they were)
            counts["darkened"] = int(darkened)
        tallies = {"photo": {str(photo.id): 1}, "licence": {photo.license_name: 1}}
        return Outcome(doc.replace(image=PageImage.from_array(out, encoding=self.encoding)), counts, tallies)


#: The ink each ``region`` takes (:func:`dogood.page.ink.ink_matte`): ``words``, every stroke that reaches into a
#: word box, whole; ``page``, all foreground ink.
MATTE_REGION = {"words": "connected", "page": "page"}


def photo_scale(photo_width: int, photo_height: int, width: int, height: int, fit: str) -> float:
    """How much :func:`fit_photo` enlarges a ``photo_width x photo_height`` photo for a ``width x height`` page
    (``stretch``: along the more enlarged side)."""
    return max(width / photo_width, height / photo_height)


def fit_photo(photo: np.ndarray, width: int, height: int, fit: str, rng: np.random.Generator) -> np.ndarray:
    """An RGB ``height x width`` background from ``photo``: covered and cropped at a random offset, or stretched.
    Enlarged bicubically (sharper than bilinear), reduced by area."""
    ph, pw = photo.shape[:2]
    if fit == "stretch":
        scale_x, scale_y = width / pw, height / ph
        interp = cv2.INTER_AREA if scale_x * scale_y < 1 else cv2.INTER_CUBIC
        return cv2.resize(photo, (width, height), interpolation=interp)
    scale = max(width / pw, height / ph)
    sw, sh = max(width, int(np.ceil(pw * scale))), max(height, int(np.ceil(ph * scale)))
    interp = cv2.INTER_AREA if scale < 1 else cv2.INTER_CUBIC
    big = cv2.resize(photo, (sw, sh), interpolation=interp)
    x0 = int(rng.integers(0, sw - width + 1))
    y0 = int(rng.integers(0, sh - height + 1))
    return np.ascontiguousarray(big[y0 : y0 + height, x0 : x0 + width])


def paper_tone(pixels: np.ndarray) -> np.ndarray:
    """The page's paper colour (per channel, ``uint8``): the median of its pixels as light as its lightest tenth
    (every fourth row and column)."""
    sample = pixels[::4, ::4].reshape(-1, 1 if pixels.ndim == 2 else pixels.shape[2])
    luma = sample.mean(axis=1)
    light = sample[luma >= np.percentile(luma, 90)]
    return np.median(light, axis=0).round().astype(np.uint8)


#: OpenCV's luma weights (``cv2.COLOR_RGB2GRAY``: R, G, B), by which :func:`darken` measures a photo's mean luma.
LUMA_WEIGHTS = np.array([0.299, 0.587, 0.114])


def darken(photo: np.ndarray, max_luma: float) -> tuple[np.ndarray, bool]:
    """``(photo, darkened)``: ``photo`` (RGB or grey ``uint8``) as it is when its mean luma is at most ``max_luma``,
    else through the gamma curve ``255 * (v / 255) ** g`` (one ``g`` for every channel: black and white stay,
    the photo's texture and hues with them; a light scene looks as it would exposed darker) with the smallest
    ``g`` that brings its mean luma to ``max_luma`` or below (the curve as rounded to 8 bits).

    A gamma curve rather than scaling the photo's distance from the paper: a light photo (snow, sky) scaled
    until it is that dark goes black wherever it was not nearly white."""
    channels = photo.reshape(-1, 1 if photo.ndim == 2 else photo.shape[2])
    weights = LUMA_WEIGHTS if channels.shape[1] == 3 else np.ones(1)
    if float(np.asarray(cv2.mean(photo)[: channels.shape[1]]) @ weights) <= max_luma:
        return photo, False
    hist = np.stack([cv2.calcHist([photo], [c], None, [256], [0, 256]).reshape(-1) for c in range(channels.shape[1])])
    per_value = weights @ hist.astype(np.float64) / len(channels)  # each grey value's share of the mean luma
    values = np.arange(256) / 255.0

    def curve(g: float) -> np.ndarray:
        return np.rint(255.0 * values ** g)

    lo, hi = 1.0, 2.0
    while float(per_value @ curve(hi)) > max_luma and hi < 256:
        lo, hi = hi, hi * 2
    for _ in range(40):  # the smallest g (to 1e-9 or so) whose curve brings the mean to max_luma or below
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if float(per_value @ curve(mid)) > max_luma else (lo, mid)
    lut = curve(hi).astype(np.uint8)
    return cv2.LUT(photo, lut), True


def fade(background: np.ndarray, tone: np.ndarray, opacity: float) -> np.ndarray:
    """``background * opacity + tone * (1 - opacity)``, rounded: the photo shown at ``opacity`` over the paper
    (``tone``: a grey or a colour), everywhere alike."""
    paper = np.empty_like(background)
    paper[...] = tone if background.ndim == 3 or tone.size == 1 else round(float(tone.mean()))
    return cv2.addWeighted(background, float(opacity), paper, 1.0 - float(opacity), 0.0)


def word_needs(background: np.ndarray, boxes: np.ndarray, ink_level: np.ndarray, has_ink: np.ndarray,
               min_contrast: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per word, ``(mean, target, gap)``: the photo's mean luma around it (the box grown by half its height,
    or its width if less: a line of text set upright), the contrast its ink must reach (``min_contrast`` plus
    the photo's standard deviation there), and the contrast it has (ink to mean, signed: positive when the
    ink lies on its own side, darker for dark ink, lighter for light ink). Words without ink get gap 255."""
    h, w = background.shape[:2]
    luma = gray(background).astype(np.float64)
    boxes = np.asarray(boxes, np.int64).reshape(-1, 4)
    grow = np.maximum(np.minimum(boxes[:, 3] - boxes[:, 1], boxes[:, 2] - boxes[:, 0]) // 2, 2)  # half a line
    x0, y0 = np.clip(boxes[:, 0] - grow, 0, w - 1), np.clip(boxes[:, 1] - grow, 0, h - 1)
    x1, y1 = np.clip(boxes[:, 2] + grow, x0 + 1, w), np.clip(boxes[:, 3] + grow, y0 + 1, h)
    total, squares = cv2.integral2(luma)
    area = ((x1 - x0) * (y1 - y0)).astype(np.float64)

    def summed(table):
        return table[y1, x1] - table[y0, x1] - table[y1, x0] + table[y0, x0]

    mean = summed(total) / area
    std = np.sqrt(np.maximum(summed(squares) / area - mean ** 2, 0))
    ink = np.asarray(ink_level, np.float64)
    dark = ink < 128  # dark ink wants a light photo; light ink a dark one
    gap = np.where(dark, mean - ink, ink - mean)
    gap[~np.asarray(has_ink, bool)] = 255
    return mean, min_contrast + std, gap


def ink_guard(background: np.ndarray, matte: InkMatte, boxes: np.ndarray,
              min_contrast: int) -> tuple[InkMatte, int, int, int]:
    """Retone the ink of the words that would not read on ``background`` (:func:`word_needs`): ``(matte, guarded,
    inverted, short)``, the matte with new ink colours and the counts of the shift's docstring.

    A word short of its target by some grey levels gets its ink moved that far, darker for dark ink (lighter
    for light ink), when the ink can go that far; otherwise, when the photo has more room on the other side,
    the ink is inverted: its tone set ``target`` beyond the photo's mean on that side, each pixel mirrored
    about the word's ink level (so the ink's own texture stays); else it goes as far as it can (short). The
    ink of a stroke is retoned whole, as one word decides (of the words whose boxes it reaches into, those that
    need the guard or those that read already, whichever hold more of its pixels; of them the one holding most),
    at the most extreme tone its words retoned alike ask for (a rule that a word touches changes with it along
    all its length: no stub of another tone at the box); strokes in no word box
    keep their ink. Counted per word box: ``guarded``, its ink retoned; ``inverted``, inverted; ``short``, it
    needed it and still falls short (out of reach, or its ink is part of a stroke another word decided).
    """
    boxes = np.asarray(boxes, np.int64).reshape(-1, 4)
    mean, target, gap = word_needs(background, boxes, matte.level, matte.has_ink, min_contrast)
    level = matte.level.astype(np.float64)
    dark = level < 128
    todo = gap < target
    if not todo.any():
        return matte, 0, 0, 0
    # where the ink could go on its own side, and how far the photo leaves room on the other
    reach_own = np.where(dark, mean, 255 - mean)
    reach_other = np.where(dark, 255 - mean, mean)
    shift_ok = reach_own >= target
    invert = todo & ~shift_ok & (reach_other > reach_own)
    short = todo & np.where(invert, reach_other < target, ~shift_ok)
    # per word: the new tone of its ink level, and whether it is mirrored
    own_tone = np.where(dark, np.maximum(mean - target, 0), np.minimum(mean + target, 255))
    other_tone = np.where(dark, np.minimum(mean + target, 255), np.maximum(mean - target, 0))
    tone = np.where(invert, other_tone, own_tone)

    h, w = matte.shape
    # strokes: the matte's pixels, pieces up to 2 pixels apart joined (as dogood.page.ink.connected_strokes)
    mask = np.zeros(h * w, np.uint8)
    mask[matte.index] = 255
    joined = cv2.dilate(mask.reshape(h, w), np.ones((3, 3), np.uint8))
    _, labels = cv2.connectedComponents(joined, connectivity=8)
    stroke = labels.reshape(-1)[matte.index]
    # the word box each matte pixel lies in (the last box painted where boxes overlap)
    owner = np.full((h, w), -1, np.int32)
    for i in np.flatnonzero(todo | matte.has_ink).tolist():
        x0, y0, x1, y1 = boxes[i].clip(0, [w, h, w, h]).tolist()
        owner[y0:y1, x0:x1] = i
    word = owner.reshape(-1)[matte.index]
    inside = word >= 0
    # each stroke goes the way most of its pixels' words want: kept (words that read already), or retoned one
    # way (darker, lighter, inverted), to the farthest tone any of its words needs that way: all of them read
    n_strokes = int(labels.max()) + 1
    decided = np.full(n_strokes, -1, np.int64)
    stroke_tone = np.zeros(n_strokes)
    main_stroke = np.full(len(boxes), -1, np.int64)  # per word, the stroke holding most of its ink
    way = np.where(todo, 1 + 2 * invert + (tone > level), 0)  # 0: kept; 1-4: retoned, by polarity and direction
    if inside.any():
        flat, counts = np.unique(stroke[inside].astype(np.int64) * len(boxes) + word[inside], return_counts=True)
        keys = np.stack([flat // len(boxes), flat % len(boxes)], 1)
        by_word = keys[np.lexsort((-counts, keys[:, 1]))]
        firsts = np.r_[True, by_word[1:, 1] != by_word[:-1, 1]]
        main_stroke[by_word[firsts, 1]] = by_word[firsts, 0]
        ways = way[keys[:, 1]]
        pixels = np.bincount(keys[:, 0] * 5 + ways, weights=counts, minlength=n_strokes * 5).reshape(n_strokes, 5)
        chosen = pixels.argmax(axis=1)  # ties: kept first
        mine = (ways == chosen[keys[:, 0]]) & (ways > 0)
        order = np.lexsort((-counts, ~mine, keys[:, 0]))  # by stroke, its chosen way's words first, largest first
        led = keys[order]
        firsts = np.r_[True, led[1:, 0] != led[:-1, 0]]
        leaders = led[firsts]
        retone = way[leaders[:, 1]] == chosen[leaders[:, 0]]
        decided[leaders[retone, 0]] = leaders[retone, 1]
        # the tone: the farthest, in the chosen direction, that any word of the stroke needs to read (those that
        # read already too: the stroke takes their ink along)
        lighter_way = (chosen[keys[:, 0]] - 1) % 2 == 1
        light, dark = np.minimum(mean + target, 255), np.maximum(mean - target, 0)
        wanted = np.where(lighter_way, light[keys[:, 1]], -dark[keys[:, 1]])
        best = np.full(n_strokes, -np.inf)
        np.maximum.at(best, keys[:, 0], wanted)
        stroke_tone = np.where(np.isfinite(best), np.abs(best), 0.0)
    pixel_word = decided[stroke]
    change = pixel_word >= 0
    change[change] = todo[pixel_word[change]]
    if not change.any():
        return matte, 0, 0, 0
    ink = matte.ink.copy()
    wid = pixel_word[change]
    goal = stroke_tone[stroke[change]][:, None]
    values = ink[change].astype(np.float64)
    base = level[np.where(inside[change], word[change], wid)][:, None]  # each word's ink about its own level
    new = np.where(invert[wid][:, None], goal + (base - values), values + (goal - base))
    ink[change] = np.clip(np.rint(new), 0, 255).astype(np.uint8)
    # per word box, what happened to the ink in it: retoned, inverted; a word that needed it and whose main
    # stroke another word decided otherwise, or that could not reach its target, is short
    retoned = np.zeros(len(boxes), bool)
    retoned[word[change & inside]] = True
    flipped = np.zeros(len(boxes), bool)
    turned = change.copy()
    turned[change] = invert[wid]
    flipped[word[turned & inside]] = True
    own = np.flatnonzero(main_stroke >= 0)
    followed = np.zeros(len(boxes), bool)
    leader = decided[main_stroke[own]]
    followed[own] = (leader >= 0) & (way[np.maximum(leader, 0)] == way[own])
    lacking = todo & matte.has_ink & (short | ~followed)
    out = InkMatte(shape=matte.shape, index=matte.index, alpha=matte.alpha, ink=ink, level=matte.level,
                   has_ink=matte.has_ink)
    return out, int(retoned.sum()), int(flipped.sum()), int(lacking.sum())
