"""The ink matte: soft text ink separated from the page, composited on other backgrounds."""

import cv2
import numpy as np
import pytest

from dogood.page.ink import composite, ink_matte


def synthetic_page(paper=235, ink=40):
    """A grey page with anti-aliased words, a table rule outside the word boxes and their boxes."""
    page = np.full((200, 400), paper, np.uint8)
    cv2.line(page, (0, 150), (399, 150), ink, 2)  # a rule: background, not a word
    boxes = []
    for i, (x, y) in enumerate([(20, 40), (150, 40), (20, 100), (200, 100)]):
        cv2.putText(page, f"Wd{i}x", (x, y), cv2.FONT_HERSHEY_SIMPLEX, 0.9, ink, 2, cv2.LINE_AA)
        (tw, th), base = cv2.getTextSize(f"Wd{i}x", cv2.FONT_HERSHEY_SIMPLEX, 0.9, 2)
        boxes.append((x - 1, y - th - 1, x + tw + 1, y + base))
    return page, np.array(boxes)


def test_matte_finds_the_ink_of_words_and_nothing_outside():
    page, boxes = synthetic_page()
    matte = ink_matte(page, boxes)
    alpha = matte.alpha_image()
    inside = np.zeros(page.shape, bool)
    for x0, y0, x1, y1 in boxes:
        inside[max(y0 - 2, 0) : y1 + 2, max(x0 - 2, 0) : x1 + 2] = True
    assert alpha[~inside].max() == 0  # the rule is not text
    dark = (page < 150) & inside
    assert (alpha[dark] > 0).mean() > 0.99
    assert alpha[(page == 235) & inside].max() == 0  # plain paper carries no ink
    rim = (alpha > 0) & (alpha < 1)
    assert rim.sum() > 0.2 * (alpha >= 1).sum()  # anti-aliased edges keep partial coverage
    assert matte.has_ink.all()
    assert np.all(np.abs(matte.level - 40) <= 15)  # the mean tone of the stroke cores, rims included


def test_composite_on_the_original_paper_gives_the_page_back():
    page, boxes = synthetic_page()
    matte = ink_matte(page, boxes)
    back = composite(np.full_like(page, 235), matte)
    inside = np.zeros(page.shape, bool)
    for x0, y0, x1, y1 in boxes:
        inside[y0:y1, x0:x1] = True
    assert np.abs(back[inside].astype(int) - page[inside]).max() <= 2


def test_composite_keeps_full_ink_exactly_and_the_background_elsewhere():
    page, boxes = synthetic_page()
    matte = ink_matte(page, boxes)
    rng = np.random.default_rng(0)
    photo = rng.integers(0, 256, page.shape + (3,), dtype=np.uint8)
    out = composite(photo, matte)
    alpha = matte.alpha_image()
    full = alpha >= 1
    assert np.array_equal(out[full], np.repeat(page[full][:, None], 3, axis=1))
    assert np.array_equal(out[alpha == 0], photo[alpha == 0])
    part = (alpha > 0) & (alpha < 1)  # stroke rims: the photo shows through in proportion to 1 - alpha
    moved = np.abs(out[part].astype(int) - photo[part]).max(axis=1)
    assert np.all(moved <= np.ceil(255 * alpha[part]) + 1)


def test_blank_and_faint_boxes_hold_no_ink():
    page = np.full((100, 100), 240, np.uint8)
    page[40:60, 10:40] = 225  # a faint smudge: 15 grey levels, below the contrast floor
    matte = ink_matte(page, np.array([[5, 5, 45, 65], [60, 60, 90, 90]]))
    assert not matte.has_ink.any() and len(matte.index) == 0


def test_page_region_takes_ink_outside_the_boxes():
    page, boxes = synthetic_page()
    alpha = ink_matte(page, boxes, region="page").alpha_image()
    assert (alpha[149:152, 10:390] > 0).mean() > 0.9  # the rule is foreground now
    assert (alpha[page < 150] > 0).mean() > 0.99


def test_colour_pages_keep_their_ink_colour():
    page, boxes = synthetic_page()
    rgb = np.stack([page, page, page], axis=2)
    rgb[page < 100] = (200, 20, 20)  # red ink
    matte = ink_matte(rgb, boxes)
    out = composite(np.zeros_like(rgb), matte)
    full = matte.alpha_image() >= 1
    assert np.array_equal(out[full], rgb[full])


def test_bad_region():
    with pytest.raises(ValueError, match="region"):
        ink_matte(np.zeros((4, 4), np.uint8), region="everything")


def test_ink_core_mask_is_the_mattes_half_coverage(funsd_test):
    """``ink_core_mask`` (what box re-projection reads) is exactly ``ink_matte(...).alpha_image() >= 0.5``
    on real FUNSD pages, with and without padding, and holds ink in most word boxes."""
    from dogood.page.ink import ink_core_mask

    for doc_id in list(funsd_test.ids())[:4]:
        doc = funsd_test.load(doc_id)
        pixels, boxes = doc.image.to_array(), np.asarray(doc.boxes).reshape(-1, 4)
        for pad in (0, 2):
            mask = ink_core_mask(pixels, boxes, pad=pad)
            assert mask.dtype == bool
            assert np.array_equal(mask, ink_matte(pixels, boxes, pad=pad).alpha_image() >= 0.5), (doc_id, pad)
        inked = [mask[y0:y1, x0:x1].any() for x0, y0, x1, y1 in boxes.tolist()]
        assert np.mean(inked) > 0.9
