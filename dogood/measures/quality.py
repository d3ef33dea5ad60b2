"""Image quality of a shifted page against its source: SSIM and MS-SSIM, as is and after aligning the page.

SSIM (Wang, Bovik, Sheikh and Simoncelli 2004) with the Gaussian window of the paper (11 taps, sigma 1.5,
``K1 = 0.01``, ``K2 = 0.03``, population statistics, the ``(11 - 1) / 2`` pixels at each border left out):
scikit-image's ``structural_similarity(..., gaussian_weights=True, sigma=1.5, use_sample_covariance=False,
data_range=255)``. MS-SSIM (Wang, Simoncelli and Bovik 2003): the contrast-structure terms of the first four of
five dyadic scales and the SSIM of the fifth, weighted ``(0.0448, 0.2856, 0.3001, 0.2363, 0.1333)``, each scale
the previous one averaged over 2x2 pixels, as ``pytorch_msssim.ms_ssim`` computes it.

Both are computed here with OpenCV's separable filters rather than called from those libraries: scikit-image has
no MS-SSIM (it returns no contrast-structure term), pytorch-msssim needs torch, which a build does not, and
scikit-image's SSIM takes several times as long as this one on a FUNSD page (``bench/measure_geometry.py``), where
a severity build measures every page. ``tests/measures/test_quality.py`` checks both against those libraries on the same
pages (equal within 1e-4 for SSIM; MS-SSIM equal on even-sized pages, within 2e-3 where pytorch-msssim pads odd
sizes with zeros before pooling).

Pages are compared in luma (ITU-R BT.601, OpenCV's). :func:`aligned` first brings the shifted page back onto the
source's frame by the similarity (rotation, scale, shift) that best carries the source's word-box centres onto the
shifted page's (least squares), so a page that only shrank or turned as a whole scores near 1: what is left is the
page's non-rigid deformation and its pixel changes.
"""

from __future__ import annotations

from typing import NamedTuple

import cv2
import numpy as np

#: MS-SSIM's scale weights (Wang et al. 2003, Table 1 / eq. 7).
WEIGHTS = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333)
#: The Gaussian window: taps and sigma.
WINDOW, SIGMA = 11, 1.5
K1, K2 = 0.01, 0.03


def luma(pixels: np.ndarray) -> np.ndarray:
    """The page's luma (RGB pages through BT.601, grey pages as they are), float32 in 0-1."""
    pixels = np.asarray(pixels)
    grey = cv2.cvtColor(pixels, cv2.COLOR_RGB2GRAY) if pixels.ndim == 3 else pixels
    return grey.astype(np.float32) * np.float32(1 / 255)


_KERNEL = cv2.getGaussianKernel(WINDOW, SIGMA, cv2.CV_64F).astype(np.float32)


def _filter(image: np.ndarray) -> np.ndarray:
    return cv2.sepFilter2D(image, cv2.CV_32F, _KERNEL, _KERNEL, borderType=cv2.BORDER_REFLECT)


