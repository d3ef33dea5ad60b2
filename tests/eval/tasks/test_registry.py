"""The task registry (issue 39): one module per task, named after it, and a new task is one class: evaluate, the
bootstrap, the report and its writers take it without another file changed."""

from __future__ import annotations

import io
import pkgutil

import numpy as np
import pytest

from dogood.core.schema import iob_tags
from dogood.eval import evaluate
from dogood.eval.tasks import TASKS, Task, TaskError, make_task, register
from dogood.models.predictions import Prediction


def test_every_task_module_registers_the_task_it_is_named_after():
    import dogood.eval.tasks as tasks
    from dogood.cli.eval_command import task_names

    modules = {m.name for m in pkgutil.iter_modules(tasks.__path__) if m.name != "base"}
    assert modules == set(TASKS) == {"token", "document", "qa", "ocr", "layout"}
    assert task_names() == sorted(TASKS)  # what `dogood eval --task` offers, read without importing them
    for name, cls in TASKS.items():
        assert cls.name == name and cls.__module__ == f"dogood.eval.tasks.{name}"
        assert cls.metric and cls.metric_label and cls.reads and cls.model_task and cls.title


@pytest.mark.parametrize("name", ["token", "document", "qa", "ocr"])
def test_the_headline_from_pooled_counts_is_the_rows_score(name):
    """What the bootstrap recomputes (``values`` over weights) is the score a row prints, for every counting task."""
    task = make_task(name)
    rng = np.random.default_rng(0)
    counts = rng.integers(0, 9, size=(6, len(task.count_names))).astype(np.float64)
    counts[:, -1 if name != "ocr" else 2] += 1  # a denominator never 0
    weights = rng.integers(0, 3, size=(4, 6))
    got = task.values(counts, weights)
    expected = [task.from_counts(w @ counts) for w in weights]
    assert np.allclose(got, expected)
    assert task.value(counts, len(counts)) == pytest.approx(float(task.from_counts(counts.sum(axis=0))))


def test_options_belong_to_their_task():
    with pytest.raises(TaskError, match="kieval applies to the token task, not to document"):
        make_task("document", kieval=True)
    with pytest.raises(TaskError, match="unknown task 'nope': dogood scores document, layout, ocr, qa, token"):
        make_task("nope")


def _dataset(docs: dict[str, list[str]]):
    import datasets
    from PIL import Image

    png = io.BytesIO()
    Image.new("L", (100, 100), 255).save(png, format="PNG")
    names = ["O", "B-HEADER", "I-HEADER", "B-QUESTION", "I-QUESTION", "B-ANSWER", "I-ANSWER"]
    features = datasets.Features({"id": datasets.Value("string"), "tokens": datasets.Sequence(datasets.Value("string")),
                                  "bboxes": datasets.Sequence(datasets.Sequence(datasets.Value("int64"))),
                                  "ner_tags": datasets.Sequence(datasets.ClassLabel(names=names)),
                                  "image": datasets.Image()})
    rows = {"id": list(docs), "tokens": [[f"w{k}" for k in range(len(t))] for t in docs.values()],
            "bboxes": [[[10 * k, 10, 10 * k + 8, 20] for k in range(len(t))] for t in docs.values()],
            "ner_tags": [[names.index(x) for x in t] for t in docs.values()],
            "image": [{"bytes": png.getvalue(), "path": None}] * len(docs)}
    return datasets.Dataset.from_dict(rows, features=features)


class Tagger:
    name, task = "tagger", "token"

    def __init__(self, answers):
        self.answers, self.calls = answers, 0

    def predict(self, docs):
        self.calls += 1
        answers = self.answers[min(self.calls, len(self.answers)) - 1]
        return {d.id: Prediction(d.id, tags=tuple(answers[d.id]), confidences=(0.9,) * len(answers[d.id]))
                for d in docs}


def test_a_new_task_is_one_class(tmp_path):
    """Token accuracy (the share of tokens tagged right), written as one class: scored, paired, bootstrapped,
    reported and written by the machinery every task shares."""

    class TokenAccuracy(Task):
        name, title = "token_accuracy", "token accuracy (a test's task)"
        metric, metric_label = "token_accuracy", "token accuracy"
        reads, model_task = ("token",), "token"
        count_names = ("right", "tokens")
        pooled = "the drawn documents' right tokens over their tokens"
        columns = (("tokens", "Tokens", "int"),)

        def keep(self, scored, doc, p):
            _, gold = iob_tags(doc)
            scored.counts[doc.id] = np.array([sum(a == b for a, b in zip(gold, p.tags)), len(gold)])
            scored.keep_confidence(doc.id, p.confidences, [a == b for a, b in zip(gold, p.tags)])

        def from_counts(self, sums):
            return 100.0 * (np.asarray(sums)[..., 0] / np.asarray(sums)[..., 1])

        def scores(self, scored, ids):
            stats = self.stats(scored, ids)
            return {"token_accuracy": self.value(stats, len(ids)), "tokens": int(stats[:, 1].sum())}

    register(TokenAccuracy)
    try:
        gold = {"a": ["B-QUESTION", "I-QUESTION", "O"], "b": ["B-ANSWER", "O"]}
        worse = {"a": ["B-QUESTION", "O", "O"], "b": ["O", "O"]}  # 3 of 5 tokens right
        report = evaluate(Tagger([gold, worse]), _dataset(gold), _dataset(gold), task="token_accuracy",
                          resamples=30)
        assert report.id["value"] == 100.0 and report.ood[0]["value"] == pytest.approx(60.0)
        assert report.ood[0]["change"] == pytest.approx(-40.0) and report.ood[0]["tokens"] == 5
        assert report.ood[0]["ci"]["change"][1] <= 0 and report.ood[0]["ood_detection"]["auroc"] == 50.0
        paths = report.write(tmp_path / "r")
        md = paths["md"].read_text()
        assert "Task: token accuracy (a test's task). Metric: token accuracy, in percent." in md
        assert "| Dataset | Role | Split | Docs | Tokens | token accuracy [95% CI] |" in md
        assert paths["png"].is_file() and "token_accuracy" in paths["csv"].read_text().splitlines()[1]
    finally:
        TASKS.pop("token_accuracy")
