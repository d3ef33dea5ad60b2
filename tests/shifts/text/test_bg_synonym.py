"""Form-attack text shifts on real FUNSD pages and hand-made forms: what changes, what never does."""

from __future__ import annotations

import re

import numpy as np
from form_attack_checks import BACKGROUND, changed_words, form, labels_of

from dogood.core.schema import iob_tags
from dogood.language.lexicons import all_sense_synonyms as synonyms
from dogood.shifts import BackgroundSynonym


def test_bg_synonym_uses_wordnet_synonyms_of_background_words(pages):
    shift = BackgroundSynonym(p=0.3)
    total = 0
    for k, doc in enumerate(pages[:5]):
        out, counts, _ = shift.apply(doc, np.random.default_rng(k))
        idx = changed_words(doc, out)
        labels = labels_of(doc)
        total += len(idx)
        for i in idx:
            assert labels[i] in BACKGROUND
            a, b = doc.words[i].text, out.words[i].text
            core_a, core_b = re.sub(r"^\W+|\W+$", "", a), re.sub(r"^\W+|\W+$", "", b)
            assert core_b.lower() in synonyms(core_a), (a, b)
            assert a[: len(a) - len(a.lstrip(":;,.()\"'"))] == b[: len(b) - len(b.lstrip(":;,.()\"'"))]
            if core_a.isupper() and len(core_a) > 1:
                assert core_b.isupper()
        assert iob_tags(out) == iob_tags(doc)
    assert total > 10


def test_synonym_keeps_case_and_punctuation():
    doc = form()
    out, _, _ = BackgroundSynonym(p=1.0, labels=("header", "question")).apply(doc, np.random.default_rng(3))
    assert out.words[1].text != "Date:" and out.words[1].text.endswith(":") and out.words[1].text[0].isupper()
    assert out.words[0].text.isupper() and out.words[0].text.lower() in synonyms("invoice")
    assert synonyms("in") == () and synonyms("1995") == ()  # stopwords and numbers have none
