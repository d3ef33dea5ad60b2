"""dogood.transform at training time: Hub-schema rows in, the same schema out, deterministic draws."""

from __future__ import annotations

import numpy as np
import pytest
from datasets import Dataset, load_dataset
from PIL import Image

import dogood
from dogood.core.errors import DocumentError, DogoodError, RecipeError
from dogood.core.schema import FULL_COLUMN, FUNSD_NER_TAGS
from dogood.page.render import reach
from dogood.pipeline.build import build
from dogood.pipeline.recipe import load_recipe
from dogood.sources.rows import pixel_box, row_to_doc

HUB_FUNSD = ("id", "tokens", "bboxes", "ner_tags", "image")  # nielsr/funsd-layoutlmv3's columns
N = 4


@pytest.fixture(scope="module")
def builds(funsd_dir, tmp_path_factory):
    """FUNSD test (first N forms): the ID rows at segment and word level, and funsd-l merge / funsd-t char_deletion."""
    root = tmp_path_factory.mktemp("augment")
    out = {}
    for level in ("segment", "word"):
        build(load_recipe("funsd"), root / f"id-{level}", source_path=funsd_dir, limit=N, progress=False,
              box_level=level)
        out[level] = load_dataset(str(root / f"id-{level}"), "original", split="test")
    build(load_recipe("funsd-l"), root / "funsd-l", source_path=funsd_dir, limit=N, progress=False, configs=["merge"])
    out["merge"] = load_dataset(str(root / "funsd-l"), "merge", split="test")
    build(load_recipe("funsd-t"), root / "funsd-t", source_path=funsd_dir, limit=N, progress=False,
          configs=["char_deletion"])
    out["char_deletion"] = load_dataset(str(root / "funsd-t"), "char_deletion", split="test")
    return out


def hub(ds: Dataset) -> Dataset:
    """The plain Hub schema: dogood's rows without the full record."""
    return ds.remove_columns([c for c in ds.column_names if c not in HUB_FUNSD])


def identity(batch):
    return batch


def test_a_recipe_config_at_training_time_reproduces_the_built_rows(builds):
    """dogood's own rows through Compose.from_recipe with the recipe's seed give the built dataset, byte for byte."""
    for recipe, config in (("funsd-l", "merge"), ("funsd-t", "char_deletion")):
        t = dogood.transform(dogood.Compose.from_recipe(recipe, config), seed=load_recipe(recipe).seed)
        for i in range(N):
            got, want = t(builds["segment"][i]), builds[config][i]
            for column in ("id", "tokens", "bboxes", "ner_tags", FULL_COLUMN):
                assert got[column] == want[column], (config, i, column)
            assert np.array_equal(np.asarray(got["image"]), np.asarray(want["image"]))


def test_hub_rows_in_a_dataloader_keep_labels_and_tokens_and_are_deterministic(builds):
    """nielsr/funsd-layoutlmv3 rows, with_transform, a DataLoader with 2 workers: a layout and an image shift."""
    torch = pytest.importorskip("torch", reason="a torch DataLoader: install torch (the hf or text extra)")
    ds = hub(builds["segment"])
    chain = dogood.Compose([dogood.OneOf([{"shift": "distort", "kinds": ["fold"]},
                                          {"shift": "distort", "kinds": ["perspective"]}]),
                            dogood.Step({"shift": "merge", "level": "entity", "lambda_x": 10, "lambda_y": 5}, p=0.5)])
    t = dogood.transform(chain, seed=3, per_epoch=True)

    def run(workers: int, epoch: int):
        t.set_epoch(epoch)
        loader = torch.utils.data.DataLoader(ds.with_transform(t), batch_size=2, num_workers=workers,
                                             collate_fn=identity)
        return [row for batch in loader for row in batch]

    first = run(2, 0)
    assert [r["id"] for r in first] == ds["id"]
    for row, source in zip(first, ds):
        assert row["tokens"] == source["tokens"] and row["ner_tags"] == source["ner_tags"]
        assert set(row) == set(HUB_FUNSD) and isinstance(row["image"], Image.Image) and row["image"].mode == "RGB"
        boxes = np.array(row["bboxes"])
        assert boxes.min() >= 0 and boxes.max() <= 1000
        assert (boxes[:, 2] >= boxes[:, 0]).all() and (boxes[:, 3] >= boxes[:, 1]).all()
        moved = np.abs(boxes - np.array(source["bboxes"])).max(axis=1)
        assert (moved > 0).mean() > 0.5  # the page was distorted: most boxes followed it
        changed = np.asarray(row["image"]) != np.asarray(source["image"].convert("RGB"))
        assert changed.any(axis=2).mean() > 0.05
    again = run(0, 0)  # in this process, no workers: the same draws
    for a, b in zip(first, again):
        assert a["bboxes"] == b["bboxes"] and np.array_equal(np.asarray(a["image"]), np.asarray(b["image"]))
    other_epoch = run(2, 1)
    assert any(a["bboxes"] != b["bboxes"] for a, b in zip(first, other_epoch))


