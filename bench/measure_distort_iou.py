"""How well `distort`'s re-projected boxes agree with what Tesseract reads on the distorted page (FUNSD test).

    DOGOOD_DATA_DIR=../shared/data python bench/measure_distort_iou.py [--docs 50] [--reproject box ink]
        [--strength S] [--kinds K ...] [--border V] [--interpolation I] [--canvas C] [--margin M]
        [--ocr-scale 3] [--config "--psm 11"] [--workers 2] [--cache DIR] [--timing]

For each page: Tesseract reads the original; a FUNSD word is *kept* when
Tesseract reads a word with the same text (case-insensitive) whose box
overlaps it with IoU > 0.5. The page is distorted (seed = page index) and
Tesseract reads it again; for each kept word, the warped-page Tesseract word
with the same text and the highest IoU with the word's re-projected box is
its match (IoU 0 if none). Reported per ``reproject`` mode: the median IoU
over kept words (the acceptance criterion: >= 0.7), the share with IoU >=
0.5, the mean, the number of kept words, Tesseract's word recall (share of
all FUNSD words read: same text, IoU > 0.5 with the word's box) on the
original and on the warped pages, and the median IoU over the kept words
Tesseract reads again (IoU > 0), which measures the boxes apart from OCR misses.

Tesseract reads pages upscaled 3x (bicubic; boxes scaled back), both the
original and the warped one: FUNSD's scans are about 100 dpi and Tesseract
wants about 300. ``--timing`` also times the shift's stages on one core
(median ms per page: map, remap, re-projection of boxes, re-projection
with the ink mask computed, the whole shift; JPEG encoding left out, as
pages are encoded when written).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from dogood.core.document import PageImage, Word
from dogood.page.ocr import ocr_words
from dogood.shifts.image.distort import DistortPage
from dogood.sources.funsd import FunsdSource


def iou(a, b) -> float:
    ix = max(0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def best_iou(text: str, box, ocr) -> float:
    """Highest IoU between ``box`` and an OCR word reading ``text`` (case-insensitive); 0 if none."""
    text = text.lower()
    return max((iou(box, w.box) for w in ocr if w.text.lower() == text), default=0.0)


def read_page(image, config: str, cache, scale: float):
    """Tesseract's words on ``image``, read at ``scale`` times its size (bicubic) and scaled back."""
    if scale == 1:
        return ocr_words(image, config=config, cache=cache)
    import cv2

    big = cv2.resize(image.to_array(), None, fx=scale, fy=scale, interpolation=cv2.INTER_CUBIC)
    words = ocr_words(PageImage.from_array(big), config=config, cache=cache)
    return [Word(w.text, tuple(int(round(v / scale)) for v in w.box)) for w in words]


def measure_page(args) -> dict:
    root, doc_id, seed, modes, params, cache, config, scale = args
    doc = FunsdSource(root=root, split="test").load(doc_id)
    original = read_page(doc.image, config, cache, scale)
    read = [best_iou(w.text, w.box, original) > 0.5 for w in doc.words]
    kept = [i for i, ok in enumerate(read) if ok]
    result = {"words": len(doc.words), "read_original": sum(read)}
    for mode in modes:
        out, _ = DistortPage(reproject=mode, **params).apply(doc, np.random.default_rng(seed))
        warped = read_page(out.image, config, cache, scale)
        scores = [best_iou(w.text, w.box, warped) for w in out.words]
        result[mode] = {"kept": [scores[i] for i in kept], "read_warped": sum(s > 0.5 for s in scores)}
    return result


