"""Re-rendering changed words into the page image, so text and pixels agree.

A text shift changes what a word says; the scan still shows the old word.
:func:`render_words` makes the two agree again, one word box at a time:

1. **Erase.** The ink inside the box is found (pixels darker than an Otsu
   threshold computed in the box, grown by one pixel for the anti-aliased
   rim; a box without contrast has no ink) and filled in by OpenCV's Telea
   inpainting from the surrounding paper, so form lines and paper texture
   continue through the hole. With ``margin``, strokes that reach out of the
   box are erased up to that many pixels beyond it.
2. **Draw.** The word's current text is drawn in Pillow's bundled scalable
   font (Aileron, ``ImageFont.load_default(size=...)``; the same font on
   every machine, so output does not depend on what fonts are installed).
   Its size makes the cap-top-to-descender height of ``"Hg"`` fill the box
   height; text wider than the box is squeezed horizontally down to 75% and,
   beyond that, drawn smaller. It starts where the old ink started (or at the
   box's left edge) and is clipped to the box, so no pixel outside a
   re-rendered box changes.
3. **Colour.** The ink colour is the median of the darker half of the old ink
   pixels (per channel on RGB pages), so grey scans get grey ink; a box with
   no ink gets near-black.

A box is the half-open pixel region ``[x0, x1) x [y0, y1)``; with the
default ``margin=0`` no pixel outside the re-rendered boxes changes. Blank text only
erases (used to remove dropped words from the page). Glyphs the font lacks
(non-Latin scripts) are drawn as Pillow's replacement boxes. Grayscale (``L``)
and RGB pages are supported; the result is a new :class:`Document` whose image
is :meth:`PageImage.from_array` pixels. Everything is deterministic.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from dogood.document import Document, PageImage

#: Pixels of paper around a box that inpainting looks at (they are read, never written).
CONTEXT = 6
#: A box whose grey levels span less than this has no ink.
MIN_CONTRAST = 40
#: Narrowest horizontal squeeze before the font gets smaller instead.
MIN_SQUEEZE = 0.75
#: Ink colour (grey level) for a box that had no ink to copy.
DEFAULT_INK = 30


def render_words(doc: Document, indices: Iterable[int], original: Document | None = None, *,
                 margin: int = 0) -> Document:
    """``doc`` with the pixels of words ``indices`` erased and their current text drawn in their boxes.

    Parameters
    ----------
    doc : the document whose words' text is now right and whose image is not.
    indices : word indices (in ``doc``) to re-render; out-of-range indices
        raise ``IndexError``, repeated ones are rendered once.
    original : the same document before its texts changed (same words, same
        order). When given, a word whose text equals its original text is
        left untouched.
    margin : pixels around each box where ink that reaches into the box is
        erased too (FUNSD boxes are sometimes a few pixels tighter than the
        glyphs, which leaves slivers of the old word). ``0`` (the default)
        changes no pixel outside the boxes; the new text is always drawn
        inside the box.

    Returns
    -------
    ``doc`` with a new image (only pixels inside the re-rendered boxes,
    grown by ``margin``, differ), or ``doc`` itself when nothing needed drawing.
    """
    if margin < 0:
        raise ValueError(f"margin must be >= 0, got {margin}")
    todo = []
    for i in sorted(set(int(i) for i in indices)):
        if not 0 <= i < len(doc.words):
            raise IndexError(f"document {doc.id!r} has no word {i} ({len(doc.words)} words)")
        if original is not None and i < len(original.words) and original.words[i].text == doc.words[i].text:
            continue
        x0, y0, x1, y1 = doc.words[i].box
        if x1 > x0 and y1 > y0:
            todo.append(i)
    if not todo:
        return doc
    pixels = np.array(doc.image.to_array())  # writable copy
    for i in todo:
        render_box(pixels, doc.words[i].box, doc.words[i].text, margin=margin)
    return doc.replace(image=PageImage.from_array(pixels))


def render_box(pixels: np.ndarray, box: tuple[int, int, int, int], text: str, margin: int = 0) -> None:
    """Erase the ink in ``box`` of ``pixels`` (``HxW`` or ``HxWx3`` uint8, changed in place) and draw ``text`` there.

    Ink within ``margin`` pixels of the box is erased too when it belongs to
    a stroke that reaches into the box.
    """
    height, width = pixels.shape[:2]
    x0, y0, x1, y1 = (int(v) for v in box)
    x0, x1 = max(0, x0), min(width, x1)
    y0, y1 = max(0, y0), min(height, y1)
    if x1 <= x0 or y1 <= y0:
        return
    crop = pixels[y0:y1, x0:x1]
    threshold = ink_threshold(crop)
    core = _gray(crop) <= threshold if threshold is not None else np.zeros(crop.shape[:2], dtype=bool)
    colour = ink_colour(crop, core)
    if core.any():
        ex0, ey0 = max(0, x0 - margin), max(0, y0 - margin)
        ex1, ey1 = min(width, x1 + margin), min(height, y1 + margin)
        around = _gray(pixels[ey0:ey1, ex0:ex1]) <= threshold
        inner = np.zeros(around.shape, dtype=bool)
        inner[y0 - ey0:y1 - ey0, x0 - ex0:x1 - ex0] = True
        if margin:  # keep only the strokes that reach into the box
            count, labels = cv2.connectedComponents(around.astype(np.uint8), connectivity=8)
            touching = np.unique(labels[inner & around])
            around = np.isin(labels, touching[touching > 0])
        rules = form_lines(pixels, (x0, y0, x1, y1), threshold, (ex0, ey0, ex1, ey1))
        erase = (cv2.dilate((around & ~rules).astype(np.uint8), np.ones((3, 3), np.uint8)) > 0) & ~rules
        _inpaint(pixels, (ex0, ey0, ex1, ey1), erase, threshold)
    if not text.strip():
        return
    left = int(np.flatnonzero(core.any(axis=0))[0]) if core.any() else 0
    alpha = text_alpha(text, x1 - x0, y1 - y0, left)
    if not alpha.any():
        return
    a = alpha.astype(np.float32) / 255.0
    region = pixels[y0:y1, x0:x1].astype(np.float32)
    if region.ndim == 3:
        a = a[..., None]
    blended = region * (1.0 - a) + np.asarray(colour, np.float32) * a
    pixels[y0:y1, x0:x1] = np.clip(np.rint(blended), 0, 255).astype(np.uint8)


def form_lines(pixels: np.ndarray, box: tuple[int, int, int, int], threshold: float,
               region: tuple[int, int, int, int]) -> np.ndarray:
    """Mask over ``region`` of the form rules near ``box``: ink runs too long to be glyph strokes.

    Horizontal runs of at least ``max(15, 1.5 h)`` pixels and vertical runs
    of at least ``1.5 h`` (``h`` the box height), looked for in the box grown
    by ``max(4, h / 2)``: underlines and table borders that cross a word box
    are kept, not erased.
    """
    height, width = pixels.shape[:2]
    x0, y0, x1, y1 = box
    rx0, ry0, rx1, ry1 = region
    box_h = y1 - y0
    ext = max(4, box_h // 2)
    cx0, cy0 = max(0, min(x0 - ext, rx0)), max(0, min(y0 - ext, ry0))
    cx1, cy1 = min(width, max(x1 + ext, rx1)), min(height, max(y1 + ext, ry1))
    ink = (_gray(pixels[cy0:cy1, cx0:cx1]) <= threshold).astype(np.uint8)
    long_h, long_v = max(15, int(1.5 * box_h)), max(6, int(1.5 * box_h))
    rules = cv2.morphologyEx(ink, cv2.MORPH_OPEN, np.ones((1, long_h), np.uint8)) > 0
    rules |= cv2.morphologyEx(ink, cv2.MORPH_OPEN, np.ones((long_v, 1), np.uint8)) > 0
    return rules[ry0 - cy0:ry1 - cy0, rx0 - cx0:rx1 - cx0]


def ink_threshold(crop: np.ndarray) -> float | None:
    """Grey level at or below which a box's pixels are ink (Otsu), or ``None`` for a box without ink.

    A crop whose grey levels span less than :data:`MIN_CONTRAST` (2nd to 98th
    percentile) has no ink.
    """
    gray = _gray(crop)
    if not gray.size:
        return None
    lo, hi = np.percentile(gray, [2, 98])
    if hi - lo < MIN_CONTRAST:
        return None
    threshold, _ = cv2.threshold(np.ascontiguousarray(gray), 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    return float(threshold)


def ink_colour(crop: np.ndarray, core: np.ndarray) -> tuple[int, ...] | int:
    """The old ink's colour: median of the darker half of the ``core`` ink pixels (grey level or RGB)."""
    if not core.any():
        return DEFAULT_INK if crop.ndim == 2 else (DEFAULT_INK,) * 3
    gray = _gray(crop)[core]
    dark = gray <= np.median(gray)
    values = crop[core][dark]
    if crop.ndim == 2:
        return int(np.median(values))
    return tuple(int(v) for v in np.median(values, axis=0))


