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


# -- hostile rows and files (issue 36) -------------------------------------------------------------------------
def test_hub_rows_with_boxes_outside_0_1000_are_refused_naming_the_row_not_clamped(funsd_dir, tmp_path):
    """A regression of the last round: ``[405, 1035, 513, 1077]`` became ``[405, 1000, 513, 1000]`` (no height)."""
    import dogood

    rows = hub_style_funsd_rows(funsd_dir, n=2)
    rows[1]["bboxes"][3] = [405, 1035, 513, 1077]
    path = write_parquet(rows, HUB_FUNSD_FEATURES, tmp_path / "f.parquet")
    for streaming in (False, True):
        source = HFDatasetSource(name=str(path), split="test", streaming=streaming)
        assert len(source.load(rows[0]["id"]).words) == len(rows[0]["tokens"])
        with pytest.raises(DocumentError, match=r"bboxes\[3\] \[405, 1035, 513, 1077\] is outside 0-1000") as err:
            source.load(rows[1]["id"])
        assert err.value.doc_id == rows[1]["id"]
    row = {**rows[1], "image": Image.open(io.BytesIO(rows[1]["image"]["bytes"]))}
    for box in ([405, 1035, 513, 1077], [-1, 0, 5, 5], [0.5, 0, 1000.5, 4]):
        row["bboxes"] = [box] + rows[1]["bboxes"][1:]
        with pytest.raises(DocumentError, match=r"bboxes\[0\] .* is outside 0-1000") as err:
            dogood.transform({"shift": "merge"}, seed=0)(row)
        assert err.value.doc_id == rows[1]["id"]


def test_a_row_of_too_many_or_too_long_tokens_is_refused(funsd_dir, tmp_path):
    import dogood

    rows = hub_style_funsd_rows(funsd_dir, n=1)
    rows[0]["tokens"][2] = "x" * 100_000
    path = write_parquet(rows, HUB_FUNSD_FEATURES, tmp_path / "f.parquet")
    with pytest.raises(DocumentError, match="word 2 has 100000 characters, more than the 1000"):
        HFDatasetSource(name=str(path), split="test").load(rows[0]["id"])
    row = {**rows[0], "image": Image.open(io.BytesIO(rows[0]["image"]["bytes"]))}
    with pytest.raises(DocumentError, match="word 2 has 100000 characters"):
        dogood.transform({"shift": "merge"}, seed=0)(row)
    n = 10_001
    row.update(tokens=["a"] * n, bboxes=[[0, 0, 1, 1]] * n, ner_tags=[0] * n)
    with pytest.raises(DocumentError, match="the page has 10001 tokens, more than the 10000"):
        dogood.transform({"shift": "merge"}, seed=0)(row)


def _rows_with_ids(ids, path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = len(ids)
    table = pa.table({"id": ids, "image": [{"bytes": _png(), "path": None}] * n, "label": [1] * n})
    pq.write_table(table, path, compression="zstd", row_group_size=100)
    return path


def test_ids_of_megabytes_are_refused_from_the_footer_within_a_memory_bound(tmp_path, bounded_run):
    """Before, ids of megabytes that compress to nothing took 6.7 GB for a build of three documents."""
    big = _rows_with_ids([("x" * 200_000) + str(i) for i in range(300)], tmp_path / "big.parquet")
    assert big.stat().st_size < 1 << 20
    run = bounded_run("from dogood.sources.hf_dataset import HFDatasetSource\n"
                      "from dogood.core.errors import SourceError\n"
                      "try:\n"
                      "    HFDatasetSource(name='big.parquet', split='test', streaming=True, ocr=False)\n"
                      "except SourceError as exc:\n"
                      "    print('dogood: error:', exc, file=sys.stderr)\n", address_space_mib=4096)
    assert run.code == 0 and "row group 0 declares 2000" in run.last_line and "id" in run.last_line, run.err
    assert run.peak_mib < 400, run.peak_mib


def test_one_long_id_among_short_ones_is_refused_naming_its_row(tmp_path):
    ids = [f"doc-{i}" for i in range(250)]
    ids[130] = "y" * 5000
    path = _rows_with_ids(ids, tmp_path / "one.parquet")
    with pytest.raises(SourceError, match="row 130 has an 'id' of 5000 bytes, more than the 1024"):
        HFDatasetSource(name=str(path), split="test", streaming=True, ocr=False)
    ids[130] = "doc-130"
    assert HFDatasetSource(name=str(_rows_with_ids(ids, tmp_path / "ok.parquet")), split="test",
                           streaming=True, ocr=False).ids()[130] == "doc-130"


def test_a_row_group_declaring_more_bytes_than_its_limit_is_not_read(tmp_path):
    from dogood.core import fs

    path = _rows_with_ids([f"d{i}" for i in range(10)], tmp_path / "g.parquet")
    fs.set_limits(fs.Limits(parquet_group_bytes=100))
    try:
        source = HFDatasetSource(name=str(path), split="test", streaming=True, ocr=False)
        with pytest.raises(SourceError, match="row group 0 of .*g.parquet: it declares .* more than the 100"):
            source.load("d1")
    finally:
        fs.set_limits(None)
