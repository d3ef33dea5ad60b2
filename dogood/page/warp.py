"""Geometric page distortion through dense backward maps, with exact word-box re-projection.

Do-GOOD's RVL-CDIP-I2 (He et al. 2023, section 3.1) used DocGeoNet-distorted
images, which lost the word boxes. Here a distortion is one dense *backward
map*: a float32 array ``(H, W, 2)`` giving, for each output pixel ``(x, y)``,
the source coordinate ``(sx, sy)`` to sample (the convention of
``cv2.remap``; pixel centres at integer coordinates). Because the map says
where every output pixel comes from, each word box can be carried through it
exactly (:func:`reproject_boxes`).

:func:`distortion_map` makes one map for one or several kinds of
distortion (:func:`fold_warp`, :func:`curve_warp`, :func:`curl_warp`,
:func:`perspective_warp`) from the page size ``(width, height)``, strength
knobs and a ``numpy.random.Generator``. The folds and curves are DocUNet's (Ma et
al., "DocUNet: Document Image Unwarping via a Stacked U-Net", CVPR 2018): a
random line through the page and a random displacement ``v`` weighted by the
normalised distance ``d`` to the line, ``w = alpha / (d + alpha)`` (fold) or
``w = 1 - d**alpha`` (curve). Each deformation is kept invertible (its
displacement's Lipschitz constant is at most 1/2, so no part of the page
folds over another), the page's image under the whole chain is measured by
carrying the page outline forward, and the page is then scaled (never
enlarged) and centred so that this image lies inside the canvas with
``margin`` to spare (or the canvas grows around it): no word leaves the
output. Every random parameter is drawn at full strength; a lower strength
scales the fitted map's displacement (:func:`distortion_map`), so strengths
of one draw differ in magnitude only. Maps are evaluated on a coarse grid
(every ``step`` pixels) and upsampled bilinearly: smooth and fast; pixels and
boxes both follow the upsampled map, so the re-projection stays exact.
:func:`carry_boxes` carries word boxes in the annotation's convention
(their margins around the ink kept), tight to the ink, or whole.

Learned warping or dewarping models (DocGeoNet, Feng et al., ECCV 2022, and
the like) plug in as *map providers*: ``fn(pixels, rng) -> backward map``,
registered with :func:`register_map_provider` or through the Python entry
point group ``dogood.map_providers``. A recipe can only name one.

Written here rather than taken from a library: OpenCV gives the resampling
(``cv2.remap``), but augmentation libraries move a box by its corners or
its rectangle, which for a folded or curved page does not bound the warped
word; none carries each word's ink through one dense map to a tight box,
or fits DocUNet's folds and curves into the canvas.
"""

from __future__ import annotations

import hashlib
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import NamedTuple

import cv2
import numpy as np
from scipy import ndimage

#: Distortion kinds :func:`distortion_map` knows, in the order it applies them
#: (the paper deforms first, then the camera looks at it).
KINDS = ("fold", "curve", "curl", "perspective")

#: How :func:`warps_map` sizes the output: the page's size, or grown around the deformed page.
CANVASES = ("page", "grow")

#: Interpolations :func:`apply_map` offers, by name.
INTERPOLATIONS = {"linear": cv2.INTER_LINEAR, "cubic": cv2.INTER_CUBIC, "lanczos": cv2.INTER_LANCZOS4}

#: The entry point group through which installed packages offer map providers.
ENTRY_POINT_GROUP = "dogood.map_providers"

# Displacement scales at strength 1, as fractions of the page's longer side (fold,
# curve), of its extent across the curl axis (curl) or of its width/height (perspective).
_FOLD_AMOUNT = 0.03
_CURVE_AMOUNT = 0.05
_CURL_LENGTH = 0.6
_CURL_BEND = 0.2
_PERSPECTIVE_AMOUNT = 0.07
# Largest Lipschitz constant of one fold's or curve's displacement (< 1: invertible).
_MAX_SLOPE = 0.5

Size = tuple[int, int]


class Warp(NamedTuple):
    """One deformation of the plane, in page pixel coordinates.

    ``backward(points)`` gives, for points ``(..., 2)`` of the deformed page,
    where they come from; ``forward(points)`` where page points go (only used
    on the page outline, to fit the result into the canvas).
    """

    backward: Callable[[np.ndarray], np.ndarray]
    forward: Callable[[np.ndarray], np.ndarray]


# -- generic maps ------------------------------------------------------------------------------------------------------

def apply_map(pixels: np.ndarray, backward_map: np.ndarray, border_value: int = 0,
              interpolation: str = "linear") -> np.ndarray:
    """Warp an ``HxW`` or ``HxWx3`` ``uint8`` image through a backward map.

    The output has the map's height and width; pixels whose source lies
    outside the image take ``border_value`` (a grey level, or an RGB triple).
    ``interpolation`` is ``"linear"`` (bilinear), ``"cubic"`` or ``"lanczos"``
    (sharper, slower).
    """
    return _remap(pixels, check_map(backward_map), border_value, interpolation)


def _remap(pixels, backward_map: np.ndarray, border_value, interpolation: str) -> np.ndarray:
    """:func:`apply_map` with a checked map."""
    pixels = np.asarray(pixels)
    if pixels.dtype != np.uint8 or pixels.ndim not in (2, 3) or (pixels.ndim == 3 and pixels.shape[2] != 3):
        raise ValueError(f"expected HxW or HxWx3 uint8 pixels, got {pixels.dtype} {pixels.shape}")
    if interpolation not in INTERPOLATIONS:
        raise ValueError(f"interpolation must be one of {', '.join(INTERPOLATIONS)}, got {interpolation!r}")
    border = tuple(border_value) if isinstance(border_value, Sequence) else (border_value,) * 3
    return cv2.remap(pixels, backward_map, None, INTERPOLATIONS[interpolation],
                     borderMode=cv2.BORDER_CONSTANT, borderValue=tuple(float(v) for v in border) + (0.0,))


