"""Previews of real FUNSD forms: colours where the boxes are, the page elsewhere, side-by-side geometry."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from dogood.core.document import ShiftRecord, Word
from dogood.measures.preview import PALETTE, default_title, draw_document, label_colour, render_preview, save_preview
from dogood.sources.funsd import FunsdSource

DATA = Path(os.environ.get("DOGOOD_DATA_DIR") or Path(__file__).resolve().parents[3] / "shared" / "data")
FUNSD = DATA / "funsd" / "dataset"
DOC_ID = "82092117"

pytestmark = pytest.mark.skipif(
    not (FUNSD / "testing_data" / "annotations" / f"{DOC_ID}.json").is_file(),
    reason=f"FUNSD test form {DOC_ID} not found under {FUNSD}",
)


@pytest.fixture(scope="module")
def doc():
    return FunsdSource(root=FUNSD, split="test").load(DOC_ID)


def _page_rgb(doc) -> np.ndarray:
    arr = np.asarray(doc.image.to_array())
    return np.stack([arr] * 3, axis=-1) if arr.ndim == 2 else arr


def _box_mask(doc, margin: int) -> np.ndarray:
    """True on every pixel within ``margin`` of some word box."""
    mask = np.zeros((doc.height, doc.width), dtype=bool)
    for x0, y0, x1, y1 in doc.boxes.tolist():
        mask[max(0, y0 - margin) : y1 + margin + 1, max(0, x0 - margin) : x1 + margin + 1] = True
    return mask


def _isolated_question(doc, margin: int = 6):
    """A question word of a decent size whose box, grown by ``margin``, touches no other box."""
    labels = ["none" if e is None else e.label for e in doc.word_entity()]
    boxes = doc.boxes
    for i, (label, (x0, y0, x1, y1)) in enumerate(zip(labels, boxes.tolist())):
        if label != "question" or x1 - x0 < 12 or y1 - y0 < 8:
            continue
        others = np.delete(boxes, i, axis=0)
        touch = (
            (others[:, 0] <= x1 + margin)
            & (others[:, 2] >= x0 - margin)
            & (others[:, 1] <= y1 + margin)
            & (others[:, 3] >= y0 - margin)
        )
        if not touch.any():
            return i
    pytest.fail(f"{DOC_ID} has no isolated question word")


def test_palette_colours_are_distinct():
    assert set(PALETTE) == {"header", "question", "answer", "other", "none"}
    assert len(set(PALETTE.values())) == len(PALETTE)
    assert label_colour(None) == PALETTE["none"]
    assert label_colour("QUESTION") == PALETTE["question"]
    assert label_colour("key") == label_colour("key")  # unknown labels: stable colour


def test_question_box_border_is_question_colour_and_page_kept_elsewhere(doc):
    drawn = draw_document(doc, legend=None, line_width=2)
    assert drawn.mode == "RGB" and drawn.size == (doc.width, doc.height)
    out = np.asarray(drawn)
    blue = np.array(PALETTE["question"], dtype=np.uint8)

    x0, y0, x1, y1 = doc.words[_isolated_question(doc)].box
    cx, cy = (x0 + x1) // 2, (y0 + y1) // 2
    border = [(x0, cy), (x0 + 1, cy), (x1, cy), (x1 - 1, cy), (cx, y0), (cx, y0 + 1), (cx, y1), (cx, y1 - 1)]
    for x, y in border:
        assert (out[y, x] == blue).all(), f"pixel {(x, y)} is {out[y, x]}, not the question colour"
    # the whole outline, not just its midpoints
    assert (out[y0, x0 : x1 + 1] == blue).all() and (out[y0 : y1 + 1, x1] == blue).all()

    away = ~_box_mask(doc, margin=3)
    assert away.mean() > 0.5
    np.testing.assert_array_equal(out[away], _page_rgb(doc)[away])
    # the document itself is untouched
    assert not np.shares_memory(out, doc.image.to_array())


def test_legend_sits_in_the_chosen_corner_and_shows_the_labels(doc):
    plain = np.asarray(draw_document(doc, legend=None)).astype(int)
    with_legend = np.asarray(draw_document(doc, legend="bottom-left")).astype(int)
    changed = np.argwhere((plain != with_legend).any(axis=-1))
    assert len(changed)
    ys, xs = changed[:, 0], changed[:, 1]
    assert xs.max() < doc.width / 2 and ys.min() > doc.height / 2  # bottom-left quadrant only
    region = with_legend[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1].reshape(-1, 3)
    present = {"none" if e is None else e.label for e in doc.word_entity()}
    for label in present:
        assert (region == PALETTE[label]).all(axis=1).any(), f"legend lacks the {label} swatch"


def test_show_text_writes_more_ink(doc):
    plain = np.asarray(draw_document(doc, legend=None))
    text = np.asarray(draw_document(doc, legend=None, show_text=True))
    assert plain.shape == text.shape
    assert (plain != text).any(axis=-1).sum() > 1000


def _big_box_copy(doc):
    big = (40, 60, doc.width - 40, doc.height - 60)
    return doc.replace(words=tuple(Word(w.text, big) for w in doc.words)), big


def test_preview_puts_scaled_pages_side_by_side_with_the_big_box_on_the_right(doc):
    shifted, big = _big_box_copy(doc)
    max_height, gap = 600, 8
    preview = render_preview(doc, shifted, max_height=max_height, gap=gap, legend=None)
    scale = max_height / doc.height  # FUNSD pages are ~1000 px tall, so they are scaled down
    page_w = doc.width * scale
    assert abs(preview.width - (2 * page_w + gap)) <= 2
    bar = preview.height - max_height
    assert 0 < bar < max_height / 10  # a caption bar on top of the page

    # all words share one box: drawn once, in the colour of the most common label
    labels = Counter("none" if e is None else e.label for e in doc.word_entity())
    colour = np.array(PALETTE[labels.most_common(1)[0][0]], dtype=np.uint8)
    out = np.asarray(preview)
    right = out[:, preview.width - round(page_w) :]
    bx0, by0, bx1, by1 = (round(v * scale) for v in big)
    mid_rows = slice(bar + by0 + 10, bar + by1 - 10)
    mid_cols = slice(bx0 + 10, bx1 - 10)
    for strip in (right[mid_rows, bx0], right[mid_rows, bx1], right[bar + by0, mid_cols], right[bar + by1, mid_cols]):
        assert (strip == colour).all(axis=-1).mean() > 0.98
    # the left half is the original page with its own word boxes, not the big box
    left = out[:, : round(page_w)]
    assert (left[mid_rows, bx0] == colour).all(axis=-1).mean() < 0.5


def test_preview_titles_default_to_the_shift_names(doc):
    shifted, big = _big_box_copy(doc)
    assert default_title(shifted) == "shifted"
    twice = shifted.with_shift(ShiftRecord("merge_words", {}, 0)).with_shift(ShiftRecord("blur", {"sigma": 1}, 1))
    assert default_title(twice) == "merge_words + blur"
    # captions differ only in the bar: another title changes nothing below it
    a = np.asarray(render_preview(doc, twice, max_height=400))
    b = np.asarray(render_preview(doc, twice, max_height=400, title_right="something else"))
    bar = a.shape[0] - 400
    assert (a[:bar] != b[:bar]).any() and (a[bar:] == b[bar:]).all()


def test_save_preview_writes_a_png_that_reopens(doc, tmp_path):
    shifted, _ = _big_box_copy(doc)
    path = save_preview(doc, shifted, tmp_path / "previews" / f"{DOC_ID}.png", max_height=500)
    assert path == tmp_path / "previews" / f"{DOC_ID}.png" and path.is_file()
    expected = render_preview(doc, shifted, max_height=500)
    with Image.open(path) as im:
        assert im.format == "PNG"
        assert im.size == expected.size
        assert np.array_equal(np.asarray(im.convert("RGB")), np.asarray(expected))


def _shifted(doc, recipe: str, config: str):
    from dogood.pipeline.recipe import load_recipe
    from dogood.pipeline.worker import apply_chain

    r = load_recipe(recipe)
    return apply_chain(doc, r.chain(config), r.seed)


def _ring(out: np.ndarray, box, dx: int, dy: int, inner: int, outer: int) -> np.ndarray:
    """The pixels between ``inner`` and ``outer`` pixels outside ``box``, on the page drawn at (dx, dy)."""
    x0, y0, x1, y1 = box
    mask = np.zeros(out.shape[:2], dtype=bool)
    mask[dy + y0 - outer : dy + y1 + outer + 1, dx + x0 - outer : dx + x1 + outer + 1] = True
    mask[dy + y0 - inner + 1 : dy + y1 + inner, dx + x0 - inner + 1 : dx + x1 + inner] = False
    return out[mask]


def test_text_shift_preview_highlights_the_changed_words_on_both_pages_and_lists_them(doc):
    from dogood.measures.preview import HIGHLIGHT

    shifted = _shifted(doc, "funsd-t", "char_deletion")
    changed = [i for i, (a, b) in enumerate(zip(doc.words, shifted.words)) if a.text != b.text]
    assert len(changed) >= 10
    plain = np.asarray(render_preview(doc, shifted, max_height=doc.height, legend=None, changes=False))
    out = np.asarray(render_preview(doc, shifted, max_height=doc.height, legend=None))
    bar, gap = max(16, round(doc.height / 40)), 8
    magenta = np.array(HIGHLIGHT, dtype=np.uint8)
    assert not (plain == magenta).all(axis=-1).any()
    assert out.shape[0] > plain.shape[0]  # the strip of edits under the pages
    strip = out[plain.shape[0]:]
    assert (strip.sum(axis=-1) < 200).sum() > 500  # it holds text
    assert np.array_equal(out[: plain.shape[0]][(out[: plain.shape[0]] != magenta).any(axis=-1)],
                          plain[(out[: plain.shape[0]] != magenta).any(axis=-1)])  # only the overlay was added

    boxes = doc.boxes

    def far_from_changed(i: int, reach: int = 12) -> bool:
        x0, y0, x1, y1 = boxes[i]
        c = boxes[changed]
        return not ((c[:, 0] <= x1 + reach) & (c[:, 2] >= x0 - reach) & (c[:, 1] <= y1 + reach)
                    & (c[:, 3] >= y0 - reach)).any()

    unchanged = [i for i in range(len(doc.words)) if i not in changed and far_from_changed(i)]
    assert len(unchanged) >= 20
    for dx in (0, doc.width + gap):  # the original page, then the shifted page
        for i in changed:
            ring = _ring(out, boxes[i], dx, bar, inner=3, outer=5)
            assert (ring == magenta).all(axis=-1).mean() > 0.5, (i, dx)
        for i in unchanged:
            assert not (_ring(out, boxes[i], dx, bar, inner=3, outer=5) == magenta).all(axis=-1).any(), (i, dx)


def test_merge_preview_shows_the_labels_inside_a_merged_box(doc):
    shifted = _shifted(doc, "funsd-l", "merge")
    labels = ["none" if e is None else e.label for e in shifted.word_entity()]
    owner = shifted.word_entity()
    groups = {}
    for i, w in enumerate(shifted.words):
        groups.setdefault(tuple(w.box), []).append(i)
    mixed = [(box, ids) for box, ids in groups.items() if len({labels[i] for i in ids}) > 1]
    assert mixed
    out = np.asarray(render_preview(doc, shifted, max_height=doc.height, legend=None))
    plain = np.asarray(draw_document(shifted, legend=None))
    bar, dx = max(16, round(doc.height / 40)), doc.width + 8
    checked = 0
    for box, ids in mixed:
        counts = Counter(labels[i] for i in ids)
        minority = min(counts, key=counts.get)
        members = [i for i in ids if labels[i] == minority and owner[i] is not None]
        if not members:
            continue
        entity = owner[members[0]]
        inner = doc.boxes[list(entity.word_ids)]
        x0, y0 = max(inner[:, 0].min(), box[0] + 3), max(inner[:, 1].min(), box[1] + 3)
        x1 = min(inner[:, 2].max(), box[2] - 3)
        colour = np.array(label_colour(minority), dtype=np.uint8)
        edge = out[bar + y0, dx + x0 + 1 : dx + x1]  # the entity's own box, top edge, inside the merged box
        assert (edge == colour).all(axis=-1).mean() > 0.9, (box, minority)
        assert (plain[y0, x0 + 1 : x1] == colour).all(axis=-1).mean() < 0.5  # not drawn without its own box
        checked += 1
    assert checked >= 2