def _terms(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """``(SSIM, contrast-structure)`` of two float32 0-1 images: the means of the two maps over the window's valid
    region (float32 on 0-1 values: within 1e-5 of float64 on FUNSD pages)."""
    c1, c2 = np.float32(K1 ** 2), np.float32(K2 ** 2)
    mx, my = _filter(x), _filter(y)
    mxx, myy, mxy = cv2.multiply(mx, mx), cv2.multiply(my, my), cv2.multiply(mx, my)
    vsum = _filter(cv2.multiply(x, x)) + _filter(cv2.multiply(y, y)) - mxx - myy
    cov = _filter(cv2.multiply(x, y)) - mxy
    cs = cv2.divide(2 * cov + c2, vsum + c2)
    lum = cv2.divide(2 * mxy + c1, mxx + myy + c1)
    pad = (WINDOW - 1) // 2
    inner = (slice(pad, -pad), slice(pad, -pad))
    return float(cv2.multiply(lum, cs)[inner].mean(dtype=np.float64)), float(cs[inner].mean(dtype=np.float64))


def _check(a: np.ndarray, b: np.ndarray, scales: int = 1) -> None:
    if a.shape != b.shape:
        raise ValueError(f"the pages differ in size: {a.shape[::-1]} and {b.shape[::-1]}")
    smallest = (WINDOW - 1) * 2 ** (scales - 1) + 1
    if min(a.shape) < smallest:
        raise ValueError(f"a page of {a.shape[1]}x{a.shape[0]} is too small for {scales} scale(s) of an "
                         f"{WINDOW}-pixel window (at least {smallest} a side)")


def ssim(source: np.ndarray, shifted: np.ndarray) -> float:
    """Mean SSIM of two 8-bit pages of one size (luma; scikit-image's Gaussian-window SSIM)."""
    a, b = luma(source), luma(shifted)
    _check(a, b)
    return _terms(a, b)[0]


def ms_ssim(source: np.ndarray, shifted: np.ndarray) -> float:
    """MS-SSIM of two 8-bit pages of one size (luma; five scales, Wang et al. 2003's weights; negative terms
    count 0, as pytorch-msssim clips them)."""
    return both(source, shifted)[1]


def both(source: np.ndarray, shifted: np.ndarray) -> tuple[float, float]:
    """``(SSIM, MS-SSIM)`` in one pass (the first scale's terms serve both)."""
    a, b = luma(source), luma(shifted)
    _check(a, b, len(WEIGHTS))
    value, first = 1.0, 0.0
    for level, weight in enumerate(WEIGHTS):
        full, cs = _terms(a, b)
        if level == 0:
            first = full
        value *= max(full if level == len(WEIGHTS) - 1 else cs, 0.0) ** weight
        if level < len(WEIGHTS) - 1:
            a, b = _halve(a), _halve(b)
    return first, value


def _halve(image: np.ndarray) -> np.ndarray:
    """The mean of each 2x2 block (an odd last row or column is left out)."""
    h, w = (image.shape[0] // 2) * 2, (image.shape[1] // 2) * 2
    return cv2.resize(image[:h, :w], (w // 2, h // 2), interpolation=cv2.INTER_AREA)


def similarity(source_points: np.ndarray, shifted_points: np.ndarray) -> np.ndarray | None:
    """The 2x3 similarity (rotation, uniform scale, shift) carrying ``source_points`` onto ``shifted_points`` in the
    least-squares sense (Umeyama's closed form, OpenCV's ``estimateAffinePartial2D`` model); ``None`` with fewer
    than two distinct points."""
    src = np.asarray(source_points, np.float64).reshape(-1, 2)
    dst = np.asarray(shifted_points, np.float64).reshape(-1, 2)
    if len(np.unique(src, axis=0)) < 2:
        return None
    ms, md = src.mean(axis=0), dst.mean(axis=0)
    s, d = src - ms, dst - md
    a = (s * d).sum()  # sum of x x' + y y'
    b = (s[:, 0] * d[:, 1] - s[:, 1] * d[:, 0]).sum()
    norm = (s * s).sum()
    if norm <= 0:
        return None
    c, t = a / norm, b / norm  # scale * cos, scale * sin
    rot = np.array([[c, -t], [t, c]])
    return np.column_stack([rot, md - rot @ ms])


def aligned(source_pixels: np.ndarray, shifted_pixels: np.ndarray, source_boxes, shifted_boxes) -> np.ndarray | None:
    """The shifted page brought back onto the source's frame (its size) by the best similarity between the word
    boxes' centres (:func:`similarity`); ``None`` when the words do not correspond one to one (other counts) or
    are too few."""
    a = np.asarray(source_boxes, np.float64).reshape(-1, 4)
    b = np.asarray(shifted_boxes, np.float64).reshape(-1, 4)
    if len(a) != len(b) or len(a) < 3:
        return None
    centre = lambda boxes: np.column_stack([(boxes[:, 0] + boxes[:, 2]) / 2, (boxes[:, 1] + boxes[:, 3]) / 2])  # noqa: E731
    matrix = similarity(centre(a) - 0.5, centre(b) - 0.5)  # pixel centres
    if matrix is None:
        return None
    height, width = np.asarray(source_pixels).shape[:2]
    return cv2.warpAffine(np.asarray(shifted_pixels), matrix, (width, height),
                          flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP, borderMode=cv2.BORDER_CONSTANT,
                          borderValue=(0, 0, 0))


class Quality(NamedTuple):
    """One page's quality against its source: SSIM and MS-SSIM as is (``None`` where the sizes differ) and after
    alignment (``None`` where the words do not correspond)."""

    ssim: float | None
    ms_ssim: float | None
    aligned_ssim: float | None
    aligned_ms_ssim: float | None


def page_quality(source_pixels: np.ndarray, shifted_pixels: np.ndarray, source_boxes=None,
                 shifted_boxes=None) -> Quality:
    """:class:`Quality` of ``shifted_pixels`` against ``source_pixels`` (aligned by the boxes, when given)."""
    same = np.asarray(source_pixels).shape[:2] == np.asarray(shifted_pixels).shape[:2]
    raw = both(source_pixels, shifted_pixels) if same else (None, None)
    back = None
    if source_boxes is not None and shifted_boxes is not None:
        if raw[0] is not None and np.array_equal(np.asarray(source_boxes), np.asarray(shifted_boxes)):
            return Quality(*raw, *raw)  # the words did not move: aligning is the identity
        back = aligned(source_pixels, shifted_pixels, source_boxes, shifted_boxes)
    if back is None:
        return Quality(*raw, None, None)
    return Quality(*raw, *both(source_pixels, back))
