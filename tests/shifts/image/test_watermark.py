"""RoDLA's perturbations as dogood shifts (issue 29): rotate, motion_blur, defocus, watermark, speckle, paper_texture,
illumination and shadow, on real FUNSD forms. Pixels change where each says, boxes hold their words' ink, labels are
kept, the same seed gives the same bytes, and the levels of one config share their draws and grow in effect."""

from __future__ import annotations

import numpy as np
from rodla_levels import level


def test_watermark_changes_only_what_its_mark_covers_and_never_lightens_ink(forms):
    from dogood.shifts.image.watermark import place

    shift = level("watermark", 4, colors=["gray"])
    for seed, doc in enumerate(forms):
        before = doc.image.to_array()
        mark = shift.draw(np.random.default_rng(seed), (doc.width, doc.height))
        coverage = place(mark["mask"], mark["angle"], mark["centre"], (doc.width, doc.height))
        after = shift(doc, seed).image.to_array()
        assert after.ndim == 2  # a grey mark keeps a grey page grey
        assert np.array_equal(after[coverage == 0], before[coverage == 0])
        assert (after <= before).all()  # multiplied: nothing gets lighter, ink stays as dark as it was
        under = (coverage > 0.999) & (before > 200)  # paper under the mark takes 65% of its grey (110)
        expected = before[under] * (1 - 0.65 * (1 - 110 / 255))
        assert under.sum() > 1000 and np.abs(after[under] - expected).max() <= 1
    red = level("watermark", 2, colors=["red"])(forms[0], 0).image.to_array()
    assert red.ndim == 3 and (red[..., 0].astype(int) >= red[..., 2]).all()