def timing(source: FunsdSource, ids, params) -> dict[str, float]:
    """Median milliseconds per page of each stage, on one core."""
    import cv2

    from dogood.page.warp import apply_map, ink_mask, reproject_boxes

    cv2.setNumThreads(1)
    shift = DistortPage(**params)
    stages: dict[str, list[float]] = {"map": [], "remap": [], "reproject box": [], "reproject ink": [], "shift": []}
    for k, doc_id in enumerate(ids):
        doc = source.load(doc_id)
        pixels = doc.image.to_array()
        for _ in range(2):  # the first round warms caches up; the second is kept
            times = {}
            start = time.perf_counter()
            backward = shift.backward_map(doc, pixels, np.random.default_rng(k))
            times["map"] = time.perf_counter() - start
            start = time.perf_counter()
            apply_map(pixels, backward, shift.border_value, shift.interpolation)
            times["remap"] = time.perf_counter() - start
            start = time.perf_counter()
            reproject_boxes(doc.boxes, backward, (doc.width, doc.height))
            times["reproject box"] = time.perf_counter() - start
            start = time.perf_counter()
            reproject_boxes(doc.boxes, backward, (doc.width, doc.height), ink=ink_mask(pixels, doc.boxes))
            times["reproject ink"] = time.perf_counter() - start
            start = time.perf_counter()
            shift.apply(doc, np.random.default_rng(k))
            times["shift"] = time.perf_counter() - start
        for name, value in times.items():
            stages[name].append(value * 1000)
    return {name: statistics.median(values) for name, values in stages.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_root = Path(os.environ.get("DOGOOD_DATA_DIR", Path(__file__).resolve().parents[2] / "shared/data"))
    parser.add_argument("--source", default=str(default_root / "funsd/dataset"))
    parser.add_argument("--docs", type=int, default=50)
    parser.add_argument("--reproject", nargs="+", default=["box", "ink"])
    parser.add_argument("--strength", type=float, default=None, help="default: the shift's")
    parser.add_argument("--folds", type=int, default=None, help="default: the shift's")
    parser.add_argument("--kinds", nargs="+", default=None, help="default: the shift's")
    parser.add_argument("--config", default="", help="Tesseract options for both readings, e.g. '--psm 11'")
    parser.add_argument("--ocr-scale", type=float, default=3.0,
                        help="upscale pages this much (bicubic) before Tesseract (default 3: FUNSD is ~100 dpi)")
    parser.add_argument("--interpolation", default=None, help="default: the shift's")
    parser.add_argument("--canvas", default=None, help="default: the shift's")
    parser.add_argument("--margin", type=float, default=None, help="default: the shift's")
    parser.add_argument("--border", type=int, default=None, help="border_value (default: the shift's)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--cache", default=None, help="OCR cache folder (default: a fresh temporary one)")
    parser.add_argument("--timing", action="store_true")
    args = parser.parse_args()

    chosen = {"strength": args.strength, "folds": args.folds, "kinds": args.kinds, "border_value": args.border,
              "interpolation": args.interpolation, "margin": args.margin, "canvas": args.canvas}
    params = {k: v for k, v in chosen.items() if v is not None}
    cache = args.cache or tempfile.mkdtemp(prefix="dogood-distort-ocr-")
    source = FunsdSource(root=args.source, split="test")
    ids = source.ids()[: args.docs]
    jobs = [(args.source, doc_id, k, args.reproject, params, cache, args.config, args.ocr_scale)
            for k, doc_id in enumerate(ids)]
    start = time.perf_counter()
    with ProcessPoolExecutor(args.workers) as pool:
        pages = list(pool.map(measure_page, jobs))
    words = sum(p["words"] for p in pages)
    read = sum(p["read_original"] for p in pages)
    print(f"{len(pages)} FUNSD test pages, {words} words; distort {params or '(defaults)'}; "
          f"{time.perf_counter() - start:.0f} s")
    print(f"Tesseract word recall, original pages: {read / words:.3f} ({read} words kept)")
    for mode in args.reproject:
        scores = [s for p in pages for s in p[mode]["kept"]]
        warped = sum(p[mode]["read_warped"] for p in pages)
        print(f"reproject={mode}: median IoU {statistics.median(scores):.3f}, "
              f"IoU >= 0.5 {np.mean(np.array(scores) >= 0.5):.3f}, mean IoU {np.mean(scores):.3f}, "
              f"kept words {len(scores)}; Tesseract word recall on warped pages {warped / words:.3f}; "
              f"median IoU of the kept words read again {statistics.median([s for s in scores if s > 0] or [0]):.3f} "
              f"({np.mean(np.array(scores) > 0):.3f} of them)")
    if args.timing:
        stages = timing(source, ids, params)
        print("ms per page, one core (median): " + ", ".join(f"{k} {v:.1f}" for k, v in stages.items()))


if __name__ == "__main__":
    main()
