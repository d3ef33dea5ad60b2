"""The ID reference equals what models are fine-tuned on: the Hub FUNSD loaders' tokens, tags and boxes.

The two references below are written here from the loaders' published code
(not imported, not copied): microsoft/unilm's ``layoutlmv3/layoutlmft/data/funsd.py``
(segment-level boxes, ``get_line_bbox``: the data of ``nielsr/funsd-layoutlmv3``
and the LayoutLMv3 tutorials) and ``layoutlmft/layoutlmft/data/datasets/funsd.py``
(word-level boxes, as ``nielsr/funsd``). Both walk the sorted annotation
files, drop words whose text is blank, tag ``other`` words ``O`` and the
others ``B-``/``I-``, and normalise with ``int(1000 * x / size)``.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from datasets import load_dataset
from PIL import Image

from dogood.core.errors import RecipeError
from dogood.core.schema import FULL_COLUMN, FUNSD_NER_TAGS, features_for, token_boxes
from dogood.pipeline.build import build
from dogood.pipeline.recipe import load_recipe, parse_recipe

# Columns the Hub's FUNSD, RVL-CDIP and DocVQA loaders use for something else than dogood would put there.
HUB_COLUMNS = {"words", "boxes", "bbox", "image_path", "path", "width", "height", "entities", "questionId",
               "question", "answers", "ocr_tokens", "label_names"}


def unilm_reference(funsd_dir, segment: bool) -> list[dict]:
    """FUNSD test as unilm's loaders yield it (without the 224x224 image): tokens, tags, boxes per form."""
    folder = funsd_dir / "testing_data"
    rows = []
    for file in sorted((folder / "annotations").iterdir()):
        data = json.loads(file.read_text(encoding="utf8"))
        width, height = Image.open(folder / "images" / file.name.replace("json", "png")).size
        tokens, tags, boxes = [], [], []
        for item in data["form"]:
            words = [w for w in item["words"] if w["text"].strip() != ""]
            if not words:
                continue
            line = []
            for k, w in enumerate(words):
                tokens.append(w["text"])
                tags.append("O" if item["label"] == "other" else ("B-" if k == 0 else "I-") + item["label"].upper())
                b = w["box"]
                line.append([int(1000 * b[0] / width), int(1000 * b[1] / height),
                             int(1000 * b[2] / width), int(1000 * b[3] / height)])
            if segment:  # get_line_bbox: min/max over every x and every y of the entity's normalised boxes
                xs = [v for box in line for v in box[0::2]]
                ys = [v for box in line for v in box[1::2]]
                line = [[min(xs), min(ys), max(xs), max(ys)] for _ in line]
            boxes.extend(line)
        rows.append({"id": file.stem, "tokens": tokens, "ner_tags": tags, "bboxes": boxes})
    return rows


@pytest.fixture(scope="module")
def funsd_builds(funsd_dir, tmp_path_factory):
    """The `funsd` ID recipe built with default options, and with --box-level word."""
    base = tmp_path_factory.mktemp("conventions")
    recipe = load_recipe("funsd")
    build(recipe, base / "segment", source_path=funsd_dir, progress=False)
    build(recipe, base / "word", source_path=funsd_dir, progress=False, box_level="word")
    out = {level: load_dataset(str(base / level), split="test") for level in ("segment", "word")}
    out["folders"] = {level: base / level for level in ("segment", "word")}
    return out


def test_the_card_and_the_build_record_name_the_convention(funsd_builds):
    for level, folder in funsd_builds["folders"].items():
        card = (folder / "README.md").read_text()
        assert f"**Boxes: {level} level.**" in card
        assert json.loads((folder / "dogood_build.json").read_text())["box_level"] == level
    assert "microsoft/unilm's LayoutLMv3 FUNSD loader" in (funsd_builds["folders"]["segment"] / "README.md").read_text()


