"""RoDLA's perturbations as dogood shifts (issue 29): rotate, motion_blur, defocus, watermark, speckle, paper_texture,
illumination and shadow, on real FUNSD forms. Pixels change where each says, boxes hold their words' ink, labels are
kept, the same seed gives the same bytes, and the levels of one config share their draws and grow in effect."""

from __future__ import annotations

import numpy as np
from rodla_levels import level

from dogood.shifts.levels import LEVELS


def test_speckle_adds_to_the_same_specks_and_texture_darkens_the_paper_more_than_the_ink(forms):
    doc = forms[1]
    before = doc.image.to_array().astype(int)
    changed = []
    for s in LEVELS:
        after = level("speckle", s)(doc, 3).image.to_array().astype(int)
        changed.append(np.abs(after - before) > 32)
    for low, high in zip(changed, changed[1:]):
        # nested: the specks of a level stay at the next (but where a new light speck lands on an old dark one)
        assert low.sum() < high.sum() and (low & ~high).sum() <= 0.005 * low.sum()
    after = level("paper_texture", 5)(doc, 3).image.to_array().astype(int)
    assert (after <= before).all()
    paper, ink = before > 220, before < 60
    assert (before - after)[paper].mean() > 5 * max((before - after)[ink].mean(), 0.5)
