"""Building recipes end to end: FUNSD -> shifts -> Parquet folder -> datasets.load_dataset."""

from __future__ import annotations

import io
import json
from collections import Counter

import datasets
import pytest
from PIL import Image

from dogood.core.schema import document_to_row, row_to_document
from dogood.pipeline.build import BuildError, build
from dogood.pipeline.recipe import load_recipe, parse_recipe
from dogood.sources.hf_dataset import HFDatasetSource

EXPECTED_TAGS = {
    "B-HEADER": 119,
    "I-HEADER": 255,
    "B-QUESTION": 1070,
    "I-QUESTION": 1584,
    "B-ANSWER": 809,
    "I-ANSWER": 2485,
    "O": 2385,
}


#: The FUNSD-L configs these tests build: Algorithm 1, and Move (a model, a cache, pixels moved).
LAYOUT_CONFIGS = ["merge", "move"]


@pytest.fixture(scope="module")
def funsd_l(funsd_dir, tmp_path_factory, trained_baseline):
    import shutil

    from dogood.models import default_baseline_path

    default_baseline_path().parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(trained_baseline.source, default_baseline_path())  # Move's scorer `baseline`
    out = tmp_path_factory.mktemp("build") / "funsd-l"
    build(load_recipe("funsd-l"), out, source_path=funsd_dir, num_proc=1, configs=LAYOUT_CONFIGS, progress=False)
    return out


def test_merge_recipe_loads_offline_with_the_source_counts(funsd_l, funsd_test):
    ds = datasets.load_dataset(str(funsd_l), "merge", split="test")
    assert ds.num_rows == 50
    assert sum(len(t) for t in ds["tokens"]) == 8707
    names = ds.features["ner_tags"].feature.names
    assert names == ["O", "B-HEADER", "I-HEADER", "B-QUESTION", "I-QUESTION", "B-ANSWER", "I-ANSWER"]
    counts = Counter(names[t] for tags in ds["ner_tags"] for t in tags)
    assert dict(counts) == EXPECTED_TAGS
    for row in ds:
        assert len(row["tokens"]) == len(row["bboxes"]) == len(row["ner_tags"])
        assert all(0 <= v <= 1000 for box in row["bboxes"] for v in box)
        assert all(t.strip() for t in row["tokens"])
        image = row["image"]
        assert image.size == (row["dogood"]["width"], row["dogood"]["height"]) and image.mode == "RGB"
        src = funsd_test.load(row["id"])
        assert image.size == (src.width, src.height)
    first = ds[0]
    assert first["dogood"]["provenance"][0]["shift"] == "merge"
    assert json.loads(first["dogood"]["provenance"][0]["params"]) == {
        "lambda_x": 10, "lambda_y": 5, "level": "entity", "until_stable": True}


def test_bboxes_are_the_merged_boxes_normalised(funsd_l, funsd_test):
    from dogood.shifts import MergeBoxes

    ds = datasets.load_dataset(str(funsd_l), "merge", split="test")
    row = ds[3]
    doc = funsd_test.load(row["id"])
    merged = MergeBoxes(10, 5, level="entity")(doc, 0)  # FUNSD-L merges segments
    tokens = [w for w in merged.words if w.text.strip()]
    assert row["tokens"] == [w.text for w in tokens]
    expected = [[int(1000 * b[0] / doc.width), int(1000 * b[1] / doc.height),
                 int(1000 * b[2] / doc.width), int(1000 * b[3] / doc.height)] for b in (w.box for w in tokens)]
    assert row["bboxes"] == expected
    assert len({tuple(b) for b in row["bboxes"]}) < len(row["bboxes"])  # words share block boxes


def test_card_and_manifest_describe_the_build(funsd_l):
    card = (funsd_l / "README.md").read_text()
    assert "config_name: merge" in card and "path: data/merge/test-*.parquet" in card
    assert "`lambda_x=10`" in card and "| test | 50 | 8973 | 8973 | 8707 |" in card
    manifest = json.loads((funsd_l / "dogood_build.json").read_text())
    assert manifest["splits"]["merge"]["test"]["num_examples"] == 50
    assert manifest["skipped"] == []
    assert not list(funsd_l.parent.glob(".funsd-l.partial-*"))


def test_output_is_byte_identical_for_any_number_of_workers(funsd_dir, funsd_l, tmp_path):
    out2 = tmp_path / "two" / funsd_l.name  # the card names the folder: same name, another place
    build(load_recipe("funsd-l"), out2, source_path=funsd_dir, num_proc=2, configs=LAYOUT_CONFIGS, progress=False)
    a = sorted(p.relative_to(funsd_l) for p in funsd_l.rglob("*") if p.is_file())
    b = sorted(p.relative_to(out2) for p in out2.rglob("*") if p.is_file())
    assert a == b
    for rel in a:
        assert (funsd_l / rel).read_bytes() == (out2 / rel).read_bytes(), rel


