"""A page photographed on a surface, its word boxes carried along exactly: a captured-page I2."""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated, Any, ClassVar, Literal

import cv2
import numpy as np
from pydantic import Field, Strict

from dogood.core.document import Document, PageImage, Word
from dogood.core.papers import Cites
from dogood.page.camera import (
    MAX_FOLDS,
    STEP,
    Camera,
    HeightField,
    capture_map,
    encode_jpeg,
    light_direction,
    light_field,
    page_alpha,
    page_region,
    render,
    reuse_freed_memory,
    surface_homography,
    texture,
)
from dogood.page.photos import SURFACE_CATEGORIES, photo_credits
from dogood.page.quads import quad_tuples, warp_quads
from dogood.page.warp import INTERPOLATIONS, REPROJECT, carry_boxes, coarse_grid, upsample_grid
from dogood.shifts import params
from dogood.shifts.base import Outcome, Shift
from dogood.shifts.resources import resource

#: Strength of the sharpening after bilinear resampling (``interpolation: sharpened``): closest to bicubic on FUNSD.
SHARPEN = 0.1

@lru_cache(maxsize=256)
def photo_at_half(pool, photo) -> np.ndarray:
    """``pool.load_reduced(photo, 2)``, read-only, the last 256 cached per process (about 230 KB each: 35 MB
    for the default pool's 153 photos): a build draws each page's photo from that pool, and decoding one
    costs about 3 ms of the page's 30."""
    pixels = pool.load_reduced(photo, 2)
    pixels.setflags(write=False)
    return pixels


#: The contact shadow's blur (sigma) and the page's lift that moves it away from the light, in the frame's longer
#: side: a few pixels on a FUNSD page, as a sheet lying on a desk shows.
CONTACT_BLUR = 0.004
CONTACT_LIFT = 0.003


def contact_shift(light: np.ndarray, size: tuple[int, int]) -> tuple[float, float]:
    """Where the contact shadow falls, in frame pixels: away from ``light`` (a unit vector toward it,
    :func:`dogood.page.camera.light_direction`), as far as a sheet lifted :data:`CONTACT_LIFT` of the longer side
    casts it."""
    lift = CONTACT_LIFT * max(size)
    return float(-light[0] / -light[2] * lift), float(-light[1] / -light[2] * lift)


def surface_crop(pixels: np.ndarray, place, full_width: int) -> np.ndarray:
    """The part of ``pixels`` (a photo decoded at some fraction of its ``full_width``) inside ``place``'s box
    (:class:`dogood.page.photos.Surface`, in the photo's annotated pixels)."""
    f = pixels.shape[1] / full_width
    h, w = pixels.shape[:2]
    x0, y0 = int(np.clip(np.floor(place.x * f), 0, w - 1)), int(np.clip(np.floor(place.y * f), 0, h - 1))
    x1 = int(np.clip(np.ceil((place.x + place.width) * f), x0 + 1, w))
    y1 = int(np.clip(np.ceil((place.y + place.height) * f), y0 + 1, h))
    return pixels[y0:y1, x0:x1]


#: COCO licence ids without "NoDerivs": a photo behind a page makes a derivative image.
DERIVATIVE_LICENSES = (1, 2, 4, 5, 7)


