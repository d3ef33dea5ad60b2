"""TextAttack word swaps (Do-GOOD 3.2, Table 4): embedding, homoglyph, number, character deletion.

Outcomes are checked on real FUNSD test pages: the changed share of eligible
words, what each swap does to a word, that boxes and labels stay, and that the
seed alone decides the output. The counter-fitted embedding is built once per
test session, on GloVe's 10,000 most frequent words, into the session's cache.
"""

from __future__ import annotations

import numpy as np
from word_swap_checks import changed

from dogood.language.words import split_word
from dogood.shifts.text.char_deletion import CharacterDeletion


def test_char_deletion_removes_exactly_one_character(docs):
    for k, doc in enumerate(docs):
        out = CharacterDeletion(fraction=0.2)(doc, seed=k)
        for i in changed(doc, out):
            old, new = doc.words[i].text, out.words[i].text
            assert len(new) == len(old) - 1
            assert any(old[:j] + old[j + 1 :] == new for j in range(len(old)))
            lead, core, trail = split_word(old)
            assert new.startswith(lead) and new.endswith(trail)  # punctuation around the word stays


def test_char_deletion_can_keep_first_and_last_characters():
    shift, rng = CharacterDeletion(skip_first_char=True, skip_last_char=True), np.random.default_rng(0)
    for _ in range(20):
        new = shift.change_word("house:", rng)
        assert new[0] == "h" and new[-2:] == "e:" and len(new) == 5
    assert shift.change_word("ab", rng) is None
