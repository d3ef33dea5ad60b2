"""Severity levels 1-5: each family's measured effect grows with the level on real FUNSD forms, and a recipe's
``severities:`` key expands configs into ``<config>@<s>`` that build, load and leave other recipes as they were."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from dogood.core.errors import RecipeError
from dogood.core.seeds import step_seed
from dogood.measures.effects import effects, measured
from dogood.pipeline.recipe import load_recipe, parse_recipe
from dogood.pipeline.stats import add, word_changes
from dogood.shifts import SHIFTS, make_shift
from dogood.shifts.levels import LEVELS, base_name, expand_severities

BASE = {"name": "sev", "version": "1.0.0", "source": {"kind": "funsd"}, "seed": 0}


def test_every_declared_level_is_a_valid_setting_of_its_shift():
    swept = {name for name, cls in SHIFTS.items() if cls.severities}
    assert {"char_deletion", "char_perturbation", "bg_typo", "merge", "center_shift", "margin_padding", "distort",
            "natural_background", "move", "neighbor_shuffle", "non_neighbor_shuffle", "bg_drop", "neighbor_bg_drop",
            "key_drop", "box_stretch"} <= swept
    assert not swept & {"global_shuffle", "value_location_augment"}  # no knob of how much they change
    for name in swept:
        cls = SHIFTS[name]
        assert sorted(cls.severities) == list(LEVELS), name
        for values in cls.severities.values():
            assert set(values) <= set(cls.Params.model_fields), name
            make_shift({"shift": name, **values})


def _measure(step: dict, level: int, docs, scorer=None) -> dict:
    """The build's measured effects (:func:`dogood.measures.effects.measured`) of ``step`` at ``level`` over ``docs``, and
    the shift's own counts summed (``counts``); ``scorer`` stands in for ``move``'s model."""
    shift = make_shift({**step, **SHIFTS[step["shift"]].severities[level]})
    if scorer is not None:
        shift._model = scorer
    shift.prepare()
    total: dict = {"words": 0, "text_changed": 0, "effects": {}, "counts": {}}
    for doc in docs:
        shifted = shift(doc, step_seed(0, doc.id, 0, shift.step_key()))
        texts = word_changes(doc.words, shifted.words)[1]
        add(total, {"words": len(shifted.words), "text_changed": texts, "effects": effects(doc, shifted, texts),
                    "counts": dict(shifted.provenance[-1].counts)})
    return {**measured(total), "counts": total["counts"], "source_words": sum(len(d.words) for d in docs)}


@pytest.mark.parametrize("step, key", [
    ({"shift": "char_deletion"}, "text_changed"),  # text: the share of words changed
    ({"shift": "merge", "level": "entity"}, "box_shift"),  # layout: merged boxes grow
    ({"shift": "distort"}, "box_shift"),  # image: the warp moves the words further
    ({"shift": "natural_background"}, "contrast_lost"),  # image: the photo under the ink, less guarded
])
def test_measured_effect_grows_with_severity_on_funsd_forms(funsd_test, step, key):
    docs = [funsd_test.load(i) for i in funsd_test.ids()[:5]]
    values = [_measure(step, level, docs)[key] for level in LEVELS]
    assert all(b > a for a, b in zip(values, values[1:])), values
    if key == "text_changed":  # the share asked for (of eligible words) is about the share of all words measured
        assert values == pytest.approx([0.05, 0.1, 0.2, 0.3, 0.5], rel=0.05)


@pytest.mark.parametrize("step, key", [
    ({"shift": "neighbor_shuffle"}, "words_reordered"),  # the zone grows
    ({"shift": "non_neighbor_shuffle"}, "words_reordered"),  # the zone shrinks
    ({"shift": "bg_drop"}, "words_dropped"),
    ({"shift": "neighbor_bg_drop"}, "words_dropped"),
    ({"shift": "key_drop"}, "words_dropped"),
])
def test_shuffles_and_drops_reorder_or_drop_more_words_with_each_level(funsd_test, step, key):
    """The share grows strictly with the level, equals what the shift says it did, and the words that stay keep
    their text and box (no text change or box move counted)."""
    docs = [funsd_test.load(i) for i in funsd_test.ids()[:8]]
    results = [_measure(step, level, docs) for level in LEVELS]
    values = [r[key] for r in results]
    assert all(b > a for a, b in zip(values, values[1:])), values
    for r in results:
        acted = r["counts"]["dropped" if step["shift"] == "key_drop" else "changed"]
        assert r[key] == acted / r["source_words"]
        assert r["text_changed"] == 0 and r["box_shift"] == 0
        assert r["words_reordered" if key == "words_dropped" else "words_dropped"] == 0


def test_effects_of_a_drop_and_a_reordering_count_the_words_and_no_move(funsd_test):
    """Only dropped: the words dropped, the rest not moved, the word statistics' text count taken as spurious;
    only reordered: the places another word took, nothing moved; dropped and moved: no box measure."""
    import numpy as np

    from dogood.language.edits import delete_words, reorder_words
    from dogood.shifts.layout._relayout import with_boxes

    doc = funsd_test.load(funsd_test.ids()[0])
    n = len(doc.words)
    dropped = delete_words(doc, [0, 5, 6])
    e = effects(doc, dropped, 2)
    assert (e["source_words"], e["dropped_words"], e["box_words"], e["box_shift"], e["spurious_texts"]) == \
        (n, 3, n - 3, 0, 2)
    order = list(range(n))
    order[1], order[4] = order[4], order[1]
    e = effects(doc, reorder_words(doc, order))
    assert (e["reordered_words"], e["box_words"], e["box_shift"], e["dropped_words"]) == (2, n, 0, 0)
    assert e["spurious_texts"] == int(doc.words[1].text != doc.words[4].text) * 2
    moved = with_boxes(dropped, dropped.boxes + np.array([1, 0, 1, 0]))
    e = effects(doc, moved, 2)
    assert (e["dropped_words"], e["box_words"], e["spurious_texts"]) == (3, 0, 0)


def test_move_moves_more_entities_and_further_with_each_level(funsd_test, gold_scorer):
    """``move`` (every entity strong under the gold scorer): the capped number of entities moved, and the mean box
    displacement, grow with the level."""
    docs = [funsd_test.load(i) for i in funsd_test.ids()[:3]]
    results = [_measure({"shift": "move"}, level, docs, gold_scorer) for level in LEVELS]
    assert [r["counts"]["moved"] for r in results] == [3 * SHIFTS["move"].severities[s]["max_moves"] for s in LEVELS]
    shifts = [r["box_shift"] for r in results]
    assert all(b > a for a, b in zip(shifts, shifts[1:])), shifts


def test_levels_leave_the_seeds_of_level_less_configs_as_they_were():
    """Declaring levels adds no parameter: a step's content, which its seed is hashed from, is what it was."""
    from dogood.pipeline.recipe import load_recipe

    keys = {config: load_recipe(recipe).chain(config)[0].step_key()
            for recipe, config in [("funsd-fa", "bg_drop"), ("funsd-fa", "key_drop"), ("funsd-l", "move")]}
    assert keys == {
        "bg_drop": '{"params": {"fraction": 0.1, "labels": ["other", "header"], "render": false}, "shift": "bg_drop"}',
        "key_drop": '{"params": {"fraction": 1.0, "labels": ["question"], "render": false}, "shift": "key_drop"}',
        "move": '{"params": {"cache": true, "ink_margin": 2, "ink_threshold": 128, "labels": null, "margin": 5, '
                '"max_moves": 3, "score_seed": 0, "scorer": "baseline", "shuffles": 10, "threshold": 1.0}, '
                '"shift": "move"}',
    }


