"""Honest progress: one stderr line per one-time step (with its time), silent with progress off; per-command
interrupt messages; an eval report written all at once."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from dogood import cli
from dogood.core.progress import one_time_step, silenced
from dogood.pipeline.build import build
from dogood.pipeline.recipe import load_recipe

needs_tesseract = pytest.mark.skipif(shutil.which("tesseract") is None, reason="the tesseract binary is not installed")


def test_a_step_says_what_where_and_how_long(capsys):
    with one_time_step("making a thing", cached_in="/somewhere"):
        pass
    err = capsys.readouterr().err
    assert re.fullmatch(r"dogood: making a thing \(once; cached in /somewhere\) \.\.\. done in \d+\.\d s\n", err)
    with pytest.raises(ValueError), one_time_step("failing"):
        raise ValueError("no")
    assert re.fullmatch(r"dogood: failing \.\.\. failed after \d+\.\d s\n", capsys.readouterr().err)
    with silenced(), one_time_step("quiet"):
        pass
    assert capsys.readouterr().err == ""


def test_counter_fitted_vectors_are_announced_once(data_dir, tmp_path, monkeypatch, capsys):
    from dogood.language.embeddings import counter_fitted_glove

    monkeypatch.setenv("DOGOOD_CACHE", str(tmp_path / "cache"))
    vectors = counter_fitted_glove(1000, neighbours=5)
    err = capsys.readouterr().err
    folder = tmp_path / "cache" / "embeddings"
    assert re.fullmatch(rf"dogood: building counter-fitted word vectors from GloVe 50-d and the synonym/antonym "
                        rf"lists in {re.escape(str(data_dir))} \(once; cached in {re.escape(str(folder))}\) \.\.\. "
                        rf"done in \d+\.\d s\n", err)
    assert vectors.path.parent == folder
    counter_fitted_glove(1000, neighbours=5)  # cached: nothing to say
    assert capsys.readouterr().err == ""


@needs_tesseract
def test_a_build_that_ocrs_says_how_many_pages_and_how_long(data_dir, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DOGOOD_CACHE", str(tmp_path / "cache"))
    recipe = load_recipe("rvl-cdip-t")
    configs = ["char_deletion"]
    build(recipe, tmp_path / "quiet", configs=configs, progress=False)
    assert "dogood:" not in capsys.readouterr().err  # progress off: no line
    shutil.rmtree(tmp_path / "cache" / "ocr")

    build(recipe, tmp_path / "out", configs=configs, progress=True)
    err = capsys.readouterr().err
    ocr = tmp_path / "cache" / "ocr"
    pages = len(list(ocr.rglob("*.json")))
    assert pages == 3  # the shared RVL-CDIP sample's pages, each OCR'd once
    assert f"dogood: OCR: {pages} of {pages} pages are not in the OCR cache; Tesseract reads them during the build " \
           f"(once; cached in {ocr})\n" in err
    assert re.search(rf"^dogood: OCR: Tesseract read {pages} page\(s\) not yet in the cache in \d+\.\d s "
                     rf"\(once; cached in {re.escape(str(ocr))}; engine: (tesserocr|pytesseract \(.+\))\)$", err, re.M)
    assert err.count("dogood: OCR") == 2  # one line before, one after: never one per page

    build(recipe, tmp_path / "again", configs=configs, progress=True)
    assert "OCR" not in capsys.readouterr().err  # all cached


def test_interrupting_eval_does_not_speak_of_resuming_a_build(monkeypatch, tmp_path, capsys):
    import dogood.eval

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(dogood.eval, "resolve_datasets", interrupted)
    assert cli.main(["eval", "--id", "x", "--ood", "y", "--out", str(tmp_path / "report")]) == 130
    err = capsys.readouterr().err
    assert err == "dogood: interrupted; no report was written (an earlier report in the --out folder is left as it " \
                  "was)\n"
    from dogood.cli import build_command

    monkeypatch.setattr(build_command, "cmd_build", interrupted)
    assert cli.main(["build", "funsd"]) == 130
    assert "finished shards are kept" in capsys.readouterr().err


def test_an_interrupted_report_write_leaves_the_old_report(tmp_path):
    from dogood.eval import EvalReport

    def fake(png):
        return SimpleNamespace(to_markdown=lambda: "# new\n", to_csv=lambda: "new\n",
                               to_json=lambda: '{"model": "m", "task": "token", "metric": "f1", "datasets": []}\n',
                               plot=png, severity_plots=lambda: {})

    def write_png(path):
        Path(path).write_bytes(b"png")

    EvalReport.write(fake(write_png), tmp_path)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert sorted(before) == ["report.csv", "report.json", "report.md", "report.png"]

    def interrupted(path):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        EvalReport.write(SimpleNamespace(to_markdown=lambda: "# newer\n", to_csv=lambda: "x\n",
                                         to_json=lambda: "[]\n", plot=interrupted, severity_plots=lambda: {}),
                         tmp_path)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before  # the old report, no temporary file


def test_the_baseline_trained_for_move_is_announced(data_dir, tmp_path, monkeypatch, capsys):
    import dogood.models.baseline as baseline

    monkeypatch.setenv("DOGOOD_CACHE", str(tmp_path / "cache"))
    real = baseline.train_baseline
    monkeypatch.setattr(baseline, "train_baseline", lambda docs, **kw: real(list(docs)[:3], max_iterations=5, **kw))
    model = baseline.default_baseline()
    path = tmp_path / "cache" / "models" / "funsd-baseline.dogood-model"
    assert path.is_file() and model.labels
    err = capsys.readouterr().err
    assert re.fullmatch(rf"dogood: no baseline at {re.escape(str(path))}: training it on the 149 FUNSD train forms "
                        rf"\(once; cached in {re.escape(str(path.parent))}\) \.\.\. done in \d+\.\d s\n", err)
    baseline.default_baseline()
    assert capsys.readouterr().err == ""
