"""Form-attack OCR-level and layout shifts on real FUNSD pages and hand-made forms: what moves, what never does."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from dogood.core.document import Document, Entity, PageImage, Word
from dogood.core.errors import RecipeError
from dogood.core.schema import iob_tags
from dogood.shifts import SkipDocument, make_shift
from dogood.language.selection import background_words, value_neighbours
from dogood.shifts.layout._relayout import key_value_pairs

ALL = ["center_shift", "box_stretch", "margin_padding", "global_shuffle", "neighbor_shuffle", "non_neighbor_shuffle",
       "bg_drop", "neighbor_bg_drop", "value_location_augment"]
ORDER = ["global_shuffle", "neighbor_shuffle", "non_neighbor_shuffle"]
KEY_VALUE = {"question", "answer"}


@pytest.fixture(scope="module")
def pages(funsd_test):
    return [funsd_test.load(i) for i in funsd_test.ids()[:10]]


def run(name, doc, seed=0, **params):
    out, counts, _ = make_shift({"shift": name, **params}).apply(doc, np.random.default_rng(seed))
    return out, counts


def labels_of(doc):
    return [e.label if e is not None else None for e in doc.word_entity()]


def pairs_of(doc):
    return Counter((w.text, w.box) for w in doc.words)


def boxes_inside(doc):
    b = doc.boxes
    return bool(((b[:, 0] >= 0) & (b[:, 1] >= 0) & (b[:, 2] <= doc.width) & (b[:, 3] <= doc.height)
                 & (b[:, 0] <= b[:, 2]) & (b[:, 1] <= b[:, 3])).all())


def kept_indices(before, after):
    """Indices of ``before``'s words that survive in ``after`` (a deletion keeps the order)."""
    kept, j = [], 0
    for i, w in enumerate(before.words):
        if j < len(after.words) and after.words[j] == w:
            kept.append(i)
            j += 1
    assert j == len(after.words), "the output is not a subsequence of the input"
    return kept


def noise_page(width=300, height=200, seed=0, rgb=False):
    shape = (height, width, 3) if rgb else (height, width)
    return PageImage.from_array(np.random.default_rng(seed).integers(0, 256, shape, dtype=np.uint8))


def edge_form():
    """Words flush with every page edge, a tiny word and a zero-width box: clipping must keep them inside."""
    words = [Word("Left", (0, 40, 30, 50)), Word("Right", (270, 40, 300, 50)), Word("Top", (100, 0, 130, 12)),
             Word("Bottom", (100, 188, 150, 200)), Word(".", (150, 100, 151, 101)), Word("|", (160, 100, 160, 110)),
             Word("Name:", (10, 80, 50, 95)), Word("Ann", (60, 80, 90, 95))]
    entities = [Entity(0, "question", (6,), ((0, 1),)), Entity(1, "answer", (7,), ((0, 1),)), Entity(2, "header", (2,))]
    return Document("edges", noise_page(), tuple(words), tuple(entities))


def swap_form(rgb=False):
    """Two key-value pairs of the same shape (1 key word, 2 value words, same box sizes), one of another shape,
    a key with two answers (no one-to-one pair) and background."""
    words = [
        Word("Date:", (10, 10, 50, 25)), Word("May", (60, 10, 90, 25)), Word("1995", (95, 10, 135, 25)),      # 0-2
        Word("Fax:", (10, 120, 50, 135)), Word("614", (160, 150, 190, 165)), Word("466", (195, 150, 235, 165)),  # 3-5
        Word("To:", (10, 60, 40, 75)), Word("Bob", (50, 60, 80, 75)),                                           # 6-7
        Word("Cc:", (150, 10, 180, 25)), Word("Al", (190, 10, 210, 25)), Word("Jo", (220, 10, 240, 25)),       # 8-10
        Word("FORM", (120, 180, 170, 195)), Word("note", (250, 100, 290, 115)),                                # 11-12
    ]
    entities = [
        Entity(1, "question", (0,), ((1, 2),)), Entity(2, "answer", (1, 2), ((1, 2),)),
        Entity(3, "question", (3,), ((3, 4),)), Entity(4, "answer", (4, 5), ((3, 4),)),
        Entity(5, "question", (6,), ((5, 6),)), Entity(6, "answer", (7,), ((5, 6),)),
        Entity(7, "question", (8,), ((7, 8), (7, 9))), Entity(8, "answer", (9,), ((7, 8),)),
        Entity(9, "answer", (10,), ((7, 9),)), Entity(10, "header", (11,)),
    ]
    return Document("swap", noise_page(rgb=rgb), tuple(words), tuple(entities))