def test_shards_do_not_depend_on_workers_or_skips(funsd_dir, tmp_path):
    recipe = load_recipe("funsd-l")
    recipe.shard_size = 4
    out1, out2 = tmp_path / "a", tmp_path / "b"
    build(recipe, out1, source_path=funsd_dir, limit=10, configs=["merge"], progress=False)
    build(recipe, out2, source_path=funsd_dir, limit=10, num_proc=2, configs=["merge"], progress=False)
    names = sorted(p.name for p in (out1 / "data" / "merge").iterdir())
    assert names == ["test-00000-of-00003.parquet", "test-00001-of-00003.parquet", "test-00002-of-00003.parquet"]
    for name in names:
        assert (out1 / "data/merge" / name).read_bytes() == (out2 / "data/merge" / name).read_bytes()
    ds = datasets.load_dataset(str(out1), "merge", split="test")
    assert ds.num_rows == 10


def test_all_199_forms_round_trip_through_parquet(funsd_dir, funsd_test, funsd_train, tmp_path):
    recipe = parse_recipe({"name": "funsd-all", "version": "1.0.0", "source": {"kind": "funsd"},
                           "splits": ["train", "test"], "configs": {"original": []}})
    out = tmp_path / "all"
    build(recipe, out, source_path=funsd_dir, progress=False)
    for split, source in (("train", funsd_train), ("test", funsd_test)):
        back = HFDatasetSource(name=str(out), config="original", split=split)
        assert back.ids() == source.ids()
        for doc_id in source.ids():
            a, b = source.load(doc_id), back.load(doc_id)
            assert b.words == a.words  # every word's text and pixel box, empty words included
            assert b.entities == a.entities  # ids, labels, word ids, links
            assert b.image.encoded_bytes() == a.image.encoded_bytes()
            assert (b.width, b.height) == (a.width, a.height)


def test_document_row_document_is_identity(funsd_train):
    for doc_id in funsd_train.ids()[:20]:
        doc = funsd_train.load(doc_id)
        row = document_to_row(doc, "funsd")
        again = row_to_document(row, "funsd")
        assert again.words == doc.words and again.entities == doc.entities and again.id == doc.id


