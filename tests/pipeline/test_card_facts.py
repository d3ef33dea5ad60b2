"""Every fact a built card states is checked against the build's own record (dogood_build.json) and its rows."""

from __future__ import annotations

import json
import re
import shutil

import pytest
import yaml
from datasets import load_dataset

from dogood.pipeline.build import build
from dogood.pipeline.recipe import load_recipe
from dogood.shifts import SHIFTS


@pytest.fixture(scope="module")
def funsd_i(funsd_dir, tmp_path_factory):
    """FUNSD-I, two configs (kept words and re-OCR), three documents, seed 5: a partial build with another seed."""
    out = tmp_path_factory.mktemp("facts") / "funsd-i"
    build(load_recipe("funsd-i"), out, source_path=funsd_dir, seed=5, limit=3, configs=["natural", "distort_reocr"],
          progress=False)
    return out


def _card(folder):
    text = (folder / "README.md").read_text(encoding="utf-8")
    header = yaml.safe_load(text.split("---")[1])
    return text, header, json.loads((folder / "dogood_build.json").read_text())


def test_seed_and_partial_build_are_the_builds(funsd_i):
    text, _, record = _card(funsd_i)
    assert record["seed"] == 5 and record["limit"] == 3
    assert "seed 5 (the recipe's is 0; this build was run with `--seed 5`)" in text
    assert "**Partial build:** only the first 3 documents of each split" in text


def test_the_statistics_table_is_the_records_and_shares_stay_within_100_percent(funsd_i):
    text, _, record = _card(funsd_i)
    for config in ("natural", "distort_reocr"):
        s = record["stats"][config]["test"]
        ds = load_dataset(str(funsd_i), config, split="test")
        assert s["documents"] == len(ds) == 3
        assert s["words"] == sum(len(r["dogood"]["words"]) for r in ds)
        assert s["tokens"] == sum(len(r["tokens"]) for r in ds)
        assert 0 <= s["text_changed"] <= s["words"] and 0 <= s["box_changed"] <= s["words"]
        row = (f"| test | {s['documents']} | {s['source_words']} | {s['words']} | {s['tokens']} | {s['box_changed']} "
               f"({100 * s['box_changed'] / s['words']:.1f}%) | {s['text_changed']} "
               f"({100 * s['text_changed'] / s['words']:.1f}%) | {s['words_removed']} |")
        assert row in text
    reocr = record["stats"]["distort_reocr"]["test"]
    assert reocr["words"] < reocr["source_words"] and reocr["words_removed"] > 0  # Tesseract reads fewer words
    percents = [float(x) for x in re.findall(r"\((\d+\.\d)%\)", text)]
    assert percents and max(percents) <= 100.0


def test_words_line_says_where_the_words_come_from(funsd_i):
    text, _, _ = _card(funsd_i)
    natural = text.split("### `natural`")[1].split("### ")[0]
    reocr = text.split("### `distort_reocr`")[1].split("## ")[0]
    assert "Words: from the source; no OCR is run on the shifted page." in natural
    assert "Words: re-read from the shifted page by `reocr` (see its note)." in reocr
    assert "re-read by Tesseract" in reocr  # reocr's note names the OCR engine
    assert "no OCR is run" not in reocr and "Unless" not in text


def test_parameters_are_the_full_resolved_ones_in_one_order(funsd_i):
    from dogood.pipeline.card import render_card_from_build

    text, _, record = _card(funsd_i)
    params = record["chain_params"]["natural"][0]["params"]
    line = "1. `natural_background`: " + ", ".join(f"`{k}={v}`" for k, v in sorted(params.items()))
    assert line in text
    assert line in render_card_from_build(funsd_i, repo_id="me/funsd-i")  # the push card says the same


def test_every_count_shown_is_explained(funsd_i):
    text, _, record = _card(funsd_i)
    for config in record["stats"]:
        s = record["stats"][config]["test"]
        for name, done in s["shifts"].items():
            glossary = {**SHIFTS[name].counts_help, **SHIFTS[name].tallies_help}
            for count in list(done["counts"]) + list(done["tallies"]):
                assert count in glossary, (name, count)
                assert f"- `{name}: {count}`: {glossary[count]}." in text


def test_hub_metadata(funsd_i):
    _, header, record = _card(funsd_i)
    assert header["license"] == "other" and header["license_name"] and header["license_link"].startswith("https://")
    assert header["language"] == ["en"] and header["size_categories"] == ["n<1K"]
    assert header["source_datasets"] == ["extended|other-funsd", "extended|other-coco-2017"]
    assert [c.get("default", False) for c in header["configs"]] == [True, False]
    assert load_dataset(str(funsd_i), split="test").num_rows == 3  # no config name needed