def test_text_shift_changes_pixels_only_where_words_changed(builds):
    """Word-level rows (nielsr/funsd's boxes, with the image): a redrawn word changes pixels inside its box only, and
    around it no farther than the strokes its box cuts reach (:func:`dogood.page.render.reach`)."""
    ds = hub(builds["word"])
    t = dogood.transform({"shift": "char_deletion", "fraction": 0.3, "render": True}, seed=0)
    shifted = ds.map(t)  # one row at a time
    total_changed = 0
    for row, source in zip(shifted, ds):
        assert row["ner_tags"] == source["ner_tags"] and len(row["tokens"]) == len(source["tokens"])
        before = np.asarray(source["image"].convert("L")).astype(int)
        after = np.asarray(row["image"].convert("L")).astype(int)
        h, w = before.shape
        inside = np.zeros_like(before, dtype=bool)
        changed_words = [i for i, (a, b) in enumerate(zip(source["tokens"], row["tokens"])) if a != b]
        total_changed += len(changed_words)
        for i in changed_words:
            assert len(row["tokens"][i]) == len(source["tokens"][i]) - 1
            x0, y0, x1, y1 = pixel_box(source["bboxes"][i], w, h)
            grow = reach((x0, y0, x1, y1))
            inside[max(0, y0 - grow):y1 + grow + 1, max(0, x0 - grow):x1 + grow + 1] = True
            assert (before[y0:y1, x0:x1] != after[y0:y1, x0:x1]).any()
        assert not (before != after)[~inside].any()
    assert total_changed > 20


def test_rvl_cdip_rows_without_ids_are_named_by_their_pixels():
    """aharley/rvl_cdip rows (image, label): the label and the L mode are kept; draws follow the image, not the order."""
    rng = np.random.default_rng(0)
    pages = [np.full((300, 240), 255, np.uint8) for _ in range(3)]
    for page in pages:
        page[rng.integers(20, 260, 40), rng.integers(20, 200, 40)] = 0
    ds = Dataset.from_dict({"image": [Image.fromarray(p) for p in pages], "label": [0, 5, 15]})
    t = dogood.transform({"shift": "distort", "kinds": ["perspective"]}, seed=1)
    forward = [t(ds[i]) for i in range(3)]
    backward = [t(ds[i]) for i in (2, 1, 0)][::-1]
    for row, back, source in zip(forward, backward, ds):
        assert row["label"] == source["label"] and row["image"].mode == "L"
        assert np.array_equal(np.asarray(row["image"]), np.asarray(back["image"]))
        assert not np.array_equal(np.asarray(row["image"]), np.asarray(source["image"]))


def test_p_and_one_of_choose_steps_and_skipping_keeps_the_other_draws(builds):
    row = builds["segment"][0]
    assert dogood.transform(dogood.Step({"shift": "merge", "level": "entity"}, p=0.0))(row)[FULL_COLUMN]["provenance"] == []
    one = dogood.transform(dogood.OneOf([{"shift": "char_deletion"}, {"shift": "homoglyph_swap"}]), seed=0)
    steps = [one(builds["segment"][i])[FULL_COLUMN]["provenance"] for i in range(N)]
    assert all(len(s) == 1 for s in steps)
    # a step's draws depend on its position and content only: with the first step skipped, the second is the same
    both = dogood.Compose([{"shift": "char_deletion"}, {"shift": "merge", "level": "entity"}])
    second = dogood.Compose([dogood.Step({"shift": "char_deletion"}, p=0.0), {"shift": "merge", "level": "entity"}])
    a = dogood.transform(both)(row)[FULL_COLUMN]["provenance"]
    b = dogood.transform(second)(row)[FULL_COLUMN]["provenance"]
    assert [p["shift"] for p in b] == ["merge"] and a[1]["seed"] == b[0]["seed"]


