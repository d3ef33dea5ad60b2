"""`capture` per severity on FUNSD test: Tesseract vs the re-projected boxes, and each level's measured effects.

    DOGOOD_DATA_DIR=../shared/data python bench/measure_capture.py [--docs 50] [--levels 1 2 3 4 5]
        [--surface photo] [--ocr-scale 3] [--workers 2] [--cache DIR] [--no-ocr]

For each page and level (seed = page index): the page is captured with the
level's parameters (``CapturePage.severities``). Reported per level:

- the median IoU between each re-projected word box and the captured-page
  Tesseract word with the same text (case-insensitive) that overlaps it
  most (0 if none), over the words Tesseract read on the original page
  (same text, IoU > 0.5 with the FUNSD box): the acceptance figure, >= 0.7
  at levels 1-3 (``bench/measure_distort_iou.py``'s protocol, Tesseract
  reading at 3x); the share of those words read again (IoU > 0) and the
  median IoU over them;
- ``displacement``: the mean non-rigid displacement of the page, in page
  widths (:func:`dogood.page.camera.nonrigid_displacement`: beyond the best
  similarity transform, i.e. what perspective and bending add);
- ``contrast``: the ink's contrast kept (:func:`dogood.page.camera.word_contrast`
  on the captured page over the original's, median over pages).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from measure_distort_iou import best_iou, read_page  # noqa: E402

from dogood.page.camera import nonrigid_displacement, word_contrast  # noqa: E402
from dogood.shifts.image.capture import CapturePage  # noqa: E402
from dogood.sources.funsd import FunsdSource  # noqa: E402


def measure_page(args) -> dict:
    root, doc_id, seed, levels, surface, cache, scale, ocr = args
    doc = FunsdSource(root=root, split="test").load(doc_id)
    result = {"words": len(doc.words)}
    kept = []
    if ocr:
        original = read_page(doc.image, "", cache, scale)
        kept = [i for i, w in enumerate(doc.words) if best_iou(w.text, w.box, original) > 0.5]
        result["read_original"] = len(kept)
    before = word_contrast(doc.image.to_array(), doc.boxes)
    for level in levels:
        shift = CapturePage(surface=surface, **CapturePage.severities[level])
        out = shift.apply(doc, np.random.default_rng(seed)).doc
        backward = shift.geometry(doc, np.random.default_rng(seed))[2]
        entry = {"displacement": nonrigid_displacement(backward, (doc.width, doc.height)),
                 "contrast": word_contrast(out.image.to_array(), out.boxes) / max(before, 1e-6)}
        if ocr:
            captured = read_page(out.image, "", cache, scale)
            entry["kept"] = [best_iou(out.words[i].text, out.words[i].box, captured) for i in kept]
        result[level] = entry
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_root = Path(os.environ.get("DOGOOD_DATA_DIR", Path(__file__).resolve().parents[2] / "shared/data"))
    parser.add_argument("--source", default=str(default_root / "funsd/dataset"))
    parser.add_argument("--docs", type=int, default=50)
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    parser.add_argument("--surface", default="photo", choices=["photo", "texture"])
    parser.add_argument("--ocr-scale", type=float, default=3.0)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--cache", default=None, help="OCR cache folder (default: a fresh temporary one)")
    parser.add_argument("--no-ocr", action="store_true", help="only the measured effects (fast)")
    args = parser.parse_args()

    cache = args.cache or tempfile.mkdtemp(prefix="dogood-capture-ocr-")
    source = FunsdSource(root=args.source, split="test")
    ids = source.ids()[: args.docs]
    jobs = [(args.source, doc_id, k, args.levels, args.surface, cache, args.ocr_scale, not args.no_ocr)
            for k, doc_id in enumerate(ids)]
    start = time.perf_counter()
    with ProcessPoolExecutor(args.workers) as pool:
        pages = list(pool.map(measure_page, jobs))
    words = sum(p["words"] for p in pages)
    print(f"{len(pages)} FUNSD test pages, {words} words; capture on {args.surface}; "
          f"{time.perf_counter() - start:.0f} s")
    if not args.no_ocr:
        read = sum(p["read_original"] for p in pages)
        print(f"Tesseract word recall, original pages: {read / words:.3f} ({read} words kept)")
    print("| level | displacement (page widths) | ink contrast kept | median IoU | IoU >= 0.5 | read again | "
          "median IoU, read again |")
    print("|---|---|---|---|---|---|---|")
    for level in args.levels:
        disp = statistics.mean(p[level]["displacement"] for p in pages)
        contrast = statistics.median(p[level]["contrast"] for p in pages)
        row = f"| {level} | {disp:.4f} | {contrast:.3f} |"
        if args.no_ocr:
            row += " - | - | - | - |"
        else:
            scores = np.array([s for p in pages for s in p[level]["kept"]])
            again = scores[scores > 0]
            row += (f" {np.median(scores):.3f} | {np.mean(scores >= 0.5):.3f} | {np.mean(scores > 0):.3f} | "
                    f"{np.median(again) if len(again) else 0:.3f} |")
        print(row)


if __name__ == "__main__":
    main()
