"""The card is written from the shifts' declarations and the build's structured statistics (no shift named in
the writer, nothing parsed out of strings)."""

from __future__ import annotations

from types import SimpleNamespace

from dogood.core.document import ShiftRecord
from dogood.core.papers import CITATIONS, Cites
from dogood.pipeline import stats
from dogood.pipeline.card import render_card
from dogood.pipeline.recipe import list_recipes, load_recipe
from dogood.shifts import SHIFTS


def _card(recipe, stats_by_config=None, credits=None):
    """A card for ``recipe`` with one one-document test split per config (no build needed)."""
    splits = {c: {"test": {"num_examples": 1, "num_bytes": 1, "num_shards": 1}} for c in recipe.configs}
    by_config = stats_by_config or {c: {"test": {"documents": 1}} for c in recipe.configs}
    return render_card(recipe=recipe, schema="funsd", source={"kind": "funsd"}, splits_info=splits,
                       stats=by_config, skipped=[], dogood_version="test", credits=credits)


def test_funsd_fa_card_cites_the_form_attack_paper_with_authors_and_arxiv_id():
    text = _card(load_recipe("funsd-fa"))
    cite = text.split("## Cite")[1]
    assert CITATIONS["form-attacks"].markdown() in cite
    assert "Le Xue, Mingfei Gao, Zeyuan Chen, Caiming Xiong and Ran Xu" in cite and "arXiv:2110.04413" in cite


def test_every_shift_of_a_shipped_recipe_declares_a_paper():
    used = {spec["shift"] for recipe in list_recipes() for chain in recipe.configs.values() for spec in chain}
    undeclared = sorted(name for name in used if not SHIFTS[name].papers)
    assert not undeclared, f"shifts used by shipped recipes without `papers`: {undeclared}"


def test_papers_come_from_the_declarations_do_good_first_then_in_citation_order(monkeypatch):
    cls = SHIFTS["char_deletion"]
    monkeypatch.setattr(cls, "papers", (Cites("textattack"), Cites("moradi", "4.1", inspired_by="one deletion per word")))
    recipe = SimpleNamespace(name="r", version="1.0.0", description="", seed=0, splits=["test"],
                             configs={"del": [{"shift": "char_deletion"}]})
    cite = _card(recipe).split("## Cite")[1]
    order = [cite.index(CITATIONS[k].markdown()) for k in ("do-good", "moradi", "textattack")]
    assert order == sorted(order)
    assert "- `char_deletion` is inspired by Moradi and Samwald 2021: one deletion per word" in cite


def test_parameter_lines_and_glossary_come_from_the_declarations():
    recipe = SimpleNamespace(name="r", version="1.0.0", description="", seed=0, splits=["test"],
                             configs={"del": [{"shift": "char_deletion", "fraction": 0.2}]})
    text = _card(recipe)
    assert "1. `char_deletion`: `fraction=0.2`" in text
    glossary = text.split("## What the parameters mean")[1].split("## ")[0]
    for row in SHIFTS["char_deletion"].describe():
        assert f"- `char_deletion`: `{row['name']}` ({row['type']}" in glossary and row["description"] in glossary
    assert "(a number, in [0, 1]; default `0.1`): share of the eligible words changed (paper: 0.1)." in glossary


def test_words_line_follows_reads_words(monkeypatch):
    recipe = SimpleNamespace(name="r", version="1.0.0", description="", seed=0, splits=["test"],
                             configs={"del": [{"shift": "char_deletion"}]})
    assert "Words: from the source; no OCR is run on the shifted page." in _card(recipe)
    monkeypatch.setattr(SHIFTS["char_deletion"], "reads_words", True)
    assert "Words: re-read from the shifted page by `char_deletion` (see its note)." in _card(recipe)


def test_counts_and_tallies_are_shown_per_shift_with_their_help(monkeypatch):
    cls = SHIFTS["char_deletion"]
    monkeypatch.setattr(cls, "tallies_help", {"kind": "what each deletion hit (words per kind)"})
    record = ShiftRecord("char_deletion", {}, 1, None, {"changed": 2, "eligible": 9}, {"kind": {"vowel": 2}})
    recipe = SimpleNamespace(name="r", version="1.0.0", description="", seed=0, splits=["test"],
                             configs={"del": [{"shift": "char_deletion"}]})
    s = {"documents": 1, "shifts": stats.shift_stats([record])}
    text = _card(recipe, {"del": {"test": s}})
    assert "What the shifts did (test): char_deletion: changed 2, char_deletion: eligible 9." in text
    assert "char_deletion: kind (test): vowel 2." in text
    assert "- `char_deletion: kind`: what each deletion hit (words per kind)." in text
    assert f"- `char_deletion: eligible`: {cls.counts_help['eligible']}." in text


def test_licences_of_the_credited_material_are_listed():
    recipe = SimpleNamespace(name="r", version="1.0.0", description="", seed=0, splits=["test"],
                             configs={"none": []})
    credits = [{"id": k, "title": f"item {k}", "url": f"https://x/{k}", "license": lic, "license_url": "https://l",
                "share_alike": False} for k, lic in ((1, "CC BY"), (2, "CC BY"), (3, "CC0"))]
    text = _card(recipe, credits=credits)
    assert "Third-party material the shifts used (3 items), each under its own licence; items per\nlicence: CC BY 2, CC0 1." in text


def test_a_card_from_an_old_build_record_reads_its_flat_counts_and_tallies():
    """`dogood_build.json` written before the statistics were kept per shift: flat `shift: name` keys."""
    old = {"documents": 2, "words": 10, "shift_counts": {"natural_background: words": 10},
           "tallies": {"natural_background: photo": {"113": 1, "315": 1}}}
    recipe = SimpleNamespace(name="r", version="1.0.0", description="", seed=0, splits=["test"],
                             configs={"natural": [{"shift": "natural_background"}]})
    text = _card(recipe, {"natural": {"test": old}})
    assert "What the shifts did (test): natural_background: words 10." in text
    assert "natural_background: photo (test): 113 1, 315 1." in text
