"""New texts pieced from the page's own letters: cuts between letters, the plan, and the pixels on a page."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from dogood.core.document import Document, PageImage, Word
from dogood.language.edits import replace_texts
from dogood.page import render
from dogood.page.render import render_words
from dogood.page.splice import Letters, Piece, letter_cuts, plan


def letters(text, cuts, source=0, clean=None, whole=None):
    n = len(text)
    return Letters(text, tuple(cuts), 20.0, source, tuple(clean or [True] * (n + 1)), tuple(whole or [True] * n))


@pytest.mark.parametrize("columns, edges, expected", [
    # three letters with empty columns between them: each cut lands in the gap nearest its middle
    ([2, 3, 0, 4, 4, 0, 0, 5], [(0, 2), (3, 5), (7, 8)], (0, 2, 5, 8)),
    # letters that touch: the cut takes the column with the least ink near the middle
    ([2, 3, 1, 4, 4, 6, 2, 5], [(0, 2.5), (2.5, 5.5), (5.5, 8)], (0, 2, 6, 8)),
])
def test_cuts_fall_in_the_emptiest_column_between_letters(columns, edges, expected):
    assert letter_cuts(edges, np.array(columns), 0, size=20.0) == expected


def test_a_deleted_letter_leaves_the_rest_of_the_word_in_two_pieces():
    own = letters("BRAND", [0, 10, 19, 29, 39, 49], source=7)
    assert plan("BAND", own, [], space=5) == [Piece(7, 0, 10, 0), Piece(7, 19, 49, 1)]


def test_a_repeated_letter_is_the_word_s_own_letter_printed_whole():
    own = letters("Name", [0, 9, 16, 27, 34], source=3)
    assert plan("Namme", own, [], space=4) == [Piece(3, 0, 27, 0), Piece(3, 16, 34, 3)]


def test_a_letter_the_word_lacks_comes_from_another_word_and_a_space_is_paper():
    own = letters("DATE", [0, 10, 20, 28, 37], source=0)
    other = letters("Year", [50, 58, 66, 73, 79], source=4)
    assert plan("DATE a", own, [other], space=6) == [Piece(0, 0, 37, 0), Piece(-1, 0, 6, 4), Piece(4, 66, 73, 5)]


def test_letters_cut_through_a_stroke_are_not_lent_alone_but_a_run_with_clean_ends_is():
    own = letters("NO", [0, 10, 20], source=0)
    # "e" and "s" of "yes" touch (no clean cut between them): "es" is lent as one piece, "s" alone is not
    other = letters("yes", [40, 48, 56, 63], source=2, clean=[True, True, False, True], whole=[True, False, False])
    assert plan("NOes", own, [other], space=5) == [Piece(0, 0, 20, 0), Piece(2, 48, 63, 2)]
    assert plan("NOs", own, [other], space=5) is None


def test_a_letter_on_no_word_cannot_be_pieced():
    assert plan("DAX", letters("DATE", [0, 10, 20, 28, 37]), [letters("Year", [50, 58, 66, 73, 79], 4)], 5) is None


# -- on a page ---------------------------------------------------------------------------------------------------

FONT = "/usr/share/fonts/truetype/liberation2/LiberationSans-Regular.ttf"


def printed_page(texts, size=(420, 80), font_size=22, font_path=FONT):
    """A grey scan of ``texts`` on one line (Liberation Sans by default), noisy as a scan is, boxes on their ink."""
    font = ImageFont.truetype(font_path, font_size)
    im = Image.new("L", size, 255)
    draw = ImageDraw.Draw(im)
    boxes, x = [], 12
    for text in texts:
        draw.text((x, 50), text, fill=20, font=font, anchor="ls")
        left, top, right, bottom = draw.textbbox((x, 50), text, font=font, anchor="ls")
        boxes.append((left - 1, top - 2, right + 1, bottom + 2))
        x = right + 18
    pixels = np.asarray(im, np.float32)
    pixels = np.clip(pixels * 0.9 + 12 + np.random.default_rng(0).normal(0, 3, pixels.shape), 0, 255)
    words = tuple(Word(t, b) for t, b in zip(texts, boxes))
    return Document("page", PageImage.from_array(pixels.astype(np.uint8)), words)


def ink_columns(pixels, box, rows=None):
    """The page's columns across ``box`` that hold ink, all rows of the page (or rows ``rows``: start, stop)."""
    x0, _, x1, _ = box
    crop = pixels[slice(*rows) if rows else slice(None), x0:x1]
    return [crop[:, k] for k in range(crop.shape[1]) if (crop[:, k] < 128).any()]


