"""Starting from an existing Hugging Face dataset (FUNSD-style or RVL-CDIP-style)."""

from __future__ import annotations

import io
import json
import math

import datasets
import numpy as np
import pytest
from PIL import Image

from dogood.core.boxes import normalize_box
from dogood.core.errors import DocumentError, SourceError
from dogood.core.schema import FUNSD_NER_TAGS, RVL_CDIP_CLASSES, document_to_row
from dogood.sources.hf_dataset import HFDatasetSource


HUB_FUNSD_FEATURES = datasets.Features({
    "id": datasets.Value("string"),
    "tokens": datasets.List(datasets.Value("string")),
    "bboxes": datasets.List(datasets.List(datasets.Value("int64"))),
    "ner_tags": datasets.List(datasets.ClassLabel(names=list(FUNSD_NER_TAGS))),
    "image": datasets.Image(),
})


def hub_style_funsd_rows(funsd_dir, n=5):
    """Rows the way the Hub's FUNSD loaders make them, written here from the JSON independently."""
    rows = []
    for ann in sorted((funsd_dir / "testing_data/annotations").glob("*.json"))[:n]:
        png = funsd_dir / "testing_data/images" / f"{ann.stem}.png"
        w, h = Image.open(png).size
        tokens, boxes, tags = [], [], []
        for item in json.loads(ann.read_text())["form"]:
            words = [x for x in item["words"] if x["text"].strip() != ""]
            for k, word in enumerate(words):
                tokens.append(word["text"])
                b = word["box"]
                boxes.append([int(1000 * b[0] / w), int(1000 * b[1] / h), int(1000 * b[2] / w), int(1000 * b[3] / h)])
                tags.append("O" if item["label"] == "other" else ("B-" if k == 0 else "I-") + item["label"].upper())
        rows.append({"id": ann.stem, "tokens": tokens, "bboxes": boxes,
                     "ner_tags": [FUNSD_NER_TAGS.index(t) for t in tags],
                     "image": {"bytes": png.read_bytes(), "path": png.name}})
    return rows


def write_parquet(rows, features, path):
    datasets.Dataset.from_list(rows, features=features).to_parquet(str(path))
    return path


def test_hub_style_funsd_parquet_round_trips_to_the_same_columns(funsd_dir, tmp_path):
    features = HUB_FUNSD_FEATURES
    rows = hub_style_funsd_rows(funsd_dir)
    path = write_parquet(rows, features, tmp_path / "funsd.parquet")
    source = HFDatasetSource(name=str(path), split="test")
    assert source.schema == "funsd" and source.ids() == [r["id"] for r in rows]
    for row in rows:
        doc = source.load(row["id"])
        again = document_to_row(doc, "funsd", "word")  # the rows above are word-level, as nielsr/funsd
        assert again["tokens"] == row["tokens"]
        assert again["ner_tags"] == row["ner_tags"]
        # pixel boxes were rebuilt from 0-1000 boxes: normalising again is within one unit
        diff = np.abs(np.array(again["bboxes"]) - np.array(row["bboxes"]))
        assert diff.max() <= 1
        # entities from IOB: one per B- run, one per O word
        n_b = sum(FUNSD_NER_TAGS[t].startswith("B-") for t in row["ner_tags"])
        n_o = sum(t == 0 for t in row["ner_tags"])
        assert len(doc.entities) == n_b + n_o
        assert all(not e.links for e in doc.entities)


def test_rvl_cdip_style_with_words(funsd_dir, tmp_path):
    png = sorted((funsd_dir / "testing_data/images").glob("*.png"))[0]
    w, h = Image.open(png).size
    features = datasets.Features({
        "image": datasets.Image(),
        "label": datasets.ClassLabel(names=list(RVL_CDIP_CLASSES)),
        "words": datasets.List(datasets.Value("string")),
        "bboxes": datasets.List(datasets.List(datasets.Value("int64"))),
    })
    rows = [{"image": {"bytes": png.read_bytes(), "path": png.name}, "label": 1,
             "words": ["Fax", "Date"], "bboxes": [[100, 100, 200, 120], [100, 200, 180, 220]]}]
    source = HFDatasetSource(name=str(write_parquet(rows, features, tmp_path / "r.parquet")), split="test")
    assert source.schema == "rvl_cdip" and source.ids() == ["0"]
    doc = source.load("0")
    assert doc.label == "form"
    assert [x.text for x in doc.words] == ["Fax", "Date"]
    # the smallest pixel box that normalises back to the row's 0-1000 box, so a model reading the rebuilt word
    # reads the row's bboxes exactly
    assert doc.words[0].box == (math.ceil(100 * w / 1000), math.ceil(100 * h / 1000), math.ceil(200 * w / 1000),
                                math.ceil(120 * h / 1000))
    assert [normalize_box(x.box, w, h) for x in doc.words] == [[100, 100, 200, 120], [100, 200, 180, 220]]


