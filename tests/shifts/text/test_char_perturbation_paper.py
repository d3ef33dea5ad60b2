"""``style: paper``: Moradi & Samwald's reference scripts' selection and operators, against a transcription of them.

Three kinds of checks per kind: draw for draw (dogood's operator fed Python's ``random.Random(seed).randint``
retraces the transcription in tests/moradi_reference.py, seeds 0-39, and the scripts' own outputs on their
first data row with ``seed(1)``); the distribution of edits through the shift on a document (numpy draws,
300 seeds) against the transcription's (Python draws, 300 seeds), by a chi-square test per feature; and the
fixed sentences of the reading notes (outputs the scripts give, and where they hang, crash or garble, what
style paper does instead).
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from moradi_reference import QWERTY, Hangs, char_script, misspelling_script, row_neighbours, word_script
from paper_style_checks import (
    CHAR_EDITS,
    FIRST_ROW,
    MISSPELLING_ROWS,
    SEEDS,
    SENTENCES,
    char_features,
    form,
    ours_char,
    same_distribution,
    script_words,
    shifted_tokens,
    tokens_of,
)

from dogood.language.chars import MISSPELLINGS
from dogood.language.moradi_ops import ROW_NEIGHBOURS, misspell_tokens
from dogood.shifts.text.char_perturbation import CharPerturbation
from dogood.shifts.text.word_perturbation import WordPerturbation


@pytest.mark.parametrize("kind", CHAR_EDITS)
def test_char_kind_retraces_the_scripts_draw_for_draw(kind):
    for text in SENTENCES:
        toks = tokens_of(text)
        for seed in range(40):
            assert ours_char(kind, toks, random.Random(seed)) == char_script(kind, toks, random.Random(seed)), (
                text, seed)


def test_keyboard_table_is_the_same_row_left_then_right():
    for row in QWERTY:
        for c in row:
            assert list(ROW_NEIGHBOURS[c]) == row_neighbours(c)
    assert ROW_NEIGHBOURS["a"] == "s" and ROW_NEIGHBOURS["l"] == "k" and ROW_NEIGHBOURS["b"] == "vn"


@pytest.mark.parametrize("kind", CHAR_EDITS)
def test_char_kind_edits_are_distributed_as_the_scripts(kind):
    shift = CharPerturbation(kind=kind, style="paper", fraction=1.0)
    for text in SENTENCES[:2]:
        words = tuple(text.split())
        ours = [char_features(words, tuple(w.text for w in shift(form(text), seed).words)) for seed in SEEDS]
        ref = [char_features(words, script_words(text, char_script(kind, tokens_of(text), random.Random(seed))))
               for seed in SEEDS]
        for feature in ("outcome", "token", "first", "from_end", "added"):
            same_distribution([f.get(feature) for f in ours], [f.get(feature) for f in ref])
        changed = [f for f in ours if "token" in f]
        assert len(changed) > 0.6 * len(ours)  # the rest: no letter found, as the scripts (which drop those)
        if kind in ("insertion", "deletion", "repetition", "replacement"):  # inner positions only
            assert all(f["ends"] for f in changed)


def test_replacement_takes_same_row_neighbours_only():
    shift = CharPerturbation(kind="replacement", style="paper", fraction=1.0)
    rows = Counter()
    for seed in SEEDS:
        old, new = tuple(tokens_of(FIRST_ROW)), shifted_tokens(shift, FIRST_ROW, seed)
        for a, b in zip(old, new):
            for x, y in zip(a, b):
                if x != y:
                    rows["same row" if y.lower() in ROW_NEIGHBOURS[x.lower()] else "other"] += 1
    assert rows["other"] == 0 and rows["same row"] == len(SEEDS)


def test_a_sample_without_an_eligible_token_is_unchangeable_where_the_scripts_hang():
    with pytest.raises(Hangs):
        char_script("insertion", tokens_of("I am a"), random.Random(0))
    for kind in CHAR_EDITS:
        out = CharPerturbation(kind=kind, style="paper", fraction=1.0)(form("I am a"), 0)
        assert [w.text for w in out.words] == ["I", "am", "a"]
        assert out.provenance[-1].counts["unchangeable"] == 1
    with pytest.raises(Hangs):
        word_script("deletion", tokens_of("a b ."), random.Random(0))
    out = WordPerturbation(kind="deletion", style="paper", fraction=1.0)(form("a b ."), 0)
    assert [w.text for w in out.words] == ["a", "b", "."]


def test_misspelling_retraces_the_script_where_its_substring_match_is_a_word_match():
    text = "we receive the equipment and information tomorrow with a guarantee"
    toks = tokens_of(text)
    for seed in range(40):
        ours = misspell_tokens(toks, MISSPELLINGS, 3, random.Random(seed).randint)
        new = [ours.get(i, t) for i, t in enumerate(toks)]
        assert " ".join(new) == misspelling_script(text, MISSPELLING_ROWS, random.Random(seed)), seed


def test_misspelling_distribution_and_the_fixed_substring_bug():
    text = "We receive the equipment and information tomorrow"
    shift = CharPerturbation(kind="misspelling", style="paper", per_sample=3, fraction=1.0)
    toks = tuple(tokens_of(text))
    ours = [shifted_tokens(shift, text, seed) for seed in SEEDS]
    ref = [tuple(misspelling_script(text, MISSPELLING_ROWS, random.Random(seed)).split()) for seed in SEEDS]
    same_distribution(ours, ref)
    assert all(sum(a != b for a, b in zip(toks, o)) == 3 for o in ours)  # the scripts' three words a sample
    # the scripts match substrings ("receive" inside "received", then garble); style paper matches whole words
    assert misspelling_script("It was received", [("receive", "recieve")], random.Random(0)) == "It was recieved"
    assert misspell_tokens(tokens_of("It was received"), {"receive": ("recieve",)}, 3, random.Random(0).randint) == {}
    assert misspell_tokens(tokens_of("RECEIVE it"), MISSPELLINGS, 3, random.Random(0).randint) == {0: "RECIEVE"}
