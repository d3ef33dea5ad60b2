"""Moradi & Samwald's reference operators (mmoradi-iut/NLP-perturbation), on one sample's tokens, bugs fixed.

Written from a reading of the reference scripts, not copied. Each function
takes ``randint(a, b)``, a draw of an integer in ``[a, b]`` both ends
included (Python's ``random.randint``, which the scripts call), and draws in
the scripts' order, so fed ``random.Random(1).randint`` it retraces them;
the shifts feed it their numpy generator (:func:`numpy_randint`). Tokens
are spelled as ``nltk.word_tokenize`` spells them
(:mod:`dogood.language.sample_tokens`).

Fixes of the scripts' bugs, here and in :mod:`dogood.language.moradi_verbs`:

- the token picker loops forever when no token is long enough
  (``"I am a"``): :func:`pick_token` returns ``None`` (the sample is
  counted unchangeable);
- a common misspelling is matched anywhere in the text (``the`` inside
  ``Whether``), case-sensitively, and a match destroyed by an earlier
  replacement garbles the end of the text: :func:`misspell_tokens` matches
  whole tokens, in any case (the misspelling takes the word's case);
- a synonym is put at the last token equal to the word, and a word not
  found again after re-tokenising crashes the script (``IndexError``):
  :func:`replace_synonyms` replaces the token it chose; multi-word lemmas
  are joined with a space, not an underscore (``golf game``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from dogood.language.words import case_like

#: ``randint(a, b)``: an integer in ``[a, b]``, both ends included.
Randint = Callable[[int, int], int]


def numpy_randint(rng: np.random.Generator) -> Randint:
    """``randint(a, b)`` drawn from a numpy generator."""
    return lambda a, b: int(rng.integers(a, b + 1))


# -- picking a token ---------------------------------------------------------------------------------------------

#: Tokens longer than this are eligible: characters kinds 2 (3 characters or more), word deletion and repetition 1.
CHAR_MIN_LENGTH = 2
WORD_MIN_LENGTH = 1


def pick_token(tokens: Sequence[str], longer_than: int, randint: Randint,
               allowed: Callable[[int], bool] | None = None) -> int | None:
    """A token longer than ``longer_than`` characters, drawn as the scripts draw it: ``randint(0, n - 1)`` again
    until one qualifies (uniform over the eligible tokens); ``None`` when none qualifies (the scripts hang).

    ``allowed(i)`` narrows the eligible tokens (tokens already perturbed, a deletion that would empty the sample).
    """
    ok = [len(t) > longer_than and (allowed is None or allowed(i)) for i, t in enumerate(tokens)]
    if not any(ok):
        return None
    while True:
        i = randint(0, len(tokens) - 1)
        if ok[i]:
            return i


# -- character kinds ---------------------------------------------------------------------------------------------

#: The scripts' keyboard neighbours: the letters left and right on the same QWERTY row only (``a`` has ``s``,
#: ``l`` has ``k``); with two, ``randint(1, 2)`` picks the first or the second.
ROW_NEIGHBOURS: dict[str, str] = {
    "a": "s", "l": "k", "m": "n", "p": "o", "q": "w", "z": "x",
    "b": "vn", "c": "xv", "d": "sf", "e": "wr", "f": "dg", "g": "fh", "h": "gj", "i": "uo", "j": "hk", "k": "jl",
    "n": "bm", "o": "ip", "r": "et", "s": "ad", "t": "ry", "u": "yi", "v": "cb", "w": "qe", "x": "zc", "y": "tu",
}

#: How often the replacement kind looks for a letter among the token's inner characters before giving up.
REPLACEMENT_TRIES = 21


def _ascii_letter(c: str) -> bool:
    return "a" <= c <= "z" or "A" <= c <= "Z"


def row_neighbour(c: str, randint: Randint) -> str:
    """An ASCII letter's same-row neighbour, in its case (one ``randint(1, 2)`` when it has two)."""
    near = ROW_NEIGHBOURS[c.lower()]
    new = near[0] if len(near) == 1 else near[randint(1, 2) - 1]
    return new.upper() if c.isupper() else new


def char_edit(token: str, kind: str, randint: Randint) -> str | None:
    """One reference character edit of ``token`` (more than two characters), or ``None`` when the script leaves the
    sample unperturbed (``replacement``: no letter among the inner characters in 21 draws; ``letter_case``: the
    character(s) to toggle are no ASCII letters).

    ``insertion``: a letter ``a``-``z`` before position ``randint(1, n - 2)``; ``deletion`` and ``repetition``: the
    character at ``randint(1, n - 2)`` removed or doubled; ``replacement``: that character (a letter) by its
    same-row neighbour; ``swap``: the character at ``randint(0, n - 1)`` with its left or right neighbour (right
    at the start, left at the end, else ``randint(1, 2)``: 1 left); ``letter_case``: ``randint(1, 2)``: 1 toggles
    the first character's case, 2 every ASCII letter's. A swap of two equal characters returns the token as it was.
    """
    n = len(token)
    if kind == "insertion":
        p = randint(1, n - 2)
        return token[:p] + chr(randint(97, 122)) + token[p:]
    if kind == "deletion":
        p = randint(1, n - 2)
        return token[:p] + token[p + 1:]
    if kind == "repetition":
        p = randint(1, n - 2)
        return token[:p] + token[p] * 2 + token[p + 1:]
    if kind == "replacement":
        for _ in range(REPLACEMENT_TRIES):
            p = randint(1, n - 2)
            if _ascii_letter(token[p]):
                return token[:p] + row_neighbour(token[p], randint) + token[p + 1:]
        return None
    if kind == "swap":
        p = randint(0, n - 1)
        left = False if p == 0 else True if p == n - 1 else randint(1, 2) == 1
        a = p - 1 if left else p
        return token[:a] + token[a + 1] + token[a] + token[a + 2:]
    if kind == "letter_case":
        if randint(1, 2) == 1:
            new = (token[0].swapcase() if _ascii_letter(token[0]) else token[0]) + token[1:]
        else:
            new = "".join(c.swapcase() if _ascii_letter(c) else c for c in token)
        return new if new != token else None
    raise ValueError(f"unknown reference character edit {kind!r}")


