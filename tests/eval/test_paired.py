"""dogood eval, issue 15 part A: paired by document, bootstrap intervals, aggregates, blind spots, inputs."""

from __future__ import annotations

import io
import json
from types import SimpleNamespace

import numpy as np
import pytest
from PIL import Image

from dogood.cli import main
from dogood.eval import (
    EvalError,
    EvalReport,
    as_datasets,
    blind_spot,
    bootstrap_values,
    evaluate,
    families_of,
    percentile_interval,
)
from dogood.measures.factors import FACTORS
from dogood.models.predictions import Prediction
from dogood.pipeline.build import build
from dogood.pipeline.recipe import load_recipe

# -- an image-shift config against the full ID set: a pixel-blind model drops exactly 0 ---------------------


@pytest.fixture(scope="module")
def natural5(funsd_dir, tmp_path_factory):
    """FUNSD-I's `natural` config (text ink on a photo; words and boxes unchanged), first 5 test pages."""
    out = tmp_path_factory.mktemp("funsd-i") / "funsd-i"
    build(load_recipe("funsd-i"), out, source_path=funsd_dir, limit=5, configs=["natural"], progress=False)
    return out


def test_pixel_blind_model_drops_exactly_zero_on_the_shared_documents(natural5, trained_baseline):
    report = evaluate(trained_baseline, "funsd", f"{natural5}:natural", resamples=200)
    ood = report.ood[0]
    assert ood["documents"] == 5 and ood["paired"] == {"shared": 5, "id_only": 45, "ood_only": 0}
    assert ood["change"] == 0.0 and ood["value"] == ood["id_value"]
    assert ood["ci"]["change"] == [0.0, 0.0] and ood["change_excludes_zero"] is False
    assert report.id["documents"] == 5  # only the ID documents some OOD set shares are scored
    assert ood["families"] == ["image"] and ood["shifts"] == ["natural_background"]
    # the build measured that `natural` changed only pixels (ink inside boxes, background): the CRF sees none
    assert ood["note"] == "measured changes only ink, background, which the model does not see (it sees layout, text)"
    assert ood["factors"]["ink"]["changed"] > 0 and ood["factors"]["text"]["changed"] == 0
    assert report.warnings == ["funsd-i/natural and funsd hold different documents: scored on the 5 they share; "
                               "45 ID document(s) are not in funsd-i/natural, 0 of its documents are not in funsd"]
    md = report.to_markdown()
    assert "> **Warning:** funsd-i/natural and funsd hold different documents" in md
    assert "| funsd-i/natural | image | 5 |" in md and "which the model does not see (it sees layout, text) |" in md
    # the same config as a datasets.Dataset in dogood's schema, and the folder without :config: the same scores
    import datasets

    loaded = datasets.load_dataset(str(natural5), "natural", split="test")
    for spec in (loaded, [str(natural5)], (x for x in [f"{natural5}:natural"])):
        again = evaluate(trained_baseline, "funsd", spec, resamples=200)
        assert len(again.ood) == 1 and again.ood[0]["value"] == ood["value"] and again.ood[0]["change"] == 0.0
        assert again.ood[0]["ci"] == ood["ci"] and again.ood[0]["families"] == ["image"]


