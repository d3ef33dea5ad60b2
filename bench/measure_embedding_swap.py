"""`embedding_swap`'s swaps on FUNSD test, checked for meaning changes with WordNet and a part-of-speech tagger.

    DOGOOD_DATA_DIR=../shared/data NLTK_DATA=../shared/data/nltk_data python bench/measure_embedding_swap.py
        [--docs 50] [--fraction 0.1] [--show 20]

Every FUNSD test page is shifted as ``funsd-t``'s ``embedding_swap`` config shifts it (``fraction: 0.1``,
the shift's defaults, the recipe's seed); each swap (source word -> new word, lower-cased cores) is checked:

- ``pos``: the word's part of speech (universal tags from Penn: :mod:`dogood.language.pos_tagger`, NLTK's
  averaged perceptron) in its entity's words (its line of the form; words in capitals lower-cased), before and
  after the swap, differs (``pos beyond noun/verb``: other than a noun for a verb or back, which TextAttack's
  ``PartOfSpeech`` allows by default);
- ``negation/modal``: a negation or a modal verb goes in or out (``not``, ``no``, ``never``...; ``may``,
  ``might``, ``must``...);
- ``antonym``: the new word is a WordNet antonym of the old (direct, or of a similar adjective);
- ``unrelated`` (reported apart, a looser check): both words are in WordNet and no sense of one lies within two
  WordNet links of a sense of the other (synonyms, hypernyms, hyponyms, similar, also-see, verb groups,
  derivations).

A swap is *meaning-changing* when ``pos``, ``negation/modal`` or ``antonym`` flags it. Run with ``PYTHONPATH``
pointing at a checkout to measure that checkout (main before issue 40 against after).
"""

from __future__ import annotations

import argparse
import os
from collections import Counter
from pathlib import Path

from dogood.core.seeds import step_seed
from dogood.language.lexicons import wordnet
from dogood.language.pos_tagger import pos_tags
from dogood.language.words import split_word
from dogood.shifts import SHIFTS
from dogood.sources.funsd import FunsdSource

DATA = Path(os.environ.get("DOGOOD_DATA_DIR", Path(__file__).resolve().parents[2] / "shared" / "data"))

NEGATIONS = {"no", "not", "never", "none", "nobody", "nothing", "nowhere", "neither", "nor", "without", "cannot",
             "non", "nay", "n't"}
MODALS = {"can", "could", "may", "might", "must", "shall", "should", "will", "would", "ought"}
#: Penn Treebank tags to the universal tags (Petrov et al. 2012's mapping, as NLTK's ``en-ptb.map``).
UNIVERSAL = {**{t: "NOUN" for t in ("NN", "NNS", "NNP", "NNPS")},
             **{t: "VERB" for t in ("VB", "VBD", "VBG", "VBN", "VBP", "VBZ", "MD")},
             **{t: "ADJ" for t in ("JJ", "JJR", "JJS")}, **{t: "ADV" for t in ("RB", "RBR", "RBS", "WRB")},
             **{t: "PRON" for t in ("PRP", "PRP$", "WP", "WP$")}, **{t: "DET" for t in ("DT", "PDT", "WDT", "EX")},
             "IN": "ADP", "CC": "CONJ", "CD": "NUM", "RP": "PRT", "TO": "PRT", "POS": "PRT", "UH": "X", "FW": "X",
             "SYM": "X", "LS": "X"}


def universal(tag: str) -> str:
    return UNIVERSAL.get(tag, ".")


def antonyms(word: str) -> set[str]:
    wn = wordnet()
    out = set()
    for synset in wn.synsets(word):
        for s in [synset, *synset.similar_tos()]:
            for lemma in s.lemmas():
                out.update(a.name().lower() for a in lemma.antonyms())
    return out


def neighbourhood(word: str) -> set:
    """Synsets within two WordNet links of any sense of ``word``."""
    wn = wordnet()

    def links(s):
        out = set(s.hypernyms() + s.hyponyms() + s.similar_tos() + s.also_sees() + s.verb_groups()
                  + s.instance_hypernyms())
        for lemma in s.lemmas():
            out.update(d.synset() for d in lemma.derivationally_related_forms())
        return out

    first = set(wn.synsets(word))
    second = set(first)
    for s in first:
        second |= links(s)
    return second


def related(a: str, b: str) -> bool | None:
    wn = wordnet()
    if not wn.synsets(a) or not wn.synsets(b):
        return None
    return bool(neighbourhood(a) & (neighbourhood(b) | set(wn.synsets(b))))


def prose(word: str) -> str:
    """A word as the tagger reads prose: in lower case if written in capitals (forms often are)."""
    return word.lower() if word.isupper() else word


def swaps_of(doc, shifted):
    """(source core, new core, context tags before, after) per changed word: context = its entity's words."""
    owner = {}
    for entity in doc.entities:
        for i in entity.word_ids:
            owner[i] = list(entity.word_ids)
    out = []
    for i, (a, b) in enumerate(zip(doc.words, shifted.words)):
        if a.text == b.text:
            continue
        line = owner.get(i, [i])
        before = [prose(doc.words[j].text) for j in line]
        after = [prose(shifted.words[j].text if j != i else b.text) for j in line]
        k = line.index(i)
        tags_before, tags_after = pos_tags(before), pos_tags(after)
        out.append((split_word(a.text)[1].lower(), split_word(b.text)[1].lower(), tags_before[k], tags_after[k]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=50)
    parser.add_argument("--fraction", type=float, default=0.1)
    parser.add_argument("--show", type=int, default=20)
    args = parser.parse_args()
    source = FunsdSource(root=str(DATA / "funsd/dataset"), split="test")
    shift = SHIFTS["embedding_swap"](fraction=args.fraction)
    swaps = []
    for doc_id in source.ids()[: args.docs]:
        doc = source.load(doc_id)
        swaps += swaps_of(doc, shift(doc, step_seed(0, doc.id, 0, shift.seed_key())))
    flags = Counter()
    shown = []
    for old, new, before, after in swaps:
        why = []
        if universal(before) != universal(after):
            why.append("pos")
            if {universal(before), universal(after)} != {"NOUN", "VERB"}:
                flags["pos beyond noun/verb"] += 1
        if (old in NEGATIONS | MODALS) != (new in NEGATIONS | MODALS) or (old in NEGATIONS) != (new in NEGATIONS):
            why.append("negation/modal")
        if new in antonyms(old):
            why.append("antonym")
        for w in why:
            flags[w] += 1
        if why:
            flags["meaning-changing"] += 1
            shown.append(f"{old}->{new} ({', '.join(why)})")
        rel = related(old, new)
        if rel is False:
            flags["unrelated"] += 1
        if rel is not None:
            flags["both in WordNet"] += 1
    n = len(swaps)
    print(f"{n} swaps on {args.docs} FUNSD test pages (fraction {args.fraction}); load {os.getloadavg()[0]:.1f}")
    for key in ("meaning-changing", "pos", "pos beyond noun/verb", "negation/modal", "antonym"):
        print(f"- {key}: {flags[key]} ({flags[key] / max(n, 1):.1%})")
    print(f"- unrelated in WordNet: {flags['unrelated']} of {flags['both in WordNet']} swaps with both words in it "
          f"({flags['unrelated'] / max(flags['both in WordNet'], 1):.1%})")
    print("flagged, e.g.: " + "; ".join(shown[: args.show]))


if __name__ == "__main__":
    main()