def misspell_tokens(tokens: Sequence[str], table: Mapping[str, Sequence[str]], k: int,
                    randint: Randint) -> dict[int, str]:
    """Up to ``k`` distinct words of the sample replaced by a common misspelling, as the misspelling script does:
    the candidates are the (word, misspelling) pairs of ``table`` whose word is in the sample, in table order; a
    pair is drawn with ``randint`` (a word with more misspellings is drawn more often) and drawn again while its
    word is already done; the word's first occurrence is replaced. Tokens match whole and in any case (the
    script: a case-sensitive substring of the raw text); the misspelling takes the token's case.
    Returns ``{token index: new text}``.
    """
    lower = [t.lower() for t in tokens]
    present = set(lower)
    pairs = [(word, miss) for word, misses in table.items() if word in present for miss in misses]
    words = list(dict.fromkeys(word for word, _ in pairs))
    out: dict[int, str] = {}
    done: list[str] = []
    while len(done) < k and len(done) < len(words):
        word, miss = pairs[randint(0, len(pairs) - 1)]
        if word in done:
            continue
        i = lower.index(word)
        out[i] = case_like(miss, tokens[i])
        done.append(word)
    return out


# -- word kinds --------------------------------------------------------------------------------------------------

#: The Penn tags whose words the synonym script replaces (nouns but not proper nouns, adjectives, adverbs, numbers).
SYNONYM_TAGS = frozenset({"CD", "JJ", "JJR", "JJS", "NN", "NNS", "RB", "RBR", "RBS"})


def synonym_candidates(tokens: Sequence[str], tags: Sequence[str], wordnet) -> tuple[list[tuple[str, str]], list[str]]:
    """The synonym script's candidates: ``(word, lemma)`` for every eligible-tagged token, every WordNet synset of
    it (all parts of speech, ``wordnet.synsets(word)``) and every lemma of the synset whose name differs from the
    word (case-sensitive); and the words with a candidate, in order of first appearance."""
    pairs: list[tuple[str, str]] = []
    order: list[str] = []
    for word, tag in zip(tokens, tags):
        if tag not in SYNONYM_TAGS:
            continue
        for synset in wordnet.synsets(word):
            for name in synset.lemma_names():
                if name != word:
                    pairs.append((word, name))
                    if word not in order:
                        order.append(word)
    return pairs, order


def replace_synonyms(tokens: Sequence[str], tags: Sequence[str], k: int, randint: Randint,
                     wordnet) -> dict[int, str]:
    """Up to ``k`` words replaced by WordNet synonyms, as the synonym script does: the first ``k`` words with a
    candidate (:func:`synonym_candidates`), in order of appearance, are each replaced once by the other side of a
    pair drawn with ``randint`` from the pairs that hold the word on either side (so a lemma listed in several
    synsets weighs more, and another token of the sample that has the word as a lemma can be drawn). The token
    replaced is the word's first occurrence (the script: its last), and a multi-word lemma is joined with spaces
    (the script keeps WordNet's underscores). Returns ``{token index: new text}``.
    """
    pairs, order = synonym_candidates(tokens, tags, wordnet)
    out: dict[int, str] = {}
    for word in order[:k]:
        pool = [p for p in pairs if word in p]
        a, b = pool[randint(0, len(pool) - 1)]
        new = b if a == word else a
        i = next(j for j, t in enumerate(tokens) if t == word and j not in out)
        out[i] = new.replace("_", " ")
    return out


def derange_block(n: int, randint: Randint) -> list[int]:
    """The word-order script's new order of ``n`` units (``n >= 3``): ``randint(1, 2)`` picks the first (1) or the
    last (2) ``randint(2, n - 1)`` units; each position of that block in turn takes, with ``randint``, one of the
    block's positions that is neither itself nor taken (itself when none is left). Not a uniform derangement:
    the block's last position can stay."""
    side = randint(1, 2)
    size = randint(2, n - 1)
    block = range(size) if side == 1 else range(n - size, n)
    order = list(range(n))
    taken: set[int] = set()
    for i in block:
        free = [j for j in block if j != i and j not in taken]
        order[i] = free[randint(0, len(free) - 1)] if free else i
        taken.add(order[i])
    return order
