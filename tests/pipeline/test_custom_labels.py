"""FUNSD-layout folders with other entity labels (CORD-, SROIE-, XFUND-like): the label list comes from the data
or the recipe, names ``ner_tags``, reaches the card, round-trips through the ``hf`` source and scores in eval;
shifts that need FUNSD's labels refuse such data at plan time; a test-only folder builds."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import datasets
import pytest

from dogood import cli
from dogood.core.errors import RecipeError
from dogood.core.schema import FUNSD_NER_TAGS
from dogood.pipeline.build import build
from dogood.pipeline.recipe import parse_recipe

RENAME = {"question": "menu.nm", "answer": "menu.price", "header": "total", "other": "other"}
CORD_TAGS = ["O", "B-MENU.NM", "I-MENU.NM", "B-MENU.PRICE", "I-MENU.PRICE", "B-TOTAL", "I-TOTAL"]  # sorted labels


def _copy(funsd_dir: Path, root: Path, split_dir: str, n: int, rename: dict[str, str] | None) -> list[str]:
    src = funsd_dir / split_dir
    ids = sorted(p.stem for p in (src / "annotations").glob("*.json"))[:n]
    for sub in ("annotations", "images"):
        (root / split_dir / sub).mkdir(parents=True)
    for doc_id in ids:
        data = json.loads((src / "annotations" / f"{doc_id}.json").read_text())
        for entity in data["form"]:
            entity["label"] = (rename or {}).get(entity["label"], entity["label"])
        (root / split_dir / "annotations" / f"{doc_id}.json").write_text(json.dumps(data))
        shutil.copy(src / "images" / f"{doc_id}.png", root / split_dir / "images" / f"{doc_id}.png")
    return ids


@pytest.fixture()
def folders(funsd_dir, tmp_path):
    """The same 4 FUNSD test forms as FUNSD and with CORD-like labels; the CORD-like folder is test-only."""
    funsd, cord = tmp_path / "funsd", tmp_path / "cord"
    ids = _copy(funsd_dir, funsd, "testing_data", 4, None)
    _copy(funsd_dir, funsd, "training_data", 1, None)
    _copy(funsd_dir, cord, "testing_data", 4, RENAME)
    return funsd, cord, ids


def recipe(**extra):
    return parse_recipe({"name": "cordish", "version": "1.0.0", "source": {"kind": "funsd"},
                         "configs": {"plain": [], "merged": [{"shift": "merge", "level": "entity"}]}, **extra})


def tag_names(ds) -> list[str]:
    return ds.features["ner_tags"].feature.names


def test_labels_come_from_the_data_and_name_the_tags(folders, tmp_path):
    funsd, cord, ids = folders
    build(recipe(), tmp_path / "f", source_path=funsd, progress=False)
    build(recipe(), tmp_path / "c", source_path=cord, progress=False)
    for config in ("plain", "merged"):
        f = datasets.load_dataset(str(tmp_path / "f"), config, split="test")
        c = datasets.load_dataset(str(tmp_path / "c"), config, split="test")
        assert tag_names(f) == list(FUNSD_NER_TAGS) and tag_names(c) == CORD_TAGS
        assert c["id"] == f["id"] == ids and c["tokens"] == f["tokens"] and c["bboxes"] == f["bboxes"]
        renamed = {t: t if t == "O" else t[:2] + RENAME[t[2:].lower()].upper() for t in FUNSD_NER_TAGS}
        for frow, crow in zip(f, c):  # every token keeps its tag, under the renamed label
            assert [CORD_TAGS[t] for t in crow["ner_tags"]] == [renamed[FUNSD_NER_TAGS[t]] for t in frow["ner_tags"]]
    card = (tmp_path / "c" / "README.md").read_text()
    assert ("IOB over the entity labels `menu.nm`, `menu.price`, `other`, `total` (`other` is `O`): `O`, `B-MENU.NM`"
            in card)
    assert "the Hub\nFUNSD order" in (tmp_path / "f" / "README.md").read_text()
    assert json.loads((tmp_path / "c" / "dogood_build.json").read_text())["labels"] == [
        "menu.nm", "menu.price", "other", "total"]
    assert "labels" not in json.loads((tmp_path / "f" / "dogood_build.json").read_text())


def test_a_recipe_declares_the_order_and_must_cover_the_data(folders, tmp_path):
    _, cord, _ = folders
    build(recipe(labels=["total", "menu.price", "menu.nm", "other"]), tmp_path / "c", source_path=cord, progress=False)
    c = datasets.load_dataset(str(tmp_path / "c"), "plain", split="test")
    assert tag_names(c) == ["O", "B-TOTAL", "I-TOTAL", "B-MENU.PRICE", "I-MENU.PRICE", "B-MENU.NM", "I-MENU.NM"]
    with pytest.raises(RecipeError, match=r"the 'test' split has entity label\(s\) total, which the recipe's labels "
                                          r"\(menu.nm, menu.price, other\) lack"):
        build(recipe(labels=["menu.nm", "menu.price", "other"]), tmp_path / "d", source_path=cord, progress=False)
    assert not (tmp_path / "d").exists()


def test_shifts_that_need_funsd_labels_say_so_before_anything_runs(folders, tmp_path):
    _, cord, _ = folders
    r = parse_recipe({"name": "kd", "version": "1.0.0", "source": {"kind": "funsd"},
                      "configs": {"drop": [{"shift": "key_drop"}], "zones": [{"shift": "neighbor_shuffle"}]}})
    with pytest.raises(RecipeError) as err:
        build(r, tmp_path / "kd", source_path=cord, progress=False)
    assert str(err.value) == ("recipe kd, config 'drop': shift 'key_drop' needs entity label(s) question, which this "
                              "data lacks (its labels: menu.nm, menu.price, other, total)")
    assert not list(tmp_path.glob("*kd*"))
    fixed = r.with_overrides(["drop.labels=[menu.nm]", "zones.value_labels=[menu.price]"])
    build(fixed, tmp_path / "kd", source_path=cord, progress=False)
    rows = datasets.load_dataset(str(tmp_path / "kd"), "drop", split="test")
    assert tag_names(rows) == CORD_TAGS and len(rows) == 4


def test_a_test_only_folder_builds(folders, tmp_path, capsys):
    _, cord, ids = folders
    assert not (cord / "training_data").exists()
    out = tmp_path / "out"
    assert cli.main(["build", "funsd", "--source", str(cord), "--out", str(out), "--quiet"]) == 0
    assert datasets.load_dataset(str(out), "original", split="test")["id"] == ids
    r = parse_recipe({"name": "tr", "version": "1.0.0", "source": {"kind": "funsd"}, "splits": ["train"],
                      "configs": {"plain": []}})
    capsys.readouterr()
    with pytest.raises(Exception) as err:
        build(r, tmp_path / "train", source_path=cord, progress=False)
    assert f"{cord} has no training_data/annotations folder, so it has no 'train' split" in str(err.value)


def test_hf_source_round_trips_other_labels(folders, tmp_path):
    from dogood.sources.hf_dataset import HFDatasetSource

    _, cord, ids = folders
    build(recipe(), tmp_path / "c", source_path=cord, progress=False)
    built = HFDatasetSource(name=str(tmp_path / "c"), config="plain", split="test")
    assert built.entity_labels() == ("menu.nm", "menu.price", "total", "other")
    assert {e.label for e in built.load(ids[0]).entities} <= set(RENAME.values())
    again = parse_recipe({"name": "again", "version": "1.0.0", "source": {"kind": "hf", "config": "plain"},
                          "configs": {"plain": []}})
    build(again, tmp_path / "again", source_path=tmp_path / "c", progress=False)
    a = datasets.load_dataset(str(tmp_path / "again"), "plain", split="test")
    c = datasets.load_dataset(str(tmp_path / "c"), "plain", split="test")
    assert a["ner_tags"] == c["ner_tags"] and a["tokens"] == c["tokens"]
    assert sorted(tag_names(a)) == sorted(CORD_TAGS)

    # a plain Hub-style dataset (no dogood record): the tags' names give the entities' labels
    plain = c.remove_columns("dogood")
    source = HFDatasetSource(name="plain", dataset=plain, split="test")
    doc = source.load(ids[0])
    row = c[0]
    first = next(k for k, t in enumerate(row["ner_tags"]) if CORD_TAGS[t].startswith("B-"))
    owner = next(e for e in doc.entities if first in e.word_ids)
    assert owner.label == CORD_TAGS[row["ner_tags"][first]][2:].lower()


def test_eval_scores_with_the_datasets_labels(folders, tmp_path, gold_scorer):
    from dogood.eval import evaluate

    _, cord, _ = folders
    build(recipe(), tmp_path / "c", source_path=cord, progress=False)
    report = evaluate(gold_scorer, f"{tmp_path / 'c'}:plain", [f"{tmp_path / 'c'}:merged"], resamples=0)
    rows = report.rows()
    assert [r["f1"] for r in rows] == [100.0, 100.0]
    assert set(rows[0]["per_label"]) == {"MENU.NM", "MENU.PRICE", "TOTAL"}
    report.write(tmp_path / "report")
    assert "| MENU.NM | MENU.PRICE | TOTAL |" in (tmp_path / "report" / "report.md").read_text()
