"""Pixel helpers shared by the RoDLA-style image shifts (rotate, blurs, watermark, speckle, paper texture, light).

The page's paper and ink tones (:func:`paper_tone`, :func:`ink_tone`), smooth masks made on a coarse grid and
upsampled (:func:`smooth_mask`), the two ways light changes a page (:func:`darken`, :func:`lighten`) and the
:class:`~dogood.shifts.base.Outcome` every one of these shifts returns (:func:`pixel_outcome`). All OpenCV and
numpy; nothing here draws random numbers.
"""

from __future__ import annotations

import cv2
import numpy as np

from dogood.core.document import Document, PageImage
from dogood.shifts.base import Outcome

#: A pixel counts as changed when its grey level (any channel) moved by more than this (as ``scan_quality``).
CHANGED = 32


def luma(pixels: np.ndarray) -> np.ndarray:
    """HxW uint8 luminance of an HxW or HxWx3 (RGB) page."""
    return pixels if pixels.ndim == 2 else cv2.cvtColor(pixels, cv2.COLOR_RGB2GRAY)


def _median_tone(pixels: np.ndarray, chosen: np.ndarray) -> np.ndarray:
    """Per channel, the median (the lower middle value) of the ``chosen`` pixels (all of them when none is), from
    OpenCV's masked 256-bin histograms: a millisecond a page where ``np.median`` sorts."""
    mask = chosen.astype(np.uint8) if chosen.any() else None
    out = []
    for c in range(1 if pixels.ndim == 2 else pixels.shape[2]):
        hist = cv2.calcHist([pixels], [c], mask, [256], [0, 256]).reshape(-1)
        cumulative = np.cumsum(hist)
        out.append(float(np.searchsorted(cumulative, (cumulative[-1] + 1) // 2)))
    return np.array(out)


def paper_tone(pixels: np.ndarray) -> np.ndarray:
    """The page's paper colour, one value per channel (float64): the median of the pixels at or above Otsu's
    threshold of the luma (the light class), so ink, rules and photos do not pull it down."""
    gray = luma(pixels)
    threshold, _ = cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    return _median_tone(pixels, gray >= threshold)


def ink_tone(pixels: np.ndarray) -> np.ndarray:
    """The page's ink colour, one value per channel: the median of the darkest 5% of the pixels below Otsu's
    threshold (the dark class)."""
    gray = luma(pixels)
    threshold, _ = cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    dark = gray < threshold
    if not dark.any():
        return np.zeros(1 if pixels.ndim == 2 else 3)
    cumulative = np.cumsum(cv2.calcHist([gray], [0], dark.astype(np.uint8), [256], [0, 256]).reshape(-1))
    cut = int(np.searchsorted(cumulative, max(1, int(0.05 * cumulative[-1]))))
    return _median_tone(pixels, dark & (gray <= cut))


def smooth_mask(size: tuple[int, int], draw, scale: int = 4, blur: float = 0.0) -> np.ndarray:
    """An HxW float32 mask in [0, 1] drawn at ``1/scale`` of the page size and upsampled bilinearly.

    ``draw(canvas, scale)`` paints 255 into a uint8 canvas of the coarse size (coordinates divided by ``scale``);
    ``blur`` (in page pixels) is the Gaussian sigma of the soft edge, applied on the coarse canvas."""
    width, height = size
    cw, ch = max(1, -(-width // scale)), max(1, -(-height // scale))
    canvas = np.zeros((ch, cw), np.uint8)
    draw(canvas, scale)
    mask = canvas.astype(np.float32) / 255.0
    if blur > 0:
        mask = cv2.GaussianBlur(mask, (0, 0), sigmaX=max(blur / scale, 0.3), borderType=cv2.BORDER_REPLICATE)
    return cv2.resize(mask, (cw * scale, ch * scale), interpolation=cv2.INTER_LINEAR)[:height, :width]


def darken(pixels: np.ndarray, amount: np.ndarray) -> np.ndarray:
    """Each pixel times ``1 - amount`` (HxW in [0, 1]): less light falls there, on paper and ink alike."""
    factor = 1.0 - np.clip(amount, 0.0, 1.0)
    if pixels.ndim == 3:
        factor = factor[..., None]
    return np.clip(pixels.astype(np.float32) * factor + 0.5, 0, 255).astype(np.uint8)


def lighten(pixels: np.ndarray, amount: np.ndarray) -> np.ndarray:
    """Each pixel moved toward white by ``amount`` (HxW in [0, 1]): glare over paper and ink alike."""
    a = np.clip(amount, 0.0, 1.0)
    if pixels.ndim == 3:
        a = a[..., None]
    p = pixels.astype(np.float32)
    return np.clip(p + (255.0 - p) * a + 0.5, 0, 255).astype(np.uint8)


def filtered(pixels: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    """``pixels`` convolved with ``kernel`` (``cv2.filter2D``, borders replicated: no dark frame)."""
    return cv2.filter2D(pixels, -1, kernel.astype(np.float32), borderType=cv2.BORDER_REPLICATE)


def pixels_changed(before: np.ndarray, after: np.ndarray) -> int:
    """Pixels whose grey level moved by more than :data:`CHANGED` in any channel (same-size pages)."""
    moved = cv2.absdiff(before, after)
    if moved.ndim == 3:
        moved = cv2.max(cv2.max(moved[..., 0], moved[..., 1]), moved[..., 2])
    return int(np.count_nonzero(moved > CHANGED))  # not cv2.compare: it reads a 1x1 page as a scalar


def pixel_outcome(doc: Document, out: np.ndarray, counts: dict[str, int] | None = None) -> Outcome:
    """The document with page ``out`` (words, boxes and labels kept: a pixel-only shift), counting ``words`` and
    ``pixels_changed`` and any ``counts`` given."""
    before = doc.image.to_array()
    if before.ndim != out.ndim:  # a grey page that turned colour (a coloured watermark)
        before = cv2.cvtColor(before, cv2.COLOR_GRAY2RGB)
    all_counts = {"words": len(doc.words), "pixels_changed": pixels_changed(before, out), **(counts or {})}
    return Outcome(doc.replace(image=PageImage.from_array(out)), all_counts)
