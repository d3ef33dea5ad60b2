"""Issue 26, hostile input to the newer paths: the augmentation API, eval, the hf and Parquet sources.

- the augmentation API gives ``I;16``, ``I`` and ``F`` pages back at their own value scale, refuses other
  modes by name, handles any page size a row can hold (1x1 up), and names the row for every malformed field;
- eval refuses predicted tags outside the data's label set (they scored 0.00 with exit 0) and confidences that
  are not numbers in [0, 1] (``10**400`` crashed), writes its report as one folder and never replaces a folder
  it did not write, the default ``eval/<model>`` included;
- the hf source reads local Parquet in place: a file replaced with the same time is read anew (the cache served
  old rows), ``--limit`` reads only the row groups it needs, a null id is an error naming the row;
- URL schemes it cannot read (``s3://`` without s3fs, ``gcs://``, unknown ones, malformed URLs) are one
  ``dogood: error:`` line, for the hf source's streaming and the RVL-CDIP source.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import datasets
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image

import dogood
from dogood.cli import main
from dogood.core.errors import DocumentError, SourceError
from dogood.shifts import SHIFTS, make_shift


def last_error(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    line = err.strip().splitlines()[-1]
    assert line.startswith("dogood: error: "), err
    return line


def funsd_row(image, **changes) -> dict:
    return {"id": "row-7", "tokens": ["ab", "cd"], "bboxes": [[100, 200, 500, 500], [500, 200, 900, 500]],
            "ner_tags": [1, 2], "image": image, **changes}


# -- the augmentation API -------------------------------------------------------------------------------------
def deep_page(mode: str, scale: float) -> Image.Image:
    page = np.full((40, 60), 200, np.float64)
    page[10:20, 10:50] = 30
    values = page * scale / 255.0
    if mode.startswith("I;16"):
        order = ">u2" if mode == "I;16B" else "<u2"
        return Image.frombytes(mode, (60, 40), np.rint(values).astype(order).tobytes())
    return Image.fromarray(values.astype(np.float32) if mode == "F" else np.rint(values).astype(np.int32), mode)


@pytest.mark.parametrize("mode, scale", [("I;16", 65535), ("I;16B", 65535), ("I", 65535), ("I", 255), ("F", 1.0),
                                         ("F", 255)])
def test_deep_pages_keep_their_value_scale(mode, scale):
    """Before, I;16 and I pages came back 256 times darker, and float pages in 0-1 were destroyed."""
    page = deep_page(mode, scale)
    for shift in ({"shift": "merge", "lambda_x": 10, "lambda_y": 5}, {"shift": "scan_quality"}):
        out = dogood.transform(shift, seed=0)(funsd_row(page))["image"]
        assert out.mode == mode and out.size == page.size
        before, after = np.asarray(page, np.float64), np.asarray(out, np.float64)
        if shift["shift"] == "merge":  # pixels untouched: the very values
            assert np.array_equal(before, after)
        assert after.max() <= scale * 1.0001 and after.max() > 0.5 * scale  # white stays white, on the same scale
        assert abs(np.median(after) - np.median(before)) < 0.15 * scale


@pytest.mark.parametrize("mode", ["HSV", "LAB"])
def test_other_modes_are_refused_by_name(mode):
    page = Image.new("RGB", (30, 20), "white").convert(mode) if mode == "HSV" else Image.new("LAB", (30, 20))
    with pytest.raises(DocumentError, match=f"document 'row-7'.*mode '{mode}'"):
        dogood.transform({"shift": "merge"}, seed=0)(funsd_row(page))


SIZES = [(1, 1), (1, 64), (64, 1), (2, 2), (3, 7), (8, 8), (16, 16), (33, 20), (64, 64)]
#: Shifts tried on tiny pages: every image and layout shift (the text shifts never touch pixels), from their
#: defaults; 11 of 40 (shift, size) cases crashed in OpenCV before.
#: Shifts whose page grows (a turned page's canvas holds all of it; margins added).
GROWING = ("rotate", "margin_padding")
TINY_SHIFTS = sorted(name for name, cls in SHIFTS.items()  # dogood's own (other test modules register test shifts)
                     if cls.family in ("image", "layout") and name != "move" and cls.__module__.startswith("dogood."))


@pytest.mark.parametrize("name", TINY_SHIFTS)
def test_any_page_size_a_row_can_hold(name, data_dir):
    t = dogood.transform(make_shift({"shift": name}), seed=0)
    for w, h in SIZES:
        row = funsd_row(Image.new("RGB", (w, h), "white"), id=f"p{w}x{h}")
        out = t(row)
        assert out["image"].mode == "RGB" and len(out["tokens"]) == len(out["bboxes"])
        if name in GROWING:  # a canvas that grows around the page
            assert out["image"].size[0] >= w and out["image"].size[1] >= h
        else:
            assert out["image"].size == (w, h)


@pytest.mark.parametrize("change, needle", [
    ({"bboxes": [["a", 0, 1, 2], [0, 0, 1, 1]]}, "bboxes[0] must be four finite numbers"),
    ({"bboxes": [[None, 0, 1, 2], [0, 0, 1, 1]]}, "bboxes[0]"),
    ({"bboxes": [[float("nan"), 0, 1, 2], [0, 0, 1, 1]]}, "bboxes[0]"),
    ({"bboxes": [[float("inf"), 0, 1, 2], [0, 0, 1, 1]]}, "bboxes[0]"),
    ({"bboxes": [[0, 0, 1], [0, 0, 1, 1]]}, "bboxes[0]"),
    ({"bboxes": [[True, 0, 1, 2], [0, 0, 1, 1]]}, "bboxes[0]"),
    ({"bboxes": [5, [0, 0, 1, 1]]}, "bboxes[0]"),
    ({"bboxes": "abcd"}, "bboxes must be a list"),
    ({"tokens": 5}, "tokens must be a list"),
    ({"tokens": [None, "x"]}, "tokens[0] must be text"),
    ({"ner_tags": [None, 1]}, "ner_tags"),
    ({"dogood": {"width": "x"}}, "malformed row"),
    ({"dogood": "abc"}, "malformed row"),
])
def test_malformed_fields_are_document_errors_naming_the_row(change, needle):
    with pytest.raises(DocumentError) as err:
        dogood.transform({"shift": "merge"}, seed=0)(funsd_row(Image.new("RGB", (100, 80), "white"), **change))
    assert "document 'row-7'" in str(err.value) and needle in str(err.value)


def test_an_unlabelled_rvl_cdip_row_stays_unlabelled():
    """``label: None`` raised a raw ValueError; the row comes back with its label still None."""
    row = {"id": "p", "image": Image.new("L", (50, 40), 255), "label": None}
    assert dogood.transform({"shift": "scan_quality"}, seed=0)(row)["label"] is None


# -- eval -------------------------------------------------------------------------------------------------------
def predictions_file(path: Path, docs, tag_of) -> Path:
    from dogood.core.schema import iob_tags

    with open(path, "w") as fh:
        for doc in docs:
            fh.write(json.dumps({"id": doc.id, "ner_tags": [tag_of(t) for t in iob_tags(doc)[1]]}) + "\n")
    return path


def test_predicted_tags_outside_the_datas_label_set_are_refused(funsd_test, tmp_path, capsys):
    """Before: scored 0.00 with exit 0 (the README says it is an error)."""
    docs = [funsd_test.load(i) for i in funsd_test.ids()[:2]]
    preds = predictions_file(tmp_path / "p.jsonl", docs, lambda t: "B-FOO" if t != "O" else "O")
    assert main(["eval", "--model", str(preds), "--id", "funsd", "--ood", "funsd", "--limit", "2", "--bootstrap",
                 "0", "--out", str(tmp_path / "r"), "--quiet"]) == 1
    assert "B-FOO" in (line := last_error(capsys)) and "outside the data's label set" in line
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("value", ["10" * 1 + "0" * 399, "1e400", "-1e400", "NaN", "true"])
def test_confidences_that_are_not_probabilities_are_refused(funsd_test, tmp_path, value):
    from dogood.models.predictions import PredictionError, read_predictions

    doc = funsd_test.load(funsd_test.ids()[0])
    path = predictions_file(tmp_path / "p.jsonl", [doc], lambda t: t)
    line = json.loads(path.read_text())
    n = len(line["ner_tags"])
    path.write_text(json.dumps({**line, "confidences": []})[:-2] + ", ".join([value] * n) + "]}\n")
    with pytest.raises(PredictionError, match="line 1"):
        read_predictions(path, "token")


def test_the_default_report_folder_is_not_replaced_when_the_user_wrote_it(funsd_test, tmp_path, monkeypatch, capsys):
    """The default ``eval/<model>`` overwrote a user's report.md; the same folder given as --out was refused."""
    monkeypatch.chdir(tmp_path)
    docs = [funsd_test.load(i) for i in funsd_test.ids()[:1]]
    preds = predictions_file(tmp_path / "mine.jsonl", docs, lambda t: t)
    mine = tmp_path / "eval" / "predictions" / "report.md"  # the default folder of a predictions file
    from dogood.models import load_model

    name = load_model(str(preds)).name.replace("/", "_")
    mine = tmp_path / "eval" / name / "report.md"
    mine.parent.mkdir(parents=True)
    mine.write_text("# my report\n")
    assert main(["eval", "--model", str(preds), "--id", "funsd", "--ood", "funsd", "--limit", "1", "--bootstrap",
                 "0", "--quiet"]) == 1
    assert "report.md, which is not a dogood eval report" in last_error(capsys)
    assert mine.read_text() == "# my report\n"