def test_malformed_rows_name_the_document(funsd_dir, tmp_path):
    features = HUB_FUNSD_FEATURES
    row = hub_style_funsd_rows(funsd_dir, n=1)[0]
    row["tokens"] = row["tokens"][:-1]
    source = HFDatasetSource(name=str(write_parquet([row], features, tmp_path / "bad.parquet")), split="test")
    with pytest.raises(DocumentError) as err:
        source.load(row["id"])
    assert row["id"] in str(err.value) and "differ in length" in str(err.value)


def test_unknown_columns_and_missing_datasets_are_clear(tmp_path):
    path = write_parquet([{"text": "a", "image": {"bytes": _png(), "path": None}}],
                         datasets.Features({"text": datasets.Value("string"), "image": datasets.Image()}),
                         tmp_path / "x.parquet")
    with pytest.raises(SourceError, match="cannot tell the schema"):
        HFDatasetSource(name=str(path), split="test")
    with pytest.raises(SourceError, match="cannot load Hugging Face dataset"):
        HFDatasetSource(name=str(tmp_path / "nothing-here"), split="test")


def _png():
    buf = io.BytesIO()
    Image.new("L", (10, 10), 255).save(buf, format="PNG")
    return buf.getvalue()


def test_dogood_rows_old_and_new_layout_rebuild_the_exact_record(funsd_test, tmp_path):
    """dogood 0.2 keeps the full record in the `dogood` struct; rows of dogood 0.1 had it at the top level."""
    from dogood.core.schema import FULL_COLUMN, features_for

    docs = [funsd_test.load(i) for i in funsd_test.ids()[:2]]
    new_rows = [document_to_row(d, "funsd") for d in docs]
    new = HFDatasetSource(name=str(write_parquet(new_rows, features_for("funsd"), tmp_path / "new.parquet")))
    old_features = datasets.Features({**{k: v for k, v in features_for("funsd").items() if k != FULL_COLUMN},
                                      **features_for("funsd")[FULL_COLUMN], "image": datasets.Image()})
    old_rows = [{**{k: v for k, v in r.items() if k != FULL_COLUMN}, **r[FULL_COLUMN]} for r in new_rows]
    old = HFDatasetSource(name=str(write_parquet(old_rows, old_features, tmp_path / "old.parquet")))
    for doc in docs:
        for source in (new, old):
            again = source.load(doc.id)
            assert again.words == doc.words and again.entities == doc.entities
            assert np.array_equal(again.image.to_array(), doc.image.to_array())


def test_segment_level_hub_rows_give_the_same_boxes_back(funsd_dir, tmp_path):
    """nielsr/funsd-layoutlmv3-style rows (segment boxes) read in and written out again keep their boxes."""
    rows = hub_style_funsd_rows(funsd_dir, n=2)
    for row in rows:  # make the boxes of each B-/I- run segment-level, as unilm's get_line_bbox does
        tags = [FUNSD_NER_TAGS[t] for t in row["ner_tags"]]
        start = 0
        for k in range(1, len(tags) + 1):
            if k == len(tags) or not tags[k].startswith("I-"):
                span = row["bboxes"][start:k]
                box = [min(b[0] for b in span), min(b[1] for b in span), max(b[2] for b in span), max(b[3] for b in span)]
                row["bboxes"][start:k] = [box] * (k - start)
                start = k
    source = HFDatasetSource(name=str(write_parquet(rows, HUB_FUNSD_FEATURES, tmp_path / "seg.parquet")), split="test")
    for row in rows:
        doc = source.load(row["id"])
        for level in ("segment", "word"):
            again = np.array(document_to_row(doc, "funsd", level)["bboxes"])
            assert np.abs(again - np.array(row["bboxes"])).max() <= 1


def test_streaming_reads_row_groups_in_place_with_positional_ids(funsd_dir, tmp_path):
    """Without an ``id`` column the ids are positions, counted from the footers; each row group is read alone."""
    import pyarrow.parquet as pq

    features = datasets.Features({k: v for k, v in HUB_FUNSD_FEATURES.items() if k != "id"})
    rows = [{k: v for k, v in row.items() if k != "id"} for row in hub_style_funsd_rows(funsd_dir)]
    path = tmp_path / "funsd.parquet"
    pq.write_table(datasets.Dataset.from_list(rows, features=features).data.table, path, row_group_size=2)
    streamed = HFDatasetSource(name=str(path), split="test", streaming=True)
    loaded = HFDatasetSource(name=str(path), split="test")
    assert streamed.ids() == loaded.ids() == ["0", "1", "2", "3", "4"]
    footer = streamed._rows._metadata(0)
    assert [footer.row_group(g).num_rows for g in range(footer.num_row_groups)] == [2, 2, 1]
    assert list(streamed.read_slice(1, 4)) == [loaded.load(i) for i in ("1", "2", "3")]
    assert [streamed.load(i) for i in reversed(loaded.ids())] == [loaded.load(i) for i in reversed(loaded.ids())]


def test_streaming_takes_parquet_datasets_only(tmp_path):
    (tmp_path / "test.jsonl").write_text('{"id": "a", "label": 0}\n')
    with pytest.raises(SourceError, match="streaming: true reads Parquet datasets only"):
        HFDatasetSource(name=str(tmp_path), split="test", streaming=True)