def test_rows_the_chain_cannot_take_are_refused_clearly(builds):
    row = {k: v for k, v in builds["segment"][0].items() if k in HUB_FUNSD}
    with pytest.raises(DogoodError, match="merge.*box_level"):
        dogood.transform({"shift": "merge", "level": "word"})(row)
    path_row = {"id": "a", "words": ["x"], "bboxes": [[0, 0, 10, 10]], "ner_tags": [0], "image_path": "/etc/passwd"}
    with pytest.raises(DocumentError, match="allow_local_paths"):
        dogood.transform({"shift": "merge", "level": "entity"})(path_row)
    with pytest.raises(RecipeError, match="p must be"):
        dogood.Step({"shift": "merge", "level": "entity"}, p=2)
    with pytest.raises(RecipeError, match="no config"):
        dogood.Compose.from_recipe("funsd-l", "nope")


def test_pixel_box_round_trips_normalised_boxes():
    """An unshifted word keeps its 0-1000 box exactly on pages narrower and wider than 1000 pixels."""
    from dogood.core.boxes import normalize_box

    for w, h in ((762, 1000), (224, 224), (2550, 3300)):
        for x in range(w + 1):
            box = normalize_box((x, 0, x, h), w, h)
            assert normalize_box(pixel_box(box, w, h), w, h) == box


@pytest.mark.parametrize("image", [Image.new("RGBA", (20, 10), (0, 0, 0, 0)), np.zeros((10, 20), np.uint8),
                                   np.zeros((10, 20, 3), np.uint8), np.zeros((10, 20), bool)])
def test_document_takes_pil_images_and_arrays(image):
    doc = dogood.Document("d", image, [("a", (0, 0, 5, 5))])
    assert (doc.width, doc.height) == (20, 10) and doc.image.to_array().dtype == np.uint8


@pytest.mark.parametrize("image, message", [(np.zeros((10, 20), np.float64), "float64"),
                                            (np.zeros((10, 20, 2), np.uint8), r"\(10, 20, 2\)"),
                                            ("/etc/passwd", "does not open files"), (None, "NoneType")])
def test_document_refuses_images_it_cannot_take_when_built(image, message):
    with pytest.raises(DocumentError, match=message) as info:
        dogood.Document("doc-7", image)
    assert "doc-7" in str(info.value)


def test_labels_given_as_names_stay_names(builds):
    row = {k: v for k, v in builds["segment"][0].items() if k in HUB_FUNSD}
    row["ner_tags"] = [FUNSD_NER_TAGS[t] for t in row["ner_tags"]]
    out = dogood.transform({"shift": "merge", "level": "entity"})(row)
    assert out["ner_tags"] == row["ner_tags"]


def test_rows_with_other_labels_keep_them(builds):
    """CORD-like tag names (given as tag_names) come back as the same integers; dogood rows keep their record."""
    rename = {"HEADER": "TOTAL", "QUESTION": "MENU.NM", "ANSWER": "MENU.PRICE"}
    names = ["O"] + [f"{p}-{rename[t]}" for t in ("HEADER", "QUESTION", "ANSWER") for p in ("B", "I")]
    row = {k: v for k, v in builds["segment"][0].items() if k in HUB_FUNSD}
    t = dogood.transform({"shift": "merge", "level": "entity"}, tag_names=names)
    out = t(row)
    assert out["ner_tags"] == row["ner_tags"]
    as_names = dict(row, ner_tags=[names[i] for i in row["ner_tags"]])
    assert t(as_names)["ner_tags"] == as_names["ner_tags"]


# -- nothing to pay for nothing (issue 31) ------------------------------------------------------------------------