def test_the_report_is_replaced_whole_and_a_crash_between_renames_loses_nothing(funsd_test, tmp_path, monkeypatch):
    from dogood.core import fs

    docs = [funsd_test.load(i) for i in funsd_test.ids()[:1]]
    preds = predictions_file(tmp_path / "p.jsonl", docs, lambda t: t)
    out = tmp_path / "report"
    args = ["eval", "--model", str(preds), "--id", "funsd", "--ood", "funsd", "--limit", "1", "--bootstrap", "0",
            "--out", str(out), "--quiet"]
    assert main(args) == 0
    first = {p.name: p.read_bytes() for p in out.iterdir()}
    real = os.replace

    def crash(src, dst):  # old -> .old-PID done, new -> out not yet: a kill between the two renames
        if Path(dst) == out and list(tmp_path.glob(".report.old-*")):
            raise KeyboardInterrupt
        return real(src, dst)

    monkeypatch.setattr(fs.os, "replace", crash)
    assert main(args) == 130
    monkeypatch.setattr(fs.os, "replace", real)
    assert not out.exists() and list(tmp_path.glob(".report.old-*"))
    assert main(args) == 0  # the next run puts the old report back first, then replaces it whole
    assert {p.name for p in out.iterdir()} == set(first) and not list(tmp_path.glob(".report.*"))
    assert json.loads((out / "report.json").read_text())["model"] == json.loads(first["report.json"])["model"]


