"""Rows per second of ``dogood.transform`` inside a torch ``DataLoader`` (2 workers), as a ratio to the same loader
with no transform at all, measured in one run: torch's default workers (forked anew each epoch) and persistent
workers side by side, the first epoch and the steady state.

    DOGOOD_DATA_DIR=../shared/data NLTK_DATA=../shared/data/nltk_data python bench/bench_augment.py \
        [--docs 50] [--epochs 2] [--repeat 3] [--modes default persistent] [--only distort char_deletion]

FUNSD test in the Hub's columns (``id``, ``tokens``, ``bboxes`` at word level
as ``nielsr/funsd``, ``ner_tags``, ``image`` decoded to RGB) goes through a
``DataLoader(num_workers=2, batch_size=4)``: as it is (the **no transform**
loader: Arrow reading, PNG decoding, handing rows to the main process) and
through ``Dataset.with_transform(t)`` for each chain, with nothing else set up:
no ``t.prepare()``, the transform's default disk fit cache (an empty folder per
loader, so the first epoch pays for fitting), the epoch set with
``t.set_epoch`` before each epoch. Each loader runs a **first epoch** (workers
start, resources load, pages are fitted), then ``--epochs`` timed epochs with
other draws (the **steady state**). ``--repeat`` runs every loader that many
times in rotation; a chain's figure is the median over the repeats of its
rate divided by the no-transform rate of the same repeat and worker mode.

Workers: ``default`` is torch's default (``persistent_workers=False``: forked
anew every epoch, as the HF Trainer runs them), ``persistent`` keeps them.

Figures per chain and mode, as the machine is shared: wall rows/s, and CPU
seconds per row (the workers' own CPU time, reported by each worker with its
batches, plus the main process's), whose ratio to the no-transform loader's is
what the chain would cost on an idle machine.

The **shift alone** (``--alone``): the chain's CPU seconds per page on records
in one process (``Transform.apply``, no row conversion), and the loader's CPU
per row over (no-transform CPU per row + shift alone).
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


def measure(ds, chain, epochs: int, persistent: bool) -> dict[str, float]:
    """The first epoch's and the steady state's rows/s, and the steady state's CPU s per row."""
    t = None
    with tempfile.TemporaryDirectory() as fits:
        if chain is not None:
            t = dogood.transform(chain, seed=0, per_epoch=True, fit_cache_dir=fits)  # empty: the first epoch fits
            ds = ds.with_transform(t)
        loader = torch.utils.data.DataLoader(ds, batch_size=4, num_workers=2, collate_fn=stamped,
                                             persistent_workers=persistent)
        last: dict[int, float] = {}
        start = time.perf_counter()
        if t is not None:
            t.set_epoch(0)  # as a training loop does before each epoch
        n_first = 0
        for rows, worker, cpu in loader:  # the first epoch
            n_first += len(rows)
            last[worker] = cpu
        first = n_first / (time.perf_counter() - start)
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
                worker_cpu += cpu - (last.get(worker, 0.0) if persistent else 0.0)
            last.update(seen)
        wall = time.perf_counter() - start_wall
        main_cpu = time.process_time() - start_main
        del loader
    return {"first": first, "steady": n / wall, "cpu": (worker_cpu + main_cpu) / n}


def shift_alone(ds, chain, epochs: int) -> float:
    """CPU seconds per page of the chain on records in this process (``Transform.apply``), with no row
    conversion around it: the bound the loader's cost with the chain approaches (issue 31, part 3)."""
    t = dogood.transform(chain, seed=0, per_epoch=True, fit_cache_dir=False)  # memory: warm after the first pass
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
    parser.add_argument("--modes", nargs="*", choices=("default", "persistent"), default=["default", "persistent"],
                        help="torch's default workers (forked anew each epoch) and/or persistent ones")
    parser.add_argument("--alone", action="store_true", help="add the shift-alone column")
    parser.add_argument("--only", nargs="*", help="chain names (substrings) to run beside the no-transform loader")
    args = parser.parse_args()
    chains = {k: v for k, v in CHAINS.items()
              if k == NO_TRANSFORM or not args.only or any(o in k for o in args.only)}
    runs: dict[tuple[str, str], list[dict[str, float]]] = {(k, m): [] for k in chains for m in args.modes}
    ratios: dict[tuple[str, str], dict[str, list[float]]] = {key: {"first": [], "steady": [], "cpu": []}
                                                            for key in runs}
    alone: dict[str, list[float]] = {k: [] for k in chains}
    started, load_start = time.strftime("%Y-%m-%d %H:%M"), os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        build(load_recipe("funsd"), Path(tmp) / "funsd", limit=args.docs, progress=False, box_level="word")
        ds = load_dataset(str(Path(tmp) / "funsd"), "original", split="test").remove_columns(["dogood"])
        for _ in range(args.repeat):
            for mode in args.modes:
                for name, chain in chains.items():
                    runs[name, mode].append(measure(ds, chain, args.epochs, mode == "persistent"))
                base = runs[NO_TRANSFORM, mode][-1]
                for name in chains:
                    got = runs[name, mode][-1]
                    ratios[name, mode]["first"].append(got["first"] / base["first"])
                    ratios[name, mode]["steady"].append(got["steady"] / base["steady"])
                    ratios[name, mode]["cpu"].append(base["cpu"] / got["cpu"])
            if args.alone:
                for name, chain in chains.items():
                    if chain:
                        alone[name].append(shift_alone(ds, chain, args.epochs))
    load_end = os.getloadavg()
    print(f"{started}, load average {load_start[0]:.1f} {load_start[1]:.1f} {load_start[2]:.1f} at the start, "
          f"{load_end[0]:.1f} {load_end[1]:.1f} {load_end[2]:.1f} at the end; {len(ds)} FUNSD test rows in the Hub's "
          f"columns, DataLoader(batch_size=4, num_workers=2), a first epoch then {args.epochs} timed epochs with "
          f"other draws, median of {args.repeat} repeat(s); default: torch's default workers, forked anew each "
          "epoch; persistent: persistent_workers=True\n")
    med = statistics.median
    print("| chain | workers | first epoch: rows/s | first epoch: vs no transform | steady: rows/s "
          "| steady: vs no transform (wall) | steady: CPU ms/row | steady: vs no transform (CPU) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for name in chains:
        for mode in args.modes:
            got, r = runs[name, mode], ratios[name, mode]
            print(f"| {name} | {mode} | {med(g['first'] for g in got):.1f} | {med(r['first']):.2f} "
                  f"| {med(g['steady'] for g in got):.1f} | {med(r['steady']):.2f} "
                  f"| {1000 * med(g['cpu'] for g in got):.1f} | {med(r['cpu']):.2f} |")
    if args.alone:
        print("\n| chain | shift alone, CPU ms/page |\n|---|---:|")
        for name in chains:
            if alone[name]:
                print(f"| {name} | {1000 * med(alone[name]):.1f} |")


if __name__ == "__main__":
    main()
