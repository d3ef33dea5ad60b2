"""The background cue (:mod:`dogood.measures.cues`) of `natural_background` and `capture` per level, FUNSD test.

    DOGOOD_DATA_DIR=../shared/data python bench/measure_cues.py [--docs 50] [--levels 1 2 3 4 5]
        [--configs natural natural_page capture] [--workers 2] [--model logistic] [--crops DIR]

Every page is shifted as ``funsd-c`` shifts ``<config>@<level>`` (the level's parameters, seeded from the
unswept step so that the levels share their draws), then the cue test tells background tiles near the text
from tiles far from it with a classifier cross-validated by page; ``source`` is the same test on the
untouched pages. ``--crops DIR``: the first page of each config and level as PNG (the full page, and a
crop of its top left quarter).

Run with ``PYTHONPATH`` pointing at a checkout to measure that checkout.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import cv2
import numpy as np

from dogood.core.seeds import step_seed
from dogood.measures.cues import background_samples, cue_auroc
from dogood.shifts import SHIFTS
from dogood.sources.funsd import FunsdSource

DATA = Path(os.environ.get("DOGOOD_DATA_DIR", Path(__file__).resolve().parents[2] / "shared" / "data"))
RECIPE_SEED = 0  # funsd-c's and funsd-i's

#: config -> (shift, its parameters in the recipe)
CONFIGS = {"natural": ("natural_background", {}), "natural_page": ("natural_background", {"region": "page"}),
           "capture": ("capture", {})}


def shifted(doc, config: str, level: int | None):
    """``doc`` under ``config`` at ``level`` (None: the recipe's own parameters), seeded as funsd-c seeds it."""
    name, params = CONFIGS[config]
    cls = SHIFTS[name]
    base = cls(**params)
    if level is None:
        return base(doc, step_seed(RECIPE_SEED, doc.id, 0, base.seed_key()))
    shift = cls(**{**params, **cls.severities[level]})
    shift.draw_key = base.step_key()
    return shift(doc, step_seed(RECIPE_SEED, doc.id, 0, shift.seed_key()))


def measure_page(args) -> dict:
    root, doc_id, k, configs, levels, crops = args
    cv2.setNumThreads(1)
    doc = FunsdSource(root=root, split="test").load(doc_id)
    out = {"source": background_samples(doc, doc)}
    for config in configs:
        for level in levels:
            page = shifted(doc, config, level)
            out[(config, level)] = background_samples(doc, page)
            if crops and k < 2:
                folder = Path(crops)
                folder.mkdir(parents=True, exist_ok=True)
                arr = page.image.to_array()
                bgr = cv2.cvtColor(arr, cv2.COLOR_RGB2BGR) if arr.ndim == 3 else arr
                cv2.imwrite(str(folder / f"{doc_id}_{config}@{level}.png"), bgr)
                h, w = bgr.shape[:2]
                cv2.imwrite(str(folder / f"{doc_id}_{config}@{level}_crop.png"), bgr[: h // 2, : w // 2])
    return out


def figure(samples: list, model: str) -> str:
    xs = [x for x, y in samples if len(y)]
    ys = [y for x, y in samples if len(y)]
    gs = [np.full(len(y), k) for k, (x, y) in enumerate(samples) if len(y)]
    if not xs:
        return "- (no samples)"
    f = cue_auroc(np.concatenate(xs), np.concatenate(ys), np.concatenate(gs), model=model)
    return "-" if f is None else f"{f.auroc:.3f} [{f.low:.2f}, {f.high:.2f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", default=str(DATA / "funsd/dataset"))
    parser.add_argument("--docs", type=int, default=50)
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    parser.add_argument("--configs", nargs="+", default=list(CONFIGS))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--model", default="logistic")
    parser.add_argument("--crops", default=None)
    args = parser.parse_args()
    source = FunsdSource(root=args.source, split="test")
    ids = source.ids()[: args.docs]
    jobs = [(args.source, doc_id, k, args.configs, args.levels, args.crops) for k, doc_id in enumerate(ids)]
    start = time.perf_counter()
    with ProcessPoolExecutor(args.workers) as pool:
        pages = list(pool.map(measure_page, jobs))
    print(f"{len(pages)} FUNSD test pages; {time.perf_counter() - start:.0f} s; load {os.getloadavg()[0]:.1f}")
    print(f"source pages: background cue AUROC {figure([p['source'] for p in pages], args.model)} (95% interval over pages)")
    print("| config | " + " | ".join(f"level {lv}" for lv in args.levels) + " |")
    print("|---|" + "---|" * len(args.levels))
    for config in args.configs:
        cells = [figure([p[(config, lv)] for p in pages], args.model) for lv in args.levels]
        print(f"| {config} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    sys.exit(main())
