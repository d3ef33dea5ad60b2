"""Throughput of each text shift on FUNSD test, beside a no-op and TextAttack's own Augmenter, in one run.

    NLTK_DATA=../shared/data/nltk_data python bench/bench_text_shifts.py [--source ...] [--docs 50] [--repeat 3]
        [--only embedding_swap bg_typo ...] [--bert-model PATH] [--textattack [--textattack-budget 60]]

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

from dogood.core.schema import document_to_row, iob_tags
from dogood.pipeline.recipe import load_recipe
from dogood.pipeline.worker import apply_chain
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


def random_bert(folder: Path, vocab_path: Path, layers: int = 12, hidden: int = 768) -> str:
    """A BERT-base-sized masked LM with random weights and a 30,522-token vocabulary, saved in ``folder``.

    No BERT weights exist offline; the compute per word of this model equals
    bert-base-uncased's, so its timing stands for the real one (its
    candidates are meaningless). The vocabulary is the GloVe top words.
    """
    import torch
    from transformers import BertConfig, BertForMaskedLM, BertTokenizerFast

    words = [w for w in vocab_path.read_text(encoding="utf-8").split() if w.isalpha() and w.islower()]
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + words[: 30522 - 5]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(vocab), hidden_size=hidden, num_hidden_layers=layers,
                        num_attention_heads=hidden // 64, intermediate_size=4 * hidden)
    BertForMaskedLM(config).save_pretrained(folder)
    BertTokenizerFast(vocab_file=str(folder / "vocab.txt")).save_pretrained(folder)
    return str(folder)


def augmenter_rate(augmenter, texts: list[str], budget: float) -> str:
    """Words/s of ``augmenter.augment`` over the texts, stopping after the document that passes ``budget`` seconds.

    The Augmenter re-runs its transformation on the whole text for every
    word it swaps (quadratic in the page length), so a full FUNSD page can
    take minutes; the rate is over the documents done, which are named.
    """
    augmenter.augment(texts[0].split()[0] if texts and texts[0] else "warm")  # imports, caches
    done = words = 0
    start = time.perf_counter()
    for text in texts:
        augmenter.augment(text)
        done, words = done + 1, words + len(text.split())
        if time.perf_counter() - start > budget:
            break
    return f"{words / (time.perf_counter() - start):.0f} ({done} docs)"


def textattack_transformations() -> dict:
    from dogood.language.lexicons import import_textattack
    from dogood.shifts.text.embedding_swap import _tools

    import_textattack()
    from textattack.transformations import WordSwapChangeNumber, WordSwapRandomCharacterDeletion

    from dogood.shifts.text.homoglyph_swap import _transformation as homoglyphs

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
    parser.add_argument("--bert-model", help="a local masked LM for the bert_attack config, or 'random-base' "
                                             "(a bert-base-sized model with random weights: same cost per word)")
    parser.add_argument("--textattack", action="store_true",
                        help="also time TextAttack's Augmenter on the same documents' text")
    parser.add_argument("--textattack-budget", type=float, default=60.0,
                        help="seconds per Augmenter timing (it is quadratic in page length; see augmenter_rate)")
    args = parser.parse_args()

    source = FunsdSource(root=args.source, split="test")
    docs = [source.load(i) for i in source.ids()[: args.docs]]
    words = sum(len(iob_tags(d)[0]) for d in docs)
    recipe = load_recipe("funsd-t")
    specs = dict(recipe.configs)
    if args.bert_model == "random-base":
        import tempfile

        data = Path(args.source).resolve().parents[1]  # .../data/funsd/dataset -> .../data
        args.bert_model = random_bert(Path(tempfile.mkdtemp()) / "bert", data / "glove" / "vocab.txt")
    if args.bert_model:
        specs["bert_attack"] = [{**s, "model": args.bert_model} for s in specs["bert_attack"]]
    else:
        specs.pop("bert_attack", None)
    configs = {k: [make_shift(s) for s in v] for k, v in specs.items() if not args.only or k in args.only}

    def run(chain, name):
        return [document_to_row(apply_chain(d, chain, 0), "funsd") for d in docs]

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
            other = augmenter_rate(augmenter, texts, args.textattack_budget)
        print(f"{name:<30} {rate:>10.0f} {rate / noop:>9.2%} {other:>29}", flush=True)


if __name__ == "__main__":
    main()
