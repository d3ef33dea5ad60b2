"""A build's cue figures (dogood.pipeline.cue_figures): measured on its own rows, in the card and the record."""

from __future__ import annotations

import json

from dogood.pipeline.build import build
from dogood.pipeline.card import render_card_from_build
from dogood.pipeline.cue_figures import config_cues, cue_rows
from dogood.pipeline.recipe import load_recipe
from dogood.shifts import make_shift


def test_config_cues_come_from_the_steps_declarations():
    assert config_cues([make_shift({"shift": "natural_background"})]) == ["background"]
    assert config_cues([make_shift({"shift": "capture"}), make_shift({"shift": "reocr"})]) == ["background"]
    assert config_cues([make_shift({"shift": "distort"})]) == []
    assert config_cues([make_shift({"shift": "char_deletion", "render": True})]) == ["word_style"]
    assert config_cues([make_shift({"shift": "char_deletion"})]) == []  # text only: no word redrawn
    assert config_cues([make_shift({"shift": "value_text_augment", "render": True}),
                        make_shift({"shift": "natural_background"})]) == ["background", "word_style"]
    assert config_cues([make_shift({"shift": "word_perturbation", "kind": "deletion", "render": True})]) == []
    assert config_cues([make_shift({"shift": "key_drop", "render": True})]) == []  # erases, draws nothing


def test_cue_rows_flag_a_cue():
    rows = cue_rows({"a": {"background": {"auroc": 0.71, "low": 0.65, "high": 0.77, "pages": 9, "samples": 500}},
                     "b": {"background": None}})
    assert rows[0]["auroc"] == "0.71 [0.65, 0.77]" and rows[0]["flag"] == "**⚠**" and rows[0]["pages"] == "9"
    assert rows[1]["auroc"] == "–" and rows[1]["flag"] == ""


def test_a_cue_may_give_a_bare_auroc():
    from dogood.pipeline.cue_figures import as_record

    record = as_record(0.73, 12)
    assert record == {"auroc": 0.73, "low": None, "high": None, "pages": 12, "samples": None}
    (row,) = cue_rows({"a": {"word_style": record}})
    assert row["auroc"] == "0.73" and row["flag"] == "**⚠**"


def test_a_build_measures_its_cues_on_its_own_pages(funsd_dir, tmp_path):
    out = tmp_path / "funsd-i"
    build(load_recipe("funsd-i"), out, source_path=funsd_dir, limit=5, configs=["natural", "distort"],
          progress=False)
    record = json.loads((out / "dogood_build.json").read_text())
    assert set(record["cues"]) == {"natural"}  # distort declares no cue test
    figure = record["cues"]["natural"]["background"]
    assert figure["pages"] == 5 and 0 <= figure["low"] <= figure["auroc"] <= figure["high"] <= 1
    card = (out / "README.md").read_text()
    assert "## Cues a model could learn instead of the shift" in card
    assert f"| `natural` | background | {figure['auroc']:.2f} [" in card and "| `distort` | background" not in card
    again = render_card_from_build(out)
    section = card[card.index("## Cues"):card.index("## Configs")]
    assert section in again  # the card re-rendered from the record says the same


def test_a_build_of_a_redrawing_config_measures_the_redrawn_word_cue(funsd_dir, tmp_path):
    recipe = tmp_path / "redrawn.yaml"
    recipe.write_text("name: redrawn\nversion: 1.0.0\nsource: {kind: funsd}\nsplits: [test]\nseed: 0\nconfigs:\n"
                      "  char_deletion: [{shift: char_deletion, fraction: 0.2, render: true}]\n"
                      "  text_only: [{shift: char_deletion, fraction: 0.2}]\n", encoding="utf-8")
    out = tmp_path / "out"
    build(load_recipe(str(recipe)), out, source_path=funsd_dir, limit=5, progress=False)
    record = json.loads((out / "dogood_build.json").read_text())
    assert set(record["cues"]) == {"char_deletion"}  # text only redraws nothing
    figure = record["cues"]["char_deletion"]["word_style"]
    assert figure["pages"] == 5 and figure["samples"] >= 2 * 20  # redrawn words and as many matched printed ones
    assert 0 <= figure["low"] <= figure["auroc"] <= figure["high"] <= 1
    card = (out / "README.md").read_text()
    assert f"| `char_deletion` | word_style | {figure['auroc']:.2f} [" in card
    assert "redrawn vs untouched words" in card  # the legend says what the cue tells apart


def test_cue_samples_drawn_by_workers_give_the_whole_page_figures(funsd_dir, tmp_path):
    """The pages' samples drawn in worker tasks (a few pages each, any number of processes) give the figures the
    cue's own function gives on the same pages, and each task is a task of the build's timeline."""
    import pyarrow.parquet as pq

    from dogood.core.schema import row_to_document
    from dogood.measures.cues import CUES, CueFigure
    from dogood.pipeline import timeline
    from dogood.pipeline.cue_figures import PAGES_PER_TASK
    from dogood.sources import open_source

    recipe = tmp_path / "cues.yaml"
    recipe.write_text("name: cues\nversion: 1.0.0\nsource: {kind: funsd}\nsplits: [test]\nseed: 0\nconfigs:\n"
                      "  natural: [{shift: natural_background}]\n"
                      "  redrawn: [{shift: char_deletion, fraction: 0.2, render: true}]\n", encoding="utf-8")
    records = {}
    for n in (1, 2):
        out = tmp_path / f"out{n}"
        with timeline.recording() as spans:
            build(load_recipe(str(recipe)), out, source_path=funsd_dir, limit=7, num_proc=n, progress=False)
        records[n] = json.loads((out / "dogood_build.json").read_text())["cues"]
        cue_tasks = [s for s in spans if s["what"] == timeline.TASK and s.get("step") == "cues"]
        assert len(cue_tasks) == 2 * -(-7 // PAGES_PER_TASK)  # two configs, 7 pages each, a few a task
    assert records[1] == records[2]
    source = open_source({"kind": "funsd"}, "test", funsd_dir)
    for config, name in (("natural", "background"), ("redrawn", "word_style")):
        rows = pq.read_table(tmp_path / "out1" / "data" / config).to_pylist()
        pairs = [(source.load(r["id"]), row_to_document(r, "funsd")) for r in rows]
        whole = CUES[name].measure(pairs)
        assert isinstance(whole, CueFigure)
        assert records[1][config][name] == whole.as_dict()
