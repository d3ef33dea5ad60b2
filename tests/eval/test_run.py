"""dogood eval: datasets by name, scores equal to hand-computed ones, the Table 2 report, errors."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
from PIL import Image

from dogood.cli import main
from dogood.core.schema import iob_tags
from dogood.eval import EvalError, evaluate, resolve_datasets
from dogood.models import ModelError, PredictionsFile
from dogood.models.predictions import Prediction
from dogood.pipeline.build import build
from dogood.pipeline.recipe import load_recipe

f1_score = pytest.importorskip("seqeval.metrics").f1_score  # the test extra

LIMIT = 8


@pytest.fixture(scope="module")
def built(funsd_dir, tmp_path_factory):
    """FUNSD (original) and FUNSD-L (merge), first LIMIT test documents, as built folders."""
    root = tmp_path_factory.mktemp("eval")
    build(load_recipe("funsd"), root / "funsd", source_path=funsd_dir, limit=LIMIT, progress=False)
    layout = load_recipe("funsd-l")  # its own configs; the dg_* ones (Do-GOOD's code, issue 38) are tested apart
    build(layout, root / "funsd-l", source_path=funsd_dir, limit=LIMIT, progress=False,
          configs=[c for c in layout.configs if not c.startswith("dg_")])
    return root


class BoxMemory:
    """Knows the gold tags of the original documents, and answers them only for words whose box is unchanged.

    A stand-in for a model that relies on layout: on FUNSD-L every re-boxed
    word falls back to ``O``, so the expected score can be computed by hand.
    """

    name = "box-memory"
    task = "token"

    def __init__(self, docs):
        self.memory = {}
        for doc in docs:
            index, tags = iob_tags(doc)
            self.memory[doc.id] = {(doc.words[i].text, doc.words[i].box): t for i, t in zip(index, tags)}
        self.calls = 0

    def predict(self, docs):
        self.calls += 1
        out = {}
        for doc in docs:
            index, _ = iob_tags(doc)
            known = self.memory[doc.id]
            tags = tuple(known.get((doc.words[i].text, doc.words[i].box), "O") for i in index)
            out[doc.id] = Prediction(doc.id, tags=tags, confidences=tuple(1.0 for _ in tags))
        return out


def _expected_f1(funsd_test, merged_source):
    """seqeval's F1 of the BoxMemory rule on the merged documents, computed independently."""
    gold, pred = [], []
    for doc_id in merged_source.ids():
        original, merged = funsd_test.load(doc_id), merged_source.load(doc_id)
        index, tags = iob_tags(merged)
        gold.append(tags)
        pred.append([t if merged.words[i].box == original.words[i].box else "O" for i, t in zip(index, tags)])
    return 100 * f1_score(gold, pred)


def test_resolve_names_folders_configs_and_source_kinds(built, funsd_dir, monkeypatch):
    (ds,) = resolve_datasets(str(built / "funsd"))
    assert (ds.name, ds.task, ds.config, len(ds.source.ids())) == ("funsd/original", "token", "original", LIMIT)
    (ds,) = resolve_datasets(f"{built / 'funsd-l'}:merge")
    assert ds.name == "funsd-l/merge"
    monkeypatch.chdir(built.parent)  # no folder called "funsd" here: the name means the source kind
    (ds,) = resolve_datasets("funsd", "test")
    assert ds.name == "funsd" and len(ds.source.ids()) == 50
    with pytest.raises(EvalError, match="does not exist"):
        resolve_datasets("./no/such/folder")


def test_scores_equal_hand_computed_and_drop_is_id_minus_ood(built, funsd_test):
    id_set = resolve_datasets(str(built / "funsd"))[0]
    ood_set = resolve_datasets(str(built / "funsd-l"))[0]
    model = BoxMemory([funsd_test.load(i) for i in id_set.source.ids()])
    report = evaluate(model, id_set, [ood_set], batch_size=3)
    rows = report.rows()
    assert rows[0]["f1"] == 100.0 and rows[0]["error_rates"]["qa"] == 0.0
    expected = _expected_f1(funsd_test, ood_set.source)
    assert 0.0 < expected < 90.0  # the merge really moved boxes
    assert rows[1]["f1"] == pytest.approx(expected, abs=1e-10)
    assert rows[1]["change"] == pytest.approx(expected - 100.0)  # negative: worse than ID
    assert rows[1]["relative_change"] == pytest.approx(expected - 100.0)
    assert rows[1]["documents"] == LIMIT and rows[1]["tokens"] == rows[0]["tokens"]
    assert model.calls == 2 * 3  # batches of 3 over 8 documents, twice