# -- every shift -------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ALL)
def test_every_shift_keeps_boxes_inside_the_page(name, pages):
    params = {"delta": 2.0} if name in ("center_shift", "box_stretch") else {}
    for seed, doc in enumerate(pages[:4] + [edge_form(), swap_form()]):
        out, counts = run(name, doc, seed, **params)
        assert boxes_inside(out), name
        assert all(v >= 0 for v in counts.values())
        assert out.image.to_array().ndim == doc.image.to_array().ndim


@pytest.mark.parametrize("name", [n for n in ALL if n != "neighbor_bg_drop"])
def test_same_seed_same_output_other_seed_other_output(name, pages):
    doc = pages[8]  # its largest group of same-shaped key-value pairs has 5 (a pair of 2 can only swap)
    shift = make_shift({"shift": name})
    a, b, c = shift(doc, 7), shift(doc, 7), shift(doc, 8)
    assert a.words == b.words and a.entities == b.entities and a.image == b.image
    assert a.words != c.words or a.image != c.image
    assert a.provenance[-1].shift == name and a.provenance[-1].skipped is None


def test_neighbor_bg_drop_is_deterministic(pages):
    a, b = run("neighbor_bg_drop", pages[0], 1)[0], run("neighbor_bg_drop", pages[0], 2)[0]
    assert a.words == b.words and len(a.words) < len(pages[0].words)


@pytest.mark.parametrize("name", [n for n in ALL if n != "margin_padding"])
def test_pages_without_words_are_skipped(name):
    empty = Document("empty", noise_page())
    out = make_shift({"shift": name})(empty, 0)
    assert out.provenance[-1].skipped == "no words" and out.image is empty.image


@pytest.mark.parametrize("spec, message", [
    ({"shift": "center_shift", "delta": -0.1}, "parameter delta must be ≥ 0, got -0.1"),
    ({"shift": "box_stretch", "delta": float("nan")}, "parameter delta must be a number, got nan"),
    ({"shift": "margin_padding", "r": -1}, "parameter r must be ≥ 0, got -1"),
    ({"shift": "bg_drop", "p": 1.5}, r"parameter p must be in \[0, 1\], got 1.5"),
    ({"shift": "neighbor_shuffle", "n": -1}, "parameter n must be ≥ 0, got -1"),
    ({"shift": "neighbor_shuffle", "n": 1.5}, "parameter n must be an integer, got 1.5"),
    ({"shift": "neighbor_bg_drop", "r": -0.5}, "parameter r must be ≥ 0, got -0.5"),
    ({"shift": "value_location_augment", "swap": True}, "no parameter swap"),
])
def test_bad_parameters_are_refused(spec, message):
    with pytest.raises(RecipeError, match=message):
        make_shift(spec)


@pytest.mark.parametrize("name", ["bg_drop", "neighbor_bg_drop"])
def test_the_drops_take_the_team_names_and_their_old_ones(name):
    """``fraction`` and ``render``, as every shift calls them; the form-attack names ``p`` and ``erase`` still read."""
    share = {"fraction": 0.3} if name == "bg_drop" else {}
    old = {"p": 0.3} if name == "bg_drop" else {}
    new = make_shift({"shift": name, **share, "render": True})
    assert make_shift({"shift": name, **old, "erase": True}).params() == new.params()
    assert new.render is True and set(new.params()) >= {"render"} and "erase" not in new.params()
    if name == "bg_drop":
        assert new.fraction == 0.3 and "p" not in new.params()
        with pytest.raises(RecipeError, match="parameter fraction must be in"):
            make_shift({"shift": name, "fraction": 2})


