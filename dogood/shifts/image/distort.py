"""Geometric page distortion with every word box re-projected: Do-GOOD's RVL-CDIP-I2 image shift (section 3.1)."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

import numpy as np
from pydantic import Field

from dogood.core.document import Document, PageImage, Word
from dogood.core.errors import DocumentError
from dogood.core.papers import Cites
from dogood.page.quads import quad_tuples, warp_quads
from dogood.page.warp import (
    CANVASES,
    INTERPOLATIONS,
    KINDS,
    REPROJECT,
    check_map,
    distortion_map,
    get_map_provider,
    map_provider_names,
    warp_page,
)
from dogood.shifts import params
from dogood.shifts.base import Outcome, Shift


class DistortPage(Shift):
    """The page folded, curved, curled or photographed in perspective, its word boxes carried along exactly.

    Do-GOOD (He et al. 2023, section 3.1) built RVL-CDIP-I2 from
    "DocGeoNet-distorted images" and lost the word boxes. Here the page is
    warped through one dense backward map (:mod:`dogood.page.warp`): DocUNet folds
    and curves (Ma et al., CVPR 2018), a page curl near one edge and a random
    perspective, composed and fitted so the whole page stays inside the
    canvas (``border_value`` around it). Every word box is re-projected
    through the same map (:func:`~dogood.page.warp.carry_boxes`). ``reproject="margins"`` (the default) keeps
    the annotation's box convention: the bounds of the word's warped ink are widened by the margins the source
    box leaves around its ink, scaled as the ink's bounds grew, so each box keeps its looseness (box area over
    its ink's bounding box; on the 50 FUNSD test forms the mean looseness stays within 2% of the source's at
    every level, ``bench/measure_geometry.py``). ``"ink"`` gives the warped ink's bounds alone (Otsu within
    each box): tight, as OCR draws boxes, so FUNSD's looser boxes shrink (a box-size change besides the warp);
    ``"box"`` the whole warped box (for a rotated or curved word, larger than its ink). Texts, word order,
    entities, links, the document label and QA pairs are unchanged; a grayscale page stays grayscale and an RGB
    page RGB. With quads asked for (``quads: true``), each word's quad is where the map puts its box's four
    corners (:func:`dogood.page.quads.warp_quads`). Counts: ``words``, ``fallback_boxes`` (words squeezed out of the output, placed by their centre)
    and, unless ``"box"``, ``no_ink`` (words whose box held no ink, re-projected as boxes).

    Every random parameter is drawn at full strength and the map at ``strength`` is the identity plus
    ``strength`` times the full map's displacement (the page's shrink into the margin included), so the
    severity levels of one config warp each page the same way, by different amounts, and a strength of 0
    changes nothing.

    With ``reproject="ink"`` on the 50 FUNSD test pages (``bench/measure_distort_iou.py``, Tesseract reading
    at 3x), Tesseract reads 77% of the words it read on the original page again, and the median IoU between
    the re-projected box and the word Tesseract reads on the warped page is 0.87 (``"box"``: 0.58, as FUNSD's
    boxes are looser than Tesseract's). Two defaults come from that measurement: bicubic interpolation (these
    ~100 dpi scans lose many more words to Tesseract under bilinear blur) and a black surround (Tesseract
    drops whole blocks of text on pages framed in mid grey: median IoU 0.47 with grey 150, 0.80 with 96, 0.87
    with black).

    Inspired by Do-GOOD's I2: the paper used DocGeoNet's distorted images; dogood warps with its own synthetic
    map (DocUNet-style folds and curves, a curl, a perspective) or a registered map provider.

    Parameters: :class:`DistortPage.Params`.
    """

    name = "distort"
    reported_counts = ("words", "fallback_boxes", "no_ink")
    family = "image"
    min_side = 4  # OpenCV (or augraphy) fails on smaller pages: such a page is skipped, recorded
    factors = frozenset({"geometry", "box_position", "box_size", "ink", "background", "quality"})
    #: Severity levels (:mod:`dogood.shifts.levels`): the displacements' scale. Every level draws the same warp
    #: (:func:`dogood.page.warp.distortion_map`), so its displacements are the level's strength times the full
    #: warp's. Level 1 is mild: MS-SSIM against the source above 0.7 as the page is (``docs/severity.md``, measured
    #: by ``bench/measure_geometry.py``).
    severities: ClassVar[dict[int, dict]] = {1: {"strength": 0.05}, 2: {"strength": 0.15}, 3: {"strength": 0.3},
                                             4: {"strength": 0.6}, 5: {"strength": 1.0}}
    papers = (Cites("do-good", "3.1 (RVL-CDIP-I2, distorted images)",
                    inspired_by="the paper took DocGeoNet-distorted images and lost the word boxes; here the page is "
                                "warped through one synthetic backward map and every box is re-projected through it"),
              Cites("docunet", "3 (synthetic folds and curves)",
                    inspired_by="DocUNet's fold and curve displacements, composed with a curl and a perspective"))
    counts_help = {
        **Shift.counts_help,
        "fallback_boxes": "words whose ink was not found after the warp: their whole box was re-projected instead",
    }

    class Params(params.Params):
        kinds: params.Names = Field(("perspective", "curve", "fold"), description=(
            "distortions among fold, curve, curl, perspective; applied in that order whatever the order given"))
        strength: params.Real = Field(0.5, ge=0, le=1, description=(
            "scales every displacement, the page's shrink into the margin included (0: no change); the draws "
            "are the same at every strength"))
        folds: params.Integer = Field(1, ge=1, description="how many folds, and how many curves, when those kinds "
                                                           "are asked for")
        margin: params.Real = Field(0.04, ge=0, lt=0.5, description="fraction of the page's width and height kept "
                                                                    "as border on every side at strength 1")
        border_value: params.Integer = Field(0, ge=0, le=255, description="grey level of the canvas outside the "
                                                                          "page (black by default)")
        reproject: Literal[REPROJECT] = Field("margins", description=(
            "margins: the warped ink's bounds widened by the source box's margins around its ink (the box keeps "
            "its looseness, the annotation's convention); ink: the warped ink's bounds alone (tight, as OCR draws "
            "boxes: FUNSD's looser boxes shrink); box: the bounds of the whole warped box"))
        encoding: Literal["jpeg", "png"] = Field("jpeg", description="how the new page is stored (jpeg: quality 95)")
        interpolation: Literal[tuple(INTERPOLATIONS)] = Field("cubic", description="pixel interpolation of the "
                                                                                   "warp (dogood.page.warp.apply_map)")
        canvas: Literal[CANVASES] = Field("page", description="page: the output keeps the page's size and the "
                                                              "page shrinks to fit; grow: the canvas grows around it")
        map_provider: Annotated[params.Text | None, params.Expect("null or a string")] = Field(None, description=(
            "a registered map provider (dogood.page.warp.register_map_provider or the dogood.map_providers entry "
            "points), e.g. a learned warping model; its map replaces the synthetic one (kinds, strength, folds, "
            "margin and canvas are then unused) and may change the page size"))

    def setup(self) -> None:
        unknown = [k for k in self.kinds if k not in KINDS]
        if unknown or not self.kinds:
            raise ValueError(f"kinds must be some of {', '.join(KINDS)}, got {list(self.kinds)}")
        if self.map_provider is not None and self.map_provider not in map_provider_names():
            known = ", ".join(map_provider_names()) or "none"
            raise ValueError(f"unknown map provider {self.map_provider!r}; known map providers: {known}")
        self.kinds = tuple(dict.fromkeys(self.kinds))

    def card_notes(self, schema: str = "funsd") -> list[str]:
        how = {"margins": "the bounds of the word's ink (Otsu within its box) carried through the map, widened by the "
                          "source box's margins around its ink: each box keeps its looseness",
               "ink": "the bounds of the word's ink (Otsu within its box) carried through the map: tight, as OCR "
                      "draws boxes (looser source boxes get tighter)",
               "box": "the bounds of the word's whole box carried through the map"}[self.reproject]
        where = (f"map provider `{self.map_provider}`" if self.map_provider else
                 f"{', '.join(k for k in KINDS if k in self.kinds)} at strength {self.strength:g}")
        return [f"`distort`: the page warped through one dense backward map ({where}); the source's words are "
                f"kept and every box re-projected exactly: {how}."]

    def backward_map(self, doc: Document, pixels: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The backward map this shift warps ``doc`` with (from the provider, if one is named)."""
        if self.map_provider is None:
            return distortion_map((doc.width, doc.height), rng, self.kinds, strength=self.strength,
                                  folds=self.folds, margin=self.margin, canvas=self.canvas)
        backward = get_map_provider(self.map_provider)(pixels, rng)
        try:
            return check_map(backward, f"the map of provider {self.map_provider!r}")
        except ValueError as exc:
            raise DocumentError(str(exc), doc_id=doc.id, path=doc.source) from None

    def apply(self, doc: Document, rng: np.random.Generator):
        pixels = doc.image.to_array()
        backward = self.backward_map(doc, pixels, rng)
        warped, boxes, found = warp_page(pixels, doc.boxes, backward, self.border_value, self.interpolation,
                                         self.reproject)
        quads = quad_tuples(warp_quads(doc.quads, backward)[0]) if doc.has_quads else None
        words = tuple(Word(w.text, tuple(b), None if quads is None else quads[i])
                      for i, (w, b) in enumerate(zip(doc.words, boxes.tolist())))
        warped.flags.writeable = False  # ours alone: the page takes it without a copy
        out = doc.replace(image=PageImage.from_array(warped, encoding=self.encoding), words=words)
        counts = {"words": len(words), "fallback_boxes": found["fallback_boxes"]}
        if "no_ink" in found:
            counts["no_ink"] = found["no_ink"]
        return Outcome(out, counts)
