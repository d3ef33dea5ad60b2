"""Disentangle text ink from the page background (Do-GOOD section 3.1, stage 1).

Do-GOOD took "text pixels" to be the non-white pixels inside OCR boxes: a
hard threshold at 255 that keeps paper noise and scanner grey as "text" and
turns anti-aliased stroke edges into hard ones. Here each page pixel is
modelled as a mix of paper and ink,

    pixel = paper * (1 - alpha) + ink * alpha,

with ``paper`` the local paper level (a grey-level closing of the page) and
``ink`` the tone of the word's strokes. Within each word box (or, with
``region="page"`` and ``"connected"``, over the whole page) a pixel is ink when its contrast to
the local paper passes Otsu's threshold of that box (adaptive binarisation);
``alpha`` is then solved from the mix for those pixels and their one-pixel
rim, so stroke edges keep their partial coverage and the darkest pixels keep
their exact tone. :func:`composite` puts the ink on any other background.

Written here rather than taken from a library: OpenCV and scikit-image
binarise (hard masks); none estimates a per-word soft ink matte.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

#: Below this contrast (grey levels between paper and ink) a box holds no ink.
MIN_INK_CONTRAST = 40


@dataclass(frozen=True)
class InkMatte:
    """Ink separated from its page, kept for the pixels that have some ink.

    ``shape``: the page's (height, width).
    ``index``: flat (row-major) indices of the pixels with ink, ascending.
    ``alpha``: float32 ink coverage of those pixels, in (0, 1].
    ``ink``: uint8 ink colour of those pixels, ``(k, 1)`` for grayscale pages
    or ``(k, 3)``: the page's own pixel where ``alpha == 1``, the word's ink
    tone on stroke rims.
    ``level``: per box, the grey level of its ink (0 for a box with no ink).
    ``has_ink``: per box, whether ink was found.
    """

    shape: tuple[int, int]
    index: np.ndarray
    alpha: np.ndarray
    ink: np.ndarray
    level: np.ndarray
    has_ink: np.ndarray

    def alpha_image(self) -> np.ndarray:
        """The ink coverage as an HxW float32 image."""
        out = np.zeros(self.shape, np.float32)
        out.reshape(-1)[self.index] = self.alpha
        return out


def gray(pixels: np.ndarray) -> np.ndarray:
    """Luminance of HxW or HxWx3 uint8 pixels (HxW uint8)."""
    return pixels if pixels.ndim == 2 else cv2.cvtColor(pixels, cv2.COLOR_RGB2GRAY)


def paper_level(luma: np.ndarray, stroke: int) -> np.ndarray:
    """The local paper grey: a grey-level closing (max then min filter) wider than a stroke."""
    k = max(3, 2 * int(stroke) + 1)
    kernel = cv2.getStructuringElement(cv2.MORPH_RECT, (k, k))
    return cv2.morphologyEx(luma, cv2.MORPH_CLOSE, kernel)


def wide_paper_level(luma: np.ndarray, stroke: int) -> np.ndarray:
    """The paper grey at a larger scale: a closing :data:`WIDE_PAPER` strokes wide (at 1/4 of the page's size,
    brought back bilinearly), so that a solid blot a few strokes wide (a punched hole, a filled mark) reads as
    ink on the paper around it rather than as paper of its own (which leaves only its outline)."""
    h, w = luma.shape
    small = cv2.resize(luma, (max(1, -(-w // 4)), max(1, -(-h // 4))), interpolation=cv2.INTER_AREA)
    k = max(3, (WIDE_PAPER * int(stroke)) // 4 | 1)
    closed = cv2.morphologyEx(small, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)),
                              borderType=cv2.BORDER_REPLICATE)
    return cv2.resize(closed, (w, h), interpolation=cv2.INTER_LINEAR)


#: How many stroke widths (half a median word height each) :func:`wide_paper_level` spans.
WIDE_PAPER = 16


def _stroke_width(boxes: np.ndarray, height: int) -> int:
    """A width larger than any stroke: half the median box height (or 1% of the page)."""
    if len(boxes):
        h = np.median(boxes[:, 3] - boxes[:, 1])
        return int(np.clip(h / 2, 3, 40))
    return max(3, height // 100)


def ink_core_mask(pixels: np.ndarray, boxes: np.ndarray, *, pad: int = 2,
                  min_contrast: int = MIN_INK_CONTRAST) -> np.ndarray:
    """``ink_matte(pixels, boxes, pad=pad, min_contrast=min_contrast).alpha_image() >= 0.5`` (boolean HxW),
    without the matte: the ink pixels within the 3x3 neighbourhood of the cores of solved boxes whose
    contrast is at least half their box's ink depth (``c / d >= 1/2`` exactly, as ``c >= ceil(d / 2)``)."""
    boxes = np.asarray(boxes, np.int64).reshape(-1, 4)
    _, contrast, threshold, depth, _, _ = _ink_maps(gray(pixels), boxes, "words", pad, min_contrast, False)
    core = cv2.compare(contrast, threshold, cv2.CMP_GT)
    near = cv2.dilate(core, cv2.getStructuringElement(cv2.MORPH_RECT, (3, 3)))
    near = cv2.bitwise_and(near, cv2.compare(threshold, 255, cv2.CMP_LT))
    half = cv2.compare(contrast, depth - (depth >> 1), cv2.CMP_GE)  # c >= ceil(d / 2)
    return cv2.bitwise_and(near, half).astype(bool)


