"""The cue tests (:mod:`dogood.measures.cues`): a classifier cross-validated by page finds a cue where one was
planted, and none where there is none."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from dogood.core.document import PageImage, Word
from dogood.measures.cues import (
    CUES,
    CueFigure,
    background_cue,
    background_samples,
    check_cues,
    cue_auroc,
    paged_cue,
    paper_mask,
)
from dogood.page.ink import composite, ink_matte


def test_auroc_finds_a_planted_cue_and_none_in_noise():
    rng = np.random.default_rng(0)
    groups = np.repeat(np.arange(20), 40)
    labels = np.tile(np.repeat([1, 0], 20), 20)
    noise = rng.normal(size=(800, 3))
    none = cue_auroc(noise, labels, groups)
    assert isinstance(none, CueFigure) and none.pages == 20 and none.samples == 800
    assert 0.4 < none.auroc < 0.6 and none.low < 0.5 < none.high
    planted = noise.copy()
    planted[:, 1] += 1.5 * labels  # one feature shifted for one class
    found = cue_auroc(planted, labels, groups)
    assert found.auroc > 0.8 and found.low > 0.7
    assert cue_auroc(planted, labels, groups, model="boosting").auroc > 0.8


def test_cross_validation_by_page_does_not_learn_the_page():
    """A feature that only tells pages apart (each page's own constant) is no cue: every page has as many samples
    of each class, and a page is never scored by a model that saw it."""
    rng = np.random.default_rng(1)
    groups = np.repeat(np.arange(30), 20)
    labels = np.tile(np.repeat([1, 0], 10), 30)
    page_only = rng.normal(size=30)[groups][:, None] + 0.01 * rng.normal(size=(600, 1))
    figure = cue_auroc(page_only, labels, groups)
    assert 0.35 < figure.auroc < 0.65


def test_too_few_pages_or_one_class_give_no_figure():
    x = np.zeros((12, 2))
    assert cue_auroc(x, np.tile([0, 1], 6), np.repeat([0, 1, 2], 4)) is None  # 3 pages
    assert cue_auroc(x, np.zeros(12), np.repeat([0, 1, 2, 3], 3)) is None
    with pytest.raises(ValueError, match="model"):
        cue_auroc(x, np.tile([0, 1], 6), np.repeat(np.arange(4), 3), model="forest")


def test_the_registry_checks_names():
    assert "background" in CUES and CUES["background"].measure is background_cue
    assert check_cues({"background"}) == frozenset({"background"})
    with pytest.raises(ValueError, match="unknown cue"):
        check_cues({"halo"})
    with pytest.raises(TypeError):
        check_cues("background")


def busy_background(shape, seed):
    """A stationary, busy, coloured background (discs of every size over noise): no place is special."""
    rng = np.random.default_rng(seed)
    h, w = shape
    out = np.zeros((h, w, 3), np.uint8)
    for _ in range(3000):
        r = int(3 / rng.uniform(0.05, 1))
        colour = tuple(int(c) for c in rng.integers(20, 200, 3))
        cv2.circle(out, (int(rng.integers(0, w)), int(rng.integers(0, h))), r, colour, -1, cv2.LINE_AA)
    return np.clip(out + rng.normal(0, 4, out.shape), 0, 255).astype(np.uint8)


def fog(background, boxes, reach):
    """A pale field around the text: the photo faded towards white within ``reach`` pixels of a word box."""
    near = np.zeros(background.shape[:2], np.uint8)
    for x0, y0, x1, y1 in boxes.tolist():
        near[max(y0 - reach, 0) : y1 + reach, max(x0 - reach, 0) : x1 + reach] = 1
    weight = cv2.GaussianBlur(near.astype(np.float32), (0, 0), reach / 3)[..., None] * 0.5
    return np.rint(background * (1 - weight) + 255 * weight).astype(np.uint8)


@pytest.fixture(scope="module")
def text_on_photos(funsd_test):
    """Eight FUNSD pages, their ink on a busy background with and without a fog around the text."""
    plain, fogged = [], []
    for k, doc_id in enumerate(funsd_test.ids()[:8]):
        doc = funsd_test.load(doc_id)
        matte = ink_matte(doc.image.to_array(), doc.boxes, region="connected")
        background = busy_background((doc.height, doc.width), k)
        plain.append((doc, doc.replace(image=PageImage.from_array(composite(background, matte)))))
        foggy = fog(background, doc.boxes, 40)
        fogged.append((doc, doc.replace(image=PageImage.from_array(composite(foggy, matte)))))
    return plain, fogged


def test_background_cue_sees_a_fog_around_the_text_and_nothing_on_a_plain_photo(text_on_photos):
    plain, fogged = text_on_photos
    none = background_cue(plain)
    assert none.pages == 8 and 0.38 < none.auroc < 0.62, none
    found = background_cue(fogged)
    assert found.auroc > 0.85, found


def test_background_samples_are_balanced_per_page(text_on_photos):
    original, shifted = text_on_photos[0][0]
    features, labels = background_samples(original, shifted)
    assert features.shape == (len(labels), 8) and 8 <= labels.sum() == (labels == 0).sum()
    few = original.replace(words=original.words[:2], entities=())
    assert background_samples(few, shifted.replace(words=shifted.words[:2], entities=()))[1].size == 0  # too few words


def test_paper_mask_follows_a_moved_page(funsd_test):
    """On a page photographed (moved by a homography), only the paper counts: the mask is the source page's
    outline carried by the homography fitted to the boxes, shrunk; off the page (the surface) nothing counts."""
    doc = funsd_test.load(funsd_test.ids()[0])
    h = np.array([[0.8, 0.05, 60], [-0.04, 0.82, 80], [0.0, 0.0, 1.0]])
    warped = cv2.warpPerspective(doc.image.to_array(), h, (doc.width, doc.height), borderValue=40)
    words = []
    for w in doc.words:
        x0, y0, x1, y1 = w.box
        pts = cv2.perspectiveTransform(np.array([[[x0, y0], [x1, y0], [x1, y1], [x0, y1]]], np.float64), h)[0]
        lo, hi = np.floor(pts.min(axis=0)).astype(int), np.ceil(pts.max(axis=0)).astype(int)
        words.append(Word(w.text, (int(lo[0]), int(lo[1]), int(hi[0]), int(hi[1]))))
    shifted = doc.replace(image=PageImage.from_array(warped), words=tuple(words))
    mask = paper_mask(doc, shifted)
    page = cv2.warpPerspective(np.ones((doc.height, doc.width), np.uint8), h, (doc.width, doc.height)) > 0
    assert mask.sum() > 0.7 * page.sum() and not (mask & ~page).any()  # on the paper only
    assert paper_mask(doc, doc).all()  # a page that did not move: all of it
    figure = background_cue([(doc, shifted)] * 4)  # the surface (grey 40) never reads as background far from text
    assert figure is None or figure.auroc < 0.75


def test_a_cue_from_page_samples_plugs_in_with_paged_cue(text_on_photos):
    """A second cue is a function of one page's (original, shifted) giving (features, labels)."""
    def brightness_of_boxes(original, shifted):
        pixels = shifted.image.to_array().mean(axis=2)
        inside = [pixels[y0:y1, x0:x1].mean() for x0, y0, x1, y1 in shifted.boxes.tolist()[:10]]
        outside = [pixels[y1 + 2 : y1 + 12, x0:x1].mean() for x0, y0, x1, y1 in shifted.boxes.tolist()[:10]]
        return np.array(inside + outside)[:, None], np.repeat([1, 0], 10)

    cue = paged_cue(brightness_of_boxes)
    figure = cue(text_on_photos[0])
    assert figure is not None and figure.pages == 8
