"""Measure how often ``word_perturbation``'s ``synonym`` (style dogood) puts in a word of another part of speech.

For each FUNSD test form, the ``ms_word_synonym`` config's step (and, for more replacements, the same shift on
every entity: ``fraction=1.0``) is run twice with the seed a ``seed: 0`` build gives it: *before*, synonyms from
the most frequent sense of every part of speech, untagged (:func:`dogood.language.lexicons.first_sense_synonyms`,
funsd-t 2.1.0); *after*, from the most frequent sense of the part of speech the tagger gives the word in its
entity (:func:`dogood.language.lexicons.tagged_synonyms`, funsd-t 2.2.0). Each replacement's entity is tagged
again with the new word in place (:mod:`dogood.language.pos_tagger`); a replacement *differs* when the new word's
Penn tag is not the old word's, and *differs in class* when even the class (noun, verb, adjective, adverb, other)
is not. Tagger noise counts in both (``FAX`` -> ``FACSIMILE`` in ``FAX NO.`` is tagged NN then JJ), so
*other sense* says directly whether the synonym came from a sense of another part of speech than the word's tag
(no synset of the tag's part of speech holds both words: ``results`` the noun -> ``ensues``). Proper nouns
replaced (the old word tagged NNP or NNPS) are counted too::

    python bench/measure_synonym_tags.py            # all 50 FUNSD test forms
    python bench/measure_synonym_tags.py --limit 5
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = Path(os.environ.setdefault("DOGOOD_DATA_DIR", str(ROOT.parent / "shared" / "data")))
os.environ.setdefault("NLTK_DATA", str(DATA / "nltk_data"))

from dogood.core.seeds import step_seed  # noqa: E402
from dogood.language.lexicons import first_sense_synonyms  # noqa: E402
from dogood.language.selection import text_samples  # noqa: E402
from dogood.language.words import case_like  # noqa: E402
from dogood.shifts.text.word_perturbation import WordPerturbation, core_tags  # noqa: E402
from dogood.sources.funsd import FunsdSource  # noqa: E402


class Untagged(WordPerturbation):
    """``synonym`` as funsd-t 2.1.0 made it: first senses of every part of speech, no tagger."""

    name = ""

    def _synonym(self, doc, sample, k, rng, edits):
        def synonym(core):
            options = first_sense_synonyms(core.lower())
            return case_like(options[int(rng.integers(len(options)))], core) if options else None

        return self.replace_cores(doc, sample, k, rng, edits, synonym)


def word_class(tag: str) -> str:
    return {"N": "noun", "V": "verb", "J": "adjective", "R": "adverb"}.get(tag[:1], "other")


def same_sense(old: str, new: str, tag: str) -> bool:
    """Whether a synset of the part of speech of ``tag`` holds both words (their cores, base forms)."""
    from dogood.language.lexicons import wordnet
    from dogood.language.words import split_word

    wn = wordnet()
    pos = {"N": "n", "V": "v", "J": "a", "R": "r"}.get(tag[:1])
    if pos is None:
        return False
    a, b = split_word(old)[1].lower(), split_word(new)[1].lower()
    b_bases = {b, wn.morphy(b, pos) or b}
    return any(b_bases & set(n.lower() for n in s.lemma_names()) for s in wn.synsets(a, pos))


def measure(shift, docs) -> Counter:
    counts = Counter()
    for doc in docs:
        seed = step_seed(0, doc.id, 0, WordPerturbation(**shift.params()).step_key())
        out = shift(doc, seed)
        samples = {i: s for s in text_samples(doc, shift.labels) for i in s}
        for i, (a, b) in enumerate(zip(doc.words, out.words)):
            if a.text == b.text:
                continue
            sample = samples[i]
            before = core_tags(doc, sample).get(i)
            after = core_tags(out, sample).get(i)
            counts["replacements"] += 1
            counts["differs"] += before != after
            counts["differs_in_class"] += word_class(before or "") != word_class(after or "")
            counts["proper_noun"] += before in ("NNP", "NNPS")
            counts["other_sense"] += not same_sense(a.text, b.text, before or "")
            counts[f"examples:{a.text}->{b.text}"] += before != after
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--funsd", default=str(DATA / "funsd" / "dataset"))
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args(argv)
    source = FunsdSource(root=args.funsd, split="test")
    docs = [source.load(i) for i in source.ids()[: args.limit]]
    print("| synonyms | step | replacements | tag differs | class differs | other sense | proper nouns replaced |")
    print("|---|---|---:|---:|---:|---:|---:|")
    examples = {}
    for fraction in (0.1, 1.0):
        for label, cls in (("untagged (2.1.0)", Untagged), ("tagged (2.2.0)", WordPerturbation)):
            shift = cls(kind="synonym", per_sample=1, fraction=fraction)
            shift.prepare()
            c = measure(shift, docs)
            n = max(c["replacements"], 1)
            step = "ms_word_synonym" if fraction == 0.1 else "fraction=1.0"
            print(f"| {label} | {step} | {c['replacements']} | {c['differs']} ({c['differs'] / n:.1%}) | "
                  f"{c['differs_in_class']} ({c['differs_in_class'] / n:.1%}) | "
                  f"{c['other_sense']} ({c['other_sense'] / n:.1%}) | {c['proper_noun']} |")
            examples[(label, fraction)] = [k.split(":", 1)[1] for k, v in c.most_common() if k.startswith("ex") and v]
    for (label, fraction), found in examples.items():
        print(f"\n{label}, fraction={fraction}: tag changed in e.g. {', '.join(found[:8]) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
