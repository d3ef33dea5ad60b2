"""Every shipped config changes only the factors its shifts declare (issue 25), measured on real pages.

Each shipped recipe is built on its first two pages (one for the severity recipes funsd-c, funsd-p, rvl-cdip-p; FUNSD test; RVL-CDIP recipes on the shared RVL-CDIP pages),
every config of it, and the build must warn of no undeclared change; the card must show the factor table.
Offline stand-ins, as ``bench/check_identical.py`` uses: a 1-layer masked LM for ``bert_attack``, a 2,000-word
embedding space for ``embedding_swap``, a briefly trained baseline as the ``move`` scorer. ``docvqa-t`` has
no data offline; its shifts are ``rvl-cdip-t``'s.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from dogood.measures.factors import FACTORS
from dogood.pipeline.build import build
from dogood.pipeline.recipe import load_recipe
from dogood.shifts import SHIFTS
from dogood.shifts.describe import shipped_shifts

REPO = Path(__file__).resolve().parents[2]
FUNSD_RECIPES = ["funsd", "funsd-t", "funsd-l", "funsd-i", "funsd-fa", "funsd-c", "funsd-p", "funsd-l-mix"]
#: Pages built per recipe: two, but one for the severity recipes funsd-c, funsd-p and rvl-cdip-p (65-95 configs).
SEVERITY_RECIPES = {"funsd-c", "funsd-p", "rvl-cdip-p"}
RVL_RECIPES = ["rvl-cdip-t", "rvl-cdip-l", "rvl-cdip-i1", "rvl-cdip-i2", "rvl-cdip-i3", "rvl-cdip-p"]


def test_every_recipe_is_covered():
    shipped = {p.stem for p in (REPO / "recipes").glob("*.yaml")}
    assert shipped == set(FUNSD_RECIPES) | set(RVL_RECIPES) | {"docvqa-t"}


def test_every_shipped_shift_declares_factors():
    for cls in shipped_shifts():
        assert cls.factors, f"{cls.name} declares no factor"
        assert cls.factors <= set(FACTORS)
        assert cls().declared_factors() >= cls.factors or cls.name == "word_perturbation"


def test_a_shift_with_an_unknown_factor_is_refused():
    from dogood.shifts.base import Shift

    with pytest.raises(TypeError, match="unknown factor"):
        type("Odd", (Shift,), {"factors": frozenset({"colour"})})


def test_parameters_change_the_declaration():
    assert SHIFTS["char_deletion"](render=True).declared_factors() == {"text", "ink"}
    assert SHIFTS["char_deletion"]().declared_factors() == {"text"}
    assert SHIFTS["word_perturbation"](kind="deletion").declared_factors() == {"word_set"}
    assert SHIFTS["word_perturbation"](kind="synonym", render=True).declared_factors() == {"text", "ink"}
    assert "ink" in SHIFTS["move"](ink_threshold=0).declared_factors()
    # style paper edits tokens: a deleted token leaves the rest of its word, a split word's parts sit beside it
    assert SHIFTS["word_perturbation"](kind="deletion", style="paper").declared_factors() == {"text", "word_set"}
    assert SHIFTS["word_perturbation"](kind="negation", style="paper").declared_factors() == {
        "text", "word_set", "box_position"}


def _offline(name: str, folder: Path, tiny_mlm: str, scorer: str) -> Path:
    data = yaml.safe_load((REPO / "recipes" / f"{name}.yaml").read_text(encoding="utf-8"))
    for chain in (data.get("configs") or {}).values():
        for step in chain or []:
            if step.get("shift") == "bert_attack":
                step["model"] = tiny_mlm
            elif step.get("shift") == "embedding_swap":
                step["vocab_size"] = 2000
            elif step.get("shift") == "move":
                step["scorer"] = scorer
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def small_scorer(funsd_train, tmp_path_factory) -> str:
    """A CRF baseline trained briefly on ten FUNSD train forms: a ``move`` scorer that is quick to make."""
    from dogood.models.baseline import train_baseline

    model = train_baseline([funsd_train.load(i) for i in funsd_train.ids()[:10]], max_iterations=20)
    return str(model.save(tmp_path_factory.mktemp("scorer") / "scorer.dogood-model"))


@pytest.mark.parametrize("name", FUNSD_RECIPES + RVL_RECIPES)
def test_every_shipped_config_changes_only_what_it_declares(name, tmp_path, data_dir, funsd_dir, tiny_mlm,
                                                             small_scorer):
    if shutil.which("tesseract") is None:
        pytest.skip("Tesseract is not installed")
    source = funsd_dir if name.startswith("funsd") else data_dir / "rvl_cdip"
    recipe = load_recipe(_offline(name, tmp_path, tiny_mlm, small_scorer))
    report = build(recipe, tmp_path / "out", source_path=source, limit=1 if name in SEVERITY_RECIPES else 2, progress=False)
    assert report.warnings == []
    card = (tmp_path / "out" / "README.md").read_text(encoding="utf-8")
    assert "factor by factor" in card and not re.search(r"\d% ⚠\*\*", card) and "Undeclared changes" not in card
    for config in report.configs:
        assert f"| `{config}` |" in card


def test_describe_lists_the_declared_factors(capsys):
    from dogood.cli.main import main

    assert main(["describe", "char_deletion"]) == 0
    out = capsys.readouterr().out
    block = out.split("Factors")[1].split("Boxes")[0]
    assert "  text: word text" in block and "with render: true, also ink" in block and "geometry" not in block
    assert main(["describe", "distort"]) == 0
    block = capsys.readouterr().out.split("Factors")[1].split("Boxes")[0]
    assert all(f"  {name}:" in block for name in ("geometry", "box_position", "ink", "background", "quality"))


#: Parameter variants the shipped recipes do not use, whose declarations depend on them.
VARIANTS = {
    "char_swap_render": [{"shift": "char_perturbation", "kind": "swap", "fraction": 0.3, "render": True}],
    "bg_drop_render": [{"shift": "bg_drop", "fraction": 0.5, "render": True}],
    "key_drop_render": [{"shift": "key_drop", "render": True}],
    "word_deletion_render": [{"shift": "word_perturbation", "kind": "deletion", "fraction": 0.3, "render": True}],
    "word_repetition": [{"shift": "word_perturbation", "kind": "repetition", "fraction": 0.3}],
    "word_order": [{"shift": "word_perturbation", "kind": "word_order", "fraction": 0.5}],
    "value_text_render": [{"shift": "value_text_augment", "render": True}],
    "merge_words": [{"shift": "merge", "level": "word"}],
    "distort_box": [{"shift": "distort", "reproject": "box", "canvas": "grow", "kinds": ["curl", "fold"]}],
    "value_location_boxes": [{"shift": "value_location_augment", "move_pixels": False}],
    "box_stretch_shuffle": [{"shift": "box_stretch"}, {"shift": "global_shuffle"}],
}


def test_parameter_variants_change_only_what_they_declare(tmp_path, funsd_dir):
    path = tmp_path / "variants.yaml"
    path.write_text(yaml.safe_dump({"name": "variants", "version": "1.0.0", "source": {"kind": "funsd"},
                                    "splits": ["test"], "seed": 0, "box_level": "word", "configs": VARIANTS}),
                    encoding="utf-8")
    report = build(load_recipe(str(path)), tmp_path / "out", source_path=funsd_dir, limit=2, progress=False)
    assert report.warnings == []
    card = (tmp_path / "out" / "README.md").read_text(encoding="utf-8")
    row = next(line for line in card.splitlines() if line.startswith("| `char_swap_render` |"))
    assert row.count("✓") == 2  # text and ink
