"""Re-rendering changed words: pixels change only inside their boxes, new ink in the old ink's colour and print."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from dogood.core.document import Document, Entity, PageImage, Word
from dogood.language.edits import replace_texts
from dogood.page import render
from dogood.page.render import FACES, FontError, Style, choose_styles, render_words, text_alpha

BOXES = [(20, 20, 110, 44), (130, 20, 230, 44), (20, 70, 150, 94)]
TEXTS = ["Name:", "Johnson", "December"]


def page_with_words(ink=40, rgb=False, size=(260, 120)):
    """A light page with TEXTS drawn in BOXES in colour ``ink`` (grey level or RGB)."""
    mode, paper = ("RGB", (250, 247, 240)) if rgb else ("L", 245)
    im = Image.new(mode, size, paper)
    draw = ImageDraw.Draw(im)
    font = ImageFont.load_default(size=20)
    for text, (x0, y0, _, _) in zip(TEXTS, BOXES):
        draw.text((x0 + 2, y0 + 2), text, fill=ink, font=font)
    words = [Word(t, b) for t, b in zip(TEXTS, BOXES)]
    return Document("p", PageImage.from_array(np.array(im)), tuple(words), (Entity(0, "question", (0,)), Entity(1, "answer", (1, 2))))


def inside(box, shape):
    mask = np.zeros(shape[:2], dtype=bool)
    x0, y0, x1, y1 = box
    mask[y0:y1, x0:x1] = True
    return mask


def gray(a):
    return a if a.ndim == 2 else a.astype(np.float64).mean(axis=2)


def test_only_the_changed_box_changes_and_it_holds_new_ink():
    doc = page_with_words(ink=40)
    new = replace_texts(doc, {1: "Smith"})
    out = render_words(new, [1], original=doc)
    before, after = doc.image.to_array(), out.image.to_array()
    box = inside(BOXES[1], before.shape)
    assert np.array_equal(before[~box], after[~box])
    assert not np.array_equal(before[box], after[box])
    assert (after[box] < 128).sum() > 20  # ink is there
    assert [w.text for w in out.words] == ["Name:", "Smith", "December"]
    assert out.entities == doc.entities


def test_drawn_ink_lies_within_the_box_and_matches_the_old_colour():
    doc = page_with_words(ink=70)
    out = render_words(replace_texts(doc, {2: "September"}), [2])
    before, after = doc.image.to_array(), out.image.to_array()
    changed = before != after
    ys, xs = np.nonzero(changed)
    x0, y0, x1, y1 = BOXES[2]
    assert x0 <= xs.min() and xs.max() < x1 and y0 <= ys.min() and ys.max() < y1
    ink = after[y0:y1, x0:x1]
    dark = ink[ink < 160]
    assert dark.size > 20
    assert abs(float(np.median(dark[dark <= np.median(dark)])) - 70) <= 20


def test_rgb_pages_keep_the_ink_hue():
    doc = page_with_words(ink=(30, 60, 170), rgb=True)
    out = render_words(replace_texts(doc, {0: "Date:"}), [0], original=doc)
    before, after = doc.image.to_array(), out.image.to_array()
    assert after.shape == before.shape and after.dtype == np.uint8
    box = inside(BOXES[0], before.shape)
    assert np.array_equal(before[~box], after[~box])
    x0, y0, x1, y1 = BOXES[0]
    crop = after[y0:y1, x0:x1].reshape(-1, 3).astype(int)
    lum = crop.mean(axis=1)
    core = crop[lum < np.percentile(lum, 8)]
    assert core.size
    assert np.all(np.abs(np.median(core, axis=0) - [30, 60, 170]) <= 35)


def test_the_old_word_is_erased():
    doc = page_with_words(ink=20)
    out = render_words(replace_texts(doc, {1: ""}), [1], original=doc)  # blank text: erase only
    x0, y0, x1, y1 = BOXES[1]
    crop = out.image.to_array()[y0:y1, x0:x1]
    assert crop.min() > 200  # nothing dark left
    assert abs(float(np.median(crop)) - 245) <= 3  # paper colour


def test_unchanged_text_is_not_touched_and_rendering_is_deterministic():
    doc = page_with_words()
    new = replace_texts(doc, {2: "Noon"})
    out = render_words(new, [0, 1, 2], original=doc)  # words 0 and 1 kept their text
    before, after = doc.image.to_array(), out.image.to_array()
    for b in BOXES[:2]:
        m = inside(b, before.shape)
        assert np.array_equal(before[m], after[m])
    assert np.array_equal(after, render_words(new, [2], original=doc).image.to_array())
    assert render_words(doc, [0, 1], original=doc) is doc  # nothing to draw


@pytest.mark.parametrize("text", ["A much longer replacement text than fits", "i", "日本語", "ÀÉÎ", "(#)", "  ",
                                  "two\nlines", "tab\there", "مرحبا", "😀"])
def test_any_text_fits_its_box(text):
    doc = page_with_words()
    out = render_words(replace_texts(doc, {0: text}), [0])
    before, after = doc.image.to_array(), out.image.to_array()
    box = inside(BOXES[0], before.shape)
    assert np.array_equal(before[~box], after[~box])
    assert out.words == replace_texts(doc, {0: text}).words  # boxes are the words' own
    style = choose_styles(replace_texts(doc, {0: text}), [0], original=doc)[0]
    alpha = text_alpha(text, BOXES[0], style)
    assert alpha.shape == (24, 90)


def test_degenerate_boxes_and_bad_indices():
    im = PageImage.from_array(np.full((50, 50), 250, np.uint8))
    doc = Document("d", im, (Word("a", (10, 10, 10, 20)), Word("b", (0, 0, 50, 50))))
    assert render_words(replace_texts(doc, {0: "x"}), [0]).image.to_array().min() == 250  # zero width: nothing drawn
    out = render_words(replace_texts(doc, {1: "Big"}), [1])  # whole-page box on a blank page
    assert out.image.to_array().min() < 128
    with pytest.raises(IndexError):
        render_words(doc, [5])


def test_real_funsd_page(funsd_test):
    doc = funsd_test.load(funsd_test.ids()[0])
    picks = [i for i, w in enumerate(doc.words) if w.text.strip()][::9][:25]
    new = replace_texts(doc, {i: doc.words[i].text[::-1] + "x" for i in picks})
    out = render_words(new, picks, original=doc)
    before, after = doc.image.to_array(), out.image.to_array()
    mask = np.zeros(before.shape, dtype=bool)
    for i in picks:
        mask |= inside(doc.words[i].box, before.shape)
    assert np.array_equal(before[~mask], after[~mask])
    for i in picks:
        x0, y0, x1, y1 = doc.words[i].box
        assert (after[y0:y1, x0:x1] < 128).any(), doc.words[i]
    assert out.image.modified and out.words == new.words


def test_form_lines_through_a_box_survive_the_erase():
    im = Image.new("L", (200, 60), 245)
    draw = ImageDraw.Draw(im)
    draw.text((42, 14), "Total", fill=30, font=ImageFont.load_default(size=22))
    draw.line((0, 38, 199, 38), fill=20, width=2)  # an underline crossing the word box
    draw.line((60, 0, 60, 59), fill=20, width=2)  # a table rule crossing it
    doc = Document("u", PageImage.from_array(np.array(im)), (Word("Total", (40, 12, 110, 40)),))
    after = render_words(replace_texts(doc, {0: ""}), [0]).image.to_array()
    assert (after[38:40, 40:110] < 100).all() and (after[12:40, 60:62] < 100).all()
    text_area = after[12:36, 40:110].copy()
    text_area[:, 19:23] = 245  # leave out the rule
    assert text_area.min() > 180  # the letters are gone


def test_a_bold_words_own_baseline_is_erased_with_it(funsd_test):
    """The letters of a bold word at a dozen pixels can stand on one unbroken row of ink ("Gas" in a FUNSD
    table): that row is the word, not a form rule, so erasing the word leaves no dash; the table's rules above
    and below the box stay."""
    doc = funsd_test.load("82200067_0069")
    assert doc.words[149].text == "Gas"
    x0, y0, x1, y1 = doc.words[149].box
    after = gray(render_words(replace_texts(doc, {149: ""}), [149], original=doc).image.to_array())
    assert after[y0:y1, x0:x1].min() > 180
    assert (after[y0 - 2, x0:x1] < 100).mean() > 0.5 and (after[y1 + 1, x0:x1] < 100).mean() > 0.5


def test_margin_erases_strokes_that_overflow_a_tight_box():
    im = Image.new("L", (120, 50), 245)
    ImageDraw.Draw(im).text((10, 8), "Hg", fill=20, font=ImageFont.load_default(size=30))
    doc = Document("m", PageImage.from_array(np.array(im)), (Word("Hg", (10, 21, 60, 39)),))  # ink: y 18-43
    before = doc.image.to_array()
    strict = render_words(replace_texts(doc, {0: ""}), [0]).image.to_array()
    loose = render_words(replace_texts(doc, {0: ""}), [0], margin=6).image.to_array()
    box = inside((10, 21, 60, 39), before.shape)
    grown = inside((4, 15, 66, 45), before.shape)
    assert np.array_equal(before[~box], strict[~box]) and strict[~box].min() < 100  # slivers left outside
    assert np.array_equal(before[~grown], loose[~grown]) and loose.min() > 180  # all gone
    with pytest.raises(ValueError):
        render_words(doc, [0], margin=-1)


# --- the print is matched: face, size, baseline ---------------------------------------------------------


def liberation(face, size):
    return ImageFont.truetype(render.font_paths()[face], size)


def page_in(face, size=26, texts=("Invoice", "Number"), baseline=44):
    """A page with ``texts`` drawn in ``face`` on one baseline; boxes a few pixels around the ink."""
    im = Image.new("L", (420, 80), 246)
    draw = ImageDraw.Draw(im)
    font = liberation(face, size)
    words, x = [], 20
    for text in texts:
        draw.text((x, baseline), text, fill=25, font=font, anchor="ls")
        l, t, r, b = draw.textbbox((x, baseline), text, font=font, anchor="ls")
        words.append(Word(text, (l - 3, t - 3, r + 3, b + 3)))
        x = r + 25
    entity = Entity(0, "question", tuple(range(len(words))))
    return Document("f", PageImage.from_array(np.array(im)), tuple(words), (entity,))


def ink_iou(a, b):
    a, b = a < 128, b < 128
    return (a & b).sum() / max(1, (a | b).sum())


@pytest.mark.parametrize("face", ["LiberationSerif-Bold", "LiberationSans-Regular", "LiberationMono-Regular",
                                  "LiberationSerif-Italic"])
def test_the_face_size_and_baseline_of_the_old_print_are_found(face):
    doc = page_in(face)
    styles = choose_styles(doc, [0, 1], original=doc)
    for style in styles.values():
        assert style.face == face
        assert abs(style.size - 26) <= 1.5
        assert abs(style.baseline - 44) <= 1.0
        assert style.iou > 0.8


def test_a_changed_word_is_drawn_like_its_neighbours():
    doc = page_in("LiberationSerif-Bold")
    out = render_words(replace_texts(doc, {1: "Amount"}), [1], original=doc).image.to_array()
    truth = page_in("LiberationSerif-Bold", texts=("Invoice", "Amount")).image.to_array()
    x0, y0, x1, y1 = doc.words[1].box
    # same face, size and baseline (a pixel or two to the left: the text is kept inside its box, and "A" starts
    # where "N" started)
    assert max(ink_iou(out[y0:y1, x0 + dx:x1 + dx], truth[y0:y1, x0:x1]) for dx in range(-2, 3)) > 0.75


def test_unknown_old_text_borrows_the_entity_style():
    doc = page_in("LiberationMono-Bold", texts=("Invoice", "Number", "Date"))
    changed = replace_texts(doc, {2: "Time"})
    styles = choose_styles(changed, [2])  # no original: word 2's old text is unknown, 0 and 1 show theirs
    assert styles[2].face == "LiberationMono-Bold" and styles[2].iou is None
    assert abs(styles[2].size - 26) <= 1.5 and abs(styles[2].baseline - 44) <= 1.0


def test_real_funsd_words_redrawn_with_their_own_text_cover_the_old_ink(funsd_test):
    """Header, form labels and typed values of a FUNSD page: the redrawn ink mask overlaps the old one."""
    doc = funsd_test.load(funsd_test.ids()[0])
    picks = [i for i, w in enumerate(doc.words) if w.text in ("DATE:", "NUMBER:", "CONFIDENTIAL", "FACSIMILE",
                                                               "Attorney", "General", "Montgomery", "PAGES")]
    assert len(picks) >= 8
    styles = choose_styles(doc, picks, original=doc)
    assert all(styles[i].face in FACES for i in picks)
    out = render_words(doc, picks, styles=styles).image.to_array()  # no original: every word is redrawn
    before = doc.image.to_array()
    scores = []
    for i in picks:
        x0, y0, x1, y1 = doc.words[i].box
        a, b = before[y0:y1, x0:x1], out[y0:y1, x0:x1]
        assert not np.array_equal(a, b)
        ta, tb = render.ink_threshold(a), render.ink_threshold(b)
        scores.append(((a <= ta) & (b <= tb)).sum() / ((a <= ta) | (b <= tb)).sum())
    assert np.median(scores) >= 0.6 and min(scores) >= 0.4, scores
    mask = np.zeros(before.shape, dtype=bool)
    for i in picks:
        mask |= inside(doc.words[i].box, before.shape)
    assert np.array_equal(before[~mask], out[~mask])


def test_styles_passed_in_are_used():
    doc = page_in("LiberationSans-Bold")
    new = replace_texts(doc, {0: "Total"})
    chosen = choose_styles(new, [0], original=doc)[0]
    forced = Style("LiberationMono-Regular", chosen.size, 1.0, chosen.baseline, chosen.left)
    a = render_words(new, [0], original=doc).image.to_array()
    b = render_words(new, [0], original=doc, styles={0: forced}).image.to_array()
    assert not np.array_equal(a, b)
    assert np.array_equal(a, render_words(new, [0], original=doc, styles={0: chosen}).image.to_array())


def test_missing_fonts_raise_a_clear_error_and_change_nothing(monkeypatch, tmp_path):
    doc = page_with_words()
    monkeypatch.setenv("DOGOOD_FONT_DIR", str(tmp_path))
    with pytest.raises(FontError, match="fonts-liberation2") as info:
        render_words(replace_texts(doc, {1: "Smith"}), [1], original=doc)
    assert str(tmp_path) in str(info.value) and "apt-get install fonts-liberation2" in str(info.value)
    pixels = np.array(doc.image.to_array())
    with pytest.raises(FontError):
        render.render_box(pixels, BOXES[1], "Smith")
    assert np.array_equal(pixels, doc.image.to_array())
    erased = render_words(replace_texts(doc, {1: ""}), [1], original=doc)  # erasing needs no fonts
    assert not np.array_equal(erased.image.to_array(), doc.image.to_array())
    monkeypatch.delenv("DOGOOD_FONT_DIR")
    assert render_words(replace_texts(doc, {1: "Smith"}), [1], original=doc) is not doc  # found again


# --- issue 25: a run of print keeps one style; a long replacement is no smear ------------------------------


def form_field(texts=("Pages:", "3"), face="LiberationSerif-Regular", size=16, gap=12, right_room=200):
    """A line of a form: a key and a short value in ``face``, blank paper to the right of the value."""
    im = Image.new("L", (80 + 60 * len(texts) + right_room, 50), 246)
    draw = ImageDraw.Draw(im)
    font = liberation(face, size)
    words, x = [], 10
    for text in texts:
        draw.text((x, 32), text, fill=20, font=font, anchor="ls")
        l, t, r, b = draw.textbbox((x, 32), text, font=font, anchor="ls")
        words.append(Word(text, (l - 1, t - 1, r + 1, b + 1)))
        x = r + gap
    entities = (Entity(0, "question", (0,)), Entity(1, "answer", tuple(range(1, len(words)))))
    return Document("field", PageImage.from_array(np.array(im)), tuple(words), entities)


def ink_rows(pixels, box):
    """Rows and columns (inclusive bounds) of the dark ink in ``box``."""
    x0, y0, x1, y1 = box
    ys, xs = np.nonzero(pixels[y0:y1, x0:x1] < 128)
    return y0 + ys.min(), y0 + ys.max(), x0 + xs.min(), x0 + xs.max()


def test_legible_says_which_texts_read_in_a_box():
    """Twelve digits where a "3" was would be drawn at a fraction of the digit's size: not legible; three fit."""
    doc = form_field()
    style = choose_styles(replace_texts(doc, {1: "878"}), [1], original=doc)[1]
    box = doc.words[1].box
    assert render.legible("3", box, style) and render.legible("87", box, style)
    assert not render.legible("123456789012", box, style) and not render.legible("12345", box, style)
    ys = np.nonzero(text_alpha("87", box, style) > 127)[0]  # what passes is drawn at 80% of the size or more
    o_top, o_bottom, _, _ = ink_rows(doc.image.to_array(), box)
    assert ys.max() - ys.min() + 1 >= 0.8 * (o_bottom - o_top + 1) - 1


