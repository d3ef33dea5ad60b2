"""RoDLA's perturbations as dogood shifts (issue 29): rotate, motion_blur, defocus, watermark, speckle, paper_texture,
illumination and shadow, on real FUNSD forms. Pixels change where each says, boxes hold their words' ink, labels are
kept, the same seed gives the same bytes, and the levels of one config share their draws and grow in effect."""

from __future__ import annotations

import numpy as np
from rodla_levels import level


def test_shadow_darkens_one_side_of_the_page(forms):
    for seed, doc in enumerate(forms):
        before = doc.image.to_array().astype(int)
        after = level("shadow", 5)(doc, seed).image.to_array().astype(int)
        assert (after <= before).all()
        darker = (before - after) > 0.3 * before  # the umbra: light cut by more than 30% (strength 0.75)
        lit = after == before
        assert darker.mean() > 0.1 and lit.mean() > 0.1
        # the umbra and the lit part lie on either side of one edge: a straight line separates most of them
        ys, xs = np.nonzero(darker)
        ly, lx = np.nonzero(lit)
        direction = np.array([xs.mean() - lx.mean(), ys.mean() - ly.mean()])
        cut = (np.array([xs, ys]).T @ direction).min()
        assert ((np.array([lx, ly]).T @ direction) < cut).mean() > 0.9
