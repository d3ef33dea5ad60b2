"""Word quads (issue 29 part 3): each word's four corners carried exactly through rotate, distort (incl.
perspective) and capture on FUNSD pages; written only when asked (``quads: true``, ``dogood build --quads``)."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pyarrow.parquet as pq
import pytest

from dogood.core.schema import QUADS_COLUMN, document_to_row, row_to_document
from dogood.page.affine import rotation
from dogood.page.quads import _bilinear, box_quads, warp_quads
from dogood.pipeline.build import build
from dogood.pipeline.recipe import parse_recipe
from dogood.shifts.image.capture import CapturePage
from dogood.shifts.image.distort import DistortPage
from dogood.shifts.image.rotate import RotatePage

FORMS = ["82092117", "83641919_1922"]


def _form(funsd_test, i=0):
    ids = list(funsd_test.ids())
    return funsd_test.load(ids[i])


def test_without_quads_no_word_carries_one(funsd_test):
    doc = _form(funsd_test)
    out = RotatePage().apply(doc, np.random.default_rng(0)).doc
    assert not out.has_quads
    assert all(w.quad is None for w in out.words)


@pytest.mark.parametrize("seed", [0, 3])
def test_rotate_quads_are_the_corners_turned_exactly(funsd_test, seed):
    doc = _form(funsd_test, seed)
    shift = RotatePage()
    out = shift.apply(doc.with_quads(), np.random.default_rng(seed)).doc
    angle = shift.draw_angle(np.random.default_rng(seed))
    matrix, size = rotation((doc.width, doc.height), angle, shift.canvas)
    corners = box_quads(doc.boxes).reshape(-1, 1, 2) - 0.5  # pixel edges -> OpenCV's pixel centres
    expected = cv2.transform(corners, matrix).reshape(-1, 4, 2) + 0.5
    expected = np.clip(expected, 0, [size[0], size[1]])
    assert np.abs(out.quads - expected).max() <= 0.005 + 1e-9  # rounded to 1/100 pixel
    # a turned word's quad is not its box: its top edge slopes by the angle
    top = out.quads[:, 1] - out.quads[:, 0]
    slope = np.degrees(np.arctan2(-top[:, 1], top[:, 0]))
    wide = (doc.boxes[:, 2] - doc.boxes[:, 0]) > 40
    assert np.allclose(slope[wide], angle, atol=0.2)
    # and the box is the quad's bounds (reproject: box), to the pixel
    bounds = np.concatenate([np.floor(out.quads.min(1)), np.ceil(out.quads.max(1))], axis=1)
    assert np.abs(bounds - out.boxes).max() <= 1


def _assert_map_takes_quads_home(backward, quads, original, tol=0.02):
    """``map(quad corner) == the original corner`` (pixel centres), as cv2.remap reads the map."""
    found = _bilinear(np.asarray(backward, np.float32), quads.reshape(-1, 2) - 0.5) + 0.5
    assert np.abs(found - original.reshape(-1, 2)).max() < tol


@pytest.mark.parametrize("kinds", [("perspective",), ("fold", "curve"), ("perspective", "curve", "fold"), ("curl",)])
def test_distort_quads_are_where_the_map_puts_the_corners(funsd_test, kinds):
    doc = _form(funsd_test, 1)
    shift = DistortPage(kinds=kinds)
    out = shift.apply(doc.with_quads(), np.random.default_rng(5)).doc
    backward = shift.backward_map(doc, doc.image.to_array(), np.random.default_rng(5))
    _assert_map_takes_quads_home(backward, out.quads, box_quads(doc.boxes))
    assert out.has_quads and [w.text for w in out.words] == [w.text for w in doc.words]
    # the quads move: they are not the boxes' corners
    assert np.abs(out.quads - box_quads(out.boxes)).max() > 2


def test_perspective_quads_match_the_homography():
    """Through a dense map of a homography, the quad is cv2.perspectiveTransform of the corners."""
    width, height = 400, 300
    src = np.float32([[0, 0], [399, 0], [399, 299], [0, 299]])
    dst = np.float32([[20, 10], [380, 30], [390, 280], [5, 290]])
    forward = cv2.getPerspectiveTransform(src, dst)
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float64)
    out = np.stack([xs, ys], -1).reshape(-1, 1, 2)
    backward = cv2.perspectiveTransform(out, np.linalg.inv(forward)).reshape(height, width, 2).astype(np.float32)
    boxes = np.array([[50, 40, 150, 60], [200, 100, 330, 130], [30, 200, 90, 250]])
    quads, missed = warp_quads(box_quads(boxes), backward)
    expected = cv2.perspectiveTransform(box_quads(boxes).reshape(-1, 1, 2) - 0.5, forward).reshape(-1, 4, 2) + 0.5
    assert missed == 0
    # the dense float32 map is bilinear between pixel centres: within 1/20 pixel of the exact homography
    assert np.abs(quads - expected).max() < 0.05


def test_capture_quads_are_where_the_camera_puts_the_corners(funsd_test):
    doc = _form(funsd_test, 2)
    shift = CapturePage(surface="texture")
    out = shift.apply(doc.with_quads(), np.random.default_rng(7)).doc
    backward = shift.geometry(doc, np.random.default_rng(7))[2]
    _assert_map_takes_quads_home(backward, out.quads, box_quads(doc.boxes))


def test_quads_survive_later_shifts_and_the_row(funsd_test):
    from dogood.shifts.image.scan_quality import ScanQuality

    doc = _form(funsd_test)
    turned = RotatePage().apply(doc.with_quads(), np.random.default_rng(1)).doc
    scanned = ScanQuality().apply(turned, np.random.default_rng(2)).doc  # a pixel shift keeps the words
    assert np.array_equal(scanned.quads, turned.quads)
    row = document_to_row(turned, "funsd", quads=True)
    assert len(row[QUADS_COLUMN]) == len(row["tokens"]) and all(len(q) == 8 for q in row[QUADS_COLUMN])
    back = row_to_document(row, "funsd")
    assert np.abs(back.quads - turned.quads).max() < 1e-6
    assert QUADS_COLUMN not in document_to_row(turned, "funsd")  # not asked: no column


RECIPE = {"name": "quads-check", "version": "1.0.0", "source": {"kind": "funsd", "split": "test"}, "seed": 3,
          "configs": {"original": [], "rotate": [{"shift": "rotate"}],
                      "perspective": [{"shift": "distort", "kinds": ["perspective"]}]}}


def _parquet(folder: Path, config: str):
    return pq.read_table(next((folder / "data" / config).rglob("*.parquet")))


def test_build_writes_quads_only_when_asked(funsd_dir, tmp_path):
    plain, with_quads, flagged = tmp_path / "plain", tmp_path / "quads", tmp_path / "flag"
    build(parse_recipe(RECIPE), plain, source_path=funsd_dir, limit=2, progress=False)
    build(parse_recipe({**RECIPE, "quads": True}), with_quads, source_path=funsd_dir, limit=2, progress=False)
    build(parse_recipe(RECIPE), flagged, source_path=funsd_dir, limit=2, progress=False, quads=True)
    for config in ("original", "rotate", "perspective"):
        table = _parquet(plain, config)
        assert QUADS_COLUMN not in table.column_names
        assert "word_quads" not in str(table.schema)
        quads = _parquet(with_quads, config)
        assert QUADS_COLUMN in quads.column_names
        assert _parquet(flagged, config).equals(quads)  # --quads is quads: true
        # the other columns are the plain build's, value for value
        assert quads.drop([QUADS_COLUMN, "dogood"]).equals(table.drop(["dogood"]))
        rows = quads.to_pylist()
        for row in rows:
            full = row["dogood"]
            corners = np.array(full["word_quads"]).reshape(-1, 4, 2)
            boxes = np.array(full["word_boxes"])
            if config == "original":  # unshifted: the boxes' corners
                assert np.array_equal(corners, box_quads(boxes))
            elif config == "rotate":  # reproject: box: the box holds its quad (to the pixel)
                assert (corners.min(1) >= boxes[:, :2] - 1).all() and (corners.max(1) <= boxes[:, 2:] + 1).all()
            else:  # distort re-projects by the ink (reproject: margins): the boxes agree with the quads' bounds
                assert np.median(_iou(np.concatenate([corners.min(1), corners.max(1)], 1), boxes)) > 0.8


def _iou(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    w = np.clip(np.minimum(a[:, 2], b[:, 2]) - np.maximum(a[:, 0], b[:, 0]), 0, None)
    h = np.clip(np.minimum(a[:, 3], b[:, 3]) - np.maximum(a[:, 1], b[:, 1]), 0, None)
    area = lambda r: (r[:, 2] - r[:, 0]) * (r[:, 3] - r[:, 1])
    return w * h / (area(a) + area(b) - w * h)


def test_a_moved_word_keeps_or_drops_its_quad():
    from dogood.core.document import Word

    word = Word("total", (10, 20, 50, 30), (10, 21, 50, 19, 50, 29, 10, 31))
    assert word.moved((10, 20, 50, 30)).quad == word.quad  # unchanged box: unchanged quad
    moved = word.moved((110, 70, 150, 80), pixels_moved=True)  # its pixels translated by (100, 50)
    assert moved.quad == (110, 71, 150, 69, 150, 79, 110, 81)
    assert word.moved((110, 70, 150, 80)).quad is None  # redrawn upright in its new box: no quad
    assert word.moved((10, 20, 60, 30), pixels_moved=True).quad is None  # resized: no quad