def test_the_words_of_a_run_of_print_share_face_and_size():
    """Each word of an entity is drawn at the entity's size, face and edge level, whatever its own fit says."""
    doc = page_in("LiberationSans-Bold", texts=("Total", "amount", "due"))
    styles = choose_styles(replace_texts(doc, {1: "balance"}), [0, 1, 2], original=doc)
    assert len({(s.face, s.size, s.edge) for s in styles.values()}) == 1
    assert styles[1].face == "LiberationSans-Bold" and abs(styles[1].size - 26) <= 1.5


def test_funsd_runs_of_print_keep_their_family_slant_and_size(funsd_test):
    """On real forms: a typed phone number under serif keys stays serif; a date stays upright at one size; a
    short name in a sans table stays sans, where its own dozen pixels fit a serif a little better."""
    fax = funsd_test.load("82092117")
    cases = {38: "Serif", 39: "Serif", 40: "Serif", 31: "Serif", 224: "Serif", 225: "Serif", 226: "Serif"}
    styles = choose_styles(fax, list(cases), original=fax)
    for i, family in cases.items():
        assert styles[i].face.startswith(f"Liberation{family}-"), (fax.words[i].text, styles[i].face)
    date = [styles[i] for i in (224, 225, 226)]  # "12/10/98" in three words
    assert not any("Italic" in s.face for s in date) and len({s.size for s in date}) == 1
    table = funsd_test.load("82200067_0069")
    words = [i for i, w in enumerate(table.words) if w.text in ("Maverick", "Zip", "Trip", "Astro", "Gas")]
    styles = choose_styles(table, words, original=table)
    assert {styles[i].face for i in words} == {"LiberationSans-Bold"}


