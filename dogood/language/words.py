"""One word's text: its punctuation, script and case, as every text shift reads them."""

from __future__ import annotations

import unicodedata

#: The one word-length cap of every text shift: a "word" longer than this (characters, punctuation included;
#: for the sample perturbations, its core) is an OCR run-on, a URL or a code, and is never changed.
MAX_WORD_LENGTH = 64

#: Apostrophes and hyphens allowed inside a word's core by the Moradi & Samwald perturbations.
INNER_MARKS = "'\u2019-"


def split_word(text: str) -> tuple[str, str, str]:
    """``(leading punctuation, core, trailing punctuation)``; the core runs from the first to the last letter or digit.

    ``"(Date:"`` -> ``("(", "Date", ":")``; a word with no letter or digit is all leading punctuation.
    """
    start, end = 0, len(text)
    while start < end and not text[start].isalnum():
        start += 1
    while end > start and not text[end - 1].isalnum():
        end -= 1
    return text[:start], text[start:end], text[end:]


def is_latin(text: str, *, ascii_digits: bool = False, letters_only: bool = False) -> bool:
    """True when every letter of ``text`` is a Latin letter (accents allowed); punctuation and digits pass.

    ``ascii_digits``: every digit must be ASCII too (``"²"`` fails). ``letters_only``: ``text`` must be
    non-empty and all letters (no digit, no punctuation).
    """
    if letters_only and not (text and text.isalpha()):
        return False
    for ch in text:
        if ch.isalpha():
            if not unicodedata.name(ch, "").startswith("LATIN"):
                return False
        elif ascii_digits and ch.isalnum() and not ch.isascii():
            return False
    return True


def case_like(word: str, template: str) -> str:
    """``word`` in the case pattern of ``template``: ALL CAPS (two letters or more), Capitalised, or as it is.

    Only ``template``'s letters count (``"A1"`` is Capitalised, ``"R&D"`` ALL CAPS); ``word`` is expected in
    lower case, as the lexicons give it.
    """
    letters = [c for c in template if c.isalpha()]
    if len(letters) > 1 and all(c.isupper() for c in letters):
        return word.upper()
    if letters and letters[0].isupper():
        return word[:1].upper() + word[1:]
    return word


def core_problem(core: str, max_length: int) -> str | None:
    """Why a word core must be left alone, or ``None``: ``empty`` (no letter), ``number`` (a digit),
    ``non_latin`` (a letter outside the Latin script), ``symbol`` (a mark other than :data:`INNER_MARKS`)
    or ``too_long`` (over ``max_length`` characters); the first offending character decides."""
    if not core or not any(c.isalpha() for c in core):
        return "number" if any(c.isdigit() for c in core) else "empty"
    if any(c.isdigit() for c in core):
        return "number"
    for c in core:
        if c.isalpha():
            if not is_latin(c):
                return "non_latin"
        elif c not in INNER_MARKS:
            return "symbol"
    if len(core) > max_length:
        return "too_long"
    return None
