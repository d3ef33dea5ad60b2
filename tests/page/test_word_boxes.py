"""Word boxes from segment boxes (issue 37): placed from the segment's ink, measured against FUNSD's own boxes."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from dogood.page.render import FONT_DIR
from dogood.page.word_boxes import _by_length, page_word_boxes, segments, word_boxes


def iou(a, b) -> float:
    ix = max(0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0, min(a[3], b[3]) - max(a[1], b[1]))
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - ix * iy
    return ix * iy / union


def _segments(doc):
    for ent in doc.entities:
        ids = [i for i in ent.word_ids if doc.words[i].text.strip()]
        if ids:
            boxes = [doc.words[i].box for i in ids]
            yield (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes),
                   max(b[3] for b in boxes)), ids


def test_boxes_found_on_funsd_forms_match_funsds_own(funsd_test):
    """On 8 test forms: most words' boxes overlap FUNSD's own far better than the segment split by text length
    (bench/measure_word_boxes.py gives all 50)."""
    found, naive = [], []
    for doc_id in funsd_test.ids()[:8]:
        doc = funsd_test.load(doc_id)
        pixels = doc.image.to_array()
        for segment, ids in _segments(doc):
            if len(ids) < 2:
                continue
            texts = [doc.words[i].text for i in ids]
            got = word_boxes(pixels, segment, texts)
            assert len(got) == len(ids)
            for box, i, by_length in zip(got, ids, _by_length(segment, texts)):
                x0, y0, x1, y1 = box
                assert segment[0] <= x0 < x1 <= segment[2] and segment[1] <= y0 < y1 <= segment[3]
                found.append(iou(box, doc.words[i].box))
                naive.append(iou(by_length, doc.words[i].box))
    assert len(found) > 500
    assert np.median(found) > 0.65 and np.median(found) > np.median(naive) + 0.1
    assert np.mean(np.array(found) >= 0.5) > 0.7


def _line(texts, gap=14, size=22, top=10, left=8, width=None):
    """A page with ``texts`` printed on one line: the page and each word's box (its ink's columns, the line's
    ink rows: a word box as FUNSD draws it)."""
    font = ImageFont.truetype(f"{FONT_DIR}/LiberationSans-Regular.ttf", size)
    image = Image.new("L", (width or 40 + sum(font.getbbox(t)[2] + gap for t in texts), 2 * top + size + 8), 255)
    draw = ImageDraw.Draw(image)
    spans, x = [], left
    for text in texts:
        alone = Image.new("L", image.size, 255)
        ImageDraw.Draw(alone).text((x, top), text, font=font, fill=0)
        cols = np.flatnonzero((np.asarray(alone) < 128).any(axis=0))
        spans.append((int(cols[0]), int(cols[-1]) + 1))
        draw.text((x, top), text, font=font, fill=0)
        x = draw.textbbox((x, top), text, font=font)[2] + gap
    pixels = np.asarray(image)
    rows = np.flatnonzero((pixels < 128).any(axis=1))
    return pixels, [(a, int(rows[0]), b, int(rows[-1]) + 1) for a, b in spans]


def test_words_of_a_printed_line_are_found_where_they_are():
    texts = ["Tobacco", "Institute", "of", "NY", "research"]
    pixels, truth = _line(texts)
    segment = (truth[0][0], min(b[1] for b in truth), truth[-1][2], max(b[3] for b in truth))
    got = word_boxes(pixels, segment, texts)
    assert min(iou(a, b) for a, b in zip(got, truth)) > 0.8, [round(iou(a, b), 2) for a, b in zip(got, truth)]


def test_words_go_to_their_lines():
    top, bottom = _line(["Please", "call", "me"]), _line(["if", "you", "have", "any", "questions"])
    width = max(top[0].shape[1], bottom[0].shape[1])
    pixels = np.full((top[0].shape[0] + bottom[0].shape[0], width), 255, np.uint8)
    pixels[:top[0].shape[0], :top[0].shape[1]] = top[0]
    pixels[top[0].shape[0]:, :bottom[0].shape[1]] = bottom[0]
    truth = top[1] + [(x0, y0 + top[0].shape[0], x1, y1 + top[0].shape[0]) for x0, y0, x1, y1 in bottom[1]]
    segment = (min(b[0] for b in truth), min(b[1] for b in truth), max(b[2] for b in truth),
               max(b[3] for b in truth))
    texts = ["Please", "call", "me", "if", "you", "have", "any", "questions"]
    got = word_boxes(pixels, segment, texts)
    ious = [iou(a, b) for a, b in zip(got, truth)]
    assert min(ious) > 0.7 and np.mean(ious) > 0.85, [round(v, 2) for v in ious]


def test_a_segment_of_one_word_or_without_ink():
    pixels = np.full((60, 200), 255, np.uint8)
    assert word_boxes(pixels, (10, 10, 150, 40), ["alone"]) == [(10, 10, 150, 40)]
    blank = word_boxes(pixels, (10, 10, 150, 40), ["ab", "cdef"])  # no ink: by text length
    assert blank == _by_length((10, 10, 150, 40), ["ab", "cdef"])
    assert blank[0][2] < blank[1][0] and blank[0][0] == 10 and blank[1][2] == 150
    assert word_boxes(pixels, (0, 0, 0, 0), []) == []


@pytest.mark.parametrize("box", [(-5, -5, 300, 90), (190, 50, 400, 400)])
def test_segments_off_the_page_are_clipped(box):
    pixels, _ = _line(["a", "b"], width=200)
    for x0, y0, x1, y1 in word_boxes(pixels, box, ["a", "b"]):
        assert 0 <= x0 <= x1 <= pixels.shape[1] and 0 <= y0 <= y1 <= pixels.shape[0]


def test_a_pages_segments_are_its_runs_of_equal_boxes_and_are_kept():
    boxes = [(0, 0, 5, 5), (0, 0, 5, 5), (9, 9, 20, 20), (0, 0, 5, 5)]
    assert segments(boxes) == [(0, 2), (2, 3), (3, 4)]
    pixels, truth = _line(["one", "two", "three"])
    segment = (truth[0][0], min(b[1] for b in truth), truth[-1][2], max(b[3] for b in truth))
    first = page_word_boxes(pixels, [segment] * 3, ["one", "two", "three"])
    assert first == word_boxes(pixels, segment, ["one", "two", "three"])
    assert page_word_boxes(pixels, [segment] * 3, ["one", "two", "three"]) == first
