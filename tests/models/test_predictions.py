"""Predictions files (models run elsewhere): format checks and checks against the documents."""

from __future__ import annotations

import json

import pytest

from dogood.core.schema import iob_tags
from dogood.models.predictions import PredictionError, check_against, read_predictions


def write_jsonl(path, objs):
    path.write_text("".join(json.dumps(o) + "\n" for o in objs))
    return path


@pytest.fixture(scope="module")
def two_docs(funsd_test):
    return [funsd_test.load(i) for i in funsd_test.ids()[:2]]


def test_gold_tags_as_predictions_read_back_exactly(two_docs, tmp_path):
    objs = [{"id": d.id, "ner_tags": iob_tags(d)[1], "confidences": [0.9] * len(iob_tags(d)[1])} for d in two_docs]
    preds = read_predictions(write_jsonl(tmp_path / "p.jsonl", objs), "token")
    check_against(preds, two_docs, "token")
    for d in two_docs:
        assert list(preds[d.id].tags) == iob_tags(d)[1]
        assert preds[d.id].confidences == (0.9,) * len(iob_tags(d)[1])


def test_tags_of_another_label_set_are_read(tmp_path):
    preds = read_predictions(write_jsonl(tmp_path / "p.jsonl", [{"id": "a", "ner_tags": ["B-MENU.NM", "I-MENU.NM",
                                                                                       "O"]}]), "token")
    assert preds["a"].tags == ("B-MENU.NM", "I-MENU.NM", "O")


def test_tag_indices_are_read_as_names(tmp_path):
    preds = read_predictions(write_jsonl(tmp_path / "p.jsonl", [{"id": "a", "ner_tags": [0, 3, 4]}]), "token")
    assert preds["a"].tags == ("O", "B-QUESTION", "I-QUESTION")


@pytest.mark.parametrize(
    "obj, message",
    [
        ({"id": "a", "ner_tags": ["DATE", 9]}, "nor IOB names (O, B-X, I-X) of another label set: 9, DATE"),
        ({"id": "a", "ner_tags": ["O"], "confidences": [1.5]}, "confidence 1.5 is outside [0, 1]"),
        ({"id": "a", "ner_tags": ["O", "O"], "confidences": [0.5]}, "1 confidences for 2 tags"),
        ({"ner_tags": ["O"]}, "a string 'id'"),
    ],
)
def test_malformed_lines_name_file_line_and_document(tmp_path, obj, message):
    path = write_jsonl(tmp_path / "p.jsonl", [{"id": "ok", "ner_tags": []}, obj])
    with pytest.raises(PredictionError) as err:
        read_predictions(path, "token")
    assert message in str(err.value) and f"{path}, line 2" in str(err.value)


def test_unknown_missing_and_misaligned_documents(two_docs, tmp_path):
    a, b = two_docs
    good_a = {"id": a.id, "ner_tags": iob_tags(a)[1]}
    good_b = {"id": b.id, "ner_tags": iob_tags(b)[1]}
    preds = read_predictions(write_jsonl(tmp_path / "1.jsonl", [good_a, good_b, {"id": "nope", "ner_tags": []}]), "token")
    with pytest.raises(PredictionError, match="unknown document id\\(s\\): nope"):
        check_against(preds, two_docs, "token")
    preds = read_predictions(write_jsonl(tmp_path / "2.jsonl", [good_a]), "token")
    with pytest.raises(PredictionError, match=f"no prediction for document\\(s\\): {b.id}"):
        check_against(preds, two_docs, "token")
    short = {"id": b.id, "ner_tags": iob_tags(b)[1][:-1]}
    preds = read_predictions(write_jsonl(tmp_path / "3.jsonl", [good_a, short]), "token")
    n = len(iob_tags(b)[1])
    with pytest.raises(PredictionError, match=f"document '{b.id}' has {n} tokens but {n - 1} predicted tags"):
        check_against(preds, two_docs, "token")


def test_document_labels_and_missing_file(tmp_path):
    preds = read_predictions(write_jsonl(tmp_path / "d.jsonl", [{"id": "x", "label": 15}, {"id": "y", "label": "form"}]), "document")
    assert preds["x"].label == "memo" and preds["y"].label == "form"
    with pytest.raises(PredictionError, match="label 'poster' is not one of the 16"):
        read_predictions(write_jsonl(tmp_path / "e.jsonl", [{"id": "x", "label": "poster"}]), "document")
    with pytest.raises(PredictionError, match="does not exist"):
        read_predictions(tmp_path / "absent.jsonl", "document")
    with pytest.raises(PredictionError, match="a second prediction"):
        read_predictions(write_jsonl(tmp_path / "f.jsonl", [{"id": "x", "label": 1}, {"id": "x", "label": 2}]), "document")


def test_a_fifo_or_a_device_as_the_predictions_file_is_refused_without_waiting(tmp_path):
    """Issue 36: the predictions file goes through the one reader (a regular file, Limits.jsonl_bytes)."""
    import os

    fifo = tmp_path / "preds.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(PredictionError, match="preds.jsonl: the predictions file is a FIFO"):
        read_predictions(fifo, "token")
    link = tmp_path / "zero.jsonl"
    link.symlink_to("/dev/zero")
    with pytest.raises(PredictionError, match="zero.jsonl: the predictions file is a device"):
        read_predictions(link, "token")
