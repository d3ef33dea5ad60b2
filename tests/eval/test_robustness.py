"""dogood eval, issue 18 part 4: severity curves, mean relative change, corruption error vs a reference, plots."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from PIL import Image

from dogood.cli import main
from dogood.core.schema import iob_tags
from dogood.eval import evaluate
from dogood.eval.robustness import (
    REFERENCE_FLOOR,
    corruption_error,
    floor_note,
    mean_relative_change,
    reference_degradation,
    relative_corruption_error,
    split_severity,
    sweep_family,
)
from dogood.pipeline.build import build
from dogood.pipeline.recipe import load_recipe

# -- the formulas, by hand -------------------------------------------------------------------------------------

MODEL = [70.0, 50.0, 25.0]  # a model's scores at severities 1..3, in percent
MODEL_ID = 80.0
REF = [60.0, 40.0, 20.0]  # the reference's scores on the same documents
REF_ID = 75.0


def test_corruption_error_is_the_ratio_of_summed_errors():
    # errors 30, 50, 75 against 40, 60, 80
    assert corruption_error(MODEL, REF) == ((100 - 70.0) + (100 - 50.0) + (100 - 25.0)) / ((100 - 60.0) + (100 - 40.0) + (100 - 20.0))
    assert corruption_error(MODEL, REF) == pytest.approx(155 / 180, abs=1e-15)
    assert corruption_error(REF, REF) == 1.0


def test_relative_corruption_error_sums_each_severitys_gap_to_the_clean_error():
    got = relative_corruption_error(MODEL, [MODEL_ID] * 3, REF, [REF_ID] * 3)
    gaps = ((100 - 70.0) - (100 - 80.0)) + ((100 - 50.0) - (100 - 80.0)) + ((100 - 25.0) - (100 - 80.0))
    ref_gaps = ((100 - 60.0) - (100 - 75.0)) + ((100 - 40.0) - (100 - 75.0)) + ((100 - 20.0) - (100 - 75.0))
    assert got == gaps / ref_gaps
    assert got == pytest.approx(95 / 105, abs=1e-15)
    # a reference whose errors do not grow: undefined, not infinite
    assert math.isnan(relative_corruption_error(MODEL, [MODEL_ID] * 3, [REF_ID] * 3, [REF_ID] * 3))


def test_mean_relative_change():
    got = mean_relative_change([MODEL_ID] * 3, MODEL)
    assert got == 100 * (((70.0 - 80.0) / 80.0 + (50.0 - 80.0) / 80.0 + (25.0 - 80.0) / 80.0) / 3)
    assert got == pytest.approx(-100 * (0.125 + 0.375 + 0.6875) / 3, abs=1e-12)
    assert mean_relative_change([50.0, 40.0], [50.0, 40.0]) == 0.0


def test_the_formulas_take_bootstrap_arrays_elementwise():
    a = [np.array([70.0, 60.0]), np.array([50.0, 50.0])]
    r = [np.array([60.0, 60.0]), np.array([40.0, 50.0])]
    ce = corruption_error(a, r)
    assert ce.tolist() == [corruption_error([70.0, 50.0], [60.0, 40.0]), corruption_error([60.0, 50.0], [60.0, 50.0])]


def test_severity_config_names():
    assert split_severity("merge@3") == ("merge", 3)
    assert split_severity("merge_x10_y5@1") == ("merge_x10_y5", 1)
    assert split_severity("merge") == ("merge", None)
    assert split_severity("merge@7") == ("merge@7", None)  # levels are 1..5
    assert split_severity(None) == (None, None)
    assert sweep_family("", ["a@1", "a@2"], ["global_shuffle"], ["image"]) == ["image"]  # no record, no levels: the fallback
    assert sweep_family("", ["a@1", "a@2"], ["merge"], ["image"]) == ["layout"]  # no record: the shift with levels


# -- end to end on real FUNSD ------------------------------------------------------------------------------------

SWEEP = """\
name: funsd-sweep
version: 1.0.0
description: merge and char_deletion at three severities, named as a severities key names them
source: {kind: funsd}
splits: [test]
seed: 0
configs:
  merge@1: [{shift: merge, lambda_x: 5, lambda_y: 2, level: entity}]
  merge@2: [{shift: merge, lambda_x: 20, lambda_y: 10, level: entity}]
  merge@3: [{shift: merge, lambda_x: 60, lambda_y: 30, level: entity}]
  char_deletion@1: [{shift: char_deletion, fraction: 0.1}]
  char_deletion@2: [{shift: char_deletion, fraction: 0.4}]
  char_deletion@3: [{shift: char_deletion, fraction: 0.9}]
  merge: [{shift: merge, level: entity}]
