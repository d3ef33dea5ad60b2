"""Form-attack text shifts on real FUNSD pages and hand-made forms: what changes, what never does."""

from __future__ import annotations

import re

import numpy as np
import pytest
from form_attack_checks import changed_words, form, labels_of

from dogood.core.document import Document, Entity, PageImage, Word
from dogood.core.schema import iob_tags
from dogood.language.values import data_type, split_into
from dogood.shifts import ValueTextAugment


@pytest.mark.parametrize("text,kind", [
    ("March 17, 1995", "date"), ("12/31/94", "date"), ("8/ 7/ 87", "date"), ("03/Mar/09", "date"),
    ("09-03-05", "date"), ("JUNE 1995", "date"), ("October 16,", "date"), ("$ 1,045.00", "money"),
    ("1129. 01", "money"), ("$500", "money"), ("#77219", "number"), ("594", "number"),
    ("(212) 403- 1000", "digits"), ("84- 52- 28", "digits"), ("Kent B. Mills", "other"), ("N/A", "other"),
    ("2/21/80 4:00 P. M.", "other"), ("", "other"),
])
def test_data_types(text, kind):
    assert data_type(text) == kind


def test_split_into_cuts_after_separators():
    assert split_into("03/17/05", [5, 3, 4]) == ["03/", "17/", "05"]
    assert split_into("$5,432.10", [1, 8]) == ["$", "5,432.10"]
    assert split_into("ab", [1, 1, 1]) is None
    assert "".join(split_into("1234567", [2, 2, 2, 2])) == "1234567"


def test_value_text_augment_keeps_types_words_and_boxes(pages):
    shift = ValueTextAugment()
    changed = 0
    for k, doc in enumerate(pages):
        out, counts, _ = shift.apply(doc, np.random.default_rng(k))
        idx = changed_words(doc, out)
        labels = labels_of(doc)
        assert all(labels[i] == "answer" for i in idx)
        for ent in doc.entities:
            if ent.label == "answer":
                old, new = doc.entity_text(ent), out.entity_text(ent)
                assert data_type(new) == data_type(old), (old, new)
                assert all(w.strip() for w in (out.words[i].text for i in ent.word_ids if doc.words[i].text.strip()))
        assert iob_tags(out) == iob_tags(doc) and out.entities == doc.entities
        assert counts["changed"] + counts["unchangeable"] == counts["eligible"]
        changed += counts["changed"]
    assert changed > 50


def test_value_text_augment_on_a_hand_made_form():
    doc = form()
    out, counts, _ = ValueTextAugment().apply(doc, np.random.default_rng(1))
    date = out.entity_text(out.entities[2])
    money = out.entity_text(out.entities[4])
    assert data_type(date) == "date" and date != "March 17, 1995"
    assert re.fullmatch(r"\d\d/|\d\d-", out.words[2].text) and len(date.split()) == 3
    assert out.words[6].text == "$" and re.fullmatch(r"\d{1,3}(,\d{3})*\.\d\d", out.words[7].text)
    assert money == f"$ {out.words[7].text}" and money != "$ 1,045.00"
    assert counts["eligible"] == 2 and counts["changed"] == 2 and counts["changed_date"] == 1
    assert set(changed_words(doc, out)) <= {2, 3, 4, 6, 7}


def test_value_text_augment_names_from_the_key():
    words = [Word("Name:", (0, 0, 40, 10)), Word("KELLI", (50, 0, 90, 10)), Word("SCRUGGS", (95, 0, 150, 10)),
             Word("Remarks:", (0, 20, 40, 30)), Word("see", (50, 20, 70, 30)), Word("attached", (75, 20, 130, 30)),
             Word("To:", (0, 40, 40, 50)), Word("N/A", (50, 40, 70, 50))]
    ents = [Entity(0, "question", (0,), ((0, 1),)), Entity(1, "answer", (1, 2), ((0, 1),)),
            Entity(2, "question", (3,), ((2, 3),)), Entity(3, "answer", (4, 5), ((2, 3),)),
            Entity(4, "question", (6,), ((4, 5),)), Entity(5, "answer", (7,), ((4, 5),))]
    doc = Document("n", PageImage.from_array(np.full((60, 200), 255, np.uint8)), tuple(words), tuple(ents))
    out, counts, _ = ValueTextAugment().apply(doc, np.random.default_rng(0))
    assert changed_words(doc, out) == [1, 2]  # the name; free text and N/A stay
    assert out.words[1].text.isupper() and out.words[2].text.isupper()
    assert counts == {"eligible": 3, "changed": 1, "unchangeable": 2, "changed_name": 1}


def test_card_names_the_faker_version(funsd_dir, tmp_path):
    from importlib.metadata import version

    from dogood.pipeline.build import build
    from dogood.pipeline.recipe import load_recipe

    build(load_recipe("funsd-t"), tmp_path / "t", configs=["value_text_augment", "bg_typo"], source_path=funsd_dir,
          limit=2, progress=False)
    card = (tmp_path / "t" / "README.md").read_text()
    assert f"`value_text_augment`: random values from Faker {version('faker')}" in card
    assert "`bg_typo`: random values" not in card  # no Faker there