def made_of(columns, pool):
    """Share of ``columns`` whose ink (pixels darker than mid-grey) is, pixel for pixel and where it is, the
    ink of a column of ``pool``."""
    def same(c, p):
        ink = c < 128
        return np.array_equal(ink, p < 128) and np.array_equal(c[ink], p[ink])
    return np.mean([any(same(c, p) for p in pool) for c in columns])


@pytest.fixture(scope="module")
def page():
    if not render.font_paths():
        pytest.skip("fonts-liberation2 is not installed")
    return printed_page(["BRAND", "Sparrow", "product"])


def test_a_deletion_on_the_page_is_the_old_word_s_own_columns(page):
    out = render_words(replace_texts(page, {0: "BAND"}), [0], original=page)
    before, after = page.image.to_array(), out.image.to_array()
    box = page.words[0].box
    new = ink_columns(after, box)
    assert made_of(new, ink_columns(before, box)) == 1.0  # every inked column is one the scan printed
    assert len(new) < len(ink_columns(before, box))  # and the R's columns are gone
    others = [w.box for w in page.words[1:]]
    for x0, y0, x1, y1 in others:  # nothing else changed
        assert np.array_equal(before[y0:y1, x0:x1], after[y0:y1, x0:x1])


def test_a_letter_from_another_word_is_that_word_s_print(page):
    # "Sparrow" -> "Sparow" needs no lender; "product" -> "prodact" takes its "a" from "Sparrow"
    out = render_words(replace_texts(page, {2: "prodact"}), [2], original=page)
    before, after = page.image.to_array(), out.image.to_array()
    pool = ink_columns(before, page.words[2].box) + ink_columns(before, page.words[1].box)
    assert made_of(ink_columns(after, page.words[2].box), pool) == 1.0


def test_a_text_whose_letters_the_page_lacks_is_drawn(page):
    out = render_words(replace_texts(page, {2: "proxyz"}), [2], original=page)
    before, after = page.image.to_array(), out.image.to_array()
    pool = [c for w in page.words for c in ink_columns(before, w.box)]
    new = ink_columns(after, page.words[2].box)
    assert new and made_of(new, pool) < 0.5


@pytest.mark.parametrize("face", ["LiberationSans-Regular", "LiberationSans-Bold"])
def test_a_drawn_text_is_as_bold_as_the_print_it_replaces(face):
    if not render.font_paths():
        pytest.skip("fonts-liberation2 is not installed")
    doc = printed_page(["Holder", "Q"], font_path=FONT.replace("LiberationSans-Regular", face))
    out = render_words(replace_texts(doc, {0: "Hxyzer"}), [0], original=doc)  # x, y, z: printed nowhere
    old = render.old_ink(doc.image.to_array(), doc.words[0].box)
    new = render.old_ink(out.image.to_array(), doc.words[0].box)
    assert abs(np.log(render._weight(new) / render._weight(old))) < 0.08


def test_deletions_on_funsd_forms_are_the_forms_own_print(funsd_test):
    """On real scans, a character deletion redrawn with ``render: true`` cuts the letter out of the word's own print:
    every column of ink the redrawn words hold is, pixel for pixel, a column of the same word as scanned."""
    import dogood
    from dogood.measures.word_style import redrawn_words

    shift = dogood.make_shift({"shift": "char_deletion", "fraction": 0.2, "render": True})
    shift.prepare()
    exact, words, shares = 0, 0, []
    for doc_id in funsd_test.ids()[:2]:
        doc = funsd_test.load(doc_id)
        out = shift(doc, 7)
        before, after = doc.image.to_array(), out.image.to_array()
        changed = [i for i in redrawn_words(doc, out)[0] if out.words[i].text != doc.words[i].text]
        assert len(changed) >= 10
        for i in changed:
            box = out.words[i].box
            new, old = ink_columns(after, box, box[1::2]), ink_columns(before, box, box[1::2])
            assert len(out.words[i].text) == len(doc.words[i].text) - 1  # one letter fewer
            share = made_of(new, old) if new else 0.0
            shares += [share] * len(new)
            exact += share == 1.0
            words += 1
    # most words are their own columns throughout; the rest differ at a seam or where the deleted letter's ink
    # was filled in beside a rule, or were drawn (a vertical number)
    assert exact >= 0.7 * words and np.mean(shares) >= 0.9