class CapturePage(Shift):
    """The page photographed on a desk: lifted paper under one light, a camera's perspective, defocus, noise, JPEG.

    Do-GOOD's I2 (He et al. 2023, section 3.1) shows distorted pages on
    black; real captures (DocUNet's benchmark photos, Ma et al. CVPR 2018)
    show curved paper lit from one side, lying on a surface, slightly out of
    focus. Here (:mod:`dogood.page.camera`) the page is a height field (one
    cosine bend and ``folds`` DocUNet creases) resting on a surface, seen
    by a pinhole camera with a drawn pose (tilt about a random axis, roll,
    ``distance``). Every output pixel's ray is met with the lifted page, giving
    one dense backward map through which the page is resampled and every word
    box carried through it (:func:`dogood.page.warp.carry_boxes`; ``margins``: the
    warped ink's bounds widened by the source box's margins around its ink, so each
    box keeps its looseness, the annotation's convention; ``ink``: the bounds of the
    word's warped ink, tight as OCR draws boxes, so FUNSD's looser boxes shrink;
    ``box``: of its whole box); the surface is drawn through the same camera's homography of its
    plane. The light: Lambertian shading from the page's normals under one
    directional light (``shading``), a lighting gradient across the frame
    (``gradient``) and a soft cast shadow (``shadow``). The camera: Gaussian
    defocus (``blur``), sensor noise (``noise``) and JPEG at a quality drawn in
    ``quality``. Each amount is the level's maximum, drawn in 0.5-1 of it (the
    tilt, the shadow) or 0.6-1 (bend, folds).

    The surface is one a page lies on: the part of a COCO photo that its
    own annotations mark as a table, counter, bed, blanket, floor or rug
    (``surfaces``: the largest such segment covering a tenth of the photo
    and mostly filling its box; the photo cropped to that box), or, when
    the pool has no such photo (or ``surface: texture``), drawn wood planks
    or woven fabric (:func:`dogood.page.camera.texture`); a page pasted
    over any scene (a park, a plate of food) is not how documents are
    photographed. The paper casts a soft contact shadow on it along its
    edge (``contact``), away from the light. The page's edge is where the
    rays meet the lifted sheet, found on the sheet extended past its edge,
    so a crease or a bend never notches it.

    Texts, word order, entities, links, labels and QA pairs are unchanged;
    the page becomes RGB, the frame keeps the page's size. All randomness
    comes from the document's generator, drawn the same way whatever the
    parameters (up to four creases are always drawn, the quality is one
    uniform draw, the noise comes from a generator of its own), so the
    levels of one config share the pose's axis, the creases' lines, the
    light, the photo and the noise pattern, and differ in their amounts.

    With quads asked for (``quads: true``), each word's quad is where the camera's map puts its box's four
    corners (:func:`dogood.page.quads.warp_quads`).

    Counts: ``words``, ``fallback_boxes`` (words squeezed out, placed by their
    centre), with ``ink``, ``no_ink``. Tallies: ``photo`` and ``licence`` (the
    COCO photo behind each page, credited in the card) or ``surface: texture``.

    Parameters: :class:`CapturePage.Params`.
    """

    name = "capture"
    requires = ("coco",)
    reported_counts = ("words", "fallback_boxes", "no_ink")
    family = "image"
    min_side = 16  # OpenCV (or augraphy) fails on smaller pages: such a page is skipped, recorded
    factors = frozenset({"geometry", "box_position", "box_size", "ink", "background", "quality"})
    cues = frozenset({"background"})
    cue_figures = {"background": ("FUNSD test, 50 pages, funsd-c's levels, on the paper (bench/measure_cues.py; "
                                  "dogood before issue 40: 0.60-0.62)", {1: 0.55, 2: 0.53, 3: 0.55, 4: 0.53, 5: 0.55})}
    subfamily: ClassVar[str] = "capture"
    papers = (Cites("do-good", "3.1 (RVL-CDIP-I2, distorted images)",
                    inspired_by="the paper took DocGeoNet-distorted pages on black and lost the word boxes; here the "
                                "page is lifted, lit, photographed on a surface by a drawn camera, and every box is "
                                "re-projected through one dense map"),
              Cites("docunet", "3 (synthetic folds and curves)",
                    inspired_by="DocUNet's fold profile used as the height of a crease in a 3D page under a camera, "
                                "rather than as a 2D displacement"),
              Cites("coco"))
    counts_help = {
        **Shift.counts_help,
        "fallback_boxes": "words whose ink did not reach the frame: placed by their centre",
    }
    tallies_help: ClassVar[dict[str, str]] = {
        "photo": "the COCO image id of the surface photo behind each page (pages per photo)",
        "licence": "the Flickr licence of those photos (pages per licence)",
        "surface": "what each page lies on: the COCO surface category its photo is cropped to (dining table, bed, "
                   "floor-wood...), photo (a whole photo: surfaces null), or a drawn wood or fabric surface",
    }

    path_params = ("annotations",)  # a file or folder this machine reads (recorded by name and content hash)

    class Params(params.Params):
        surface: Literal["photo", "texture"] = Field("photo", description=(
            "what the page lies on: photo, the part of a COCO photo its annotations mark as a surface (`surfaces`; "
            "drawn per document, licences allowing derivatives; a drawn wood or fabric surface when the pool has "
            "none); texture: always a drawn wood or fabric surface"))
        surfaces: params.OptionalNames = Field(SURFACE_CATEGORIES, description=(
            "the COCO categories a page may lie on (tables, counters, beds and bedding, floors, rugs); the photo "
            "is cropped to the largest such segment's box; null: any photo, whole"))
        contact: params.Real = Field(0.45, ge=0, le=1, description=(
            "depth of the contact shadow the page casts on the surface right around its edge (0: none)"))
        tilt: params.Real = Field(7.0, ge=0, le=40, description="the camera's tilt from straight above, degrees "
                                                                 "(drawn in 0.5-1 of it, about a random axis)")
        roll: params.Real = Field(3.0, ge=0, le=45, description="the page's rotation in the frame, degrees (drawn "
                                                                "within +-roll)")
        distance: params.Real = Field(2.0, gt=0.5, le=20, description="the camera's distance from the page centre, "
                                                                      "in the page's longer side (nearer: stronger "
                                                                      "perspective)")
        bend: params.Real = Field(0.01, ge=0, le=0.06, description="height of the page's bend (a cosine across "
                                                                    "it), fraction of its longer side")
        folds: params.Integer = Field(1, ge=0, le=MAX_FOLDS, description="creases (DocUNet folds) across the page")
        fold: params.Real = Field(0.003, ge=0, le=0.02, description="height of each crease, fraction of the "
                                                                    "longer side")
        margin: params.Real = Field(0.05, ge=0, lt=0.4, description="surface shown around the page, fraction of "
                                                                    "the frame's width and height on every side")
        shading: params.Real = Field(0.4, ge=0, le=1, description="weight of the Lambertian term (0: the page's "
                                                                  "normals do not matter)")
        gradient: params.Real = Field(0.1, ge=0, le=0.5, description="lighting gradient across the frame: "
                                                                      "brightness 1 +- gradient")
        shadow: params.Real = Field(0.15, ge=0, le=0.8, description="depth of the cast shadow (drawn in 0.5-1 of it)")
        blur: params.Real = Field(0.2, ge=0, le=4, description="defocus: Gaussian sigma in pixels")
        noise: params.Real = Field(2.0, ge=0, le=30, description="sensor noise, grey levels (standard deviation)")
        quality: params.Integers = Field((85, 95), description="JPEG quality drawn in this range (inclusive)")
        reproject: Literal[REPROJECT] = Field("margins", description=(
            "margins: the warped ink's bounds widened by the source box's margins around its ink (the box keeps "
            "its looseness, the annotation's convention); ink: the warped ink's bounds alone (tight, as OCR draws "
            "boxes: FUNSD's looser boxes shrink); box: the bounds of the whole warped box"))
        interpolation: Literal[("sharpened", *INTERPOLATIONS)] = Field("sharpened", description=(
            "the page's resampling; sharpened: bilinear, then a 3-tap sharpening fused with the defocus (within 3 "
            "grey levels RMS of cubic, at less than half its cost)"))
        licenses: params.Integers = Field(DERIVATIVE_LICENSES, description="COCO licence ids surface photos may "
                                                                           "carry (default: all but NoDerivs)")
        min_size: params.Integer = Field(256, description="shortest side, in pixels, of the surface photos")
        annotations: Annotated[Annotated[str, Strict()] | tuple[Annotated[str, Strict()], ...] | None,
                               params.Expect("null, a path or a list of paths")] = Field(
            None, description="COCO annotation file(s) of the photo pool (null: the shared data's, else COCO "
                              "2017 val)")

    #: Levels 1-5 (the default is level 2). Measured on the 50 FUNSD test pages (``bench/measure_capture.py``):
    #: the page's mean non-rigid displacement (beyond the best similarity) 0.0027, 0.0047, 0.0068, 0.0132, 0.0209
    #: page widths; the ink's contrast kept (:func:`dogood.page.camera.word_contrast`) 0.88, 0.85, 0.78, 0.42, 0.27;
    #: median IoU of the re-projected boxes with Tesseract's words 0.86, 0.84, 0.77, 0, 0 (Tesseract reads 77, 75,
    #: 68, 34, 3% of the words it read on the scan). Defocus costs Tesseract most at FUNSD's ~100 dpi. (Those
    #: figures predate the levels' shared draws.) MS-SSIM against the source once the page is aligned
    #: (``bench/measure_geometry.py``, ``docs/severity.md``): 0.89, 0.80, 0.73, 0.58, 0.47.
    severities: ClassVar[dict[int, dict[str, Any]]] = {
        1: {"tilt": 4.0, "roll": 2.0, "bend": 0.006, "folds": 1, "fold": 0.002, "shading": 0.3, "gradient": 0.06,
            "shadow": 0.1, "blur": 0.0, "noise": 1.0, "quality": [90, 95]},
        2: {"tilt": 7.0, "roll": 3.0, "bend": 0.01, "folds": 1, "fold": 0.003, "shading": 0.4, "gradient": 0.1,
            "shadow": 0.15, "blur": 0.2, "noise": 2.0, "quality": [85, 95]},
        3: {"tilt": 10.0, "roll": 4.0, "bend": 0.015, "folds": 1, "fold": 0.004, "shading": 0.5, "gradient": 0.14,
            "shadow": 0.2, "blur": 0.35, "noise": 3.0, "quality": [80, 90]},
        4: {"tilt": 18.0, "roll": 6.0, "bend": 0.03, "folds": 2, "fold": 0.007, "shading": 0.65, "gradient": 0.22,
            "shadow": 0.35, "blur": 0.7, "noise": 5.0, "quality": [65, 80]},
        5: {"tilt": 26.0, "roll": 9.0, "bend": 0.045, "folds": 2, "fold": 0.01, "shading": 0.8, "gradient": 0.3,
            "shadow": 0.5, "blur": 1.1, "noise": 7.0, "quality": [45, 65]},
    }

    def setup(self) -> None:
        if len(self.quality) != 2 or not 1 <= self.quality[0] <= self.quality[1] <= 100:
            raise ValueError(f"quality must be [low, high] within 1-100, got {list(self.quality)}")

    # -- the photo pool -------------------------------------------------------
    @property
    def pool(self):
        """The COCO photo pool, the resource ``coco-photos`` (cached per process)."""
        return resource("coco-photos", annotations=self.annotations, licenses=self.licenses,
                        min_size=self.min_size, categories=None, surfaces=self.surfaces)

    def prepare(self) -> None:
        reuse_freed_memory()  # full-page arrays reused, not faulted in afresh each page
        if self.surface == "photo":
            self.pool  # noqa: B018 - cached per process

    def card_notes(self, schema: str = "funsd") -> list[str]:
        if self.surface == "photo" and self.surfaces and len(self.pool):
            on = (f"a surface in an MSCOCO 2017 photo drawn per document from the {len(self.pool)} whose annotations "
                  f"mark a table, counter, bed, floor or rug ({', '.join(self.surfaces)}; the photo cropped to that "
                  "segment's box; credited below)")
        elif self.surface == "photo" and not self.surfaces:
            on = "an MSCOCO 2017 photo drawn per document (credited below)"
        else:
            on = "a drawn wood or fabric surface"
        return [f"`capture`: the page, lifted by a bend and {self.folds} crease(s), lit by one light and "
                f"photographed on {on} by a camera tilted up to {self.tilt:g} degrees, with defocus (sigma "
                f"{self.blur:g} px), sensor noise ({self.noise:g} grey levels) and JPEG at quality "
                f"{self.quality[0]}-{self.quality[1]}; a contact shadow (depth {self.contact:g}) under the paper's "
                f"edge; the source's words are kept and every box re-projected exactly through the camera's map "
                f"({self.reproject}). What each page lies on is tallied (`capture: surface`)."]

    def credits(self, tallies: dict[str, dict[str, int]]) -> list[dict]:
        """Each COCO photo the build put behind a page."""
        return photo_credits(self.pool, tallies.get("photo", {})) if tallies.get("photo") else []

    # -- the shift ----------------------------------------------------------------
    def geometry(self, doc: Document, rng: np.random.Generator):
        """The fitted camera, the height field, the backward map and its coarse grid (the first draws of
        :meth:`apply`, so the same seed gives the same map)."""
        size = (doc.width, doc.height)
        camera = Camera.draw(size, rng, self.tilt, self.roll, self.distance)
        field = HeightField.draw(size, rng, self.bend, self.folds, self.fold)
        camera, backward, coarse = capture_map(size, camera, field, self.margin)
        return camera, field, backward, coarse

    def apply(self, doc: Document, rng: np.random.Generator):
        size = (doc.width, doc.height)
        camera, field, backward, coarse = self.geometry(doc, rng)
        light = light_direction(rng)
        brightness = light_field(coarse_grid(doc.width, doc.height, STEP), coarse, size, field, light,
                                 self.shading, self.gradient, self.shadow, rng)
        brightness = upsample_grid(brightness, doc.width, doc.height, STEP)
        tallies: dict[str, dict[str, int]]
        pool = self.pool if self.surface == "photo" else None
        if pool is not None and len(pool):
            photo = pool.choose(rng)
            behind = photo_at_half(pool, photo)  # seen at about half its size: decoded at half
            place = pool.surfaces.get(photo.id)
            if place is not None:  # the table, bed or floor the annotations mark: the page lies on it
                behind = surface_crop(behind, place, photo.width)
            tallies = {"photo": {str(photo.id): 1}, "licence": {photo.license_name: 1},
                       "surface": {place.category if place is not None else "photo": 1}}
        else:
            behind, kind = texture(rng)
            tallies = {"surface": {kind: 1}}
        homography = surface_homography((behind.shape[1], behind.shape[0]), camera, coarse, rng)
        darken = rng.uniform(0.55, 0.9)  # exposure is set for the white paper: the surface looks darker
        tint = rng.uniform(-1.0, 1.0)
        low, high = self.quality
        quality = low + min(int(rng.random() * (high - low + 1)), high - low)  # one draw, whatever the range
        grain = np.random.default_rng(int(rng.integers(2 ** 63)))  # the noise pattern, the same at every level
        pixels = doc.image.to_array()
        sharpened = self.interpolation == "sharpened"
        frame = render(pixels, behind, homography, backward, page_alpha(coarse, size), brightness, tint=tint,
                       darken=darken, blur=self.blur, noise=self.noise, rng=grain,
                       interpolation=cv2.INTER_LINEAR if sharpened else INTERPOLATIONS[self.interpolation],
                       sharpen=SHARPEN if sharpened else 0.0, region=page_region(coarse, size),
                       contact=self.contact, contact_shift=contact_shift(light, size), contact_blur=CONTACT_BLUR * max(size))
        image = PageImage.from_bytes(encode_jpeg(frame, quality), verify=False)

        boxes, found = carry_boxes(doc.boxes, backward, pixels, self.reproject,
                                   warped=image.to_array() if self.reproject == "margins" else None)
        quads = quad_tuples(warp_quads(doc.quads, backward)[0]) if doc.has_quads else None
        words = tuple(Word(w.text, tuple(b), None if quads is None else quads[i])
                      for i, (w, b) in enumerate(zip(doc.words, boxes.tolist())))
        counts = {"words": len(words), "fallback_boxes": found["fallback_boxes"]}
        if "no_ink" in found:
            counts["no_ink"] = found["no_ink"]
        return Outcome(doc.replace(image=image, words=words), counts, tallies)

