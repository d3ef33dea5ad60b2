"""Helpers the FormAttack text shifts' tests share (test_bg_typo.py, test_bg_adversarial.py,
test_value_text_augment.py, test_key_drop.py, test_form_attack.py, test_bg_synonym.py): a hand-made invoice form,
random forms (hypothesis), and checks of changed words and value formats. The ``pages`` fixture is in
tests/shifts/conftest.py."""

from __future__ import annotations

import re
from datetime import datetime

import numpy as np
from hypothesis import strategies as st

from dogood.core.document import Document, Entity, PageImage, Word
from dogood.shifts import BackgroundAdversarial, BackgroundSynonym, BackgroundTypo, KeyDrop, ValueTextAugment

BACKGROUND = {"other", "header", None}

PAPER_DATE_FORMATS = ("%m/%d/%y", "%y-%m-%d", "%d/%B/%y", "%d/%b/%y")


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
