"""TextAttack word swaps (Do-GOOD 3.2, Table 4): embedding, homoglyph, number, character deletion.

Outcomes are checked on real FUNSD test pages: the changed share of eligible
words, what each swap does to a word, that boxes and labels stay, and that the
seed alone decides the output. The counter-fitted embedding is built once per
test session, on GloVe's 10,000 most frequent words, into the session's cache.
"""

from __future__ import annotations

import unicodedata

import pytest
from word_swap_checks import changed

from dogood.shifts.text.homoglyph_swap import HOMOGLYPHS, HomoglyphSwap


def _maps_back(glyph: str, original: str) -> bool:
    """True when NFKC folds ``glyph`` to ``original`` or Unicode lists them as confusable."""
    if unicodedata.normalize("NFKC", glyph) == original:
        return True
    confusables = pytest.importorskip("confusable_homoglyphs.confusables")
    found = confusables.is_confusable(glyph, greedy=True, preferred_aliases=[])
    return bool(found) and original in {h["c"] for h in found[0]["homoglyphs"]}


def test_homoglyph_table_is_non_ascii_look_alikes():
    assert set(HOMOGLYPHS) == set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
    for plain, glyph in HOMOGLYPHS.items():
        assert len(glyph) == 1 and not glyph.isascii() and _maps_back(glyph, plain), (plain, glyph)


def test_homoglyph_swap_writes_look_alikes(docs):
    for k, doc in enumerate(docs):
        out = HomoglyphSwap(fraction=0.2)(doc, seed=k)
        for i in changed(doc, out):
            old, new = doc.words[i].text, out.words[i].text
            assert old.isascii() and not new.isascii() and len(new) == len(old)
            diff = [(a, b) for a, b in zip(old, new) if a != b]
            assert len(diff) == 1 and _maps_back(diff[0][1], diff[0][0])
