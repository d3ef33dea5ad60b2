"""Shifts get files, models and programs through declared resources (dogood.shifts.resources), loaded in prepare()."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from dogood.shifts import SHIFTS, make_shift, resources

SHIFT_DIRS = [Path(__file__).resolve().parents[2] / "dogood" / "shifts" / family for family in ("layout", "image")]


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    return names


@pytest.mark.parametrize("path", [p for d in SHIFT_DIRS for p in sorted(d.glob("*.py"))], ids=lambda p: p.name)
def test_layout_and_image_shifts_import_no_eval_and_no_other_shift(path):
    imported = _imports(path)
    banned = ("dogood.models", "dogood.pipeline", "dogood.eval", "dogood.share", "dogood.augment", "dogood.cli")
    assert not [m for m in imported if m.startswith(banned)]
    # no other layout or image shift (the zone-shuffle machinery is no shift)
    shift_modules = {f"dogood.shifts.{d.name}.{p.stem}" for d in SHIFT_DIRS for p in d.glob("*.py")
                     if not p.stem.startswith("_")}
    assert not (imported & shift_modules) - {f"dogood.shifts.{path.parent.name}.{path.stem}"}


def test_move_asks_for_its_scorer_by_name_in_prepare(monkeypatch):
    asked = []

    class Scorer:
        name, task = "stub", "token"

    monkeypatch.setitem(resources.RESOURCES, "token-scorer", lambda spec: asked.append(spec) or Scorer())
    shift = make_shift({"shift": "move", "scorer": "some-model"})
    assert asked == []  # the constructor loads nothing
    shift.prepare()
    shift.prepare()  # once per shift
    assert asked == ["some-model"] and isinstance(shift.model, Scorer)


def test_reocr_and_natural_background_prepare_through_resources(monkeypatch):
    asked = []
    monkeypatch.setitem(resources.RESOURCES, "tesseract", lambda: asked.append("tesseract") or "5.0")
    monkeypatch.setitem(resources.RESOURCES, "coco-photos", lambda **options: asked.append(options) or object())
    make_shift({"shift": "reocr"}).prepare()
    make_shift({"shift": "natural_background", "categories": "dog"}).prepare()
    assert asked == ["tesseract", {"annotations": None, "licenses": (1, 2, 4, 5, 7), "min_size": 256,
                                   "categories": ("dog",)}]


def test_an_unknown_resource_says_which_exist():
    with pytest.raises(KeyError, match="unknown resource 'nope'; known resources: .*token-scorer"):
        resources.resource("nope")


def test_natural_background_declares_its_tallies():
    assert set(SHIFTS["natural_background"].tallies_help) == {"photo", "licence"}
