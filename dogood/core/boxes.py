"""Plain functions on axis-aligned boxes ``(x0, y0, x1, y1)`` in absolute pixels.

Boxes are closed intervals: ``x0 <= x1`` and ``y0 <= y1``; a box whose sides
touch another's intersects it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

Box = tuple[int, int, int, int]


def normalize_box(box: Sequence[float], width: int, height: int) -> list[int]:
    """Scale a pixel box to LayoutLM's 0-1000 grid: ``int(1000 * x / width)``.

    This is the formula of the LayoutLM papers and the Hub's FUNSD loaders.
    Values are clamped to 0-1000 so a box on the page edge stays in range.
    """
    if width <= 0 or height <= 0:
        raise ValueError(f"page size must be positive, got {width}x{height}")
    x0, y0, x1, y1 = box
    scaled = (
        int(1000 * x0 / width),
        int(1000 * y0 / height),
        int(1000 * x1 / width),
        int(1000 * y1 / height),
    )
    return [min(1000, max(0, v)) for v in scaled]


def normalize_boxes(boxes: Sequence[Sequence[int]], width: int, height: int) -> list[list[int]]:
    """:func:`normalize_box` of each of the integer pixel ``boxes`` at once, equal value for value (one NumPy
    division over all of them: ``1000 * x`` is exact in float64 and the division rounds as Python's does)."""
    if width <= 0 or height <= 0:
        raise ValueError(f"page size must be positive, got {width}x{height}")
    if not len(boxes):
        return []
    arr = np.asarray(boxes, dtype=np.int64).reshape(-1, 4)
    scaled = np.trunc(1000 * arr / np.array([width, height, width, height], dtype=np.int64))
    return np.clip(scaled, 0, 1000).astype(np.int64).tolist()


def denormalize_box(box: Sequence[int], width: int, height: int) -> Box:
    """Inverse of :func:`normalize_box`, up to the 1/1000 rounding it lost."""
    x0, y0, x1, y1 = box
    return (
        round(x0 * width / 1000),
        round(y0 * height / 1000),
        round(x1 * width / 1000),
        round(y1 * height / 1000),
    )


def clip_box(box: Sequence[float], width: int, height: int) -> Box:
    """Clip a box to the page ``[0, width] x [0, height]``; keeps ``x0 <= x1``."""
    x0, y0, x1, y1 = (int(round(v)) for v in box)
    x0 = min(max(x0, 0), width)
    x1 = min(max(x1, 0), width)
    y0 = min(max(y0, 0), height)
    y1 = min(max(y1, 0), height)
    return (min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1))


def union_boxes(boxes: Iterable[Sequence[int]]) -> Box:
    """Smallest box enclosing all ``boxes``; raises ``ValueError`` on none."""
    arr = np.asarray(list(boxes), dtype=np.int64).reshape(-1, 4)
    if arr.shape[0] == 0:
        raise ValueError("union of no boxes")
    return (
        int(arr[:, 0].min()),
        int(arr[:, 1].min()),
        int(arr[:, 2].max()),
        int(arr[:, 3].max()),
    )


def dilate_box(box: Sequence[int], dx: float, dy: float) -> tuple[float, float, float, float]:
    """Grow a box by ``dx`` on the left and right and ``dy`` on top and bottom (also elementwise, as
    :func:`boxes_intersect`)."""
    x0, y0, x1, y1 = box
    return (x0 - dx, y0 - dy, x1 + dx, y1 + dy)


def boxes_intersect(a: Sequence[float], b: Sequence[float]) -> bool:
    """True when closed boxes ``a`` and ``b`` share at least one point.

    Also elementwise: with arrays for coordinates (``a = boxes.T``, shape ``(4, ...)``) the answer is a
    boolean array (numpy broadcasting), as :func:`dogood.shifts.layout.merge.merge_boxes` uses it.
    """
    return (a[0] <= b[2]) & (b[0] <= a[2]) & (a[1] <= b[3]) & (b[1] <= a[3])


def transfer_owners(old: np.ndarray, new: np.ndarray, min_overlap: float, group: np.ndarray | None = None) -> np.ndarray:
    """For each new box, the group of old boxes covering most of its area (-1 when none covers ``min_overlap`` of it).

    ``group[i]`` is the group of old box ``i`` (an entity; -1 for none); by
    default each old box is its own group. An OCR word often spans several
    annotated words of one entity, so coverage is summed per group. Used by the ``reocr`` shift (labels to
    the words Tesseract reads) and by the OCR pipeline model (predicted labels back to the gold words).
    """
    if group is None:
        group = np.arange(len(old))
    if not len(new) or not len(old) or not (group >= 0).any():
        return np.full(len(new), -1, np.int64)
    ix = np.clip(np.minimum(new[:, None, 2], old[None, :, 2]) - np.maximum(new[:, None, 0], old[None, :, 0]), 0, None)
    iy = np.clip(np.minimum(new[:, None, 3], old[None, :, 3]) - np.maximum(new[:, None, 1], old[None, :, 1]), 0, None)
    inter = (ix * iy).astype(np.float64)
    keep = group >= 0
    onehot = np.zeros((len(old), int(group.max()) + 1))
    onehot[np.flatnonzero(keep), group[keep]] = 1.0
    per_group = inter @ onehot
    area = np.maximum((new[:, 2] - new[:, 0]) * (new[:, 3] - new[:, 1]), 1)
    best = per_group.argmax(axis=1)
    share = per_group[np.arange(len(new)), best] / area
    return np.where(share >= min_overlap, best, -1)
