"""A page photographed on a surface: a height-field page under a pinhole camera, lit by one light.

The page lies on a flat surface (the plane ``z = 0``; page pixel ``(u, v)``
at world point ``(u, v, 0)``, ``z`` pointing away from the camera) and is
lifted off it by a smooth height field (:class:`HeightField`: DocUNet's
curve and fold profiles, Ma et al. CVPR 2018, used as heights rather than
as 2D displacements). A pinhole camera (:class:`Camera`: a pose drawn as a
tilt, an in-plane roll and a distance) looks at the page centre. For every
output pixel the ray through it is intersected with the lifted page (fixed
point iteration on the height, which converges since the slopes are small)
and the hit's page coordinate is the value of one dense *backward map*
(:mod:`dogood.page.warp`'s convention), so every word box is carried through it
exactly with :func:`dogood.page.warp.reproject_boxes`. Rays that miss the page hit
the surface, a plane: it is drawn with the homography of that plane
(``cv2.warpPerspective``), so the surface's perspective is the page's.

Light (:func:`light_field`): Lambertian shading from the lifted page's
normals under one directional light, a linear lighting gradient across the
frame and a soft cast shadow (a half-plane with a blurred edge), all on the
coarse grid of the map and upsampled with it. Then the camera's effects
(:func:`render`): defocus (Gaussian blur), sensor noise and JPEG at a drawn
quality.

Written here rather than taken from a library: augraphy's ``LightingGradient``,
``ShadowCast`` and ``NoiseTexturize`` change pixels only, draw from the
global ``random`` state and, chained with ``Jpeg``, take about 300 ms a FUNSD page on
one core (``bench/bench_capture.py``: 3 pages/s against ``capture``'s 30-40; the page is
resampled bilinearly and sharpened within the defocus filter, as sharp as bicubic at less
than half its cost, and only where it shows); its geometric
augmentations move boxes by their corners only. No library renders a height field
through a camera while carrying word boxes through the same map.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from dogood.page.warp import coarse_grid, page_outline, upsample_grid

Size = tuple[int, int]

#: Most creases a :class:`HeightField` has (as many are always drawn).
MAX_FOLDS = 4

#: Spacing, in frame pixels, of the coarse grid on which rays are cast and light is computed (upsampled
#: bilinearly; the page's surface is smooth at that scale, and pixels and boxes follow the same upsampled map).
STEP = 16


# -- the page's surface ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class HeightField:
    """Heights (toward the camera, in page pixels) of the page over its plane: cosine bends and DocUNet folds.

    A bend is ``a * cos(2 pi f (p . dir) / L + phase)`` (``L`` the page's
    longer side); a fold is DocUNet's fold profile ``a * alpha / (d / L + alpha)``
    with ``d`` the distance to a line through the page (a crease: its slope
    changes sign on the line). The lowest point of the page rests on the
    surface (``offset``); off the page the height is 0.
    """

    size: Size
    bends: tuple[tuple[float, float, float, float, float], ...] = ()  # (amplitude, freq, dir_x, dir_y, phase)
    folds: tuple[tuple[float, float, float, float, float], ...] = ()  # (amplitude, alpha, px, py, angle)
    offset: float = 0.0

    @classmethod
    def draw(cls, size: Size, rng: np.random.Generator, bend: float, folds: int, fold: float) -> HeightField:
        """Draw one bend of height ``bend`` (fraction of the longer side, times 0.6-1) and ``folds`` creases of
        height ``fold``. The draws are the same whatever the heights and however many creases are asked for (up
        to :data:`MAX_FOLDS` are drawn, the first ``folds`` kept), so fields of one generator differ in magnitude
        only."""
        width, height = size
        scale = float(max(size))
        angle = rng.uniform(0, math.pi)
        bends = ((bend * scale * rng.uniform(0.6, 1.0), rng.uniform(0.4, 0.9), math.cos(angle), math.sin(angle),
                  rng.uniform(0, 2 * math.pi)),)
        creases = []
        for _ in range(MAX_FOLDS):
            creases.append((fold * scale * rng.uniform(0.6, 1.0), rng.uniform(0.05, 0.15),
                            rng.uniform(0.2, 0.8) * (width - 1), rng.uniform(0.2, 0.8) * (height - 1),
                            rng.uniform(0, math.pi)))
        field = cls(size, bends, tuple(creases[:folds]))
        ys, xs = np.mgrid[0:height:16, 0:width:16]
        low = float(field.height(np.stack([xs, ys], -1).astype(np.float64), clip=False).min())
        return cls(size, bends, tuple(creases[:folds]), offset=-low)

    def height(self, points: np.ndarray, clip: bool = True) -> np.ndarray:
        """Heights at page points ``(..., 2)`` (0 off the page when ``clip``)."""
        scale = float(max(self.size))
        u, v = points[..., 0], points[..., 1]
        h = np.full(u.shape, self.offset)
        for a, f, dx, dy, phase in self.bends:
            h = h + a * np.cos(2 * math.pi * f * (u * dx + v * dy) / scale + phase)
        for a, alpha, px, py, angle in self.folds:
            d = np.abs((u - px) * math.cos(angle) + (v - py) * math.sin(angle)) / scale
            h = h + a * alpha / (d + alpha)
        if clip:
            h = np.where(self.on_page(points), h, 0.0)
        return h

    def gradient(self, points: np.ndarray) -> np.ndarray:
        """``(dh/du, dh/dv)`` at page points ``(..., 2)`` (0 off the page)."""
        scale = float(max(self.size))
        u, v = points[..., 0], points[..., 1]
        g = np.zeros(points.shape)
        for a, f, dx, dy, phase in self.bends:
            k = 2 * math.pi * f / scale
            s = -a * k * np.sin(k * (u * dx + v * dy) + phase)
            g[..., 0] += s * dx
            g[..., 1] += s * dy
        for a, alpha, px, py, angle in self.folds:
            c, s = math.cos(angle), math.sin(angle)
            signed = ((u - px) * c + (v - py) * s) / scale
            slope = -a * alpha / (np.abs(signed) + alpha) ** 2 * np.sign(signed) / scale
            g[..., 0] += slope * c
            g[..., 1] += slope * s
        return np.where(self.on_page(points)[..., None], g, 0.0)

    def on_page(self, points: np.ndarray) -> np.ndarray:
        width, height = self.size
        u, v = points[..., 0], points[..., 1]
        return (u >= -0.5) & (u <= width - 0.5) & (v >= -0.5) & (v <= height - 0.5)


# -- the camera --------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Camera:
    """A pinhole camera: world-to-camera rotation ``rotation``, centre ``centre`` (world), and the image
    placement ``pixel = scale * (X / Z, Y / Z) + offset``."""

    rotation: np.ndarray
    centre: np.ndarray
    scale: float = 1.0
    offset: tuple[float, float] = (0.0, 0.0)

    @classmethod
    def draw(cls, size: Size, rng: np.random.Generator, tilt: float, roll: float, distance: float) -> Camera:
        """A camera looking at the page centre from ``distance`` longer sides away, tilted by ``tilt`` degrees
        (times 0.5-1) about a random axis in the page plane and rolled by up to ``roll`` degrees."""
        width, height = size
        azimuth = rng.uniform(0, 2 * math.pi)
        theta = math.radians(tilt) * rng.uniform(0.5, 1.0)
        psi = math.radians(roll) * rng.uniform(-1.0, 1.0)
        tilt_r, _ = cv2.Rodrigues(np.array([math.cos(azimuth), math.sin(azimuth), 0.0]) * theta)
        roll_r, _ = cv2.Rodrigues(np.array([0.0, 0.0, psi]))
        rotation = roll_r @ tilt_r
        target = np.array([(width - 1) / 2, (height - 1) / 2, 0.0])
        centre = target - distance * max(size) * rotation.T @ np.array([0.0, 0.0, 1.0])
        return cls(rotation, centre)

    def normalised(self, world: np.ndarray) -> np.ndarray:
        """``(X / Z, Y / Z)`` of world points ``(..., 3)`` in camera coordinates."""
        cam = (world - self.centre) @ self.rotation.T
        return cam[..., :2] / cam[..., 2:3]

    def fitted(self, outline: np.ndarray, size: Size, margin: float) -> Camera:
        """This camera with its image placement chosen so the world points ``outline`` fill the frame ``size``
        but for ``margin`` (a fraction of the width and height) on every side."""
        n = self.normalised(outline)
        lo, hi = n.min(axis=0), n.max(axis=0)
        frame = np.array(size, dtype=np.float64)
        scale = float(min(frame * (1 - 2 * margin) / (hi - lo)))
        offset = (frame - 1) / 2 - scale * (lo + hi) / 2
        return Camera(self.rotation, self.centre, scale, (float(offset[0]), float(offset[1])))

    def rays(self, pixels: np.ndarray) -> np.ndarray:
        """World directions ``(..., 3)`` of the rays through image points ``(..., 2)``."""
        n = (pixels - np.asarray(self.offset)) / self.scale
        cam = np.concatenate([n, np.ones(n.shape[:-1] + (1,))], axis=-1)
        return cam @ self.rotation  # rotation.T applied to each row vector

    def plane_homography(self) -> np.ndarray:
        """The 3x3 homography from the plane ``z = 0`` (page pixel coordinates) to the image."""
        r, c = self.rotation, self.centre
        t = -r @ c
        k = np.array([[self.scale, 0, self.offset[0]], [0, self.scale, self.offset[1]], [0, 0, 1.0]])
        return k @ np.column_stack([r[:, 0], r[:, 1], t])


def hit_points(camera: Camera, field: HeightField, pixels: np.ndarray, iterations: int = 8) -> np.ndarray:
    """Page coordinates ``(..., 2)`` where the rays through image points ``pixels`` meet the lifted page (or the
    surface around it): fixed-point iteration ``z = -h(u, v)``, starting on the plane."""
    rays = camera.rays(pixels)
    c = camera.centre
    h = np.zeros(pixels.shape[:-1])
    for _ in range(iterations):
        t = (-h - c[2]) / rays[..., 2]
        points = c[:2] + t[..., None] * rays[..., :2]
        new = field.height(points, clip=False)
        if np.abs(new - h).max(initial=0.0) < 1e-3:  # converged (a thousandth of a pixel)
            break
        h = new
    return points


def capture_map(size: Size, camera: Camera, field: HeightField, margin: float, step: int = STEP):
    """The fitted camera, the backward map ``(H, W, 2)`` float32 of the frame (page coordinates of every pixel's
    ray, on the page or the surface around it), and the map's coarse grid (page coordinates per node)."""
    width, height = size
    outline = page_outline(width, height)
    world = np.concatenate([outline, -field.height(outline, clip=False)[:, None]], axis=1)
    camera = camera.fitted(world, size, margin)
    nodes = coarse_grid(width, height, step)
    coarse = hit_points(camera, field, nodes)
    return camera, upsample_grid(coarse.astype(np.float32), width, height, step), coarse


