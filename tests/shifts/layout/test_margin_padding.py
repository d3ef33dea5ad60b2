"""Form-attack OCR-level and layout shifts on real FUNSD pages and hand-made forms: what moves, what never does."""

from __future__ import annotations

import numpy as np
import pytest
from ocr_level_checks import run, swap_form


@pytest.mark.parametrize("rgb", [False, True])
def test_margin_padding_pads_white_and_moves_every_box(rgb, pages):
    docs = [pages[0], swap_form(rgb=True)] if rgb else pages[:3]
    for seed, doc in enumerate(docs):
        out, c = run("margin_padding", doc, seed)
        left, right, top, bottom = c["margin_left"], c["margin_right"], c["margin_top"], c["margin_bottom"]
        assert 1 <= left <= 0.3 * doc.width and 1 <= right <= 0.3 * doc.width
        assert 1 <= top <= 0.3 * doc.height and 1 <= bottom <= 0.3 * doc.height
        assert (out.width, out.height) == (doc.width + left + right, doc.height + top + bottom)
        before, after = doc.image.to_array(), out.image.to_array()
        assert after.ndim == before.ndim
        assert np.array_equal(after[top:top + doc.height, left:left + doc.width], before)
        region = np.zeros(after.shape[:2], dtype=bool)
        region[top:top + doc.height, left:left + doc.width] = True
        assert (after[~region] == 255).all()
        assert np.array_equal(out.boxes, doc.boxes + [left, top, left, top])
        assert [w.text for w in out.words] == [w.text for w in doc.words] and out.entities == doc.entities
    sizes = {run("margin_padding", pages[0], s)[1]["margin_left"] for s in range(10)}
    assert len(sizes) > 5  # a random length, not a constant
