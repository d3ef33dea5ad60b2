"""The baseline reads what a Hugging Face token classifier reads: ``tokens`` and ``bboxes`` at the data's convention
(issue 25, part 2), and ``dogood eval`` refuses data in another convention."""

from __future__ import annotations

import json
import zipfile

import pytest

from dogood.cli.main import main
from dogood.eval import EvalError, evaluate
from dogood.models.baseline import BaselineTagger, token_inputs, train_baseline
from dogood.pipeline.build import build
from dogood.pipeline.recipe import load_recipe


@pytest.fixture(scope="module")
def small_models(funsd_train, tmp_path_factory):
    """The baseline at each convention, trained briefly on 20 FUNSD train forms."""
    docs = [funsd_train.load(i) for i in funsd_train.ids()[:20]]
    folder = tmp_path_factory.mktemp("models")
    return {level: BaselineTagger.load(train_baseline(docs, box_level=level, max_iterations=30)
                                       .save(folder / f"{level}.dogood-model"))
            for level in ("segment", "word", "record")}


@pytest.fixture(scope="module")
def built(funsd_dir, tmp_path_factory):
    """FUNSD test's first 4 forms as the `funsd` recipe builds them, at each convention, and `merge` of funsd-l."""
    out = {}
    for level in ("segment", "word"):
        folder = tmp_path_factory.mktemp(f"funsd-{level}") / "funsd"
        build(load_recipe("funsd"), folder, source_path=funsd_dir, limit=4, box_level=level, progress=False)
        out[level] = folder
    folder = tmp_path_factory.mktemp("funsd-l") / "funsd-l"
    build(load_recipe("funsd-l"), folder, source_path=funsd_dir, limit=4, configs=["merge", "merge_x0_y0"],
          progress=False)
    out["funsd-l"] = folder
    return out


def _rows(folder, config="original"):
    import datasets

    return datasets.load_dataset(str(folder), config, split="test")


@pytest.mark.parametrize("level", ["segment", "word"])
def test_the_baseline_reads_the_rows_tokens_and_bboxes(built, level):
    from dogood.sources.hf_dataset import HFDatasetSource

    rows = _rows(built[level])
    with_record = HFDatasetSource(str(built[level]), config="original")
    without = HFDatasetSource(name="rows", dataset=rows.remove_columns("dogood"))
    for row in rows:
        for source in (with_record, without):
            texts, boxes, w, h = token_inputs(source.load(row["id"]), level)
            assert texts == [t.strip() for t in row["tokens"]] and (w, h) == (1000.0, 1000.0)
            assert boxes.astype(int).tolist() == row["bboxes"]


def test_the_score_is_the_same_with_and_without_the_record_column(built, small_models):
    """The ID score with the `dogood` column and without it (the model then reads the same tokens and bboxes)."""
    rows = _rows(built["segment"])
    with_record = evaluate(small_models["segment"], f"{built['segment']}:original", f"{built['funsd-l']}:merge",
                           resamples=0)
    without = evaluate(small_models["segment"], rows.remove_columns("dogood"), f"{built['funsd-l']}:merge",
                       resamples=0)
    assert with_record.id["f1"] == without.id["f1"] > 30
    # the old way, the record's pixel word boxes (the Move scorer's input), is not what the rows give at segment level
    record = small_models["record"]
    assert record.box_level == "record" and small_models["segment"].box_level == "segment"


def test_a_model_of_another_convention_is_refused(built, small_models):
    with pytest.raises(EvalError, match="reads word boxes, but dataset 'funsd/original' has segment-level bboxes"):
        evaluate(small_models["word"], f"{built['segment']}:original", f"{built['funsd-l']}:merge", resamples=0)
    with pytest.raises(EvalError, match="reads record boxes.*Move shift's scorer"):
        evaluate(small_models["record"], "funsd", f"{built['funsd-l']}:merge", resamples=0)
    # a source read by dogood's loaders has no convention of its own: the model reads it at its own
    report = evaluate(small_models["segment"], "funsd", f"{built['funsd-l']}:merge_x0_y0", resamples=0, limit=4)
    assert report.box_level == "segment" and report.warnings == []


def test_the_model_file_records_its_convention_and_an_old_file_is_a_record_model(small_models, tmp_path):
    path = small_models["word"].source
    with zipfile.ZipFile(path) as zf:
        meta = json.loads(zf.read("meta.json"))
    assert meta["box_level"] == "word"
    old = tmp_path / "old.dogood-model"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(old, "w") as dst:
        for name in src.namelist():
            data = src.read(name)
            if name == "meta.json":
                data = json.dumps({k: v for k, v in json.loads(data).items() if k != "box_level"}).encode()
            dst.writestr(name, data)
    assert BaselineTagger.load(old).box_level == "record"


def test_train_baseline_and_eval_pick_the_data_convention(built, funsd_dir, tmp_path, capsys, monkeypatch):
    common = ["--source", str(funsd_dir), "--limit", "8", "--max-iterations", "10", "--eval-split", "none"]
    assert main(["train-baseline", "--box-level", "word", *common]) == 0
    assert "(word boxes)" in capsys.readouterr().out
    from dogood.models import default_baseline_path

    assert BaselineTagger.load(default_baseline_path("word")).box_level == "word"
    # the data is segment-level and no segment baseline is trained: eval trains it on FUNSD train (issue 39; it
    # said which to train), says so, and reads the data's convention
    import dogood.models.baseline as baseline

    real = baseline.train_baseline
    monkeypatch.setattr(baseline, "train_baseline",
                        lambda docs, **kw: real(list(docs)[:8], **{"max_iterations": 10, **kw}))
    args = ["eval", "--id", f"{built['segment']}:original", "--ood", f"{built['funsd-l']}:merge", "--quiet",
            "--bootstrap", "0"]
    assert main([*args, "--out", str(tmp_path / "a")]) == 0
    assert "no segment-level baseline at" in capsys.readouterr().err
    assert BaselineTagger.load(default_baseline_path("segment")).box_level == "segment"
    assert main(["train-baseline", *common]) == 0
    assert main([*args, "--out", str(tmp_path / "b")]) == 0
    report = json.loads((tmp_path / "b" / "report.json").read_text())
    assert report["box_level"] == "segment"
    # and the card's results table states it
    from dogood.pipeline.card import render_card_from_build

    card = render_card_from_build(built["funsd-l"], results=[report])
    assert "the model read `bboxes` at the segment level, the convention it was trained on" in card
