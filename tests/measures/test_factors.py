"""The factor measures (:mod:`dogood.measures.factors`) on hand-made pages: each counts what it says, and only that."""

from __future__ import annotations

import numpy as np
import pytest

from dogood.core.document import Document, Entity, Word
from dogood.measures.factors import (
    FACTORS,
    TOLERANCE,
    SourcePage,
    changed_factors,
    measure_factors,
    pair_words,
    shares,
    undeclared,
    unseen,
)

W, H = 600, 400
BOXES = [(40, 40, 140, 70), (160, 40, 260, 70), (40, 120, 200, 150), (220, 120, 300, 150), (40, 220, 160, 250),
         (180, 220, 330, 250)]
TEXTS = ["Date:", "1992", "Name:", "Smith", "Phone:", "555-1234"]


def page() -> np.ndarray:
    """A grey paper page with text-like ink (vertical strokes) in every word box."""
    rng = np.random.default_rng(0)
    pixels = np.full((H, W), 235, np.uint8) + rng.integers(0, 6, (H, W)).astype(np.uint8)
    for x0, y0, x1, y1 in BOXES:
        for x in range(x0 + 4, x1 - 4, 9):
            pixels[y0 + 5:y1 - 5, x:x + 3] = 20
            pixels[y0 + 5:y0 + 8, x:x + 7] = 20
    return pixels


def form(pixels=None, words=None, entities=None) -> Document:
    words = words if words is not None else [Word(t, b) for t, b in zip(TEXTS, BOXES)]
    if entities is None:
        entities = [Entity(0, "question", (0,), ((0, 1),)), Entity(1, "answer", (1,), ((0, 1),)),
                    Entity(2, "question", (2,), ((2, 3),)), Entity(3, "answer", (3,), ((2, 3),)),
                    Entity(4, "question", (4,)), Entity(5, "answer", (5,))]
    return Document("p", page() if pixels is None else pixels, tuple(words), tuple(entities))


def changed(original: Document, shifted: Document) -> dict[str, tuple[int, int]]:
    return {k: (v["changed"], v["of"]) for k, v in measure_factors(original, shifted).items()}


def only(result: dict[str, tuple[int, int]], *names: str) -> None:
    """Every factor but ``names`` measured no change."""
    assert all(result[k][0] == 0 for k in FACTORS if k not in names), result


def test_an_unchanged_document_changes_nothing():
    doc = form()
    result = changed(doc, doc.replace(words=doc.words))
    only(result)
    assert result["text"] == (0, 6) and result["geometry"] == (0, 1) and result["reading_order"] == (0, 6)
    outside = np.ones((H, W), bool)
    for x0, y0, x1, y1 in BOXES:
        outside[y0 - 2:y1 + 2, x0 - 2:x1 + 2] = False
    assert result["background"] == (0, int(outside.sum()))


def test_a_text_change_is_text_only():
    doc = form()
    words = list(doc.words)
    words[1] = Word("1993", words[1].box)
    result = changed(doc, doc.replace(words=tuple(words)))
    only(result, "text")
    assert result["text"] == (1, 6)


def test_a_shuffled_sequence_is_word_order_not_reading_order():
    from dogood.language.edits import reorder_words

    doc = form()
    out = reorder_words(doc, [1, 0, 3, 2, 5, 4])  # every entity keeps its word, the sequence is reordered
    result = changed(doc, out)
    only(result, "word_order")
    assert result["word_order"] == (3, 6)  # a longest run in source order keeps 3 of the 6


def test_removed_and_inserted_words_are_the_word_set():
    from dogood.language.edits import delete_words

    doc = form()
    out = delete_words(doc, [5])
    result = changed(doc, out)
    only(result, "word_set")
    assert result["word_set"] == (1, 6)
    grown = doc.replace(words=doc.words + (Word("extra", (400, 300, 450, 320)),))
    result = changed(doc, grown)
    only(result, "word_set")
    assert result["word_set"] == (1, 7)


def test_boxes_moved_and_resized():
    doc = form()
    words = list(doc.words)
    x0, y0, x1, y1 = words[0].box
    words[0] = Word(words[0].text, (x0 + 5, y0, x1 + 5, y1))  # moved, same size
    x0, y0, x1, y1 = words[2].box
    words[2] = Word(words[2].text, (x0 - 20, y0 - 10, x1 + 20, y1 + 10))  # grown about its centre: size only
    result = changed(doc, doc.replace(words=tuple(words)))
    only(result, "box_position", "box_size")
    assert result["box_position"] == (1, 6) and result["box_size"] == (1, 6)


def test_links_and_entity_grouping_are_the_reading_order():
    doc = form()
    ents = list(doc.entities)
    ents[0] = Entity(0, "question", (0,))  # a link lost
    ents[1] = Entity(1, "answer", (1,))
    result = changed(doc, doc.replace(entities=tuple(ents)))
    only(result, "reading_order")
    assert result["reading_order"] == (2, 6)


def test_ink_inside_a_box_and_pixels_outside_the_boxes():
    doc = form()
    pixels = doc.image.to_array().copy()
    x0, y0, x1, y1 = BOXES[3]
    pixels[y0:y1, x0:x1] = 235  # the word's ink erased
    pixels[300:320, 400:450] = 0  # a blot away from every box: 1,000 pixels
    result = changed(doc, doc.replace(image=pixels))
    only(result, "ink", "background")
    assert result["ink"] == (1, 6) and result["background"][0] == 1000