def test_report_files_agree_with_the_scores(built, funsd_test, tmp_path):
    id_set = resolve_datasets(str(built / "funsd"))[0]
    ood_set = resolve_datasets(str(built / "funsd-l"))[0]
    report = evaluate(BoxMemory([funsd_test.load(i) for i in id_set.source.ids()]), id_set, [ood_set])
    paths = report.write(tmp_path / "report")
    ood = report.rows()[1]

    data = json.loads(paths["json"].read_text())
    assert data["metric"] == "f1" and data["scale"] == "percent" and [d["role"] for d in data["datasets"]] == ["id", "ood"]
    assert data["datasets"][1]["change"] == pytest.approx(ood["change"])

    table = list(csv.DictReader(io.StringIO(paths["csv"].read_text())))
    assert [r["dataset"] for r in table] == ["funsd/original", "funsd-l/merge"]
    assert float(table[1]["value"]) == pytest.approx(ood["f1"]) and table[0]["change"] == ""
    assert float(table[0]["f1_QUESTION"]) == 100.0

    md = paths["md"].read_text()
    mark = "*" if ood["change_excludes_zero"] else ""
    assert f"| box-memory | 100.00 | {ood['f1']:.2f} ({ood['change']:+.2f}{mark}, {ood['relative_change']:+.1f}%) |" in md
    assert "Question+Answer" in md

    chart = np.asarray(Image.open(paths["png"]).convert("L"))
    assert chart.shape[0] > 100 and chart.shape[1] > 100
    assert (chart < 200).mean() > 0.01  # bars and labels drawn, not a blank page


def test_predictions_folder_one_file_per_dataset(built, funsd_test, tmp_path):
    id_set = resolve_datasets(str(built / "funsd"))[0]
    ood_set = resolve_datasets(str(built / "funsd-l"))[0]
    folder = tmp_path / "preds"
    folder.mkdir()
    for ds, mangle in ((id_set, False), (ood_set, True)):
        with open(folder / f"{ds.name.replace('/', '__')}.jsonl", "w") as fh:
            for doc_id in ds.source.ids():
                tags = iob_tags(ds.source.load(doc_id))[1]
                if mangle:
                    tags = ["O"] * len(tags)
                fh.write(json.dumps({"id": doc_id, "ner_tags": tags}) + "\n")
    report = evaluate(PredictionsFile(folder), id_set, [ood_set])
    assert [r["f1"] for r in report.rows()] == [100.0, 0.0]
    assert report.rows()[1]["error_rates"]["other"] == 0.0


def test_bad_predictions_name_the_file_and_document(built, tmp_path):
    id_set = resolve_datasets(str(built / "funsd"))[0]
    first = id_set.source.ids()[0]
    bad = tmp_path / "short.jsonl"
    with open(bad, "w") as fh:
        for doc_id in id_set.source.ids():
            tags = iob_tags(id_set.source.load(doc_id))[1]
            fh.write(json.dumps({"id": doc_id, "ner_tags": tags[:1] if doc_id == first else tags}) + "\n")
    with pytest.raises(Exception, match=rf"short.jsonl.*{first}.* 1 predicted tags"):
        evaluate(PredictionsFile(bad), id_set, [id_set])
    unknown = tmp_path / "unknown.jsonl"
    unknown.write_text(json.dumps({"id": "nope", "ner_tags": []}) + "\n")
    with pytest.raises(ModelError, match="unknown.jsonl.*nope"):
        evaluate(PredictionsFile(unknown), id_set, [id_set])


def test_a_model_for_another_task_is_refused(built):
    id_set = resolve_datasets(str(built / "funsd"))[0]

    class Classifier:
        name, task = "classifier", "document"

        def predict(self, docs):
            return {d.id: Prediction(d.id, label="form") for d in docs}

    with pytest.raises(ModelError, match="needs token prediction"):
        evaluate(Classifier(), id_set, [id_set])


def test_cli_eval_writes_the_report(built, funsd_test, tmp_path, capsys):
    preds = tmp_path / "gold.jsonl"
    with open(preds, "w") as fh:
        for doc_id in funsd_test.ids()[:LIMIT]:
            fh.write(json.dumps({"id": doc_id, "ner_tags": iob_tags(funsd_test.load(doc_id))[1]}) + "\n")
    out = tmp_path / "report"
    # the same gold file scores both: merge changes boxes, not tags, so F1 stays 1 and the drop is 0
    code = main(["eval", "--model", str(preds), "--id", str(built / "funsd"), "--ood", str(built / "funsd-l"),
                 "--out", str(out), "--quiet"])
    assert code == 0
    assert "| gold | 100.00 | 100.00 (+0.00, +0.0%) |" in capsys.readouterr().out
    assert sorted(p.name for p in out.iterdir()) == ["report.csv", "report.json", "report.md", "report.png"]