def text_alpha(text: str, box_w: int, box_h: int, left: int = 0) -> np.ndarray:
    """Coverage (0-255, ``box_h x box_w``) of ``text`` fitted to a box, starting ``left`` pixels in when it fits."""
    size = _size_for_height(box_h)
    font = _font(size)
    l, _, r, _ = font.getbbox(text, anchor="ls")
    text_w = max(1, r - l)
    if text_w * MIN_SQUEEZE > box_w:  # too wide even squeezed: smaller font
        size = max(1, int(size * box_w / (text_w * MIN_SQUEEZE)))
        font = _font(size)
        l, _, r, _ = font.getbbox(text, anchor="ls")
        text_w = max(1, r - l)
    top, bottom = _line_extent(size)  # cap top and descender bottom relative to the baseline
    baseline = (box_h - (bottom - top)) // 2 - top
    canvas = Image.new("L", (text_w, box_h), 0)
    ImageDraw.Draw(canvas).text((-l, baseline), text, fill=255, font=font, anchor="ls")
    alpha = np.asarray(canvas)
    if text_w > box_w:
        alpha = cv2.resize(alpha, (box_w, box_h), interpolation=cv2.INTER_AREA)
    out = np.zeros((box_h, box_w), dtype=np.uint8)
    start = max(0, min(left, box_w - alpha.shape[1]))
    out[:, start:start + alpha.shape[1]] = alpha[:, : box_w - start]
    return out


