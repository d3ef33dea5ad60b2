"""Moradi & Samwald (2021) character- and word-level perturbations: hand-made cases and real FUNSD pages."""

from __future__ import annotations

import pytest  # noqa: F401

from perturbations_support import *  # noqa: F403 (imports, data and fixtures these tests share)



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
