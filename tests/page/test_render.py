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
    x0, y0, x1, y1 = BOXES[0]
    grow = render.reach(BOXES[0])  # glyph parts a tight box would cut are drawn beyond it, never on other words
    box = inside((x0 - grow, y0 - grow, x1 + grow, y1 + grow), before.shape)
    assert np.array_equal(before[~box], after[~box])
    assert all(np.array_equal(before[inside(b, before.shape)], after[inside(b, before.shape)]) for b in BOXES[1:])
    assert np.array_equal(render_words(replace_texts(doc, {0: text}), [0], margin=0).image.to_array()[~inside(
        BOXES[0], before.shape)], before[~inside(BOXES[0], before.shape)])  # margin=0: nothing outside the box
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
        x0, y0, x1, y1 = doc.words[i].box
        grow = render.reach((x0, y0, x1, y1))  # strokes a tight box cuts are erased whole
        mask |= inside((x0 - grow, y0 - grow, x1 + grow, y1 + grow), before.shape)
    assert np.array_equal(before[~mask], after[~mask])
    others = np.zeros(before.shape, dtype=bool)
    for i, word in enumerate(doc.words):
        if i not in picks:
            others |= inside(word.box, before.shape)
    for i in picks:  # (where boxes overlap, the redrawn word's box is its own)
        others &= ~inside(doc.words[i].box, before.shape)
    assert np.array_equal(before[others], after[others])  # no other word's pixel changes
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
    strict = render_words(replace_texts(doc, {0: ""}), [0], margin=0).image.to_array()
    loose = render_words(replace_texts(doc, {0: ""}), [0], margin=6).image.to_array()
    auto = render_words(replace_texts(doc, {0: ""}), [0]).image.to_array()  # a third of the box's height: 6
    assert np.array_equal(auto, loose)
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
    out = render_words(doc, picks, styles=styles, margin=0).image.to_array()  # no original: every word redrawn
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
        # (2 pixels: a new text without the old one's descender, "Inc" for "Trip", is that much shorter)
        assert bottom - top >= 0.8 * (o_bottom - o_top) - 2, (doc.words[i].text, out.words[i].text)
    grown = np.zeros(before.shape, bool)
    for i in changed:
        x0, y0, x1, y1 = doc.words[i].box
        grow = render.reach((x0, y0, x1, y1))
        grown |= inside((x0 - grow, y0 - grow, x1 + grow, y1 + grow), before.shape)
    assert not ((before != after) & ~grown).any()
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


# --- issue 40: redrawn in the page's own hand, or kept ---------------------------------------------------------


def scanned(draw_at_4x, size=(420, 90), ink=10, paper=252):
    """A page as FUNSD's are: print drawn on a binary page four times the size, resized by area averaging."""
    big = Image.new("L", (size[0] * 4, size[1] * 4), 255)
    words = draw_at_4x(ImageDraw.Draw(big))
    small = np.asarray(big.resize(size, Image.BOX), np.float64) / 255.0
    pixels = np.rint(ink + (paper - ink) * small).astype(np.uint8)
    return pixels, [Word(t, tuple(int(round(v / 4)) for v in b)) for t, b in words]


def scanned_line(texts=("Invoice", "Number", "Total"), face="LiberationSerif-Regular", size=16, blur=0.0):
    """A line of print in ``face`` at ``size`` page pixels, scanned (:func:`scanned`), blurred by ``blur``."""
    font = liberation(face, size * 4)

    def draw(d):
        words, x = [], 40
        for text in texts:
            d.text((x, 200), text, fill=0, font=font, anchor="ls")
            l, t, r, b = d.textbbox((x, 200), text, font=font, anchor="ls")
            words.append((text, (l - 4, t - 4, r + 4, b + 4)))
            x = r + 60
        return words

    pixels, words = scanned(draw)
    if blur:
        import cv2

        pixels = cv2.GaussianBlur(pixels, (0, 0), blur)
    entity = Entity(0, "question", tuple(range(len(words))))
    return Document("s", PageImage.from_array(pixels), tuple(words), (entity,))