def ink_full_mask(pixels: np.ndarray, boxes: np.ndarray, *, pad: int = 2,
                  min_contrast: int = MIN_INK_CONTRAST) -> tuple[np.ndarray, np.ndarray]:
    """``(core, full)``, boolean HxW masks of the ink inside word boxes from one solve of :func:`ink_matte`'s maps
    (same ``pad`` and ``min_contrast``): the cores of :func:`ink_core_mask`, and the full ink, the pixels to which
    the matte gives alpha 1 (at least as much darker than the local paper as their box's ink is deep), which a
    composite keeps exactly."""
    boxes = np.asarray(boxes, np.int64).reshape(-1, 4)
    _, contrast, threshold, depth, _, _ = _ink_maps(gray(pixels), boxes, "words", pad, min_contrast, False)
    solved = cv2.compare(threshold, 255, cv2.CMP_LT)
    near = cv2.bitwise_and(cv2.dilate(cv2.compare(contrast, threshold, cv2.CMP_GT),
                                      cv2.getStructuringElement(cv2.MORPH_RECT, (3, 3))), solved)
    core = cv2.bitwise_and(near, cv2.compare(contrast, depth - (depth >> 1), cv2.CMP_GE))
    full = cv2.bitwise_and(cv2.compare(contrast, depth, cv2.CMP_GE), solved)
    return core.astype(bool), full.astype(bool)


