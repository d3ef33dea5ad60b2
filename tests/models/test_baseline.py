"""dogood's CRF baseline: features, training, inference, the model file and its errors."""

from __future__ import annotations

import json
import pickle
import zipfile

import numpy as np
import pytest

from dogood.core.document import Document, Entity, PageImage, Word
from dogood.core.schema import FUNSD_NER_TAGS, iob_tags
from dogood.eval.metrics import funsd_entity_scores
from dogood.models import Model, ModelError, load_model
from dogood.models.baseline import (
    FEATURE_VERSION,
    FORMAT_VERSION,
    META_MEMBER,
    MODEL_MEMBER,
    BaselineTagger,
    train_baseline,
    word_features,
)
from dogood.models.predictions import check_against

# Measured with the session fixture (full FUNSD train, 80 iterations): test entity F1 0.714
# (P 0.724, R 0.704); the defaults (200 iterations) give 0.713. The floor leaves a margin.
FUNSD_TEST_F1_FLOOR = 0.62


def _page(width=800, height=1000):
    return PageImage.from_array(np.full((height, width), 255, np.uint8))


def _doc(words, entities=(), doc_id="synthetic", width=800, height=1000):
    return Document(doc_id, _page(width, height), tuple(Word(t, b) for t, b in words), tuple(entities))


def _form():
    """A tiny form: a header, 'Name:' followed by an answer on the same line, a blank word, a date line."""
    words = [
        ("REPORT", (300, 40, 500, 80)),  # big, capitals: header
        ("Name:", (50, 200, 110, 220)),
        ("John", (150, 200, 200, 220)),
        ("Smith", (205, 200, 260, 220)),
        (" ", (270, 200, 275, 220)),  # blank: not a token word
        ("Date:", (50, 260, 105, 280)),
        ("9/3/92", (150, 260, 220, 280)),
    ]
    entities = [
        Entity(0, "header", (0,)),
        Entity(1, "question", (1,)),
        Entity(2, "answer", (2, 3, 4)),
        Entity(3, "question", (5,)),
        Entity(4, "answer", (6,)),
    ]
    return _doc(words, entities)


# --------------------------------------------------------------------------- features
def test_features_cover_the_token_words_in_order():
    doc = _form()
    feats = word_features(doc)
    index, _ = iob_tags(doc)
    assert len(feats) == len(index) == 6
    assert [f["w"] for f in feats] == ["report", "name:", "john", "smith", "date:", "0/0/00"]
    assert all(isinstance(v, str) or v is True for f in feats for v in f.values())  # categorical, never weights


def test_text_features():
    feats = word_features(_form())
    name, john, date = feats[1], feats[2], feats[5]
    assert name["colon"] is True and name["shape"] == "Xx:" and name.get("title")
    assert "colon" not in john
    assert feats[0]["caps"] is True
    assert date["shape"] == "d/d/d" and date["has_digit"] is True


def test_moving_a_word_changes_its_position_features_only():
    doc = _form()
    before = word_features(doc)
    moved = list(doc.words)
    moved[6] = Word("9/3/92", (600, 900, 670, 920))  # from the upper left to the lower right
    after = word_features(doc.replace(words=tuple(moved)))
    assert (before[5]["x"], before[5]["y"]) != (after[5]["x"], after[5]["y"])
    assert int(after[5]["x"]) > int(before[5]["x"]) and int(after[5]["y"]) > int(before[5]["y"])
    assert before[5]["L.w"] == "date:" and "L.none" in after[5]  # no longer right of 'Date:'
    assert {k: before[5][k] for k in ("w", "shape", "s3")} == {k: after[5][k] for k in ("w", "shape", "s3")}


def test_neighbour_and_font_size_features():
    feats = word_features(_form())
    john, smith, date = feats[2], feats[3], feats[4]
    assert john["L.w"] == "name:" and john["L.colon"] is True  # geometric: directly left, same line
    assert john["-1line"] is True and john["-1colon"] is True  # sequence: previous word on the same line
    assert smith["L.is-1"] is True and "L.colon" not in smith
    assert date["-1newline"] is True and date["A.w"] == "name:"  # a new line starts; 'Name:' is above
    assert int(feats[0]["size"]) > int(john["size"])  # twice the median height: a larger font
    assert feats[0]["BOS"] is True and feats[-1]["EOS"] is True


def test_features_of_a_page_without_words():
    assert word_features(_doc([])) == []
    assert word_features(_doc([(" ", (1, 1, 5, 5))])) == []


# --------------------------------------------------------------------------- training and inference
@pytest.fixture(scope="module")
def train_docs(funsd_train):
    return [funsd_train.load(i) for i in funsd_train.ids()[:10]]


@pytest.fixture(scope="module")
def small_model(train_docs):
    return train_baseline(train_docs, max_iterations=60)


def test_memorises_its_training_documents(small_model, train_docs):
    preds = small_model.predict(train_docs)
    tags = {k: p.tags for k, p in preds.items()}
    assert funsd_entity_scores(train_docs, tags)["f1"] > 0.9
    assert any(t != "O" for p in preds.values() for t in p.tags)
    check_against(preds, train_docs, "token")  # one tag per token word, for every document


