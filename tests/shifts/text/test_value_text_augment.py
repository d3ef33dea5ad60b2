"""Form-attack text shifts on real FUNSD pages and hand-made forms: what changes, what never does."""

from __future__ import annotations

import re

from datetime import datetime

import numpy as np

import pytest

from hypothesis import given, settings

from hypothesis import strategies as st

from dogood.core.document import Document, Entity, PageImage, Word

from dogood.core.schema import iob_tags

from dogood.shifts import SkipDocument, make_shift

from dogood.shifts import BackgroundAdversarial, BackgroundSynonym, BackgroundTypo, KeyDrop, ValueTextAugment

from dogood.language.chars import typo

from dogood.language.lexicons import all_sense_synonyms as synonyms

from dogood.language.selection import background_words, value_neighbours

from dogood.language.words import MAX_WORD_LENGTH

from dogood.language.values import data_type, split_into

BACKGROUND = {"other", "header", None}

PAPER_DATE_FORMATS = ("%m/%d/%y", "%y-%m-%d", "%d/%B/%y", "%d/%b/%y")

@pytest.fixture(scope="module")
def pages(funsd_test):
    return [funsd_test.load(i) for i in funsd_test.ids()[:10]]

def labels_of(doc):
    return [e.label if e is not None else None for e in doc.word_entity()]

def changed_words(before, after):
    assert len(before.words) == len(after.words)
    assert [w.box for w in before.words] == [w.box for w in after.words]
    return [i for i, (a, b) in enumerate(zip(before.words, after.words)) if a.text != b.text]

def levenshtein(a, b):
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]

def is_paper_value(text):
    """Date (paper formats, 2001-2021), number (3-12 digits) or money (<= 10,000,000)."""
    for fmt in PAPER_DATE_FORMATS:
        try:
            return 2001 <= datetime.strptime(text, fmt).year <= 2021
        except ValueError:
            pass
    if re.fullmatch(r"[1-9]\d{2,11}", text):
        return True
    m = re.fullmatch(r"\$?(\d{1,3}(?:,\d{3})*)\.(\d{2})", text)
    return bool(m) and 1 <= float(m.group(1).replace(",", "") + "." + m.group(2)) <= 10_000_000

def form(size=(600, 400)):
    """A hand-made form: two key/value pairs, a header, free text, a loose word."""
    words = [
        Word("INVOICE", (250, 10, 350, 30)),                                       # 0 header
        Word("Date:", (20, 60, 70, 75)), Word("March", (80, 60, 130, 75)), Word("17,", (135, 60, 160, 75)),
        Word("1995", (165, 60, 200, 75)),                                          # 1 key, 2-4 value
        Word("Total:", (20, 100, 70, 115)), Word("$", (80, 100, 88, 115)), Word("1,045.00", (90, 100, 150, 115)),
        Word("Please", (20, 300, 70, 315)), Word("remit", (75, 300, 120, 315)), Word("promptly", (125, 300, 190, 315)),
        Word("thanks", (450, 370, 500, 385)),                                      # 11: in no entity
        Word("", (500, 370, 505, 385)),                                            # 12: blank, in no entity
    ]
    entities = [
        Entity(0, "header", (0,)),
        Entity(1, "question", (1,), ((1, 2),)), Entity(2, "answer", (2, 3, 4), ((1, 2),)),
        Entity(3, "question", (5,), ((3, 4),)), Entity(4, "answer", (6, 7), ((3, 4),)),
        Entity(5, "other", (8, 9, 10)),
    ]
    image = PageImage.from_array(np.full(size[::-1], 250, np.uint8))
    return Document("form", image, tuple(words), tuple(entities))

ALL = [BackgroundTypo, BackgroundSynonym, BackgroundAdversarial, ValueTextAugment, KeyDrop]

@st.composite
def random_forms(draw):
    n = draw(st.integers(0, 12))
    texts = draw(st.lists(st.one_of(st.text(max_size=12), st.sampled_from(["Date:", "12/31/94", "$ 1,045.00", "#77219",
                                                                         "Name", "(212) 403- 1000", "report", "日本"])),
                          min_size=n, max_size=n))
    words = tuple(Word(t, (5 * i, 2, 5 * i + 4, 9)) for i, t in enumerate(texts))
    labels = draw(st.lists(st.sampled_from(["question", "answer", "other", "header", None]), min_size=n, max_size=n))
    entities = tuple(Entity(i, lab, (i,), ((i - 1, i),) if i and lab == "answer" and labels[i - 1] else ())
                     for i, lab in enumerate(labels) if lab)
    entities = tuple(Entity(e.id, e.label, e.word_ids, tuple(l for l in e.links if labels[l[0]])) for e in entities)
    return Document("h", PageImage.from_array(np.full((12, 64), 255, np.uint8)), words, entities)


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
