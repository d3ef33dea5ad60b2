"""Scan quality (I3): ink bleed, bleed-through, low ink, dirty drum, faxing and noise, through augraphy."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import cv2
import numpy as np
from pydantic import Field

from dogood.core.document import PageImage
from dogood.core.papers import Cites
from dogood.page.augraphy_seeded import augraphy, run_augmentations
from dogood.shifts import params
from dogood.shifts.base import Outcome, Shift

#: The kinds, in the order they are applied: augraphy's ink phase, then paper, then post.
KINDS = ("ink_bleed", "low_ink", "noise", "bleed_through", "dirty_drum", "fax")


def _odd(x: float) -> int:
    return int(x) // 2 * 2 + 1


def augmentations(kind: str, s: float) -> list[Any]:
    """augraphy's augmentations for ``kind`` at strength ``s`` in (0, 1]: each knob grows with ``s`` (low ink's
    row counts with ``s**2``), tuned so that the measured effect (the ink's contrast lost, pixels changed) and
    Tesseract's lost recall grow level by level on FUNSD test (``bench/measure_scan.py``).

    Every one is pixel-only: none moves, rotates or resizes the page (Faxify scales down and back to the same
    size, so ink keeps its place; BleedThrough's ghost is the page's own mirror, never ``./augraphy_cache``)."""
    a = augraphy()
    if kind == "ink_bleed":  # Sobel edges spread into the dilated ink, blurred and blended
        k = _odd(2 + 3 * s)  # 3x3 up to level 3, 5x5 above
        return [a.InkBleed(intensity_range=(0.2 + 0.6 * s,) * 2, kernel_size=(k, k), severity=(0.1 + 0.5 * s,) * 2)]
    if kind == "low_ink":  # rows whose ink fades to a drawn grey (16-255): more rows, random and periodic, as s grows
        n = int(20 + 500 * s * s)
        rows = int(5 + 100 * s * s)  # LowInkPeriodicLines' "period" is the number of periodic rows on the page
        return [a.LowInkRandomLines(count_range=(n, n + n // 5), use_consistent_lines=True, noise_probability=0.1),
                a.LowInkPeriodicLines(count_range=(1, 1), period_range=(rows, rows + rows // 5),
                                      use_consistent_lines=True, noise_probability=0.1)]
    if kind == "noise":  # paper texture (sigma 8 to 30), then per-pixel sensor noise (uniform, +-16 to +-60)
        sigma = int(3 + 27 * s)
        return [a.NoiseTexturize(sigma_range=(sigma, sigma + 2), turbulence_range=(2, 5)),
                a.SubtleNoise(subtle_range=int(5 + 55 * s))]
    if kind == "bleed_through":  # the back page's ink, mirrored and blurred, showing through
        bleed = a.BleedThrough(intensity_range=(0.1, 0.9), color_range=(0, 224), ksize=(17, 17), sigmaX=1,
                               alpha=0.2 + 0.6 * s, offsets=(20, 20))
        bleed.create_bleedthrough_foreground = _mirror  # augraphy would read ./augraphy_cache if it existed
        return [bleed]
    if kind == "dirty_drum":  # toner streaks (down the page, as it feeds) and specks of a dirty printer drum
        return [a.DirtyDrum(line_width_range=(1, 2 + int(4 * s)), line_concentration=0.05 + 0.3 * s, direction=1,
                            noise_intensity=0.3 + 0.4 * s, noise_value=(0, 30), ksize=(3, 3), sigmaX=0)]
    if kind == "fax":  # resolution loss (down and back up) and Otsu binarisation
        return [a.Faxify(scale_range=(1 + s, 1 + s), monochrome=1, monochrome_method="threshold_otsu",
                         monochrome_arguments={}, halftone=0)]
    raise ValueError(f"unknown scan-quality kind {kind!r}; known: {', '.join(KINDS)}")


def _mirror(image: np.ndarray) -> np.ndarray:
    """BleedThrough's back page when augraphy has no cached image: the page itself, flipped left to right."""
    return cv2.flip(image, 1)


class ScanQuality(Shift):
    """Degrade the page as a poor scan, copy or fax would, keeping every word in place (I3).

    Kinds (``kinds``), applied in augraphy's phase order (ink, paper, post):
    ``ink_bleed`` (InkBleed), ``low_ink`` (LowInkRandomLines and
    LowInkPeriodicLines), ``noise`` (NoiseTexturize and SubtleNoise),
    ``bleed_through`` (BleedThrough), ``dirty_drum`` (DirtyDrum), ``fax``
    (Faxify: resolution loss and binarisation, no halftone). ``pick: all``
    stacks the kinds; ``pick: one`` draws one of them per page.

    augraphy's own augmentations do the work; their random draws (Python's
    and numpy's global generators) are seeded from the document's generator
    and the global states restored (:mod:`dogood.page.augraphy_seeded`). None
    changes geometry, so the words, boxes, entities and label are kept
    exactly: each word's box still holds its own ink, unshifted (the pixel
    check of ``tests/shifts/image/test_scan_quality.py``). The page keeps its mode
    (grayscale or RGB) and size.

    Parameters: :class:`ScanQuality.Params`. Severity levels set ``strength``.

    Counts: ``words``, ``pixels_changed`` (grey level moved by more than 32);
    tallies: ``kind`` (pages per kind drawn, with ``pick: one``).
    """

    name = "scan_quality"
    requires = ("module:augraphy[scan]", "module:numba[scan]", "module:skimage[scan]")
    reported_counts = ("words", "pixels_changed")
    family = "image"
    min_side = 4  # OpenCV (or augraphy) fails on smaller pages: such a page is skipped, recorded
    factors = frozenset({"ink", "background", "quality"})
    subfamily: ClassVar[str] = "scan"
    papers = (Cites("do-good", "3.1 (image shifts)",
                    inspired_by="a scan-quality family (I3) the paper does not have, built from augraphy's ink, "
                                "paper and post-phase augmentations, pixel-only so every word box is kept"),
              Cites("augraphy"))
    counts_help = {
        **Shift.counts_help,
        "pixels_changed": "pixels whose grey level moved by more than 32",
    }
    tallies_help: ClassVar[dict[str, str]] = {"kind": "the scan-quality kind drawn for each page (pick: one)"}

    #: Levels 1-5: ``strength`` 0.2 ... 1.0. Measured by the ink's contrast lost in each word's box
    #: (:mod:`dogood.shifts.levels`, in the card); that and Tesseract's word recall per level and kind on the 50 FUNSD test
    #: forms are in ``bench/RESULTS.md`` (``bench/measure_scan.py``).
    severities: ClassVar[dict[int, dict[str, Any]]] = {level: {"strength": round(0.2 * level, 1)}
                                                       for level in range(1, 6)}

    class Params(params.Params):
        kinds: params.Names = Field(KINDS, description="which degradations: " + ", ".join(KINDS))
        strength: params.Real = Field(0.6, gt=0, le=1, description="how strong each degradation is (severity "
                                                                     "levels 1-5: 0.2 to 1.0)")
        pick: Literal["all", "one"] = Field("all", description="all: apply every kind; one: draw one per page")

    def setup(self) -> None:
        unknown = [k for k in self.kinds if k not in KINDS]
        if unknown or not self.kinds:
            raise ValueError(f"kinds must be among {', '.join(KINDS)}, got {', '.join(unknown) or 'none'}")

    def prepare(self) -> None:
        augraphy()  # a clear error now when augraphy is missing, not in a worker

    def chosen_kinds(self, rng: np.random.Generator) -> tuple[str, ...]:
        """The kinds applied to one page, in phase order."""
        kinds = tuple(k for k in KINDS if k in self.kinds)
        return (kinds[int(rng.integers(len(kinds)))],) if self.pick == "one" else kinds

    def apply(self, doc, rng):
        kinds = self.chosen_kinds(rng)
        pixels = doc.image.to_array()
        augs = [aug for kind in kinds for aug in augmentations(kind, self.strength)]
        out = run_augmentations(pixels, augs, rng)
        moved = np.abs(out.astype(np.int16) - pixels.astype(np.int16))
        changed = int((moved.max(axis=2) if moved.ndim == 3 else moved).__gt__(32).sum())
        tallies = {"kind": {kinds[0]: 1}} if self.pick == "one" else {}
        counts = {"words": len(doc.words), "pixels_changed": changed}
        return Outcome(doc.replace(image=PageImage.from_array(out)), counts, tallies)
