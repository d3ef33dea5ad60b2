"""CPU per page of a text shift that redraws words, epoch by epoch, with the page fit cache and without it (one run).

    DOGOOD_DATA_DIR=../shared/data NLTK_DATA=../shared/data/nltk_data python bench/bench_fit_cache.py \
        [--docs 12] [--epochs 4] [--chain char_deletion]

``dogood.transform([{shift: CHAIN, fraction: 0.1, render: true}], per_epoch=True)``
applied to FUNSD test records, epoch after epoch (other words change each
epoch), once with :data:`dogood.page.render.FIT_CACHE` keeping nothing
(every choice fits its words from scratch, as before issue 31), once with
the cache in memory (the first epoch fits each page whole: a persistent
DataLoader worker), and once with the cache on disk and memory emptied
before each epoch (a worker forked anew each epoch, torch's default: it reads
each page's fits, and the runs' choices kept with them, from the disk). Also
the same chain with ``render: false`` (what the shift costs without drawing).
Prints CPU ms per page per epoch, the cache's speed-up from the second epoch
on, the records and refinements computed after the first epoch, and checks
that the runs drew the same bytes.
"""

from __future__ import annotations

import argparse
import hashlib
import tempfile
import time

import dogood
from dogood.page import render


def run(docs, chain, epochs: int, folder=False, fresh: bool = False) -> tuple[list[float], str]:
    """CPU ms a page per epoch and a digest of the pages; ``folder``: the disk cache (``False``: memory only);
    ``fresh``: the memory cache emptied before each epoch (a worker forked anew)."""
    t = dogood.transform(chain, seed=0, per_epoch=True, fit_cache_dir=folder)
    t.prepare()
    digest, per_epoch = hashlib.sha256(), []
    for epoch in range(epochs):
        if fresh:
            render.FIT_CACHE = render.FitCache(max_words=10**6)
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
    with tempfile.TemporaryDirectory() as folder:
        run(docs, [{**step, "render": True}], 1, folder, fresh=True)  # the first epoch, onto the disk
        disk, h3 = run(docs, [{**step, "render": True}], args.epochs, folder, fresh=True)
    print(f"{len(docs)} FUNSD test pages, {args.chain} fraction 0.1, CPU ms per page by epoch\n")
    print("| run | " + " | ".join(f"epoch {e}" for e in range(args.epochs)) + " |")
    print("|---|" + "---:|" * args.epochs)
    print("| render: false | " + " | ".join(f"{v:.1f}" for v in plain) + " |")
    print("| render: true, no cache | " + " | ".join(f"{v:.1f}" for v in uncached) + " |")
    print(f"| render: true, cache in memory (first sight: {cached[0]:.0f} ms a page, fitting it whole) | "
          + " | ".join(f"{v:.1f}" for v in later) + " |")
    print("| render: true, cache on disk, memory emptied each epoch | " + " | ".join(f"{v:.1f}" for v in disk) + " |")
    tail = slice(1, None)
    speed = sum(uncached[tail]) / max(1e-9, sum(later[tail]))
    speed_disk = sum(uncached[tail]) / max(1e-9, sum(disk[tail]))
    print(f"\nspeed-up from epoch 1 on: {speed:.1f}x in memory, {speed_disk:.1f}x from the disk; words fitted at "
          f"first sight {misses}, after it {cache.misses - misses}; refinements at first sight {refined}, after it "
          f"{new_refined}; same bytes with and without the cache: {h0 == h2 == h3}")


if __name__ == "__main__":
    main()