def warp_page(pixels: np.ndarray, boxes, backward_map: np.ndarray, border_value: int = 0,
              interpolation: str = "linear", mode: str = "margins") -> tuple[np.ndarray, np.ndarray, dict[str, int]]:
    """``(warped, new boxes, counts)``: :func:`apply_map` and :func:`carry_boxes` (given the warped page), with one
    check of the map."""
    backward_map = check_map(backward_map)
    warped = _remap(pixels, backward_map, border_value, interpolation)
    return (warped, *_carry_boxes(boxes, backward_map, pixels, mode, None, warped))


def check_map(backward_map, what: str = "backward map") -> np.ndarray:
    """``backward_map`` as a float32 ``(H, W, 2)`` array; ``ValueError`` naming ``what`` if it is not one.

    Any floating dtype is accepted (and converted); the values must be
    finite and the size within OpenCV's limit (32767 pixels a side).
    """
    arr = np.asarray(backward_map)
    if arr.ndim != 3 or arr.shape[2] != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise ValueError(f"{what} must have shape (height, width, 2), got {arr.shape}")
    if not np.issubdtype(arr.dtype, np.floating):
        raise ValueError(f"{what} must be floating point (float32), got {arr.dtype}")
    if max(arr.shape[:2]) >= 32767:
        raise ValueError(f"{what} is too large ({arr.shape[1]}x{arr.shape[0]}; OpenCV takes under 32767 a side)")
    arr = arr.astype(np.float32, copy=False)
    if not np.isfinite(arr).all():
        raise ValueError(f"{what} has non-finite values (NaN or infinity)")
    return arr


# -- the deformations --------------------------------------------------------------------------------------------------

