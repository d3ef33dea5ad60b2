"""Throughput of whole builds on FUNSD test: no-op recipe vs merge recipe, in one run.

    python bench/bench_build.py [--source ../shared/data/funsd/dataset] [--repeat 3] [--num-proc 1 2] [--splits test train]

Each build reads the 50 forms, applies the chain, and writes Parquet plus the card,
exactly as ``dogood build``. The no-op recipe (``funsd``, config ``original``) is the
reference: read and write only. Reported: documents per second (median of the
repeats) and the merge build's throughput as a fraction of the no-op's. Also the
cost of the merge shift alone (no I/O), per document.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from dogood.pipeline.build import build
from dogood.pipeline.recipe import load_recipe
from dogood.shifts import MergeBoxes
from dogood.sources.funsd import FunsdSource


def time_build(recipe_name: str, source: str, num_proc: int, repeat: int, splits: list[str]) -> tuple[list[float], int]:
    recipe = load_recipe(recipe_name)
    recipe.splits = splits
    times = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            report = build(recipe, Path(tmp) / "out", source_path=source, num_proc=num_proc, progress=False)
            times.append(time.perf_counter() - start)
    return times, sum(report.documents.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", default=str(Path(__file__).resolve().parents[2] / "shared/data/funsd/dataset"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--num-proc", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--splits", nargs="+", default=["test"], help="FUNSD splits to build (test: 50 forms, train: 149)")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()

    results = {"machine": f"{platform.machine()} {platform.processor() or ''}".strip(), "python": sys.version.split()[0], "runs": []}
    print(f"{'recipe':<10} {'config':<9} {'procs':>5} {'docs':>5} {'median s':>9} {'docs/s':>8} {'vs no-op':>9}")
    for num_proc in args.num_proc:
        baseline = None
        for recipe, config in (("funsd", "original"), ("funsd-l", "merge")):
            times, docs = time_build(recipe, args.source, num_proc, args.repeat, args.splits)
            med = statistics.median(times)
            rate = docs / med
            baseline = baseline or rate
            print(f"{recipe:<10} {config:<9} {num_proc:>5} {docs:>5} {med:>9.3f} {rate:>8.1f} {rate / baseline:>8.0%}")
            results["runs"].append({"recipe": recipe, "config": config, "num_proc": num_proc, "docs": docs,
                                    "seconds": times, "docs_per_s": rate, "vs_noop": rate / baseline})

    source = FunsdSource(root=args.source, split="test")
    docs = [source.load(i) for i in source.ids()]
    shift = MergeBoxes(10, 5)
    start = time.perf_counter()
    for _ in range(args.repeat):
        for doc in docs:
            shift(doc, 0)
    per_doc = (time.perf_counter() - start) / (args.repeat * len(docs))
    words = np.mean([len(d.words) for d in docs])
    print(f"merge shift alone: {per_doc * 1000:.2f} ms/doc ({1 / per_doc:.0f} docs/s, {words:.0f} words/doc)")
    results["merge_shift_ms_per_doc"] = per_doc * 1000
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
