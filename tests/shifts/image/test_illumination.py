"""RoDLA's perturbations as dogood shifts (issue 29): rotate, motion_blur, defocus, watermark, speckle, paper_texture,
illumination and shadow, on real FUNSD forms. Pixels change where each says, boxes hold their words' ink, labels are
kept, the same seed gives the same bytes, and the levels of one config share their draws and grow in effect."""

from __future__ import annotations

import numpy as np
from rodla_levels import level


def test_illumination_lights_or_shades_its_patch_only(forms):
    for kind in ("dark", "bright"):
        shift = level("illumination", 4, kinds=[kind])
        for seed, doc in enumerate(forms):
            before = doc.image.to_array()
            _, mask = shift.patch(np.random.default_rng(seed), (doc.width, doc.height))
            out = shift(doc, seed)
            after = out.image.to_array()
            assert out.provenance[-1].tallies["kind"] == {kind: 1}
            assert np.array_equal(after[mask == 0], before[mask == 0])
            assert (after <= before).all() if kind == "dark" else (after >= before).all()
            core = mask > 0.5
            if core.sum() > 100:  # darker by 0.6 of the light, or 0.6 of the way to white, times the mask
                moved = np.abs(after[core].astype(int) - before[core].astype(int))
                room = before[core] if kind == "dark" else 255 - before[core].astype(int)
                assert np.abs(moved - 0.6 * mask[core] * room).max() <= 1