def test_boxes_converted_at_once_equal_the_one_box_functions():
    """pixel_boxes and normalize_boxes (NumPy, all boxes at once) give the values of pixel_box / normalize_box."""
    from dogood.core.boxes import normalize_box, normalize_boxes
    from dogood.sources.rows import pixel_boxes

    rng = np.random.default_rng(0)
    for w, h in ((762, 1000), (224, 224), (2550, 3300), (1, 7)):
        given = rng.integers(-50, 1100, (500, 4)).tolist()
        assert pixel_boxes(given, w, h) == [pixel_box(b, w, h) for b in given]
        pixels = rng.integers(0, max(w, h) + 1, (500, 4)).tolist()
        assert normalize_boxes(pixels, w, h) == [normalize_box(b, w, h) for b in pixels]
    assert pixel_boxes([[1.5, 2, 3, 4]], 100, 100) == [pixel_box([1.5, 2, 3, 4], 100, 100)]  # not integers: one by one
    assert pixel_boxes([], 10, 10) == [] and normalize_boxes([], 10, 10) == []


def test_a_row_no_step_runs_on_comes_back_as_it_came_without_being_read(builds, monkeypatch):
    """An empty chain, or a step drawn not to run, returns the row's own values (its very image object) and reads
    nothing: not even a row that could not be made into a record."""
    import dogood.augment

    row = {k: v for k, v in builds["word"][0].items() if k in HUB_FUNSD}
    broken = dict(row, ner_tags=row["ner_tags"][:-1])  # tokens and tags differ in length: no record can be made
    monkeypatch.setattr(dogood.augment, "row_to_doc", lambda *a, **k: pytest.fail("the row was read"))
    for chain in ([], dogood.Step({"shift": "distort"}, p=0.0), dogood.OneOf([{"shift": "distort"}], p=0.0)):
        t = dogood.transform(chain)
        for given in (row, broken):
            out = t(given)
            assert out == given and out["image"] is given["image"] and out is not given
    batch = {k: [row[k], broken[k]] for k in row}
    out = dogood.transform([])(batch)
    assert out["tokens"] == batch["tokens"] and all(a is b for a, b in zip(out["image"], batch["image"]))


def test_a_shift_that_reads_no_pixels_takes_none(builds, monkeypatch):
    """Layout and text shifts without render: the page is never converted to pixels and comes back as the same
    object; dogood's own rows rewrite their record without encoding any image."""
    from dogood.core.document import PageImage

    monkeypatch.setattr(PageImage, "to_array", lambda self: pytest.fail("pixels were read"))
    monkeypatch.setattr(PageImage, "encoded_bytes", lambda self: pytest.fail("an image was encoded"))
    for source in (hub(builds["word"]), builds["segment"]):
        row = source[0]
        for step in ({"shift": "merge", "level": "entity"}, {"shift": "char_deletion", "fraction": 0.5}):
            out = dogood.transform(step)(row)
            assert out["image"] is row["image"] and out["tokens"] != row["tokens"] or step["shift"] == "merge"
            assert out["ner_tags"] == row["ner_tags"] and len(out["bboxes"]) == len(row["bboxes"])


def test_an_rgb_page_with_equal_channels_is_shifted_as_the_grayscale_page_it_is(builds):
    """datasets decodes FUNSD's grayscale PNGs to RGB: an image shift draws on the one channel (what a build does)
    and the row gets RGB back, equal to the shift of the L page; a page in colour stays in colour; arrays too."""
    row = {k: v for k, v in hub(builds["word"])[1].items()}
    assert row["image"].mode == "RGB"
    t = dogood.transform({"shift": "distort", "kinds": ["fold"]}, seed=5)
    as_rgb = t(row)
    as_l = t(dict(row, image=row["image"].convert("L")))
    assert as_rgb["image"].mode == "RGB" and as_l["image"].mode == "L"
    assert np.array_equal(np.asarray(as_rgb["image"]), np.asarray(as_l["image"].convert("RGB")))
    assert as_rgb["bboxes"] == as_l["bboxes"] and as_rgb["bboxes"] != row["bboxes"]
    pixels = np.asarray(row["image"])
    as_array = t(dict(row, image=pixels))["image"]
    assert as_array.shape == pixels.shape and np.array_equal(as_array, np.asarray(as_rgb["image"]))
    tinted = pixels.copy()
    tinted[:, :, 0] = np.minimum(255, tinted[:, :, 0].astype(int) + 40).astype(np.uint8)  # a reddish page
    out = np.asarray(t(dict(row, image=Image.fromarray(tinted)))["image"]).astype(int)
    assert (out[:, :, 0] - out[:, :, 1]).max() > 30  # still red where the page is