# -- the hf and Parquet sources ---------------------------------------------------------------------------------
def write_rows(path: Path, labels: list[int], ids: list | None = None, row_group_size: int | None = None) -> Path:
    import io

    from dogood.core.schema import RVL_CDIP_CLASSES

    buf = io.BytesIO()
    Image.new("L", (30, 20), 255).save(buf, format="PNG")
    features = {"image": datasets.Image(), "label": datasets.ClassLabel(names=list(RVL_CDIP_CLASSES))}
    columns = {"image": [{"bytes": buf.getvalue(), "path": None}] * len(labels), "label": labels}
    if ids is not None:
        features = {"id": datasets.Value("string"), **features}
        columns = {"id": ids, **columns}
    schema = datasets.Features(features).arrow_schema
    pq.write_table(pa.table(columns, schema=schema), path, row_group_size=row_group_size)
    return path


def test_a_parquet_file_replaced_with_the_same_time_is_read_anew(tmp_path):
    from dogood.sources.hf_dataset import HFDatasetSource

    path = write_rows(tmp_path / "test.parquet", [1, 2, 3])
    stamp = os.stat(path).st_mtime_ns
    first = [HFDatasetSource(name=str(path), ocr=False).load(str(i)).label for i in range(3)]
    write_rows(path, [4, 5, 6])
    os.utime(path, ns=(stamp, stamp))  # same size, same time: datasets' cache served the old rows
    second = [HFDatasetSource(name=str(path), ocr=False).load(str(i)).label for i in range(3)]
    assert first != second and second == [HFDatasetSource(name=str(path), ocr=False).load(str(i)).label
                                          for i in range(3)]


