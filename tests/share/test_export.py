"""`dogood export`: FUNSD JSON that equals FUNSD's own files and reads back, COCO that pycocotools loads, JSONL;
complete or absent; destinations that are not dogood's are never replaced."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from dogood.cli import main
from dogood.sources.funsd import FunsdSource


@pytest.fixture(scope="module")
def funsd_build(funsd_dir, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("export") / "funsd"
    assert main(["build", "funsd", "--source", str(funsd_dir), "--out", str(out), "--limit", "3", "--quiet"]) == 0
    return out


@pytest.fixture(scope="module")
def merge_build(funsd_dir, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("export") / "funsd-l"
    assert main(["build", "funsd-l", "--source", str(funsd_dir), "--out", str(out), "--limit", "2",
                 "--config", "merge,merge_x0_y0", "--quiet"]) == 0
    return out


def _built(folder: Path, config: str):
    from dogood.sources.hf_dataset import HFDatasetSource

    src = HFDatasetSource(name=str(folder), config=config, split="test")
    return [src.load(i) for i in src.ids()]


def test_funsd_json_of_an_unshifted_build_is_funsd_itself(funsd_build, funsd_dir, funsd_test, tmp_path):
    dest = tmp_path / "funsd-json"
    assert main(["export", str(funsd_build), "--format", "funsd-json", "--to", str(dest)]) == 0
    ids = funsd_test.ids()[:3]
    ann_dir = dest / "original" / "testing_data" / "annotations"
    assert sorted(p.stem for p in ann_dir.glob("*.json")) == sorted(ids)
    for doc_id in ids:
        ours = json.loads((ann_dir / f"{doc_id}.json").read_text(encoding="utf-8"))["form"]
        theirs = json.loads((funsd_dir / "testing_data" / "annotations" / f"{doc_id}.json").read_text(encoding="utf-8"))["form"]
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            assert (a["id"], a["label"], a["words"], a["linking"]) == (b["id"], b["label"], b["words"], b["linking"])
            # entity boxes are derived: the union of the entity's word boxes
            if a["words"]:
                xs = [w["box"] for w in a["words"]]
                assert a["box"] == [min(x[0] for x in xs), min(x[1] for x in xs), max(x[2] for x in xs),
                                    max(x[3] for x in xs)]
        png = dest / "original" / "testing_data" / "images" / f"{doc_id}.png"
        assert png.read_bytes() == (funsd_dir / "testing_data" / "images" / f"{doc_id}.png").read_bytes()
    # FUNSD's own reader takes the folder and gives the same documents
    back = FunsdSource(root=dest / "original", split="test")
    assert back.ids() == ids
    assert all(back.load(i) == funsd_test.load(i) for i in ids)
    assert FunsdSource(root=dest / "original", split="train").ids() == []
    marker = json.loads((dest / "dogood_export.json").read_text(encoding="utf-8"))
    assert marker["written_by"] == "dogood" and marker["documents"] == {"original": {"test": 3}}


def test_funsd_json_of_a_shifted_build_reads_back_to_the_built_documents(merge_build, tmp_path):
    dest = tmp_path / "x"
    assert main(["export", str(merge_build), "--format", "funsd-json", "--to", str(dest), "--config", "merge"]) == 0
    assert sorted(p.name for p in dest.iterdir()) == ["dogood_export.json", "merge"]
    back = FunsdSource(root=dest / "merge", split="test")
    built = _built(merge_build, "merge")
    assert [d.id for d in built] == back.ids()
    for doc in built:
        assert back.load(doc.id) == doc.replace(provenance=())
    assert any(w.box != v.box for w, v in zip(built[0].words, FunsdSource(split="test").load(built[0].id).words))


@pytest.mark.parametrize("level", ["entity", "word"])
def test_coco_loads_in_pycocotools_with_every_box(merge_build, tmp_path, level):
    from pycocotools.coco import COCO

    dest = tmp_path / "coco"
    assert main(["export", str(merge_build), "--format", "coco", "--to", str(dest), "--level", level]) == 0
    for config in ("merge", "merge_x0_y0"):
        docs = _built(merge_build, config)
        coco = COCO(str(dest / config / "test" / "annotations.json"))
        assert len(coco.getImgIds()) == len(docs)
        names = {c["id"]: c["name"] for c in coco.loadCats(coco.getCatIds())}
        for doc in docs:
            (img,) = [i for i in coco.loadImgs(coco.getImgIds()) if i["dogood_id"] == doc.id]
            assert (img["width"], img["height"]) == (doc.width, doc.height)
            with Image.open(dest / config / "test" / img["file_name"]) as im:
                assert im.size == (doc.width, doc.height)
            anns = coco.loadAnns(coco.getAnnIds(imgIds=[img["id"]]))
            if level == "entity":
                want = sorted((doc.entity_box(e), e.label) for e in doc.entities if doc.entity_box(e))
            else:
                owner = doc.word_entity()
                want = sorted((w.box, owner[i].label if owner[i] else "word") for i, w in enumerate(doc.words))
            got = sorted(((a["bbox"][0], a["bbox"][1], a["bbox"][0] + a["bbox"][2], a["bbox"][1] + a["bbox"][3]),
                          names[a["category_id"]]) for a in anns)
            assert got == want
        assert set(names.values()) <= {"header", "question", "answer", "other", "word"}


def test_jsonl_has_one_record_per_document(merge_build, tmp_path):
    dest = tmp_path / "j"
    assert main(["export", str(merge_build), "--format", "jsonl", "--to", str(dest), "--config", "merge_x0_y0"]) == 0
    docs = _built(merge_build, "merge_x0_y0")
    lines = (dest / "merge_x0_y0" / "test" / "documents.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(docs)
    for line, doc in zip(lines, docs):
        rec = json.loads(line)
        assert rec["id"] == doc.id and rec["label"] is None
        assert rec["words"] == [w.text for w in doc.words]
        assert rec["boxes"] == [list(w.box) for w in doc.words]
        assert rec["labels"] == [e.label if e else None for e in doc.word_entity()]
        with Image.open(dest / "merge_x0_y0" / "test" / rec["image"]) as im:
            assert im.size == (rec["width"], rec["height"]) == (doc.width, doc.height)


def test_export_is_complete_or_absent_and_never_replaces_what_is_not_ours(merge_build, tmp_path, capsys, monkeypatch):
    def one_line_error(fragment: str):
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("dogood: error: ") and fragment in err[0], err

    user = tmp_path / "mine"
    user.mkdir()
    (user / "notes.txt").write_text("keep", encoding="utf-8")
    assert main(["export", str(merge_build), "--format", "jsonl", "--to", str(user)]) == 1
    one_line_error("is not a dogood export")
    assert [p.name for p in user.iterdir()] == ["notes.txt"]

    dest = tmp_path / "out"
    assert main(["export", str(merge_build), "--format", "jsonl", "--to", str(dest)]) == 0
    assert main(["export", str(merge_build), "--format", "coco", "--to", str(dest)]) == 1
    one_line_error("pass --overwrite")
    assert main(["export", str(merge_build), "--format", "coco", "--to", str(dest), "--overwrite"]) == 0
    assert (dest / "merge" / "test" / "annotations.json").is_file()
    assert not (dest / "merge" / "test" / "documents.jsonl").exists()

    assert main(["export", str(merge_build), "--format", "jsonl", "--to", str(merge_build / "x")]) == 1
    one_line_error("overlaps the dataset folder")
    assert main(["export", str(merge_build), "--format", "jsonl", "--config", "nope*"]) == 1
    one_line_error("no config matching 'nope*'")
    assert main(["export", str(tmp_path), "--format", "jsonl"]) == 1
    one_line_error("is not a dataset folder dogood built")

    # a failure half-way leaves neither a destination nor a partial folder
    import dogood.share.export as export_module

    def broken(docs, config_dir, split, level):
        (config_dir / split).mkdir(parents=True)
        raise OSError(28, "No space left on device", str(config_dir / split / "documents.jsonl"))

    monkeypatch.setattr(export_module, "_write_jsonl", broken)
    fresh = tmp_path / "fresh"
    assert main(["export", str(merge_build), "--format", "jsonl", "--to", str(fresh)]) == 1
    one_line_error("No space left on device")
    assert not fresh.exists() and not list(tmp_path.glob(".fresh*"))
    # the default destination sits beside the build
    monkeypatch.undo()
    assert main(["export", str(merge_build), "--format", "jsonl"]) == 0
    assert (merge_build.with_name("funsd-l-jsonl") / "dogood_export.json").is_file()


def test_data_without_entities_exports_word_boxes_and_refuses_funsd_json(tmp_path, capsys):
    from pycocotools.coco import COCO

    recipe = tmp_path / "syn.yaml"
    recipe.write_text("name: syn\nversion: 1.0.0\nsource: {kind: synthetic, pages: 2}\nsplits: [test]\nseed: 0\n"
                      "configs:\n  original: []\n", encoding="utf-8")
    out = tmp_path / "syn"
    assert main(["build", str(recipe), "--out", str(out), "--quiet"]) == 0
    docs = _built(out, "original")
    capsys.readouterr()
    assert main(["export", str(out), "--format", "funsd-json"]) == 1
    assert "has no FUNSD entities" in capsys.readouterr().err
    assert not out.with_name("syn-funsd-json").exists()
    assert main(["export", str(out), "--format", "coco"]) == 0
    coco = COCO(str(out.with_name("syn-coco") / "original" / "test" / "annotations.json"))
    assert len(coco.getAnnIds()) == sum(len(d.words) for d in docs) > 0
    assert [c["name"] for c in coco.loadCats(coco.getCatIds())] == ["word"]
    assert [i["label"] for i in coco.loadImgs(coco.getImgIds())] == [d.label for d in docs]


# -- what is exported is what the build wrote; failures name the file (issue 36) ---------------------------------
def test_a_shard_changed_since_the_build_is_refused_before_any_row_is_exported(funsd_dir, tmp_path, capsys):
    """Before, a shard rewritten with quads of 1e38 was exported as it was (its recorded sha256 never checked)."""
    import shutil

    import pyarrow.parquet as pq

    out = tmp_path / "funsd"
    assert main(["build", "funsd", "--source", str(funsd_dir), "--out", str(out), "--limit", "2", "--quiet"]) == 0
    shard = next((out / "data" / "original").glob("*.parquet"))
    table = pq.read_table(shard)
    pq.write_table(table.set_column(0, table.schema.field(0), [[f"x{i}" for i in range(table.num_rows)]]), shard)
    dest = tmp_path / "coco"
    assert main(["export", str(out), "--format", "coco", "--to", str(dest)]) == 1
    err = capsys.readouterr().err
    line = err.strip().splitlines()[-1]
    assert "Traceback" not in err and line.startswith("dogood: error: ")
    assert f"{shard} does not match the sha256 its build recorded" in line and not dest.exists()
    shutil.rmtree(out)


@pytest.mark.parametrize("command", ["export", "gallery"])
def test_a_full_disk_is_one_error_naming_the_file(funsd_build, tmp_path, bounded_run, command):
    """A file-size limit stands in for a full disk: the write fails mid-way (EFBIG; ENOSPC takes the same path).
    Before, the message named no file."""
    dest = tmp_path / ("out-coco" if command == "export" else "gallery.html")
    argv = (["export", str(funsd_build), "--format", "coco", "--to", str(dest)] if command == "export"
            else ["gallery", str(funsd_build), "--html", str(dest), "--docs", "1"])
    run = bounded_run("import resource, signal\n"
                      "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
                      "resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, 20_000))\n"
                      f"from dogood.cli import main\nsys.exit(main({argv!r}))\n")
    line = run.last_line
    assert run.code == 1 and "Traceback" not in run.err and line.startswith("dogood: error: "), run.err
    assert "File too large" in line and str(dest) in line
    assert not dest.exists() and not list(tmp_path.glob(".*partial*"))
