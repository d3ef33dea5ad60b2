"""Word quads: the four corners of each word box carried through a geometric shift, exactly.

An axis-aligned box loses a turned or warped word's geometry: after a 7 degree turn the box of a long word
holds a wedge of paper above and below it. A *quad* keeps it: the four points where the corners of the
word's box went (top-left, top-right, bottom-right, bottom-left of the word as written), the polygon that
text detectors trained on ICDAR-style quadrilaterals, and COCO segmentations, read.

Coordinates are pixel edges, as word boxes (:mod:`dogood.core.boxes`): the box ``(x0, y0, x1, y1)`` has the
corners ``(x0, y0)`` ... ``(x0, y1)``. OpenCV's maps work on pixel centres, so a corner ``c`` is carried as the
centre coordinate ``c - 0.5`` and brought back (+0.5), as :mod:`dogood.page.affine` does for boxes.

- :func:`affine_quads`: through a 2x3 matrix (``rotate``): exact.
- :func:`warp_quads`: through a dense *backward* map (``distort``, ``capture``, a map provider), which says
  where each output pixel comes from; a corner's place is where the map takes the value of that corner:
  :func:`invert_map` finds it (nearest map node from a k-d tree, then Newton steps on the bilinearly
  interpolated map, which is how ``cv2.remap`` reads it), to within 1/1000 pixel where the map covers the
  corner.

Written here: augmentation libraries carry keypoints through a transform they apply forward (imgaug,
albumentations), but none inverts a backward map given as an array, which is what dogood's warps and
learned map providers produce. The k-d tree is SciPy's.
"""

from __future__ import annotations

import numpy as np

#: Newton steps at most, and the error (source pixels) at which a point counts as found.
MAX_STEPS = 20
TOLERANCE = 1e-3
# half the spacing of the central differences of the Jacobian, in output pixels
_H = 0.5
_DX, _DY = np.array([_H, 0.0]), np.array([0.0, _H])


def box_quads(boxes) -> np.ndarray:
    """``(n, 4, 2)`` corners (top-left, top-right, bottom-right, bottom-left) of ``(n, 4)`` boxes, pixel edges."""
    b = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    return np.stack([b[:, [0, 1]], b[:, [2, 1]], b[:, [2, 3]], b[:, [0, 3]]], axis=1)


def affine_quads(quads, matrix: np.ndarray) -> np.ndarray:
    """Quads ``(n, 4, 2)`` (pixel edges) through a 2x3 affine matrix that maps pixel centres (OpenCV's)."""
    q = np.asarray(quads, dtype=np.float64).reshape(-1, 4, 2) - 0.5
    return q @ np.asarray(matrix[:, :2], np.float64).T + np.asarray(matrix[:, 2], np.float64) + 0.5


def _bilinear(backward_map: np.ndarray, points: np.ndarray) -> np.ndarray:
    """The map's value at fractional output positions ``points`` (``(m, 2)``, x y), bilinear as ``cv2.remap``
    reads it, the border extended."""
    h, w = backward_map.shape[:2]
    x = np.clip(points[:, 0], 0.0, w - 1.0)
    y = np.clip(points[:, 1], 0.0, h - 1.0)
    x0 = np.minimum(np.floor(x).astype(np.int64), max(w - 2, 0))
    y0 = np.minimum(np.floor(y).astype(np.int64), max(h - 2, 0))
    x1, y1 = np.minimum(x0 + 1, w - 1), np.minimum(y0 + 1, h - 1)
    fx, fy = (x - x0)[:, None], (y - y0)[:, None]
    m = backward_map
    top = m[y0, x0] * (1 - fx) + m[y0, x1] * fx
    bottom = m[y1, x0] * (1 - fx) + m[y1, x1] * fx
    return (top * (1 - fy) + bottom * fy).astype(np.float64)


