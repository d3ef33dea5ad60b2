"""Moradi & Samwald (2021) character- and word-level perturbations: hand-made cases and real FUNSD pages."""

from __future__ import annotations

import pytest
from perturbation_checks import changed_pairs, form, texts

from dogood.language.chars import CHAR_KINDS, KEYBOARD_NEIGHBOURS, MISSPELLINGS
from dogood.language.words import MAX_WORD_LENGTH, core_problem, split_word
from dogood.shifts.text.char_perturbation import CharPerturbation


def _obeys(kind, old, new):
    """Whether ``new`` is one ``kind`` perturbation of the core ``old``."""
    n = len(old)
    if kind == "deletion":
        return any(new == old[:p] + old[p + 1:] for p in range(1, n - 1))
    if kind == "insertion":
        return len(new) == n + 1 and new[0] == old[0] and new[-1] == old[-1] and any(
            new[:p] + new[p + 1:] == old for p in range(1, n))
    if kind == "repetition":
        return any(new == old[: p + 1] + old[p] + old[p + 1:] for p in range(1, n - 1))
    if kind == "swap":
        diff = [j for j in range(n) if len(new) == n and new[j] != old[j]]
        return len(new) == n and len(diff) == 2 and diff[1] == diff[0] + 1 and (
            new[diff[0]], new[diff[1]]) == (old[diff[1]], old[diff[0]])
    if kind == "replacement":
        diff = [j for j in range(n) if len(new) == n and new[j] != old[j]]
        return len(new) == n and len(diff) == 1 and (
            new[diff[0]].lower() in KEYBOARD_NEIGHBOURS[old[diff[0]].lower()]
            and new[diff[0]].isupper() == old[diff[0]].isupper())
    if kind == "letter_case":
        return new != old and new.lower() == old.lower() and new in (old.swapcase(), old[0].swapcase() + old[1:])
    if kind == "misspelling":
        return new.lower() in MISSPELLINGS[old.lower()]
    raise AssertionError(kind)


def test_keyboard_neighbours_are_qwertys_touching_keys():
    assert KEYBOARD_NEIGHBOURS["s"] == "adewxz"
    assert KEYBOARD_NEIGHBOURS["q"] == "aw"
    assert KEYBOARD_NEIGHBOURS["m"] == "jkn"
    assert set(KEYBOARD_NEIGHBOURS) == set("abcdefghijklmnopqrstuvwxyz")
    for a, near in KEYBOARD_NEIGHBOURS.items():  # touching is symmetric
        assert all(a in KEYBOARD_NEIGHBOURS[b] for b in near), a


@pytest.mark.parametrize("kind", CHAR_KINDS)
def test_each_char_kind_does_what_it_says_on_funsd(kind, funsd_docs):
    shift = CharPerturbation(kind=kind, per_sample=2, fraction=1.0)
    seen = 0
    for doc in funsd_docs[:6]:
        out = shift(doc, 7)
        for old, new in changed_pairs(doc, out):
            (p0, c0, s0), (p1, c1, s1) = split_word(old), split_word(new)
            assert (p0, s0) == (p1, s1), (old, new)  # punctuation around the word is kept
            assert core_problem(c0, MAX_WORD_LENGTH) is None
            assert _obeys(kind, c0, c1), (kind, old, new)
            seen += 1
        assert [w.box for w in out.words] == [w.box for w in doc.words]
        assert out.entities == doc.entities
    assert seen >= (3 if kind == "misspelling" else 100)


def test_letter_case_and_misspelling_by_hand():
    doc = form(("question", "Received:"), ("answer", "fluorescent"), ("header", "COMMITTEE"))
    out = CharPerturbation(kind="misspelling", fraction=1.0)(doc, 0)
    assert texts(out) == ["Recieved:", "florescent", "COMMITEE"] or texts(out) == ["Recieved:", "florescent", "COMITTEE"]
    out = CharPerturbation(kind="letter_case", fraction=1.0)(doc, 0)
    assert [t.lower() for t in texts(out)] == [t.lower() for t in texts(doc)]
    assert all(a != b for a, b in zip(texts(out), texts(doc)))