# -- box jitter --------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("delta", [0.1, 0.25])
def test_center_shift_keeps_sizes_and_spreads_by_delta(delta, funsd_test):
    dx, dy = [], []
    for seed, doc in enumerate(funsd_test.load(i) for i in funsd_test.ids()[:20]):
        out, counts = run("center_shift", doc, seed, delta=delta)
        old, new = doc.boxes, out.boxes
        assert np.array_equal(new[:, 2:] - new[:, :2], old[:, 2:] - old[:, :2])  # sizes kept, clipped or not
        assert [w.text for w in out.words] == [w.text for w in doc.words] and out.entities == doc.entities
        assert out.image is doc.image
        assert counts["eligible"] == len(doc.words) and counts["changed"] == int((old != new).any(axis=1).sum())
        w, h = old[:, 2] - old[:, 0], old[:, 3] - old[:, 1]
        flush = (new[:, 0] == 0) | (new[:, 1] == 0) | (new[:, 2] == doc.width) | (new[:, 3] == doc.height)
        big = ~flush & (w >= 20) & (h >= 10)  # whole-pixel rounding matters little on these
        dx.extend(((new[:, 0] - old[:, 0]) / w)[big])
        dy.extend(((new[:, 1] - old[:, 1]) / h)[big])
    assert len(dx) > 1000
    for d in (np.array(dx), np.array(dy)):
        assert abs(d.std() - delta) <= 0.2 * delta
        assert abs(d.mean()) <= 0.1 * delta


def test_center_shift_slides_boxes_back_inside():
    doc = edge_form()
    clipped = 0
    for seed in range(20):
        out, counts = run("center_shift", doc, seed, delta=1.0)
        assert boxes_inside(out)
        assert np.array_equal(out.boxes[:, 2:] - out.boxes[:, :2], doc.boxes[:, 2:] - doc.boxes[:, :2])
        clipped += counts["clipped"]
    assert clipped > 0
    assert run("center_shift", doc, 0, delta=0.0)[0].words == doc.words


def test_box_stretch_moves_each_coordinate_by_delta(funsd_test):
    delta, moves = 0.1, []
    for seed, doc in enumerate(funsd_test.load(i) for i in funsd_test.ids()[:20]):
        out, _ = run("box_stretch", doc, seed, delta=delta)
        old, new = doc.boxes, out.boxes
        assert ((new[:, 2] - new[:, 0] >= 1) | (old[:, 2] == old[:, 0])).all()
        assert ((new[:, 3] - new[:, 1] >= 1) | (old[:, 3] == old[:, 1])).all()
        assert [w.text for w in out.words] == [w.text for w in doc.words] and out.image is doc.image
        w, h = old[:, 2] - old[:, 0], old[:, 3] - old[:, 1]
        flush = (new[:, :2] == 0).any(axis=1) | (new[:, 2] == doc.width) | (new[:, 3] == doc.height)
        ok = (w >= 20) & (h >= 10) & ~flush
        moves.append(((new - old) / np.stack([w, h, w, h], axis=1))[ok])
    moves = np.concatenate(moves)
    assert len(moves) > 1000
    assert np.all(np.abs(moves.std(axis=0) - delta) <= 0.2 * delta)
    corr = np.corrcoef(moves[:, 0], moves[:, 2])[0, 1]
    assert abs(corr) < 0.1  # the four coordinates move on their own, not as one shift
    edges = edge_form()
    out, _ = run("box_stretch", edges, 0, delta=5.0)
    assert boxes_inside(out) and out.words[5].box[0] == out.words[5].box[2]  # zero-width box keeps no width