def test_predictions_and_marginals_are_consistent(small_model, funsd_test):
    docs = [funsd_test.load(i) for i in funsd_test.ids()[:3]]
    preds = small_model.predict(docs)
    assert set(preds) == {d.id for d in docs}
    assert small_model.labels == FUNSD_NER_TAGS
    for doc in docs:
        p = preds[doc.id]
        n = len(iob_tags(doc)[0])
        assert len(p.tags) == len(p.confidences) == n
        assert set(p.tags) <= set(FUNSD_NER_TAGS)
        marg = small_model.marginals(doc)
        assert marg.shape == (n, len(small_model.labels))
        assert np.all(marg >= 0) and np.allclose(marg.sum(axis=1), 1.0)
        conf = np.array(p.confidences)
        assert np.all((conf >= 0) & (conf <= 1))
        chosen = marg[np.arange(n), [small_model.labels.index(t) for t in p.tags]]
        assert np.allclose(conf, chosen)


def test_a_page_without_token_words(small_model):
    doc = _doc([(" ", (1, 1, 5, 5))], doc_id="blank")
    assert small_model.predict([doc])["blank"].tags == ()
    assert small_model.marginals(doc).shape == (0, len(small_model.labels))


def test_duplicate_ids_are_refused(small_model):
    with pytest.raises(ModelError, match="given twice"):
        small_model.predict([_form(), _form()])


def test_training_is_deterministic(train_docs):
    a = train_baseline(train_docs[:3], max_iterations=15)
    b = train_baseline(train_docs[:3], max_iterations=15)
    assert a.model_bytes == b.model_bytes
    assert a.meta == b.meta


def test_training_refuses_bad_input():
    with pytest.raises(ValueError, match="no training document"):
        train_baseline([])
    odd = _doc([("x", (1, 1, 5, 5))], [Entity(0, "signature", (0,))], doc_id="odd")
    with pytest.raises(ValueError, match="'odd'.*B-SIGNATURE"):
        train_baseline([odd])
    with pytest.raises(ValueError, match="max_iterations"):
        train_baseline([_form()], max_iterations=0)


def test_it_is_a_model_and_pickles(small_model):
    assert isinstance(small_model, Model)
    assert small_model.name == "dogood-crf-baseline" and small_model.task == "token"
    again = pickle.loads(pickle.dumps(small_model))
    doc = _form()
    assert again.predict([doc]) == small_model.predict([doc])


# --------------------------------------------------------------------------- the model file
def test_save_and_load_round_trip(small_model, train_docs, tmp_path):
    path = small_model.save(tmp_path / "sub" / "m.dogood-model")
    assert sorted(p.name for p in path.parent.iterdir()) == ["m.dogood-model"]  # no temporary file left
    with zipfile.ZipFile(path) as zf:
        assert sorted(zf.namelist()) == sorted([META_MEMBER, MODEL_MEMBER])
        meta = json.loads(zf.read(META_MEMBER))
    assert meta["format_version"] == FORMAT_VERSION and meta["feature_version"] == FEATURE_VERSION
    assert meta["labels"] == list(FUNSD_NER_TAGS)
    assert meta["num_documents"] == 10
    assert meta["num_words"] == sum(len(iob_tags(d)[0]) for d in train_docs)
    assert meta["training"]["max_iterations"] == 60 and len(meta["train_ids_sha256"]) == 64
    loaded = BaselineTagger.load(path)
    assert loaded.model_bytes == small_model.model_bytes and loaded.meta == small_model.meta
    assert loaded.predict(train_docs[:3]) == small_model.predict(train_docs[:3])
    again = loaded.save(tmp_path / "again.dogood-model")
    assert again.read_bytes() == path.read_bytes()  # saving is byte-stable


def test_load_model_returns_the_baseline(small_model, tmp_path):
    path = small_model.save(tmp_path / "m.dogood-model")
    model = load_model(path)
    assert isinstance(model, BaselineTagger) and model.source == str(path)


def _rewrite(src, dst, *, drop=(), meta=None, model=None):
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for name in zin.namelist():
            if name in drop:
                continue
            data = zin.read(name)
            if name == META_MEMBER and meta is not None:
                data = json.dumps({**json.loads(data), **meta}).encode()
            if name == MODEL_MEMBER and model is not None:
                data = model
            zout.writestr(name, data)
    return dst


