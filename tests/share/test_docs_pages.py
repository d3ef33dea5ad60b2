"""The documentation's generated pages: pictures and measured effects drawn from synthetic pages at build time
(no dataset), a navigation that picks up any new page, and an architecture diagram that is the declared layers."""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path

import numpy as np
import pytest
import yaml
from PIL import Image

from dogood.share.docs_pages import docs_data, shift_figures, synthetic_documents
from dogood.shifts import SHIFTS

REPO = Path(__file__).resolve().parents[2]


def test_synthetic_pages_have_funsd_entities():
    docs = synthetic_documents(2)
    assert len(docs) == 2 and all(d.words and d.entities for d in docs)
    assert {e.label for d in docs for e in d.entities} >= {"question", "answer"}


@pytest.mark.parametrize("name, effect, low, high", [("merge", "box_shift", 0.05, 1.0),
                                                     ("char_deletion", "text_changed", 0.25, 0.35)])
def test_a_shift_picture_and_its_measured_effect(name, effect, low, high, tmp_path):
    images = tmp_path / "images"
    images.mkdir()
    figures = shift_figures(SHIFTS[name], tmp_path, images)
    assert figures["why"] is None and figures["picture"] == f"images/{name}.png"
    picture = np.asarray(Image.open(images / f"{name}.png").convert("RGB"))
    assert picture.shape[1] > picture.shape[0] and picture.std() > 10  # two pages side by side, not blank
    assert low <= figures["levels"][4][effect] <= high, figures["levels"][4]
    levels = [figures["levels"][k][effect] for k in sorted(figures["levels"])]
    assert levels == sorted(levels) and levels[0] < levels[-1]  # the effect grows with the level


def test_docs_data_gives_the_photo_shifts_a_photo_and_restores_the_environment(tmp_path):
    before = os.environ.get("DOGOOD_DATA_DIR")
    images = tmp_path / "images"
    images.mkdir()
    with docs_data() as root:
        assert os.environ["DOGOOD_DATA_DIR"] == str(root) and (root / "coco" / "instances_docs.json").is_file()
        figures = shift_figures(SHIFTS["natural_background"], tmp_path, images)
    assert os.environ.get("DOGOOD_DATA_DIR") == before
    assert figures["why"] is None and figures["levels"][5]["contrast_lost"] > figures["levels"][1]["contrast_lost"]


def test_a_shift_that_cannot_run_gets_a_reason_not_a_picture(tmp_path, monkeypatch):
    monkeypatch.setattr("dogood.page.ocr.tesseract_version", lambda: (_ for _ in ()).throw(
        __import__("dogood").core.errors.SourceError("Tesseract OCR is not installed")))
    figures = shift_figures(SHIFTS["reocr"], tmp_path, tmp_path)
    assert figures["picture"] is None and "Tesseract OCR is not installed" in figures["why"]


def test_navigation_takes_any_new_page():
    nav = yaml.safe_load((REPO / "docs" / ".nav.yml").read_text(encoding="utf-8"))["nav"]
    assert "*" in nav and nav[0] == "index.md"
    named = {item for item in nav if isinstance(item, str) and item.endswith(".md")}
    for page in named - {"papers.md", "recipes-table.md"}:  # those two are generated at build time
        assert (REPO / "docs" / page).is_file(), page


def test_architecture_diagram_is_the_declared_layers():
    layers = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    declared = next(c for c in layers["contracts"] if c["id"] == "layers")["layers"]
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    diagram = text[text.index("```mermaid"):text.index("```", text.index("```mermaid") + 3)]
    nodes = re.findall(r"\b(\w+)\[\"", diagram)
    names = [n for layer in declared for n in layer.split(" | ")]
    assert sorted(set(nodes)) == sorted(names)
    order = {name: k for k, layer in enumerate(declared) for name in layer.split(" | ")}
    for above, below in re.findall(r"(\w+)(?:\[\"[^\"]*\"\])? --> (\w+)", diagram):
        assert order[above] < order[below], (above, below)