def test_limit_reads_only_the_row_groups_it_needs(tmp_path, monkeypatch):
    from dogood.sources import parquet_rows

    data = tmp_path / "data"
    data.mkdir()
    write_rows(data / "test-00000-of-00001.parquet", [k % 16 for k in range(1000)], row_group_size=100)
    read = []
    real = parquet_rows._read_group
    monkeypatch.setattr(parquet_rows, "_read_group", lambda pf, path, g, cols: read.append(g) or real(pf, path, g, cols))
    cache = Path(os.environ["HF_HOME"]) / "datasets"
    arrows = set(cache.rglob("*.arrow"))  # what other tests left in the shared cache
    recipe = tmp_path / "r.yaml"
    recipe.write_text("name: r\nversion: 1.0.0\nsource: {kind: hf, ocr: false}\nsplits: [test]\nconfigs:\n  plain: []\n")
    assert main(["build", str(recipe), "--source", str(data / "test-00000-of-00001.parquet"), "--limit", "3",
                 "--out", str(tmp_path / "out"), "--quiet"]) == 0
    assert set(read) == {0}  # one row group of ten; before, the whole file went through datasets' cache
    assert set(cache.rglob("*.arrow")) == arrows  # nothing of the file went through datasets' cache


def test_a_null_id_is_an_error_naming_the_row(tmp_path):
    from dogood.sources.hf_dataset import HFDatasetSource

    path = write_rows(tmp_path / "test.parquet", [1, 2, 3], ids=["a", None, "c"])
    with pytest.raises(SourceError, match="row 1 has no id"):  # before: the document id "None"
        HFDatasetSource(name=str(path), ocr=False)
    path = write_rows(tmp_path / "test.parquet", [1, 2, 3], ids=["a", "b", "a"])
    with pytest.raises(SourceError, match="duplicate"):
        HFDatasetSource(name=str(path), ocr=False)


@pytest.mark.parametrize("url, needle", [
    ("s3://bucket/data/test.parquet", "pip install s3fs"),
    ("gcs://bucket/data/test.parquet", "pip install gcsfs"),
    ("foo://x/test.parquet", "unknown URL scheme 'foo'"),
    ("https://[::1/test.parquet", "cannot"),
])
def test_url_scheme_errors_are_one_line(tmp_path, capsys, url, needle):
    """Before: raw tracebacks (ImportError, ValueError, a TypeError from aiohttp)."""
    for source in ("{kind: hf, streaming: true}", "{kind: rvl_cdip}"):
        recipe = tmp_path / "r.yaml"
        recipe.write_text(f"name: r\nversion: 1.0.0\nsource: {source}\nsplits: [test]\nconfigs:\n  plain: []\n")
        assert main(["build", str(recipe), "--source", url, "--limit", "1", "--out", str(tmp_path / "out"),
                     "--quiet"]) == 1
        assert needle in last_error(capsys)