def test_value_text_augment_draws_no_smear_on_a_real_form(funsd_test):
    """Every answer of a FUNSD table form replaced with render (numbers of 3 to 12 digits where 2 were): each
    value is one that reads in its boxes, drawn at least 80% as tall as the old print (no smear), in the words'
    own boxes; without render the same shift draws values that would not."""
    from dogood.shifts import ValueTextAugment

    doc = funsd_test.load("82200067_0069")
    out = ValueTextAugment(render=True)(doc, 1)
    before, after = doc.image.to_array(), out.image.to_array()
    assert [w.box for w in out.words] == [w.box for w in doc.words]
    changed = [i for i, w in enumerate(out.words) if w.text != doc.words[i].text]
    assert len(changed) > 15
    mask = np.zeros(before.shape, bool)
    for i in changed:
        mask |= inside(doc.words[i].box, before.shape)
        o_top, o_bottom, _, _ = ink_rows(before, doc.words[i].box)
        top, bottom, _, _ = ink_rows(after, doc.words[i].box)
        assert bottom - top >= 0.8 * (o_bottom - o_top) - 1, (doc.words[i].text, out.words[i].text)
    assert not ((before != after) & ~mask).any()
    plain = ValueTextAugment()(doc, 1)  # text only: values as long as drawn (up to 12 digits in a 2-digit box)
    styles = choose_styles(replace_texts(doc, {i: w.text for i, w in enumerate(plain.words)}), list(range(len(doc.words))),
                           original=doc)
    assert any(not render.legible(w.text, w.box, styles[i]) for i, w in enumerate(plain.words)
               if w.text != doc.words[i].text and i in styles)