def darker_half(crop):
    ink = crop[crop <= render.ink_threshold(crop)]
    return float(np.median(np.sort(ink)[:max(1, len(ink) // 2)]))


def grey_per_edge(crop):
    """Grey pixels (a fifth to four fifths of the way from ink to paper) per pixel of the ink's edge."""
    return render._stroke_stats(crop, crop <= render.ink_threshold(crop))[1]


@pytest.mark.parametrize("blur", [0.0, 0.8])
def test_new_ink_takes_the_pages_print_quality(blur):
    """A word redrawn with its own text on a scanned page is printed as the page's print is: as dark, with as
    many grey pixels along its edges (more on a blurred page than on a sharp one), close to the old ink."""
    doc = scanned_line(blur=blur)
    out = render_words(doc, [1], styles=choose_styles(doc, [1], original=doc)).image.to_array()
    x0, y0, x1, y1 = doc.words[1].box
    old, new = doc.image.to_array()[y0:y1, x0:x1], out[y0:y1, x0:x1]
    assert not np.array_equal(old, new)
    assert abs(darker_half(new) - darker_half(old)) <= 20
    assert abs(grey_per_edge(new) - grey_per_edge(old)) <= 0.25 * grey_per_edge(old) + 0.1
    a, b = old <= render.ink_threshold(old), new <= render.ink_threshold(new)
    assert (a & b).sum() / (a | b).sum() > 0.6


def test_redrawn_print_is_blurrier_on_a_blurred_page():
    sharp, blurred = scanned_line(), scanned_line(blur=1.0)
    greys = []
    for doc in (sharp, blurred):
        new = replace_texts(doc, {1: "Amount"})
        out = render_words(new, [1], original=doc).image.to_array()
        x0, y0, x1, y1 = doc.words[1].box
        greys.append(grey_per_edge(out[y0:y1, x0:x1]))
    assert greys[1] > greys[0] + 0.2


def scribble_page():
    """A form line: a printed key and a handwritten-looking value (strokes no face draws)."""
    def draw(d):
        font = liberation("LiberationSans-Regular", 64)
        d.text((40, 200), "Name:", fill=0, font=font, anchor="ls")
        l, t, r, b = d.textbbox((40, 200), "Name:", font=font, anchor="ls")
        xs = np.linspace(r + 60, r + 560, 200)
        ys = 170 + 30 * np.sin(xs / 17.0) + 12 * np.sin(xs / 5.0)
        d.line(list(zip(xs.tolist(), ys.tolist())), fill=0, width=9)
        return [("Name:", (l - 4, t - 4, r + 4, b + 4)), ("Johnson", (int(r + 56), 120, int(r + 564), 222))]

    pixels, words = scanned(draw, size=(260, 80))
    return Document("h", PageImage.from_array(pixels), tuple(words), (Entity(0, "question", (0,)),
                                                                          Entity(1, "answer", (1,))))


def test_what_no_face_matches_is_kept_not_drawn_wrong():
    doc = scribble_page()
    kinds = render.print_kinds(doc, [0, 1], doc)
    assert kinds[0].reason is None and kinds[1].reason in ("handwriting", "unmatched")
    out = render_words(replace_texts(doc, {1: "Jonson"}), [1], original=doc)
    assert np.array_equal(out.image.to_array(), doc.image.to_array())  # never drawn as print


def test_a_text_shift_leaves_handwriting_as_written_and_says_so():
    from dogood.shifts import CharacterDeletion

    doc = scribble_page()
    outcome = CharacterDeletion(fraction=1.0, render=True).apply(doc, np.random.default_rng(0))
    assert outcome.doc.words[1].text == "Johnson"  # the handwritten value is kept, text and pixels
    assert outcome.doc.words[0].text != "Name:"  # the printed key changes
    assert sum(outcome.tallies["kept"].values()) == 1 and set(outcome.tallies["kept"]) <= {"handwriting", "unmatched"}
    x0, y0, x1, y1 = doc.words[1].box
    assert np.array_equal(outcome.doc.image.to_array()[y0:y1, x0:x1], doc.image.to_array()[y0:y1, x0:x1])
    plain = CharacterDeletion(fraction=1.0).apply(doc, np.random.default_rng(0))
    assert plain.doc.words[1].text != "Johnson" and not plain.tallies  # text only: every word may change


def vertical_page(text="82250337", k=1):
    """A Bates number printed along the page's edge: upright print turned ``k`` quarter turns."""
    def draw(d):
        font = liberation("LiberationSans-Regular", 64)
        d.text((40, 120), text, fill=0, font=font, anchor="ls")
        l, t, r, b = d.textbbox((40, 120), text, font=font, anchor="ls")
        return [(text, (l - 4, t - 4, r + 4, b + 4))]

    pixels, words = scanned(draw, size=(120, 60))
    height, width = pixels.shape
    turned = np.ascontiguousarray(np.rot90(pixels, k))
    words = [Word(w.text, render._turn_box(w.box, k, height, width)) for w in words]
    return Document("v", PageImage.from_array(turned), tuple(words))


@pytest.mark.parametrize("k", [1, 3])
def test_vertical_print_is_redrawn_vertical(k):
    doc = vertical_page(k=k)
    x0, y0, x1, y1 = doc.words[0].box
    assert y1 - y0 > 3 * (x1 - x0)
    kinds = render.print_kinds(doc, [0], doc)
    assert kinds[0].reason is None and kinds[0].turn == 4 - k  # turned back upright
    out = render_words(replace_texts(doc, {0: "82250331"}), [0], original=doc).image.to_array()
    before = doc.image.to_array()
    assert not np.array_equal(before, out)
    top, bottom, left, right = ink_rows(out, doc.words[0].box)
    o_top, o_bottom, o_left, o_right = ink_rows(before, doc.words[0].box)
    assert bottom - top >= 0.8 * (o_bottom - o_top) and right - left <= 1.3 * (o_right - o_left) + 1  # along the edge
    # the first seven digits are the old ones, drawn where they were
    same = slice(o_top, o_top + int(0.8 * (o_bottom - o_top))) if k == 3 else slice(o_bottom - int(0.8 * (o_bottom - o_top)), o_bottom)
    assert ink_iou(before[same, x0:x1], out[same, x0:x1]) > 0.5


def test_print_on_a_screened_ground_or_without_glyphs_is_kept():
    doc = scanned_line()
    pixels = np.array(doc.image.to_array())
    x0, y0, x1, y1 = doc.words[0].box
    screen = np.zeros((y1 - y0 + 8, x1 - x0 + 8), bool)
    screen[::3, ::3] = True  # a halftone ground under the first word: a dot every third pixel
    region = pixels[y0 - 4:y1 + 4, x0 - 4:x1 + 4]
    region[screen & (region > 128)] = 90
    shaded = doc.replace(image=PageImage.from_array(pixels))
    checkbox = replace_texts(doc, {2: "\u2610"})
    assert render.print_kinds(shaded, [0, 1], shaded)[0].reason == "background"
    assert render.print_kinds(checkbox, [2], checkbox)[2].reason == "glyph"
    guard = render.Redraw(doc)
    assert guard.fits(1, "Nummer") and not guard.fits(1, "\u4e2d\u6587")
    assert guard.tallies() == {"kept": {"glyph": 1}}


def test_a_new_text_is_drawn_at_its_prints_size_squeezed_a_little_at_most():
    """A new text is drawn at its run's size, squeezed to 95% of its width at most: a letter more than the box
    holds ("Numbers" where "Number" was, 11% too wide) is turned down as too long, not squeezed or shrunk (its
    strokes would give it away); a text as wide, or a dot more within the squeeze, is drawn."""
    doc = scanned_line(("Invoice", "Number", "Total"), size=16)
    guard = render.Redraw(doc)
    room = doc.words[1].box[2] - doc.words[1].box[0]
    style = guard.style(1)
    assert render.text_width("Number.", style) > room >= render.text_width("Number.", style) * render.FIT_SQUEEZE
    assert render.text_width("Numbers", style) * render.FIT_SQUEEZE > room
    assert guard.fits(1, "Nunber") and guard.fits(1, "Number.")
    assert not guard.fits(1, "Numbers")
    assert not guard.fits(1, "Numbernumbernumber")
    assert guard.tallies() == {"kept": {"too long": 2}}


def test_every_piece_of_the_old_word_goes_and_rules_stay_whole():
    """A tight box cuts the old word's strokes and its comma: all of them are erased; a 2-pixel underline (one
    of its rows broken by a lighter pixel) is left without a notch; the hyphen of the next word is kept."""
    def draw(d):
        font = liberation("LiberationSerif-Regular", 64)
        d.text((40, 200), "Caron,", fill=0, font=font, anchor="ls")
        l, t, r, b = d.textbbox((40, 200), "Caron,", font=font, anchor="ls")
        d.text((r + 30, 200), "-8", fill=0, font=font, anchor="ls")
        l2, t2, r2, b2 = d.textbbox((r + 30, 200), "-8", font=font, anchor="ls")
        d.rectangle((0, 224, 1679, 231), fill=0)  # an underline, 2 page pixels thick
        return [("Caron,", (l + 4, t + 8, r - 4, 216)), ("-8", (l2 + 26, t2, r2, b2))]  # tight: cuts C and the comma

    pixels, words = scanned(draw)
    pixels[57, 30] = 150  # one lighter pixel in the underline's lower row
    doc = Document("c", PageImage.from_array(pixels), tuple(words))
    out = render_words(replace_texts(doc, {0: ""}), [0], original=doc).image.to_array()
    x0, y0, x1, y1 = doc.words[0].box
    assert out[y0 - 6:y1 - 1, x0 - 6:x1 + 4].min() > 200  # no sliver of C, n or the comma beside the box
    assert (out[56, :300] < 128).all() and (out[57, :300] < 160).all()  # the underline, whole
    hx0 = doc.words[1].box[0]
    assert np.array_equal(out[y0:y1, hx0 - 8:hx0 + 1], pixels[y0:y1, hx0 - 8:hx0 + 1])  # the hyphen, whole


def _stroke(doc, name):
    """A :mod:`dogood.measures.word_style` feature of every word of ``doc`` (what the redrawn-word cue sees)."""
    from dogood.measures import word_style

    features, ok = word_style.word_features(doc)
    return features[:, word_style.FEATURES.index(name)], ok


def test_a_bold_run_takes_no_letters_from_regular_print(funsd_test):
    """"ENCLOSED" in a bold run (FUNSD test 92380595) becomes "128": the digits are not pieced from "(212)" and
    "89" in the page's regular print, whose ink per edge pixel is as small print's is: the new number's strokes
    have a stroke core as its line's words have (before: a fifth of theirs)."""
    doc = funsd_test.load("92380595")
    i = [k for k, w in enumerate(doc.words) if w.text == "ENCLOSED"][0]
    out = render_words(replace_texts(doc, {i: "128"}), [i], original=doc)
    core, ok = _stroke(out, "core_share")
    line = [j for j, w in enumerate(doc.words) if j != i and ok[j] and abs(w.box[1] - doc.words[i].box[1]) < 6]
    assert len(line) >= 6
    assert core[i] >= 0.5 * np.median(core[line])
