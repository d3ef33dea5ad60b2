"""RVL-CDIP read from Parquet shards in the Hub's layout (``data/test-00000-of-00002.parquet``: ``image`` as a
``{bytes, path}`` struct, ``label`` the class number), against the folder layout holding the same pages.

The pages: the 3 shared RVL-CDIP TIFFs and 3 FUNSD test forms (RVL-CDIP pages of class 1, ``form``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dogood.core.errors import DocumentError, SourceError
from dogood.sources.rvl_cdip import RVL_CDIP_CLASSES, RvlCdipSource

needs_tesseract = pytest.mark.skipif(shutil.which("tesseract") is None, reason="the tesseract binary is not installed")
FORM = RVL_CDIP_CLASSES.index("form")


@pytest.fixture
def pages(data_dir, funsd_dir, tmp_path) -> tuple[Path, Path]:
    """(an RVL-CDIP folder with a labels.txt, a folder of Hub-layout Parquet shards) holding the same 6 pages,
    in the same order; the test split in two files (row groups of 2 rows), and a train file."""
    folder = tmp_path / "rvl"
    (folder / "images").mkdir(parents=True)
    lines = (data_dir / "rvl_cdip" / "labels.txt").read_text().split("\n")
    entries = [(line.split()[0], int(line.split()[1])) for line in lines if line.strip()]
    for rel, _ in entries:
        shutil.copy(data_dir / "rvl_cdip" / rel, folder / rel)
    for png in sorted((funsd_dir / "testing_data" / "images").glob("*.png"))[:3]:
        shutil.copy(png, folder / "images" / png.name)
        entries.append((f"images/{png.name}", FORM))
    (folder / "labels.txt").write_text("".join(f"{rel} {label}\n" for rel, label in entries))
    table = pa.Table.from_pylist([{"image": {"bytes": (folder / rel).read_bytes(), "path": Path(rel).name},
                                   "label": label} for rel, label in entries])
    shards = tmp_path / "rvl_cdip_parquet"
    (shards / "data").mkdir(parents=True)
    pq.write_table(table.slice(0, 4), shards / "data" / "test-00000-of-00002.parquet", row_group_size=2)
    pq.write_table(table.slice(4), shards / "data" / "test-00001-of-00002.parquet", row_group_size=2)
    pq.write_table(table.slice(0, 1), shards / "data" / "train-00000-of-00001.parquet")
    return folder, shards


def test_ids_come_from_the_footers_and_rows_load_as_the_folders_pages(pages, monkeypatch):
    folder, shards = pages
    read = pq.ParquetFile.read_row_group
    monkeypatch.setattr(pq.ParquetFile, "read_row_group", lambda *a, **k: pytest.fail("a row was read"))
    source = RvlCdipSource(parquet=str(shards), split="test", ocr=False)
    ids = source.ids()
    assert list(ids) == [f"test-00000-of-00002/{r}" for r in range(4)] + [f"test-00001-of-00002/{r}" for r in range(2)]
    assert ids[1:3][1] == "test-00000-of-00002/2" and ids.index("test-00001-of-00002/1") == 5
    monkeypatch.setattr(pq.ParquetFile, "read_row_group", read)
    by_folder = RvlCdipSource(root=folder, split="test", ocr=False)
    expected = [by_folder.load(i) for i in by_folder.ids()]
    assert [d.label for d in expected] == ["memo", "invoice", "handwritten", "form", "form", "form"]
    for want, got in zip(expected, map(source.load, ids)):
        assert got.image.encoded_bytes() == want.image.encoded_bytes() and got.label == want.label
        assert (got.image.to_pil().tobytes() == want.image.to_pil().tobytes())
    # read_slice: the same documents, in order, in one pass (rows 3..5 span both files and two row groups)
    assert [(d.id, d.label, d.image.encoded_bytes()) for d in source.read_slice(3, 6)] == \
        [(d.id, d.label, d.image.encoded_bytes()) for d in map(source.load, ids[3:6])]
    # --source naming the shards (a folder without labels, a glob) opens them too; other splits are left out
    assert RvlCdipSource(root=shards, split="test", ocr=False).ids() == ids
    train = RvlCdipSource(root=str(shards / "data" / "*.parquet"), split="train", ocr=False)
    assert list(train.ids()) == ["train-00000-of-00001/0"] and train.load(train.ids()[0]).label == "memo"


def test_refusals_name_the_files(pages, tmp_path):
    _, shards = pages
    with pytest.raises(SourceError, match=r"no Parquet file of the 'val' split .*train, test|no Parquet file of the "
                                          r"'val' split .*test, train"):
        RvlCdipSource(parquet=str(shards), split="val", ocr=False)
    with pytest.raises(SourceError, match="no Parquet file at"):
        RvlCdipSource(parquet=str(tmp_path / "nothing-*.parquet"), ocr=False)
    pq.write_table(pa.table({"label": [1]}), tmp_path / "test-00000-of-00001.parquet")
    with pytest.raises(SourceError, match=r"test-00000-of-00001\.parquet: no column image"):
        RvlCdipSource(parquet=str(tmp_path / "test-00000-of-00001.parquet"), ocr=False)
    source = RvlCdipSource(parquet=str(shards), ocr=False)
    with pytest.raises(DocumentError, match="not a row of the Parquet files"):
        source.load("test-00000-of-00002/9")


@needs_tesseract
def test_rvl_cdip_l_from_parquet_equals_the_folder_build(pages, tmp_path):
    """The same rows from both layouts, but the ``id`` (``<file stem>/<row>`` vs the labels file's path), the
    image cell's ``path`` (made from the id) and each step's seed in the provenance (seeds are hashed from the id;
    ``merge`` draws nothing): the same OCR words, merged boxes, labels and image bytes."""
    from dogood.pipeline.build import build
    from dogood.pipeline.recipe import load_recipe

    folder, shards = pages
    recipe = load_recipe("rvl-cdip-l")
    build(recipe, tmp_path / "from-folder", source_path=folder, configs=["merge"], progress=False)
    report = build(recipe, tmp_path / "from-parquet", source_path=shards, configs=["merge"], progress=False)
    assert report.documents == {"test": 6}
    a = pq.read_table(sorted((tmp_path / "from-folder" / "data" / "merge").glob("*.parquet"))).to_pylist()
    b = pq.read_table(sorted((tmp_path / "from-parquet" / "data" / "merge").glob("*.parquet"))).to_pylist()
    assert [r["id"] for r in b] == list(RvlCdipSource(parquet=str(shards), ocr=False).ids())
    assert [r["label"] for r in b] == [15, 11, 3, FORM, FORM, FORM]
    assert sum(len(r["tokens"]) for r in b) > 100  # the pages' words were read
    for x, y in zip(a, b, strict=True):
        assert x["image"]["bytes"] == y["image"]["bytes"]
        for row in (x, y):
            assert [step.pop("seed") for step in row["dogood"]["provenance"]] != [None]
        assert {k: v for k, v in x.items() if k not in ("id", "image")} == \
            {k: v for k, v in y.items() if k not in ("id", "image")}


def test_shards_on_a_hub_read_through_hf_urls(pages):
    """``hf://datasets/<repo>/data``, read through huggingface_hub's fsspec file system with HTTP range requests,
    from the test Hub server (tests/hub_server.py): the same ids and documents as the local files."""
    pytest.importorskip("huggingface_hub")
    from hub_server import HubServer, hub_environment
    from huggingface_hub import HfApi

    _, shards = pages
    local = RvlCdipSource(parquet=str(shards), split="test", ocr=False)
    with HubServer() as hub, hub_environment(hub.url):
        api = HfApi(endpoint=hub.url, token="hf_test")
        api.create_repo("tester/rvl_cdip", repo_type="dataset")
        api.upload_folder(repo_id="tester/rvl_cdip", repo_type="dataset", folder_path=str(shards))
        remote = RvlCdipSource(root="hf://datasets/tester/rvl_cdip/data", split="test", ocr=False)
        assert remote.ids() == local.ids() and remote.parquet_folder is None
        got = [(d.id, d.label, d.image.encoded_bytes()) for d in remote.read_slice(0, 6)]
        assert got == [(d.id, d.label, d.image.encoded_bytes()) for d in map(local.load, local.ids())]
        assert remote.load("test-00001-of-00002/1").label == "form"
        assert any(kind == "resolve" and status == 206 for kind, _, _, status in hub.requests)  # ranges, not files
        assert remote.describe()["parquet"] == "hf://datasets/tester/rvl_cdip/data"