def test_severities_expand_configs_in_order_with_the_levels_parameters():
    recipe = parse_recipe({**BASE, "severities": [1, 3, 5], "configs": {
        "original": [],
        "merge": [{"shift": "merge", "lambda_x": 1, "lambda_y": 1, "level": "entity"}],
        "global_shuffle": [{"shift": "global_shuffle"}],
        "both": [{"shift": "char_deletion", "fraction": 0.9}, {"shift": "global_shuffle"}, {"shift": "distort"}],
    }})
    assert list(recipe.configs) == ["original", "merge@1", "merge@3", "merge@5", "global_shuffle", "both@1",
                                    "both@3", "both@5"]
    assert recipe.configs["merge@3"] == [{"shift": "merge", "lambda_x": 20, "lambda_y": 10, "level": "entity"}]
    assert recipe.configs["both@5"] == [{"shift": "char_deletion", "fraction": 0.5}, {"shift": "global_shuffle"},
                                        {"shift": "distort", "strength": 1.0}]
    assert recipe.levels == {f"{c}@{s}": (c, s) for c in ("merge", "both") for s in (1, 3, 5)}
    assert recipe.select_configs(["merge@*"]) == ["merge@1", "merge@3", "merge@5"]
    assert recipe.select_configs(["*@3"]) == ["merge@3", "both@3"]
    assert base_name("merge@3") == ("merge", 3) and base_name("merge") == ("merge", None)
    assert [s.lambda_x for s in recipe.chain("merge@5")] == [80]
    # combinations are swept too, after they are made
    combo = parse_recipe({**BASE, "severities": [2], "configs": {"a": [{"shift": "char_deletion"}],
                                                                 "b": [{"shift": "margin_padding"}]},
                          "combinations": {"of": ["a", "b"]}})
    assert combo.configs["a-b@2"] == [{"shift": "char_deletion", "fraction": 0.1}, {"shift": "margin_padding", "r": 0.1}]


