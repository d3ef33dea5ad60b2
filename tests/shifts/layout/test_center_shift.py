"""Form-attack OCR-level and layout shifts on real FUNSD pages and hand-made forms: what moves, what never does."""

from __future__ import annotations

import numpy as np
import pytest
from ocr_level_checks import boxes_inside, edge_form, run


@pytest.mark.parametrize("delta", [0.1, 0.25])
def test_center_shift_keeps_sizes_and_spreads_by_delta(delta, funsd_test):
    dx, dy = [], []
    for seed, doc in enumerate(funsd_test.load(i) for i in funsd_test.ids()[:20]):
        out, counts = run("center_shift", doc, seed, delta=delta)
        old, new = doc.boxes, out.boxes
        assert np.array_equal(new[:, 2:] - new[:, :2], old[:, 2:] - old[:, :2])  # sizes kept, clipped or not
        assert [w.text for w in out.words] == [w.text for w in doc.words] and out.entities == doc.entities
        assert out.image is doc.image
        assert counts["eligible"] == len(doc.words) and counts["changed"] == int((old != new).any(axis=1).sum())
        w, h = old[:, 2] - old[:, 0], old[:, 3] - old[:, 1]
        flush = (new[:, 0] == 0) | (new[:, 1] == 0) | (new[:, 2] == doc.width) | (new[:, 3] == doc.height)
        big = ~flush & (w >= 20) & (h >= 10)  # whole-pixel rounding matters little on these
        dx.extend(((new[:, 0] - old[:, 0]) / w)[big])
        dy.extend(((new[:, 1] - old[:, 1]) / h)[big])
    assert len(dx) > 1000
    for d in (np.array(dx), np.array(dy)):
        assert abs(d.std() - delta) <= 0.2 * delta
        assert abs(d.mean()) <= 0.1 * delta


def test_center_shift_slides_boxes_back_inside():
    doc = edge_form()
    clipped = 0
    for seed in range(20):
        out, counts = run("center_shift", doc, seed, delta=1.0)
        assert boxes_inside(out)
        assert np.array_equal(out.boxes[:, 2:] - out.boxes[:, :2], doc.boxes[:, 2:] - doc.boxes[:, :2])
        clipped += counts["clipped"]
    assert clipped > 0
    assert run("center_shift", doc, 0, delta=0.0)[0].words == doc.words
