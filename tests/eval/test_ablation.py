"""dogood eval --ablate (issue 28 part 3): the ID set with an input removed, as Do-GOOD's Table 1."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dogood.cli import main
from dogood.core.schema import iob_tags
from dogood.eval import evaluate
from dogood.eval.ablation import ablate, parse_ablations
from dogood.models import ModelError, PredictionsFile


def test_ablate_removes_only_the_named_input(funsd_test):
    doc = funsd_test.load(funsd_test.ids()[0])
    no_layout = ablate(doc, ("layout",))
    assert {w.box for w in no_layout.words} == {(0, 0, 0, 0)} and [w.text for w in no_layout.words] == [
        w.text for w in doc.words]
    assert no_layout.image is doc.image and no_layout.entities == doc.entities
    no_text = ablate(doc, ("text",), mask_token="<mask>")
    assert [w.box for w in no_text.words] == [w.box for w in doc.words]
    assert {w.text for w in no_text.words if w.text.strip()} == {"<mask>"}
    assert iob_tags(no_text) == iob_tags(doc)  # the same token words, so the same gold tags
    no_image = ablate(doc, ("image",))
    pixels = no_image.image.to_array()
    assert pixels.shape == (doc.height, doc.width) and (pixels == 255).all() and no_image.words == doc.words
    assert (doc.image.to_array() < 128).any()  # the original had ink
    assert parse_ablations(["layout", "layout+image", "image+layout", "text"]) == [("layout",), ("image", "layout"),
                                                                                   ("text",)]
    with pytest.raises(ModelError, match="name one or more of image, layout, text"):
        parse_ablations(["pixels"])


def test_layout_ablation_hurts_the_baseline_and_image_ablation_does_not(trained_baseline):
    report = evaluate(trained_baseline, "funsd", [], ablate=["layout", "image", "text", "image+layout"], resamples=200)
    rows = {"+".join(r["ablation"]): r for r in report.ablations}
    layout, image, text = rows["layout"], rows["image"], rows["text"]
    assert layout["documents"] == 50 and layout["id_value"] == report.id["f1"]
    # without boxes the CRF loses most entities (Do-GOOD Table 1: LayoutLMv3 90.29 -> 29.87 F1 w/o layout)
    assert layout["change"] < -30 and layout["change_excludes_zero"] and layout["relative_change"] < -50
    assert image["change"] == 0.0 and image["ci"]["change"] == [0.0, 0.0] and image["note"] == "the model sees no pixels"
    assert text["change"] < -5 and text["change_excludes_zero"]
    assert rows["image+layout"]["value"] == layout["value"]  # the pixels it never sees add nothing
    md = report.to_markdown()
    assert "## Modality ablation (Do-GOOD Table 1)" in md
    assert f"| layout | 50 | {layout['id_value']:.2f} | {layout['value']:.2f} [" in md
    # the ablated predictions are the model's predictions on the ablated documents
    from dogood.eval.metrics import entity_scores
    from dogood.sources.funsd import FunsdSource

    src = FunsdSource(split="test")
    docs = [src.load(i) for i in src.ids()]
    preds = trained_baseline.predict([ablate(d, ("layout",)) for d in docs])
    assert layout["value"] == pytest.approx(
        100 * entity_scores([iob_tags(d)[1] for d in docs], [list(preds[d.id].tags) for d in docs])["f1"], abs=1e-10)


def test_ablations_a_model_does_not_declare_are_refused(funsd_test, tmp_path):
    preds = tmp_path / "p.jsonl"
    with open(preds, "w") as fh:
        for i in funsd_test.ids():
            fh.write(json.dumps({"id": i, "ner_tags": iob_tags(funsd_test.load(i))[1]}) + "\n")
    with pytest.raises(ModelError, match="predictions made elsewhere cannot be ablated"):
        evaluate(PredictionsFile(preds), "funsd", [], ablate=["layout"])

    class PixelsOnly:
        name, task, sees, ablations = "pixels-only", "token", frozenset({"image"}), frozenset({"image"})

    with pytest.raises(ModelError, match="cannot be scored without its layout: it supports --ablate image"):
        evaluate(PixelsOnly(), "funsd", [], ablate=["image+layout"])


def test_cli_ablate_without_ood_sets(trained_baseline, tmp_path, capsys):
    out = tmp_path / "r"
    code = main(["eval", "--model", str(trained_baseline.source), "--id", "funsd", "--ablate", "layout", "--limit", "8",
                 "--bootstrap", "50", "--quiet", "--out", str(out)])
    assert code == 0
    data = json.loads((out / "report.json").read_text())
    (row,) = data["ablations"]
    assert row["ablation"] == ["layout"] and row["documents"] == 8 and row["change"] < -20
    assert data["datasets"][0]["role"] == "id" and len(data["datasets"]) == 1
    csv_rows = (out / "report.csv").read_text().splitlines()
    assert csv_rows[-1].split(",")[2] == "ablation"
    capsys.readouterr()
    assert main(["eval", "--model", str(trained_baseline.source), "--id", "funsd", "--quiet", "--out", str(out)]) == 1
    assert "give --ood DATASET" in capsys.readouterr().err
    assert main(["eval", "--model", str(trained_baseline.source), "--id", "funsd", "--ablate", "colour", "--quiet",
                 "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("dogood: error: --ablate 'colour'") and "Traceback" not in err
    assert np.isfinite(row["value"])
