"""One scale (issue 39): every number a report prints for a dataset and a model is the same in ``evaluate``,
``compare``, the CLI report, the gallery and the card: in percent, changes negative when worse; and the user's
frictions: ``evaluate("baseline")`` after a build, ``compare`` taking what ``evaluate`` takes, a mistyped folder,
the order of a parameter sweep."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest

import dogood
from dogood.cli import main
from dogood.eval import EvalError, resolve_datasets


@pytest.fixture(scope="module")
def built(funsd_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("one-scale") / "funsd-l"
    assert main(["build", "funsd-l", "--source", str(funsd_dir), "--out", str(out), "--limit", "4",
                 "--config", "merge,merge_x0_y10,merge_x0_y5", "--quiet"]) == 0
    return out


class ImageOnly:
    """The trained baseline, declaring that it sees only pixels: merge's box changes are then a blind spot."""

    name, task, sees = "image-only", "token", frozenset({"image"})

    def __init__(self, inner):
        self.inner = inner

    def predict(self, docs):
        return self.inner.predict(docs)


def test_every_number_is_the_same_everywhere(built, trained_baseline, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    model = str(trained_baseline.source)
    report = dogood.evaluate(model, "funsd", f"{built}:merge", limit=4, resamples=50)
    id_value, ood = report.id["value"], report.ood[0]
    assert 1 < ood["value"] < 100 and ood["change"] == ood["value"] - id_value < 0  # percent; negative: worse
    # compare, given the same model twice by path as evaluate was
    same = dogood.compare(model, model, ["funsd", f"{built}:merge"], limit=4, resamples=50)
    assert same["funsd"]["before"] == id_value and same["merge"]["after"] == ood["value"]
    # the CLI's report
    assert main(["eval", "--model", model, "--id", "funsd", "--ood", f"{built}:merge", "--limit", "4",
                 "--bootstrap", "50", "--quiet", "--out", "eval/crf"]) == 0
    data = json.loads(Path("eval/crf/report.json").read_text())
    assert data["scale"] == "percent"
    assert [r["value"] for r in data["datasets"]] == [id_value, ood["value"]]
    assert data["datasets"][1]["change"] == ood["change"]
    md = Path("eval/crf/report.md").read_text()
    printed = (f"{ood['value']:.2f}", f"{ood['change']:+.2f}", f"{id_value:.2f}")
    assert all(p in md for p in printed)
    # the gallery and the card print the same figures
    assert main(["gallery", str(built), "--html", "g.html", "--report", "eval/crf"]) == 0
    html = Path("g.html").read_text(encoding="utf-8")
    assert all(p in html for p in printed)
    from dogood.pipeline.card import render_card_from_build

    card = render_card_from_build(built, results=[data])
    assert f"| {id_value:.2f} | – |" in card and f"| {ood['value']:.2f} | {ood['change']:+.2f} |" in card


def test_the_blind_spot_note_reaches_the_gallery_and_the_card(built, trained_baseline, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    report = dogood.evaluate(ImageOnly(trained_baseline), "funsd", f"{built}:merge", limit=4, resamples=0)
    note = report.ood[0]["note"]
    assert note.startswith("measured changes only box position, box size") and "(it sees image)" in note
    (family,) = report.aggregates()["family"]
    assert family == {"family": "layout", "configs": 0, "blind": 1, "mean_change": None}
    report.write("eval/blind")
    assert main(["gallery", str(built), "--html", "g.html", "--report", "eval/blind"]) == 0
    assert note in Path("g.html").read_text(encoding="utf-8")
    from dogood.pipeline.card import render_card_from_build

    card = render_card_from_build(built, results=[json.loads(Path("eval/blind/report.json").read_text())])
    assert f"{report.ood[0]['dataset']} (changes only what the model does not see)" in card


def test_an_older_report_reads_as_it_meant(built):
    """A report of a dogood before one scale (fractions, a positive drop for a loss) prints the same figures."""
    from dogood.eval.formats import report_row
    from dogood.pipeline.card import _result_table

    old = {"model": "m", "metric": "f1", "datasets": [
        {"dataset": "funsd", "role": "id", "split": "test", "value": 0.7127, "drop": None},
        {"dataset": "funsd-l/merge", "role": "ood", "split": "test", "value": 0.2301, "drop": 0.4826}]}
    assert report_row(old, old["datasets"][1]) == (pytest.approx(23.01), pytest.approx(-48.26), None)
    rows = _result_table(old)["rows"]
    assert (rows[1]["value"], rows[1]["change"]) == (23.01, -48.26)


def test_the_readme_evaluate_works_after_a_build_alone(built, funsd_dir, tmp_path, monkeypatch, capsys):
    """`dogood build funsd-l` then `dogood.evaluate("baseline", ...)`: it asked for `train-baseline`; the baseline
    of the data's box convention is now trained on first use (announced once), as build trains Move's scorer."""
    import dogood.models.baseline as baseline

    monkeypatch.setenv("DOGOOD_CACHE", str(tmp_path / "cache"))
    real = baseline.train_baseline
    monkeypatch.setattr(baseline, "train_baseline",
                        lambda docs, **kw: real(list(docs)[:5], **{"max_iterations": 10, **kw}))
    report = dogood.evaluate("baseline", "funsd", f"{built}:merge", limit=2, resamples=0)
    assert report.model == "dogood-crf-baseline" and 0 <= report.id["value"] <= 100
    assert (tmp_path / "cache" / "models" / "funsd-baseline-segment.dogood-model").is_file()
    assert "no segment-level baseline at" in capsys.readouterr().err
    # compare takes the same spec
    both = dogood.compare("baseline", "baseline", f"{built}:merge", limit=2, resamples=0)
    assert both["merge"]["change"] == 0.0 and both["merge"]["after"] == report.ood[0]["value"]


def test_compare_takes_evaluates_options_with_its_defaults():
    from dogood.eval.compare import compare
    from dogood.eval.run import evaluate

    theirs = inspect.signature(evaluate).parameters
    for name, p in inspect.signature(compare).parameters.items():
        if p.kind is inspect.Parameter.KEYWORD_ONLY:
            assert name in theirs and theirs[name].default == p.default, name


def test_a_mistyped_local_folder_is_not_a_hub_error(built, monkeypatch):
    with pytest.raises(EvalError, match=r"funsd-ll does not exist; did you mean .*funsd-l\?"):
        resolve_datasets(str(built.parent / "funsd-ll"))
    monkeypatch.chdir(built.parent.parent)  # "one-scale0/funsd-ll": a relative name, which a Hub id also looks like
    with pytest.raises(EvalError, match=r"no folder one-scale\d*/funsd-ll \(the folder one-scale\d* exists; a Hub "
                                        r"id would not name a local folder\); did you mean .*funsd-l\?"):
        resolve_datasets(f"{built.parent.name}/funsd-ll")


def test_a_parameter_sweep_is_in_the_order_of_its_values(built):
    names = [d.config for d in resolve_datasets(str(built))]
    assert names == ["merge", "merge_x0_y5", "merge_x0_y10"]  # not merge_x0_y10 before merge_x0_y5
