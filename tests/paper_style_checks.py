"""Helpers the ``style: paper`` tests share (tests/language/test_sample_tokens.py, test_pos_tagger.py,
tests/shifts/text/test_paper_style.py, test_char_perturbation_paper.py, test_word_perturbation_paper.py):
fixed sentences, a one-entity page, the chi-square check, the verb tables, wrappers of :mod:`moradi_reference`.
The ``wordnet`` and ``tagger`` fixtures are in the conftest files."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
from moradi_reference import Hangs

from dogood.core.document import Document, Entity, PageImage, Word
from dogood.language.chars import MISSPELLINGS
from dogood.language.moradi_ops import char_edit, pick_token
from dogood.language.moradi_verbs import negation, singular_plural_verb, verb_tense
from dogood.language.sample_tokens import tokenize_words

CHAR_EDITS = ("insertion", "deletion", "replacement", "swap", "repetition", "letter_case")

FIRST_ROW = "How many hearts does an octopus have?"  # the first data row of the scripts' TREC file

SENTENCES = (FIRST_ROW, "Send 1,000 copies of form B-12 to Mr. O'Neil today.", "Who wrote Hamlet?",
             "What is the diameter of a golf ball?")

SEEDS = range(300)


def tokens_of(text: str) -> list[str]:
    return [t.text for t in tokenize_words(text.split())]


def form(text: str, label: str = "question") -> Document:
    """One entity holding the words of ``text`` on one line of a wide white page."""
    words, x = [], 5
    for t in text.split():
        words.append(Word(t, (x, 10, x + 7 * len(t), 22)))
        x += 7 * len(t) + 5
    page = PageImage.from_array(np.full((40, max(x + 400, 800)), 255, np.uint8))
    return Document("hand", page, tuple(words), (Entity(0, label, tuple(range(len(words)))),))


def shifted_tokens(shift, text: str, seed: int) -> tuple[str, ...]:
    out = shift(form(text), seed)
    return tuple(tokens_of(" ".join(w.text for w in out.words)))


def same_distribution(ours: list, reference: list, alpha: float = 1e-3) -> float:
    """The chi-square test's p-value that two samples of outcomes come from one distribution; asserts > alpha."""
    from scipy.stats import chi2_contingency

    a, b = Counter(ours), Counter(reference)
    keys = sorted(set(a) | set(b), key=repr)
    if len(keys) < 2:
        assert a == b
        return 1.0
    p = chi2_contingency(np.array([[a[k] for k in keys], [b[k] for k in keys]])).pvalue
    assert p > alpha, (p, a.most_common(8), b.most_common(8))
    return p


def ours_char(kind: str, toks: list[str], rnd: random.Random) -> list[str] | None:
    j = pick_token(toks, 2, rnd.randint)
    if j is None:
        raise Hangs(toks)
    new = char_edit(toks[j], kind, rnd.randint)
    return None if new is None else toks[:j] + [new] + toks[j + 1:]


def char_features(old: tuple[str, ...], new: tuple[str, ...]) -> dict[str, object]:
    """What a character edit did: which token, the first and last differing positions, the letters it brought."""
    if new is None or old == new or len(old) != len(new):
        return {"outcome": "none" if new is None or old == new else "other"}
    i = next(k for k in range(len(old)) if old[k] != new[k])
    a, b = old[i], new[i]
    first = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), min(len(a), len(b)))
    last = next((k for k in range(1, min(len(a), len(b)) + 1) if a[-k] != b[-k]), 0)
    return {"token": i, "first": first, "from_end": last, "ends": (a[0], a[-1]) == (b[0], b[-1]),
            "added": "".join(sorted((Counter(b) - Counter(a)).elements()))}


def script_words(text: str, new_tokens: list[str] | None) -> tuple[str, ...] | None:
    """The words of ``text`` with the script's one changed token written into its word (None: dropped)."""
    if new_tokens is None:
        return None
    words = text.split()
    out = list(words)
    for tok, new in zip(tokenize_words(words), new_tokens):
        if new != tok.text:
            w = words[tok.word]
            out[tok.word] = w[:tok.start] + new + w[tok.end:]
    return tuple(out)


MISSPELLING_ROWS = [(word, miss) for word, misses in MISSPELLINGS.items() for miss in misses]

