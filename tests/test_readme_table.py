"""The README is a front page: at most 200 lines, its recipe table generated from the recipes (with the extra each
needs), its links pointing at files that exist, no path that exists only on CI outside its set-up commands; the
documentation's generated pages (shift index, shift pages, recipe table, papers) come from the declarations."""

from __future__ import annotations

import re
from pathlib import Path

from dogood.pipeline.preflight import (
    RECIPE_TABLE_END,
    RECIPE_TABLE_START,
    readme_with_recipe_table,
    recipe_needs,
    recipes_table_markdown,
)
from dogood.pipeline.recipe import load_recipe
from dogood.share.docs_pages import references_page, shift_index, shift_page
from dogood.shifts.describe import shipped_shifts

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"


def test_readme_is_a_front_page():
    text = README.read_text(encoding="utf-8")
    lines = text.splitlines()
    assert len(lines) <= 200
    assert "![" in text and (REPO / "docs" / "images" / "front.png").is_file()
    for target in re.findall(r"\]\(([^)#]+)\)", text):
        if not target.startswith("http"):
            assert (REPO / target).exists(), target
    commands = [k for k, line in enumerate(lines) if line.startswith(("python3 -m venv", "$(command -v sudo)"))]
    assert len(commands) == 2
    prose = "\n".join(line for k, line in enumerate(lines) if k not in commands)
    assert "../shared" not in prose


def test_readme_recipe_table_is_generated_from_the_recipes():
    text = README.read_text(encoding="utf-8")
    assert RECIPE_TABLE_START in text and RECIPE_TABLE_END in text
    assert readme_with_recipe_table(text) == text, "the README's recipe table is out of date: run `dogood list --markdown`"


def test_recipe_table_names_the_extra_each_recipe_needs():
    rows = {line.split("|")[1].strip(" `"): [c.strip() for c in line.split("|")[2:-1]]
            for line in recipes_table_markdown().splitlines()[2:]}
    assert rows["funsd-t"][0] == str(len(load_recipe("funsd-t").configs))
    assert rows["funsd-t"][2] == "`text`, `pos`"  # TextAttack's swaps; the tagger of ms_word_synonym and ms_paper_word_*
    assert rows["funsd-c"][0] == "95" and rows["funsd-c"][2] == "`scan`"
    assert rows["funsd-l"][2] == "none" and rows["rvl-cdip-i3"][2] == "`scan`"
    needs = recipe_needs(load_recipe("rvl-cdip-i1"))
    assert needs["extras"] == [] and "COCO photos" in needs["data"] and any("Tesseract" in p for p in needs["programs"])
    detailed = recipes_table_markdown(detail=True)
    assert "masked LM (bert-base-uncased)" in detailed and "FUNSD train (CRF scorer)" in detailed


def test_shift_index_links_every_shift_page():
    index = shift_index({cls.name: True for cls in shipped_shifts()})
    for cls in shipped_shifts():
        assert f"[`{cls.name}`]({cls.name}.md)" in index
    assert "| shift | family | parameters (default) | papers |" in index


def test_shift_page_states_the_declarations():
    from dogood.shifts import SHIFTS

    cls = SHIFTS["merge"]
    figures = {"picture": "images/merge.png", "params": {"lambda_x": 40, "lambda_y": 20}, "effects": {},
               "levels": {4: {"box_shift": 0.25, "text_changed": 0.0}}}
    page = shift_page(cls, figures)
    assert page.startswith("# `merge`") and "![merge: a synthetic page before and after](merge.png)" in page
    for row in cls.describe():
        assert f"| `{row['name']}` | {row['type']} | `{row['default']}` |" in page
    assert "| 4 | `lambda_x=40, lambda_y=20` | 0.2500 |" in page and "words with new text" not in page
    assert "::: dogood.shifts.layout.merge.MergeBoxes" in page
    assert "CPU per FUNSD-sized page: 1.6 ms" in page
    nopic = shift_page(SHIFTS["reocr"], {"why": "SourceError: Tesseract OCR is not installed"})
    assert "!!! note" in nopic and "Tesseract OCR is not installed" in nopic and "`tesseract`" in nopic


def test_references_page_lists_every_citation():
    from dogood.core.papers import CITATIONS

    page = references_page()
    for key, citation in CITATIONS.items():
        assert f"**{key}**: {citation.markdown()}" in page
