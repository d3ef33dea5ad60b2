"""RoDLA's perturbations as dogood shifts (issue 29): rotate, motion_blur, defocus, watermark, speckle, paper_texture,
illumination and shadow, on real FUNSD forms. Pixels change where each says, boxes hold their words' ink, labels are
kept, the same seed gives the same bytes, and the levels of one config share their draws and grow in effect."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest
from rodla_levels import level

from dogood.shifts.image.defocus import disc_kernel
from dogood.shifts.image.motion_blur import line_kernel


def test_blurs_are_centred_kernels_applied_as_is(forms):
    """motion_blur and defocus are exactly their kernel filtered over the page; each kernel sums to 1 and its centre
    of mass is its centre, so no ink moves; the motion kernel is a segment of the asked length."""
    doc = forms[0]
    pixels = doc.image.to_array()
    for kernel in (line_kernel(9.0, 0.7), line_kernel(3.0, 2.1), disc_kernel(1.5), disc_kernel(0.6)):
        n = kernel.shape[0]
        ys, xs = np.mgrid[:n, :n]
        assert kernel.sum() == pytest.approx(1.0)
        assert (kernel * xs).sum() == pytest.approx((n - 1) / 2) and (kernel * ys).sum() == pytest.approx((n - 1) / 2)
    spread = line_kernel(9.0, 0.0)
    row = spread[spread.shape[0] // 2]
    assert row.sum() == pytest.approx(1.0)  # a horizontal segment: all in the middle row
    centre = (len(row) - 1) / 2  # spread as a 9-pixel segment is (plus the splat's 1/6 px^2)
    assert math.sqrt((row * (np.arange(len(row)) - centre) ** 2).sum()) == pytest.approx(math.sqrt(81 / 12 + 1 / 6),
                                                                                          abs=0.02)
    disc = disc_kernel(2.0)
    assert disc.shape == (5, 5) and disc[2, 2] == disc.max() and disc[0, 0] == 0
    angle = np.random.default_rng(4).uniform(0.0, math.pi)  # the shift's one draw, from the step's seed
    out = level("motion_blur", 3)(doc, 4).image.to_array()
    expected = cv2.filter2D(pixels, -1, line_kernel(9.0, angle).astype(np.float32), borderType=cv2.BORDER_REPLICATE)
    assert np.array_equal(out, expected)
    out = level("defocus", 3)(doc, 0).image.to_array()
    expected = cv2.filter2D(pixels, -1, disc_kernel(1.5).astype(np.float32), borderType=cv2.BORDER_REPLICATE)
    assert np.array_equal(out, expected)
    # flat paper far from anything dark is left as it was
    dark = cv2.dilate((pixels < 200).astype(np.uint8), np.ones((17, 17), np.uint8)) > 0
    flat = ~dark & (cv2.dilate(pixels, np.ones((17, 17), np.uint8)) == cv2.erode(pixels, np.ones((17, 17), np.uint8)))
    assert flat.mean() > 0.2 and np.array_equal(out[flat], pixels[flat])