VERB_TABLE = [
    ("What/WP planet/NN is/VBZ known/VBN as/IN the/DT red/JJ planet/NN ?/.",
     "What planet is not known as the red planet ?", "What planet are known as the red planet ?",
     "What planet was known as the red planet ?"),
    ("He/PRP does/VBZ not/RB like/VB green/JJ eggs/NNS ./.",
     "He likes green eggs .", "He do not like green eggs .", "He did not like green eggs ."),
    ("What/WP does/VBZ a/DT barometer/NN measure/NN ?/.",
     "What does not do a barometer measure ?", "What do a barometer measure ?", "What did a barometer measure ?"),
    ("Why/WRB in/IN tennis/NN are/VBP zero/CD points/NNS called/VBN love/VB ?/.",
     "Why in tennis are not zero points called love ?", "Why in tennis is zero points called love ?",
     "Why in tennis were zero points called love ?"),
    ("They/PRP have/VBP finished/VBN the/DT work/NN ./.",
     "They have not finished the work .", "They has finished the work .", "They had finished the work ."),
    ("You/PRP can/MD swim/VB and/CC he/PRP will/MD sing/VB ./.",
     "You cannot swim and he will not sing .", None, None),
    ("I/PRP did/VBD n't/RB go/VB to/TO school/NN ./.", "I went to school .", None, "I do not go to school ."),
    ("She/PRP did/VBD not/RB go/VB to/TO school/NN ./.", "She went to school .", None,
     "She does not go to school ."),
    ("We/PRP went/VBD home/NN ./.", "We did not go home .", None, "We go home ."),
    ("The/DT man/NN was/VBD tall/JJ ./.", "The man was not tall .", "The man were tall .", "The man is tall ."),
    ("Who/WP has/VBZ not/RB eaten/VBN ?/.", "Who has eaten ?", "Who have not eaten ?", "Who had not eaten ?"),
    ("The/DT actor/NN who/WP plays/VBZ Batman/NNP lives/VBZ in/IN Paris/NNP ./.",
     "The actor who does not play Batman does not live in Paris .", "The actor who play Batman live in Paris .",
     "The actor who played Batman lived in Paris ."),
]

VERB_FIXES = [
    ("He/PRP does/VBZ n't/RB really/RB like/IN green/JJ eggs/NNS ./.", "negation", "He",
     "He does really like green eggs ."),  # the script drops everything after 'does' (no VB comes)
    ("I/PRP wo/MD n't/RB go/VB ./.", "negation", "I wo go .", "I will go ."),
    ("I/PRP am/VBP happy/JJ ./.", "singular_plural_verb", "I ams happy .", "I are happy ."),
    ("What/WP causes/VBZ rain/NN ?/.", "negation", "What does not caus rain ?", "What does not cause rain ?"),
    ("What/WP causes/VBZ rain/NN ?/.", "singular_plural_verb", "What caus rain ?", "What cause rain ?"),
    ("It/PRP uses/VBZ the/DT machine/NN ./.", "negation", "It does not us the machine .",
     "It does not use the machine ."),
    ("Is/VBZ this/DT the/DT largest/JJS city/NN ?/.", "negation", "does not I this the largest city ?",
     "Is not this the largest city ?"),
    ("Is/VBZ this/DT the/DT largest/JJS city/NN ?/.", "singular_plural_verb", "I this the largest city ?",
     "Are this the largest city ?"),
    ("Who/WP went/VBD first/RB ?/.", "verb_tense", "Who first ?", None),  # no subject: the verb stays
    ("You/PRP was/VBD first/RB ?/.", "verb_tense", "You am first ?", "You are first ?"),
    ("He/PRP does/VBZ not/RB play/VB tennis/NN ./.", "negation", "He plaies tennis .", "He plays tennis ."),
    ("Where/WRB is/VBZ", "negation", "IndexError", "Where is not"),
]

RULES = {"negation": negation, "singular_plural_verb": singular_plural_verb, "verb_tense": verb_tense}


def apply_rule(kind: str, tagged: str) -> tuple[str | None, int]:
    pairs = [p.rsplit("/", 1) for p in tagged.split()]
    toks, tags = [a for a, _ in pairs], [b for _, b in pairs]
    out, made = RULES[kind](toks, tags)
    new = " ".join(x for x in (out.get(i, t) for i, t in enumerate(toks)) if x)
    return (new if made else None), made
