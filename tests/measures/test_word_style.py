"""The redrawn-word cue: a classifier tells redrawn words from printed ones when their look differs, not when
they are printed alike."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from dogood.core.document import Document, Entity, PageImage, Word
from dogood.measures.word_style import FEATURES, PLACEMENT, redrawn_word_cue, redrawn_words, word_features
from dogood.page import render

WORDS = ("Invoice", "Number", "Total", "Amount", "Date", "Name", "Address", "Phone", "Account", "Order",
         "Company", "Street", "City", "State", "Balance", "Payment")


def font(size):
    return ImageFont.truetype(render.font_paths()["LiberationSans-Regular"], size)


def scanned_page(texts, seed=0):
    """A page of ``texts`` (4 lines of 6 words) printed as FUNSD's are: drawn on a binary page four times the
    size, each word a random fraction of a pixel aside (``seed``), and resized by area averaging."""
    big = Image.new("L", (2400, 800), 255)
    draw = ImageDraw.Draw(big)
    boxes = []
    nudges = np.random.default_rng(seed).integers(0, 4, (len(texts), 2))
    for n, text in enumerate(texts):
        x, y = 40 + 390 * (n % 6) + int(nudges[n, 0]), 120 + 180 * (n // 6) + int(nudges[n, 1])
        draw.text((x, y), text, fill=0, font=font(56), anchor="ls")
        l, t, r, b = draw.textbbox((x, y), text, font=font(56), anchor="ls")
        boxes.append((l // 4 - 1, t // 4 - 1, r // 4 + 2, b // 4 + 2))
    pixels = np.array(big.resize((600, 200), Image.BOX))
    words = tuple(Word(t, b) for t, b in zip(texts, boxes))
    return Document("p", PageImage.from_array(pixels), words, (Entity(0, "other", tuple(range(len(words)))),))


def pages(crisp: bool, n_pages=6):
    """``(original, shifted)`` scanned pages, 8 words of 24 redrawn: a new text drawn crisp in the old box
    (antialiased at the page's resolution, pure black: new ink unlike the scan's), or the same text printed as
    the page's own words are (scanned again, each word a random fraction of a pixel aside)."""
    rng = np.random.default_rng(0)
    out = []
    for p in range(n_pages):
        texts = [WORDS[int(k)] for k in rng.integers(0, len(WORDS), 24)]
        changed = sorted(rng.choice(24, 8, replace=False).tolist())
        new_texts = [WORDS[(WORDS.index(t) + 3) % len(WORDS)] if n in changed and crisp else t
                     for n, t in enumerate(texts)]
        original = scanned_page(texts, seed=p).replace(id=f"p{p}")
        pixels = np.array(original.image.to_array())
        if crisp:
            page = Image.fromarray(pixels)
            for n in changed:
                x0, y0, x1, y1 = original.words[n].box
                ImageDraw.Draw(page).rectangle((x0, y0, x1 - 1, y1 - 1), fill=255)
                ImageDraw.Draw(page).text((x0 + 1, y1 - 5), new_texts[n], fill=0, font=font(14), anchor="ls")
            pixels = np.array(page)
        else:
            other = scanned_page(texts, seed=100 + p).image.to_array()
            for n in changed:
                x0, y0, x1, y1 = original.words[n].box
                pixels[y0:y1, x0:x1] = other[y0:y1, x0:x1]
        words = tuple(Word(t, w.box) for t, w in zip(new_texts, original.words))
        out.append((original, original.replace(image=PageImage.from_array(pixels), words=words)))
    return out


def test_redrawn_words_are_those_whose_pixels_changed():
    original, shifted = pages(crisp=True, n_pages=1)[0]
    redrawn, untouched = redrawn_words(original, shifted)
    assert len(redrawn) == 8 and len(untouched) == 16 and not set(redrawn) & set(untouched)
    features, ok = word_features(shifted)
    assert features.shape == (24, len(FEATURES) + len(PLACEMENT)) and ok.all()