@pytest.mark.parametrize("severities, configs, message", [
    ([0, 1], {"m": [{"shift": "merge"}]}, "severities must be a list of distinct levels from 1 to 5"),
    ([1, 1], {"m": [{"shift": "merge"}]}, "distinct levels"),
    ("all", {"m": [{"shift": "merge"}]}, "distinct levels"),
    ([True], {"m": [{"shift": "merge"}]}, "distinct levels"),
    ([1], {"k": [{"shift": "global_shuffle"}]}, "no config has a shift with severity levels"),
    ([1], {"m": [{"shift": "merge"}], "m@1": []}, "severity config 'm@1' is already a config"),
])
def test_bad_severities_are_refused_with_a_reason(severities, configs, message):
    with pytest.raises(RecipeError, match=message):
        parse_recipe({**BASE, "severities": severities, "configs": configs})


def test_a_level_a_shift_lacks_is_refused_naming_the_config(monkeypatch):
    monkeypatch.setattr(SHIFTS["merge"], "severities", {1: {"lambda_x": 1}})
    with pytest.raises(RecipeError, match=r"config 'm': shift 'merge' has no severity level 2 \(it has 1\)"):
        expand_severities([1, 2], {"m": [{"shift": "merge"}]})


def test_recipes_without_severities_are_unchanged():
    for name in ("funsd-l", "funsd-t", "funsd-i", "funsd-fa"):
        recipe = load_recipe(name)
        assert recipe.severities is None and recipe.levels == {}
        assert not any("@" in c for c in recipe.configs)
    assert load_recipe("funsd-l").configs["merge"] == [{"shift": "merge", "lambda_x": 10, "lambda_y": 5,
                                                        "level": "entity"}]


def _rows(folder: Path, config: str) -> list[dict]:
    files = sorted((folder / "data" / config).glob("test-*.parquet"))
    return [row for f in files for row in pq.read_table(f).to_pylist()]


