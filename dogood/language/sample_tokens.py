"""A sample's words as the tokens NLTK's word tokenizer makes of them, and back.

Moradi & Samwald's scripts work on ``nltk.word_tokenize(text)``: Punkt
sentences, then the Treebank-style word tokenizer (``Date:`` is ``Date`` and
``:``, ``can't`` is ``ca`` and ``n't``, a double quote is ``````). On a
document a sample is a list of OCR words, so :func:`tokenize_words` runs the
same tokenizer on the words joined by spaces and says where each token lies
in its word; :func:`words_from_outputs` puts edited tokens back into words.
NLTK's pre-trained Punkt model is a download, so sentences are split by an
untrained :class:`~nltk.tokenize.punkt.PunktSentenceTokenizer` (a period
followed by a space ends a sentence; no abbreviation list), then each by
:class:`~nltk.tokenize.destructive.NLTKWordTokenizer`, the class
``word_tokenize`` uses. Nothing is downloaded.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class Token:
    """One token: its word (index in the sample), its span ``[start, end)`` in the word's text, and its spelling
    as the tokenizer gives it (``text``; a double quote is ```````` or ``''``)."""

    word: int
    start: int
    end: int
    text: str


@lru_cache(maxsize=1)
def _tokenizers():
    try:
        from nltk.tokenize.destructive import NLTKWordTokenizer
        from nltk.tokenize.punkt import PunktSentenceTokenizer
        from nltk.tokenize.util import align_tokens
    except ImportError:
        from dogood.core.errors import SourceError
        from dogood.core.extras import install_line

        raise SourceError(f"the paper-style text shifts need nltk, one of dogood's own dependencies: "
                          f"{install_line(None)}") from None
    return PunktSentenceTokenizer(), NLTKWordTokenizer(), align_tokens


def _spans(text: str) -> list[tuple[int, int, str]]:
    sentences, words, align_tokens = _tokenizers()
    out: list[tuple[int, int, str]] = []
    for s0, s1 in sentences.span_tokenize(text):
        sentence = text[s0:s1]
        try:  # what NLTKWordTokenizer.span_tokenize does, with one tokenize() for both spellings and spans
            spelled = words.tokenize(sentence)
            quotes = [m.group() for m in re.finditer(r"``|'{2}|\"", sentence)]
            raw = [quotes.pop(0) if quotes and t in ('"', "``", "''") else t for t in spelled]
            spans = align_tokens(raw, sentence)
        except ValueError:  # NLTK cannot align its tokens with the text (rare quote cases): whitespace tokens
            spelled, spans = [], []
        if len(spelled) != len(spans) or not spans:
            spans, pos = [], 0
            spelled = sentence.split()
            for tok in spelled:
                pos = sentence.index(tok, pos)
                spans.append((pos, pos + len(tok)))
                pos += len(tok)
        out += [(s0 + a, s0 + b, t) for (a, b), t in zip(spans, spelled)]
    return out


def tokenize_words(texts: Sequence[str]) -> list[Token]:
    """The tokens of the words ``texts`` (one sample, in reading order), as ``nltk.word_tokenize`` would make them
    of the words joined by single spaces (with the sentence splitter above); every token lies inside one word."""
    starts, pos = [], 0
    for t in texts:
        starts.append(pos)
        pos += len(t) + 1
    tokens = []
    for a, b, spelled in _spans(" ".join(texts)):
        w = bisect.bisect_right(starts, a) - 1
        tokens.append(Token(w, a - starts[w], min(b - starts[w], len(texts[w])), spelled))
    return tokens


def words_from_outputs(texts: Sequence[str], tokens: Sequence[Token], outputs: dict[int, str],
                       spaced: bool = False) -> dict[int, list[str]]:
    """Each word whose text changes -> its new words: the word's text with token ``j`` replaced by ``outputs[j]``
    (an empty output deletes the token), split at whitespace (an output may hold several words, ``"is not"``).

    ``spaced``: a changed token joined to a letter or digit of its word's next or previous token (``'s`` of
    ``It's``) is set apart by a space when its new text meets it with a letter or digit (``It is not``).
    An empty list means the word is gone; the first new word takes the word's place.
    """
    by_word: dict[int, list[int]] = {}
    for j, tok in enumerate(tokens):
        by_word.setdefault(tok.word, []).append(j)
    out: dict[int, list[str]] = {}
    for w in sorted({tokens[j].word for j in outputs}):
        text, pieces, pos = texts[w], [], 0
        changed: list[bool] = []
        for j in by_word[w]:
            tok = tokens[j]
            pieces.append(text[pos:tok.start])
            changed.append(False)
            old = text[tok.start:tok.end]
            new = outputs.get(j, old)
            pieces.append(new)
            changed.append(new != old)
            pos = tok.end
        pieces.append(text[pos:])
        changed.append(False)
        if spaced:
            pieces = _set_apart(pieces, changed)
        new = "".join(pieces)
        if new != text:  # a word that already held a space (rare OCR) stays one word
            out[w] = new.split() if not any(c.isspace() for c in text.strip()) else ([new] if new.strip() else [])
    return out


def _set_apart(pieces: list[str], changed: list[bool]) -> list[str]:
    """A space between two non-empty pieces that meet letter/digit to letter/digit where either one changed."""
    kept = [(p, c) for p, c in zip(pieces, changed) if p]
    out = [kept[0][0]] if kept else []
    for (a, ca), (b, cb) in zip(kept, kept[1:]):
        if (ca or cb) and a[-1].isalnum() and b[0].isalnum():
            out.append(" ")
        out.append(b)
    return out