def invert_map(backward_map: np.ndarray, points, stride: int = 16) -> tuple[np.ndarray, np.ndarray]:
    """Where a backward map sends source points: for each point ``p`` (``(m, 2)``, pixel centres of the source),
    the output position ``q`` with ``map(q) = p``, and whether it was found to within :data:`TOLERANCE`.

    The start is the map node (every ``stride`` pixels) whose value lies nearest ``p`` (``scipy.spatial.cKDTree``);
    then Newton steps ``q -= J(q)^-1 (map(q) - p)`` with the Jacobian from central differences of the bilinear
    map. A point the map does not reach (squeezed out, or off the output) ends at the nearest place found,
    clipped to the output, and is reported not found.
    """
    from scipy.spatial import cKDTree

    backward_map = np.asarray(backward_map, dtype=np.float32)
    points = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    h, w = backward_map.shape[:2]
    if not len(points):
        return np.zeros((0, 2)), np.zeros(0, bool)
    ys, xs = np.arange(0, h, stride), np.arange(0, w, stride)
    nodes = backward_map[np.ix_(ys, xs)].reshape(-1, 2).astype(np.float64)
    _, nearest = cKDTree(nodes).query(points)
    q = np.stack([xs[nearest % len(xs)], ys[nearest // len(xs)]], axis=1).astype(np.float64)
    error = _bilinear(backward_map, q) - points
    low, high = np.array([0.0, 0.0]), np.array([w - 1.0, h - 1.0])
    for _ in range(MAX_STEPS):
        active = np.flatnonzero(np.abs(error).max(axis=1) >= TOLERANCE)
        if not len(active):
            break
        qa, ea, pa = q[active], error[active], points[active]
        jx = (_bilinear(backward_map, qa + _DX) - _bilinear(backward_map, qa - _DX)) / (2 * _H)
        jy = (_bilinear(backward_map, qa + _DY) - _bilinear(backward_map, qa - _DY)) / (2 * _H)
        det = jx[:, 0] * jy[:, 1] - jy[:, 0] * jx[:, 1]
        ok = np.abs(det) > 1e-9
        det = np.where(ok, det, 1.0)
        move = np.stack([(jy[:, 1] * ea[:, 0] - jy[:, 0] * ea[:, 1]) / det,
                         (-jx[:, 1] * ea[:, 0] + jx[:, 0] * ea[:, 1]) / det], axis=1)
        move = np.where(ok[:, None], np.clip(move, -4.0 * stride, 4.0 * stride), 0.0)
        size = np.abs(ea).sum(axis=1)
        for scale in (1.0, 0.5, 0.25):  # a step that makes things worse is shortened, then dropped
            candidate = np.clip(qa - scale * move, low, high)
            new_error = _bilinear(backward_map, candidate) - pa
            better = np.abs(new_error).sum(axis=1) < size
            qa = np.where(better[:, None], candidate, qa)
            ea = np.where(better[:, None], new_error, ea)
            size = np.where(better, np.abs(new_error).sum(axis=1), size)
            move = np.where(better[:, None], 0.0, move)
            if better.all():
                break
        if np.array_equal(qa, q[active]):
            break  # nothing moved: the points left are out of the map's reach
        q[active], error[active] = qa, ea
    found = np.abs(error).max(axis=1) < TOLERANCE
    return q, found


def warp_quads(quads, backward_map: np.ndarray) -> tuple[np.ndarray, int]:
    """Quads ``(n, 4, 2)`` of the source page (pixel edges) carried through a backward map onto its output,
    clipped to the output page; and how many words had a corner the map does not reach (placed as near as the
    map goes)."""
    quads = np.asarray(quads, dtype=np.float64).reshape(-1, 4, 2)
    if not len(quads):
        return quads.copy(), 0
    h, w = np.asarray(backward_map).shape[:2]
    q, found = invert_map(backward_map, quads.reshape(-1, 2) - 0.5)
    out = np.clip(q + 0.5, [0.0, 0.0], [float(w), float(h)]).reshape(-1, 4, 2)
    return out, int((~found.reshape(-1, 4)).any(axis=1).sum())


def clip_quads(quads, size: tuple[int, int]) -> np.ndarray:
    """Quads with every corner kept within the ``(width, height)`` page."""
    width, height = size
    return np.clip(np.asarray(quads, dtype=np.float64), [0.0, 0.0], [float(width), float(height)])


def quad_bounds(quads) -> np.ndarray:
    """``(n, 4)`` axis-aligned bounds ``(x0, y0, x1, y1)`` of quads (floats, pixel edges)."""
    q = np.asarray(quads, dtype=np.float64).reshape(-1, 4, 2)
    return np.concatenate([q.min(axis=1), q.max(axis=1)], axis=1)


def quad_tuples(quads) -> list[tuple[float, ...]]:
    """Quads ``(n, 4, 2)`` as one 8-tuple per word, as :class:`dogood.core.document.Word` takes them."""
    return [tuple(q) for q in np.asarray(quads, dtype=np.float64).reshape(-1, 8).tolist()]