def test_records_holding_a_pil_image_pickle_and_encode_as_pixels():
    """PageImage.from_pil: pixels taken on first use; pickling (DataLoader workers) and encoding work."""
    import pickle

    from dogood.core.document import PageImage

    gray = np.arange(12 * 10, dtype=np.uint8).reshape(12, 10)
    rgb = Image.fromarray(np.repeat(gray[:, :, None], 3, axis=2))
    page = PageImage.from_pil(rgb)
    assert (page.width, page.height) == (10, 12) and page.modified
    again = pickle.loads(pickle.dumps(page))
    assert np.array_equal(again.to_array(), gray) and np.array_equal(page.to_array(), gray)
    assert np.array_equal(np.asarray(Image.open(__import__("io").BytesIO(page.encoded_bytes()))), gray)
    colour = np.zeros((4, 5, 3), np.uint8)
    colour[..., 2] = 9
    assert PageImage.from_pil(Image.fromarray(colour)).to_array().shape == (4, 5, 3)
    with pytest.raises(ValueError, match="mode L or RGB"):
        PageImage.from_pil(Image.new("RGBA", (3, 3)))


def test_segment_rows_are_redrawn_in_word_boxes_found_from_their_ink(builds):
    """nielsr/funsd-layoutlmv3's rows (every word its segment's box): render finds each word's own box from the
    segment's ink, redraws the changed words there, and the rows keep their segments' boxes."""
    ds = hub(builds["segment"])
    words = builds["word"]
    t = dogood.transform({"shift": "char_deletion", "fraction": 0.3, "render": True}, seed=0)
    changed, found = 0, 0
    for i in range(N):
        source, row = ds[i], t(ds[i])
        assert row["bboxes"] == source["bboxes"] and row["ner_tags"] == source["ner_tags"]
        before = np.asarray(source["image"].convert("L")).astype(int)
        after = np.asarray(row["image"].convert("L")).astype(int)
        h, w = before.shape
        inside = np.zeros_like(before, dtype=bool)
        for k, (a, b) in enumerate(zip(source["tokens"], row["tokens"])):
            if a != b:
                changed += 1
                x0, y0, x1, y1 = pixel_box(source["bboxes"][k], w, h)  # the segment
                wx0, wy0, wx1, wy1 = pixel_box(words[i]["bboxes"][k], w, h)  # FUNSD's own box of the word
                grow = reach((wx0, wy0, wx1, wy1))  # strokes the word's box cuts, erased whole
                inside[max(0, y0 - grow):y1 + grow + 1, max(0, x0 - grow):x1 + grow + 1] = True
                found += bool((before[wy0:wy1, wx0:wx1] != after[wy0:wy1, wx0:wx1]).any())
        assert not (before != after)[~inside].any()  # nothing outside the changed words' segments (and reach)
    assert changed > 20 and found / changed > 0.85  # redrawn where the word is (its box found from the ink)


@pytest.mark.parametrize("shift", ["box_stretch", "center_shift"])
def test_segment_rows_take_word_box_jitter(builds, shift):
    """A shift that moves word boxes one by one acts on the words' boxes found from the ink; each token gets the
    union of its segment's moved words, as a segment-level row does."""
    ds = hub(builds["segment"])
    t = dogood.transform({"shift": shift, "delta": 0.2}, seed=1)
    for i in range(N):
        source, row = ds[i], t(ds[i])
        assert row["tokens"] == source["tokens"] and row["ner_tags"] == source["ner_tags"]
        assert row["bboxes"] != source["bboxes"]
        doc, _ = row_to_doc(source, source["id"])
        for ent in doc.entities:  # tokens of one entity still share one box
            assert len({tuple(row["bboxes"][k]) for k in ent.word_ids}) == 1
