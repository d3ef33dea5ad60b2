"""Throughput of scoring: reading FUNSD test documents (no-op) vs scoring them with the CRF baseline, in one run.

    python bench/bench_eval.py [--source ../shared/data/funsd/dataset] [--repeat 3] [--iterations 200]

Trains the baseline on FUNSD train first (reported: seconds), then, on the 50
test forms: the no-op pass reads each document and its gold IOB tags (what
``dogood eval`` does for any model); the baseline pass adds feature
extraction and CRF decoding with marginals. Reported: documents per second
(median of the repeats) and the baseline's share of the no-op rate.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from dogood.core.schema import iob_tags
from dogood.eval.metrics import entity_scores
from dogood.models.baseline import train_baseline, word_features
from dogood.sources.funsd import FunsdSource


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", default=str(Path(__file__).resolve().parents[2] / "shared/data/funsd/dataset"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=200)
    args = parser.parse_args()

    train = FunsdSource(root=args.source, split="train")
    test = FunsdSource(root=args.source, split="test")
    train_docs = [train.load(i) for i in train.ids()]
    start = time.perf_counter()
    model = train_baseline(train_docs, max_iterations=args.iterations)
    print(f"train: {len(train_docs)} documents, {args.iterations} iterations, {time.perf_counter() - start:.1f} s")

    ids = test.ids()
    noop, features, scored = [], [], []
    for _ in range(args.repeat):
        start = time.perf_counter()
        docs = [test.load(i) for i in ids]
        gold = [iob_tags(d)[1] for d in docs]
        noop.append(time.perf_counter() - start)

        start = time.perf_counter()
        for d in docs:
            word_features(d)
        features.append(time.perf_counter() - start)

        start = time.perf_counter()
        docs = [test.load(i) for i in ids]
        gold = [iob_tags(d)[1] for d in docs]
        preds = model.predict(docs)
        f1 = entity_scores(gold, [list(preds[d.id].tags) for d in docs])["f1"]
        scored.append(time.perf_counter() - start)
    n = len(ids)
    rate_noop = n / statistics.median(noop)
    rate_scored = n / statistics.median(scored)
    print(f"{'pass':<22} {'docs/s':>8} {'vs no-op':>9}")
    print(f"{'no-op (read + gold)':<22} {rate_noop:>8.0f} {1.0:>9.0%}")
    print(f"{'features only':<22} {n / statistics.median(features):>8.0f} {'':>9}")
    print(f"{'baseline (read+score)':<22} {rate_scored:>8.0f} {rate_scored / rate_noop:>9.0%}")
    print(f"test entity F1: {f1:.4f}")


if __name__ == "__main__":
    main()