@pytest.mark.parametrize("level", ["segment", "word"])
def test_id_build_equals_the_unilm_loader_on_all_50_test_forms(funsd_builds, funsd_dir, level):
    ds = funsd_builds[level]
    reference = unilm_reference(funsd_dir, segment=level == "segment")
    assert len(ds) == len(reference) == 50
    names = ds.features["ner_tags"].feature.names
    assert names == list(FUNSD_NER_TAGS)
    tokens = 0
    for row, ref in zip(ds, reference):
        assert row["id"] == ref["id"]  # unilm numbers the forms 0..49 in this order; dogood keeps the file stem
        assert row["tokens"] == ref["tokens"]
        assert [names[t] for t in row["ner_tags"]] == ref["ner_tags"]
        assert row["bboxes"] == ref["bboxes"]
        tokens += len(ref["tokens"])
    assert tokens == 8973 - 266  # FUNSD test's words less the blank ones


def test_segment_and_word_boxes_differ_where_the_loaders_do(funsd_builds, funsd_dir):
    """7,874 of 8,707 test tokens get another box at segment level: the layout shift a word-level ID set would be."""
    differ = sum(a != b for s, w in zip(funsd_builds["segment"], funsd_builds["word"])
                 for a, b in zip(s["bboxes"], w["bboxes"]))
    seg, word = unilm_reference(funsd_dir, True), unilm_reference(funsd_dir, False)
    expected = sum(a != b for s, w in zip(seg, word) for a, b in zip(s["bboxes"], w["bboxes"]))
    assert differ == expected == 7874


def test_segment_boxes_enclose_their_tokens_word_boxes(funsd_builds):
    for s, w in zip(funsd_builds["segment"], funsd_builds["word"]):
        for seg, word in zip(s["bboxes"], w["bboxes"]):
            assert seg[0] <= word[0] and seg[1] <= word[1] and seg[2] >= word[2] and seg[3] >= word[3]


def test_images_decode_rgb_and_columns_do_not_shadow_hub_columns(funsd_builds, funsd_dir):
    ds = funsd_builds["segment"]
    assert set(ds.column_names) == {"id", "tokens", "bboxes", "ner_tags", "image", FULL_COLUMN}
    assert not set(ds.column_names) & HUB_COLUMNS
    row = ds[0]
    assert row["image"].mode == "RGB"
    original = Image.open(funsd_dir / "testing_data" / "images" / f"{row['id']}.png")
    assert original.mode == "L"  # the scans are grayscale; the loaders give them as RGB, and so does dogood
    assert np.array_equal(np.asarray(row["image"]), np.asarray(original.convert("RGB")))
    with pytest.raises(KeyError):
        row["words"]  # code written for nielsr/funsd's `words` fails loudly instead of reading dogood's
    full = row[FULL_COLUMN]["words"]
    assert [w for w in full if w.strip()] == row["tokens"] and len(full) > len(row["tokens"])  # blank words kept there


@pytest.mark.parametrize("schema, mode", [("funsd", "RGB"), ("rvl_cdip", "L"), ("docvqa", "RGB")])
def test_every_schema_names_one_image_mode_and_no_hub_column(schema, mode):
    features = features_for(schema)
    assert features["image"].mode == mode
    assert not set(features) & HUB_COLUMNS


def test_token_boxes_of_a_word_in_no_entity_is_its_own(funsd_test):
    doc = funsd_test.load(funsd_test.ids()[0])
    loose = doc.replace(entities=doc.entities[1:])
    first = [i for i in doc.entities[0].word_ids if doc.words[i].text.strip()]
    index = list(range(len(doc.words)))
    index = [i for i in index if doc.words[i].text.strip()]
    boxes = dict(zip(index, token_boxes(loose, "segment", index)))
    assert all(boxes[i] == doc.words[i].box for i in first)


# -- conventions in recipes and shifts -------------------------------------------------------------------------------

def _recipe(**extra):
    data = {"name": "t", "version": "1.0.0", "source": {"kind": "funsd"}, "configs": {"c": []}}
    data.update(extra)
    return parse_recipe(data)


def test_unknown_box_level_in_a_recipe_names_it():
    with pytest.raises(RecipeError, match="box_level must be one of segment, word, got 'cell'"):
        _recipe(box_level="cell")