def test_a_padded_page_is_geometry_and_box_position_only():
    doc = form()
    pixels = np.full((H + 30, W + 50), 255, np.uint8)
    pixels[20:20 + H, 10:10 + W] = doc.image.to_array()
    words = tuple(Word(w.text, (w.box[0] + 10, w.box[1] + 20, w.box[2] + 10, w.box[3] + 20)) for w in doc.words)
    result = changed(doc, doc.replace(image=pixels, words=words))
    only(result, "geometry", "box_position")
    assert result["geometry"] == (1, 1) and result["box_position"] == (6, 6) and result["background"][1] > 0


def test_content_displaced_on_the_page_is_geometry():
    doc = form()
    shifted = np.roll(doc.image.to_array(), (5, 4), axis=(0, 1))  # the whole page content moved
    words = tuple(Word(w.text, (w.box[0] + 4, w.box[1] + 5, w.box[2] + 4, w.box[3] + 5)) for w in doc.words)
    result = changed(doc, doc.replace(image=shifted, words=words))
    assert result["geometry"] == (1, 1)
    # a background replaced around ink that stays in place is no geometry, however little of the page matches
    rng = np.random.default_rng(2)
    pixels = doc.image.to_array()
    photo = np.where(pixels < 100, pixels, rng.integers(60, 200, (H, W))).astype(np.uint8)
    result = changed(doc, doc.replace(image=photo))
    assert result["geometry"] == (0, 1) and result["background"][0] > 0


def test_noise_on_every_word_is_quality_and_ink():
    doc = form()
    rng = np.random.default_rng(1)
    noisy = np.clip(doc.image.to_array().astype(int) + rng.normal(0, 40, (H, W)), 0, 255).astype(np.uint8)
    result = changed(doc, doc.replace(image=noisy))
    only(result, "ink", "background", "quality")
    assert result["quality"] == (1, 1) and result["ink"] == (6, 6)
    # the same noise on one word only: its ink, not the page's quality
    one = doc.image.to_array().copy()
    x0, y0, x1, y1 = BOXES[0]
    one[y0:y1, x0:x1] = noisy[y0:y1, x0:x1]
    result = changed(doc, doc.replace(image=one))
    only(result, "ink")
    assert result["ink"] == (1, 6)


def test_a_shared_source_page_gives_the_same_counts():
    doc = form()
    noisy = doc.image.to_array().copy()
    noisy[::7, ::5] = 0
    out = doc.replace(image=noisy)
    assert measure_factors(doc, out, SourcePage(doc)) == measure_factors(doc, out)


def test_words_that_trade_boxes_keep_their_text_and_texts_that_trade_boxes_change_text():
    doc = form()
    a, b = doc.words[2], doc.words[3]
    traded = list(doc.words)
    traded[2], traded[3] = Word(a.text, b.box), Word(b.text, a.box)  # boxes trade, the sequence keeps its texts
    p = pair_words(doc, doc.replace(words=tuple(traded)))
    assert (2, 2) in p.pairs and (3, 3) in p.pairs
    result = changed(doc, doc.replace(words=tuple(traded)))
    assert result["text"] == (0, 6) and result["box_position"] == (2, 6)


def test_shares_tolerance_and_what_a_model_sees():
    counts = {"text": {"changed": 1, "of": 2000}, "ink": {"changed": 30, "of": 100}, "reading_order": {"of": 0}}
    s = shares(counts)
    assert s["text"] == 0.0005 and s["ink"] == 0.3 and s["reading_order"] is None and s["geometry"] is None
    assert s["text"] < TOLERANCE["text"]
    assert changed_factors(counts) == ["ink"]
    assert undeclared(counts, {"text"}) == ["ink"] and undeclared(counts, {"ink"}) == []
    assert unseen(counts, {"text", "layout"}) == ["ink"] and unseen(counts, {"image"}) is None


def test_build_statistics_add_up_the_factors_whatever_the_workers(funsd_dir, tmp_path):
    """The card's factor counts are the same with one worker and with two (summed integers)."""
    import json

    from dogood.pipeline.build import build
    from dogood.pipeline.recipe import load_recipe

    recipe = load_recipe("funsd-t")
    for n in (1, 2):
        build(recipe, tmp_path / f"w{n}" / "out", source_path=funsd_dir, limit=3, configs=["char_deletion"], num_proc=n,
              progress=False)
    one, two = (json.loads((tmp_path / f"w{n}" / "out" / "dogood_build.json").read_text()) for n in (1, 2))
    factors = one["stats"]["char_deletion"]["test"]["factors"]
    assert factors == two["stats"]["char_deletion"]["test"]["factors"]
    assert factors["text"]["changed"] > 0 and all(factors[k]["changed"] == 0 for k in FACTORS if k != "text")
    assert (tmp_path / "w1" / "out" / "README.md").read_bytes() == (tmp_path / "w2" / "out" / "README.md").read_bytes()


@pytest.mark.parametrize("name", sorted(FACTORS))
def test_every_factor_has_a_measure_a_tolerance_and_a_help(name):
    from dogood.measures.factors import FACTOR_HELP, MEASURES, SEEN_WITH, UNITS

    assert callable(MEASURES[name]) and 0 < TOLERANCE[name] < 0.05
    assert FACTOR_HELP[name] and UNITS[name] and SEEN_WITH[name]