@pytest.mark.parametrize("rgb", [False, True])
def test_margin_padding_pads_white_and_moves_every_box(rgb, pages):
    docs = [pages[0], swap_form(rgb=True)] if rgb else pages[:3]
    for seed, doc in enumerate(docs):
        out, c = run("margin_padding", doc, seed)
        left, right, top, bottom = c["margin_left"], c["margin_right"], c["margin_top"], c["margin_bottom"]
        assert 1 <= left <= 0.3 * doc.width and 1 <= right <= 0.3 * doc.width
        assert 1 <= top <= 0.3 * doc.height and 1 <= bottom <= 0.3 * doc.height
        assert (out.width, out.height) == (doc.width + left + right, doc.height + top + bottom)
        before, after = doc.image.to_array(), out.image.to_array()
        assert after.ndim == before.ndim
        assert np.array_equal(after[top:top + doc.height, left:left + doc.width], before)
        region = np.zeros(after.shape[:2], dtype=bool)
        region[top:top + doc.height, left:left + doc.width] = True
        assert (after[~region] == 255).all()
        assert np.array_equal(out.boxes, doc.boxes + [left, top, left, top])
        assert [w.text for w in out.words] == [w.text for w in doc.words] and out.entities == doc.entities
    sizes = {run("margin_padding", pages[0], s)[1]["margin_left"] for s in range(10)}
    assert len(sizes) > 5  # a random length, not a constant


# -- reading order -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ORDER)
def test_reading_order_shifts_change_only_the_order(name, pages):
    moved = 0
    for seed, doc in enumerate(pages):
        out, counts = run(name, doc, seed)
        assert pairs_of(out) == pairs_of(doc) and out.image is doc.image
        assert Counter(zip(out.words, labels_of(out))) == Counter(zip(doc.words, labels_of(doc)))
        before = {e.id: [doc.words[i] for i in e.word_ids] for e in doc.entities}
        assert {e.id: [out.words[i] for i in e.word_ids] for e in out.entities} == before
        assert [(e.id, e.label, e.links) for e in out.entities] == [(e.id, e.label, e.links) for e in doc.entities]
        in_place = [i for i, (a, b) in enumerate(zip(doc.words, out.words)) if a == b]
        near = value_neighbours(doc)
        values = {i for e in doc.entities if e.label == "answer" for i in e.word_ids}
        if name == "neighbor_shuffle":
            fixed = set(range(len(doc.words))) - near
        elif name == "non_neighbor_shuffle":
            fixed = near | values
        else:
            fixed = set()
        assert fixed <= set(in_place)
        movers = set(range(len(doc.words))) - fixed
        assert counts["eligible"] == len(movers) and counts["changed"] == len(doc.words) - len(in_place)
        assert Counter(out.words[i] for i in movers) == Counter(doc.words[i] for i in movers)  # among their own places
        moved += counts["changed"]
    assert moved > 100


def test_neighbour_shuffle_leaves_a_page_without_values_alone():
    doc = Document("novalues", noise_page(), (Word("a", (0, 0, 5, 5)), Word("b", (10, 0, 15, 5))),
                   (Entity(0, "question", (0,)),))
    out, counts = run("neighbor_shuffle", doc)
    assert out is doc and counts == {"eligible": 0, "changed": 0, "neighbours": 0}
    out, counts = run("non_neighbor_shuffle", doc, 3)
    assert counts["eligible"] == 2 and pairs_of(out) == pairs_of(doc)