def ink_matte(
    pixels: np.ndarray,
    boxes: np.ndarray | None = None,
    *,
    region: str = "words",
    pad: int = 2,
    min_contrast: int = MIN_INK_CONTRAST,
) -> InkMatte:
    """Separate the ink of a page from its paper.

    Parameters
    ----------
    pixels : HxW or HxWx3 uint8 page.
    boxes : (n, 4) word boxes ``(x0, y0, x1, y1)`` in pixels.
    region : ``"words"`` (ink inside word boxes only: table rules, logos and
        stamps outside the boxes count as background, as in Do-GOOD),
        ``"connected"`` (the page's ink that reaches into a word box, each
        stroke whole: see :func:`connected_strokes`) or ``"page"`` (every
        foreground pixel of the page; boxes only set the stroke scale).
    pad : pixels added around each box, so strokes that touch the box edge keep their rim.
    min_contrast : grey levels between paper and ink below which a box holds no ink.
    """
    if region not in REGIONS:
        raise ValueError(f"region must be one of {', '.join(map(repr, REGIONS))}, got {region!r}")
    boxes = np.zeros((0, 4), np.int64) if boxes is None else np.asarray(boxes, np.int64).reshape(-1, 4)
    luma = gray(pixels)
    h, w = luma.shape
    solve = "page" if region == "connected" else region
    paper, contrast, threshold, depth, levels, has_ink = _ink_maps(luma, boxes, solve, pad, min_contrast, True)
    core = cv2.compare(contrast, threshold, cv2.CMP_GT)
    near = cv2.dilate(core, cv2.getStructuringElement(cv2.MORPH_RECT, (3, 3)))
    near = cv2.bitwise_and(near, cv2.compare(threshold, 255, cv2.CMP_LT))  # only inside solved regions
    if region == "connected":
        half = cv2.compare(2 * contrast.astype(np.int16), depth.astype(np.int16), cv2.CMP_GE)  # alpha >= 1/2
        near = cv2.bitwise_and(near, connected_strokes(cv2.bitwise_and(near, half), boxes))
    points = cv2.findNonZero(near)  # the pixels with some ink, row-major
    points = np.zeros((0, 2), np.int64) if points is None else points.reshape(-1, 2).astype(np.int64)
    index = points[:, 1] * w + points[:, 0]
    c = contrast.reshape(-1)[index].astype(np.float32)
    d = depth.reshape(-1)[index].astype(np.float32)
    alpha = np.minimum(c / d, 1.0)
    full = alpha >= 1.0
    tone = np.clip(paper.reshape(-1)[index].astype(np.float32) - d, 0, 255).astype(np.uint8)  # ink grey on stroke rims
    flat = pixels.reshape(len(luma.reshape(-1)), -1)[index]  # (k, 1) or (k, 3)
    ink = np.where(full[:, None], flat, tone[:, None])
    if region != "words":
        a = np.zeros((h, w), np.float32)
        a.reshape(-1)[index] = alpha
        for i, (x0, y0, x1, y1) in enumerate(boxes.tolist()):
            sub = a[y0:y1, x0:x1]
            if sub.size and sub.max() >= 1.0:
                has_ink[i] = True
                levels[i] = int(np.median(luma[y0:y1, x0:x1][sub >= 1.0]))
    return InkMatte(shape=(h, w), index=index, alpha=alpha, ink=ink, level=levels, has_ink=has_ink)


#: What :func:`ink_matte` can take as ink.
REGIONS = ("words", "connected", "page")


def connected_strokes(core: np.ndarray, boxes: np.ndarray, gap: int = 2) -> np.ndarray:
    """The pixels (uint8 0/255 mask) of ``core`` (uint8, ink at half coverage or more) that belong to a stroke
    reaching into a word box, with the rim ``gap // 2 + 1`` pixels around them: every such stroke whole, none
    cut at a box.

    A stroke is a connected piece of ``core`` once pieces up to ``gap`` pixels apart are joined (the dots of a
    halftone or hatched bar, the letters of a word, a rule and the letters it touches): a table rule or a
    hatched header bar that a word sits on is kept entire, as the original shows it, and ink that reaches no
    word (a logo, a stamp, a rule alone, a speck) is left out entire. Nothing is clipped to a word box, so the
    matte has no stub of a rule or a bar ending at a box edge.
    """
    h, w = core.shape
    joined = cv2.dilate(core, cv2.getStructuringElement(cv2.MORPH_RECT, (gap + 1, gap + 1)))
    count, labels = cv2.connectedComponents(joined, connectivity=8)
    touched = np.zeros(count, bool)
    inside = np.zeros((h, w), np.uint8)
    for x0, y0, x1, y1 in np.asarray(boxes, np.int64).reshape(-1, 4).tolist():
        x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
        if x1 > x0 and y1 > y0:
            inside[y0:y1, x0:x1] = 255
    touched[labels[cv2.bitwise_and(inside, core) > 0]] = True
    touched[0] = False
    return touched[labels].astype(np.uint8) * 255