def test_cli_warns_or_refuses_when_the_ids_differ(natural5, trained_baseline, tmp_path, capsys):
    common = ["eval", "--model", str(trained_baseline.source), "--id", "funsd", "--ood", f"{natural5}:natural",
              "--quiet", "--bootstrap", "50"]
    assert main([*common, "--out", str(tmp_path / "r")]) == 0
    err = capsys.readouterr().err
    assert "dogood: warning: funsd-i/natural and funsd hold different documents: scored on the 5 they share" in err
    data = json.loads((tmp_path / "r" / "report.json").read_text())
    assert data["datasets"][1]["change"] == 0.0 and data["bootstrap"] == {"resamples": 50, "seed": 0, "confidence": 0.95}
    assert main([*common, "--out", str(tmp_path / "s"), "--require-same-ids"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("dogood: error: ID dataset 'funsd' and OOD dataset 'funsd-i/natural' hold different documents: "
                          "45 id(s) only in 'funsd', 0 only in 'funsd-i/natural'")
    assert "Traceback" not in err and not (tmp_path / "s").exists()


# -- hand-made documents: intervals recomputed by hand -------------------------------------------------------


def _png() -> bytes:
    buf = io.BytesIO()
    Image.new("L", (100, 100), 255).save(buf, format="PNG")
    return buf.getvalue()


def _hub_funsd(docs: dict[str, list[str]]):
    """A plain Hub-style FUNSD dataset (id, tokens, bboxes, ner_tags, image): one document per entry."""
    import datasets

    png = _png()
    features = datasets.Features({
        "id": datasets.Value("string"),
        "tokens": datasets.Sequence(datasets.Value("string")),
        "bboxes": datasets.Sequence(datasets.Sequence(datasets.Value("int64"))),
        "ner_tags": datasets.Sequence(datasets.ClassLabel(names=["O", "B-HEADER", "I-HEADER", "B-QUESTION", "I-QUESTION",
                                                                 "B-ANSWER", "I-ANSWER"])),
        "image": datasets.Image(),
    })
    names = features["ner_tags"].feature.names
    rows = {"id": [], "tokens": [], "bboxes": [], "ner_tags": [], "image": []}
    for doc_id, tags in docs.items():
        rows["id"].append(doc_id)
        rows["tokens"].append([f"w{k}" for k in range(len(tags))])
        rows["bboxes"].append([[10 * k, 10, 10 * k + 8, 20] for k in range(len(tags))])
        rows["ner_tags"].append([names.index(t) for t in tags])
        rows["image"].append({"bytes": png, "path": None})
    return datasets.Dataset.from_dict(rows, features=features)


class Scripted:
    """Predicts the tags it was given for each (dataset, document): a model whose outputs the test controls."""

    name = "scripted"
    task = "token"
    sees = frozenset({"text"})

    def __init__(self, answers):
        self.answers = answers  # document id -> tags

    def predict(self, docs):
        return {d.id: Prediction(d.id, tags=tuple(self.answers[d.id]), confidences=tuple(1.0 for _ in self.answers[d.id]))
                for d in docs}


GOLD = {
    "a": ["B-QUESTION", "I-QUESTION", "B-ANSWER"],  # 2 entities
    "b": ["B-HEADER", "O", "B-QUESTION", "B-ANSWER"],  # 3 entities
    "c": ["B-ANSWER", "I-ANSWER"],  # 1 entity
}


def _micro_f1(tp, n_pred, n_gold):
    p = tp / n_pred if n_pred else 0.0
    r = tp / n_gold if n_gold else 0.0
    return 2 * p * r / (p + r) if p + r else 0.0


def test_bootstrap_interval_equals_a_hand_computation():
    """ID: every entity right. OOD (same gold): a loses its answer, b predicts one extra entity, c all right."""
    id_ds = _hub_funsd(GOLD)
    ood_ds = _hub_funsd(GOLD)  # the same documents: paired (an OOD-only document makes it unpaired: test_unpaired)
    ood_pred = {
        "a": ["B-QUESTION", "I-QUESTION", "O"],  # tp 1, pred 1, gold 2
        "b": ["B-HEADER", "B-ANSWER", "B-QUESTION", "B-ANSWER"],  # tp 3, pred 4, gold 3
        "c": ["B-ANSWER", "I-ANSWER"],  # tp 1, pred 1, gold 1
        "d": ["O"],
    }

    class TwoWorlds(Scripted):
        """Gold tags on its first call (the ID set, one batch), ``ood_pred`` after (the OOD set)."""

        def __init__(self):
            self.calls = 0

        def predict(self, docs):
            self.calls += 1
            self.answers = GOLD if self.calls == 1 else ood_pred
            return super().predict(docs)

    B, seed = 300, 7
    report = evaluate(TwoWorlds(), id_ds, [ood_ds], resamples=B, seed=seed)
    ood = report.ood[0]
    id_counts = {"a": (2, 2, 2), "b": (3, 3, 3), "c": (1, 1, 1)}
    ood_counts = {"a": (1, 1, 2), "b": (3, 4, 3), "c": (1, 1, 1)}
    ids = ["a", "b", "c"]
    assert ood["id_value"] == 100.0 and ood["value"] == pytest.approx(100 * _micro_f1(5, 6, 6))  # 10/12
    # the scheme, by hand: default_rng(seed); B times draw 3 documents with replacement; micro F1 of the draw
    rng = np.random.default_rng(seed)
    id_f1, ood_f1 = [], []
    for _ in range(B):
        drawn = [ids[k] for k in rng.integers(0, 3, size=3)]
        for counts, out in ((id_counts, id_f1), (ood_counts, ood_f1)):
            tp, n_pred, n_gold = (sum(counts[d][j] for d in drawn) for j in range(3))
            out.append(100 * _micro_f1(tp, n_pred, n_gold))
    changes = [o - i for i, o in zip(id_f1, ood_f1)]
    assert ood["ci"]["value"] == pytest.approx(list(np.percentile(ood_f1, [2.5, 97.5])), abs=1e-10)
    assert ood["ci"]["change"] == pytest.approx(list(np.percentile(changes, [2.5, 97.5])), abs=1e-10)
    assert ood["ci"]["id_value"] == [100.0, 100.0] and report.id["ci"]["value"] == [100.0, 100.0]
    assert ood["change_excludes_zero"] == (ood["ci"]["change"][1] < 0)
    assert ood["paired"] == {"shared": 3, "id_only": 0, "ood_only": 0} and ood["pairing"] == "paired"
    assert report.warnings == []
    # the micro F1 of a resample is not the mean of per-document F1: document a alone weighs less than b
    assert ood["value"] != pytest.approx(100 * np.mean([_micro_f1(*ood_counts[d]) for d in ids]))


def test_bootstrap_of_identical_documents_is_degenerate():
    stats = np.array([[1, 2, 2]] * 4)  # every document: F1 = 2*0.5*0.5/1 = 0.5
    (vals,) = bootstrap_values("token", [stats], 100, 0)
    assert percentile_interval(vals, 0.95) == [50.0, 50.0]
    acc = np.array([[1, 1], [1, 1], [1, 1]])  # (right, documents) per document
    (vals,) = bootstrap_values("document", [acc], 50, 3)
    assert percentile_interval(vals, 0.9) == [100.0, 100.0]


def test_datasets_objects_and_kieval():
    """Plain Hub-schema Dataset objects as ID and OOD; KIEval entity F1 by hand."""
    id_ds = _hub_funsd(GOLD)
    model = Scripted({"a": GOLD["a"], "b": ["B-HEADER", "O", "B-QUESTION", "O"], "c": ["O", "O"]})
    report = evaluate(model, id_ds, id_ds, resamples=0, kieval=True)
    # entities found: a 2/2, b 2/3, c 0/1 -> tp 4, pred 4, gold 6; KIEval at entity level gives the same here
    assert report.id["f1"] == pytest.approx(100 * _micro_f1(4, 4, 6))
    k = report.id["kieval"]
    assert (k["tp"], k["fp"], k["fn"]) == (4, 0, 2) and k["f1"] == pytest.approx(80.0)
    assert k["aligned"] == pytest.approx(100 * 4 / (4 + 2))  # two additions to correct
    assert report.ood[0]["change"] == 0.0 and "ci" not in report.ood[0] and report.bootstrap is None
    md = report.to_markdown()
    assert "## KIEval (entity level)" in md and "KIEval Group F1 needs" in md
    with pytest.raises(EvalError, match="DatasetDict has no split 'test'"):
        import datasets

        as_datasets(datasets.DatasetDict({"train": id_ds}))


def test_no_shared_document_is_scored_unpaired():
    report = evaluate(Scripted({"a": ["O"], "z": ["O"]}), _hub_funsd({"a": ["O"]}), _hub_funsd({"z": ["O"]}),
                      resamples=0)
    assert report.ood[0]["pairing"] == "unpaired" and "scored unpaired" in report.warnings[0]
    with pytest.raises(EvalError, match="cannot read a dataset from a int"):
        evaluate(Scripted({}), 3, [])


# -- aggregates and blind spots ------------------------------------------------------------------------------


def test_family_and_dataset_means():
    def row(name, config, families, change, note=None):
        return {"dataset": f"{name}/{config}", "config": config, "families": families, "change": change,
                "note": note}

    report = EvalReport("m", "token", id={}, ood=[
        row("funsd-i", "natural", ["image"], -10.0),
        row("funsd-i", "distort_reocr", ["image", "layout"], -30.0),
        row("funsd-l", "merge", ["layout"], -20.0),
        row("funsd-t", "typo", ["text"], -5.0),
    ])
    agg = report.aggregates()
    assert agg["family"] == [
        {"family": "image", "configs": 2, "blind": 0, "mean_change": pytest.approx(-20.0)},
        {"family": "text", "configs": 1, "blind": 0, "mean_change": pytest.approx(-5.0)},
        {"family": "layout", "configs": 2, "blind": 0, "mean_change": pytest.approx(-25.0)},
    ]
    assert agg["dataset"] == [
        {"dataset": "funsd-i", "configs": 2, "blind": 0, "mean_change": pytest.approx(-20.0)},
        {"dataset": "funsd-l", "configs": 1, "blind": 0, "mean_change": pytest.approx(-20.0)},
        {"dataset": "funsd-t", "configs": 1, "blind": 0, "mean_change": pytest.approx(-5.0)},
    ]


def test_means_leave_out_configs_the_model_does_not_see():
    """Rotation's -20.37 beside four pixel-only configs the model cannot see (+0.00): the image mean is -20.37 over
    the one config it sees, the four counted apart, and the Markdown says so."""
    def row(config, change, note=None):
        return {"dataset": f"funsd-i/{config}", "config": config, "families": ["image"], "change": change,
                "value": 50.0 + change, "id_value": 50.0, "relative_change": change / 0.5, "note": note,
                "documents": 5, "split": "test", "location": "x"}

    blind = "measured changes only ink, which the model does not see (it sees layout, text)"
    report = EvalReport("m", "token", id={"dataset": "funsd", "value": 50.0, "f1": 50.0, "documents": 5,
                                          "split": "test", "location": "x"},
                        ood=[row("rotation", -20.37)] + [row(c, 0.0, blind) for c in ("a", "b", "c", "d")])
    (image,) = report.aggregates()["family"]
    assert image == {"family": "image", "configs": 1, "blind": 4, "mean_change": pytest.approx(-20.37)}
    assert "| image shifts | 1 | 4 | -20.37 |" in report.to_markdown()
    only_blind = EvalReport("m", "token", id=report.id, ood=report.ood[1:])
    (image,) = only_blind.aggregates()["family"]
    assert image["configs"] == 0 and image["blind"] == 4 and image["mean_change"] is None


def test_families_and_blind_spots():
    assert families_of(["reocr", "distort", "merge"]) == ["image", "layout"]
    assert families_of([]) == []

    def table(**changed):
        return {name: {"changed": changed.get(name, 0), "of": 100} for name in FACTORS}

    pixels_only = table(ink=40, background=30, quality=100)
    assert blind_spot(pixels_only, frozenset({"text", "layout"})) == (
        "measured changes only ink, background, quality, which the model does not see (it sees layout, text)")
    assert blind_spot(pixels_only, frozenset({"image"})) is None
    # an image shift that moves boxes or changes words: the CRF sees it, so no note (distort, capture_reocr)
    assert blind_spot(table(ink=100, geometry=100, box_position=100), frozenset({"text", "layout"})) is None
    assert blind_spot(table(ink=100, text=30), frozenset({"text", "layout"})) is None
    assert blind_spot(table(text=10), frozenset({"image"})) == (
        "measured changes only text, which the model does not see (it sees image)")
    assert blind_spot(table(ink=0.1), frozenset({"text"})) is None  # within tolerance: nothing changed
    assert blind_spot(pixels_only, None) is None  # a model that does not say what it sees
    assert blind_spot(None, frozenset({"text"})) is None  # no factor table: no note


def test_hf_adapters_derive_what_they_see_from_their_inputs():
    from dogood.models.baseline import BaselineTagger
    from dogood.models.hf_model import _HFModel

    def sees(*inputs):
        return _HFModel.sees.fget(SimpleNamespace(inputs=frozenset(inputs)))

    assert sees("input_ids", "attention_mask") == {"text"}  # BERT-style
    assert sees("input_ids", "bbox", "pixel_values") == {"text", "layout", "image"}  # LayoutLMv3
    assert sees("input_ids", "bbox") == {"text", "layout"}  # LiLT, BROS, LayoutLM
    assert sees("pixel_values") == {"image"}  # DiT, ViT
    assert BaselineTagger.sees == {"text", "layout"}


# -- DocVQA-style datasets: ANLS under the named convention -----------------------------------------------


def _docvqa(qas: dict[str, list[tuple[str, list[str]]]], shift: str | None = None):
    import datasets

    from dogood.core.document import Document, PageImage, QAPair, ShiftRecord
    from dogood.core.schema import document_to_row, features_for

    png = _png()
    rows = []
    for doc_id, pairs in qas.items():
        doc = Document(doc_id, PageImage.from_bytes(png, name=doc_id), words=(("text", (1, 1, 20, 10)),),
                       qa=tuple(QAPair(f"q{k}?", tuple(answers), id=qid) for k, (qid, answers) in enumerate(pairs)),
                       provenance=(ShiftRecord(shift, {}, 0),) if shift else ())
        rows.append(document_to_row(doc, "docvqa"))
    return datasets.Dataset.from_list(rows, features=features_for("docvqa"))


class Answers:
    name = "answers"
    task = "qa"
    sees = frozenset({"text", "layout"})

    def __init__(self, answers):
        self.answers = answers

    def predict(self, docs):
        return {d.id: Prediction(d.id, answers=self.answers[d.id]) for d in docs}


def test_docvqa_anls_paired_with_the_convention_named():
    gold = {"p": [("1", ["abcd"]), ("2", ["Lobo"])], "r": [("3", ["xyz"])]}
    id_ds, ood_ds = _docvqa(gold), _docvqa(gold, shift="word_perturbation")
    model = Answers({"p": {"1": "ab", "2": "lobo"}, "r": {}})  # NL exactly 0.5; exact; unanswered
    paper = evaluate(model, id_ds, ood_ds, resamples=0)
    assert paper.task == "qa" and paper.id["anls"] == pytest.approx(100 * (0 + 1 + 0) / 3) and paper.id["questions"] == 3
    official = evaluate(model, id_ds, ood_ds, resamples=20, anls_official=True)
    assert official.id["anls"] == pytest.approx(100 * (0.5 + 1 + 0) / 3)
    ood = official.ood[0]
    assert ood["change"] == 0.0 and ood["ci"]["change"] == [0.0, 0.0] and ood["families"] == ["text"]
    assert ood["note"] is None  # the model sees text
    assert "official DocVQA/RRC scorer" in official.to_markdown() and "paper formula" in paper.to_markdown()
    assert "| Dataset | Role | Split | Docs | Questions | ANLS" in paper.to_markdown()
    assert "OOD detection" not in paper.to_markdown()  # answers carry no confidence


# -- RVL-CDIP-style: accuracy intervals by hand, an image-only model on a text shift -------------------------


def _hub_rvl(labels: dict[str, str]):
    import datasets

    from dogood.core.schema import RVL_CDIP_CLASSES

    png = _png()
    features = datasets.Features({
        "id": datasets.Value("string"),
        "image": datasets.Image(),
        "label": datasets.ClassLabel(names=list(RVL_CDIP_CLASSES)),
        "words": datasets.Sequence(datasets.Value("string")),
        "bboxes": datasets.Sequence(datasets.Sequence(datasets.Value("int64"))),
    })
    rows = {"id": list(labels), "image": [{"bytes": png, "path": None}] * len(labels),
            "label": [RVL_CDIP_CLASSES.index(v) for v in labels.values()],
            "words": [["memo"]] * len(labels), "bboxes": [[[10, 10, 100, 30]]] * len(labels)}
    return datasets.Dataset.from_dict(rows, features=features)


class Classifier:
    name = "pixels-only"
    task = "document"
    sees = frozenset({"image"})

    def __init__(self, labels):
        self.labels = labels

    def predict(self, docs):
        return {d.id: Prediction(d.id, label=self.labels[d.id], confidence=1.0) for d in docs}


def test_accuracy_interval_by_hand_and_an_image_only_model_on_a_text_shift(monkeypatch):
    import dogood.eval as ev

    gold = {"1": "memo", "2": "form", "3": "letter", "4": "email"}
    model = Classifier({"1": "memo", "2": "form", "3": "memo", "4": "memo"})  # 2 of 4 right
    ood = ev.as_datasets(_hub_rvl(gold))[0]
    monkeypatch.setattr(ood.source, "load", lambda i, load=ood.source.load: _with_shift(load(i), "word_perturbation"))
    report = evaluate(model, _hub_rvl(gold), ood, resamples=100, seed=1)
    row = report.ood[0]
    assert report.id["accuracy"] == 50.0 and row["value"] == 50.0 and row["change"] == 0.0
    right = {"1": 1, "2": 1, "3": 0, "4": 0}
    rng = np.random.default_rng(1)
    acc = [100 * (sum(right[str(k + 1)] for k in rng.integers(0, 4, size=4)) / 4) for _ in range(100)]
    assert report.id["ci"]["value"] == pytest.approx(list(np.percentile(acc, [2.5, 97.5])), abs=1e-12)
    assert row["ci"]["value"] == report.id["ci"]["value"] and row["ci"]["change"] == [0.0, 0.0]
    assert row["families"] == ["text"] and row["note"] is None  # not a dogood build: no factor table, no note


def _with_shift(doc, shift):
    from dogood.core.document import ShiftRecord

    return doc.with_shift(ShiftRecord(shift, {}, 0))


def test_mean_drop_interval_resamples_the_documents_once_for_all_configs():
    import dataclasses

    gold = {"a": ["B-QUESTION", "B-ANSWER"], "b": ["B-HEADER", "B-QUESTION"], "c": ["B-ANSWER", "O"],
            "e": ["B-QUESTION", "I-QUESTION"]}
    base = as_datasets(_hub_funsd(gold))[0]
    one = dataclasses.replace(base, name="x/one", config="one")
    two = dataclasses.replace(base, name="x/two", config="two")
    worlds = [gold,
              {**gold, "a": ["B-QUESTION", "O"], "c": ["O", "O"]},  # config one: loses 2 of 7 entities
              {**gold, "b": ["O", "B-QUESTION"], "e": ["B-QUESTION", "B-QUESTION"]}]  # config two

    class Worlds(Scripted):
        def __init__(self):
            self.calls = 0

        def predict(self, docs):
            self.answers = worlds[self.calls]
            self.calls += 1
            return super().predict(docs)

    report = evaluate(Worlds(), base, [one, two], resamples=150, seed=4)
    counts = [  # (tp, n_pred, n_gold) per document, for ID, config one and config two
        {"a": (2, 2, 2), "b": (2, 2, 2), "c": (1, 1, 1), "e": (1, 1, 1)},
        {"a": (1, 1, 2), "b": (2, 2, 2), "c": (0, 0, 1), "e": (1, 1, 1)},
        {"a": (2, 2, 2), "b": (1, 1, 2), "c": (1, 1, 1), "e": (0, 2, 1)},
    ]
    ids = ["a", "b", "c", "e"]
    rng = np.random.default_rng(4)
    means = []
    for _ in range(150):
        drawn = [ids[k] for k in rng.integers(0, 4, size=4)]
        f1 = [100 * _micro_f1(*(sum(c[d][j] for d in drawn) for j in range(3))) for c in counts]
        means.append(((f1[1] - f1[0]) + (f1[2] - f1[0])) / 2)
    (agg,) = report.aggregates()["dataset"]
    assert agg["dataset"] == "x" and agg["configs"] == 2
    assert agg["mean_change"] == pytest.approx((report.ood[0]["change"] + report.ood[1]["change"]) / 2)
    assert agg["ci"] == pytest.approx(list(np.percentile(means, [2.5, 97.5])), abs=1e-10)
    assert "| all of x | 2 |" in report.to_markdown()


def test_a_limited_run_warns_of_no_document_it_does_not_score(natural5, trained_baseline):
    """`--limit 5` against a build of the first 5 documents: every scored ID document is in the OOD set, so no
    "N ID document(s) are not in" warning (the 45 beyond the limit are left out on purpose)."""
    report = evaluate(trained_baseline, "funsd", f"{natural5}:natural", limit=5, resamples=0)
    assert report.warnings == []
    assert report.ood[0]["paired"] == {"shared": 5, "id_only": 0, "ood_only": 0}
    # a limit beyond the build: the ID documents scored that the OOD set lacks are counted, and only those
    report = evaluate(trained_baseline, "funsd", f"{natural5}:natural", limit=8, resamples=0)
    assert report.warnings == ["funsd-i/natural and funsd hold different documents: scored on the 5 they share; "
                               "3 ID document(s) of the first 8 are not in funsd-i/natural, 0 of its documents are "
                               "not in funsd"]
