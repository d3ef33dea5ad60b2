"""Box arithmetic: LayoutLM's 0-1000 normalisation, clipping, unions, closed-box intersection."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dogood.core.boxes import boxes_intersect, clip_box, denormalize_box, dilate_box, normalize_box, union_boxes

# -- normalize_box ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("box", "size", "expected"),
    [
        # int(1000 * x / w): 10000/754 = 13.26 -> 13, 377000/754 = 500.0 -> 500
        ((10, 20, 377, 500), (754, 1000), [13, 20, 500, 500]),
        # truncation, not rounding: 753000/754 = 998.67 -> 998, 999*1000/1000 = 999
        ((1, 1, 753, 999), (754, 1000), [1, 1, 998, 999]),
        # 1000/754 = 1.326 -> 1; 2000/754 = 2.65 -> 2 (rounding would give 3)
        ((2, 3, 5, 7), (754, 1000), [2, 3, 6, 7]),
        # a 3000 x 2000 page: 1500*1000/3000 = 500, 999*1000/2000 = 499.5 -> 499
        ((1500, 999, 2999, 2000), (3000, 2000), [500, 499, 999, 1000]),
        # whole page maps to the whole grid
        ((0, 0, 754, 1000), (754, 1000), [0, 0, 1000, 1000]),
    ],
)
def test_normalize_box_hand_computed(box, size, expected):
    got = normalize_box(box, *size)
    assert got == expected
    assert all(type(v) is int for v in got)


def test_normalize_box_clamps_at_page_edges():
    # -5*1000/754 = -6.6 -> 0; 800*1000/754 = 1061 -> 1000; 1200*1000/1000 = 1200 -> 1000
    assert normalize_box((-5, -3, 800, 1200), 754, 1000) == [0, 0, 1000, 1000]
    # only the out-of-range coordinates are clamped
    assert normalize_box((377, -40, 900, 500), 754, 1000) == [500, 0, 1000, 500]


@pytest.mark.parametrize("size", [(0, 1000), (754, 0), (-1, 10)])
def test_normalize_box_rejects_empty_page(size):
    with pytest.raises(ValueError, match="page size must be positive"):
        normalize_box((0, 0, 1, 1), *size)


def test_normalize_box_accepts_floats():
    # 10.9 * 1000 / 100 = 109.0 ; 55.55 * 1000 / 200 = 277.75 -> 277
    assert normalize_box((10.9, 55.55, 20.0, 100.0), 100, 200) == [109, 277, 200, 500]


# -- denormalize_box --------------------------------------------------------------


def test_denormalize_box_hand_computed():
    # 13 * 754 / 1000 = 9.802 -> 10 ; 500 * 754 / 1000 = 377
    assert denormalize_box([13, 20, 500, 500], 754, 1000) == (10, 20, 377, 500)
    assert denormalize_box([0, 0, 1000, 1000], 754, 1000) == (0, 0, 754, 1000)


page_sizes = st.tuples(st.integers(1, 5000), st.integers(1, 5000))


@given(size=page_sizes, data=st.data())
def test_denormalize_inverts_normalize_within_rounding(size, data):
    w, h = size
    x0 = data.draw(st.integers(0, w))
    x1 = data.draw(st.integers(x0, w))
    y0 = data.draw(st.integers(0, h))
    y1 = data.draw(st.integers(y0, h))
    norm = normalize_box((x0, y0, x1, y1), w, h)
    assert all(0 <= v <= 1000 for v in norm)
    assert norm[0] <= norm[2] and norm[1] <= norm[3]
    back = denormalize_box(norm, w, h)
    # truncation loses less than one grid step (w/1000 px); rounding adds at most 0.5 px
    for got, orig, side in zip(back, (x0, y0, x1, y1), (w, h, w, h)):
        assert abs(got - orig) <= side / 1000 + 0.5


@given(size=page_sizes, data=st.data())
def test_normalize_is_exact_on_grid_points(size, data):
    # when 1000 divides the page size, every multiple of w/1000 survives the round trip exactly
    w, h = size[0] * 1000, size[1] * 1000
    k = data.draw(st.lists(st.integers(0, 1000), min_size=4, max_size=4))
    k0, k2 = sorted(k[::2])
    k1, k3 = sorted(k[1::2])
    box = (k0 * w // 1000, k1 * h // 1000, k2 * w // 1000, k3 * h // 1000)
    assert normalize_box(box, w, h) == [k0, k1, k2, k3]
    assert denormalize_box([k0, k1, k2, k3], w, h) == box


# -- clip_box -----------------------------------------------------------------------


def test_clip_box_inside_page_is_unchanged():
    assert clip_box((10, 20, 30, 40), 754, 1000) == (10, 20, 30, 40)


def test_clip_box_clips_each_side():
    assert clip_box((-10, 5, 800, 1200), 754, 1000) == (0, 5, 754, 1000)
    assert clip_box((-10, -20, -1, -2), 754, 1000) == (0, 0, 0, 0)
    # entirely right of the page: collapses onto the right edge
    assert clip_box((900, 10, 950, 20), 754, 1000) == (754, 10, 754, 20)


def test_clip_box_orders_corners_and_rounds():
    assert clip_box((50, 60, 10, 20), 754, 1000) == (10, 20, 50, 60)
    got = clip_box((1.4, 2.6, 3.2, 7.8), 100, 100)
    assert got == (1, 3, 3, 8)
    assert all(type(v) is int for v in got)


# -- union_boxes -----------------------------------------------------------------


def test_union_boxes():
    assert union_boxes([(1, 2, 3, 4), (0, 5, 2, 9)]) == (0, 2, 3, 9)
    assert union_boxes([(5, 5, 6, 6)]) == (5, 5, 6, 6)
    # any iterable works, including a generator
    got = union_boxes(b for b in [(10, 10, 20, 20), (15, 0, 30, 12), (12, 18, 14, 40)])
    assert got == (10, 0, 30, 40)
    assert all(type(v) is int for v in got)


def test_union_of_no_boxes_is_an_error():
    with pytest.raises(ValueError, match="union of no boxes"):
        union_boxes([])
    with pytest.raises(ValueError, match="union of no boxes"):
        union_boxes(iter(()))


# -- dilate_box -------------------------------------------------------------------


def test_dilate_box():
    assert dilate_box((10, 10, 20, 20), 2, 3) == (8, 7, 22, 23)
    assert dilate_box((10, 10, 20, 20), 0.5, 0) == (9.5, 10, 20.5, 20)


# -- boxes_intersect ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ((0, 0, 10, 10), (10, 0, 20, 10), True),  # share the edge x = 10 (closed boxes)
        ((0, 0, 10, 10), (0, 10, 10, 20), True),  # share the edge y = 10
        ((0, 0, 10, 10), (10, 10, 20, 20), True),  # share only the corner (10, 10)
        ((0, 0, 10, 10), (2, 2, 4, 4), True),  # containment
        ((0, 0, 10, 10), (5, -5, 15, 5), True),  # proper overlap
        ((0, 0, 10, 10), (11, 0, 20, 10), False),  # one pixel gap in x
        ((0, 0, 10, 10), (0, 11, 10, 20), False),  # one pixel gap in y
        ((0, 0, 10, 10), (11, 11, 20, 20), False),  # diagonal, disjoint
        ((0, 0, 10, 10), (20, 0, 30, 10), False),  # x-overlap missing though y overlaps
        ((0, 0, 10, 10), (0, 20, 10, 30), False),  # y-overlap missing though x overlaps
        ((5, 5, 5, 5), (5, 5, 5, 5), True),  # a point intersects itself
        ((0, 0, 10, 10), (10.5, 0, 20, 10), False),  # floats
    ],
)
def test_boxes_intersect(a, b, expected):
    assert boxes_intersect(a, b) is expected
    assert boxes_intersect(b, a) is expected


def test_boxes_intersect_elementwise_matches_one_pair_at_a_time():
    """merge's vectorised test is this one function on coordinate arrays (shape (4, ...))."""
    rng = np.random.default_rng(0)
    xy = rng.integers(0, 50, size=(30, 2))
    boxes = np.concatenate([xy, xy + rng.integers(0, 20, size=(30, 2))], axis=1)
    grown = dilate_box(boxes.T[:, :, None], 3, 1.5)
    table = boxes_intersect(grown, boxes.T[:, None, :])
    assert table.shape == (30, 30)
    for i in range(30):
        for j in range(30):
            assert table[i, j] == boxes_intersect(dilate_box(boxes[i], 3, 1.5), boxes[j])
