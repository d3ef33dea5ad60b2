"""The text toolkit (dogood.language): one word splitter, Latin check, case copier, budget draw and deletion engine."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np

from dogood.language.budget import budget, draw_until
from dogood.language.chars import deletions, pick
from dogood.language.words import case_like, core_problem, is_latin, split_word


def test_split_word_keeps_punctuation_around_the_core():
    assert split_word("(Date:") == ("(", "Date", ":")
    assert split_word("R&D.") == ("", "R&D", ".")
    assert split_word("--") == ("--", "", "")


def test_latin_rules():
    assert is_latin("café 12") and not is_latin("кот")
    assert is_latin("x²") and not is_latin("x²", ascii_digits=True)
    assert is_latin("Date", letters_only=True)
    assert not is_latin("Date:", letters_only=True) and not is_latin("", letters_only=True)


def test_case_like_copies_caps_capitals_and_lower_case():
    assert case_like("escort", "DATE") == "ESCORT"
    assert case_like("escort", "Date") == "Escort"
    assert case_like("escort", "date") == "escort"
    assert case_like("escort", "A") == "Escort"  # one capital letter is Capitalised, not ALL CAPS


def test_core_problem_names_the_first_reason():
    assert core_problem("a/b", 25) == "symbol" and core_problem("ab1", 25) == "number"
    assert core_problem("a" * 26, 25) == "too_long" and core_problem("don't", 25) is None


def test_deletions_are_textattacks_candidates():
    assert deletions("abc") == ["bc", "ac", "ab"]
    assert deletions("abc", 1, 2) == ["ac"] and deletions("a") == []
    assert pick([], np.random.default_rng(0)) is None


def test_budget_draw_changes_exactly_round_fraction_n():
    assert budget(0.1, 25) == 2 and budget(0.0, 100) == 0
    rng = np.random.default_rng(0)
    done: list[int] = []
    failed = draw_until(rng, 10, 3, lambda k: k % 2 == 0 and not done.append(k), lambda: len(done) == 3)
    assert len(done) == 3 and all(k % 2 == 0 for k in done) and failed >= 0
    untouched = np.random.default_rng(0)
    assert draw_until(untouched, 10, 0, lambda k: True, lambda: True) == 0
    assert untouched.random() == np.random.default_rng(0).random()  # a zero budget draws nothing


def test_text_shifts_construct_without_any_data():
    """Building a text shift touches no file; prepare() says what is missing and how to get it."""
    env = {k: v for k, v in os.environ.items() if k not in ("NLTK_DATA", "DOGOOD_DATA_DIR")}
    env["HOME"] = "/nonexistent"
    code = (
        "from dogood.core.errors import SourceError\n"
        "from dogood.shifts import SHIFTS\n"
        "for name, cls in SHIFTS.items():\n"
        "    if cls.family == 'text': cls()\n"
        "shift = SHIFTS['word_perturbation'](kind='synonym')\n"
        "try:\n"
        "    shift.prepare()\n"
        "except SourceError as exc:\n"
        "    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    if out.stdout:  # NLTK's own folders may hold the data on some machines
        assert "corpora/wordnet" in out.stdout and "nltk.downloader" in out.stdout


def test_rate_knob_is_fraction_and_old_p_is_accepted():
    import pytest

    from dogood.core.errors import RecipeError
    from dogood.shifts import make_shift

    for name in ("bg_typo", "bg_synonym", "bg_adversarial", "value_text_augment", "key_drop"):
        old = make_shift({"shift": name, "p": 0.3})
        assert old.params() == make_shift({"shift": name, "fraction": 0.3}).params()
        assert old.params()["fraction"] == 0.3 and "p" not in old.params()
        with pytest.raises(RecipeError, match="parameter p must be in"):
            make_shift({"shift": name, "p": 1.5})


def test_every_text_shift_caps_words_at_the_one_word_length_cap():
    """One word-length cap for every text shift (was 25, 40 and 64): a longer word is never changed."""
    from dogood.language.words import MAX_WORD_LENGTH
    from dogood.shifts import SHIFTS

    caps = {name: cls.max_word_length for name, cls in SHIFTS.items()
            if cls.family == "text" and hasattr(cls, "max_word_length")}
    assert len(caps) >= 9
    assert set(caps.values()) == {MAX_WORD_LENGTH}