"""


@pytest.fixture(scope="module")
def sweep(funsd_dir, tmp_path_factory):
    base = tmp_path_factory.mktemp("sweep")
    (base / "funsd-sweep.yaml").write_text(SWEEP)
    out = base / "funsd-sweep"
    build(load_recipe(str(base / "funsd-sweep.yaml")), out, source_path=funsd_dir, limit=5, progress=False)
    return out


@pytest.fixture(scope="module")
def weak_crf(funsd_train, tmp_path_factory):
    """A second CRF (30 training forms, 40 iterations): a reference that differs from the model."""
    from dogood.models.baseline import BaselineTagger, train_baseline

    docs = [funsd_train.load(i) for i in funsd_train.ids()[:30]]
    path = train_baseline(docs, max_iterations=40).save(tmp_path_factory.mktemp("weak") / "weak.dogood-model")
    return BaselineTagger.load(path)


def _curve_pixels(png, colour=(0x1F, 0x77, 0xB4)):
    """Pixels of the first curve's colour (matplotlib's C0)."""
    img = np.asarray(Image.open(png).convert("RGB")).astype(int)
    return np.abs(img - np.array(colour)).sum(axis=2) < 40


def test_eval_reports_severity_curves_equal_to_the_per_config_scores(sweep, trained_baseline, weak_crf, tmp_path):
    out = tmp_path / "report"
    code = main(["eval", "--model", str(trained_baseline.source), "--reference", str(weak_crf.source), "--id", "funsd",
                 "--ood", str(sweep), "--limit", "4", "--bootstrap", "200", "--quiet", "--out", str(out)])
    assert code == 0
    data = json.loads((out / "report.json").read_text())
    rows = {r["config"]: r for r in data["datasets"] if r["role"] == "ood"}
    rob = data["robustness"]
    import hashlib

    digest = hashlib.sha256(open(weak_crf.source, "rb").read()).hexdigest()
    assert rob["reference"] == f"weak.dogood-model (sha256 {digest[:12]}…)"  # by file and content, not the shared name
    assert rob["reference_identity"] == {"name": weak_crf.name, "file": "weak.dogood-model", "sha256": digest,
                                         "label": rob["reference"]}
    assert rob["self_reference"] is False and rob["reference_floor"] == REFERENCE_FLOOR
    by_name = {s["corruption"]: s for s in rob["sweeps"]}
    assert sorted(by_name) == ["funsd-sweep/char_deletion", "funsd-sweep/merge"]  # `merge` alone is no sweep
    merge, chars = by_name["funsd-sweep/merge"], by_name["funsd-sweep/char_deletion"]
    assert (merge["family"], chars["family"]) == ("layout", "text")  # from the build's chains
    # the reference, scored as a model on its own: the same per-config scores the summary divides by
    as_model = evaluate(weak_crf, "funsd", str(sweep), limit=4, resamples=0)
    ref_rows = {r["config"]: r for r in as_model.ood}
    for sw in (merge, chars):
        assert sw["severities"] == [1, 2, 3] and sw["same_documents"] is True
        for point in sw["curve"]:
            row = rows[point["config"]]
            assert point["value"] == row["value"] and point["change"] == row["change"]
            assert point["ci"] == row["ci"]["value"] and point["change_ci"] == row["ci"]["change"]
            assert point["documents"] == 4
        values = [rows[f"{sw['config']}@{s}"]["value"] for s in (1, 2, 3)]
        clean = rows[f"{sw['config']}@1"]["id_value"]
        assert sw["id_value"] == clean == data["datasets"][0]["value"]
        ref = [ref_rows[f"{sw['config']}@{s}"]["value"] for s in (1, 2, 3)]
        ref_clean = as_model.id["f1"]
        assert sw["reference"]["values"] == ref and sw["reference"]["id_value"] == ref_clean
        assert sw["mean_relative_change"] == mean_relative_change([clean] * 3, values)
        assert sw["ce"] == corruption_error(values, ref)
        rel = relative_corruption_error(values, [clean] * 3, ref, [ref_clean] * 3)
        growth = reference_degradation(ref, [ref_clean] * 3)
        assert sw["reference"]["degradation"] == growth
        if growth >= REFERENCE_FLOOR:
            assert sw["relative_ce"] == rel
        else:  # the reference barely degrades: no ratio over noise
            assert sw["relative_ce"] is None and sw["relative_ce_note"].startswith("n/a: the reference's error grows by")
        assert sw["ci"]["mean_relative_change"][0] <= sw["mean_relative_change"] <= sw["ci"]["mean_relative_change"][1]
        assert sw["ci"]["ce"][0] <= sw["ce"] <= sw["ci"]["ce"][1]
    # merging boxes hurts entity F1 at every severity
    assert all(p["change"] < 0 for p in merge["curve"])
    fams = {f["family"]: f for f in rob["families"]}
    assert fams["layout"]["mce"] == merge["ce"] and fams["text"]["mce"] == chars["ce"]
    assert rob["all"]["mce"] == pytest.approx((merge["ce"] + chars["ce"]) / 2, abs=1e-15)
    md = (out / "report.md").read_text()
    assert "## Robustness across severities (ImageNet-C summaries)" in md
    assert "![layout shifts by severity](severity-layout.png)" in md and "![text shifts by severity](severity-text.png)" in md
    assert f"| 2 | merge@2 | 4 | {clean:.2f} | {rows['merge@2']['value']:.2f} [" in md
    # the plots: a curve drawn from the ID point to severity 3
    for family in ("layout", "text"):
        png = out / f"severity-{family}.png"
        assert png.is_file()
        curve = _curve_pixels(png)
        cols = np.flatnonzero(curve.any(axis=0))
        width = curve.shape[1]
        assert curve.sum() > 300 and cols.max() - cols.min() > 0.6 * width


def test_reference_none_no_sweep_and_a_stale_plot(sweep, trained_baseline, tmp_path, capsys, monkeypatch):
    out = tmp_path / "r"
    common = ["eval", "--model", str(trained_baseline.source), "--id", "funsd", "--limit", "3", "--bootstrap", "0",
              "--quiet", "--out", str(out)]
    assert main([*common, "--ood", f"{sweep}:merge@1", f"{sweep}:merge@2", "--reference", "none"]) == 0
    data = json.loads((out / "report.json").read_text())
    (sw,) = data["robustness"]["sweeps"]
    assert "ce" not in sw and "ci" not in sw and sw["severities"] == [1, 2]
    assert "No corruption error: --reference none." in (out / "report.md").read_text()
    assert (out / "severity-layout.png").is_file()
    # the default reference is the trained baseline; an empty cache has none: the report says so
    monkeypatch.setenv("DOGOOD_CACHE", str(tmp_path / "empty-cache"))
    assert main([*common, "--ood", f"{sweep}:char_deletion@1"]) == 0
    data = json.loads((out / "report.json").read_text())
    assert "no trained baseline (no baseline model at" in data["robustness"]["reference_note"]
    assert not (out / "severity-layout.png").exists() and (out / "severity-text.png").is_file()
    # no severity config: no summary, no severity plot
    assert main([*common, "--ood", f"{sweep}:merge"]) == 0
    data = json.loads((out / "report.json").read_text())
    assert data["robustness"] is None and not list(out.glob("severity-*.png"))
    capsys.readouterr()
    # a reference that does not exist: one line, exit 1
    assert main([*common, "--ood", f"{sweep}:merge@1", "--reference", str(tmp_path / "nope.dogood-model")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("dogood: error: --reference ") and "does not exist" in err and "Traceback" not in err


def test_the_reference_may_be_the_model_itself(sweep, trained_baseline):
    from dogood.models.baseline import BaselineTagger

    for reference in (trained_baseline, BaselineTagger.load(trained_baseline.source)):  # the object, or the same file
        report = evaluate(trained_baseline, "funsd", [f"{sweep}:merge@1", f"{sweep}:merge@3"], limit=3, resamples=50,
                          reference=reference)
        rob = report.robustness
        (sw,) = rob["sweeps"]
        assert "ce" not in sw and "relative_ce" not in sw and "reference" not in sw  # no rows of 1.000
        assert rob["self_reference"] is True and rob["reference"] is None
        assert rob["reference_note"].startswith("the model is its own reference (funsd-baseline.dogood-model (sha256 ")
        assert sw["severities"] == [1, 3] and sw["mean_relative_change"] < 0
        md = report.to_markdown()
        assert "No corruption error: the model is its own reference" in md and "| mCE |" not in md


def test_relative_ce_needs_the_reference_to_degrade(sweep, trained_baseline):
    """A reference whose tags ignore the layout (gold tags, answers missed) has errors that never grow: CE is defined,
    the relative CE would divide by zero growth, so it is n/a with the reason."""

    class Steady:
        name, task = "steady", "token"

        def predict(self, docs):
            from dogood.models.predictions import Prediction

            out = {}
            for d in docs:
                tags = tuple("O" if t.endswith("ANSWER") else t for t in iob_tags(d)[1])
                out[d.id] = Prediction(d.id, tags=tags, confidences=(0.9,) * len(tags))
            return out

    report = evaluate(trained_baseline, "funsd", [f"{sweep}:merge@1", f"{sweep}:merge@2", f"{sweep}:merge@3"],
                      limit=3, resamples=50, reference=Steady())
    (sw,) = report.robustness["sweeps"]
    assert sw["reference"]["degradation"] == 0.0 and sw["relative_ce"] is None and "relative_ce" not in sw["ci"]
    assert sw["relative_ce_note"] == floor_note(0.0) and "below the 1-point floor" in sw["relative_ce_note"]
    assert sw["ce"] == pytest.approx(corruption_error([p["value"] for p in sw["curve"]], sw["reference"]["values"]))
    assert json.loads(report.to_json())["robustness"]["families"][0]["relative_mce"] is None  # nothing to average
    md = report.to_markdown()
    assert "relative CE n/a: the reference's error grows by 0.00 points per severity" in md
    assert "steady" in md
