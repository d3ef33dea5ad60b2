"""``copies: k`` and ``--split``: k shifted rows per document for training, each copy with its own draws."""

from __future__ import annotations

import json

import pytest
from datasets import load_dataset

from dogood.cli import main
from dogood.core.errors import RecipeError
from dogood.core.seeds import derive_seed, step_seed
from dogood.eval import EvalError, evaluate, resolve_datasets
from dogood.pipeline.build import build
from dogood.pipeline.recipe import load_recipe, parse_recipe

CONFIG = "char_deletion"  # deletes one inner character of 10% of the words: every draw shows in the tokens


@pytest.fixture(scope="module")
def builds(funsd_dir, tmp_path_factory):
    """FUNSD train, first 4 forms, char_deletion: one copy (default), two copies, two copies on 2 workers."""
    root = tmp_path_factory.mktemp("copies")
    recipe = load_recipe("funsd-t")
    kw = dict(source_path=funsd_dir, limit=4, configs=[CONFIG], splits=["train"], progress=False)
    build(recipe, root / "one", **kw)
    build(recipe, root / "two", copies=2, **kw)
    build(recipe, root / "workers" / "two", copies=2, num_proc=2, **kw)  # same name: the card names the folder
    return root


def _rows(folder, split="train"):
    return load_dataset(str(folder), CONFIG, split=split)


def test_two_copies_give_two_rows_per_document_with_traceable_unique_ids(builds):
    one, two = _rows(builds / "one"), _rows(builds / "two")
    assert len(one) == 4 and len(two) == 8
    assert two["id"] == [f"{d}#{j}" for d in one["id"] for j in (0, 1)]
    assert len(set(two["id"])) == len(two)
    record = json.loads((builds / "two" / "dogood_build.json").read_text())
    assert record["copies"] == 2 and record["splits"][CONFIG]["train"]["num_examples"] == 8
    assert record["stats"][CONFIG]["train"]["documents"] == 8  # the statistics count every copy
    assert "**Copies:** 2 rows per source document" in (builds / "two" / "README.md").read_text()


def test_copies_draw_differently_and_copy_0_is_the_one_copy_row(builds):
    one, two = _rows(builds / "one"), _rows(builds / "two")
    differ = 0
    for k, row in enumerate(one):
        first, second = two[2 * k], two[2 * k + 1]
        for column in ("tokens", "bboxes", "ner_tags", "image"):
            assert first[column] == row[column], column  # copy 0 = the k=1 row, id aside
        assert first["dogood"]["provenance"] == row["dogood"]["provenance"]
        seeds = [p["seed"] for p in (first["dogood"]["provenance"][0], second["dogood"]["provenance"][0])]
        assert seeds[0] != seeds[1]
        assert second["ner_tags"] == row["ner_tags"]  # labels kept by the text shift in every copy
        differ += second["tokens"] != first["tokens"]
    assert differ == 4  # every form has words long enough to lose a character, at other places per copy


def test_copies_are_byte_identical_for_any_number_of_workers(builds):
    files = sorted(p.relative_to(builds / "two") for p in (builds / "two").rglob("*") if p.is_file())
    assert files
    for rel in files:
        assert (builds / "two" / rel).read_bytes() == (builds / "workers" / "two" / rel).read_bytes(), rel


def test_one_copy_keeps_the_ids_seeds_and_record_of_a_build_without_copies(builds):
    one = _rows(builds / "one")
    assert all("#" not in i for i in one["id"])
    record = json.loads((builds / "one" / "dogood_build.json").read_text())
    assert "copies" not in record
    assert "**Copies:**" not in (builds / "one" / "README.md").read_text()
    step = one[0]["dogood"]["provenance"][0]
    key = json.dumps({"shift": step["shift"], "params": json.loads(step["params"])}, sort_keys=True, default=str)
    assert step["seed"] == derive_seed("step", 0, one[0]["id"], 0, key)  # the formula before copies existed
    assert step_seed(0, "a", 0, key) == step_seed(0, "a", 0, key, 0) != step_seed(0, "a", 0, key, 1)


def test_recipe_copies_key_and_its_errors():
    base = {"name": "x", "version": "1.0.0", "source": {"kind": "funsd"}, "configs": {"plain": []}}
    assert parse_recipe(base).copies == 1
    assert parse_recipe({**base, "copies": 3}).copies == 3
    for bad in (0, -1, 1.5, True, "2", 10_000):
        with pytest.raises(RecipeError, match="copies must be a whole number"):
            parse_recipe({**base, "copies": bad})
    recipe = parse_recipe(base).with_build_options(splits=["train,test", "train"], copies=2)
    assert recipe.splits == ["train", "test"] and recipe.copies == 2


def test_cli_split_and_copies(funsd_dir, tmp_path, capsys):
    out = tmp_path / "train"
    code = main(["build", "funsd-t", "--config", CONFIG, "--split", "train", "--copies", "3", "--limit", "2",
                 "--source", str(funsd_dir), "--out", str(out), "--quiet"])
    assert code == 0
    assert "2 train documents x 3 copies x 1 config(s)" in capsys.readouterr().out
    assert len(_rows(out)) == 6
    with pytest.raises(SystemExit) as exc:
        main(["build", "funsd-t", "--copies", "0"])
    assert exc.value.code == 2
    assert "argument --copies: must be at least 1" in capsys.readouterr().err
    code = main(["build", "funsd", "--split", "val", "--source", str(funsd_dir), "--out", str(tmp_path / "v"),
                 "--quiet"])
    assert code == 1
    assert capsys.readouterr().err.strip() == "dogood: error: FUNSD has splits ['test', 'train'], not 'val'"
    assert not (tmp_path / "v").exists()


def test_eval_refuses_a_set_built_with_copies(builds, funsd_dir, gold_scorer):
    (ood,) = resolve_datasets(str(builds / "two"), split="train")
    (plain,) = resolve_datasets(str(builds / "one"), split="train")
    with pytest.raises(EvalError, match="built with 2 copies of each document"):
        evaluate(gold_scorer, plain, [ood], resamples=0)
    # the same rows without the build record (as from the Hub) are still recognised by their ids
    ood.location = ""
    with pytest.raises(EvalError, match="several shifted copies of each document"):
        evaluate(gold_scorer, plain, [ood], resamples=0)