# -- background drop ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("p", [0.1, 0.13, 0.5])
def test_bg_drop_drops_exactly_p_of_the_background(p, pages):
    for seed, doc in enumerate(pages):
        out, counts = run("bg_drop", doc, seed, fraction=p)
        background = background_words(doc)
        kept = kept_indices(doc, out)
        dropped = sorted(set(range(len(doc.words))) - set(kept))
        assert len(dropped) == round(p * len(background)) == counts["changed"]
        assert counts["eligible"] == len(background) and set(dropped) <= set(background)
        before = labels_of(doc)
        assert not any(before[i] in KEY_VALUE for i in dropped)
        assert labels_of(out) == [before[i] for i in kept]  # every surviving word keeps its entity label
        old_tags = dict(zip(*iob_tags(doc)))
        for j, tag in zip(*iob_tags(out)):
            if before[kept[j]] in KEY_VALUE:
                assert tag == old_tags[kept[j]]  # key and value entities are whole: their tags do not change
            else:  # a header that lost its first word starts with B- at its next one
                assert tag[2:] == old_tags[kept[j]][2:]
        ids = {e.id for e in out.entities}
        assert all(a in ids and b in ids for e in out.entities for a, b in e.links)
        assert all(e.word_ids for e in out.entities)
        assert out.image is doc.image


def test_bg_drop_removes_emptied_entities_and_their_links():
    doc = swap_form()
    out, counts = run("bg_drop", doc, 0, fraction=1.0)
    assert counts == {"eligible": 2, "changed": 2}
    assert [w.text for w in out.words] == [w.text for w in doc.words if w.text not in ("FORM", "note")]
    assert 10 not in {e.id for e in out.entities}
    assert [e for e in out.entities if e.label != "header"] == [
        Entity(e.id, e.label, e.word_ids, e.links) for e in doc.entities if e.label != "header"]


@pytest.mark.parametrize("name", ["bg_drop", "neighbor_bg_drop"])
def test_render_inpaints_only_the_dropped_words(name, pages):
    doc = pages[0]
    out, counts = run(name, doc, 0, fraction=0.3, render=True) if name == "bg_drop" else run(name, doc, 0, render=True)
    plain, _ = run(name, doc, 0, fraction=0.3) if name == "bg_drop" else run(name, doc, 0)
    assert plain.words == out.words and plain.image is doc.image
    dropped = sorted(set(range(len(doc.words))) - set(kept_indices(doc, out)))
    assert dropped and len(dropped) == counts["changed"]
    before, after = doc.image.to_array(), out.image.to_array()
    mask = np.zeros(before.shape, dtype=bool)
    for i in dropped:
        x0, y0, x1, y1 = doc.words[i].box
        mask[y0:y1, x0:x1] = True
    assert np.array_equal(before[~mask], after[~mask])
    assert (after[mask] < 100).sum() < (before[mask] < 100).sum() // 4  # the ink is gone


def test_neighbor_bg_drop_drops_the_background_neighbours_only(pages):
    total = 0
    for doc in pages:
        out, counts = run("neighbor_bg_drop", doc)
        dropped = set(range(len(doc.words))) - set(kept_indices(doc, out))
        near = value_neighbours(doc, ("answer",), 0.02, 2)
        assert dropped == near & set(background_words(doc))
        assert counts["changed"] == len(dropped) and counts["neighbours"] == len(near)
        assert not any(labels_of(doc)[i] in KEY_VALUE for i in dropped)
        total += len(dropped)
    assert total > 50


# -- value location ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("rgb", [False, True])
def test_value_location_augment_swaps_same_shaped_pairs_with_their_pixels(rgb):
    doc = swap_form(rgb=rgb)
    assert len(key_value_pairs(doc)) == 3  # Cc: has two answers: no one-to-one pair
    out, counts = run("value_location_augment", doc, 0)
    assert counts == {"pairs": 3, "eligible": 2, "moved": 2, "changed": 6}
    swapped = {0: 3, 3: 0, 1: 4, 4: 1, 2: 5, 5: 2}
    for i, (a, b) in enumerate(zip(doc.words, out.words)):
        assert b.text == a.text
        assert b.box == (doc.words[swapped[i]].box if i in swapped else a.box)
    assert out.entities == doc.entities
    before, after = doc.image.to_array(), out.image.to_array()
    mask = np.zeros(before.shape[:2], dtype=bool)
    for i in swapped:
        ox0, oy0, ox1, oy1 = doc.words[i].box
        nx0, ny0, nx1, ny1 = out.words[i].box
        assert np.array_equal(after[ny0:ny1, nx0:nx1], before[oy0:oy1, ox0:ox1])
        mask[ny0:ny1, nx0:nx1] = True
    assert np.array_equal(after[~mask], before[~mask])
    boxes_only, counts2 = run("value_location_augment", doc, 0, move_pixels=False)
    assert boxes_only.words == out.words and boxes_only.image is doc.image and counts2 == counts


