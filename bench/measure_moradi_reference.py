"""How close ``style: paper`` comes to Moradi & Samwald's reference scripts, kind by kind; a Markdown table.

For each kind, each fixed sentence is put on a one-entity page and shifted with ``style: paper`` (numpy draws,
seeds 0..N-1), and the transcription of the reference script (tests/moradi_reference.py: Python's ``random``,
seeds 0..N-1) is run on the same sentence. The edits are compared feature by feature (which token, the first
and last changed character, the letters brought in; for word order the first and last moved word; for the
others the whole output): *p* is the smallest chi-square p-value over the features and sentences (two samples
of one distribution give p above 0.001 but in one test in a thousand), *TV* the largest total-variation
distance between the two empirical distributions. ``changed`` is the share of runs that changed the sentence
(the scripts drop the others). ``dogood`` gives the same for style dogood where the issue compared them
(same-row replacement keys; word-order block sizes). The verb kinds draw nothing: the share of the reading
notes' outputs they reproduce is given instead::

    python bench/measure_moradi_reference.py            # 300 seeds
    python bench/measure_moradi_reference.py --seeds 50
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
DATA = Path(os.environ.setdefault("DOGOOD_DATA_DIR", str(ROOT.parent / "shared" / "data")))
os.environ.setdefault("NLTK_DATA", str(DATA / "nltk_data"))

import moradi_reference as ref  # noqa: E402
import test_moradi_paper_style as t  # noqa: E402

from dogood.language.chars import MISSPELLINGS  # noqa: E402
from dogood.language.moradi_ops import ROW_NEIGHBOURS  # noqa: E402
from dogood.language.pos_tagger import pos_tags  # noqa: E402
from dogood.shifts.text.char_perturbation import CharPerturbation  # noqa: E402
from dogood.shifts.text.word_perturbation import WordPerturbation  # noqa: E402

CHAR_SENTENCES = (t.FIRST_ROW, "Send 1,000 copies of form B-12 to Mr. O'Neil today.", "Who wrote Hamlet?",
                  "What is the diameter of a golf ball?")
WORD_SENTENCES = CHAR_SENTENCES + ("What is the most common eye color?", "The actor who plays Batman lives in Paris.")


def compare(ours: list, theirs: list) -> tuple[float, float]:
    """(chi-square p-value, total-variation distance) of two samples of outcomes."""
    from scipy.stats import chi2_contingency

    a, b = Counter(ours), Counter(theirs)
    keys = sorted(set(a) | set(b), key=repr)
    tv = 0.5 * sum(abs(a[k] / len(ours) - b[k] / len(theirs)) for k in keys)
    if len(keys) < 2:
        return 1.0, tv
    return float(chi2_contingency(np.array([[a[k] for k in keys], [b[k] for k in keys]])).pvalue), tv


class Tally:
    """Per feature: ours against the scripts (seeds 0..N-1), and the scripts against themselves (seeds N..2N-1)."""

    def __init__(self):
        self.vs, self.noise, self.changed, self.ref_changed = [], [], [], []

    def add(self, ours: list[dict], theirs: list[dict], again: list[dict]) -> None:
        for feature in sorted(set().union(*ours, *theirs), key=str):
            o, t1, t2 = ([f.get(feature) for f in x] for x in (ours, theirs, again))
            self.vs.append(compare(o, t1))
            self.noise.append(compare(t2, t1))
        self.changed += [f.get("changed", True) for f in ours]
        self.ref_changed += [f.get("changed", True) for f in theirs]

    def row(self, kind: str, extra: str = "") -> str:
        return (f"| {kind} | {len(self.vs)} | {min(p for p, _ in self.vs):.3f} | {min(p for p, _ in self.noise):.3f} | "
                f"{max(tv for _, tv in self.vs):.3f} | {max(tv for _, tv in self.noise):.3f} | "
                f"{np.mean(self.changed):.1%} | {np.mean(self.ref_changed):.1%} | {extra} |")


def char_kind(kind: str, seeds: range) -> str:
    shift = CharPerturbation(kind=kind, style="paper", fraction=1.0)
    tally, same_row = Tally(), Counter()
    n = len(seeds)

    def feats(words, out):
        f = t.char_features(words, out)
        f.pop("ends", None)
        return {**f, "changed": "token" in f}

    for text in CHAR_SENTENCES:
        words = tuple(text.split())

        def script(s):
            return feats(words, t.script_words(text, ref.char_script(kind, t.tokens_of(text), random.Random(s))))

        tally.add([feats(words, tuple(w.text for w in shift(t.form(text), s).words)) for s in seeds],
                  [script(s) for s in seeds], [script(s + n) for s in seeds])
    extra = ""
    if kind == "replacement":
        for style in ("paper", "dogood"):
            shift = CharPerturbation(kind=kind, style=style, fraction=1.0)
            for text in CHAR_SENTENCES:
                for s in seeds:
                    for a, b in zip(text.split(), (w.text for w in shift(t.form(text), s).words)):
                        for x, y in zip(a, b):
                            if x != y:
                                same_row[style, y.lower() in ROW_NEIGHBOURS.get(x.lower(), "")] += 1
        extra = "same-row keys: paper {}/{}, dogood {}/{}".format(
            same_row["paper", True], same_row["paper", True] + same_row["paper", False],
            same_row["dogood", True], same_row["dogood", True] + same_row["dogood", False])
    return tally.row(f"char {kind}", extra)


def per_token(toks: list[str], out) -> dict:
    """Each token position's new text (the synonym kinds' outcome, marginal by position)."""
    if out is None:
        return {"changed": False}
    return {"changed": tuple(out) != tuple(toks), **{k: new for k, (old, new) in enumerate(zip(toks, out))}}


def misspelling(seeds: range) -> str:
    text = "We receive the equipment and information tomorrow"
    rows = [(w, m) for w, ms in MISSPELLINGS.items() for m in ms]
    shift = CharPerturbation(kind="misspelling", style="paper", per_sample=3, fraction=1.0)
    words = text.split()
    n = len(seeds)
    ours = [tuple(w.text for w in shift(t.form(text), s).words) for s in seeds]
    tally = Tally()
    tally.add([per_token(words, o) for o in ours],
              [per_token(words, ref.misspelling_script(text, rows, random.Random(s)).split()) for s in seeds],
              [per_token(words, ref.misspelling_script(text, rows, random.Random(s + n)).split()) for s in seeds])
    count = Counter(sum(a != b for a, b in zip(words, o)) for o in ours)
    return tally.row("char misspelling", f"words changed per sample: {dict(count)} (the scripts: 3)")


def word_kind(kind: str, seeds: range) -> str:
    shift = WordPerturbation(kind=kind, style="paper", fraction=1.0, per_sample=3 if kind == "synonym" else 1)
    tally = Tally()
    n = len(seeds)
    sentences = WORD_SENTENCES if kind != "synonym" else WORD_SENTENCES[3:]
    if kind == "word_order":  # words move with their punctuation (the scripts move "Mr" and "." apart): see below
        sentences = [s for s in sentences if "Mr." not in s]
    sizes = {"paper": Counter(), "dogood": Counter()}
    for text in sentences:
        toks = t.tokens_of(text)
        if kind == "synonym":
            from dogood.language.lexicons import wordnet

            tags = pos_tags(toks)

            def script(s):
                out = ref.synonym_script(list(zip(toks, tags)), wordnet(), random.Random(s))
                if out is None:
                    return None
                words = " ".join(t.script_words(text, [w.replace("_", " ") for w in out])).split()
                return aligned(text.split(), words)  # the same reading of the words as the shift's

            def feats(out):
                return per_token(text.split(), out)
        elif kind == "word_order":
            def script(s):
                return ref.order_script(toks, random.Random(s))

            def feats(out):
                if out is None or tuple(out) == tuple(toks):
                    return {"changed": False}
                moved = [k for k, (a, b) in enumerate(zip(toks, out)) if a != b]
                return {"changed": True, "first": moved[0], "last": moved[-1], "moved": len(moved)}
        else:
            def script(s):
                return ref.word_script(kind, toks, random.Random(s))

            def feats(out):
                return {"changed": tuple(out) != tuple(toks), "output": tuple(out)}

        ours = []
        for s in seeds:
            out = shift(t.form(text), s)
            if kind == "synonym":  # each word's new text, a multi-word synonym joined
                ours.append(per_token(text.split(), aligned(text.split(), [w.text for w in out.words])))
            else:
                ours.append(feats(t.shifted_tokens(shift, text, s)))
        tally.add(ours, [feats(script(s)) for s in seeds], [feats(script(s + n)) for s in seeds])
        if kind == "word_order":
            for style in sizes:
                sh = WordPerturbation(kind="word_order", style=style, fraction=1.0)
                for s in seeds:
                    out = t.shifted_tokens(sh, text, s)
                    if len(out) == len(toks):
                        sizes[style][sum(a != b for a, b in zip(toks, out))] += 1
    extra = ""
    if kind == "word_order":
        extra = "tokens moved: paper {}; dogood {}".format(*(
            ", ".join(f"{k}: {v}" for k, v in sorted(sizes[s].items())) for s in ("paper", "dogood")))
        inner = Tally()
        text = WORD_SENTENCES[1]
        toks = t.tokens_of(text)

        def feats(out):
            moved = [k for k, (a, b) in enumerate(zip(toks, out or toks)) if a != b]
            return {"first": moved[0], "last": moved[-1]} if moved else {}

        inner.add([feats(t.shifted_tokens(shift, text, s)) for s in seeds],
                  [feats(ref.order_script(toks, random.Random(s))) for s in seeds],
                  [feats(ref.order_script(toks, random.Random(s + n))) for s in seeds])
        extra += f"; on {text!r} (a period inside) p {min(p for p, _ in inner.vs):.3f}, by design"
    return tally.row(f"word {kind}", extra)


def aligned(before: list[str], after: list[str]) -> list[str]:
    """Each word of ``before``'s text after the shift (a word that became several: joined by spaces)."""
    out, j = [], 0
    for k, word in enumerate(before):
        if j < len(after) and after[j] == word:
            out.append(word)
            j += 1
            continue
        nxt = before[k + 1] if k + 1 < len(before) else None
        parts = [after[j]]
        j += 1
        while j < len(after) and after[j] != nxt and len(after) - j > len(before) - k - 1:
            parts.append(after[j])
            j += 1
        out.append(" ".join(parts))
    return out


def verb_kinds() -> list[str]:
    lines = []
    for k, kind in enumerate(t.RULES):
        rows = [(r[0], r[1 + k]) for r in t.VERB_TABLE]
        same = sum(t.apply_rule(kind, tagged)[0] == want for tagged, want in rows)
        fixes = [r for r in t.VERB_FIXES if r[1] == kind]
        fixed = sum(t.apply_rule(kind, r[0])[0] == r[3] for r in fixes)
        lines.append(f"| word {kind} | - | - | - | - | - | - | - | the notes' outputs: {same}/{len(rows)} equal; "
                     f"bug cases fixed: {fixed}/{len(fixes)} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=300)
    args = parser.parse_args(argv)
    seeds = range(args.seeds)
    print(f"{args.seeds} seeds per sentence")
    print("| kind | tests | p (min) | p noise (min) | TV (max) | TV noise (max) | changed | scripts changed | notes |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for kind in ("insertion", "deletion", "replacement", "swap", "repetition", "letter_case"):
        print(char_kind(kind, seeds), flush=True)
    print(misspelling(seeds), flush=True)
    for kind in ("deletion", "repetition", "synonym", "word_order"):
        print(word_kind(kind, seeds), flush=True)
    for line in verb_kinds():
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
