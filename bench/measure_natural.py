"""I1 (`natural_background`) per severity level on FUNSD test: Tesseract recall, box halos, strokes cut, draws shared.

    DOGOOD_DATA_DIR=../shared/data python bench/measure_natural.py [--docs 50] [--levels 1 2 3 4 5]
        [--regions words page] [--workers 2] [--no-ocr] [--previews DIR]

Every page is shifted as a ``funsd-c`` build shifts it (seed from the recipe's seed, the page's id and the
unswept step, so that ``natural@1`` ... ``natural@5`` share their draws; ``region: page`` seeded alike from
its own unswept step), then measured:

- ``recall``: Tesseract (:mod:`dogood.page.ocr`, native resolution, cached) on the shifted page, against the
  source's words (`bench/measure_scan.py`'s criterion: same text, case and surrounding punctuation ignored, in a
  box the word's box covers by at least half); ``of clean``: over the recall on the source pages.
- ``halo``: :func:`dogood.measures.halo.edge_steps` (t-values) on the published page at every word box and at
  one random rectangle per word (ink and a 4-pixel rim left out), pooled over pages: ratio of medians and the
  one-sided Mann-Whitney p that word boxes show stronger edges (a box cue shows as a ratio well above 1 and a
  tiny p).
- ``cut``: the share of the source's ink strokes (the page's ink, pieces 2 pixels apart joined:
  as :func:`dogood.page.ink.connected_strokes` joins them) that the page keeps in part: between 10% and 90%
  of their core pixels within 24 grey levels of the source's (a rule or a shaded bar clipped to a word box).

``--timing N``: CPU milliseconds per page (median over the first N pages, one process, after a warm-up page) of
the shift at levels 1, 3 and 5 (5: no guard, the paper's composite), and each over level 5.

Run with ``PYTHONPATH`` pointing at a checkout to measure that checkout (the figures in ``bench/RESULTS.md``
compare main before issue 25 with after). ``--previews DIR``: each level of the first page as PNG.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))

from measure_scan import recall  # noqa: E402

from dogood.core.seeds import step_seed  # noqa: E402
from dogood.measures.halo import edge_steps, halo_test, random_rectangles  # noqa: E402
from dogood.page.ink import gray, ink_matte  # noqa: E402
from dogood.shifts import NaturalBackground  # noqa: E402
from dogood.sources.funsd import FunsdSource  # noqa: E402

DATA = Path(os.environ.get("DOGOOD_DATA_DIR", Path(__file__).resolve().parents[2] / "shared" / "data"))
RECIPE_SEED = 0  # funsd-c's


def shifted(doc, region: str, level: int, encoding: str = "jpeg"):
    """``doc`` under ``natural_background`` (``region``) at ``level``, seeded as funsd-c seeds ``natural@level``."""
    shift = NaturalBackground(region=region, encoding=encoding, **NaturalBackground.severities[level])
    base = NaturalBackground(region=region)
    shift.draw_key = base.step_key()
    return shift(doc, step_seed(RECIPE_SEED, doc.id, 0, shift.seed_key()))


def strokes(pixels, boxes):
    """Labels, on their dark core pixels (ink at full coverage, grey 96 or darker), of the source's ink strokes
    (the page's ink, pieces 2 pixels apart joined), and their count."""
    core = (ink_matte(pixels, boxes, region="page").alpha_image() >= 0.5).astype(np.uint8)
    count, labels = cv2.connectedComponents(cv2.dilate(core, np.ones((3, 3), np.uint8)), connectivity=8)
    return labels * (core > 0) * (gray(pixels) <= 96), count


def cut_strokes(doc, region, labels, count) -> tuple[int, int]:
    """(strokes the shift keeps in part, strokes), on a white photo (the ink matte does not depend on the
    photo; on white, carried ink is the source's and the rest white): of each stroke's dark core pixels (20 or
    more), the share kept (within 24 grey levels of the source's), between 10% and 90%."""
    from dogood.shifts.image import natural_background as module

    fit = module.fit_photo
    module.fit_photo = lambda photo, width, height, *args: np.full((height, width, 3), 255, np.uint8)
    try:
        page = shifted(doc, region, 5, "png").image.to_array()
    finally:
        module.fit_photo = fit
    source = doc.image.to_array()
    kept = np.abs(gray(page).astype(np.int16) - gray(source).astype(np.int16)) <= 24
    total = np.bincount(labels.ravel(), minlength=count)
    same = np.bincount(labels.ravel(), weights=kept.ravel(), minlength=count)
    big = np.flatnonzero(total[1:] >= 20) + 1
    share = same[big] / total[big]
    return int(((share > 0.1) & (share < 0.9)).sum()), len(big)


def measure_page(args) -> dict:
    root, doc_id, k, regions, levels, ocr, previews = args
    cv2.setNumThreads(1)
    doc = FunsdSource(root=root, split="test").load(doc_id)
    pixels = doc.image.to_array()
    boxes = np.asarray(doc.boxes, np.int64).reshape(-1, 4)
    randoms, paired = random_rectangles(boxes, pixels.shape[:2], np.random.default_rng(1000 + k))
    labels, count = strokes(pixels, boxes)
    out = {"words": len(doc.words)}
    if ocr:
        out["clean"] = recall(doc, doc.image)
    for region in regions:
        pages = {level: shifted(doc, region, level) for level in levels}
        cut = cut_strokes(doc, region, labels, count)
        ink = cv2.dilate((ink_matte(pixels, boxes, region="page").alpha_image() > 0).astype(np.uint8),
                         np.ones((9, 9), np.uint8)) > 0
        for level, page in pages.items():
            arr = page.image.to_array()
            r = {}
            luma = gray(arr)
            r["halo"] = (edge_steps(luma, boxes, exclude=ink), edge_steps(luma, randoms, exclude=ink,
                                                                           exclude_at=boxes[paired]))
            r["cut"] = cut
            if ocr:
                r["recall"] = recall(doc, page.image)
            if previews and k == 0:
                Path(previews).mkdir(parents=True, exist_ok=True)
                cv2.imwrite(str(Path(previews) / f"{doc_id}_{region}@{level}.png"), cv2.cvtColor(arr, cv2.COLOR_RGB2BGR))
            out[(region, level)] = r
    return out


def timing(source: FunsdSource, ids, region: str) -> dict[int, float]:
    """Median CPU ms per page of the shift at levels 1, 3 and 5 (JPEG encoding included), one process."""
    cv2.setNumThreads(1)
    docs = [source.load(i) for i in ids]
    shifted(docs[0], region, 5)  # warm-up: the photo pool, the fonts of nothing
    out = {}
    for level in (1, 3, 5):
        times = []
        for doc in docs:
            start = time.process_time()
            shifted(doc, region, level)
            times.append(1000 * (time.process_time() - start))
        out[level] = float(np.median(times))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", default=str(DATA / "funsd/dataset"))
    parser.add_argument("--docs", type=int, default=50)
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    parser.add_argument("--regions", nargs="+", default=["words", "page"])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--no-ocr", dest="ocr", action="store_false")
    parser.add_argument("--previews", default=None)
    parser.add_argument("--timing", type=int, default=0, help="time the shift on this many pages instead")
    args = parser.parse_args()
    source = FunsdSource(root=args.source, split="test")
    if args.timing:
        for region in args.regions:
            ms = timing(source, source.ids()[: args.timing], region)
            print(f"{region}: CPU ms per page, median of {args.timing}: " + ", ".join(
                f"level {k} {v:.1f} ({v / ms[5]:.2f}x level 5)" for k, v in ms.items()))
        return
    ids = source.ids()[: args.docs]
    jobs = [(args.source, doc_id, k, args.regions, args.levels, args.ocr, args.previews) for k, doc_id in enumerate(ids)]
    start = time.perf_counter()
    with ProcessPoolExecutor(args.workers) as pool:
        pages = list(pool.map(measure_page, jobs))
    print(f"{len(pages)} FUNSD test pages, {sum(p['words'] for p in pages)} words; {time.perf_counter() - start:.0f} s")
    clean = None
    if args.ocr:
        found, eligible = (sum(p["clean"][i] for p in pages) for i in (0, 1))
        clean = found / eligible
        print(f"clean pages: Tesseract recall {clean:.3f} ({found}/{eligible})")
    print("| region | level | recall | of clean | halo ratio | halo p (words > random) | strokes cut |")
    print("|---|---|---|---|---|---|---|")
    for region in args.regions:
        for level in args.levels:
            rows = [p[(region, level)] for p in pages]
            h = halo_test(np.concatenate([r["halo"][0] for r in rows]), np.concatenate([r["halo"][1] for r in rows]))
            cut, strokes_n = sum(r["cut"][0] for r in rows), sum(r["cut"][1] for r in rows)
            rec = of = "-"
            if args.ocr:
                found, eligible = (sum(r["recall"][i] for r in rows) for i in (0, 1))
                rec, of = f"{found / eligible:.3f}", f"{found / eligible / clean:.1%}"
            print(f"| {region} | {level} | {rec} | {of} | {h['ratio']:.3f} | {h['p_greater']:.3g} | "
                  f"{cut}/{strokes_n} ({cut / max(strokes_n, 1):.1%}) |")


if __name__ == "__main__":
    main()