def test_value_text_augment_runs_no_new_words_together(funsd_test):
    """Faker words replace a value word for word; where the old token words are one printed word (``Maid`` ``-O``
    ``Clover``, ``Dari`` ``Mart``: their boxes touch), two new words would be drawn with no space between them
    (``Stanleyand``): with render such a value is drawn again or left unchanged; without render (text only) it
    changes as before."""
    from dogood.shifts import ValueTextAugment

    doc = funsd_test.load("82200067_0069")
    glued = [(140, 141), (141, 142), (143, 144)]
    assert [doc.words[i].text for i in (140, 141, 142, 143, 144)] == ["Maid", "-O", "Clover", "Dari", "Mart"]
    assert all(doc.words[b].box[0] - doc.words[a].box[2] <= 1 for a, b in glued)
    ran_together = {True: 0, False: 0}
    for seed in range(4):
        for flag in (True, False):
            out = ValueTextAugment(fraction=1.0, render=flag)(doc, seed)
            for a, b in glued:
                ta, tb = out.words[a].text, out.words[b].text
                if (ta, tb) != (doc.words[a].text, doc.words[b].text):
                    ran_together[flag] += ta[-1].isalnum() and tb[0].isalnum()
    assert ran_together[True] == 0
    assert ran_together[False] > 0  # the check is what keeps them apart
    assert ValueTextAugment.joins_kept(doc, [143, 144], ["Webb-", "Group"])
    assert not ValueTextAugment.joins_kept(doc, [143, 144], ["Webb", "Group"])
    assert ValueTextAugment.joins_kept(doc, [134, 136], ["Freeman", "Ltd"])  # words apart on the page