def test_a_severity_build_loads_by_name_and_equals_the_plain_config_of_its_level(funsd_dir, tmp_path):
    """``merge@3`` (a shift that draws nothing) gives the rows of a config written with level 3's values (but the
    step's seed in the provenance: a level is seeded as its config); its folder and Hub config name carry the ``@``; the card gives the level and its measured effect;
    a config without levels in the same recipe is built as in a recipe without ``severities:``."""
    import datasets

    from dogood.pipeline.build import build

    recipe = parse_recipe({**BASE, "severities": [1, 3], "configs": {
        "merge": [{"shift": "merge", "level": "entity"}],
        "shuffle": [{"shift": "global_shuffle"}],
    }})
    plain = parse_recipe({**BASE, "configs": {
        "merge_x20_y10": [{"shift": "merge", "lambda_x": 20, "lambda_y": 10, "level": "entity"}],
        "shuffle": [{"shift": "global_shuffle"}],
    }})
    build(recipe, tmp_path / "sev", source_path=funsd_dir, limit=3)
    build(plain, tmp_path / "plain", source_path=funsd_dir, limit=3)
    assert sorted(p.name for p in (tmp_path / "sev" / "data").iterdir()) == ["merge@1", "merge@3", "shuffle"]
    visible = ("id", "tokens", "bboxes", "ner_tags", "image")
    assert ([{k: r[k] for k in visible} for r in _rows(tmp_path / "sev", "merge@3")]
            == [{k: r[k] for k in visible} for r in _rows(tmp_path / "plain", "merge_x20_y10")])
    assert _rows(tmp_path / "sev", "shuffle") == _rows(tmp_path / "plain", "shuffle")

    record = json.loads((tmp_path / "sev" / "dogood_build.json").read_text())
    assert record["levels"] == {"merge@1": ["merge", 1], "merge@3": ["merge", 3]}
    assert "effects" in record["stats"]["merge@3"]["test"] and "effects" not in record["stats"]["shuffle"]["test"]
    plain_record = json.loads((tmp_path / "plain" / "dogood_build.json").read_text())
    assert "levels" not in plain_record and "effects" not in plain_record["stats"]["shuffle"]["test"]
    shifts = [measured(record["stats"][c]["test"])["box_shift"] for c in ("merge@1", "merge@3")]
    assert 0 < shifts[0] < shifts[1]

    card = (tmp_path / "sev" / "README.md").read_text()
    assert "## Severity levels" in card and "config_name: merge@3" in card
    assert f"| `merge` | 3 | `merge` `lambda_x=20`, `lambda_y=10` | test | 0.0% | {shifts[1]:.4f} | – |" in card
    assert "## Severity levels" not in (tmp_path / "plain" / "README.md").read_text()

    loaded = datasets.load_dataset(str(tmp_path / "sev"), "merge@3", split="test")
    assert loaded.num_rows == 3 and loaded[0]["bboxes"] == _rows(tmp_path / "plain", "merge_x20_y10")[0]["bboxes"]


def test_describe_lists_the_levels():
    from dogood.shifts.describe import describe_shift

    text = describe_shift("distort")
    assert "Severity levels" in text and "  1: strength=0.05\n" in text and "  5: strength=1\n" in text
    assert "Severity levels" not in describe_shift("global_shuffle")
    assert "  5: fraction=1\n" in describe_shift("key_drop")


def test_the_levels_of_a_config_share_its_draws(funsd_test):
    """Every level of a config is seeded as the config's own step (ImageNet-C: the same image at every level), so
    ``char_deletion@1`` changes a subset of the words ``char_deletion@5`` changes, each to the same text."""
    from dogood.pipeline.worker import apply_chain

    recipe = load_recipe("funsd-c")
    base = make_shift(dict(recipe.level_bases["char_deletion@1"][0])).step_key()
    assert {recipe.chain(f"char_deletion@{s}")[0].seed_key() for s in LEVELS} == {base}
    assert len({recipe.chain(f"char_deletion@{s}")[0].step_key() for s in LEVELS}) == 5
    for doc in (funsd_test.load(i) for i in funsd_test.ids()[:3]):
        low, high = (apply_chain(doc, recipe.chain(f"char_deletion@{s}"), recipe.seed) for s in (1, 5))
        changed = [{i: b.text for i, (a, b) in enumerate(zip(doc.words, d.words)) if a.text != b.text}
                   for d in (low, high)]
        assert changed[0] and len(changed[0]) < len(changed[1])
        assert changed[0].items() <= changed[1].items()


def test_a_set_override_reaches_the_draws_of_every_level():
    """``--set 'cd@*.PARAM=...'`` overrides of a parameter the levels do not set change the draws
    of every level alike; one the levels set leaves the shared draws alone."""
    recipe = parse_recipe({**BASE, "severities": [1, 2], "configs": {"cd": [{"shift": "char_deletion"}]}})
    before = recipe.chain("cd@1")[0].seed_key()
    changed = recipe.with_overrides(["cd@*.skip_first_char=true"])
    assert changed.chain("cd@1")[0].seed_key() == changed.chain("cd@2")[0].seed_key() != before
    swept = recipe.with_overrides(["cd@1.fraction=0.3"])
    assert swept.chain("cd@1")[0].seed_key() == before and swept.chain("cd@1")[0].fraction == 0.3
