"""examples/figure6.py (Do-GOOD Figure 6) on real FUNSD: both regimes, scores that dogood eval reproduces."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from dogood.cli import main as dogood_main

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "figure6.py"


def _example():
    spec = importlib.util.spec_from_file_location("figure6", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules["figure6"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def baseline_run(funsd_dir, tmp_path_factory):
    """The CRF baseline, layout family, first 10 train and 10 test forms, 2 shifted copies, 40 L-BFGS iterations."""
    out = tmp_path_factory.mktemp("figure6")
    code = _example().main(["--out", str(out), "--source", str(funsd_dir), "--family", "layout", "--limit", "10",
                            "--copies", "2", "--max-iterations", "40", "--bootstrap", "200"])
    assert code == 0
    return out, json.loads((out / "figure6.json").read_text())


def test_both_regimes_train_on_what_they_say(baseline_run):
    out, result = baseline_run
    configs = ["merge", "global_shuffle", "margin_padding"]
    assert result["configs"] == configs and result["copies"] == 2
    plain, mixed = result["regimes"]["FUNSD train"], result["regimes"]["+ shifted train"]
    assert plain["training_documents"] == 10 and mixed["training_documents"] == 10 + 10 * 2 * 3
    for regime in (plain, mixed):
        assert 30 < regime["id_f1"] < 100 and regime["id_ci"][0] <= regime["id_f1"] <= regime["id_ci"][1]
        assert set(regime["ood"]) == set(configs)
        for ood in regime["ood"].values():
            assert 10 < ood["f1"] < 100 and ood["documents"] == 10 and ood["ci"][0] <= ood["f1"] <= ood["ci"][1]
    table = (out / "figure6.md").read_text()
    assert f"| FUNSD train | 10 | {plain['id_f1']:.2f} [" in table
    assert f"| + shifted train | 70 | {mixed['id_f1']:.2f} [" in table


@pytest.mark.parametrize("regime", [0, 1])
def test_scores_are_what_dogood_eval_computes_on_the_same_files(baseline_run, regime, tmp_path):
    out, result = baseline_run
    figures = result["regimes"][["FUNSD train", "+ shifted train"][regime]]
    code = dogood_main(["eval", "--model", str(out / "models" / f"regime{regime}.dogood-model"),
                        "--id", str(out / "data" / "test-id"), "--ood", str(out / "data" / "test-ood"),
                        "--out", str(tmp_path / "eval"), "--bootstrap", "200", "--quiet"])
    assert code == 0
    rows = json.loads((tmp_path / "eval" / "report.json").read_text())["datasets"]
    assert rows[0]["role"] == "id" and rows[0]["value"] == figures["id_f1"]
    assert {r["config"]: r["value"] for r in rows[1:]} == {c: o["f1"] for c, o in figures["ood"].items()}


def test_the_gain_is_the_difference_and_the_shifted_data_helps_out_of_distribution(baseline_run):
    _, result = baseline_run
    plain, mixed = result["regimes"]["FUNSD train"], result["regimes"]["+ shifted train"]
    for config, gain in result["gain"]["ood"].items():
        assert gain["value"] == pytest.approx(mixed["ood"][config]["f1"] - plain["ood"][config]["f1"])
        assert gain["ci"][0] <= gain["value"] <= gain["ci"][1]
    assert result["gain"]["ood_mean"] == pytest.approx(mixed["ood_mean_f1"] - plain["ood_mean_f1"])
    # Trained with shuffled layouts, the CRF reads shuffled test forms better (on all of FUNSD at segment boxes:
    # +9.0 points [5.9, 12.6]; merge's gain holds 0 there, -2.1 [-6.2, 2.2]; see examples/README.md), and the padded
    # forms, which the plain model reads at its ID level, cost it (-9.7)
    assert result["gain"]["ood"]["global_shuffle"]["ci"][0] > 0
    assert result["gain"]["ood"]["margin_padding"]["value"] < 0


def test_unknown_shift_of_the_family_is_refused(tmp_path):
    with pytest.raises(SystemExit, match="family 'text' has no shift merge"):
        _example().main(["--out", str(tmp_path), "--family", "text", "--configs", "merge"])
