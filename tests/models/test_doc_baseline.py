"""The offline document-classification baseline: training, files, load_model, CLI and eval end to end (synthetic pages)."""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest

from dogood.cli import main
from dogood.core.schema import RVL_CDIP_CLASSES
from dogood.models import ModelError, default_document_baseline_path, load_model
from dogood.models.baseline import BaselineTagger, train_baseline
from dogood.models.doc_baseline import DocumentBaseline, pixel_features, terms, train_document_baseline
from dogood.pipeline.build import build
from dogood.pipeline.recipe import parse_recipe
from dogood.sources.synthetic import _FORM_CLASSES, SyntheticSource

TRAIN_PAGES = 160
TEST_PAGES = 80


@pytest.fixture(scope="module")
def test_docs():
    source = SyntheticSource(pages=TEST_PAGES, split="test")
    return [source.load(i) for i in source.ids()]


@pytest.fixture(scope="module")
def model(document_baseline):
    """The session's document baseline (tests/conftest.py: TRAIN_PAGES synthetic pages)."""
    assert document_baseline.meta["num_documents"] == TRAIN_PAGES
    return document_baseline


@pytest.fixture(scope="module")
def saved(model, tmp_path_factory):
    return model.save(tmp_path_factory.mktemp("docbase") / "doc.dogood-model")


def test_it_beats_chance_on_held_out_synthetic_pages(model, test_docs):
    preds = model.predict(test_docs)
    assert set(preds) == {d.id for d in test_docs}
    assert all(p.label in RVL_CDIP_CLASSES and 0 < p.confidence <= 1 for p in preds.values())
    right = sum(preds[d.id].label == d.label for d in test_docs) / len(test_docs)
    # A synthetic page's class decides only its layout (key-value lines for 6 form-like classes, prose for the
    # other 10), so within a group the class is a guess: the best possible accuracy is about 2/16 = 12.5 %,
    # chance is 1/16. The model tells the two groups apart almost always.
    group = sum((preds[d.id].label in _FORM_CLASSES) == (d.label in _FORM_CLASSES) for d in test_docs) / len(test_docs)
    assert group >= 0.9, group
    assert right > 1 / 16, right
    assert model.task == "document" and model.sees == {"text", "image"}
    assert model.classes == RVL_CDIP_CLASSES


def test_features_have_fixed_size_and_text_terms(test_docs):
    doc = test_docs[0]
    assert pixel_features(doc).shape == (24 * 32 + 64 + 48,)
    ts = terms(doc)
    assert ts and any(" " in t for t in ts) and all(t == t.lower() for t in ts)


def test_a_class_absent_from_training_gets_probability_zero(test_docs):
    two = [d for d in test_docs if d.label in ("letter", "form")][:12]
    assert {d.label for d in two} == {"letter", "form"}
    small = train_document_baseline(two)
    assert small.classes == ("letter", "form")
    probs = small.probabilities(test_docs[:5])
    assert probs.shape == (5, 16)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0)
    others = [k for k, c in enumerate(RVL_CDIP_CLASSES) if c not in ("letter", "form")]
    assert (probs[:, others] == 0).all()
    assert {p.label for p in small.predict(test_docs[:5]).values()} <= {"letter", "form"}


def test_training_needs_two_labelled_classes(test_docs):
    one = [d for d in test_docs if d.label == test_docs[0].label]
    with pytest.raises(ValueError, match="two classes"):
        train_document_baseline(one)


def test_save_load_gives_same_predictions_and_bytes(model, saved, test_docs, tmp_path):
    loaded = DocumentBaseline.load(saved)
    a, b = model.predict(test_docs), loaded.predict(test_docs)
    assert {k: (p.label, p.confidence) for k, p in a.items()} == {k: (p.label, p.confidence) for k, p in b.items()}
    again = loaded.save(tmp_path / "again.dogood-model")
    assert again.read_bytes() == saved.read_bytes()
    with zipfile.ZipFile(saved) as zf:
        meta = json.loads(zf.read("meta.json"))
    assert meta["format"] == "dogood-doc-baseline" and meta["kind"] == "document"
    assert meta["num_documents"] == TRAIN_PAGES


