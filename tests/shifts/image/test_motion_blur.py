"""RoDLA's perturbations as dogood shifts (issue 29): rotate, motion_blur, defocus, watermark, speckle, paper_texture,
illumination and shadow, on real FUNSD forms. Pixels change where each says, boxes hold their words' ink, labels are
kept, the same seed gives the same bytes, and the levels of one config share their draws and grow in effect."""

from __future__ import annotations

import math

import cv2
import numpy as np
from rodla_levels import level

from dogood.shifts import SHIFTS
from dogood.shifts.image.motion_blur import line_kernel


def test_motion_blur_levels_smear_the_same_way_each_further(forms):
    doc = forms[0]
    angle = np.random.default_rng(11).uniform(0.0, math.pi)
    for s in (1, 5):
        length = SHIFTS["motion_blur"].severities[s]["length"]
        expected = cv2.filter2D(doc.image.to_array(), -1, line_kernel(length, angle).astype(np.float32),
                                borderType=cv2.BORDER_REPLICATE)
        assert np.array_equal(level("motion_blur", s)(doc, 11).image.to_array(), expected)
