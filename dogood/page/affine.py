"""A page turned by an angle, as one affine map, and word boxes carried through it exactly.

Coordinates: OpenCV's ``warpAffine`` maps pixel *centres* (pixel ``(i, j)`` at ``(i, j)``); a word box
``(x0, y0, x1, y1)`` bounds pixel *edges* (pixel ``i`` spans ``[i, i + 1)``). :func:`box_corners` gives a box's
four corners in centre coordinates, :func:`map_points` carries points through a 2x3 matrix, and
:func:`affine_boxes` takes the bounds of each mapped outline, back in edge coordinates, outward-rounded: the
new box holds every pixel of the turned box, so a word keeps its box's margins around its ink (its looseness)
rather than being re-fitted to its ink.

Written here: OpenCV gives the matrix and the resampling; augmentation libraries (imgaug, albumentations,
detectron2's ``RotationTransform``) rotate a box's corners too, but detectron2 clips the result to the
*original* page size on an expanded canvas (RoDLA's rotation inherits that) and none says which pixel
convention its boxes use.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

CANVASES = ("grow", "page")


def rotation(size: tuple[int, int], angle: float, canvas: str = "grow") -> tuple[np.ndarray, tuple[int, int]]:
    """The 2x3 matrix turning a ``(width, height)`` page by ``angle`` degrees (counter-clockwise, as
    ``cv2.getRotationMatrix2D``) about its centre, and the output size.

    ``canvas="grow"``: the canvas grows to the turned page's bounds (rounded up), the page keeps its scale and is
    centred. ``"page"``: the output keeps the page's size and the turned page is scaled down to fit inside it."""
    width, height = (int(v) for v in size)
    if canvas not in CANVASES:
        raise ValueError(f"canvas must be one of {', '.join(CANVASES)}, got {canvas!r}")
    rad = math.radians(angle)
    c, s = abs(math.cos(rad)), abs(math.sin(rad))
    bound_w, bound_h = width * c + height * s, width * s + height * c  # the turned page's extent (pixel edges)
    if canvas == "grow":
        scale = 1.0
        out_w, out_h = (max(1, int(math.ceil(v - 1e-6))) for v in (bound_w, bound_h))
    else:
        scale = min(1.0, width / bound_w, height / bound_h)
        out_w, out_h = width, height
    matrix = cv2.getRotationMatrix2D(((width - 1) / 2.0, (height - 1) / 2.0), angle, scale)
    matrix[0, 2] += (out_w - width) / 2.0
    matrix[1, 2] += (out_h - height) / 2.0
    return matrix, (out_w, out_h)


def map_points(points: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """Points ``(..., 2)`` through a 2x3 affine matrix."""
    points = np.asarray(points, np.float64)
    return points @ matrix[:, :2].T + matrix[:, 2]


def box_corners(boxes) -> np.ndarray:
    """``(n, 4, 2)`` corners (top-left, top-right, bottom-right, bottom-left) of edge-coordinate boxes, in centre
    coordinates (the outer edges of the box's outer pixels)."""
    b = np.asarray(boxes, np.float64).reshape(-1, 4) - 0.5
    return np.stack([b[:, [0, 1]], b[:, [2, 1]], b[:, [2, 3]], b[:, [0, 3]]], axis=1)


def affine_boxes(boxes, matrix: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """``(n, 4)`` int64 edge-coordinate boxes bounding each box's mapped outline (rounded outward, clipped to
    the ``(width, height)`` output)."""
    boxes = np.asarray(boxes, np.int64).reshape(-1, 4)
    if not len(boxes):
        return boxes.copy()
    mapped = map_points(box_corners(boxes), matrix) + 0.5  # back to edge coordinates
    lo = np.floor(mapped.min(axis=1) + 1e-6)
    hi = np.ceil(mapped.max(axis=1) - 1e-6)
    width, height = size
    out = np.concatenate([lo, hi], axis=1)
    out[:, [0, 2]] = np.clip(out[:, [0, 2]], 0, width)
    out[:, [1, 3]] = np.clip(out[:, [1, 3]], 0, height)
    return out.astype(np.int64)


def warp_page(pixels: np.ndarray, matrix: np.ndarray, size: tuple[int, int], fill, interpolation: int) -> np.ndarray:
    """``pixels`` (HxW or HxWx3 uint8) through ``matrix`` onto a ``(width, height)`` canvas filled with ``fill``
    (a grey level, or one value per channel)."""
    values = np.atleast_1d(np.asarray(fill, np.float64))
    border = tuple(float(v) for v in (np.resize(values, 3) if pixels.ndim == 3 else np.resize(values, 1))) + (0.0,) * (
        4 - (3 if pixels.ndim == 3 else 1))
    return cv2.warpAffine(pixels, matrix, tuple(int(v) for v in size), flags=interpolation,
                          borderMode=cv2.BORDER_CONSTANT, borderValue=border)


def affine_ink_boxes(boxes, matrix: np.ndarray, size: tuple[int, int], ink: np.ndarray) -> tuple[np.ndarray, int]:
    """Like :func:`affine_boxes`, but each box bounds its word's *ink* carried through ``matrix``: the mapped
    squares of the pixels of ``ink`` (a boolean HxW mask of the source page) inside the box, a tight box as OCR
    draws it. A box with no ink in it falls back to its mapped outline. Returns the boxes and how many fell back."""
    boxes = np.asarray(boxes, np.int64).reshape(-1, 4)
    out = affine_boxes(boxes, matrix, size)
    a, b, tx = matrix[0]
    c, d, ty = matrix[1]
    reach = np.array([0.5 * (abs(a) + abs(b)), 0.5 * (abs(c) + abs(d))])  # half the extent of a mapped pixel
    width, height = size
    no_ink = 0
    for i, (x0, y0, x1, y1) in enumerate(boxes.tolist()):
        ys, xs = np.nonzero(ink[max(y0, 0):max(y1, 0), max(x0, 0):max(x1, 0)])
        if not len(xs):
            no_ink += 1
            continue
        xs, ys = xs + max(x0, 0), ys + max(y0, 0)
        px, py = a * xs + b * ys + tx, c * xs + d * ys + ty
        lo = np.floor(np.array([px.min(), py.min()]) - reach + 0.5 + 1e-6)
        hi = np.ceil(np.array([px.max(), py.max()]) + reach + 0.5 - 1e-6)
        out[i] = (np.clip(lo[0], 0, width), np.clip(lo[1], 0, height), np.clip(hi[0], 0, width),
                  np.clip(hi[1], 0, height))
    return out, no_ink
