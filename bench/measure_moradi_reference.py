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
from dogood.language.chars import KEYBOARD_NEIGHBOURS, MISSPELLINGS  # noqa: E402
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


def row(kind: str, results: list[tuple[float, float]], changed: float, ref_changed: float, extra: str = "") -> str:
    p = min(r[0] for r in results)
    tv = max(r[1] for r in results)
    return f"| {kind} | {p:.3f} | {tv:.3f} | {changed:.1%} | {ref_changed:.1%} | {extra} |"


def char_kind(kind: str, seeds: range) -> str:
    shift = CharPerturbation(kind=kind, style="paper", fraction=1.0)
    results, changed, ref_changed, same_row = [], [], [], Counter()
    for text in CHAR_SENTENCES:
        words = tuple(text.split())
        ours = [t.char_features(words, tuple(w.text for w in shift(t.form(text), s).words)) for s in seeds]
        theirs = [t.char_features(words, t.script_words(text, ref.char_script(kind, t.tokens_of(text),
                                                                                random.Random(s)))) for s in seeds]
        for feature in ("outcome", "token", "first", "from_end", "added"):
            results.append(compare([f.get(feature) for f in ours], [f.get(feature) for f in theirs]))
        changed += ["token" in f for f in ours]
        ref_changed += ["token" in f for f in theirs]
    extra = ""
    if kind == "replacement":
        for style, near in (("paper", ROW_NEIGHBOURS), ("dogood", KEYBOARD_NEIGHBOURS)):
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
    return row(f"char {kind}", results, np.mean(changed), np.mean(ref_changed), extra)


def misspelling(seeds: range) -> str:
    text = "We receive the equipment and information tomorrow"
    rows = [(w, m) for w, ms in MISSPELLINGS.items() for m in ms]
    shift = CharPerturbation(kind="misspelling", style="paper", per_sample=3, fraction=1.0)
    ours = [tuple(w.text for w in shift(t.form(text), s).words) for s in seeds]
    theirs = [tuple(ref.misspelling_script(text, rows, random.Random(s)).split()) for s in seeds]
    words = Counter(sum(a != b for a, b in zip(text.split(), o)) for o in ours)
    return row("char misspelling", [compare(ours, theirs)], 1.0, 1.0,
               f"words changed per sample: {dict(words)} (the scripts: 3)")


def word_kind(kind: str, seeds: range) -> str:
    shift = WordPerturbation(kind=kind, style="paper", fraction=1.0, per_sample=3 if kind == "synonym" else 1)
    results, changed, ref_changed = [], [], []
    extra = ""
    sentences = WORD_SENTENCES if kind != "synonym" else WORD_SENTENCES[3:]
    sizes = {"paper": Counter(), "dogood": Counter()}
    for text in sentences:
        toks = t.tokens_of(text)
        ours = [t.shifted_tokens(shift, text, s) for s in seeds]
        if kind == "synonym":
            from dogood.language.lexicons import wordnet

            tags = pos_tags(toks)
            theirs = [ref.synonym_script(list(zip(toks, tags)), wordnet(), random.Random(s)) for s in seeds]
            theirs = [None if o is None else tuple(t.tokens_of(" ".join(o).replace("_", " "))) for o in theirs]
        elif kind == "word_order":
            theirs = [ref.order_script(toks, random.Random(s)) for s in seeds]
            theirs = [None if o is None else tuple(o) for o in theirs]
        else:
            theirs = [tuple(ref.word_script(kind, toks, random.Random(s))) for s in seeds]
        ours = [None if o == tuple(toks) else o for o in ours]
        results.append(compare(ours, theirs))
        if kind == "word_order":
            def block(out):
                moved = [k for k, (a, b) in enumerate(zip(toks, out or toks)) if a != b]
                return (moved[0], moved[-1]) if moved else None

            results.append(compare([block(o) for o in ours], [block(o) for o in theirs]))
            for style in sizes:
                sh = WordPerturbation(kind="word_order", style=style, fraction=1.0)
                for s in seeds:
                    out = t.shifted_tokens(sh, text, s)
                    if len(out) == len(toks):
                        sizes[style][sum(a != b for a, b in zip(toks, out))] += 1
        changed += [o is not None for o in ours]
        ref_changed += [o is not None for o in theirs]
    if kind == "word_order":
        extra = "tokens moved: paper {}, dogood {}".format(*(
            ", ".join(f"{k}: {v}" for k, v in sorted(sizes[s].items())) for s in ("paper", "dogood")))
    return row(f"word {kind}", results, np.mean(changed), np.mean(ref_changed), extra)


def verb_kinds() -> list[str]:
    lines = []
    for k, kind in enumerate(t.RULES):
        rows = [(r[0], r[1 + k]) for r in t.VERB_TABLE]
        same = sum(t.apply_rule(kind, tagged)[0] == want for tagged, want in rows)
        fixes = [r for r in t.VERB_FIXES if r[1] == kind]
        fixed = sum(t.apply_rule(kind, r[0])[0] == r[3] for r in fixes)
        lines.append(f"| word {kind} | - | - | - | - | the notes' outputs: {same}/{len(rows)} equal; "
                     f"bug cases fixed: {fixed}/{len(fixes)} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=300)
    args = parser.parse_args(argv)
    seeds = range(args.seeds)
    print(f"{args.seeds} seeds per sentence")
    print("| kind | p (min) | TV (max) | changed | scripts changed | notes |")
    print("|---|---:|---:|---:|---:|---|")
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
