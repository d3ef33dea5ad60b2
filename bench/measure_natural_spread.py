"""How far apart `natural_background`'s levels are on light and on dark photos: MS-SSIM per level, FUNSD test.

    DOGOOD_DATA_DIR=../shared/data python bench/measure_natural_spread.py [--docs 50] [--region words]

Every page is shifted as ``funsd-c`` shifts ``natural@1`` ... ``natural@5`` (the levels share the photo and its
crop) and compared with its source page (:func:`dogood.measures.quality.ms_ssim`, luma). Pages are split at the
median of their photo's mean luma (as drawn, before any fade): the levels should differ as much on the light
half as on the dark half (the guard of dogood before issue 40 left light photos nearly untouched at every level).
Also ``upscaled``: the pages whose photo was enlarged more than 1.25 times.

Run with ``PYTHONPATH`` pointing at a checkout to measure that checkout.
"""

from __future__ import annotations

import argparse
import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import cv2
import numpy as np

from dogood.core.seeds import step_seed
from dogood.measures.quality import ms_ssim
from dogood.page.ink import gray
from dogood.shifts import NaturalBackground
from dogood.sources.funsd import FunsdSource

DATA = Path(os.environ.get("DOGOOD_DATA_DIR", Path(__file__).resolve().parents[2] / "shared" / "data"))
LEVELS = (1, 2, 3, 4, 5)


def measure_page(args) -> dict:
    root, doc_id, region = args
    cv2.setNumThreads(1)
    doc = FunsdSource(root=root, split="test").load(doc_id)
    base = NaturalBackground(region=region)
    source = gray(doc.image.to_array())
    out = {}
    for level in LEVELS:
        shift = NaturalBackground(region=region, **NaturalBackground.severities[level])
        shift.draw_key = base.step_key()
        page = shift(doc, step_seed(0, doc.id, 0, shift.seed_key()))
        out[level] = ms_ssim(source, gray(page.image.to_array()))
        photo_id = int(next(iter(page.provenance[-1].tallies["photo"])))
    photo = base.pool.get(photo_id)
    out["photo_luma"] = float(gray(np.asarray(base.pool.load(photo))).mean())
    out["scale"] = max(doc.width / photo.width, doc.height / photo.height)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", default=str(DATA / "funsd/dataset"))
    parser.add_argument("--docs", type=int, default=50)
    parser.add_argument("--region", default="words")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    ids = FunsdSource(root=args.source, split="test").ids()[: args.docs]
    with ProcessPoolExecutor(args.workers) as pool:
        pages = list(pool.map(measure_page, [(args.source, i, args.region) for i in ids]))
    luma = np.array([p["photo_luma"] for p in pages])
    split = np.median(luma)
    print(f"{len(pages)} pages, region {args.region}; photos' mean luma: median {split:.0f}; "
          f"upscaled > 1.25x: {sum(p['scale'] > 1.25 for p in pages)} (median scale "
          f"{np.median([p['scale'] for p in pages]):.2f}); load {os.getloadavg()[0]:.1f}")
    print("| photos | " + " | ".join(f"MS-SSIM @{lv}" for lv in LEVELS) + " | spread (@1 - @5) |")
    print("|---|" + "---|" * (len(LEVELS) + 1))
    for name, keep in (("dark half", luma < split), ("light half", luma >= split), ("all", luma >= 0)):
        means = [float(np.mean([p[lv] for p, k in zip(pages, keep) if k])) for lv in LEVELS]
        print(f"| {name} ({int(keep.sum())}) | " + " | ".join(f"{m:.3f}" for m in means)
              + f" | {means[0] - means[-1]:.3f} |")


if __name__ == "__main__":
    main()
