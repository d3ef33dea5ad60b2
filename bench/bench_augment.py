"""Rows per second of ``dogood.transform`` inside a torch ``DataLoader`` (2 workers), as a ratio to the same loader
with no transform at all, measured in one run.

    DOGOOD_DATA_DIR=../shared/data NLTK_DATA=../shared/data/nltk_data python bench/bench_augment.py \
        [--docs 50] [--epochs 2] [--repeat 3] [--fresh-workers] [--only distort char_deletion]

FUNSD test in the Hub's columns (``id``, ``tokens``, ``bboxes`` at word level
as ``nielsr/funsd``, ``ner_tags``, ``image`` decoded to RGB) goes through a
``DataLoader(num_workers=2, batch_size=4)``: as it is (the **no transform**
loader: Arrow reading, PNG decoding, handing rows to the main process) and
through ``Dataset.with_transform(t)`` for each chain. Each loader runs one
warm-up epoch (resources load, caches fill), then ``--epochs`` timed epochs
with draws varied per epoch. ``--repeat`` runs every loader that many times
in rotation; a chain's figure is the median over the repeats of its rate
divided by the no-transform rate of the same repeat.

Two figures per chain, as the machine is shared: wall rows/s, and CPU seconds
per row (the workers' own CPU time, reported by each worker with its batches,
plus the main process's), whose ratio to the no-transform loader's is what
the chain would cost on an idle machine. Workers persist across epochs
(``persistent_workers=True``, as training loops that augment run them) unless
``--fresh-workers`` (re-forked every epoch, torch's default).

A third figure per chain, the **shift alone**: the chain's CPU seconds per page
on records in one process (``Transform.apply``, no row conversion), and the
loader's CPU per row over (no-transform CPU per row + shift alone): near 1, the
loader with the chain costs what reading a row plus the shift costs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import torch
from datasets import load_dataset

import dogood
from dogood.pipeline.build import build
from dogood.pipeline.recipe import load_recipe
from dogood.sources.rows import row_to_doc

NO_TRANSFORM = "no transform"
CHAINS = {
    NO_TRANSFORM: None,
    "empty chain": [],
    "image: distort (fold, curve, perspective)": [{"shift": "distort"}],
    "image: natural_background": [{"shift": "natural_background"}],
    "image: speckle": [{"shift": "speckle"}],
    "text: char_deletion, render: true": [{"shift": "char_deletion", "fraction": 0.1, "render": True}],
    "text: char_deletion, render: false": [{"shift": "char_deletion", "fraction": 0.1, "render": False}],
    "text: embedding_swap, render: true": [{"shift": "embedding_swap", "fraction": 0.1, "render": True}],
    "layout: merge (entity)": [{"shift": "merge", "level": "entity", "lambda_x": 10, "lambda_y": 5}],
    "layout: center_shift": [{"shift": "center_shift"}],
    "mixed: OneOf(text, layout, image)": [dogood.OneOf([{"shift": "char_deletion", "render": True},
                                                        {"shift": "center_shift"}, {"shift": "distort"}])],
}


def stamped(batch):
    """The collate function: the rows, with this worker's id and its process CPU time so far."""
    info = torch.utils.data.get_worker_info()
    return batch, (info.id if info else -1), time.process_time()


def measure(ds, chain, epochs: int, fresh_workers: bool) -> tuple[float, float]:
    """``(rows/s, CPU s per row)`` of the timed epochs."""
    t = None
    if chain is not None:
        t = dogood.transform(chain, seed=0, per_epoch=True)
        t.prepare()  # resources load once here; forked workers inherit them
        ds = ds.with_transform(t)
    loader = torch.utils.data.DataLoader(ds, batch_size=4, num_workers=2, collate_fn=stamped,
                                         persistent_workers=not fresh_workers)
    last: dict[int, float] = {}
    for _, worker, cpu in loader:  # warm-up epoch
        last[worker] = cpu
    start_wall, start_main = time.perf_counter(), time.process_time()
    n, worker_cpu = 0, 0.0
    for epoch in range(1, epochs + 1):
        if t is not None:
            t.set_epoch(epoch)
        seen: dict[int, float] = {}
        for rows, worker, cpu in loader:
            n += len(rows)
            seen[worker] = cpu
        for worker, cpu in seen.items():  # a fresh worker's clock starts at 0 at its fork
            worker_cpu += cpu - (last.get(worker, 0.0) if not fresh_workers else 0.0)
        last.update(seen)
    wall = time.perf_counter() - start_wall
    main_cpu = time.process_time() - start_main
    del loader
    return n / wall, (worker_cpu + main_cpu) / n


