"""CPU per page of a text shift that redraws words, epoch by epoch, with the page fit cache and without it (one run).

    DOGOOD_DATA_DIR=../shared/data NLTK_DATA=../shared/data/nltk_data python bench/bench_fit_cache.py \
        [--docs 12] [--epochs 4] [--chain char_deletion]

``dogood.transform([{shift: CHAIN, fraction: 0.1, render: true}], per_epoch=True)``
applied to FUNSD test records, epoch after epoch (other words change each
epoch), once with :data:`dogood.page.render.FIT_CACHE` keeping nothing
(every choice fits its words from scratch, as before issue 31) and once with
the cache (the first epoch fits each page whole). Also the same chain with
``render: false`` (what the shift costs without drawing). Prints CPU ms per
page per epoch, the cache's speed-up from the second epoch on, the records
and refinements computed after the first epoch, and checks that both runs
drew the same bytes.
"""

from __future__ import annotations

import argparse
import hashlib
import time

import dogood
from dogood.page import render


def run(docs, chain, epochs: int) -> tuple[list[float], str]:
    t = dogood.transform(chain, seed=0, per_epoch=True)
    t.prepare()
    digest, per_epoch = hashlib.sha256(), []
    for epoch in range(epochs):
        start = time.process_time()
        for doc in docs:
            digest.update(t.apply(doc, epoch=epoch).image.to_array().tobytes())
        per_epoch.append(1000 * (time.process_time() - start) / len(docs))
    return per_epoch, digest.hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=12)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--chain", default="char_deletion")
    args = parser.parse_args()
    docs = list(dogood.read_documents("funsd", split="test", limit=args.docs))
    step = {"shift": args.chain, "fraction": 0.1}
    plain, _ = run(docs, [{**step, "render": False}], args.epochs)
    render.FIT_CACHE = render.FitCache(max_words=0)
    uncached, h0 = run(docs, [{**step, "render": True}], args.epochs)
    render.FIT_CACHE = cache = render.FitCache(max_words=10**6)
    cached, _ = run(docs, [{**step, "render": True}], 1)
    misses = cache.misses
    refined = sum(len(r.refined) for p in cache._pages.values() for r in p.records.values() if r is not None)
    later, h2 = run(docs, [{**step, "render": True}], args.epochs)  # the uncached run's draws; epoch 0 kept
    new_refined = sum(len(r.refined) for p in cache._pages.values() for r in p.records.values() if r is not None) - refined
    print(f"{len(docs)} FUNSD test pages, {args.chain} fraction 0.1, CPU ms per page by epoch\n")
    print("| run | " + " | ".join(f"epoch {e}" for e in range(args.epochs)) + " |")
    print("|---|" + "---:|" * args.epochs)
    print("| render: false | " + " | ".join(f"{v:.1f}" for v in plain) + " |")
    print("| render: true, no cache | " + " | ".join(f"{v:.1f}" for v in uncached) + " |")
    print(f"| render: true, cache (first sight: {cached[0]:.0f} ms a page, fitting it whole) | "
          + " | ".join(f"{v:.1f}" for v in later) + " |")
    tail = slice(1, None)
    speed = sum(uncached[tail]) / max(1e-9, sum(later[tail]))
    print(f"\nspeed-up from epoch 1 on: {speed:.1f}x; words fitted at first sight {misses}, after it "
          f"{cache.misses - misses}; refinements at first sight {refined}, after it {new_refined}; "
          f"same bytes with and without the cache: {h0 == h2}")


if __name__ == "__main__":
    main()
