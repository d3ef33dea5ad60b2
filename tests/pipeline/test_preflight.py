"""``dogood plan`` and ``dogood build`` agree on what can run (issue 36): a config build refuses before running is
``cannot`` in the plan, for the reason build gives, from the same checks.

Before, ``plan`` said "ready" for configs ``build`` refused (a merge of word boxes under segment boxes, a shift
needing entity labels the data lacks, recipe labels the data contradicts).
"""

from __future__ import annotations

import pytest

from dogood.cli import main
from dogood.core.errors import DogoodError
from dogood.pipeline.build import build
from dogood.pipeline.preflight import CANNOT, READY, plan_recipe
from dogood.pipeline.recipe import parse_recipe


def recipe(configs, **extra):
    return parse_recipe({"name": "agree", "version": "1.0.0", "source": {"kind": "funsd"}, "splits": ["test"],
                         "configs": configs, **extra})


def build_error(rec, source, tmp_path, configs) -> str:
    with pytest.raises(DogoodError) as err:
        build(rec, tmp_path / "out", source_path=source, progress=False, limit=1, configs=configs)
    assert not (tmp_path / "out").exists()
    return str(err.value)


def test_a_config_build_refuses_is_cannot_in_the_plan_for_the_same_reason(copy_funsd_forms, tmp_path):
    source = copy_funsd_forms(tmp_path / "funsd", n=2)
    rec = recipe({"plain": [], "words": [{"shift": "merge", "level": "word"}]})
    plan = {c.config: c for c in plan_recipe(rec, source_path=source).configs}
    assert plan["plain"].verdict == READY
    assert plan["words"].verdict == CANNOT
    refused = build_error(rec, source, tmp_path, ["words"])
    assert plan["words"].reasons == [refused]
    build(rec, tmp_path / "ok", source_path=source, progress=False, limit=1, configs=["plain"])


def test_a_shift_needing_labels_the_data_lacks_is_cannot(copy_funsd_forms, tmp_path):
    source = copy_funsd_forms(tmp_path / "funsd", n=2)
    for ann in (source / "testing_data" / "annotations").glob("*.json"):  # labels of its own: key, value
        ann.write_text(ann.read_text().replace('"question"', '"key"').replace('"answer"', '"value"'))
    rec = recipe({"plain": [], "drop": [{"shift": "key_drop"}]})  # drops 'question' entities by default
    plan = {c.config: c for c in plan_recipe(rec, source_path=source).configs}
    assert plan["plain"].verdict == READY and plan["drop"].verdict == CANNOT
    assert plan["drop"].reasons == [build_error(rec, source, tmp_path, ["drop"])]
    assert "needs entity label(s) question" in plan["drop"].reasons[0]


def test_recipe_labels_the_data_contradicts_make_every_config_cannot(copy_funsd_forms, tmp_path, capsys):
    source = copy_funsd_forms(tmp_path / "funsd", n=2)
    rec = recipe({"plain": []}, labels=["header", "other"])
    (plan,) = plan_recipe(rec, source_path=source).configs
    assert plan.verdict == CANNOT and plan.reasons == [build_error(rec, source, tmp_path, None)]
    path = tmp_path / "r.yaml"
    path.write_text("name: agree\nversion: 1.0.0\nsource: {kind: funsd}\nlabels: [header, other]\n"
                    "configs:\n  plain: []\n")
    assert main(["plan", str(path), "--source", str(source)]) == 0
    out = capsys.readouterr().out
    assert "plain" in out and "cannot" in out and "0 of 1 configs ready" in out


def test_plan_of_the_synthetic_funsd_l_pages_says_funsd_is_downloaded_first_without_downloading(tmp_path, monkeypatch):
    from dogood.pipeline.preflight import NETWORK
    from dogood.pipeline.recipe import load_recipe

    monkeypatch.setenv("DOGOOD_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("DOGOOD_CACHE", str(tmp_path / "cache"))
    plan = plan_recipe(load_recipe("funsd-l-mix"))
    assert [c.verdict for c in plan.configs] == [NETWORK]
    assert "FUNSD is downloaded first" in " ".join(plan.configs[0].reasons)
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").rglob("*.zip"))
