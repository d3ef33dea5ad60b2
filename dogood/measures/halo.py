"""Does a page show rectangles at its word boxes? A test for box-shaped cues in a shifted background.

A shift that changes the background under each word as a rectangle (a pale
box, a darker box) lets a vision model read the word boxes off the pixels: a
layout cue the original page does not have. This module measures it.

:func:`edge_steps` is the statistic. For a rectangle grown by an offset,
along each of its four sides, four strips ``band`` pixels wide are read
(two inside, two outside) and, per position along the side, the step
across the side (first strip outside minus first strip inside) less the
mean of the steps beside it (a smooth ramp is no edge; a rectangle's edge
is a step). Ink pixels are left out. The per-position values are averaged
along the side *with their sign* (a straight edge adds up, photo texture
cancels) and divided by their standard error (a t-value, with a floor of
half a grey level of noise: a lightened or darkened region has weaker
texture, which must not read as an edge). The four sides' absolute values
are averaged, and a rectangle's statistic is the largest over a few
offsets: the box itself, and grown by a quarter, a half (where a guard that
paints boxes grown by half their height puts its edge) and one time its
height.

:func:`random_rectangles` places rectangles of the words' sizes uniformly
on the page, away from every word; :func:`halo_test` compares the statistic
at the word boxes with the one at those rectangles (Mann-Whitney U, two-sided,
and the ratio of medians). On a page with no box cue the two are drawn from
the same distribution (the photo does not know where the words are), as
long as the background is alike everywhere: one real photo has its subject
in one place, which random placement compares too. Pool many pages with
different photos (``bench/measure_natural.py``: the 50 FUNSD test pages)
or use a stationary background (the tests: a "dead leaves" texture).
"""

from __future__ import annotations

import cv2
import numpy as np

#: Offsets at which a rectangle's sides are probed, as fractions of its height.
OFFSETS = (0.0, 0.25, 0.5, 1.0)


def _offsets(heights: np.ndarray, offsets) -> np.ndarray:
    """(n, k) integer offsets in pixels: fractions of each rectangle's height, at least 1 apart from 0."""
    out = np.rint(np.outer(heights, np.asarray(offsets, float))).astype(np.int64)
    return np.where(np.asarray(offsets)[None, :] > 0, np.maximum(out, 1), out)


def edge_steps(
    luma: np.ndarray,
    rects: np.ndarray,
    *,
    exclude: np.ndarray | None = None,
    exclude_at: np.ndarray | None = None,
    offsets=OFFSETS,
    band: int = 2,
    normalise: bool = True,
    detrend: bool = True,
) -> np.ndarray:
    """Per rectangle, the strongest straight edge along its sides over ``offsets`` (see the module docstring).

    ``luma``: HxW luminance. ``rects``: (n, 4) ``(x0, y0, x1, y1)``.
    ``exclude``: HxW bool, pixels left out (ink). ``exclude_at``: (n, 4)
    rectangles of the same sizes where ``exclude`` is read for each
    rectangle instead (a random rectangle then leaves out the pixels its
    word leaves out, so both are averaged over as many positions).
    ``normalise``: t-values
    (default) or raw steps in grey levels. Sides outside the page are
    skipped; a rectangle with no usable side gets NaN.
    """
    luma = np.asarray(luma, np.float32)
    h, w = luma.shape
    rects = np.asarray(rects, np.int64).reshape(-1, 4)
    offs = _offsets(rects[:, 3] - rects[:, 1], offsets)
    pad = int(offs.max(initial=0)) + 2 * band + 1
    valid = np.ones((h + 2 * pad, w + 2 * pad), bool)  # padded: off the page counts as free of ink
    if exclude is not None:
        valid[pad : pad + h, pad : pad + w] = ~np.asarray(exclude, bool)
    at = rects if exclude_at is None else np.asarray(exclude_at, np.int64).reshape(-1, 4)
    shifts = (at[:, :2] - rects[:, :2]).tolist()
    result = np.full(len(rects), np.nan)
    for i, (x0, y0, x1, y1) in enumerate(rects.tolist()):
        dx, dy = shifts[i]

        def usable(rows: slice, cols: slice, axis: int) -> np.ndarray:
            r = slice(rows.start + dy + pad, rows.stop + dy + pad)
            c = slice(cols.start + dx + pad, cols.stop + dx + pad)
            return valid[r, c].all(axis=axis)

        best = np.nan
        for o in offs[i].tolist():
            a0, b0, a1, b1 = x0 - o, y0 - o, x1 + o, y1 + o
            across_x = slice(max(a0, 0), min(a1, w))
            across_y = slice(max(b0, 0), min(b1, h))
            values = []
            # each side: the coordinate of its edge, which way is outside, the extent of the page along that axis
            for edge, outward, axis in ((b0, -1, 0), (b1, 1, 0), (a0, -1, 1), (a1, 1, 1)):
                limit = h if axis == 0 else w
                reach_ = 2 * band if detrend else band
                if edge - reach_ < 0 or edge + reach_ > limit:
                    continue
                strips = {}  # k: strip k bands out (k >= 0) or in (k < 0) from the edge
                ok = None
                for k in ((-2, -1, 0, 1) if detrend else (-1, 0)):
                    lo = edge + k * band if outward > 0 else edge - (k + 1) * band
                    span = slice(lo, lo + band)
                    rows, cols = (span, across_x) if axis == 0 else (across_y, span)
                    if luma[rows, cols].size == 0:
                        break
                    strips[k] = luma[rows, cols].mean(axis=axis)
                    good = usable(rows, cols, axis)
                    ok = good if ok is None else ok & good
                else:
                    if ok.sum() < 3:
                        continue
                    d = strips[0] - strips[-1]  # the step across the edge, outside minus inside
                    if detrend:  # less the mean of the steps beside it: a smooth ramp is no edge
                        d = d - 0.5 * ((strips[1] - strips[0]) + (strips[-1] - strips[-2]))
                    d = d[ok]
                    m = float(d.mean())
                    if normalise:
                        se = float(d.std(ddof=1)) / np.sqrt(len(d))
                        values.append(abs(m) / max(se, 0.5 / np.sqrt(len(d))))  # half a grey level: JPEG noise floor
                    else:
                        values.append(abs(m))
            if values:
                v = float(np.mean(values))
                best = v if np.isnan(best) else max(best, v)
        result[i] = best
    return result