def _inpaint(pixels: np.ndarray, box: tuple[int, int, int, int], erase: np.ndarray, threshold: float) -> None:
    """Fill ``erase`` (a mask over ``box``) by Telea inpainting from the paper around it, in place.

    Every ink pixel near the box (darker than ``threshold``: neighbouring
    words, form rules, strokes beyond the box) is masked too, so only paper
    feeds the fill and no dark stroke is smeared into the hole; only the
    ``erase`` pixels are written.
    """
    height, width = pixels.shape[:2]
    x0, y0, x1, y1 = box
    cx0, cy0 = max(0, x0 - CONTEXT), max(0, y0 - CONTEXT)
    cx1, cy1 = min(width, x1 + CONTEXT), min(height, y1 + CONTEXT)
    region = np.ascontiguousarray(pixels[cy0:cy1, cx0:cx1])
    hole = np.zeros(region.shape[:2], dtype=np.uint8)
    hole[y0 - cy0:y1 - cy0, x0 - cx0:x1 - cx0] = erase
    dark = cv2.dilate((_gray(region) <= threshold).astype(np.uint8), np.ones((3, 3), np.uint8))
    mask = hole | dark
    if mask.mean() > 0.9:  # hardly any paper in sight: fill from whatever is there
        mask = hole
    filled = cv2.inpaint(region, mask, 3, cv2.INPAINT_TELEA)
    inside = erase if pixels.ndim == 2 else erase[..., None]
    pixels[y0:y1, x0:x1] = np.where(inside, filled[y0 - cy0:y1 - cy0, x0 - cx0:x1 - cx0], pixels[y0:y1, x0:x1])


def _gray(crop: np.ndarray) -> np.ndarray:
    if crop.ndim == 2:
        return crop
    return cv2.cvtColor(np.ascontiguousarray(crop), cv2.COLOR_RGB2GRAY)


@lru_cache(maxsize=256)
def _font(size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.load_default(size=max(1, int(size)))


@lru_cache(maxsize=256)
def _line_extent(size: int) -> tuple[int, int]:
    """Top of ``H`` and bottom of ``g`` relative to the baseline, at ``size``."""
    _, top, _, bottom = _font(size).getbbox("Hg", anchor="ls")
    return top, bottom


@lru_cache(maxsize=1024)
def _size_for_height(box_h: int) -> int:
    """Largest font size whose ``"Hg"`` (cap top to descender) fits ``box_h`` pixels."""
    top, bottom = _line_extent(100)
    size = max(1, int(100 * box_h / max(1, bottom - top)))
    while size > 1:
        top, bottom = _line_extent(size)
        if bottom - top <= box_h:
            break
        size -= 1
    return size
