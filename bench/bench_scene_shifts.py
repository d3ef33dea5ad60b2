"""CPU per page of the shifts issue 40 changed, on FUNSD test, in one process: run it on two checkouts and compare.

    DOGOOD_DATA_DIR=../shared/data NLTK_DATA=../shared/data/nltk_data python bench/bench_scene_shifts.py [--docs 10]
    PYTHONPATH=<other checkout> python bench/bench_scene_shifts.py ...      # the same on the other code

Per shift (``natural_background`` at levels 1, 3 and 5, and 5 without darkening light photos
(``max_luma=255``), ``capture`` at level 2, ``paper_texture`` at level 5,
``embedding_swap`` at ``fraction: 0.1``): the median CPU milliseconds per page (``time.process_time``, one
thread, after a warm-up page), JPEG or PNG encoding included. Also, with ``--cues``, the background cue test on
``natural@1``'s pages: the CPU of its samples per page and of the classifier (``dogood.measures.cues``), what a
build adds per config that declares it. Prints the load average: on a shared machine, compare the two
checkouts' figures run back to back, several times.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import cv2
import numpy as np

from dogood.shifts import SHIFTS
from dogood.sources.funsd import FunsdSource

DATA = Path(os.environ.get("DOGOOD_DATA_DIR", Path(__file__).resolve().parents[2] / "shared" / "data"))
CASES = {"natural@1": ("natural_background", 1, {}), "natural@3": ("natural_background", 3, {}),
         "natural@5": ("natural_background", 5, {}),
         "natural@5,max_luma=255": ("natural_background", 5, {"max_luma": 255}),  # level 5 without the darkening
         "capture@2": ("capture", 2, {}), "paper_texture@5": ("paper_texture", 5, {}),
         "embedding_swap": ("embedding_swap", None, {"fraction": 0.1})}


def make(name: str, level: int | None, params: dict):
    cls = SHIFTS[name]
    shift = cls(**{**(cls.severities[level] if level else {}), **params})
    shift.prepare()
    return shift


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=10)
    parser.add_argument("--cases", nargs="+", default=list(CASES))
    parser.add_argument("--cues", action="store_true")
    args = parser.parse_args()
    cv2.setNumThreads(1)
    source = FunsdSource(root=str(DATA / "funsd/dataset"), split="test")
    docs = [source.load(i) for i in source.ids()[: args.docs]]
    for doc in docs:
        doc.image.to_array()  # decoded before timing
    print(f"{len(docs)} FUNSD test pages; load {os.getloadavg()[0]:.1f}")
    for case in args.cases:
        shift = make(*CASES[case])
        shift(docs[0], 0)  # warm-up: pools, vectors, fonts
        times = []
        for k, doc in enumerate(docs):
            start = time.process_time()
            shift(doc, k).image.encoded_bytes()
            times.append(1000 * (time.process_time() - start))
        print(f"{case}: {np.median(times):.1f} ms CPU per page (median)")
    if args.cues:
        from dogood.measures.cues import background_samples, cue_auroc

        shift = make("natural_background", 1, {})
        pairs = [(doc, shift(doc, k)) for k, doc in enumerate(docs)]
        for _, page in pairs:
            page.image.to_array()
        start = time.process_time()
        samples = [background_samples(a, b) for a, b in pairs]
        per_page = 1000 * (time.process_time() - start) / len(pairs)
        start = time.process_time()
        x = np.concatenate([s[0] for s in samples])
        y = np.concatenate([s[1] for s in samples])
        g = np.concatenate([np.full(len(s[1]), k) for k, s in enumerate(samples)])
        cue_auroc(x, y, g)
        print(f"background cue: samples {per_page:.1f} ms CPU per page, classifier and interval "
              f"{1000 * (time.process_time() - start):.0f} ms for {len(pairs)} pages")


if __name__ == "__main__":
    main()