def _ink_maps(luma: np.ndarray, boxes: np.ndarray, region: str, pad: int, min_contrast: int, with_levels: bool):
    """The maps :func:`ink_matte` solves alpha from: ``paper``, ``contrast``, the per-pixel Otsu ``threshold``
    (255 outside solved regions), the ink ``depth``; and per box the ink ``levels`` (0 without ``with_levels``)
    and ``has_ink``."""
    h, w = luma.shape
    paper = paper_level(luma, _stroke_width(boxes, h))
    if region == "page":  # blots wider than a stroke (punched holes, solid marks) are ink, not dark paper
        paper = np.maximum(paper, wide_paper_level(luma, _stroke_width(boxes, h)))
    contrast = cv2.subtract(paper, luma)  # uint8, >= 0: how much darker than the local paper
    # Per region: Otsu's threshold on the contrast and the ink's depth (mean contrast of the ink core),
    # painted into page maps; alpha is then solved for the whole page at once.
    threshold = np.full((h, w), 255, np.uint8)
    depth = np.ones((h, w), np.uint8)  # where regions overlap, the deepest ink is painted last (below)
    levels = np.zeros(len(boxes), np.int32)
    has_ink = np.zeros(len(boxes), bool)
    solved = []  # (threshold, depth, corners) per solved region, painted below

    def solve(y0, y1, x0, x1):
        c = contrast[y0:y1, x0:x1]
        if c.size == 0:
            return None
        t, core = cv2.threshold(c, 0, 1, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
        if t < min_contrast / 2:
            t, core = cv2.threshold(c, int(min_contrast / 2), 1, cv2.THRESH_BINARY)
        n = cv2.countNonZero(core)
        if n == 0:
            return None
        d = cv2.mean(c, core)[0]  # contrast of the ink: at or beyond it alpha is 1
        if d < min_contrast:
            return None
        solved.append((min(int(t), 255), max(min(int(round(d)), 255), 1), x0, y0, x1 - 1, y1 - 1))
        return int(round(cv2.mean(paper[y0:y1, x0:x1], core)[0] - d)) if with_levels else 0

    if region == "words":
        for i, (x0, y0, x1, y1) in enumerate(boxes.tolist()):
            x0, y0 = max(x0 - pad, 0), max(y0 - pad, 0)
            x1, y1 = min(x1 + pad, w), min(y1 + pad, h)
            got = solve(y0, y1, x0, x1)
            if got is not None:
                levels[i], has_ink[i] = max(got, 0), True
    else:
        # Otsu over the page's contrast in tiles of a few text lines, so faint and dark regions get their own threshold.
        tile = max(64, 8 * _stroke_width(boxes, h))
        for y0 in range(0, h, tile):
            for x0 in range(0, w, tile):
                solve(y0, min(y0 + tile, h), x0, min(x0 + tile, w))
    # where regions overlap, the lowest threshold and the deepest ink: filled rectangles, painted in that order
    for t, _, x0, y0, x1, y1 in sorted(solved, key=lambda r: -r[0]):
        cv2.rectangle(threshold, (x0, y0), (x1, y1), t, cv2.FILLED)
    for _, d, x0, y0, x1, y1 in sorted(solved, key=lambda r: r[1]):
        cv2.rectangle(depth, (x0, y0), (x1, y1), d, cv2.FILLED)
    return paper, contrast, threshold, depth, levels, has_ink


def composite(background: np.ndarray, matte: InkMatte) -> np.ndarray:
    """Put the ink of ``matte`` on ``background`` (HxWx3 or HxW uint8 of the page's size).

    ``out = background * (1 - alpha) + ink * alpha``: pixels with no ink are
    the background's exactly; full-coverage ink pixels are the page's exactly.
    """
    h, w = matte.shape
    if background.shape[:2] != (h, w):
        raise ValueError(f"background is {background.shape[:2]}, the page is {(h, w)}")
    channels = 1 if background.ndim == 2 else background.shape[2]
    ink = matte.ink
    if ink.shape[1] != channels:
        ink = np.repeat(ink, channels, axis=1) if ink.shape[1] == 1 else gray(ink[None])[0][:, None]
    out = background.copy()
    flat = out.reshape(h * w, channels)
    a = matte.alpha[:, None]
    mixed = flat[matte.index].astype(np.float32) * (1.0 - a) + ink.astype(np.float32) * a
    flat[matte.index] = np.rint(mixed).astype(np.uint8)
    return out
