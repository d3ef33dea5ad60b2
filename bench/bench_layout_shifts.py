"""Throughput of each layout shift on FUNSD test, beside a no-op, with Move's scoring cost apart, in one run.

    DOGOOD_DATA_DIR=../shared/data python bench/bench_layout_shifts.py [--docs 50] [--repeat 3] [--only move ...]

Every single-shift config of the ``funsd-l`` and ``funsd-fa`` recipes is
applied to the same pre-loaded FUNSD test documents and each document's
row is made (``document_to_row``: the per-document cost of every build,
PNG encoding of changed pages included). The no-op applies an empty chain.
Reported: documents per second (median of the repeats after one warm-up).

Move is reported three ways: scoring alone (``entity_strength``: the
scorer on the page and its layout shuffles, no cache), the whole shift with
an empty strength cache (each repeat starts from a fresh cache folder), and
with the cache filled (what a second config or seed costs). The scorer is
the baseline (trained once into the cache folder when missing).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from dogood.core.schema import document_to_row
from dogood.pipeline.build import apply_chain
from dogood.pipeline.recipe import load_recipe
from dogood.sources.funsd import FunsdSource


def timed(fn, repeat: int, before=None) -> float:
    if before:
        before()
    fn()  # warm-up: imports, models, caches
    times = []
    for _ in range(repeat):
        if before:
            before()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", default=str(Path(__file__).resolve().parents[2] / "shared/data/funsd/dataset"))
    parser.add_argument("--docs", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", nargs="+", help="configs to run (default: all single-shift configs)")
    args = parser.parse_args()

    os.environ.setdefault("DOGOOD_CACHE", tempfile.mkdtemp(prefix="dogood-bench-"))
    source = FunsdSource(root=args.source, split="test")
    docs = [source.load(i) for i in source.ids()[: args.docs]]
    for doc in docs:
        doc.image.to_array()  # decode once, outside the timings
    configs = {}
    for name in ("funsd-l", "funsd-fa"):
        try:
            recipe = load_recipe(name)
        except Exception:  # noqa: BLE001 - a recipe not written yet is left out
            continue
        for config in recipe.configs:
            if len(recipe.configs[config]) == 1 and (not args.only or config in args.only):
                configs[config] = recipe.chain(config)

    def run(chain, name):
        return [document_to_row(apply_chain(d, chain, 0), "funsd") for d in docs]

    n = len(docs)
    noop = n / timed(lambda: run([], "noop"), args.repeat)
    print(f"{n} FUNSD test documents")
    print(f"{'config':<28} {'docs/s':>9} {'vs no-op':>9}")
    print(f"{'(no-op)':<28} {noop:>9.1f} {1:>9.0%}")
    for name, chain in configs.items():
        if chain[0].name == "move":
            move = chain[0]
            move.prepare()
            from dogood.shifts.layout.move import entity_strength

            score = n / timed(lambda: [entity_strength(d, move.model, move.shuffles, move.score_seed) for d in docs],
                              args.repeat)
            print(f"{name + ' (scoring only)':<28} {score:>9.1f} {score / noop:>9.1%}")

            def fresh_cache():
                os.environ["DOGOOD_CACHE"] = tempfile.mkdtemp(prefix="dogood-bench-")
                from dogood.models import default_baseline_path

                default_baseline_path().parent.mkdir(parents=True, exist_ok=True)

            cold = n / timed(lambda: run(chain, name), args.repeat, before=fresh_cache)
            print(f"{name + ' (empty cache)':<28} {cold:>9.1f} {cold / noop:>9.1%}")
            warm = n / timed(lambda: run(chain, name), args.repeat)
            print(f"{name + ' (cached scores)':<28} {warm:>9.1f} {warm / noop:>9.1%}", flush=True)
            continue
        rate = n / timed(lambda: run(chain, name), args.repeat)
        print(f"{name:<28} {rate:>9.1f} {rate / noop:>9.1%}", flush=True)


if __name__ == "__main__":
    main()
