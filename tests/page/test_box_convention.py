"""Geometric shifts keep the annotation's box convention: a warped word box keeps its looseness (its area over its
ink's bounding box) on real FUNSD forms, at the levels' extremes (bench/measure_geometry.py: every level, 50
forms); ``reproject: ink`` tightens the boxes, as stated."""

from __future__ import annotations

import numpy as np
import pytest

from dogood.core.seeds import step_seed
from dogood.measures.box_ink import looseness
from dogood.page.warp import carry_boxes, ink_bounds, ink_mask, restore_margins
from dogood.shifts import SHIFTS, make_shift

STEPS = {
    "distort": {"shift": "distort"},
    "perspective": {"shift": "distort", "kinds": ["perspective"]},
    "curl": {"shift": "distort", "kinds": ["curl"]},
    "fold": {"shift": "distort", "kinds": ["fold", "curve"]},
    "capture": {"shift": "capture"},
}


def _ratio(step, level, docs):
    key = make_shift(step).step_key()
    shift = make_shift({**step, **SHIFTS[step["shift"]].severities[level]})
    shift.prepare()
    before, after = [], []
    for doc in docs:
        out = shift(doc, step_seed(0, doc.id, 0, key))
        a, b = looseness(doc.image.to_array(), doc.boxes), looseness(out.image.to_array(), out.boxes)
        ok = np.isfinite(a) & np.isfinite(b)
        before.append(a[ok])
        after.append(b[ok])
    a, b = np.concatenate(before), np.concatenate(after)
    return float(b.mean() / a.mean()), float(np.median(b / a))


@pytest.mark.parametrize("name", list(STEPS))
@pytest.mark.parametrize("level", [1, 5])
def test_warped_boxes_keep_their_looseness(funsd_test, name, level):
    docs = [funsd_test.load(i) for i in funsd_test.ids()[:2]]
    mean, median = _ratio(STEPS[name], level, docs)
    assert 0.9 <= mean <= 1.1 and 0.95 <= median <= 1.05, (name, level, mean, median)


@pytest.mark.parametrize("name", ["distort", "capture"])
def test_ink_convention_tightens_funsd_boxes(funsd_test, name):
    docs = [funsd_test.load(i) for i in funsd_test.ids()[:2]]
    mean, _ = _ratio({**STEPS[name], "reproject": "ink"}, 1, docs)
    assert mean < 0.85  # FUNSD's boxes are looser than their ink: the tight convention is a box-size change


def test_restored_margins_scale_with_the_ink():
    """The margins around the ink grow as the ink's bounds do, axis by axis, so the area ratio is kept."""
    boxes = np.array([[10, 20, 50, 40], [100, 100, 130, 110]])
    src_ink = np.array([[14, 24, 44, 36], [-1, -1, -1, -1]])  # the second word has no ink: kept as carried
    warped = np.array([[28, 48, 88, 72], [200, 200, 260, 220]])  # twice as large
    out = restore_margins(boxes, src_ink, warped, (1000, 1000))
    assert out.tolist() == [[20, 40, 100, 80], [200, 200, 260, 220]]
    area = lambda b: (b[2] - b[0]) * (b[3] - b[1])  # noqa: E731
    assert area(out[0]) / area(warped[0]) == pytest.approx(area(boxes[0]) / area(src_ink[0]))


def test_an_identity_map_carries_every_box_unchanged(funsd_test):
    doc = funsd_test.load(funsd_test.ids()[3])
    pixels = doc.image.to_array()
    ys, xs = np.mgrid[0:doc.height, 0:doc.width]
    identity = np.dstack([xs, ys]).astype(np.float32)
    for mode in ("margins", "box"):
        out, counts = carry_boxes(doc.boxes, identity, pixels, mode, warped=pixels)
        assert np.array_equal(out, doc.boxes) and counts["fallback_boxes"] == 0
    tight, _ = carry_boxes(doc.boxes, identity, pixels, "ink")
    bounds = ink_bounds(ink_mask(pixels, doc.boxes), doc.boxes)
    has = bounds[:, 0] >= 0
    assert np.array_equal(tight[has], bounds[has])