def reach(rects: np.ndarray, offsets=OFFSETS, band: int = 2) -> np.ndarray:
    """Per rectangle, how far beyond it :func:`edge_steps` reads pixels."""
    rects = np.asarray(rects, np.int64).reshape(-1, 4)
    return _offsets(rects[:, 3] - rects[:, 1], offsets).max(axis=1) + 2 * band


def random_rectangles(
    boxes: np.ndarray, shape: tuple[int, int], rng: np.random.Generator, *, offsets=OFFSETS, band: int = 2, tries: int = 200
) -> tuple[np.ndarray, np.ndarray]:
    """Rectangles of the boxes' sizes placed uniformly where their probed area meets no word's.

    Each word box gets one rectangle of its width and height, at a uniform
    position such that the rectangle grown by :func:`reach` stays on the
    page and off every word box grown the same way. A box with no such
    position within ``tries`` draws gets none. Returns the rectangles and,
    per rectangle, the index of its box.
    """
    h, w = shape
    boxes = np.asarray(boxes, np.int64).reshape(-1, 4)
    r = reach(boxes, offsets, band)
    occupied = np.zeros((h, w), np.uint8)
    for (x0, y0, x1, y1), g in zip(boxes.tolist(), r.tolist()):
        occupied[max(y0 - g, 0) : max(y1 + g, 0), max(x0 - g, 0) : max(x1 + g, 0)] = 1
    taken = cv2.integral(occupied)  # (h+1, w+1)
    out, paired = [], []
    for i, ((x0, y0, x1, y1), g) in enumerate(zip(boxes.tolist(), r.tolist())):
        bw, bh = x1 - x0, y1 - y0
        if bw <= 0 or bh <= 0 or bw + 2 * g >= w or bh + 2 * g >= h:
            continue
        xs = rng.integers(g, w - bw - g, tries)
        ys = rng.integers(g, h - bh - g, tries)
        X0, Y0, X1, Y1 = xs - g, ys - g, xs + bw + g, ys + bh + g
        hit = taken[Y1, X1] - taken[Y0, X1] - taken[Y1, X0] + taken[Y0, X0]
        free = np.flatnonzero(hit == 0)
        if len(free):
            k = free[0]
            out.append((xs[k], ys[k], xs[k] + bw, ys[k] + bh))
            paired.append(i)
    return np.array(out, np.int64).reshape(-1, 4), np.array(paired, np.int64)


def halo_test(words: np.ndarray, randoms: np.ndarray) -> dict:
    """Two-sided Mann-Whitney U and the ratio of medians of the statistic at word boxes vs random rectangles."""
    from scipy.stats import mannwhitneyu

    a, b = np.asarray(words, float), np.asarray(randoms, float)
    a, b = a[~np.isnan(a)], b[~np.isnan(b)]
    p = float(mannwhitneyu(a, b, alternative="two-sided").pvalue)
    greater = float(mannwhitneyu(a, b, alternative="greater").pvalue)
    return {
        "n_words": len(a),
        "n_random": len(b),
        "median_words": float(np.median(a)),
        "median_random": float(np.median(b)),
        "ratio": float(np.median(a) / np.median(b)),
        "p": p,
        "p_greater": greater,
    }