@pytest.fixture
def broken_funsd(copy_funsd_forms, tmp_path):
    root = copy_funsd_forms(tmp_path / "funsd")
    test = root / "testing_data"
    ids = sorted(p.stem for p in (test / "annotations").glob("*.json"))
    png = test / "images" / f"{ids[0]}.png"
    png.write_bytes(png.read_bytes()[: png.stat().st_size // 2])  # truncated PNG
    ann = test / "annotations" / f"{ids[1]}.json"
    ann.write_text(ann.read_text()[:500])  # truncated JSON
    data = json.loads((test / "annotations" / f"{ids[2]}.json").read_text())
    data["form"][0]["label"] = "signature line"  # no IOB tag can name it (a new label without a space would do)
    (test / "annotations" / f"{ids[2]}.json").write_text(json.dumps(data))
    return root, ids


def test_on_error_raise_names_the_file_and_writes_nothing(broken_funsd, tmp_path):
    root, ids = broken_funsd
    out = tmp_path / "out"
    with pytest.raises(BuildError) as err:
        build(load_recipe("funsd-l"), out, source_path=root, configs=["merge"], progress=False)
    assert ids[0] in str(err.value) and f"{ids[0]}.png" in str(err.value)
    assert not out.exists()
    assert not list(tmp_path.glob(".out.partial-*"))


def test_on_error_skip_finishes_and_lists_the_skipped(broken_funsd, tmp_path):
    root, ids = broken_funsd
    out = tmp_path / "out"
    report = build(load_recipe("funsd-l"), out, source_path=root, on_error="skip", configs=["merge"], progress=False)
    assert [s["id"] for s in report.skipped] == ids[:3]
    reasons = {s["id"]: s["reason"] for s in report.skipped}
    assert "cannot read image" in reasons[ids[0]] and f"{ids[0]}.png" in reasons[ids[0]]
    assert "malformed JSON" in reasons[ids[1]] and f"{ids[1]}.json" in reasons[ids[1]]
    assert "has label 'signature line'; a label is a non-empty name without spaces" in reasons[ids[2]]
    ds = datasets.load_dataset(str(out), "merge", split="test")
    assert ds["id"] == ids[3:]
    card = (out / "README.md").read_text()
    for doc_id in ids[:3]:
        assert f"`{doc_id}`" in card


def test_interrupted_build_leaves_no_dataset(funsd_dir, tmp_path, monkeypatch):
    from dogood.shifts.layout.merge import MergeBoxes

    calls = {"n": 0}
    original = MergeBoxes.apply

    def interrupt(self, doc, rng):
        calls["n"] += 1
        if calls["n"] == 5:
            raise KeyboardInterrupt
        return original(self, doc, rng)

    monkeypatch.setattr(MergeBoxes, "apply", interrupt)
    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt):
        build(load_recipe("funsd-l"), out, source_path=funsd_dir, configs=["merge"], progress=False)
    assert not out.exists()
    # only the hidden work folder is left, for a re-run to resume from
    assert [p.name for p in tmp_path.iterdir()] == [".out.partial"]
    monkeypatch.setattr(MergeBoxes, "apply", original)
    build(load_recipe("funsd-l"), out, source_path=funsd_dir, configs=["merge"], progress=False)
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_existing_output_is_kept_unless_overwrite(funsd_dir, tmp_path):
    from dogood.core.errors import DogoodError

    out = tmp_path / "out"
    build(load_recipe("funsd"), out, source_path=funsd_dir, limit=2, progress=False)
    before = (out / "data/original/test-00000-of-00001.parquet").read_bytes()
    with pytest.raises(DogoodError, match="already exists"):
        build(load_recipe("funsd"), out, source_path=funsd_dir, limit=3, progress=False)
    assert (out / "data/original/test-00000-of-00001.parquet").read_bytes() == before
    build(load_recipe("funsd"), out, source_path=funsd_dir, limit=3, overwrite=True, progress=False)
    assert datasets.load_dataset(str(out), "original", split="test").num_rows == 3


def test_unshifted_images_are_the_original_bytes(funsd_dir, tmp_path):
    out = tmp_path / "id"
    build(load_recipe("funsd"), out, source_path=funsd_dir, limit=2, progress=False)
    ds = datasets.load_dataset(str(out), "original", split="test").cast_column("image", datasets.Image(decode=False))
    for row in ds:
        assert row["image"]["bytes"] == (funsd_dir / "testing_data/images" / f"{row['id']}.png").read_bytes()
        assert Image.open(io.BytesIO(row["image"]["bytes"])).size == (row["dogood"]["width"], row["dogood"]["height"])


def test_rvl_cdip_merge_recipe_on_real_pages(data_dir, tmp_path):
    import shutil as _shutil

    if _shutil.which("tesseract") is None:
        pytest.skip("tesseract-ocr is not installed")
    out = tmp_path / "rvl-cdip-l"
    build(load_recipe("rvl-cdip-l"), out, source_path=data_dir / "rvl_cdip", progress=False)
    ds = datasets.load_dataset(str(out), "merge", split="test")
    names = ds.features["label"].names
    assert len(names) == 16 and names[1] == "form" and names[15] == "memo"
    by_id = {row["id"]: row for row in ds}
    assert {i: names[r["label"]] for i, r in by_id.items()} == {
        "images/80035521": "memo", "images/2024525661": "invoice", "images/503210033+-0034": "handwritten"}
    memo = by_id["images/80035521"]
    assert len(memo["tokens"]) > 50 and len(memo["bboxes"]) == len(memo["tokens"])
    assert all(0 <= v <= 1000 for box in memo["bboxes"] for v in box)
    # merged: Tesseract's words now share block boxes, each enclosing the word's OCR box
    full = memo["dogood"]
    assert len({tuple(b) for b in full["word_boxes"]}) < len(full["word_boxes"]) / 2
    assert memo["image"].size == (full["width"], full["height"]) and memo["image"].mode == "L"  # as aharley/rvl_cdip


def test_a_rebuilt_folder_loads_its_new_rows_not_the_cached_old_ones(funsd_dir, tmp_path):
    """``datasets`` caches a local folder under a hash of the card's YAML: the card's ``download_size`` (the
    Parquet bytes) changes with the rows, so ``load_dataset`` after ``--overwrite`` reads the new build."""
    import pyarrow.parquet as pq

    out = tmp_path / "funsd"
    for level in ("segment", "word", "segment"):
        build(load_recipe("funsd"), out, source_path=funsd_dir, limit=5, progress=False, box_level=level,
              overwrite=True)
        ds = datasets.load_dataset(str(out), "original", split="test")
        files = sorted((out / "data" / "original").glob("*.parquet"))
        on_disk = [b for f in files for b in pq.read_table(f).column("bboxes").to_pylist()]
        assert ds["bboxes"] == on_disk, level


def test_every_file_is_synced_once_before_the_commit(funsd_dir, tmp_path, monkeypatch):
    """Shard files are synced when their shard is closed (before its record is written); the commit syncs the rest
    (card, record, previews) and every folder, not the shards again."""
    import dogood.pipeline.build as build_module
    import dogood.pipeline.parquet_writer as parquet_writer

    closed, committed = [], []
    real_replace, real_fsync = parquet_writer.replace_durably, build_module.fsync_file
    monkeypatch.setattr(parquet_writer, "replace_durably", lambda tmp, dest: (closed.append(dest.name),
                                                                               real_replace(tmp, dest)))
    monkeypatch.setattr(build_module, "fsync_file", lambda path: (committed.append(path.name), real_fsync(path)))
    recipe = load_recipe("funsd-l")
    recipe.shard_size = 2
    out = tmp_path / "out"
    build(recipe, out, source_path=funsd_dir, limit=4, configs=["merge"], progress=False)
    shards = sorted(p.name for p in (out / "data" / "merge").iterdir())
    assert sorted(closed) == shards == ["test-00000-of-00002.parquet", "test-00001-of-00002.parquet"]
    assert sorted(committed) == ["README.md", "dogood_build.json", "merge.jpg"]