def test_value_location_augment_resizes_crops_into_other_sized_boxes():
    ramp = np.tile(np.arange(300).clip(0, 255).astype(np.uint8), (200, 1))  # grey level = x
    words = list(swap_form().words)
    words[3] = Word("Fax:", (100, 120, 160, 140))  # wider and taller than "Date:"'s (10, 10, 50, 25)
    doc = swap_form().replace(words=tuple(words), image=PageImage.from_array(ramp))
    out, _ = run("value_location_augment", doc, 0)
    assert out.words[0].box == (100, 120, 160, 140) and out.words[3].box == (10, 10, 50, 25)
    after = out.image.to_array().astype(int)
    for region, lo, hi in ((after[120:140, 100:160], 10, 49), (after[10:25, 10:50], 100, 159)):
        assert (region == region[0]).all() and (np.diff(region[0]) >= 0).all()  # the crop, stretched or squeezed
        assert abs(region[0, 0] - lo) <= 1 and abs(region[0, -1] - hi) <= 1


def test_value_location_augment_on_funsd_trades_boxes_within_groups(pages):
    pairs = eligible = 0
    for seed, doc in enumerate(pages):
        out, counts = run("value_location_augment", doc, seed)
        assert [w.text for w in out.words] == [w.text for w in doc.words] and out.entities == doc.entities
        assert Counter(w.box for w in out.words) == Counter(w.box for w in doc.words)
        ents = doc.entities
        found = key_value_pairs(doc)
        shape = Counter((len(ents[k].word_ids), len(ents[v].word_ids)) for k, v in found)
        movable = {i for k, v in found if shape[len(ents[k].word_ids), len(ents[v].word_ids)] >= 2
                   for i in ents[k].word_ids + ents[v].word_ids}
        moved = {i for i, (a, b) in enumerate(zip(doc.words, out.words)) if a.box != b.box}
        assert moved <= movable
        assert counts["pairs"] == len(found) and counts["eligible"] == counts["moved"]
        assert counts["eligible"] == sum(n for n in shape.values() if n >= 2)
        if counts["moved"]:  # every moved word shows its own pixels in its new box (resized when sizes differ)
            before, after = doc.image.to_array(), out.image.to_array()
            for i in moved:
                ox0, oy0, ox1, oy1 = doc.words[i].box
                nx0, ny0, nx1, ny1 = out.words[i].box
                if (ox1 - ox0, oy1 - oy0) == (nx1 - nx0, ny1 - ny0) and not any(
                        j != i and j in moved and _overlap(out.words[j].box, out.words[i].box) for j in moved):
                    assert np.array_equal(after[ny0:ny1, nx0:nx1], before[oy0:oy1, ox0:ox1])
        pairs += counts["pairs"]
        eligible += counts["eligible"]
    assert pairs > 50 and eligible > 20


def _overlap(a, b):
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def test_value_location_augment_leaves_lone_shapes_alone():
    doc = swap_form()
    doc = doc.replace(entities=tuple(e for e in doc.entities if e.id not in (3, 4)))  # Date: is now alone
    out, counts = run("value_location_augment", doc, 0)
    assert out is doc and counts == {"pairs": 2, "eligible": 0, "moved": 0, "changed": 0}
    with pytest.raises(SkipDocument):
        make_shift({"shift": "value_location_augment"}).apply(Document("e", noise_page()), np.random.default_rng(0))