# -- light ----------------------------------------------------------------------------------------------------------------

def light_direction(rng: np.random.Generator, elevation: tuple[float, float] = (35.0, 70.0)) -> np.ndarray:
    """A unit vector toward the light (world; ``-z`` points to the camera's side), elevation in degrees."""
    azimuth = rng.uniform(0, 2 * math.pi)
    e = math.radians(rng.uniform(*elevation))
    return np.array([math.cos(e) * math.cos(azimuth), math.cos(e) * math.sin(azimuth), -math.sin(e)])


def lambert(field: HeightField, points: np.ndarray, light: np.ndarray, shading: float) -> np.ndarray:
    """Relative Lambertian brightness at page points: ``1 - shading + shading * (n . l) / (n0 . l)`` with ``n``
    the lifted page's normal there and ``n0`` the flat surface's (1 on flat parts)."""
    g = field.gradient(points)
    normal = np.concatenate([-g, -np.ones(g.shape[:-1] + (1,))], axis=-1)
    normal /= np.linalg.norm(normal, axis=-1, keepdims=True)
    cos = np.maximum(normal @ light, 0.0) / -light[2]
    return 1.0 - shading + shading * cos


def light_field(coarse_nodes: np.ndarray, coarse_hits: np.ndarray, size: Size, field: HeightField,
                light: np.ndarray, shading: float, gradient: float, shadow: float,
                rng: np.random.Generator) -> np.ndarray:
    """Brightness per coarse node: Lambertian shading times a linear gradient across the frame (from
    ``1 - gradient`` to ``1 + gradient`` in a random direction) times a cast shadow (a half-plane darkened by
    ``shadow`` times 0.5-1, its edge blurred over 3-10% of the frame and placed anywhere within 45% of the frame
    from its centre), scaled so the brightest page node is 1."""
    width, height = size
    frame = float(max(size))
    centre = np.array([(width - 1) / 2, (height - 1) / 2])
    ramp_angle = rng.uniform(0, 2 * math.pi)
    ramp_dir = np.array([math.cos(ramp_angle), math.sin(ramp_angle)])
    ramp = 1.0 + gradient * np.clip(((coarse_nodes - centre) @ ramp_dir) / (frame / 2), -1, 1)
    shadow_angle = rng.uniform(0, 2 * math.pi)
    shadow_dir = np.array([math.cos(shadow_angle), math.sin(shadow_angle)])
    # the shadow covers the far side of this line, anywhere across the frame: over a direction drawn uniformly,
    # every point of the page is as likely to lie in it (a shadow kept to the margins would mark where text is not)
    edge = centre + shadow_dir * rng.uniform(-0.45, 0.45) * frame
    softness = rng.uniform(0.03, 0.1) * frame
    depth = shadow * rng.uniform(0.5, 1.0)
    reach = ((coarse_nodes - edge) @ shadow_dir) / softness
    cast = 1.0 - depth / (1.0 + np.exp(-np.clip(reach, -30, 30)))
    light_map = lambert(field, coarse_hits, light, shading) * ramp * cast
    on_page = field.on_page(coarse_hits)
    brightest = float(light_map[on_page].max()) if on_page.any() else 1.0
    return (light_map / max(brightest, 1e-6)).astype(np.float32)