def _rewrite(src, dst, change):
    with zipfile.ZipFile(src) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    change(members)
    with zipfile.ZipFile(dst, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return dst


def test_malformed_files_are_clear_errors(saved, tmp_path):
    not_zip = tmp_path / "junk.dogood-model"
    not_zip.write_bytes(b"not a zip at all")
    with pytest.raises(ModelError, match="junk.dogood-model.*not a valid zip"):
        DocumentBaseline.load(not_zip)
    with pytest.raises(ModelError, match="does not exist"):
        DocumentBaseline.load(tmp_path / "missing.dogood-model")
    lacking = _rewrite(saved, tmp_path / "lacking.dogood-model", lambda m: m.pop("idf.npy"))
    with pytest.raises(ModelError, match="lacking.dogood-model.*lacks idf.npy"):
        load_model(lacking)
    short = _rewrite(saved, tmp_path / "short.dogood-model",
                     lambda m: m.__setitem__("pixel_mean.npy", m["pixel_mean.npy"][:-40]))
    with pytest.raises(ModelError, match="short.dogood-model.*pixel_mean"):
        load_model(short)

    def pickled(m):
        import io
        buf = io.BytesIO()
        np.save(buf, np.array([{"a": 1}], dtype=object), allow_pickle=True)
        m["idf.npy"] = buf.getvalue()

    with pytest.raises(ModelError, match="obj.dogood-model.*idf.npy"):
        load_model(_rewrite(saved, tmp_path / "obj.dogood-model", pickled))

    def bad_shape(m):
        import io
        buf = io.BytesIO()
        np.save(buf, np.zeros(3))
        m["pixel_intercept.npy"] = buf.getvalue()

    with pytest.raises(ModelError, match="shape.dogood-model.*pixel_intercept"):
        load_model(_rewrite(saved, tmp_path / "shape.dogood-model", bad_shape))

    def bad_meta(m):
        meta = json.loads(m["meta.json"])
        meta["format_version"] = 99
        m["meta.json"] = json.dumps(meta).encode()

    with pytest.raises(ModelError, match="version.dogood-model.*format version 99"):
        load_model(_rewrite(saved, tmp_path / "version.dogood-model", bad_meta))


def test_load_model_picks_the_right_kind(saved, tmp_path, monkeypatch):
    assert isinstance(load_model(saved), DocumentBaseline)
    crf_docs = [SyntheticSource(pages=3, split="train", schema="funsd").load(f"train-0000{i}") for i in range(3)]
    crf = train_baseline(crf_docs, max_iterations=5).save(tmp_path / "crf.dogood-model")
    assert isinstance(load_model(crf), BaselineTagger)
    # "baseline" picks the file by the dataset's task
    monkeypatch.setenv("DOGOOD_CACHE", str(tmp_path / "cache"))
    with pytest.raises(ModelError, match="train-baseline --task document"):
        load_model("baseline", task="document")
    path = default_document_baseline_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(saved.read_bytes())
    assert isinstance(load_model("baseline", task="document"), DocumentBaseline)


def test_cli_trains_on_synthetic_pages_and_eval_runs_end_to_end(tmp_path, capsys):
    out = tmp_path / "doc.dogood-model"
    assert main(["train-baseline", "--task", "document", "--source", "synthetic", "--pages", "40",
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "on 40 synthetic train pages" in printed and "synthetic test (40 pages): accuracy" in printed
    recipe = parse_recipe({"name": "syn-rvl", "version": "1.0.0", "description": "synthetic RVL-CDIP-style pages",
                           "source": {"kind": "synthetic", "pages": 40}, "splits": ["test"], "seed": 0,
                           "configs": {"original": [], "merge": [{"shift": "merge"}]}})
    build(recipe, tmp_path / "built", progress=False)
    report = tmp_path / "report"
    assert main(["eval", "--model", str(out), "--id", f"{tmp_path / 'built'}:original",
                 "--ood", f"{tmp_path / 'built'}:merge", "--out", str(report), "--quiet", "--bootstrap", "50"]) == 0
    info = json.loads((report / "report.json").read_text())
    assert info["task"] == "document" and info["metric"] == "accuracy"
    assert len(info["datasets"]) == 2
    assert (report / "report.md").is_file()


def test_cli_errors_are_dogood_errors(tmp_path, capsys):
    notes = tmp_path / "notes.txt"
    notes.write_text("mine")
    assert main(["train-baseline", "--task", "document", "--source", "synthetic", "--pages", "4",
                 "--out", str(notes)]) == 1
    assert "notes.txt" in capsys.readouterr().err and notes.read_text() == "mine"
    assert main(["train-baseline", "--task", "document", "--source", "synthetic", "--c1", "0.1"]) == 1
    assert "--c1" in capsys.readouterr().err
    assert main(["train-baseline", "--source", "synthetic"]) == 1
    assert "--task document" in capsys.readouterr().err
    assert main(["train-baseline", "--task", "document", "--source", str(tmp_path / "nowhere")]) == 1
    assert "nowhere" in capsys.readouterr().err


def test_an_array_declaring_2_to_the_40_values_is_refused_within_a_memory_bound(saved, tmp_path, bounded_run):
    """Before, ``np.load`` believed the header and raised a raw MemoryError."""
    import io

    def huge(m):
        buf = io.BytesIO()
        np.lib.format.write_array_header_1_0(buf, {"descr": "<f8", "fortran_order": False, "shape": (1 << 40,)})
        m["idf.npy"] = buf.getvalue()
        meta = json.loads(m["meta.json"])
        meta.pop("sha256")  # an attacker drops the checksums (models saved before them have none)
        m["meta.json"] = json.dumps(meta).encode()

    path = _rewrite(saved, tmp_path / "huge.dogood-model", huge)
    with pytest.raises(ModelError, match=r"huge.dogood-model: idf.npy is not a valid array \(the idf.npy declares "
                                         r"shape \(1099511627776,\)"):
        DocumentBaseline.load(path)
    run = bounded_run(f"from dogood.cli import main\nsys.exit(main(['eval', '--model', {str(path)!r}, '--id', "
                      "'rvl_cdip', '--ood', 'rvl_cdip', '--out', 'rep', '--bootstrap', '0', '--quiet']))", address_space_mib=4096)
    assert run.code == 1 and run.last_line.startswith("dogood: error: ") and "idf.npy" in run.last_line, run.err
    assert run.peak_mib < 600, run.peak_mib