def test_a_shift_that_cannot_apply_under_a_convention_names_recipe_and_config(funsd_dir, tmp_path):
    recipe = _recipe(configs={"jitter": [{"shift": "center_shift"}]})
    with pytest.raises(RecipeError, match=r"recipe 't', config 'jitter': shift 'center_shift' cannot be written with "
                                          r"box_level 'segment'"):
        build(recipe, tmp_path / "out", source_path=funsd_dir, limit=1, progress=False)
    assert not (tmp_path / "out").exists()
    merge = _recipe(configs={"m": [{"shift": "merge", "level": "word"}]})
    with pytest.raises(RecipeError, match=r"config 'm': merge with level: word .* use level: entity"):
        build(merge, tmp_path / "out", source_path=funsd_dir, limit=1, progress=False)


def test_segment_level_on_ocr_data_is_refused(tmp_path, data_dir):
    recipe = parse_recipe({"name": "r", "version": "1.0.0", "source": {"kind": "rvl_cdip"}, "configs": {"c": []},
                           "box_level": "segment"})
    with pytest.raises(RecipeError, match="recipe 'r': box_level segment needs entities"):
        build(recipe, tmp_path / "out", source_path=data_dir / "rvl_cdip", limit=1, progress=False)


def test_merge_at_segment_level_merges_segments(funsd_test):
    """Under segment boxes `merge` takes entities as units: tokens of one entity always share one box."""
    from dogood.core.schema import document_to_row
    from dogood.shifts import make_shift

    doc = funsd_test.load(funsd_test.ids()[3])
    merged = make_shift({"shift": "merge", "lambda_x": 10, "lambda_y": 5, "level": "entity"})(doc, 0)
    row = document_to_row(merged, "funsd", "segment")
    before = document_to_row(doc, "funsd", "segment")
    groups = {}
    for box in row["bboxes"]:
        groups[tuple(box)] = groups.get(tuple(box), 0) + 1
    assert len(groups) < len({tuple(b) for b in before["bboxes"]})  # segments merged into fewer blocks
    for ent in merged.entities:  # every merged block encloses whole segments
        ids = [i for i in ent.word_ids if merged.words[i].text.strip()]
        assert len({merged.words[i].box for i in ids}) <= 1
    # at word level the same shift gives the same blocks: an entity's words all share their group's box
    assert document_to_row(merged, "funsd", "word")["bboxes"] == row["bboxes"]


def test_funsd_fa_is_word_level_and_funsd_l_merges_segments():
    assert load_recipe("funsd-fa").box_level == "word"
    assert all(step.get("level") == "entity" for name, chain in load_recipe("funsd-l").configs.items()
               if name.startswith("merge") for step in chain)


def _layout_shifts():
    from dogood.shifts import SHIFTS

    return sorted(name for name, cls in SHIFTS.items() if cls.family == "layout")


@pytest.mark.parametrize("name", _layout_shifts())
def test_each_layout_shift_under_each_convention(name, funsd_test, gold_scorer):
    """Word level: each token its own shifted box. Segment level: the tokens of an entity share the union of their
    shifted boxes. A convention a shift does not declare is refused with a reason."""
    from dogood.core.boxes import normalize_box
    from dogood.core.schema import BOX_LEVELS, document_to_row, iob_tags
    from dogood.shifts import SHIFTS, make_shift

    spec = {"shift": name, **({"level": "entity"} if name == "merge" else {}),
            **({"threshold": 0.0, "cache": False} if name == "move" else {})}
    shift = make_shift(spec)
    if name == "move":
        shift._model = gold_scorer
    doc = funsd_test.load(funsd_test.ids()[0])
    out = shift(doc, 3)
    index = iob_tags(out)[0]
    for level in BOX_LEVELS:
        if level not in SHIFTS[name].box_levels:
            with pytest.raises(ValueError, match=f"cannot be written with box_level '{level}'"):
                shift.check_box_level(level)
            continue
        shift.check_box_level(level)
        boxes = document_to_row(out, "funsd", level)["bboxes"]
        words = [normalize_box(out.words[i].box, out.width, out.height) for i in index]
        if level == "word":
            assert boxes == words
            continue
        at = dict(zip(index, boxes))
        for ent in out.entities:
            ids = [i for i in ent.word_ids if i in at]
            if ids:
                assert len({tuple(at[i]) for i in ids}) == 1  # one box per segment
                seg = at[ids[0]]
                for i in ids:
                    w = words[index.index(i)]
                    assert seg[0] <= w[0] and seg[1] <= w[1] and seg[2] >= w[2] and seg[3] >= w[3]