# -- the surface -------------------------------------------------------------------------------------------------------

#: Wood colours (RGB) a drawn wood surface is tinted with: oak, walnut, pine, mahogany, grey-stained.
WOOD_COLOURS = ((150, 105, 62), (96, 64, 42), (178, 138, 92), (110, 52, 38), (120, 112, 102))
#: Cloth colours (RGB) a drawn fabric surface is tinted with.
FABRIC_COLOURS = ((70, 70, 75), (40, 45, 60), (160, 150, 135), (60, 80, 60), (110, 40, 35), (180, 175, 165))
#: The drawn surfaces (:func:`texture`).
TEXTURES = ("wood", "fabric")


def texture(rng: np.random.Generator, size: int = 256) -> tuple[np.ndarray, str]:
    """A ``size x size`` RGB surface drawn procedurally and its kind: ``wood`` (planks of a desk: grain lines
    bent by low-frequency noise, streaks along the grain, a dark seam between planks) or ``fabric`` (a woven
    cloth: warp and weft threads a few pixels apart, each thread's tone varying, soft folds). The same number of
    draws whichever kind."""
    kind = TEXTURES[int(rng.integers(len(TEXTURES)))]
    wood = np.array(WOOD_COLOURS[int(rng.integers(len(WOOD_COLOURS)))], np.float32)
    cloth = np.array(FABRIC_COLOURS[int(rng.integers(len(FABRIC_COLOURS)))], np.float32)
    angle = float(rng.uniform(0, 180))
    low = cv2.resize(rng.standard_normal((5, 5)).astype(np.float32), (size, size), interpolation=cv2.INTER_CUBIC)
    lines = rng.standard_normal((size, 2)).astype(np.float32)  # per row (wood: along the grain; fabric: threads)
    fine = rng.standard_normal((size, size)).astype(np.float32)
    ys, xs = np.mgrid[0:size, 0:size].astype(np.float32)
    if kind == "wood":
        plank = max(24, size // 4)
        bend = 6.0 * low + 0.03 * xs
        grain = np.sin(2 * np.pi * (ys + bend) / 9.0) * 0.5 + np.sin(2 * np.pi * (ys + 2 * bend) / 3.7) * 0.25
        streaks = cv2.resize(lines[:, :1], (size, size), interpolation=cv2.INTER_LINEAR)  # constant along x
        seam = np.exp(-((ys % plank) ** 2) / 2.0)  # a dark line at each plank's edge
        tone = 1.0 + 0.07 * grain + 0.08 * streaks + 0.04 * cv2.GaussianBlur(fine, (0, 0), 1.0) - 0.35 * seam
        tone += 0.06 * cv2.resize(lines[(ys[:, 0] // plank).astype(int) % size, 1:2], (size, size),
                                  interpolation=cv2.INTER_NEAREST)  # each plank its own shade
        base = wood
    else:
        warp = np.sin(2 * np.pi * xs / 3.0) * (0.5 + 0.15 * lines[xs[0].astype(int), 0])
        weft = np.sin(2 * np.pi * ys / 3.0) * (0.5 + 0.15 * lines[:, 1:2])
        tone = 1.0 + 0.07 * (warp + weft) + 0.1 * low + 0.05 * fine
        base = cloth
    rot = cv2.getRotationMatrix2D((size / 2, size / 2), angle, 1.0)
    tone = cv2.warpAffine(tone.astype(np.float32), rot, (size, size), borderMode=cv2.BORDER_REFLECT)
    return np.clip(base[None, None, :] * tone[..., None], 0, 255).astype(np.uint8), kind


def surface_homography(surface_size: Size, camera: Camera, coarse_hits: np.ndarray,
                       rng: np.random.Generator) -> np.ndarray:
    """The homography from a surface image of ``surface_size`` to the frame: the image laid on the plane under
    the page so that it covers all the camera sees (at a random offset where it is larger), seen by ``camera``."""
    sw, sh = surface_size
    lo, hi = coarse_hits.reshape(-1, 2).min(axis=0), coarse_hits.reshape(-1, 2).max(axis=0)
    extent = np.maximum(hi - lo, 1.0)
    k = min(sw / extent[0], sh / extent[1])  # surface pixels per page pixel
    room = np.array([sw, sh]) / k - extent
    origin = lo - rng.uniform(0, 1, 2) * room
    to_surface = np.array([[k, 0, -k * origin[0]], [0, k, -k * origin[1]], [0, 0, 1.0]])
    return camera.plane_homography() @ np.linalg.inv(to_surface)


# -- the picture -------------------------------------------------------------------------------------------------------

#: Frame pixel to half-resolution pixel (pixel centres kept: x_half = (x - 0.5) / 2).
_HALF = np.array([[0.5, 0, -0.25], [0, 0.5, -0.25], [0, 0, 1.0]])


def page_alpha(coarse_hits: np.ndarray, size: Size, step: int = STEP) -> np.ndarray:
    """Coverage (0-1, float32) of each frame pixel by the page: the signed distance, in page pixels, of its ray's
    hit to the page's border, evaluated on the map's coarse grid, upsampled with it and clipped (a one-pixel
    anti-aliased edge)."""
    width, height = size
    u, v = coarse_hits[..., 0], coarse_hits[..., 1]
    inside = np.minimum(np.minimum(u + 1.0, width - u), np.minimum(v + 1.0, height - v))  # distance + 0.5
    coverage = upsample_grid(inside.astype(np.float32), width, height, step)  # a strided view
    _, coverage = cv2.threshold(coverage, 1.0, 1.0, cv2.THRESH_TRUNC)  # min(., 1), into a contiguous image
    return cv2.threshold(coverage, 0.0, 0.0, cv2.THRESH_TOZERO, dst=coverage)[1]  # max(., 0)


def page_region(coarse_hits: np.ndarray, size: Size, step: int = STEP) -> tuple[slice, slice]:
    """Rows and columns of the frame outside which :func:`page_alpha` is 0 (no ray meets the page): the cells of
    the coarse grid with a node on the page (bilinear values never exceed a cell's corners)."""
    width, height = size
    u, v = coarse_hits[..., 0], coarse_hits[..., 1]
    on = np.minimum(np.minimum(u + 1.0, width - u), np.minimum(v + 1.0, height - v)) > 0
    rows, cols = np.flatnonzero(on.any(axis=1)), np.flatnonzero(on.any(axis=0))
    if not len(rows):
        return slice(0, 0), slice(0, 0)
    # node k sits at (k - 0.5) * step - 0.5: the pixels between nodes k - 1 and k + 1
    lo = lambda k: max(int(math.floor((k - 1.5) * step - 0.5)), 0)  # noqa: E731
    hi = lambda k, n: min(int(math.ceil((k + 0.5) * step - 0.5)) + 1, n)  # noqa: E731
    return slice(lo(rows[0]), hi(rows[-1], height)), slice(lo(cols[0]), hi(cols[-1], width))


def camera_kernel(blur: float, sharpen: float) -> np.ndarray:
    """The 1D kernel (applied along rows and columns) of the defocus, a Gaussian of ``blur`` pixels sigma
    (OpenCV's kernel, as ``cv2.GaussianBlur`` makes it), after a 3-tap sharpening ``[-s, 1 + 2s, -s]``
    (``sharpen``: restores what bilinear resampling softens)."""
    kernel = np.ones(1)
    if blur > 0:
        kernel = cv2.getGaussianKernel(int(round(blur * 6 + 1)) | 1, blur, cv2.CV_64F).ravel()
    if sharpen > 0:
        kernel = np.convolve(kernel, [-sharpen, 1 + 2 * sharpen, -sharpen])
    return kernel.astype(np.float32)


def render(page: np.ndarray, surface: np.ndarray, homography: np.ndarray, backward: np.ndarray, alpha: np.ndarray,
           light: np.ndarray, *, tint: float, darken: float, blur: float, noise: float,
           rng: np.random.Generator, interpolation: int = cv2.INTER_CUBIC, sharpen: float = 0.0,
           region: tuple[slice, slice] | None = None, contact: float = 0.0,
           contact_shift: tuple[float, float] = (0.0, 0.0), contact_blur: float = 2.0) -> np.ndarray:
    """The photographed frame, BGR (OpenCV's order) uint8 of ``backward``'s size.

    The page (``HxW`` or ``HxWx3`` uint8) is resampled through ``backward``
    over ``surface`` (RGB, drawn through ``homography`` and darkened by
    ``darken``: the exposure is set for the paper), blended by ``alpha``, and
    multiplied by ``light`` (frame-size float32); ``tint`` (-1..1) warms
    (> 0) or cools the light. Then the camera: defocus (Gaussian, ``blur``
    pixels sigma) and luminance sensor noise (``noise`` grey levels standard
    deviation; the sum of two uniform bytes from ``rng``, triangular).
    ``sharpen`` (> 0 with ``interpolation`` bilinear: 0.1 comes within 3 grey
    levels RMS of bicubic at less than half its cost) is fused with the
    defocus into one separable filter (:func:`camera_kernel`). ``region``
    (:func:`page_region`): the rows and columns outside which ``alpha`` is 0,
    the only ones the page is resampled in. ``contact``: the depth (0-1) of
    the contact shadow the page casts on the surface it lies on, the page's
    coverage moved by ``contact_shift`` (frame pixels, away from the light)
    and blurred by ``contact_blur`` pixels (sigma), darkening the surface only.

    Luminance is rendered at full resolution and chroma at half (YCrCb, as
    cameras and JPEG keep it): a grey page needs only one full-size resampling.
    """
    height, width = backward.shape[:2]
    half = ((width + 1) // 2, (height + 1) // 2)
    # the surface at half size (it is far less sharp than the page anyway), darker and duller (the exposure is
    # set for the paper: Y * darken, chroma pulled to grey), its luminance brought to full size
    seen = cv2.warpPerspective(cv2.cvtColor(surface, cv2.COLOR_RGB2YCrCb), _HALF @ homography, half,
                               flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
    dim = np.float32([[darken, 0, 0, 0], [0, darken, 0, 128 * (1 - darken)], [0, 0, darken, 128 * (1 - darken)]])
    seen = cv2.transform(seen, dim)
    surface_y, surface_cr, surface_cb = cv2.split(seen)
    alpha_half = cv2.resize(alpha, half, interpolation=cv2.INTER_AREA)
    if contact > 0:  # the page's shadow on the surface, at half size (it is soft)
        move = np.float32([[1, 0, contact_shift[0] / 2], [0, 1, contact_shift[1] / 2]])
        under = cv2.warpAffine(alpha_half, move, half, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
        under = cv2.GaussianBlur(under, (0, 0), max(contact_blur / 2, 0.5))
        surface_y = cv2.multiply(surface_y, 1.0 - contact * under, dtype=cv2.CV_8U)
    surface_y = cv2.resize(surface_y, (width, height), interpolation=cv2.INTER_LINEAR)
    rows, cols = region or (slice(0, height), slice(0, width))
    page_y = np.full((height, width), 255, np.uint8)  # off the page alpha is 0: any value
    if page.ndim == 3:
        page_ycc = cv2.cvtColor(page, cv2.COLOR_RGB2YCrCb)
        cv2.remap(page_ycc[..., 0], backward[rows, cols], None, interpolation, dst=page_y[rows, cols],
                  borderMode=cv2.BORDER_REPLICATE)
        half_map = cv2.resize(backward, half, interpolation=cv2.INTER_AREA)
        _, page_cr, page_cb = cv2.split(cv2.remap(page_ycc, half_map, None, cv2.INTER_LINEAR,
                                                  borderMode=cv2.BORDER_REPLICATE))
    else:
        cv2.remap(page, backward[rows, cols], None, interpolation, dst=page_y[rows, cols],
                  borderMode=cv2.BORDER_REPLICATE)
        page_cr = page_cb = np.full(half[::-1], 128, np.uint8)
    # luminance: page over surface (blendLinear: one pass), lit, defocused, with sensor noise
    luma = cv2.multiply(cv2.blendLinear(page_y, surface_y, alpha, 1.0 - alpha), light, dtype=cv2.CV_8U)
    luma_half = cv2.resize(luma, half, interpolation=cv2.INTER_AREA)
    if sharpen > 0:
        kernel = camera_kernel(blur, sharpen)
        luma = cv2.sepFilter2D(luma, -1, kernel, kernel, borderType=cv2.BORDER_REFLECT_101)
    elif blur > 0:
        luma = cv2.GaussianBlur(luma, (0, 0), blur)
    if noise > 0:
        raw = np.frombuffer(rng.bytes(2 * height * width), np.uint8).reshape(2, height, width)
        grain = cv2.add(raw[0], raw[1], dtype=cv2.CV_16S)  # 0..510, mean 255, std 104.2
        luma = cv2.addWeighted(luma, 1.0, grain, noise / 104.2, -255 * noise / 104.2, dtype=cv2.CV_8U)
    # chroma at half size: page over surface; the light's colour adds an offset proportional to brightness
    chroma = []
    for page_c, surface_c, sign in ((page_cr, surface_cr, 1), (page_cb, surface_cb, -1)):
        mixed = cv2.blendLinear(page_c, surface_c, alpha_half, 1.0 - alpha_half)
        mixed = cv2.addWeighted(mixed, 1.0, luma_half, sign * tint * 0.06, 0.0, dtype=cv2.CV_8U)
        chroma.append(cv2.resize(mixed, (width, height), interpolation=cv2.INTER_LINEAR))
    return cv2.cvtColor(cv2.merge([luma, *chroma]), cv2.COLOR_YCrCb2BGR)


def reuse_freed_memory() -> bool:
    """Ask the C library's ``malloc`` (glibc's ``mallopt``) to serve blocks up to 32 MiB from its heap and keep up
    to 128 MiB freed there, rather than map fresh zeroed pages for each and unmap them when freed: ``capture``
    makes and drops some twenty full-page arrays a page, and faulting their pages in cost about a quarter of its
    time. Process-wide (memory only; no result changes); False where there is no ``mallopt`` (not glibc)."""
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (AttributeError, OSError):
        return False
    M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # noqa: N806 - glibc's malloc.h names
    return bool(mallopt(M_MMAP_THRESHOLD, 32 << 20)) and bool(mallopt(M_TRIM_THRESHOLD, 128 << 20))


def encode_jpeg(frame: np.ndarray, quality: int) -> bytes:
    """BGR ``frame`` as JPEG bytes at ``quality`` (OpenCV's encoder, 4:2:0 as cameras store it)."""
    ok, data = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:
        raise ValueError("OpenCV could not encode the frame as JPEG")
    return data.tobytes()


# -- measured effects --------------------------------------------------------------------------------------------------

def nonrigid_displacement(backward: np.ndarray, size: Size, step: int = 8) -> float:
    """Mean distance, in page widths, between where page points land and where the best similarity transform
    (rotation, scale, shift; least squares) would put them: the perspective and bending the capture adds
    beyond framing. Over the output pixels (every ``step``-th) whose ray meets the page."""
    width, height = size
    grid = backward[::step, ::step].reshape(-1, 2).astype(np.float64)
    ys, xs = np.mgrid[0:backward.shape[0]:step, 0:backward.shape[1]:step]
    out = np.stack([xs.ravel(), ys.ravel()], -1).astype(np.float64)
    inside = (grid[:, 0] >= 0) & (grid[:, 0] <= width - 1) & (grid[:, 1] >= 0) & (grid[:, 1] <= height - 1)
    src, dst = grid[inside], out[inside]
    if len(src) < 3:
        return 0.0
    # dst ~ [a -b; b a] src + t
    rows = np.zeros((2 * len(src), 4))
    rows[0::2] = np.column_stack([src[:, 0], -src[:, 1], np.ones(len(src)), np.zeros(len(src))])
    rows[1::2] = np.column_stack([src[:, 1], src[:, 0], np.zeros(len(src)), np.ones(len(src))])
    solution, *_ = np.linalg.lstsq(rows, dst.reshape(-1), rcond=None)
    fit = (rows @ solution).reshape(-1, 2)
    scale = math.hypot(solution[0], solution[1])
    return float(np.linalg.norm(fit - dst, axis=1).mean() / (scale * width))


def word_contrast(pixels: np.ndarray, boxes) -> float:
    """Median over word boxes of the ink's contrast: the median luminance of the box's brighter pixels minus
    that of its darker ones (split at the box's mean; medians, so sensor noise hardly moves it). Blur, JPEG,
    shading and shadow lower it; 0 without boxes."""
    luma = pixels if pixels.ndim == 2 else cv2.cvtColor(pixels, cv2.COLOR_RGB2GRAY)
    height, width = luma.shape
    out = []
    for x0, y0, x1, y1 in np.asarray(boxes, np.int64).reshape(-1, 4):
        x0, x1 = max(int(x0), 0), min(int(x1), width)
        y0, y1 = max(int(y0), 0), min(int(y1), height)
        inside = luma[y0:y1, x0:x1].astype(np.float32).ravel()
        if inside.size < 4:
            continue
        split = inside.mean()
        dark, bright = inside[inside < split], inside[inside >= split]
        if len(dark) and len(bright):
            out.append(float(np.median(bright) - np.median(dark)))
    return float(np.median(out)) if out else 0.0
