"""dogood eval, issue 28 part 1 and 2: OOD sets of other documents (unpaired), OOD detection and calibration."""

from __future__ import annotations

import csv
import io
import json
import shutil

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, roc_auc_score, roc_curve
from test_paired import GOLD, Scripted, _hub_funsd, _micro_f1

from dogood.cli import main
from dogood.core.schema import iob_tags
from dogood.eval import EvalError, evaluate
from dogood.eval.calibration import expected_calibration_error
from dogood.eval.metrics import entity_scores
from dogood.models.predictions import Prediction


@pytest.fixture(scope="module")
def other_forms(funsd_dir, tmp_path_factory):
    """A FUNSD-R-style OOD set: 20 FUNSD *training* forms in FUNSD's layout (testing_data/), other documents than
    the test split's."""
    root = tmp_path_factory.mktemp("funsd-r") / "funsd-train20"
    src = funsd_dir / "training_data"
    for name in sorted(p.stem for p in (src / "annotations").glob("*.json"))[:20]:
        for kind, ext in (("annotations", "json"), ("images", "png")):
            (root / "testing_data" / kind).mkdir(parents=True, exist_ok=True)
            shutil.copy(src / kind / f"{name}.{ext}", root / "testing_data" / kind / f"{name}.{ext}")
    return root


def test_cli_scores_a_folder_of_other_forms_unpaired_with_detection_equal_to_sklearn(other_forms, trained_baseline,
                                                                                       funsd_test, tmp_path, capsys):
    out = tmp_path / "report"
    code = main(["eval", "--model", str(trained_baseline.source), "--id", "funsd", "--ood", str(other_forms),
                 "--bootstrap", "200", "--quiet", "--out", str(out)])
    assert code == 0
    captured = capsys.readouterr()
    assert "scored unpaired" in captured.err and "Traceback" not in captured.err
    # the 20 forms are FUNSD training forms, the baseline's own training data: said, not scored as OOD silently
    assert "funsd-train20: 20 of its 20 documents are documents model 'dogood-crf-baseline' was trained on" in captured.err
    data = json.loads((out / "report.json").read_text())
    id_row, ood = data["datasets"]
    assert ood["pairing"] == "unpaired" and ood["documents"] == 20 and ood["id_documents"] == 50
    assert ood["paired"] == {"shared": 0, "id_only": 50, "ood_only": 20}
    assert id_row["documents"] == 50 and ood["id_value"] == id_row["value"]  # the ID column on all its documents
    low, high = ood["ci"]["change"]
    assert low <= ood["change"] <= high and low < high

    # the scores and the detection metrics, recomputed from the model's own predictions with scikit-learn
    from dogood.sources.funsd import FunsdSource

    forms = FunsdSource(root=other_forms, split="test")
    id_docs = [funsd_test.load(i) for i in funsd_test.ids()]
    ood_docs = [forms.load(i) for i in forms.ids()]

    def predicted(docs):
        preds = trained_baseline.predict(docs)
        gold = [iob_tags(d)[1] for d in docs]
        tags = [list(preds[d.id].tags) for d in docs]
        conf = [np.array(preds[d.id].confidences) for d in docs]
        return gold, tags, conf

    id_gold, id_tags, id_conf = predicted(id_docs)
    ood_gold, ood_tags, ood_conf = predicted(ood_docs)
    assert ood["value"] == pytest.approx(100 * entity_scores(ood_gold, ood_tags)["f1"], abs=1e-10)
    assert id_row["value"] == pytest.approx(100 * entity_scores(id_gold, id_tags)["f1"], abs=1e-10)
    y = np.r_[np.ones(len(id_docs)), np.zeros(len(ood_docs))]
    s = np.r_[[c.mean() for c in id_conf], [c.mean() for c in ood_conf]]  # per document: mean token confidence
    det = ood["ood_detection"]
    fpr, tpr, _ = roc_curve(y, s, drop_intermediate=False)
    assert det["auroc"] == pytest.approx(100 * roc_auc_score(y, s), abs=1e-10)
    assert det["fpr95"] == pytest.approx(100 * fpr[np.argmax(tpr >= 0.95)], abs=1e-10)
    assert det["aupr_in"] == pytest.approx(100 * average_precision_score(y, s), abs=1e-10)
    assert det["aupr_out"] == pytest.approx(100 * average_precision_score(1 - y, -s), abs=1e-10)
    assert (det["id_documents"], det["ood_documents"]) == (50, 20)
    for k in ("auroc", "fpr95", "aupr_in", "aupr_out"):
        assert set(det["ci"]) >= {k} and det["ci"][k][0] <= det["ci"][k][1]

    def ece(gold, tags, conf):
        right = np.concatenate([np.array(g) == np.array(t) for g, t in zip(gold, tags)])
        return 100 * expected_calibration_error(np.concatenate(conf), right)

    assert ood["calibration"]["ece"] == pytest.approx(ece(ood_gold, ood_tags, ood_conf), abs=1e-10)
    assert id_row["calibration"]["ece"] == pytest.approx(ece(id_gold, id_tags, id_conf), abs=1e-10)
    assert ood["id_calibration"] == id_row["calibration"]
    assert ood["calibration"]["items"] == sum(len(c) for c in ood_conf)

    # the same figures in the CSV and the markdown
    table = list(csv.DictReader(io.StringIO((out / "report.csv").read_text())))
    assert [r["pairing"] for r in table] == ["", "unpaired"]
    assert float(table[1]["auroc"]) == pytest.approx(det["auroc"]) and float(table[1]["ece"]) == pytest.approx(
        ood["calibration"]["ece"])
    assert float(table[0]["ece"]) == pytest.approx(id_row["calibration"]["ece"])
    md = (out / "report.md").read_text()
    assert "## OOD detection and calibration" in md and "| funsd-train20 | unpaired | " in md
    assert "| funsd-train20 | – | 20 (ID 50) | " in md
    # the ID column of an unpaired row is on all ID documents, and says so (it was headed "paired: on the same docs")
    assert "(all ID docs) |" in md and "paired: on the same docs" not in md