def shift_alone(ds, chain, epochs: int) -> float:
    """CPU seconds per page of the chain on records in this process (``Transform.apply``), with no row
    conversion around it: the bound the loader's cost with the chain approaches (issue 31, part 3)."""
    t = dogood.transform(chain, seed=0, per_epoch=True)
    t.prepare()
    docs = [row_to_doc(row, row["id"])[0] for row in ds]
    for doc in docs:  # warm-up (caches fill)
        t.apply(doc, epoch=0)
    start = time.process_time()
    for epoch in range(1, epochs + 1):
        for doc in docs:
            t.apply(doc, epoch=epoch)
    return (time.process_time() - start) / (epochs * len(docs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=50)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--fresh-workers", action="store_true", help="re-fork the workers every epoch")
    parser.add_argument("--no-alone", action="store_true", help="skip the shift-alone column")
    parser.add_argument("--only", nargs="*", help="chain names (substrings) to run beside the no-transform loader")
    args = parser.parse_args()
    chains = {k: v for k, v in CHAINS.items()
              if k == NO_TRANSFORM or not args.only or any(o in k for o in args.only)}
    rates: dict[str, list[float]] = {k: [] for k in chains}
    cpus: dict[str, list[float]] = {k: [] for k in chains}
    ratios: dict[str, list[float]] = {k: [] for k in chains}
    cpu_ratios: dict[str, list[float]] = {k: [] for k in chains}
    alone: dict[str, list[float]] = {k: [] for k in chains}
    started, load_start = time.strftime("%Y-%m-%d %H:%M"), os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        build(load_recipe("funsd"), Path(tmp) / "funsd", limit=args.docs, progress=False, box_level="word")
        ds = load_dataset(str(Path(tmp) / "funsd"), "original", split="test").remove_columns(["dogood"])
        for _ in range(args.repeat):
            for name, chain in chains.items():
                rate, cpu = measure(ds, chain, args.epochs, args.fresh_workers)
                rates[name].append(rate)
                cpus[name].append(cpu)
                if chain and not args.no_alone:
                    alone[name].append(shift_alone(ds, chain, args.epochs))
            for name in chains:
                ratios[name].append(rates[name][-1] / rates[NO_TRANSFORM][-1])
                cpu_ratios[name].append(cpus[NO_TRANSFORM][-1] / cpus[name][-1])
    workers = "re-forked every epoch" if args.fresh_workers else "persistent"
    print(f"{started}, load average {load_start[0]:.1f} at the start, {os.getloadavg()[0]:.1f} at the end; "
          f"{len(ds)} FUNSD test rows, DataLoader(batch_size=4, num_workers=2, {workers} workers), "
          f"{args.epochs} timed epochs after a warm-up, median of {args.repeat} repeat(s)\n")
    print("| chain | rows/s | vs no transform (wall) | CPU ms/row | vs no transform (CPU) | shift alone, CPU ms/page "
          "| loader's CPU over no transform + shift alone |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    med = statistics.median
    for name in chains:
        alone_ms = f"{1000 * med(alone[name]):.1f}" if alone[name] else ""
        bound = f"{med(cpus[name]) / (med(cpus[NO_TRANSFORM]) + med(alone[name])):.2f}" if alone[name] else ""
        print(f"| {name} | {med(rates[name]):.1f} | {med(ratios[name]):.2f} | {1000 * med(cpus[name]):.1f} "
              f"| {med(cpu_ratios[name]):.2f} | {alone_ms} | {bound} |")


if __name__ == "__main__":
    main()
