"""`capture` pages/s on one core beside the no-op and augraphy's own pipeline, on the same FUNSD test pages, in one run.

    NUMBA_NUM_THREADS=1 DOGOOD_DATA_DIR=../shared/data python bench/bench_capture.py [--docs 50] [--budget 20]

Every contender starts from the same decoded pages (decoding not timed) and runs
single-threaded (``cv2.setNumThreads(1)``, one numba thread). Reported per
contender: pages per CPU second (``time.process_time``, all threads of this
process: what one core does, and steady on a shared machine) and pages per wall
second, and the ratio of CPU pages/s to the no-op's. Each stops after the page
that passes ``--budget`` CPU seconds (one warm-up page first).

- no-op: the output row of the unchanged page (``document_to_row``: what every
  build does per document);
- dogood ``capture`` (shift only: geometry, light, surface, camera, JPEG at the
  drawn quality, and every word box re-projected through the map with the ink
  mask), at its default (level 2) with a COCO photo and with a drawn texture,
  with bicubic resampling instead of the default sharpened bilinear, and at
  levels 1, 3 and 5 (each decoding its COCO photos afresh), at the default with
  the pool's photos already decoded (a long build's steady state: each process
  caches them); then ``capture`` plus the output row;
- augraphy's ``AugraphyPipeline`` with comparable pixel effects and p=1:
  ``LightingGradient``, ``ShadowCast``, ``NoiseTexturize``, ``Jpeg`` (post
  phase; seeded per page through its global ``random``/numpy state). It
  moves no pixel geometrically, so it keeps boxes trivially; it has no camera,
  surface or shading. Once more with ``Geometric(rotate_range=(-5, 5))`` in
  front and the word boxes passed (``bounding_boxes``, moved by their corners).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

from dogood.core.schema import document_to_row
from dogood.shifts import make_shift
from dogood.shifts.image.capture import photo_at_half
from dogood.sources.funsd import FunsdSource


def timed(fn, n: int, budget: float) -> dict:
    fn(0)  # warm-up: pools, caches, numba compilation
    cpu0, wall0 = time.process_time(), time.perf_counter()
    done = 0
    for k in range(n):
        fn(k)
        done += 1
        if time.process_time() - cpu0 > budget:
            break
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    return {"pages": done, "cpu_pages_per_s": done / cpu, "wall_pages_per_s": done / wall}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_root = Path(os.environ.get("DOGOOD_DATA_DIR", Path(__file__).resolve().parents[2] / "shared/data"))
    parser.add_argument("--source", default=str(default_root / "funsd/dataset"))
    parser.add_argument("--docs", type=int, default=50)
    parser.add_argument("--budget", type=float, default=20.0, help="CPU seconds per contender")
    args = parser.parse_args()

    cv2.setNumThreads(1)
    import augraphy

    args.source = str(Path(args.source).resolve())
    if os.environ.get("DOGOOD_DATA_DIR"):
        os.environ["DOGOOD_DATA_DIR"] = str(Path(os.environ["DOGOOD_DATA_DIR"]).resolve())
    os.chdir(tempfile.mkdtemp(prefix="dogood-bench-capture-"))  # augraphy writes an augraphy_cache/ folder here

    source = FunsdSource(root=args.source, split="test")
    docs = [source.load(i) for i in source.ids()[: args.docs]]
    for d in docs:
        d.image.to_array()
    n = len(docs)
    rows = []

    def report(label, fn, note=""):
        result = timed(fn, n, args.budget)
        rows.append((label, result, note))
        print(f"{label}: {result['cpu_pages_per_s']:.1f} pages/CPU-s, {result['wall_pages_per_s']:.1f} pages/s wall "
              f"({result['pages']} pages)", flush=True)

    report("no-op (output row of the unchanged page)", lambda k: document_to_row(docs[k], "funsd"))
    contenders = {
        "dogood `capture` (default = level 2, COCO photo)": {},
        "dogood `capture` (default, drawn texture)": {"surface": "texture"},
        "dogood `capture` (default, bicubic resampling: `interpolation: cubic`)": {"interpolation": "cubic"},
    }
    for level in (1, 3, 5):
        contenders[f"dogood `capture` level {level} (COCO photo)"] = dict(
            make_shift({"shift": "capture"}).severities[level])
    for label, params in contenders.items():
        shift = make_shift({"shift": "capture", **params})
        shift.prepare()
        photo_at_half.cache_clear()  # each contender decodes its photos afresh
        report(label, lambda k, shift=shift: shift(docs[k], k), "exact word boxes (ink re-projected through the map)")
    shift = make_shift({"shift": "capture"})
    for photo in shift.pool.photos:  # a long build's steady state: every photo of the pool decoded once
        photo_at_half(shift.pool, photo)
    report("dogood `capture` (default, the pool's photos already decoded)", lambda k: shift(docs[k], k),
           "as a long build runs: each process keeps its decoded photos")
    photo_at_half.cache_clear()
    shift = make_shift({"shift": "capture"})
    report("dogood `capture` + output row", lambda k: document_to_row(shift(docs[k], k), "funsd"))

    def pipeline(geometric: bool, boxes=None):
        post = [augraphy.LightingGradient(p=1), augraphy.ShadowCast(p=1), augraphy.NoiseTexturize(p=1),
                augraphy.Jpeg(p=1)]
        pre = [augraphy.Geometric(rotate_range=(-5, 5), p=1)] if geometric else []
        return augraphy.AugraphyPipeline(ink_phase=[], paper_phase=[], post_phase=pre + post, bounding_boxes=boxes)

    plain = pipeline(False)

    def augraphy_pixels(k):
        random.seed(k)
        np.random.seed(k)
        return plain(np.ascontiguousarray(docs[k].image.to_array()))

    def augraphy_boxes(k):
        random.seed(k)
        np.random.seed(k)
        boxes = [list(w.box) for w in docs[k].words]  # a pipeline takes its boxes when made
        return pipeline(True, boxes)(np.ascontiguousarray(docs[k].image.to_array()))

    report("augraphy pipeline: LightingGradient, ShadowCast, NoiseTexturize, Jpeg", augraphy_pixels,
           "pixels only, no geometry")
    report("augraphy pipeline: Geometric(rotate 5) + the above, word boxes passed", augraphy_boxes,
           "boxes moved by their corners")

    noop = rows[0][1]["cpu_pages_per_s"]
    load = os.getloadavg()
    print(f"\nload average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; {n} FUNSD test pages; augraphy {augraphy.__version__}, OpenCV {cv2.__version__}; "
          f"CPU seconds budget {args.budget:g} per contender\n")
    print("| contender | pages | pages/CPU-s | pages/s (wall) | CPU time vs no-op |")
    print("|---|---|---|---|---|")
    for label, r, _note in rows:
        print(f"| {label} | {r['pages']} | {r['cpu_pages_per_s']:.1f} | {r['wall_pages_per_s']:.1f} | "
              f"{noop / r['cpu_pages_per_s']:.1f}x |")
    capture = [r["cpu_pages_per_s"] for label, r, _ in rows if label.startswith("dogood `capture` (default")]
    print(f"\ncapture at its default: {statistics.mean(capture):.1f} pages per CPU second (target >= 30)")


if __name__ == "__main__":
    main()
