"""Throughput of each text shift on FUNSD test, beside a no-op and TextAttack's own Augmenter, in one run.

    NLTK_DATA=../shared/data/nltk_data python bench/bench_text_shifts.py [--source ...] [--docs 50] [--repeat 3]
        [--only embedding_swap bg_typo ...] [--bert-model PATH] [--textattack]

Every config of the ``funsd-t`` recipe is applied to the same pre-loaded
FUNSD test documents (``bert_attack`` only with ``--bert-model``, a local
masked LM). The no-op reference applies an empty chain (seeding and
provenance only) and writes each document's row (``document_to_row``, the
per-document cost of every build); each shift pass does the same with the
shift applied. Reported: token words per second through the pass
(median of the repeats, after one warm-up pass that also builds caches such
as the counter-fitted vectors) and, for the four TextAttack word swaps,
words per second of ``textattack.augmentation.Augmenter`` with the same
transformation and ``pct_words_to_swap=0.1`` on the same documents' text.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from dogood.build import apply_chain
from dogood.recipe import load_recipe
from dogood.schema import document_to_row, iob_tags
from dogood.shifts import make_shift
from dogood.sources.funsd import FunsdSource


def timed(fn, repeat: int) -> float:
    fn()  # warm-up: imports, caches
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def textattack_transformations() -> dict:
    from dogood.shifts._textattack import import_textattack
    from dogood.shifts.embedding_swap import _tools

    import_textattack()
    from textattack.transformations import WordSwapChangeNumber, WordSwapRandomCharacterDeletion

    from dogood.shifts.homoglyph_swap import _transformation as homoglyphs

    return {
        "embedding_swap": _tools("counter-fitted-glove", None, 50).transformation,
        "homoglyph_swap": homoglyphs(),
        "number_swap": WordSwapChangeNumber(),
        "char_deletion": WordSwapRandomCharacterDeletion(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", default=str(Path(__file__).resolve().parents[2] / "shared/data/funsd/dataset"))
    parser.add_argument("--docs", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", nargs="+", help="configs to run (default: all)")
    parser.add_argument("--bert-model", help="a local masked LM for the bert_attack config")
    parser.add_argument("--textattack", action="store_true",
                        help="also time TextAttack's Augmenter (importing textattack.augmentation may wait on the network)")
    args = parser.parse_args()

    source = FunsdSource(root=args.source, split="test")
    docs = [source.load(i) for i in source.ids()[: args.docs]]
    words = sum(len(iob_tags(d)[0]) for d in docs)
    recipe = load_recipe("funsd-t")
    specs = dict(recipe.configs)
    if args.bert_model:
        specs["bert_attack"] = [{**s, "model": args.bert_model} for s in specs["bert_attack"]]
    else:
        specs.pop("bert_attack", None)
    configs = {k: [make_shift(s) for s in v] for k, v in specs.items() if not args.only or k in args.only}

    def run(chain, name):
        return [document_to_row(apply_chain(d, chain, 0, name), "funsd") for d in docs]

    noop = words / timed(lambda: run([], "noop"), args.repeat)
    print(f"{len(docs)} FUNSD test documents, {words} token words")
    print(f"{'config':<30} {'words/s':>10} {'vs no-op':>9} {'TextAttack Augmenter words/s':>29}")
    print(f"{'(no-op)':<30} {noop:>10.0f} {1:>9.0%}")
    ta = None
    for name, chain in configs.items():
        rate = words / timed(lambda: run(chain, name), args.repeat)
        other = ""
        if args.textattack and name in ("embedding_swap", "homoglyph_swap", "number_swap", "char_deletion"):
            if ta is None:
                ta = textattack_transformations()
            from textattack.augmentation import Augmenter

            augmenter = Augmenter(transformation=ta[name], pct_words_to_swap=0.1, transformations_per_example=1)
            texts = [" ".join(d.words[i].text for i in iob_tags(d)[0]) for d in docs]
            other = f"{words / timed(lambda: [augmenter.augment(t) for t in texts], 1):.0f}"
        print(f"{name:<30} {rate:>10.0f} {rate / noop:>9.1%} {other:>29}", flush=True)


if __name__ == "__main__":
    main()