def test_cli_eval_errors_exit_1_with_a_message(built, tmp_path, capsys):
    code = main(["eval", "--model", str(tmp_path / "missing.dogood-model"), "--id", str(built / "funsd"),
                 "--ood", str(built / "funsd-l"), "--quiet"])
    assert code == 1
    assert "missing.dogood-model" in capsys.readouterr().err


def test_baseline_scores_equal_the_metric_on_its_own_predictions(built, trained_baseline, funsd_test):
    from dogood.eval.metrics import funsd_entity_scores

    id_set = resolve_datasets(str(built / "funsd"))[0]
    ood_set = resolve_datasets(str(built / "funsd-l"))[0]
    report = evaluate(trained_baseline, id_set, [ood_set])
    for row, ds in zip(report.rows(), (id_set, ood_set)):
        docs = [ds.source.load(i) for i in ds.source.ids()]
        preds = trained_baseline.predict(docs)
        assert row["f1"] == 100 * funsd_entity_scores(docs, {k: p.tags for k, p in preds.items()})["f1"]
    assert report.rows()[0]["f1"] > 50.0


def test_cli_train_baseline_then_eval(built, tmp_path, capsys):
    model = tmp_path / "small.dogood-model"
    assert main(["train-baseline", "--limit", "20", "--max-iterations", "20", "--out", str(model)]) == 0
    out = capsys.readouterr().out
    assert f"-> {model}" in out and "FUNSD test (50 documents): entity precision" in out
    assert main(["eval", "--model", str(model), "--id", str(built / "funsd"), "--ood", f"{built / 'funsd-l'}:merge",
                 "--out", str(tmp_path / "r"), "--quiet"]) == 0
    data = json.loads((tmp_path / "r" / "report.json").read_text())
    assert data["model"] == "dogood-crf-baseline"
    id_row, ood_row = data["datasets"]
    assert ood_row["change"] == pytest.approx(ood_row["f1"] - id_row["f1"])


def test_the_plot_stays_readable_at_any_number_of_configs(tmp_path):
    """35 OOD sets: horizontal bars in a panel per shift family, a bounded width (was 1.3 in a config, 5,016 px
    for 31), a height of about 22 px a config, and every dataset named on the axis."""
    from matplotlib import pyplot as plt
    from PIL import Image

    from dogood.eval.report import EvalReport

    families = ["text"] * 14 + ["layout"] * 12 + ["image"] * 9
    ood = [{"dataset": f"funsd-c/{f}_config_{k}@{k % 5 + 1}", "config": f"c{k}", "documents": 50, "f1": 50.0,
            "value": 50.0, "change": -20.0, "relative_change": -20.0 / 0.7, "families": [f],
            "ci": {"value": [45.0, 55.0]}} for k, f in enumerate(families)]
    report = EvalReport(model="m", task="token", id={"dataset": "funsd", "f1": 70.0, "value": 70.0, "documents": 50,
                                                     "ci": {"value": [65.0, 75.0]}},
                        ood=ood, bootstrap={"resamples": 10, "seed": 0, "confidence": 0.95})
    labels = []
    real_savefig = plt.Figure.savefig

    def keep_labels(fig, *args, **kwargs):
        labels.extend(t.get_text() for ax in fig.axes for t in ax.get_yticklabels())
        labels.extend(ax.get_title(loc="left") for ax in fig.axes)
        return real_savefig(fig, *args, **kwargs)

    plt.Figure.savefig = keep_labels
    try:
        width, height = Image.open(report.plot(tmp_path / "many.png")).size
    finally:
        plt.Figure.savefig = real_savefig
    few = EvalReport(model="m", task="token", id=report.id, ood=ood[:2], bootstrap=report.bootstrap)
    width_few, height_few = Image.open(few.plot(tmp_path / "few.png")).size
    assert width == width_few == 1100
    assert 18 * 36 < height < 40 * 36 and height_few < 400
    assert [t for t in labels if "@" in t or t == "funsd"] == ["funsd"] + [r["dataset"] for r in ood]
    assert {"in-distribution", "text shifts (14)", "layout shifts (12)", "image shifts (9)"} <= set(labels)
