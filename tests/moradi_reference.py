"""A transcription of what Moradi & Samwald's reference scripts (mmoradi-iut/NLP-perturbation) do to one sentence.

Written for the tests from a reading of the scripts (/work/notes/moradi.md describes them), not copied, and
kept apart from dogood's implementation: it works on token lists with Python's ``random.Random``, as the
scripts do (``randint``, both ends included), and keeps the scripts' behaviour where dogood fixes it (a
sentence without an eligible token raises :class:`Hangs`, the scripts' endless loop; ``None`` is a sentence
the script drops). The reference output is the list of tokens the script joins with spaces. Used by
tests/./test_<shift>.py and bench/measure_moradi_reference.py.
"""

from __future__ import annotations

import random

QWERTY = ("qwertyuiop", "asdfghjkl", "zxcvbnm")


class Hangs(Exception):
    """The script would loop forever on this sentence."""


def pick(tokens, shorter_max, rnd: random.Random) -> int:
    """The scripts' word picker: draw an index until its token is longer than ``shorter_max``."""
    if not any(len(t) > shorter_max for t in tokens):
        raise Hangs(tokens)
    while True:
        i = rnd.randint(0, len(tokens) - 1)
        if len(tokens[i]) > shorter_max:
            return i


def row_neighbours(letter: str) -> list[str]:
    """A letter's neighbours in the scripts' table: left then right on its QWERTY row (letters only)."""
    for row in QWERTY:
        k = row.find(letter.lower())
        if k >= 0:
            near = ([row[k - 1]] if k > 0 else []) + ([row[k + 1]] if k + 1 < len(row) else [])
            return [c.upper() if letter.isupper() else c for c in near]
    return []


def is_ascii_letter(c: str) -> bool:
    return c.isascii() and c.isalpha()


def char_script(kind: str, tokens: list[str], rnd: random.Random) -> list[str] | None:
    """One character script on a tokenized sentence: the new tokens, or ``None`` (sentence dropped)."""
    out = list(tokens)
    i = pick(tokens, 2, rnd)
    w = tokens[i]
    if kind == "insertion":
        p = rnd.randint(1, len(w) - 2)
        c = chr(rnd.randint(97, 122))
        out[i] = w[:p] + c + w[p:]
    elif kind == "deletion":
        p = rnd.randint(1, len(w) - 2)
        out[i] = w[:p] + w[p + 1:]
    elif kind == "repetition":
        p = rnd.randint(1, len(w) - 2)
        out[i] = w[:p + 1] + w[p] + w[p + 1:]
    elif kind == "replacement":
        tries, found = 0, False
        while not found and tries <= 20:
            p = rnd.randint(1, len(w) - 2)
            tries += 1
            found = is_ascii_letter(w[p])
        if not found:
            return None
        near = row_neighbours(w[p])
        r = near[0] if len(near) == 1 else near[rnd.randint(1, 2) - 1]
        out[i] = w[:p] + r + w[p + 1:]
    elif kind == "swap":
        p = rnd.randint(0, len(w) - 1)
        if p == 0:
            side = "right"
        elif p == len(w) - 1:
            side = "left"
        else:
            side = "left" if rnd.randint(1, 2) == 1 else "right"
        a, b = (p - 1, p) if side == "left" else (p, p + 1)
        chars = list(w)
        chars[a], chars[b] = chars[b], chars[a]
        out[i] = "".join(chars)
    elif kind == "letter_case":
        mode = rnd.randint(1, 2)
        if mode == 1:
            if not is_ascii_letter(w[0]):
                return None
            out[i] = w[0].swapcase() + w[1:]
        else:
            new = "".join(c.swapcase() if is_ascii_letter(c) else c for c in w)
            if new == w:
                return None
            out[i] = new
    else:
        raise ValueError(kind)
    return out


def misspelling_script(text: str, rows: list[tuple[str, str]], rnd: random.Random, most: int = 3) -> str | None:
    """The misspelling script on the raw text: ``rows`` are (correct, misspelling) in the corpus file's order."""
    found = [r for r in rows if text.find(r[0]) > -1]
    if not found:
        return None
    unique = list(dict.fromkeys(r[0] for r in found))
    done: list[str] = []
    while len(done) < most and len(done) < len(unique):
        correct, miss = found[rnd.randint(0, len(found) - 1)]
        if correct in done:
            continue
        at = text.find(correct)
        text = text[:at] + miss + text[at + len(correct):]
        done.append(correct)
    return text


def word_script(kind: str, tokens: list[str], rnd: random.Random) -> list[str]:
    """Word deletion or repetition: one token of two characters or more removed or doubled."""
    i = pick(tokens, 1, rnd)
    return tokens[:i] + tokens[i + 1:] if kind == "deletion" else tokens[:i + 1] + tokens[i:]


SYNONYM_TAGS = ("CD", "JJ", "JJR", "JJS", "NN", "NNS", "RB", "RBR", "RBS")


def synonym_script(tagged: list[tuple[str, str]], wordnet, rnd: random.Random, most: int = 3) -> list[str] | None:
    """The synonym script, given the tagged tokens (re-tokenising its own output is left out: the tests' sentences
    tokenize back to the same tokens). Lemma names keep WordNet's underscores."""
    cands, words = [], []
    for w, t in tagged:
        if t in SYNONYM_TAGS:
            for syn in wordnet.synsets(w):
                for lemma in syn.lemmas():
                    if lemma.name() != w:
                        cands.append((w, lemma.name()))
                        if w not in words:
                            words.append(w)
    if not cands:
        return None
    tokens = [w for w, _ in tagged]
    n = index = 0
    while n < most and n < len(words):
        word = words[index]
        pool = [c for c in cands if word in c]
        a, b = pool[rnd.randint(0, len(pool) - 1)]
        new = b if a == word else a
        at = max(j for j, tok in enumerate(tokens) if tok == word)  # the last occurrence
        tokens[at] = new
        n += 1
        index += 1
    return tokens


def order_script(tokens: list[str], rnd: random.Random) -> list[str] | None:
    """The word-order script: a prefix or suffix block of 2..n-1 tokens greedily deranged; final punctuation kept."""
    if len(tokens) <= 3:
        return None
    last = []
    if tokens[-1] in (".", "?", "!", ";", ","):
        last, tokens = [tokens[-1]], tokens[:-1]
    n = len(tokens)
    side = rnd.randint(1, 2)
    k = rnd.randint(2, n - 1)
    block = list(range(k)) if side == 1 else list(range(n - k, n))
    order: list[int] = []
    for i in range(n):
        if i not in block:
            order.append(i)
            continue
        free = [j for j in block if j != i and j not in order]
        order.append(free[rnd.randint(0, len(free) - 1)] if free else i)
    return [tokens[j] for j in order] + last
