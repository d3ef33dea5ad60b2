"""Rows per second of ``dogood.transform`` inside a torch ``DataLoader`` (2 workers), per shift family, beside a no-op.

    DOGOOD_DATA_DIR=../shared/data NLTK_DATA=../shared/data/nltk_data python bench/bench_augment.py [--docs 50] [--epochs 2]

FUNSD test in the Hub's ``nielsr/funsd`` box convention (word-level boxes,
with the page in an ``image`` column) goes through
``Dataset.with_transform(t)`` and a ``DataLoader(num_workers=2,
batch_size=4)``; each chain is timed over ``--epochs`` epochs (draws vary per
epoch) after one warm-up epoch that loads its resources. The no-op is an
empty ``Compose`` in the same loader on the same rows: it measures what the
loader, Arrow decoding and the row conversion cost without any shift.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import torch
from datasets import load_dataset

import dogood
from dogood.pipeline.build import build
from dogood.pipeline.recipe import load_recipe

CHAINS = {
    "no-op": [],
    "image: distort (fold, curve, perspective)": [{"shift": "distort"}],
    "image: natural_background": [{"shift": "natural_background"}],
    "text: char_deletion, redrawn": [{"shift": "char_deletion", "fraction": 0.1, "render": True}],
    "text: embedding_swap, redrawn": [{"shift": "embedding_swap", "fraction": 0.1, "render": True}],
    "layout: merge (entity)": [{"shift": "merge", "level": "entity", "lambda_x": 10, "lambda_y": 5}],
    "layout: center_shift": [{"shift": "center_shift"}],
    "mixed: OneOf(text, layout, image)": [dogood.OneOf([{"shift": "char_deletion", "render": True},
                                                        {"shift": "center_shift"}, {"shift": "distort"}])],
}


def rows_per_second(ds, chain, epochs: int) -> float:
    t = dogood.transform(chain, seed=0, per_epoch=True)
    t.prepare()  # resources load here once; forked workers inherit them (they are re-forked every epoch)
    loader = torch.utils.data.DataLoader(ds.with_transform(t), batch_size=4, num_workers=2, collate_fn=lambda b: b)
    for _ in loader:  # warm-up epoch
        pass
    start = time.perf_counter()
    n = 0
    for epoch in range(1, epochs + 1):
        t.set_epoch(epoch)
        for batch in loader:
            n += len(batch)
    return n / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=50)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--only", nargs="*", help="chain names (substrings) to run beside the no-op")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        build(load_recipe("funsd"), Path(tmp) / "funsd", limit=args.docs, progress=False, box_level="word")
        ds = load_dataset(str(Path(tmp) / "funsd"), "original", split="test")
        ds = ds.remove_columns(["dogood"])
        chains = {k: v for k, v in CHAINS.items()
                  if k == "no-op" or not args.only or any(o in k for o in args.only)}
        rates = {name: rows_per_second(ds, chain, args.epochs) for name, chain in chains.items()}
    print(f"| chain ({len(ds)} FUNSD test rows, DataLoader, 2 workers, {args.epochs} epochs) | rows/s | vs no-op |")
    print("|---|---:|---:|")
    for name, rate in rates.items():
        print(f"| {name} | {rate:.1f} | {rate / rates['no-op']:.2f} |")


if __name__ == "__main__":
    main()