def _line(size: Size, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A random line through the page: a point on it and its unit normal."""
    width, height = size
    point = rng.uniform([0.0, 0.0], [width - 1.0, height - 1.0])
    angle = rng.uniform(0.0, math.pi)
    return point, np.array([math.cos(angle), math.sin(angle)])


def _direction(normal: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A unit vector within 45 degrees of the line (either way along it): bends lines that cross it."""
    along = math.atan2(normal[0], -normal[1]) + rng.uniform(-math.pi / 4, math.pi / 4) + math.pi * rng.integers(2)
    return np.array([math.cos(along), math.sin(along)])


def _invert(backward: Callable[[np.ndarray], np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
    """Forward of ``p -> p + D(p)`` for a displacement ``D`` with Lipschitz constant <= 1/2 (fixed point)."""

    def forward(points: np.ndarray) -> np.ndarray:
        q = points.copy()
        for _ in range(40):  # the error at least halves each round
            moved = points - (backward(q) - q)
            done = np.abs(moved - q).max(initial=0.0) < 1e-4
            q = moved
            if done:
                break
        return q

    return forward


def _displacement_warp(point, normal, vector, weight) -> Warp:
    def backward(points: np.ndarray) -> np.ndarray:
        d = np.abs((points - point) @ normal)
        return points + weight(d)[..., None] * vector

    return Warp(backward, _invert(backward))


def fold_warp(size: Size, rng: np.random.Generator, strength: float = 0.5) -> Warp:
    """One DocUNet fold: displacement ``v * alpha / (d + alpha)``.

    ``d`` is the distance to a random line through the page over the page's
    longer side. ``|v|`` is ``strength * 3%`` of the longer side (times a random
    0.6-1), capped so the fold stays invertible; ``alpha`` is drawn in
    0.08-0.2 (smaller: a sharper crease). ``v`` points within 45 degrees of
    the line, so lines of text crossing it bend.
    """
    scale = float(max(size))
    point, normal = _line(size, rng)
    alpha = rng.uniform(0.08, 0.2)
    amount = min(strength * _FOLD_AMOUNT * rng.uniform(0.6, 1.0), _MAX_SLOPE * alpha) * scale
    vector = amount * _direction(normal, rng)
    return _displacement_warp(point, normal, vector, lambda d: alpha / (d / scale + alpha))


def curve_warp(size: Size, rng: np.random.Generator, strength: float = 0.5) -> Warp:
    """One DocUNet curve: displacement ``v * (1 - d**alpha)``.

    ``d`` is the distance to a random line through the page over the
    largest such distance on the page (1 beyond it: no displacement).
    ``|v|`` is ``strength * 5%`` of the longer side (times a random 0.6-1),
    capped so the curve stays invertible; ``alpha`` is drawn in 1.5-2.5;
    ``v`` points within 45 degrees of the line.
    """
    width, height = size
    point, normal = _line(size, rng)
    corners = np.array([[0, 0], [width - 1, 0], [0, height - 1], [width - 1, height - 1]], dtype=np.float64)
    reach = max(float(np.abs((corners - point) @ normal).max()), 1.0)
    alpha = rng.uniform(1.5, 2.5)
    amount = min(strength * _CURVE_AMOUNT * max(size) * rng.uniform(0.6, 1.0), _MAX_SLOPE * reach / alpha)
    vector = amount * _direction(normal, rng)
    return _displacement_warp(point, normal, vector, lambda d: 1.0 - np.minimum(d / reach, 1.0) ** alpha)


def curl_warp(size: Size, rng: np.random.Generator, strength: float = 0.5) -> Warp:
    """A page curl: the part of the page beyond an axis near one edge bends around a cylinder.

    Seen from above, a point at arc length ``a`` past the axis lies at
    ``r * sin(a / r)`` from it (compression across the axis) and is lifted by
    ``r * (1 - cos(a / r))``, which the camera sees as a slight enlargement
    along the axis (``1 + bend * (1 - cos(a / r))``). The edge (one of four,
    axis tilted up to 20 degrees) is drawn at random; the curled part is
    ``strength * 60%`` (times a random 0.6-1) of the page's extent across the
    axis and wraps 1-1.4 radians of the cylinder (less than a quarter turn,
    so no part hides another; at the edge, text is compressed to ``cos 1.4``,
    a sixth). The lift enlarges the curled part along the axis by up to
    ``strength * 20%``.
    """
    width, height = size
    angle = rng.integers(4) * math.pi / 2 + rng.uniform(-0.35, 0.35)
    normal = np.array([math.cos(angle), math.sin(angle)])
    across = np.array([-normal[1], normal[0]])
    centre = np.array([(width - 1) / 2, (height - 1) / 2])
    corners = np.array([[0, 0], [width - 1, 0], [0, height - 1], [width - 1, height - 1]], dtype=np.float64)
    u_corners = (corners - centre) @ normal
    length = max(strength * _CURL_LENGTH * rng.uniform(0.6, 1.0) * float(np.ptp(u_corners)), 1e-6)
    wrap = rng.uniform(1.0, 1.4)
    bend = strength * _CURL_BEND * rng.uniform(0.5, 1.0)
    radius = length / wrap
    axis = float(u_corners.max()) - length

    def split(points):
        rel = points - centre
        return rel @ normal, rel @ across

    def join(u, t):
        return centre + u[..., None] * normal + t[..., None] * across

    def forward(points: np.ndarray) -> np.ndarray:
        u, t = split(points)
        theta = np.maximum(u - axis, 0.0) / radius
        return join(np.where(theta > 0, axis + radius * np.sin(theta), u), t * (1.0 + bend * (1.0 - np.cos(theta))))

    def backward(points: np.ndarray) -> np.ndarray:
        u, t = split(points)
        s = np.maximum(u - axis, 0.0) / radius
        # past a quarter turn there is no page: continue the angle so those points land off it
        theta = np.where(s < 1.0, np.arcsin(np.minimum(s, 1.0)), math.pi / 2 + (s - 1.0))
        return join(np.where(s > 0, axis + radius * theta, u), t / (1.0 + bend * (1.0 - np.cos(theta))))

    return Warp(backward, forward)


def perspective_warp(size: Size, rng: np.random.Generator, strength: float = 0.5) -> Warp:
    """A camera's perspective: each page corner moves by up to ``strength * 7%`` of the page width/height.

    The homography taking the page corners to the jittered ones
    (``cv2.getPerspectiveTransform``) is the forward warp; its inverse the backward one.
    """
    width, height = size
    corners = np.array([[0, 0], [width - 1, 0], [width - 1, height - 1], [0, height - 1]], dtype=np.float64)
    jitter = rng.uniform(-1.0, 1.0, size=(4, 2)) * strength * _PERSPECTIVE_AMOUNT * np.array([width, height])
    matrix = cv2.getPerspectiveTransform(corners.astype(np.float32), (corners + jitter).astype(np.float32))
    inverse = np.linalg.inv(matrix)

    def apply(h):
        def fn(points: np.ndarray) -> np.ndarray:
            x, y = points[..., 0], points[..., 1]
            w = h[2, 0] * x + h[2, 1] * y + h[2, 2]
            w = np.where(np.abs(w) < 1e-9, 1e-9, w)
            return np.stack([(h[0, 0] * x + h[0, 1] * y + h[0, 2]) / w, (h[1, 0] * x + h[1, 1] * y + h[1, 2]) / w], -1)
        return fn

    return Warp(apply(inverse), apply(matrix))


_WARPS = {"fold": fold_warp, "curve": curve_warp, "curl": curl_warp, "perspective": perspective_warp}


# -- from deformations to a map ----------------------------------------------------------------------------------------

def warps_map(size: Size, warps: Sequence[Warp], *, margin: float = 0.05, step: int = 8,
              canvas: str = "page") -> np.ndarray:
    """The backward map of deforming the page by ``warps`` in order, fitted into the canvas.

    The page outline is carried forward through the warps. With ``canvas="page"``
    the output is the page's size: the page is scaled (by at most 1: never
    enlarged) and centred so that its deformed image lies inside with
    ``margin`` (a fraction of the page's width and height) left on every
    side, and so that each side of the canvas samples beyond the matching side of the
    page (:func:`_fit`). With ``canvas="grow"`` the page keeps its scale and the canvas
    grows (or shrinks) to the deformed page's bounds plus ``margin``. The
    map is evaluated every ``step`` pixels and upsampled bilinearly.
    """
    width, height, step = _check_fit(size, margin, step, canvas)
    (out_w, out_h), points = _fitted_grid((width, height), warps, margin, step, canvas)
    return _upsample(points.astype(np.float32), out_w, out_h, step)


def _check_fit(size: Size, margin: float, step: int, canvas: str) -> tuple[int, int, int]:
    width, height = _check_size(size)
    if not 0 <= margin < 0.5:
        raise ValueError(f"margin must be within [0, 0.5), got {margin}")
    if int(step) != step or step < 1:
        raise ValueError(f"step must be a positive integer, got {step}")
    if canvas not in CANVASES:
        raise ValueError(f"canvas must be one of {', '.join(CANVASES)}, got {canvas!r}")
    return width, height, int(step)


def _fitted_grid(size: Size, warps: Sequence[Warp], margin: float, step: int,
                 canvas: str) -> tuple[tuple[int, int], np.ndarray]:
    """The canvas size and the backward map of ``warps`` fitted into it (:func:`warps_map`) on the coarse grid
    (float64 page coordinates per node of :func:`coarse_grid`)."""
    width, height = size
    outline = _outline(width, height)
    for warp in warps:
        outline = warp.forward(outline)
    lo, hi = outline.min(axis=0), outline.max(axis=0)
    page = np.array([width, height], dtype=np.float64)
    if canvas == "page":
        scale = min(1.0, *(page * (1.0 - 2.0 * margin) / (hi - lo + 1.0)))  # + 1: the outer pixels' halves
        out_w, out_h = width, height
    else:
        scale = 1.0
        out_w, out_h = (int(v) for v in np.maximum(np.ceil(hi - lo + 1.0 + 2.0 * margin * page - 1e-6), 1))
    centre = np.array([(out_w - 1) / 2, (out_h - 1) / 2])

    def backward(points: np.ndarray, scale: float) -> np.ndarray:
        shift = centre - scale * (lo + hi) / 2
        if scale == 1.0:
            shift = np.round(shift)  # a whole-pixel offset: an undeformed page is copied, not resampled
        points = (points - shift) / scale
        for warp in reversed(warps):
            points = warp.backward(points)
        return points

    if canvas == "page" and warps:
        # each side of the canvas must sample at or beyond the matching side of the page, so that any blend of
        # the map with the identity (distortion_map's strengths) still holds the whole page (_beyond_sides)
        border = _outline(out_w, out_h)
        for _ in range(60):
            if _beyond_sides(border, backward(border, scale), width, height):
                break
            scale *= 0.98
    return (out_w, out_h), backward(coarse_grid(out_w, out_h, step), scale)


def _beyond_sides(border: np.ndarray, source: np.ndarray, width: int, height: int) -> bool:
    """Whether the canvas border points ``border`` sample (``source``) at or beyond the page side of their own
    canvas side: left-side points at ``x <= 0``, right-side ones at ``x >= width - 1``, and so on. Then the border
    of any map ``q + s (source(q) - q)``, ``0 <= s <= 1``, stays off the page's inside, and (the map being one to
    one) the page lies inside the canvas at every strength ``s``."""
    right, bottom = border[:, 0].max(), border[:, 1].max()
    ok = np.ones(len(border), bool)
    ok &= (border[:, 0] > 0) | (source[:, 0] <= 0)
    ok &= (border[:, 0] < right) | (source[:, 0] >= width - 1)
    ok &= (border[:, 1] > 0) | (source[:, 1] <= 0)
    ok &= (border[:, 1] < bottom) | (source[:, 1] >= height - 1)
    return bool(ok.all())


def _outline(width: int, height: int, spacing: float = 4.0) -> np.ndarray:
    """Points along the page's border (pixel centres of the outermost pixels), about ``spacing`` apart."""
    xs = np.linspace(0, width - 1, max(2, int(math.ceil(width / spacing)) + 1))
    ys = np.linspace(0, height - 1, max(2, int(math.ceil(height / spacing)) + 1))
    return np.concatenate([
        np.stack([xs, np.zeros_like(xs)], -1), np.stack([xs, np.full_like(xs, height - 1)], -1),
        np.stack([np.zeros_like(ys), ys], -1), np.stack([np.full_like(ys, width - 1), ys], -1),
    ])


def _upsample(coarse: np.ndarray, width: int, height: int, step: int) -> np.ndarray:
    gh, gw = coarse.shape[:2]
    big = cv2.resize(coarse, (gw * step, gh * step), interpolation=cv2.INTER_LINEAR)
    return big[step:step + height, step:step + width]  # a view: OpenCV takes strided rows


def coarse_grid(width: int, height: int, step: int) -> np.ndarray:
    """Canvas coordinates ``(gh, gw, 2)`` of the nodes at which a map is evaluated every ``step`` pixels, so that
    :func:`upsample_grid` interpolates every canvas pixel between two nodes (as :func:`warps_map` does)."""
    gw, gh = (int(math.ceil((n - 0.5) / step + 1.5)) for n in (width, height))
    xs = (np.arange(gw) - 0.5) * step - 0.5
    ys = (np.arange(gh) - 0.5) * step - 0.5
    return np.stack(np.meshgrid(xs, ys), axis=-1)


def upsample_grid(coarse: np.ndarray, width: int, height: int, step: int) -> np.ndarray:
    """Values on :func:`coarse_grid`'s nodes (``(gh, gw, c)`` or ``(gh, gw)`` float32) brought to every canvas pixel,
    bilinearly."""
    return _upsample(coarse, width, height, step)


def page_outline(width: int, height: int, spacing: float = 4.0) -> np.ndarray:
    """Points along the page's border (pixel centres of the outermost pixels), about ``spacing`` apart."""
    return _outline(width, height, spacing)


def distortion_map(size: Size, rng: np.random.Generator, kinds: Sequence[str] = ("perspective", "curve", "fold"), *,
                   strength: float = 0.5, folds: int = 1, margin: float = 0.05, step: int = 8,
                   canvas: str = "page") -> np.ndarray:
    """One backward map for several kinds of distortion, fitted into the canvas once.

    Every random parameter (lines, directions, amounts, the curl's edge, the perspective's corners) is drawn
    first, at full strength, in a fixed order whatever ``strength`` is. With ``canvas="page"`` the full-strength
    chain is fitted into the canvas (:func:`warps_map`: ``margin`` kept on every side) giving a map ``G``, and
    the map at ``strength`` ``s`` is ``q + s (G(q) - q)``: its displacements are exactly ``s`` times the
    full-strength ones (the page's shrink into the margin included), so strengths of one draw differ in
    magnitude only, and ``s = 0`` changes nothing. The fit makes each canvas side sample beyond the page's
    matching side, so the whole page stays inside the canvas at every strength. With ``canvas="grow"`` the
    warps are drawn at ``strength`` (the same draws: their displacements scale with it, up to the invertibility
    caps) and the canvas grows around the page at its own scale.

    Parameters
    ----------
    size : the page's ``(width, height)``; the map has the same size (but with ``canvas="grow"``).
    rng : the random generator (draws are made in a fixed order: deterministic).
    kinds : among :data:`KINDS`; applied in that order whatever the order given
        (the paper is folded, curved and curled, then photographed).
    strength : 0-1, scales every displacement (0: the identity, or with ``canvas="grow"`` only the margin).
    folds : how many folds, and how many curves, when those kinds are asked for.
    margin : fraction of the width and height kept free on every side at full strength.
    step : grid spacing, in pixels, at which the map is evaluated.
    canvas : ``"page"`` (the output is the page's size; the page shrinks to fit)
        or ``"grow"`` (the page keeps its scale; the output grows around it).
    """
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise ValueError(f"unknown distortion kind(s) {', '.join(map(repr, unknown))}; known: {', '.join(KINDS)}")
    if not 0 <= strength <= 1:
        raise ValueError(f"strength must be within [0, 1], got {strength}")
    width, height, step = _check_fit(size, margin, step, canvas)
    drawn = 1.0 if canvas == "page" else strength
    warps = []
    for kind in KINDS:
        if kind in kinds:
            repeat = folds if kind in ("fold", "curve") else 1
            warps += [_WARPS[kind]((width, height), rng, drawn) for _ in range(repeat)]
    (out_w, out_h), points = _fitted_grid((width, height), warps, margin, step, canvas)
    if canvas == "page":
        nodes = coarse_grid(out_w, out_h, step)
        points = nodes + strength * (points - nodes)
    return _upsample(points.astype(np.float32), out_w, out_h, step)


def _check_size(size: Size) -> tuple[int, int]:
    width, height = (int(v) for v in size)
    if width < 1 or height < 1:
        raise ValueError(f"page size must be positive, got {width}x{height}")
    return width, height


# -- word boxes --------------------------------------------------------------------------------------------------------

def ink_mask(pixels: np.ndarray, boxes, min_contrast: int = 40) -> np.ndarray:
    """Boolean ``HxW`` mask of the ink inside word boxes: the cores of :func:`dogood.page.ink.ink_matte`
    (Otsu's threshold on the contrast to the local paper within each box; coverage at least 1/2).

    A box whose ink is less than ``min_contrast`` grey levels darker than its paper holds no ink.
    Outside the boxes the mask is False.
    """
    from dogood.page.ink import ink_core_mask

    return ink_core_mask(pixels, np.asarray(boxes, dtype=np.int64).reshape(-1, 4), pad=0, min_contrast=min_contrast)


def reproject_boxes(boxes, backward_map: np.ndarray, page_size: Size,
                    ink: np.ndarray | None = None) -> tuple[np.ndarray, dict[str, int]]:
    """Carry word boxes through a backward map, exactly.

    A word's new box bounds the output pixels whose source coordinate,
    rounded to the nearest source pixel, falls inside the word's box
    (``x0 <= sx < x1`` for a box of pixel edges). With ``ink``, a boolean
    ``HxW`` mask of the source page's ink, it bounds those that fall on ink
    inside the word's box (a tight box around the warped word, as an OCR
    engine draws it); a word with no ink in its box uses the whole box.

    Boxes are rasterised into one label image of the source whose labels
    stand for the *sets* of boxes covering a pixel (identical boxes count
    once; where boxes overlap, the overlap gets a label of its own), which
    is remapped with nearest-neighbour sampling; the bounds of each label
    are read with ``scipy.ndimage.find_objects`` and a box's bounds are the
    union of those of the labels it belongs to. (A second label image is
    only needed past 65535 labels.) A zero-width (height) box is rasterised
    one pixel wide (high), and its new box collapsed back onto the side of
    that pixel's image where the box lies. A box none of whose pixels reach
    the output (squeezed out) becomes a zero-size box at the output pixel
    whose source coordinate is nearest its centre.

    Parameters
    ----------
    boxes : ``(n, 4)`` integer boxes ``(x0, y0, x1, y1)`` on the source page.
    backward_map : ``(H', W', 2)`` float32; the output page is ``W' x H'``.
    page_size : the source page's ``(width, height)``.
    ink : optional boolean ``(height, width)`` ink mask of the source page.

    Returns
    -------
    ``(n, 4)`` int64 boxes on the output page, and counts: ``fallback_boxes``
    (words placed by their centre), ``layers`` (label images used: 1 but for
    huge pages with many overlaps) and, with ``ink``, ``no_ink`` (words whose
    box held no ink).
    """
    backward_map = check_map(backward_map)
    width, height = _check_size(page_size)
    boxes = np.asarray(boxes, dtype=np.int64).reshape(-1, 4)
    if ink is not None:
        ink = np.asarray(ink, dtype=bool)
        if ink.shape != (height, width):
            raise ValueError(f"ink mask has shape {ink.shape}, the page is {height}x{width}")
    return _carry(_source_side(boxes, width, height, ink), backward_map)


class _Source(NamedTuple):
    """What :func:`reproject_boxes` makes of the source page and its boxes before any map: the distinct boxes
    (``unique``, ``inverse``), their zero-size sides (``after``, ``before``), the label images (``layers``:
    ``(pixels, members)``; pixels as ``(shape, flat indices, labels)`` once :meth:`compact`) and ``no_ink``
    (``None`` without an ink mask)."""

    boxes: np.ndarray
    unique: np.ndarray
    inverse: np.ndarray
    after: np.ndarray
    before: np.ndarray
    layers: list
    no_ink: np.ndarray | None

    def compact(self) -> _Source:
        """The same, each label image kept as its non-zero pixels (to cache)."""
        layers = []
        for pixels, members in self.layers:
            flat = np.flatnonzero(pixels)
            layers.append(((pixels.shape, flat.astype(np.int32), pixels.reshape(-1)[flat]), members))
        return self._replace(layers=layers)

    def nbytes(self) -> int:
        return sum(p[1].nbytes + p[2].nbytes if isinstance(p, tuple) else p.nbytes for p, _ in self.layers) + \
            self.boxes.nbytes * 4


def _source_side(boxes: np.ndarray, width: int, height: int, ink: np.ndarray | None) -> _Source:
    """The map-independent part of :func:`reproject_boxes` (checked inputs)."""
    if not len(boxes):
        return _Source(boxes, boxes, np.zeros(0, np.int64), boxes, boxes, [], None if ink is None else
                       np.zeros(0, bool))
    unique, inverse = np.unique(boxes, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    m = len(unique)
    # the pixels a box covers: columns c0..c1-1, rows r0..r1-1, at least one of each
    c0 = np.clip(unique[:, 0], 0, width - 1)
    r0 = np.clip(unique[:, 1], 0, height - 1)
    c1 = np.clip(np.maximum(unique[:, 2], c0 + 1), 1, width)
    r1 = np.clip(np.maximum(unique[:, 3], r0 + 1), 1, height)
    # zero-size sides: the pixel rasterised after the line (before it on the page's far edge)
    after = np.stack([(unique[:, 2] <= unique[:, 0]) & (unique[:, 0] < width),
                      (unique[:, 3] <= unique[:, 1]) & (unique[:, 1] < height)], axis=1)
    before = np.stack([(unique[:, 2] <= unique[:, 0]) & (unique[:, 0] >= width),
                       (unique[:, 3] <= unique[:, 1]) & (unique[:, 1] >= height)], axis=1)
    no_ink = np.zeros(m, dtype=bool)
    # boxes whose rectangle meets no other's (most words) are painted all at once
    if m <= 4096:
        meets = (c0[:, None] < c1) & (c0 < c1[:, None]) & (r0[:, None] < r1) & (r0 < r1[:, None])
        apart = meets.sum(axis=1) == 1  # itself only
    else:
        apart = np.zeros(m, bool)
    layers = []
    labels = _LabelImage(height, width)
    labels.paint_apart(np.flatnonzero(apart), (c0, r0, c1, r1), ink, no_ink)
    for j in np.flatnonzero(~apart).tolist():
        region, mask = _footprint(j, c0, r0, c1, r1, ink)
        no_ink[j] = ink is not None and mask is None
        if not labels.paint(j, region, mask):  # out of labels: keep this image, start another
            layers.append((labels.pixels, labels.members))
            labels = _LabelImage(height, width)
            labels.paint(j, region, mask)
    layers.append((labels.pixels, labels.members))
    return _Source(boxes, unique, inverse, after, before, layers, None if ink is None else no_ink)


def _carry(src: _Source, backward_map: np.ndarray) -> tuple[np.ndarray, dict[str, int]]:
    """The map-dependent part of :func:`reproject_boxes`: ``src`` (:func:`_source_side`) through ``backward_map``
    (checked)."""
    counts = {"fallback_boxes": 0, "layers": 0}
    if src.no_ink is not None:
        counts["no_ink"] = 0
    if not len(src.boxes):
        return src.boxes.copy(), counts
    unique, inverse = src.unique, src.inverse
    m = len(unique)
    out = np.zeros((m, 4), dtype=np.int64)
    found = np.zeros(m, dtype=bool)
    for pixels, members in src.layers:
        if isinstance(pixels, tuple):  # compacted: rebuild the label image
            shape, flat, values = pixels
            pixels = np.zeros(shape, np.uint16)
            pixels.reshape(-1)[flat] = values
        _warped_bounds(pixels, members, backward_map, out, found)
        counts["layers"] += 1
    # a zero-width (height) box stays so, on the side of its rasterised pixel where its line is
    for axis in (0, 1):
        lo, hi = out[:, axis].copy(), out[:, axis + 2].copy()
        out[:, axis + 2] = np.where(src.after[:, axis] & found, lo, hi)
        out[:, axis] = np.where(src.before[:, axis] & found, hi, lo)
    for j in np.flatnonzero(~found):
        centre = np.array([(unique[j, 0] + unique[j, 2]) / 2 - 0.5, (unique[j, 1] + unique[j, 3]) / 2 - 0.5])
        gap = ((backward_map - centre.astype(np.float32)) ** 2).sum(axis=2)
        row, col = np.unravel_index(int(np.argmin(gap)), gap.shape)
        out[j] = (col, row, col, row)
    counts["fallback_boxes"] = int((~found)[inverse].sum())
    if src.no_ink is not None:
        counts["no_ink"] = int(src.no_ink[inverse].sum())
    return out[inverse], counts


#: How a word box is carried through a map (:func:`carry_boxes`).
REPROJECT = ("margins", "ink", "box")


def carry_boxes(boxes, backward_map: np.ndarray, pixels: np.ndarray, mode: str = "margins",
                ink: np.ndarray | None = None, warped: np.ndarray | None = None) -> tuple[np.ndarray, dict[str, int]]:
    """Word boxes of the page ``pixels`` carried through ``backward_map`` in one of three conventions:

    - ``"margins"``: the box keeps the annotation's convention. The bounds of the word's warped ink
      (:func:`reproject_boxes` with the ink mask) are widened by the source box's margins around its ink, each
      scaled by how much the ink's bounds grew or shrank along that axis, so a box keeps its looseness (its area
      over its ink's bounding box), whatever the warp; a word without ink carries its whole box.
    - ``"ink"``: the bounds of the warped ink alone: tight, as an OCR engine draws boxes (annotations looser than
      their ink, FUNSD's among them, get tighter boxes: a box-size change the warp did not make).
    - ``"box"``: the bounds of the whole warped box (a rotated or curved word's box grows around its corners).

    ``ink``: the page's ink mask (:func:`ink_mask`), computed when needed and not given. ``warped``: the output
    page; with ``"margins"`` the warped ink's bounds are then re-fitted to the ink found on it inside each box so
    made (:func:`ink_mask`, as a looseness measure finds it) and the margins restored around those, so that the
    box's looseness measured on the output page is the source's (a map that moves nothing keeps every box).
    Counts as :func:`reproject_boxes`'s, without ``layers``. What does not depend on the map (the ink mask, the
    label images, the ink's bounds) is cached by the page's and boxes' content (:data:`SOURCE_CACHE_BYTES`).
    """
    return _carry_boxes(boxes, check_map(backward_map), pixels, mode, ink, warped)


def _carry_boxes(boxes, backward_map: np.ndarray, pixels: np.ndarray, mode: str, ink: np.ndarray | None,
                 warped: np.ndarray | None) -> tuple[np.ndarray, dict[str, int]]:
    """:func:`carry_boxes` with a checked map."""
    if mode not in REPROJECT:
        raise ValueError(f"mode must be one of {', '.join(REPROJECT)}, got {mode!r}")
    boxes = np.asarray(boxes, dtype=np.int64).reshape(-1, 4)
    if ink is not None and mode != "box":
        height, width = np.asarray(pixels).shape[:2]
        ink = np.asarray(ink, dtype=bool)
        if ink.shape != (height, width):
            raise ValueError(f"ink mask has shape {ink.shape}, the page is {height}x{width}")
        src, source_ink = _source_side(boxes, width, height, ink), ink_bounds(ink, boxes)
    else:
        src, source_ink = _page_source(pixels, boxes, mode != "box")
    out, counts = _carry(src, backward_map)
    counts.pop("layers", None)
    if mode == "margins" and len(boxes):
        canvas = backward_map.shape[1::-1]
        first = restore_margins(boxes, source_ink, out, canvas)
        if warped is None:
            return first, counts
        # the ink the output page shows inside each box, as a looseness measure finds it
        found = ink_bounds(ink_mask(warped, first), first)
        out = np.where((found[:, :1] >= 0), found, out)
        out = restore_margins(boxes, source_ink, out, canvas)
    return out, counts


#: Bytes of source-side work (:func:`_page_source`) kept between calls, per process: a page seen again (the next
#: epoch of a training loader, another config of a build) skips its ink mask and label images.
SOURCE_CACHE_BYTES = 128 << 20
_SOURCE_CACHE: OrderedDict[bytes, tuple[_Source, np.ndarray | None]] = OrderedDict()
_SOURCE_LOCK = threading.Lock()


def _page_source(pixels: np.ndarray, boxes: np.ndarray, with_ink: bool) -> tuple[_Source, np.ndarray | None]:
    """:func:`_source_side` of the page ``pixels`` with its ink mask (:func:`ink_mask`) when ``with_ink`` (and
    boxes), and the ink's bounds per box (:func:`ink_bounds`; ``None`` without ink): what a map does not change,
    cached by the content of the pixels and boxes (least recently used out past :data:`SOURCE_CACHE_BYTES`)."""
    pixels = np.asarray(pixels)
    height, width = pixels.shape[:2]
    with_ink = with_ink and len(boxes) > 0
    key = hashlib.sha1(np.ascontiguousarray(pixels).data, usedforsecurity=False)
    key.update(repr((pixels.shape, pixels.dtype.str, with_ink)).encode())
    key.update(np.ascontiguousarray(boxes, dtype=np.int64).data)
    key = key.digest()
    with _SOURCE_LOCK:
        hit = _SOURCE_CACHE.get(key)
        if hit is not None:
            _SOURCE_CACHE.move_to_end(key)
            return hit
    ink = ink_mask(pixels, boxes) if with_ink else None
    src = _source_side(boxes, width, height, ink).compact()
    got = src, (ink_bounds(ink, boxes) if with_ink else None)
    with _SOURCE_LOCK:
        _SOURCE_CACHE[key] = got
        total = sum(entry[0].nbytes() for entry in _SOURCE_CACHE.values())
        while total > SOURCE_CACHE_BYTES and _SOURCE_CACHE:
            total -= _SOURCE_CACHE.popitem(last=False)[1][0].nbytes()
    return got


def ink_bounds(ink: np.ndarray, boxes) -> np.ndarray:
    """Per box, the bounds ``(x0, y0, x1, y1)`` (pixel edges) of the ``ink`` pixels inside it; ``-1`` rows where
    the box holds none."""
    boxes = np.asarray(boxes, dtype=np.int64).reshape(-1, 4)
    height, width = ink.shape
    out = np.full((len(boxes), 4), -1, dtype=np.int64)
    ink = np.ascontiguousarray(ink).view(np.uint8)
    for i, (x0, y0, x1, y1) in enumerate(boxes.tolist()):
        x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, width), min(y1, height)
        if x1 <= x0 or y1 <= y0:
            continue
        x, y, w, h = cv2.boundingRect(ink[y0:y1, x0:x1])  # of the non-zero pixels; all 0 when none
        if w:
            out[i] = (x0 + x, y0 + y, x0 + x + w, y0 + y + h)
    return out


def restore_margins(boxes, source_ink, warped_ink, canvas: Size) -> np.ndarray:
    """Boxes around the warped ink bounds ``warped_ink`` with the margins the source ``boxes`` leave around their
    ink bounds ``source_ink`` (:func:`ink_bounds`; ``-1`` rows: no ink, kept as given), each margin scaled by the
    ink bounds' growth along its axis (so the box's area over its ink's is the source's), rounded and kept within
    the ``canvas`` ``(width, height)``."""
    boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    src = np.asarray(source_ink, dtype=np.float64)
    new = np.asarray(warped_ink, dtype=np.float64)
    out = np.asarray(warped_ink, dtype=np.int64).copy()
    ok = (src[:, 0] >= 0) & (new[:, 2] > new[:, 0]) & (new[:, 3] > new[:, 1])
    if not ok.any():
        return out
    src, new, boxes = src[ok], new[ok], boxes[ok]
    grow = np.concatenate([(new[:, 2:3] - new[:, 0:1]) / (src[:, 2:3] - src[:, 0:1]),
                           (new[:, 3:4] - new[:, 1:2]) / (src[:, 3:4] - src[:, 1:2])], axis=1)
    before = np.maximum(src[:, :2] - boxes[:, :2], 0) * grow
    after = np.maximum(boxes[:, 2:] - src[:, 2:], 0) * grow
    limit = np.array(canvas, dtype=np.float64)
    lo = np.clip(np.round(new[:, :2] - before), 0, limit)
    hi = np.clip(np.round(new[:, 2:] + after), 0, limit)
    out[ok] = np.concatenate([lo, hi], axis=1).astype(np.int64)
    return out


def _footprint(j, c0, r0, c1, r1, ink):
    """The slice a box writes into, and the mask within it (``None``: all of it)."""
    region = (slice(r0[j], r1[j]), slice(c0[j], c1[j]))
    if ink is None:
        return region, None
    inside = ink[region]
    return region, (inside if inside.any() else None)


class _LabelImage:
    """A ``uint16`` label image whose label ``k`` marks the pixels covered by exactly the boxes ``members[k]``."""

    def __init__(self, height: int, width: int):
        self.pixels = np.zeros((height, width), dtype=np.uint16)
        self.members: list[tuple[int, ...]] = [()]
        self.label_of: dict[tuple[int, ...], int] = {}

    def _label(self, members: tuple[int, ...]) -> int:
        label = self.label_of.get(members)
        if label is None:
            label = self.label_of[members] = len(self.members)
            self.members.append(members)
        return label

    def paint_apart(self, js: np.ndarray, sides, ink, no_ink: np.ndarray) -> None:
        """Paint the boxes ``js``, whose rectangles (``sides``: arrays ``c0, r0, c1, r1``) meet no other box's,
        onto the empty image, each with a label of its own over the ``ink`` in its rectangle (all of it where
        none; ``no_ink[j]`` marks those): as :meth:`paint` one by one, in a few whole-image passes."""
        if not len(js):
            return
        c0, r0, c1, r1 = (side[js] for side in sides)
        first = len(self.members)
        for label, j in enumerate(js.tolist(), start=first):
            self.members.append((j,))
            self.label_of[(j,)] = label
            cv2.rectangle(self.pixels, (int(c0[label - first]), int(r0[label - first])),
                          (int(c1[label - first]) - 1, int(r1[label - first]) - 1), label, thickness=cv2.FILLED)
        if ink is None:
            return
        keep = np.ascontiguousarray(ink).view(np.uint8)
        total = cv2.integral(keep, sdepth=cv2.CV_32S)  # ink pixels above and left of each corner
        empty = (total[r1, c1] - total[r0, c1] - total[r1, c0] + total[r0, c0]) == 0
        no_ink[js] = empty
        if empty.any():
            keep = keep.copy()
            for i in np.flatnonzero(empty).tolist():
                keep[r0[i]:r1[i], c0[i]:c1[i]] = 1
        np.multiply(self.pixels, keep, out=self.pixels, casting="unsafe")

    def paint(self, j: int, region, mask) -> bool:
        """Add box ``j`` over ``region`` (where ``mask``); False, painting nothing, when labels would run out."""
        sub = self.pixels[region]
        values = sub if mask is None else sub[mask]
        if not values.any():  # the usual case: nothing painted here yet
            if len(self.members) >= 65536:
                return False
            label = self._label((j,))
            if mask is None:
                sub[...] = label
            else:
                np.copyto(sub, label, where=mask)
            return True
        olds = np.unique(values)
        if len(self.members) + len(olds) > 65536:
            return False
        table = np.zeros(int(olds[-1]) + 1, dtype=np.uint16)
        for old in olds.tolist():
            table[old] = self._label(self.members[old] + (j,))
        if mask is None:
            sub[...] = table[values]
        else:
            sub[mask] = table[values]
        return True


def _warped_bounds(pixels: np.ndarray, members: list, backward_map: np.ndarray, out: np.ndarray,
                   found: np.ndarray) -> None:
    """Warp the label image ``pixels`` (:class:`_LabelImage`) and widen ``out[j]`` (marking ``found[j]``) to every
    warped pixel of box ``j``."""
    warped = cv2.remap(pixels, backward_map, None, cv2.INTER_NEAREST,
                       borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    bounds, seen = out.tolist(), found.tolist()
    for label, where in enumerate(ndimage.find_objects(warped, max_label=len(members) - 1), start=1):
        if where is None:
            continue
        rows, cols = where
        for j in members[label]:
            if seen[j]:
                o = bounds[j]
                bounds[j] = [min(o[0], cols.start), min(o[1], rows.start), max(o[2], cols.stop), max(o[3], rows.stop)]
            else:
                bounds[j] = [cols.start, rows.start, cols.stop, rows.stop]
                seen[j] = True
    out[...] = np.asarray(bounds, dtype=np.int64).reshape(out.shape)
    found[...] = seen


# -- map providers -----------------------------------------------------------------------------------------------------

_PROVIDERS: dict[str, Callable[[np.ndarray, np.random.Generator], np.ndarray]] = {}


def register_map_provider(name: str, fn: Callable[[np.ndarray, np.random.Generator], np.ndarray]) -> None:
    """Make ``fn(pixels, rng) -> backward map (H', W', 2) float32`` available to recipes as ``name``.

    ``pixels`` is the page (``HxW`` or ``HxWx3`` ``uint8``); the map's size is
    the output page's and may differ from the input's. Registering a name
    again replaces the provider. Installed packages can instead declare an
    entry point in the group :data:`ENTRY_POINT_GROUP`.
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"a map provider needs a non-empty name, got {name!r}")
    if not callable(fn):
        raise TypeError(f"map provider {name!r} must be callable, got {type(fn).__name__}")
    _PROVIDERS[name] = fn


def _entry_points() -> dict:
    from importlib.metadata import entry_points

    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def map_provider_names() -> list[str]:
    """Names of the registered map providers and of those installed through entry points."""
    return sorted(set(_PROVIDERS) | set(_entry_points()))


def get_map_provider(name: str) -> Callable[[np.ndarray, np.random.Generator], np.ndarray]:
    """The map provider called ``name``: registered ones first, then entry points (loaded on first use).

    Raises ``ValueError`` listing the known names when there is none.
    """
    if name in _PROVIDERS:
        return _PROVIDERS[name]
    found = _entry_points().get(name)
    if found is None:
        known = ", ".join(map_provider_names()) or "none"
        raise ValueError(f"unknown map provider {name!r}; known map providers: {known}")
    fn = found.load()
    register_map_provider(name, fn)
    return fn