def test_load_errors_name_the_file(small_model, tmp_path):
    good = small_model.save(tmp_path / "good.dogood-model")
    cases = {
        "missing": (tmp_path / "nope.dogood-model", "does not exist"),
        "random": (tmp_path / "random.dogood-model", "not a valid zip"),
        "no model": (_rewrite(good, tmp_path / "nomodel.dogood-model", drop=(MODEL_MEMBER,)), "lacks model.crfsuite"),
        "no meta": (_rewrite(good, tmp_path / "nometa.dogood-model", drop=(META_MEMBER,)), "lacks meta.json"),
        "format": (_rewrite(good, tmp_path / "v99.dogood-model", meta={"format_version": 99}), "format version 99"),
        "features": (_rewrite(good, tmp_path / "f0.dogood-model", meta={"feature_version": 0}), "feature version 0"),
        "crf bytes": (_rewrite(good, tmp_path / "crf.dogood-model", model=b"\0" * 64), "corrupt"),
    }
    (tmp_path / "random.dogood-model").write_bytes(np.random.default_rng(0).bytes(2048))
    for what, (path, message) in cases.items():
        with pytest.raises(ModelError, match=message) as err:
            BaselineTagger.load(path)
        assert str(path) in str(err.value), what
    with pytest.raises(ModelError, match="retrain"):
        load_model(tmp_path / "v99.dogood-model")


# --------------------------------------------------------------------------- the shared fixture
def test_trained_baseline_scores_on_funsd_test(trained_baseline, funsd_test):
    docs = [funsd_test.load(i) for i in funsd_test.ids()]
    preds = trained_baseline.predict(docs)
    check_against(preds, docs, "token")
    scores = funsd_entity_scores(docs, {k: p.tags for k, p in preds.items()})
    assert scores["f1"] > FUNSD_TEST_F1_FLOOR, scores
    assert trained_baseline.meta["num_documents"] == 149


# -- crafted model files (issue 36) ----------------------------------------------------------------------------
def _many_labels(path, n: int) -> bytes:
    """A real CRFsuite model of ``n`` labels (one one-item sequence each; CRFsuite's tagger allocates n x n
    transition scores twice when it opens it: 8,000 labels in a 339 kB file took 1.5 GB, 20,000 3.3 GB)."""
    import pycrfsuite

    trainer = pycrfsuite.Trainer(verbose=False)
    trainer.select("lbfgs")
    trainer.set_params({"max_iterations": 1, "feature.possible_transitions": False})
    for k in range(n):
        trainer.append(pycrfsuite.ItemSequence([{"bias": 1.0, f"w={k % 7}": 1.0}]), [f"B-L{k}"])
    trainer.train(str(path))
    return path.read_bytes()


def test_a_crf_model_declaring_too_many_labels_is_refused_before_crfsuite_opens_it(small_model, tmp_path,
                                                                                   bounded_run):
    from dogood.models.crf_file import check_crf_model

    model = _many_labels(tmp_path / "many.crfsuite", 1100)
    assert check_crf_model(model, max_labels=2000)[1] == 1100  # a well-formed file: only the count is refused
    good = small_model.save(tmp_path / "good.dogood-model")
    with zipfile.ZipFile(good) as zf:
        meta = json.loads(zf.read("meta.json"))
    meta.pop("sha256")
    crafted = tmp_path / "many.dogood-model"
    with zipfile.ZipFile(crafted, "w") as zf:
        zf.writestr("meta.json", json.dumps(meta))
        zf.writestr("model.crfsuite", model)
    run = bounded_run(f"from dogood.cli import main\nsys.exit(main(['eval', '--model', {str(crafted)!r}, "
                      "'--id', 'funsd', '--ood', 'funsd', '--limit', '1', '--out', 'rep', '--bootstrap', '0', '--quiet']))",
                      address_space_mib=4096)
    assert run.code == 1 and run.last_line.startswith("dogood: error: ") and str(crafted) in run.last_line, run.err
    assert "declares 1100 labels" in run.last_line and "DOGOOD_LIMIT_CRF_LABELS" in run.last_line
    assert run.peak_mib < 600, run.peak_mib


def test_the_crf_limits_are_read_from_the_environment(small_model, tmp_path, monkeypatch):
    from dogood.core import fs

    path = small_model.save(tmp_path / "m.dogood-model")
    monkeypatch.setenv("DOGOOD_LIMIT_CRF_LABELS", "3")
    fs.set_limits(None)
    try:
        with pytest.raises(ModelError, match=r"m.dogood-model: model.crfsuite is corrupt or crafted \(the model "
                                             r"declares \d+ labels .* more than the 3"):
            BaselineTagger.load(path)
        monkeypatch.setenv("DOGOOD_LIMIT_CRF_BYTES", "1000")
        fs.set_limits(None)
        with pytest.raises(ModelError, match="more than the 1000 dogood opens"):
            BaselineTagger.load(path)
    finally:
        monkeypatch.delenv("DOGOOD_LIMIT_CRF_LABELS")
        monkeypatch.delenv("DOGOOD_LIMIT_CRF_BYTES")
        fs.set_limits(None)
    assert BaselineTagger.load(path).labels == small_model.labels


def test_a_model_path_that_is_a_fifo_is_refused_without_waiting(tmp_path):
    import os

    fifo = tmp_path / "m.dogood-model"
    os.mkfifo(fifo)
    with pytest.raises(ModelError, match="is not a file"):
        BaselineTagger.load(fifo)
