"""RoDLA's perturbations as dogood shifts (issue 29): rotate, motion_blur, defocus, watermark, speckle, paper_texture,
illumination and shadow, on real FUNSD forms. Pixels change where each says, boxes hold their words' ink, labels are
kept, the same seed gives the same bytes, and the levels of one config share their draws and grow in effect."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest
from rodla_levels import level

from dogood.page.affine import rotation
from dogood.page.warp import ink_mask
from dogood.shifts import make_shift
from dogood.shifts.image._pixels import paper_tone
from dogood.shifts.levels import LEVELS


def test_rotate_grows_the_canvas_fills_with_paper_and_keeps_each_words_ink_in_its_box(forms):
    for seed, doc in enumerate(forms):
        pixels = doc.image.to_array()
        shift = level("rotate", 3)
        angle = shift.draw_angle(np.random.default_rng(seed))
        out = shift(doc, seed)
        assert 6 <= abs(angle) <= 9 and out.provenance[-1].counts["angle_centidegrees"] == round(abs(angle) * 100)
        assert out.provenance[-1].tallies["direction"] == {"counter-clockwise" if angle > 0 else "clockwise": 1}
        rad = math.radians(abs(angle))
        assert out.width == math.ceil(doc.width * math.cos(rad) + doc.height * math.sin(rad) - 1e-6)
        assert out.height == math.ceil(doc.width * math.sin(rad) + doc.height * math.cos(rad) - 1e-6)
        turned = out.image.to_array()
        paper = int(round(float(paper_tone(pixels)[0])))
        for y, x in ((0, 0), (0, -1), (-1, 0), (-1, -1)):
            assert abs(int(turned[y, x]) - paper) <= 1
        assert [(w.text) for w in out.words] == [w.text for w in doc.words] and out.entities == doc.entities
        # the source's ink, carried through the same turn, lies in its word's new box
        matrix, size = rotation((doc.width, doc.height), angle, "grow")
        ink = ink_mask(pixels, doc.boxes)
        inside, total = 0, 0
        for w, v in zip(doc.words, out.words):
            x0, y0, x1, y1 = w.box
            ys, xs = np.nonzero(ink[y0:y1, x0:x1])
            if not len(xs):
                continue
            pts = np.stack([xs + x0, ys + y0], axis=1) @ matrix[:, :2].T + matrix[:, 2] + 0.5
            ok = ((pts[:, 0] >= v.box[0]) & (pts[:, 0] <= v.box[2]) & (pts[:, 1] >= v.box[1]) & (pts[:, 1] <= v.box[3]))
            inside, total = inside + ok.sum(), total + len(ok)
            assert ok.all(), (w.text, w.box, v.box)
        assert total > 1000
        # looseness kept: box area over the turned ink's bounds (reproject ink) is what it was on the source
        tight = level("rotate", 3, reproject="ink")(doc, seed)
        ratios = []
        for w, v, t in zip(doc.words, out.words, tight.words):
            x0, y0, x1, y1 = w.box
            ys, xs = np.nonzero(ink[y0:y1, x0:x1])
            if len(xs) < 8:
                continue
            assert t.box[0] >= v.box[0] and t.box[1] >= v.box[1] and t.box[2] <= v.box[2] and t.box[3] <= v.box[3]
            source = (x1 - x0) * (y1 - y0) / ((np.ptp(xs) + 1) * (np.ptp(ys) + 1))
            area = (v.box[2] - v.box[0]) * (v.box[3] - v.box[1])
            ratios.append(area / max(1, (t.box[2] - t.box[0]) * (t.box[3] - t.box[1])) / source)
        assert 0.95 <= np.median(ratios) <= 1.1, np.median(ratios)


def test_rotate_options_black_corners_and_a_page_sized_canvas(forms):
    doc = forms[0]
    black = level("rotate", 5, fill="black")(doc, 1).image.to_array()
    assert black[0, 0] == 0 and black[-1, -1] == 0
    same = level("rotate", 5, canvas="page")(doc, 1)
    assert (same.width, same.height) == (doc.width, doc.height)
    boxes = same.boxes
    assert (boxes[:, [0, 2]] <= doc.width).all() and (boxes[:, [1, 3]] <= doc.height).all() and (boxes >= 0).all()
    with pytest.raises(Exception, match="larger than max_angle"):
        make_shift({"shift": "rotate", "min_angle": 5, "max_angle": 2})


def test_rotate_levels_turn_the_same_way_each_further(forms):
    angles = [level("rotate", s).draw_angle(np.random.default_rng(5)) for s in LEVELS]
    assert len({np.sign(a) for a in angles}) == 1
    assert all(abs(b) > abs(a) for a, b in zip(angles, angles[1:]))
    assert [round(abs(a), 6) for a in angles] == [round(lo + (hi - lo) * (abs(angles[0]) - 1) / 2, 6)
                                                  for lo, hi in ((1, 3), (3, 6), (6, 9), (9, 12), (12, 15))]


@pytest.mark.parametrize("reproject, floor", [("ink", 0.7), ("box", None)])
def test_tesseract_reads_the_turned_words_where_rotate_puts_their_boxes(funsd_test, reproject, floor):
    """``rotate@3`` on two FUNSD forms, read by Tesseract (sparse text, pages upscaled 3x as in
    ``bench/measure_rotate_iou.py``): over the words Tesseract read on the original and reads again on the turned
    page, the median IoU of its box with the re-projected one is at least 0.7 with ``reproject: ink``; with ``box``
    (FUNSD's looser boxes, turned) it is within 0.1 of what FUNSD's own boxes score against Tesseract unturned."""
    from dogood.core.document import PageImage, Word
    from dogood.page.ocr import ocr_words

    pytest.importorskip("pytesseract")

    def read(image):
        big = cv2.resize(image.to_array(), None, fx=3, fy=3, interpolation=cv2.INTER_CUBIC)
        return [Word(w.text, tuple(int(round(v / 3)) for v in w.box))
                for w in ocr_words(PageImage.from_array(big), config="--psm 11", cache=False)]

    def iou(a, b):
        ix = max(0, min(a[2], b[2]) - max(a[0], b[0]))
        iy = max(0, min(a[3], b[3]) - max(a[1], b[1]))
        union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - ix * iy
        return ix * iy / union if union else 0.0

    def best(word, ocr):
        return max((iou(word.box, w.box) for w in ocr if w.text.lower() == word.text.lower()), default=0.0)

    original_scores, turned_scores = [], []
    for seed, doc in enumerate(funsd_test.load(i) for i in funsd_test.ids()[:2]):
        original = read(doc.image)
        kept = [i for i, w in enumerate(doc.words) if best(w, original) > 0.5]
        original_scores += [best(doc.words[i], original) for i in kept]
        out = level("rotate", 3, reproject=reproject)(doc, seed)
        turned = read(out.image)
        turned_scores += [s for s in (best(out.words[i], turned) for i in kept) if s > 0]
    assert len(turned_scores) >= 30
    if floor is not None:
        assert np.median(turned_scores) >= floor, np.median(turned_scores)
    else:
        assert np.median(turned_scores) >= np.median(original_scores) - 0.1, (np.median(turned_scores),
                                                                               np.median(original_scores))