def test_photo_credits_match_the_photos_used(funsd_i):
    text, _, record = _card(funsd_i)
    used = record["stats"]["natural"]["test"]["shifts"]["natural_background"]["tallies"]["photo"]
    credits = record["credits"]
    assert sorted(str(c["id"]) for c in credits) == sorted(used)
    attribution = (funsd_i / "ATTRIBUTION.md").read_text()
    for c in credits:
        assert c["url"] in attribution and c["url"] in text and c["license_url"] in attribution
    share_alike = [c for c in credits if "ShareAlike" in c["license"]]
    assert all(c["share_alike"] for c in share_alike)
    if share_alike:
        assert f"ShareAlike: {len(share_alike)} photo(s) carry a ShareAlike licence" in text


def test_the_load_example_names_the_folder(funsd_i, tmp_path):
    text, _, _ = _card(funsd_i)
    assert "PATH_OR_REPO" not in text
    assert f'load_dataset("{funsd_i.name}", "natural", split="test")  # this folder' in text
    assert str(funsd_i.parent) not in text  # no absolute local path


def test_rvl_cdip_cards_speak_of_no_entities(data_dir, tmp_path):
    if shutil.which("tesseract") is None:
        pytest.skip("tesseract-ocr is not installed")
    out = tmp_path / "rvl-cdip-i1"
    build(load_recipe("rvl-cdip-i1"), out, source_path=data_dir / "rvl_cdip", configs=["natural"], progress=False)
    text = (out / "README.md").read_text()
    body = text.split("\n---\n", 1)[1].split("## Columns")[0]  # after the YAML header (features name `entities`)
    assert "entit" not in body.lower()
    assert "decodes to grayscale, mode L" in text


def test_push_results_list_only_published_configs():
    from dogood.pipeline.card import _result_table

    report = {"model": "m", "metric": "f1", "datasets": [
        {"dataset": "funsd/original", "role": "id", "split": "test", "value": 0.7},
        {"dataset": "funsd-l/merge", "role": "ood", "split": "test", "value": 0.6, "drop": 0.1},
        {"dataset": "funsd-l/move", "role": "ood", "split": "test", "value": 0.5, "drop": 0.2}]}
    rows = _result_table(report, {"merge"})["rows"]
    assert [r["dataset"] for r in rows] == ["funsd/original", "funsd-l/merge"]


def test_official_funsd_is_named_only_when_the_files_are_the_official_ones(funsd_dir, tmp_path):
    from dogood.sources.funsd import FUNSD_SHA256, FunsdSource

    funsd_copy = tmp_path / "copy" / "dataset"
    shutil.copytree(funsd_dir, funsd_copy)
    official = FunsdSource(root=funsd_dir, split="test").describe()
    assert official["name"] == "FUNSD" and official["sha256"] == FUNSD_SHA256
    copy = FunsdSource(root=funsd_copy, split="test")
    assert copy.describe()["name"] == "FUNSD"  # a byte-identical copy is the official data
    first = copy.annotation_path(copy.ids()[0])
    first.write_text(first.read_text().replace('"question"', '"answer"', 1))
    changed = copy.describe()
    assert "differ from the official FUNSD release" in changed["name"]
    assert "sha256" not in changed and "url" not in changed and changed["content_sha256"] != official["content_sha256"]
    out = tmp_path / "own"
    build(load_recipe("funsd"), out, source_path=funsd_copy, limit=1, progress=False)
    text = (out / "README.md").read_text()
    assert FUNSD_SHA256 not in text and "differ from the official FUNSD release" in text


@pytest.mark.parametrize("name", sorted(set(SHIFTS) - {"bert_attack"}))
def test_every_count_a_shift_reports_has_a_meaning(name, funsd_test, gold_scorer):
    """The card explains each count by the shift's `counts_help`; a count without one would be unexplained."""
    from dogood.shifts import make_shift

    spec = {"shift": name}
    if name in ("char_perturbation", "word_perturbation"):
        spec["kind"] = "deletion"
    if name == "move":
        spec.update(threshold=0.0, cache=False)
    shift = make_shift(spec)
    if name == "move":
        shift._model = gold_scorer
    seen = set()
    for doc_id in funsd_test.ids()[:3]:
        doc = funsd_test.load(doc_id)
        record = shift(doc, 1).provenance[-1]
        counts, tallies = record.counts_from_json(record.counts_json())  # as the provenance stores them
        seen |= set(counts) | set(tallies)
    missing = sorted(seen - set(SHIFTS[name].counts_help) - set(SHIFTS[name].tallies_help))
    assert not missing, f"{name}: counts without a meaning: {missing}"
