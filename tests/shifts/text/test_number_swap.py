"""TextAttack word swaps (Do-GOOD 3.2, Table 4): embedding, homoglyph, number, character deletion.

Outcomes are checked on real FUNSD test pages: the changed share of eligible
words, what each swap does to a word, that boxes and labels stay, and that the
seed alone decides the output. The counter-fitted embedding is built once per
test session, on GloVe's 10,000 most frequent words, into the session's cache.
"""

from __future__ import annotations

import re

import numpy as np
from word_swap_checks import changed

from dogood.language.words import split_word
from dogood.shifts.text.number_swap import NumberSwap


def test_number_swap_fraction_is_capped_by_the_numbers_on_the_page(funsd_test):
    shift = NumberSwap(fraction=0.1)
    rich = np.zeros(2, dtype=int)
    for k, doc_id in enumerate(funsd_test.ids()):
        doc = funsd_test.load(doc_id)
        out = shift(doc, seed=k)
        counts = out.provenance[-1].counts
        target = round(0.1 * counts["eligible"])
        numbers = sum(bool(re.search(r"(?<![^\W_])\d+(?![^\W_])", w.text)) for w in doc.words)
        assert counts["changed"] <= target
        if numbers >= 2 * target:
            assert counts["changed"] == target
            rich += (counts["changed"], counts["eligible"])
    assert rich[1] > 1000 and abs(rich[0] / rich[1] - 0.1) <= 0.02


def test_number_swap_changes_numbers_only(funsd_test):
    from word2number import w2n

    seen = 0
    for k, doc_id in enumerate(funsd_test.ids()[:20]):
        doc = funsd_test.load(doc_id)
        out = NumberSwap(fraction=0.3)(doc, seed=k)
        for i in changed(doc, out):
            old, new = doc.words[i].text, out.words[i].text
            if re.search(r"\d", old):
                assert re.search(r"\d", new)
                # only one digit run changed; separators and letters stay
                assert re.sub(r"\d+", "#", old) == re.sub(r"\d+", "#", new)
                assert sum(a != b for a, b in zip(re.findall(r"\d+", old), re.findall(r"\d+", new))) == 1
                seen += 1
            else:
                assert w2n.word_to_num(split_word(old)[1].lower()) != w2n.word_to_num(split_word(new)[1].lower())
    assert seen > 100


def test_number_swap_word_cases():
    shift, rng = NumberSwap(), np.random.default_rng(0)
    assert shift.change_word("05", rng) in {f"{v:02d}" for v in range(1, 11)} - {"05"}
    assert shift.change_word("(212)", rng).startswith("(")
    for word in ("A221", "2", "0", "phone", "☐", "12345678901234567890123"):
        assert shift.change_word(word, rng) is None
    date = shift.change_word("12/05/98", rng)
    assert re.fullmatch(r"\d+/\d+/\d+", date) and date != "12/05/98"
    assert shift.change_word("Twenty", rng)[0].isupper()
    assert NumberSwap(number_words=False).change_word("twenty", rng) is None