def test_unpaired_interval_equals_a_hand_computation():
    """ID: a, b, c (all right). OOD: x, y, other documents; each side resampled over its own documents."""
    ood_gold = {"x": ["B-QUESTION", "B-ANSWER"], "y": ["B-HEADER", "I-HEADER", "O"]}
    ood_pred = {"x": ["B-QUESTION", "O"], "y": ["B-HEADER", "I-HEADER", "B-ANSWER"]}  # x: 1/1/2, y: 1/2/1
    model = Scripted({**GOLD, **ood_pred})
    B, seed = 300, 11
    report = evaluate(model, _hub_funsd(GOLD), _hub_funsd(ood_gold), resamples=B, seed=seed)
    (ood,) = report.ood
    assert ood["pairing"] == "unpaired" and report.id["documents"] == 3 and ood["documents"] == 2
    assert ood["id_value"] == 100.0 and ood["value"] == pytest.approx(100 * _micro_f1(2, 3, 3))
    assert "scored unpaired" in report.warnings[0]
    id_counts = {"a": (2, 2, 2), "b": (3, 3, 3), "c": (1, 1, 1)}
    ood_counts = {"x": (1, 1, 2), "y": (1, 2, 1)}

    def draws(counts, rng):
        ids = sorted(counts)
        out = []
        for _ in range(B):
            drawn = [ids[k] for k in rng.integers(0, len(ids), size=len(ids))]
            out.append(100 * _micro_f1(*(sum(counts[d][j] for d in drawn) for j in range(3))))
        return np.array(out)

    id_f1 = draws(id_counts, np.random.default_rng(seed))
    ood_f1 = draws(ood_counts, np.random.default_rng([seed, 1]))  # the other stream: independent of the ID draws
    assert ood["ci"]["value"] == pytest.approx(list(np.percentile(ood_f1, [2.5, 97.5])), abs=1e-10)
    assert ood["ci"]["change"] == pytest.approx(list(np.percentile(ood_f1 - id_f1, [2.5, 97.5])), abs=1e-10)
    assert report.id["ci"]["value"] == [100.0, 100.0]
    # with confidences of 1 everywhere, ID cannot be told from OOD: AUROC 50; ECE = 1 - accuracy per token
    det = ood["ood_detection"]
    assert det["auroc"] == 50.0 and det["ci"]["auroc"] == [50.0, 50.0]
    assert ood["calibration"]["ece"] == pytest.approx(100 * 2 / 5)  # 3 of 5 tokens right at confidence 1
    assert report.id["calibration"]["ece"] == 0.0


def test_some_documents_shared_is_unpaired_and_a_subset_is_paired():
    model = Scripted({**GOLD, "d": ["O"]})
    mixed = evaluate(model, _hub_funsd(GOLD), _hub_funsd({"a": GOLD["a"], "d": ["O"]}), resamples=0)
    assert mixed.ood[0]["pairing"] == "unpaired" and mixed.ood[0]["documents"] == 2
    assert "(1 of its 2 are not in" in mixed.warnings[0] and ", 1 are)" in mixed.warnings[0]
    subset = evaluate(model, _hub_funsd(GOLD), _hub_funsd({"a": GOLD["a"]}), resamples=0)
    assert subset.ood[0]["pairing"] == "paired" and subset.ood[0]["documents"] == 1 and subset.id["documents"] == 1
    with pytest.raises(EvalError, match="hold different documents"):
        evaluate(model, _hub_funsd(GOLD), _hub_funsd({"d": ["O"]}), require_same_ids=True)


def test_models_without_confidences_say_so():
    class NoConfidence(Scripted):
        def predict(self, docs):
            return {d.id: Prediction(d.id, tags=tuple(self.answers[d.id])) for d in docs}

    report = evaluate(NoConfidence({**GOLD, "x": ["O"]}), _hub_funsd(GOLD), _hub_funsd({"x": ["O"]}), resamples=50)
    (ood,) = report.ood
    assert ood["ood_detection"] == {"auroc": None, "note": "model 'scripted' gives no per-token confidences"}
    assert ood["calibration"]["ece"] is None
    assert "gives no per-token confidences" in report.to_markdown()
    json.loads(report.to_json())  # still valid JSON


def test_a_folder_holding_only_training_data_is_read_as_that_split(funsd_dir, tmp_path):
    from dogood.eval import resolve_datasets

    folder = tmp_path / "forms"
    src = funsd_dir / "training_data"
    for name in sorted(p.stem for p in (src / "annotations").glob("*.json"))[:2]:
        for kind, ext in (("annotations", "json"), ("images", "png")):
            (folder / "training_data" / kind).mkdir(parents=True, exist_ok=True)
            shutil.copy(src / kind / f"{name}.{ext}", folder / "training_data" / kind / f"{name}.{ext}")
    (ds,) = resolve_datasets(str(folder))
    assert ds.split == "train" and len(ds.source.ids()) == 2 and ds.location == "FUNSD-layout folder forms (training_data)"
    (one,) = resolve_datasets(str(folder / "training_data"))
    assert one.split == "train" and one.source.ids() == ds.source.ids()