@pytest.mark.parametrize("against", ["matched", "original"])
def test_crisp_new_ink_on_a_scanned_page_is_a_cue(against):
    cue = redrawn_word_cue(pages(crisp=True), against=against)
    assert cue.redrawn == 48 and cue.pages == 6
    assert cue.auroc > 0.85
    assert max(cue.by_feature.values()) > 0.8


def test_words_printed_alike_leave_no_cue():
    cue = redrawn_word_cue(pages(crisp=False))
    assert cue.redrawn >= 40  # (a word scanned again at the same offset has the same pixels: not redrawn)
    assert cue.auroc < 0.7


def test_too_few_words_give_no_figure():
    cue = redrawn_word_cue(pages(crisp=True, n_pages=1))
    assert np.isnan(cue.auroc) and cue.redrawn == 8
    with pytest.raises(ValueError):
        redrawn_word_cue(pages(crisp=True, n_pages=1), against="everything")


def test_the_cue_registry_runs_the_redrawn_word_cue_with_its_interval():
    from dogood.measures.cues import CUES

    crisp = pages(crisp=True)
    figure = CUES["word_style"].measure(crisp)
    assert figure.pages == 6 and figure.samples == 96  # 48 redrawn words and 48 matched untouched ones
    assert figure.auroc == pytest.approx(redrawn_word_cue(crisp).auroc)  # the bench's figure, the card's figure
    assert figure.auroc > 0.85 and figure.low <= figure.auroc <= figure.high
    assert CUES["word_style"].measure(pages(crisp=False)).auroc < 0.7
    assert CUES["word_style"].measure(pages(crisp=True, n_pages=3)) is None  # too few pages to cross-validate


def test_a_neighbours_print_is_not_ink_left_beside_a_word_but_a_stray_mark_is():
    original = scanned_page(["Invoice", "Number"] + ["Total"] * 22)
    pixels = np.array(original.image.to_array())
    (ax0, ay0, ax1, ay1), (bx0, by0, bx1, by1) = original.words[0].box, original.words[1].box
    near = original.replace(words=(original.words[0], Word("Number", (ax1 + 1, ay0, ax1 + 1 + bx1 - bx0, ay1)))
                            + original.words[2:])
    pixels[ay0:ay1, ax1 + 1:ax1 + 1 + bx1 - bx0] = pixels[by0:by1, bx0:bx1]  # "Number" printed just beside
    beside = near.replace(image=PageImage.from_array(pixels))
    k = FEATURES.index("ink_out_free")
    assert word_features(beside)[0][0, k] == 0.0  # its neighbour's letters in reach: that word's own print
    alone = np.array(pixels)
    alone[ay1 + 1:ay1 + 3, ax0 + 4:ax0 + 8] = 0  # a stray mark under the word, in no box
    assert word_features(beside.replace(image=PageImage.from_array(alone)))[0][0, k] > 0.0


@pytest.mark.parametrize("redrawn, pool, pairs", [
    # each word in one pair at most; the pairing nearest in all (not the first word's nearest first)
    (["Total", "Amount"], ["Street", "Date"], [(0, 3), (1, 2)]),
    # more redrawn words than untouched ones: only as many pairs, the nearest
    (["Number", "Total", "Balance"], ["Phone"], [(1, 3)]),
    # a number with a number; a word 2 letters longer than a 5-letter one (over 20%, at least 1) with none
    (["12345", "Company"], ["City", "34567"], [(0, 3)]),
    # no number left untouched: a redrawn number is not compared with a word
    (["12345", "Total"], ["Phone", "Do"], [(1, 2)]),
])
def test_redrawn_words_are_paired_one_to_one_with_like_untouched_words(redrawn, pool, pairs):
    from dogood.measures.word_style import _matched

    words = tuple(Word(t, (10 * n, 0, 10 * n + 8 * len(t), 12)) for n, t in enumerate(redrawn + pool))
    doc = Document("m", PageImage.from_array(np.full((20, 400), 255, np.uint8)), words)
    n = len(redrawn)
    assert _matched(doc, list(range(n)), list(range(n, n + len(pool)))) == pairs
